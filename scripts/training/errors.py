"""The two ways a step of scripts/train_eval.py ends early, each said in one line by its command."""

from __future__ import annotations


class InputError(Exception):
    """A missing or unreadable input, said in one line (exit code 2)."""


class StepStopped(Exception):
    """A step stopped by Ctrl-C or a signal (``interrupt``) after saying what it kept (``detail``)."""

    def __init__(self, interrupt: BaseException, detail: str) -> None:
        super().__init__(detail)
        self.interrupt, self.detail = interrupt, detail
