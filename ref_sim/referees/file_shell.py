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
import os
import re
import secrets
import shutil
import stat
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TextIO
from collections.abc import Callable

from agent import platform_io
from agent.cli_common import NotRegularFile, open_regular
from ref_sim.referees.file_text import check_encoding, last_line, locale_encoding, referee_lines
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
    Unreadable,
    Wait,
    Write,
    parse_move_line,
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
    """Delete the referee's files in ``directory`` like the real one; return their names.

    Every entry but a directory goes, a symbolic link itself (never what it points to), so that
    one planted under a protocol name cannot outlive the game."""
    removed = []
    with os.scandir(directory) as entries:
        found = sorted((entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries)
    for name, is_directory in found:
        if not is_directory and is_cleanup_name(name):
            try:
                os.unlink(Path(directory) / name)
                removed.append(name)
            except FileNotFoundError:
                pass
    return removed


# -- the directory, as hostile ground -----------------------------------------------------

#: Opened with these, a symbolic link at the last step is refused (ELOOP) and a FIFO does not
#: wait for a writer.  Windows has neither flag (nor FIFOs); a link is looked for first there.
#: The most of ``move_file`` the referee reads.  A bot's move line is a dozen bytes and a game
#: has at most 81 moves, so a file this big is no bot's honest move; reading no further, a huge
#: or sparse file costs nothing.
MOVE_READ_LIMIT = 64 << 10
#: How many times a write replaces what a bot keeps planting at a name before it gives up.
WRITE_TRIES = 8


class NotAMoveFile(Exception):
    """What stands at ``move_file`` cannot be read as the real referee would: ``answer`` (an
    :class:`Unreadable`) says what it is and when it is judged."""

    def __init__(self, what: str, at_limit: bool = True) -> None:
        super().__init__(what)
        self.answer = Unreadable(what, at_limit)


def kind_of(mode: int) -> str:
    """What a file of ``mode`` (``st_mode``) is, in words.

    >>> kind_of(stat.S_IFIFO), kind_of(stat.S_IFDIR | 0o755)
    ('a FIFO (named pipe)', 'a directory')
    """
    for test, words in ((stat.S_ISREG, "a regular file"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                        (stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link"),
                        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                        (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return "not a regular file"


def read_start(path, limit: int) -> tuple[bytes, int]:
    """The first ``limit`` bytes of the regular file ``path`` and its size: no symbolic link
    followed, no FIFO waited on (:func:`agent.cli_common.open_regular`); :class:`NotAMoveFile`
    saying what it is otherwise, FileNotFoundError when nothing is there, another OSError when
    it cannot be opened."""
    try:
        handle = open_regular(path, follow=False)
    except NotRegularFile as odd:
        raise NotAMoveFile(str(odd) if odd.mode in (None, stat.S_IFREG) else kind_of(odd.mode)) from None
    try:
        size, parts, left = os.fstat(handle).st_size, [], limit
        while left > 0:
            part = os.read(handle, min(left, 1 << 16))
            if not part:
                break
            parts.append(part)
            left -= len(part)
        return b"".join(parts), size
    finally:
        os.close(handle)


def remove_entry(path: Path) -> None:
    """Remove whatever is at ``path`` (a file, a symbolic link itself, a FIFO, a directory with
    all in it) without following a link; nothing there is fine."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
            return
        aside = path.with_name(f".~uttt-removed-{secrets.token_hex(8)}")
        os.rename(path, aside)          # out of the way at once, then deleted (links not followed)
        shutil.rmtree(aside, ignore_errors=True)
    except FileNotFoundError:
        pass


def write_all(handle: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(handle, view):]


def write_file(directory: Path, name: str, text: str, encoding: str) -> None:
    """Write ``text`` to ``name`` in ``directory`` as the real referee's ``open(name, "w")``
    does (its newlines as the platform's, in ``encoding``): a regular file there is truncated
    and written in place, the same file, and a missing one created.  Anything else a bot put
    there (a symbolic link, a FIFO, a hard link, a directory) is replaced by a new file, written
    under a fresh name and renamed onto it: nothing outside the directory is ever written."""
    write_data(directory / name, text.replace("\n", os.linesep).encode(encoding))


def write_data(path: Path, data: bytes) -> None:
    """:func:`write_file`'s writing, of bytes: a regular file at ``path`` truncated and written in
    place, a missing one created, anything else replaced."""
    if not platform_io.unfollowed_link(path):
        created = False
        try:
            handle = os.open(path, os.O_WRONLY | platform_io.NO_FOLLOW | platform_io.NO_BLOCK | platform_io.BINARY)
        except FileNotFoundError:
            try:
                handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | platform_io.NO_FOLLOW | platform_io.BINARY,
                                 0o666)
                created = True
            except OSError:
                handle = None           # something came meanwhile: replaced below
        except OSError:
            handle = None               # a link (ELOOP), a FIFO nobody reads (ENXIO), a directory
        if handle is not None:
            try:
                info = os.fstat(handle)
                if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
                    # A new file is already empty: truncating it again would stamp a second
                    # mtime, and the real referee's open("w") creates a file in one step (an
                    # agent that saw its .go appear would see it change, as if re-created).
                    if not created:
                        os.ftruncate(handle, 0)
                    write_all(handle, data)
                    return
            finally:
                os.close(handle)
    replace_file(path, data)


def replace_file(path: Path, data: bytes) -> None:
    """Put a new regular file holding ``data`` at ``path``, whatever stands there now."""
    fresh = path.with_name(f".~uttt-referee-{secrets.token_hex(8)}.tmp")
    handle = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | platform_io.NO_FOLLOW | platform_io.BINARY, 0o666)
    try:
        try:
            write_all(handle, data)
        finally:
            os.close(handle)
        for tries_left in reversed(range(WRITE_TRIES)):
            try:
                os.replace(fresh, path)         # a link, a FIFO, a file: replaced at once
                return
            except OSError:                     # a directory there (or Windows: the file is open)
                if tries_left == 0:
                    raise
                remove_entry(path)
    finally:
        if os.path.lexists(fresh):
            os.unlink(fresh)


class RefereeCrash(Exception):
    """The real referee would crash here (an uncaught exception): no end_game is written.
    ``reason`` goes into the record: :data:`CRASHED` or an :data:`UNDECODABLE` line."""

    def __init__(self, reason: str = CRASHED, bad_line: str | None = None) -> None:
        super().__init__(reason)
        self.reason, self.bad_line = reason, bad_line


def read_move_line(path, encoding: str | None = None) -> str:
    """The line the real referee reads from ``move_file`` (see :func:`referee_lines`).

    Decoded as its ``open("move_file", "r")`` does: ``encoding`` (default: the locale's,
    :func:`locale_encoding`), strictly, and all of it (it calls ``readlines()``), so a byte
    the codec refuses anywhere in the file -- under UTF-8 any lone byte 0x80-0xFF, under
    cp1252 0x81 0x8D 0x8F 0x90 0x9D -- is the real referee's uncaught UnicodeDecodeError:
    :class:`RefereeCrash` with an :data:`UNDECODABLE` reason.  Under Latin-1 and cp1252 byte
    0xA0 is a no-break space, which ``str.split()`` takes for whitespace.

    At most :data:`MOVE_READ_LIMIT` bytes are read.  In a larger file a blank line within them
    ends the reading there, as in the real referee (which would still crash on an undecodable
    byte further on: here that byte is never read); without one, :class:`NotAMoveFile` (judged
    at once: the mover loses).  What is not a regular file (a FIFO, a directory, a symbolic
    link) is :class:`NotAMoveFile` too, judged at the limit; nothing there, FileNotFoundError.
    """
    encoding = encoding or locale_encoding()
    data, size = read_start(path, MOVE_READ_LIMIT + 1)
    whole = len(data) <= MOVE_READ_LIMIT
    data = data[:MOVE_READ_LIMIT]
    try:
        # A character cut at the limit is not an error: the file goes on.
        text = codecs.getincrementaldecoder(encoding)().decode(data, final=whole)
    except UnicodeDecodeError as error:
        shown = last_line(referee_lines(data.decode(encoding, errors="backslashreplace")))
        raise RefereeCrash(f"{UNDECODABLE} {encoding}: byte 0x{data[error.start]:02x} at "
                           f"offset {error.start} (UnicodeDecodeError)", shown) from None
    lines = referee_lines(text)                 # universal newlines, as its text file
    if whole:
        return last_line(lines)
    complete = lines if text.endswith(("\n", "\r")) else lines[:-1]
    if any(line.isspace() for line in complete):
        return last_line(complete)
    raise NotAMoveFile(f"a file of {size:,} bytes with no blank line in its first "
                       f"{MOVE_READ_LIMIT >> 10} KiB", at_limit=False)


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
             agents_gone: Callable[[], bool] | None = None,
             views: dict[str, Path] | None = None) -> GameRecord:
    """Referee one game in ``directory`` between ``name1`` and ``name2``; return its record.

    settings: the referee's timing and encoding (:class:`RefereeSettings`; its encoding None
    means the locale's, :func:`locale_encoding`, as the real referee's on this machine).  seed,
    first, opening: :class:`FileReferee`'s.  on_event: called with an :class:`Event` at each
    step.  stop: set it to abort a running game (treated like Ctrl-C).  agents_gone: when the
    caller launched the agents, a test that they have all exited: the clean-up after the end
    then comes as soon as it is true.  The real referee keeps its files until its operator
    closes it.  views: each player's own directory by name (``--isolate``): the referee's files
    are kept in each (:class:`_ViewsShell`), and ``directory`` is not used.
    """
    settings = settings or RefereeSettings()
    settings = replace(settings, encoding=check_encoding(settings.encoding or locale_encoding()))
    referee = FileReferee(name1, name2, settings, seed=seed, first=first, opening=opening,
                          started=time.time())
    if views is None:
        shell = _Shell(Path(directory), settings, on_event, stop, agents_gone)
    else:
        shell = _ViewsShell({name: Path(view) for name, view in views.items()}, settings, on_event, stop,
                            agents_gone)
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
        if isinstance(action, Wait):
            return self.wait(action.until, action.agents)
        if isinstance(action, Notify):
            if self.on_event is not None:
                self.on_event(action.event)
            return None
        return self.in_directory(self.directory, action)

    def in_directory(self, directory: Path, action):
        """``action`` on the files of ``directory``: its answer."""
        if isinstance(action, Stat):
            return mtime_of(directory / MOVE_FILE)
        if isinstance(action, Write):
            write_file(directory, action.name, action.text, self.settings.encoding)
        elif isinstance(action, Remove):
            remove_entry(directory / action.name)
        elif isinstance(action, ReadMove):
            try:
                return read_move_line(directory / MOVE_FILE, self.settings.encoding)
            except FileNotFoundError:
                return Crash()
            except RefereeCrash as crash:
                return Crash(crash.reason, crash.bad_line)
            except NotAMoveFile as odd:
                return odd.answer
            except OSError as error:    # the real referee's open() fails: it would crash
                return Unreadable(f"a file it may not read ({error.strerror or error})")
        elif isinstance(action, PeekMove):
            return line_at_time_out(directory / MOVE_FILE, self.settings.encoding)
        elif isinstance(action, Clean):
            clean(directory)
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


def mtime_of(path: Path) -> float | None:
    """The modification time of what stands at ``path`` (a link itself: nothing is followed)."""
    try:
        return os.lstat(path).st_mtime
    except FileNotFoundError:
        return None


#: How often, between the referee's looks, the mover's ``move_file`` is copied into the other
#: views when it changed: an opponent that answers a line the moment it appears (out of turn) is
#: then seen doing so before the referee's next look, as in the shared directory.
MIRROR_INTERVAL = 0.005


class _ViewsShell(_Shell):
    """The referee's files kept in each player's own directory, its view (``--isolate``): what
    the referee writes goes into every view, and what the mover writes to its ``move_file`` is
    copied into the others' (within :data:`MIRROR_INTERVAL`, and again when the referee reads
    it), as the opponent would find it in the shared directory. A move is read from the mover's
    view only, so what a player does to the files of its own view (deletes a ``.go``, forges a
    line at the other's turn) reaches nobody else.

    One thing a player writes out of turn still counts, so that games without tampering keep the
    real referee's verdicts: a move line in its own name (it loses, ``Out-of-order move!``), seen
    at the mover's next look as it would be in the shared directory. Anything else written out of
    turn is seen once and left to its writer."""

    def __init__(self, views: dict[str, Path], settings: RefereeSettings, on_event, stop, agents_gone) -> None:
        super().__init__(None, settings, on_event, stop, agents_gone)
        self.views = views
        self.written: dict[str, float | None] = {}   # each view's move_file as the referee last left it
        self.mover: str | None = None
        self.source: str | None = None               # whose move_file the next read is of

    def in_directory(self, directory, action):
        if isinstance(action, (Write, Remove, Clean)):
            for view in self.views.values():
                super().in_directory(view, action)
            if getattr(action, "name", MOVE_FILE) == MOVE_FILE:
                self.note_all()
            return None
        if isinstance(action, Stat):
            return self.stat(action.player)
        source = self.source if isinstance(action, ReadMove) and self.source else action.player
        answer = super().in_directory(self.views[source], action)
        if isinstance(action, ReadMove) and isinstance(answer, str):
            self.hand_on(source)
        return answer

    def note_all(self) -> None:
        self.written = {name: mtime_of(view / MOVE_FILE) for name, view in self.views.items()}

    def stat(self, mover: str) -> float | None:
        """The mover's ``move_file``'s mtime, or a later one of a line another player wrote in
        its own name since the referee last wrote its view (then the next read is of that)."""
        self.mover = self.source = mover
        newest = mtime_of(self.views[mover] / MOVE_FILE)
        if newest is None:
            return None                 # the mover removed it: the real referee crashes
        for name, view in self.views.items():
            seen = mtime_of(view / MOVE_FILE)
            if name == mover or seen is None or seen == self.written.get(name):
                continue
            self.written[name] = seen   # looked at once, whatever it says
            if seen > newest and self.own_line(view, name):
                newest, self.source = seen, name
        return newest

    def own_line(self, view: Path, name: str) -> bool:
        try:
            parsed = parse_move_line(read_move_line(view / MOVE_FILE, self.settings.encoding))
        except (OSError, NotAMoveFile, RefereeCrash):
            return False
        return parsed is not None and parsed[0] == name

    def hand_on(self, source: str) -> None:
        """The bytes of ``source``'s ``move_file`` (at most what the referee reads), into every
        other view's."""
        try:
            data, _ = read_start(self.views[source] / MOVE_FILE, MOVE_READ_LIMIT)
        except (OSError, NotAMoveFile):
            return                      # gone or replaced meanwhile: the referee's read decides
        for name, view in self.views.items():
            if name != source:
                write_data(view / MOVE_FILE, data)
        self.note_all()

    def wait(self, until: float, agents: bool) -> bool | None:
        while True:
            if super().wait(min(until, time.perf_counter() + MIRROR_INTERVAL), agents):
                return True
            if self.mover is not None and mtime_of(self.views[self.mover] / MOVE_FILE) not in (
                    None, self.written.get(self.mover)):
                self.hand_on(self.mover)
            if time.perf_counter() >= until:
                return None


#: How much of ``move_file`` is looked at after a time-out: enough for any move line, and a
#: bot that filled the file costs nothing.
TIMEOUT_READ = 4096


def line_at_time_out(move_path: Path, encoding: str) -> str | None:
    """The line the referee would read from the start of ``move_file`` now (None if it cannot
    be read): the real one does not read it at a time-out, so nothing here may end the game."""
    try:
        data, _ = read_start(move_path, TIMEOUT_READ)
    except (OSError, NotAMoveFile):
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
