"""The CS 4341 Ultimate Tic-Tac-Toe referee (v7) as a library, headless.

Every file the real referee writes, in the same order, with the same timing rules
(docs/protocol.md): clean-up, coin flip, empty ``move_file``, ``first_four_moves``, then one
turn after the other (delete the opponent's ``.go``, note the mtime of ``move_file``, create
``P.go``, poll every 50 ms, read at once), ``end_game`` and both ``.go`` files at the end.

>>> record = run_game(directory, "Walrus", "Otter", time_limit=10)   # doctest: +SKIP
>>> record.end_text                                                    # doctest: +SKIP
'END: Walrus WINS! Otter LOSES! The winning player has won 3 local boards in a row ...'
"""

from __future__ import annotations

import codecs
import dataclasses
import io
import json
import locale
import math
import os
import random
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, TextIO

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

WIN_REASON = "The winning player has won 3 local boards in a row on the global board!"
TIME_OUT = "Time out!"
INVALID_MOVE = "Invalid move!"
OUT_OF_ORDER = "Out-of-order move!"
CRASHED = "referee crashed: move_file missing"
#: The start of the reason of a game whose move_file the referee's strict decoder refused.
UNDECODABLE = "referee crashed: move_file is not valid"
INTERRUPTED = "referee interrupted"

# The real referee's clean-up patterns, applied with re.match (anchored at the start only),
# to regular files.  "(:?.*).go" therefore deletes any name with "go" after its first char.
CLEANUP_PATTERNS = [re.compile(p) for p in ("move_file", "(:?.*).go", "end_game",
                                            "first_four_moves")]


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


def is_cleanup_name(name: str) -> bool:
    """True if the referee's clean-up deletes a file called ``name``.

    >>> [is_cleanup_name(n) for n in ("move_file.bak", "algo.py", "go.txt", "Otter.go")]
    [True, True, False, True]
    """
    return any(pattern.match(name) for pattern in CLEANUP_PATTERNS)


def clean(directory) -> list[str]:
    """Delete the referee's files in ``directory`` like the real one; return their names."""
    removed = []
    directory = Path(directory)
    for entry in sorted(os.listdir(directory)):
        path = directory / entry
        if path.is_file() and is_cleanup_name(entry):
            try:
                path.unlink()
                removed.append(entry)
            except FileNotFoundError:
                pass
    return removed


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
    started: float = 0.0
    duration: float = 0.0

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def save(self, path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path) -> "GameRecord":
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


class RefereeCrash(Exception):
    """The real referee would crash here (an uncaught exception): no end_game is written.
    ``reason`` goes into the record: :data:`CRASHED` or an :data:`UNDECODABLE` line."""

    def __init__(self, reason: str = CRASHED, bad_line: str | None = None) -> None:
        super().__init__(reason)
        self.reason, self.bad_line = reason, bad_line


def locale_encoding() -> str:
    """The encoding ``open()`` uses by default here, so the real referee's on this machine:
    the locale's preferred one (UTF-8 on most Linux and macOS, cp1252 on Windows, Latin-1
    under some locales; UTF-8 in Python's UTF-8 mode).  Asked at each game, not at import.

    Not shared with the agent's own copy (agent.protocol) on purpose: the simulator is the
    independent model the agent's reading is checked against."""
    return locale.getpreferredencoding(False)


def check_encoding(encoding: str) -> str:
    """The codec's canonical name (``latin-1`` -> ``iso8859-1``); ValueError with a one-line
    message for a name Python does not know.

    >>> check_encoding("Latin-1"), check_encoding("cp1252")
    ('iso8859-1', 'cp1252')
    """
    try:
        codec = codecs.lookup(encoding).name
        ascii_kept = "Walrus 4 0\n".encode(codec) == b"Walrus 4 0\n"
    except LookupError:             # unknown, or not a text encoding (rot13, hex)
        raise ValueError(f"--encoding {encoding}: not a text encoding Python knows "
                         "(e.g. utf-8, cp1252, latin-1)") from None
    except UnicodeError:
        ascii_kept = False
    if not ascii_kept:
        raise ValueError(f"--encoding {encoding}: no locale uses it (ASCII text would not "
                         "stay ASCII); e.g. utf-8, cp1252, latin-1")
    return codec


def referee_lines(text: str) -> list[str]:
    """``text`` cut into lines (each with its ``\\n``) as the referee's Python reads a file.

    Universal newlines: only ``\\n``, ``\\r`` and ``\\r\\n`` end a line.  ``str.splitlines``
    also cuts at ``\\x0b \\x0c \\x1c \\x1d \\x1e \\x85 \\u2028 \\u2029``, where the referee
    does not: inside a line those are whitespace, so ``Otter 3 4\\x1cjunk`` is the move 3 4.

    >>> referee_lines("A 1 2\\x0bA 5 6\\rB 3 4\\r\\n")
    ['A 1 2\\x0bA 5 6\\n', 'B 3 4\\n']
    """
    return io.StringIO(text, newline=None).readlines()


def last_line(lines: Iterable[str]) -> str:
    """The line the real referee keeps: the last one before the first blank line ("" if the
    first line is blank or there is none)."""
    line = ""
    for next_line in lines:
        if next_line.isspace():
            break
        line = next_line
    return line


def read_move_line(path, encoding: str | None = None) -> str:
    """The line the real referee reads from ``move_file`` (see :func:`referee_lines`).

    Decoded as its ``open("move_file", "r")`` does: ``encoding`` (default: the locale's,
    :func:`locale_encoding`), strictly, and all of it (it calls ``readlines()``), so a byte
    the codec refuses anywhere in the file -- under UTF-8 any lone byte 0x80-0xFF, under
    cp1252 0x81 0x8D 0x8F 0x90 0x9D -- is the real referee's uncaught UnicodeDecodeError:
    :class:`RefereeCrash` with an :data:`UNDECODABLE` reason.  Under Latin-1 and cp1252 byte
    0xA0 is a no-break space, which ``str.split()`` takes for whitespace.
    """
    encoding = encoding or locale_encoding()
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        shown = last_line(referee_lines(data.decode(encoding, errors="backslashreplace")))
        raise RefereeCrash(f"{UNDECODABLE} {encoding}: byte 0x{data[error.start]:02x} at "
                           f"offset {error.start} (UnicodeDecodeError)", shown) from None
    return last_line(referee_lines(text))        # universal newlines, as its text file


def one_line(text: str, limit: int = 200) -> str:
    """``text`` fit to print on one line: stripped, control and other unprintable characters
    escaped (``\\x1b``...), cut at ``limit`` characters with ``...``.  A file written by
    someone else (``end_game``) must not move the cursor or paint the terminal.

    >>> one_line("END: A WINS!\\x1b[2J\\nmore")
    'END: A WINS!\\\\x1b[2J\\\\nmore'
    """
    text = text.strip()
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return shown if len(shown) <= limit else shown[:limit] + "..."


def parse_move_line(line: str) -> tuple[str, int, int] | None:
    """Name, board, spot as the real referee parses them; None if unparseable."""
    tokens = line.split()
    try:
        return tokens[0], int(tokens[1]), int(tokens[2])
    except (IndexError, ValueError):
        return None


def tick_count(time_limit: float) -> int:
    """How many times the referee looks at ``move_file`` in a turn: at ``k * TICK`` after
    the ``.go``, ``k = 1, 2, ...``, while under the limit (docs/protocol.md, "What the referee
    does", "Timing at the tournament's 10 s").

    >>> tick_count(10), tick_count(1), tick_count(0.1), tick_count(0.125)
    (199, 19, 1, 2)
    """
    return max(0, math.ceil(round(time_limit / TICK, 9)) - 1)


def check_time_limit(time_limit: float) -> tuple[str | None, str | None]:
    """``(error, warning)`` about a limit given on a command line (either may be None).

    Below :data:`MIN_TIME_LIMIT` the simulator cannot referee fairly: an error.  The real
    referee takes whole seconds (``--time_limit N``): any other limit is for rehearsal only,
    which the warning says in one line.
    """
    if not time_limit >= MIN_TIME_LIMIT:
        return (f"--time-limit {time_limit:g}: the referee looks for a move every "
                f"{TICK * 1000:.0f} ms, so a limit below {MIN_TIME_LIMIT:g} s leaves no fair "
                f"look at the move (at {MIN_TIME_LIMIT:g} s there is one, at "
                f"{TICK * 1000:.0f} ms); use at least {MIN_TIME_LIMIT:g}"), None
    if time_limit != int(time_limit):
        return None, (f"warning: the real referee takes whole seconds (--time_limit N); "
                      f"{time_limit:g} s per move is for rehearsal only")
    return None, None


def _touch(path: Path) -> None:
    open(path, "w").close()


def run_game(directory, name1: str, name2: str, time_limit: float = 10.0,
             seed: int | None = None, linger: bool | float = False, busy_poll: bool = False,
             on_event: Callable[[Event], None] | None = None, *,
             exit_delay: float | None = None, start_delay: float = START_DELAY,
             clean_at_exit: bool = True, first: str | None = None,
             opening: list[tuple[int, int]] | None = None,
             stop: threading.Event | None = None,
             agents_gone: Callable[[], bool] | None = None,
             encoding: str | None = None) -> GameRecord:
    """Referee one game in ``directory`` between ``name1`` and ``name2``; return its record.

    time_limit: seconds per move (float; below one second is allowed, the tick stays 50 ms).
    seed: seeds the coin flip and the opening.  linger: after the end, keep waiting like the
    real referee (True: until ``stop`` is set or Ctrl-C; a number: that many seconds),
    rewriting end_game and the .go files now and then.  busy_poll: burn a core between
    ticks like the real referee.  on_event: called with an :class:`Event` at each step.
    exit_delay: how long ``end_game`` and the ``.go`` files stay after the end before the
    clean-up; by default ``max(EXIT_DELAY, time_limit)``, so that an agent still searching
    when the game ended (it may search up to the limit) can read the result.  agents_gone:
    when the caller launched the agents, a test that they have all exited: the clean-up
    then comes as soon as it is true.  The real referee keeps its files until its operator
    closes it.  first / opening: force p1 and the four opening cells (for paired games); by
    default a coin flip and a random opening.  stop: set it to abort a running game
    (treated like Ctrl-C).  encoding: how the referee's Python reads and writes its files,
    by default the locale's (:func:`locale_encoding`), as the real one's on this machine;
    another one rehearses another machine's locale (:func:`read_move_line`).
    """
    directory = Path(directory)
    encoding = check_encoding(encoding or locale_encoding())
    if name1 == name2:
        raise ValueError(f"the two names must differ, got {name1!r} twice")
    rng = random.Random(seed)
    p1, p2 = name1, name2
    if first is None:
        if rng.choice([True, False]):          # the coin flip, as in the real referee
            p1, p2 = p2, p1
    elif first == name2:
        p1, p2 = name2, name1
    elif first != name1:
        raise ValueError(f"first={first!r} is neither {name1!r} nor {name2!r}")

    record = GameRecord(names=(name1, name2), time_limit=time_limit, seed=seed,
                        encoding=encoding, p1=p1, p2=p2, started=time.time())
    game = Game()
    notify = on_event or (lambda event: None)
    move_path = directory / MOVE_FILE
    go_path = {p1: directory / f"{p1}.go", p2: directory / f"{p2}.go"}
    begin = time.perf_counter()

    def wait(seconds: float) -> None:
        if stop is not None:
            if stop.wait(seconds):
                raise KeyboardInterrupt
        elif seconds > 0:
            time.sleep(seconds)

    try:
        clean(directory)
        _touch(move_path)
        wait(start_delay)
        if opening is None:
            opening = referee_opening(rng)
        record.opening = [((p1, p2)[i % 2], board, spot) for i, (board, spot) in enumerate(opening)]
        for _, board, spot in record.opening:
            game.play(board, spot)
        (directory / FIRST_FOUR_MOVES).write_text(
            "".join(f"{name} {board} {spot}\n" for name, board, spot in record.opening),
            encoding=encoding)
        notify(Event("start", game, record))

        while game.result is None:
            mover = (p1, p2)[game.turn]
            opponent = (p1, p2)[1 - game.turn]
            verdict = _one_turn(directory, game, record, mover, opponent, time_limit,
                                busy_poll, stop, notify, encoding)
            if verdict is not None:
                record.result, (record.winner, record.loser), record.reason = "win", *verdict
                break
        if game.result == TIE:
            record.result, record.reason = "tie", "tie"
        elif game.result is not None:
            record.result, record.reason = "win", WIN_REASON
            record.winner, record.loser = (p1, p2)[game.result], (p1, p2)[1 - game.result]

        if record.result == "tie":
            record.end_text = "END: Match TIED!"
        else:
            record.end_text = f"END: {record.winner} WINS! {record.loser} LOSES! {record.reason}"
        _write_end(directory, record.end_text, go_path.values(), encoding)
        record.duration = time.perf_counter() - begin
        notify(Event("end", game, record))
        if linger:
            _linger(directory, record.end_text, go_path.values(), linger, stop, encoding)
        else:
            keep = max(EXIT_DELAY, time_limit) if exit_delay is None else exit_delay
            until = time.monotonic() + keep
            while (left := until - time.monotonic()) > 0:
                if agents_gone is not None and agents_gone():
                    break
                wait(min(left, 0.02) if agents_gone is not None else left)
    except RefereeCrash as crash:
        record.result, record.reason, record.bad_line = "aborted", crash.reason, crash.bad_line
        record.duration = time.perf_counter() - begin
        notify(Event("abort", game, record))
    except KeyboardInterrupt:
        # After the end (exit pause, lingering) Ctrl-C is how the operator closes the
        # referee: the game stands.  Before the end it aborts the game without end_game.
        if record.result is None:
            record.result, record.reason = "aborted", INTERRUPTED
            record.duration = time.perf_counter() - begin
            notify(Event("abort", game, record))
            if stop is None:
                raise
    finally:
        if clean_at_exit:
            clean(directory)
    return record


def _one_turn(directory: Path, game: Game, record: GameRecord, mover: str, opponent: str,
              time_limit: float, busy_poll: bool, stop, notify, encoding: str):
    """Play one turn; return None after a legal move, else (verdict (winner, loser), reason).

    Lines outside their writer's turn (docs/protocol.md, "One move per .go") need no special
    case, as in the real referee: a line read at one of the mover's ticks is the mover's move,
    whoever wrote it, so one in the opponent's name makes the mover win (Out-of-order move!); a line
    written after the tick that read the mover's move but before M is noted here for the
    next turn is older than M, so it is never read as a move.
    """
    move_path = directory / MOVE_FILE
    old = directory / f"{opponent}.go"
    if old.exists():
        old.unlink()
    try:
        mtime = os.stat(move_path).st_mtime
    except FileNotFoundError:
        raise RefereeCrash from None
    _touch(directory / f"{mover}.go")
    start = time.perf_counter()
    notify(Event("turn", game, record, player=mover))

    # The real loop: ticks at start + k * TICK while the clock is under the limit, the
    # first tick that sees the mtime go up reads at once; none after the limit.  A tick
    # missed because this process was held up is not replayed: the next one is due next.
    deadline = start + time_limit
    last_tick = tick_count(time_limit)
    tick = 1
    modified = False
    while tick <= last_tick:
        now = time.perf_counter()
        due = start + tick * TICK
        if now >= deadline:
            break
        if now < due:
            if not busy_poll:
                time.sleep(due - now + 0.0005)
            continue
        if stop is not None and stop.is_set():
            raise KeyboardInterrupt
        try:
            if os.stat(move_path).st_mtime > mtime:
                modified = True
                break
        except FileNotFoundError:
            raise RefereeCrash from None
        tick = max(tick + 1, int((time.perf_counter() - start) / TICK) + 1)
    if not modified:                            # the verdict comes at the limit
        while (now := time.perf_counter()) < deadline:
            if stop is not None and stop.is_set():
                raise KeyboardInterrupt
            if not busy_poll:
                time.sleep(min(TICK, deadline - now))
    seconds = time.perf_counter() - start

    if not modified:    # what move_file says then tells why (ref_sim.series.realbots.stall_notes)
        record.timeout_line = _line_at_time_out(move_path, encoding)
        return (opponent, mover), TIME_OUT
    try:
        line = read_move_line(move_path, encoding)
    except FileNotFoundError:
        raise RefereeCrash from None
    verdict = judge(game, line, mover, opponent)
    if verdict is not None:
        record.bad_line = line
        return verdict
    _, board, spot = parse_move_line(line)
    game.play(board, spot)
    move = MoveRecord(mover, board, spot, round(seconds, 4))
    record.moves.append(move)
    notify(Event("move", game, record, player=mover, move=move))
    return None


#: How much of ``move_file`` is looked at after a time-out: enough for any move line, and a
#: bot that filled the file costs nothing.
TIMEOUT_READ = 4096


def _line_at_time_out(move_path: Path, encoding: str) -> str | None:
    """The line the referee would read from the start of ``move_file`` now (None if it cannot
    be read): the real one does not read it at a time-out, so nothing here may end the game."""
    try:
        with open(move_path, "rb") as handle:
            data = handle.read(TIMEOUT_READ)
    except OSError:
        return None
    return last_line(referee_lines(data.decode(encoding, errors="replace")))


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


def _write_end(directory: Path, text: str, go_paths, encoding: str) -> None:
    """end_game first (one line, no newline), then create or truncate both .go files."""
    (directory / END_GAME).write_text(text, encoding=encoding)
    for path in go_paths:
        _touch(path)


def _linger(directory: Path, text: str, go_paths, linger, stop, encoding: str) -> None:
    """Wait like the real referee after the end, rewriting its end files now and then."""
    until = None if linger is True else time.monotonic() + float(linger)
    while until is None or time.monotonic() < until:
        period = LINGER_REWRITE_PERIOD
        if until is not None:
            period = min(period, max(0.0, until - time.monotonic()))
        if stop is not None:
            if stop.wait(period):
                return
        else:
            time.sleep(period)
        if until is None or time.monotonic() < until:
            _write_end(directory, text, go_paths, encoding)


# -- printing ----------------------------------------------------------------------------

class Printer:
    """An ``on_event`` callback that prints the game: boards unless ``boards=False``."""

    def __init__(self, stream: TextIO | None = None, boards: bool = True) -> None:
        self.stream = stream
        self.boards = boards

    def _print(self, *lines: str) -> None:
        stream = self.stream or sys.stdout
        for line in lines:
            print(line, file=stream)
        stream.flush()

    def __call__(self, event: Event) -> None:
        record = event.record
        if event.kind == "start" and self.boards:
            opening = ", ".join(f"{n} {b} {s}" for n, b, s in record.opening)
            self._print(f"{record.p1} is X and moves first; {record.p2} is O.",
                        f"Opening: {opening}", event.game.render(), "")
        elif event.kind == "move" and self.boards:
            move = event.move
            number = 4 + len(record.moves)
            self._print(f"Move {number}: {move.player} {move.board} {move.spot} "
                        f"({move.seconds:.2f} s)", event.game.render(), "")
        elif event.kind == "end":
            self._print(record.end_text)
        elif event.kind == "abort" and record.reason != INTERRUPTED:
            # Ctrl-C is reported once, by whoever handles it (the command line).
            self._print(f"Game aborted: {record.reason}")


# -- checks the commands share (the simulated referee's and the random agent's) ----------------

def encoding_problem(encoding: str | None, names) -> tuple[str | None, str | None]:
    """``(codec name, None)`` for ``--encoding`` (None: the locale's), or ``(None, why)``
    when Python does not know it or a player name cannot be written in it."""
    try:
        codec = check_encoding(encoding or locale_encoding())
    except ValueError as error:
        return None, str(error)
    for name in names:
        try:
            name.encode(codec)
        except UnicodeEncodeError:
            return None, f"the name {name!r} cannot be written in {codec}, the referee's encoding"
    return codec, None


def prepare_directory(path: str) -> str | None:
    """Make sure ``path`` is a directory, creating it (and its parents) if it does not
    exist; None when it is ready, else why it cannot be used."""
    if os.path.isdir(path):
        return None
    if os.path.exists(path):
        return f"--dir {path}: not a directory (it is a file)"
    try:
        os.makedirs(path)
    except OSError as error:
        return f"--dir {path}: cannot create it ({error.strerror or error})"
    return None
