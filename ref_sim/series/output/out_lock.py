"""One runner per ``--out`` folder: the lock a runner holds on it for the whole series (POSIX and
Windows locks), the holder named when a second runner is refused (:class:`OutInUse`), and a
lock left by a runner that died taken over.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import sys
import time
from pathlib import Path

from agent import platform_io
from agent.cli_common import NotRegularFile, open_regular
from ref_sim import command_words
from ref_sim.series.output.records import WriteError, _write_all, write_failed
from ref_sim.series.output.strict_json import RecordError, _decode, _short, loads


LOCK_NAME = "runner.lock"


class OutInUse(RuntimeError):
    """Another runner holds ``--out``; the message is one line naming it."""
    exit_code = 2


# -- the lock on --out ---------------------------------------------------------------------

def _lock(fd: int) -> bool:
    """Take the OS lock on ``fd`` without waiting: True, or False when another process has it
    (agent.platform_io.lock_exclusive: the platform edge)."""
    return platform_io.lock_exclusive(fd)


def _holder(path: Path) -> str:
    """Who holds the lock ``path``, in words, from what it wrote into it."""
    try:
        with os.fdopen(open_regular(path, os.O_RDONLY | platform_io.NO_FOLLOW), "rb") as handle:
            holder = loads(_decode(handle.read(64 * 1024), str(path)), str(path))
        since = float(holder["since"])
        age = max(0, time.time() - since)
        ago = (f"{age / 3600:.1f} h" if age >= 3600 else f"{age / 60:.0f} min" if age >= 60
               else f"{age:.0f} s")
        return (f"pid {int(holder['pid'])} on {holder['host']}, since "
                f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(since))} ({ago} ago): "
                f"{_short(str(holder['command']), 200)}")
    except (OSError, RecordError, KeyError, TypeError, ValueError, OverflowError):
        return "a process that has not said who it is yet"


class OutLock:
    """The lock of a runner on its ``--out``; a context manager. An OS lock that dies with its
    process (``fcntl.flock`` on POSIX, ``LockFileEx`` on Windows: agent.platform_io.lock_exclusive) on ``--out/runner.lock``,
    which says who holds it (process id, host, command, since when): a second runner on the folder
    stops at once (:class:`OutInUse`); a file left by a process that is gone blocks nothing. Before
    it, two runs shared ``--out/game-NNNN`` and recorded each other's moves as ``Invalid move!``."""

    def __init__(self, out, command: str) -> None:
        self.path = Path(out) / LOCK_NAME
        self.command = command
        self.fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or OutInUse; a file system without locks is a warning, not a stop."""
        for _ in range(10):     # the holder may remove the file between our open and our lock
            try:
                # Not through a symlink (its target would be truncated) nor into a FIFO.
                fd = open_regular(self.path, os.O_RDWR | os.O_CREAT | platform_io.NO_FOLLOW)
            except NotRegularFile as error:
                raise WriteError(f"cannot lock {self.path}: {error}: remove it, or choose another --out") from None
            except OSError as error:
                if error.errno == errno.ELOOP:
                    raise WriteError(f"cannot lock {self.path}: it is a symbolic link (followed, its "
                                     "target would be overwritten): remove it, or choose another --out") from None
                raise WriteError(write_failed(self.path, error)) from None
            try:
                locked = _lock(fd)
            except OSError as error:            # no locks here (some network file systems)
                os.close(fd)
                print(f"warning: cannot lock {self.path} ({error.strerror or error}): nothing "
                      "stops a second runner on this folder", file=sys.stderr)
                return
            if not locked:
                os.close(fd)
                raise OutInUse(f"--out {self.path.parent} is in use by another runner "
                               f"({_holder(self.path)}); wait for it to end, or choose "
                               "another --out")
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except OSError:
                same = False
            if same:
                self.fd = fd
                break
            os.close(fd)        # locked a file its holder had just removed: take the new one
        else:
            raise OutInUse(f"--out {self.path.parent}: cannot take {self.path} (another runner "
                           "keeps replacing it)")
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time(),
                  "command": self.command}
        try:
            os.ftruncate(self.fd, 0)
            os.lseek(self.fd, 0, os.SEEK_SET)
            _write_all(self.fd, (json.dumps(holder) + "\n").encode("utf-8"))
        except OSError:
            pass            # the lock holds without its description (a full disk)

    def release(self) -> None:
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        if os.name == "nt":             # unlocked before closing: Windows frees a closed handle's locks only eventually
            with contextlib.suppress(OSError):
                platform_io.unlock(fd)
            os.close(fd)
            with contextlib.suppress(OSError):
                self.path.unlink()
        else:               # removed while locked: a waiting runner sees a new file and retries
            with contextlib.suppress(OSError):
                self.path.unlink()
            os.close(fd)

    def __enter__(self) -> OutLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def lock_out(out: str | os.PathLike | None, prog: str, argv: list[str] | None = None):
    """The lock of this runner (``prog`` and its ``argv``: the holder's command) on ``out``;
    a context manager that does nothing when ``out`` is None (a temporary folder)."""
    if not out:
        return contextlib.nullcontext()
    command = " ".join([prog, command_words.join(sys.argv[1:] if argv is None else argv)])
    return OutLock(out, command)
