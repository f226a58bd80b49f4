"""The built-in bots the runners start as programs of their own: :mod:`.random_agent` (the file
protocol's random player, a short reference bot, and its hostile variants ``eager``, ``flood``
and ``nbsp``) and :mod:`.stdio_random` (CodinGame's)."""
