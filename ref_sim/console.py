"""How every ``ref_sim`` command ends when the user stops it: one line, never a traceback.

``@entry_point(prog)`` wraps a command's ``main``:

* Ctrl-C (KeyboardInterrupt) that the command did not handle itself: ``PROG: interrupted``
  on stderr, exit code 130 (128 + SIGINT, what a shell reports for Ctrl-C).
* Its output closed early (``... | head -2``: BrokenPipeError): ``PROG: output closed
  (broken pipe)`` on stderr, exit code 141 (128 + SIGPIPE, what ``head`` leaves a shell
  program with).  Standard output is pointed at the null device first, so that Python's own
  flush at exit does not fail a second time.

A command that must clean up (stop its games, kill its agents) catches these itself first.
"""

from __future__ import annotations

import functools
import sys

from agent.commandline import say_error, silence_output

#: Exit codes shared by the commands.
INTERRUPTED = 130
BROKEN_PIPE = 141


def quiet_interrupt_hook(previous):
    """A ``sys.excepthook`` that prints one line for an uncaught KeyboardInterrupt (Python
    then still exits as killed by SIGINT: 130 in a shell) and leaves every other exception
    to ``previous``."""
    def hook(kind, value, traceback):
        if issubclass(kind, KeyboardInterrupt):
            say_error("python -m ref_sim", "interrupted")
        else:
            previous(kind, value, traceback)
    return hook


def entry_point(prog: str):
    """Decorate a command's ``main(argv=None) -> int`` (see the module docstring)."""
    def wrap(main):
        @functools.wraps(main)
        def run(argv: list[str] | None = None) -> int:
            try:
                return main(argv)
            except KeyboardInterrupt:
                say_error(prog, "interrupted")
                return INTERRUPTED
            except BrokenPipeError:
                silence_output(sys.stdout)
                say_error(prog, "output closed (broken pipe)")
                return BROKEN_PIPE
        return run
    return wrap
