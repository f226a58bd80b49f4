"""A game begins once its bots are up: our bots say so (the ready file, or their first line), a
built-in is waited for however slow the machine, another bot for the start-up wait; a game begun
before a bot was up says so in its hint (ref_sim/series/process/launch.py, agent/lifeline.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.lifeline import READY_ENV, ReadyFile, ready_pid
from ref_sim.referees.file_referee import TIME_OUT, GameRecord
from ref_sim.series.process import launch
from ref_sim.series import realbots
from ref_sim.series.specs import agent_spec

ROOT = Path(__file__).resolve().parent.parent


class Running:
    """A stand-in for a Popen that runs until ``exits_at`` (monotonic seconds, None: for ever)."""

    def __init__(self, exits_at=None):
        self.exits_at = exits_at

    def poll(self):
        return 0 if self.exits_at is not None and time.monotonic() >= self.exits_at else None


def logs_of(tmp_path, names, said=()):
    """Each bot's log: its command line, then a line for those in ``said``."""
    logs = {}
    for name in names:
        logs[name] = tmp_path / f"{name}.log"
        logs[name].write_text("$ command\n" + ("up\n" if name in said else ""))
    return logs


def test_a_bot_that_said_something_or_exited_is_up_at_once(tmp_path):
    logs = logs_of(tmp_path, ["A", "B"], said={"A"})
    started = time.monotonic()
    late = launch.wait_until_started({"A": Running(), "B": Running(exits_at=started)}, logs, 30)
    assert late == {} and time.monotonic() - started < 5


def test_a_written_ready_file_is_up_and_an_empty_or_half_written_one_is_not(tmp_path):
    path = tmp_path / "A.ready"
    env = launch.ready_env(path, {})
    assert env[READY_ENV] == str(path) and path.read_bytes() == b""
    assert not launch.said_ready(path)
    path.write_bytes(b"123")                 # a writer between its bytes and its newline
    assert not launch.said_ready(path)
    path.write_bytes(b"123\n")
    assert launch.said_ready(path) and not launch.said_ready(tmp_path / "missing")
    logs = logs_of(tmp_path, ["A"])
    assert launch.wait_until_started({"A": Running()}, logs, 30, ready={"A": path}) == {}


def test_a_silent_bot_is_waited_for_the_start_up_wait_and_a_built_in_longer(tmp_path):
    logs = logs_of(tmp_path, ["Cmd", "Ours"])
    started = time.monotonic()
    late = launch.wait_until_started({"Cmd": Running(), "Ours": Running()}, logs, 0.2, patient={"Ours"},
                                     ready_limit=0.6)         # a built-in's wait, shortened here
    assert late == {"Cmd": 0.2, "Ours": 0.6}
    assert time.monotonic() - started >= 0.6           # the built-in's wait, not the command's


def test_a_built_in_that_comes_up_late_is_not_late(tmp_path):
    logs = logs_of(tmp_path, ["Cmd", "Ours"])
    ready = tmp_path / "Ours.ready"
    ready.write_bytes(b"")
    process = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep(0.4); "
                                f"open({str(ready)!r}, 'w').write('1\\n'); time.sleep(30)"])
    try:
        late = launch.wait_until_started({"Cmd": Running(), "Ours": process}, logs, 0.1,
                                         ready={"Ours": ready}, patient={"Ours"})
    finally:
        process.kill()
        process.wait()
    assert late == {"Cmd": 0.1}


def test_a_stop_ends_the_wait(tmp_path):
    import threading
    stop = threading.Event()
    stop.set()
    started = time.monotonic()
    launch.wait_until_started({"A": Running()}, logs_of(tmp_path, ["A"]), 30, stop)
    assert time.monotonic() - started < 5


# -- the hints --------------------------------------------------------------------------------

SPECS = {"Agent1": agent_spec("agent"), "Otter2": agent_spec(f"{sys.executable} otter.py")}


def timed_out(loser):
    return GameRecord(("Agent1", "Otter2"), 1.0, result="win", winner=[n for n in SPECS if n != loser][0],
                      loser=loser, reason=TIME_OUT, timeout_line="")


def test_a_late_built_in_is_told_to_wait_longer_never_to_give_its_name():
    hint = realbots.stall_notes(timed_out("Agent1"), {}, SPECS, {"Agent1": 2.0})["Agent1"]
    assert "it was running but had printed nothing after 2 s" in hint and "--startup-wait S" in hint
    assert "name=" not in hint
    assert realbots.stall_notes(timed_out("Agent1"), {}, SPECS)["Agent1"] == \
        "Agent1 never wrote move_file after its .go"


def test_a_late_command_may_be_slow_or_hard_coded_and_the_hint_says_both():
    hint = realbots.stall_notes(timed_out("Otter2"), {}, SPECS, {"Otter2": 2.0})["Otter2"]
    assert "--startup-wait S" in hint and "is its name hard-coded? give it with name=NAME:" in hint


# -- our agent's ready file, and the simulator that waits for it --------------------------------

def test_a_ready_file_names_a_live_process_only(tmp_path):
    path = tmp_path / "a.ready"
    ReadyFile(path).announce()
    assert ready_pid(path) == os.getpid()
    ReadyFile(path).withdraw()
    assert not path.exists()
    path.write_text("999999999\n")          # a process that cannot exist: a stale file
    assert ready_pid(path) is None
    path.write_text("junk\n")
    assert ready_pid(path) is None


@pytest.mark.e2e
def test_the_agent_writes_its_ready_file_once_watching_and_removes_it_at_the_end(tmp_path):
    game = tmp_path / "game"
    game.mkdir()
    ready = tmp_path / "walrus.ready"
    agent = subprocess.Popen([sys.executable, "-m", "agent", "Walrus", "--dir", str(game), "--depth", "1",
                              "--ready-file", str(ready)], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while ready_pid(ready) != agent.pid and time.monotonic() < deadline and agent.poll() is None:
            time.sleep(0.02)
        assert ready_pid(ready) == agent.pid
        (game / "first_four_moves").write_text("Walrus 4 0\nOtter 0 4\nWalrus 4 8\nOtter 8 4\n")
        (game / "end_game").write_text("END: Match TIED!")
        assert agent.wait(30) == 0
    finally:
        agent.kill()
        agent.communicate()
    assert not ready.exists()


def test_a_ready_file_inside_the_referee_directory_is_refused_in_one_line(tmp_path, capsys):
    from agent import cli
    assert cli.main(["Walrus", "--dir", str(tmp_path), "--ready-file", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("uttt-agent: error: ready file") and "inside the referee directory" in err
    assert cli.main(["--protocol", "codingame", "--ready-file", "x"]) == 2
    assert "--ready-file is for the file protocol" in capsys.readouterr().err


def test_the_simulator_waits_for_ready_files_and_gives_up_in_one_line(tmp_path, capsys):
    from ref_sim import ref
    assert ref.main(["A", "B", "--dir", str(tmp_path / "game"), "--wait-for", str(tmp_path / "a.ready")],
                    wait_limit=0.3) == 1
    err = capsys.readouterr().err
    assert "no running agent wrote" in err and "no game played" in err
    assert not any((tmp_path / "game").iterdir())       # nothing was refereed
    assert ref.wait_for_agents([], 0.3) == []
    ReadyFile(tmp_path / "b.ready").announce()
    assert ref.wait_for_agents([str(tmp_path / "b.ready")], 0.3) == []
