"""The training examples: games read from a games file, replayed into positions, and turned into
the arrays the model reads, with their targets."""

from __future__ import annotations

import json
from pathlib import Path

from scripts.training.errors import InputError
from scripts.training.model import cross_entropy, sigmoid


def read_games(path: Path, games: int) -> list[dict]:
    """Games 0..games-1 of a games file, each ``{"game", "winner", "moves", "scores"}`` (scores
    None in files made before they were noted).  InputError (one line) for a missing file or a
    line that is not a game."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as error:
        raise InputError(f"fit: cannot read the games in {path} ({error.strerror or error}); "
                         f"make them with: python -m scripts.train_eval generate --dir {path.parent}") from None
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
