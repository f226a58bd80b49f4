"""Whether a bot's time-out was the machine's: what it had of a core during the turn it lost.

On a loaded machine a bot can lose on time because it waited for a core, not because it thought
too long.  Linux counts, for every thread, the time it ran and the time it spent runnable on a
run queue, waiting for a core it wanted (``/proc/PID/task/TID/schedstat``: run ns, wait ns,
slices).  :class:`TurnMeter` reads both over the bot's process tree at the start of each of its
turns and again at a time-out; the time-out is the machine's when, over that turn, the bot had
less than :data:`~ref_sim.series.output.machine_load.FAIR_SHARE` of a core *and* waited on a run queue for at least
:data:`~ref_sim.series.output.machine_load.MACHINE_WAIT` of it.  CPU time alone cannot tell: a bot that sleeps or blocks past the
limit uses no CPU either, but it never asked for the core, so it waited for none: its own fault.

The series' games record it (``timeout_share``, ``machine_timeout``: docs/formats.md); the
summaries, the crosstable and the team pages say which results load may have decided
(docs/tournament.md), as :mod:`ref_sim.series.output.machine_load` reads the records.  Without ``/proc/PID/schedstat`` (not Linux) nothing is measured and
nothing is marked: a record's ``timeout_share`` is then null, and the summary says so once.
"""

from __future__ import annotations

import os
import sys
import time

from ref_sim.referees.file_referee import TIME_OUT
from ref_sim.series.output.machine_load import is_machines

PROC = "/proc"
#: Linux's per-thread scheduler counters are readable here (CONFIG_SCHED_INFO: every distribution).
AVAILABLE = sys.platform.startswith("linux") and os.path.exists(f"{PROC}/self/schedstat")
#: A process tree is walked this far at most (a fork bomb is not measured whole, but bounded).
MOST_PROCESSES = 512

def _read(path: str) -> str:
    with open(path, "rb") as handle:
        return handle.read(4096).decode("ascii", "replace")


def tree(pid: int, proc: str = PROC) -> list[int]:
    """``pid`` and its descendants, through each thread's ``children`` file (a setsid child too;
    one orphaned by a double fork is adopted by the bot's keeper, a subreaper, so still in it)."""
    seen, todo = [], [pid]
    while todo and len(seen) < MOST_PROCESSES:
        current = todo.pop()
        if current in seen:
            continue
        seen.append(current)
        try:
            tasks = os.listdir(f"{proc}/{current}/task")
        except OSError:
            continue                        # gone meanwhile
        for tid in tasks:
            try:
                todo += [int(child) for child in _read(f"{proc}/{current}/task/{tid}/children").split()]
            except (OSError, ValueError):
                continue
    return seen


def read_tasks(pids, proc: str = PROC) -> dict[int, tuple[int, int]]:
    """``{tid: (run ns, run-queue wait ns)}`` of every thread of ``pids``."""
    counters = {}
    for pid in pids:
        try:
            tasks = os.listdir(f"{proc}/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                run, wait = _read(f"{proc}/{pid}/task/{tid}/schedstat").split()[:2]
                counters[int(tid)] = (int(run), int(wait))
            except (OSError, ValueError):
                continue                    # ended meanwhile
    return counters


def snapshot(process, proc: str = PROC) -> dict[int, tuple[int, int]] | None:
    """The counters of ``process``'s tree (a Popen), and of its cgroup's processes when it is
    isolated in one (a child that left the tree); None when it is not running."""
    if process is None or process.poll() is not None:
        return None
    pids = tree(process.pid, proc)
    cgroup = getattr(process, "cgroup", None)
    if cgroup is not None:
        pids += [pid for pid in cgroup.pids() if pid not in pids]
    return read_tasks(pids, proc)


def figures(start: dict | None, end: dict | None, wall: float) -> dict | None:
    """``{"cpu", "waited", "seconds"}`` of one turn from the counters at its start and end:
    the cores' worth it ran (CPU seconds over wall seconds, summed over its threads) and the
    share of the turn it spent waiting on a run queue; None when either reading is missing.

    A thread that began during the turn counts whole; one that ended during it is lost (its
    counters went with it): an undercount, never a mark the bot did not earn.

    >>> figures({7: (0, 0)}, {7: (400_000_000, 550_000_000)}, 1.0)
    {'cpu': 0.4, 'waited': 0.55, 'seconds': 1.0}
    """
    if start is None or end is None or wall <= 0:
        return None
    run = wait = 0
    for tid, (ran, waited) in end.items():
        ran0, waited0 = start.get(tid, (0, 0))
        run += max(0, ran - ran0)           # a reused thread id: never negative
        wait += max(0, waited - waited0)
    return {"cpu": round(run / 1e9 / wall, 3), "waited": round(wait / 1e9 / wall, 3),
            "seconds": round(wall, 3)}


class TurnMeter:
    """Reads a game's bots at the start of each of their turns and, at a time-out, at its end.

    ``processes``: ``{name: Popen or None}``; ``clock``, ``read`` (a process to its counters) and
    ``enabled`` are seams for tests (by default this module's, looked up when it is made, so a
    test may replace them here).  Only each bot's last turn is kept."""

    def __init__(self, processes: dict, *, clock=None, read=None,
                 enabled: bool | None = None) -> None:
        self.processes = processes
        self.clock = clock or time.monotonic
        self.read = read or snapshot
        self.enabled = AVAILABLE if enabled is None else enabled
        self.started: dict[str, tuple[float, dict | None]] = {}
        self.ended: dict[str, dict | None] = {}

    def turn(self, name: str) -> None:
        """``name``'s turn begins (its clock starts)."""
        if self.enabled:
            self.started[name] = (self.clock(), self.read(self.processes.get(name)))

    def turn_end(self, name: str) -> None:
        """``name``'s turn ends without its move in time: measure that turn."""
        begun = self.started.pop(name, None) if self.enabled else None
        if begun is not None:
            at, counters = begun
            self.ended[name] = figures(counters, self.read(self.processes.get(name)),
                                       self.clock() - at)

    def file_event(self, event) -> None:
        """Follow the file referee's events (:class:`ref_sim.referees.file_referee.Event`): a
        turn begins at "turn" (its ``.go`` written); a game lost on time ends the loser's at "end"."""
        if event.kind == "turn":
            self.turn(event.player)
        elif event.kind == "end" and event.record.reason == TIME_OUT:
            self.turn_end(event.record.loser)

    def keys(self, reason: str | None, loser: str | None) -> dict:
        """The games.jsonl keys of a game that ended for ``reason``, lost by ``loser``: after a
        time-out, ``timeout_share`` (the loser's turn's figures, null when unmeasured) and
        ``machine_timeout`` (when they make it the machine's); none for any other end."""
        if reason != TIME_OUT or loser is None:
            return {}
        timed_out = loser
        measured = self.ended.get(timed_out)
        return {"timeout_share": {timed_out: measured},
                **({"machine_timeout": {timed_out: measured}} if is_machines(measured) else {})}


def watch(meter: TurnMeter, program) -> None:
    """Measure a CodinGame :class:`ref_sim.referees.codingame_shell.Program`'s turns through its
    calls: each ``send`` starts one, an ``answer`` that missed its time ends it."""
    send, answer = program.send, program.answer

    def sending(text):
        meter.turn(program.name)
        return send(text)

    def answering(timeout, stop=None):
        asked = time.perf_counter()
        got = answer(timeout, stop)
        if got is None or got[1] is not None and got[0] - asked > timeout:
            meter.turn_end(program.name)
        return got

    program.send, program.answer = sending, answering
