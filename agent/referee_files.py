"""The referee's files as untrusted input: read them as the referee does, write the move safely.

Anyone who can write in the referee's directory can put anything at the protocol files' names (a
directory, a FIFO, hundreds of megabytes, a symlink); nothing there may crash the agent, block
it, fill its memory or make it write outside the directory. :class:`FileReader` reads each version
of a file once, in one bounded streaming pass (:class:`LineScanner`, no I/O), never opening what
is not a regular file; :class:`MoveWriter` writes a move as one line renamed onto ``move_file``
from a temp file no planted link can redirect (:func:`create_temp_file`). How the referee reads,
and each case: docs/protocol.md, "How the referee reads `move_file`", "Writing a move safely" and
"What a bot must survive".
"""

from __future__ import annotations

import codecs
import errno
import logging
import math
import os
import re
import secrets
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import platform_io

log = logging.getLogger(__name__)

#: Bytes read at a time: the memory a read needs is a few times this, whatever the file's size.
CHUNK_SIZE = 1 << 20
#: The longest line kept (after its leading whitespace): a move line is ~12 characters. Only a
#: hostile file has longer ones; what is cut off could only make the line less valid.
MAX_LINE_CHARS = 4096
#: Lines kept from the start of a file: the opening has 4 (one more shows it has too many).
FIRST_LINES_KEPT = 5
#: Characters of the decoded text kept for log messages.
SHOWN_CHARS = 256
#: A file this large is worth one log line: what the referee and the agent spend reading it.
LARGE_FILE = 1 << 20
#: A version read this soon after its mtime may still change without its identity changing
#: (Linux stamps mtimes from a clock that ticks every few ms): it is read again next time.
#: Whole-second timestamps need the coarsest granule (FAT: 2 s).
RACY_SECONDS = 0.05
RACY_SECONDS_COARSE = 2.0

#: Name of the brief temp file a move is written to before the rename. It holds neither the
#: player name (which may contain "go") nor any protocol prefix, and its token is hexadecimal
#: (no "g"), so none of the referee's clean-up patterns matches it (docs/protocol.md,
#: "Clean-up: files the referee deletes"). The token is
#: random: nobody can plant a symlink at the name in advance (and O_EXCL refuses one anyway).
TEMP_NAME_TEMPLATE = "~uttt-move-{token}.tmp"
#: Names tried before giving up on a temp file (each taken name is someone else's file).
TEMP_NAME_ATTEMPTS = 8


#: How many times a rename onto move_file is retried on PermissionError (Windows), each retry only
#: until the move's retry deadline (agent.clock.rename_retry_end, well before the referee's limit);
#: then the line is written in place (docs/protocol.md, "Writing a move safely").
REPLACE_ATTEMPTS = 20
REPLACE_RETRY_SLEEP = 0.01
# Windows refuses a rename while another process has the target open: retrying helps. On POSIX
# a refused rename stays refused (sticky directory, move_file owned by another user): write in
# place at once. Which refusals are retried: agent.platform_io.transient, the reads' rule too.

#: How long a read-side look (a stat, an open) refused by a file being replaced or deleted this
#: instant (platform_io.transient: Windows' sharing violations, delete-pending files) is tried
#: again before that file counts as not there, as a file gone counts on POSIX: a replacement is
#: there again by then, a deletion is gone.
TRANSIENT_WAIT = 0.05
TRANSIENT_RETRY_SLEEP = 0.002

#: Timestamp steps a coarse filesystem may have (whole seconds; FAT's two), tried in turn when a
#: write did not raise move_file's mtime.
TIMESTAMP_GRANULES_NS = (1_000_000_000, 2_000_000_000)

#: Pause between two writes when move_file's mtime did not go up and could not be set
#: (docs/protocol.md, "Writing a move safely").
REWRITE_PAUSE = 0.05


def temp_name(token=None) -> str:
    """A temp file name: ``~uttt-move-<16 hex digits>.tmp``, or with the given ``token``."""
    return TEMP_NAME_TEMPLATE.format(token=secrets.token_hex(8) if token is None else token)


def _stat(path):
    """The stat of every look at the referee's files (:attr:`Files.stat`)."""
    return os.stat(path)


def _open(path, flags: int, mode: int = 0o777) -> int:
    """The open of every read of the referee's files and of a move's temp file (:attr:`Files.open`)."""
    return os.open(path, flags, mode)


@dataclass(frozen=True)
class Files:
    """How the agent reaches the referee's files: the calls that look at and open them (``stat``,
    ``open``), where a move's temp file names come from (``temp_name``), and whether Windows' rule
    for refusals applies (``windows``: :func:`agent.platform_io.transient`), with how long such a
    refusal is waited out (``transient_wait``). :data:`SYSTEM` is this machine's; tests pass one
    that answers as Windows does while a file is replaced or deleted, on any platform."""

    windows: bool = platform_io.WINDOWS
    stat: Callable = _stat
    open: Callable = _open
    temp_name: Callable = temp_name
    transient_wait: float = TRANSIENT_WAIT

    def transient(self, error: BaseException) -> bool:
        """Is ``error`` a file being replaced or deleted this instant (:func:`agent.platform_io.transient`)?"""
        return platform_io.transient(error, windows=self.windows)

    def patient(self, call, *args):
        """``call(*args)``, a transient refusal (:meth:`transient`: a file being replaced or deleted
        on Windows) tried again for up to :attr:`transient_wait`, then raised; the one rule of
        every read-side look. A transient refusal ends as what comes next: the file replaced, or
        gone (FileNotFoundError)."""
        deadline = None
        while True:
            try:
                return call(*args)
            except OSError as error:
                if not self.transient(error):
                    raise
                now = time.perf_counter()
                deadline = now + self.transient_wait if deadline is None else deadline
                if now >= deadline:
                    raise
                time.sleep(TRANSIENT_RETRY_SLEEP)


#: This machine's files: its system calls and its platform's rule.
SYSTEM = Files()


class TempNamesTaken(FileExistsError):
    """Every temp name tried already existed (files or symlinks someone planted)."""


def create_temp_file(directory, data: bytes, *, files: Files = SYSTEM) -> Path:
    """Create a new file holding ``data`` in ``directory`` under a fresh :func:`temp_name` and
    return its path. ``O_EXCL`` (with ``O_NOFOLLOW`` where defined) never opens anything that
    already exists at the name, a symlink included. TempNamesTaken after ``TEMP_NAME_ATTEMPTS``
    taken names; any other OSError as it comes. Nothing is left behind on an error."""
    flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | platform_io.NO_FOLLOW | platform_io.BINARY
             | platform_io.NO_INHERIT)
    for _ in range(TEMP_NAME_ATTEMPTS):
        path = Path(directory) / files.temp_name()
        try:
            fd = files.open(path, flags, 0o644)
        except FileExistsError:
            continue
        except OSError as error:
            if platform_io.refused_link(error):  # O_NOFOLLOW met a symlink
                continue
            raise
        try:
            # Look at the new file before writing, as open() does: Linux (6.13+) stamps a change with
            # its coarse clock unless the file's times were looked at since the last change, so a
            # write to a fresh file nobody looked at keeps the creation's coarse stamp, which can
            # lie below the fine one the referee recorded for move_file: the move would not count.
            os.fstat(fd)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except BaseException:
            os.close(fd)
            _remove(path)
            raise
        os.close(fd)
        return path
    raise TempNamesTaken(errno.EEXIST, f"{TEMP_NAME_ATTEMPTS} temp file names in a row already existed",
                         str(directory))


def _remove(path) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


# -- what the referee reads ------------------------------------------------------------------------


@dataclass(frozen=True)
class FileLines:
    """What the referee reads from one protocol file: the lines before the first blank one.

    ``first``: the first ``FIRST_LINES_KEPT`` of them, stripped; ``count``: how many there are;
    ``last``: ``(number, line)`` of the last (the move, in move_file), None when there is none;
    ``shown``: the start of the decoded text, for messages; ``undecodable``: bytes the encoding
    cannot decode anywhere in the file (the referee decodes all of it, and crashes on them);
    ``unreadable``: why the file could not be read at all (a directory, a FIFO...), else None.
    Lines longer than ``MAX_LINE_CHARS`` are cut there."""

    first: tuple[str, ...] = ()
    count: int = 0
    last: tuple[int, str] | None = None
    shown: str = ""
    undecodable: bool = False
    unreadable: str | None = None
    size: int = 0

    @classmethod
    def from_text(cls, text: str, undecodable: bool = False) -> FileLines:
        scanner = LineScanner()
        scanner.feed(text)
        return scanner.finish(undecodable=undecodable, size=len(text))


#: A blank line (only whitespace, str.isspace()'s) at the start of the text, or after a newline.
_BLANK_HERE = re.compile(r"[^\S\n]*\n")
_BLANK_AFTER_NEWLINE = re.compile(r"\n[^\S\n]*\n")


class LineScanner:
    """Finds :class:`FileLines` in decoded text fed piece by piece, in memory bounded by the
    pieces' size: the referee's reading (:func:`agent.file_turns.referee_lines`) without holding the
    text. Only ``\\n``, ``\\r`` and ``\\r\\n`` end a line (a ``\\r`` at a piece's end waits for the
    next piece); a line of whitespace only ends the reading.

    >>> scanner = LineScanner()
    >>> for piece in ("A 1 2\\r", "\\nB 3", " 4\\n  \\n", "C 5 6\\n"):
    ...     scanner.feed(piece)
    >>> lines = scanner.finish()
    >>> lines.count, lines.last, lines.first
    (2, (2, 'B 3 4'), ('A 1 2', 'B 3 4'))
    """

    def __init__(self) -> None:
        self.count = 0
        self.first: list[str] = []
        self.last: tuple[int, str] | None = None
        self.done = False  # a blank line was met: the rest does not count
        self._current = ""  # the line being read, without its leading whitespace, cut
        self._carriage_return = False
        self._shown: list[str] = []
        self._shown_chars = 0

    def feed(self, text: str) -> None:
        if self._shown_chars < SHOWN_CHARS:
            self._shown.append(text[:SHOWN_CHARS - self._shown_chars])
            self._shown_chars += len(self._shown[-1])
        if self.done or not text:
            return
        if self._carriage_return:
            text = "\r" + text
            self._carriage_return = False
        if text.endswith("\r"):
            self._carriage_return, text = True, text[:-1]
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        self._scan(text)

    def _scan(self, text: str) -> None:
        cut = text.find("\n")
        if cut < 0:
            self._extend(text)
            return
        self._extend(text[:cut])
        if not self._end_line():
            return
        start = cut + 1
        if _BLANK_HERE.match(text, start):
            self.done = True
            return
        blank = _BLANK_AFTER_NEWLINE.search(text, start)
        if blank is not None:
            self._whole_lines(text, start, blank.start())
            self.done = True
            return
        end = text.rfind("\n")
        if end > cut:
            self._whole_lines(text, start, end)
        self._extend(text[end + 1:])

    def _extend(self, piece: str) -> None:
        if not self._current:
            piece = piece.lstrip()
        room = MAX_LINE_CHARS - len(self._current)
        if piece and room > 0:
            self._current += piece[:room]

    def _end_line(self) -> bool:
        """The line read so far is complete: False if it was blank (the reading stops)."""
        line, self._current = self._current.strip(), ""
        if not line:
            self.done = True
            return False
        self._add(1, line, (line,))
        return True

    def _whole_lines(self, text: str, start: int, end: int) -> None:
        """``text[start:end]``: complete lines, none blank, separated by newlines."""
        count = text.count("\n", start, end) + 1
        first = []
        at = start
        while len(self.first) + len(first) < FIRST_LINES_KEPT and at <= end:
            stop = text.find("\n", at, end)
            stop = end if stop < 0 else stop
            first.append(text[at:stop].strip()[:MAX_LINE_CHARS])
            at = stop + 1
        last_start = text.rfind("\n", start, end) + 1 or start
        self._add(count, text[last_start:end].strip()[:MAX_LINE_CHARS], first)

    def _add(self, count: int, last: str, first) -> None:
        self.count += count
        self.last = (self.count, last)
        self.first.extend(first[:FIRST_LINES_KEPT - len(self.first)])

    def finish(self, *, undecodable: bool = False, unreadable: str | None = None, size: int = 0) -> FileLines:
        if self._carriage_return:  # a lone \r at the very end ends a line
            self._carriage_return = False
            self._scan("\n")
        if not self.done and self._current.strip():
            self._end_line()  # a last line without a newline counts
        return FileLines(tuple(self.first), self.count, self.last, "".join(self._shown), undecodable, unreadable,
                         size)


def _kind(mode: int) -> str | None:
    """Why the referee cannot read a file of this mode as text, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _version(st) -> tuple:
    # (device, inode, mtime, size) as agent.file_turns.Seen.identity, and the ctime: a chmod changes it.
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size, st.st_ctime_ns)


class FileReader:
    """Reads protocol files as the referee does: decoded with its encoding, universal newlines, the
    lines up to the first blank one (docs/protocol.md, "How the referee reads `move_file`"), in one
    streaming pass in bounded memory, each version once. A directory, FIFO, socket or device is
    never opened (a FIFO would block); a file that cannot be opened is "unreadable"; each oddity is
    logged once, when that version is first read.

    ``read(path)`` returns :class:`FileLines`, or None when the file does not exist (or cannot be
    opened right now on Windows, where a file being replaced refuses to open). ``encoding``: the
    referee's; ``chunk_size``: bytes per read (tests make it tiny to cross every boundary);
    ``files``: how the files are reached (:class:`Files`)."""

    def __init__(self, encoding: str, *, chunk_size: int = CHUNK_SIZE, files: Files = SYSTEM) -> None:
        self.encoding = encoding
        self.chunk_size = chunk_size
        self.files = files
        self._known: dict[str, tuple[tuple, FileLines]] = {}  # path -> (version, what it holds)
        #: Versions read from disk so far (a test's and a benchmark's check that nothing is read twice).
        self.reads = 0

    def read(self, path) -> FileLines | None:
        key = os.fspath(path)
        try:
            st = stat_or_none(key, self.files)  # follows a symlink, as the referee's open() does
        except OSError as error:  # a symlink loop, a name too long, a directory we may not search
            return self._unreadable(key, ("stat", error.errno, _stat_version(key, os.lstat)),
                                    error.strerror or str(error))
        if st is None:
            return None
        version = _version(st)
        known = self._known.get(key)
        if known is not None and known[0] == version:
            return known[1]
        kind = _kind(st.st_mode)
        if kind is not None:
            return self._unreadable(key, version, kind)
        return self._read(key, time.time())

    def _unreadable(self, key: str, version, why: str) -> FileLines:
        """FileLines saying ``why``; logged once per ``version`` of the file."""
        known = self._known.get(key)
        if known is not None and known[0] == version and known[1].unreadable == why:
            return known[1]
        lines = FileLines(unreadable=why)
        self._known[key] = (version, lines)
        log.warning("%s is %s: it cannot be read as the referee reads it", os.path.basename(key),
                    why if why.startswith(("a ", "not ")) else f"unreadable ({why})")
        return lines

    def _read(self, key: str, started: float) -> FileLines | None:
        try:
            # O_NONBLOCK: if a FIFO took the file's place since the stat, opening it must not block.
            fd = self.files.patient(self.files.open, key,
                                    os.O_RDONLY | platform_io.NO_BLOCK | platform_io.BINARY | platform_io.NO_INHERIT)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as error:
            if self.files.transient(error):  # still being replaced or deleted: look again next time
                return None
            return self._unreadable(key, _stat_version(key), error.strerror or str(error))
        try:
            st = os.fstat(fd)
            kind = _kind(st.st_mode)
            if kind is not None:
                return self._unreadable(key, _version(st), kind)
            lines = self._scan(fd, st.st_size)
            after = os.fstat(fd)
        finally:
            os.close(fd)
        self.reads += 1
        version = _version(st)
        racy = RACY_SECONDS_COARSE if whole_seconds(st) else RACY_SECONDS
        if _version(after) == version and started - st.st_mtime_ns / 1e9 > racy:
            self._known[key] = (version, lines)
        else:
            self._known.pop(key, None)
        if lines.size >= LARGE_FILE:
            log.warning("%s is %.0f MB (%d lines before the first blank one): read whole in %.2f s, as the referee "
                        "reads it", os.path.basename(key), lines.size / 1e6, lines.count, time.time() - started)
        return lines

    def _scan(self, fd: int, size: int) -> FileLines:
        """One pass over the file's first ``size`` bytes (a file that grows meanwhile has changed:
        the caller's next look sees a new version)."""
        decoder = codecs.getincrementaldecoder(self.encoding)()
        undecodable = False
        scanner = LineScanner()
        done = 0
        while done < size:
            try:
                data = os.read(fd, min(self.chunk_size, size - done))
            except OSError as error:  # EIO...
                return scanner.finish(unreadable=error.strerror or str(error), size=done)
            if not data:
                break  # truncated meanwhile
            done += len(data)
            text, decoder, undecodable = self._decode(decoder, data, undecodable)
            scanner.feed(text)
        text, decoder, undecodable = self._decode(decoder, b"", undecodable, final=True)
        scanner.feed(text)
        return scanner.finish(undecodable=undecodable, size=done)

    def _decode(self, decoder, data: bytes, undecodable: bool, *, final: bool = False):
        """``(text, decoder, undecodable)``: decoded strictly, as the referee decodes; from the first
        error on, by a decoder that replaces what it cannot decode (the scan goes on: the line may
        still be shown and judged)."""
        if undecodable:
            return decoder.decode(data, final), decoder, True
        pending = decoder.getstate()[0]  # bytes of a character cut at the previous chunk's end
        try:
            return decoder.decode(data, final), decoder, False
        except UnicodeDecodeError:
            replacing = codecs.getincrementaldecoder(self.encoding)(errors="replace")
            return replacing.decode(pending + data, final), replacing, True


def _stat_version(key: str, how=os.stat):
    try:
        return _version(how(key))
    except OSError:
        return None


class MoveWriter:
    """Puts my move lines into move_file so that the referee sees each (docs/protocol.md,
    "Writing a move safely"): a whole line by the rename of a temp file (in place where renames
    are refused), and an mtime above the referee's record of it. ``say_once(key, level, text)``
    logs a warning once a game; ``on_coarse()`` is told of whole-second timestamps;
    ``too_late()`` says a rewrite could now only land outside my turn; ``files``: how the files
    are reached (:class:`Files`). ``_replace`` and ``_set_mtime`` are methods so that tests can
    stand in for odd filesystems."""

    def __init__(self, move_path: Path, *, say_once, on_coarse, too_late, files: Files = SYSTEM) -> None:
        self.move_path = Path(move_path)
        self.files = files
        self._say_once, self._on_coarse, self._too_late = say_once, on_coarse, too_late
        self._temp_path: Path | None = None  # the move's temp file while it exists

    def write(self, line: str, hard_deadline: float, retry_until: float | None = None) -> float | None:
        """Put ``line`` into move_file and make sure its mtime went up (docs/protocol.md, "Writing a
        move safely"). Returns when (perf_counter) the first write landed, None if none did.

        The referee recorded move_file's mtime just before it created my .go, and nobody writes
        move_file after that but me: the mtime seen now is the one to beat. A write that did not
        beat it (whole-second timestamps, or an mtime someone set in the future) gets the first
        whole second above it as its timestamp (:meth:`_raise_mtime`); where that is refused, the
        line is rewritten after the next whole second (else 50 ms), until the referee's latest
        possible limit. A rename Windows refuses is retried only until ``retry_until`` (default:
        ``hard_deadline``), then the line goes in place at once, in time for the referee's look."""
        if retry_until is None:
            retry_until = hard_deadline
        before = stat_or_none(self.move_path, self.files)
        before_ns = before.st_mtime_ns if before is not None else -1
        attempt = 0
        landed = None
        while True:
            attempt += 1
            try:
                self._write_once(line, min(retry_until, hard_deadline))
                if landed is None:
                    landed = time.perf_counter()
            except OSError as error:  # disk full, a locked file, a read-only mount...
                if time.perf_counter() + REWRITE_PAUSE > hard_deadline:
                    log.error("could not write my move to %s: %s; the referee will not see it", self.move_path, error)
                    return landed
                log.warning("writing my move failed (%s); retrying", error)
                time.sleep(REWRITE_PAUSE)
                continue
            after = stat_or_none(self.move_path, self.files)
            if after is not None and after.st_mtime_ns > before_ns:
                if attempt > 1:
                    log.info("move_file mtime went up after %d writes (coarse timestamps)", attempt)
                return landed
            coarse = whole_seconds(after)
            if coarse:
                self._on_coarse()
            if after is not None and self._raise_mtime(before_ns):
                log.info("my write left %s's mtime at the referee's record of it (%s); set it to the next whole "
                         "second", self.move_path.name, "coarse timestamps" if coarse else "an mtime in the future")
                return landed
            pause = REWRITE_PAUSE
            if coarse:
                # Land just past the next whole second: the first moment a write can register.
                # The filesystem's clock may lag time.time() by a scheduler tick, hence 15 ms.
                now = time.time()
                pause = max(min(math.floor(now - 0.015) + 1.015 - now, REWRITE_PAUSE), 0.001)
            if time.perf_counter() + pause > hard_deadline:
                log.error("move_file mtime did not go up after %d writes; the referee may not see my move", attempt)
                return landed
            log.debug("move_file mtime did not go up (coarse timestamps?); rewriting in %.0f ms", pause * 1000)
            time.sleep(pause)
            if self._too_late():
                return landed

    def _raise_mtime(self, before_ns: int) -> bool:
        """Give move_file the first timestamp above the referee's record ``before_ns`` that the
        filesystem keeps: the next whole second, else the one after (FAT keeps even seconds). True
        once its mtime is above ``before_ns``.

        The referee only asks whether the mtime went up (docs/protocol.md, "What the referee does"):
        waiting for the clock to reach the next second can take until after its last look at a 1 s
        limit. The stamp is what a write just after that second would have carried, at most one
        granule ahead of the clock (or of a future mtime someone else set)."""
        for granule in TIMESTAMP_GRANULES_NS:
            try:
                self._set_mtime((before_ns // granule + 1) * granule)
            except OSError:  # not the file's owner (written in place into another user's file)
                return False
            after = stat_or_none(self.move_path, self.files)
            if after is not None and after.st_mtime_ns > before_ns:
                return True
        return False

    def _set_mtime(self, mtime_ns: int) -> None:
        """Set move_file's mtime; a method so tests can stand in for coarse filesystems."""
        os.utime(self.move_path, ns=(os.stat(self.move_path).st_atime_ns, mtime_ns))

    def _write_once(self, line: str, retry_until: float) -> None:
        """One write of ``line`` onto move_file: a temp file renamed over it, or in place if the
        rename is refused for good, or still refused at ``retry_until`` (perf_counter)."""
        data = line.encode("ascii")
        try:
            self._temp_path = create_temp_file(self.move_path.parent, data, files=self.files)
        except TempNamesTaken as error:
            self._say_once("temp-taken", logging.WARNING,
                           f"could not create my temp file in {self.move_path.parent}: {error.strerror} (files or symlinks "
                           f"planted there?); writing my move into {self.move_path.name} in place instead")
            self._write_in_place(data)
            return
        try:
            attempt = 0
            while True:
                try:
                    self._replace(self._temp_path, self.move_path)
                    self._temp_path = None  # renamed: nothing of mine is left at that name
                    return
                except PermissionError as error:
                    refused = error
                attempt += 1
                # Windows: someone (the referee) has move_file open this instant; retry while time allows.
                if (not self.files.transient(refused) or attempt >= REPLACE_ATTEMPTS
                        or time.perf_counter() + REPLACE_RETRY_SLEEP > retry_until):
                    break
                time.sleep(REPLACE_RETRY_SLEEP)
        finally:
            self.remove_temp()  # on every path: a refused rename, a vanished directory, an interrupt
        self._say_once("in-place", logging.WARNING,
                       f"cannot rename onto {self.move_path.name} ({refused.strerror or refused}; a sticky shared directory "
                       f"where another user owns it?): writing my moves into it in place instead")
        self._write_in_place(data)

    def _write_in_place(self, data: bytes) -> None:
        """Overwrite move_file without truncating it first: the line and a blank line in one write
        (the referee stops reading at the blank line, so older text behind it never counts), then
        cut the file after the line. Never creates move_file (the referee's: docs/protocol.md, "The files")."""
        fd = os.open(self.move_path, os.O_WRONLY | platform_io.BINARY)
        try:
            written = os.write(fd, data + b"\n")
            if written != len(data) + 1:
                raise OSError(errno.ENOSPC, f"short write ({written} of {len(data) + 1} bytes)")
            os.ftruncate(fd, len(data))
        finally:
            os.close(fd)

    def _replace(self, source: Path, target: Path) -> None:
        """The atomic rename; a method so tests can stand in for odd filesystems."""
        os.replace(source, target)

    def remove_temp(self) -> None:
        """Delete the move's temp file if one is left (an interrupted write)."""
        path, self._temp_path = self._temp_path, None
        if path is not None:
            try:
                os.remove(path)
            except OSError:
                pass


def stat_or_none(path: Path, files: Files = SYSTEM):
    """``os.stat(path)``, or None where nothing is there (the file, or the directory, is gone),
    a file Windows refuses while it is replaced or deleted included (:meth:`Files.patient`)."""
    try:
        return files.patient(files.stat, path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        if files.transient(error):  # refused for transient_wait: being deleted, so gone
            return None
        raise


def whole_seconds(st) -> bool:
    """A whole-second modification time: a filesystem with coarse timestamps (by chance about
    once in 10^9 on a fine-grained one)."""
    return st is not None and st.st_mtime_ns % 1_000_000_000 == 0
