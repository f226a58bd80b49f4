"""How every ``ref_sim`` command ends when the user stops it: one line, never a traceback.

``@entry_point(module)`` wraps a command's ``main`` with :func:`ref_sim.stops.guarded`: Ctrl-C or a
stop signal the command did not handle is ``PROG: interrupted`` (``stopped by SIGTERM``) and
128 + the signal, a closed output ``PROG: output closed (broken pipe)`` and 141, an ``--out`` in
use or records that cannot be read or written one ``PROG: error:`` line (exit 2, or 1 for a failed
write); PROG is the name the user ran it by (:func:`prog`). A command that must clean up catches
these itself first.
"""

from __future__ import annotations

import functools

from ref_sim.series.output import out_lock, records
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
    """Decorate the ``main(argv=None) -> int`` of ``module`` (see the module docstring); keyword
    arguments (a command's collaborators) pass through."""
    def wrap(main):
        @functools.wraps(main)
        def run(argv: list[str] | None = None, **collaborators) -> int:
            try:
                return stops.guarded(prog(module), main, argv, **collaborators)
            except (out_lock.OutInUse, records.CannotResume, records.WriteError) as error:
                say_error(prog(module), f"error: {error}")
                return error.exit_code
        return run
    return wrap
