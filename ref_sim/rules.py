"""Plain rules of Ultimate Tic-Tac-Toe, exactly as the CS 4341 referee (v7) codes them.

This is the *second* implementation of the rules in this project: it is written to be
obviously right, not fast, and it never imports ``agent``.  Tests play random games through
both and demand the same answers at every ply.

Coordinates: ``board`` 0-8 is the local board on the global 3x3 grid, ``spot`` 0-8 the cell
inside it, both row-major from the top-left (docs/protocol.md, "Coordinates").  Player 0 (X)
moves first.

>>> game = Game()
>>> len(game.legal_moves())
81
>>> game.play(4, 0)
>>> game.legal_moves()[:3]
[(0, 0), (0, 1), (0, 2)]
"""

from __future__ import annotations

#: The 8 lines of a 3x3 grid: rows, columns, diagonals.
LINES = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),
    (0, 3, 6), (1, 4, 7), (2, 5, 8),
    (0, 4, 8), (2, 4, 6),
)

X, O = 0, 1
#: Local result of a full board with no line.
DRAW = "draw"
#: Global result of a game that ends without a winner.
TIE = "tie"
#: Rule variants: the CS 4341 referee's (default) and CodinGame's, which ends a game with all
#: boards decided and no line by counting the boards won, and has no drawn-line quirk.
WPI, CODINGAME = "wpi", "codingame"

SYMBOLS = {X: "X", O: "O", None: "."}


class IllegalMoveError(ValueError):
    """A move that cannot be played in the current position."""


def line_winner(values) -> int | str | None:
    """Return the value that fills one of the 8 lines of ``values`` (9 items), else None.

    ``None`` never wins a line.  Used for cells (0/1) and for local results (0/1/"draw").

    >>> line_winner([0, 0, 0, None, 1, 1, None, None, None])
    0
    """
    for a, b, c in LINES:
        if values[a] is not None and values[a] == values[b] == values[c]:
            return values[a]
    return None


class Game:
    """A game of Ultimate Tic-Tac-Toe from the empty board, X (player 0) to move."""

    def __init__(self, variant: str = WPI) -> None:
        if variant not in (WPI, CODINGAME):
            raise ValueError(f"unknown rules variant {variant!r}")
        #: Which rules: WPI (the referee's) or CODINGAME.
        self.variant = variant
        #: cells[board][spot] is None (empty), 0 (X) or 1 (O).
        self.cells: list[list[int | None]] = [[None] * 9 for _ in range(9)]
        #: The player to move: 0 or 1.
        self.turn: int = X
        #: Every move played so far, as (board, spot).
        self.moves: list[tuple[int, int]] = []
        #: None while the game goes on, 0 or 1 for a winner, "tie".
        self.result: int | str | None = None

    # -- queries -----------------------------------------------------------------------

    def local_result(self, board: int) -> int | str | None:
        """None (open), 0 or 1 (won by that player) or "draw" (full, no line)."""
        winner = line_winner(self.cells[board])
        if winner is not None:
            return winner
        if all(cell is not None for cell in self.cells[board]):
            return DRAW
        return None

    def local_results(self) -> list[int | str | None]:
        """The result of each of the 9 local boards (see :meth:`local_result`)."""
        return [self.local_result(board) for board in range(9)]

    def is_open(self, board: int) -> bool:
        """A board is open until it is won or full."""
        return self.local_result(board) is None

    def legal_moves(self) -> list[tuple[int, int]]:
        """All legal moves as sorted ``(board, spot)`` tuples; empty once the game is over."""
        if self.result is not None:
            return []
        if self.moves and self.is_open(self.moves[-1][1]):
            boards = [self.moves[-1][1]]
        else:
            boards = [board for board in range(9) if self.is_open(board)]
        return [(board, spot) for board in boards for spot in range(9)
                if self.cells[board][spot] is None]

    def is_legal(self, board: int, spot: int) -> bool:
        """True if ``(board, spot)`` may be played now."""
        return (board, spot) in self.legal_moves()

    def is_over(self) -> bool:
        return self.result is not None

    # -- changes -----------------------------------------------------------------------

    def play(self, board: int, spot: int) -> None:
        """Play ``(board, spot)`` for the player to move, or raise :class:`IllegalMoveError`."""
        if not self.is_legal(board, spot):
            raise IllegalMoveError(self._why_illegal(board, spot))
        was_open = self.is_open(board)
        self.cells[board][spot] = self.turn
        self.moves.append((board, spot))
        self.turn = 1 - self.turn
        if was_open and not self.is_open(board):
            self._check_global()

    def _check_global(self) -> None:
        """Called when a move has just decided a local board (docs/protocol.md, "The rules, as
        the referee codes them")."""
        results = self.local_results()
        if self.variant == CODINGAME:
            # Drawn boards make no line here: look for a line of won boards only.
            winner = line_winner([r if r != DRAW else None for r in results])
        else:
            winner = line_winner(results)
        if winner == DRAW:
            self.result = TIE          # the quirk: three drawn boards in a line
        elif winner is not None:
            self.result = winner
        elif all(result is not None for result in results):
            if self.variant == CODINGAME:  # more boards won wins; equal counts are a tie
                x_boards, o_boards = results.count(X), results.count(O)
                self.result = X if x_boards > o_boards else O if o_boards > x_boards else TIE
            else:
                self.result = TIE

    def _why_illegal(self, board: int, spot: int) -> str:
        where = f"move ({board!r}, {spot!r})"
        if self.result is not None:
            return f"{where}: the game is over"
        if not (isinstance(board, int) and isinstance(spot, int)
                and 0 <= board <= 8 and 0 <= spot <= 8):
            return f"{where}: board and spot must be integers 0-8"
        if self.cells[board][spot] is not None:
            return f"{where}: the cell is taken by {SYMBOLS[self.cells[board][spot]]}"
        if not self.is_open(board):
            return f"{where}: local board {board} is closed ({self.local_result(board)})"
        forced = self.moves[-1][1] if self.moves else None
        if forced is not None and forced != board:
            return f"{where}: the previous move sends {SYMBOLS[self.turn]} to board {forced}"
        return f"{where}: not legal"

    def copy(self) -> Game:
        other = Game(self.variant)
        other.cells = [list(row) for row in self.cells]
        other.turn = self.turn
        other.moves = list(self.moves)
        other.result = self.result
        return other

    # -- display -----------------------------------------------------------------------

    def render(self, last_move: tuple[int, int] | None = None) -> str:
        """A plain text picture: the 9x9 grid on the left, the global board on the right.

        Marks are X, O and '.'; the last move (default: the last one played) is shown in
        lower case, and a legend line under the grid says so.  On the right, each local
        board is X or O (won), '=' (drawn) or '.'.
        """
        if last_move is None and self.moves:
            last_move = self.moves[-1]
        results = self.local_results()
        summary_mark = {X: "X", O: "O", DRAW: "=", None: "."}
        summary = [" ".join(summary_mark[results[3 * row + col]] for col in range(3))
                   for row in range(3)]
        lines = []
        for grid_row in range(9):
            if grid_row and grid_row % 3 == 0:
                lines.append("-------+-------+-------")
            parts = []
            for board_col in range(3):
                board = 3 * (grid_row // 3) + board_col
                marks = []
                for col in range(3):
                    spot = 3 * (grid_row % 3) + col
                    mark = SYMBOLS[self.cells[board][spot]]
                    if (board, spot) == last_move:
                        mark = mark.lower()
                    marks.append(mark)
                parts.append(" " + " ".join(marks) + " ")
            line = "|".join(parts)
            if grid_row in (0, 1, 2):
                line += "    " + summary[grid_row]
            lines.append(line.rstrip())
        if last_move is not None:       # say what the lower case and the right side mean
            board, spot = last_move
            mark = SYMBOLS[self.cells[board][spot]].lower()
            lines.append(f"{mark} = the last move ({board} {spot}); right: the global board "
                         "(X/O won, = drawn, . open)")
        if self.result == TIE:
            lines.append("Result: draw")
        elif self.result is not None:
            lines.append(f"Result: {SYMBOLS[self.result]} wins")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"<Game moves={self.moves!r} turn={self.turn} result={self.result!r}>"
