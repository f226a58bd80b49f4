"""A player started by a series runner ends by itself once that runner is gone.

The runners (``ref_sim.match``, ``ref_sim.stdio``, the tournament) put their own process id in
the environment of every player they start (:data:`RUNNER_ENV`). A runner that is stopped
normally ends its players itself; one that is killed outright (SIGKILL, a crashed terminal, a
cluster job cancelled) cannot, and a player waiting for a referee that will never come would wait
forever. So a player that finds :data:`RUNNER_ENV` looks now and then whether that process still
runs, and gives up when it does not. A player started by hand has no such variable and waits as
long as it is told.
"""

from __future__ import annotations

import os
import time

#: The environment variable a runner sets to its process id.
RUNNER_ENV = "UTTT_RUNNER_PID"
#: Seconds between two looks at the runner: a dead runner's players linger at most this long.
CHECK_INTERVAL = 1.0


def runner_pid(environ=None) -> int | None:
    """The runner's process id from the environment, or None (started by hand, or a bad value)."""
    value = (os.environ if environ is None else environ).get(RUNNER_ENV, "")
    return int(value) if value.isdigit() and int(value) > 0 else None


def process_alive(pid: int) -> bool:
    """True while process ``pid`` exists (a zombie counts as gone on Windows only)."""
    if os.name == "nt":  # os.kill(pid, 0) would terminate the process there
        import ctypes

        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x00100000, False, pid)  # SYNCHRONIZE
        if not handle:
            return False
        try:
            return kernel32.WaitForSingleObject(handle, 0) == 0x00000102  # WAIT_TIMEOUT: still running
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True


class Lifeline:
    """Whether the runner that started this process still runs; ``lost()`` is cheap to call often."""

    def __init__(self, pid: int | None = None, interval: float = CHECK_INTERVAL) -> None:
        self.pid = runner_pid() if pid is None else pid
        self.interval = interval
        self._parent = os.getppid()
        self._next = 0.0
        self._lost = False

    def lost(self) -> bool:
        """True once the runner is gone (always False without a runner)."""
        if self.pid is None or self._lost:
            return self._lost
        now = time.monotonic()
        if now >= self._next:
            self._next = now + self.interval
            # On POSIX a child whose parent died is handed to another process at once: that
            # tells even if the runner's pid has been reused since.
            reparented = os.name == "posix" and self._parent == self.pid and os.getppid() != self.pid
            self._lost = reparented or not process_alive(self.pid)
        return self._lost


#: The environment variable naming the file a player writes once it is ready: how a runner, or a
#: script starting the agents and then the referee, knows that the first ``.go`` will be seen.
READY_ENV = "UTTT_READY_FILE"


class ReadyFile:
    """The file that says "I am watching": this process's id, written once the player is ready
    (``--ready-file``, or :data:`READY_ENV`), removed when it ends. A file left by a killed player
    names a process that is gone: :func:`ready_pid` tells it from a live one."""

    def __init__(self, path) -> None:
        self.path = os.fspath(path)

    def announce(self) -> None:
        """Write our process id and a newline in one write, in place (a sandbox may let us write
        this file and not its folder); a reader takes it only once the newline is there. OSError
        if it cannot."""
        with open(self.path, "w", encoding="ascii") as handle:
            handle.write(f"{os.getpid()}\n")

    def withdraw(self) -> None:
        """Remove the file if it is still ours (a later player may have written its own)."""
        if ready_pid(self.path) == os.getpid():
            try:
                os.remove(self.path)
            except OSError:
                pass


def ready_pid(path) -> int | None:
    """The live process a ready file names, or None (missing, unreadable, half-written, or its
    process gone)."""
    from .cli_common import open_regular     # only here: a bot's start imports nothing more
    try:        # a FIFO or a device put there would block the open or the read for ever
        with os.fdopen(open_regular(path), "rb") as handle:
            text = handle.read(32).decode("ascii", "replace")
    except (OSError, ValueError):
        return None
    if not text.endswith("\n") or not text.strip().isdigit() or int(text) <= 0:
        return None
    pid = int(text)
    return pid if pid == os.getpid() or process_alive(pid) else None
