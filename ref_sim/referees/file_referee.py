"""The CS 4341 referee's decisions (v7), without I/O: a state machine fed what the clock and the
files say, like the agent's own :class:`agent.file_turns.TurnDecider`.

:class:`FileReferee` decides everything docs/protocol.md describes: the coin flip and the opening,
whose turn it is, when to look at ``move_file`` (every tick while under the limit, none after it),
the verdict on the line read and the ``end_game`` text, and how long the files stay after the end.
It never touches a file, a clock or a thread. It hands out one action at a time (:class:`Clean`,
:class:`Write`, :class:`Remove`, :class:`Stat`, :class:`ReadMove`, :class:`PeekMove`, :class:`Wait`,
:class:`Notify`, then :class:`Done`); whoever runs it performs the action and answers with the time
and what it saw (for a read: a line, a :class:`Crash` or an :class:`Unreadable`).
:func:`ref_sim.referees.file_shell.run_game` does that on a real directory; the tests do it on a
virtual one with a virtual clock, so every verdict and timing case is a table row.

>>> referee = FileReferee("Walrus", "Otter", RefereeSettings(time_limit=1), seed=3, started=0.0)
>>> referee.start(0.0), referee.send(0.0), referee.send(0.0)
(Clean(), Write(name='move_file', text=''), Wait(until=0.3, agents=False))
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from dataclasses import dataclass, field
from pathlib import Path

from ref_sim.rules import TIE, Game

MOVE_FILE = "move_file"
FIRST_FOUR_MOVES = "first_four_moves"
END_GAME = "end_game"

#: The real referee's poll period; it stays 50 ms whatever the time limit.
TICK = 0.05
#: The shortest limit the commands accept: two ticks.  At 0.1 s the mover's move is looked
#: for once, at 50 ms; below that, not at all, so no move could ever count.
MIN_TIME_LIMIT = 2 * TICK
#: Start-up delay of the real referee (pygame) before the opening is written: the first
#: ``.go`` appears about 0.3 s after launch.
START_DELAY = 0.3
#: After the end, the files stay at least this long, and at least one time limit (an
#: agent still searching when end_game appears reads it only when its search ends).
EXIT_DELAY = 1.0
#: While lingering, the real referee may rewrite ``end_game`` and the ``.go`` files.
LINGER_REWRITE_PERIOD = 1.0
#: A tick is looked at this long after it is due: a sleep that wakes a little early must not
#: look before the tick.
TICK_SLACK = 0.0005

WIN_REASON = "The winning player has won 3 local boards in a row on the global board!"
TIME_OUT = "Time out!"
INVALID_MOVE = "Invalid move!"
OUT_OF_ORDER = "Out-of-order move!"
CRASHED = "referee crashed: move_file missing"
#: The start of the reason of a game whose move_file the referee's strict decoder refused.
UNDECODABLE = "referee crashed: move_file is not valid"
INTERRUPTED = "referee interrupted"


# -- what a game is --------------------------------------------------------------------------

@dataclass
class MoveRecord:
    """One move of the game after the opening."""
    player: str
    board: int
    spot: int
    seconds: float      # from the player's .go to the tick that saw the move


@dataclass
class GameRecord:
    """Everything about one game, saved as JSON by :meth:`save`."""
    names: tuple[str, str]
    time_limit: float
    seed: int | None = None
    encoding: str | None = None                 # how move_file was decoded (codec name)
    p1: str | None = None                       # X, moves first after the opening
    p2: str | None = None
    opening: list[tuple[str, int, int]] = field(default_factory=list)
    moves: list[MoveRecord] = field(default_factory=list)
    result: str | None = None                   # "win", "tie" or "aborted"
    winner: str | None = None
    loser: str | None = None
    reason: str | None = None
    end_text: str | None = None                 # exact content of end_game (None if aborted)
    bad_line: str | None = None                 # the line read when the verdict was a loss
    timeout_line: str | None = None             # move_file's line at a time-out (who wrote it)
    unreadable: str | None = None               # what stood at move_file when no move could be read
    started: float = 0.0
    duration: float = 0.0

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def save(self, path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path) -> GameRecord:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        data["names"] = tuple(data["names"])
        data["opening"] = [tuple(item) for item in data["opening"]]
        data["moves"] = [MoveRecord(**item) for item in data["moves"]]
        return cls(**data)


@dataclass
class Event:
    """What ``on_event`` receives.

    kind: "start" (opening written), "turn" (P.go created, clock running), "move" (a legal
    move was applied), "end" (end_game and both .go files written), "abort".
    """
    kind: str
    game: Game
    record: GameRecord
    player: str | None = None
    move: MoveRecord | None = None


@dataclass(frozen=True)
class RefereeSettings:
    """How the simulated referee runs a game: the real referee's timing unless told otherwise.

    ``time_limit``: seconds per move (below a second is allowed, the tick stays ``tick``).
    ``exit_delay``: how long ``end_game`` and the ``.go`` files stay after the end before the
    clean-up; None: :attr:`keep_after_end`'s default, one time limit and at least
    :data:`EXIT_DELAY`, so that an agent still searching when the game ended can read the
    result. ``linger``: after the end, keep waiting like the real referee (True: until stopped; a
    number: that many seconds), rewriting the end files every ``linger_rewrite`` seconds.
    ``busy_poll``: burn a core between ticks like the real referee. ``encoding``: how the
    referee's Python reads and writes its files (None: the locale's, which the shell asks)."""
    time_limit: float = 10.0
    tick: float = TICK
    start_delay: float = START_DELAY
    exit_delay: float | None = None
    linger: bool | float = False
    linger_rewrite: float = LINGER_REWRITE_PERIOD
    busy_poll: bool = False
    clean_at_exit: bool = True
    encoding: str | None = None

    @property
    def keep_after_end(self) -> float:
        """Seconds the end files stay when not lingering (less if every agent has exited)."""
        return max(EXIT_DELAY, self.time_limit) if self.exit_delay is None else self.exit_delay


# -- the actions and answers ----------------------------------------------------------------

@dataclass(frozen=True)
class Clean:
    """Delete the referee's files in its directory (:func:`is_cleanup_name`). Answer: None."""


@dataclass(frozen=True)
class Write:
    """Create (or truncate) file ``name`` of the directory with ``text``. Answer: None."""
    name: str
    text: str = ""


@dataclass(frozen=True)
class Remove:
    """Delete file ``name`` if it is there. Answer: None."""
    name: str


@dataclass(frozen=True)
class Stat:
    """Look at ``move_file``. Answer: its modification time, or None when it is missing.
    ``player``: the mover, whose move it would be (where each player has its own view of the
    directory, the mover's is looked at)."""
    player: str | None = None


@dataclass(frozen=True)
class ReadMove:
    """Read ``move_file`` as the real referee does. Answer: the line it keeps (a str), a
    :class:`Crash` where the real referee would crash, or :class:`Unreadable` where no line can
    be read from what stands there. ``player``: the mover, as :class:`Stat`'s."""
    player: str | None = None


@dataclass(frozen=True)
class PeekMove:
    """At a time-out, the line ``move_file`` starts with, for the record only (the real referee
    does not read it then). Answer: that line, or None when it cannot be read. ``player``: the
    mover, as :class:`Stat`'s."""
    player: str | None = None


@dataclass(frozen=True)
class Wait:
    """Let time pass until ``until``. With ``agents``, stop early once every agent has exited.
    Answer: True when it stopped early so, else None."""
    until: float
    agents: bool = False


@dataclass(frozen=True)
class Notify:
    """Tell whoever watches the game (``on_event``). Answer: None."""
    event: Event


@dataclass(frozen=True)
class Done:
    """The game and its clean-up are over: the record is complete."""
    record: GameRecord


@dataclass(frozen=True)
class Crash:
    """An answer to :class:`ReadMove` where the real referee would crash (an uncaught exception):
    no ``end_game`` is written. ``reason``: :data:`CRASHED` or an :data:`UNDECODABLE` line."""
    reason: str = CRASHED
    bad_line: str | None = None


@dataclass(frozen=True)
class Unreadable:
    """An answer to :class:`ReadMove`: no move line can be read from what stands at ``move_file``
    (``what``: "a FIFO (named pipe)", "a directory", "a symbolic link", a file too large...).
    The mover loses, ``Invalid move!``, as with a malformed line; ``at_limit``: only at the time
    limit, because the real referee would block there for ever (a FIFO waits for a writer) or
    crash (docs/protocol.md, section 10)."""
    what: str
    at_limit: bool = True


class Interrupted(Exception):
    """Thrown into the machine by :meth:`FileReferee.interrupt` (Ctrl-C, a stop)."""


class _Crashed(Exception):
    def __init__(self, crash: Crash) -> None:
        super().__init__(crash.reason)
        self.crash = crash


# -- the rules of the protocol, pure ---------------------------------------------------------

def referee_opening(rng: random.Random) -> tuple[tuple[int, int], ...]:
    """Four chained (board, spot) moves as the referee draws them: each a random legal move,
    so each board is the previous spot and no cell repeats."""
    game = Game()
    moves = []
    for _ in range(4):
        board, spot = rng.choice(game.legal_moves())
        game.play(board, spot)
        moves.append((board, spot))
    return tuple(moves)


def tick_count(time_limit: float, tick: float = TICK) -> int:
    """How many times the referee looks at ``move_file`` in a turn: at ``k * tick`` after
    the ``.go``, ``k = 1, 2, ...``, while under the limit (docs/protocol.md, "What the referee
    does", "Timing at the tournament's 10 s").

    >>> tick_count(10), tick_count(1), tick_count(0.1), tick_count(0.125)
    (199, 19, 1, 2)
    """
    return max(0, math.ceil(round(time_limit / tick, 9)) - 1)


def parse_move_line(line: str) -> tuple[str, int, int] | None:
    """Name, board, spot as the real referee parses them; None if unparseable.

    >>> parse_move_line("Otter 3 4 extra"), parse_move_line("Otter 3"), parse_move_line("Otter 3 x")
    (('Otter', 3, 4), None, None)
    """
    tokens = line.split()
    try:
        return tokens[0], int(tokens[1]), int(tokens[2])
    except (IndexError, ValueError):
        return None


def judge(game: Game, line: str, mover: str, opponent: str):
    """The real referee's verdict on the line it read in ``mover``'s turn, in its order:
    None for a legal move, else ((winner, loser), reason)."""
    parsed = parse_move_line(line)
    if parsed is None:
        return (opponent, mover), INVALID_MOVE
    name, board, spot = parsed
    if name != mover:
        return (mover, opponent), OUT_OF_ORDER
    if not game.is_legal(board, spot):
        return (opponent, mover), INVALID_MOVE
    return None


def end_text(record: GameRecord) -> str:
    """What ``end_game`` says (one line, no newline) for a finished game's record."""
    if record.result == "tie":
        return "END: Match TIED!"
    return f"END: {record.winner} WINS! {record.loser} LOSES! {record.reason}"


# -- the machine -----------------------------------------------------------------------------

class FileReferee:
    """One game's referee: :meth:`start`, then :meth:`send` each answer with the time it was
    given at, until :class:`Done`; :meth:`interrupt` for Ctrl-C or a stop.

    ``first`` / ``opening``: force p1 and the four opening cells (for paired games); by default
    a coin flip and a random opening, both seeded by ``seed``. ``started``: the wall-clock time
    for the record. Times given to :meth:`send` come from one steady clock, in seconds."""

    def __init__(self, name1: str, name2: str, settings: RefereeSettings = RefereeSettings(), *,
                 seed: int | None = None, first: str | None = None,
                 opening: list[tuple[int, int]] | None = None, started: float = 0.0) -> None:
        if name1 == name2:
            raise ValueError(f"the two names must differ, got {name1!r} twice")
        self.settings = settings
        self.rng = random.Random(seed)
        p1, p2 = name1, name2
        if first is None:
            if self.rng.choice([True, False]):          # the coin flip, as in the real referee
                p1, p2 = p2, p1
        elif first == name2:
            p1, p2 = name2, name1
        elif first != name1:
            raise ValueError(f"first={first!r} is neither {name1!r} nor {name2!r}")
        self.players = (p1, p2)
        self.record = GameRecord(names=(name1, name2), time_limit=settings.time_limit, seed=seed,
                                 encoding=settings.encoding, p1=p1, p2=p2, started=started)
        self.game = Game()
        self.opening = opening
        self.now = 0.0
        self._script = self._run()

    # -- driving it ----------------------------------------------------------------------

    def start(self, now: float):
        """The first action, at time ``now``."""
        self.now = now
        return next(self._script)

    def send(self, now: float, answer=None):
        """The answer to the last action, given at time ``now``; returns the next action."""
        self.now = now
        try:
            return self._script.send(answer)
        except StopIteration:
            return Done(self.record)

    def interrupt(self, now: float):
        """Ctrl-C or a stop at time ``now``: before the end the game is aborted without
        ``end_game``; after it (the exit wait, lingering) the game stands. The next action."""
        self.now = now
        try:
            return self._script.throw(Interrupted())
        except (StopIteration, Interrupted):
            pass
        # It came while the machine itself ran (or during its last clean-up): end as it would.
        if self.record.result is None:
            self.record.result, self.record.reason = "aborted", INTERRUPTED
        self._script = (action for action in [Clean()] if self.settings.clean_at_exit)
        return self.send(now)

    @property
    def interrupted_game(self) -> bool:
        """True when an interruption aborted the game (not one that came after its end)."""
        return self.record.reason == INTERRUPTED

    def mover(self) -> str:
        """The player whose turn it is (or was, at the end)."""
        return self.players[self.game.turn]

    # -- the game, in the real referee's order --------------------------------------------

    def _run(self):
        settings, record, game = self.settings, self.record, self.game
        begin = self.now
        try:
            yield Clean()
            yield Write(MOVE_FILE)
            yield Wait(self.now + settings.start_delay)
            opening = self.opening if self.opening is not None else referee_opening(self.rng)
            record.opening = [(self.players[i % 2], board, spot) for i, (board, spot) in enumerate(opening)]
            for _, board, spot in record.opening:
                game.play(board, spot)
            yield Write(FIRST_FOUR_MOVES, "".join(f"{name} {board} {spot}\n"
                                                  for name, board, spot in record.opening))
            yield Notify(Event("start", game, record))
            while game.result is None:
                verdict = yield from self._turn()
                if verdict is not None:
                    record.result, (record.winner, record.loser), record.reason = "win", *verdict
                    break
            if game.result == TIE:
                record.result, record.reason = "tie", "tie"
            elif game.result is not None:
                record.result, record.reason = "win", WIN_REASON
                record.winner, record.loser = self.players[game.result], self.players[1 - game.result]
            record.end_text = end_text(record)
            yield from self._write_end()
            record.duration = self.now - begin
            yield Notify(Event("end", game, record))
            if settings.linger:
                yield from self._linger()
            else:
                until = self.now + settings.keep_after_end
                while self.now < until:
                    if (yield Wait(until, agents=True)):
                        break
        except _Crashed as crashed:
            record.result, record.reason, record.bad_line = "aborted", crashed.crash.reason, crashed.crash.bad_line
            record.duration = self.now - begin
            yield Notify(Event("abort", game, record))
        except Interrupted:
            # After the end (exit pause, lingering) Ctrl-C is how the operator closes the
            # referee: the game stands.  Before the end it aborts the game without end_game.
            if record.result is None:
                record.result, record.reason = "aborted", INTERRUPTED
                record.duration = self.now - begin
                yield Notify(Event("abort", game, record))
        if settings.clean_at_exit:
            yield Clean()

    def _turn(self):
        """One turn; returns None after a legal move, else (verdict (winner, loser), reason).

        Lines outside their writer's turn (docs/protocol.md, "One move per .go") need no special
        case, as in the real referee: a line read at one of the mover's ticks is the mover's move,
        whoever wrote it, so one in the opponent's name makes the mover win (Out-of-order move!);
        a line written after the tick that read the mover's move but before M is noted here for
        the next turn is older than M, so it is never read as a move."""
        settings, game, record = self.settings, self.game, self.record
        mover, opponent = self.players[game.turn], self.players[1 - game.turn]
        yield Remove(f"{opponent}.go")
        noted = yield Stat(mover)               # M: a later mtime is a move
        if noted is None:
            raise _Crashed(Crash())
        yield Write(f"{mover}.go")
        start = self.now                        # the mover's clock runs from its .go
        yield Notify(Event("turn", game, record, player=mover))

        # The real loop: ticks at start + k * tick while the clock is under the limit, the
        # first tick that sees the mtime go up reads at once; none after the limit.  A tick
        # missed because the referee was held up is not replayed: the next one is due next.
        deadline = start + settings.time_limit
        tick, last_tick = 1, tick_count(settings.time_limit, settings.tick)
        modified = False
        while tick <= last_tick:
            due = start + tick * settings.tick
            if self.now >= deadline:
                break
            if self.now < due:
                yield Wait(due + TICK_SLACK)
                continue
            seen = yield Stat(mover)
            if seen is None:
                raise _Crashed(Crash())
            if seen > noted:
                modified = True
                break
            tick = max(tick + 1, int((self.now - start) / settings.tick) + 1)
        if not modified:                        # the verdict comes at the limit
            if self.now < deadline:
                yield Wait(deadline)
            # What move_file says then tells why (ref_sim.series.realbots.stall_notes).
            record.timeout_line = yield PeekMove(mover)
            return (opponent, mover), TIME_OUT
        seconds = self.now - start
        line = yield ReadMove(mover)
        if isinstance(line, Crash):
            raise _Crashed(line)
        if isinstance(line, Unreadable):
            if line.at_limit and self.now < deadline:
                yield Wait(deadline)
            record.unreadable = line.what
            return (opponent, mover), INVALID_MOVE
        verdict = judge(game, line, mover, opponent)
        if verdict is not None:
            record.bad_line = line
            return verdict
        _, board, spot = parse_move_line(line)
        game.play(board, spot)
        move = MoveRecord(mover, board, spot, round(seconds, 4))
        record.moves.append(move)
        yield Notify(Event("move", game, record, player=mover, move=move))
        return None

    def _write_end(self):
        """end_game first (one line, no newline), then create or truncate both .go files."""
        yield Write(END_GAME, self.record.end_text)
        for name in self.players:
            yield Write(f"{name}.go")

    def _linger(self):
        """Wait like the real referee after the end, rewriting its end files now and then."""
        linger = self.settings.linger
        until = None if linger is True else self.now + float(linger)
        while until is None or self.now < until:
            wake = self.now + self.settings.linger_rewrite
            yield Wait(wake if until is None else min(wake, until))
            if until is None or self.now < until:
                yield from self._write_end()
