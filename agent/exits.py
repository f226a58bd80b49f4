"""The agent's exit codes, in both protocols: what a script or a runner that started it can read
from how it ended. Importing this module imports nothing else (agent.__main__ needs the code for
Ctrl-C while the other modules are still loading)."""

#: The game ended and the agent read how: won, lost or tied (file protocol: end_game read;
#: CodinGame: the input ended after a finished game).
EXIT_FINISHED = 0
#: A bug in the agent itself.
EXIT_INTERNAL = 1
#: A bad command line: name, directory, log file, engine, options.
EXIT_USAGE = 2
#: No end will come. File protocol: the files vanished, nothing changed for ``--silence`` s, the
#: directory is gone, or the runner that started it is gone. CodinGame: stdin ended or stdout
#: closed in the middle of a game.
EXIT_ABORTED = 3
#: The game could not be followed. File protocol: end_game read after a late start or a bad
#: move. CodinGame: input that is not the protocol's.
EXIT_PROTOCOL_ERROR = 4
#: Ctrl-C (128 + SIGINT, what a shell reports).
EXIT_INTERRUPTED = 130

#: CodinGame's names for the same codes.
EXIT_INPUT_ENDED = EXIT_ABORTED
EXIT_BAD_INPUT = EXIT_PROTOCOL_ERROR
