"""A game's bots as processes: started, contained, measured and ended.

* :mod:`.launch`: a bot's environment and a bot that cannot start; :mod:`.bot_process`: a game's
  bots from start to end, once for both protocols (``GameBots``).
* :mod:`.contain`: a bot started under its keeper and, with ``--isolate``, contained (the shim,
  the sandbox, its cgroup, its disk cap); the line that says which guarantee holds here.
* :mod:`.isolation`: what ``--isolate`` is (settings, options, ``--resume``, what no bot may see);
  :mod:`.sandbox`: bwrap and what a bot may read; :mod:`.cgroups`: cgroup v1/v2, a bot's cgroup,
  the pool of cores; :mod:`.disk_cap`: what a bot may write in all.
* :mod:`.metering`: what each bot used (CPU, peak memory, what it wrote); :mod:`.turn_share`: what
  a bot had of a core over the turn it lost on time.
* :mod:`.keeper`: the keeper every bot runs under.  ``keeper_program.py`` and ``shim_program.py``
  are programs of their own, run as ``python -I -S PATH`` (the standard library alone): never
  imported by the project.

It knows nothing of where games are played (:mod:`ref_sim.series.run`).
"""
