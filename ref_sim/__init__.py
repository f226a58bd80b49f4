"""The bench around the agent: the referee simulator and everything that plays or looks at many
games. The commands sit at the top (``python -m ref_sim.NAME``, or ``uttt-...``), over four
packages: :mod:`ref_sim.referees` (the two referees side by side, knowing nothing of series),
:mod:`ref_sim.series` (the series engine under every command), :mod:`ref_sim.views` (they read
games and show them) and :mod:`ref_sim.bots` (the built-in players). Each module's place:
docs/layout.md.
"""

import sys

if sys.argv[:1] == ["-m"]:
    # ``python -m ref_sim.<command>`` is starting (Python sets argv[0] to "-m" while it
    # finds the module): a Ctrl-C while the command is still importing its modules, before
    # its own handling (ref_sim.entry_point) is in place, ends in one line, not a traceback.
    from ref_sim.entry_point import quiet_interrupt_hook as _hook
    sys.excepthook = _hook(sys.excepthook)
