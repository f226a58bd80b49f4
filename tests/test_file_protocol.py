"""FileProtocolAgent against files staged by hand: one test per protocol case that files can show.

The cases are the rows of docs/protocol.md, "What a bot must survive"; each test names its rows.
The agent runs in a thread; the test plays the referee (and the opponent) by writing files.
"""

from __future__ import annotations

import errno
import io
import locale
import logging
import os
import re
import threading
import time
from pathlib import Path

import pytest

from agent import file_protocol, referee_files
from agent.clock import REFEREE_TICK, cutoff_for, first_turn_keep_back
from agent.limits import STOP_POLL_SECONDS, SearchResult
from agent.pauses import KEEP_BACK_WINDOW, TRACE_ENV
from agent.file_protocol import (
    EXIT_ABORTED,
    EXIT_FINISHED,
    EXIT_PROTOCOL_ERROR,
    FileProtocolAgent,
    judge_end_text,
    matches_cleanup,
    referee_last_line,
)
from agent.referee_files import FileReader, Files, MoveWriter, temp_name
from agent.rules import InvalidMoveError, Move, Position, parse_move_line
from agent.watcher import DirectoryWatcher

ME, OPP = "Gopher", "Otter"  # "go" inside my name: the temp file must still be safe
OPENING_ME_FIRST = [f"{ME} 6 2", f"{OPP} 2 4", f"{ME} 4 5", f"{OPP} 5 8"]
OPENING_OPP_FIRST = [f"{OPP} 6 2", f"{ME} 2 4", f"{OPP} 4 5", f"{ME} 5 8"]
WIN_TEXT = f"END: {ME} WINS! {OPP} LOSES! Time out!"


class RecordingEngine:
    """Plays the first legal move (or raises / cheats on request) and records what it was given."""

    def __init__(self, fail: bool = False, illegal: bool = False) -> None:
        self.calls: list[tuple[list[int], object]] = []
        self.called_at: list[float] = []     # time.perf_counter() at each call
        self.fail = fail
        self.illegal = illegal

    def choose(self, position, limit):
        self.calls.append((position.moves_played(), limit))
        self.called_at.append(time.perf_counter())
        if self.fail:
            raise RuntimeError("engine exploded")
        if self.illegal:
            return SearchResult(move=position.moves_played()[0])  # an occupied cell
        return SearchResult(move=position.legal_moves()[0], depth=1, nodes=1, elapsed=0.001)


class Referee:
    """The files of one game in ``directory``, written the way the real referee writes them."""

    def __init__(self, directory: Path, opening=OPENING_ME_FIRST) -> None:
        self.dir = directory
        self.opening = opening
        self.position = Position.from_moves(parse_move_line(line)[1] for line in opening)

    def path(self, name: str) -> Path:
        return self.dir / name

    def start(self, opening_text: str | None = None) -> None:
        self.path("move_file").write_text("")
        self.path("first_four_moves").write_text(opening_text if opening_text is not None
                                                 else "".join(line + "\n" for line in self.opening))

    def go(self, name: str = ME) -> None:
        other = self.path(f"{OPP if name == ME else ME}.go")
        if other.exists():
            other.unlink()
        self.path(f"{name}.go").touch()

    def move_text(self) -> str:
        for _ in range(100):
            try:
                return self.path("move_file").read_bytes().decode("utf-8", errors="replace")
            except FileNotFoundError:
                return ""
            except PermissionError:
                if os.name != "nt":
                    raise
                time.sleep(0.01)    # Windows: the agent's rename replaces it this instant; read it again
        return self.path("move_file").read_bytes().decode("utf-8", errors="replace")

    def opponent_moves(self, line: str | None = None) -> str:
        """Delete my .go, give the opponent its turn, and write its move (a legal one by default)."""
        self.go(OPP)
        if line is None:
            line = f"{OPP} {Move.from_index(self.position.legal_moves()[-1])}"
            self.position.play(parse_move_line(line)[1])
        self.path("move_file").write_text(line + "\n")
        return line

    def end(self, text: str = WIN_TEXT) -> None:
        self.path("end_game").write_text(text)
        for name in (ME, OPP):
            self.path(f"{name}.go").touch()


class Runner:
    """Runs an agent in a thread; ``summary`` is set when it returns."""

    def __init__(self, directory: Path, engine=None, **options) -> None:
        options.setdefault("time_limit", 1.0)
        options.setdefault("grace", 0.5)
        # Beside the game's folder: the agent writes it once it watches and has noted what the folder
        # held, and removes it when it ends.
        ready = Path(directory).parent / f"{Path(directory).name}.{ME}.ready"
        options.setdefault("ready_file", ready)
        self.engine = engine or RecordingEngine()
        self.agent = FileProtocolAgent(ME, directory, self.engine, **options)
        self.summary = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        # As a real agent starts before the referee: a sleep instead was too short on a loaded
        # machine, and the agent then took the test's new game for one ended before it started.
        assert wait_for(lambda: ready.exists() or not self.thread.is_alive(), timeout=30), "the agent never got ready"

    def _run(self) -> None:
        self.summary = self.agent.run()

    def join(self, timeout: float = 3.0):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the agent did not exit"
        return self.summary


def wait_for(predicate, timeout: float = 2.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()


def stage_go(referee: Referee, stamp: float) -> None:
    """Create my .go with mtime ``stamp``, set before the agent can see the file."""
    staging = referee.dir / "staging"
    staging.mkdir(exist_ok=True)
    (staging / f"{ME}.go").touch()
    os.utime(staging / f"{ME}.go", (stamp, stamp))
    os.replace(staging / f"{ME}.go", referee.path(f"{ME}.go"))


def my_move_written(referee: Referee) -> bool:
    return referee.move_text().startswith(ME + " ")


@pytest.fixture
def referee(tmp_path) -> Referee:
    return Referee(tmp_path)


# -- small pieces --------------------------------------------------------------------------------


def test_cutoff_rule():
    assert cutoff_for(10) == pytest.approx(9.0)
    assert cutoff_for(1) == pytest.approx(0.8)
    assert cutoff_for(0.5) == pytest.approx(0.3)
    assert cutoff_for(10, margin=0.5) == pytest.approx(9.5)
    # Short limits: only the referee's ticks under the limit count (last at 0.15 s for 0.2 s, at
    # 0.05 s for 0.1 s); the agent thinks 30 % of the time to the last one.
    assert cutoff_for(0.2) == pytest.approx(0.045)
    assert cutoff_for(0.1) == pytest.approx(0.015)
    assert cutoff_for(0.3) == pytest.approx(0.1)
    assert cutoff_for(10, margin=0) == pytest.approx(9.95)  # never past the last tick


@pytest.mark.parametrize("name", ["algo.py", "logo.png", "x.go", "Otter.go", "move_file.tmp", "end_game~",
                                  "first_four_moves.bak", "ago"])
def test_cleanup_patterns_match_what_the_referee_deletes(name):
    assert matches_cleanup(name)


@pytest.mark.parametrize("pid", [0, 1, 42, 99999, 4194304])
def test_temp_name_survives_the_referee_cleanup(pid):
    name = temp_name(pid)
    assert not matches_cleanup(name)
    assert not matches_cleanup(name.lower()) and not matches_cleanup(name.upper())
    try:
        from ref_sim.referees.file_shell import is_cleanup_name
    except ImportError:  # pragma: no cover
        return
    assert not is_cleanup_name(name)


def test_referee_last_line_reads_like_the_referee():
    assert referee_last_line("") is None
    assert referee_last_line("\nOtter 1 2\n") is None
    assert referee_last_line("Otter 1 2") == (1, "Otter 1 2")
    assert referee_last_line("A 1 2\nB 3 4\n   \nC 5 6\n") == (2, "B 3 4")


INSIDE_A_LINE = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("separator", INSIDE_A_LINE, ids=lambda c: f"U+{ord(c):04X}")
def test_only_universal_newlines_end_a_line(tmp_path, separator):
    """Item 1: str.splitlines() also splits at these; the referee's text mode does not (its
    str.split() then treats them as spaces). Checked against ref_sim's reading of the same bytes."""
    from ref_sim.referees.file_referee import parse_move_line as referee_parse
    from ref_sim.referees.file_shell import read_move_line

    for text in (f"{OPP} 3 4{separator}junk\n", f"{OPP} 1 2{separator}{OPP} 5 6\n",
                 f"{ME} 0 0\n{OPP} 1 2{separator}\n", f"{OPP} 7 7\r{OPP} 2 2{separator}8 8\r\n"):
        path = tmp_path / "move_file"
        path.write_bytes(text.encode("utf-8"))
        ours = FileReader("utf-8").read(path).last
        name, move = parse_move_line(ours[1])
        # The referee of a UTF-8 locale, as the bytes are: cp1252 (Windows') would decode other characters.
        assert referee_parse(read_move_line(path, encoding="utf-8")) == (name, move.board, move.spot), text
    assert referee_last_line(f"{OPP} 1 2{separator}{OPP} 5 6\n") == (1, f"{OPP} 1 2{separator}{OPP} 5 6")


@pytest.mark.parametrize("newline", ["\n", "\r", "\r\n"], ids=["LF", "CR", "CRLF"])
def test_universal_newlines_do_end_lines(newline):
    text = newline.join([f"{ME} 1 2", f"{OPP} 3 4", "", f"{ME} 5 6"]) + newline
    assert file_protocol.referee_lines(text) == [f"{ME} 1 2", f"{OPP} 3 4"]
    assert referee_last_line(text) == (2, f"{OPP} 3 4")


def test_judge_end_text():
    assert judge_end_text(ME, WIN_TEXT) == "won"
    assert judge_end_text(OPP, WIN_TEXT) == "lost"
    assert judge_end_text(ME, "END: Match TIED!") == "tied"
    assert judge_end_text(ME, "something else") is None


# -- turns ---------------------------------------------------------------------------------------


@pytest.mark.e2e
def test_p1_moves_once_although_its_go_lingers(referee):
    """One line, my exact name, one write, though my .go stays for a while (docs/protocol.md,
    "What a bot must survive", rows "Your own .go is still there", "A blank line")."""
    runner = Runner(referee.dir)
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    first = referee.move_text()
    mtime = os.stat(referee.path("move_file")).st_mtime_ns
    time.sleep(0.3)  # my .go lingers far longer than the real referee's 50 ms
    assert referee.move_text() == first
    assert os.stat(referee.path("move_file")).st_mtime_ns == mtime
    assert len(runner.engine.calls) == 1
    name, move = parse_move_line(first)
    assert first == f"{ME} {move}\n" and first.count("\n") == 1 and name == ME
    assert referee.position.is_legal(move.index)
    referee.end()
    summary = runner.join()
    assert summary.status == "finished" and summary.result == "won" and summary.moves == 1
    assert summary.exit_code == EXIT_FINISHED


@pytest.mark.e2e
@pytest.mark.parametrize("use_watchdog", [True, False], ids=["watchdog", "polling"])
def test_instant_opponent_with_50ms_gaps(tmp_path, use_watchdog):
    """My .go is gone only ~50 ms between turns; I never write during the opponent's turn
    (docs/protocol.md, "What a bot must survive", rows "The next .go arrives ~50 ms", "A move written outside")."""
    referee = Referee(tmp_path, OPENING_OPP_FIRST)
    runner = Runner(tmp_path, use_watchdog=use_watchdog)
    referee.start()
    referee.go(OPP)
    referee.opponent_moves()
    time.sleep(0.05)
    for turn in range(6):
        referee.go(ME)
        assert wait_for(lambda: my_move_written(referee)), f"no move at turn {turn}"
        text = referee.move_text()
        assert text.count("\n") == 1 and text.endswith("\n")
        referee.position.play(parse_move_line(text)[1])
        time.sleep(0.05)  # my .go lingers until the next referee tick
        if referee.position.winner is not None:
            break
        opponent_line = referee.opponent_moves()  # instant opponent
        time.sleep(0.05)  # the gap: my .go is absent for one tick
        assert referee.move_text() == opponent_line + "\n", "the agent wrote outside its turn"
    referee.end()
    summary = runner.join()
    assert summary.status == "finished" and summary.moves == len(runner.engine.calls)


@pytest.mark.e2e
@pytest.mark.parametrize("use_watchdog", [True, False], ids=["watchdog", "polling"])
def test_one_move_per_go_though_the_opponent_answers_out_of_turn(tmp_path, use_watchdog):
    """Item 1: an opponent that answers the instant my move appears, before its own .go: its line
    lands while the .go I answered still stands. The referee calls it (Out-of-order move!, my
    win); I must not answer it, or the referee reads my second line in its own position."""
    referee = Referee(tmp_path)
    runner = Runner(tmp_path, use_watchdog=use_watchdog)
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    referee.position.play(parse_move_line(referee.move_text())[1])
    eager = f"{OPP} {Move.from_index(referee.position.legal_moves()[0])}\n"
    referee.path("move_file").write_text(eager)  # my .go still there: out of turn
    time.sleep(0.3)
    assert referee.move_text() == eager, "answered a line written out of turn"
    assert len(runner.engine.calls) == 1
    referee.end(f"END: {ME} WINS! {OPP} LOSES! Out-of-order move!")
    summary = runner.join()
    assert summary.status == "finished" and summary.result == "won" and summary.moves == 1


def test_move_is_written_whole_by_rename(referee, monkeypatch):
    """move_file only ever changes by a rename of a complete one-line temp file (docs/protocol.md,
    "Writing a move safely")."""
    seen = []

    class Checking(MoveWriter):
        def _replace(self, source, target):
            before = (Path(source), Path(target), Path(source).read_text(), Path(target).read_text())
            super()._replace(source, target)
            seen.append(before)     # the rename that landed (Windows may refuse one while the referee reads)

    runner = Runner(referee.dir)
    runner.agent.writer.__class__ = Checking
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    referee.end()
    runner.join()
    (source, target, new, old), = seen
    assert source.parent == target.parent == referee.dir
    assert not matches_cleanup(source.name) and ME not in source.name
    assert old == "" and new == referee.move_text() and new.count("\n") == 1
    assert not source.exists()


@pytest.mark.e2e
@pytest.mark.parametrize("refusals", [2, 25])
def test_rename_retried_when_windows_refuses(referee, refusals):
    """On Windows a PermissionError from the rename is retried quickly (2 refusals); past
    REPLACE_ATTEMPTS (25) the line goes into move_file in place; never crashing the agent
    (docs/protocol.md, "What a bot must survive", row "Windows: the referee has move_file open")."""
    failures = [PermissionError("in use")] * refusals

    class Flaky(MoveWriter):
        def _replace(self, source, target):
            if failures:
                raise failures.pop()
            super()._replace(source, target)

    runner = Runner(referee.dir, files=Files(windows=True))
    runner.agent.writer.__class__ = Flaky
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee), timeout=4.0)
    assert len(failures) == max(refusals - referee_files.REPLACE_ATTEMPTS, 0)
    assert referee.move_text().count("\n") == 1
    referee.end()
    summary = runner.join()
    assert summary.status == "finished" and summary.moves == 1


class RenameRefused(MoveWriter):
    """A sticky shared directory (mode 1777) where move_file belongs to another user: EPERM."""

    def _replace(self, source, target):
        raise PermissionError(errno.EPERM, "Operation not permitted", str(target))


def test_refused_rename_falls_back_to_writing_in_place(tmp_path, caplog):
    """Item 4: the rename is refused for good: the line is written into move_file in place, whole."""
    caplog.set_level(logging.INFO, logger="agent")
    referee = Referee(tmp_path, OPENING_OPP_FIRST)
    runner = Runner(tmp_path)
    runner.agent.writer.__class__ = RenameRefused
    referee.start()
    referee.opponent_moves()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    text = referee.move_text()
    name, move = parse_move_line(text)
    assert text == f"{ME} {move}\n" and referee.position.is_legal(move.index)
    assert caplog.text.count("writing my moves into it in place") == 1
    assert not any(name.endswith(".tmp") for name in os.listdir(tmp_path))
    referee.end()
    assert runner.join().moves == 1


def test_in_place_write_never_shows_a_wrong_line(tmp_path, monkeypatch):
    """Item 4: longer older text stays behind our line until the file is cut, but behind a blank
    line, where the referee stops reading: at every moment it reads our line or the old one."""
    move_file = tmp_path / "move_file"
    move_file.write_text("Hippopotamus 1 2\nHippopotamus 3 4\nHippopotamus 5 6\n")
    agent = FileProtocolAgent(ME, tmp_path, RecordingEngine())
    seen = []
    real_ftruncate = os.ftruncate

    def ftruncate(fd, length):
        seen.append(referee_last_line(move_file.read_text()))
        real_ftruncate(fd, length)

    monkeypatch.setattr(file_protocol.os, "ftruncate", ftruncate)
    agent.writer._write_in_place(f"{ME} 3 4\n".encode())
    assert seen == [(1, f"{ME} 3 4")]
    assert move_file.read_text() == f"{ME} 3 4\n"


@pytest.mark.e2e
@pytest.mark.parametrize("transient", [True, False], ids=["windows", "posix"])
def test_write_retries_stop_at_the_referee_limit(referee, transient):
    """Item 4: every retry (rename or in place) ends by the referee's limit, counted from the .go."""
    attempts = []

    class Refused(MoveWriter):
        def _replace(self, source, target):
            attempts.append(time.time())
            raise PermissionError(errno.EACCES, "Permission denied", str(target))

        def _write_in_place(self, data):
            attempts.append(time.time())
            raise PermissionError(errno.EACCES, "Permission denied", str(self.move_path))

    runner = Runner(referee.dir, time_limit=0.5, files=Files(windows=transient))
    runner.agent.writer.__class__ = Refused
    referee.start()
    stamp = time.time() - 0.4  # 0.1 s left of a 0.5 s limit: less than 20 quick rename retries
    for name in ("first_four_moves", "move_file"):
        os.utime(referee.path(name), (stamp - 0.01, stamp - 0.01))
    stage_go(referee, stamp)
    assert wait_for(lambda: attempts and time.time() - attempts[-1] > 0.3, timeout=3.0)
    assert referee.move_text() == ""
    # The last retry starts before the limit; one retry pause (50 ms) of scheduling slack.
    assert max(attempts) - stamp < 0.5 + 0.05, [round(a - stamp, 3) for a in attempts]
    referee.end()
    assert runner.join().status == "finished"


@pytest.mark.e2e
@pytest.mark.parametrize("can_set_mtime", [True, False], ids=["mtime-set", "mtime-refused"])
def test_a_write_that_does_not_raise_the_mtime_is_made_to(referee, can_set_mtime):
    """The first writes leave the mtime where it was (the same clock tick, or an mtime in the
    future): the agent sets it to the next whole second at once; where it may not (another user's
    file), it rewrites until the mtime goes up (docs/protocol.md, "What a bot must survive", row "Coarse
    timestamps")."""
    replaced = []

    class Stuck(MoveWriter):
        def _replace(self, source, target):
            before = os.stat(target).st_mtime_ns
            super()._replace(source, target)
            replaced.append(Path(target).read_text())
            if len(replaced) < 3:  # the first two writes land "in the same tick"
                os.utime(target, ns=(before, before))

        def _set_mtime(self, mtime_ns):
            if not can_set_mtime:
                raise PermissionError(errno.EPERM, "Operation not permitted")
            super()._set_mtime(mtime_ns)

    referee.start()
    before = os.stat(referee.path("move_file")).st_mtime_ns
    runner = Runner(referee.dir)
    runner.agent.writer.__class__ = Stuck
    referee.go(ME)
    assert wait_for(lambda: os.stat(referee.path("move_file")).st_mtime_ns > before)
    # The write that raised it is noted just after it lands (a loaded machine took 0.2 s once).
    assert wait_for(lambda: len(replaced) == (1 if can_set_mtime else 3))
    time.sleep(0.2)         # and no write comes after it
    assert len(set(replaced)) == 1
    if can_set_mtime:
        assert len(replaced) == 1
        assert os.stat(referee.path("move_file")).st_mtime_ns == (before // 10**9 + 1) * 10**9
    else:
        assert len(replaced) == 3
    referee.end()
    assert runner.join().moves == 1


def test_an_mtime_set_in_the_future_does_not_hide_my_move(referee):
    """A hostile or broken opponent leaves move_file's mtime an hour ahead: the referee's record M
    is in the future and no plain write can pass it; the agent's stamp does."""
    referee.start()
    future = time.time() + 3600
    os.utime(referee.path("move_file"), (future, future))
    before = os.stat(referee.path("move_file")).st_mtime_ns
    runner = Runner(referee.dir)
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    assert wait_for(lambda: os.stat(referee.path("move_file")).st_mtime_ns > before)
    referee.end()
    assert runner.join().moves == 1


# -- stale and late ------------------------------------------------------------------------------


@pytest.mark.e2e
def test_files_from_an_earlier_game_are_ignored(referee):
    """An old finished game, then an end_game and my .go older than the new opening
    (docs/protocol.md, "What a bot must survive", row "Files left by an earlier game")."""
    old = time.time() - 100
    (referee.dir / "first_four_moves").write_text("".join(line + "\n" for line in OPENING_OPP_FIRST))
    (referee.dir / "move_file").write_text(f"{OPP} 0 0\n")
    (referee.dir / "end_game").write_text(f"END: {OPP} WINS! {ME} LOSES! Time out!")
    (referee.dir / f"{ME}.go").touch()
    for name in ("first_four_moves", "move_file"):
        os.utime(referee.dir / name, (old - 10, old - 10))
    for name in ("end_game", f"{ME}.go"):
        os.utime(referee.dir / name, (old, old))
    runner = Runner(referee.dir)
    time.sleep(0.2)
    assert runner.thread.is_alive(), "exited on an end_game from before it started"
    referee.start()  # the new game; end_game and my .go stay behind, older than it
    time.sleep(0.3)
    assert runner.thread.is_alive(), "took an old end_game for the new game's"
    assert referee.move_text() == "", "moved on a .go older than first_four_moves"
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    referee.end()
    summary = runner.join()
    assert summary.status == "finished" and summary.moves == 1


def test_started_late_in_my_first_turn_still_moves_in_time(referee):
    """A loaded machine can start the agent after its first .go appeared: with time left before
    the referee's limit it must still move (a quick search), not wait and lose on time."""
    referee.start()
    referee.go(ME)
    go_age = 0.35  # older than the cutoff (0.3 s at a 0.5 s limit) but younger than the limit
    stamp = time.time() - go_age
    for name in ("first_four_moves", "move_file"):  # written just before the .go, as the referee does
        os.utime(referee.path(name), (stamp - 0.01, stamp - 0.01))
    os.utime(referee.path(f"{ME}.go"), (stamp, stamp))
    runner = Runner(referee.dir, time_limit=0.5)  # cutoff 0.3 s: the .go is already older than it
    assert wait_for(lambda: my_move_written(referee), timeout=1.0)
    written = os.stat(referee.path("move_file")).st_mtime
    assert written - stamp < 0.5, "moved after the referee's limit"
    referee.end()
    assert runner.join().moves == 1


@pytest.mark.e2e
def test_a_go_older_than_the_limit_at_start_is_a_leftover(referee):
    """A killed referee leaves a fresh-looking game behind; its .go is older than any live turn."""
    referee.start()
    referee.go(ME)
    stamp = time.time() - 5
    for name in ("first_four_moves", "move_file", f"{ME}.go"):
        os.utime(referee.path(name), (stamp, stamp))
    runner = Runner(referee.dir, time_limit=1.0)
    time.sleep(0.3)
    assert referee.move_text() == "", "played in a dead referee's game"
    referee.end()
    assert runner.join().moves == 0


@pytest.mark.e2e
@pytest.mark.parametrize("history", [f"{OPP} 8 0\n", f"{ME} 8 0\n"])
def test_started_after_the_game_began_is_reported(referee, caplog, history):
    """My first .go meets a move_file that a fresh game cannot show: say so, do not play
    (docs/protocol.md, "What a bot must survive", row "Started after the game began")."""
    caplog.set_level(logging.INFO, logger="agent")
    runner = Runner(referee.dir)
    referee.start()
    referee.path("move_file").write_text(history)
    referee.go(ME)
    time.sleep(0.3)
    assert referee.move_text() == history
    assert not runner.engine.calls
    assert "started after the game began" in caplog.text
    referee.end()
    summary = runner.join()
    assert summary.status == "protocol_error" and summary.exit_code == EXIT_PROTOCOL_ERROR
    assert "started after the game began" in summary.message and summary.end_text == WIN_TEXT


@pytest.mark.e2e
def test_started_late_while_the_game_runs_waits_for_its_end(referee, caplog):
    """Files of a running game already there at start-up: wait, never play it from a guess
    (docs/protocol.md, "What a bot must survive", row "Started after the game began")."""
    referee.start()
    referee.path("move_file").write_text(f"{ME} 8 0\n")
    referee.go(OPP)
    runner = Runner(referee.dir)
    referee.path("move_file").write_text(f"{OPP} 0 3\n")
    referee.go(ME)
    time.sleep(0.3)
    assert not runner.engine.calls and referee.move_text() == f"{OPP} 0 3\n"
    referee.end()
    assert runner.join().status == "protocol_error"


@pytest.mark.e2e
def test_opening_read_only_after_my_go(referee):
    """A half-written first_four_moves before my .go is not read (docs/protocol.md,
    "What a bot must survive", row "first_four_moves read too early")."""
    runner = Runner(referee.dir)
    referee.start(opening_text=OPENING_ME_FIRST[0] + "\n" + OPENING_ME_FIRST[1] + "\n")
    time.sleep(0.2)
    assert runner.thread.is_alive() and runner.agent._error is None
    referee.path("first_four_moves").write_text("".join(line + "\n" for line in OPENING_ME_FIRST))
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    moves, _ = runner.engine.calls[0]
    assert moves == [parse_move_line(line)[1].index for line in OPENING_ME_FIRST]
    referee.end()
    assert runner.join().status == "finished"


def test_old_referee_x_o_opening(referee):
    """Older referees write X/O instead of names; the side follows from move_file
    (docs/protocol.md, "The opening: first_four_moves")."""
    referee.opening = [f"{tag} {line.split(' ', 1)[1]}" for tag, line in zip("XOXO", OPENING_OPP_FIRST)]
    runner = Runner(referee.dir)
    referee.start()
    referee.position = Position.from_moves(parse_move_line(line)[1] for line in OPENING_OPP_FIRST)
    referee.opponent_moves()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    referee.end()
    assert runner.join().status == "finished"


# -- the end -------------------------------------------------------------------------------------


def test_end_game_checked_before_moving(referee):
    """The game ended as my .go appeared (the referee creates both .go after end_game;
    docs/protocol.md, "The end of the game")."""
    runner = Runner(referee.dir)
    referee.start()
    referee.end()
    summary = runner.join()
    assert referee.move_text() == "" and not runner.engine.calls
    assert summary.status == "finished" and summary.result == "won"
    assert summary.result_line() == f"{ME} won: {WIN_TEXT}"


def test_the_ready_file_is_written_after_the_first_look(referee, tmp_path):
    """A referee started on the ready file may end its game at once: the agent has already noted
    what the folder held, so that game is not taken for an earlier one (docs/agent.md, --ready-file)."""
    order = []
    agent = FileProtocolAgent(ME, referee.dir, RecordingEngine(), time_limit=1.0, grace=0.5,
                              ready_file=tmp_path.parent / f"{tmp_path.name}.first-look.ready")

    def recorded(name, function):
        def call(*args):
            order.append(name)
            return function(*args)
        return call

    agent.decider.start = recorded("start", agent.decider.start)  # this agent's own parts: nothing to restore
    agent.ready_file.announce = recorded("announce", agent.ready_file.announce)
    thread = threading.Thread(target=lambda: order.append(agent.run()), daemon=True)
    thread.start()
    assert wait_for(lambda: "announce" in order, timeout=30)
    referee.start()
    referee.end()
    thread.join(10)
    assert order[:2] == ["start", "announce"] and order[-1].status == "finished"


def test_exits_after_end_game_while_the_referee_lingers(referee):
    """end_game read -> return, although the referee keeps re-creating files (docs/protocol.md,
    "What a bot must survive", row "The referee keeps running after the end")."""
    runner = Runner(referee.dir)
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    stop = threading.Event()

    def linger():
        while not stop.is_set():
            referee.end("END: Match TIED!")
            stop.wait(0.02)

    lingerer = threading.Thread(target=linger, daemon=True)
    lingerer.start()
    try:
        # Runner's 3 s: under Wine the watchdog observer's stop takes the agent's whole 1 s bound
        # for it (watcher._drop_observer; ReadDirectoryChangesW is not cancelled), 0.98 s measured.
        summary = runner.join()
    finally:
        stop.set()
        lingerer.join()
    assert summary.status == "finished" and summary.result == "tied"


@pytest.mark.e2e
def test_vanished_files_abort_the_game(referee):
    """Ctrl-C of the referee deletes everything without end_game: give up after the grace
    (docs/protocol.md, "What a bot must survive", row "Files vanish")."""
    runner = Runner(referee.dir, grace=0.3)
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    for name in ("move_file", "first_four_moves", f"{ME}.go"):
        referee.path(name).unlink()
    started = time.monotonic()
    summary = runner.join(timeout=20.0)
    assert 0.25 < time.monotonic() - started < 20   # the grace, then giving up (not a hang)
    assert summary.status == "aborted" and summary.exit_code == EXIT_ABORTED
    assert "vanished" in summary.message and summary.end_text is None


def test_a_new_game_replacing_mine_is_joined(referee, caplog):
    """Item 2: a new first_four_moves before any end_game: the old game was abandoned; play the new one."""
    caplog.set_level(logging.INFO, logger="agent")
    runner = Runner(referee.dir)
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    time.sleep(0.02)
    new_game = Referee(referee.dir, OPENING_OPP_FIRST)
    new_game.start()
    new_game.opponent_moves()
    new_game.go(ME)
    assert wait_for(lambda: my_move_written(new_game))
    assert new_game.position.is_legal(parse_move_line(new_game.move_text())[1].index)
    new_game.end()
    summary = runner.join()
    assert summary.status == "finished" and summary.exit_code == EXIT_FINISHED and summary.moves == 1
    assert "that game was abandoned" in caplog.text


@pytest.mark.e2e
def test_a_dead_game_joined_at_start_then_the_live_one(referee):
    """Item 2: started within the limit after a referee was killed on my turn, the agent moves in the
    dead game (harmless); the next referee's game must still be played, not abandoned."""
    referee.start()
    referee.go(ME)
    stamp = time.time() - 0.2  # younger than the limit: looks like a live turn
    for name in ("first_four_moves", "move_file"):
        os.utime(referee.path(name), (stamp - 0.01, stamp - 0.01))
    os.utime(referee.path(f"{ME}.go"), (stamp, stamp))
    runner = Runner(referee.dir, time_limit=1.0)
    assert wait_for(lambda: my_move_written(referee))
    time.sleep(0.2)
    for name in ("move_file", "first_four_moves", f"{ME}.go"):  # the new referee's clean-up
        referee.path(name).unlink()
    live = Referee(referee.dir, OPENING_ME_FIRST)
    live.start()
    live.go(ME)
    assert wait_for(lambda: my_move_written(live))
    live.end()
    summary = runner.join()
    assert summary.status == "finished" and summary.exit_code == EXIT_FINISHED


# -- bad opponents -------------------------------------------------------------------------------


@pytest.mark.parametrize("line, why", [
    (f"{OPP} 9 9", "must be 0-8"),
    (f"{OPP} x 1", "'x' is not a number"),
    (f"{OPP} 4", "expected 'NAME BOARD SPOT'"),
    ("Someone 8 0", "not from my opponent"),
    (f"{OPP} 5 8", "is not legal: cell 8 of board 5 is occupied"),
])
@pytest.mark.e2e
def test_bad_opponent_move_is_reported_and_the_agent_waits_for_end_game(referee, caplog, line, why):
    """Say what, where and why; do not crash, do not write; exit after end_game (docs/protocol.md,
    "What a bot must survive", row "An illegal or malformed opponent move")."""
    caplog.set_level(logging.INFO, logger="agent")
    runner = Runner(referee.dir)
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    time.sleep(0.05)
    referee.opponent_moves(line)
    time.sleep(0.05)
    referee.go(ME)
    time.sleep(0.3)
    assert referee.move_text() == line + "\n"
    assert len(runner.engine.calls) == 1
    assert "move_file line 1: " in caplog.text and why in caplog.text
    referee.end()
    summary = runner.join()
    assert summary.status == "protocol_error" and why in summary.message


# -- the engine and the clock --------------------------------------------------------------------


@pytest.mark.parametrize("engine", [RecordingEngine(fail=True), RecordingEngine(illegal=True)], ids=["raises", "illegal"])
def test_a_failing_engine_still_yields_a_legal_move(referee, engine):
    runner = Runner(referee.dir, engine=engine)
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    assert referee.position.is_legal(parse_move_line(referee.move_text())[1].index)
    referee.end()
    assert runner.join().status == "finished"


@pytest.mark.parametrize("age, expected, from_mtime", [(0.5, 1.3, True), (-30.0, 1.8, False), (1000.0, 1.8, False)],
                         ids=["half-second-old", "future", "absurdly-old"])
def test_deadline_counts_from_the_go_mtime(referee, age, expected, from_mtime):
    """The clock starts at the .go's creation; an mtime that cannot be this turn's counts from now."""
    runner = Runner(referee.dir, time_limit=2.0, depth=3, nodes=500)
    referee.start()
    staged = time.perf_counter()
    stamp = time.time() - age
    for name in ("first_four_moves", "move_file"):  # a .go older than the opening would be stale
        os.utime(referee.path(name), (min(stamp, time.time()) - 1, min(stamp, time.time()) - 1))
    stage_go(referee, stamp)
    assert wait_for(lambda: runner.engine.calls)
    _, limit = runner.engine.calls[0]
    # Measured against the moments around the agent's notice, not by this thread after it (a
    # loaded machine once held this thread 0.24 s past the call): a deadline from the mtime is
    # fixed by it, one from the notice lies between the staging and the engine's call.
    if from_mtime:
        assert limit.deadline - staged == pytest.approx(expected, abs=0.1)
    else:
        assert staged + expected - 0.1 <= limit.deadline <= runner.engine.called_at[0] + expected + 0.1
    assert (limit.depth, limit.nodes) == (3, 500)
    referee.end()
    runner.join()


# -- pauses kept back (agent.pauses) -------------------------------------------------------------


class PausingEngine(RecordingEngine):
    """Stalls between two polls of should_stop (off the CPU, as a descheduled search) or spins
    (on it) in chosen turns, and records each turn's deadline in seconds after the .go's mtime."""

    def __init__(self, go_path: Path, sleep=(), spin_past_deadline=()) -> None:
        super().__init__()
        self.go_path = go_path
        self.sleep = dict(sleep)            # turn number -> seconds asleep
        self.spin = dict(spin_past_deadline)  # turn number -> seconds past the deadline, on the CPU
        self.deadlines: list[float] = []

    def choose(self, position, limit):
        now_perf, now_wall = time.perf_counter(), time.time()
        self.deadlines.append(limit.deadline - now_perf + now_wall - os.stat(self.go_path).st_mtime)
        turn = len(self.deadlines)
        if turn in self.sleep:
            limit.should_stop()
            time.sleep(self.sleep[turn])
            limit.should_stop()
        if turn in self.spin:
            while time.perf_counter() < limit.deadline + self.spin[turn]:
                pass
        return super().choose(position, limit)


def play_my_turns(referee: Referee, runner: Runner, turns: int) -> None:
    """Give me ``turns`` turns, the opponent answering each of my moves."""
    for turn in range(1, turns + 1):
        referee.go(ME)
        assert wait_for(lambda: my_move_written(referee) and runner.agent._game.moves == turn)
        referee.position.play(parse_move_line(referee.move_text())[1])
        if turn < turns:
            referee.opponent_moves()


def test_a_stall_of_the_search_is_kept_back_on_the_next_turns(referee, caplog):
    """A search that stalled 40 ms between two polls (and still answered in time) makes the next
    deadlines keep that back, less the polling period: on a loaded machine a stall can also strike
    at the deadline."""
    engine = PausingEngine(referee.path(f"{ME}.go"), sleep={1: 0.040})
    runner = Runner(referee.dir, engine=engine, time_limit=0.5)
    referee.start()
    with caplog.at_level(logging.INFO, logger="agent.file_protocol"):
        play_my_turns(referee, runner, 3)
    kept = runner.agent.pauses.largest()
    assert 0.040 - STOP_POLL_SECONDS - 0.001 <= kept < 0.2
    first, second, third = engine.deadlines
    assert first == pytest.approx(0.3 - first_turn_keep_back(0.5), abs=0.005)  # nothing measured yet
    assert second == pytest.approx(0.3 - kept, abs=0.005)      # the pause kept back
    assert third == pytest.approx(second, abs=0.005)           # and remembered
    assert "ms for pauses)" in caplog.text                     # logged with the move
    referee.end()
    runner.join()


@pytest.mark.e2e
def test_a_move_landing_late_is_kept_back(referee):
    """A search that overran its deadline by 40 ms on the CPU: the next deadlines keep that back."""
    engine = PausingEngine(referee.path(f"{ME}.go"), spin_past_deadline={1: 0.040})
    runner = Runner(referee.dir, engine=engine, time_limit=0.5)
    referee.start()
    play_my_turns(referee, runner, 2)
    assert runner.agent.pauses.largest() >= 0.039
    assert engine.deadlines[1] <= 0.3 - 0.039 + 0.005
    referee.end()
    runner.join()


@pytest.mark.parametrize("time_limit, floor", [(0.5, 0.25 * 0.45), (0.1, 0.25 * 0.05), (10.0, 0.25 * 9.95)])
def test_pauses_never_take_the_thinking_time_under_a_quarter_of_the_last_tick(referee, time_limit, floor):
    agent = FileProtocolAgent(ME, referee.dir, RecordingEngine(), time_limit=time_limit)
    agent.pauses.append(0.070)
    assert agent.thinking_cutoff() == pytest.approx(max(cutoff_for(time_limit) - 0.070, floor))
    agent.pauses.append(20.0)
    assert agent.thinking_cutoff() == pytest.approx(floor)


def test_pauses_are_forgotten_after_the_window(referee):
    agent = FileProtocolAgent(ME, referee.dir, RecordingEngine(), time_limit=0.5)
    agent.pauses.append(0.050)
    for _ in range(KEEP_BACK_WINDOW - 1):
        agent.pauses.append(0.0)
    assert agent.thinking_cutoff() == pytest.approx(0.3 - 0.050)
    agent.pauses.append(0.0)
    assert agent.thinking_cutoff() == pytest.approx(0.3)


def test_nothing_is_kept_back_at_10_s_after_a_quiet_turn(referee, caplog):
    """The tournament's 10 s: the first turn, with no pause measured yet, keeps back 0.4 s; a quick
    turn measures no pause, so the next move thinks to ~9.0 s."""
    engine = PausingEngine(referee.path(f"{ME}.go"))
    runner = Runner(referee.dir, engine=engine, time_limit=10.0)
    referee.start()
    with caplog.at_level(logging.INFO, logger="agent.file_protocol"):
        play_my_turns(referee, runner, 2)
    # A few ms at most (a loaded test machine may take the thread off the CPU for a moment).
    assert runner.agent.pauses.largest() < 0.05
    assert engine.deadlines[0] == pytest.approx(9.0 - 0.398, abs=0.005)
    assert engine.deadlines[1] == pytest.approx(9.0, abs=0.05)
    referee.end()
    runner.join()


@pytest.mark.parametrize("value, traced", [("1", True), ("", False), ("0", False)])
def test_each_turn_is_traced_only_when_asked(referee, caplog, monkeypatch, value, traced):
    """UTTT_TRACE_TURNS: one line a turn, its moments in order from the .go (scripts/bench_first_move.py
    reads it); unset or 0, none."""
    monkeypatch.setenv(TRACE_ENV, value)
    engine = PausingEngine(referee.path(f"{ME}.go"), sleep={1: 0.030})
    runner = Runner(referee.dir, engine=engine, time_limit=0.5)
    referee.start()
    with caplog.at_level(logging.INFO, logger="agent.file_protocol"):
        play_my_turns(referee, runner, 2)
        referee.end()       # the last turn's line follows its write: read the log once the agent is done
        runner.join()
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("turn trace")]
    assert len(lines) == (2 if traced else 0)
    order = ["woke", "noticed", "first-poll", "last-poll", "chosen", "written"]
    for turn, line in enumerate(lines, 1):
        found = re.fullmatch(r"turn trace \(s after the \.go's mtime\): (.*)  target ([\d.]+)  stall ([\d.]+)  "
                             r"faults \d+ minor \d+ major  \d+ involuntary switches", line)
        assert found, line
        marks = {name: float(at) for name, at in re.findall(r"([\w-]+) ([+-][\d.]+)", found.group(1))}
        # The first turn's engine polls (and stalls 30 ms between two polls); the second's never does.
        polled = {"first-poll", "last-poll", "stall-end"} if turn == 1 else set()
        assert set(marks) == {"woke", "noticed", "chosen", "written"} | polled, line
        moments = [marks[name] for name in order if name in marks]
        assert moments == sorted(moments), line
        if turn == 1:  # no pause measured yet
            assert float(found.group(2)) == pytest.approx(0.3 - first_turn_keep_back(0.5))
            assert float(found.group(3)) >= 0.019


# -- the watcher ---------------------------------------------------------------------------------


def test_watcher_falls_back_to_polling_when_watchdog_cannot_start(tmp_path, caplog):
    watcher = DirectoryWatcher(tmp_path / "missing")
    assert watcher.start() == "polling"
    assert "falling back to polling" in caplog.text
    started = time.perf_counter()
    assert watcher.wait() is False
    assert 0.005 < time.perf_counter() - started < 5    # one poll's wait, not for ever
    watcher.stop()


def test_watcher_wakes_on_change_and_survives_observer_death(tmp_path, caplog):
    watcher = DirectoryWatcher(tmp_path, interval=0.015)
    assert watcher.start() == "watchdog"
    threading.Timer(0.05, (tmp_path / "x").touch).start()
    assert any(watcher.wait(timeout=1.0) for _ in range(3))
    watcher._observer.stop()
    watcher._observer.join()
    watcher.wait()
    assert watcher.backend == "polling" and "observer stopped" in caplog.text
    watcher.stop()


# -- lines read as the referee reads them (item 1) --------------------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize("separator", INSIDE_A_LINE, ids=lambda c: f"U+{ord(c):04X}")
def test_opponent_line_with_an_odd_separator_is_the_referees_move(tmp_path, separator):
    """``Otter 1 2<sep>Otter 5 6``: the referee played 1 2 and so must my position."""
    referee = Referee(tmp_path, OPENING_OPP_FIRST)
    runner = Runner(tmp_path)
    referee.start()
    position = referee.position
    first, second = position.legal_moves()[0], position.legal_moves()[-1]
    referee.opponent_moves(f"{OPP} {Move.from_index(first)}{separator}{OPP} {Move.from_index(second)}")
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee)), runner.agent._error
    moves, _ = runner.engine.calls[0]
    assert moves[-1] == first
    referee.end()
    assert runner.join().status == "finished"


def referee_reads(data: bytes, encoding: str):
    """What the real referee makes of move_file's bytes on a machine whose locale encoding is
    ``encoding``: plain Python, as its source does it (``open()`` in text mode, the last line
    before the first blank one, ``split()``, ``int()``). "undecodable" where decoding raises."""
    try:
        lines = io.TextIOWrapper(io.BytesIO(data), encoding=encoding).readlines()
    except UnicodeDecodeError:
        return "undecodable"
    line = ""
    for next_line in lines:
        if next_line.isspace():
            break
        line = next_line
    tokens = line.split()
    try:
        return tokens[0], int(tokens[1]), int(tokens[2])
    except (IndexError, ValueError):
        return "invalid"


def agent_reads(path: Path, encoding: str):
    """What the agent makes of the same file: its reading, then its parsing of the last line."""
    read = FileReader(encoding, chunk_size=3).read(path)  # tiny chunks: characters cut between reads
    if read.undecodable:
        return "undecodable"
    last = read.last
    try:
        name, move = parse_move_line(last[1] if last else "")
    except InvalidMoveError:
        return "invalid"
    return name, move.board, move.spot


@pytest.mark.e2e
@pytest.mark.parametrize("encoding", ["utf-8", "cp1252", "latin-1"])
def test_every_high_byte_between_the_tokens_reads_as_the_referee_reads_it(tmp_path, encoding):
    """Item 3: the referee decodes move_file with its machine's locale encoding. Under Latin-1 or
    cp1252 byte 0xA0 is a no-break space, which split() takes for whitespace: the referee accepts
    'Otter\\xa08\\xa04' as the move 8 4, and so must the agent; under UTF-8 the byte cannot be
    decoded at all. For every byte 0x80-0xFF, in every place between and around the tokens, the
    agent's reading equals the referee's."""
    path = tmp_path / "move_file"
    checked = {"accepted": 0, "invalid": 0, "undecodable": 0}
    for byte in range(0x80, 0x100):
        b = bytes([byte])
        for data in (b"Otter" + b + b"8" + b + b"4\n", b"Otter " + b + b"8 4\n", b"Otter 8 4" + b + b"\n",
                     b"Otter 8" + b + b" 4\r\n", b + b"Otter 8 4\n", b"Otter 0 0\n" + b + b"\nOtter 8 4\n"):
            path.write_bytes(data)
            expected = referee_reads(data, encoding)
            if isinstance(expected, tuple) and not (0 <= expected[1] <= 8 and 0 <= expected[2] <= 8):
                expected = "invalid"  # a number out of range: the referee's rules refuse the move
            assert agent_reads(path, encoding) == expected, (encoding, data)
            checked["accepted" if isinstance(expected, tuple) else expected] += 1
    if encoding == "utf-8":
        assert checked["undecodable"] > 0
    else:
        assert checked["accepted"] > 0  # 0xA0 at least (and 0x85 NEL under Latin-1)
    path.write_bytes(b"Otter\xa08\xa04\n")
    assert agent_reads(path, encoding) == ("undecodable" if encoding == "utf-8" else ("Otter", 8, 4))


@pytest.mark.e2e
@pytest.mark.parametrize("encoding", ["latin-1", "cp1252", "utf-8"])
def test_an_opponent_move_separated_by_no_break_spaces(tmp_path, caplog, encoding):
    """Item 3, whole: the opponent writes 'Otter\\xa0B\\xa0S' in Latin-1 bytes. A Latin-1 or cp1252
    referee plays it, so the agent must too; a UTF-8 referee cannot decode it: reported, no move."""
    caplog.set_level(logging.INFO, logger="agent")
    referee = Referee(tmp_path, OPENING_OPP_FIRST)
    runner = Runner(tmp_path, encoding=encoding)
    referee.start()
    move = Move.from_index(referee.position.legal_moves()[0])
    referee.go(OPP)
    referee.path("move_file").write_bytes(f"{OPP}\xa0{move.board}\xa0{move.spot}\n".encode("latin-1"))
    referee.go(ME)
    if encoding == "utf-8":
        time.sleep(0.3)
        assert not runner.engine.calls and "not utf-8" in caplog.text
    else:
        assert wait_for(lambda: my_move_written(referee)), runner.agent._error
        assert runner.engine.calls[0][0][-1] == move.index
    referee.end()
    assert runner.join().status == ("protocol_error" if encoding == "utf-8" else "finished")


def test_opening_and_end_game_read_as_the_referee_writes_them(referee):
    """first_four_moves with a form feed inside a line and CR line ends; an end_game with a
    line separator and trailing junk: one game, one sanitised result line."""
    try:
        "\u2028".encode(locale.getpreferredencoding(False))
    except UnicodeEncodeError:
        pytest.skip("a referee writes end_game in its locale's encoding, and this one has no U+2028 "
                    f"({locale.getpreferredencoding(False)}: Windows'); UTF-8 locales are checked")
    runner = Runner(referee.dir)
    lines = list(OPENING_ME_FIRST)
    lines[1] += "\x0cjunk"
    referee.start(opening_text="\r".join(lines) + "\r")
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee)), runner.agent._error
    referee.path("end_game").write_text(WIN_TEXT + "\u2028\x1b[2Jgarbage\nsecond line")
    summary = runner.join()
    assert summary.status == "finished" and summary.result == "won"
    line = summary.result_line()
    assert line.isprintable() and line.startswith(f"{ME} won: {WIN_TEXT}") and "second line" not in line


@pytest.mark.e2e
def test_opening_naming_a_third_player_is_refused(referee):
    runner = Runner(referee.dir)
    referee.start(opening_text="".join(line + "\n" for line in OPENING_ME_FIRST[:3] + ["Stoat 5 8"]))
    referee.go(ME)
    time.sleep(0.3)
    assert referee.move_text() == "" and not runner.engine.calls
    referee.end()
    summary = runner.join()
    assert summary.status == "protocol_error" and "lines 1 and 3" in summary.message


# -- started mid-game as p2 (item 3) --------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize("gap, plays", [(5.0, False), (1.5, True)], ids=["mid-game", "slow-p1"])
def test_p2_first_turn_long_after_the_opening_is_refused(tmp_path, gap, plays):
    """At p2's first turn in a fresh game the .go is at most one turn newer than the opening
    (limit 1 s + 1 s); 5 s later the game was under way, whatever move_file's line looks like."""
    referee = Referee(tmp_path, OPENING_OPP_FIRST)
    runner = Runner(tmp_path, time_limit=1.0)
    referee.start()
    referee.opponent_moves()  # a move legal in the opening position
    os.remove(referee.path(f"{OPP}.go"))
    now = time.time()
    for name in ("first_four_moves",):
        os.utime(referee.path(name), (now - gap, now - gap))
    stage_go(referee, now)
    if plays:
        assert wait_for(lambda: my_move_written(referee))
    else:
        time.sleep(0.3)
        assert not my_move_written(referee) and not runner.engine.calls
    referee.end()
    summary = runner.join()
    assert (summary.status == "finished") == plays
    if not plays:
        assert "started after the game began" in summary.message and "5.0 s after" in summary.message


# -- coarse timestamps (item 5) -------------------------------------------------------------------


class WholeSeconds(MoveWriter):
    """A filesystem that keeps whole-second mtimes (ext3, and FAT's 2 s at even seconds)."""

    granule = 1
    writes = 0

    def _replace(self, source, target):
        # The file arrives with its coarse mtime already (set before the rename, which keeps it):
        # stamping it after, as before, showed the test a fine mtime for an instant, and a loaded
        # machine's test then read the move as landed before this count went up.
        self.writes += 1
        stamp = int(time.time()) // self.granule * self.granule
        os.utime(source, (stamp, stamp))
        super()._replace(source, target)

    def _set_mtime(self, mtime_ns):
        step = self.granule * 10**9
        super()._set_mtime(mtime_ns // step * step)


@pytest.mark.e2e
@pytest.mark.parametrize("granule", [1, 2])
def test_coarse_timestamps_move_is_stamped_with_the_next_granule(referee, caplog, granule):
    """Item 4: the referee recorded move_file's truncated mtime M before my .go; my write must reach
    an mtime above M. Waiting for the clock's next granule can take until after the referee's last
    look at 1 s: the agent stamps its write with that granule at once."""
    caplog.set_level(logging.INFO, logger="agent")
    writer_class = type("Coarse", (WholeSeconds,), {"granule": granule})
    limit = 1.0 if granule == 1 else 2.0
    runner = Runner(referee.dir, time_limit=limit)
    runner.agent.writer.__class__ = writer_class
    # Create the .go 0.3 s after a granule boundary S: all three files carry the mtime S.
    while not 0.25 < time.time() % granule < 0.35:
        time.sleep(0.01)
    created = time.time()
    boundary = int(created) // granule * granule
    referee.start()
    for name in ("first_four_moves", "move_file"):
        os.utime(referee.path(name), (boundary, boundary))
    stage_go(referee, boundary)
    assert wait_for(lambda: os.stat(referee.path("move_file")).st_mtime > boundary, timeout=4.0)
    landed = time.time()
    assert my_move_written(referee)
    assert landed < created + limit - REFEREE_TICK, "landed after the referee's last tick"
    # One write, stamped with the next granule, rather than rewrites waiting for the clock.
    assert runner.agent.writer.writes == 1
    assert os.stat(referee.path("move_file")).st_mtime == boundary + granule
    assert caplog.text.count("whole-second timestamps") == 1
    referee.end()
    assert runner.join().status == "finished"


# -- a referee that died, and end_game while thinking (item 9) ------------------------------------


@pytest.mark.e2e
def test_a_silent_game_is_aborted(referee):
    """A killed referee leaves its files as they were: after ``silence`` s without a change, exit 3."""
    runner = Runner(referee.dir, silence=0.6)
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    summary = runner.join(timeout=3.0)
    assert summary.status == "aborted" and summary.exit_code == EXIT_ABORTED
    assert "nothing changed" in summary.message


@pytest.mark.e2e
def test_no_silence_limit_before_a_game_starts(tmp_path):
    """An agent started long before its referee waits for it."""
    runner = Runner(tmp_path, silence=0.2)
    time.sleep(0.5)
    assert runner.thread.is_alive()
    referee = Referee(tmp_path)
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    referee.end()
    assert runner.join().status == "finished"


def test_silence_default_is_generous():
    agent = FileProtocolAgent(ME, ".", RecordingEngine(), time_limit=10)
    assert agent.silence == 30.0
    assert FileProtocolAgent(ME, ".", RecordingEngine(), time_limit=20).silence == 60.0


@pytest.mark.e2e
def test_end_game_stops_a_long_search_promptly(referee):
    """The full engine with an 18 s cutoff returns soon after end_game appears, and writes nothing."""
    from agent.engines import AlphaBetaEngine

    class Timed(AlphaBetaEngine):
        started = None

        def choose(self, position, limit):
            Timed.started = time.monotonic()
            return super().choose(position, limit)

    runner = Runner(referee.dir, engine=Timed(hash_mb=16), time_limit=20.0)
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: Timed.started is not None)
    time.sleep(0.3)
    referee.end()
    ended = time.monotonic()
    summary = runner.join(timeout=5.0)
    assert summary.status == "finished" and referee.move_text() == ""
    print(f"returned {time.monotonic() - ended:.3f} s after end_game")


# -- what the files tell about setup mistakes (item 14) -------------------------------------------


@pytest.mark.e2e
def test_a_second_agent_with_my_name_is_named(referee, caplog):
    """A move in my name that I did not write: say that two agents probably share my name."""
    caplog.set_level(logging.INFO, logger="agent")
    runner = Runner(referee.dir)
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    mine = parse_move_line(referee.move_text())[1]
    other = next(Move.from_index(i) for i in reversed(referee.position.legal_moves()) if i != mine.index)
    referee.path("move_file").write_text(f"{ME} {other}\n")  # the twin's move lands too
    time.sleep(0.1)
    referee.end()
    summary = runner.join()
    assert f"another agent named {ME!r} is probably playing" in summary.message


@pytest.mark.e2e
def test_my_go_vanishing_while_i_think_is_explained(referee, caplog):
    """The twin moved for me while I thought: the referee moved on (my .go gone). Write nothing."""
    caplog.set_level(logging.INFO, logger="agent")

    class Twin(RecordingEngine):
        def choose(self, position, limit):
            referee.path("move_file").write_text(f"{ME} {Move.from_index(position.legal_moves()[-1])}\n")
            referee.go(OPP)
            return super().choose(position, limit)

    runner = Runner(referee.dir, engine=Twin())
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: runner.engine.calls)
    time.sleep(0.2)
    assert referee.move_text().startswith(ME) and runner.agent._game.moves == 0
    assert "my .go vanished while I was thinking" in caplog.text
    assert f"another agent named {ME!r} is probably playing" in caplog.text
    referee.end()
    runner.join()


@pytest.mark.e2e
def test_a_time_out_before_my_limit_names_the_limit_mismatch(referee, caplog):
    """The referee's limit is 0.5 s, mine 3 s: the end_game times me out long before my limit."""
    caplog.set_level(logging.INFO, logger="agent")
    from agent.engines import AlphaBetaEngine

    runner = Runner(referee.dir, engine=AlphaBetaEngine(hash_mb=16), time_limit=3.0)
    referee.start()
    referee.go(ME)
    time.sleep(0.5)
    referee.end(f"END: {OPP} WINS! {ME} LOSES! Time out!")
    summary = runner.join()
    assert summary.result == "lost"
    assert "probably shorter than mine; start me with the referee's --time-limit" in caplog.text


# -- waiting costs nothing (item 8) ---------------------------------------------------------------


@pytest.mark.e2e
def test_reading_the_files_does_not_wake_the_watcher(tmp_path):
    """watchdog reports opens and close-without-write: the agent's own reads must not wake it,
    or every look at move_file triggers the next one at once (a busy loop)."""
    (tmp_path / "move_file").write_text(f"{ME} 1 2\n")
    watcher = DirectoryWatcher(tmp_path, names=("move_file",))
    assert watcher.start() == "watchdog"
    try:
        time.sleep(0.05)
        watcher.wait(timeout=0.01)
        stop = threading.Event()

        def read_repeatedly():
            while not stop.is_set():
                (tmp_path / "move_file").read_bytes()
                (tmp_path / "other").write_text("x")  # not a watched name
                time.sleep(0.01)

        reader = threading.Thread(target=read_repeatedly, daemon=True)
        reader.start()
        try:
            assert watcher.wait(timeout=0.3) is False
        finally:
            stop.set()
            reader.join()
        threading.Timer(0.05, lambda: (tmp_path / "move_file").write_text(f"{OPP} 2 3\n")).start()
        assert watcher.wait(timeout=2.0) is True
    finally:
        watcher.stop()


# -- probes that passed from the start and must keep passing ---------------------------------------


@pytest.mark.parametrize("filler, newline", [("", "\r\n"), (f"{OPP} 0 0\n" * 1_000_000, "\n")],
                         ids=["CRLF", "10MB-move_file"])
def test_crlf_and_a_huge_move_file_still_read(tmp_path, filler, newline):
    """A CRLF opponent line, and a 10 MB move_file whose last line is the move, as the referee reads them."""
    referee = Referee(tmp_path, OPENING_OPP_FIRST)
    runner = Runner(tmp_path)
    referee.start()
    line = f"{OPP} {Move.from_index(referee.position.legal_moves()[0])}"
    referee.position.play(parse_move_line(line)[1])
    referee.go(OPP)
    referee.path("move_file").write_text(filler + line + newline, newline="")
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee), timeout=3.0), runner.agent._error
    assert referee.position.is_legal(parse_move_line(referee.move_text())[1].index)
    referee.end()
    assert runner.join().status == "finished"


# -- a runner that died -----------------------------------------------------------------


@pytest.mark.e2e
def test_an_agent_whose_runner_is_gone_ends_by_itself(tmp_path):
    """A series runner killed outright cannot stop its players: the agent it started (UTTT_RUNNER_PID)
    gives up by itself, even before any game began."""
    import subprocess
    import sys

    runner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        agent = Runner(tmp_path)
        agent.agent.lifeline = file_protocol.Lifeline(pid=runner.pid, interval=0.05)
        time.sleep(0.2)
        assert agent.thread.is_alive(), "gave up while its runner still ran"
    finally:
        runner.kill()
        runner.wait()
    summary = agent.join(timeout=3.0)
    assert summary.status == "aborted" and summary.exit_code == EXIT_ABORTED
    assert f"(pid {runner.pid}) is gone" in summary.message


# -- the file protocol's edges ---------------------------------------------------


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need a privilege on Windows (Wine makes Unix ones, "
                                              "which its O_EXCL does not see)")
@pytest.mark.parametrize("taken", ["some", "every"])
def test_a_symlink_at_every_temp_name_is_never_followed(referee, taken):
    """Someone who can write in the directory plants symlinks at the temp names (here: at the first
    three, or at every one the agent is handed). Their target outside the directory is never
    written; the move still lands (by rename, or written in place when no name is free)."""
    outside = referee.dir.parent / f"{referee.dir.name}-outside"
    outside.write_text("precious")
    planted = []

    def planted_name():
        name = temp_name(f"{len(planted):016x}")
        if taken == "every" or len(planted) < 3:
            (referee.dir / name).symlink_to(outside)
            planted.append(name)
        return name

    runner = Runner(referee.dir, files=Files(temp_name=planted_name))
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    referee.end()
    assert runner.join().status == "finished"
    assert outside.read_text() == "precious"
    assert len(planted) >= 3
    left = sorted(path.name for path in referee.dir.iterdir() if path.name.startswith("~"))
    assert left == sorted(planted), "a temp file of mine was left behind"
    assert not referee.path("move_file").is_symlink()


@pytest.mark.e2e
@pytest.mark.parametrize("kind", ["directory", "fifo", "unreadable"])
def test_a_move_file_that_cannot_be_read_is_said_once_and_waited_on(referee, caplog, kind):
    """move_file replaced by a directory, a FIFO or a file the agent may not read, at my turn: no
    traceback, no blocking, one log line for it however many looks, no move; end_game still ends it."""
    if kind == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    from test_referee_files import unreadable_file, unreadable_through

    caplog.set_level(logging.INFO, logger="agent")
    runner = Runner(referee.dir, use_watchdog=False,  # a full look every 15 ms
                    files=unreadable_through(kind, referee.path("move_file")))
    referee.start()
    referee.path("move_file").unlink()
    unreadable_file(kind, referee.path("move_file"))
    referee.go(ME)
    assert wait_for(lambda: "cannot read move_file" in caplog.text, timeout=10), caplog.text
    time.sleep(0.3)  # ~20 more looks
    assert caplog.text.count("cannot read move_file") == 1
    assert caplog.text.count("move_file is") == 1, caplog.text
    referee.end()
    summary = runner.join(timeout=10)
    assert summary.status == "finished" and summary.moves == 0 and runner.engine.calls == []


@pytest.mark.e2e
def test_a_huge_move_file_is_read_once(tmp_path, caplog):
    """30 MB of lines before the opponent's move: read in one pass, once (not at every look while my
    .go stands), and the move answered."""
    caplog.set_level(logging.INFO, logger="agent")
    referee = Referee(tmp_path, OPENING_OPP_FIRST)
    runner = Runner(tmp_path, use_watchdog=False, time_limit=5.0)
    referee.start()
    line = f"{OPP} {Move.from_index(referee.position.legal_moves()[0])}"
    referee.go(OPP)
    referee.path("move_file").write_text(f"{OPP} 0 0\n" * 3_000_000 + line + "\n")
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee), timeout=20), caplog.text
    assert caplog.text.count("move_file is 30 MB") == 1
    # A version younger than RACY_SECONDS may still change unseen and is read again; once older,
    # each file is read once more at most, then never while it stands (~30 looks here).
    time.sleep(0.2)
    reads = runner.agent.reader.reads
    time.sleep(0.5)
    assert runner.agent.reader.reads - reads <= 2  # my own move_file and the opening, once each at most
    referee.end()
    assert runner.join(timeout=10).status == "finished"


@pytest.mark.skipif(os.name == "nt", reason="Windows refuses to delete a process's working directory")
@pytest.mark.parametrize("use_watchdog", [True, False], ids=["watchdog", "polling"])
def test_a_working_directory_deleted_before_the_agent_runs_ends_it(tmp_path, monkeypatch, use_watchdog):
    """``--dir .`` deleted between start-up and the first look (a race a loaded machine won): the
    ready line still names it, and the agent ends with its reason, not an internal error."""
    import shutil

    directory = tmp_path / "game"
    directory.mkdir()
    monkeypatch.chdir(directory)
    agent = FileProtocolAgent(ME, ".", RecordingEngine(), time_limit=1, silence=0.3, use_watchdog=use_watchdog)
    shutil.rmtree(directory)
    summary = agent.run()
    assert summary.status == "aborted" and summary.exit_code == EXIT_ABORTED
    assert "directory was deleted before any game" in summary.message


@pytest.mark.e2e
@pytest.mark.parametrize("use_watchdog", [True, False], ids=["watchdog", "polling"])
def test_the_directory_deleted_before_the_game_ends_the_agent(tmp_path, use_watchdog):
    """Deleted before any referee came: none can come; exit with a reason after --silence."""
    import shutil

    directory = tmp_path / "game"
    directory.mkdir()
    runner = Runner(directory, silence=0.5, use_watchdog=use_watchdog)
    shutil.rmtree(directory)
    summary = runner.join(timeout=30)
    assert summary.status == "aborted" and summary.exit_code == EXIT_ABORTED
    assert "directory was deleted before any game" in summary.message and "\n" not in summary.message


@pytest.mark.e2e
def test_the_directory_deleted_during_the_game_ends_the_agent(tmp_path):
    import shutil

    directory = tmp_path / "game"
    directory.mkdir()
    referee = Referee(directory)
    runner = Runner(directory, grace=0.3)
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee))
    shutil.rmtree(directory)
    summary = runner.join(timeout=30)
    assert summary.status == "aborted" and "directory was deleted during my game" in summary.message


@pytest.mark.skipif(os.name == "nt", reason="Windows deletes a folder only once every handle on it is closed: "
                                              "the agent's watch keeps it pending, and no folder can be made there")
def test_a_directory_made_again_before_the_game_is_played_in(tmp_path):
    """Deleted and made again (a runner that clears it) within --silence: the game there is played."""
    import shutil

    directory = tmp_path / "game"
    directory.mkdir()
    runner = Runner(directory, silence=20)
    shutil.rmtree(directory)
    time.sleep(0.1)
    directory.mkdir()
    referee = Referee(directory)
    referee.start()
    referee.go(ME)
    assert wait_for(lambda: my_move_written(referee), timeout=10)
    referee.end()
    assert runner.join(timeout=10).status == "finished"
