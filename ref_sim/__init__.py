"""The bench around the agent: the commands at the top, and four packages under them.

* :mod:`ref_sim.referees`: the two referees side by side, :mod:`.referees.file_protocol` (a
  faithful, headless simulator of the CS 4341 referee v7) and :mod:`.referees.codingame`
  (CodinGame's stdin/stdout turn); each referees one game and knows nothing of series.
* :mod:`ref_sim.series`: the series engine under every command: the one loop, one game of
  each protocol (``file_games``, ``codingame_games``), bot specs, records and resume, the tally
  and report, statistics, isolation, clusters.
* :mod:`ref_sim.views`: show, render, plot, replay, analysis, crosstable: they read games and
  show them, apart from both.

Shared by all: ``rules`` (the referee's rules, deliberately plain), ``stops`` (stopping
cleanly) and ``console`` (one line, never a traceback).

The commands (``python -m ref_sim.NAME``, or ``uttt-...``): ``cli``/``__main__`` (one game,
like referee.py), ``match`` (a series through the files), ``stdio`` (a series under CodinGame's
protocol), ``tournament``, ``arena`` and ``selfplay`` (engines in one process), ``play`` (you
against the engine), ``cluster_serve``, ``show``, ``render``, ``plot``, ``replay``.  The
built-in bots the runners start as programs are in :mod:`ref_sim.bots`.
"""

import sys

if sys.argv[:1] == ["-m"]:
    # ``python -m ref_sim.<command>`` is starting (Python sets argv[0] to "-m" while it
    # finds the module): a Ctrl-C while the command is still importing its modules, before
    # its own handling (ref_sim.cli_common) is in place, ends in one line, not a traceback.
    from ref_sim.cli_common import quiet_interrupt_hook as _hook
    sys.excepthook = _hook(sys.excepthook)
