"""The bubblewrap sandbox of an isolated bot: whether bwrap works here, its arguments (a minimal,
read-only file system, no network, namespaces of its own), and what a bot may read besides
the system (its own program, the runner's Python, the project's packages, ``--isolate-share``),
never another bot's program nor a place :func:`ref_sim.series.process.isolation.why_hidden`
hides (docs/isolation.md).
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys
from dataclasses import replace

from ref_sim import command_words
from ref_sim.series.process.isolation import SHARED_DIRS, Isolation, _homes, _under, why_hidden


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
#: The project (agent/ and ref_sim/): a built-in bot runs from its packages, system-like and
#: read-only; never the project's folder itself, which may hold --out or a class's files.
PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PACKAGES = tuple(os.path.join(PROJECT, name) for name in ("agent", "ref_sim"))
#: Java's options whose value is the class path: the bot's program.
CLASS_PATH_OPTIONS = ("-cp", "-classpath", "--class-path")


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


def _clean(path: str) -> str:
    """``path`` absolute and normalised as the kernel reads it: ``//``, ``/./`` and ``..``
    undone (``os.path.abspath('//')`` stays ``//``, which is ``/``)."""
    return os.path.normpath("/" + os.path.abspath(path).lstrip("/"))


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
    (:func:`ref_sim.series.process.launch.child_env`)."""
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
    # bin; a version manager's shim, ~/.pyenv/shims/python3: the manager's folder, which the
    # shim runs and reads), unless the bot's line names one in a hidden folder of a home or
    # another bot's.
    if interpreter and real not in own:
        folder = os.path.dirname(real)
        # the path the command runs and each link on the way (a link to a venv's python, a
        # link to pyenv's), then what it leads to
        for path in ([os.path.dirname(hop) for hop in _link_chain(interpreter)]
                     + [os.path.dirname(folder) if os.path.basename(folder) in ("bin", "shims") else folder]):
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
