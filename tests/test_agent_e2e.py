"""Whole games: ``python -m agent`` processes refereed by ``ref_sim.referees.file_shell.run_game``.

The agent under test is ``python -m agent``, or the executable named by the environment variable
``UTTT_AGENT_EXE`` (a ``scripts/build-exe`` build; ``tests/test_exe.py`` runs this file so).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

referee = pytest.importorskip("ref_sim.referees.file_shell")

from agent import engines  # noqa: E402
from ref_sim.referees.file_referee import INVALID_MOVE, OUT_OF_ORDER, TIME_OUT, RefereeSettings  # noqa: E402

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent
#: Two seconds a move: the agents search to a fixed depth whatever the limit, so a longer one costs
#: no time. At 0.5 s a machine at load 11 held our agent past it (Time out!), and at 1 s the suite
#: beside two CPU hogs did (its first move, depth 2, written 1.005 s after its .go): neither is what
#: these games test.
TIME_LIMIT = 2.0
OUR_LOSSES = {TIME_OUT, INVALID_MOVE}
FAST_ENGINE = ["--engine", "alphabeta", "--depth", "2"] if "alphabeta" in engines.ENGINES else ["--engine", "random"]


def agent_command() -> list[str]:
    """The command that starts our agent: UTTT_AGENT_EXE if set, else ``python -m agent``."""
    exe = os.environ.get("UTTT_AGENT_EXE")
    return [exe] if exe else [sys.executable, "-m", "agent"]


def random_agent_command() -> list[str]:
    return [sys.executable, "-m", "ref_sim.bots.random_agent"]


class Player:
    """A player process started before the referee, as in the tournament."""

    def __init__(self, command: list[str], log_file: Path | None = None, cwd: Path = ROOT, env=None) -> None:
        self.log_file = log_file
        self.early = ""     # stdout read before finish()
        self.process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)

    def wait_waiting(self) -> Player:
        """Wait for the random agent's first line ("waiting in DIR"): it is up. A loaded machine
        can take seconds to start Python, and a referee started before would time it out."""
        self.early = self.process.stdout.readline()
        assert "waiting in" in self.early, (self.early, self.process.poll())
        return self

    def wait_ready(self, timeout: float = 60.0) -> None:
        """A hang guard, not a timing: at load 20 on two cores an agent took more than 10 s."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.log_file.exists() and "watching" in self.log_file.read_text():
                return
            assert self.process.poll() is None, self.process.communicate()
            time.sleep(0.02)
        raise AssertionError("the agent was not ready in time")

    def finish(self, timeout: float) -> tuple[int, str, str]:
        try:
            out, err = self.process.communicate(timeout=timeout)
            out = self.early + out
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, err = self.process.communicate()
            raise AssertionError(f"the player did not exit by itself:\n{err}") from None
        return self.process.returncode, out, err


def start_agent(name: str, game: Path, logs: Path, *extra: str) -> Player:
    log_file = logs / f"{name}.log"
    player = Player([*agent_command(), name, "--dir", str(game), "--time-limit", str(TIME_LIMIT), *FAST_ENGINE,
                     "--log-file", str(log_file), *extra], log_file)
    player.wait_ready()
    return player


def referee_game(game: Path, name1: str, name2: str, time_limit: float = TIME_LIMIT, *, seed=None, first=None,
                 stop=None, on_event=None, **settings):
    """Run the referee in a thread so the players' exits can be timed against it; ``settings``:
    fields of its RefereeSettings."""
    box = {}
    settings = RefereeSettings(time_limit=time_limit, **settings)
    thread = threading.Thread(target=lambda: box.setdefault("record", referee.run_game(
        game, name1, name2, settings, seed=seed, first=first, stop=stop, on_event=on_event)), daemon=True)
    thread.start()
    return thread, box


def wait_for_line(game: Path, prefix: str, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if (game / "move_file").read_text().startswith(prefix):
                return True
        except FileNotFoundError:
            pass
        time.sleep(0.01)
    return False


def check_record(record, ours: set[str]) -> None:
    assert record.result in ("win", "tie"), record
    assert record.end_text
    if record.loser in ours:
        assert record.reason not in OUR_LOSSES, f"{record.loser} lost by {record.reason}: {record.bad_line!r}"
    assert record.reason != OUT_OF_ORDER
    assert len(record.moves) >= 2


@pytest.fixture
def dirs(tmp_path):
    game, logs = tmp_path / "game", tmp_path / "logs"
    game.mkdir()
    logs.mkdir()
    return game, logs


@pytest.mark.parametrize("seed", [1, 2])
def test_agent_against_the_random_agent(dirs, seed):
    game, logs = dirs
    ours = start_agent("Walrus", game, logs)
    theirs = Player([*random_agent_command(), "Otter", "--dir", str(game), "--seed", str(seed)]).wait_waiting()
    thread, box = referee_game(game, "Walrus", "Otter", seed=seed, exit_delay=2.0)
    thread.join(timeout=60)
    assert not thread.is_alive()
    record = box["record"]
    check_record(record, {"Walrus"})
    code, out, err = ours.finish(timeout=3)
    assert code == 0, (ours.log_file.read_text(), err)
    assert out.startswith("Walrus ") and record.end_text in out
    assert theirs.finish(timeout=3)[0] == 0
    log = ours.log_file.read_text()
    assert "ERROR" not in log and "Traceback" not in log
    assert log.count(" move ") == sum(move.player == "Walrus" for move in record.moves)


def test_agent_against_itself_while_the_referee_lingers(dirs):
    """Two names, one program; both exit by themselves while the referee keeps rewriting its files."""
    game, logs = dirs
    first = start_agent("Gopher", game, logs)
    second = start_agent("Algo", game, logs, "--polling")
    stop = threading.Event()
    thread, box = referee_game(game, "Gopher", "Algo", seed=7, linger=True, stop=stop)
    started = time.monotonic()
    results = {}
    for name, player in (("Gopher", first), ("Algo", second)):
        results[name] = player.finish(timeout=50)
    exited = time.monotonic() - started
    assert thread.is_alive(), "the agents only exited because the referee stopped lingering"
    stop.set()
    thread.join(timeout=10)
    record = box["record"]
    check_record(record, {"Gopher", "Algo"})
    assert exited < record.duration + 10     # soon after the end, with room for a loaded machine
    for code, out, err in results.values():
        assert code == 0, err
        assert out.strip().endswith(record.end_text)
    assert "polling" in (logs / "Algo.log").read_text()


def test_referee_interrupted_mid_game(dirs):
    """The referee is stopped (Ctrl-C): files vanish, no end_game; the agent exits with code 3
    (docs/protocol.md, "What a bot must survive", row "Files vanish")."""
    game, logs = dirs
    ours = start_agent("Walrus", game, logs)
    theirs = Player([*random_agent_command(), "Otter", "--dir", str(game), "--seed", "5"]).wait_waiting()
    stop = threading.Event()

    def on_event(event):
        if event.kind == "move" and len(event.record.moves) >= 6:
            stop.set()

    thread, box = referee_game(game, "Walrus", "Otter", seed=5, on_event=on_event, stop=stop)
    thread.join(timeout=30)
    assert box["record"].result == "aborted"
    code, out, err = ours.finish(timeout=6)
    theirs.finish(timeout=6)
    assert code == 3
    assert "vanished" in ours.log_file.read_text()
    assert "no result" in out


@pytest.mark.slow
def test_full_strength_agent_keeps_its_time_with_a_busy_polling_referee(dirs):
    """The default engine thinking to its cutoff, the referee burning a core: every move in time."""
    game, logs = dirs
    log_file = logs / "Walrus.log"
    ours = Player([*agent_command(), "Walrus", "--dir", str(game), "--time-limit", "1", "--log-file", str(log_file)],
                  log_file)
    ours.wait_ready()
    theirs = Player([*random_agent_command(), "Otter", "--dir", str(game), "--seed", "3"]).wait_waiting()
    record = referee.run_game(game, "Walrus", "Otter", RefereeSettings(time_limit=1.0, busy_poll=True), seed=3)
    print(log_file.read_text(), record)
    check_record(record, {"Walrus"})
    assert ours.finish(timeout=5)[0] == 0
    theirs.finish(timeout=5)
    ours_seconds = [move.seconds for move in record.moves if move.player == "Walrus"]
    assert max(ours_seconds) < 0.95, ours_seconds


def test_started_after_a_killed_referee_then_plays_the_next_game(dirs):
    """A referee killed (SIGKILL) on our turn leaves a .go younger than the limit;
    an agent started then moves in that dead game, and must still play the next referee's game
    (a new first_four_moves before any end_game) instead of exiting with code 3."""
    import signal

    game, logs = dirs
    otter = Player([*random_agent_command(), "Otter", "--dir", str(game), "--seed", "4"]).wait_waiting()
    # 20 s: the agent must start and answer within the dead turn's limit, at load 11 too.
    dead = subprocess.Popen([sys.executable, "-m", "ref_sim", "Walrus", "Otter", "--dir", str(game),
                             "--time-limit", "20", "--seed", "4", "-q"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 10
        while not (game / "Walrus.go").exists() and time.monotonic() < end:
            time.sleep(0.002)
        dead.send_signal(signal.SIGKILL)
    finally:
        dead.wait()
        otter.process.kill()
        otter.process.communicate()
    assert (game / "Walrus.go").exists() and not (game / "end_game").exists()
    ours = start_agent("Walrus", game, logs, "--time-limit", "20")  # within the limit of the dead turn
    assert wait_for_line(game, "Walrus ", timeout=30), "it did not answer the dead game's turn"
    theirs = Player([*random_agent_command(), "Otter", "--dir", str(game), "--seed", "6"]).wait_waiting()
    thread, box = referee_game(game, "Walrus", "Otter", time_limit=5.0, seed=6, exit_delay=2.0)
    thread.join(timeout=60)
    record = box["record"]
    check_record(record, {"Walrus"})
    code, out, err = ours.finish(timeout=5)
    theirs.finish(timeout=5)
    assert code == 0, (ours.log_file.read_text(), err)
    assert record.end_text in out
    assert "that game was abandoned" in ours.log_file.read_text()


@pytest.mark.parametrize("use_polling", [False, True], ids=["watchdog", "polling"])
def test_an_opponent_answering_out_of_turn_loses_every_game(dirs, use_polling):
    """The eager random agent answers the instant our move appears, before its own
    .go. The referee calls such a line Out-of-order (our win); we must never answer it on the .go
    we already answered, or our second line is judged in the referee's position (Invalid move!).
    We win every game, as p1 and as p2."""
    game, logs = dirs
    winners = []
    for seed, first in ((1, "Walrus"), (2, "Otter"), (3, "Walrus"), (4, "Otter")):
        ours = start_agent("Walrus", game, logs, "--time-limit", "2", *(["--polling"] if use_polling else []))
        theirs = Player([*random_agent_command(), "Otter", "--dir", str(game), "--seed", str(seed),
                         "--eager"]).wait_waiting()
        # Two seconds a move: the agent searches to depth 2 whatever the limit, and at 0.5 s a
        # machine at load 6 once held a process past it (Time out!, not the out-of-turn line).
        thread, box = referee_game(game, "Walrus", "Otter", 2.0, seed=seed, first=first, exit_delay=1.0)
        thread.join(timeout=60)
        assert not thread.is_alive()
        record = box["record"]
        code, out, err = ours.finish(timeout=3)
        theirs.finish(timeout=3)
        assert code == 0, (ours.log_file.read_text(), err)
        assert record.winner == "Walrus", (record.reason, record.bad_line, ours.log_file.read_text())
        winners.append((record.p1, record.reason))
        ours.log_file.unlink()
    assert {p1 for p1, _ in winners} == {"Walrus", "Otter"}, winners


def test_an_agent_whose_working_directory_is_deleted_before_the_game_exits(dirs):
    """``--dir .`` (the default) in a directory deleted before any referee came: exit 3 with one
    line saying so, after --silence, instead of waiting for ever."""
    import shutil

    game, logs = dirs
    log_file = logs / "Walrus.log"
    player = Player([*agent_command(), "Walrus", "--time-limit", str(TIME_LIMIT), *FAST_ENGINE, "--silence", "1",
                     "--log-file", str(log_file)], log_file, cwd=game, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    player.wait_ready()
    shutil.rmtree(game)
    code, out, err = player.finish(timeout=60)
    assert code == 3, (out, err)
    assert out.count("\n") == 1 and "directory was deleted before any game" in out, out
