"""Move choosers that a protocol adapter can drive: ``engine.choose(position, limit) -> SearchResult``.

Each engine gets a private copy-safe view of the game: it may push and pop moves on the position
it is given but must leave it as it found it.
"""

from __future__ import annotations

import random
import time

from .limits import SearchLimit, SearchResult
from .rules import Position


class RandomEngine:
    """Plays a uniformly random legal move (a baseline and a protocol test partner)."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)

    def choose(self, position: Position, limit: SearchLimit) -> SearchResult:
        start = time.perf_counter()
        move = self._rng.choice(list(position.legal_moves()))
        return SearchResult(move=move, nodes=1, elapsed=time.perf_counter() - start)


ENGINES = {"random": RandomEngine}


def make_engine(name: str, **options):
    """Build an engine by name (see ``ENGINES``)."""
    try:
        factory = ENGINES[name]
    except KeyError:
        raise ValueError(f"unknown engine {name!r}; choose from {', '.join(sorted(ENGINES))}") from None
    return factory(**options)
