"""A bot started contained (:func:`start`): under a keeper (:mod:`ref_sim.series.process.keeper`:
what it detaches ends with it), metered, and with ``--isolate`` in a cgroup of its own
(:mod:`.cgroups`), on its own cores, under hard resource limits and, where it works, in a
bubblewrap sandbox (:mod:`.sandbox`), all set by a tiny shim (``shim_program.py``, run as
``python -I -S``) that then execs the bot (not ``preexec_fn``, unsafe in a runner full of
threads); its writing watched (:mod:`.disk_cap`).  :func:`status_line` says which guarantee is
missing here.  What each guarantee is and where it holds: docs/isolation.md.
"""

from __future__ import annotations

import errno
import os
import shutil
import sys

from agent.lifeline import RUNNER_ENV
from ref_sim.series.process import cgroups, disk_cap, keeper, sandbox
from ref_sim.series.process.isolation import NEEDS_LINUX, SUPPORTED, Isolation, _under, tmpfs_mb
from ref_sim.series.process.metering import MeteredPopen


#: The shim every isolated bot starts through, a program of its own run as ``python -I -S SHIM
#: CGROUPS CPUS DATA_BYTES PROCESSES FILE_BYTES COMMAND...``: it enters the bot's cgroup, pins it,
#: sets its limits and becomes the bot (its arguments: ``shim_program.py``'s docstring).
SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shim_program.py")


# -- what holds -------------------------------------------------------------------------------

def status_line(isolation: Isolation | None, concurrency: int = 1) -> str | None:
    """One line saying what ``--isolate`` does on this machine and which guarantee it misses
    (None without it)."""
    if isolation is None:
        return None
    if not SUPPORTED:
        return f"isolation: none: {NEEDS_LINUX}"
    place, no_cgroup = cgroups.cgroups()
    pool = cgroups.core_pool()
    wanted = 2 * concurrency * isolation.cores
    if not hasattr(os, "sched_setaffinity"):
        cores = "cores: shared (no sched_setaffinity on this system)"
    elif pool.runner_core is None:
        cores = (f"cores: {isolation.cores} per bot of {len(pool.cores)}, shared with the runner "
                 f"(too few cores for one of its own)")
    else:
        cores = (f"cores: {isolation.cores} per bot of {len(pool.bot_cores)}, core "
                 f"{pool.runner_core} left to the runner")
    if wanted > len(pool.bot_cores) and hasattr(os, "sched_setaffinity"):
        cores += f"; {wanted} wanted at once: some bots share"
    if hasattr(os, "sched_setaffinity"):
        cores += (", held by its cgroup's cpuset" if place and "cpuset" in place.controllers
                  else ", NOT held (sched_setaffinity only: a bot can widen it)")
    if not isolation.memory_mb:
        memory = "no memory cap"
    elif place:
        memory = (f"memory cap {isolation.memory_mb} MB, shared memory and tmpfs included "
                  f"(cgroup; RLIMIT_DATA too)")
    else:
        memory = (f"memory cap {isolation.memory_mb} MB of heap only (RLIMIT_DATA): shared "
                  f"memory NOT capped")
    if not isolation.processes:
        processes = "no process cap"
    elif place:
        processes = f"process cap {isolation.processes} (cgroup pids.max)"
    elif os.getuid() == 0:
        processes = "process cap NOT enforced (running as root, which RLIMIT_NPROC exempts)"
    elif own_process_count(isolation):
        processes = (f"process cap {isolation.processes} per bot, its own (RLIMIT_NPROC in its "
                     f"user namespace, which the kernel counts apart)")
    else:
        processes = (f"process cap {isolation.processes} more than the user runs, SHARED by the "
                     f"bots running at once and all your programs (RLIMIT_NPROC counts per user: "
                     f"one bot's processes can leave another none; a count of its own: a "
                     f"delegated cgroup, systemd-run --user --scope -p Delegate=yes, or root)")
    if not isolation.disk_mb:
        disk = "no disk cap"
    else:
        disk = (f"disk cap {isolation.disk_mb} MB per bot: each file it writes (RLIMIT_FSIZE) "
                f"and all its game's files and logs together (a bot past it is ended and "
                f"loses)")
        room, wanted = disk_cap.free_bytes(isolation.out) >> 20 if isolation.out else 1 << 40, (
            2 * concurrency * isolation.disk_mb)
        if room < wanted:
            disk += (f"; --out has {room} MB free, NOT enough for {wanted} MB (the caps of the "
                     f"bots at once): a full disk may stop the series (a bot that filled it "
                     f"loses; --resume goes on once there is room)")
    path, why = sandbox.bwrap() if isolation.sandbox else (None, "sandbox off")
    if place:
        ending = "its whole cgroup killed at the end of its game"
    elif path and keeper.AVAILABLE:
        # The bot is its pid namespace's first process: all of the namespace dies with it, and
        # it cannot see (nor kill) its keeper outside.
        ending = ("its whole process tree ended at the end of its game (its sandbox's pid "
                  "namespace, and its keeper)")
    elif keeper.AVAILABLE:
        ending = ("its whole process tree ended at the end of its game by its keeper, a child "
                  "subreaper (setsid children too; NOT if the bot kills its keeper first)")
    else:
        ending = "only its process group killed at the end (a setsid child is NOT reached by it)"
    unheld = ["cores", "shared memory"] + ([] if own_process_count(isolation) else ["processes"])
    unheld += [] if path else ["the end"]
    cgroup = (f"cgroup v{place.version} per bot" if place else
              f"{no_cgroup}: {', '.join(unheld[:-1])} and {unheld[-1]} NOT held by the kernel")
    shared = f", {', '.join(isolation.share)} (--isolate-share)" if isolation.share else ""
    seen = (f"sandbox bwrap: no network; each bot sees read-only the system, our Python and "
            f"packages{shared} and its own program's folder (its program alone where that "
            f"folder holds another bot's or is the runner's), writable its game's files, "
            f"nothing else: not the runner's folder, --out, a home, another bot's files; "
            f"private /tmp and /dev/shm of {tmpfs_mb(isolation)} MB each, nothing else "
            f"writable, no host sockets"
            if path else f"no sandbox ({why}): isolation is partial, bots can write (each "
                         "file capped, not all of them), reach the network and host sockets "
                         "as you")
    return f"isolation: {cgroup}; {cores}; {memory}; {processes}; {disk}; {ending}; {seen}"


# -- starting a bot ---------------------------------------------------------------------------

def check_program(command: list[str], cwd=None, env: dict | None = None) -> None:
    """FileNotFoundError as Popen raises it when ``command``'s program cannot be found: the shim
    would start and only then fail, where the runners tell "could not be launched"."""
    program = command[0] if command else ""
    if os.sep in program or (os.altsep and os.altsep in program):
        found = os.path.exists(os.path.join(cwd or ".", program))
    else:
        found = shutil.which(program, path=(env or os.environ).get("PATH")) is not None
    if not found:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def per_namespace_processes() -> bool:
    """True where the kernel counts RLIMIT_NPROC per user namespace (Linux 5.14 and later):
    a sandboxed bot's cap then counts its own processes, not the user's, nor its opponent's."""
    try:
        major, minor = (int(part) for part in os.uname().release.split(".")[:2])
    except (AttributeError, ValueError):
        return False
    return sys.platform.startswith("linux") and (major, minor) >= (5, 14)


def own_process_count(isolation: Isolation) -> bool:
    """True when each bot's process cap counts its processes alone without a cgroup: a normal
    user's sandboxed bot, its RLIMIT_NPROC set inside its own user namespace."""
    return (bool(isolation.processes) and isolation.sandbox and sandbox.bwrap()[0] is not None
            and os.getuid() != 0 and per_namespace_processes())


def start(command: list[str], isolation: Isolation | None = None, *, writable=(),
          env: dict | None = None, **options) -> MeteredPopen:
    """:func:`ref_sim.stops.start` (a session of its own: ``kill_tree`` ends it whole) under a
    keeper (:mod:`ref_sim.series.process.keeper`: what it detaches is ended with it too), metered
    (:meth:`MeteredPopen.usage`), and with ``isolation`` contained as docs/isolation.md says;
    ``writable``: the directories (and files) it may write: its game directory, its logs.
    Raises OSError or ValueError when it cannot be started, as Popen does."""
    if isolation is None or not SUPPORTED:
        if keeper.AVAILABLE:        # its keeper starts whatever the command: say now it cannot
            check_program(command, options.get("cwd"), env)
        process = MeteredPopen(keeper.wrapped(command), start_new_session=os.name == "posix",
                               env=env, **options)
        process.own_group = os.name == "posix"
        process.ends_tree = keeper.AVAILABLE
        return process
    env = dict(os.environ if env is None else env)
    check_program(command, options.get("cwd"), env)
    pool = cgroups.core_pool()
    cores = pool.take(isolation.cores)
    group = None
    try:
        wrapped = list(command)
        path = sandbox.bwrap()[0] if isolation.sandbox else None
        place = cgroups.cgroups()[0]
        # Without a cgroup, RLIMIT_NPROC set outside the sandbox counts all the user's
        # processes: one bot's fork bomb takes its opponent's headroom. Set inside the bot's
        # user namespace it counts the bot's alone (the kernel counts each namespace apart).
        own_count = place is None and own_process_count(isolation)
        if own_count:
            wrapped = [sys.executable, "-I", "-S", SHIM, "-", "-", "-",
                       f"={isolation.processes}", "-", *wrapped]
        if path is not None:
            env["TMPDIR"] = env["HOME"] = "/tmp"    # its own, in memory: no one's files
            env.pop(RUNNER_ENV, None)   # its own pid namespace cannot see the runner: it dies
            readable = sandbox.readable_paths(command, env, isolation)
            if own_count and not _under(os.path.realpath(SHIM), [os.path.realpath(p) for p in readable]):
                readable.append(SHIM)   # the shim runs inside: its file shown (read-only) if its folder is not
            wrapped = [path, *sandbox.sandbox_args(writable, readable, tmpfs_mb(isolation) << 20),
                       *wrapped]    # with it
        if place is not None:
            group = cgroups.BotCgroup(place, cores, isolation.memory_mb << 20, isolation.processes)
        shim = [sys.executable, "-I", "-S", SHIM,
                ",".join(group.procs_files()) if group else "-",
                ",".join(map(str, cores)) or "-",
                str(isolation.memory_mb << 20) if isolation.memory_mb else "-",
                # pids.max counts the bot's own; RLIMIT_NPROC beside it would count the
                # user's, and a fork bomb in one group would leave the other bots no headroom
                str(isolation.processes) if isolation.processes and place is None
                and not own_count else "-",
                str(isolation.disk_mb << 20) if isolation.disk_mb else "-"]
        process = MeteredPopen(keeper.wrapped(shim + wrapped), start_new_session=True, env=env,
                               **options)
    except BaseException:
        pool.give_back(cores)
        if group is not None:
            group.remove()
        raise
    process.own_group, process.ends_tree = True, keeper.AVAILABLE
    process.cores, process.cgroup = cores, group
    if isolation.disk_mb:
        process.disk_log = disk_cap.log_of(options)
        disk_cap.DISK_GUARD.watch(process, disk_cap.written_paths(writable, options), isolation.disk_mb)
    if process.returncode is not None:      # reaped already: give back now
        process.release()
    return process
