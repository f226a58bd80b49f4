"""Windows' file semantics on every platform: the flags and refusals of agent.platform_io, and
the agent reading the referee's files through a seam that answers as Windows does while a file
is replaced or deleted (a sharing violation, a delete-pending file, Wine's invalid handle).

Windows' rules are asked for with ``windows=True`` (``referee_files.Files``, the agent's way to the
referee's files); the errors are made as Windows makes them (a ``winerror`` beside the errno), so
Linux CI runs what a Windows machine would.
"""

from __future__ import annotations

import errno
import os

import pytest

from agent import cli_common, platform_io
from agent.referee_files import SYSTEM, FileReader, Files, stat_or_none
from tests.test_file_protocol import ME, Referee, Runner, my_move_written, wait_for


def windows_error(winerror: int) -> OSError:
    """The OSError Windows raises for ``winerror`` (its errno as CPython maps it)."""
    kind, number, text = {5: (PermissionError, errno.EACCES, "Access is denied"),
                          6: (OSError, errno.EBADF, "The handle is invalid"),
                          32: (PermissionError, errno.EACCES, "The process cannot access the file because "
                                                              "it is being used by another process"),
                          33: (PermissionError, errno.EACCES, "The process cannot access the file because "
                                                              "another process has locked a portion of it")}[winerror]
    error = kind(number, text)
    error.winerror = winerror   # what CPython sets on Windows (the argument is ignored elsewhere)
    return error


WINDOWS_REFUSALS = [5, 6, 32, 33]


@pytest.mark.parametrize("windows", [True, False], ids=["windows", "posix"])
@pytest.mark.parametrize("error, on_windows", [
    *[(lambda w=w: windows_error(w), True) for w in WINDOWS_REFUSALS],
    (lambda: PermissionError(errno.EACCES, "Permission denied"), True),   # no winerror: still a refusal
    (lambda: FileNotFoundError(errno.ENOENT, "gone"), False),             # gone: not a refusal
    (lambda: OSError(errno.ENOSPC, "No space left on device"), False),
    (lambda: OSError(errno.ELOOP, "Too many levels of symbolic links"), False),
    (lambda: ValueError("embedded null byte"), False),
], ids=["winerror5", "winerror6", "winerror32", "winerror33", "eacces", "enoent", "enospc", "eloop", "nul"])
def test_transient_refusals_are_windows_only(windows, error, on_windows):
    assert platform_io.transient(error(), windows=windows) is (on_windows and windows)
    assert Files(windows=windows).transient(error()) is (on_windows and windows)


def test_flags_are_the_systems_own():
    """Each flag is the system's where it has one and 0 where not, so that or-ing it in is safe."""
    for name, attribute in [("NO_BLOCK", "O_NONBLOCK"), ("NO_FOLLOW", "O_NOFOLLOW"), ("BINARY", "O_BINARY"),
                            ("NO_TTY", "O_NOCTTY"), ("NO_INHERIT", "O_CLOEXEC")]:
        assert getattr(platform_io, name) == getattr(os, attribute, 0), name


def test_open_regular_without_o_nonblock_never_asks_for_set_blocking(tmp_path, monkeypatch):
    """Windows: no O_NONBLOCK, and before Python 3.12 no os.set_blocking; --out, --log-file,
    --record and every bounded read go through open_regular."""
    monkeypatch.setattr(platform_io, "NO_BLOCK", 0)
    monkeypatch.delattr(os, "set_blocking", raising=False)    # Windows' 3.11 has none to remove
    path = tmp_path / "out.txt"
    cli_common.write_output(path, "line\r\n")
    assert cli_common.read_regular(path, 100) == b"line\r\n"


def test_write_output_refuses_a_link_without_o_nofollow(tmp_path, monkeypatch):
    """Windows has no O_NOFOLLOW: the link is looked for first, and the same one line says why."""
    monkeypatch.setattr(platform_io, "NO_FOLLOW", 0)
    target = tmp_path / "someone-elses"
    target.write_text("theirs")
    try:
        (tmp_path / "link").symlink_to(target)
    except OSError as error:    # Windows without the privilege (or developer mode)
        pytest.skip(f"cannot make a symbolic link here: {error}")
    if not os.path.islink(tmp_path / "link"):
        pytest.skip("this system does not report its symbolic links as links (Wine 8.0 makes a Unix one)")
    with pytest.raises(cli_common.CannotWrite, match="a symbolic link: not followed"):
        cli_common.write_output(tmp_path / "link", "ours")
    assert target.read_text() == "theirs"


def test_a_folder_windows_refuses_to_open_is_called_a_folder(tmp_path, monkeypatch):
    """Windows opens no folder: EACCES, not EISDIR. The one line still says what is there."""
    real_open = os.open

    def windows_open(path, flags, *args):
        if os.path.isdir(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", windows_open)
    with pytest.raises(cli_common.CannotWrite, match=r": not a regular file \(a folder\)$"):
        cli_common.write_output(tmp_path, "x")
    with pytest.raises(cli_common.NotRegularFile, match=r"^not a regular file \(a folder\)$"):
        cli_common.read_regular(tmp_path, 10)


class Refusing:
    """A stand-in for Files.stat or Files.open that refuses ``times`` calls on names ending with one of
    ``names`` with ``error()``, once armed, then answers as the system does."""

    def __init__(self, real, error, times: int, names=(".go", "move_file")) -> None:
        self.real, self.error, self.left, self.names = real, error, times, names
        self.armed = False
        self.refused = 0

    def __call__(self, path, *args):
        if self.armed and self.left > 0 and os.fspath(path).endswith(self.names):
            self.left -= 1
            self.refused += 1
            raise self.error()
        return self.real(path, *args)


@pytest.mark.parametrize("winerror", WINDOWS_REFUSALS)
def test_stat_waits_out_a_file_being_replaced(tmp_path, winerror):
    path = tmp_path / "Gopher.go"
    path.touch()
    seam = Refusing(SYSTEM.stat, lambda: windows_error(winerror), 3)
    seam.armed = True
    assert stat_or_none(path, Files(windows=True, stat=seam)) == os.stat(path)
    assert seam.refused == 3


@pytest.mark.parametrize("winerror", WINDOWS_REFUSALS)
def test_a_file_refused_for_good_counts_as_gone(tmp_path, winerror):
    """Refused past TRANSIENT_WAIT: a file being deleted (whose handle someone keeps open), gone as
    on POSIX; looked at again, it is there or not. Time is counted by the calls, not measured."""
    path = tmp_path / "move_file"
    path.write_text("")
    seam = Refusing(SYSTEM.stat, lambda: windows_error(winerror), 1_000_000)
    seam.armed = True
    files = Files(windows=True, stat=seam, transient_wait=0.0)
    assert stat_or_none(path, files) is None
    assert FileReader("utf-8", files=files).read(path) is None
    seam.left = 0
    assert stat_or_none(path, files) is not None


def test_on_posix_a_refusal_is_for_good(tmp_path):
    """POSIX's own PermissionError (a folder we may not search) is not waited out: the reader
    says the file is unreadable, once, as before."""
    path = tmp_path / "move_file"
    path.write_text("Otter 1 1\n")
    seam = Refusing(SYSTEM.open, lambda: PermissionError(errno.EACCES, "Permission denied"), 10)
    seam.armed = True
    lines = FileReader("utf-8", files=Files(windows=False, open=seam)).read(path)
    assert lines.unreadable == "Permission denied" and seam.refused == 1


@pytest.mark.parametrize("winerror", WINDOWS_REFUSALS)
def test_reader_waits_out_a_file_being_replaced(tmp_path, winerror):
    path = tmp_path / "move_file"
    path.write_text("Otter 1 1\n")
    seam = Refusing(SYSTEM.open, lambda: windows_error(winerror), 2)
    seam.armed = True
    lines = FileReader("utf-8", files=Files(windows=True, open=seam)).read(path)
    assert lines is not None and not lines.unreadable and seam.refused == 2


@pytest.mark.parametrize("times", [3, 60], ids=["brief", "past-the-wait"])
@pytest.mark.parametrize("winerror", WINDOWS_REFUSALS)
def test_the_agent_plays_through_windows_refusals(tmp_path, winerror, times):
    """The game goes on while every look at the .go and move_file is refused for a while at my
    turn (the referee replacing or deleting them under Windows): the move is written, the game
    finished, nothing crashed. 60 refusals outlast TRANSIENT_WAIT: the files count as gone for a
    look, then are seen again (docs/protocol.md, "What a bot must survive", row "Windows: a .go or
    move_file is being replaced or deleted")."""
    stats = Refusing(SYSTEM.stat, lambda: windows_error(winerror), times)
    opens = Refusing(SYSTEM.open, lambda: windows_error(winerror), times)
    referee = Referee(tmp_path)
    runner = Runner(tmp_path, files=Files(windows=True, stat=stats, open=opens))
    referee.start()
    stats.armed = opens.armed = True
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee), timeout=10.0)
    assert stats.refused > 0
    referee.end()
    summary = runner.join(timeout=10.0)
    assert summary.status == "finished" and summary.moves == 1
