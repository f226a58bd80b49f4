"""Different games from a deterministic engine, at no cost in strength: a seeded symmetry.

CodinGame's protocol starts every game from the empty board, and our search (at a fixed depth, or
on a quiet machine) plays the same game every time it meets the same opponent: a series then
counts one game many times. Ultimate Tic-Tac-Toe looks the same under the eight symmetries of the
square (rotations and reflections), applied to the global grid and to every local board at once:
lines stay lines and a move still sends the opponent to the board numbered like its spot. With a
seed (``--seed N``; the series runners give each game its own), the agent plays the whole game on
a board turned by one of the eight: it sees the opponent's moves turned, and its own answers are
turned back. Every position it searches is equivalent to the real one, so it plays exactly as
well; but where moves tie (many do near the start) it breaks the tie on another cell, and the game
goes another way. Its tables stay consistent, since it only ever sees the turned game.

Against a deterministic opponent ties alone vary few games, so as X on the empty board the agent
also draws its first move among the moves within :data:`MARGIN` of the best, all searched side by
side to the same depth (:class:`OpeningVariety`). :func:`varied` puts the two together.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace

from .limits import SearchLimit, SearchResult
from .rules import Position
from .search import PROVEN_SCORE

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


#: Plies from the start of the game in which the first move is varied: X's first move only (varying
#: O's answer as well measured -33 +/- 46 and -35 +/- 43 Elo in two 200-game series at 100 ms,
#: nearly all of it as O).
VARIED_PLIES = 1
#: Score units (the fitted evaluation's scale: 500 per logit of the expected result) a varied
#: first move may lose against the best: 20 is about 1 % of expected score in an even position.
MARGIN = 20
#: Share of a timed turn spent comparing the candidates; the rest searches the chosen move on.
COMPARE_SHARE = 0.5


class OpeningVariety:
    """Wraps an engine (``choose(position, limit)``); see the module docstring."""

    def __init__(self, engine, seed: int, margin: int = MARGIN, plies: int = VARIED_PLIES) -> None:
        self.engine = engine
        self.name = getattr(engine, "name", type(engine).__name__)
        self.rng = random.Random(seed)
        self.margin = margin
        self.plies = plies

    def choose(self, position, limit: SearchLimit) -> SearchResult:
        if position.ply >= self.plies or len(position.legal_moves()) < 2:
            return self.engine.choose(position, limit)
        start = time.perf_counter()
        scores, depth, nodes = self._scores(position, limit)
        if not scores:  # not even one depth in the time: the engine's own choice
            return self.engine.choose(position, limit)
        best = max(scores.values())
        if abs(best) >= PROVEN_SCORE:  # a forced result is no place for variety
            good = [move for move, score in scores.items() if score == best]
        else:
            good = [move for move, score in scores.items() if score >= best - self.margin]
        move = self.rng.choice(sorted(good))
        if limit.deadline is not None and time.perf_counter() < limit.deadline:
            # The rest of the turn goes to the position after the chosen move, as the engine's own
            # search would have spent it: its table then holds the replies the next turn meets.
            position.push(move)
            try:
                nodes += self._search(position, replace(limit, depth=None, nodes=None)).nodes
            finally:
                position.pop()
        return SearchResult(move=move, score=scores[move], depth=depth, nodes=nodes,
                            elapsed=time.perf_counter() - start)

    def _scores(self, position, limit: SearchLimit) -> tuple[dict[int, int], int, int]:
        """Each legal move's score (mover's view) at the deepest depth every move completed:
        one depth less than a fixed-depth engine's, a share of a fixed node budget each, or
        deepening until the deadline."""
        moves = list(position.legal_moves())
        fixed = getattr(self.engine, "depth", None) or limit.depth
        budget = getattr(self.engine, "nodes", None) or limit.nodes
        if budget is not None:
            return self._pass(position, moves, replace(limit, depth=fixed and max(fixed - 1, 1),
                                                       nodes=max(1, budget // len(moves))), exact=False)
        if fixed is not None:
            return self._pass(position, moves, replace(limit, depth=max(fixed - 1, 1)), exact=True)
        deepest, done, nodes = {}, 0, 0
        if limit.deadline is not None:  # half the turn for the comparison, the rest as above
            limit = replace(limit, deadline=time.perf_counter() + COMPARE_SHARE * (limit.deadline - time.perf_counter()))
        for depth in range(1, 81):
            scores, _, spent = self._pass(position, moves, replace(limit, depth=depth), exact=True)
            nodes += spent
            if not scores:  # time ran out inside this depth
                break
            deepest, done = scores, depth
            if limit.deadline is not None and time.perf_counter() >= limit.deadline:
                break
        return deepest, done, nodes

    def _pass(self, position, moves, limit: SearchLimit, exact: bool) -> tuple[dict[int, int], int, int]:
        """Every move searched under ``limit``; ``{}`` when ``exact`` and one fell short of its depth."""
        scores, nodes = {}, 0
        for move in moves:
            position.push(move)
            try:
                result = self._search(position, limit)
            finally:
                position.pop()
            nodes += result.nodes
            if exact and result.depth < limit.depth and not result.proven:
                return {}, limit.depth, nodes
            scores[move] = -result.score
        return scores, limit.depth or 0, nodes

    def _search(self, position, limit: SearchLimit) -> SearchResult:
        # The wrapped engine's own depth or nodes would override the child's: search through
        # its searcher where it has one.
        searcher = getattr(self.engine, "searcher", None)
        if searcher is not None:
            return searcher.search(position, limit)
        return self.engine.choose(position, limit)


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
    return SymmetricVariety(OpeningVariety(engine, seed), seed)
