"""What every command line of the project shares, the agent's (:mod:`agent.cli`) and the bench's
(ref_sim's commands, the scripts): a usage error said in one line (:class:`UsageError`,
:class:`OneLineParser`, :func:`say_error`), bad values quoted short and printable
(:func:`shown`, :func:`reason`), a closed stdout made quiet (:func:`silence_output`), and the
files a command is given opened only once known to be regular ones: to read
(:func:`open_regular`, :func:`read_regular`) and to write (:func:`write_output`, the one way an
output is written; :func:`check_output` says up front what it would refuse).

A module of its own, light to import, so that no two commands import each other. The checked
numbers, their bounds and the engine specs are in :mod:`agent.options`.
"""

from __future__ import annotations

import argparse
import errno
import os
import stat
import sys

from . import platform_io
from .exits import EXIT_USAGE
from .text import printable

#: Longest piece of a bad value quoted in an error message.
SHOWN_VALUE = 60
#: Longest error message of the parser (argparse quotes whole values, e.g. unrecognized arguments).
SHOWN_MESSAGE = 400


class UsageError(Exception):
    """A command-line problem, reported in one line with exit code 2."""


def shown(text: str, limit: int = SHOWN_VALUE) -> str:
    """A bad value as an error message quotes it: printable, cut at ``limit`` characters."""
    return repr(printable(str(text), limit))


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, ``PROG: error: ...`` and exit code 2, like
    every other usage error of the agent (argparse's own also print the usage lines first)."""

    def error(self, message: str):
        say_error(self.prog, f"error: {printable(message, SHOWN_MESSAGE)}")
        sys.exit(EXIT_USAGE)


def reason(error: Exception) -> str:
    """Why a file operation failed, short: ``File name too long``, not the errno and the path
    (ValueError: a NUL byte in the path)."""
    return (error.strerror if isinstance(error, OSError) else None) or str(error)


def say_error(prog: str, message: str, start: str = "") -> None:
    """``PROG: message`` on stderr; never raises (stderr may be closed too)."""
    if sys.stderr is None:  # closed before we started: print(file=None) would write to stdout
        return
    try:
        print(f"{start}{prog}: {message}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def silence_output(out) -> None:
    """Point a closed stdout at the null device, so Python's flush at exit fails no second time."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, out.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (a test's stream): nothing is flushed at exit


def only_with(parser, args, needed: str, in_force: bool, dependents: dict[str, str]) -> None:
    """Options that mean nothing without ``needed`` say so instead of being ignored: any of
    ``dependents`` (``{option: its dest}``, None when not given) given while ``needed`` is not
    in force is a usage error, one line, exit 2."""
    given = [flag for flag, dest in dependents.items() if getattr(args, dest, None) is not None]
    if given and not in_force:
        parser.error(f"{' and '.join(given)} {'is' if len(given) == 1 else 'are'} for {needed}: "
                     f"add {needed}, or leave {'it' if len(given) == 1 else 'them'} out")


#: What a path names when it is not a regular file, by its stat type, for the one-line refusals.
_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFDIR: "a folder", stat.S_IFSOCK: "a socket"}


#: Where the kernel shows itself as files: regular by their type, but none is a file to read or
#: write (their size says 0, ``/proc/version`` refuses an append, ``/sys``'s are settings).
KERNEL_FOLDERS = ("/proc", "/sys")


class NotRegularFile(ValueError):
    """A path given to a command that is not a regular file, or is bigger than the command reads:
    the message says which, without the path (the caller names it); ``mode`` is its file type
    (``stat.S_IFMT``), None where it is a regular file too big."""

    def __init__(self, message: str, mode: int | None = None) -> None:
        super().__init__(message)
        self.mode = mode


class CannotWrite(OSError):
    """An output that cannot be written, in one line naming it (an OSError: every command that
    writes a file already says its OSErrors in one line)."""


def open_regular(path, flags: int = os.O_RDONLY, limit: int | None = None, mode: int = 0o666, *,
                 follow: bool = True) -> int:
    """A descriptor of ``path`` once it is known to be a regular file of at most ``limit`` bytes,
    opened without blocking (a FIFO or a device given by mistake, or planted, would otherwise
    block the open or the read for ever; the descriptor is blocking again when returned) and in
    binary mode (agent.platform_io: the flags each system has).  ``follow=False``: a symbolic
    link is not followed but refused (looked for first where the system cannot refuse it).
    The one such open of the project: the commands' inputs and outputs, the referee's move_file,
    the bench's logs.  NotRegularFile if it is something else or bigger; OSError if it cannot
    be opened."""
    if not follow:
        flags |= platform_io.NO_FOLLOW
        if platform_io.unfollowed_link(path):
            raise NotRegularFile("not a regular file (a symbolic link)", stat.S_IFLNK)
    try:
        fd = os.open(path, flags | platform_io.NO_BLOCK | platform_io.NO_TTY | platform_io.BINARY, mode)
    except OSError as error:
        if not follow and platform_io.refused_link(error):
            raise NotRegularFile("not a regular file (a symbolic link)", stat.S_IFLNK) from None
        if error.errno == errno.ENXIO:          # a FIFO nobody reads, opened to write; a socket
            reading = flags & (os.O_WRONLY | os.O_RDWR) == 0
            raise NotRegularFile("not a regular file (a FIFO or a device)",
                                 stat.S_IFSOCK if reading else stat.S_IFIFO) from None
        if error.errno == errno.EISDIR or (error.errno == errno.EACCES and os.path.isdir(path)):
            raise NotRegularFile("not a regular file (a folder)", stat.S_IFDIR) from None  # (Windows: EACCES)
        raise
    try:
        info = os.fstat(fd)
        kind = stat.S_IFMT(info.st_mode)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(f"not a regular file ({_KINDS.get(kind, 'not a file')})", kind)
        # A path given by the user may lead into the kernel's folders; ``follow=False`` is for files
        # in folders the caller chose (move_file, the bench's logs), looked at every tick.
        real = os.path.realpath(path) if follow else ""
        kernel = next((folder for folder in KERNEL_FOLDERS if real == folder or real.startswith(folder + "/")), None)
        if kernel:
            raise NotRegularFile(f"not a regular file (one of the kernel's, in {kernel})", kind)
        if limit is not None and info.st_size > limit:
            raise NotRegularFile(f"{info.st_size:,} bytes, more than the {limit:,} read here")
        platform_io.make_blocking(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_output(path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path``, the one way every command writes a file it was
    told to: a regular file, created if missing and emptied only once it is known to be one, so
    that a FIFO there does not block for ever and a symbolic link is not written through (its
    target is someone else's file); :class:`CannotWrite` naming ``path`` otherwise."""
    try:
        if platform_io.unfollowed_link(path):   # no O_NOFOLLOW (Windows): looked for first
            raise OSError(errno.ELOOP, "a symbolic link")
        fd = open_regular(path, os.O_WRONLY | os.O_CREAT | platform_io.NO_FOLLOW)
    except OSError as error:
        if platform_io.refused_link(error):     # O_NOFOLLOW met a symbolic link
            error = NotRegularFile("a symbolic link: not followed, its target is another file")
        raise CannotWrite(f"cannot write {path}: {reason(error)}") from None
    except ValueError as error:                 # NotRegularFile, or a NUL in the path
        raise CannotWrite(f"cannot write {path}: {reason(error)}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            os.ftruncate(out.fileno(), 0)
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
    except OSError as error:
        raise CannotWrite(f"cannot write {path}: {reason(error)}") from None


def check_output(path) -> None:
    """Up front, for an output :func:`write_output` writes later (the referee's record after the
    game): CannotWrite if it would refuse what is at ``path`` now, or its folder is missing.
    Nothing is created or emptied."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            raise CannotWrite(f"cannot write {path}: no such folder") from None
        return
    except (OSError, ValueError) as error:
        raise CannotWrite(f"cannot write {path}: {reason(error)}") from None
    real = os.path.realpath(path)
    if stat.S_ISLNK(info.st_mode):
        raise CannotWrite(f"cannot write {path}: a symbolic link: not followed, its target is another file")
    if not stat.S_ISREG(info.st_mode) or any(real.startswith(folder + "/") for folder in KERNEL_FOLDERS):
        kind = _KINDS.get(stat.S_IFMT(info.st_mode), "one of the kernel's")
        raise CannotWrite(f"cannot write {path}: not a regular file ({kind})")


def read_regular(path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` (NotRegularFile beyond: a file
    may grow, and /proc's files say they are empty); see :func:`open_regular`."""
    fd = open_regular(path, limit=limit)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise NotRegularFile(f"more than the {limit:,} bytes read here")
    return data
