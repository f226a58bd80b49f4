"""Move choosers that a protocol adapter can drive: ``engine.choose(position, limit) -> SearchResult``,
and the one registry of them by name (:data:`ENGINES`), each with the options it declares.

Each engine gets a private copy-safe view of the game: it may push and pop moves on the position
it is given but must leave it as it found it.

Every engine is made from a spec, ``NAME`` or ``NAME:KEY=VALUE,...`` (:func:`make_engine`), read
by the one spec parser (agent.options.parse_spec) against the options its :class:`EngineKind`
declares: the agent's ``--engine`` (:func:`build_engine`), the arena, the analysis, the games'
``search_engine``. A bad spec is one line naming the engine and what it takes::

    engine 'alphabeta' takes no option 'speed'; its options: depth (1-128), nodes (...), ...
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass, replace
from collections.abc import Callable

from .baselines import SeedEvaluator
from .core import AUTO_THREADS, CORES, MAX_THREADS, announce, make_searcher
from .evaluation import Evaluator
from .limits import SearchLimit, SearchResult
from .options import MAX_NODES, Option, SpecError, options_text, parse_spec
from .rules import Position
from .search import INFINITY, MAX_PLY, PLAIN, AlphaBeta, Features

log = logging.getLogger(__name__)

#: The agent's table: it plays one game with the machine to itself.
AGENT_HASH_MB = 192.0
#: A series' table: many short-lived engines, two per game, maybe a game per core.
SERIES_HASH_MB = 64.0
#: ``hash_mb`` at most: 64 GB; more is a slip (bytes or kilobytes given as megabytes).
MAX_HASH_MB = 65536.0


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
#: Fitted beat classic by +180 +/- 84 Elo in a 0.1 s/move SPRT [0, 30] (84 games).
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
    ``core``: ``auto``, ``compiled``, ``wasm`` or ``python`` (None: ``$UTTT_CORE``, else auto), see agent/core.py;
    ``self.core`` and the engine's name say which one runs. ``features``: the search's refinements
    (agent.search.Features; None: the defaults). ``threads``: a number, or ``auto``, of threads the
    compiled core searches on (agent.core.make_searcher); the name says when above 1.
    ``announce(level, message)`` says which core runs at the first move (default: once a process)."""

    def __init__(self, depth: int | None = None, nodes: int | None = None, hash_mb: float = AGENT_HASH_MB,
                 weights=None, evaluation: str = DEFAULT_EVALUATION, core: str | None = None,
                 features: Features | None = None, threads: int | str = 1, *, announce=announce) -> None:
        self.evaluator = make_evaluator(evaluation, weights)
        # A fixed-effort engine (tests, self-play data) does not race a clock: no need to touch
        # the whole table up front.
        searcher, self.core, self._core_note = make_searcher(self.evaluator, hash_mb, core,
                                                             prefault=depth is None and nodes is None,
                                                             features=features, threads=threads)
        threaded = getattr(searcher, "threads", 1)
        self.name = f"alphabeta ({self.core} core{f', {threaded} threads' if threaded > 1 else ''})"
        self.core_status = searcher.core_status  # the ready line's "core: wasm (why)"
        self._announce = announce
        super().__init__(searcher, depth, nodes)

    def choose(self, position, limit: SearchLimit) -> SearchResult:
        # Which core runs is logged at the first move, not when the engine is made: an agent's
        # first line must be its ready line (a match runner starts the referee when it speaks).
        self._announce(*self._core_note)
        return super().choose(position, limit)


def core_status(engine) -> str:
    """The ready line's words for the engine's search core and why it runs (agent.core.core_status),
    through the wrappers that vary a game (agent.variety); '' for an engine without one."""
    while not hasattr(engine, "core_status") and hasattr(engine, "engine"):
        engine = engine.engine
    return getattr(engine, "core_status", "")


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


# -- the registry: every engine by name, with the options it declares -----------------------------

#: The search's refinements as options (agent.search.Features), with the ranges the compiled
#: core takes (agent/_core.c, set_features) and the search's defaults.
FEATURE_OPTIONS = tuple(Option(name, int, 0, high, default=getattr(Features(), name))
                        for name, high in zip(Features.names(), (INFINITY, 2, 62, MAX_PLY)))
#: ``depth`` of the searches: any game of ref_sim.games ends sooner.
DEPTH = Option("depth", int, 1, MAX_PLY)
#: Threads of the compiled core (``auto``: agent.core.auto_threads); the agent's --threads too.
THREADS = Option("threads", int, 1, MAX_THREADS, words=(AUTO_THREADS,), default=1)


@dataclass(frozen=True)
class EngineKind:
    """An engine by name: the options it declares (each checked by agent.options.parse_spec), the
    games it plays (empty: every game of ref_sim.games) and ``make(game, **options)``, ``game`` an
    ref_sim.games.Game or None for the agent's own Ultimate Tic-Tac-Toe. An option left out has
    its declared default (``make``'s own), or none: ``hash_mb`` is the agent's or a series'."""

    name: str
    options: tuple[Option, ...]
    make: Callable
    games: tuple[str, ...] = ()


def _alphabeta(game, depth: int | None = None, nodes: int | None = None, hash_mb: float | None = None,
               threads: int | str = 1, evaluation: str | None = None, core_build: str | None = None,
               core: str | None = None, **features: int) -> SearchEngine:
    if core_build is not None and (game is None or game.name != "uttt"):
        raise SpecError("engine 'alphabeta': core_build=PATH is for uttt in the arena (two builds of "
                        "the compiled core against each other)")
    if core is not None and game is not None and game.name != "uttt":
        raise SpecError(f"engine 'alphabeta': core is for uttt; {game.name} has the Python search only")
    if game is None:  # the competition engine, as the agent plays it
        return AlphaBetaEngine(depth, nodes, AGENT_HASH_MB if hash_mb is None else hash_mb,
                               evaluation=evaluation or DEFAULT_EVALUATION, core=core, features=Features(**features),
                               threads=threads)
    evaluator = None
    if evaluation is not None:
        if game.name != "uttt":
            raise SpecError(f"engine 'alphabeta': evaluation is for uttt; {game.name} has one of its own")
        evaluator = make_evaluator(evaluation)
    searcher = game.searcher(SERIES_HASH_MB if hash_mb is None else hash_mb, Features(**features), threads,
                             evaluator, core_build, core)
    return SearchEngine(searcher, depth, nodes)


def _random(game, seed: int | None = None) -> RandomEngine:
    return RandomEngine(seed)


def _seed(game, depth: int = 3) -> SeedEngine:
    return SeedEngine(depth)


ENGINES = {kind.name: kind for kind in (
    EngineKind("alphabeta", (DEPTH, Option("nodes", int, 1, MAX_NODES), Option("hash_mb", float, 0, MAX_HASH_MB),
                             THREADS,
                             Option("evaluation", str, words=EVALUATIONS, default=DEFAULT_EVALUATION),
                             Option("core_build", str), Option("core", str, words=CORES), *FEATURE_OPTIONS),
               _alphabeta),
    EngineKind("random", (Option("seed", int, 0, 2 ** 32 - 1),), _random),
    EngineKind("seed", (replace(DEPTH, default=3),), _seed, games=("uttt",)),
)}
#: The engine of the agent's command line when --engine is not given.
DEFAULT_ENGINE = "alphabeta"


def parse_engine_spec(text: str) -> tuple[str, dict]:
    """``NAME`` or ``NAME:KEY=VALUE,...`` -> (name, options), checked against what the engine
    declares; SpecError (a ValueError) in one line otherwise.

    >>> parse_engine_spec("alphabeta:depth=4,hash_mb=0")
    ('alphabeta', {'depth': 4, 'hash_mb': 0.0})
    """
    return parse_spec(text, {name: kind.options for name, kind in ENGINES.items()})


def make_engine(spec: str, game=None, *, defaults: dict | None = None, **options):
    """An engine from ``spec`` (``alphabeta``, ``alphabeta:depth=4``, ``random``...) for ``game``
    (a ref_sim.games.Game; None: the agent's own Ultimate Tic-Tac-Toe, the competition engine).
    ``options``: more of its options, from Python (``make_engine("alphabeta", depth=3)``; None:
    not given), checked like the spec's. ``defaults``: values for the options it declares and neither sets (a series'
    seed, which only the random engine takes)."""
    name, values = parse_engine_spec(spec)
    kind = ENGINES[name]
    declared = {option.name: option for option in kind.options}
    for key, value in options.items():
        if value is None:  # not given (ref_sim.play's depth without --depth)
            continue
        if key not in declared:
            raise SpecError(f"engine {name!r} takes no option {key!r}; {options_text(kind.options)}")
        if key in values:
            raise SpecError(f"engine {name!r}: {key} is given twice")
        values[key] = declared[key].check(value)
    for key, value in (defaults or {}).items():
        if key in declared and key not in values and value is not None:
            values[key] = declared[key].check(value)
    played = "uttt" if game is None else game.name
    if kind.games and played not in kind.games:
        raise SpecError(f"engine {name!r} plays {' and '.join(kind.games)} only, not {played}")
    return kind.make(game, **values)


def build_engine(spec: str | None, depth: int | None, nodes: int | None, evaluation: str | None = None,
                 threads: int | str = 1):
    """The engine the agent's command line asks for, and its name: ``--engine`` (a spec; default
    ``alphabeta``) with ``--depth``, ``--nodes``, ``--eval`` and ``--threads`` as its options where
    it declares them (the spec's own win). An engine without depth/nodes still gets them through
    every SearchLimit; one without threads searches on one thread (``auto`` is 1 there, more a
    SpecError)."""
    name, _ = parse_engine_spec(spec or DEFAULT_ENGINE)
    declared = {option.name for option in ENGINES[name].options}
    asked = {key: value for key, value in (("depth", depth), ("nodes", nodes), ("evaluation", evaluation))
             if value is not None}
    if "threads" in declared:
        asked["threads"] = threads
    elif threads not in (1, AUTO_THREADS):
        threaded = ", ".join(kind.name for kind in ENGINES.values() if "threads" in {o.name for o in kind.options})
        raise SpecError(f"engine {name} searches on one thread; --threads {threads} is for {threaded}")
    unused = [key for key in asked if key not in declared]
    if unused:
        log.info("engine %s takes no %s option; the limit is passed with every search instead", name, "/".join(unused))
    return name, make_engine(spec or DEFAULT_ENGINE, defaults=asked)
