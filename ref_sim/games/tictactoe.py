"""Classic 3x3 tic-tac-toe: the state, move text, and an evaluator for the generic search.

Cells are numbered 0-8 row-major; for people, columns are letters ``a``-``c`` (left to right)
and rows digits ``1``-``3`` (top to bottom): ``b2`` is the centre, ``a1`` the top-left corner.
``"2 2"`` (row, column, both 1-3) is accepted too.

The game is solved (a draw); the search solves it from any position in a fraction of a second,
so the evaluation only matters for searches cut short by a depth or node limit.

The 3x3 tables here (``LOCAL_VALUE``, ``THREATS``) are shared with nine-board tic-tac-toe.
"""

from __future__ import annotations

from agent.rules import FREE_SPOTS, FULL, LINE_MASKS, TIE, WINS, IllegalMoveError, InvalidMoveError, board_patterns
from .base import SYMBOLS, MarksState

DRAW = TIE  #: ``winner`` of a drawn game (any value other than 0 and 1 is a draw for the search)
COLUMNS = "abc"

#: Score for "the side to move completes a line on its next move": a near-certain win that the
#: evaluation reports so that even a depth-1 search sees the opponent's threats; far below the
#: search's PROVEN_SCORE, so a real (searched) win always scores higher.
WIN_NEXT = 50_000
#: Weights of an open line (no mark of the other player) by the marks it holds: 0, 1, 2.
LINE_WEIGHTS = (0, 1, 10)
CENTRE_BONUS = 2


def _build_tables():
    local = [0] * (1 << 18)
    threats = [0] * (1 << 18)
    for xm, om in board_patterns():
        value = 0
        threat = 0
        for line in LINE_MASKS:
            x, o = xm & line, om & line
            if x and o:
                continue
            if x:
                value += LINE_WEIGHTS[bin(x).count("1")] if not WINS[xm] else 0
            elif o:
                value -= LINE_WEIGHTS[bin(o).count("1")] if not WINS[om] else 0
            if bin(x).count("1") == 2 and not o:
                threat |= line & ~x
        if xm & 0x10:
            value += CENTRE_BONUS
        elif om & 0x10:
            value -= CENTRE_BONUS
        local[xm << 9 | om] = value
        threats[xm << 9 | om] = threat
    return local, threats


#: ``LOCAL_VALUE[mine << 9 | theirs]``: open lines weighted by marks (10 for two, 1 for one) plus
#: the centre, for ``mine`` minus the same for ``theirs``.
#: ``THREATS[mine << 9 | theirs]``: the empty cells that would complete a line of ``mine``.
LOCAL_VALUE, THREATS = _build_tables()


class TicTacToe(MarksState):
    """A mutable 3x3 tic-tac-toe position with push/pop.

    ``key`` is the position itself (``X mask | O mask << 9``): a perfect hash, so no Zobrist
    table is needed. ``winner`` is None, X, O or DRAW.

    >>> t = TicTacToe.from_text("b2 a1 c3")
    >>> t.turn, t.winner, t.format_move(4)
    (1, None, 'b2')
    """

    __slots__ = ()
    move_space = 9

    @classmethod
    def from_text(cls, text: str) -> TicTacToe:
        """Play moves written like ``"b2 a1 c3"`` (or separated by commas)."""
        state = cls()
        for token in text.replace(",", " ").split():
            state.play(state.parse_move(token))
        return state

    # -- the search's interface ---------------------------------------------------------------

    def legal_moves(self):
        if self.winner is not None:
            return ()
        return FREE_SPOTS[self.masks[0] | self.masks[1]]

    def push(self, move: int) -> None:
        p = self.turn
        mask = self.masks[p] | 1 << move
        self.masks[p] = mask
        self._stack.append(move)
        self.key ^= 1 << (move + 9 * p)
        if WINS[mask]:
            self.winner = p
        elif mask | self.masks[1 - p] == FULL:
            self.winner = DRAW
        self.turn = 1 - p
        self.ply += 1

    def pop(self) -> int:
        move = self._stack.pop()
        p = 1 - self.turn
        self.masks[p] ^= 1 << move
        self.key ^= 1 << (move + 9 * p)
        self.winner = None
        self.turn = p
        self.ply -= 1
        return move

    def max_plies_left(self) -> int:
        return 0 if self.winner is not None else 9 - self.ply

    # -- for people ---------------------------------------------------------------------------

    def play(self, move: int) -> None:
        """Push a move after checking it is legal (IllegalMoveError if not)."""
        if move not in self.legal_moves():
            raise IllegalMoveError(f"{self.format_move(move) if 0 <= move < 9 else move} is not legal: "
                                   + ("the game is over" if self.winner is not None else "the cell is taken"))
        self.push(move)

    @staticmethod
    def format_move(move: int) -> str:
        return f"{COLUMNS[move % 3]}{move // 3 + 1}"

    def parse_move(self, text: str) -> int:
        """``b2`` (column letter, row digit) or ``2 2`` (row, column); IllegalMoveError if taken.

        >>> TicTacToe().parse_move("a3"), TicTacToe().parse_move("3 1")
        (6, 6)
        """
        move = parse_cell(text)
        return self.check_free(move)

    def render(self) -> str:
        """The board with column letters above and row numbers at the left."""
        lines = ["    a   b   c"]
        for r in range(3):
            cells = [self.cell(r * 3 + c) for c in range(3)]
            lines.append(f" {r + 1}  " + " | ".join("." if w is None else SYMBOLS[w] for w in cells))
            if r < 2:
                lines.append("   ---+---+---")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"TicTacToe.from_text({' '.join(map(self.format_move, self._stack))!r})"


def parse_cell(text: str) -> int:
    """A cell 0-8 from ``b2`` / ``B2`` / ``2b`` or ``2 2`` (row column); InvalidMoveError otherwise."""
    t = text.strip().lower()
    compact = t.replace(" ", "")
    if len(compact) == 2 and compact[0] in COLUMNS and compact[1] in "123":
        return (int(compact[1]) - 1) * 3 + COLUMNS.index(compact[0])
    if len(compact) == 2 and compact[1] in COLUMNS and compact[0] in "123":
        return (int(compact[0]) - 1) * 3 + COLUMNS.index(compact[1])
    parts = t.replace(",", " ").split()
    if len(parts) == 2 and all(p in ("1", "2", "3") for p in parts):
        return (int(parts[0]) - 1) * 3 + int(parts[1]) - 1
    raise InvalidMoveError(f"expected a cell like 'b2' (column a-c, row 1-3) or '2 2' (row column), got {text.strip()!r}")


class TicTacToeEvaluator:
    """Open lines by the marks they hold (10 for two, 1 for one) and the centre, for the side to
    move minus the opponent; ``WIN_NEXT`` when the side to move can complete a line now."""

    def evaluate(self, state: TicTacToe) -> int:
        me, them = state.masks[state.turn], state.masks[1 - state.turn]
        if THREATS[me << 9 | them]:
            return WIN_NEXT
        return LOCAL_VALUE[me << 9 | them]

    def move_priority(self, state: TicTacToe, moves) -> list[int]:
        """A win first, then a block, then the centre, the corners, the edges."""
        me, them = state.masks[state.turn], state.masks[1 - state.turn]
        out = []
        for m in moves:
            bit = 1 << m
            out.append(8 if WINS[me | bit] else 4 if WINS[them | bit] else (2 if m == 4 else m % 2 == 0))
        return out
