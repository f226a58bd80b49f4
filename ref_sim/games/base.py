"""What the games played on one bitboard per player share: the state's fields and the plain queries.

Each game keeps its own ``push``/``pop`` (how a line is detected and how ``key`` changes differ)
and its move text.
"""

from __future__ import annotations

from agent.rules import IllegalMoveError, O, X

SYMBOLS = "XO"


class MarksState:
    """``masks[player]`` (one bit per cell), ``turn``, ``winner`` (None, X, O or a draw value),
    ``key``, ``ply`` and the stack of moves played."""

    __slots__ = ("masks", "turn", "winner", "key", "ply", "_stack")

    def __init__(self) -> None:
        self.masks = [0, 0]
        self.turn = X
        self.winner: int | None = None
        self.key = 0
        self.ply = 0
        self._stack: list[int] = []

    @classmethod
    def from_moves(cls, moves):
        """Play cell indices from the empty board, each checked by ``play``."""
        state = cls()
        for move in moves:
            state.play(move)
        return state

    def cell(self, index: int) -> int | None:
        """The player holding a cell, or None."""
        if self.masks[X] >> index & 1:
            return X
        if self.masks[O] >> index & 1:
            return O
        return None

    def moves_played(self) -> list[int]:
        return list(self._stack)

    def check_free(self, move: int) -> int:
        """``move`` if it may still be played, else IllegalMoveError saying why (for people)."""
        if self.winner is not None:
            raise IllegalMoveError("the game is over")
        if self.cell(move) is not None:
            raise IllegalMoveError(f"{self.format_move(move)} is taken by {SYMBOLS[self.cell(move)]}")
        return move
