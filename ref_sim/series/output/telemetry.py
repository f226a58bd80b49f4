"""What the runners learn from the programs they run, read as the untrusted input it is.

Our agent's search log (:mod:`agent.search_log`), named per program and game through
``UTTT_SEARCH_LOG`` (:func:`search_log_env`), is read back by one strict, bounded reader
(:func:`read_search_log`: a bad line skipped and counted, never raised) and its figures added to
the moves (:func:`attach`). Nothing a program prints is parsed, only logged, and the logs are
kept bounded (:func:`trim_log`, :func:`last_line`). Limits and fields: docs/telemetry.md.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from agent.cli_common import NotRegularFile, open_regular
from agent.search_log import SEARCH_LOG_ENV
from ref_sim.series.output import strict_json
from agent.text import printable

#: The search log of a program in a game, beside its text log in ``logs/``.
SEARCH_LOG_SUFFIX = ".search.jsonl"
#: A search-log line longer than this is skipped (ours are ~200 bytes).
MAX_LINE_BYTES = 4096
#: At most this much of a search log is read (a game has at most 81 moves).
MAX_FILE_BYTES = 1 << 20
#: Of a program's output in one game, this much is kept in its log (first and last halves).
LOG_CAP_BYTES = 8 << 20
#: How much of a log's end :func:`last_line` reads.
TAIL_BYTES = 64 << 10

#: Search figures: the file's key -> (the move's key in games.jsonl, kind, lowest, highest).
FIGURES = {
    "depth": ("depth", int, 0, 81),
    "score": ("score", int, -10 ** 7, 10 ** 7),
    "nodes": ("nodes", int, 0, 10 ** 15),
    "nps": ("nps", float, 0, 10 ** 13),
    "seconds": ("agent_seconds", float, 0, 86_400),
}


def open_log(path: Path):
    """``path`` opened for binary reading if it is a regular file; OSError for anything else.  A
    program can put a FIFO where its log should be (opening it would wait for a writer forever),
    a symlink or a device: none of them is read (:func:`agent.cli_common.open_regular`)."""
    try:
        return os.fdopen(open_regular(path, follow=False), "rb")
    except NotRegularFile as odd:
        raise OSError(f"{path}: {odd}") from None


def search_log_path(logs: Path, number: int, name: str) -> Path:
    """``logs/game-NNNN-NAME.search.jsonl``: where ``name`` writes its moves' figures in game
    ``number`` (:func:`ref_sim.series.loop.game_logs` and the cluster's log transfer take it along)."""
    return logs / f"game-{number:04d}-{name}{SEARCH_LOG_SUFFIX}"


def search_log_env(path: Path, env: dict | None = None) -> dict:
    """``env`` (variables for a program's environment) with the search log named in it."""
    return {**(env or {}), SEARCH_LOG_ENV: str(path)}


# -- the strict reader ---------------------------------------------------------------------

def parse_line(line: bytes) -> dict | None:
    """One search-log line as ``{"board", "spot", figures...}`` (the games.jsonl keys), or None
    when it is not a valid one: too long, not UTF-8, not a JSON object, a cell outside 0-8, or a
    figure of the wrong type or outside its range (:data:`FIGURES`).  Never raises.

    >>> parse_line(b'{"board": 4, "spot": 8, "depth": 7, "score": -15, "seconds": 0.02}')
    {'board': 4, 'spot': 8, 'depth': 7, 'score': -15, 'agent_seconds': 0.02}
    >>> parse_line(b'{"board": 4, "spot": 8, "score": NaN}'), parse_line(b'{"board": 4, "spot": 8, "depth": 1e999}')
    (None, None)
    """
    if len(line) > MAX_LINE_BYTES:
        return None
    try:            # the records' one strict parser: no NaN, no 1e999, no huge integers or nesting
        data = strict_json.loads(line.decode("utf-8"), "search log")
    except (UnicodeDecodeError, strict_json.RecordError):
        return None
    if not isinstance(data, dict):
        return None
    board, spot = data.get("board"), data.get("spot")
    if not (_whole(board) and _whole(spot) and 0 <= board <= 8 and 0 <= spot <= 8):
        return None
    entry = {"board": board, "spot": spot}
    for key, (name, kind, low, high) in FIGURES.items():
        if key not in data:
            continue                        # a move chosen without a search has no figures
        value = data[key]
        if not (_whole(value) or kind is float and isinstance(value, float)) \
                or not low <= value <= high:
            return None
        entry[name] = round(value) if name == "nps" else float(value) if kind is float else value
    return entry


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def read_search_log(path: Path) -> tuple[list[dict], int]:
    """The valid entries of a search log in order (:func:`parse_line`) and how many non-empty
    lines were skipped (a missing file: ``([], 0)``).  At most :data:`MAX_FILE_BYTES` are read;
    a last line cut there counts as skipped."""
    try:
        with open_log(path) as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return [], 0
    lines = data.split(b"\n")
    if len(data) > MAX_FILE_BYTES:          # the file goes on: its last line here is cut
        lines[-1] = b"cut"
    entries, skipped = [], 0
    for line in lines:
        if not line.strip():
            continue
        entry = parse_line(line)
        if entry is None:
            skipped += 1
        else:
            entries.append(entry)
    return entries, skipped


def attach(moves: list[dict], player: str, entries: list[dict]) -> int:
    """Add the figures of ``entries`` (:func:`read_search_log`) to ``player``'s moves, matched
    in order by cell.  A logged move the referee never accepted (written too late) is skipped.
    Returns how many moves got figures."""
    mine = iter(move for move in moves if move["player"] == player)
    move = next(mine, None)
    attached = 0
    for entry in entries:
        if move is None:
            break
        if (entry["board"], entry["spot"]) == (move["board"], move["spot"]):
            figures = {k: v for k, v in entry.items() if k not in ("board", "spot")}
            move.update(figures)
            attached += bool(figures)
            move = next(mine, None)
    return attached


def attach_search_log(moves: list[dict], player: str, path: Path) -> tuple[int, int]:
    """:func:`attach` what ``path`` holds to ``player``'s moves: ``(attached, skipped lines)``."""
    entries, skipped = read_search_log(path)
    return attach(moves, player, entries), skipped


def attach_search_logs(moves: list[dict], names, logs: Path, number: int) -> dict:
    """Each of ``names``' search log of game ``number`` in ``logs`` (:func:`search_log_path`)
    attached to its moves; the line's key for the lines skipped (:func:`skipped_key`)."""
    return skipped_key({name: attach_search_log(moves, name, search_log_path(logs, number, name))[1]
                        for name in names})


def skipped_key(skipped: dict) -> dict:
    """The games.jsonl key for search-log lines that were skipped, ``{"search_log_skipped":
    {name: count}}`` for the programs with any, else nothing (the line stays as it was).

    >>> skipped_key({"Agent1": 0, "Hostile2": 3}), skipped_key({"Agent1": 0})
    ({'search_log_skipped': {'Hostile2': 3}}, {})
    """
    bad = {name: count for name, count in skipped.items() if count}
    return {"search_log_skipped": bad} if bad else {}


# -- bounded reading of a program's text output ---------------------------------------------

def _tail_lines(log: Path, skip_first: bool) -> list[str]:
    """The lines of the last :data:`TAIL_BYTES` of ``log`` (``skip_first``: not its first line,
    the runner's ``$ command``); [] if unreadable."""
    try:
        with open_log(log) as handle:
            size = handle.seek(0, os.SEEK_END)
            start = max(0, size - TAIL_BYTES)
            handle.seek(start)
            lines = handle.read(TAIL_BYTES).decode("utf-8", errors="replace").splitlines()
    except OSError:
        return []
    if start == 0 and skip_first or start > 0 and len(lines) > 1:
        lines = lines[1:]               # the command line, or a line cut by the tail's start
    return lines


def last_line(log: Path, skip_first: bool = True, limit: int = 200) -> str:
    """The last non-empty line of ``log`` (``skip_first``: not its first line, the runner's
    ``$ command``), from its last :data:`TAIL_BYTES` only, made printable and cut at ``limit``
    characters; "" if none or unreadable."""
    lines = _tail_lines(log, skip_first)
    said = next((line.strip() for line in reversed(lines) if line.strip()), "")
    return printable(said, limit)


#: A line that says what went wrong (``SyntaxError: ...``, ``Error: Cannot find module``,
#: ``Exception in thread "main" ...``, ``error: ...``), as against a stack frame or a banner.
#: Only searched: ``SyntaxError`` is found by its ``Error``.  Every branch is a literal of fixed
#: length, so a search is linear in the line (``\w*Error`` backtracked over each start of a run
#: of letters: 64 KiB of them without a newline took 20-35 s of the runner's CPU).
ERROR_LINE = re.compile(r"(?:Error|Exception)\b|\berror\b|\bfatal\b|[Cc]annot |[Nn]o such ")
#: Lines of a stack trace: Python's ``  File ...``, Node's and Java's ``    at ...``.
STACK_FRAME = re.compile(r"^(at |File \"|\.\.\. )")


def error_line(log: Path, limit: int = 200) -> str:
    """What a program that failed to start wrote about why: the last line of ``log``'s tail that
    reads like an error and is no stack frame (Node ends its trace with its banner
    ``Node.js v18.19.1``), else its last line; printable, cut at ``limit``, "" if none."""
    lines = [line.strip() for line in _tail_lines(log, True) if line.strip()]
    said = next((line for line in reversed(lines) if ERROR_LINE.search(line)
                 and not STACK_FRAME.match(line)), lines[-1] if lines else "")
    return printable(said, limit)


def wrote_past_first_line(log: Path) -> bool:
    """True once ``log`` holds more than its first line (a program printed something after the
    runner's ``$ command``), reading at most :data:`TAIL_BYTES` of it; True if unreadable."""
    try:
        with open_log(log) as handle:
            head = handle.read(TAIL_BYTES)
            size = os.fstat(handle.fileno()).st_size
    except OSError:
        return True
    newline = head.find(b"\n")
    return size > newline + 1 if newline >= 0 else size > TAIL_BYTES


def cut_line(size: int, half: int) -> bytes:
    """The line put where ``size - 2 * half`` bytes of a program's output were cut."""
    return (f"\n[runner: {size - 2 * half:,} bytes of output cut here; a game's "
            f"log keeps its first and last {half:,} bytes]\n").encode()


def read_bounded(path: Path, cap: int = LOG_CAP_BYTES) -> bytes:
    """The regular file ``path`` (:func:`open_log`: OSError for anything else) as
    :func:`trim_log` would leave it: all of it up to ``cap`` bytes, else its first and last
    ``cap // 2`` with :func:`cut_line` between.  At most ``cap`` bytes are read, however big the
    file (a sparse one too) or however fast a program still writes it."""
    with open_log(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size <= cap:
            return handle.read(cap)
        half = cap // 2
        head = handle.read(half)
        handle.seek(size - half)
        return head + cut_line(size, half) + handle.read(half)


def trim_log(log: Path, cap: int = LOG_CAP_BYTES) -> int:
    """Cut ``log`` (a program's output in a game that is over) to at most ``cap`` bytes: its
    first and last ``cap // 2`` bytes, with a line between saying how much was cut.  Returns the
    bytes cut (0: it was short enough, or unreadable).  The program wrote straight into the file,
    so that nothing it prints can block it or reach the runner's memory, and a runner killed
    outright loses none of it; this keeps a series' logs bounded all the same."""
    try:
        with open_log(log) as source:
            size = os.fstat(source.fileno()).st_size
            if size <= cap:
                return 0
            half = cap // 2
            trimmed = log.with_name(log.name + ".trim")
            with open(trimmed, "wb") as target:
                target.write(source.read(half))
                target.write(cut_line(size, half))
                source.seek(size - half)
                target.write(source.read(half))
        os.replace(trimmed, log)
    except OSError:                         # not a regular file, a full disk: left as it is
        try:
            log.with_name(log.name + ".trim").unlink(missing_ok=True)
        except OSError:
            pass
        return 0
    return size - 2 * half
