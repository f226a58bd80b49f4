"""CodinGame's referee for Ultimate Tic-Tac-Toe: two stdin/stdout programs, one game.

Beside :mod:`ref_sim.referees.file_protocol` (the course's file protocol), this is the other
referee of the bench: the rules of a CodinGame turn (:func:`turn_input`, :func:`parse_answer`), the
judging of one game between two running programs (:func:`referee_game`, each a :class:`Program`)
and its record. Starting the programs and the series around them are the series engine's
(:mod:`ref_sim.series.codingame_games`). The protocol, its timing and its verdicts:
docs/protocol.md, "CodinGame's variant".
"""

from __future__ import annotations

import queue
import re
import subprocess
import threading
import time
from pathlib import Path

from ref_sim import stops
from ref_sim.referees.file_referee import INVALID_MOVE, TIME_OUT
from ref_sim.rules import CODINGAME, TIE, Game, IllegalMoveError, line_winner

DEFAULT_TURN_MS = 100.0
DEFAULT_FIRST_TURN_MS = 1000.0
#: Added to every turn's limit: the referee's own latency (pipe write, a thread handing over
#: the line) is well under 1 ms; 5 ms keeps a verdict about the program, not about us.
DEFAULT_GRACE_MS = 5.0
#: After the end, how long a program may take to exit once its stdin is closed.
EXIT_WAIT = 2.0
#: After a time-out, how long to wait for the late answer, only to record how late it was.
LATE_WAIT = 1.0
#: While waiting for an answer, how often to look whether the series is stopping.
STOP_CHECK = 0.05
#: The verdicts of CodinGame's referee besides ref_sim.referees.file_protocol's Time out! and Invalid move!
CRASHED = "Crashed!"
LINE_WIN = "three local boards in a line"
COUNT_WIN = "more local boards won when all boards were decided"
#: Lines of a program's stdout the referee holds unread at most (more: the program waits).
MAX_PENDING_LINES = 1000
#: A program's stdout line (an answer) is cut here; the rest of it is discarded.
MAX_ANSWER_BYTES = 4096
#: A program's stdout is read this much at a time: one system call for many short lines, and
#: a long line's newline looked for in the new bytes only (a read of one byte at a time kept a
#: core busy for as long as a program printed a line without a newline).
READ_BYTES = 1 << 16
#: Once one line has run this long without a newline, its program's stdout is read no more (it
#: waits on its full pipe): its turn times out, and the runner spends nothing more on it.
MAX_LINE_BYTES = 1 << 20


def to_cell(board: int, spot: int) -> tuple[int, int]:
    """``(row, col)`` of a ``(board, spot)``.

    >>> to_cell(4, 5)
    (4, 5)
    >>> to_cell(2, 3)
    (1, 6)
    """
    return (board // 3) * 3 + spot // 3, (board % 3) * 3 + spot % 3


def from_cell(row: int, col: int) -> tuple[int, int]:
    """``(board, spot)`` of a ``(row, col)`` (inverse of :func:`to_cell`).

    >>> from_cell(1, 6)
    (2, 3)
    """
    return (row // 3) * 3 + col // 3, (row % 3) * 3 + col % 3


class Program:
    """One running program, as the referee talks to it: its stdin, a thread stamping its stdout
    lines (each cut at :data:`MAX_ANSWER_BYTES`, at most :data:`MAX_PENDING_LINES` unread), its
    stderr in ``log``.  ``process``: started with pipes for stdin and stdout (None: it could not
    be launched); the series starts it (:func:`ref_sim.series.codingame_games.start_program`)."""

    def __init__(self, name: str, command: list[str], log: Path, process,
                 search_log: Path | None = None) -> None:
        self.name = name
        self.command = command
        self.log, self.search_log = log, search_log
        self.turns = 0
        self.lines: queue.Queue = queue.Queue(MAX_PENDING_LINES)
        self.closing = threading.Event()        # the game is over: no one reads its lines
        self.endless: str | None = None         # why its stdout is no longer read (EndlessLine)
        self.process = process
        if self.process is not None:
            threading.Thread(target=self._read, daemon=True).start()
        else:
            self.lines.put((time.perf_counter(), None))

    def _read(self) -> None:
        stream = self.process.stdout
        try:
            for line in bounded_lines(stream):
                self._put((time.perf_counter(), line.decode("utf-8", errors="replace")))
        except EndlessLine as error:        # no end of output either: its turn times out
            self.endless = str(error)
            return
        except (OSError, ValueError):
            pass
        self._put((time.perf_counter(), None))

    def _put(self, item) -> None:
        """Queue a line; while the queue is full, wait (the program waits on its pipe in turn)
        until the referee reads one or the game is over."""
        while not self.closing.is_set():
            try:
                self.lines.put(item, timeout=STOP_CHECK)
                return
            except queue.Full:
                pass

    def send(self, text: str) -> float:
        """Write a turn's input; returns when it was written (perf_counter). Raises OSError."""
        if self.process is None:
            raise BrokenPipeError("not started")
        self.process.stdin.write(text.encode())
        self.process.stdin.flush()
        return time.perf_counter()

    def answer(self, timeout: float, stop: threading.Event | None = None):
        """``(arrival, line)``, ``(arrival, None)`` at the end of its output, or None on time-out
        (or as soon as ``stop`` is set: the series is stopping).  The arrival is stamped by the
        reading thread, so waiting in slices changes no measure."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                item = self.lines.get(timeout=max(0.0, min(left, STOP_CHECK)))
                break
            except queue.Empty:
                if left <= STOP_CHECK or stop is not None and stop.is_set():
                    return None
        if item[1] is None:
            self.lines.put(item)
        return item

    def exit_note(self, wait: float) -> str:
        """Why its output ended: "exited with code N" (waiting up to ``wait`` s to know)."""
        if self.process is None:
            return "could not start"
        try:
            code = self.process.wait(wait)
        except subprocess.TimeoutExpired:
            return "closed its output"
        # A series' bot past its disk cap says so (ref_sim.series.isolation.MeteredPopen).
        said = self.process.disk_note() if hasattr(self.process, "disk_note") else ""
        return f"exited with code {code}" + (f": {said}" if said else "")

    def finish(self, wait: float) -> str | None:
        """Close its stdin and wait for it to exit; kill it after ``wait`` s ("did not exit (killed)")."""
        if self.process is None:
            return None
        self.closing.set()
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(wait)
        except subprocess.TimeoutExpired:
            stops.kill_tree(self.process)
            return "did not exit (killed)"
        finally:
            self.process.stdout.close()
        return None

    def kill(self) -> None:
        """End it at once, with everything it started or left running (the game is over, or
        the series is stopping)."""
        self.closing.set()
        if self.process is not None:
            stops.kill_tree(self.process)
            for stream in (self.process.stdin, self.process.stdout):
                try:
                    stream.close()
                except OSError:
                    pass


# -- one game -----------------------------------------------------------------------------

class EndlessLine(Exception):
    """A program's stdout line ran past :data:`MAX_LINE_BYTES` without a newline."""


def bounded_lines(stream, limit: int = MAX_ANSWER_BYTES, most: int = MAX_LINE_BYTES):
    """The lines of a binary ``stream`` (a program's stdout) as they come, each cut at ``limit``
    bytes: the rest of a longer line is read and dropped, so no line fills the memory.  Read
    :data:`READ_BYTES` at a time, each byte looked at once; :class:`EndlessLine` once a line has
    run ``most`` bytes without a newline (it is not read further)."""
    read = getattr(stream, "read1", stream.read)    # what is there, up to the size: no waiting for more
    line, length = b"", 0           # the line so far (at most ``limit`` bytes) and its whole length
    while True:
        chunk = read(READ_BYTES)
        if not chunk:
            if line:
                yield line          # a last line without its newline
            return
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            stop = len(chunk) if end < 0 else end + 1
            if length < limit:
                line += chunk[start:min(stop, start + limit - length)]
            length += stop - start
            if end < 0:
                break
            yield line
            line, length = b"", 0
            start = stop
        if length >= most:
            raise EndlessLine(f"a line of over {most:,} bytes without a newline")


def turn_input(game: Game) -> str:
    """The input of the next turn: last move, count, the valid actions sorted by row and col.

    >>> turn_input(Game(CODINGAME)).splitlines()[:3]
    ['-1 -1', '81', '0 0']
    """
    last = "{} {}".format(*to_cell(*game.moves[-1])) if game.moves else "-1 -1"
    actions = sorted(to_cell(board, spot) for board, spot in game.legal_moves())
    return "".join([f"{last}\n{len(actions)}\n"] + [f"{row} {col}\n" for row, col in actions])


def parse_answer(line: str) -> tuple[int, int] | None:
    """``(board, spot)`` from ``row col [message]``, or None if it is not that.

    >>> parse_answer("1 6\\n"), parse_answer("4 4 hello"), parse_answer("9 0"), parse_answer("a b")
    ((2, 3), (4, 4), None, None)
    """
    parts = line.split()
    if len(parts) < 2 or not all(re.fullmatch(r"-?\d+", p) for p in parts[:2]):
        return None
    row, col = int(parts[0]), int(parts[1])
    if not (0 <= row <= 8 and 0 <= col <= 8):
        return None
    return from_cell(row, col)


def boards_won(game: Game) -> tuple[int, int]:
    results = game.local_results()
    return results.count(0), results.count(1)


def referee_game(programs: dict, names: list[str], turn_ms: float, first_turn_ms: float,
                 grace_ms: float, show=None, exit_wait: float = EXIT_WAIT, stop=None) -> dict:
    """Referee one game between two started programs (``{name: Program}``); ``names[0]``
    moves first.  Returns the game's record (the keys of a games.jsonl line that concern the
    game itself).  ``show``: a callable given each position's text after each move.  ``stop``:
    a threading.Event that ends the game at once (result "aborted").  The programs are left
    running: whoever started them ends them."""
    started_at, clock = time.time(), time.perf_counter()
    stopping = stop.is_set if stop is not None else (lambda: False)
    game = Game(CODINGAME)
    moves: list[dict] = []
    result = winner = loser = reason = bad_line = late_ms = None
    notes: dict[str, str] = {}
    while game.result is None:
        if stopping():
            result, reason = "aborted", "stopped"
            break
        name = names[len(game.moves) % 2]
        other = names[1 - len(game.moves) % 2]
        program = programs[name]
        limit = (first_turn_ms if program.turns == 0 else turn_ms) + grace_ms
        try:
            sent = program.send(turn_input(game))
            answer = program.answer(limit / 1000.0, stop)
        except OSError:
            answer = (time.perf_counter(), None)
            sent = answer[0]
        if stopping():
            continue                    # no verdict on a turn the stop cut short
        program.turns += 1
        if answer is None or answer[1] is not None and (answer[0] - sent) * 1000.0 > limit:
            reason, bad_line = TIME_OUT, None
            late = answer
            if late is None and program.endless is None:   # endless: it will never answer
                late = program.answer(LATE_WAIT, stop)      # how late, for the record only
            if program.endless is not None:
                notes[name] = f"printed {program.endless} (its stdout was read no further)"
            if late is not None and late[1] is not None:
                late_ms = round((late[0] - sent) * 1000.0, 2)
        elif answer[1] is None:
            reason = CRASHED
            notes[name] = f"crashed ({program.exit_note(0.5)})"
        else:
            line = answer[1].rstrip("\r\n")
            move = parse_answer(line)
            try:
                if move is None:
                    raise IllegalMoveError(f"not 'row col' with both 0-8: {line!r}")
                game.play(*move)
            except IllegalMoveError:
                reason, bad_line = INVALID_MOVE, line
            else:
                row, col = to_cell(*move)
                moves.append({"player": name, "row": row, "col": col, "board": move[0], "spot": move[1],
                              "ms": round(max(0.0, answer[0] - sent) * 1000.0, 2)})
                if show is not None:
                    show(f"Move {len(moves)}: {name} {row} {col} ({moves[-1]['ms']:.1f} ms)\n{game.render()}\n")
                continue
        result, winner, loser = "win", other, name
        break
    if result is None:
        if game.result == TIE:
            result, reason = "tie", "tie"
        else:
            result = "win"
            winner, loser = names[game.result], names[1 - game.result]
            won = line_winner([r if r in (0, 1) else None for r in game.local_results()])
            reason = LINE_WIN if won is not None else COUNT_WIN
    for name, program in programs.items():
        note = None if stopping() else program.finish(exit_wait)
        if note and name not in notes:
            notes[name] = note
    x, o = boards_won(game)
    slowest = {name: max((m["ms"] for m in moves if m["player"] == name), default=0.0) for name in names}
    return {
        "rules": CODINGAME, "turn_ms": turn_ms, "first_turn_ms": first_turn_ms, "grace_ms": grace_ms,
        "names": names, "p1": names[0], "p2": names[1], "moves": moves,
        "result": result, "winner": winner, "loser": loser, "reason": reason, "bad_line": bad_line,
        "late_ms": late_ms,
        "boards": {names[0]: x, names[1]: o}, "notes": notes, "slowest_ms": slowest,
        "started": started_at, "duration": round(time.perf_counter() - clock, 3),
    }


def describe(game: dict) -> str:
    """One line about a finished game."""
    if game["result"] == "tie":
        text = f"draw ({game['boards'][game['p1']]}-{game['boards'][game['p2']]} boards)"
    else:
        text = f"{game['winner']} wins: {game['reason']}"
        if game["bad_line"] is not None:
            text += f" ({game['bad_line']!r})"
        if game.get("late_ms") is not None:
            text += f" (answer after {game['late_ms']:.1f} ms)"
    extra = "; ".join(f"{name} {note}" for name, note in game["notes"].items())
    slowest = max(game["slowest_ms"].values(), default=0.0)
    return (f"{game['p1']} (X) vs {game['p2']} (O): {text} [{len(game['moves'])} moves, "
            f"{game['duration']:.1f} s, slowest turn {slowest:.1f} ms]" + (f" -- {extra}" if extra else ""))
