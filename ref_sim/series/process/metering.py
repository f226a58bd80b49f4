"""What each bot used in a game, isolated or not: its process metered as it is reaped
(:class:`MeteredPopen`: CPU seconds, peak memory, through ``wait4``), its tree sampled in
``/proc`` meanwhile (:class:`Sampler`), and the line that says it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import threading
import time

from ref_sim.series.process.cgroups import BotCgroup, core_pool


#: Seconds between two looks at the bots' processes in /proc.
SAMPLE_INTERVAL = 0.5


# -- usage ------------------------------------------------------------------------------------

#: Files and folders a bot may make in its game's folder: more is as good as past its cap (and
#: keeps each look cheap).
MAX_ENTRIES = 10_000


class Poller:
    """One daemon thread that calls :meth:`poll` with a copy of ``items`` every ``interval``
    seconds while ``items`` holds anything: it ends when they are gone and the next :meth:`add`
    starts another. ``lock`` guards ``items`` (a subclass may change an item's value under it)."""

    interval, name = 1.0, "poller"

    def __init__(self) -> None:
        self.items: dict = {}
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def add(self, key, value) -> None:
        with self.lock:
            self.items[key] = value
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self.thread.start()

    def remove(self, key) -> None:
        with self.lock:
            self.items.pop(key, None)

    def poll(self, items: dict) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        while True:
            with self.lock:
                if not self.items:
                    self.thread = None
                    return
                items = dict(self.items)
            self.poll(items)
            time.sleep(self.interval)


class Sampler(Poller):
    """One thread that looks at /proc every :data:`SAMPLE_INTERVAL` seconds for the sessions of
    the processes it tracks (each started in a session of its own: its id is the leader's pid),
    and keeps each session's largest CPU time and resident size seen."""

    interval, name = SAMPLE_INTERVAL, "usage-sampler"

    def __init__(self) -> None:
        super().__init__()
        self.ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def track(self, pid: int) -> dict:
        seen = {"cpu_seconds": 0.0, "peak_kb": 0}
        self.add(pid, seen)
        return seen

    def untrack(self, pid: int) -> None:
        self.remove(pid)

    def poll(self, sessions: dict) -> None:
        try:
            self.sample(sessions)
        except OSError:
            pass

    def sample(self, sessions: dict) -> None:
        totals = {sid: [0.0, 0] for sid in sessions}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as handle:
                    fields = handle.read().rpartition(b")")[2].split()
                sid = int(fields[3])
                if sid not in totals:
                    continue
                ticks = sum(int(value) for value in fields[11:15])   # utime stime cutime cstime
                peak = 0
                with open(f"/proc/{entry.name}/status", "rb") as handle:
                    for line in handle:
                        if line.startswith(b"VmHWM:"):
                            peak = int(line.split()[1])
                            break
            except (OSError, ValueError, IndexError):
                continue            # gone meanwhile
            totals[sid][0] += ticks / self.ticks
            totals[sid][1] = max(totals[sid][1], peak)
        for sid, (cpu, peak) in totals.items():
            seen = sessions[sid]
            seen["cpu_seconds"] = max(seen["cpu_seconds"], cpu)
            seen["peak_kb"] = max(seen["peak_kb"], peak)


SAMPLER = Sampler()
CAN_SAMPLE = sys.platform.startswith("linux") and os.path.isdir("/proc")


class MeteredPopen(subprocess.Popen):
    """A Popen reaped with ``os.wait4`` (its resource usage kept) whose session is sampled;
    when it is reaped its cores go back to the pool and its cgroup (everything in it) is killed
    and removed; killing it kills its whole cgroup."""

    cores: list[int] = []
    cgroup: BotCgroup | None = None
    #: Its disk cap (bytes, 0: none), what it writes (:func:`written_paths`), and whether it
    #: went past the cap (:class:`DiskGuard`).
    disk_cap = 0
    disk_paths: tuple[str, ...] = ()
    disk_log: str | None = None
    disk_why = ""

    def __init__(self, *args, **kwargs) -> None:
        self.rusage = None
        self.sampled = None
        self.cleaned = False
        super().__init__(*args, **kwargs)
        if CAN_SAMPLE and kwargs.get("start_new_session"):
            self.sampled = SAMPLER.track(self.pid)

    def _reaped(self, rusage) -> None:
        self.rusage = rusage
        if self.sampled is not None:
            SAMPLER.untrack(self.pid)
        self.release()

    def release(self) -> None:
        """Give back what it held (once): its cores; and end what it left in its cgroup (a
        setsid or double-forked child), then the cgroup."""
        if self.cleaned:
            return
        self.cleaned = True
        core_pool().give_back(self.cores)
        if self.cgroup is not None:
            self.cgroup.remove()

    def kill(self) -> None:
        """SIGKILL to it and, isolated in a cgroup, to every process of the group."""
        if self.cgroup is not None:
            self.cgroup.kill_all()
        super().kill()

    def _wait4(self, pid: int, flags: int):
        reaped, status, rusage = os.wait4(pid, flags)
        if reaped == pid:
            self._reaped(rusage)
        return reaped, status

    if hasattr(os, "wait4"):
        def _internal_poll(self, _deadstate=None, **_ignored):
            return super()._internal_poll(_deadstate, _waitpid=self._wait4)

        def _try_wait(self, wait_flags):
            try:
                return self._wait4(self.pid, wait_flags)
            except ChildProcessError:       # as Popen: SIGCHLD ignored, the status is lost
                self._reaped(None)
                return self.pid, 0

    def disk_note(self) -> str:
        """``"wrote past its N MB disk cap"`` when it did (killed for it, killed by SIGXFSZ, or
        its files at the cap now), or why else :class:`DiskGuard` ended it (it filled the disk,
        made too many files), else ``""``: said with its exit in the game's notes."""
        if self.disk_cap and not self.disk_why and (
                self.returncode == -signal.SIGXFSZ or written(self.disk_paths)[0] >= self.disk_cap):
            self.disk_why = f"wrote past its {self.disk_cap >> 20} MB disk cap"
        return self.disk_why

    def usage(self) -> dict | None:
        """``{"cpu_seconds", "peak_mb"}`` once reaped (None before, or where unknown)."""
        if self.returncode is None:
            return None
        cpu, peak_kb = 0.0, 0
        if self.rusage is not None:
            cpu, peak_kb = self.rusage.ru_utime + self.rusage.ru_stime, self.rusage.ru_maxrss
        if self.sampled is not None:
            cpu = max(cpu, self.sampled["cpu_seconds"])
            peak_kb = max(peak_kb, self.sampled["peak_kb"])
        if self.rusage is None and self.sampled is None:
            return None
        return {"cpu_seconds": round(cpu, 3), "peak_mb": round(peak_kb / 1024, 1)}


def usage_of(processes: dict) -> dict | None:
    """``{name: {"cpu_seconds", "peak_mb"}}`` of the reaped processes of ``processes``
    (``{name: Popen or None}``), for games.jsonl's ``usage``; None when none is known."""
    usage = {}
    for name, process in processes.items():
        measure = getattr(process, "usage", None)
        figures = measure() if measure is not None else None
        if figures is not None:
            usage[name] = figures
    return usage or None


def usage_line(usage) -> str | None:
    """``usage: Agent1 3.20 s CPU, 41 MB; Random2 0.05 s CPU, 12 MB`` of a game line's ``usage``,
    or None (no usage recorded, or a malformed one: a record is untrusted input)."""
    if not isinstance(usage, dict):
        return None
    parts = []
    for name, figures in usage.items():
        try:
            parts.append(f"{name} {float(figures['cpu_seconds']):.2f} s CPU, "
                         f"{float(figures['peak_mb']):.0f} MB")
        except (TypeError, KeyError, ValueError, OverflowError):
            continue
    return "usage: " + "; ".join(parts) if parts else None


def written(paths) -> tuple[int, int]:
    """``(bytes, entries)`` of the files under ``paths`` (sizes as the files say; no link
    followed), counting stopped past :data:`MAX_ENTRIES` entries."""
    total = entries = 0
    for path in paths:
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode):
            total += info.st_size if stat.S_ISREG(info.st_mode) else 0
            continue
        for root, folders, files in os.walk(path):
            for name in files + folders:
                entries += 1
                if entries > MAX_ENTRIES:
                    return total, entries
                with contextlib.suppress(OSError):
                    info = os.lstat(os.path.join(root, name))
                    total += info.st_size if stat.S_ISREG(info.st_mode) else 0
    return total, entries
