"""Fair and contained bots: ``--isolate`` for ``ref_sim.match``, ``ref_sim.stdio`` and the
tournament, and what each bot used in a game (CPU seconds, peak memory), isolated or not.

With :class:`Isolation` each bot is started (:func:`start`) in a cgroup of its own
(:class:`BotCgroup`), on its own cores, under hard resource limits and, where it works, in a
bubblewrap sandbox, all set by a tiny shim (:data:`SHIM`) that then execs the bot (not
``preexec_fn``, unsafe in a runner full of threads); :func:`status_line` says which guarantee is
missing here and :func:`usage_of` what a bot used. What each guarantee is and where it holds:
docs/isolation.md.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import functools
import glob
import os
import secrets
import signal
import shutil
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace

from agent.lifeline import RUNNER_ENV
from agent.options import whole
from agent.cli_common import only_with
from ref_sim import command_words
from ref_sim.referees.file_referee import END_GAME, FIRST_FOUR_MOVES, MOVE_FILE
from ref_sim.series import keeper
#: Defaults of the options: one core, 2 GiB of data (a JVM's default heap on a 8 GiB laptop
#: is 2 GiB; our agent needs well under 200 MB) and 256 processes and threads more than the
#: user already runs (a JVM starts some 20-40 threads).
DEFAULT_CORES = 1
DEFAULT_MEMORY_MB = 2048
DEFAULT_PROCESSES = 256
#: What each bot may write in all (its game view, its logs), in MB: a bot's log of a few MB is
#: already a chatty one; a disk full of one bot's output stops the series.
DEFAULT_DISK_MB = 100
#: Seconds between two looks at the bots' processes in /proc.
SAMPLE_INTERVAL = 0.5

#: Run as ``python -I -S -c SHIM CGROUPS CPUS DATA_BYTES PROCESSES FILE_BYTES COMMAND...``:
#: enters its cgroup (each ``cgroup.procs`` of the comma-separated CGROUPS), pins itself, sets
#: the limits (hard ones: the soft and the hard limit alike), then becomes the command (whose
#: children inherit all of it).  ``-`` leaves one out.  PROCESSES ``N``: N more than the user
#: runs now; ``=N``: exactly N (inside the bot's own user namespace, which the kernel counts
#: apart).  Not entering its cgroup is a failure to start.
SHIM = r"""
import os, resource, sys
groups, cpus, data, processes, file_bytes = sys.argv[1:6]
for procs in groups.split(",") if groups != "-" else []:
    try:
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
    except OSError as error:
        sys.stderr.write("could not start: cannot enter its cgroup (%s)\n" % error)
        sys.exit(127)
if cpus != "-" and hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, [int(c) for c in cpus.split(",")])
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
if data != "-":
    resource.setrlimit(resource.RLIMIT_DATA, (int(data), int(data)))
if file_bytes != "-":
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(file_bytes), int(file_bytes)))
if processes.startswith("="):
    cap = int(processes[1:])
    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    cap = cap if hard < 0 else min(cap, hard)
    resource.setrlimit(resource.RLIMIT_NPROC, (cap, cap))
elif processes != "-" and os.getuid() != 0:
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
    cap = cap if hard < 0 else min(cap, hard)
    resource.setrlimit(resource.RLIMIT_NPROC, (cap, cap))
try:
    os.execvp(sys.argv[6], sys.argv[6:])
except OSError as error:
    sys.stderr.write("could not start: %s\n" % error)
    sys.exit(127)
"""


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
    group = parser.add_argument_group("isolation (ref_sim.series.isolation, docs/isolation.md)")
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


# -- the sandbox ------------------------------------------------------------------------------

#: What a sandboxed bot sees of the system, read-only: its programs and libraries (``/usr``; on
#: a merged-/usr system ``/bin``, ``/sbin`` and ``/lib*`` are links into it, made as links) and
#: ``/opt``, where a JDK may live.  Not ``/home``, ``/root``, ``/run``, ``/var`` nor the host's
#: ``/tmp``: no one's files and no host socket.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt")
#: Of /etc, only what interpreters read to start: the dynamic linker's cache, the links that
#: ``update-alternatives`` makes (``/usr/bin/java`` -> ``/etc/alternatives/java``), the user
#: and group names (Java asks for its user's home), the time zone, the public certificates
#: (a JDK's ``cacerts`` links there; Node warns without the ones ``NODE_EXTRA_CA_CERTS`` names);
#: and the JDKs' settings (``/etc/java*``: a JDK's ``conf/`` links there).  Not the rest: no
#: private keys (``/etc/ssl/private``), no passwords.
SYSTEM_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
              "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/localtime",
              "/etc/timezone", "/etc/ssl/certs")
#: Folders never shown whole to a bot: where a bot's program lies in one, that file alone is
#: shown.  They hold other programs' sockets or the user's files.
SHARED_DIRS = ("/", "/tmp", "/var/tmp", "/run", "/var/run", "/var", "/dev/shm", "/home", "/root",
               "/etc", os.path.expanduser("~"))
#: Never shown to a bot, nor anything in them: the kernel's and the host's live state, its
#: boot files and settings (the few files of /etc an interpreter reads: :data:`SYSTEM_ETC`).
NEVER_SHOWN = ("/proc", "/sys", "/dev", "/run", "/var/run", "/boot", "/etc", "/lost+found")
#: The project (agent/ and ref_sim/): a built-in bot runs from its packages, system-like and
#: read-only; never the project's folder itself, which may hold --out or a class's files.
PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGES = tuple(os.path.join(PROJECT, name) for name in ("agent", "ref_sim"))
#: Java's options whose value is the class path: the bot's program.
CLASS_PATH_OPTIONS = ("-cp", "-classpath", "--class-path")
#: The size of its private /tmp and /dev/shm when there is no memory cap (each).
DEFAULT_TMPFS_MB = 256


@functools.cache
def bwrap() -> tuple[str | None, str]:
    """``(path, "")`` when bwrap is installed and can build a sandbox here, else ``(None, why
    not)`` (missing, too old to cap a tmpfs's size, or no user namespaces in this container)."""
    path = shutil.which("bwrap") if sys.platform.startswith("linux") else None
    if path is None:
        return None, "bwrap not found (Debian/Ubuntu: apt install bubblewrap)"
    try:
        done = subprocess.run([path, *sandbox_args([], [], 1 << 20), "true"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=30)
    except (OSError, subprocess.SubprocessError) as error:
        return None, f"bwrap does not run ({error})"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else done.returncode
        if "--size" in str(why):
            why = "bwrap older than 0.5 cannot cap /dev/shm"
        return None, f"bwrap cannot build a sandbox here ({why})"
    return path, ""


def sandbox_args(writable, readable, tmpfs_bytes: int) -> list[str]:
    """bwrap's options: a minimal file system (:data:`SYSTEM_DIRS`, :data:`SYSTEM_ETC` and
    ``readable`` read-only, ``writable`` read-write, a private ``/tmp`` and ``/dev/shm`` of
    ``tmpfs_bytes`` each), no network, its own namespaces, no capabilities, gone with its
    parent."""
    args = []
    for directory in SYSTEM_DIRS:
        if os.path.islink(directory):           # merged /usr: /bin -> usr/bin
            args += ["--symlink", os.readlink(directory), directory]
        elif os.path.isdir(directory):
            args += ["--ro-bind", directory, directory]
    for path in [*SYSTEM_ETC, *sorted(glob.glob("/etc/java*"))]:
        args += ["--ro-bind-try", path, path]
    args += ["--proc", "/proc", "--dev", "/dev",
             "--remount-ro", "/dev",        # its devices, but no files of its own there
             "--size", str(tmpfs_bytes), "--tmpfs", "/dev/shm",
             "--size", str(tmpfs_bytes), "--tmpfs", "/tmp",
             "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
             "--unshare-cgroup-try", "--cap-drop", "ALL", "--die-with-parent",
             # The bot is the sandbox's pid 1 and bwrap's own child: bwrap reaps it, so its
             # resource usage reaches our wait4 (with bwrap's init between them it was lost).
             "--as-pid-1"]
    for path in readable:               # first: a writable folder inside one stays writable
        args += ["--ro-bind", str(path), str(path)]
    for path in writable:
        args += ["--bind", str(path), str(path)]
    # bwrap's own root is a tmpfs of no size the bot owns: read-only once built, so that no
    # /var/tmp, /home or file of its own appears there (the mounts on it stay as they are).
    return args + ["--remount-ro", "/", "--"]


def _under(path: str, folders) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


def _clean(path: str) -> str:
    """``path`` absolute and normalised as the kernel reads it: ``//``, ``/./`` and ``..``
    undone (``os.path.abspath('//')`` stays ``//``, which is ``/``)."""
    return os.path.normpath("/" + os.path.abspath(path).lstrip("/"))


def _homes() -> list[str]:
    """Every home on this host: /root, the user's (``HOME``) and each folder of /home."""
    homes = {"/root", os.path.realpath(os.path.expanduser("~"))}
    with contextlib.suppress(OSError):
        homes.update(os.path.join("/home", name) for name in os.listdir("/home"))
    return sorted(homes)


def program_paths(command: list[str], env: dict) -> list[str]:
    """The paths (as its command gives them) of a bot's own program: the program itself, or
    after an interpreter (:data:`ref_sim.series.specs.INTERPRETERS`) its script (the first
    word that is not an option), its class path's entries and jar, or the module of ``-m``
    where the bot's ``PYTHONPATH`` finds it (its file, or its package's folder).  Not the other paths it names:
    a path merely named on a command line is an argument, not the bot's."""
    from ref_sim.series.specs import INTERPRETERS, VALUE_OPTIONS
    if not command:
        return []
    first = command[0]
    if not INTERPRETERS.fullmatch(os.path.basename(first)):
        found = first if os.sep in first else shutil.which(first, path=env.get("PATH"))
        return [found] if found else []
    paths: list[str] = []
    words = iter(command[1:])
    for word in words:
        if word in CLASS_PATH_OPTIONS or word.startswith("--class-path="):
            value = word.partition("=")[2] if "=" in word else next(words, "")
            paths += [part for part in value.split(os.pathsep) if part]
        elif word == "-jar":
            paths.append(next(words, ""))
            break
        elif word == "-m":
            module = _module_path(next(words, ""), env.get("PYTHONPATH", ""))
            paths += [module] if module else []
            break
        elif word == "-c":
            break
        elif word in VALUE_OPTIONS:
            next(words, None)
        elif not word.startswith("-"):
            paths.append(word)
            break
    return [path for path in paths if os.path.isabs(path) and os.path.exists(path)]


def _module_path(module: str, pythonpath: str) -> str | None:
    """Where the first folder of ``pythonpath`` that holds ``module``'s top package finds it:
    its file, or its package's folder (``bots.kea``: ``bots/kea.py``, not all of ``bots/``)."""
    parts = [part for part in module.split(".") if part]
    for entry in pythonpath.split(os.pathsep):
        if not parts or not os.path.isabs(entry):
            continue
        path = entry
        for number, part in enumerate(parts, 1):
            if os.path.isfile(os.path.join(path, part + ".py")) and number == len(parts):
                return os.path.join(path, part + ".py")
            if not os.path.isdir(os.path.join(path, part)):
                break
            path = os.path.join(path, part)
        else:
            return path
        if path != entry and os.path.exists(os.path.join(path, "__init__.py")):
            return None     # Python stops at the first regular package of that name too
    return None


def _event_env() -> dict:
    """What :func:`program_paths` needs of a bot's environment, as the runner gives it
    (:func:`ref_sim.series.launch.child_env`)."""
    from ref_sim.series import realbots
    from ref_sim.series.specs import PROJECT_ROOT
    return {"PATH": os.environ.get("PATH", ""),
            "PYTHONPATH": os.pathsep.join(filter(None, [PROJECT_ROOT, realbots.runner_directory(),
                                                        os.environ.get("PYTHONPATH")]))}


def _system_like() -> list[str]:
    """What every bot may read besides the system: the runner's Python (its installation and
    its ``sys.path``, but for the runner's folder and the project's) and the project's packages."""
    found = [sys.prefix, sys.base_prefix, sys.exec_prefix, *PACKAGES]
    found += [entry for entry in sys.path if entry and os.path.isabs(entry) and os.path.isdir(entry)]
    return [path for path in found if os.path.exists(path) and _clean(path) != PROJECT]


def for_event(isolate: Isolation | None, commands, out) -> Isolation | None:
    """``isolate`` told the event's places no bot may see: ``out`` and each bot's program
    (``commands``: each bot's command line, a list of words or a template), so that no bot sees
    another's.  ValueError, one line, when a ``--isolate-share`` folder holds a bot's program."""
    if isolate is None:
        return None
    env, shown = _event_env(), [os.path.realpath(path) for path in _system_like()]
    programs = []
    for command in commands:
        words = command_words.split(command) if isinstance(command, str) else list(command)
        real = tuple(sorted({os.path.realpath(path) for path in program_paths(words, env)}))
        real = tuple(path for path in real if not _under(path, [*SYSTEM_DIRS, *shown]))
        if real:
            programs.append(real)
    for share in isolate.share:
        held = [path for bot in programs for path in bot if _under(path, [share])]
        if held:
            raise ValueError(f"--isolate-share {share}: it holds a bot's program ({held[0]}): "
                             "every bot would see it; share a folder of its own")
    return replace(isolate, out=os.path.realpath(out) if out else "", programs=tuple(programs))


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


def readable_paths(command: list[str], env: dict, isolate: Isolation | None = None) -> list[str]:
    """What a sandboxed bot reads besides the system and its game: the runner's Python and the
    project's packages (a built-in is ``{python} -m ...``), the folders of its ``sys.path`` and
    of the bot's ``PYTHONPATH``, the installation of an interpreter found on the PATH, and
    ``--isolate-share``: each skipped where :func:`why_hidden` or another bot's program says
    no.  And its own program (:func:`program_paths`): its folder, or the program's file
    alone where that folder is shared (the runner's folder, a home, :data:`SHARED_DIRS`, another
    bot's).  Every path normalised and its links resolved before any check.  ValueError, one
    line, when its program cannot be shown (``/``, a home, /proc, /run, --out, another bot's)."""
    isolate = isolate or Isolation()
    try:
        cwd: str | None = os.path.realpath(os.getcwd())
    except OSError:
        cwd = None
    homes = _homes()
    own = {os.path.realpath(path) for path in program_paths(command, env)}
    others = [path for bot in isolate.programs if set(bot) != own for path in bot]
    found: list[str] = []

    def trusted(path: str) -> None:          # the runner's and the instructor's: skipped if not
        path = _clean(path)
        real = os.path.realpath(path)
        if (path == PROJECT or real == os.path.realpath(PROJECT) or not os.path.exists(real)
                or _under(real, SYSTEM_DIRS) or why_hidden(real, isolate, cwd, homes)
                or any(_under(other, [real]) for other in others)):
            return
        found.extend({path, real})

    for path in [*_system_like(), *env.get("PYTHONPATH", "").split(os.pathsep)]:
        if path and os.path.isabs(path) and os.path.isdir(path):
            trusted(path)
    for path in isolate.share:          # a file or a folder
        trusted(path)
    first = command[0] if command else ""
    interpreter = shutil.which(first, path=env.get("PATH")) if first else None
    real = os.path.realpath(interpreter) if interpreter else ""
    # The interpreter of its script: its installation (~/.nvm/.../bin/node: the folder above
    # bin), unless the bot's line names one in a hidden folder of a home or another bot's.
    if interpreter and real not in own:
        folder = os.path.dirname(real)
        # the path the command runs and each link on the way (a link to a venv's python, a
        # link to pyenv's), then what it leads to
        for path in ([os.path.dirname(hop) for hop in _link_chain(interpreter)]
                     + [os.path.dirname(folder) if os.path.basename(folder) == "bin" else folder]):
            real = os.path.realpath(path)
            if os.sep in first and (_hidden_folder_of_home(real, homes) or any(
                    _under(real, [o if os.path.isdir(o) else os.path.dirname(o)]) for o in others)):
                continue            # named by its line: not in ~/.x, nor another bot's folder
            trusted(path)
    shown = [os.path.realpath(path) for path in found]
    for path in program_paths(command, env):
        path = _clean(path)
        real = os.path.realpath(path)
        if _under(real, [*SYSTEM_DIRS, *shown]):
            continue
        why = why_hidden(real, isolate, cwd, homes)
        if why is None and _hidden_folder_of_home(real, homes):
            why = f"{real} is in a hidden folder of a home"
        if why is None:
            other = next((o for o in others if _under(o, [real]) or _under(real, [o])), None)
            why = other and f"{real} is or holds another bot's program ({other})"
        if why is None and real in SHARED_DIRS:
            why = f"{real} is a folder shared by all ({', '.join(SHARED_DIRS)})"
        if why is None and real != path and any(_under(o, [os.path.dirname(real)])
                                                for o in others):
            why = f"{path} is a link into another bot's folder ({os.path.dirname(real)})"
        if why:
            raise ValueError(f"--isolate will not show {os.path.basename(command[0])}'s "
                             f"program {path}: {why}")
        folder = real if os.path.isdir(real) else os.path.dirname(real)
        if folder != real and (folder in SHARED_DIRS or why_hidden(folder, isolate, cwd, homes)
                               or any(_under(o, [folder]) for o in others)):
            found.extend({path, real})          # the file alone: its folder is not its own
        else:
            found.extend({path if folder == real else os.path.dirname(path), folder})
    unique = []
    for path in sorted(set(found), key=len):        # a folder inside another adds nothing
        if not _under(path, unique):
            unique.append(path)
    return unique


def _link_chain(path: str, hops: int = 40) -> list[str]:
    """``path`` and each link it leads through, in order (as exec follows them)."""
    chain = [os.path.abspath(path)]
    while os.path.islink(chain[-1]) and len(chain) < hops:
        chain.append(os.path.join(os.path.dirname(chain[-1]), os.readlink(chain[-1])))
    return [os.path.normpath(hop) for hop in chain]


def _hidden_folder_of_home(real: str, homes) -> bool:
    """True for a path in a hidden folder of a home (``~/.ssh/...``, ``~/.config/...``)."""
    for home in homes:
        if _under(real, [home]) and real != home:
            if any(part.startswith(".") for part in os.path.relpath(real, home).split(os.sep)):
                return True
    return False


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


# -- what holds -------------------------------------------------------------------------------

def status_line(isolation: Isolation | None, concurrency: int = 1) -> str | None:
    """One line saying what ``--isolate`` does on this machine and which guarantee it misses
    (None without it)."""
    if isolation is None:
        return None
    if not SUPPORTED:
        return f"isolation: none: {NEEDS_LINUX}"
    place, no_cgroup = cgroups()
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
        room, wanted = free_bytes(isolation.out) >> 20 if isolation.out else 1 << 40, (
            2 * concurrency * isolation.disk_mb)
        if room < wanted:
            disk += (f"; --out has {room} MB free, NOT enough for {wanted} MB (the caps of the "
                     f"bots at once): a full disk may stop the series (a bot that filled it "
                     f"loses; --resume goes on once there is room)")
    path, why = bwrap() if isolation.sandbox else (None, "sandbox off")
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
    sandbox = (f"sandbox bwrap: no network; each bot sees read-only the system, our Python and "
               f"packages{shared} and its own program's folder (its program alone where that "
               f"folder holds another bot's or is the runner's), writable its game's files, "
               f"nothing else: not the runner's folder, --out, a home, another bot's files; "
               f"private /tmp and /dev/shm of {tmpfs_mb(isolation)} MB each, nothing else "
               f"writable, no host sockets"
               if path else f"no sandbox ({why}): isolation is partial, bots can write (each "
                            "file capped, not all of them), reach the network and host sockets "
                            "as you")
    return f"isolation: {cgroup}; {cores}; {memory}; {processes}; {disk}; {ending}; {sandbox}"


def tmpfs_mb(isolation: Isolation) -> int:
    """The size of a sandboxed bot's private /tmp and of its /dev/shm (each): its memory cap."""
    return isolation.memory_mb or DEFAULT_TMPFS_MB


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
#: What ``--isolate`` says where it cannot work, in one line: cgroups, bwrap, rlimits and process
#: sessions are Linux's (a Mac gets the rlimits and sessions; Windows none of them).
NEEDS_LINUX = ("--isolate needs Linux (cgroups, bwrap, resource limits): on Windows leave it out, "
               "or run the series under WSL")


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


# -- disk -------------------------------------------------------------------------------------

#: Seconds between two looks at what each bot has written.
DISK_INTERVAL = 0.1
#: Files and folders a bot may make in its game's folder: more is as good as past its cap (and
#: keeps each look cheap).
MAX_ENTRIES = 10_000
#: Below this many bytes free on the disk of a bot's files, a bot that has written this much or
#: more is taken to have filled it.
DISK_FLOOR = 1 << 20
#: What is kept of each log of a bot past its cap or that filled the disk: its first bytes.
KEPT_OF_LOG = 1 << 20
#: The referee's files in a bot's game folder, kept when the rest of what it left is removed:
#: the referee stops the game when one of them is missing (as the real one does).
REFEREE_FILES = (MOVE_FILE, FIRST_FOUR_MOVES, END_GAME)
#: Bytes beyond which a file of the referee's is the bot's doing (its lines are a few bytes).
REFEREE_FILE_BYTES = 64 << 10


def log_of(options: dict) -> str | None:
    """The file a bot's stdout or stderr goes to (its log), from Popen's ``options``."""
    for key in ("stderr", "stdout"):
        name = getattr(options.get(key), "name", None)
        if isinstance(name, str) and os.path.isfile(name):
            return os.path.abspath(name)
    return None


def written_paths(writable, options: dict) -> tuple[str, ...]:
    """What a bot writes: its writable folders and files, and its log."""
    log = log_of(options)
    paths = [os.path.abspath(str(path)) for path in writable] + ([log] if log else [])
    return tuple(dict.fromkeys(paths))


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


class DiskGuard:
    """One thread that looks every :data:`DISK_INTERVAL` seconds at what each watched bot has
    written (:func:`written_paths`); a bot at its cap, past :data:`MAX_ENTRIES` files, or that
    filled the disk is ended at once (it loses: a crash), and once it is gone what it left in
    its game's folder is removed and its logs are cut to :data:`KEPT_OF_LOG`, so that the
    series (and ``--resume``) goes on.  Each file is capped by the kernel too (RLIMIT_FSIZE):
    what the thread bounds is their sum."""

    def __init__(self) -> None:
        self.watched: dict[MeteredPopen, str | None] = {}
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def watch(self, process: MeteredPopen, paths, cap_mb: int) -> None:
        process.disk_cap, process.disk_paths = cap_mb << 20, tuple(paths)
        with self.lock:
            self.watched[process] = None
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="disk-guard", daemon=True)
                self.thread.start()

    def _run(self) -> None:
        while True:
            with self.lock:
                if not self.watched:
                    self.thread = None
                    return
                watched = dict(self.watched)
            for process, why in watched.items():
                try:
                    self.look(process, why)
                except OSError:
                    pass
            time.sleep(DISK_INTERVAL)

    def look(self, process: MeteredPopen, why: str | None) -> None:
        gone = process.poll() is not None
        if why is None:
            why = self.over(process)
            if why is not None:
                with self.lock:
                    self.watched[process] = why
                end_now(process)
                gone = process.poll() is not None
        if gone:
            with self.lock:
                self.watched.pop(process, None)
            if why is not None:
                clear(process, why)

    @staticmethod
    def over(process: MeteredPopen) -> str | None:
        """Why ``process`` must end now (None: it may go on)."""
        total, entries = written(process.disk_paths)
        if entries > MAX_ENTRIES:
            process.disk_why = f"made more than {MAX_ENTRIES} files"
        elif total >= process.disk_cap:
            process.disk_why = f"wrote past its {process.disk_cap >> 20} MB disk cap"
        elif total >= DISK_FLOOR and any(free_bytes(path) < DISK_FLOOR
                                         for path in process.disk_paths):
            process.disk_why = f"filled the disk ({total >> 20} MB written)"
        return process.disk_why or None


def free_bytes(path: str) -> int:
    """Bytes free for a normal user on the disk of ``path`` (unknown: as good as unlimited)."""
    try:
        found = os.statvfs(path)
    except (OSError, AttributeError):
        return 1 << 62
    return found.f_bavail * found.f_frsize


def end_now(process: MeteredPopen) -> None:
    """Stop ``process`` and everything it started without waiting: its keeper ends its tree,
    its cgroup is killed; the game's runner reaps it and sees it exited."""
    if process.cgroup is not None:
        process.cgroup.kill_all()
    if getattr(process, "ends_tree", False):
        with contextlib.suppress(OSError):
            process.send_signal(signal.SIGTERM)
    else:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)


def clear(process: MeteredPopen, why: str) -> None:
    """What a bot ended by :class:`DiskGuard` left: its game folder's files removed but the
    referee's (:data:`REFEREE_FILES`, ``.go``; emptied if the bot filled one), each log cut to
    its first :data:`KEPT_OF_LOG` bytes and a line saying why."""
    for path in process.disk_paths:
        if os.path.isdir(path) and not os.path.islink(path):
            for entry in os.scandir(path):
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path)
                    elif entry.name not in REFEREE_FILES and not entry.name.endswith(".go"):
                        os.unlink(entry.path)
                    elif entry.stat(follow_symlinks=False).st_size > REFEREE_FILE_BYTES:
                        os.truncate(entry.path, 0)
            continue
        with contextlib.suppress(OSError), open(path, "rb+") as handle:
            if os.fstat(handle.fileno()).st_size > KEPT_OF_LOG:
                kept = handle.read(KEPT_OF_LOG)     # whole lines: a search log stays JSON lines
                handle.truncate(kept.rfind(b"\n") + 1 if b"\n" in kept else KEPT_OF_LOG)
    if process.disk_log:
        with contextlib.suppress(OSError), open(process.disk_log, "a", encoding="utf-8") as log:
            log.write(f"\n[runner] ended: it {why}; what it left in its game folder was "
                      "removed\n")


DISK_GUARD = DiskGuard()


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
    return (bool(isolation.processes) and isolation.sandbox and bwrap()[0] is not None
            and os.getuid() != 0 and per_namespace_processes())


def start(command: list[str], isolation: Isolation | None = None, *, writable=(),
          env: dict | None = None, **options) -> MeteredPopen:
    """:func:`ref_sim.stops.start` (a session of its own: ``kill_tree`` ends it whole) under a
    keeper (:mod:`ref_sim.series.keeper`: what it detaches is ended with it too), metered
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
    pool = core_pool()
    cores = pool.take(isolation.cores)
    group = None
    try:
        wrapped = list(command)
        path = bwrap()[0] if isolation.sandbox else None
        place = cgroups()[0]
        # Without a cgroup, RLIMIT_NPROC set outside the sandbox counts all the user's
        # processes: one bot's fork bomb takes its opponent's headroom. Set inside the bot's
        # user namespace it counts the bot's alone (the kernel counts each namespace apart).
        own_count = place is None and own_process_count(isolation)
        if own_count:
            wrapped = [sys.executable, "-I", "-S", "-c", SHIM, "-", "-", "-",
                       f"={isolation.processes}", "-", *wrapped]
        if path is not None:
            env["TMPDIR"] = env["HOME"] = "/tmp"    # its own, in memory: no one's files
            env.pop(RUNNER_ENV, None)   # its own pid namespace cannot see the runner: it dies
            wrapped = [path, *sandbox_args(writable, readable_paths(command, env, isolation),
                                           tmpfs_mb(isolation) << 20), *wrapped]  # with it
        if place is not None:
            group = BotCgroup(place, cores, isolation.memory_mb << 20, isolation.processes)
        shim = [sys.executable, "-I", "-S", "-c", SHIM,
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
        process.disk_log = log_of(options)
        DISK_GUARD.watch(process, written_paths(writable, options), isolation.disk_mb)
    if process.returncode is not None:      # reaped already: give back now
        process.release()
    return process


# -- isolation kept across --resume ------------------------------------------------------------
# A series or tournament records its isolation in series.json / tournament.json ("isolate": the
# settings, or null), so that --resume keeps it: a series begun isolated is resumed isolated,
# --isolate given or not, and one begun without it refuses --isolate (loop.merge_settings).

def recorded_setting(isolate: Isolation | None) -> dict | None:
    """What the settings file keeps of ``isolate`` (None: not isolated)."""
    if isolate is None:
        return None
    shares = {"share": list(isolate.share)} if isolate.share else {}    # older files have none
    return {"cores": isolate.cores, "memory_mb": isolate.memory_mb, "processes": isolate.processes,
            "disk_mb": isolate.disk_mb, **shares}


def resume_setting(args, setting) -> bool:
    """Put the recorded ``setting`` (:func:`recorded_setting`) into ``args``, so that
    :func:`from_args` gives it; True when it isolates although ``--isolate`` was not given
    (the caller says so).  ValueError, one line, if the file's value is not one."""
    if setting is None:
        return False
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
    added = not args.isolate
    args.isolate = True
    args.isolate_cores, args.isolate_memory, args.isolate_processes = (
        setting["cores"], setting["memory_mb"], setting["processes"])
    args.isolate_share = list(shares) or None
    args.isolate_disk = disk
    return added


def command_options(isolate: Isolation | None) -> list[str]:
    """``--isolate`` and its settings as a command line gives them (the resume command)."""
    if isolate is None:
        return []
    shares = [word for path in isolate.share for word in ("--isolate-share", path)]
    return ["--isolate", "--isolate-cores", str(isolate.cores), "--isolate-memory", str(isolate.memory_mb),
            "--isolate-processes", str(isolate.processes), "--isolate-disk", str(isolate.disk_mb),
            *shares]
