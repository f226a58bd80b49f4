"""Whatever a bot writes or prints, the runner reads a bounded part of it, once: its ready file
(a sparse gigabyte, a FIFO), its log's lines searched for the error line (no regex that
backtracks over a long line), its stdout over the CodinGame protocol (a line that never ends),
and the game's files a cluster worker sends back."""

from __future__ import annotations

import os
import re
import sys
import tracemalloc

import pytest

from ref_sim.referees import codingame_shell
from ref_sim.series.run import shipping
from ref_sim.series import codingame_games
from ref_sim.series.process import launch
from ref_sim.series.output import telemetry
try:                                        # the regex parser: public until 3.11 as sre_parse
    from re import _parser as regex_parser
except ImportError:                         # pragma: no cover - before Python 3.11
    import sre_parse as regex_parser

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def sparse(path, size: int):
    """``path`` made a file of ``size`` bytes that takes no disk (zeros, never written)."""
    with open(path, "wb"):
        pass
    os.truncate(path, size)
    return path


def peak_bytes(call):
    """``(call(), the most memory Python allocated during it)``."""
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# -- the ready file ----------------------------------------------------------------------

def test_a_sparse_gigabyte_ready_file_is_read_in_bounded_memory(tmp_path):
    path = sparse(tmp_path / "game-0001-A.ready", 1 << 30)
    said, peak = peak_bytes(lambda: launch.said_ready(path))
    assert not said and peak < 1 << 20, f"{peak:,} bytes allocated to read a ready file"
    path.write_bytes(b"123\n" + b"\0" * 100)
    assert not launch.said_ready(path)      # as before: the first 32 bytes must end the line
    path.write_bytes(b"1" * 31 + b"\n" + b"junk")
    assert launch.said_ready(path)


@needs_fifo
@pytest.mark.timeout(60)                    # today's reader waited for a writer for ever
def test_a_fifo_or_a_symlink_in_place_of_the_ready_file_is_not_read(tmp_path):
    fifo = tmp_path / "game-0001-A.ready"
    os.mkfifo(fifo)
    assert not launch.said_ready(fifo)
    target = tmp_path / "elsewhere"
    target.write_bytes(b"123\n")
    link = tmp_path / "game-0001-B.ready"
    link.symlink_to(target)
    assert not launch.said_ready(link) and launch.said_ready(target)


# -- the regexes over a bot's output ---------------------------------------------------------

def unbounded_repeats(pattern: re.Pattern) -> list:
    """The repeats without an upper bound in ``pattern`` (what can backtrack over a long line)."""
    found = []

    def walk(items):
        for op, arg in items:
            if op in (regex_parser.MAX_REPEAT, regex_parser.MIN_REPEAT,
                      getattr(regex_parser, "POSSESSIVE_REPEAT", None)):
                low, high, inner = arg
                if high == regex_parser.MAXREPEAT:
                    found.append((op, low))
                walk(inner)
            elif op is regex_parser.SUBPATTERN:
                walk(arg[-1])
            elif op is regex_parser.BRANCH:
                for branch in arg[1]:
                    walk(branch)
    walk(regex_parser.parse(pattern.pattern, pattern.flags))
    return found


@pytest.mark.parametrize("pattern", [telemetry.ERROR_LINE, telemetry.STACK_FRAME])
def test_the_log_regexes_have_no_repeat_to_backtrack_over(pattern):
    # Each branch a literal of fixed length: a search is linear in the line, whatever it holds.
    assert unbounded_repeats(pattern) == []


@pytest.mark.timeout(120)                   # \w*(Error|Exception): ~2 hours of backtracking
def test_a_megabyte_of_letters_without_a_newline_is_searched_once():
    line = "a" * (1 << 20)
    assert telemetry.ERROR_LINE.search(line) is None
    assert telemetry.ERROR_LINE.search(line + "Error: at last") is not None


@pytest.mark.timeout(120)                   # 20-30 s of the runner's CPU before
def test_a_64_kib_line_without_a_newline_is_the_error_line_at_once(tmp_path):
    log = tmp_path / "game-0001-A.log"
    log.write_bytes(b"$ bot\n" + b"a" * (64 << 10))
    assert telemetry.error_line(log) == "a" * 200 + "..."


@pytest.mark.parametrize("line, found", [
    ("SyntaxError: invalid syntax", True), ("  raise ValueError", True), ("Error: Cannot find module", True),
    ('Exception in thread "main"', True), ("error: no input", True), ("fatal: bad", True),
    ("bash: cannot open", True), ("Cannot open", True), ("No such file", True),
    ("Errors happen", False), ("terror", False), ("ErrorCode", False), ("MyError_x", False),
    ("Node.js v18.19.1", False), ("seeking errors", False)])
def test_the_error_line_reads_as_it_did(line, found):
    # What the rewritten pattern finds is what \w*(Error|Exception)\b|... found.
    before = re.compile(r"(\w*(Error|Exception)\b|\berror\b|\bfatal\b|[Cc]annot |[Nn]o such )")
    assert bool(telemetry.ERROR_LINE.search(line)) is bool(before.search(line)) is found


# -- a program's stdout over CodinGame's protocol ----------------------------------------------

class EndlessStdout:
    """A program's stdout whose line never ends; counts the reads and bytes the reader takes."""

    def __init__(self, stop_after: int = 64 << 20) -> None:
        self.reads = self.taken = 0
        self.stop_after = stop_after

    def read(self, size: int = -1) -> bytes:
        self.reads += 1
        size = 1 << 16 if size is None or size < 0 else size
        self.taken += size
        if self.taken > self.stop_after:        # a reader that never stops: end the test
            raise AssertionError(f"{self.taken:,} bytes read of one line in {self.reads:,} reads")
        return b"x" * size

    readline = read


def test_an_endless_stdout_line_costs_the_reader_a_bounded_number_of_reads():
    stream = EndlessStdout()
    with pytest.raises(codingame_shell.EndlessLine):
        for _ in codingame_shell.bounded_lines(stream):
            pass
    # One read of READ_BYTES at a time, each byte looked at once, and none past the limit.
    most = codingame_shell.MAX_LINE_BYTES
    assert most <= stream.taken <= most + codingame_shell.READ_BYTES
    assert stream.reads <= most // codingame_shell.READ_BYTES + 1


class Trickle:
    """A stdout whose bytes come ``step`` at a time, as a pipe may hand them over."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.step, self.at = data, step, 0

    def read(self, size: int) -> bytes:
        piece = self.data[self.at:self.at + min(size, self.step)]
        self.at += len(piece)
        return piece


@pytest.mark.parametrize("step", [1, 3, 7, 1 << 16])
def test_lines_are_the_same_however_the_bytes_come(step):
    data = b"4 4\n\n" + b"9" * 40 + b"\n1 2 message\n" + b"y" * 15 + b"\n" + b"z" * 40
    assert list(codingame_shell.bounded_lines(Trickle(data, step), 16)) == \
        [b"4 4\n", b"\n", b"9" * 16, b"1 2 message\n", b"y" * 15 + b"\n", b"z" * 16]
    # A long line that ends is cut; one that runs past ``most`` ends the reading.
    assert list(codingame_shell.bounded_lines(Trickle(b"w" * 99 + b"\n4 4\n", step), 16, 100)) == \
        [b"w" * 16, b"4 4\n"]
    lines = codingame_shell.bounded_lines(Trickle(b"4 4\n" + b"w" * 500, step), 16, 100)
    assert next(lines) == b"4 4\n"
    with pytest.raises(codingame_shell.EndlessLine):
        next(lines)


class Counted:
    """A program's stdout as the referee reads it, counting the bytes it takes."""

    def __init__(self, stream) -> None:
        self.stream, self.reads, self.taken = stream, 0, 0

    def read(self, size: int = -1):
        data = self.stream.read(size)
        self.reads, self.taken = self.reads + 1, self.taken + len(data or b"")
        return data

    readline = read


@pytest.mark.e2e
def test_an_endless_stdout_line_over_the_stdio_referee_is_read_once_and_times_out(tmp_path, monkeypatch):
    streams = []
    real = codingame_shell.bounded_lines

    def counting(stream, *args, **kwargs):              # the seam: what each reader takes
        streams.append(Counted(stream))
        return real(streams[-1], *args, **kwargs)

    monkeypatch.setattr(codingame_shell, "bounded_lines", counting)
    endless = [sys.executable, "-c", "import os\nwhile True: os.write(1, b'x' * 65536)"]
    other = [sys.executable, "-m", "ref_sim.bots.stdio_random"]
    settings = codingame_games.StdioGameSettings(first_turn_ms=500, startup_wait=0.5, exit_wait=0.5)
    record = codingame_games.play_game({"Endless": endless, "Random": other}, "Endless",
                                       tmp_path / "logs", settings).record
    assert record["reason"] == codingame_shell.TIME_OUT and record["loser"] == "Endless"
    assert "its stdout was read no further" in record["notes"]["Endless"]
    assert len(streams) == 2
    most = codingame_shell.MAX_LINE_BYTES + codingame_shell.READ_BYTES
    assert all(stream.taken <= most for stream in streams), [s.taken for s in streams]


# -- a game's files, sent back from a cluster worker -------------------------------------------

def test_a_workers_files_are_sent_bounded(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "game-0001-A.log").write_bytes(b"$ bot\nhello\n")
    sparse(logs / "game-0001-B.search.jsonl", 100 << 20)
    (tmp_path / "secret").write_bytes(b"not a log")
    (logs / "game-0001-C.log").symlink_to(tmp_path / "secret")
    (logs / "sub").mkdir()
    if hasattr(os, "mkfifo"):
        os.mkfifo(logs / "game-0001-D.log")
    files, peak = peak_bytes(lambda: shipping.read_files(logs))
    assert sorted(files) == ["game-0001-A.log", "game-0001-B.search.jsonl"]
    assert files["game-0001-A.log"] == b"$ bot\nhello\n"
    cut = files["game-0001-B.search.jsonl"]
    assert len(cut) < telemetry.LOG_CAP_BYTES + 200 and b"bytes of output cut here" in cut
    assert peak < 4 * telemetry.LOG_CAP_BYTES, f"{peak:,} bytes allocated"


def test_a_worker_sends_no_more_than_its_limits(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    for k in range(10):
        (logs / f"game-0001-{k}.log").write_bytes(b"z" * 1000)
    files = shipping.read_files(logs, most_bytes=2500)
    assert sorted(files) == [f"game-0001-{k}.log" for k in range(3)]
    assert files["game-0001-0.log"] == b"z" * 1000 and b"cut here" in files["game-0001-2.log"]
    assert len(shipping.read_files(logs, most_bytes=1 << 20, most_files=4)) == 4
