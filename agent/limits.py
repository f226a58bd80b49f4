"""Value types shared by the search and its callers: what to search for, and what came back."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SearchLimit:
    """When a search must stop: a ``deadline`` on the ``time.perf_counter()`` clock, a depth, a node count.

    Any combination may be given; the search stops at the first one reached. With none, it
    searches until the result is proven.
    """

    deadline: float | None = None
    depth: int | None = None
    nodes: int | None = None

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
