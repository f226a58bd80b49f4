"""How every ``ref_sim`` command ends when the user stops it: one line, never a traceback.

``@entry_point(module)`` wraps a command's ``main``:

* PROG, in every line, is the name the user ran it by (:func:`prog`): ``uttt-match`` for the
  console script, ``python -m ref_sim.match`` otherwise.
* SIGTERM, SIGHUP (and SIGBREAK on Windows) stop it as Ctrl-C does (:mod:`ref_sim.stops`).
* Ctrl-C (KeyboardInterrupt) or another stop signal that the command did not handle itself:
  ``PROG: interrupted`` (``PROG: stopped by SIGTERM``) on stderr, exit code 130 (128 + SIGINT,
  what a shell reports for Ctrl-C; 128 + N for signal N).
* Its output closed early (``... | head -2``: BrokenPipeError): ``PROG: output closed
  (broken pipe)`` on stderr, exit code 141 (128 + SIGPIPE, what ``head`` leaves a shell
  program with).

The handling is :func:`ref_sim.stops.guarded`'s, which the arena and the scripts use too.

* Its ``--out`` held by another runner, or its records that cannot be written (a full disk)
  before any game was played, or a ``series.json`` that cannot be read (:mod:`ref_sim.series.records`):
  ``PROG: error: ...`` in one line, exit code 2 (the folder is in use, the settings are
  unreadable) or 1 (the write failed).

A command that must clean up (stop its games, kill its agents) catches these itself first.
"""

from __future__ import annotations

import functools

from ref_sim.series import records
from ref_sim import stops
from agent.cli_common import say_error


def prog(module: str) -> str:
    """The command's name in usage and error lines: ``uttt-match`` when run as that console
    script, else ``python -m ref_sim.match`` (``module`` is ``ref_sim.match``)."""
    return stops.invoked_as(module)


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


def entry_point(module: str):
    """Decorate the ``main(argv=None) -> int`` of ``module`` (see the module docstring)."""
    def wrap(main):
        @functools.wraps(main)
        def run(argv: list[str] | None = None) -> int:
            try:
                return stops.guarded(prog(module), main, argv)
            except (records.OutInUse, records.CannotResume, records.WriteError) as error:
                say_error(prog(module), f"error: {error}")
                return error.exit_code
        return run
    return wrap
