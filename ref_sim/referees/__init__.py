"""The two referees, side by side: :mod:`.file_protocol` (the CS 4341 referee's files, timing,
verdicts and messages) and :mod:`.codingame` (CodinGame's stdin/stdout turn and rules).  Each
referees one game and knows nothing of series."""
