"""Our engine's verdict on every move of a series, for the replay page (``uttt-replay --analyse``):
each position searched by the agent's engine, on the cores here or a cluster's workers, each move
judged by the expected result it lost, the results cached in the run's ``replay-analysis.json``.
How a move is judged and why the thresholds are lichess's: docs/viewing.md; what a game gains:
:func:`game_analysis`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import math
import multiprocessing
import os
import re
import signal
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from agent.rules import Position
from agent.search import MAX_PLY, PROVEN_SCORE, WIN_SCORE
from ref_sim.series.output import strict_json
class AnalysisError(ValueError):
    """Options that ask for no sensible analysis; the message is one line for the user."""


#: (judgement, the least loss of expected result that earns it), worst first.
THRESHOLDS = (("blunder", 0.15), ("mistake", 0.10), ("inaccuracy", 0.05))
#: The cache of analysed positions, in the run's folder.
CACHE_NAME = "replay-analysis.json"
CACHE_FORMAT = 1
DEFAULT_SECONDS = 0.5
#: The fitted evaluation's scale when its data file cannot say (agent/data/eval-v1.json).
DEFAULT_SCORE_PER_LOGIT = 500


def score_per_logit() -> int:
    """Score units per logit of the engine's evaluation (the fitted evaluation's data file)."""
    from agent.eval_fitted import DEFAULT_DATA
    try:
        return int(json.loads(DEFAULT_DATA.read_text(encoding="utf-8"))["score_per_logit"])
    except (OSError, ValueError, KeyError):
        return DEFAULT_SCORE_PER_LOGIT


def expected(score: int, per_logit: float) -> float:
    """The mover's expected result for a search score (forced results are 1 or 0).

    >>> expected(0, 500), expected(WIN_SCORE - 7, 500), expected(-(WIN_SCORE - 7), 500)
    (0.5, 1.0, 0.0)
    """
    if score > PROVEN_SCORE:
        return 1.0
    if score < -PROVEN_SCORE:
        return 0.0
    return 1.0 / (1.0 + math.exp(-score / per_logit))


def judge(loss: float | None) -> str | None:
    """The judgement of a move that lost ``loss`` of expected result (None: a fine move).

    >>> judge(0.02), judge(0.07), judge(0.12), judge(0.5)
    (None, 'inaccuracy', 'mistake', 'blunder')
    """
    if loss is None:
        return None
    for name, least in THRESHOLDS:
        if loss >= least - 1e-9:
            return name
    return None


# -- settings and selection --------------------------------------------------------------

@dataclass(frozen=True)
class Settings:
    """How long each position is searched: seconds, depth, nodes (any may be None)."""
    seconds: float | None = DEFAULT_SECONDS
    depth: int | None = None
    nodes: int | None = None

    @classmethod
    def from_args(cls, seconds, depth, nodes) -> Settings:
        """--time, --depth, --nodes: half a second per position unless a depth or a node
        count is given (a fixed effort gives the same verdicts every run)."""
        if seconds is not None and not (seconds > 0 and math.isfinite(seconds)):
            raise AnalysisError(f"--time {seconds:g}: give a positive number of seconds")
        if depth is not None and not 1 <= depth < MAX_PLY:
            raise AnalysisError(f"--depth {depth}: give a depth from 1 to {MAX_PLY - 1}")
        if nodes is not None and nodes < 1:
            raise AnalysisError(f"--nodes {nodes}: give a positive node count")
        if seconds is None and depth is None and nodes is None:
            seconds = DEFAULT_SECONDS
        return cls(seconds, depth, nodes)

    def key(self) -> str:
        return f"time={self.seconds} depth={self.depth} nodes={self.nodes}"


def select_games(games: list[dict], selection: str) -> list[dict]:
    """The games that ``selection`` names: ``all``, ``wins``, ``losses``, ``draws`` (agent 1's),
    or numbers and ranges like ``1,4,7-9``; AnalysisError for anything else or a missing game."""
    text = selection.strip().lower()
    by_word = {"all": lambda g: True, "wins": lambda g: g["score"] == 1,
               "losses": lambda g: g["score"] == 0, "draws": lambda g: g["result"] == "tie"}
    if text in by_word:
        return [game for game in games if by_word[text](game)]
    numbers: set[int] = set()
    for part in text.split(","):
        found = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not found:
            raise AnalysisError(f"--games {selection!r}: give all, wins, losses, draws, or "
                              "game numbers and ranges such as 1,4,7-9")
        first = int(found.group(1))
        last = int(found.group(2)) if found.group(2) else first
        numbers.update(range(first, last + 1))
    held = {game["game"] for game in games}
    missing = sorted(numbers - held)
    if missing:
        raise AnalysisError(f"--games {selection!r}: no game {missing[0]} in this series "
                          f"(it holds {len(held)} games)")
    return [game for game in games if game["game"] in numbers]


# -- searching positions -----------------------------------------------------------------

#: One engine per thread (a cluster worker may search in several), made at its first
#: position and kept, table and all, for the next ones.
_engines = threading.local()


def search_position(rules: str, moves: tuple[int, ...], settings: Settings) -> dict:
    """The engine's best move and score (mover's view) after ``moves`` (cell indices)."""
    from agent.engines import make_engine
    from agent.limits import SearchLimit
    engine = getattr(_engines, "engine", None)
    if engine is None:
        engine = _engines.engine = make_engine("alphabeta")
    position = Position.from_moves(moves, rules)
    # A depth always: without one the search plays a lone legal move unsearched, scoring 0.
    limit = SearchLimit(deadline=None if settings.seconds is None
                        else time.perf_counter() + settings.seconds,
                        depth=settings.depth or MAX_PLY - 1, nodes=settings.nodes)
    result = engine.choose(position, limit)
    return {"best": result.move, "score": result.score, "depth": result.depth,
            "nodes": result.nodes, "pv": list(result.pv)}


def _position_key(rules: str, moves: tuple[int, ...]) -> str:
    return rules + ":" + ".".join(map(str, moves))


def _tasks(game: dict) -> list[tuple[str, tuple[int, ...]]]:
    """(rules, moves) of each position of ``game`` to search: from the first one after the
    opening to the last, while the game goes on."""
    cells = tuple(move["board"] * 9 + move["spot"] for move in game["moves"])
    first = sum(move["opening"] for move in game["moves"])
    return [(game["rules"], cells[:ply]) for ply in range(first, len(cells) + 1)
            if not game["states"][ply][2]]


def _load_cache(path: Path | None, settings: Settings) -> dict:
    if path is None or not path.is_file():
        return {}
    try:
        data = strict_json.read_json(path, "cache")       # NaN, nesting...: a damaged cache
        if data.get("format") == CACHE_FORMAT:
            return dict(data["settings"].get(settings.key(), {}))
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        pass                            # a damaged cache is only a slower run
    return {}


def _save_cache(path: Path, settings: Settings, found: dict, say) -> None:
    """Add ``found`` to the cache at ``path`` (what it holds for other settings, and for
    positions not searched now, stays)."""
    try:
        data = strict_json.read_json(path, "cache") if path.is_file() else {}
        if data.get("format") != CACHE_FORMAT:
            data = {}
        known = data.setdefault("settings", {}).setdefault(settings.key(), {})
        known.update(found)
    except (OSError, ValueError, AttributeError, TypeError):
        data = {"settings": {settings.key(): found}}
    data["format"] = CACHE_FORMAT
    try:
        temp = path.with_name(path.name + ".tmp")
        temp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(temp, path)
    except OSError as error:
        say(f"note: could not save the analysis cache {path}: {error}")


def search_positions(tasks: list, settings: Settings, jobs: int | None, found: dict,
                     say=lambda text: None, runner=None, search=search_position) -> None:
    """Search every (rules, moves) of ``tasks`` missing from ``found`` (keyed by
    :func:`_position_key`): ``jobs`` processes at once (1: in this process), or on the
    workers of ``runner`` (an :class:`ref_sim.series.run.cluster.ClusterRunner`), one slot a position.
    ``search(rules, moves, settings)`` searches one (:func:`search_position`; a function of a
    module where it goes to other processes).

    Each result goes into ``found`` as it comes.  A stop (Ctrl-C, SIGTERM: KeyboardInterrupt)
    cancels the positions not started, keeps those finished and kills the searches under way,
    at once: ``found`` then holds every position searched, for the cache."""
    todo = list(dict.fromkeys(task for task in tasks if _position_key(*task) not in found))
    if not todo:
        return
    jobs = runner.capacity() if runner is not None else \
        max(1, min(jobs or os.cpu_count() or 1, len(todo)))
    per = f"{settings.seconds:g} s" if settings.seconds else (
        f"depth {settings.depth}" if settings.depth else f"{settings.nodes} nodes")
    where = " on the cluster" if runner is not None else ""
    say(f"analysing {len(todo)} positions ({per} each, {jobs} at once{where})")
    step = max(1, len(todo) // 10)
    done = 0

    def keep(task, result):
        nonlocal done
        found[_position_key(*task)] = result
        done += 1
        if done % step == 0:
            say(f"  {done}/{len(todo)}")

    if runner is not None:
        _search_on_cluster(todo, settings, runner, keep, search)
    elif jobs == 1:
        for task in todo:               # the C search lets Ctrl-C through every ~10 ms
            keep(task, search(*task, settings))
    else:
        _search_in_processes(todo, settings, jobs, keep, search)


def _ignore_stops() -> None:
    """A searching process leaves the stop signals to the parent (the terminal's Ctrl-C
    reaches the whole process group), which keeps what is done and then kills it."""
    from ref_sim.stops import stop_signal_numbers
    for signum in stop_signal_numbers():
        signal.signal(signum, signal.SIG_IGN)


def _search_in_processes(todo: list, settings: Settings, jobs: int, keep, search) -> None:
    # spawn: the same on every system, and no copy of a parent that may hold threads.
    pool = concurrent.futures.ProcessPoolExecutor(
        jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_ignore_stops)
    futures = {pool.submit(search, *task, settings): task for task in todo}
    kept = set()
    try:
        for future in concurrent.futures.as_completed(futures):
            keep(futures[future], future.result())
            kept.add(future)
    finally:
        # Not `with pool`: its exit waits for every queued position (minutes), Ctrl-C or not.
        # The searches under way are not waited for either (Python 3.14 has kill_workers()).
        workers = list((getattr(pool, "_processes", None) or {}).values())
        manager = getattr(pool, "_executor_manager_thread", None)
        pool.shutdown(wait=False, cancel_futures=True)
        for future, task in futures.items():
            if future not in kept and future.done() and not future.cancelled() \
                    and future.exception() is None:
                keep(task, future.result())
        for process in workers:
            with contextlib.suppress(OSError, AttributeError):
                process.kill()
        # The pool's thread ends once it sees its processes gone. Left running, it may close its
        # wake-up pipe while Python's exit writes to it: "OSError: [Errno 9] Bad file descriptor"
        # and a traceback after a clean stop (Python 3.11; seen once in CI under load).
        if manager is not None:
            manager.join(timeout=5)


def _search_on_cluster(todo: list, settings: Settings, runner, keep, search) -> None:
    """The positions on the cluster's workers, kept as they finish (any order: ``found`` is
    keyed), two per slot in flight so no worker waits for its next one."""
    queue = iter(enumerate(todo))
    running: dict = {}                  # ticket -> task
    try:
        while True:
            while len(running) < 2 * runner.capacity():
                number, task = next(queue, (None, None))
                if task is None:
                    break
                running[runner.submit(f"position-{number}", search, *task, settings)] = task
            if not running:
                return
            finished, _ = runner.wait(set(running))
            for ticket in finished:
                keep(running.pop(ticket), ticket.result())
    finally:
        for ticket in [t for t in running if t.future.done()]:
            with contextlib.suppress(Exception):      # failed or cancelled: not kept
                keep(running[ticket], ticket.result())
                del running[ticket]
        runner.cancel(list(running))


# -- verdicts ----------------------------------------------------------------------------

def game_analysis(game: dict, found: dict, settings: Settings, per_logit: float) -> dict:
    """What the engine says about ``game``, from the searched positions in ``found``::

        settings    {"seconds", "depth", "nodes"}: the effort per position
        evals       len(moves) + 1 values, one per position (before the first move to after
                    the last): X's expected result (0-1), or null where not searched (the
                    opening)
        scores      the same positions' search scores from X's view (forced results beyond
                    +/-PROVEN_SCORE; a finished game +/-WIN_SCORE or 0), or null
        depths      the depth each position was searched to, or null
        moves       one per move: null for the opening, else {"best": [board, spot],
                    "best_score": the best move's score for the mover, "loss": expected
                    result lost (0 when the best move was played), "judgement": null,
                    "inaccuracy", "mistake" or "blunder"}
    """
    cells = [move["board"] * 9 + move["spot"] for move in game["moves"]]
    count = len(cells)
    searched: list[dict | None] = []
    for ply in range(count + 1):
        result = game["states"][ply][2]
        if result:                      # the game is over: the rules give the value
            searched.append({"terminal": result})
        else:
            searched.append(found.get(_position_key(game["rules"], tuple(cells[:ply]))))

    def x_score(ply):                   # the search score of a position, from X's view
        entry = searched[ply]
        if entry is None:
            return None
        if "terminal" in entry:
            return {"X": WIN_SCORE, "O": -WIN_SCORE}.get(entry["terminal"], 0)
        return entry["score"] if ply % 2 == 0 else -entry["score"]

    scores = [x_score(ply) for ply in range(count + 1)]
    evals = [None if score is None else round(expected(score, per_logit), 4)
             for score in scores]
    verdicts = []
    for ply, move in enumerate(game["moves"]):
        before = searched[ply]
        if move["opening"] or before is None or "terminal" in before:
            verdicts.append(None)
            continue
        sign = 1 if ply % 2 == 0 else -1            # X moves at even plies
        best_score = before["score"]
        if before["best"] == cells[ply]:
            played = best_score
        elif scores[ply + 1] is None:
            verdicts.append({"best": list(divmod(before["best"], 9)), "best_score": best_score,
                             "loss": None, "judgement": None})
            continue
        else:
            played = sign * scores[ply + 1]
        loss = max(0.0, expected(best_score, per_logit) - expected(played, per_logit))
        verdicts.append({"best": list(divmod(before["best"], 9)), "best_score": best_score,
                         "loss": round(loss, 4), "judgement": judge(loss)})
    return {"settings": asdict(settings), "evals": evals, "scores": scores,
            "depths": [entry.get("depth") if entry and "terminal" not in entry else None
                       for entry in searched],
            "moves": verdicts}


def analyse_run(data: dict, games: list[dict], settings: Settings, jobs: int | None = None,
                cache: Path | None = None, say=lambda text: None, runner=None,
                fresh: bool = False, search=search_position) -> None:
    """Search every position of ``games`` (games of ``data``) and set each one's
    ``analysis``; positions already in ``cache`` (a file, or None) are not searched again
    (``fresh``: they are, and the new results replace them there).  Every position searched
    goes into ``cache``, also when a stop (Ctrl-C, SIGTERM) ends the analysis early: the same
    command then goes on from there.  ``runner``, ``search``: a cluster to search on, what
    searches a position (see :func:`search_positions`)."""
    found = {} if fresh else _load_cache(cache, settings)
    tasks = [task for game in games for task in _tasks(game)]
    known = len(found)
    try:
        search_positions(tasks, settings, jobs, found, say, runner, search)
    except KeyboardInterrupt:
        if cache is not None and len(found) > known:
            _save_cache(cache, settings, found, say)
            say(f"kept the {len(found) - known} positions searched in {cache}: "
                "the same command goes on from there")
        raise
    if cache is not None and len(found) > known:
        _save_cache(cache, settings, found, say)
    per_logit = data["score_per_logit"]
    for game in games:
        game["analysis"] = game_analysis(game, found, settings, per_logit)
