"""The compiled core's helper threads, told apart from every other thread of the test process.

Counting all of a process's threads makes a test depend on its neighbours: a watcher or a
cluster client left by an earlier test may end (or start) while a search runs. The core's
helpers are native threads that Python never registered, so on Linux they are the tasks in
/proc/self/task that are not threads of the ``threading`` module.

A thread that has ended (joined: pthread_join returned) can stay listed in /proc for a moment
while the kernel releases it, longer on a loaded machine: "still there" is only a failure once it
has had :data:`GONE_WITHIN` seconds to go.
"""

from __future__ import annotations

import os
import threading
import time

AVAILABLE = os.path.isdir("/proc/self/task")
#: Seconds an ended thread may stay listed in /proc (a hang check: they go in microseconds).
GONE_WITHIN = 10.0


def tasks() -> set[int]:
    """Thread ids of this process (Linux)."""
    return {int(tid) for tid in os.listdir("/proc/self/task")}


def native_threads() -> set[int]:
    """Threads of this process that are not Python's: the core's helpers, and what an extension
    module started for itself (constant during a test)."""
    return tasks() - {thread.native_id for thread in threading.enumerate()}


class HelperWatch:
    """Which native threads appeared since it was made, sampled with :meth:`sample`."""

    def __init__(self) -> None:
        self.before = native_threads()
        self.seen: set[int] = set()
        self.most = 0

    def sample(self) -> None:
        new = native_threads() - self.before
        self.seen |= new
        self.most = max(self.most, len(new))

    def alive(self) -> set[int]:
        """The helpers seen that still exist after :data:`GONE_WITHIN` seconds."""
        return still_listed(self.seen)


def still_listed(threads: set[int]) -> set[int]:
    """Those of ``threads`` still in /proc once :data:`GONE_WITHIN` seconds have passed (or none
    is left)."""
    end = time.monotonic() + GONE_WITHIN
    while threads & tasks() and time.monotonic() < end:
        time.sleep(0.01)
    return threads & tasks()
