"""Pauses a loaded machine imposes on a thinking agent, measured as it plays and kept back from
the next turns' deadlines. Shared by both protocols (:mod:`agent.file_protocol`, :mod:`agent.codingame`).

On a busy machine the OS takes the process off the CPU for tens of milliseconds at a time, at any
moment, the deadline included: a search that stops on time can still answer late. Each turn the
protocol measures the longest stall of its search (:class:`StallWatch`: the search polls its
``should_stop`` every ``STOP_POLL_SECONDS``, so a longer gap between two polls is time the search
did not run) and how late the answer came after the planned deadline; the next turns' deadlines
keep back the largest of these over the last ``KEEP_BACK_WINDOW`` turns.

The stall is what a pause at the deadline would cost. The time off the CPU over the whole turn,
which this measured before, is not: a search that gets a quarter of a core is slow, not late, yet
beside a CPU hog that measure kept back 350-430 ms of a 1.8 s turn whose moves landed 2-20 ms
after their deadline.
"""

from __future__ import annotations

import os
import time
from collections import deque

try:
    import resource
except ImportError:  # Windows: the trace shows no page faults
    resource = None

from .limits import STOP_POLL_SECONDS

#: Turns a measured pause is remembered. With a CPU hog on a busy 2-core machine single pauses
#: reached 30-70 ms a few times a game; keeping back only the last 8 turns' overshoot lost 0-4
#: CodinGame games of 20 on time (scripts/bench_codingame.py --hog --games 20).
KEEP_BACK_WINDOW = 20


class StallWatch:
    """The longest stall of one search: give the search :meth:`watching` as its ``should_stop``
    (our searches poll it every ``period`` seconds) and call :meth:`returned` when it returns.

    An engine that never polls (a fixed-depth toy, a bot of one's own) shows no stall: its time
    says nothing about the machine, and only its lateness counts."""

    def __init__(self, period: float = STOP_POLL_SECONDS, clock=time.perf_counter) -> None:
        self.period, self.clock = period, clock
        self.last = clock()
        self.polls = 0
        self.longest_gap = 0.0
        self.first_poll: float | None = None  # when the search first polled (a turn's trace)
        self.longest_ended: float | None = None  # when the longest gap ended (a turn's trace)

    def _gap(self) -> None:
        now = self.clock()
        if now - self.last > self.longest_gap:
            self.longest_gap, self.longest_ended = now - self.last, now
        self.last = now

    def watching(self, should_stop=None):
        """``should_stop`` (or None: never stop), timing the gap since the last call at each call."""
        def polled() -> bool:
            self._gap()
            if not self.polls:
                self.first_poll = self.last
            self.polls += 1
            return bool(should_stop()) if should_stop is not None else False
        return polled

    def returned(self) -> None:
        """The search returned: the time since its last poll counts too (a stall at the deadline)."""
        if self.polls:
            self._gap()

    def stall(self) -> float:
        """Seconds of the longest gap beyond the polling period (0 when the search ran throughout,
        or never polled)."""
        return max(0.0, self.longest_gap - self.period) if self.polls else 0.0


class RecentPauses:
    """The longest pause of each of the last ``window`` turns, and what to keep back for them;
    ``unmeasured``: what to keep back before any turn was measured (agent.clock.first_turn_keep_back)."""

    def __init__(self, window: int = KEEP_BACK_WINDOW, unmeasured: float = 0.0) -> None:
        self._pauses: deque[float] = deque(maxlen=window)
        self.unmeasured = unmeasured

    def append(self, seconds: float) -> None:
        """Remember one turn's pause (seconds)."""
        self._pauses.append(max(0.0, seconds))

    def record(self, *, late: float, stall: float) -> float:
        """Remember this turn's pause: how late the answer was after the planned deadline (``late``,
        negative when early), or the search's longest stall, whichever is longer. Returns the
        pause remembered."""
        pause = max(0.0, late, stall)
        self._pauses.append(pause)
        return pause

    def largest(self) -> float:
        """Seconds to keep back: the largest pause remembered (0 on an idle machine), or
        ``unmeasured`` while none is."""
        return max(self._pauses, default=self.unmeasured)

    def __len__(self) -> int:
        return len(self._pauses)


#: Set to anything but "" or "0" to log each turn's phases (:class:`TurnTrace`).
TRACE_ENV = "UTTT_TRACE_TURNS"


def tracing(environ=None) -> bool:
    """True when :data:`TRACE_ENV` asks for each turn's trace."""
    return (os.environ if environ is None else environ).get(TRACE_ENV, "").strip() not in ("", "0")


def _usage() -> tuple[int, int, int]:
    if resource is None:
        return 0, 0, 0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_minflt, usage.ru_majflt, usage.ru_nivcsw


class TurnTrace:
    """Where one turn's time went, for the log: moments marked on the wall clock as the turn goes
    (the loop woke, the ``.go`` noticed, the search's first and last polls, the move chosen and
    written), shown as seconds after the ``.go``'s mtime, with the turn's page faults (minor,
    major) and involuntary context switches. Made only when :func:`tracing`: a turn without it
    pays nothing (scripts/bench_first_move.py reads these lines)."""

    def __init__(self, woke: float) -> None:
        self.marks: dict[str, float] = {"woke": woke}
        self._offset = time.time() - time.perf_counter()  # perf_counter moments to wall ones
        self._usage = _usage()

    def mark(self, name: str) -> None:
        """``name`` happened now."""
        self.marks[name] = time.time()

    def mark_at(self, name: str, perf: float | None) -> None:
        """``name`` happened at ``perf`` (a perf_counter moment); None: it did not happen."""
        if perf is not None:
            self.marks[name] = perf + self._offset

    def line(self, go_mtime: float, thinking: float, stall: float) -> str:
        """The trace: the moments, the turn's ``thinking`` target (seconds after the ``.go``), the
        search's longest ``stall`` (seconds), the turn's faults and switches so far."""
        faults = [after - before for after, before in zip(_usage(), self._usage)]
        moments = "  ".join(f"{name} {at - go_mtime:+.3f}" for name, at in self.marks.items())
        return (f"turn trace (s after the .go's mtime): {moments}  target {thinking:.3f}  stall {stall:.3f}  "
                f"faults {faults[0]} minor {faults[1]} major  {faults[2]} involuntary switches")
