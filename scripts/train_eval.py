"""Fit the "fitted" evaluation (agent/eval_fitted.py) to self-play games, from nothing to a data file.

    python scripts/train_eval.py all --dir runs/train --out agent/data/eval-v2.json  # generate, fit, write
    python scripts/train_eval.py generate --dir runs/train --games 25000  # self-play games only (resumable)
    python scripts/train_eval.py fit --dir runs/train --mix 1 0.5 0 --out runs/train/eval.json
    python scripts/train_eval.py match --data runs/train/eval.json --opponent eval-v1 --sprt 0 15 --pairs 2000
    python scripts/train_eval.py match --opponent classic --seconds 0.1 --pairs 100
    python scripts/train_eval.py speed --match-nodes 20000         # nodes/s, classic vs fitted

``generate`` plays seeded self-play games (referee-style random four-move openings, random
deviations early on, both sides our engine at a fixed node budget, by default with v1's tables,
``--engine-eval eval-v1``) and appends one JSON line per game to DIR/games.jsonl: the winner, the
moves, and at every ply the engine searched its score for the side to move (the deep label).
Run it again and it continues where it stopped (game ``i`` always comes from seed
``seed * 1_000_003 + i``; DIR/settings.json keeps the settings, and other ones are refused),
printing progress, the data size and the time taken. ``--cluster ADDRESS`` (or
``UTTT_CLUSTER``) plays the games on the workers of a Dask cluster (ref_sim/series/cluster.py;
``pip install -e '.[cluster]'``; on one machine: ``dask scheduler`` and ``dask worker ADDRESS
--nworkers 2 --nthreads 1``); they are written in game order all the same, so the file is the one
a local run makes.

``fit`` turns every position of the first ``--games`` games (after the opening) into a training
example, holds out every game whose number is divisible by 5, and fits the model's parameters by
Texel-style logistic regression: minimise the cross-entropy between a label and
sigmoid(evaluation in logits). The label is ``LAMBDA * result + (1 - LAMBDA) *
sigmoid(score / scale)`` (``--mix LAMBDA``): the game's result for the side to move (1 win, 1/2
draw, 0 loss) mixed with the self-play search's score at that position, ``scale`` the one at
which the score best predicts the training results. Given several ``--mix`` values it fits each
and keeps the one whose model predicts the held-out *results* best. ``--per-pattern STRENGTH`` adds a
free logit per board pattern (up to the board's symmetries) on top of the pattern features,
shrunk towards them; ``--without TERM`` holds a global term at 0 (ablations). It prints the
held-out loss (against the results) of: always 1/2; the classic evaluation with its best single
scale; the self-play search's score; the fitted model at its starting parameters; the fitted
model for each mix; and the integer tables actually shipped (the quantised model the agent
runs). It needs numpy and scipy: ``pip install -e '.[tune]'``.

``match`` plays the fitted evaluation (``--data``, default the packaged file) against classic,
the seed bot or another data file of agent/data (``--opponent eval-v1``), in one process with
paired openings, at fixed nodes or ``--seconds`` per move, optionally until an SPRT decides.

The model (probabilities, lines, weights) is documented in agent/eval_fitted.py; this script only
chooses its parameters and quantises them into the tables that module reads.

Ctrl-C, SIGTERM and SIGHUP stop every step alike (ref_sim.stops): ``generate`` keeps the games
written so far and says how many (the same command continues), ``fit`` writes nothing (the data
file is replaced only once complete), ``match`` prints the summary of the games played so far; a
cluster's games not yet handled are cancelled and the connection closed. A missing or unreadable
file or a bad value is one line on stderr, never a traceback.

Exit codes: 0 done, 1 the cluster cannot be used (or ``generate`` cannot write its games), 2 bad
arguments or input (a missing games file, an unreadable data file), 130 Ctrl-C, 143 SIGTERM, 129
SIGHUP (128 + the signal).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ref_sim.series import cluster, loop as series, records, scheduler
from ref_sim import stops
from agent.core import make_searcher
from agent.engines import AlphaBetaEngine, SearchEngine
from agent.options import real, whole
from ref_sim.selfplay import training_game

GAMES_FILE = "games.jsonl"
#: Beside the games: the settings they were played with (a resumed run must use the same ones).
SETTINGS_FILE = "settings.json"
PROG = "train_eval.py"
#: More self-play games than this is a typo (25,000 take about an hour on two busy cores).
MAX_GAMES = 10_000_000
#: Node budgets above this are a typo (a move would take hours).
MAX_NODES = 10 ** 9
#: The self-play searcher's table: 2 MB holds a whole game's searches at several thousand nodes a
#: move, and making a larger one per side and game costs more than the game's search.
SELF_PLAY_HASH_MB = 2


class InputError(Exception):
    """A missing or unreadable input, said in one line (exit code 2)."""


class StepStopped(Exception):
    """A step stopped by Ctrl-C or a signal (``interrupt``) after saying what it kept (``detail``)."""

    def __init__(self, interrupt: BaseException, detail: str) -> None:
        super().__init__(detail)
        self.interrupt, self.detail = interrupt, detail


# -- generate --------------------------------------------------------------------------------

def selfplay_game(game_seed: int, nodes: int, engine_eval: str, deviation: float) -> tuple:
    """One game of ``generate``: (winner, plies, moves, scores), ``scores[ply]`` the self-play
    search's score for the side to move there (None where it did not search: the opening and the
    random deviations). A cluster worker can run it."""
    evaluator = self_play_evaluator(engine_eval)
    scores: list = []

    def engine():
        # A fresh searcher per side and game (an empty table: the game depends on its seed only)
        # around one evaluator per process: building the tables is most of a short game's time.
        searcher = make_searcher(evaluator, SELF_PLAY_HASH_MB, None, prefault=False)[0]
        return ScoreNoting(SearchEngine(searcher, nodes=nodes), scores)

    result = training_game(game_seed, engine, deviation=deviation)
    scores += [None] * (result.plies - len(scores))
    return result.winner, result.plies, result.moves, scores


class ScoreNoting:
    """An engine that notes its search's score at each ply it plays (the deep-search label)."""

    def __init__(self, engine, scores: list) -> None:
        self.engine, self.scores = engine, scores

    def choose(self, position, limit):
        result = self.engine.choose(position, limit)
        self.scores += [None] * (position.ply + 1 - len(self.scores))
        self.scores[position.ply] = result.score
        return result


def self_play_evaluator(engine_eval: str):
    """The self-play engine's evaluator by ``--engine-eval`` name: ``classic``, or a data file of
    agent/data by its stem (``eval-v1``), named so that the games do not change when the packaged
    default does (made once per process, also on a cluster's workers)."""
    from agent.eval_fitted import packaged_evaluator
    from agent.evaluation import Evaluator

    return Evaluator() if engine_eval == "classic" else packaged_evaluator(engine_eval)


def engine_evals() -> tuple:
    """``--engine-eval``'s choices: classic and the data files shipped in agent/data."""
    from agent.eval_fitted import DATA_DIR

    return ("classic", *sorted(p.stem for p in DATA_DIR.glob("*.json")))


def generate(directory: Path, games: int, nodes: int, seed: int, deviation: float, engine_eval: str,
             cluster_address: cluster.ClusterTarget | str | None = None, again: str = "") -> Path:
    """Self-play games up to ``games`` in ``directory``, in game order through the series
    engine (:func:`ref_sim.series.loop.play_games`), here or on a cluster; ``again``: the command
    that continues after a stop (said then)."""
    problem = series.prepare_out(str(directory), "--dir")
    if problem:
        raise InputError(problem)
    path = directory / GAMES_FILE
    settings = {"nodes": nodes, "deviation": deviation, "seed": seed, "eval": engine_eval}
    kept = read_settings(directory)
    if kept is not None and kept != settings:
        raise InputError(f"generate: {directory / SETTINGS_FILE} says its games were played with "
                         + ", ".join(f"--{k.replace('eval', 'engine-eval')} {v}" for k, v in kept.items())
                         + ": continue with those, or use another --dir")
    done = 0
    if path.exists():
        with path.open("rb") as handle:
            data = handle.read()
        if data and not data.endswith(b"\n"):  # a line cut by an interrupted run: drop it
            data = data[: data.rfind(b"\n") + 1]
            path.write_bytes(data)
        done = data.count(b"\n")
    if done >= games:
        print(f"generate: {path} already holds {done} games (asked for {games})")
        return path
    if kept is None:
        try:
            records.write_json(directory / SETTINGS_FILE, settings)
        except records.WriteError as error:
            raise InputError(str(error)) from None
    print(f"generate: games {done}..{games - 1} at {nodes} nodes per move, eval {engine_eval}, "
          f"deviation {deviation}, seed {seed} -> {path}", flush=True)
    start = time.time()
    plies = made = 0
    if cluster_address:
        try:
            runner = cluster.connect(cluster_address)
        except cluster.ClusterError as error:
            sys.exit(f"generate: {error}")
        print(f"generate: on {len(runner.slots())} cluster worker(s), {runner.capacity()} games at once",
              flush=True)
    else:
        runner = scheduler.InlineRunner()

    def submit(i: int):
        return runner.submit(f"game-{i}", selfplay_game, seed * 1_000_003 + i, nodes, engine_eval, deviation)

    def finished(i: int, ticket) -> None:
        nonlocal plies, made
        winner, game_plies, moves, scores = ticket.result()
        # A whole line or none: a stop between games never cuts one.
        records.append_game(path, {"game": i, "winner": winner, "moves": moves, "scores": scores})
        plies += game_plies
        made = i + 1 - done
        if made % 100 == 0 or i + 1 == games:
            elapsed = time.time() - start
            left = (games - i - 1) * elapsed / made
            print(f"  {i + 1}/{games} games, {plies} plies this run, {elapsed:.0f} s, "
                  f"~{left:.0f} s left", flush=True)

    with runner:        # a cluster's games not yet handled are cancelled, the connection closed
        stopped = series.play_games(runner, range(done, games), submit, finished, threading.Event(),
                                    ordered=True)
    kept_line = f"after {done + made} of {games} games ({made} this run, kept in {path})"
    for error in stopped.values():
        if isinstance(error, KeyboardInterrupt):    # Ctrl-C, SIGTERM, SIGHUP (ref_sim.stops)
            raise StepStopped(error, f"{kept_line}; the same command continues: {again}")
        if isinstance(error, (cluster.ClusterError, records.WriteError)):
            sys.exit(f"generate: {error}; stopped {kept_line}; the same command continues: {again}")
        raise error
    elapsed = time.time() - start
    print(f"generate: {games - done} games in {elapsed:.0f} s ({(games - done) / max(elapsed, 1e-9):.1f} games/s); "
          f"{path} holds {games} games, {os.path.getsize(path) / 1e6:.1f} MB", flush=True)
    return path


def read_settings(directory: Path) -> dict | None:
    """The settings file of a games directory, or None where there is none (older runs)."""
    path = directory / SETTINGS_FILE
    if not path.exists():
        return None
    try:
        return records.read_json(path, "settings file")
    except records.RecordError as error:
        raise InputError(f"cannot read the settings: {error}") from None


# -- the training examples -------------------------------------------------------------------

def read_games(path: Path, games: int) -> list[dict]:
    """Games 0..games-1 of a games file, each ``{"game", "winner", "moves", "scores"}`` (scores
    None in files made before they were noted).  InputError (one line) for a missing file or a
    line that is not a game."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as error:
        raise InputError(f"fit: cannot read the games in {path} ({error.strerror or error}); "
                         f"make them with: python scripts/train_eval.py generate --dir {path.parent}") from None
    kept = []
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.endswith("\n"):
                break                       # cut by a stopped generate: the next run drops it
            try:
                game = json.loads(line)
                if game["game"] >= games:
                    continue
                scores = game.get("scores")
                moves = game["moves"]
                if not isinstance(moves, list) or not all(type(m) is int and 0 <= m < 81 for m in moves) or \
                        game["winner"] not in (0, 1, None) or (scores is not None and len(scores) != len(moves)):
                    raise ValueError("its moves, winner or scores are not a game's")
                kept.append({"game": game["game"], "winner": game["winner"], "moves": game["moves"],
                             "scores": scores})
            except (ValueError, KeyError, TypeError) as error:
                raise InputError(f"fit: {path} line {number} is not a self-play game ({error})") from None
    return kept


def replay(games: list[dict], opening_plies: int = 4):
    """Every position after the opening: (game number, position, result for the mover, the
    self-play search's score for the mover or None).  The position is the game's own, moved on
    after the caller's turn: copy it to keep it."""
    from agent.rules import Position

    for game in games:
        position = Position()
        scores = game["scores"] or [None] * len(game["moves"])
        for ply, (move, score) in enumerate(zip(game["moves"], scores)):
            if ply >= opening_plies:
                winner = game["winner"]
                result = 0.5 if winner is None else 1.0 if winner == position.turn else 0.0
                yield game["game"], position, result, score
            try:
                position.push(move)
            except (ValueError, IndexError, TypeError) as error:
                raise InputError(f"fit: game {game['game']}: move {ply + 1} ({move!r}) is not legal ({error})") from None


def arrays(games: list[dict]):
    """The numpy view of the games' positions that the model needs: pattern indices from the
    mover's side (board-major, 9 x n), the sent board, the result and the search score."""
    import numpy as np

    from agent.eval_fitted import PATTERNS, TERNARY

    n = sum(max(len(g["moves"]) - 4, 0) for g in games)
    masks = np.zeros((n, 2, 9), dtype=np.int64)         # the mover's marks, the other side's
    forced = np.zeros(n, dtype=np.int64)
    result, score = np.zeros(n), np.full(n, np.nan)
    number = np.zeros(n, dtype=np.int64)
    for row, (game, pos, res, deep) in enumerate(replay(games)):
        masks[row, 0], masks[row, 1] = pos.masks[pos.turn], pos.masks[1 - pos.turn]
        forced[row], result[row], number[row] = pos.forced, res, game
        if deep is not None:
            score[row] = deep
    ternary = np.array(TERNARY, dtype=np.int64)
    mine = ternary[masks[:, 0]] + 2 * ternary[masks[:, 1]]
    theirs = ternary[masks[:, 1]] + 2 * ternary[masks[:, 0]]
    sent = forced[:, None] == np.arange(9)[None, :]
    # Where each board's chances come from, as indices into (chance + mover) for the mover's and
    # (chance + waiter) for the other side's: the sent board's from the second table, by the
    # mover's pattern. Board-major (9 x n): each board's row is contiguous (fast line products).
    m_index = np.where(sent, PATTERNS + mine, mine)
    t_index = np.where(sent, PATTERNS + mine, theirs)
    return {"m_index": np.ascontiguousarray(m_index.T), "t_index": np.ascontiguousarray(t_index.T),
            "free": forced < 0, "result": result, "score": score, "game": number}


def subset(data: dict, rows) -> dict:
    """The examples of ``rows`` (a boolean mask over them)."""
    return {k: v[:, rows] if v.ndim == 2 else v[rows] for k, v in data.items()}


def sigmoid(z):
    import numpy as np

    return 0.5 + 0.5 * np.tanh(z / 2)      # no overflow for the search's proven scores


def deep_scale(data: dict) -> float:
    """The search score's units per logit: the scale at which sigmoid(score / scale) best predicts
    the results of the examples that have a score (one-parameter logistic regression)."""
    import numpy as np
    from scipy.optimize import minimize_scalar

    has = ~np.isnan(data["score"])
    score, result = data["score"][has], data["result"][has]
    best = minimize_scalar(lambda s: cross_entropy(score / s, result), bounds=(10.0, 10_000.0), method="bounded")
    return float(best.x)


def targets(data: dict, mix: float, scale: float):
    """The training target: ``mix`` * result + (1 - mix) * sigmoid(score / scale), the result alone
    where the search did not score the position (a random deviation)."""
    import numpy as np

    deep = sigmoid(np.nan_to_num(data["score"]) / scale)
    return np.where(np.isnan(data["score"]), data["result"], mix * data["result"] + (1 - mix) * deep)


# -- the model -------------------------------------------------------------------------------

#: Features of a pattern (a's view, b the other side) that set a's chance to win the board.
PATTERN_FEATURES = ("bias", "own_two", "own_one", "other_two", "other_one", "empty_lines",
                    "own_center", "other_center", "own_corners", "other_corners")
#: v2's fit (agent/data/eval-v2.json): the label mix, the per-pattern logits' pull (in examples)
#: and the global terms held at 0, each chosen by held-out loss (agent/eval_fitted.py says how).
DEFAULT_MIX = (0.5,)
DEFAULT_PER_PATTERN = 30.0
DEFAULT_WITHOUT = ("board",)
#: Extra terms for the board the mover is sent to: the mover's chance, and the other side's.
SENT_FEATURES = ("bias", "own_two", "other_two")
WEIGHTS = ("line", "board", "tempo", "free_move")


def pattern_tables():
    """Per pattern (in pattern order): features, the sent-board extras, and which are decided."""
    import numpy as np

    from agent.eval_fitted import PATTERNS, pattern_index
    from agent.rules import FULL, LINE_MASKS, WINS, board_patterns

    phi = np.zeros((PATTERNS, len(PATTERN_FEATURES)))
    extra = np.zeros((PATTERNS, len(SENT_FEATURES)))
    won = np.zeros(PATTERNS, dtype=bool)
    dead = np.zeros(PATTERNS, dtype=bool)        # a cannot win this board any more (or lost it)
    swap = np.zeros(PATTERNS, dtype=np.int64)
    for a, b in board_patterns():
        i = pattern_index(a, b)
        swap[i] = pattern_index(b, a)
        won[i] = WINS[a]
        counts = {"own_two": 0, "own_one": 0, "other_two": 0, "other_one": 0, "empty_lines": 0}
        for line in LINE_MASKS:
            x, o = bin(a & line).count("1"), bin(b & line).count("1")
            if x and o:
                continue
            if x:
                counts["own_two" if x == 2 else "own_one"] += x < 3
            elif o:
                counts["other_two" if o == 2 else "other_one"] += o < 3
            else:
                counts["empty_lines"] += 1
        live = counts["own_two"] + counts["own_one"] + counts["empty_lines"]
        dead[i] = not WINS[a] and (WINS[b] or (a | b) == FULL or live == 0)
        values = dict(counts, bias=1, own_center=a >> 4 & 1, other_center=b >> 4 & 1,
                      own_corners=sum(a >> c & 1 for c in (0, 2, 6, 8)),
                      other_corners=sum(b >> c & 1 for c in (0, 2, 6, 8)))
        phi[i] = [values[f] for f in PATTERN_FEATURES]
        extra[i] = [1, counts["own_two"] > 0, counts["other_two"] > 0]
    # Each pattern's class under the board's 8 symmetries (for the per-pattern logits, --per-pattern).
    spots = np.arange(9).reshape(3, 3)
    maps = [np.rot90(grid, r).ravel() for grid in (spots, spots.T) for r in range(4)]
    ternary = np.array([3 ** s for s in range(9)])
    digits = np.array([[i // 3 ** s % 3 for s in range(9)] for i in range(PATTERNS)])
    canonical = np.min([digits[:, spot_map] @ ternary for spot_map in maps], axis=0)
    classes, cls = np.unique(canonical, return_inverse=True)
    return {"phi": phi, "extra": extra, "won": won, "dead": dead, "swap": swap, "cls": cls, "classes": len(classes)}


def split(params):
    """(pattern features' weights, the mover's extras, the waiter's extras, global weights)."""
    k, s = len(PATTERN_FEATURES), len(SENT_FEATURES)
    return params[:k], params[k:k + s], params[k + s:k + 2 * s], params[k + 2 * s:k + 2 * s + len(WEIGHTS)]


def per_pattern(params):
    """The per-pattern logits (one per symmetry class; empty unless fitted with --per-pattern)."""
    return params[len(PATTERN_FEATURES) + 2 * len(SENT_FEATURES) + len(WEIGHTS):]


def chance_tables(params, pt):
    """(chance, mover, waiter) as float arrays over the patterns (see agent/eval_fitted.py)."""
    import numpy as np

    theta, mu, omega, _ = split(params)
    z = pt["phi"] @ theta
    residual = per_pattern(params)
    if len(residual):
        z = z + residual[pt["cls"]]

    def prob(z, won, dead):
        return np.where(won, 1.0, np.where(dead, 0.0, sigmoid(z)))

    chance = prob(z, pt["won"], pt["dead"])
    swap = pt["swap"]
    mover = prob(z + pt["extra"] @ mu, pt["won"], pt["dead"])
    # The waiter's chance on pattern (a, b) is b's: its features are those of the swapped pattern.
    waiter = prob(z[swap] + pt["extra"][swap] @ omega, pt["won"][swap], pt["dead"][swap])
    return chance, mover, waiter


def forward(tables, weights, data):
    """The evaluation in logits for every example, from float tables, with what the gradient
    needs: (z, m, t, the line sums of m, of t)."""
    import numpy as np

    from agent.eval_fitted import GLOBAL_LINES

    chance, mover, waiter = tables
    line, board, tempo, free_move = weights
    m = np.concatenate((chance, mover))[data["m_index"]]
    t = np.concatenate((chance, waiter))[data["t_index"]]
    lines_m = sum(m[i] * m[j] * m[k] for i, j, k in GLOBAL_LINES)
    lines_t = sum(t[i] * t[j] * t[k] for i, j, k in GLOBAL_LINES)
    z = line * (lines_m - lines_t) + board * (m.sum(0) - t.sum(0)) + tempo + free_move * data["free"]
    return z, m, t, lines_m, lines_t


def cross_entropy(z, result) -> float:
    import numpy as np

    # -(y log s(z) + (1 - y) log(1 - s(z))) = log(1 + e^z) - y z, computed stably
    return float(np.mean(np.logaddexp(0, z) - result * z))


def model_loss(params, pt, data) -> float:
    return cross_entropy(forward(chance_tables(params, pt), split(params)[3], data)[0], data["result"])


def loss_and_gradient(params, pt, data, ridge: float = 0.0):
    """The training loss (cross-entropy against ``data["target"]``, plus ``ridge`` / 2 times the
    per-pattern logits' squares) and its exact gradient (the chain rule through lines, tables,
    sigmoids)."""
    import numpy as np

    from agent.eval_fitted import GLOBAL_LINES, PATTERNS

    theta, mu, omega, weights = split(params)
    line, board, tempo, free_move = weights
    chance, mover, waiter = tables = chance_tables(params, pt)
    z, m, t, lines_m, lines_t = forward(tables, weights, data)
    n = len(z)
    loss = cross_entropy(z, data["target"])
    dz = (sigmoid(z) - data["target"]) / n          # d loss / d z
    # d z / d m_b = line * (sum over lines through b of the other two boards' product) + board
    dm, dt = np.full_like(m, board), np.full_like(t, -board)
    for i, j, k in GLOBAL_LINES:
        dm[i] += line * m[j] * m[k]
        dm[j] += line * m[i] * m[k]
        dm[k] += line * m[i] * m[j]
        dt[i] -= line * t[j] * t[k]
        dt[j] -= line * t[i] * t[k]
        dt[k] -= line * t[i] * t[j]
    dm *= dz
    dt *= dz

    # d loss / d table[pattern]: the m chances come from chance (idle boards) and mover (the sent
    # board), the t chances from chance and waiter, each a pattern of the concatenated tables.
    g_m = np.bincount(data["m_index"].ravel(), weights=dm.ravel(), minlength=2 * PATTERNS)
    g_t = np.bincount(data["t_index"].ravel(), weights=dt.ravel(), minlength=2 * PATTERNS)
    g_chance, g_mover, g_waiter = g_m[:PATTERNS] + g_t[:PATTERNS], g_m[PATTERNS:], g_t[PATTERNS:]
    # Through the sigmoids (decided patterns are constants): d p / d z = p (1 - p).
    live = ~(pt["won"] | pt["dead"])
    g_chance = g_chance * chance * (1 - chance) * live
    g_mover = g_mover * mover * (1 - mover) * live
    swap = pt["swap"]
    g_waiter = g_waiter * waiter * (1 - waiter) * live[swap]
    phi, extra = pt["phi"], pt["extra"]
    grad_theta = phi.T @ g_chance + phi.T @ g_mover + phi[swap].T @ g_waiter
    grad_mu = extra.T @ g_mover
    grad_omega = extra[swap].T @ g_waiter
    grad_weights = [float(dz @ (lines_m - lines_t)), float(dz @ (m.sum(0) - t.sum(0))), float(dz.sum()),
                    float(dz @ data["free"])]
    del tables
    residual = per_pattern(params)
    if not len(residual):
        return loss, np.concatenate([grad_theta, grad_mu, grad_omega, grad_weights])
    # Each class's logit moves every pattern of the class (the waiter's through the swapped one),
    # and its L2 penalty pulls it back to the features' value where the data are few.
    grad_residual = (np.bincount(pt["cls"], weights=g_chance + g_mover, minlength=len(residual))
                     + np.bincount(pt["cls"][swap], weights=g_waiter, minlength=len(residual)) + ridge * residual)
    loss += ridge * float(residual @ residual) / 2
    return loss, np.concatenate([grad_theta, grad_mu, grad_omega, grad_weights, grad_residual])


def initial_params():
    """A hand-set start: threats and lines help, the other side's hurt; compounding lines matter."""
    theta = dict(bias=-1.0, own_two=0.8, own_one=0.3, other_two=-0.8, other_one=-0.3, empty_lines=0.0,
                 own_center=0.2, other_center=-0.2, own_corners=0.05, other_corners=-0.05)
    start = [theta[f] for f in PATTERN_FEATURES] + [0.0, 1.0, -0.5] + [0.0, 0.5, -1.0] + [2.0, 0.1, 0.0, 0.1]
    return start


def quantise(params, pt, scale: int, score_per_logit: int) -> dict:
    """The integer data the agent reads (agent/eval_fitted.py's format)."""
    from agent.eval_fitted import FORMAT, VERSION

    tables = chance_tables(params, pt)
    weights = dict(zip(WEIGHTS, (int(round(w * score_per_logit)) for w in split(params)[3])))
    data = {"format": FORMAT, "version": VERSION, "scale": scale, "score_per_logit": score_per_logit,
            "weights": weights}
    for name, table in zip(("chance", "mover", "waiter"), tables):
        data[name] = [int(round(float(p) * scale)) for p in table]
    return data


def quantised_loss(data, held_games) -> float:
    """Held-out loss of the shipped integer evaluation itself (the agent's code path)."""
    import numpy as np

    from agent.eval_fitted import FittedEvaluator

    evaluate = FittedEvaluator(data).evaluate
    z, results = zip(*((evaluate(pos), result) for _, pos, result, _ in replay(held_games)))
    return cross_entropy(np.array(z) / data["score_per_logit"], np.array(results))


def classic_loss(train_games, held_games):
    """The classic evaluation with its best single scale (fitted on the training games)."""
    import numpy as np
    from scipy.optimize import minimize_scalar

    from agent.evaluation import Evaluator

    evaluate = Evaluator().evaluate
    scores, results = [], []
    for part in (train_games, held_games):
        z, r = zip(*((evaluate(pos), result) for _, pos, result, _ in replay(part)))
        scores.append(np.array(z))
        results.append(np.array(r))
    best = minimize_scalar(lambda k: cross_entropy(k * scores[0], results[0]), bounds=(1e-6, 0.1), method="bounded")
    return cross_entropy(best.x * scores[1], results[1]), best.x


def fit_model(pt, train: dict, without=(), strength: float | None = None):
    """The model's parameters fitted to ``train["target"]`` (L-BFGS from :func:`initial_params`),
    the global terms in ``without`` held at 0, with a logit per symmetry class of patterns unless
    ``strength`` is None, shrunk to 0 by an L2 penalty of ``strength`` examples' weight (the same
    pull whatever the data's size); returns scipy's result."""
    import numpy as np
    from scipy.optimize import minimize

    classes = 0 if strength is None else pt["classes"]
    ridge = 0.0 if strength is None else strength / len(train["target"])
    start = np.array(initial_params() + [0.0] * classes)
    bounds = [(None, None)] * (len(start) - 4 - classes) + [(0, None), (0, None), (None, None), (None, None)]
    bounds += [(None, None)] * classes
    for name in without:  # an ablation: this global term held at 0, to see what it is worth
        i = len(PATTERN_FEATURES) + 2 * len(SENT_FEATURES) + WEIGHTS.index(name)
        start[i], bounds[i] = 0.0, (0.0, 0.0)
    return minimize(loss_and_gradient, start, args=(pt, train, ridge), jac=True, method="L-BFGS-B",
                    bounds=bounds, options={"maxiter": 1000 if classes else 500})


def fit_command(directory: Path, out: Path, args) -> None:
    started = time.time()
    # The games first: a missing or broken file is the user's to fix whether or not numpy is here.
    games = read_games(directory / GAMES_FILE, args.games)
    train_games = [g for g in games if g["game"] % 5]
    held_games = [g for g in games if g["game"] % 5 == 0]
    if not train_games or not held_games:
        raise InputError(f"fit: {len(games)} game(s) in {directory / GAMES_FILE} "
                         "among the first --games: it takes games to fit and games numbered 0 mod 5 "
                         "to hold out (at least 2)")
    try:
        import numpy as np
        import scipy  # noqa: F401
    except ImportError:
        sys.exit("fit needs numpy and scipy: pip install -e '.[tune]'")
    data = arrays(games)
    held_rows = data["game"] % 5 == 0
    train, held = subset(data, ~held_rows), subset(data, held_rows)
    scored = ~np.isnan(train["score"])
    print(f"fit: {len(held_rows)} positions from {len(games)} games: {len(train['result'])} to fit, "
          f"{len(held['result'])} held out (games numbered 0 mod 5), {int(scored.sum())} scored by the "
          f"self-play search; read in {time.time() - started:.0f} s", flush=True)
    pt = pattern_tables()
    losses = {"half": math.log(2)}
    print(f"held-out loss, always 1/2:            {losses['half']:.5f}")
    losses["classic"], k = classic_loss(train_games, held_games)
    print(f"held-out loss, classic (x{k:.5f}/pt):  {losses['classic']:.5f}")
    scale = None
    if scored.any():
        scale = deep_scale(train)
        has = ~np.isnan(held["score"])
        losses["search"] = cross_entropy(held["score"][has] / scale, held["result"][has])
        print(f"held-out loss, the self-play search:  {losses['search']:.5f} (x1/{scale:.1f}/pt; "
              f"{int(has.sum())} positions it scored)")
    elif args.mix != [1.0]:
        raise InputError(f"fit: --mix {' '.join(map(str, args.mix))}: the games in {directory} hold no "
                         "search scores (made before they were noted): only --mix 1 can fit them")
    losses["start"] = model_loss(np.array(initial_params()), pt, held)
    print(f"held-out loss, fitted model at start: {losses['start']:.5f}", flush=True)
    if args.without:
        print(f"fit: without the {', '.join(args.without)} term(s)")
    by_mix = {}
    for mix in args.mix:   # the label: mix * result + (1 - mix) * the search's opinion
        train["target"] = targets(train, mix, scale) if scale else train["result"]
        t0 = time.time()
        # Each from the same start: a mix gives the same tables whether it is fitted alone or not.
        found = fit_model(pt, train, args.without, strength=args.per_pattern)
        by_mix[mix] = (model_loss(found.x, pt, held), found)
        print(f"held-out loss, fitted model, mix {mix:<4}: {by_mix[mix][0]:.5f} (training {found.fun:.5f} "
              f"against its target; {found.nit} iterations, {time.time() - t0:.0f} s)", flush=True)
    mix = min(by_mix, key=lambda m: by_mix[m][0])      # the first of equals: --mix's order
    losses["fitted"], found = by_mix[mix]
    params = found.x
    if len(by_mix) > 1:
        print(f"fit: mix {mix} predicts the held-out results best")
    theta, mu, omega, weights = split(params)
    print("parameters (logits):")
    for group, names, values in (("chance", PATTERN_FEATURES, theta), ("mover", SENT_FEATURES, mu),
                                 ("waiter", SENT_FEATURES, omega), ("global", WEIGHTS, weights)):
        print(f"  {group:7} " + "  ".join(f"{n}={v:+.3f}" for n, v in zip(names, values)))
    quantised = quantise(params, pt, scale=1000, score_per_logit=500)
    losses["shipped"] = quantised_loss(quantised, held_games)
    print(f"held-out loss, shipped integer tables: {losses['shipped']:.5f}")
    quantised["fit"] = {
        "games": len(games), "positions": len(held_rows), "held_out": len(held["result"]),
        "self_play": read_settings(directory) or {"nodes": args.nodes, "deviation": args.deviation,
                                                  "seed": args.seed, "eval": args.engine_eval},
        "labels": {"mix": mix, "search_scale": None if scale is None else round(scale, 3),
                   "scored": int(scored.sum())},
        "without": list(args.without), "per_pattern": args.per_pattern,
        "held_out_loss": dict({k: round(v, 5) for k, v in losses.items()},
                              by_mix={str(m): round(v[0], 5) for m, v in by_mix.items()}),
        "parameters": {"chance": dict(zip(PATTERN_FEATURES, map(float, theta))),
                       "mover": dict(zip(SENT_FEATURES, map(float, mu))),
                       "waiter": dict(zip(SENT_FEATURES, map(float, omega))),
                       "global_logits": dict(zip(WEIGHTS, map(float, weights)))}}
    write_data(quantised, out)
    print(f"fit: wrote {out} ({out.stat().st_size / 1000:.0f} kB) in {time.time() - started:.0f} s")


def write_data(data: dict, out: Path) -> None:
    """The data file: the small fields indented, each table on one line."""
    text = json.dumps({k: v for k, v in data.items() if k not in ("chance", "mover", "waiter")}, indent=1)
    tables = ",\n".join(f' "{name}": {json.dumps(data[name], separators=(",", ":"))}'
                         for name in ("chance", "mover", "waiter"))
    # Written whole then renamed: a stop or a full disk never leaves half a data file.
    temporary = out.with_name(out.name + ".partial")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(text[:-2] + ",\n" + tables + "\n}\n", encoding="utf-8")
        os.replace(temporary, out)
    except OSError as error:
        raise InputError(f"fit: cannot write {out} ({error.strerror or error})") from None
    finally:
        temporary.unlink(missing_ok=True)


# -- match -----------------------------------------------------------------------------------

def match(pairs: int, nodes: int, opponent_nodes: int, seed: int, data: Path | None, opponent: str = "classic",
          seconds: float | None = None, sprt_bounds: list[float] | None = None) -> None:
    """Fitted (``data``, default the packaged file) against ``opponent`` -- classic, the seed bot
    at depth 3, or a data file of agent/data (``eval-v1``) -- in one process, with paired
    openings, at fixed node budgets (the result depends on the evaluations only, not on the
    load) or ``seconds`` per move; with ``sprt_bounds`` (Elo0, Elo1) until the pentanomial SPRT
    (alpha = beta = 0.05) decides or ``pairs`` are played."""
    from agent.engines import SeedEngine
    from ref_sim.series import stats
    from agent.eval_fitted import EvalDataError, FittedEvaluator, load_data
    from ref_sim.selfplay import play_pairs

    try:
        fitted = FittedEvaluator(load_data(data) if data else None)
    except EvalDataError as error:
        raise InputError(f"match: --data: {error}") from None
    other = None if opponent == "seed" else self_play_evaluator(opponent)
    budget = (f"{seconds:g} s" if seconds else f"{nodes}", f"{seconds:g} s" if seconds else f"{opponent_nodes}")
    names = (f"{data.stem if data else 'fitted'}@{budget[0]}",
             "seed:depth=3" if opponent == "seed" else f"{opponent}@{budget[1]}")
    print(f"match: {names[0]} vs {names[1]}{' per move' if seconds else ' nodes per move'}, {pairs} openings x 2"
          f"{' at most' if sprt_bounds else ''}, seed {seed}", flush=True)
    points: list[float] = []
    started = time.time()

    def engine(evaluator, budget):
        # The compiled core where there is one (a fresh table per game), as the agent runs.
        return SearchEngine(make_searcher(evaluator, 16, None, prefault=bool(seconds))[0],
                            nodes=None if seconds else budget)

    def sprt():
        return stats.sprt(*sprt_bounds, 0.05, 0.05, ptnml=stats.pentanomial(
            [points[i], points[i + 1]] for i in range(0, len(points) - 1, 2)))

    def on_game(result, tally):
        points.append(1.0 if result.winner == 0 else 0.0 if result.winner == 1 else 0.5)
        if len(points) % 20 == 0:
            print(f"  {len(points)} games: +{tally[0]} -{tally[1]} ={tally[2]}  ({time.time() - started:.0f} s)",
                  flush=True)

    def undecided() -> bool:
        """No SPRT, or not decided after a whole pair."""
        return not (sprt_bounds and points and len(points) % 2 == 0 and sprt().decision)

    try:
        play_pairs(lambda: engine(fitted, nodes),
                   SeedEngine if other is None else lambda: engine(other, opponent_nodes),
                   pairs, seed=seed, seconds=seconds, on_game=on_game, wanted=undecided)
    except KeyboardInterrupt as interrupt:          # the games so far, then one line
        summary(names, points, sprt_bounds and sprt())
        raise StepStopped(interrupt, f"after {len(points)} games") from None
    summary(names, points, sprt_bounds and sprt())
    print(f"match: {len(points)} games in {time.time() - started:.0f} s")


def summary(names, points: list[float], sprt=None) -> None:
    """The match runner's summary of agent A's points (1, 1/2, 0 per game, in pairs), and the
    SPRT's state when there is one."""
    from ref_sim.series import stats

    wins, losses = points.count(1.0), points.count(0.0)
    ptnml = stats.pentanomial([points[i], points[i + 1]] for i in range(0, len(points) - 1, 2))
    for line in stats.summary_lines(names, wins, losses, len(points) - wins - losses,
                                    ptnml if sum(ptnml) else None):
        print(line, flush=True)
    if sprt:
        print(sprt.line() + {"H1": " (H1 accepted)", "H0": " (H0 accepted)"}.get(sprt.decision, ""), flush=True)


# -- speed -----------------------------------------------------------------------------------

def speed(nodes: int, core: str) -> None:
    """Nodes/s of the search with each evaluation on scripts/bench_positions.txt at a fixed node
    budget. The two alternate on every position (each goes first in one of two rounds) and CPU
    time is counted, so other programs' load slows both alike."""
    from agent.limits import SearchLimit
    from agent.rules import Move, Position

    suite = []
    for line in (Path(__file__).with_name("bench_positions.txt")).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            suite.append(Position.from_moves(Move.parse(m) for m in line.split(":", 1)[1].split(",")))
    print(f"speed: {len(suite)} positions x 2 rounds at {nodes} nodes, classic and fitted ({core} core)",
          flush=True)
    totals = {"classic": [0, 0.0], "fitted": [0, 0.0]}
    for order in (("classic", "fitted"), ("fitted", "classic")):
        for position in suite:
            for name in order:
                engine = AlphaBetaEngine(nodes=nodes, evaluation=name, core=core)
                started = time.process_time()
                result = engine.choose(position.copy(), SearchLimit())
                totals[name][0] += result.nodes
                totals[name][1] += time.process_time() - started
    rates = {name: count / seconds for name, (count, seconds) in totals.items()}
    for name, rate in rates.items():
        print(f"speed: {name:7} {rate:>9,.0f} nodes/s ({core} core, CPU time, {len(suite)} positions x 2 "
              f"at {nodes} nodes)")
    print(f"speed: fitted / classic = {rates['fitted'] / rates['classic']:.3f}")


# -- command line ----------------------------------------------------------------------------

def strength(text: str) -> float | None:
    """--per-pattern's value: ``off``, or a pull from 0 to 10^6 examples."""
    return None if text == "off" else real(0, 1e6)(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("all", "generate", "fit", "match", "speed"))
    parser.add_argument("--dir", type=Path, default=Path("runs/train"), help="working directory (default runs/train)")
    parser.add_argument("--games", type=whole(1, MAX_GAMES), default=25000,
                        help="self-play games to generate, and to fit (default 25000)")
    parser.add_argument("--nodes", type=whole(1, MAX_NODES), default=6400,
                        help="node budget per move in self-play (default 6400)")
    parser.add_argument("--deviation", type=real(0, 1), default=0.04,
                        help="chance of a random move at each of the first 30 plies, 0-1 (default 0.04)")
    parser.add_argument("--seed", type=int, default=2, help="data seed (default 2)")
    parser.add_argument("--engine-eval", default="eval-v1", choices=engine_evals(),
                        help="evaluation the self-play engine uses: classic or a data file of agent/data "
                             "(default eval-v1)")
    cluster.add_cluster_options(parser, action="generate: play the games")
    parser.add_argument("--out", type=Path, default=None, help="data file to write (default DIR/eval.json)")
    parser.add_argument("--mix", type=real(0, 1), nargs="+", default=list(DEFAULT_MIX), metavar="LAMBDA",
                        help="fit: the label, LAMBDA * result + (1 - LAMBDA) * the self-play search's "
                             "opinion; several: fit each, keep the best on the held-out results "
                             f"(default {' '.join(map(str, DEFAULT_MIX))})")
    parser.add_argument("--per-pattern", type=strength, default=DEFAULT_PER_PATTERN, metavar="STRENGTH",
                        help="fit: also a logit per board pattern (up to symmetry) on top of the features', "
                             "each pulled to 0 by an L2 penalty weighing as much as STRENGTH examples; off: "
                             f"the features alone (default {DEFAULT_PER_PATTERN:g})")
    parser.add_argument("--without", nargs="*", default=list(DEFAULT_WITHOUT), choices=WEIGHTS,
                        help="fit: hold these global terms at 0 (ablation; the loss shows what they are worth); "
                             f"alone: none (default {' '.join(DEFAULT_WITHOUT)})")
    parser.add_argument("--pairs", type=whole(1, MAX_GAMES), default=50,
                        help="match: openings, each played twice (default 50)")
    parser.add_argument("--match-nodes", type=whole(1, MAX_NODES), default=4000,
                        help="match: the fitted side's nodes per move; speed: both sides' (default 4000)")
    parser.add_argument("--opponent-nodes", "--classic-nodes", type=whole(1, MAX_NODES), default=None,
                        help="match: the opponent's nodes per move (default: --match-nodes)")
    parser.add_argument("--seconds", type=real(0, 3600, low_open=True), default=None,
                        help="match: seconds per move for both sides instead of node budgets")
    parser.add_argument("--sprt", type=float, nargs=2, metavar=("ELO0", "ELO1"), default=None,
                        help="match: stop when the SPRT of ELO0 against ELO1 (alpha = beta = 0.05, pentanomial) "
                             "decides; --pairs is then a maximum")
    parser.add_argument("--core", choices=("python", "compiled", "auto"), default="python",
                        help="speed: the search core (default python: the evaluation as written here)")
    parser.add_argument("--opponent", choices=("seed", *engine_evals()), default="classic",
                        help="match: the other side: classic (default), seed (the seed bot at depth 3) or a "
                             "data file of agent/data (eval-v1)")
    parser.add_argument("--data", type=Path, default=None, help="match: the fitted side's data file (default: the packaged one)")
    return parser


def main(argv=None) -> int:
    """The command; every stop (Ctrl-C, SIGTERM, SIGHUP) and bad input is one line on stderr."""
    return stops.guarded(PROG, run, sys.argv[1:] if argv is None else list(argv))


def run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        steps(args, argv)
    except StepStopped as stopped:          # the step said what it kept
        print(f"{PROG}: {stops.said(stopped.interrupt)} {stopped.detail}", file=sys.stderr)
        return stops.exit_code(stopped.interrupt)
    except InputError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    return 0


def steps(args, argv: list[str]) -> None:
    started = time.time()
    if args.step in ("all", "generate"):
        generate(args.dir, args.games, args.nodes, args.seed, args.deviation, args.engine_eval, cluster.cluster_target(args),
                 again=stops.command_line(sys.argv[0] if sys.argv and sys.argv[0].endswith(".py") else __file__,
                                          *argv))
    if args.step in ("all", "fit"):
        fit_command(args.dir, args.out or args.dir / "eval.json", args)
    if args.step == "speed":
        speed(args.match_nodes, args.core)
    if args.step == "match":
        match(args.pairs, args.match_nodes, args.opponent_nodes or args.match_nodes, args.seed, args.data,
              args.opponent, args.seconds, args.sprt)
    print(f"train_eval: {args.step} took {time.time() - started:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
