"""The CS 4341 Ultimate Tic-Tac-Toe referee (v7) on a real directory, headless.

:class:`~ref_sim.referees.file_referee.FileReferee` decides everything (the opening, the turns,
when to look at ``move_file``, the verdicts, how long the files stay); :func:`run_game` is the thin
shell around it that does what it asks: the files (clean-up, writes, looks and reads as the real
referee's Python makes them), the clock, and Ctrl-C or a stop. Every file the real referee
writes appears in the same order, with the same timing (docs/protocol.md).

>>> record = run_game(directory, "Walrus", "Otter", RefereeSettings(time_limit=10))  # doctest: +SKIP
>>> record.end_text                                                                  # doctest: +SKIP
'END: Walrus WINS! Otter LOSES! The winning player has won 3 local boards in a row ...'
"""

from __future__ import annotations

import codecs
import io
import locale
import os
import re
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TextIO
from collections.abc import Callable, Iterable

from ref_sim.referees.file_referee import (
    CRASHED,
    INTERRUPTED,
    MIN_TIME_LIMIT,
    MOVE_FILE,
    TICK,
    UNDECODABLE,
    Clean,
    Crash,
    Done,
    Event,
    FileReferee,
    GameRecord,
    Notify,
    PeekMove,
    ReadMove,
    RefereeSettings,
    Remove,
    Stat,
    Wait,
    Write,
)

# The real referee's clean-up patterns, applied with re.match (anchored at the start only),
# to regular files.  "(:?.*).go" therefore deletes any name with "go" after its first char.
CLEANUP_PATTERNS = [re.compile(p) for p in ("move_file", "(:?.*).go", "end_game",
                                            "first_four_moves")]


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

    Not shared with the agent's own copy (agent.file_protocol) on purpose: the simulator is the
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


def run_game(directory, name1: str, name2: str, settings: RefereeSettings | None = None, *,
             seed: int | None = None, first: str | None = None,
             opening: list[tuple[int, int]] | None = None,
             on_event: Callable[[Event], None] | None = None,
             stop: threading.Event | None = None,
             agents_gone: Callable[[], bool] | None = None) -> GameRecord:
    """Referee one game in ``directory`` between ``name1`` and ``name2``; return its record.

    settings: the referee's timing and encoding (:class:`RefereeSettings`; its encoding None
    means the locale's, :func:`locale_encoding`, as the real referee's on this machine).  seed,
    first, opening: :class:`FileReferee`'s.  on_event: called with an :class:`Event` at each
    step.  stop: set it to abort a running game (treated like Ctrl-C).  agents_gone: when the
    caller launched the agents, a test that they have all exited: the clean-up after the end
    then comes as soon as it is true.  The real referee keeps its files until its operator
    closes it.
    """
    settings = settings or RefereeSettings()
    settings = replace(settings, encoding=check_encoding(settings.encoding or locale_encoding()))
    referee = FileReferee(name1, name2, settings, seed=seed, first=first, opening=opening,
                          started=time.time())
    shell = _Shell(Path(directory), settings, on_event, stop, agents_gone)
    action = referee.start(time.perf_counter())
    while not isinstance(action, Done):
        try:
            answer = shell.perform(action)
        except KeyboardInterrupt:
            action = referee.interrupt(time.perf_counter())
        else:
            action = referee.send(time.perf_counter(), answer)
    if stop is None and referee.interrupted_game:
        raise KeyboardInterrupt         # Ctrl-C aborted the game: the caller says so
    return referee.record


class _Shell:
    """What :func:`run_game` does for the referee: the files of ``directory``, the clock, the stop."""

    def __init__(self, directory: Path, settings: RefereeSettings, on_event, stop, agents_gone) -> None:
        self.directory, self.settings = directory, settings
        self.on_event, self.stop, self.agents_gone = on_event, stop, agents_gone

    def perform(self, action):
        if isinstance(action, Stat):
            try:
                return os.stat(self.directory / MOVE_FILE).st_mtime
            except FileNotFoundError:
                return None
        if isinstance(action, Wait):
            return self.wait(action.until, action.agents)
        if isinstance(action, Write):
            (self.directory / action.name).write_text(action.text, encoding=self.settings.encoding)
        elif isinstance(action, Remove):
            (self.directory / action.name).unlink(missing_ok=True)
        elif isinstance(action, ReadMove):
            try:
                return read_move_line(self.directory / MOVE_FILE, self.settings.encoding)
            except FileNotFoundError:
                return Crash()
            except RefereeCrash as crash:
                return Crash(crash.reason, crash.bad_line)
        elif isinstance(action, PeekMove):
            return line_at_time_out(self.directory / MOVE_FILE, self.settings.encoding)
        elif isinstance(action, Notify):
            if self.on_event is not None:
                self.on_event(action.event)
        elif isinstance(action, Clean):
            clean(self.directory)
        else:
            raise TypeError(f"not a referee action: {action!r}")
        return None

    def wait(self, until: float, agents: bool) -> bool | None:
        """Sleep (or spin, busy-polling like the real referee) until ``until``; KeyboardInterrupt
        once ``stop`` is set; True as soon as every agent has exited, when ``agents``."""
        watch = agents and self.agents_gone is not None
        while (left := until - time.perf_counter()) > 0:
            if watch and self.agents_gone():
                return True
            step = min(left, 0.02) if watch else left
            if self.stop is not None:
                if self.stop.wait(0 if self.settings.busy_poll else step):
                    raise KeyboardInterrupt
            elif not self.settings.busy_poll:
                time.sleep(step)
        if self.stop is not None and self.stop.is_set():
            raise KeyboardInterrupt
        return None


#: How much of ``move_file`` is looked at after a time-out: enough for any move line, and a
#: bot that filled the file costs nothing.
TIMEOUT_READ = 4096


def line_at_time_out(move_path: Path, encoding: str) -> str | None:
    """The line the referee would read from the start of ``move_file`` now (None if it cannot
    be read): the real one does not read it at a time-out, so nothing here may end the game."""
    try:
        with open(move_path, "rb") as handle:
            data = handle.read(TIMEOUT_READ)
    except OSError:
        return None
    return last_line(referee_lines(data.decode(encoding, errors="replace")))


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
