"""An isolated bot's cgroup and cores: the cgroup hierarchy found here (v1 or v2, what this user
may create), a cgroup of its own per bot (:class:`BotCgroup`: its cores, memory and process
caps; everything in it killed and the group removed at the end), and the pool of cores the
bots are pinned to (docs/isolation.md).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import secrets
import signal
import sys
import threading
import time
from dataclasses import dataclass


# -- cgroups ----------------------------------------------------------------------------------

#: The controllers a bot's cgroup uses: its cores, its memory (the kernel charges shared memory
#: and tmpfs pages to the group that touched them) and its process count.  Memory and pids are
#: needed; cpuset is used where it is given (systemd delegates memory and pids to a user, not
#: cpuset: the cores are then pinned only, and the status line says so).
CONTROLLERS = ("cpuset", "memory", "pids")
NEEDED = ("memory", "pids")
#: A bot's cgroup is PREFIX + the runner's pid + a count, beside or under the runner's own.
CGROUP_PREFIX = "uttt-bot-"
#: Tells this runner's groups from those of a runner with the same pid in another container
#: (v1's hierarchies are the whole machine's).
RUNNER_TOKEN = secrets.token_hex(4)
#: Rounds of SIGKILL to every pid of a v1 group (or without cgroup.kill) before giving up; a
#: fork bomb is bounded by pids.max, so a few rounds empty it.
KILL_ROUNDS = 500


@dataclass(frozen=True)
class CgroupPlace:
    """Where this runner makes its bots' cgroups, with which ``controllers``: ``version`` 2
    (one folder, ``bases[0]``) or 1 (one folder per controller, in the same order)."""
    version: int
    bases: tuple[str, ...]
    controllers: tuple[str, ...] = CONTROLLERS


def _read(path: str) -> str:
    with open(path) as handle:
        return handle.read().strip()


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def _cgroup_mounts() -> tuple[dict[str, str], str | None]:
    """``({controller: mount point} of cgroup v1, the cgroup2 mount point or None)``."""
    v1, v2 = {}, None
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            before, _, after = line.partition(" - ")
            fields, tail = before.split(), after.split()
            if len(fields) < 5 or len(tail) < 3:
                continue
            point = fields[4].replace("\\040", " ")
            if tail[0] == "cgroup2":
                v2 = point
            elif tail[0] == "cgroup":
                for option in tail[2].split(","):
                    if option in CONTROLLERS:
                        v1[option] = point
    return v1, v2


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup in each hierarchy: ``{controller: path}``, ``""`` for v2's."""
    own = {}
    with open("/proc/self/cgroup") as handle:
        for line in handle:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                own[controller] = path
    return own


def _v2_place(point: str, own: str) -> tuple[CgroupPlace | None, str]:
    """Where in the cgroup2 hierarchy to make bots' groups, with the controllers enabled for
    them: its root (root only: the root may have processes and enabled controllers at once) or
    the parent of the runner's own group (delegated: a parent has no processes of its own)."""
    candidates = [point] if os.geteuid() == 0 else []
    if own.strip("/"):
        candidates.append(os.path.dirname(os.path.join(point, own.strip("/"))))
    why = "no folder of it this runner may write"
    for base in candidates:
        try:
            available = _read(os.path.join(base, "cgroup.controllers")).split()
            missing = [c for c in NEEDED if c not in available]
            if missing:
                why = f"cgroup v2 lacks {', '.join(missing)} at {base}"
                continue
            controllers = tuple(c for c in CONTROLLERS if c in available)
            enabled = _read(os.path.join(base, "cgroup.subtree_control")).split()
            wanted = " ".join(f"+{c}" for c in controllers if c not in enabled)
            if wanted:
                _write(os.path.join(base, "cgroup.subtree_control"), wanted)
            return CgroupPlace(2, (base,), controllers), ""
        except OSError as error:
            why = f"cgroup v2 at {base}: {error.strerror or error}"
    return None, why


@functools.cache
def cgroups() -> tuple[CgroupPlace | None, str]:
    """``(place, "")`` where this runner can make a cgroup per bot with :data:`NEEDED` (tried
    by making one and removing it), else ``(None, why not)``."""
    if not sys.platform.startswith("linux"):
        return None, "no cgroups (not Linux)"
    try:
        v1, v2 = _cgroup_mounts()
        own = _own_cgroups()
    except (OSError, ValueError) as error:
        return None, f"no cgroups ({error})"
    place, why = None, "no cgroup file system"
    if v2 is not None:
        place, why = _v2_place(v2, own.get("", "/"))
    if place is None and all(c in v1 for c in NEEDED):
        controllers = tuple(c for c in CONTROLLERS if c in v1)
        bases = tuple(os.path.join(v1[c], own.get(c, "/").strip("/")) for c in controllers)
        place = CgroupPlace(1, tuple(base.rstrip("/") for base in bases), controllers)
    elif place is None and v1:
        why += f"; cgroup v1 lacks {', '.join(c for c in NEEDED if c not in v1)}"
    if place is None:
        return None, f"no cgroup ({why})"
    try:
        BotCgroup(place, [min(core_pool().cores)], 64 << 20, 8).remove()
    except OSError as error:
        return None, f"no cgroup (cannot make one: {error.strerror or error})"
    return place, ""


class BotCgroup:
    """One bot's cgroup, made with its limits before the bot starts (:func:`start`), entered by
    the shim before it execs the bot, killed whole and removed at the end of its game
    (:meth:`MeteredPopen.release`)."""

    made = 0
    count_lock = threading.Lock()
    live: set[BotCgroup] = set()

    def __init__(self, place: CgroupPlace, cores, memory_bytes: int, processes: int) -> None:
        with BotCgroup.count_lock:
            BotCgroup.made += 1
            name = f"{CGROUP_PREFIX}{os.getpid()}-{RUNNER_TOKEN}-{BotCgroup.made}"
        self.version, self.controllers = place.version, place.controllers
        self.folders = [os.path.join(base, name) for base in place.bases]
        self.lock = threading.Lock()
        self.removed = False
        made = []
        try:
            for folder in self.folders:
                os.mkdir(folder, 0o755)
                made.append(folder)
            BotCgroup.live.add(self)
            self._limit(cores, memory_bytes, processes)
        except OSError:
            for folder in reversed(made):
                with contextlib.suppress(OSError):
                    os.rmdir(folder)
            BotCgroup.live.discard(self)
            raise

    def _limit(self, cores, memory_bytes: int, processes: int) -> None:
        cpus = ",".join(map(str, cores))
        if self.version == 2:
            folder = self.folders[0]
            if "cpuset" in self.controllers:
                _write(os.path.join(folder, "cpuset.cpus"), cpus)
            if memory_bytes:
                _write(os.path.join(folder, "memory.max"), str(memory_bytes))
                with contextlib.suppress(FileNotFoundError):     # no swap accounting
                    _write(os.path.join(folder, "memory.swap.max"), "0")
            if processes:
                _write(os.path.join(folder, "pids.max"), str(processes))
            return
        folders = dict(zip(self.controllers, self.folders))
        memory, pids = folders["memory"], folders["pids"]
        if "cpuset" in folders:
            cpuset = folders["cpuset"]
            parent = os.path.dirname(cpuset)    # v1 starts a cpuset empty: no task may enter
            _write(os.path.join(cpuset, "cpuset.mems"), _read(os.path.join(parent, "cpuset.mems"))
                   or _read(os.path.join(parent, "cpuset.effective_mems")))
            _write(os.path.join(cpuset, "cpuset.cpus"), cpus)
        if memory_bytes:
            _write(os.path.join(memory, "memory.limit_in_bytes"), str(memory_bytes))
            with contextlib.suppress(FileNotFoundError):     # no swap accounting
                _write(os.path.join(memory, "memory.memsw.limit_in_bytes"), str(memory_bytes))
        if processes:
            _write(os.path.join(pids, "pids.max"), str(processes))

    def procs_files(self) -> list[str]:
        """The files the shim writes its pid to, to enter the group."""
        return [os.path.join(folder, "cgroup.procs") for folder in self.folders]

    def pids(self) -> list[int]:
        try:
            return [int(pid) for pid in _read(self.procs_files()[-1]).split()]
        except (OSError, ValueError):
            return []

    def kill_all(self) -> bool:
        """Kill every process of the group, until none is left; False if some outlived
        :data:`KILL_ROUNDS` rounds."""
        if self.removed:
            return True
        kill = os.path.join(self.folders[0], "cgroup.kill")
        if self.version == 2 and os.path.exists(kill):
            with contextlib.suppress(OSError):
                _write(kill, "1")
        for _ in range(KILL_ROUNDS):
            pids = self.pids()
            if not pids:
                return True
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.002)
        return not self.pids()

    def remove(self) -> None:
        """Kill what is left in it and remove its folders (once)."""
        with self.lock:
            if self.removed:
                return
            self.kill_all()
            for folder in reversed(self.folders):
                for _ in range(KILL_ROUNDS):     # a killed process leaves it a moment later
                    try:
                        os.rmdir(folder)
                        break
                    except FileNotFoundError:
                        break
                    except OSError:
                        self.kill_all()
                        time.sleep(0.002)
            self.removed = True
            BotCgroup.live.discard(self)


@atexit.register
def remove_cgroups() -> None:
    """The groups of bots still running when the runner exits go with it."""
    for group in list(BotCgroup.live):
        with contextlib.suppress(OSError):
            group.remove()


# -- cores ------------------------------------------------------------------------------------

class CorePool:
    """The cores this runner may use, handed to bots one game at a time: the least used first,
    so that bots share a core only when there are more of them than cores."""

    def __init__(self, cores) -> None:
        self.cores = sorted(cores)
        self.runner_core = self.cores[0] if len(self.cores) >= 3 else None
        self.bot_cores = self.cores[1:] if self.runner_core is not None else list(self.cores)
        self.holders = {core: 0 for core in self.bot_cores}
        self.lock = threading.Lock()

    def take(self, count: int) -> list[int]:
        with self.lock:
            chosen = sorted(self.bot_cores, key=lambda core: (self.holders[core], core))[:count]
            for core in chosen:
                self.holders[core] += 1
            return sorted(chosen)

    def give_back(self, cores) -> None:
        with self.lock:
            for core in cores:
                self.holders[core] -= 1


@functools.cache
def core_pool() -> CorePool:
    """This process's pool (a cluster worker has its own)."""
    try:
        cores = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        cores = range(os.cpu_count() or 1)
    return CorePool(cores)
