"""Qubic: tic-tac-toe on a 4x4x4 cube, four in a row wins. Bitboards: one 64-bit int per player.

Cell ``layer * 16 + row * 4 + col`` (each 0-3). The 76 winning lines of four are generated, not
typed: every start cell and direction whose four steps stay inside the cube, counted once. They
are 48 straight lines along the axes (16 rows, 16 columns, 16 pillars), 24 diagonals of the 12
axis planes (two per plane), and 4 space diagonals. A full cube with no line is a draw; the first
player can force a win (Patashnik, 1980), far beyond what a search in Python sees.

For people a move is ``LAYER ROW COL``, each 1-4 (``2 3 1``; ``231`` too).
"""

from __future__ import annotations

import random

from agent.rules import IllegalMoveError, InvalidMoveError, O, X
from .base import SYMBOLS, MarksState
from .tictactoe import DRAW, WIN_NEXT

N = 4
CELLS = N ** 3
FULL_CUBE = (1 << CELLS) - 1


def cell_index(layer: int, row: int, col: int) -> int:
    return layer * 16 + row * 4 + col


def coordinates(cell: int) -> tuple[int, int, int]:
    """``(layer, row, col)`` of a cell, each 0-3."""
    return cell // 16, cell // 4 % 4, cell % 4


def _generate_lines() -> list[tuple[tuple[int, ...], tuple[int, int, int]]]:
    """(cells, direction) of every line of four; directions are the 13 of the 26 neighbour
    offsets that point "forward", so each line is found once, from its first cell."""
    directions = [(dl, dr, dc) for dl in (-1, 0, 1) for dr in (-1, 0, 1) for dc in (-1, 0, 1)
                  if (dl, dr, dc) > (0, 0, 0)]
    lines = []
    for layer in range(N):
        for row in range(N):
            for col in range(N):
                for d in directions:
                    cells = [(layer + i * d[0], row + i * d[1], col + i * d[2]) for i in range(N)]
                    if all(0 <= v < N for c in cells for v in c):
                        lines.append((tuple(cell_index(*c) for c in cells), d))
    return lines


LINES = _generate_lines()
LINE_MASKS = tuple(sum(1 << c for c in cells) for cells, _ in LINES)
#: LINES_THROUGH[cell]: the masks of the lines through a cell (4 for most, 7 for the 8 corners
#: and the 8 centre cells).
LINES_THROUGH = tuple(tuple(m for m in LINE_MASKS if m >> c & 1) for c in range(CELLS))

_rng = random.Random(0x0B1C)
ZOBRIST = tuple(tuple(_rng.getrandbits(64) for _ in range(CELLS)) for _ in range(2))

#: Evaluation weights of an open line by the marks of one player it holds (0-3).
LINE_WEIGHTS = (0, 1, 8, 50)
#: Ordering priorities: completing our line, blocking theirs, then line-building.
P_WIN, P_BLOCK = 100_000, 50_000
P_OWN, P_THEIRS = (1, 4, 30), (1, 3, 20)  # adding to an open line holding 0, 1, 2 of our / their marks


class Qubic(MarksState):
    """A mutable Qubic position: ``masks[player]`` 64-bit, ``turn``, ``winner`` (None, X, O or
    DRAW), Zobrist ``key``, ``ply``; push/pop."""

    __slots__ = ()
    move_space = CELLS

    @classmethod
    def setup(cls, x_cells=(), o_cells=(), turn: int | None = None) -> Qubic:
        """A position from its marks (for tests and puzzles); X to move when the counts are equal."""
        state = cls()
        for p, cells in ((X, x_cells), (O, o_cells)):
            for c in cells:
                if (state.masks[0] | state.masks[1]) >> c & 1:
                    raise ValueError(f"cell {c} given twice")
                state.masks[p] |= 1 << c
                state.key ^= ZOBRIST[p][c]
        if any(state.masks[p] & m == m for p in (X, O) for m in LINE_MASKS):
            raise ValueError("the position already holds a line")
        state.ply = len(x_cells) + len(o_cells)
        state.turn = turn if turn is not None else (X if len(x_cells) == len(o_cells) else O)
        return state

    # -- the search's interface ---------------------------------------------------------------

    def legal_moves(self):
        if self.winner is not None:
            return ()
        free = FULL_CUBE ^ (self.masks[0] | self.masks[1])
        moves = []
        while free:
            low = free & -free
            moves.append(low.bit_length() - 1)
            free ^= low
        return moves

    def push(self, move: int) -> None:
        p = self.turn
        mask = self.masks[p] | 1 << move
        self.masks[p] = mask
        self._stack.append(move)
        self.key ^= ZOBRIST[p][move]
        self.ply += 1
        for line in LINES_THROUGH[move]:
            if mask & line == line:
                self.winner = p
                break
        else:
            if self.ply == CELLS:
                self.winner = DRAW
        self.turn = 1 - p

    def pop(self) -> int:
        move = self._stack.pop()
        p = 1 - self.turn
        self.masks[p] ^= 1 << move
        self.key ^= ZOBRIST[p][move]
        self.winner = None
        self.turn = p
        self.ply -= 1
        return move

    def max_plies_left(self) -> int:
        return 0 if self.winner is not None else CELLS - (self.masks[0] | self.masks[1]).bit_count()

    # -- for people ---------------------------------------------------------------------------

    def play(self, move: int) -> None:
        if self.winner is not None:
            raise IllegalMoveError("the game is over")
        if not 0 <= move < CELLS or self.cell(move) is not None:
            raise IllegalMoveError(f"{move} is not an empty cell")
        self.push(move)

    @staticmethod
    def format_move(move: int) -> str:
        layer, row, col = coordinates(move)
        return f"{layer + 1} {row + 1} {col + 1}"

    def parse_move(self, text: str) -> int:
        """``LAYER ROW COL``, each 1-4 (``2 3 1`` or ``231``)."""
        parts = text.replace(",", " ").split()
        if len(parts) == 1 and len(parts[0]) == 3:
            parts = list(parts[0])
        if len(parts) != 3 or not all(len(p) == 1 and p in "1234" for p in parts):
            raise InvalidMoveError(f"expected 'LAYER ROW COL', each 1-4 (like '2 3 1'), got {text.strip()!r}")
        move = cell_index(*(int(p) - 1 for p in parts))
        return self.check_free(move)

    def render(self) -> str:
        """The four layers side by side, rows and columns numbered 1-4."""
        lines = ["  " + "".join(f"   layer {layer + 1}  " for layer in range(N)).rstrip(),
                 "  " + "".join("    1 2 3 4  " for _ in range(N)).rstrip()]
        for row in range(N):
            chunks = []
            for layer in range(N):
                cells = [self.cell(cell_index(layer, row, col)) for col in range(N)]
                chunks.append(f" {row + 1}  " + " ".join("." if w is None else SYMBOLS[w] for w in cells))
            lines.append("  " + "  ".join(chunks))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Qubic(moves={[self.format_move(m) for m in self._stack]!r})"


class QubicEvaluator:
    """Every open line (no mark of the other player) is worth 1, 8 or 50 by the marks it holds
    (1, 2, 3), for the side to move minus the opponent. If the side to move holds an open three
    it wins next move (``WIN_NEXT``); if the opponent holds open threes on two different empty
    cells, one block cannot stop both (``-WIN_NEXT``). So even a depth-1 search blocks."""

    def evaluate(self, state: Qubic) -> int:
        me, them = state.masks[state.turn], state.masks[1 - state.turn]
        w1, w2, w3 = LINE_WEIGHTS[1], LINE_WEIGHTS[2], LINE_WEIGHTS[3]
        score = 0
        their_wins = 0
        for line in LINE_MASKS:
            a = me & line
            b = them & line
            if a:
                if b:
                    continue
                n = a.bit_count()
                if n == 3:
                    return WIN_NEXT
                score += w2 if n == 2 else w1
            elif b:
                n = b.bit_count()
                if n == 3:
                    their_wins |= line ^ b
                    score -= w3
                else:
                    score -= w2 if n == 2 else w1
        if their_wins & (their_wins - 1):  # two different cells win for them
            return -WIN_NEXT
        return score

    def move_priority(self, state: Qubic, moves) -> list[int]:
        """Completing our line first, blocking theirs next, then moves that build on many open
        lines (ours and theirs)."""
        me, them = state.masks[state.turn], state.masks[1 - state.turn]
        out = []
        for m in moves:
            priority = 0
            for line in LINES_THROUGH[m]:
                a = me & line
                b = them & line
                if b:
                    if not a:
                        n = b.bit_count()
                        priority += P_BLOCK if n == 3 else P_THEIRS[n]
                else:
                    n = a.bit_count()
                    priority += P_WIN if n == 3 else P_OWN[n]
            out.append(priority)
        return out
