"""The views, apart from the referees and the series engine: they read games and show them.

* :mod:`.show`: games in the terminal; :mod:`.render`: a position as SVG or PNG; :mod:`.plot`:
  a series' running score and move times.
* :mod:`.replay` and :mod:`.replay_page`: a series as one HTML page; :mod:`.analysis`: our
  engine's verdict on every move; :mod:`.crosstable`: a tournament's pages.

The commands ``uttt-show``, ``uttt-render``, ``uttt-plot`` and ``uttt-replay`` are the modules
of the same names at the top of ``ref_sim`` (``python -m ref_sim.show`` ...).
"""
