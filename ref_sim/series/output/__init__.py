"""What a series leaves and says: its files and what it prints, read back by the views.

* :mod:`.records`: the series' files (games.jsonl read and written whole-line, settings
  replaced whole); :mod:`.game_line` and :mod:`.event_record`: a games.jsonl line and a
  tournament.json as values, checked once on read; :mod:`.strict_json`: the one strict JSON
  reader; :mod:`.out_lock`: one runner per ``--out``.
* :mod:`.telemetry`: our agent's search log, and bots' logs cut to size.
* :mod:`.report`: the tally and the cutechess-style summary; :mod:`.progress`: the progress line.
* :mod:`.machine_load`: which time-outs the records mark as the machine's, as the summaries and
  pages say it.

It imports nothing of how bots are run (:mod:`ref_sim.series.process`) or where games are
played (:mod:`ref_sim.series.run`).
"""
