"""CodinGame's referee for Ultimate Tic-Tac-Toe without I/O: a state machine fed what the two
programs said and when, like the file referee's (:mod:`ref_sim.referees.file_referee`).

:class:`CodinGameReferee` decides everything docs/protocol.md, "CodinGame's variant" describes:
each turn's input (:func:`turn_input`) and its limit (the first turn longer, the grace on top),
the verdict on what came back (a move, ``Invalid move!``, ``Time out!``, a crash), the end on
the board (a line, or more boards won), closing both programs, and the record. It never touches
a pipe, a clock or a thread. It hands out one action at a time (:class:`Send`, :class:`Await`,
:class:`AskExit`, :class:`Show`, :class:`Finish`, then :class:`Done`); whoever runs it performs
the action and answers with the time and what came back (for an :class:`Await`: a :class:`Line`,
:class:`TimedOut`, :class:`Ended` or :class:`Endless`). :func:`ref_sim.referees.codingame_shell.referee_game`
does that with running programs; tests/test_codingame_referee.py with scripted ones on a virtual clock.

>>> referee = CodinGameReferee(["A", "B"])
>>> referee.start(0.0).player, referee.send(0.0)
('A', Await(player='A', until=1.005))
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ref_sim.referees.file_referee import INVALID_MOVE, TIME_OUT
from ref_sim.rules import CODINGAME, TIE, Game, line_winner

DEFAULT_TURN_MS = 100.0
DEFAULT_FIRST_TURN_MS = 1000.0
#: Added to every turn's limit: the referee's own latency (pipe write, a thread handing over
#: the line) is well under 1 ms; 5 ms keeps a verdict about the program, not about us.
DEFAULT_GRACE_MS = 5.0
#: After the end, how long a program may take to exit once its stdin is closed.
EXIT_WAIT = 2.0
#: After a time-out, how long to wait for the late answer, only to record how late it was.
LATE_WAIT = 1.0
#: After a crash, how long to wait for the program's exit code, to say it.
EXIT_NOTE_WAIT = 0.5
#: The verdicts of CodinGame's referee besides the file referee's Time out! and Invalid move!
CRASHED = "Crashed!"
LINE_WIN = "three local boards in a line"
COUNT_WIN = "more local boards won when all boards were decided"
#: The reason of a game a stop ended before its verdict.
STOPPED = "stopped"


# -- the rules of a turn, pure ------------------------------------------------------------

def to_cell(board: int, spot: int) -> tuple[int, int]:
    """``(row, col)`` of a ``(board, spot)``.

    >>> to_cell(4, 5)
    (4, 5)
    >>> to_cell(2, 3)
    (1, 6)
    """
    return (board // 3) * 3 + spot // 3, (board % 3) * 3 + spot % 3


def from_cell(row: int, col: int) -> tuple[int, int]:
    """``(board, spot)`` of a ``(row, col)`` (inverse of :func:`to_cell`).

    >>> from_cell(1, 6)
    (2, 3)
    """
    return (row // 3) * 3 + col // 3, (row % 3) * 3 + col % 3


def turn_input(game: Game) -> str:
    """The input of the next turn: last move, count, the valid actions sorted by row and col.

    >>> turn_input(Game(CODINGAME)).splitlines()[:3]
    ['-1 -1', '81', '0 0']
    """
    last = "{} {}".format(*to_cell(*game.moves[-1])) if game.moves else "-1 -1"
    actions = sorted(to_cell(board, spot) for board, spot in game.legal_moves())
    return "".join([f"{last}\n{len(actions)}\n"] + [f"{row} {col}\n" for row, col in actions])


def parse_answer(line: str) -> tuple[int, int] | None:
    """``(board, spot)`` from ``row col [message]``, or None if it is not that.

    >>> parse_answer("1 6\\n"), parse_answer("4 4 hello"), parse_answer("9 0"), parse_answer("a b")
    ((2, 3), (4, 4), None, None)
    """
    parts = line.split()
    if len(parts) < 2 or not all(re.fullmatch(r"-?\d+", p) for p in parts[:2]):
        return None
    row, col = int(parts[0]), int(parts[1])
    if not (0 <= row <= 8 and 0 <= col <= 8):
        return None
    return from_cell(row, col)


def boards_won(game: Game) -> tuple[int, int]:
    results = game.local_results()
    return results.count(0), results.count(1)


# -- the actions and answers --------------------------------------------------------------

@dataclass(frozen=True)
class Send:
    """Write ``text`` to ``player``'s stdin. Answer: None, or :class:`Ended` when it cannot be
    written (the program is gone)."""
    player: str
    text: str


@dataclass(frozen=True)
class Await:
    """Wait for ``player``'s next stdout line until ``until`` (lines it printed before are read
    first, in order). Answer: :class:`Line`, :class:`TimedOut`, :class:`Ended` or :class:`Endless`."""
    player: str
    until: float


@dataclass(frozen=True)
class AskExit:
    """How ``player``'s output ended: "exited with code N" (waiting up to ``wait`` s to know)."""
    player: str
    wait: float


@dataclass(frozen=True)
class Show:
    """Give a position's text to whoever watches the game. Answer: None."""
    text: str


@dataclass(frozen=True)
class Finish:
    """Close ``player``'s stdin and let it exit within ``wait`` s, else end it. Answer: a note
    ("did not exit (killed)") or None."""
    player: str
    wait: float


@dataclass(frozen=True)
class Done:
    """The game is over and both programs closed: the record is complete."""
    record: dict


@dataclass(frozen=True)
class Line:
    """A line of the program's stdout (with its newline, if any) and when it arrived."""
    at: float
    text: str


@dataclass(frozen=True)
class TimedOut:
    """No line came by the :class:`Await`'s ``until``."""


@dataclass(frozen=True)
class Ended:
    """The program's output ended (or its input could not be written): it is gone."""


@dataclass(frozen=True)
class Endless:
    """Its stdout is read no further: a line ran on without a newline (``why`` says how far)."""
    why: str


# -- the machine --------------------------------------------------------------------------

class CodinGameReferee:
    """One game's referee between ``names`` (``names[0]`` moves first): :meth:`start`, then
    :meth:`send` each answer with the time it was given at, until :class:`Done`; :meth:`interrupt`
    for a stop. Times come from one steady clock, in seconds; ``started``: the wall-clock time
    for the record."""

    def __init__(self, names, turn_ms: float = DEFAULT_TURN_MS, first_turn_ms: float = DEFAULT_FIRST_TURN_MS,
                 grace_ms: float = DEFAULT_GRACE_MS, *, exit_wait: float = EXIT_WAIT,
                 started: float = 0.0) -> None:
        self.names = list(names)
        self.turn_ms, self.first_turn_ms, self.grace_ms = turn_ms, first_turn_ms, grace_ms
        self.exit_wait, self.started = exit_wait, started
        self.game = Game(CODINGAME)
        self.moves: list[dict] = []
        self.turns = dict.fromkeys(self.names, 0)
        self.result = self.winner = self.loser = self.reason = self.bad_line = self.late_ms = None
        self.notes: dict[str, str] = {}
        self.now = self.begin = 0.0
        self._script = self._run()

    def start(self, now: float):
        """The first action, at time ``now``."""
        self.now = self.begin = now
        return next(self._script)

    def send(self, now: float, answer=None):
        """The answer to the last action, given at time ``now``; returns the next action."""
        self.now = now
        try:
            return self._script.send(answer)
        except StopIteration:
            return Done(self.record())

    def interrupt(self, now: float) -> Done:
        """A stop at ``now``: a game without its verdict is aborted ("stopped"); one with it
        stands. Nothing more is asked: whoever started the programs ends them."""
        self.now = now
        self._script.close()
        if self.result is None and self.game.result is None:
            self.result, self.reason = "aborted", STOPPED
        elif self.result is None:
            self._board_end()
        return Done(self.record())

    def limit(self, player: str) -> float:
        """Seconds ``player`` has for its next turn: its first is longer; the grace on top."""
        ms = self.first_turn_ms if self.turns[player] == 0 else self.turn_ms
        return (ms + self.grace_ms) / 1000.0

    def _run(self):
        game = self.game
        while game.result is None:
            mover = self.names[len(game.moves) % 2]
            limit = self.limit(mover)
            self.turns[mover] += 1
            answer = yield Send(mover, turn_input(game))
            sent = self.now                         # the mover's clock runs from its input
            if answer is None:
                answer = yield Await(mover, sent + limit)
            if not (yield from self._judge(mover, answer, sent, limit)):
                break
        if self.result is None:
            self._board_end()
        for name in self.names:
            note = yield Finish(name, self.exit_wait)
            if note and name not in self.notes:
                self.notes[name] = note

    def _judge(self, mover: str, answer, sent: float, limit: float):
        """Play ``mover``'s answer to its turn's input sent at ``sent``; returns True after a
        legal move, else False with the verdict set (the notes and lateness asked after it)."""
        if isinstance(answer, Ended):
            self._lose(mover, CRASHED)
            self.notes[mover] = f"crashed ({(yield AskExit(mover, EXIT_NOTE_WAIT))})"
            return False
        if not isinstance(answer, Line) or answer.at - sent > limit:
            self._lose(mover, TIME_OUT)
            if isinstance(answer, TimedOut):
                answer = yield Await(mover, self.now + LATE_WAIT)     # how late, for the record only
            if isinstance(answer, Endless):
                self.notes[mover] = f"printed {answer.why} (its stdout was read no further)"
            elif isinstance(answer, Line):
                self.late_ms = round((answer.at - sent) * 1000.0, 2)
            return False
        line = answer.text.rstrip("\r\n")
        move = parse_answer(line)
        if move is None or not self.game.is_legal(*move):
            self._lose(mover, INVALID_MOVE)
            self.bad_line = line
            return False
        self.game.play(*move)
        row, col = to_cell(*move)
        ms = round(max(0.0, answer.at - sent) * 1000.0, 2)
        self.moves.append({"player": mover, "row": row, "col": col, "board": move[0], "spot": move[1], "ms": ms})
        yield Show(f"Move {len(self.moves)}: {mover} {row} {col} ({ms:.1f} ms)\n{self.game.render()}\n")
        return True

    def _lose(self, loser: str, reason: str) -> None:
        self.result, self.loser, self.reason = "win", loser, reason
        self.winner = self.names[1 - self.names.index(loser)]

    def _board_end(self) -> None:
        """The verdict of a game that ended on the board."""
        game = self.game
        if game.result == TIE:
            self.result, self.reason = "tie", "tie"
        else:
            self.result = "win"
            self.winner, self.loser = self.names[game.result], self.names[1 - game.result]
            won = line_winner([r if r in (0, 1) else None for r in game.local_results()])
            self.reason = LINE_WIN if won is not None else COUNT_WIN

    def record(self) -> dict:
        """The game's record (the keys of a games.jsonl line that concern the game itself)."""
        names, moves = self.names, self.moves
        x, o = boards_won(self.game)
        slowest = {name: max((m["ms"] for m in moves if m["player"] == name), default=0.0) for name in names}
        return {
            "rules": CODINGAME, "turn_ms": self.turn_ms, "first_turn_ms": self.first_turn_ms,
            "grace_ms": self.grace_ms, "names": names, "p1": names[0], "p2": names[1], "moves": moves,
            "result": self.result, "winner": self.winner, "loser": self.loser, "reason": self.reason,
            "bad_line": self.bad_line, "late_ms": self.late_ms,
            "boards": {names[0]: x, names[1]: o}, "notes": self.notes, "slowest_ms": slowest,
            "started": self.started, "duration": round(self.now - self.begin, 3),
        }
