"""Move choosers that a protocol adapter can drive: ``engine.choose(position, limit) -> SearchResult``.

Each engine gets a private copy-safe view of the game: it may push and pop moves on the position
it is given but must leave it as it found it.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import replace

from .baselines import SeedEvaluator
from .core import announce, make_searcher
from .evaluation import Evaluator
from .limits import SearchLimit, SearchResult
from .rules import Position
from .search import PLAIN, AlphaBeta, Features

log = logging.getLogger(__name__)


def choose_legal(engine, position: Position, limit: SearchLimit, rng: random.Random) -> SearchResult:
    """``engine.choose`` on a copy of ``position``, but always a legal move: if the engine raises,
    runs out of time (a bot of one's own, agent.bot) or answers a move the rules do not allow, the
    log says why and a random legal move is played instead. Both protocols ask their engine so."""
    started = time.perf_counter()
    try:
        result = engine.choose(position.copy(), limit)
        if isinstance(result.move, int) and position.is_legal(result.move):
            return result
        log.error("engine returned an illegal move %r (%s); playing a random legal move", result.move,
                  position.why_illegal(result.move) if isinstance(result.move, int) else "not a cell")
    except TimeoutError as error:
        log.error("%s; playing a random legal move", error)
    except Exception:
        log.exception("engine failed; playing a random legal move instead")
    move = rng.choice(list(position.legal_moves()))
    return SearchResult(move=move, elapsed=time.perf_counter() - started)


class RandomEngine:
    """Plays a uniformly random legal move (a baseline and a protocol test partner)."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)

    def choose(self, position: Position, limit: SearchLimit) -> SearchResult:
        start = time.perf_counter()
        move = self._rng.choice(list(position.legal_moves()))
        return SearchResult(move=move, nodes=1, elapsed=time.perf_counter() - start)


class SearchEngine:
    """The generic alpha-beta around a searcher (any game). ``depth`` or ``nodes`` make it
    deterministic (fixed-depth or fixed-node searches, for tests and baselines); with neither,
    the caller's deadline bounds it."""

    name = "alphabeta"

    def __init__(self, searcher: AlphaBeta, depth: int | None = None, nodes: int | None = None) -> None:
        self.searcher = searcher
        self.depth = depth
        self.nodes = nodes

    def choose(self, position, limit: SearchLimit) -> SearchResult:
        if self.depth is not None or self.nodes is not None:
            limit = replace(limit, depth=self.depth or limit.depth, nodes=self.nodes or limit.nodes)
        return self.searcher.search(position, limit)


#: The Ultimate Tic-Tac-Toe evaluations by name: ``classic`` (hand-shaped, agent/evaluation.py)
#: and ``fitted`` (board chances compounded along global lines, agent/eval_fitted.py).
EVALUATIONS = ("classic", "fitted")
#: Fitted beat classic by +180 +/- 84 Elo in a 0.1 s/move SPRT [0, 30] (84 games; issue 10).
DEFAULT_EVALUATION = "fitted"


def make_evaluator(evaluation: str = DEFAULT_EVALUATION, weights=None):
    """An evaluator by name (``EVALUATIONS``); ``weights`` only for the classic one."""
    if evaluation == "classic":
        return Evaluator(weights) if weights is not None else Evaluator()
    if evaluation == "fitted":
        if weights is not None:
            raise ValueError("weights apply to the classic evaluation only")
        from .eval_fitted import FittedEvaluator  # its data file is read only when chosen
        return FittedEvaluator()
    raise ValueError(f"unknown evaluation {evaluation!r}; choose from {', '.join(EVALUATIONS)}")


class AlphaBetaEngine(SearchEngine):
    """The competition engine: the search with a table-driven Ultimate Tic-Tac-Toe evaluation
    (``evaluation`` by name, see ``EVALUATIONS``; ``weights`` to try other classic ones).
    ``core``: ``auto``, ``compiled`` or ``python`` (None: ``$UTTT_CORE``, else auto), see agent/core.py;
    ``self.core`` and the engine's name say which one runs. ``features``: the search's refinements
    (agent.search.Features; None: the defaults). ``threads``: a number, or ``auto``, of threads the
    compiled core searches on (agent.core.make_searcher); the name says when above 1."""

    def __init__(self, depth: int | None = None, nodes: int | None = None, hash_mb: float = 192.0,
                 weights=None, evaluation: str = DEFAULT_EVALUATION, core: str | None = None,
                 features: Features | None = None, threads: int | str = 1) -> None:
        self.evaluator = make_evaluator(evaluation, weights)
        # A fixed-effort engine (tests, self-play data) does not race a clock: no need to touch
        # the whole table up front.
        searcher, self.core, self._core_note = make_searcher(self.evaluator, hash_mb, core,
                                                             prefault=depth is None and nodes is None,
                                                             features=features, threads=threads)
        threaded = getattr(searcher, "threads", 1)
        self.name = f"alphabeta ({self.core} core{f', {threaded} threads' if threaded > 1 else ''})"
        super().__init__(searcher, depth, nodes)

    def choose(self, position, limit: SearchLimit) -> SearchResult:
        # Which core runs is logged at the first move, not when the engine is made: an agent's
        # first line must be its ready line (a match runner starts the referee when it speaks).
        announce(*self._core_note)
        return super().choose(position, limit)


class SeedEngine:
    """A typical student bot: fixed-depth minimax (depth 3 by default) with the seed-style
    line-count evaluation. Alpha-beta gives it the same moves as plain minimax, only faster."""

    name = "seed"

    def __init__(self, depth: int = 3) -> None:
        self.depth = depth
        # PLAIN: reductions and the solver would make it neither minimax nor the same bot as before.
        self.searcher = AlphaBeta(SeedEvaluator(), move_space=81, hash_mb=0, features=PLAIN)

    def choose(self, position: Position, limit: SearchLimit) -> SearchResult:
        return self.searcher.search(position, replace(limit, depth=self.depth, nodes=None))


ENGINES = {"alphabeta": AlphaBetaEngine, "random": RandomEngine, "seed": SeedEngine}


def make_engine(name: str, **options):
    """Build an engine by name (see ``ENGINES``)."""
    try:
        factory = ENGINES[name]
    except KeyError:
        raise ValueError(f"unknown engine {name!r}; choose from {', '.join(sorted(ENGINES))}") from None
    return factory(**options)
