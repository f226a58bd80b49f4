"""Different games from a deterministic engine, at no cost in strength: a seeded symmetry.

With ``--seed N`` the agent plays the whole game on a board turned by one of the square's eight
symmetries (the global grid and every local board at once): every position it searches is
equivalent to the real one, but where moves tie it breaks the tie on another cell. As X on the
empty board it also draws its first move from :data:`FIRST_MOVES` (:class:`FirstMoveVariety`);
:func:`varied` puts the two together. Why, and what it costs: docs/agent.md, "Varied games: ``--seed``".
"""

from __future__ import annotations

import random
import time

from .limits import SearchLimit, SearchResult
from .rules import Position

# The eight symmetries of a 3x3 grid, as permutations of 0-8 (row-major): the identity, three
# rotations, four reflections.
_ROTATE = (6, 3, 0, 7, 4, 1, 8, 5, 2)   # a quarter turn clockwise: new cell i holds old _ROTATE[i]
_MIRROR = (2, 1, 0, 5, 4, 3, 8, 7, 6)   # left-right


def _compose(outer, inner):
    return tuple(inner[outer[i]] for i in range(9))


def _symmetries() -> tuple[tuple[int, ...], ...]:
    found = []
    grid = tuple(range(9))
    for mirror in (grid, _MIRROR):
        turn = mirror
        for _ in range(4):
            found.append(turn)
            turn = _compose(_ROTATE, turn)
    return tuple(found)


#: The eight symmetries of the 3x3 grid.
SYMMETRIES = _symmetries()


def cell_map(symmetry) -> tuple[int, ...]:
    """The symmetry acting on the 81 cells: board and spot turned alike."""
    return tuple(symmetry[index // 9] * 9 + symmetry[index % 9] for index in range(81))


#: X's first moves on the empty board the seed draws from: the centre of the centre board and
#: its four corners (one cell up to symmetry, with the centre). A depth-13 search of each first
#: move (up to symmetry, 15 of them) scored them 124 and 114, the next best 97; depth 12: 154 and
#: 156. Drawn from a list rather than searched side by side at run time: the first turn keeps
#: its whole time for the search that fills the table for what follows.
FIRST_MOVES = (40, 36, 38, 42, 44)


class FirstMoveVariety:
    """Wraps an engine: on the empty board, X's first move is drawn from :data:`FIRST_MOVES`
    with the seed, and the turn's time goes to the search after it; every other move is the
    engine's own."""

    def __init__(self, engine, seed: int) -> None:
        self.engine = engine
        self.name = getattr(engine, "name", type(engine).__name__)
        self.rng = random.Random(seed)

    def choose(self, position, limit: SearchLimit) -> SearchResult:
        if position.ply > 0:
            return self.engine.choose(position, limit)
        started = time.perf_counter()
        move = self.rng.choice(FIRST_MOVES)
        position.push(move)
        try:  # the search the engine would have made: its table then holds the replies to come
            after = self.engine.choose(position, limit) if limit.deadline is not None else None
        finally:
            position.pop()
        return SearchResult(move=move, score=-after.score if after else 0, depth=after.depth + 1 if after else 0,
                            nodes=after.nodes if after else 0, elapsed=time.perf_counter() - started)


class SymmetricVariety:
    """Wraps an engine (``choose(position, limit)``): it plays on the board turned by the seed's
    symmetry (see the module docstring). Seed 0 (mod 8) is the identity."""

    def __init__(self, engine, seed: int) -> None:
        self.engine = engine
        self.name = getattr(engine, "name", type(engine).__name__)
        self.forward = cell_map(SYMMETRIES[seed % len(SYMMETRIES)])
        self.back = tuple(sorted(range(81), key=self.forward.__getitem__))

    def choose(self, position: Position, limit: SearchLimit) -> SearchResult:
        turned = Position(position.variant)
        for index in position.moves_played():
            turned.push(self.forward[index])
        result = self.engine.choose(turned, limit)
        result.move = self.back[result.move]
        result.pv = [self.back[move] for move in result.pv]
        return result


def varied(engine, seed: int):
    """``engine`` with both kinds of variety, driven by ``seed``."""
    return SymmetricVariety(FirstMoveVariety(engine, seed), seed)
