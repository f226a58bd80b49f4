"""Pauses a loaded machine imposes on a thinking agent, measured as it plays and kept back from
the next turns' deadlines. Shared by both protocols (:mod:`agent.protocol`, :mod:`agent.codingame`).

On a busy machine the OS takes the process off the CPU for tens of milliseconds at a time, at any
moment, the deadline included: a search that stops on time can still answer late. Each turn the
protocol measures how long its thinking thread was off the CPU (wall time less that thread's CPU
time: ``time.thread_time()``, which counts a C search that released the GIL too, as long as it
runs in the measuring thread) and how late the answer came after the planned deadline; the next
turns' deadlines keep back the largest of these over the last ``KEEP_BACK_WINDOW`` turns.
"""

from __future__ import annotations

import time
from collections import deque

#: Turns a measured pause is remembered. With a CPU hog on a busy 2-core machine single pauses
#: reached 30-70 ms a few times a game; keeping back only the last 8 turns' overshoot lost 0-4
#: CodinGame games of 20 on time (scripts/bench_codingame.py --hog --games 20).
KEEP_BACK_WINDOW = 20


class ThinkingClock:
    """Wall and CPU time of the calling thread since it was made: start it in the thread that
    runs the search, read it there too."""

    def __init__(self) -> None:
        self.wall_since = time.perf_counter()
        self.cpu_since = time.thread_time()

    def wall(self) -> float:
        """Seconds since the clock started."""
        return time.perf_counter() - self.wall_since

    def off_cpu(self) -> float:
        """Seconds this thread spent off the CPU since the clock started (0 when it never was)."""
        wall = time.perf_counter() - self.wall_since
        cpu = time.thread_time() - self.cpu_since
        return max(0.0, wall - cpu)


class RecentPauses:
    """The longest pause of each of the last ``window`` turns, and what to keep back for them."""

    def __init__(self, window: int = KEEP_BACK_WINDOW) -> None:
        self._pauses: deque[float] = deque(maxlen=window)

    def append(self, seconds: float) -> None:
        """Remember one turn's pause (seconds)."""
        self._pauses.append(max(0.0, seconds))

    def record(self, *, late: float, off_cpu: float, weight: float = 1.0) -> float:
        """Remember this turn's pause: how late the answer was after the planned deadline (``late``,
        negative when early), or the time off the CPU while thinking (their sum, so at least the
        longest) times ``weight`` (below 1 when a long turn holds several pauses a normal one would
        not meet). Returns the pause remembered."""
        pause = max(0.0, late, off_cpu * weight)
        self._pauses.append(pause)
        return pause

    def largest(self) -> float:
        """Seconds to keep back: the largest pause remembered (0 on an idle machine)."""
        return max(self._pauses, default=0.0)

    def __len__(self) -> int:
        return len(self._pauses)
