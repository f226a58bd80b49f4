"""The built-in random agent as a real process against the referee simulator."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from ref_sim.referee import run_game

ROOT = str(Path(__file__).resolve().parent.parent)
WIN = "The winning player has won 3 local boards in a row on the global board!"


def start_random_agent(directory, name, seed):
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [sys.executable, "-m", "ref_sim.random_agent", name, "--dir", str(directory),
         "--seed", str(seed)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


def finish(process, timeout=5.0):
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        raise AssertionError(f"agent did not exit:\n{output}")
    return process.returncode, output


def test_random_vs_random_full_game_through_files(tmp_path):
    # Stale files of an earlier game, as a killed referee leaves them: must not fool anyone.
    stale = {"first_four_moves": "Walrus 0 0\nOtter 0 1\nWalrus 1 0\nOtter 0 2\n",
             "move_file": "Walrus 2 0\n", "end_game": "END: Match TIED!", "Walrus.go": "",
             "Otter.go": ""}
    old = time.time() - 3600
    for age, (name, text) in enumerate(stale.items()):
        (tmp_path / name).write_text(text)
        os.utime(tmp_path / name, (old + age, old + age))
    agents = [start_random_agent(tmp_path, "Walrus", 1), start_random_agent(tmp_path, "Otter", 2)]
    try:
        time.sleep(0.5)
        assert all(agent.poll() is None for agent in agents), "exited on a stale end_game"
        record = run_game(tmp_path, "Walrus", "Otter", time_limit=1.0, seed=4, start_delay=0.3)
    finally:
        results = [finish(agent) for agent in agents]
    assert record.result in ("win", "tie"), record
    assert record.reason in (WIN, "tie")
    assert len(record.moves) >= 5
    for code, output in results:
        assert code == 0, output
        assert f"game over: {record.end_text}" in output
    assert os.listdir(tmp_path) == []           # the referee cleaned up at exit


def test_random_agent_exits_when_the_game_is_aborted(tmp_path):
    agent = start_random_agent(tmp_path, "Walrus", 1)
    stop = threading.Event()
    try:
        threading.Timer(0.8, stop.set).start()
        record = run_game(tmp_path, "Walrus", "Otter", time_limit=3.0, seed=0, stop=stop,
                          start_delay=0.2)
    finally:
        code, output = finish(agent, timeout=6)
    assert record.result == "aborted"
    assert code == 1 and "aborted" in output
