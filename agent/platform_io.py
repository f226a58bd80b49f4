"""How files are opened and looked at where POSIX and Windows differ, in one place: the flags
(POSIX has ``O_NONBLOCK`` and ``O_NOFOLLOW``, Windows neither, and needs ``O_BINARY``), making a
descriptor blocking again, a symbolic link looked for where the open cannot refuse one, and
which refusals are a file being replaced or deleted this instant (:func:`transient`), to be
looked at again, rather than refusals for good.

Everything of the agent that opens a file it was given or the referee's (agent.cli_common,
agent.referee_files) takes these; the bench opens bot-written files with them too. The
process-level differences (signals, process groups, rlimits) stay with their one owner each:
agent.bot_worker forks only where it can (``CAN_FORK``), agent.pauses reads ``resource`` where
there is one, and the bench's ref_sim.stops and ref_sim.series.isolation.
"""

from __future__ import annotations

import errno
import os

#: Windows' rules for refusals (:func:`transient`): this machine's; a caller may ask for either
#: (agent.referee_files.Files), so that tests run Windows' rule on every platform.
WINDOWS = os.name == "nt"

#: A FIFO or device given by mistake, or planted, must not block the open (Windows has none).
NO_BLOCK = getattr(os, "O_NONBLOCK", 0)
#: A symbolic link at the last step is refused (:func:`refused_link`); Windows has no such flag
#: (:func:`unfollowed_link`).
NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
#: Windows: without it a descriptor is in text mode, turning ``\r\n`` into ``\n`` and stopping at
#: a Ctrl-Z, and os.fdopen(fd, "rb") does not undo that.
BINARY = getattr(os, "O_BINARY", 0)
#: A terminal opened by mistake does not become ours.
NO_TTY = getattr(os, "O_NOCTTY", 0)
#: Not inherited by a child (Python's descriptors are not anyway; explicit where it can be).
NO_INHERIT = getattr(os, "O_CLOEXEC", 0)

#: Windows' errors for a file being replaced or deleted this instant: access denied (a file
#: whose deletion is pending), an invalid handle (Wine, on a file deleted under it), a sharing
#: or lock violation (another process has it open: the referee replacing it), delete pending.
TRANSIENT_WINERRORS = frozenset({5, 6, 32, 33, 303})


def make_blocking(fd: int) -> None:
    """Undo :data:`NO_BLOCK` once the file is known to be a regular one. Nothing where there is no
    ``O_NONBLOCK`` (Windows, where Python before 3.12 has no ``os.set_blocking`` either)."""
    if NO_BLOCK:
        os.set_blocking(fd, True)


def refused_link(error: OSError) -> bool:
    """The open refused a symbolic link because of :data:`NO_FOLLOW` (Linux: ELOOP, BSDs: EMLINK)."""
    return error.errno in (errno.ELOOP, errno.EMLINK)


def unfollowed_link(path) -> bool:
    """A symbolic link at ``path`` where the open cannot refuse one itself (no ``O_NOFOLLOW``:
    Windows), looked for first; False where :data:`NO_FOLLOW` refuses it at the open."""
    return not NO_FOLLOW and os.path.islink(path)


def transient(error: BaseException, *, windows: bool | None = None) -> bool:
    """Is ``error`` a file being replaced or deleted this instant, to look at again shortly?

    On Windows a PermissionError (a sharing violation, a delete-pending file) or one of
    :data:`TRANSIENT_WINERRORS`; on POSIX never: a rename there is atomic and a file is gone
    at once, so a refusal is for good (permissions, a sticky directory). ``windows``: whose
    rule (None: this machine's, :data:`WINDOWS`)."""
    if not (WINDOWS if windows is None else windows) or not isinstance(error, OSError):
        return False
    return isinstance(error, PermissionError) or getattr(error, "winerror", None) in TRANSIENT_WINERRORS


#: Windows locks are mandatory: the byte :func:`lock_exclusive` locks lies far beyond what a lock
#: file says about its holder, which stays readable to the process refused.
WINDOWS_LOCK_OFFSET = 2 ** 30
#: Windows' answer to a byte range another handle has locked (ERROR_LOCK_VIOLATION).
LOCK_VIOLATION = 33


def lock_exclusive(fd: int) -> bool:
    """Take an exclusive lock on the file ``fd`` without waiting, one that ends with its process:
    True, or False when another holder (another process, or another descriptor) has it; an
    OSError where the file system has no locks.

    POSIX: ``flock``. Windows: ``LockFileEx`` on one byte at :data:`WINDOWS_LOCK_OFFSET`, not
    ``msvcrt.locking``: that one says "held" only through the C runtime's errno, which Wine's
    leaves 0, so a held lock and a file system without locks look the same; LockFileEx's
    ERROR_LOCK_VIOLATION does not."""
    if os.name != "nt":
        import fcntl
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return False
            raise
        return True
    import ctypes
    kernel32, overlapped = _windows_locks()
    place = overlapped(Offset=WINDOWS_LOCK_OFFSET & 0xFFFFFFFF, OffsetHigh=WINDOWS_LOCK_OFFSET >> 32)
    exclusive_now = 0x2 | 0x1       # LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY
    if kernel32.LockFileEx(_handle(fd), exclusive_now, 0, 1, 0, ctypes.byref(place)):
        return True
    code = ctypes.get_last_error()
    if code == LOCK_VIOLATION:
        return False
    raise ctypes.WinError(code)


def unlock(fd: int) -> None:
    """Give up :func:`lock_exclusive`'s lock (closing ``fd`` does too, but Windows only eventually)."""
    if os.name != "nt":
        import fcntl
        fcntl.flock(fd, fcntl.LOCK_UN)
        return
    import ctypes
    kernel32, overlapped = _windows_locks()
    place = overlapped(Offset=WINDOWS_LOCK_OFFSET & 0xFFFFFFFF, OffsetHigh=WINDOWS_LOCK_OFFSET >> 32)
    if not kernel32.UnlockFileEx(_handle(fd), 0, 1, 0, ctypes.byref(place)):
        raise ctypes.WinError(ctypes.get_last_error())


def _handle(fd: int) -> int:
    import msvcrt
    return msvcrt.get_osfhandle(fd)


def _windows_locks():
    """kernel32 with LockFileEx and UnlockFileEx declared, and the OVERLAPPED structure."""
    import ctypes
    from ctypes import wintypes

    class Overlapped(ctypes.Structure):
        _fields_ = [("Internal", ctypes.c_void_p), ("InternalHigh", ctypes.c_void_p), ("Offset", wintypes.DWORD),
                    ("OffsetHigh", wintypes.DWORD), ("hEvent", wintypes.HANDLE)]

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    where = ctypes.POINTER(Overlapped)
    kernel32.LockFileEx.argtypes = [wintypes.HANDLE, wintypes.DWORD, wintypes.DWORD, wintypes.DWORD,
                                    wintypes.DWORD, where]
    kernel32.LockFileEx.restype = wintypes.BOOL
    kernel32.UnlockFileEx.argtypes = [wintypes.HANDLE, wintypes.DWORD, wintypes.DWORD, wintypes.DWORD, where]
    kernel32.UnlockFileEx.restype = wintypes.BOOL
    return kernel32, Overlapped
