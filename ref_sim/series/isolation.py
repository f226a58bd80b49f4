"""Fair and contained bots: ``--isolate`` for ``ref_sim.match``, ``ref_sim.stdio`` and the
tournament, and what each bot used in a game (CPU seconds, peak memory), isolated or not.

Student bots busy-wait (a third to all of a core while they wait), and every bot of a series
runs with the user's rights.  With :class:`Isolation` each bot is started (:func:`start`):

* on its own CPU core(s) (``os.sched_setaffinity``), taken from the cores this runner may use
  but the first, which is left to the runner and its referees; with fewer than three cores the
  bots still get one each but the runner shares them (:func:`status_line` says so);
* under a memory cap, ``RLIMIT_DATA`` (the heap and private writable mappings, not the virtual
  address space: Java and JavaScript reserve gigabytes of it that they never touch, and
  ``RLIMIT_AS`` would kill them at start-up); a bot that goes over fails to allocate and dies
  (a crash or a time-out: a loss), the runner does not;
* under a process cap, ``RLIMIT_NPROC``: the kernel counts it per user (processes and threads
  of every program the user runs), so the cap is "N more than the user runs now", and it does
  not bind root at all (the kernel exempts it, inside bwrap's user namespace too);
* with bubblewrap (``bwrap``, Linux) where it is installed and works: no network, a read-only
  view of the whole file system but for its game directory and a scratch folder of its own
  (``TMPDIR``, deleted after it), its own process, IPC and host-name namespaces, no
  capabilities, and it dies with the runner.  Without bwrap the isolation is partial, and
  :func:`status_line` says so.

The limits are set by a tiny Python shim (:data:`SHIM`) that execs the bot (or bwrap), not by
``preexec_fn``, which is unsafe in a runner full of threads.

Usage (:func:`usage_of`): every process started here is reaped with ``os.wait4``, whose
resource usage covers the bot and the children it waited for; a sampler reads ``/proc`` twice a
second for the bot's whole session (a shell's children, bwrap's sandbox), so a bot killed at the
end of a game (its children never reaped) is counted to within half a second.  ``peak_mb`` is
the largest resident size of one process of the bot (``ru_maxrss``, ``VmHWM``).
"""

from __future__ import annotations

import errno
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

from agent.lifeline import RUNNER_ENV
from agent.options import whole
from agent.commandline import only_with
from ref_sim.series import keeper

#: Defaults of the options: one core, 2 GiB of data (a JVM's default heap on a 8 GiB laptop
#: is 2 GiB; our agent needs well under 200 MB) and 256 processes and threads more than the
#: user already runs (a JVM starts some 20-40 threads).
DEFAULT_CORES = 1
DEFAULT_MEMORY_MB = 2048
DEFAULT_PROCESSES = 256
#: Seconds between two looks at the bots' processes in /proc.
SAMPLE_INTERVAL = 0.5

#: Run as ``python -I -S -c SHIM CPUS DATA_BYTES PROCESSES COMMAND...``: pins itself, sets the
#: limits, then becomes the command (whose children inherit all of it).  ``-`` leaves one out.
SHIM = r"""
import os, resource, sys
cpus, data, processes = sys.argv[1:4]
if cpus != "-" and hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, [int(c) for c in cpus.split(",")])
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
if data != "-":
    resource.setrlimit(resource.RLIMIT_DATA, (int(data), int(data)))
if processes != "-" and os.getuid() != 0:
    uid, running = os.getuid(), 0
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/status" % pid) as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                running += int(fields["Threads"])
        except (OSError, ValueError, KeyError):
            pass
    cap = running + int(processes)
    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    resource.setrlimit(resource.RLIMIT_NPROC, (cap if hard < 0 else min(cap, hard), hard))
try:
    os.execvp(sys.argv[4], sys.argv[4:])
except OSError as error:
    sys.stderr.write("could not start: %s\n" % error)
    sys.exit(127)
"""


@dataclass(frozen=True)
class Isolation:
    """How each bot is contained (picklable: it travels with a game to a cluster worker).
    ``memory_mb`` and ``processes`` 0: no cap; ``sandbox``: use bwrap where it works."""
    cores: int = DEFAULT_CORES
    memory_mb: int = DEFAULT_MEMORY_MB
    processes: int = DEFAULT_PROCESSES
    sandbox: bool = True


# -- the options ------------------------------------------------------------------------------

def add_options(parser) -> None:
    """``--isolate`` and its settings, on a runner's parser (match, stdio, tournament)."""
    group = parser.add_argument_group("isolation (ref_sim.series.isolation, docs/isolation.md)")
    group.add_argument("--isolate", action="store_true",
                       help="run each bot on its own core(s), with a memory and a process cap, "
                            "and where bwrap works without network and read-only but for its "
                            "game directory (not recorded: give it again with --resume)")
    group.add_argument("--isolate-cores", type=whole(1, 1024), default=None,
                       metavar="N", help=f"cores per bot (default {DEFAULT_CORES})")
    group.add_argument("--isolate-memory", type=whole(0, 1 << 30), default=None,
                       metavar="MB", help="data memory cap per bot, RLIMIT_DATA (default "
                                          f"{DEFAULT_MEMORY_MB}; 0: none)")
    group.add_argument("--isolate-processes", type=whole(0, 1 << 22), default=None,
                       metavar="N", help="processes and threads per bot beyond what the user "
                                         f"runs, RLIMIT_NPROC (default {DEFAULT_PROCESSES}; 0: "
                                         "none; root is exempt)")


#: The settings of ``--isolate``, which mean nothing without it.
SETTINGS = {"--isolate-cores": "isolate_cores", "--isolate-memory": "isolate_memory",
            "--isolate-processes": "isolate_processes"}


def check_options(parser, args) -> None:
    """A setting of ``--isolate`` given without it is a usage error (it would be ignored)."""
    only_with(parser, args, "--isolate", bool(getattr(args, "isolate", False)), SETTINGS)


def from_args(args) -> Isolation | None:
    """The :class:`Isolation` of a parsed command line, None without ``--isolate``."""
    if not getattr(args, "isolate", False):
        return None
    def given(value, default):
        return default if value is None else value
    return Isolation(given(args.isolate_cores, DEFAULT_CORES), given(args.isolate_memory, DEFAULT_MEMORY_MB),
                     given(args.isolate_processes, DEFAULT_PROCESSES))


@functools.cache
def bwrap() -> tuple[str | None, str]:
    """``(path, "")`` when bwrap is installed and can build a sandbox here, else ``(None, why
    not)`` (missing, or no user namespaces in this container)."""
    path = shutil.which("bwrap") if sys.platform.startswith("linux") else None
    if path is None:
        return None, "bwrap not found (Debian/Ubuntu: apt install bubblewrap)"
    try:
        done = subprocess.run([path, *sandbox_args([]), "true"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=30)
    except (OSError, subprocess.SubprocessError) as error:
        return None, f"bwrap does not run ({error})"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, f"bwrap cannot build a sandbox here ({said[-1] if said else done.returncode})"
    return path, ""


def sandbox_args(writable) -> list[str]:
    """bwrap's options: everything read-only but ``writable`` (directories), no network, its own
    namespaces, no capabilities, gone with its parent."""
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--cap-drop", "ALL", "--die-with-parent",
            # The bot is the sandbox's pid 1 and bwrap's own child: bwrap reaps it, so its
            # resource usage reaches our wait4 (with bwrap's init between them it was lost).
            "--as-pid-1"]
    for directory in writable:
        args += ["--bind", str(directory), str(directory)]
    return args + ["--"]


def status_line(isolation: Isolation | None, concurrency: int = 1) -> str | None:
    """One line saying what ``--isolate`` does on this machine (None without it)."""
    if isolation is None:
        return None
    if not SUPPORTED:
        return "isolation: not available on this system (POSIX only): bots run as without --isolate"
    pool = core_pool()
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
    memory = (f"memory cap {isolation.memory_mb} MB (RLIMIT_DATA)" if isolation.memory_mb
              else "no memory cap")
    if not isolation.processes:
        processes = "no process cap"
    elif os.getuid() == 0:
        processes = "process cap not enforced (running as root, which RLIMIT_NPROC exempts)"
    else:
        processes = f"process cap {isolation.processes} more than the user runs (RLIMIT_NPROC)"
    path, why = bwrap() if isolation.sandbox else (None, "sandbox off")
    sandbox = ("sandbox bwrap: no network, read-only but its game directory and a scratch folder"
               if path else f"no sandbox ({why}): isolation is partial, bots can write and "
                            "reach the network as you")
    return f"isolation: {cores}; {memory}; {processes}; {sandbox}"


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


# -- usage ------------------------------------------------------------------------------------

class Sampler:
    """One thread that looks at /proc every :data:`SAMPLE_INTERVAL` seconds for the sessions of
    the processes it tracks (each started in a session of its own: its id is the leader's pid),
    and keeps each session's largest CPU time and resident size seen."""

    def __init__(self) -> None:
        self.tracked: dict[int, dict] = {}
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self.ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def track(self, pid: int) -> dict:
        seen = {"cpu_seconds": 0.0, "peak_kb": 0}
        with self.lock:
            self.tracked[pid] = seen
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="usage-sampler",
                                               daemon=True)
                self.thread.start()
        return seen

    def untrack(self, pid: int) -> None:
        with self.lock:
            self.tracked.pop(pid, None)

    def _run(self) -> None:
        while True:
            with self.lock:
                if not self.tracked:
                    self.thread = None
                    return
                sessions = dict(self.tracked)
            try:
                self.sample(sessions)
            except OSError:
                pass
            time.sleep(SAMPLE_INTERVAL)

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
#: The shim needs POSIX's resource limits (affinity is Linux's: elsewhere the bots share cores).
SUPPORTED = os.name == "posix"


class MeteredPopen(subprocess.Popen):
    """A Popen reaped with ``os.wait4`` (its resource usage kept) whose session is sampled;
    when it is reaped its cores go back to the pool and its scratch folder is removed."""

    cores: list[int] = []
    scratch: str | None = None

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
        """Give back what it held (once): its cores, its scratch folder."""
        if self.cleaned:
            return
        self.cleaned = True
        core_pool().give_back(self.cores)
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)

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


def usage_line(game: dict) -> str | None:
    """``usage: Agent1 3.20 s CPU, 41 MB; Random2 0.05 s CPU, 12 MB`` of a game line, or None
    (no usage recorded, or a malformed one: a record is untrusted input)."""
    usage = game.get("usage")
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


def start(command: list[str], isolation: Isolation | None = None, *, writable=(),
          env: dict | None = None, **options) -> MeteredPopen:
    """:func:`ref_sim.stops.start` (a session of its own: ``kill_tree`` ends it whole) under a
    keeper (:mod:`ref_sim.series.keeper`: what it detaches is ended with it too), metered
    (:meth:`MeteredPopen.usage`), and with ``isolation`` contained as the module docstring says;
    ``writable``: the directories it may write (its game directory) besides its scratch folder.
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
    pool = core_pool()
    cores = pool.take(isolation.cores)
    scratch = None
    try:
        wrapped = list(command)
        path = bwrap()[0] if isolation.sandbox else None
        if path is not None:
            scratch = tempfile.mkdtemp(prefix="uttt-scratch-")
            env["TMPDIR"] = scratch
            env.pop(RUNNER_ENV, None)   # its own pid namespace cannot see the runner: it dies
            wrapped = [path, *sandbox_args([*writable, scratch]), *wrapped]    # with it instead
        shim = [sys.executable, "-I", "-S", "-c", SHIM, ",".join(map(str, cores)) or "-",
                str(isolation.memory_mb << 20) if isolation.memory_mb else "-",
                str(isolation.processes) if isolation.processes else "-"]
        process = MeteredPopen(keeper.wrapped(shim + wrapped), start_new_session=True, env=env,
                               **options)
    except BaseException:
        pool.give_back(cores)
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
        raise
    process.own_group, process.ends_tree = True, keeper.AVAILABLE
    process.cores, process.scratch = cores, scratch
    if process.returncode is not None:      # reaped already: give back now
        process.release()
    return process
