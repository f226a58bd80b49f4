"""The CodinGame "Ultimate Tic-Tac-Toe" protocol over stdin/stdout: ``python -m agent --protocol codingame``.

One process plays one game: it reads each turn (a reader thread stamps every line as it comes
in), times it with :mod:`agent.clock` and :mod:`agent.pauses`, asks the engine and writes one
``row col`` line; nothing else goes to stdout. What the lines mean and which move answers them is
decided by :class:`agent.codingame_turns.CodinGameDecider` (no I/O); the options and ``--help``
are :mod:`agent.cli`'s. The protocol, its timing and every kind of bad input: docs/agent.md.
"""

from __future__ import annotations

import gc
import logging
import os
import queue
import random
import sys
import threading
import time
from dataclasses import dataclass

from .clock import (
    DEFAULT_FIRST_TURN_MS,
    DEFAULT_MARGIN_MS,
    DEFAULT_TURN_MS,
)
from .codingame_turns import (  # noqa: F401  (the coordinates and BadInput: re-exported, as always)
    WAITING_ALREADY_S,
    BadInput,
    CodinGameDecider,
    TurnLines,
    cell_text,
    cell_to_index,
    index_to_cell,
    parse_pair,
)
from .engines import choose_legal, core_status
from .cli_common import reason
from .exits import (  # noqa: F401  (the protocol's exit codes: re-exported, as always)
    EXIT_BAD_INPUT,
    EXIT_FINISHED,
    EXIT_INPUT_ENDED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
)
from .limits import SearchLimit, SearchResult
from .pauses import KEEP_BACK_WINDOW, RecentPauses, StallWatch
from .rules import Position
from .search_log import SearchLog
from .file_turns import Note

log = logging.getLogger(__name__)

#: When this module was imported: the earliest moment we can vouch for on the first turn.
IMPORTED_AT = time.perf_counter()

class InputEnded(Exception):
    """stdin reached its end."""


class OutputClosed(Exception):
    """Our move could not be written: the referee closed our stdout (or it fails otherwise)."""


class LineReader:
    """Reads lines in a thread and stamps each with ``time.perf_counter()`` as it arrives, so the
    stopwatch starts when the referee's input does, whatever the main thread is doing."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self._lines: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="stdin-reader", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def reading(self) -> bool:
        """Still waiting on the input: the game ended before the input's end."""
        return self._thread.is_alive()

    def _run(self) -> None:
        try:
            while True:
                line = self._stream.readline()
                now = time.perf_counter()
                if not line:
                    break
                if isinstance(line, bytes):
                    line = line.decode("utf-8", errors="replace")
                self._lines.put((now, line))
        except (OSError, ValueError):  # stdin closed under us
            pass
        self._lines.put((time.perf_counter(), None))

    def get(self, timeout: float | None = None) -> tuple[float, str] | None:
        """The next ``(arrival, line)``; None if nothing came within ``timeout`` seconds; raises
        InputEnded at the end of the input (and keeps raising it)."""
        try:
            arrived, line = self._lines.get(timeout=timeout)
        except queue.Empty:
            return None
        if line is None:
            self._lines.put((arrived, None))
            raise InputEnded
        return arrived, line

    def pending(self) -> bool:
        """True when a line (not the end of input) is already waiting."""
        try:
            item = self._lines.queue[0]
        except IndexError:
            return False
        return item[1] is not None


@dataclass
class Turn:
    """One turn's input: when its first line arrived, the opponent's move (None for ``-1 -1``)
    and the referee's valid actions, as move indices in the referee's order."""

    started: float
    deadline: float  # when the search must stop (perf_counter)
    opponent: int | None
    actions: list[int]


class CodinGameAgent:
    """Plays one game over a pair of streams; :meth:`run` returns the exit code. Reads, writes and
    times; every verdict on what it read is the decider's (:mod:`agent.codingame_turns`)."""

    def __init__(self, engine, *, turn_ms: float = DEFAULT_TURN_MS,
                 first_turn_ms: float = DEFAULT_FIRST_TURN_MS, margin_ms: float = DEFAULT_MARGIN_MS,
                 depth: int | None = None, nodes: int | None = None, stdin=None, stdout=None,
                 position: Position | None = None, launched: float | None = IMPORTED_AT,
                 search_log: SearchLog | None = None) -> None:
        self.engine = engine
        self.search_log = search_log if search_log is not None else SearchLog(None, "codingame")
        self._rng = random.Random()  # a random legal move where the engine fails
        self.depth, self.nodes = depth, nodes
        self.stdin = stdin if stdin is not None else sys.stdin.buffer
        self.stdout = stdout if stdout is not None else sys.stdout
        self.decider = CodinGameDecider(turn_ms=turn_ms, first_turn_ms=first_turn_ms, margin_ms=margin_ms,
                                        position=position)
        self.reader = LineReader(self.stdin)
        #: The earliest moment the referee may have written our first input (None: when it arrives).
        self.launched = launched
        self.ready_at = 0.0
        #: Per recent turn, the longest pause measured (seconds): see :meth:`budget`.
        self.pauses = RecentPauses(KEEP_BACK_WINDOW)

    # The limits, the position and the turn count are the decider's: read (and set) here as always.

    @property
    def turn_ms(self) -> float:
        return self.decider.turn_ms

    @property
    def first_turn_ms(self) -> float:
        return self.decider.first_turn_ms

    @property
    def margin_ms(self) -> float:
        return self.decider.margin_ms

    @property
    def position(self) -> Position | None:
        """Our view of the game (the decider's); None once we have lost track of it."""
        return self.decider.position

    @position.setter
    def position(self, position: Position | None) -> None:
        self.decider.position = position

    @property
    def turns(self) -> int:
        """Turns answered (the decider's count)."""
        return self.decider.turns

    @turns.setter
    def turns(self, turns: int) -> None:
        self.decider.turns = turns

    # -- the loop ------------------------------------------------------------------------

    def run(self) -> int:
        gc.collect()
        gc.freeze()  # what exists now (engine tables) is never traversed by a collection again
        # Input arriving while this thread still holds the interpreter (logging the last move)
        # is stamped when the reader thread gets it: ask for it back within 1 ms, not 5.
        sys.setswitchinterval(0.001)
        self.reader.start()
        self.ready_at = time.perf_counter()
        core = core_status(self.engine)
        log.info("ready: CodinGame protocol, engine %s, %g ms per turn (first %g ms), margin %g ms%s",
                 getattr(self.engine, "name", type(self.engine).__name__), self.turn_ms,
                 self.first_turn_ms, self.margin_ms, f"; {core}" if core else "")
        while True:
            try:
                turn = self.read_turn()
            except InputEnded:
                return self._input_ended()
            except BadInput as error:
                log.error("bad input: %s; exiting (code %d)", error, EXIT_BAD_INPUT)
                return EXIT_BAD_INPUT
            self.play(turn)
            # Objects that survived this turn (mostly table entries) are not garbage: keep the
            # collector from walking them in the middle of a later search.
            gc.freeze()

    def budget(self) -> float:
        """Seconds of thought this turn, counted from the turn's first line: the limit less the
        margin (at least a tenth of the limit) and the largest pause of the recent turns, never
        under a quarter of the limit."""
        return self.decider.budget(self.pauses.largest())

    def keep_back_ms(self) -> float:
        """The largest pause of the last KEEP_BACK_WINDOW turns, in ms (0 on an idle machine)."""
        return 1000.0 * self.pauses.largest()

    def read_turn(self) -> Turn:
        """Read one turn's lines and have the decider check them (BadInput, InputEnded)."""
        arrived, line = self.reader.get()
        clock = self.decider.clock(arrived, ready_at=self.ready_at, launched=self.launched,
                                   kept_back=self.pauses.largest())
        if clock.waited is not None:
            log.info("the first input was waiting when I became ready: counting from my launch, "
                     "%.3f s ago", clock.waited)
        lines = TurnLines(line)
        while lines.wanted is not None:
            try:
                item = self.reader.get(timeout=max(0.0, clock.read_deadline - time.perf_counter()))
            except InputEnded:
                raise lines.ended() from None
            if item is None:
                raise lines.timed_out()
            lines.add(item[1])
        if self.reader.pending():
            raise lines.extra(self.reader.get(0)[1])
        return Turn(clock.started, clock.deadline, lines.opponent, lines.actions)

    # -- one turn ------------------------------------------------------------------------

    def play(self, turn: Turn) -> None:
        """Follow the opponent's move, choose from the referee's list, answer, log."""
        self._log(self.decider.follow_opponent(turn.opponent))
        kept = self.keep_back_ms()  # what this turn's deadline kept back for pauses
        stalls = StallWatch()
        limit = SearchLimit(deadline=turn.deadline, depth=self.depth, nodes=self.nodes,
                            should_stop=stalls.watching())
        plan = self.decider.plan(turn.actions)
        self._log(plan.warning)
        result: SearchResult | None = None
        if plan.search:
            result = choose_legal(self.engine, self.decider.position, limit, self._rng)
        pick = self.decider.pick(plan, turn.actions, result.move if result is not None else None)
        move, note = pick.move, pick.note
        if not pick.engine:
            result = None
        try:
            self.stdout.write(cell_text(move) + "\n")
            self.stdout.flush()
        except (OSError, ValueError) as error:  # EPIPE: the referee stopped reading; ValueError: closed here
            raise OutputClosed(reason(error)) from None
        answered = time.perf_counter()
        stalls.returned()
        took = answered - turn.started
        self.pauses.record(late=answered - turn.deadline, stall=stalls.stall())
        self._log(self.decider.answered(move))
        if kept >= 1.0:
            note += f"  (kept back {kept:.0f} ms for pauses)"
        if result is not None:
            log.info("move %s  depth %d  score %+d  nodes %d  nps %.0f  %.3f s since input%s",
                     cell_text(move), result.depth, result.score, result.nodes,
                     result.nodes_per_second, took, note)
        else:
            log.info("move %s  %.3f s since input%s", cell_text(move), took, note)
        row, col = index_to_cell(move)
        self.search_log.move(move // 9, move % 9, took, result, row=row, col=col)
        self._log(self.decider.game_over())

    def _input_ended(self) -> int:
        ending = self.decider.input_ended()
        self._log(ending.note)
        return ending.code

    @staticmethod
    def _log(note: Note | None) -> None:
        if note is not None:
            log.log(note.level, "%s", note.message)


def exit_past_the_reader(code: int) -> None:
    """End the process at once with ``code``. The stdin reader, a daemon thread, is blocked in a
    buffered read that holds stdin's lock (the referee keeps its end of the pipe open), and the
    interpreter's own shutdown would then abort the process ("Fatal Python error: could not
    acquire lock for <stdin> at interpreter shutdown", SIGABRT) instead of exiting with ``code``."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # closed, or None: closed before we started
            pass
    os._exit(code)
