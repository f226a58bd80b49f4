"""Fit the "fitted" evaluation (agent/eval_fitted.py) to self-play games, from nothing to a data file.

    python scripts/train_eval.py all --dir runs/train --games 3000      # generate, fit, write the data file
    python scripts/train_eval.py generate --dir runs/train --games 3000 # self-play games only (resumable)
    python scripts/train_eval.py fit --dir runs/train --out agent/data/eval-v1.json
    python scripts/train_eval.py match --pairs 50 --match-nodes 4000 --classic-nodes 4600
    python scripts/train_eval.py speed --match-nodes 20000         # nodes/s, classic vs fitted

``generate`` plays seeded self-play games (referee-style random four-move openings, random
deviations early on, both sides our engine at a fixed node budget) and appends one JSON line per
game to DIR/games.jsonl; run it again and it continues where it stopped (game ``i`` always comes
from seed ``seed * 1_000_003 + i``), printing progress, the data size and the time taken.
``--cluster ADDRESS`` (or ``UTTT_CLUSTER``) plays the games on the workers of a Dask cluster
(agent/cluster.py; ``pip install -e '.[cluster]'``); they are written in game order all the
same, so the file is the one a local run makes.

``fit`` turns every position of the first ``--games`` games (after the opening) into a training example labelled
with the game's result for the side to move (1 win, 1/2 draw, 0 loss), holds out every game whose
number is divisible by 5, and fits the model's parameters by Texel-style logistic regression:
minimise the cross-entropy between the result and sigmoid(evaluation in logits). It prints the
held-out loss of: always 1/2; the classic evaluation with its best single scale; the fitted model
at its starting parameters; the fitted model; and the integer tables actually shipped (the
quantised model the agent runs). It needs numpy and scipy: ``pip install -e '.[tune]'``.

The model (probabilities, lines, weights) is documented in agent/eval_fitted.py; this script only
chooses its parameters and quantises them into the tables that module reads.

Ctrl-C, SIGTERM and SIGHUP stop every step alike (agent.stops): ``generate`` keeps the games
written so far and says how many (the same command continues), ``fit`` writes nothing (the data
file is replaced only once complete), ``match`` prints the summary of the games played so far; a
cluster's games not yet handled are cancelled and the connection closed. A missing or unreadable
file or a bad value is one line on stderr, never a traceback.

Exit codes: 0 done, 1 the cluster cannot be used, 2 bad arguments or input (a missing games
file, an unreadable data file), 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP (128 + the signal).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent import stops  # noqa: E402
from agent.engines import AlphaBetaEngine  # noqa: E402
from agent.options import real, whole  # noqa: E402
from agent.selfplay import training_game  # noqa: E402

GAMES_FILE = "games.jsonl"
PROG = "train_eval.py"
#: More self-play games than this is a typo (3000 take about an hour on one core).
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
    from agent.core import make_searcher
    from agent.engines import SearchEngine

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
             cluster_address: str | None = None, again: str = "") -> Path:
    """Self-play games up to ``games`` in ``directory``; ``again``: the command that continues
    after a stop (said then)."""
    if directory.exists() and not directory.is_dir():
        raise InputError(f"--dir {directory}: not a directory (it is a file)")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"--dir {directory}: cannot create it ({error.strerror or error})") from None
    path = directory / GAMES_FILE
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
    print(f"generate: games {done}..{games - 1} at {nodes} nodes per move, eval {engine_eval}, "
          f"deviation {deviation}, seed {seed} -> {path}", flush=True)
    start = time.time()
    plies = made = 0
    runner = None
    if cluster_address:
        from agent import cluster       # the optional extra; only when asked for
        try:
            runner = cluster.connect(cluster_address)
        except cluster.ClusterError as error:
            sys.exit(f"generate: {error}")
        print(f"generate: on {len(runner.slots())} cluster worker(s), {runner.capacity()} games at once",
              flush=True)
        calls = ((f"game-{i}", selfplay_game, (seed * 1_000_003 + i, nodes, engine_eval, deviation), {})
                 for i in range(done, games))
        played = cluster.in_order(runner, calls)
        results = (value for _, value in played)
    else:
        played = None
        results = (selfplay_game(seed * 1_000_003 + i, nodes, engine_eval, deviation) for i in range(done, games))
    try:
        with path.open("a", encoding="utf-8") as out:
            for i, (winner, game_plies, moves, scores) in zip(range(done, games), results):
                # One write of a whole line: a stop between games never cuts one (and a cut
                # line is dropped at the next run anyway).
                out.write(json.dumps({"game": i, "winner": winner, "moves": moves, "scores": scores}) + "\n")
                out.flush()
                plies += game_plies
                made = i + 1 - done
                if made % 100 == 0 or i + 1 == games:
                    elapsed = time.time() - start
                    left = (games - i - 1) * elapsed / made
                    print(f"  {i + 1}/{games} games, {plies} plies this run, {elapsed:.0f} s, "
                          f"~{left:.0f} s left", flush=True)
    except KeyboardInterrupt as interrupt:          # Ctrl-C, SIGTERM, SIGHUP (agent.stops)
        raise StepStopped(interrupt, f"after {done + made} of {games} games ({made} this run, kept in "
                                     f"{path}); the same command continues: {again}") from None
    finally:
        if played is not None:
            played.close()          # the cluster's games not yet handled are cancelled
        if runner is not None:
            runner.close()
    elapsed = time.time() - start
    print(f"generate: {games - done} games in {elapsed:.0f} s ({(games - done) / max(elapsed, 1e-9):.1f} games/s); "
          f"{path} holds {games} games, {os.path.getsize(path) / 1e6:.1f} MB", flush=True)
    return path


# -- the training examples -------------------------------------------------------------------

def load_examples(path: Path, games: int, opening_plies: int = 4):
    """Every position after the opening of games 0..games-1: (game number, position, result for the
    mover).  InputError (one line) for a missing file or a line that is not a game."""
    from agent.rules import Position

    examples = []
    try:
        handle = path.open(encoding="utf-8")
    except OSError as error:
        raise InputError(f"fit: cannot read the games in {path} ({error.strerror or error}); "
                         f"make them with: python scripts/train_eval.py generate --dir {path.parent}") from None
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.endswith("\n"):
                break                       # cut by a stopped generate: the next run drops it
            try:
                game = json.loads(line)
                if game["game"] >= games:
                    continue
                position = Position()
                for ply, move in enumerate(game["moves"]):
                    if ply >= opening_plies:
                        winner = game["winner"]
                        result = 0.5 if winner is None else 1.0 if winner == position.turn else 0.0
                        examples.append((game["game"], position.copy(), result))
                    position.push(move)
            except (ValueError, KeyError, TypeError, IndexError) as error:
                raise InputError(f"fit: {path} line {number} is not a self-play game ({error})") from None
    return examples


def arrays(examples):
    """The numpy view of the examples the model needs: pattern indices from the mover's side."""
    import numpy as np

    from agent.eval_fitted import pattern_index

    n = len(examples)
    mine = np.zeros((n, 9), dtype=np.int64)
    theirs = np.zeros((n, 9), dtype=np.int64)
    sent = np.zeros((n, 9), dtype=bool)
    result = np.zeros(n)
    for row, (_, pos, res) in enumerate(examples):
        me, them = pos.masks[pos.turn], pos.masks[1 - pos.turn]
        for b in range(9):
            mine[row, b] = pattern_index(me[b], them[b])
            theirs[row, b] = pattern_index(them[b], me[b])
        if pos.forced >= 0:
            sent[row, pos.forced] = True
        result[row] = res
    # Board-major (9 x n): each board's column is contiguous, which makes the line products fast.
    return {"mine": np.ascontiguousarray(mine.T), "theirs": np.ascontiguousarray(theirs.T),
            "sent": np.ascontiguousarray(sent.T), "free": ~sent.any(axis=1), "result": result}


# -- the model -------------------------------------------------------------------------------

#: Features of a pattern (a's view, b the other side) that set a's chance to win the board.
PATTERN_FEATURES = ("bias", "own_two", "own_one", "other_two", "other_one", "empty_lines",
                    "own_center", "other_center", "own_corners", "other_corners")
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
    return {"phi": phi, "extra": extra, "won": won, "dead": dead, "swap": swap}


def split(params):
    k, s = len(PATTERN_FEATURES), len(SENT_FEATURES)
    return params[:k], params[k:k + s], params[k + s:k + 2 * s], params[k + 2 * s:]


def chance_tables(params, pt):
    """(chance, mover, waiter) as float arrays over the patterns (see agent/eval_fitted.py)."""
    import numpy as np

    theta, mu, omega, _ = split(params)
    z = pt["phi"] @ theta

    def prob(z, won, dead):
        return np.where(won, 1.0, np.where(dead, 0.0, 0.5 + 0.5 * np.tanh(z / 2)))  # sigmoid, no overflow

    chance = prob(z, pt["won"], pt["dead"])
    swap = pt["swap"]
    mover = prob(z + pt["extra"] @ mu, pt["won"], pt["dead"])
    # The waiter's chance on pattern (a, b) is b's: its features are those of the swapped pattern.
    waiter = prob(z[swap] + pt["extra"][swap] @ omega, pt["won"][swap], pt["dead"][swap])
    return chance, mover, waiter


def logits(tables, weights, data):
    """The evaluation in logits for every example, from float tables."""
    import numpy as np

    from agent.eval_fitted import GLOBAL_LINES

    chance, mover, waiter = tables
    line, board, tempo, free_move = weights
    sent = data["sent"]
    m = np.where(sent, mover[data["mine"]], chance[data["mine"]])
    t = np.where(sent, waiter[data["mine"]], chance[data["theirs"]])
    lines_m = sum(m[i] * m[j] * m[k] for i, j, k in GLOBAL_LINES)
    lines_t = sum(t[i] * t[j] * t[k] for i, j, k in GLOBAL_LINES)
    return line * (lines_m - lines_t) + board * (m.sum(0) - t.sum(0)) + tempo + free_move * data["free"]


def cross_entropy(z, result) -> float:
    import numpy as np

    # -(y log s(z) + (1 - y) log(1 - s(z))) = log(1 + e^z) - y z, computed stably
    return float(np.mean(np.logaddexp(0, z) - result * z))


def model_loss(params, pt, data) -> float:
    return cross_entropy(logits(chance_tables(params, pt), split(params)[3], data), data["result"])


def loss_and_gradient(params, pt, data):
    """The training loss and its exact gradient (the chain rule through lines, tables, sigmoids)."""
    import numpy as np

    from agent.eval_fitted import GLOBAL_LINES, PATTERNS

    theta, mu, omega, weights = split(params)
    line, board, tempo, free_move = weights
    chance, mover, waiter = tables = chance_tables(params, pt)
    sent, mine, theirs = data["sent"], data["mine"], data["theirs"]
    m = np.where(sent, mover[mine], chance[mine])
    t = np.where(sent, waiter[mine], chance[theirs])
    lines_m = sum(m[i] * m[j] * m[k] for i, j, k in GLOBAL_LINES)
    lines_t = sum(t[i] * t[j] * t[k] for i, j, k in GLOBAL_LINES)
    z = line * (lines_m - lines_t) + board * (m.sum(0) - t.sum(0)) + tempo + free_move * data["free"]
    n = len(z)
    loss = cross_entropy(z, data["result"])
    dz = (0.5 + 0.5 * np.tanh(z / 2) - data["result"]) / n          # d loss / d z
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

    def scatter(index, values, where):
        return np.bincount(index[where], weights=values[where], minlength=PATTERNS)

    idle = ~sent
    g_chance = scatter(mine, dm, idle) + scatter(theirs, dt, idle)   # d loss / d chance[pattern]
    g_mover = scatter(mine, dm, sent)
    g_waiter = scatter(mine, dt, sent)
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
    return loss, np.concatenate([grad_theta, grad_mu, grad_omega, grad_weights])


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


def quantised_loss(data, examples) -> float:
    """Held-out loss of the shipped integer evaluation itself (the agent's code path)."""
    import numpy as np

    from agent.eval_fitted import FittedEvaluator

    evaluator = FittedEvaluator(data)
    z = np.array([evaluator.evaluate(pos) for _, pos, _ in examples]) / data["score_per_logit"]
    return cross_entropy(z, np.array([r for _, _, r in examples]))


def classic_loss(train, held):
    """The classic evaluation with its best single scale (fitted on the training set)."""
    import numpy as np
    from scipy.optimize import minimize_scalar

    from agent.evaluation import Evaluator

    evaluate = Evaluator().evaluate
    scores = [np.array([evaluate(pos) for _, pos, _ in part]) for part in (train, held)]
    results = [np.array([r for _, _, r in part]) for part in (train, held)]
    best = minimize_scalar(lambda k: cross_entropy(k * scores[0], results[0]), bounds=(1e-6, 0.1), method="bounded")
    return cross_entropy(best.x * scores[1], results[1]), best.x


def fit_command(directory: Path, out: Path, args) -> None:
    started = time.time()
    # The games first: a missing or broken file is the user's to fix whether or not numpy is here.
    examples = load_examples(directory / GAMES_FILE, args.games)
    train = [e for e in examples if e[0] % 5]
    held = [e for e in examples if e[0] % 5 == 0]
    if not train or not held:
        raise InputError(f"fit: {len({e[0] for e in examples})} game(s) in {directory / GAMES_FILE} "
                         "among the first --games: it takes games to fit and games numbered 0 mod 5 "
                         "to hold out (at least 2)")
    try:
        import numpy as np
        from scipy.optimize import minimize
    except ImportError:
        sys.exit("fit needs numpy and scipy: pip install -e '.[tune]'")
    games = len({e[0] for e in examples})
    print(f"fit: {len(examples)} positions from {games} games: {len(train)} to fit, {len(held)} held out "
          f"(games numbered 0 mod 5); read in {time.time() - started:.0f} s", flush=True)
    pt = pattern_tables()
    data_train, data_held = arrays(train), arrays(held)
    start = np.array(initial_params())
    print(f"held-out loss, always 1/2:            {math.log(2):.5f}")
    loss, k = classic_loss(train, held)
    print(f"held-out loss, classic (x{k:.5f}/pt):  {loss:.5f}")
    before = model_loss(start, pt, data_held)
    print(f"held-out loss, fitted model at start: {before:.5f} (training {model_loss(start, pt, data_train):.5f})",
          flush=True)
    bounds = [(None, None)] * (len(start) - 4) + [(0, None), (0, None), (None, None), (None, None)]
    for name in args.without:  # an ablation: this global term held at 0, to see what it is worth
        i = len(start) - 4 + WEIGHTS.index(name)
        start[i], bounds[i] = 0.0, (0.0, 0.0)
        print(f"fit: without the {name} term")
    t0 = time.time()
    found = minimize(loss_and_gradient, start, args=(pt, data_train), jac=True, method="L-BFGS-B", bounds=bounds,
                     options={"maxiter": 500})
    params = found.x
    after = model_loss(params, pt, data_held)
    print(f"held-out loss, fitted model:          {after:.5f} (training {found.fun:.5f}; "
          f"{found.nit} iterations, {time.time() - t0:.0f} s)")
    theta, mu, omega, weights = split(params)
    print("parameters (logits):")
    for group, names, values in (("chance", PATTERN_FEATURES, theta), ("mover", SENT_FEATURES, mu),
                                 ("waiter", SENT_FEATURES, omega), ("global", WEIGHTS, weights)):
        print(f"  {group:7} " + "  ".join(f"{n}={v:+.3f}" for n, v in zip(names, values)))
    data = quantise(params, pt, scale=1000, score_per_logit=500)
    shipped = quantised_loss(data, held)
    print(f"held-out loss, shipped integer tables: {shipped:.5f}")
    data["fit"] = {"games": games, "positions": len(examples), "held_out": len(held),
                   "self_play": {"nodes": args.nodes, "deviation": args.deviation, "seed": args.seed,
                                 "eval": args.engine_eval},
                   "held_out_loss": {"half": round(math.log(2), 5), "classic": round(loss, 5),
                                     "start": round(before, 5), "fitted": round(after, 5),
                                     "shipped": round(shipped, 5)},
                   "parameters": {"chance": dict(zip(PATTERN_FEATURES, map(float, theta))),
                                  "mover": dict(zip(SENT_FEATURES, map(float, mu))),
                                  "waiter": dict(zip(SENT_FEATURES, map(float, omega))),
                                  "global_logits": dict(zip(WEIGHTS, map(float, weights)))}}
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
    print(f"fit: wrote {out} ({out.stat().st_size / 1000:.0f} kB) in {time.time() - started:.0f} s")


# -- match -----------------------------------------------------------------------------------

def match(pairs: int, nodes: int, classic_nodes: int, seed: int, data: Path | None, opponent: str = "classic") -> None:
    """Fitted against classic at fixed node budgets (or against the seed bot, depth 3), in one
    process, with paired openings: the result depends on the evaluations only, not on the load."""
    from agent.eval_fitted import EvalDataError, FittedEvaluator, load_data
    from agent.search import AlphaBeta
    from agent.engines import SearchEngine, SeedEngine
    from agent.selfplay import play_pairs

    try:
        tables = load_data(data) if data else None
    except EvalDataError as error:
        raise InputError(f"match: --data: {error}") from None

    def fitted():
        if tables is None:  # the packaged data: the engine as the agent runs it (either core)
            return AlphaBetaEngine(nodes=nodes, hash_mb=16, evaluation="fitted")
        return SearchEngine(AlphaBeta(FittedEvaluator(tables), move_space=81, hash_mb=16), nodes=nodes)

    def classic():
        return AlphaBetaEngine(nodes=classic_nodes, hash_mb=16, evaluation="classic")

    names = (f"fitted@{nodes}", f"classic@{classic_nodes}" if opponent == "classic" else "seed:depth=3")
    print(f"match: {names[0]} vs {names[1]} nodes per move, {pairs} openings x 2, seed {seed}", flush=True)
    points: list[float] = []
    started = time.time()

    def on_game(result, tally):
        points.append(1.0 if result.winner == 0 else 0.0 if result.winner == 1 else 0.5)
        if len(points) % 20 == 0:
            print(f"  {len(points)} games: +{tally[0]} -{tally[1]} ={tally[2]}  ({time.time() - started:.0f} s)",
                  flush=True)

    try:
        play_pairs(fitted, classic if opponent == "classic" else SeedEngine, pairs, seed=seed, on_game=on_game)
    except KeyboardInterrupt as interrupt:          # the games so far, then one line
        summary(names, points)
        raise StepStopped(interrupt, f"after {len(points)} games") from None
    summary(names, points)
    print(f"match: {len(points)} games in {time.time() - started:.0f} s")


def summary(names, points: list[float]) -> None:
    """The match runner's summary of agent A's points (1, 1/2, 0 per game, in pairs)."""
    from agent import stats

    wins, losses = points.count(1.0), points.count(0.0)
    ptnml = stats.pentanomial([points[i], points[i + 1]] for i in range(0, len(points) - 1, 2))
    for line in stats.summary_lines(names, wins, losses, len(points) - wins - losses,
                                    ptnml if sum(ptnml) else None):
        print(line, flush=True)


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

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("all", "generate", "fit", "match", "speed"))
    parser.add_argument("--dir", type=Path, default=Path("runs/train"), help="working directory (default runs/train)")
    parser.add_argument("--games", type=whole(1, MAX_GAMES), default=3000,
                        help="self-play games to generate (default 3000)")
    parser.add_argument("--nodes", type=whole(1, MAX_NODES), default=800,
                        help="node budget per move in self-play (default 800)")
    parser.add_argument("--deviation", type=real(0, 1), default=0.04,
                        help="chance of a random move at each of the first 30 plies, 0-1 (default 0.04)")
    parser.add_argument("--seed", type=int, default=1, help="data seed (default 1)")
    parser.add_argument("--engine-eval", default="eval-v1", choices=engine_evals(),
                        help="evaluation the self-play engine uses: classic or a data file of agent/data "
                             "(default eval-v1)")
    parser.add_argument("--cluster", metavar="ADDRESS", default=os.environ.get("UTTT_CLUSTER"),
                        help="generate: play the games on a Dask cluster, e.g. tcp://head:8786 "
                             "(default: $UTTT_CLUSTER); pip install -e '.[cluster]'")
    parser.add_argument("--out", type=Path, default=None, help="data file to write (default DIR/eval-v1.json)")
    parser.add_argument("--without", nargs="*", default=[], choices=WEIGHTS,
                        help="fit: hold these global terms at 0 (ablation; the loss shows what they are worth)")
    parser.add_argument("--pairs", type=whole(1, MAX_GAMES), default=50,
                        help="match: openings, each played twice (default 50)")
    parser.add_argument("--match-nodes", type=whole(1, MAX_NODES), default=4000,
                        help="match: the fitted side's nodes per move; speed: both sides' (default 4000)")
    parser.add_argument("--classic-nodes", type=whole(1, MAX_NODES), default=None,
                        help="match: the classic side's nodes per move (default: --match-nodes)")
    parser.add_argument("--core", choices=("python", "compiled", "auto"), default="python",
                        help="speed: the search core (default python: the evaluation as written here)")
    parser.add_argument("--opponent", choices=("classic", "seed"), default="classic",
                        help="match: the other side (default classic; seed = the seed bot at depth 3)")
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
        generate(args.dir, args.games, args.nodes, args.seed, args.deviation, args.engine_eval, args.cluster,
                 again=stops.command_line(sys.argv[0] if sys.argv and sys.argv[0].endswith(".py") else __file__,
                                          *argv))
    if args.step in ("all", "fit"):
        fit_command(args.dir, args.out or args.dir / "eval-v1.json", args)
    if args.step == "speed":
        speed(args.match_nodes, args.core)
    if args.step == "match":
        match(args.pairs, args.match_nodes, args.classic_nodes or args.match_nodes, args.seed, args.data,
              args.opponent)
    print(f"train_eval: {args.step} took {time.time() - started:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
