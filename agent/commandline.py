"""What the agent's command lines share: for both protocols (``agent.cli`` for the file protocol,
``agent.codingame`` for stdin/stdout) the usage error, logging set-up and the engine by name;
for every command (``agent.play``, ``agent.arena`` too) the one-line error and the closed-output
clean-up. A module of its own so that no two commands import each other."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path


log = logging.getLogger("agent")

DEFAULT_ENGINE = "alphabeta"


class UsageError(Exception):
    """A command-line problem, reported in one line with exit code 2."""


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


def build_engine(name: str | None, depth: int | None, nodes: int | None, evaluation: str | None = None):
    """Make the engine; depth/nodes (and the evaluation) go in as options when given (engines that
    take none still get depth/nodes through every SearchLimit)."""
    from . import engines  # here, not at the top: ref_sim's commands use the light helpers below

    name = name or DEFAULT_ENGINE
    if name not in engines.ENGINES:
        raise UsageError(f"unknown engine {name!r}; choose from {', '.join(sorted(engines.ENGINES))}")
    options = {key: value for key, value in (("depth", depth), ("nodes", nodes), ("evaluation", evaluation))
               if value is not None}
    try:
        return name, engines.make_engine(name, **options)
    except TypeError:
        if not options:
            raise
        log.info("engine %s takes no %s option; the limit is passed with every search instead",
                 name, "/".join(options))
        return name, engines.make_engine(name)


def say_error(prog: str, message: str, start: str = "") -> None:
    """``PROG: message`` on stderr; never raises (stderr may be closed too)."""
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
