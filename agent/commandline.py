"""What the agent's command lines share: for both protocols (``agent.cli`` for the file protocol,
``agent.codingame`` for stdin/stdout) the usage error, the parser that reports it in one line, the
checked option values, logging set-up and the engine by name; for every command (``ref_sim.play``,
``ref_sim.arena`` too) the one-line error and the closed-output clean-up. A module of its own so
that no two commands import each other.

Option values are checked as they are parsed (:func:`bounded`): numbers must be finite and within
bounds, so nan, inf, 1e309 and 10**30 are one-line usage errors like any other bad value.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from .options import bounded  # the agent's options use it from here too
from .exits import EXIT_USAGE  # noqa: F401  (every usage error; re-exported, as always)


log = logging.getLogger("agent")

PROG = "uttt-agent"

#: The longest time per move a time option takes: an hour. The course's referee gives 10 s,
#: CodinGame 100 ms; a limit beyond an hour is a slip (milliseconds given as seconds), and the
#: waits derived from it (the silence abort at three limits) would be past any use.
MAX_TIME_LIMIT = 3600.0
#: ``--silence`` at most: a day, longer than any game lasts (0 already means "never").
MAX_SILENCE = 86400.0
#: ``--depth`` at most: a game has 81 moves, so no search goes deeper.
MAX_DEPTH = 81
#: ``--nodes`` at most: a trillion, days of search at the compiled core's 1-2 million nodes a
#: second (and far inside the 64-bit counter the compiled core compares it with).
MAX_NODES = 10 ** 12
#: Longest piece of a bad value quoted in an error message.
SHOWN_VALUE = 60
#: Longest error message of the parser (argparse quotes whole values, e.g. unrecognized arguments).
SHOWN_MESSAGE = 400


class UsageError(Exception):
    """A command-line problem, reported in one line with exit code 2."""


def shown(text: str, limit: int = SHOWN_VALUE) -> str:
    """A bad value as an error message quotes it: printable, cut at ``limit`` characters."""
    from .turns import printable  # here, not at the top: this module stays light to import

    return repr(printable(str(text), limit))


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, ``PROG: error: ...`` and exit code 2, like
    every other usage error of the agent (argparse's own also print the usage lines first)."""

    def error(self, message: str):
        from .turns import printable

        say_error(self.prog, f"error: {printable(message, SHOWN_MESSAGE)}")
        sys.exit(EXIT_USAGE)


def threads_option(most: int):
    """An argparse ``type`` for ``--threads``: ``auto`` (resolved where the core is chosen:
    agent.core.make_searcher) or a whole number from 1 to ``most``."""
    from .core import AUTO_THREADS  # here, not at the top: ref_sim's commands use the light helpers

    count = bounded(int, 1, most)

    def parse(text: str):
        if text == AUTO_THREADS:
            return text
        try:
            return count(text)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(f"must be auto or an integer from 1 to {most}, got {shown(text)}") from None

    return parse


def check_log_file(log_file: str | None) -> Path | None:
    """``--log-file`` as a Path once it is known to be writable (created if missing); UsageError if not."""
    if log_file is None:
        return None
    try:
        with open(log_file, "a", encoding="utf-8"):
            pass
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot write log file {shown(log_file)}: {reason(error)}") from None
    return Path(log_file)


def reason(error: Exception) -> str:
    """Why a file operation failed, short: ``File name too long``, not the errno and the path
    (ValueError: a NUL byte in the path)."""
    return (error.strerror if isinstance(error, OSError) else None) or str(error)


def setup_logging(args, log_path: Path | None, name: str) -> None:
    """Log to ``log_path`` (or stderr) at the level ``-v``/``-q`` ask for, each line naming ``name``."""
    level = logging.DEBUG if args.verbose else logging.WARNING if args.quiet else logging.INFO
    handler = logging.FileHandler(log_path, encoding="utf-8") if log_path else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"%(asctime)s.%(msecs)03d {name} %(levelname)s %(message)s",
                                           datefmt="%H:%M:%S"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # watchdog and other libraries stay quiet unless asked for debug.
    logging.getLogger("watchdog").setLevel(logging.DEBUG if args.verbose else logging.WARNING)


def say_error(prog: str, message: str, start: str = "") -> None:
    """``PROG: message`` on stderr; never raises (stderr may be closed too)."""
    if sys.stderr is None:  # closed before we started: print(file=None) would write to stdout
        return
    try:
        print(f"{start}{prog}: {message}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def silence_output(out) -> None:
    """Point a closed stdout at the null device, so Python's flush at exit fails no second time."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, out.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (a test's stream): nothing is flushed at exit
