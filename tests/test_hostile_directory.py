"""The file referee's shell on a directory a hostile bot shares: what it reads
is never followed through a symbolic link, waited on or read past a bound, and what it writes
cannot land outside the directory (ref_sim/referees/file_shell.py). Real files, no game: the
decisions on what is found are tests/test_file_referee.py's; whole games against hostile bots,
tests/test_hostile_bots.py."""

from __future__ import annotations

import os
import socket
import stat
import threading

import pytest

from ref_sim.referees import file_shell
from agent import platform_io
from ref_sim.referees.file_shell import (MOVE_READ_LIMIT, NotAMoveFile, RefereeCrash, clean,
                                            line_at_time_out, read_move_line, remove_entry,
                                            write_file)
from ref_sim.referees.file_referee import INVALID_MOVE, GameRecord
from ref_sim.series import realbots
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
needs_symlinks = pytest.mark.skipif(os.name == "nt", reason="symbolic links need a privilege on Windows")

PRECIOUS = "the user's own file\n"


def within(seconds: float, call, *args):
    """``call(*args)``'s result or exception, failing the test if it has not returned within
    ``seconds`` (a read that blocks on a FIFO would otherwise hang the run)."""
    outcome = {}

    def run():
        try:
            outcome["value"] = call(*args)
        except BaseException as error:          # handed to the test
            outcome["error"] = error
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{call.__name__} blocked"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@pytest.fixture
def outside(tmp_path):
    """A file of the user's, outside the game directory."""
    path = tmp_path / "precious.txt"
    path.write_text(PRECIOUS)
    return path


@pytest.fixture
def game(tmp_path):
    directory = tmp_path / "game"
    directory.mkdir()
    return directory


def what_is_there(path) -> str:
    with pytest.raises(NotAMoveFile) as found:
        within(10, read_move_line, path, "utf-8")
    return found.value.answer


# -- reading move_file ---------------------------------------------------------------------------

@needs_fifo
def test_a_fifo_is_never_waited_on(game):
    os.mkfifo(game / "move_file")
    answer = what_is_there(game / "move_file")
    assert (answer.what, answer.at_limit) == ("a FIFO (named pipe)", True)
    assert within(10, line_at_time_out, game / "move_file", "utf-8") is None


def test_a_directory_is_not_read(game):
    (game / "move_file").mkdir()
    assert what_is_there(game / "move_file").what == "a directory"


def test_a_directory_windows_refuses_to_open_is_called_a_directory(game, monkeypatch):
    """Windows opens no folder: EACCES, not EISDIR; still "a directory", not a crash."""
    from ref_sim.referees import file_shell
    real_open = os.open

    def windows_open(path, flags, *args):
        if os.path.isdir(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(file_shell.os, "open", windows_open)
    (game / "move_file").mkdir()
    assert what_is_there(game / "move_file").what == "a directory"


@needs_symlinks
@pytest.mark.parametrize("target", ["outside", "/dev/zero", "dangling"])
def test_a_symbolic_link_is_never_followed(game, outside, target):
    # A legal-looking line in the file it points to is not read: the link is what stands there.
    outside.write_text("Walrus 4 4\n")
    pointed = {"outside": str(outside), "dangling": str(game / "nowhere")}.get(target, target)
    (game / "move_file").symlink_to(pointed)
    assert what_is_there(game / "move_file").what == "a symbolic link"
    assert line_at_time_out(game / "move_file", "utf-8") is None


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no unix sockets on this system")
def test_a_unix_socket_is_not_read(tmp_path):
    path = tmp_path / "move_file"
    if len(str(path)) > 100:
        pytest.skip("the temporary folder's path is too long for a socket")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        assert what_is_there(path).what == "a socket"


def test_a_huge_sparse_file_costs_one_bounded_read(game, monkeypatch):
    # 1 GiB without a byte on disk: the real referee would read all of it (11 GB of memory
    # here); the simulator reads past the bound by one byte, and judges at once.
    path = game / "move_file"
    with open(path, "wb") as handle:
        handle.truncate(1 << 30)
    reads = []
    real_read = os.read
    monkeypatch.setattr(file_shell.os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    answer = what_is_there(path)
    assert answer.what == "a file of 1,073,741,824 bytes with no blank line in its first 64 KiB"
    assert answer.at_limit is False
    assert sum(reads) <= MOVE_READ_LIMIT + 1


def test_a_blank_line_within_the_bound_ends_the_reading_as_in_the_real_referee(game):
    # The real referee would read on, and crash on the undecodable last byte; the simulator's
    # verdict is the line before the blank one: the read stopped at the bound.
    path = game / "move_file"
    with open(path, "wb") as handle:
        handle.write(b"Walrus 1 1\nWalrus 4 4\n\nWalrus 4 5\n")
        handle.truncate(100 << 20)
        handle.seek((100 << 20) - 1)
        handle.write(b"\xff")
    assert read_move_line(path, "utf-8") == "Walrus 4 4\n"


def test_a_file_of_exactly_the_bound_is_read_whole_and_one_byte_more_is_not(game):
    path = game / "move_file"
    move = b"Walrus 4 4\n"
    filler = b"x" * (MOVE_READ_LIMIT - len(move) - 1) + b"\n"
    path.write_bytes(filler + move)
    assert read_move_line(path, "utf-8") == "Walrus 4 4\n"          # no blank line: the last one
    path.write_bytes(b"y" + filler + move)
    assert what_is_there(path).what.startswith(f"a file of {MOVE_READ_LIMIT + 1:,} bytes")


def test_a_character_cut_at_the_bound_is_not_a_decoding_error_but_a_bad_byte_before_it_is(game):
    path = game / "move_file"
    head = b"Walrus 4 4\n\n"
    text = head + b"a" * (MOVE_READ_LIMIT - len(head) - 1) + "é".encode() + b"tail\n"
    path.write_bytes(text)                      # é's two bytes straddle the bound
    assert read_move_line(path, "utf-8") == "Walrus 4 4\n"
    path.write_bytes(b"Walrus 4 4\xff\n\n" + b"a" * MOVE_READ_LIMIT)
    with pytest.raises(RefereeCrash):
        read_move_line(path, "utf-8")           # as the real referee: the byte is in what it reads


def test_a_move_file_it_may_not_read_is_unreadable_not_a_traceback(game, monkeypatch):
    (game / "move_file").write_text("Walrus 4 4\n")

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(file_shell.os, "open", refuse)
    shell = file_shell._Shell(game, file_shell.RefereeSettings(encoding="utf-8"), None, None, None)
    answer = shell.perform(file_shell.ReadMove())
    assert answer == file_shell.Unreadable("a file it may not read (Permission denied)")


def test_without_o_nofollow_a_link_is_looked_for_first(game, outside, monkeypatch):
    # Windows has no O_NOFOLLOW: the shell asks whether a link is there before it opens.
    if os.name == "nt":
        pytest.skip("symbolic links need a privilege on Windows")
    monkeypatch.setattr(platform_io, "NO_FOLLOW", 0)
    (game / "move_file").symlink_to(outside)
    assert what_is_there(game / "move_file").what == "a symbolic link"
    (game / "end_game").symlink_to(outside)
    write_file(game, "end_game", "END: Match TIED!", "utf-8")
    assert outside.read_text() == PRECIOUS and (game / "end_game").read_text() == "END: Match TIED!"


# -- writing and removing ------------------------------------------------------------------------

def test_a_regular_file_is_written_in_place_as_the_real_referees_open(game):
    path = game / "end_game"
    path.write_text("an older, longer text\n")
    inode = path.stat().st_ino
    write_file(game, "end_game", "END: Match TIED!", "utf-8")
    assert path.read_text() == "END: Match TIED!" and path.stat().st_ino == inode
    write_file(game, "Walrus.go", "", "utf-8")                          # created when missing
    assert (game / "Walrus.go").read_bytes() == b""


def test_a_new_go_keeps_the_mtime_it_was_created_with(game, monkeypatch):
    """The real referee's open("w") creates a .go in one step: an agent that saw it appear must
    not see it change (an agent takes a changed .go for a new turn). Checked by looking at the
    new file the moment it is open, which, on kernels with fine-grained timestamps on demand,
    makes any later change of it visible in its mtime."""
    seen = []
    fstat = os.fstat

    def look_then_fstat(handle):
        seen.append(os.stat(game / "Walrus.go").st_mtime_ns)
        return fstat(handle)
    monkeypatch.setattr(file_shell.os, "fstat", look_then_fstat)
    write_file(game, "Walrus.go", "", "utf-8")
    assert seen and (game / "Walrus.go").stat().st_mtime_ns == seen[0]


@needs_symlinks
@pytest.mark.parametrize("name", ["end_game", "Walrus.go", "first_four_moves", "move_file"])
def test_a_symbolic_link_planted_where_the_referee_writes_is_replaced_not_followed(game, outside, name):
    (game / name).symlink_to(outside)
    write_file(game, name, "END: Walrus WINS! Otter LOSES! Time out!", "utf-8")
    assert outside.read_text() == PRECIOUS
    assert stat.S_ISREG(os.lstat(game / name).st_mode)
    assert (game / name).read_text() == "END: Walrus WINS! Otter LOSES! Time out!"


def test_a_hard_link_to_an_outside_file_is_replaced_not_written(game, outside):
    try:
        os.link(outside, game / "end_game")
    except OSError as error:
        pytest.skip(f"no hard links here ({error.strerror})")
    write_file(game, "end_game", "END: Match TIED!", "utf-8")
    assert outside.read_text() == PRECIOUS and (game / "end_game").read_text() == "END: Match TIED!"


@needs_fifo
@pytest.mark.parametrize("reader", [False, True])
def test_a_fifo_where_the_referee_writes_is_replaced_without_waiting(game, reader):
    os.mkfifo(game / "Otter.go")
    held = os.open(game / "Otter.go", os.O_RDONLY | os.O_NONBLOCK) if reader else None
    try:
        within(10, write_file, game, "Otter.go", "", "utf-8")
    finally:
        if held is not None:
            os.close(held)
    assert stat.S_ISREG(os.lstat(game / "Otter.go").st_mode)


@needs_symlinks
def test_a_directory_where_the_referee_writes_goes_with_what_is_in_it_but_no_link_is_followed(game, outside):
    planted = game / "end_game"
    (planted / "deeper").mkdir(parents=True)
    (planted / "deeper" / "link").symlink_to(outside)
    (planted / "outside-dir").symlink_to(outside.parent, target_is_directory=True)
    write_file(game, "end_game", "END: Match TIED!", "utf-8")
    assert (game / "end_game").read_text() == "END: Match TIED!"
    assert outside.read_text() == PRECIOUS
    assert sorted(os.listdir(game)) == ["end_game"]                 # nothing set aside is left
    (game / "Otter.go").mkdir()
    remove_entry(game / "Otter.go")                                 # the referee's Remove
    assert sorted(os.listdir(game)) == ["end_game"] and outside.exists()


@needs_symlinks
def test_the_clean_up_removes_links_never_their_targets_and_keeps_directories(game, outside, tmp_path):
    (game / "end_game").symlink_to(outside)
    (game / "logo").symlink_to(tmp_path, target_is_directory=True)    # "(:?.*).go" matches it
    (game / "move_file").symlink_to(game / "nowhere")                  # dangling
    (game / "algo").mkdir()                                             # a directory: kept
    if hasattr(os, "mkfifo"):
        os.mkfifo(game / "first_four_moves")
    removed = clean(game)
    assert set(removed) >= {"end_game", "logo", "move_file"}
    assert sorted(os.listdir(game)) == ["algo"]
    assert outside.read_text() == PRECIOUS and tmp_path.is_dir()


# -- what the runner says --------------------------------------------------------------------

def test_the_loser_is_told_what_stood_at_move_file():
    record = GameRecord(names=("Otter1", "Random2"), time_limit=1.0, result="win", winner="Random2",
                        loser="Otter1", reason=INVALID_MOVE, unreadable="a FIFO (named pipe)")
    assert realbots.stall_notes(record, {}, {}) == {
        "Otter1": "at Otter1's turn move_file was a FIFO (named pipe), not a file a move can be "
                  "read from: Invalid move! (docs/protocol.md, section 10)"}
