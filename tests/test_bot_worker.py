"""The child processes a bot's choose() runs in (agent/bot_worker.py), one engine at a time.

Deadlines here are only ever waited for, never raced: a hang is stopped at its deadline whatever
the machine's load, and answers that should come have seconds to spare.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent import bot_worker
from agent.bot import ChooseEngine
from agent.bot_worker import ChooseFailed
from agent.limits import SearchLimit
from agent.rules import Position

pytestmark = pytest.mark.skipif(not bot_worker.CAN_FORK, reason="no fork here: choose() runs in a thread")

#: Seconds an answer that should come may take on a loaded machine.
PLENTY = 30.0

OPENING = Position.from_moves([40, 36])


def ask(engine: ChooseEngine, seconds: float = PLENTY, position: Position = OPENING, **kwargs) -> int:
    return engine.choose(position.copy(), SearchLimit.seconds(seconds, **kwargs)).move


@pytest.fixture
def engines():
    made: list[ChooseEngine] = []

    def make(function) -> ChooseEngine:
        made.append(ChooseEngine(function))
        return made[-1]

    yield make
    for engine in made:
        engine.close()


@pytest.mark.e2e
def test_a_lambda_and_a_closure_run_as_they_are(engines):
    favourite = 8  # board 0, where the opening sends the mover

    def closure(position, seconds):
        return favourite if position.is_legal(favourite) else position.moves()[0]

    assert ask(engines(closure)) == 8
    assert ask(engines(lambda position, seconds: position.moves()[-1])) == OPENING.moves()[-1].index


@pytest.mark.e2e
def test_the_worker_sees_what_the_script_set_up_before_and_random_keeps_its_seed(engines):
    setup = {"move": None}
    setup["move"] = OPENING.moves()[3].index  # set after the function was defined, before the engine
    random.seed(7)
    expected = random.Random(7).choice(OPENING.moves()).index
    random.seed(7)
    picked = engines(lambda position, seconds: random.choice(position.moves()))
    assert ask(picked) == expected
    assert ask(engines(lambda position, seconds: setup["move"])) == setup["move"]


def test_a_dead_worker_is_replaced_for_the_next_turn(engines, tmp_path):
    flag = tmp_path / "died once"

    def dies_once(position, seconds):
        if not flag.exists():
            flag.write_text("yes")
            os._exit(0)
        return position.moves()[0]

    engine = engines(dies_once)
    with pytest.raises(ChooseFailed, match="ended without an answer"):
        ask(engine)
    assert ask(engine) == OPENING.moves()[0].index


@pytest.mark.e2e
def test_a_worker_stuck_at_its_deadline_is_killed_and_replaced(engines, tmp_path):
    flag = tmp_path / "stuck once"

    def stuck_once(position, seconds):
        if not flag.exists():
            flag.write_text(str(os.getpid()))
            while True:  # a pure-Python loop that holds the GIL between checks
                pass
        return position.moves()[0]

    engine = engines(stuck_once)
    with pytest.raises(TimeoutError, match="still thinking after"):
        ask(engine, seconds=0.2)
    stuck = int(flag.read_text())
    assert ask(engine) == OPENING.moves()[0].index
    gone_by = time.monotonic() + PLENTY
    while _alive(stuck) and time.monotonic() < gone_by:
        time.sleep(0.05)
    assert not _alive(stuck)


def test_a_turn_that_ends_stops_the_wait_before_the_deadline(engines):
    engine = engines(lambda position, seconds: time.sleep(3600))
    with pytest.raises(TimeoutError, match="the turn ended"):
        ask(engine, seconds=3600, should_stop=lambda: True)


def test_what_choose_raises_comes_back_as_text_cut_to_its_end(engines):
    def shouts(position, seconds):
        raise ValueError("x" * 100_000 + " the end")

    with pytest.raises(ChooseFailed) as failure:
        ask(engines(shouts))
    text = str(failure.value)
    assert "raised ValueError" in text and text.endswith("the end") and len(text) < 2 * bot_worker.MAX_ERROR_CHARS


def test_an_answer_that_is_no_move_is_said_so(engines):
    with pytest.raises(ChooseFailed, match="not a Move"):
        ask(engines(lambda position, seconds: "4 5"))


def test_close_leaves_no_process_behind(engines):
    engine = engines(lambda position, seconds: position.moves()[0])
    ask(engine)
    worker, starter = engine._workers._worker_pid, engine._workers._starter_pid
    engine.close()
    with pytest.raises(ChildProcessError):  # the starter was reaped
        os.waitpid(starter, os.WNOHANG)
    gone_by = time.monotonic() + PLENTY
    while _alive(worker) and time.monotonic() < gone_by:
        time.sleep(0.05)
    assert not _alive(worker)


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


@pytest.mark.e2e
def test_the_cost_bench_prints_its_figures():
    done = subprocess.run([sys.executable, "-m", "scripts.bench_bot_worker", "--moves", "5", "--kills", "1"],
                          cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "worker process (now)" in done.stdout and "next turn's new worker" in done.stdout


def test_where_no_process_can_be_forked_choose_runs_in_a_thread_and_says_so(monkeypatch, caplog):
    def no_more_processes():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_more_processes)
    engine = ChooseEngine(lambda position, seconds: position.moves()[0])
    assert ask(engine) == OPENING.moves()[0].index
    assert "runs in a thread of this process (its process could not be started" in caplog.text
