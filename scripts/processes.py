"""Finding the processes a test or a bench started through /proc (Linux), and ending them by id: by an
argument of their command line (a mark a hostile bot's daemons carry, seen from outside a
sandbox's pid namespace too) or an entry of their environment (a token a runner passes on)."""

from __future__ import annotations

import os
import signal


def live(part: str, item: str) -> list[int]:
    """Live processes (not zombies) with ``item`` among the NUL-separated fields of
    ``/proc/PID/part`` (``cmdline`` or ``environ``), this one left out."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/{part}", "rb") as handle:
                if item.encode() not in handle.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat", "rb") as handle:
                if handle.read().rpartition(b")")[2].split()[0] == b"Z":
                    continue
        except OSError:
            continue            # gone meanwhile, or not ours to read
        found.append(int(entry))
    return found


def marked(mark: str) -> list[int]:
    """Live processes with ``mark`` as an argument."""
    return live("cmdline", mark)


def carrying(name: str, value: str) -> list[int]:
    """Live processes whose environment has ``name=value``."""
    return live("environ", f"{name}={value}")


def kill(pids) -> None:
    """SIGKILL to each of ``pids`` that is still there."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
