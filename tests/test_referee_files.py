"""agent/referee_files.py: the referee's files read as the referee reads them, and the move's temp file.

Reading: one streaming pass in bounded memory, each version of a file once, and anything that is
not a readable regular file reported as unreadable without blocking. The temp file: never opened
where something already stands at its name.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
import tracemalloc

import pytest

from agent import referee_files
from agent.referee_files import (
    SYSTEM,
    FileLines,
    FileReader,
    Files,
    LineScanner,
    TempNamesTaken,
    create_temp_file,
    temp_name,
)
from agent.file_turns import referee_lines

needs_symlinks = pytest.mark.skipif(os.name == "nt", reason="symbolic links need a privilege on Windows (Wine makes "
                                                           "Unix ones, which its O_EXCL does not see)")
PIECES = ["A", "b", "1", " ", "\t", "\n", "\r", "\r\n", "\x0b", "\x1c", "\x85", "\xa0", "\u2028", "\u3000"]


def expected_lines(text: str) -> FileLines:
    lines = referee_lines(text)
    return FileLines(tuple(lines[:5]), len(lines), (len(lines), lines[-1]) if lines else None)


def scan(text: str, rng: random.Random) -> FileLines:
    scanner = LineScanner()
    at = 0
    while at < len(text):
        step = rng.randrange(1, 6)
        scanner.feed(text[at:at + step])
        at += step
    return scanner.finish()


def test_the_scanner_reads_as_the_referee_whatever_the_pieces():
    """Random texts of newlines (universal ones and others), whitespace and words, cut into random
    pieces: the lines the scanner finds are referee_lines' (the referee's text mode)."""
    rng = random.Random(23)
    for _ in range(5000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 16)))
        got = scan(text, rng)
        want = expected_lines(text)
        assert (got.first, got.count, got.last) == (want.first, want.count, want.last), repr(text)


def test_a_line_longer_than_the_limit_is_cut_and_the_reading_goes_on():
    scanner = LineScanner()
    scanner.feed(" " * 10_000 + "Otter 1 2 " + "x" * 10_000 + "\nOtter 3 4")
    lines = scanner.finish()
    assert lines.first[0].startswith("Otter 1 2 x") and len(lines.first[0]) == referee_files.MAX_LINE_CHARS
    assert lines.count == 2 and lines.last == (2, "Otter 3 4")


def write_old(path, data: bytes, age: float = 10.0) -> None:
    """Write ``data`` with an mtime ``age`` s ago: a version the reader may trust at once."""
    path.write_bytes(data)
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))


def test_a_large_file_is_read_in_bounded_memory(tmp_path, caplog):
    """32 MB of lines: the move is found, and the read never holds more than a few chunks."""
    path = tmp_path / "move_file"
    write_old(path, b"Otter 0 0\n" * 3_200_000 + b"Otter 4 5\n")
    caplog.set_level(logging.WARNING, logger="agent")
    tracemalloc.start()
    try:
        lines = FileReader("utf-8").read(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert lines.last == (3_200_001, "Otter 4 5") and not lines.undecodable
    assert peak < 8 * referee_files.CHUNK_SIZE, f"peak {peak / 1e6:.1f} MB while reading 32 MB"
    assert "move_file is 32 MB" in caplog.text


def test_each_version_is_read_once(tmp_path):
    path = tmp_path / "move_file"
    write_old(path, b"Otter 0 0\n")
    reader = FileReader("utf-8")
    for _ in range(5):
        assert reader.read(path).last == (1, "Otter 0 0")
    assert reader.reads == 1
    write_old(path, b"Otter 1 1\n", age=5.0)  # same size, new mtime: a new version
    assert reader.read(path).last == (1, "Otter 1 1")
    assert reader.reads == 2


def test_a_version_younger_than_the_timestamp_granule_is_read_again(tmp_path):
    """Written this instant: a second write in the same clock tick could keep its identity."""
    path = tmp_path / "move_file"
    path.write_bytes(b"Otter 0 0\n")
    os.utime(path)  # now
    reader = FileReader("utf-8")
    reader.read(path)
    reader.read(path)
    assert reader.reads == 2


def test_an_undecodable_byte_anywhere_is_flagged_as_the_referee_crashes_on_it(tmp_path):
    """The referee decodes the whole file, past its first blank line too."""
    path = tmp_path / "move_file"
    write_old(path, b"Otter 0 0\n\n" + b"x" * 100 + b"\xff\n")
    lines = FileReader("utf-8", chunk_size=7).read(path)
    assert lines.undecodable and lines.last == (1, "Otter 0 0")
    write_old(path, "Otter 0 0\n\u00e9\n".encode("utf-8"), age=5)  # a character cut between two chunks
    lines = FileReader("utf-8", chunk_size=11).read(path)
    assert not lines.undecodable and lines.last == (2, "\u00e9")


def unreadable_file(kind: str, path) -> None:
    """Put at ``path`` a file the referee cannot read as text (read through :func:`unreadable_through`)."""
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink loop":
        path.symlink_to(path.name)
    else:
        write_old(path, b"Otter 0 0\n")
        path.chmod(0)


def unreadable_through(kind: str, path) -> Files:
    """The Files that read :func:`unreadable_file`'s ``path``: this machine's, but for root, who
    reads a chmod 000 file: there its open is refused as the kernel would refuse anyone else."""
    if kind != "unreadable" or os.geteuid() != 0:
        return SYSTEM

    def refusing_open(name, flags, *args):
        if os.fspath(name) == os.fspath(path):
            raise PermissionError(13, "Permission denied", os.fspath(name))
        return os.open(name, flags, *args)

    return Files(open=refusing_open)


@pytest.mark.parametrize("kind, why", [("directory", "a directory"), ("fifo", "a FIFO"),
                                       ("unreadable", "Permission denied"),
                                       ("symlink loop", "symbolic links")])
def test_what_cannot_be_read_is_unreadable_once_without_blocking(tmp_path, caplog, kind, why):
    """A FIFO is never opened (it would block until a writer comes), and each version is logged
    once however often it is looked at."""
    if kind == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    if os.name == "nt" and kind in ("unreadable", "symlink loop"):
        pytest.skip("Windows: a refused open is a file being replaced (platform_io.transient, test_windows_files), "
                    "and symbolic links need a privilege")
    path = tmp_path / "move_file"
    unreadable_file(kind, path)
    caplog.set_level(logging.WARNING, logger="agent")
    reader = FileReader("utf-8", files=unreadable_through(kind, path))
    results = []
    worker = threading.Thread(target=lambda: results.extend(reader.read(path) for _ in range(3)), daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "reading blocked"
    assert all(result.unreadable and why in result.unreadable and result.last is None for result in results)
    assert caplog.text.count("move_file is") == 1, caplog.text


def test_a_missing_file_is_none(tmp_path):
    assert FileReader("utf-8").read(tmp_path / "move_file") is None
    assert FileReader("utf-8").read(tmp_path / "no_such_dir" / "move_file") is None


# -- the temp file ----------------------------------------------------------------------------------


def names_from(names) -> Files:
    """Files whose temp names are ``names``, in turn."""
    given = iter(names)
    return Files(temp_name=lambda: next(given))


def test_the_temp_name_is_unpredictable_and_survives_the_cleanup():
    from agent.file_protocol import matches_cleanup

    names = {temp_name() for _ in range(100)}
    assert len(names) == 100
    assert not any(matches_cleanup(name) or matches_cleanup(name.upper()) for name in names)


@needs_symlinks
def test_a_planted_symlink_or_file_is_never_opened(tmp_path):
    outside = tmp_path / "outside"
    outside.write_text("precious")
    directory = tmp_path / "game"
    directory.mkdir()
    planted = [temp_name(n) for n in range(3)]
    (directory / planted[0]).symlink_to(outside)
    (directory / planted[1]).symlink_to(tmp_path / "dangling")
    (directory / planted[2]).write_text("someone's")
    path = create_temp_file(directory, b"Gopher 1 2\n", files=names_from(planted + [temp_name("free")]))
    assert path.name == temp_name("free") and path.read_bytes() == b"Gopher 1 2\n"
    assert outside.read_text() == "precious" and not (tmp_path / "dangling").exists()
    assert (directory / planted[2]).read_text() == "someone's"
    assert oct(path.stat().st_mode & 0o777) == oct(0o644 & ~current_umask())


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@needs_symlinks
def test_every_name_taken_is_an_error_that_leaves_nothing(tmp_path):
    outside = tmp_path / "outside"
    outside.write_text("precious")
    directory = tmp_path / "game"
    directory.mkdir()
    planted = [temp_name(n) for n in range(referee_files.TEMP_NAME_ATTEMPTS)]
    for name in planted:
        (directory / name).symlink_to(outside)
    with pytest.raises(TempNamesTaken):
        create_temp_file(directory, b"Gopher 1 2\n", files=names_from(planted))
    assert outside.read_text() == "precious"
    assert sorted(p.name for p in directory.iterdir()) == sorted(planted)


def test_the_temp_file_is_stamped_after_a_move_file_stamped_just_before(tmp_path):
    """Linux 6.13+ stamps a change with its coarse clock unless the file's times were looked at
    since the last change, and never below a fine stamp it gave out: a file created and written
    without anyone looking at it carries the same mtime as move_file written a moment earlier
    (whose mtime the referee looked at), and the move would not count. Where this kernel gives
    fine stamps to files looked at, the temp file (looked at before its write) must get one."""
    probe = tmp_path / "probe"
    fine = 0
    for _ in range(20):
        probe.write_bytes(b"1")
        first = os.stat(probe).st_mtime_ns
        time.sleep(0.0002)
        probe.write_bytes(b"2")
        fine += os.stat(probe).st_mtime_ns != first
    if fine < 15:
        pytest.skip("this filesystem's stamps are coarse whether or not a file was looked at")
    earlier = tmp_path / "move_file"
    for _ in range(30):
        earlier.write_bytes(b"Otter 0 0\n")
        before = os.stat(earlier).st_mtime_ns  # the referee's record
        time.sleep(0.0002)
        path = create_temp_file(tmp_path, b"Gopher 1 2\n")
        assert os.stat(path).st_mtime_ns > before
        os.remove(path)


class RefusedRename(referee_files.MoveWriter):
    """Windows' refusal of a rename onto move_file the referee has open (a sharing violation)."""

    renames = 0

    def _replace(self, source, target):
        type(self).renames += 1
        raise PermissionError(13, "Access is denied", str(target))


def move_writer(tmp_path, cls, windows: bool):
    (tmp_path / "move_file").write_bytes(b"")
    return cls(tmp_path / "move_file", say_once=lambda *_: None, on_coarse=lambda: None, too_late=lambda: False,
               files=Files(windows=windows))


@pytest.mark.parametrize("windows", [True, False], ids=["windows", "posix"])
def test_a_rename_refused_at_the_retry_deadline_goes_in_place_at_once(tmp_path, windows):
    """A move lost on time under Wine: retrying a refused rename until the limit left the write in
    place too late. Past ``retry_until`` the first refusal sends the line in place, with no retry."""
    RefusedRename.renames = 0
    writer = move_writer(tmp_path, RefusedRename, windows)
    now = time.perf_counter()
    landed = writer.write("Otter 1 2\n", hard_deadline=now + 60, retry_until=now)
    assert landed is not None and RefusedRename.renames == 1
    assert (tmp_path / "move_file").read_text() == "Otter 1 2\n"
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


def test_a_rename_refused_before_the_retry_deadline_is_retried_on_windows(tmp_path):
    """Far from the deadline a transient refusal is retried (REPLACE_ATTEMPTS), then written in place."""
    RefusedRename.renames = 0
    writer = move_writer(tmp_path, RefusedRename, windows=True)
    now = time.perf_counter()
    writer.write("Otter 1 2\n", hard_deadline=now + 60, retry_until=now + 60)
    assert RefusedRename.renames == referee_files.REPLACE_ATTEMPTS
    assert (tmp_path / "move_file").read_text() == "Otter 1 2\n"
