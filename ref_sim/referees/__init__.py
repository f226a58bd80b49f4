"""The two referees, side by side, each a machine and the shell that drives it: the CS 4341
referee's files, timing, verdicts and messages (:mod:`.file_referee`, :mod:`.file_shell`, the
texts :mod:`.file_text`) and CodinGame's stdin/stdout turn and rules (:mod:`.codingame_referee`,
:mod:`.codingame_shell`).  Each referees one game and knows nothing of series."""
