"""The one strict JSON reader of a series' files (``--out``'s JSON and JSON lines, a game's
record, a search log): bounded (line, file, depth, integer digits), no NaN or infinity, no
duplicate keys, nothing but what :func:`loads` accepts; what it refuses is a
:class:`RecordError` of one line.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from agent.cli_common import NotRegularFile, open_regular


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


class RecordError(ValueError):
    """A record that cannot be read; the message is one line naming the file (and line)."""


def wrong_value(record: dict, key: str, wanted: str) -> str:
    """How every check of a record says a key is wrong: ``'key' must be WANTED, not VALUE``
    (the value as JSON, cut short; ``missing`` when ``record`` has no such key)."""
    shown = _short(json.dumps(record[key]), 30) if key in record else "missing"
    return f"{key!r} must be {wanted}, not {shown}"


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
