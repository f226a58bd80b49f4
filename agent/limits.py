"""Value types shared by the search and its callers: what to search for, and what came back."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


#: Seconds between two calls of ``SearchLimit.should_stop`` inside a search: "promptly" for a
#: person or a referee, and rare enough that the call (a few stat calls) costs nothing.
STOP_POLL_SECONDS = 0.01


@dataclass(frozen=True)
class SearchLimit:
    """When a search must stop: a ``deadline`` on the ``time.perf_counter()`` clock, a depth, a node count.

    Any combination may be given; the search stops at the first one reached. With none, it
    searches until the result is proven.

    ``should_stop``, if given, is a cheap callable that returns True when the answer is no longer
    wanted (the referee's game ended while we think). A search asks it only now and then, where
    it already looks at the clock and only once ``STOP_POLL_SECONDS`` have passed since the last
    question, and stops as at the deadline. Searches that cannot ask it simply ignore it.
    """

    deadline: float | None = None
    depth: int | None = None
    nodes: int | None = None
    should_stop: Callable[[], bool] | None = None

    @classmethod
    def seconds(cls, seconds: float, **kwargs) -> SearchLimit:
        """A limit ``seconds`` from now."""
        return cls(deadline=time.perf_counter() + seconds, **kwargs)


@dataclass
class SearchResult:
    """The move chosen and how it was found. Scores are from the mover's point of view."""

    move: int
    score: int = 0
    depth: int = 0
    nodes: int = 0
    elapsed: float = 0.0
    pv: list[int] = field(default_factory=list)
    proven: bool = False

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / self.elapsed if self.elapsed > 0 else 0.0
