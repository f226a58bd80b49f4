"""Ultimate Tic-Tac-Toe rules exactly as the CS 4341 referee (v7) codes them, built for speed.

No I/O here. A position is nine pairs of 9-bit masks (one per player per local board) plus a few
global masks; moves are cell indices ``board * 9 + spot`` in the hot path and :class:`Move` values
at the edges. ``push``/``pop`` make and unmake a move in O(1); ``key`` is a Zobrist hash kept up
to date incrementally. The rules, the referee's quirks (three drawn boards in a line tie the game)
and the ``codingame`` variant's one difference: docs/protocol.md, "The rules, as the referee codes
them", and "CodinGame's variant".
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

X, O = 0, 1
PLAYER_SYMBOLS = "XO"
TIE = 2  # value of ``winner`` for a drawn game

#: The eight lines of a 3x3 grid, as cell triples (row-major 0-8).
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
LINE_MASKS = tuple((1 << a) | (1 << b) | (1 << c) for a, b, c in LINES)
FULL = 0x1FF

#: WINS[mask] is True when the 9-bit mask holds a complete line.
WINS = tuple(any(m & line == line for line in LINE_MASKS) for m in range(512))

#: FREE_SPOTS[occupied] lists the empty spots of a local board.
FREE_SPOTS = tuple(tuple(s for s in range(9) if not occ >> s & 1) for occ in range(512))

#: BOARD_MOVES[board][occupied] lists the empty cells (as move indices) of that board.
BOARD_MOVES = tuple(tuple(tuple(b * 9 + s for s in free) for free in FREE_SPOTS) for b in range(9))

BOARD_OF = tuple(i // 9 for i in range(81))
SPOT_OF = tuple(i % 9 for i in range(81))
BIT_OF = tuple(1 << (i % 9) for i in range(81))

#: Rule variants: the CS 4341 referee's (default) and CodinGame's.
WPI, CODINGAME = "wpi", "codingame"
VARIANTS = (WPI, CODINGAME)

# Local board states.
OPEN, WON_X, WON_O, DRAWN = 0, 1, 2, 3

_zobrist_rng = random.Random(0x5EED_0F_7777)
#: Zobrist keys: one per (player, cell) and one per forced board (index 0 = "play anywhere").
ZOBRIST_CELL = tuple(tuple(_zobrist_rng.getrandbits(64) for _ in range(81)) for _ in range(2))
ZOBRIST_FORCED = tuple(_zobrist_rng.getrandbits(64) for _ in range(10))


def board_patterns():
    """Every (X mask, O mask) pair of disjoint 9-bit masks: the 3^9 fillings of one 3x3 board
    (including ones no game reaches), for building tables indexed by ``xmask << 9 | omask``."""
    for xm in range(512):
        free = FULL ^ xm
        om = free
        while True:  # every subset of the cells X does not hold
            yield xm, om
            if om == 0:
                break
            om = (om - 1) & free


class InvalidMoveError(ValueError):
    """Text that does not parse as a move."""


class IllegalMoveError(ValueError):
    """A well-formed move that the rules do not allow in this position."""


@dataclass(frozen=True, slots=True)
class Move:
    """A move: ``board`` 0-8 on the global grid, ``spot`` 0-8 inside it (both row-major).

    >>> Move(4, 5)
    Move(board=4, spot=5)
    >>> str(Move(4, 5))
    '4 5'
    >>> Move.parse("4 5").index
    41
    """

    board: int
    spot: int

    def __post_init__(self) -> None:
        if not (0 <= self.board <= 8 and 0 <= self.spot <= 8):
            raise InvalidMoveError(f"board and spot must be 0-8, got {self.board} {self.spot}")

    @property
    def index(self) -> int:
        return self.board * 9 + self.spot

    @classmethod
    def from_index(cls, index: int) -> Move:
        return cls(index // 9, index % 9)

    @classmethod
    def parse(cls, text: str) -> Move:
        """Parse ``"BOARD SPOT"``."""
        parts = text.split()
        if len(parts) != 2:
            raise InvalidMoveError(f"expected 'BOARD SPOT', got {text!r}")
        return cls(*(_parse_coordinate(p, text) for p in parts))

    def __str__(self) -> str:
        return f"{self.board} {self.spot}"


#: Every cell's Move, by index.
MOVES = tuple(Move.from_index(index) for index in range(81))


def _parse_coordinate(token: str, text: str) -> int:
    # The referee converts with int(); we accept what it accepts and no more, then range-check.
    try:
        return int(token)
    except ValueError:
        raise InvalidMoveError(f"{token!r} is not a number in {text!r}") from None


_NAME_PATTERN = re.compile(r"[A-Za-z0-9_\-]+\Z")
_NAME_RULE = ("must be one token of letters, digits, '_' or '-' "
              "(it becomes the file name NAME.go and the first word of every move line)")
#: NAME.go must fit in one file name: 255 bytes on Linux and macOS, 255 characters on Windows.
MAX_NAME_LENGTH = 255 - len(".go")
#: Device names Windows reserves in every directory whatever the extension (CON.go is the console).
WINDOWS_DEVICE_NAMES = frozenset(["CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10)),
                                  *(f"LPT{i}" for i in range(10))])


def check_player_name(name: str) -> str:
    """Return ``name`` if it is one token usable in a file name (``NAME.go``) on every system, else
    raise ValueError (one line, which quotes at most ``MAX_NAME_LENGTH`` characters of it)."""
    if not name:
        raise ValueError(f"player name is empty: it {_NAME_RULE}")
    if len(name) > MAX_NAME_LENGTH:
        raise ValueError(f"player name is {len(name)} characters long: at most {MAX_NAME_LENGTH}, "
                         "so that NAME.go fits in a file name (255 bytes)")
    if not _NAME_PATTERN.match(name):
        raise ValueError(f"player name {name!r} {_NAME_RULE}")
    if name.upper() in WINDOWS_DEVICE_NAMES:
        raise ValueError(f"player name {name!r} is a device name on Windows, where {name}.go cannot be a file")
    return name


def parse_move_line(line: str) -> tuple[str, Move]:
    """Parse a wire line ``NAME BOARD SPOT`` the way the referee does (extra tokens ignored).

    >>> parse_move_line("Otter 2 4\\n")
    ('Otter', Move(board=2, spot=4))
    """
    parts = line.split()
    if len(parts) < 3:
        raise InvalidMoveError(f"expected 'NAME BOARD SPOT', got {line.rstrip()!r}")
    return parts[0], Move(_parse_coordinate(parts[1], line.rstrip()), _parse_coordinate(parts[2], line.rstrip()))


def format_move_line(name: str, move: Move) -> str:
    """The exact line an agent writes: ``NAME BOARD SPOT`` and one newline."""
    return f"{name} {move.board} {move.spot}\n"


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended: ``winner`` is X, O or None for a tie."""

    winner: int | None
    reason: str


class Position:
    """A mutable Ultimate Tic-Tac-Toe position with make/unmake.

    Attributes read by the search (kept public and flat for speed): ``turn`` (X or O to move),
    ``winner`` (None while the game goes on, else X, O or TIE), ``key`` (Zobrist hash), ``masks``
    (``masks[player][board]`` 9-bit), ``occupied[board]``, ``status[board]`` (OPEN, WON_X, WON_O,
    DRAWN), ``won`` (``won[player]``: 9-bit mask of boards won), ``drawn`` (mask of drawn boards),
    ``forced`` (board the mover must play in, or -1 for any open board), ``ply``.
    """

    __slots__ = ("masks", "occupied", "status", "won", "drawn", "forced", "turn", "winner", "key", "ply", "_stack",
                 "variant", "_drawn_lines_tie")

    def __init__(self, variant: str = WPI) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"unknown rules variant {variant!r}; choose from {', '.join(VARIANTS)}")
        self.variant = variant
        self._drawn_lines_tie = variant == WPI
        self.masks = [[0] * 9, [0] * 9]
        self.occupied = [0] * 9
        self.status = [OPEN] * 9
        self.won = [0, 0]
        self.drawn = 0
        self.forced = -1
        self.turn = X
        self.winner: int | None = None
        self.key = ZOBRIST_FORCED[0]
        self.ply = 0
        self._stack: list[tuple[int, int, int]] = []

    @classmethod
    def from_moves(cls, moves, variant: str = WPI) -> Position:
        """Play a sequence of moves (Move values or cell indices) from the empty board, checking each."""
        position = cls(variant)
        for move in moves:
            position.play(move)
        return position

    # -- queries -------------------------------------------------------------------------------

    def legal_moves(self):
        """Legal moves as cell indices (a tuple or list; empty once the game is over)."""
        if self.winner is not None:
            return ()
        forced = self.forced
        occupied = self.occupied
        if forced >= 0:
            return BOARD_MOVES[forced][occupied[forced]]
        status = self.status
        moves: list[int] = []
        for b in range(9):
            if status[b] == OPEN:
                moves.extend(BOARD_MOVES[b][occupied[b]])
        return moves

    def moves(self) -> list[Move]:
        """Legal moves as :class:`Move` values (``legal_moves()`` gives the cell indices the search uses).

        >>> len(Position().moves()), Position().moves()[0]
        (81, Move(board=0, spot=0))
        """
        return [MOVES[index] for index in self.legal_moves()]

    def is_legal(self, index: int) -> bool:
        if self.winner is not None or not 0 <= index < 81:
            return False
        b = BOARD_OF[index]
        if self.status[b] != OPEN or self.occupied[b] & BIT_OF[index]:
            return False
        return self.forced < 0 or self.forced == b

    def max_plies_left(self) -> int:
        """An upper bound on the plies the game can still last: the empty cells of open boards."""
        if self.winner is not None:
            return 0
        return sum(9 - self.occupied[b].bit_count() for b in range(9) if self.status[b] == OPEN)

    def is_over(self) -> bool:
        return self.winner is not None

    def outcome(self) -> Outcome | None:
        if self.winner is None:
            return None
        if self.winner == TIE:
            if self._drawn_lines_tie and any(self.drawn & line == line for line in LINE_MASKS):
                return Outcome(None, "three drawn boards in a line")
            return Outcome(None, "all boards decided with no line")
        if not WINS[self.won[self.winner]]:
            return Outcome(self.winner, "more local boards won when all boards were decided")
        return Outcome(self.winner, "three local boards in a line")

    def cell(self, index: int) -> int | None:
        """The player occupying a cell, or None."""
        bit, b = BIT_OF[index], BOARD_OF[index]
        if self.masks[X][b] & bit:
            return X
        if self.masks[O][b] & bit:
            return O
        return None

    @property
    def last_move(self) -> int | None:
        return self._stack[-1][0] if self._stack else None

    def moves_played(self) -> list[int]:
        return [entry[0] for entry in self._stack]

    # -- make / unmake ---------------------------------------------------------------------------

    def play(self, move) -> None:
        """Apply a move given as a Move or a cell index, raising IllegalMoveError if not legal."""
        index = move.index if isinstance(move, Move) else move
        if not self.is_legal(index):
            raise IllegalMoveError(f"{Move.from_index(index) if 0 <= index < 81 else index} is not legal: {self.why_illegal(index)}")
        self.push(index)

    def why_illegal(self, index: int) -> str:
        """A human explanation of why a cell index cannot be played here ('' if it can)."""
        if self.winner is not None:
            return "the game is over"
        if not 0 <= index < 81:
            return "no such cell"
        b = BOARD_OF[index]
        if self.occupied[b] & BIT_OF[index]:
            return f"cell {SPOT_OF[index]} of board {b} is occupied"
        if self.status[b] != OPEN:
            return f"board {b} is already {'drawn' if self.status[b] == DRAWN else 'won'}"
        if self.forced >= 0 and self.forced != b:
            return f"the move must be in board {self.forced}"
        return ""

    def push(self, index: int) -> None:
        """Make a legal move (not checked: the search only plays generated moves)."""
        b = BOARD_OF[index]
        bit = BIT_OF[index]
        p = self.turn
        self._stack.append((index, self.forced, self.key))
        mask = self.masks[p][b] | bit
        self.masks[p][b] = mask
        occupied = self.occupied[b] | bit
        self.occupied[b] = occupied
        status = self.status
        if WINS[mask]:
            status[b] = p + 1
            won = self.won[p] | (1 << b)
            self.won[p] = won
            if WINS[won]:
                self.winner = p
            elif won | self.won[1 - p] | self.drawn == FULL:
                self.winner = self._decided_result()
        elif occupied == FULL:
            status[b] = DRAWN
            drawn = self.drawn | (1 << b)
            self.drawn = drawn
            if WINS[drawn] and self._drawn_lines_tie:
                self.winner = TIE
            elif drawn | self.won[0] | self.won[1] == FULL:
                self.winner = self._decided_result()
        spot = SPOT_OF[index]
        forced = spot if status[spot] == OPEN else -1
        self.key ^= ZOBRIST_CELL[p][index] ^ ZOBRIST_FORCED[self.forced + 1] ^ ZOBRIST_FORCED[forced + 1]
        self.forced = forced
        self.turn = 1 - p
        self.ply += 1

    def _decided_result(self) -> int:
        """The result once all nine boards are decided with no line: a tie for the referee;
        for CodinGame, the player with more boards won (equal counts: a tie)."""
        if self._drawn_lines_tie:
            return TIE
        x, o = bin(self.won[X]).count("1"), bin(self.won[O]).count("1")
        return X if x > o else O if o > x else TIE

    def pop(self) -> int:
        """Unmake the last move and return it."""
        index, self.forced, self.key = self._stack.pop()
        p = 1 - self.turn
        self.turn = p
        self.ply -= 1
        self.winner = None
        b = BOARD_OF[index]
        bit = BIT_OF[index]
        self.masks[p][b] ^= bit
        self.occupied[b] ^= bit
        state = self.status[b]
        if state != OPEN:
            self.status[b] = OPEN
            if state == DRAWN:
                self.drawn ^= 1 << b
            else:
                self.won[p] ^= 1 << b
        return index

    def copy(self) -> Position:
        other = Position.__new__(Position)
        other.variant = self.variant
        other._drawn_lines_tie = self._drawn_lines_tie
        other.masks = [self.masks[0][:], self.masks[1][:]]
        other.occupied = self.occupied[:]
        other.status = self.status[:]
        other.won = self.won[:]
        other.drawn = self.drawn
        other.forced = self.forced
        other.turn = self.turn
        other.winner = self.winner
        other.key = self.key
        other.ply = self.ply
        other._stack = self._stack[:]
        return other

    # -- consistency ---------------------------------------------------------------------------

    def check(self) -> None:
        """Raise ValueError (TypeError for a field that is not an int) naming the first thing that
        makes these fields an impossible position: out-of-range values, a cell held by both
        players, a board status the cells do not give (won iff a line, drawn iff full without
        one), occupied/won/drawn that disagree with the masks and statuses, mark counts that do not
        alternate from X or disagree with ``turn``/``ply``, a forced board that is not open, a
        ``winner`` the boards do not give, a ``key`` that is not the Zobrist hash.

        Consistent is not reachable: the history (which move sent the mover where) is not
        checked. Every position the rules make passes, and from one that passes ``push``/``pop``
        keep it consistent and a game that is not over has a legal move. agent/_core.c's
        ``set_position`` makes the same checks in the same order with the same messages (it
        derives occupied, won and drawn, so it has no such fields to check)."""
        for player in (X, O):
            _check_ints(self.masks[player], 9, 0, FULL, f"masks[{player}]")
        _check_ints(self.status, 9, OPEN, DRAWN, "status")
        _check_int(self.forced, -1, 8, "forced")
        _check_int(self.turn, X, O, "turn")
        winner = -1 if self.winner is None else self.winner
        _check_int(winner, -1, TIE, "winner")
        _check_key(self.key)
        _check_int(self.ply, 0, 81, "ply")
        marks = [0, 0]
        for b in range(9):
            xm, om = self.masks[X][b], self.masks[O][b]
            if xm & om:
                raise ValueError(f"board {b}: X and O both hold a cell")
            if WINS[xm] and WINS[om]:
                raise ValueError(f"board {b}: both X and O have a line")
            state = WON_X if WINS[xm] else WON_O if WINS[om] else DRAWN if xm | om == FULL else OPEN
            if self.status[b] != state:
                raise ValueError(f"status[{b}] is {self.status[b]} ({STATUS_NAMES[self.status[b]]}) but "
                                 f"the board's cells make it {state} ({STATUS_NAMES[state]})")
            marks[X] += bin(xm).count("1")
            marks[O] += bin(om).count("1")
        # The fields the compiled core derives instead of reading.
        for b in range(9):
            if self.occupied[b] != self.masks[X][b] | self.masks[O][b]:
                raise ValueError(f"occupied[{b}] does not match the masks")
        for player in (X, O):
            if self.won[player] != sum(1 << b for b in range(9) if self.status[b] == player + 1):
                raise ValueError(f"won[{player}] does not match the statuses")
        if self.drawn != sum(1 << b for b in range(9) if self.status[b] == DRAWN):
            raise ValueError("drawn does not match the statuses")
        if marks[X] - marks[O] not in (0, 1):
            raise ValueError(f"X holds {marks[X]} cells and O {marks[O]}: X moves first, so X holds as many as O "
                             "or one more")
        if self.turn != marks[X] - marks[O]:
            raise ValueError(f"turn is {self.turn} but X holds {marks[X]} cells and O {marks[O]}")
        if self.ply != marks[X] + marks[O]:
            raise ValueError(f"ply is {self.ply} but {marks[X] + marks[O]} cells are held")
        if self.forced >= 0 and self.status[self.forced] != OPEN:
            raise ValueError(f"forced board {self.forced} is not open")
        won = [sum(1 << b for b in range(9) if self.status[b] == player + 1) for player in (X, O)]
        drawn = sum(1 << b for b in range(9) if self.status[b] == DRAWN)
        if WINS[won[X]] and WINS[won[O]]:
            raise ValueError("both X and O have three boards in a line")
        if WINS[won[X]] or WINS[won[O]]:
            result = X if WINS[won[X]] else O
        elif self._drawn_lines_tie and WINS[drawn]:
            result = TIE
        elif won[X] | won[O] | drawn == FULL:
            x, o = bin(won[X]).count("1"), bin(won[O]).count("1")
            result = TIE if self._drawn_lines_tie or x == o else X if x > o else O
        else:
            result = -1
        if winner != result:
            raise ValueError(f"winner says {RESULT_NAMES[winner]} but the boards say {RESULT_NAMES[result]}")
        key = ZOBRIST_FORCED[self.forced + 1]
        for b in range(9):
            for player in (X, O):
                mask = self.masks[player][b]
                for spot in range(9):
                    if mask >> spot & 1:
                        key ^= ZOBRIST_CELL[player][b * 9 + spot]
        if self.key != key:
            raise ValueError("key is not the Zobrist hash of the cells and the forced board")

    # -- display ---------------------------------------------------------------------------------

    def render(self) -> str:
        """The 9x9 grid as text, boards separated by lines; won boards are filled with their letter."""
        rows = []
        for big_row in range(3):
            for small_row in range(3):
                chunks = []
                for big_col in range(3):
                    b = big_row * 3 + big_col
                    cells = []
                    for small_col in range(3):
                        s = small_row * 3 + small_col
                        who = self.cell(b * 9 + s)
                        cells.append("." if who is None else PLAYER_SYMBOLS[who])
                    chunks.append(" ".join(cells))
                rows.append(" | ".join(chunks))
            if big_row < 2:
                rows.append("------+-------+------")
        return "\n".join(rows)

    def __repr__(self) -> str:
        return f"Position.from_moves({[str(Move.from_index(i)) for i in self.moves_played()]!r})"


STATUS_NAMES = {OPEN: "open", WON_X: "won by X", WON_O: "won by O", DRAWN: "drawn"}
#: ``winner`` as Position.check names it (-1 for None, as the compiled core takes it).
RESULT_NAMES = {-1: "the game goes on", X: "X won", O: "O won", TIE: "a tie"}
_INT64 = range(-2**63, 2**63)


def _shown(value: int) -> str:
    return str(value) if value in _INT64 else "an int beyond 64 bits"


def _check_int(value, low: int, high: int, what: str) -> None:
    if not isinstance(value, int):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{what} must be {low} to {high}, got {_shown(value)}")


def _check_ints(values, count: int, low: int, high: int, what: str) -> None:
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"{what} must be a list or tuple, not {type(values).__name__}")
    if len(values) != count:
        raise ValueError(f"{what} must hold {count} ints, got {len(values)}")
    for i, value in enumerate(values):
        _check_int(value, low, high, f"{what}[{i}]")


def _check_key(key) -> None:
    if not isinstance(key, int):
        raise TypeError(f"key must be an int, not {type(key).__name__}")
    if not 0 <= key < 2**64:
        raise ValueError(f"key must be 0 to 2**64-1, got {_shown(key)}")


def perft(position: Position, depth: int) -> int:
    """Count the leaf positions ``depth`` plies ahead (finished games count as leaves)."""
    if depth == 0 or position.winner is not None:
        return 1
    moves = position.legal_moves()
    if depth == 1:
        return len(moves)
    total = 0
    push, pop = position.push, position.pop
    for move in moves:
        push(move)
        total += perft(position, depth - 1)
        pop()
    return total
