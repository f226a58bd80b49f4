"""The fitted evaluation as a float model: its features and pattern tables, the evaluation of
every example, the loss and its gradient, the fit itself, and the integer data file it becomes
(agent/eval_fitted.py documents the model and reads the file)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from scripts.training.errors import InputError

#: Features of a pattern (a's view, b the other side) that set a's chance to win the board.
PATTERN_FEATURES = ("bias", "own_two", "own_one", "other_two", "other_one", "empty_lines",
                    "own_center", "other_center", "own_corners", "other_corners")
#: Extra terms for the board the mover is sent to: the mover's chance, and the other side's.
SENT_FEATURES = ("bias", "own_two", "other_two")
WEIGHTS = ("line", "board", "tempo", "free_move")


def sigmoid(z):
    """The logistic function of logits ``z``, element by element."""
    import numpy as np

    return 0.5 + 0.5 * np.tanh(z / 2)      # no overflow for the search's proven scores


def cross_entropy(z, result) -> float:
    """The mean cross-entropy of logits ``z`` against labels ``result`` (0 to 1)."""
    import numpy as np

    # -(y log s(z) + (1 - y) log(1 - s(z))) = log(1 + e^z) - y z, computed stably
    return float(np.mean(np.logaddexp(0, z) - result * z))


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


def model_loss(params, pt, data) -> float:
    """The cross-entropy of the model at ``params`` against the examples' results."""
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
