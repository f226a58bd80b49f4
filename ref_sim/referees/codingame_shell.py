"""CodinGame's referee for Ultimate Tic-Tac-Toe with two running stdin/stdout programs, one game.

Beside :mod:`ref_sim.referees.file_shell` (the course's file protocol), this is the other
referee of the bench. :class:`~ref_sim.referees.codingame_referee.CodinGameReferee` decides
everything (each turn's input and limit, the verdicts, the record); :func:`referee_game` is the
thin shell around it that does what it asks with each :class:`Program`: its stdin, its stdout's
lines as they come (:func:`bounded_lines`), its exit, the clock and the stop. Starting the
programs and the series around them are the series engine's
(:mod:`ref_sim.series.codingame_games`). The protocol, its timing and its verdicts:
docs/protocol.md, "CodinGame's variant".
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from pathlib import Path

from ref_sim import stops
from ref_sim.referees.codingame_referee import (
    COUNT_WIN,
    CRASHED,
    DEFAULT_FIRST_TURN_MS,
    DEFAULT_GRACE_MS,
    DEFAULT_TURN_MS,
    EXIT_WAIT,
    INVALID_MOVE,
    LINE_WIN,
    TIME_OUT,
    AskExit,
    Await,
    CodinGameReferee,
    Done,
    Endless,
    Ended,
    Line,
    Send,
    Show,
    TimedOut,
    from_cell,
    parse_answer,
    to_cell,
    turn_input,
)

#: The rules and verdicts are the machine's; the series and the tests read them here too.
__all__ = ["COUNT_WIN", "CRASHED", "DEFAULT_FIRST_TURN_MS", "DEFAULT_GRACE_MS", "DEFAULT_TURN_MS", "EXIT_WAIT",
           "INVALID_MOVE", "LINE_WIN", "TIME_OUT", "from_cell", "parse_answer", "to_cell", "turn_input",
           "Program", "EndlessLine", "bounded_lines", "referee_game", "describe"]

#: While waiting for an answer, how often to look whether the series is stopping.
STOP_CHECK = 0.05
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

    def send(self, text: str) -> None:
        """Write a turn's input. Raises OSError."""
        if self.process is None:
            raise BrokenPipeError("not started")
        self.process.stdin.write(text.encode())
        self.process.stdin.flush()

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
        # A series' bot past its disk cap says so (ref_sim.series.process.metering.MeteredPopen).
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


def referee_game(programs: dict, names: list[str], turn_ms: float, first_turn_ms: float,
                 grace_ms: float, show=None, exit_wait: float = EXIT_WAIT, stop=None) -> dict:
    """Referee one game between two started programs (``{name: Program}``); ``names[0]``
    moves first.  Returns the game's record (:meth:`CodinGameReferee.record`).  ``show``: a
    callable given each position's text after each move.  ``stop``: a threading.Event that
    ends the game at once (result "aborted" before its verdict).  The programs are left
    running: whoever started them ends them."""
    stopped = stop.is_set if stop is not None else (lambda: False)
    referee = CodinGameReferee(names, turn_ms, first_turn_ms, grace_ms, exit_wait=exit_wait,
                               started=time.time())
    action = referee.start(time.perf_counter())
    while not isinstance(action, Done):
        answer = None if stopped() else _perform(programs, action, show, stop)
        now = time.perf_counter()
        action = referee.interrupt(now) if stopped() else referee.send(now, answer)
    return action.record


def _perform(programs: dict, action, show, stop):
    """Do what ``action`` asks of the programs (their ``send`` and ``answer``, which a series
    may hook: :func:`ref_sim.series.process.turn_share.watch`); what came back."""
    if isinstance(action, Show):
        return None if show is None else show(action.text)
    program = programs[action.player]
    if isinstance(action, Send):
        try:
            program.send(action.text)
        except OSError:
            return Ended()
        return None
    if isinstance(action, Await):
        got = program.answer(max(0.0, action.until - time.perf_counter()), stop)
        if got is None:
            return TimedOut() if program.endless is None else Endless(program.endless)
        return Ended() if got[1] is None else Line(*got)
    if isinstance(action, AskExit):
        return program.exit_note(action.wait)
    return program.finish(action.wait)


def describe(game) -> str:
    """One line about a finished game (its games.jsonl line: a GameLine)."""
    if game.result == "tie":
        text = f"draw ({game.boards[game.p1]}-{game.boards[game.p2]} boards)"
    else:
        text = f"{game.winner} wins: {game.reason}"
        if game.bad_line is not None:
            text += f" ({game.bad_line!r})"
        if game.late_ms is not None:
            text += f" (answer after {game.late_ms:.1f} ms)"
    extra = "; ".join(f"{name} {note}" for name, note in game.notes.items())
    slowest = max(game.slowest_ms.values(), default=0.0)
    return (f"{game.p1} (X) vs {game.p2} (O): {text} [{len(game.moves)} moves, "
            f"{game.duration:.1f} s, slowest turn {slowest:.1f} ms]" + (f" -- {extra}" if extra else ""))
