"""Games between two engines inside one process, with no referee files: for tuning and quick checks.

Openings are drawn like the referee's (four chained random moves, no repeated cell), and each is
played twice with the sides swapped so that an unbalanced opening favours nobody.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from . import arena
from .games import get_game


def random_opening(rng: random.Random, length: int = 4) -> list[int]:
    """Chained random moves like the referee's ``first_four_moves``: each board is the previous spot."""
    board = rng.randrange(9)
    moves, used = [], set()
    while len(moves) < length:
        spot = rng.choice([s for s in range(9) if board * 9 + s not in used])
        moves.append(board * 9 + spot)
        used.add(board * 9 + spot)
        board = spot
    return moves


@dataclass
class GameResult:
    winner: int | None  # index of the winning engine (0 or 1), None for a draw
    plies: int
    moves: list[int]


def play_game(engines, opening: list[int], first: int, seconds: float | None = None) -> GameResult:
    """Play one game; ``engines[first]`` moves first. ``seconds`` per move if the engines are not
    limited by depth or nodes themselves. ``moves`` in the result include the opening."""
    moves, winner = arena.play_game(get_game("uttt"), engines, opening, first, {"seconds": seconds})
    played = list(opening) + moves
    return GameResult(winner, len(played), played)


def play_pairs(make_a, make_b, pairs: int, seed: int = 0, seconds: float | None = None, on_game=None):
    """Play ``pairs`` openings twice each (sides swapped); return (wins of A, wins of B, draws).

    ``make_a``/``make_b`` build fresh engines for each game, so no table carries over.
    """
    rng = random.Random(seed)
    tally = [0, 0, 0]
    for _ in range(pairs):
        opening = random_opening(rng)
        for first in (0, 1):
            result = play_game((make_a(), make_b()), opening, first, seconds)
            tally[2 if result.winner is None else result.winner] += 1
            if on_game is not None:
                on_game(result, tally)
    return tuple(tally)
