"""The bench around the agent: two referees, a series engine, its front-ends, and views.

The referees, side by side, and what they share:

* ``referee``: a faithful, headless simulator of the CS 4341 Ultimate Tic-Tac-Toe referee (v7),
  the file protocol (``cli``, ``__main__``: ``python -m ref_sim NAME1 NAME2``: one game);
  ``codingame_referee``: CodinGame's stdin/stdout referee, one game between two programs.
* ``rules`` (the referee's rules), ``openings`` (openings and the schedule of a series),
  ``random_agent`` and ``stdio_random`` (random players of each protocol).

The series engine, under every runner:

* ``series``: the loop, the settings and ``--resume``, how a run ends; ``report``: the tally
  and the cutechess-style summary; ``specs``: a bot as a runner is told it; ``records``: the
  files in ``--out``; ``progress``: the progress line; ``stops``: stopping cleanly;
  ``telemetry``: what the bots print, read as untrusted input; ``realbots``: real bots as
  they are; ``isolation``: ``--isolate``; ``cluster``: games on Dask workers; ``stats``: Elo,
  SPRT and the rest; ``ratings``: many bots' ratings; ``console``: one line, never a traceback.

The front-ends (command lines):

* ``match``: a series through the file protocol (and its one game: agents, referee, logs);
  ``stdio``: a series under CodinGame's protocol; ``tournament`` (with ``bot_list``): many
  bots, a round-robin or a gauntlet; ``arena`` and ``selfplay``: engines in one process, no
  referee; ``play``: a game against the engine in the terminal.

The views, apart from both:

* ``show`` (games in the terminal), ``render`` (a position as SVG or PNG), ``plot`` (a series'
  score and times), ``replay`` and ``replay_page`` (a series as one HTML page), ``analysis``
  (our engine's verdict on every move), ``crosstable`` (a tournament's pages).
"""

import sys

if sys.argv[:1] == ["-m"]:
    # ``python -m ref_sim.<command>`` is starting (Python sets argv[0] to "-m" while it
    # finds the module): a Ctrl-C while the command is still importing its modules, before
    # its own handling (ref_sim.console) is in place, ends in one line, not a traceback.
    from ref_sim.console import quiet_interrupt_hook as _hook
    sys.excepthook = _hook(sys.excepthook)
