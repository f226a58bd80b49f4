"""What an isolated bot may write in all (``--isolate-disk``): each file capped by RLIMIT_FSIZE at
its start, and a watcher that adds up what it wrote (its game's files, its logs) and ends a bot
past its cap, or the disk about to fill, and says why (docs/isolation.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
import shutil

from ref_sim.referees.file_referee import END_GAME, FIRST_FOUR_MOVES, MOVE_FILE
from ref_sim.series.process.metering import MAX_ENTRIES, MeteredPopen, Poller, written


# -- disk -------------------------------------------------------------------------------------

#: Seconds between two looks at what each bot has written.
DISK_INTERVAL = 0.1
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


class DiskGuard(Poller):
    """One thread that looks every :data:`DISK_INTERVAL` seconds at what each watched bot has
    written (:func:`written_paths`); a bot at its cap, past :data:`MAX_ENTRIES` files, or that
    filled the disk is ended at once (it loses: a crash), and once it is gone what it left in
    its game's folder is removed and its logs are cut to :data:`KEPT_OF_LOG`, so that the
    series (and ``--resume``) goes on.  Each file is capped by the kernel too (RLIMIT_FSIZE):
    what the thread bounds is their sum."""

    interval, name = DISK_INTERVAL, "disk-guard"

    def watch(self, process: MeteredPopen, paths, cap_mb: int) -> None:
        process.disk_cap, process.disk_paths = cap_mb << 20, tuple(paths)
        self.add(process, None)         # the reason it was ended, once it is

    def poll(self, watched: dict) -> None:
        for process, why in watched.items():
            try:
                self.look(process, why)
            except OSError:
                pass

    def look(self, process: MeteredPopen, why: str | None) -> None:
        gone = process.poll() is not None
        if why is None:
            why = self.over(process)
            if why is not None:
                with self.lock:
                    self.items[process] = why
                end_now(process)
                gone = process.poll() is not None
        if gone:
            with self.lock:
                self.items.pop(process, None)
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
