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

#: Windows' rules for refusals (:func:`transient`). A module global read at each call, so that
#: tests run Windows' rule on every platform.
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


def transient(error: BaseException) -> bool:
    """Is ``error`` a file being replaced or deleted this instant, to look at again shortly?

    On Windows a PermissionError (a sharing violation, a delete-pending file) or one of
    :data:`TRANSIENT_WINERRORS`; on POSIX never: a rename there is atomic and a file is gone
    at once, so a refusal is for good (permissions, a sticky directory)."""
    if not WINDOWS or not isinstance(error, OSError):
        return False
    return isinstance(error, PermissionError) or getattr(error, "winerror", None) in TRANSIENT_WINERRORS
