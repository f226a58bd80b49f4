"""What ``--isolate`` is: its settings (:class:`Isolation`: cores, memory, processes, disk, shared
folders), the options that give them to ``ref_sim.match``, ``ref_sim.stdio`` and the tournament,
how a series records them for ``--resume``, and the places no bot may ever see
(:func:`why_hidden`).  How a bot is then contained: :mod:`ref_sim.series.process.contain`.
What each guarantee is and where it holds: docs/isolation.md.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field

from agent.options import whole
from agent.cli_common import only_with


#: Defaults of the options: one core, 2 GiB of data (a JVM's default heap on a 8 GiB laptop
#: is 2 GiB; our agent needs well under 200 MB) and 256 processes and threads more than the
#: user already runs (a JVM starts some 20-40 threads).
DEFAULT_CORES = 1
DEFAULT_MEMORY_MB = 2048
DEFAULT_PROCESSES = 256
#: What each bot may write in all (its game view, its logs), in MB: a bot's log of a few MB is
#: already a chatty one; a disk full of one bot's output stops the series.
DEFAULT_DISK_MB = 100


@dataclass(frozen=True)
class Isolation:
    """How each bot is contained (picklable: it travels with a game to a cluster worker).
    ``memory_mb``, ``processes`` and ``disk_mb`` 0: no cap; ``sandbox``: use bwrap where it works;
    ``share``: the folders every sandboxed bot may read besides its own (``--isolate-share``,
    real paths); ``out`` and ``programs`` (each bot's program, real paths): what no other
    bot may see (:func:`for_event`)."""
    cores: int = DEFAULT_CORES
    memory_mb: int = DEFAULT_MEMORY_MB
    processes: int = DEFAULT_PROCESSES
    sandbox: bool = True
    share: tuple[str, ...] = ()
    disk_mb: int = DEFAULT_DISK_MB
    # The event's places, not settings: two isolations of the same settings are equal.
    out: str = field(default="", compare=False)
    programs: tuple[tuple[str, ...], ...] = field(default=(), compare=False)


# -- the options ------------------------------------------------------------------------------

def add_options(parser) -> None:
    """``--isolate`` and its settings, on a runner's parser (match, stdio, tournament)."""
    group = parser.add_argument_group("isolation (ref_sim.series.process.isolation, docs/isolation.md)")
    group.add_argument("--isolate", action="store_true",
                       help="run each bot on its own core(s), with a memory and a process cap, "
                            "and where bwrap works without network, seeing only the system, its "
                            "own program's folder and its game (recorded: --resume keeps it)")
    group.add_argument("--isolate-cores", type=whole(1, 1024), default=None,
                       metavar="N", help=f"cores per bot (default {DEFAULT_CORES})")
    group.add_argument("--isolate-memory", type=whole(0, 1 << 30), default=None,
                       metavar="MB", help="data memory cap per bot, RLIMIT_DATA (default "
                                          f"{DEFAULT_MEMORY_MB}; 0: none)")
    group.add_argument("--isolate-processes", type=whole(0, 1 << 22), default=None,
                       metavar="N", help="processes and threads per bot: its cgroup's pids.max, "
                                         "or RLIMIT_NPROC (in its sandbox's user namespace: its "
                                         "own; else shared with what the user runs) (default "
                                         f"{DEFAULT_PROCESSES}; 0: none; root is exempt)")
    group.add_argument("--isolate-disk", type=whole(0, 1 << 30), default=None, metavar="MB",
                       help="what each bot may write in all (its game's files, its logs): each "
                            "file capped by RLIMIT_FSIZE, a bot past it ended and loses (default "
                            f"{DEFAULT_DISK_MB}; 0: none)")
    group.add_argument("--isolate-share", action="append", default=None, metavar="PATH",
                       help="a folder (or file) every sandboxed bot may also read, read-only: "
                            "what bots need beyond their own folder (repeatable)")


#: The settings of ``--isolate``, which mean nothing without it.
SETTINGS = {"--isolate-cores": "isolate_cores", "--isolate-memory": "isolate_memory",
            "--isolate-processes": "isolate_processes", "--isolate-share": "isolate_share",
            "--isolate-disk": "isolate_disk"}


def check_options(parser, args) -> None:
    """A setting of ``--isolate`` given without it is a usage error (it would be ignored), and
    so is ``--isolate`` where it cannot work (:data:`NEEDS_LINUX`)."""
    only_with(parser, args, "--isolate", bool(getattr(args, "isolate", False)), SETTINGS)
    if getattr(args, "isolate", False) and not SUPPORTED:
        parser.error(NEEDS_LINUX)
    for path in getattr(args, "isolate_share", None) or ():
        problem = share_problem(path, getattr(args, "out", None))
        if problem:
            parser.error(f"--isolate-share {path}: {problem}")


def share_problem(path: str, out=None) -> str | None:
    """Why ``path`` cannot be shared with every bot (None: it can): it must exist and be no
    place :func:`why_hidden` hides (the root, a home, /proc, the runner's folder, --out)."""
    if not os.path.exists(path):
        return "no such file or folder"
    real = os.path.realpath(path)
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:
        cwd = None
    why = why_hidden(real, Isolation(out=os.path.realpath(out) if out else ""), cwd)
    return why or (f"{real} is a folder shared by all" if real in SHARED_DIRS else None)


def from_args(args) -> Isolation | None:
    """The :class:`Isolation` of a parsed command line, None without ``--isolate``."""
    if not getattr(args, "isolate", False):
        return None
    def given(value, default):
        return default if value is None else value
    shares = tuple(os.path.realpath(path) for path in getattr(args, "isolate_share", None) or ())
    return Isolation(given(args.isolate_cores, DEFAULT_CORES), given(args.isolate_memory, DEFAULT_MEMORY_MB),
                     given(args.isolate_processes, DEFAULT_PROCESSES), share=shares,
                     disk_mb=given(getattr(args, "isolate_disk", None), DEFAULT_DISK_MB))


#: Folders never shown whole to a bot: where a bot's program lies in one, that file alone is
#: shown.  They hold other programs' sockets or the user's files.
SHARED_DIRS = ("/", "/tmp", "/var/tmp", "/run", "/var/run", "/var", "/dev/shm", "/home", "/root",
               "/etc", os.path.expanduser("~"))
#: Never shown to a bot, nor anything in them: the kernel's and the host's live state, its
#: boot files and settings (the few files of /etc an interpreter reads: :data:`SYSTEM_ETC`).
NEVER_SHOWN = ("/proc", "/sys", "/dev", "/run", "/var/run", "/boot", "/etc", "/lost+found")
#: The size of its private /tmp and /dev/shm when there is no memory cap (each).
DEFAULT_TMPFS_MB = 256


def _under(path: str, folders) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


def _homes() -> list[str]:
    """Every home on this host: /root, the user's (``HOME``) and each folder of /home."""
    homes = {"/root", os.path.realpath(os.path.expanduser("~"))}
    with contextlib.suppress(OSError):
        homes.update(os.path.join("/home", name) for name in os.listdir("/home"))
    return sorted(homes)


def why_hidden(real: str, isolate: Isolation, cwd: str | None, homes=None) -> str | None:
    """Why the real path ``real`` may not be shown to any bot, or None: the root, a place of
    :data:`NEVER_SHOWN`, a home or a folder holding one, a folder holding the runner's folder
    (``cwd``) or ``--out``, or anything in ``--out``."""
    if real == "/":
        return "it is the whole file system (/)"
    if _under(real, NEVER_SHOWN):
        return f"{real} is the host's own (/proc, /sys, /dev, /run, /etc, /boot are never shown)"
    for home in _homes() if homes is None else homes:
        if _under(home, [real]):
            return f"{real} is or holds a home ({home})"
    if cwd and _under(cwd, [real]):
        return f"{real} is or holds the runner's working directory ({cwd})"
    if isolate.out and (_under(isolate.out, [real]) or _under(real, [isolate.out])):
        return f"{real} is, holds or is in --out ({isolate.out})"
    return None


def tmpfs_mb(isolation: Isolation) -> int:
    """The size of a sandboxed bot's private /tmp and of its /dev/shm (each): its memory cap."""
    return isolation.memory_mb or DEFAULT_TMPFS_MB


#: The shim needs POSIX's resource limits (affinity is Linux's: elsewhere the bots share cores).
SUPPORTED = os.name == "posix"
#: What ``--isolate`` says where it cannot work, in one line: cgroups, bwrap, rlimits and process
#: sessions are Linux's (a Mac gets the rlimits and sessions; Windows none of them).
NEEDS_LINUX = ("--isolate needs Linux (cgroups, bwrap, resource limits): on Windows leave it out, "
               "or run the series under WSL")


# -- isolation kept across --resume ------------------------------------------------------------
# A series or tournament records its isolation in series.json / tournament.json ("isolate": the
# settings, or null), so that --resume keeps it: a series begun isolated is resumed isolated,
# --isolate given or not, and one begun without it refuses --isolate (settings.merge_settings).

def recorded_setting(isolate: Isolation | None) -> dict | None:
    """What the settings file keeps of ``isolate`` (None: not isolated)."""
    if isolate is None:
        return None
    shares = {"share": list(isolate.share)} if isolate.share else {}    # older files have none
    return {"cores": isolate.cores, "memory_mb": isolate.memory_mb, "processes": isolate.processes,
            "disk_mb": isolate.disk_mb, **shares}


def from_record(setting) -> Isolation | None:
    """The :class:`Isolation` a settings file records (:func:`recorded_setting`; None: not
    isolated).  ValueError, one line, if the file's value is not one."""
    if setting is None:
        return None
    numbers = {"cores", "memory_mb", "processes"}
    shares = setting.get("share", []) if isinstance(setting, dict) else None
    # A series begun before --isolate-disk has no disk_mb: resumed with the default cap.
    disk = setting.get("disk_mb", DEFAULT_DISK_MB) if isinstance(setting, dict) else None
    if (not isinstance(setting, dict)
            or not numbers <= set(setting) <= numbers | {"share", "disk_mb"}
            or not all(type(setting[key]) is int and setting[key] >= 0 for key in numbers)
            or type(disk) is not int or disk < 0
            or setting["cores"] < 1 or not isinstance(shares, list)
            or not all(isinstance(path, str) and path for path in shares)):
        raise ValueError("cannot resume: the recorded 'isolate' must be null or its cores, "
                         "memory_mb, processes and disk_mb (whole numbers) and its shared "
                         "folders")
    if not SUPPORTED:
        raise ValueError(f"cannot resume here: the series was isolated, and {NEEDS_LINUX}")
    return Isolation(setting["cores"], setting["memory_mb"], setting["processes"],
                     share=tuple(os.path.realpath(path) for path in shares), disk_mb=disk)


def command_options(isolate: Isolation | None) -> list[str]:
    """``--isolate`` and its settings as a command line gives them (the resume command)."""
    if isolate is None:
        return []
    shares = [word for path in isolate.share for word in ("--isolate-share", path)]
    return ["--isolate", "--isolate-cores", str(isolate.cores), "--isolate-memory", str(isolate.memory_mb),
            "--isolate-processes", str(isolate.processes), "--isolate-disk", str(isolate.disk_mb),
            *shares]
