"""How a series runner stops: every stop signal the way Ctrl-C stops it, nothing left behind.

Runners run unattended (overnight, under ``timeout``, in a cancelled CI job, a dropped ssh
session), and Python's default for SIGTERM and SIGHUP is to die on the spot: no ``finally``, so
the agents and the temporary folders were left behind. :func:`stop_signals` turns them (and
SIGBREAK on Windows) into :class:`Stopped`, a ``KeyboardInterrupt``, so every runner's Ctrl-C path
serves them all; :func:`guarded` runs a command's ``main`` and makes a stop or a closed output one
line and its exit code (:func:`exit_code`); :func:`start` and :func:`kill_tree` start an agent in a
session of its own and end it with all it started. What a user sees: docs/bench.md, "Stops and
resume".
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

from agent import exits
from ref_sim import command_words

#: A player started by a runner (agent.lifeline's RUNNER_ENV) exits with this once that runner
#: is gone: our agent's EXIT_ABORTED (no end_game will come), which the random bots exit with too.
EXIT_RUNNER_GONE = exits.EXIT_ABORTED
#: Ctrl-C's exit code, 128 + SIGINT.
EXIT_INTERRUPTED = exits.EXIT_INTERRUPTED
#: The output was closed (``| head``): 128 + SIGPIPE, what such a program's shell reports.
EXIT_BROKEN_PIPE = 141


def stop_signal_numbers() -> list[int]:
    """The signals that stop a runner on this system."""
    names = ("SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK")
    return [getattr(signal, name) for name in names if hasattr(signal, name)]


class Stopped(KeyboardInterrupt):
    """A stop signal, raised where Ctrl-C raises KeyboardInterrupt (a subclass: every
    ``except KeyboardInterrupt`` handles it the same way)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def exit_code(interrupt: BaseException) -> int:
    """128 + the signal's number; 130 for a plain KeyboardInterrupt (Ctrl-C).

    >>> exit_code(KeyboardInterrupt()), exit_code(Stopped(signal.SIGTERM))
    (130, 143)
    """
    return 128 + getattr(interrupt, "signum", signal.SIGINT)


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def said(interrupt: BaseException) -> str:
    """``interrupted`` (Ctrl-C) or ``stopped by SIGTERM``: what a runner says it was.

    >>> said(KeyboardInterrupt()), said(Stopped(signal.SIGTERM))
    ('interrupted', 'stopped by SIGTERM')
    """
    signum = getattr(interrupt, "signum", signal.SIGINT)
    return "interrupted" if signum == signal.SIGINT else f"stopped by {signal_name(signum)}"


@contextlib.contextmanager
def stop_signals():
    """Within: each stop signal raises :class:`Stopped` in the main thread, once: the first signal
    stops, one that comes while the runner is stopping is ignored so that the clean-up runs to its
    end (it is bounded: processes are killed, not waited for), and a signal this process was
    started with ignored (``nohup``) stays ignored.  Elsewhere than in the main thread (a test
    calling a command from a thread) nothing changes: only the main thread can install handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stopping = []

    def handler(signum, frame):
        if stopping:        # already stopping: let the clean-up finish
            return
        stopping.append(signum)
        raise Stopped(signum)

    previous = {}
    for signum in stop_signal_numbers():
        try:
            if signal.getsignal(signum) is signal.SIG_IGN:
                continue            # nohup, or a background job: the caller wants it ignored
            previous[signum] = signal.signal(signum, handler)
        except (OSError, ValueError):
            pass
    try:
        yield
    finally:
        for signum, old in previous.items():
            try:
                signal.signal(signum, old)
            except (OSError, ValueError, TypeError):
                pass


def start(command: list[str], **options) -> subprocess.Popen:
    """``subprocess.Popen(command, **options)``, in a session of its own on POSIX: the terminal's
    Ctrl-C reaches the runner, which stops its agents, instead of killing every agent in the
    middle of its game as a "crash"; and its process group can be killed whole
    (:func:`kill_tree`)."""
    process = subprocess.Popen(command, start_new_session=os.name == "posix", **options)
    process.own_group = os.name == "posix"
    return process


def guarded(prog: str, main, *args, **kwargs) -> int:
    """``main(*args, **kwargs)`` under :func:`stop_signals`; a stop that it did not handle itself
    is ``PROG: interrupted`` (``PROG: stopped by SIGTERM``) on stderr and 128 + the signal, its
    output closed early (``| head``) is ``PROG: output closed (broken pipe)`` and 141: one line,
    never a traceback.  Standard output is pointed at the null device first, so that Python's
    own flush at exit does not fail a second time.  A file or folder it could not use and did not
    say itself (one it may not read, a path under a file) is ``PROG: error: PATH: why`` and 2."""
    from agent.cli_common import reason, say_error, silence_output   # not needed to start an agent

    try:
        with stop_signals():
            return main(*args, **kwargs)
    except KeyboardInterrupt as interrupt:
        say_error(prog, said(interrupt))
        return exit_code(interrupt)
    except BrokenPipeError:
        silence_output(sys.stdout)
        say_error(prog, "output closed (broken pipe)")
        return EXIT_BROKEN_PIPE
    except OSError as error:
        where = f"{error.filename}: " if error.filename is not None else ""
        say_error(prog, f"error: {where}{reason(error)}")
        return exits.EXIT_USAGE


#: How long a process that ends its own tree when asked (``ends_tree``: a keeper) is given for it.
TREE_END_WAIT = 5.0


def kill_tree(process: subprocess.Popen | None) -> None:
    """Kill ``process`` and everything it started, and reap it; also after it exited, for what
    it left running (a shell command's child, a helper it forgot).

    A process that ends its own tree (``ends_tree``: a bot's keeper, ref_sim.series.process.keeper) is
    asked to first, with SIGTERM, and given :data:`TREE_END_WAIT` seconds: what left the group
    (``setsid``, a double fork) goes too.
    A process from :func:`start` leads its own process group on POSIX: the whole group goes.
    The group outlives its leader while a member runs, and Linux does not hand out a group's id
    as a new process id until the group is empty, so killing it after the leader was reaped
    reaches only what the leader left behind.  On Windows ``taskkill /T`` ends the tree of a
    process still running."""
    if process is None:
        return
    if getattr(process, "ends_tree", False) and process.returncode is None:
        # Its keeper (ref_sim.series.process.keeper) ends what left the group too (setsid, double
        # forks): asked first, then the group goes as below.
        with contextlib.suppress(OSError):
            process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(TREE_END_WAIT)
    if getattr(process, "own_group", False):
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
    elif os.name == "nt" and process.returncode is None:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(["taskkill", "/F", "/T", "/PID", str(process.pid)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
    with contextlib.suppress(OSError):
        process.kill()
    process.wait()


# -- names and command lines ------------------------------------------------------------------

def invoked_as(module: str, argv0: str | None = None) -> str:
    """How the user ran this command: ``uttt-match`` for a console script of pyproject.toml,
    else ``python -m MODULE``.

    >>> invoked_as("ref_sim.match", "/home/me/.venv/bin/uttt-match")
    'uttt-match'
    >>> invoked_as("ref_sim.match", "C:\\\\venv\\\\Scripts\\\\uttt-match.exe")
    'uttt-match'
    >>> invoked_as("ref_sim.match", "/src/ref_sim/match.py")
    'python -m ref_sim.match'
    """
    if argv0 is None:
        argv0 = sys.argv[0] if sys.argv else ""
    name = argv0.replace("\\", "/").rsplit("/", 1)[-1]
    for suffix in (".exe", "-script.py"):
        name = name[: -len(suffix)] if name.lower().endswith(suffix) else name
    return name if name.startswith("uttt-") else f"python -m {module}"


def _runnable(path: str) -> str:
    """``path``'s bare name when the PATH finds that very file under it, else ``path``."""
    name = Path(path).name
    found = shutil.which(name)
    try:
        if found and os.path.samefile(found, path):
            return name
    except OSError:
        pass
    return path


def command_line(module: str, *args: str) -> str:
    """The command that runs ``module`` with ``args`` here, as one line a shell runs as printed:
    the console script the user ran (``uttt-match``), or this interpreter with ``-m``
    (``python`` when the PATH finds this very interpreter under that name, else its path)."""
    prog = invoked_as(module)
    if prog.startswith("python -m "):
        words = [_runnable(sys.executable), "-m", module]
    else:
        words = [_runnable(sys.argv[0]) if sys.argv and os.path.isfile(sys.argv[0]) else prog]
    words += list(args)
    return command_words.join(words)
