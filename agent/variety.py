"""Different games from a deterministic engine: a seeded choice among equally good first moves.

CodinGame's protocol starts every game from the empty board, and our search (at a fixed depth, or
on a quiet machine) plays the same game every time it meets the same opponent: a series then
counts one game many times. With a seed (``--seed N``; the series runners give each game its
own), the agent's first move of a game, as X on the empty board or as O answering X's first move,
is drawn among the moves whose searched score is within :data:`MARGIN` of the best one; every
later move is the engine's own choice. A first move decides little in this game: the measured
cost is in the README ("Different games").

The candidates are searched side by side to the same depth, deepening while the turn's time
lasts (or to the depth a fixed-depth engine would use), so they are compared on equal terms.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace

from .limits import SearchLimit, SearchResult
from .search import PROVEN_SCORE

#: Plies from the start of the game in which the choice is varied: each side's first move.
VARIED_PLIES = 2
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
