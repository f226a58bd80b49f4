"""The series engine under every runner (match, stdio, tournament, arena, self-play, the cluster).

* :mod:`.command`: the one series command (match, stdio and the tournament describe it) and
  the options they share; :mod:`.event`: a tournament's pairings, schedule and tables.
* :mod:`.loop`: the one series loop (:func:`.loop.play_games`), settings and ``--resume``, how a
  run ends; :mod:`.file_games` and :mod:`.codingame_games`: one game of each protocol, its bots
  started, refereed and recorded.
* :mod:`.specs`, :mod:`.realbots`, :mod:`.bot_list`: bot specs and the built-ins, real bots as
  they are, a class's list of bots; :mod:`.isolation`: ``--isolate``.
* :mod:`.records`, :mod:`.telemetry`: the series' files and our agent's search log, read strictly.
* :mod:`.openings`, :mod:`.selfplay`: openings and schedules; in-process self-play.
* :mod:`.report`, :mod:`.stats`, :mod:`.ratings`, :mod:`.progress`: the tally and summary, Elo
  and SPRT, the tournament's ratings, the progress line.
* :mod:`.cluster`, :mod:`.cluster_tls`: the runners the loop plays on (here, inline, or on a
  Dask cluster) and the cluster's certificates.
"""
