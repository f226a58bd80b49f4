"""Where a series' records are read and written: nothing lost, nothing mixed.

Every runner and every view reads and writes ``--out`` through here: one runner per folder
(:func:`lock_out`), a game one whole line or nothing (:func:`append_game`), settings replaced
whole (:func:`write_json`), write failures as :class:`WriteError`, and a strict JSON reader
(:func:`loads`, :class:`RecordError`). What each command does with a bad record: docs/bench.md
("What a series keeps"); the files: docs/formats.md.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import socket
import sys
import time
from pathlib import Path

from agent import platform_io
from agent.cli_common import NotRegularFile, open_regular
from ref_sim import command_words

#: A games.jsonl line is a few KB (a long game with search figures: ~30 KB); far beyond is not ours.
MAX_LINE_BYTES = 16 * 2 ** 20
#: A whole JSON file (series.json, a game's record): the same bound.
MAX_FILE_BYTES = 64 * 2 ** 20
#: Largest JSON-lines file read (games.jsonl, a search log): 100,000 games of 10 KB each.
MAX_LINES_FILE_BYTES = 2 ** 30
#: Our records nest 4 deep; anything deeper than this is not a record.
MAX_DEPTH = 64
#: A seed is at most 20 digits; longer integers are refused before Python converts them.
MAX_INT_DIGITS = 100
LOCK_NAME = "runner.lock"
DROPPED_SUFFIX = ".dropped"


class RecordError(ValueError):
    """A record that cannot be read; the message is one line naming the file (and line)."""


class OutInUse(RuntimeError):
    """Another runner holds ``--out``; the message is one line naming it."""
    exit_code = 2


class CannotResume(RuntimeError):
    """A settings file (series.json, tournament.json) that cannot be read: one line, exit 2."""
    exit_code = 2


class WriteError(RuntimeError):
    """Writing the records failed (disk full...); the message is one line saying which file."""
    exit_code = 1


# -- reading -------------------------------------------------------------------------------

class _Refused(ValueError):
    """A value the parser refused; ``token`` is its text, to find its line."""

    def __init__(self, why: str, token: str) -> None:
        super().__init__(why)
        self.token = token


def _constant(text: str):
    raise _Refused(f"{text} is not a number (JSON has no {text})", text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"{_short(text)} is out of range for a number", text)
    return value


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(f"an integer of {len(text.lstrip('-'))} digits", text)
    return int(text)


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[:width] + "..."


def _depth(value) -> int:
    """How deep ``value`` nests (an iterative walk: deep values must not recurse here)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            if deepest > MAX_DEPTH:
                return deepest
            stack.extend((child, depth + 1)
                         for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, max(0, position)) + 1


def loads(text: str, where: str, line: int | None = None):
    """``text`` parsed as JSON, refusing ``NaN``, ``Infinity``, numbers out of a float's range
    (``1e999``), integers of more than :data:`MAX_INT_DIGITS` digits, nesting deeper than
    :data:`MAX_DEPTH` and lines longer than :data:`MAX_LINE_BYTES`; RecordError
    ``"WHERE line N: why"``: ``line``, the line of a file that ``text`` is (JSON lines), else
    the line of ``text`` where the problem is, where known."""
    def located(at: int | None, why: str) -> RecordError:
        at = line or at
        return RecordError(f"{where} line {at}: {why}" if at else f"{where}: {why}")
    try:
        value = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except _Refused as error:
        position = text.find(error.token)
        raise located(_line_of(text, position) if position >= 0 else None, str(error)) from None
    except json.JSONDecodeError as error:
        raise located(error.lineno, f"not JSON ({error.msg} at column {error.colno})") from None
    except RecursionError:
        raise located(None, f"nested more than {MAX_DEPTH} deep") from None
    except ValueError as error:         # int() of too many digits, and the like
        raise located(None, _short(str(error), 80)) from None
    if _depth(value) > MAX_DEPTH:
        raise located(None, f"nested more than {MAX_DEPTH} deep")
    return value


def _decode(data: bytes, where: str, line: int | None = None) -> str:
    """``data`` as UTF-8; RecordError naming ``where``, the line (``line``: that of a file's
    line ``data`` is) and the column."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = line or data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise RecordError(f"{where} line {line}: not UTF-8 (byte 0x{data[error.start]:02x} at "
                          f"column {column})") from None


def _open(path: Path, what: str, limit: int):
    """``path`` open for reading bytes; RecordError (one line) if it cannot be opened, is not a
    regular file (a FIFO or /dev/zero would block or never end) or is bigger than ``limit``."""
    try:
        return os.fdopen(open_regular(path, limit=limit), "rb")
    except FileNotFoundError:
        raise RecordError(f"{path}: no such file") from None
    except NotRegularFile as error:
        raise RecordError(f"{path}: {error}: not a {what}") from None
    except OSError as error:
        raise RecordError(f"{path}: cannot read it ({error.strerror or error})") from None


def read_json(path, what: str = "JSON file"):
    """The JSON value of the file ``path`` (series.json, tournament.json, a game's record);
    RecordError (one line naming the file, and the line where known) if it cannot be read."""
    path = Path(path)
    with _open(path, what, MAX_FILE_BYTES) as handle:
        try:
            data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as error:
            raise RecordError(f"{path}: cannot read it ({error.strerror or error})") from None
    if len(data) > MAX_FILE_BYTES:
        raise RecordError(f"{path}: larger than {MAX_FILE_BYTES // 2 ** 20} MB: not a {what}")
    return loads(_decode(data, str(path)), str(path))


def read_lines(path) -> tuple[list[tuple[int, object]], list[tuple[int, str]]]:
    """The JSON lines of ``path``: ``([(line number, value)], [(line number, problem)])``,
    blank lines skipped, each bad line a problem (``"PATH line N: why"``), never an exception
    but for a file that cannot be opened (RecordError)."""
    path = Path(path)
    values, problems = [], []
    with _open(path, "JSON-lines file", MAX_LINES_FILE_BYTES) as handle:
        number = 0
        while True:
            try:
                data = handle.readline(MAX_LINE_BYTES + 1)
            except OSError as error:
                raise RecordError(f"{path}: cannot read it ({error.strerror or error})") from None
            if not data:
                break
            number += 1
            if len(data) > MAX_LINE_BYTES and not data.endswith(b"\n"):
                while data and not data.endswith(b"\n"):    # the rest of the line, unread
                    data = handle.readline(2 ** 20)
                problems.append((number, f"{path} line {number}: longer than "
                                         f"{MAX_LINE_BYTES / 2 ** 20:g} MB"))
                continue
            if not data.strip():
                continue
            try:
                values.append((number, loads(_decode(data, str(path), number), str(path), number)))
            except RecordError as error:
                problems.append((number, str(error)))
    return values, problems


# -- games.jsonl ---------------------------------------------------------------------------

RESULTS = ("win", "tie", "aborted")
#: The reason (games.jsonl's ``reason``) of a game that never began because a side could not start: a tournament scores
#: it as that side's loss and goes on (a head-to-head series stops instead).
CANNOT_START = "could not start"


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def game_problem(game) -> str | None:
    """Why ``game`` cannot be a games.jsonl line the runners' summary reads (the keys it
    uses, with their types), or None.  Keys it does not read are left as they are."""
    if not isinstance(game, dict):
        return f"not a game (a JSON {type(game).__name__}, not an object)"
    checks = (
        ("game", _is_int(game.get("game")) and game.get("game") >= 1, "a positive integer"),
        ("result", game.get("result") in RESULTS, "win, tie or aborted"),
        ("reason", isinstance(game.get("reason"), (str, type(None))), "text or null"),
        ("winner", isinstance(game.get("winner"), (str, type(None))), "a name or null"),
        ("names", isinstance(game.get("names"), list)
         and all(isinstance(name, str) for name in game["names"]), "a list of names"),
        ("notes", isinstance(game.get("notes"), dict)
         and all(isinstance(note, str) for note in game["notes"].values()), "{name: text}"),
        ("pair", game.get("pair") is None or _is_int(game.get("pair")), "an integer or null"),
        ("score", game.get("score") in (None, 0, 0.5, 1) and not isinstance(game.get("score"), bool),
         "1, 0.5, 0 or null"),
        ("moves", isinstance(game.get("moves"), list)
         and all(isinstance(move, dict) and _is_int(move.get("board")) and _is_int(move.get("spot"))
                 for move in game["moves"]), "a list of moves with their board and spot"),
        ("opening", isinstance(game.get("opening", []), list)
         and all(isinstance(move, list) and len(move) == 3 and _is_int(move[1]) and _is_int(move[2])
                 for move in game.get("opening", [])), "a list of [name, board, spot]"),
        ("agents", isinstance(game.get("agents", []), list)
         and all(isinstance(agent, dict) and isinstance(agent.get("name"), str)
                 for agent in game.get("agents", [])), "a list of agents with their names"),
        ("duration", isinstance(game.get("duration", 0), (int, float))
         and not isinstance(game.get("duration", 0), bool), "seconds"),
    )
    for key, good, wanted in checks:
        if not good:
            shown = _short(json.dumps(game[key]), 30) if key in game else "missing"
            return f"{key!r} must be {wanted}, not {shown}"
    return None


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


#: The settings a runner takes from series.json / tournament.json: what each must be.
SETTINGS = {
    "agents": (lambda v: isinstance(v, list) and len(v) == 2
               and all(isinstance(a, str) for a in v), "two agents"),
    "seed": (lambda v: _is_int(v) and v >= 0, "a whole number"),
    "games": (lambda v: v is None or _is_int(v) and v >= 1, "a positive whole number"),
    "rounds": (lambda v: _is_int(v) and v >= 1, "a positive whole number"),
    "time_limit": (_number, "seconds"),
    "turn_ms": (_number, "milliseconds"),
    "first_turn_ms": (_number, "milliseconds"),
    "grace_ms": (_number, "milliseconds"),
    "paired": (lambda v: isinstance(v, bool), "true or false"),
    "encoding": (lambda v: v is None or isinstance(v, str), "a codec's name or null"),
    "sprt": (lambda v: v is None or isinstance(v, list) and len(v) == 4
             and all(_number(x) for x in v), "four numbers or null"),
    "protocol": (lambda v: isinstance(v, str), "file or stdio"),
    "kind": (lambda v: isinstance(v, str), "round-robin or gauntlet"),
    "isolate": (lambda v: v is None or isinstance(v, dict), "null or the isolation's settings"),
}


def settings_problem(settings: dict) -> str | None:
    """Why the recorded ``settings`` cannot be used (a key of :data:`SETTINGS` of the wrong
    type), or None."""
    for key, (good, wanted) in SETTINGS.items():
        if key in settings and not good(settings[key]):
            return f"{key!r} must be {wanted}, not {_short(json.dumps(settings[key]), 30)}"
    return None


#: What every view of games (show, plot, replay) takes, in its help and its errors.
GAMES_ARGUMENT = "a series' --out folder, its games.jsonl, or one game's record (logs/game-NNNN.json)"


def games_source(given) -> Path:
    """The file a view reads for ``given``, as every view takes it: a series' ``--out`` folder
    (its ``games.jsonl``), a ``games.jsonl``, or one game's record.  RecordError, one line, if
    it is none of them."""
    path = Path(given)
    if path.is_dir():
        if (path / "games.jsonl").is_file():
            return path / "games.jsonl"
        singles = sorted(path.glob("game-*.json"))
        hint = (f" (it holds {len(singles)} game record(s): give one, e.g. {singles[0]})"
                if singles else " (is it a series' --out?)")
        raise RecordError(f"{given}: no games.jsonl in this folder{hint}")
    if not path.exists():
        raise RecordError(f"{given}: no such file or folder; give {GAMES_ARGUMENT}")
    return path


def read_games(path) -> tuple[list[dict], list[tuple[int, str]]]:
    """The good game lines of ``path`` (games.jsonl), sorted by number, the last kept when a
    game repeats, and the problems of the others (``[(line number, "PATH line N: why")]``).
    A missing file has no games."""
    path = Path(path)
    if not path.exists():
        return [], []
    values, problems = read_lines(path)
    games: dict[int, dict] = {}
    for number, game in values:
        problem = game_problem(game)
        if problem:
            problems.append((number, f"{path} line {number}: {problem}"))
        else:
            games[game["game"]] = game
    problems.sort()
    return [games[k] for k in sorted(games)], problems


def problems_line(path, problems: list[tuple[int, str]], what: str) -> str:
    """One line about ``problems`` (``what``: what happened to those lines)."""
    first = problems[0][1]
    more = len(problems) - 1
    lines = ", ".join(str(number) for number, _ in problems[:10]) + (", ..." if more >= 10 else "")
    return (f"warning: {first}" + (f" (and {more} more bad line{'s' * (more > 1)}: {lines})"
                                   if more else "") + f"; {what}")


def resume_games(path, warn=None) -> list[dict]:
    """The games recorded in ``path`` (games.jsonl) for ``--resume``: bad lines are dropped
    with one warning line (``warn``; default stderr), kept in ``games.jsonl.dropped``, and
    ``path`` is rewritten without them (WriteError if that fails: the file is left as it was)."""
    path = Path(path)
    try:
        games, problems = read_games(path)
    except RecordError as error:
        raise WriteError(f"cannot read the series' games: {error}") from None
    if not problems:
        return games
    bad = {number for number, _ in problems}
    warn = warn or (lambda text: print(text, file=sys.stderr, flush=True))
    dropped = path.with_name(path.name + DROPPED_SUFFIX)
    warn(problems_line(path, problems, f"those games are played again (the bad lines are kept "
                                       f"in {dropped})"))
    try:
        with open(path, "rb") as source:
            lines = source.read().splitlines(keepends=True)
        kept, thrown = [], []
        for number, line in enumerate(lines, 1):
            (thrown if number in bad else kept).append(line)
        with open(dropped, "ab") as handle:
            handle.writelines(line if line.endswith(b"\n") else line + b"\n" for line in thrown)
        _replace(path, b"".join(line if line.endswith(b"\n") else line + b"\n" for line in kept
                                if line.strip()))
    except OSError as error:
        raise WriteError(write_failed(path, error)) from None
    return games


def _finite(value):
    """``value`` with every float that is not finite replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def dumps_line(game: dict) -> str:
    """One games.jsonl line (no newline) that :func:`loads` reads back."""
    try:
        return json.dumps(game, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(game), allow_nan=False)


def write_failed(path, error: OSError) -> str:
    """``error`` writing ``path`` in one line: ``cannot write PATH: why (the disk is full)``."""
    why = error.strerror or str(error)
    return f"cannot write {path}: {why}" + (" (the disk is full)" if error.errno in
                                             (errno.ENOSPC, getattr(errno, "EDQUOT", -1)) else "")


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (the one place games.jsonl's bytes go: tests fill the disk here)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def append_game(path, game: dict) -> None:
    """Add a finished game's line to ``path`` (games.jsonl): the whole line or nothing
    (WriteError).  A last line left without its newline (a runner killed while writing) is
    ended first, so that this game does not join it."""
    path = Path(path)
    data = (dumps_line(game) + "\n").encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | platform_io.BINARY,
                     0o666)
    except OSError as error:
        raise WriteError(write_failed(path, error)) from None
    try:
        size = os.fstat(fd).st_size
        if size:
            with open(path, "rb") as reader:
                reader.seek(size - 1)
                if reader.read(1) != b"\n":
                    data = b"\n" + data
        try:
            _write_all(fd, data)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)          # no half line for the next game to run into
            raise
    except OSError as error:
        raise WriteError(write_failed(path, error)) from None
    finally:
        os.close(fd)


def _replace(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` at once (a temporary file renamed over it); OSError."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temp, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def write_json(path, data) -> None:
    """Write ``data`` as indented JSON to ``path``, replacing it whole (WriteError)."""
    path = Path(path)
    try:
        _replace(path, (json.dumps(_finite(data), indent=2, allow_nan=False) + "\n").encode())
    except OSError as error:
        raise WriteError(write_failed(path, error)) from None


def make_dirs(path) -> None:
    """``mkdir -p`` (WriteError)."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise WriteError(write_failed(path, error)) from None


# -- the lock on --out ---------------------------------------------------------------------

def _lock(fd: int) -> bool:
    """Take the OS lock on ``fd`` without waiting: True, or False when another process has it
    (agent.platform_io.lock_exclusive: the platform edge)."""
    return platform_io.lock_exclusive(fd)


def _holder(path: Path) -> str:
    """Who holds the lock ``path``, in words, from what it wrote into it."""
    try:
        with os.fdopen(open_regular(path, os.O_RDONLY | platform_io.NO_FOLLOW), "rb") as handle:
            holder = loads(_decode(handle.read(64 * 1024), str(path)), str(path))
        since = float(holder["since"])
        age = max(0, time.time() - since)
        ago = (f"{age / 3600:.1f} h" if age >= 3600 else f"{age / 60:.0f} min" if age >= 60
               else f"{age:.0f} s")
        return (f"pid {int(holder['pid'])} on {holder['host']}, since "
                f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(since))} ({ago} ago): "
                f"{_short(str(holder['command']), 200)}")
    except (OSError, RecordError, KeyError, TypeError, ValueError, OverflowError):
        return "a process that has not said who it is yet"


class OutLock:
    """The lock of a runner on its ``--out``; a context manager. An OS lock that dies with its
    process (``fcntl.flock`` on POSIX, ``LockFileEx`` on Windows: agent.platform_io.lock_exclusive) on ``--out/runner.lock``,
    which says who holds it (process id, host, command, since when): a second runner on the folder
    stops at once (:class:`OutInUse`); a file left by a process that is gone blocks nothing. Before
    it, two runs shared ``--out/game-NNNN`` and recorded each other's moves as ``Invalid move!``."""

    def __init__(self, out, command: str) -> None:
        self.path = Path(out) / LOCK_NAME
        self.command = command
        self.fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or OutInUse; a file system without locks is a warning, not a stop."""
        for _ in range(10):     # the holder may remove the file between our open and our lock
            try:
                # Not through a symlink (its target would be truncated) nor into a FIFO.
                fd = open_regular(self.path, os.O_RDWR | os.O_CREAT | platform_io.NO_FOLLOW)
            except NotRegularFile as error:
                raise WriteError(f"cannot lock {self.path}: {error}: remove it, or choose another --out") from None
            except OSError as error:
                if error.errno == errno.ELOOP:
                    raise WriteError(f"cannot lock {self.path}: it is a symbolic link (followed, its "
                                     "target would be overwritten): remove it, or choose another --out") from None
                raise WriteError(write_failed(self.path, error)) from None
            try:
                locked = _lock(fd)
            except OSError as error:            # no locks here (some network file systems)
                os.close(fd)
                print(f"warning: cannot lock {self.path} ({error.strerror or error}): nothing "
                      "stops a second runner on this folder", file=sys.stderr)
                return
            if not locked:
                os.close(fd)
                raise OutInUse(f"--out {self.path.parent} is in use by another runner "
                               f"({_holder(self.path)}); wait for it to end, or choose "
                               "another --out")
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except OSError:
                same = False
            if same:
                self.fd = fd
                break
            os.close(fd)        # locked a file its holder had just removed: take the new one
        else:
            raise OutInUse(f"--out {self.path.parent}: cannot take {self.path} (another runner "
                           "keeps replacing it)")
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time(),
                  "command": self.command}
        try:
            os.ftruncate(self.fd, 0)
            os.lseek(self.fd, 0, os.SEEK_SET)
            _write_all(self.fd, (json.dumps(holder) + "\n").encode("utf-8"))
        except OSError:
            pass            # the lock holds without its description (a full disk)

    def release(self) -> None:
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        if os.name == "nt":             # unlocked before closing: Windows frees a closed handle's locks only eventually
            with contextlib.suppress(OSError):
                platform_io.unlock(fd)
            os.close(fd)
            with contextlib.suppress(OSError):
                self.path.unlink()
        else:               # removed while locked: a waiting runner sees a new file and retries
            with contextlib.suppress(OSError):
                self.path.unlink()
            os.close(fd)

    def __enter__(self) -> OutLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def lock_out(out: str | os.PathLike | None, prog: str, argv: list[str] | None = None):
    """The lock of this runner (``prog`` and its ``argv``: the holder's command) on ``out``;
    a context manager that does nothing when ``out`` is None (a temporary folder)."""
    if not out:
        return contextlib.nullcontext()
    command = " ".join([prog, command_words.join(sys.argv[1:] if argv is None else argv)])
    return OutLock(out, command)



def recorded_games(path) -> int:
    """How many good games ``path`` (games.jsonl) holds; 0 when it cannot be read."""
    try:
        return len(read_games(path)[0])
    except RecordError:
        return 0
