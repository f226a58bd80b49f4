"""The series engine under every runner (match, stdio, tournament, arena, self-play, the cluster).

Its own core, here:

* :mod:`.command`: the one series command (match, stdio and the tournament describe it);
  :mod:`.command_line`: the options they share, read once; :mod:`.settings`: a run's settings as
  a value, and the settings files ``--resume`` continues from; :mod:`.event`: a tournament's
  pairings, schedule and tables; :mod:`.preflight`: ``uttt-tournament --check``.
* :mod:`.loop`: the one series loop (:func:`.loop.play_games`), how a run ends;
  :mod:`.file_games` and :mod:`.codingame_games`: one game of each protocol, its bots started,
  refereed and recorded.
* :mod:`.specs`, :mod:`.realbots`, :mod:`.bot_list`: bot specs and the built-ins, real bots as
  they are, a class's list of bots; :mod:`.openings`: openings and schedules.

Its parts, under the core, none importing it:

* :mod:`.process`: a game's bots as processes (started, kept, contained by ``--isolate``,
  measured, ended).
* :mod:`.run`: where games are played (here, inline, or on a Dask cluster).
* :mod:`.output`: the series' files and what it prints (records, telemetry, the summary, the
  progress line, the machine's time-outs).
* :mod:`.stats`: Elo, SPRT and the tournament's ratings, as pure functions.
"""
