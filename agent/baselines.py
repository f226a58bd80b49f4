"""Baseline opponents to measure the agent against.

``SeedEvaluator`` is the evaluation student bots typically start from (the course's seed code):
each line of each local board scores +5 / +50 / +500 for one / two / three of the mover's marks
and no opponent's, and the opposite for the opponent's. It knows nothing of the global grid
beyond what the search sees (a won game is a won game).
"""

from __future__ import annotations

from .rules import LINE_MASKS, X, Position, board_patterns

LINE_POINTS = (0, 5, 50, 500)


def _seed_board_value(xm: int, om: int) -> int:
    value = 0
    for line in LINE_MASKS:
        x, o = xm & line, om & line
        if x and o:
            continue
        value += LINE_POINTS[bin(x).count("1")] - LINE_POINTS[bin(o).count("1")]
    return value


class SeedEvaluator:
    """The seed-style line-count evaluation, from the side to move's view."""

    def __init__(self) -> None:
        table = [0] * (1 << 18)
        for xm, om in board_patterns():
            table[xm << 9 | om] = _seed_board_value(xm, om)
        self._table = table

    def evaluate(self, pos: Position) -> int:
        xm, om = pos.masks
        table = self._table
        score = sum(table[xm[b] << 9 | om[b]] for b in range(9))
        return score if pos.turn == X else -score

    def move_priority(self, pos: Position, moves) -> list[int]:
        return [0] * len(moves)  # a plain minimax bot orders nothing
