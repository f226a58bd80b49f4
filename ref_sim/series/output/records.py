"""Where a series' records are read and written: nothing lost, nothing mixed.

Every runner and every view reads and writes ``--out`` through here: one runner per folder
(:func:`ref_sim.series.output.out_lock.lock_out`), a game one whole line or nothing
(:func:`append_line`), settings replaced whole (:func:`write_json`), write failures as
:class:`WriteError`, and games and settings checked as the strict JSON reader gives them
(:mod:`ref_sim.series.output.strict_json`). What each command does with a bad record:
docs/bench.md ("What a series keeps"); the files: docs/formats.md.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import sys
from pathlib import Path

from agent import platform_io
from ref_sim.series.output.game_line import GameLine, _is_int
from ref_sim.series.output.strict_json import RecordError, read_lines, wrong_value


DROPPED_SUFFIX = ".dropped"


class CannotResume(RuntimeError):
    """A settings file (series.json, tournament.json) that cannot be resumed: one line, exit 2;
    ``file`` and ``field`` (None: the whole file) say where."""
    exit_code = 2

    def __init__(self, message: str, file: Path | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.file, self.field = file, field


class WriteError(RuntimeError):
    """Writing the records failed (disk full...); the message is one line saying which file."""
    exit_code = 1


# -- games.jsonl ---------------------------------------------------------------------------

#: The reason (games.jsonl's ``reason``) of a game that never began because a side could not start: a tournament scores
#: it as that side's loss and goes on (a head-to-head series stops instead).
CANNOT_START = "could not start"


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


def settings_problem(settings: dict) -> tuple[str, str] | None:
    """``(key, why)`` the recorded ``settings`` cannot be used (a key of :data:`SETTINGS` of
    the wrong type), or None."""
    for key, (good, wanted) in SETTINGS.items():
        if key in settings and not good(settings[key]):
            return key, wrong_value(settings, key, wanted)
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


def read_games(path) -> tuple[list[GameLine], list[tuple[int, str]]]:
    """The good game lines of ``path`` (games.jsonl), sorted by number, the last kept when a
    game repeats, and the problems of the others (``[(line number, "PATH line N: why")]``).
    A missing file has no games."""
    path = Path(path)
    if not path.exists():
        return [], []
    values, problems = read_lines(path)
    games: dict[int, GameLine] = {}
    for number, value in values:
        try:
            game = GameLine.from_json(value, where=f"{path} line {number}")
        except RecordError as error:
            problems.append((number, str(error)))
        else:
            games[game.game] = game
    problems.sort()
    return [games[k] for k in sorted(games)], problems


def problems_line(path, problems: list[tuple[int, str]], what: str) -> str:
    """One line about ``problems`` (``what``: what happened to those lines)."""
    first = problems[0][1]
    more = len(problems) - 1
    lines = ", ".join(str(number) for number, _ in problems[:10]) + (", ..." if more >= 10 else "")
    return (f"warning: {first}" + (f" (and {more} more bad line{'s' * (more > 1)}: {lines})"
                                   if more else "") + f"; {what}")


def resume_games(path, warn=None) -> list[GameLine]:
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


def append_line(path, value: dict) -> None:
    """Add one JSON line to ``path`` (a finished game's to games.jsonl): the whole line or nothing
    (WriteError).  A last line left without its newline (a runner killed while writing) is
    ended first, so that this line does not join it."""
    path = Path(path)
    data = (dumps_line(value) + "\n").encode("utf-8")
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


def recorded_games(path) -> int:
    """How many good games ``path`` (games.jsonl) holds; 0 when it cannot be read."""
    try:
        return len(read_games(path)[0])
    except RecordError:
        return 0
