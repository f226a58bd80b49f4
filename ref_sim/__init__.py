"""A faithful, headless simulator of the CS 4341 Ultimate Tic-Tac-Toe referee (v7)."""

import sys

if sys.argv[:1] == ["-m"]:
    # ``python -m ref_sim.<command>`` is starting (Python sets argv[0] to "-m" while it
    # finds the module): a Ctrl-C while the command is still importing its modules, before
    # its own handling (ref_sim.console) is in place, ends in one line, not a traceback.
    from ref_sim.console import quiet_interrupt_hook as _hook
    sys.excepthook = _hook(sys.excepthook)
