"""What to do next in a file-protocol game, decided from what the referee's files show: no I/O here.

:class:`~agent.file_protocol.FileProtocolAgent` looks at the directory, hands what it saw to
:meth:`TurnDecider.decide` as a :class:`Look`, and carries out the answer: :class:`Wait`,
:class:`Play` (think, then write one move), :class:`Finish` (``end_game`` read) or :class:`Abort`
(no ``end_game`` will come). The decider never touches a file, a clock or a thread, so every case
is a row of ``tests/test_file_turns.py``. The order it judges a look in ("step N" below):
docs/protocol.md, "The order our agent judges a look in"; the cases it survives: docs/protocol.md,
"What a bot must survive".
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from functools import cached_property

from .clock import COARSEST_TIMESTAMP, FIRST_TURN_SLACK, OUT_OF_TURN_WAIT, REFEREE_TICK
from .referee_files import FileLines
from .rules import O, X, IllegalMoveError, InvalidMoveError, Move, Position, parse_move_line
from .text import printable

MOVE_FILE = "move_file"
OPENING_FILE = "first_four_moves"
END_FILE = "end_game"

#: A text that looked malformed is judged only if it is still the same this much later (a writer
#: that truncates, then writes, may be between the two).
SETTLE_PAUSE = 0.005
#: How long an empty end_game (created, not yet written) is looked at again before it counts.
END_FILL_WAIT = 0.2
#: How long a first_four_moves with fewer than four lines (still being written) is given.
OPENING_FILL_WAIT = 0.02


_END_WIN = re.compile(r"END:\s*(\S+)\s+WINS!\s*(\S+)\s+LOSES!\s*(.*)")
_END_TIE = re.compile(r"END:\s*Match TIED!")


def judge_end_text(name: str, text: str) -> str | None:
    """'won', 'lost' or 'tied' for ``name`` from the end_game text, or None if it does not say."""
    if _END_TIE.match(text):
        return "tied"
    match = _END_WIN.match(text)
    if match:
        if match.group(1) == name:
            return "won"
        if match.group(2) == name:
            return "lost"
    return None


def referee_lines(text: str) -> list[str]:
    """The lines of a protocol file as the referee's Python reads them, stripped.

    Text mode's universal newlines: only ``\\n``, ``\\r`` and ``\\r\\n`` end a line (not
    ``str.splitlines()``'s ``\\x0b \\x0c \\x1c-\\x1e \\x85 \\u2028 \\u2029``, which stay inside the
    line, where ``str.split()`` later treats them as spaces, as the referee's does). Reading stops
    at the first blank line (``str.isspace()``, the referee's test).

    >>> referee_lines("A 1 2\\r\\nB 2 3\\x1cjunk\\n\\nC 4 5\\n")
    ['A 1 2', 'B 2 3\\x1cjunk']
    """
    lines = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line.strip():  # blank (or the empty rest after a final newline): the referee stops
            break
        lines.append(line.strip())
    return lines


def referee_last_line(text: str) -> tuple[int, str] | None:
    """The line the referee would read from ``move_file``: the last one before the first blank line.

    Returns ``(line_number, line)`` (1-based, stripped) or None for an empty read.

    >>> referee_last_line("Otter 2 4\\n")
    (1, 'Otter 2 4')
    >>> referee_last_line("A 1 2\\nB 2 3\\n\\nC 4 5\\n")
    (2, 'B 2 3')
    >>> referee_last_line("\\nA 1 2\\n") is None
    True
    """
    lines = referee_lines(text)
    return (len(lines), lines[-1]) if lines else None


def first_word(line: str) -> str:
    words = line.split()
    return words[0] if words else ""


# -- what a look saw ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """One protocol file as a look found it."""

    identity: tuple  # (device, inode, mtime_ns, size): a write or a re-creation changes it (item 6)
    mtime_ns: int
    text: str | None = None  # decoded as the referee decodes it; None where the look did not read it
    undecodable: bool = False  # bytes the referee's encoding cannot decode: reading them, it crashes
    lines: FileLines | None = None  # what a streaming read found (in place of ``text``, for any size)

    @cached_property
    def read(self) -> FileLines | None:
        """What the referee reads from the file (:class:`FileLines`); None where the look did not read it."""
        if self.lines is not None:
            return self.lines
        return None if self.text is None else FileLines.from_text(self.text, self.undecodable)

    @property
    def mtime(self) -> float:
        return self.mtime_ns / 1e9

    @property
    def whole_seconds(self) -> bool:
        """A whole-second timestamp: a filesystem with coarse timestamps (docs/protocol.md, "Writing a
        move safely"). A fine-grained one shows this by chance about once in 10^9."""
        return self.mtime_ns % 1_000_000_000 == 0


@dataclass(frozen=True)
class Look:
    """The referee's directory at one look. ``move`` and ``opening`` carry text whenever ``go``
    exists; ``end`` whenever it exists."""

    opening: Seen | None
    move: Seen | None
    end: Seen | None
    go: Seen | None
    now: float  # a monotonic clock, seconds
    wall: float  # time.time(), to compare with file timestamps
    go_removed: bool = False  # the watcher saw NAME.go deleted or renamed away since the last look
    directory_gone: bool = False  # the referee's directory itself is deleted (or no longer a directory)

    def identities(self) -> tuple:
        return tuple(None if seen is None else seen.identity for seen in (self.opening, self.move, self.end, self.go))


# -- what to do -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Wait:
    """Nothing to do until the directory changes; with ``again_in``, look again that soon anyway
    (a file may be in the middle of being written)."""

    again_in: float | None = None


@dataclass(frozen=True)
class Play:
    """My turn: think on :attr:`TurnDecider.game`'s position and write one move, for this ``.go``."""

    go: Seen


@dataclass(frozen=True)
class Finish:
    """``end_game`` read: its first line."""

    end_text: str


@dataclass(frozen=True)
class Abort:
    """No ``end_game`` will come."""

    message: str


class ProtocolError(Exception):
    """The game on disk cannot be followed (reported, then only end_game matters)."""


@dataclass
class JoinedGame:
    """What the agent knows about the game it joined."""

    opening_id: tuple
    opening_mtime_ns: int
    position: Position
    side: int  # X (p1) or O (p2)
    opponent: str | None  # None when the opening used X/O instead of names
    answered: str | None = None  # last opponent line played on the position
    written: str | None = None  # last line this agent wrote (without newline)
    written_wall: float | None = None  # time.time() of that write
    written_go: Seen | None = None  # the .go that write answered
    go_renewed: bool = False  # my .go was seen missing or removed since that write
    turn_go_mtime: float | None = None  # mtime of the .go of my latest turn
    out_of_turn: dict = field(default_factory=dict)  # unanswered line -> when it was first seen
    moves: int = 0


@dataclass(frozen=True)
class Note:
    """Something to log. With a ``key`` it is said once per agent."""

    level: int
    message: str
    key: str | None = None


class TurnDecider:
    """The file protocol's decisions for player ``name`` (see the module docstring)."""

    def __init__(self, name: str, *, time_limit: float, grace: float, silence: float, encoding: str) -> None:
        self.name = name
        self.time_limit = time_limit
        self.grace = grace
        self.silence = silence
        self.encoding = encoding
        self.game: JoinedGame | None = None
        self.error: str | None = None  # set once the game cannot be followed
        self._error_opening_id: tuple | None = None  # the game that error belongs to
        self._finished_game_id: tuple | None = None  # a game that had ended before the agent started
        self._startup_game_id: tuple | None = None
        self._startup_go_id: tuple | None = None
        self._missing_since: float | None = None
        self._gone_since: float | None = None  # when the directory was first seen gone
        self._last_seen: tuple | None = None  # identities at the last look
        self._changed_at: float | None = None  # when they last changed
        self._waiting_since: dict[str, float] = {}  # a file looked at again: since when
        self._suspect_text: FileLines | None = None  # a move_file reading that looked bad once
        self.notes: list[Note] = []

    def take_notes(self) -> list[Note]:
        notes, self.notes = self.notes, []
        return notes

    def _note(self, level: int, message: str, key: str | None = None) -> None:
        self.notes.append(Note(level, message, key))

    # -- start-up ---------------------------------------------------------------------------------

    def start(self, look: Look) -> None:
        """Remember what an earlier game left behind, so it is not mistaken for ours ("Files left
        by an earlier game")."""
        self._changed_at = look.now
        if look.opening is None:
            return
        if look.end is not None and look.end.mtime_ns >= look.opening.mtime_ns:
            self._finished_game_id = look.opening.identity
            self._note(logging.INFO, f"the directory holds a game that ended before I started; waiting for a new "
                                     f"{OPENING_FILE}")
            return
        self._startup_game_id = look.opening.identity
        # A live turn's .go is younger than the limit: past it the referee has already called a
        # time-out. A younger one is my turn, started late (a loaded machine): answer at once
        # with the time left rather than lose on time. An older one is a killed referee's.
        if look.go is not None and look.wall - look.go.mtime > self.time_limit:
            self._startup_go_id = look.go.identity
        self._note(logging.INFO, "the directory already holds a game (in progress, or left by a killed referee); "
                                 "I only play it if my first turn there looks like a fresh start")

    # -- after my write ---------------------------------------------------------------------------

    def wrote(self, line: str, go: Seen, move: Move, wall: float) -> None:
        """My move ``line`` is in move_file, answering ``go``: the next turn needs a newer .go."""
        game = self.game
        game.position.play(move)
        game.written, game.written_wall, game.written_go = line, wall, go
        game.go_renewed = False
        game.out_of_turn.clear()
        game.moves += 1

    # -- while I think and write ------------------------------------------------------------------

    def game_moved_on(self, look: Look) -> bool:
        """True when ``look`` (identities are enough) shows the game I joined over or gone: its
        ``first_four_moves`` removed or replaced, or a current ``end_game``."""
        opening = look.opening
        if opening is None or self.game is None or opening.identity != self.game.opening_id:
            return True
        return look.end is not None and look.end.mtime_ns >= opening.mtime_ns

    def turn_is_over(self, look: Look, go_id: tuple) -> bool:
        """True once thinking on (or rewriting for) the ``.go`` whose identity is ``go_id`` is
        pointless: the game moved on, or that ``.go`` vanished or changed (the referee moved on)."""
        return self.game_moved_on(look) or look.go is None or look.go.identity != go_id

    def unwritten(self, move: Move, last) -> None:
        """My ``move`` goes unwritten: my ``.go`` went away while I thought, in a game that has not
        moved on. ``last`` is ``move_file``'s line the referee would read (:func:`referee_last_line`):
        a line in my name that I did not write is another agent playing under my name ("Two bots
        started with the same name")."""
        if last is not None and first_word(last[1]) == self.name:
            self._note(logging.ERROR, f"my .go vanished while I was thinking and {MOVE_FILE} now holds "
                                      f"{printable(last[1])!r}, a move in my name that I did not write: another agent "
                                      f"named {self.name!r} is probably playing in this directory; not writing {move}")
        else:
            self._note(logging.WARNING, "my .go vanished while I was thinking (the referee stopped, or moved on "
                                        f"without me); not writing {move}")

    # -- the decision -----------------------------------------------------------------------------

    def decide(self, look: Look) -> Wait | Play | Finish | Abort:
        """What to do after ``look``: the steps of docs/protocol.md, "The order our agent judges a look
        in", whose numbers are used below."""
        # 0. the directory
        if look.directory_gone:
            return self._directory_gone(look.now)
        self._gone_since = None
        # 1. the game
        if look.opening is None or (self.game is not None and look.move is None):
            return self._missing(look.now)
        self._missing_since = None
        opening = look.opening
        if opening.identity == self._finished_game_id:
            return Wait()
        followed = self.game.opening_id if self.game is not None else self._error_opening_id
        if followed is not None and opening.identity != followed:
            self._note(logging.WARNING, f"{OPENING_FILE} was replaced before my game ended: that game was abandoned "
                                        "(its referee was stopped or killed); joining the new one")
            self.game, self.error, self._error_opening_id = None, None, None
            self._suspect_text = None
            self._waiting_since.clear()
        # 2. silence
        silent = self._silent(look)
        if silent is not None:
            return silent
        if look.go is None and self.game is not None and self.game.written_go is not None:
            self.game.go_renewed = True  # seen missing since my write (step 6)
        if look.go_removed and self.game is not None and self.game.written_go is not None:
            self.game.go_renewed = True
        # 3. end_game
        if look.end is not None and look.end.mtime_ns >= opening.mtime_ns:
            return self._end(look)
        if look.end is not None:
            self._note(logging.INFO, f"ignoring an {END_FILE} older than {OPENING_FILE} (left from an earlier game)",
                       "stale-end")
        # 4. after an error, only end_game matters
        if self.error is not None:
            return Wait()
        # 5. my .go
        go = look.go
        if go is None or go.mtime_ns < opening.mtime_ns:
            return Wait()
        if opening.identity == self._startup_game_id and go.identity == self._startup_go_id:
            return Wait()
        try:
            return self._turn(look)
        except _LookAgain as again:
            return Wait(again_in=again.seconds)
        except ProtocolError as error:
            self.error = str(error)
            self._error_opening_id = self.game.opening_id if self.game is not None else opening.identity
            self._note(logging.ERROR, f"{error}; waiting for {END_FILE}")
            return Wait()

    def _directory_gone(self, now: float) -> Wait | Abort:
        """The directory itself was deleted: a joined game is over after ``grace``, as when its files
        vanish; before a game, one may still come only if the directory is made again, so wait
        ``silence`` (``grace`` where silence is off) for that, then give up."""
        if self._gone_since is None:
            self._gone_since = now
            self._note(logging.WARNING, "the referee's directory was deleted; waiting for it to come back")
        wait = self.grace if self.game is not None or self.silence <= 0 else self.silence
        if now - self._gone_since > wait:
            when = "during my game" if self.game is not None else "before any game began there"
            return Abort(f"the referee's directory was deleted {when} and stayed gone for {wait:g} s: "
                         "no referee can use it")
        return Wait()

    def _unreadable(self, seen: Seen, name: str) -> bool:
        """True (after one note per version of the file) when ``name`` could not be read at all."""
        why = seen.read.unreadable if seen is not None and seen.read is not None else None
        if why is None:
            return False
        self._note(logging.WARNING, f"cannot read {name} ({why}); waiting for a readable one (the referee cannot read "
                                    "it either: its game will end without me)", f"unreadable {name} {seen.identity}")
        return True

    def _missing(self, now: float) -> Wait | Abort:
        if self.game is None:
            return Wait()  # no game joined yet: nothing to lose, keep waiting
        if self._missing_since is None:
            self._missing_since = now
            self._note(logging.DEBUG, f"protocol files missing; giving the referee {self.grace:.1f} s")
        elif now - self._missing_since > self.grace:
            return Abort(f"the referee's files ({OPENING_FILE}, {MOVE_FILE}) vanished for more than {self.grace:g} s "
                         "without an end_game: the referee was stopped")
        return Wait()

    def _silent(self, look: Look) -> Abort | None:
        """A killed referee leaves its files as they were. Counted only in a game that started after
        me, or that I joined and that is not a start-up leftover (that one may stay silent until the
        next referee)."""
        seen = look.identities()
        if seen != self._last_seen or self._changed_at is None:
            self._last_seen, self._changed_at = seen, look.now
            return None
        if self.silence <= 0 or seen[0] in (self._startup_game_id, self._finished_game_id):
            return None
        if look.now - self._changed_at > self.silence:
            return Abort(f"nothing changed in the referee's files for {self.silence:g} s (more than any turn at my "
                         f"limit of {self.time_limit:g} s) and no end_game: the referee was probably killed")
        return None

    def _end(self, look: Look) -> Wait | Finish:
        if self._unreadable(look.end, END_FILE):
            return Wait()
        lines = look.end.read.first if look.end.read is not None else ()
        if not lines:  # the referee may be between creating and writing it
            since = self._waiting_since.setdefault(END_FILE, look.now)
            if look.now - since < END_FILL_WAIT:
                return Wait(again_in=0.01)
        end_text = lines[0] if lines else ""
        self._explain_time_out(end_text, look.end)
        return Finish(end_text)

    def _explain_time_out(self, end_text: str, end: Seen) -> None:
        """A time-out of mine that came before my own limit: the referee's limit is shorter ("Two
        bots started with the same name, or a bot given another limit")."""
        game = self.game
        match = _END_WIN.match(end_text)
        if game is None or game.turn_go_mtime is None or not match or match.group(2) != self.name:
            return
        if "Time out" not in match.group(3):
            return
        after = end.mtime - game.turn_go_mtime
        if 0 <= after < self.time_limit - REFEREE_TICK:
            self._note(logging.WARNING, f"the referee timed me out {after:.2f} s after my .go, before my --time-limit "
                                        f"of {self.time_limit:g} s: its limit is probably shorter than mine; start me "
                                        "with the referee's --time-limit")

    # -- my turn? ---------------------------------------------------------------------------------

    def _turn(self, look: Look) -> Wait | Play:
        go, move = look.go, look.move
        if move is None or move.read is None:
            return Wait()
        if self._unreadable(move, MOVE_FILE) or self._unreadable(look.opening, OPENING_FILE):
            return Wait()
        if move.read.undecodable:
            self._judge_once(move.read)
            raise ProtocolError(f"{MOVE_FILE} holds bytes that are not {self.encoding}, the encoding the referee reads "
                                f"it with: {printable(move.read.shown)!r}; the referee cannot decode it either and "
                                f"stops without an {END_FILE} (its reading error is not caught)")
        last = move.read.last
        if self.game is None:
            self._join(look, last)
        game = self.game
        if game.written_go is not None and not self._new_go(look, last):
            return self._after_my_write(look, last)
        if last is None:
            if game.position.ply == 4 and game.side == X and game.written is None:
                return self._play(go)  # move 5
            return Wait()
        number, line = last
        if line == game.written:
            return Wait()  # my own move: my .go is lingering ("Your own .go is still there")
        if line != game.answered:
            self._account_opponent(number, line, look)
        if game.position.turn == game.side and game.position.winner is None:
            return self._play(go)
        return Wait()

    def _new_go(self, look: Look, last) -> bool:
        """True when ``look.go`` was created after my last write (step 6)."""
        game = self.game
        if game.go_renewed or look.go.identity != game.written_go.identity:
            return True
        if not look.go.whole_seconds or last is None or last[1] in (game.written, game.answered):
            return False
        # Whole-second timestamps and a reused inode can hide a re-created .go: a line out of turn
        # is called by the referee within a tick or two; one that stands longer was a real turn.
        since = game.out_of_turn.setdefault(last[1], look.now)
        return look.now - since >= OUT_OF_TURN_WAIT

    def _after_my_write(self, look: Look, last) -> Wait:
        """The .go my last write answered still stands: nothing in move_file is mine to answer."""
        game = self.game
        if last is None or last[1] in (game.written, game.answered):
            return Wait()
        line = last[1]
        if first_word(line) == self.name:
            raise ProtocolError(f"{MOVE_FILE} line {last[0]}: {printable(line)!r} is in my name but is not the move I "
                                f"wrote ({game.written!r}): another agent named {self.name!r} is probably playing in "
                                "this directory (two agents started with one name)")
        self._note(logging.WARNING, f"{MOVE_FILE} holds {printable(line)!r} while the .go I answered still stands: "
                                    "my opponent wrote out of turn; not answering it (the referee calls such a line "
                                    "at its next look: Out-of-order move!)", f"out-of-turn {line}")
        if look.go.whole_seconds and line in game.out_of_turn:
            left = OUT_OF_TURN_WAIT - (look.now - game.out_of_turn[line])
            return Wait(again_in=max(left, 0.0) + 0.001)
        return Wait()

    def _play(self, go: Seen) -> Play:
        self.game.turn_go_mtime = go.mtime
        return Play(go)

    # -- joining ----------------------------------------------------------------------------------

    def _join(self, look: Look, last) -> None:
        """Read the opening now that my .go is current (step 7) and check the game is fresh
        ("Started after the game began")."""
        opening = look.opening
        read = opening.read or FileLines()
        lines = read.first[:4]
        if read.count < 4:
            # Not complete yet (it should be by now): look again before calling it broken.
            since = self._waiting_since.setdefault(OPENING_FILE, look.now)
            if look.now - since < OPENING_FILL_WAIT:
                raise _LookAgain(OPENING_FILL_WAIT)
        if read.count != 4:
            raise ProtocolError(f"{OPENING_FILE} has {read.count} lines before its first blank line, expected 4: "
                                f"{printable(read.shown)!r}")
        position = Position()
        names = []
        for number, line in enumerate(lines, start=1):
            try:
                player, move = parse_move_line(line)
                position.play(move)
            except (InvalidMoveError, IllegalMoveError) as error:
                raise ProtocolError(f"{OPENING_FILE} line {number}: {printable(line)!r}: {error}") from None
            names.append(player)
        p1, p2 = names[0], names[1]
        if names[2:] != [p1, p2] or p1 == p2:
            raise ProtocolError(f"{OPENING_FILE} names {printable(' / '.join(names))}: lines 1 and 3 must be one "
                                "player's, 2 and 4 the other's")
        if self.name == p1:
            side, opponent = X, p2
        elif self.name == p2:
            side, opponent = O, p1
        elif {p1, p2} <= {"X", "O"}:
            # Older referee versions write X/O: the state of move_file at my first .go tells.
            opponent = None
            side = X if last is None or first_word(last[1]) == self.name else O
        else:
            raise ProtocolError(f"{OPENING_FILE} names {printable(p1)!r} and {printable(p2)!r}, not me ({self.name!r})")
        self._waiting_since.pop(OPENING_FILE, None)
        self.game = JoinedGame(opening.identity, opening.mtime_ns, position, side, opponent)
        self._note(logging.INFO, f"game joined: I am {self.name} (p{side + 1}) against {opponent or '?'}; opening "
                                 f"{' / '.join(lines)}")
        if opening.whole_seconds and look.go.whole_seconds and look.move.whole_seconds:
            self.note_coarse()
        if side == X:
            fresh = last is None
        else:
            fresh = last is not None and first_word(last[1]) != self.name
        if not fresh:
            raise ProtocolError(self._late_message(last))
        if side == O:
            # p1's whole first turn lies between the opening and my first .go: at most one limit.
            # (On whole-second timestamps both are cut down, by at most one granule each.)
            gap = (look.go.mtime_ns - opening.mtime_ns) / 1e9
            coarse = opening.whole_seconds and look.go.whole_seconds
            allowed = self.time_limit + FIRST_TURN_SLACK + (COARSEST_TIMESTAMP if coarse else 0)
            if gap > allowed:
                raise ProtocolError(
                    f"started after the game began: my first .go came {gap:.1f} s after {OPENING_FILE}, more than "
                    f"one turn of p1 can take ({self.time_limit:g} s + {FIRST_TURN_SLACK:g} s), so {MOVE_FILE}'s "
                    f"{printable(last[1])!r} is not p1's first move; I will not play from a position I did not see "
                    "(if the referee's --time-limit is longer than mine, start me with the referee's)")

    def note_coarse(self) -> None:
        self._note(logging.WARNING, f"the filesystem keeps whole-second timestamps: a move only counts once "
                                    f"{MOVE_FILE}'s mtime passes the referee's record of it, so I check every write "
                                    "and set the timestamp where the clock has not moved on", "coarse")

    def _late_message(self, last) -> str:
        shown = "empty" if last is None else f"holds {printable(last[1])!r} (line {last[0]})"
        hint = ""
        if last is not None and first_word(last[1]) == self.name:
            hint = (f"; a move in my name that I did not write: another agent named {self.name!r} is probably "
                    "playing in this directory")
        return (f"started after the game began: at my first turn {MOVE_FILE} is {shown}, which a fresh game "
                f"cannot show; I will not play from a position I did not see{hint}")

    # -- the opponent's move ----------------------------------------------------------------------

    def _judge_once(self, text: FileLines) -> None:
        """Let a text that looks bad be judged only when a later look finds it unchanged: a writer
        that truncates, then writes, could still be busy. Raises _LookAgain the first time."""
        if self._suspect_text != text:
            self._suspect_text = text
            raise _LookAgain(SETTLE_PAUSE)

    def _account_opponent(self, number: int, line: str, look: Look) -> None:
        """Check the opponent's move and play it on my position ("An illegal or malformed opponent move")."""
        try:
            move = self._check_opponent(number, line)
        except ProtocolError:
            self._judge_once(look.move.read)
            raise
        self._suspect_text = None
        game = self.game
        game.position.play(move)
        if game.opponent is None:
            game.opponent = first_word(line)
        game.answered = line
        self._note(logging.DEBUG, f"{first_word(line)} played {move}")
        self._note_opponent_time(look.move.mtime)

    def _check_opponent(self, number: int, line: str) -> Move:
        """The opponent's move in ``line`` if the referee accepted it on my position, else ProtocolError."""
        game = self.game
        where = f"{MOVE_FILE} line {number}"
        shown = printable(line)
        try:
            player, move = parse_move_line(line)
        except InvalidMoveError as error:
            raise ProtocolError(f"{where}: {printable(str(error))}") from None
        if player == self.name:
            raise ProtocolError(f"{where}: {shown!r} is in my name but is not the move I wrote ({game.written!r}): "
                                f"another agent named {self.name!r} is probably playing in this directory "
                                "(two agents started with one name)")
        if game.opponent is not None and player != game.opponent:
            raise ProtocolError(f"{where}: {shown!r} is not from my opponent {game.opponent!r}")
        if game.position.turn == game.side:
            raise ProtocolError(f"{where}: {shown!r} arrived while it was my move")
        if not game.position.is_legal(move.index):
            hint = " (or I was started after the game began)" if game.written is None else ""
            raise ProtocolError(f"{where}: {shown!r} is not legal: {game.position.why_illegal(move.index)}{hint}")
        return move

    def _note_opponent_time(self, move_mtime: float) -> None:
        """An opponent that takes longer than my limit to answer: the referee's limit is longer
        ("Two bots started with the same name, or a bot given another limit")."""
        game = self.game
        if game.written_wall is None:
            return
        took = move_mtime - game.written_wall
        if took > self.time_limit + FIRST_TURN_SLACK:
            self._note(logging.WARNING, f"my opponent answered {took:.1f} s after my move, longer than my --time-limit "
                                        f"of {self.time_limit:g} s: the referee's limit is probably longer than mine "
                                        "(start me with the referee's --time-limit to use all of it)", "longer-limit")


class _LookAgain(Exception):
    """A file is still being written: look again in ``seconds``."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.seconds = seconds
