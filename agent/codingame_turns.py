"""What to do next in a CodinGame game, decided from the lines the referee sent: no I/O, no clock.

:class:`~agent.codingame.CodinGameAgent` reads, stamps, writes and measures; every verdict on
what it read is asked of :class:`CodinGameDecider`, with the times as arguments, so each case is a
row of ``tests/test_codingame_turns.py``. A turn is judged in order: its clock
(:meth:`~CodinGameDecider.clock`), its lines (:class:`TurnLines`; :class:`BadInput` is exit 4),
the opponent's move (:meth:`~CodinGameDecider.follow_opponent`), which move to answer
(:meth:`~CodinGameDecider.plan`, :meth:`~CodinGameDecider.pick`) and our move
(:meth:`~CodinGameDecider.answered`); input ending between turns is
:meth:`~CodinGameDecider.input_ended`. What each case means for a game: docs/agent.md,
"CodinGame's stdin/stdout protocol".
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from .clock import codingame_thinking_time
from .cli_common import shown
from .exits import EXIT_FINISHED, EXIT_INPUT_ENDED
from .rules import CODINGAME, TIE, Position
from .file_turns import Note

#: A first line stamped within this long of our being ready was probably waiting already.
WAITING_ALREADY_S = 0.002

#: What the line after the opponent's move must be.
COUNT_LINE = "the valid-action count"


class BadInput(Exception):
    """A line that breaks the protocol: reported, then the agent exits with EXIT_BAD_INPUT."""


# -- coordinates -----------------------------------------------------------------------------------


def cell_to_index(row: int, col: int) -> int:
    """Our move index of the grid cell ``(row, col)``.

    >>> cell_to_index(0, 0), cell_to_index(4, 5), cell_to_index(8, 8)
    (0, 41, 80)
    """
    board = (row // 3) * 3 + col // 3
    square = (row % 3) * 3 + col % 3
    return board * 9 + square


def index_to_cell(index: int) -> tuple[int, int]:
    """The grid cell ``(row, col)`` of a move index (inverse of :func:`cell_to_index`).

    >>> index_to_cell(41)
    (4, 5)
    """
    board, square = divmod(index, 9)
    return (board // 3) * 3 + square // 3, (board % 3) * 3 + square % 3


def cell_text(index: int) -> str:
    """The ``row col`` line of a move index, as the referee reads it (no newline)."""
    return "{} {}".format(*index_to_cell(index))


def cells(indices) -> str:
    """Move indices as sorted ``row col`` cells for a message ("none" for none)."""
    return ", ".join(cell_text(i) for i in sorted(indices)) or "none"


# -- a turn's lines --------------------------------------------------------------------------------


def parse_pair(line: str, what: str, allow_none: bool = False) -> tuple[int, int] | None:
    """Two integers 0-8 (``-1 -1`` too when ``allow_none``, returned as None), else BadInput.

    >>> parse_pair("4 5\\n", "action")
    (4, 5)
    >>> parse_pair("-1 -1", "opponent move", allow_none=True) is None
    True
    """
    parts = line.split()
    try:
        if len(parts) != 2:
            raise ValueError
        row, col = int(parts[0]), int(parts[1])
    except ValueError:
        raise BadInput(f"{what}: expected 'row col', got {shown(line.rstrip())}") from None
    if allow_none and (row, col) == (-1, -1):
        return None
    if not (0 <= row <= 8 and 0 <= col <= 8):
        raise BadInput(f"{what}: row and col must be 0-8{' (or -1 -1)' if allow_none else ''}, "
                       f"got {shown(line.rstrip())}")
    return row, col


def parse_count(line: str) -> int:
    """The valid-action count: an integer 1-81, else BadInput."""
    try:
        count = int(line)
    except ValueError:
        raise BadInput(f"valid-action count: expected an integer, got {shown(line.rstrip())}") from None
    if not 1 <= count <= 81:
        raise BadInput(f"valid-action count must be 1-81, got {shown(line.strip())}")
    return count


class TurnLines:
    """One turn's lines, judged as they come. Built from the first line (the opponent's move);
    :attr:`wanted` names the next line needed, None once the turn is complete."""

    def __init__(self, first_line: str) -> None:
        pair = parse_pair(first_line, "opponent move", allow_none=True)
        #: The opponent's move as a move index; None for ``-1 -1``.
        self.opponent: int | None = None if pair is None else cell_to_index(*pair)
        self.count: int | None = None
        #: The valid actions as move indices, in the referee's order.
        self.actions: list[int] = []

    @property
    def wanted(self) -> str | None:
        """What the next line must be, for messages; None when the turn has all its lines."""
        if self.count is None:
            return COUNT_LINE
        if len(self.actions) < self.count:
            return f"valid action {len(self.actions) + 1} of {self.count}"
        return None

    def add(self, line: str) -> None:
        """Take the next line (BadInput if it is not what :attr:`wanted` says)."""
        what = self.wanted
        if what is None:
            raise self.extra(line)
        if self.count is None:
            self.count = parse_count(line)
            return
        index = cell_to_index(*parse_pair(line, what))
        if index in self.actions:
            raise BadInput(f"{what}: {shown(line.strip())} is listed twice")
        self.actions.append(index)

    def ended(self) -> BadInput:
        """The verdict when the input ends before the turn is complete."""
        return BadInput(f"input ended inside a turn, before {self.wanted}")

    def timed_out(self) -> BadInput:
        """The verdict when the next line has not come by the end of the turn's time: the count was wrong."""
        return BadInput(f"{self.wanted} did not arrive within the turn's time")

    def extra(self, line: str) -> BadInput:
        """The verdict on a line that arrived after the turn's last announced action."""
        return BadInput(f"more input than the {self.count} announced valid actions: {shown(line.rstrip())}")


# -- the decisions ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TurnClock:
    """A turn's times, on the clock of the arrival stamps (seconds)."""

    started: float  # what the turn counts from
    deadline: float  # when the search must stop
    read_deadline: float  # lines still missing then will not come
    waited: float | None = None  # the first input was waiting when we became ready: seconds counted before it


@dataclass(frozen=True)
class Plan:
    """How to choose this turn's answer: search our position or not, and what to say first."""

    search: bool  # think on the decider's position (the engine's move goes to :meth:`CodinGameDecider.pick`)
    mine: frozenset | None = None  # our legal moves, where the referee's list differs from them
    warning: Note | None = None


@dataclass(frozen=True)
class Pick:
    """The move to answer, the note for its log line, and whether it is the engine's (its search line)."""

    move: int
    note: str = ""
    engine: bool = True


@dataclass(frozen=True)
class Ending:
    """What input ending between turns means: the exit code, and the line to log."""

    code: int
    note: Note


def reply_can_end(position: Position) -> bool:
    """True when some legal move of the side to move ends the game."""
    for move in list(position.legal_moves()):
        position.push(move)
        over = position.winner is not None
        position.pop()
        if over:
            return True
    return False


def describe(position: Position) -> str:
    """How the game stands by our rules: "not over", or who won, why, and the boards each won."""
    outcome = position.outcome()
    if outcome is None:
        return "not over"
    who = "tie" if outcome.winner is None or outcome.winner == TIE else "XO"[outcome.winner] + " wins"
    x, o = bin(position.won[0]).count("1"), bin(position.won[1]).count("1")
    return f"{who}: {outcome.reason} (boards X {x}, O {o})"


class CodinGameDecider:
    """The CodinGame protocol's decisions (see the module docstring)."""

    def __init__(self, *, turn_ms: float, first_turn_ms: float, margin_ms: float,
                 position: Position | None = None) -> None:
        self.turn_ms, self.first_turn_ms, self.margin_ms = turn_ms, first_turn_ms, margin_ms
        #: Our view of the game; None once we have lost track of it (then we follow the list).
        self.position: Position | None = position if position is not None else Position(CODINGAME)
        self.turns = 0  # turns answered

    # -- timing ------------------------------------------------------------------------------------

    def limit_ms(self) -> float:
        """This turn's limit: the first turn's, then every later turn's."""
        return self.first_turn_ms if self.turns == 0 else self.turn_ms

    def budget(self, kept_back: float) -> float:
        """Seconds of thought this turn, counted from its start, with ``kept_back`` seconds kept
        for pauses (:func:`agent.clock.codingame_thinking_time`)."""
        return codingame_thinking_time(self.limit_ms(), self.margin_ms, kept_back)

    def clock(self, arrived: float, *, ready_at: float, launched: float | None, kept_back: float) -> TurnClock:
        """The times of a turn whose first line arrived at ``arrived``; we became ready to read at
        ``ready_at`` and were launched at ``launched`` (None: unknown), all on one clock. The first
        turn counts from our launch when its line was already waiting as we became ready (the
        referee may have written it while we started); the remaining lines must all arrive within
        the turn's whole limit."""
        started, waited = arrived, None
        if self.turns == 0 and launched is not None and arrived - ready_at < WAITING_ALREADY_S:
            started = min(arrived, launched)  # it may have waited since we were launched
            waited = arrived - started
        # The rest of the turn comes at once; lines still missing when the whole turn's time is
        # up will not come (the count was wrong).
        return TurnClock(started, started + self.budget(kept_back), arrived + self.limit_ms() / 1000.0, waited)

    # -- the opponent's move -----------------------------------------------------------------------

    def follow_opponent(self, opponent: int | None) -> Note | None:
        """Play the opponent's move (None: ``-1 -1``) on our position; a warning if we lose track."""
        position = self.position
        if position is None:
            return None
        if opponent is None:
            if self.turns == 0 and position.ply == 0:
                return None  # we move first
            self.position = None
            return Note(logging.WARNING, "opponent move -1 -1 after the first turn; I lose track of the position "
                                         "and follow the referee's list from now on")
        if position.is_legal(opponent):
            position.push(opponent)
            return None
        self.position = None
        return Note(logging.WARNING, f"opponent move {cell_text(opponent)} is illegal in my position "
                                     f"({position.why_illegal(opponent)}); I lose track of the position and "
                                     "follow the referee's list from now on")

    # -- our answer --------------------------------------------------------------------------------

    def plan(self, actions: list[int]) -> Plan:
        """Whether to search this turn, given the referee's valid ``actions``."""
        position = self.position
        if position is None:
            return Plan(search=False)
        mine = frozenset(position.legal_moves())
        listed = frozenset(actions)
        if mine == listed:
            return Plan(search=True)
        if position.winner is not None:
            return Plan(search=False)
        return Plan(search=True, mine=mine, warning=Note(
            logging.WARNING, f"the referee's {len(listed)} valid actions differ from my {len(mine)} legal moves "
                             f"(only theirs: {cells(listed - mine)}; only mine: {cells(mine - listed)}); "
                             "playing from its list"))

    def pick(self, plan: Plan, actions: list[int], engine_move: int | None) -> Pick:
        """The move to answer: the engine's (``engine_move``, from a search the plan asked for) where
        the referee's list allows it, else a listed action."""
        if not plan.search:
            return Pick(actions[0], "  (first listed action: position unknown)", engine=False)
        if plan.mine is None:
            return Pick(engine_move)
        if engine_move in actions:
            return Pick(engine_move, "  (my move, listed by the referee)")
        move = next((m for m in actions if m in plan.mine), actions[0])
        return Pick(move, "  (first listed action%s)" % (" legal for me" if move in plan.mine else ""), engine=False)

    def answered(self, move: int) -> Note | None:
        """Our ``move`` was written: one more turn answered, the move played on our position (a
        warning if it is illegal there: we lose track)."""
        self.turns += 1
        if self.position is None:
            return None
        if self.position.is_legal(move):
            self.position.push(move)
            return None
        self.position = None
        return Note(logging.WARNING, f"my move {cell_text(move)} is illegal in my position; I lose track of it")

    def game_over(self) -> Note | None:
        """A note when our last move ended the game by our rules."""
        if self.position is not None and self.position.winner is not None:
            return Note(logging.INFO, f"game over by my rules after my move: {describe(self.position)}")
        return None

    # -- the end of the input ----------------------------------------------------------------------

    def input_ended(self) -> Ending:
        """What the input ending between turns means: a finished game (exit 0) when it is over by
        our rules or some reply of the opponent could end it (CodinGame never sends the final
        move), otherwise an early end (exit 3)."""
        position = self.position
        if self.turns == 0:
            return Ending(EXIT_INPUT_ENDED, Note(logging.WARNING, f"input ended before the first turn; exiting "
                                                                  f"(code {EXIT_INPUT_ENDED})"))
        if position is None:
            return Ending(EXIT_INPUT_ENDED, Note(logging.WARNING, f"input ended; I had lost track of the position "
                                                                  f"(code {EXIT_INPUT_ENDED})"))
        if position.winner is not None:
            return Ending(EXIT_FINISHED, Note(logging.INFO, f"input ended: game over ({describe(position)})"))
        if reply_can_end(position):
            return Ending(EXIT_FINISHED, Note(logging.INFO, "input ended: the game is over for the referee (an "
                                                            "opponent reply can end it, and CodinGame does not send "
                                                            "the final move)"))
        return Ending(EXIT_INPUT_ENDED, Note(logging.WARNING, "input ended although no opponent reply can end the game "
                                                              "(a time-out, a crash or an early stop); exiting "
                                                              f"(code {EXIT_INPUT_ENDED})"))
