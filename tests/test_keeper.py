"""The keeper (ref_sim.series.process.keeper) on its own: a bot's exit status passes through it, what the
bot detaches (a ``setsid`` child, a double-forked grandchild) ends with the bot or when the keeper
is asked to stop, and the end of the runner's thread that started it is not taken for the
runner's death. The runners' hostile cases are tests/test_hostile_bots.py. Nothing is timed:
the waits only guard against hangs."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest

from ref_sim.series.process import keeper, keeper_program
from scripts.processes import kill, marked

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(not keeper.AVAILABLE, reason="keepers are Linux's (subreapers)")]

PY = sys.executable
PATIENCE = 60.0
#: Starts a setsid child and a double-forked grandchild that sleep with MARK in their command
#: lines, says "up" once both run, then sleeps SECONDS and exits with CODE.
DETACHER = r"""
import os, sys, time
mark, seconds, code = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
def sleeper():
    os.setsid()
    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)", mark])
read, write = os.pipe()
if os.fork() == 0:
    os.close(read); sleeper()
if os.fork() == 0:
    if os.fork() == 0:
        os.close(read); sleeper()
    os._exit(0)
os.close(write)
os.read(read, 1)            # end of file: both exec'd (the pipe closes on exec) or exited
time.sleep(0.2)
print("up", file=sys.stderr, flush=True)
time.sleep(seconds)
sys.exit(code)
"""


@pytest.fixture
def mark():
    """A mark for this test's sleepers; whatever carries it at the end is killed."""
    mark = f"uttt-keeper-{uuid.uuid4().hex}"
    yield mark
    kill(marked(mark))


@pytest.fixture
def keepers():
    """The keepers a test starts (:func:`started`), killed and reaped at its end."""
    started = []
    yield started
    for process in started:
        process.kill()
        process.wait()
        process.stderr.close()      # (not read to its end: a sleeper still holds it until killed)


def started(keepers: list, mark: str, seconds: float, code: int) -> subprocess.Popen:
    """A keeper of this process running the detacher, once its two sleepers run."""
    process = subprocess.Popen(keeper.wrapped([PY, "-c", DETACHER, mark, str(seconds), str(code)]),
                               stderr=subprocess.PIPE, start_new_session=True)
    keepers.append(process)
    assert process.stderr.readline() == b"up\n"      # said once both sleepers run
    if seconds >= 10:       # a detacher that exits at once may be gone, tree and all, before a look
        assert len(marked(mark)) == 4       # the keeper, the detacher and its two sleepers
    return process


def wait_gone(mark: str) -> list[int]:
    deadline = time.monotonic() + PATIENCE
    while marked(mark) and time.monotonic() < deadline:
        time.sleep(0.02)                    # (a killed process takes a moment to be reaped)
    return marked(mark)


def test_the_bot_s_status_passes_and_what_it_detached_ends_with_it(mark, keepers):
    assert started(keepers, mark, 0.0, 3).wait(PATIENCE) == 3
    assert wait_gone(mark) == []


def test_asked_to_stop_the_keeper_ends_the_whole_tree_and_itself_by_sigkill(mark, keepers):
    process = started(keepers, mark, 120.0, 0)
    process.send_signal(signal.SIGTERM)
    assert process.wait(PATIENCE) == -signal.SIGKILL
    assert wait_gone(mark) == []


def test_the_end_of_the_thread_that_started_it_is_not_the_runner_s_death(mark, keepers):
    # PR_SET_PDEATHSIG fires when the starting *thread* ends; the runner's games start bots from
    # pool threads. The keeper must wait on (the runner still its parent), past its grace.
    thread = threading.Thread(target=started, args=(keepers, mark, 120.0, 0))
    thread.start()
    thread.join(PATIENCE)
    assert keepers and len(marked(mark)) == 4, "the keeper did not start"
    time.sleep(keeper_grace() + 1.0)        # past the grace a real death would have
    assert keepers[0].poll() is None and len(marked(mark)) == 4


def keeper_grace() -> float:
    """The keeper's GRACE (it runs as a script; imported, it only defines its parts)."""
    return keeper_program.GRACE


def test_a_keeper_ends_its_own_tree_only(mark, keepers):
    # Games played at once: each bot's keeper ends what its bot started, not its neighbour's.
    other = f"{mark}-other"
    try:
        process = started(keepers, mark, 120.0, 0)
        started(keepers, other, 120.0, 0)
        process.send_signal(signal.SIGTERM)
        assert process.wait(PATIENCE) == -signal.SIGKILL
        assert wait_gone(mark) == []
        assert len(marked(other)) == 4
    finally:
        kill(marked(other))
