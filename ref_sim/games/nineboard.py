"""Nine-board tic-tac-toe: nine 3x3 boards, the move's cell sends the opponent to that board.

Rules: the first move may go anywhere; after that the mover must play in the board
numbered like the cell of the previous move, unless that board is full, in which case any empty
cell of any board will do. The first player to make three in a row on *any* board wins the game at
once (there are no local wins to collect, unlike Ultimate Tic-Tac-Toe). All 81 cells full with no
line is a draw.

Moves are ints ``board * 9 + cell`` (both 0-8 row-major) for the search; for people, boards and
cells are numbered 1-9 like a phone keypad (1 top-left, 5 centre, 9 bottom-right): ``5 1`` is
the top-left cell of the centre board.
"""

from __future__ import annotations

import random

from agent.rules import BOARD_MOVES, FULL, WINS, IllegalMoveError, InvalidMoveError, O, X
from .base import SYMBOLS
from .tictactoe import DRAW, LOCAL_VALUE, THREATS, WIN_NEXT

_rng = random.Random(0x9B0A4D)
ZOBRIST_CELL = tuple(tuple(_rng.getrandbits(64) for _ in range(81)) for _ in range(2))
#: One key per forced board, index 0 meaning "anywhere".
ZOBRIST_FORCED = tuple(_rng.getrandbits(64) for _ in range(10))

#: Evaluation: a board where a player has an open two is one the other player must not send
#: them to: every cell with that number becomes poison for the other player.
HOT_BOARD = 30
#: Priorities for move ordering.
P_WIN, P_BLOCK, P_SEND_TO_THREAT, P_SEND_ANYWHERE = 100, 6, -50, -10


class NineBoard:
    """A mutable nine-board tic-tac-toe position with push/pop and a Zobrist ``key``.

    ``masks[player][board]`` (9-bit), ``occupied[board]``, ``forced`` (board to play in, -1 for
    anywhere), ``turn``, ``winner`` (None, X, O or DRAW), ``ply``.
    """

    __slots__ = ("masks", "occupied", "forced", "turn", "winner", "key", "ply", "_stack")
    move_space = 81

    def __init__(self) -> None:
        self.masks = [[0] * 9, [0] * 9]
        self.occupied = [0] * 9
        self.forced = -1
        self.turn = X
        self.winner: int | None = None
        self.key = ZOBRIST_FORCED[0]
        self.ply = 0
        self._stack: list[tuple[int, int]] = []

    @classmethod
    def from_moves(cls, moves) -> NineBoard:
        state = cls()
        for move in moves:
            state.play(move)
        return state

    @classmethod
    def setup(cls, x_cells=(), o_cells=(), turn: int = X, forced: int = -1) -> NineBoard:
        """A position from its marks (move indices), for tests and puzzles; no history to pop."""
        state = cls()
        for p, cells in ((X, x_cells), (O, o_cells)):
            for m in cells:
                b, bit = divmod(m, 9)[0], 1 << (m % 9)
                if state.occupied[b] & bit:
                    raise ValueError(f"cell {m} given twice")
                state.masks[p][b] |= bit
                state.occupied[b] |= bit
                state.key ^= ZOBRIST_CELL[p][m]
        state.turn = turn
        state.forced = forced
        state.key ^= ZOBRIST_FORCED[0] ^ ZOBRIST_FORCED[forced + 1]
        state.ply = len(x_cells) + len(o_cells)
        if any(WINS[m] for side in state.masks for m in side):
            raise ValueError("the position already holds a line")
        return state

    # -- the search's interface ---------------------------------------------------------------

    def legal_moves(self):
        if self.winner is not None:
            return ()
        occupied = self.occupied
        if self.forced >= 0:
            return BOARD_MOVES[self.forced][occupied[self.forced]]
        moves: list[int] = []
        for b in range(9):
            moves.extend(BOARD_MOVES[b][occupied[b]])
        return moves

    def push(self, move: int) -> None:
        p = self.turn
        b, s = divmod(move, 9)
        bit = 1 << s
        self._stack.append((move, self.forced))
        mask = self.masks[p][b] | bit
        self.masks[p][b] = mask
        self.occupied[b] |= bit
        self.ply += 1
        if WINS[mask]:
            self.winner = p
        elif self.ply == 81:  # the referee-free count: every cell filled
            self.winner = DRAW
        forced = s if self.occupied[s] != FULL else -1
        self.key ^= ZOBRIST_CELL[p][move] ^ ZOBRIST_FORCED[self.forced + 1] ^ ZOBRIST_FORCED[forced + 1]
        self.forced = forced
        self.turn = 1 - p

    def pop(self) -> int:
        move, previous = self._stack.pop()
        p = 1 - self.turn
        b, s = divmod(move, 9)
        bit = 1 << s
        self.key ^= ZOBRIST_CELL[p][move] ^ ZOBRIST_FORCED[self.forced + 1] ^ ZOBRIST_FORCED[previous + 1]
        self.forced = previous
        self.masks[p][b] ^= bit
        self.occupied[b] ^= bit
        self.winner = None
        self.turn = p
        self.ply -= 1
        return move

    def max_plies_left(self) -> int:
        if self.winner is not None:
            return 0
        return 81 - sum(bin(o).count("1") for o in self.occupied)

    # -- for people ---------------------------------------------------------------------------

    def cell(self, index: int) -> int | None:
        b, s = divmod(index, 9)
        if self.masks[X][b] >> s & 1:
            return X
        if self.masks[O][b] >> s & 1:
            return O
        return None

    def moves_played(self) -> list[int]:
        return [m for m, _ in self._stack]

    def why_illegal(self, move: int) -> str:
        """Why a move cannot be played here ('' if it can)."""
        if self.winner is not None:
            return "the game is over"
        if not 0 <= move < 81:
            return "no such cell"
        b, s = divmod(move, 9)
        if self.occupied[b] >> s & 1:
            return f"cell {s + 1} of board {b + 1} is taken"
        if self.forced >= 0 and b != self.forced:
            return f"the move must be in board {self.forced + 1}"
        return ""

    def play(self, move: int) -> None:
        reason = self.why_illegal(move)
        if reason:
            raise IllegalMoveError(f"{self.format_move(move) if 0 <= move < 81 else move} is not legal: {reason}")
        self.push(move)

    @staticmethod
    def format_move(move: int) -> str:
        b, s = divmod(move, 9)
        return f"{b + 1} {s + 1}"

    def parse_move(self, text: str) -> int:
        """``BOARD CELL``, both 1-9 (``5 1``; ``51`` too). When the board is forced, the cell
        alone will do."""
        parts = text.replace(",", " ").split()
        if len(parts) == 1 and len(parts[0]) == 2:
            parts = list(parts[0])
        if len(parts) == 1 and self.forced >= 0:
            parts = [str(self.forced + 1), parts[0]]
        if len(parts) != 2 or not all(p in "123456789" and len(p) == 1 for p in parts):
            raise InvalidMoveError(f"expected 'BOARD CELL', both 1-9 (like '5 1'), got {text.strip()!r}")
        move = (int(parts[0]) - 1) * 9 + int(parts[1]) - 1
        reason = self.why_illegal(move)
        if reason:
            raise IllegalMoveError(reason)
        return move

    def render(self) -> str:
        """The nine boards with their numbers; the board to play in is marked with '*'."""
        text = render_grid(self.cell, first_number=1, marked=self.forced if self.winner is None else -1)
        if self.winner is None:
            where = "any board" if self.forced < 0 else f"board {self.forced + 1}"
            text += f"\n  cells are numbered 1-9 like the boards; {SYMBOLS[self.turn]} to play in {where}"
        return text

    def __repr__(self) -> str:
        return f"NineBoard(moves={[self.format_move(m) for m in self.moves_played()]!r})"


def render_grid(cell, first_number: int = 1, marked: int = -1, closed=None) -> str:
    """Nine 3x3 boards as text, each headed by its number (from ``first_number``); board
    ``marked`` gets a '*'. ``cell(index)`` gives X, O or None for ``board * 9 + spot``;
    ``closed(board)``, if given, returns a note such as 'won by X' for the header."""
    lines = []
    for big_row in range(3):
        header = " "
        for big_col in range(3):
            b = big_row * 3 + big_col
            label = f"[{b + first_number}]" + ("*" if b == marked else "")
            note = closed(b) if closed is not None else ""
            header += f" {label + note:<7}" + (" " if big_col < 2 else "")
        lines.append(header.rstrip())
        for small_row in range(3):
            chunks = []
            for big_col in range(3):
                b = big_row * 3 + big_col
                cells = [cell(b * 9 + small_row * 3 + c) for c in range(3)]
                chunks.append(" ".join("." if w is None else SYMBOLS[w] for w in cells))
            lines.append("  " + " | ".join(chunks))
        if big_row < 2:
            lines.append("  ------+-------+------")
    return "\n".join(lines)


class NineBoardEvaluator:
    """Open lines of every board (10 for two marks, 1 for one, 2 for a centre) for the side to
    move minus the opponent's, plus ``HOT_BOARD`` per board where a player has an open two (the
    other player may no longer play any cell of that number). ``WIN_NEXT`` when the side to move
    can complete a line at once (on the board it must play in, or anywhere when free)."""

    def evaluate(self, state: NineBoard) -> int:
        p = state.turn
        me, them = state.masks[p], state.masks[1 - p]
        forced = state.forced
        if forced >= 0:
            if THREATS[me[forced] << 9 | them[forced]]:
                return WIN_NEXT
        score = 0
        for b in range(9):
            m, t = me[b], them[b]
            if THREATS[m << 9 | t]:
                if forced < 0:
                    return WIN_NEXT
                score += HOT_BOARD
            if THREATS[t << 9 | m]:
                score -= HOT_BOARD
            score += LOCAL_VALUE[m << 9 | t]
        return score

    def move_priority(self, state: NineBoard, moves) -> list[int]:
        """A win first; sending the opponent to a board where they can win at once last, then
        letting them play anywhere; blocks of the opponent's lines ahead of quiet moves."""
        p = state.turn
        me, them = state.masks[p], state.masks[1 - p]
        occupied = state.occupied
        they_threaten_somewhere = any(THREATS[them[b] << 9 | me[b]] for b in range(9))
        out = []
        for m in moves:
            b, s = divmod(m, 9)
            bit = 1 << s
            if WINS[me[b] | bit]:
                out.append(P_WIN)
                continue
            priority = P_BLOCK if WINS[them[b] | bit] else 0
            mine_s = me[s] | bit if s == b else me[s]
            occ_s = occupied[s] | bit if s == b else occupied[s]
            if occ_s == FULL:
                priority += P_SEND_TO_THREAT if they_threaten_somewhere else P_SEND_ANYWHERE
            elif THREATS[them[s] << 9 | mine_s] & ~occ_s:
                priority += P_SEND_TO_THREAT
            out.append(priority)
        return out
