"""The agent's machine channel: one JSON line per move, for the series runners.

The human log line is for people; a program that wants the figures reads this file instead, so it
never has to scrape text that any other program could imitate. The file is ``--search-log PATH``,
else ``$UTTT_SEARCH_LOG`` (:data:`SEARCH_LOG_ENV`, which the runners set per agent and game);
writing it never makes the agent fail. Its lines: docs/telemetry.md.
"""

from __future__ import annotations

import json
import logging
import os

from .cli_common import open_regular

log = logging.getLogger(__name__)

#: The environment variable a runner names the file with (``--search-log`` wins over it).
SEARCH_LOG_ENV = "UTTT_SEARCH_LOG"
FORMAT = 1


class SearchLog:
    """Appends one JSON line per move to ``path`` (None: writes nothing).  ``fixed``: fields
    every line carries (the threads)."""

    def __init__(self, path: str | None, protocol: str, fixed: dict | None = None) -> None:
        self.path = path or None
        self.protocol = protocol
        self.fixed = dict(fixed or {})
        self.turns = 0

    @classmethod
    def chosen(cls, option: str | None, protocol: str, fixed: dict | None = None,
               environ=None) -> SearchLog:
        """The log ``--search-log`` (``option``) names, else :data:`SEARCH_LOG_ENV`'s, else none."""
        environ = os.environ if environ is None else environ
        return cls(option or environ.get(SEARCH_LOG_ENV) or None, protocol, fixed)

    def move(self, board: int, spot: int, seconds: float, result=None, **extra) -> None:
        """Record one move: its cell, the seconds it took and, when the engine searched,
        ``result`` (an :class:`agent.limits.SearchResult`) with its figures."""
        self.turns += 1
        record = {"format": FORMAT, "protocol": self.protocol, "turn": self.turns,
                  "board": board, "spot": spot, **extra, "seconds": round(max(seconds, 0.0), 4)}
        if result is not None:
            record.update(depth=result.depth, score=result.score, nodes=result.nodes,
                          nps=round(result.nodes_per_second), proven=bool(result.proven))
        self.write({**record, **self.fixed})

    def write(self, record: dict) -> None:
        """Append ``record`` as one line in one write; on any failure say so once and stop."""
        if self.path is None:
            return
        try:
            data = (json.dumps(record, allow_nan=False, separators=(",", ":")) + "\n").encode()
            # Not into a FIFO or a device: the open or the write would stall the game for ever.
            handle = open_regular(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode=0o644)
            try:
                os.write(handle, data)
            finally:
                os.close(handle)
        except (OSError, ValueError, TypeError) as error:  # unwritable, a NUL in the path, a bad value
            log.warning("cannot write the search log %r (%s); playing on without it", self.path, error)
            self.path = None
