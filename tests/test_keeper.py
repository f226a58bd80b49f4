"""The keeper (ref_sim.series.keeper) on its own: a bot's exit status passes through it, what the
bot detaches (a ``setsid`` child, a double-forked grandchild) ends with the bot or when the keeper
is asked to stop, and the end of the runner's thread that started it is not taken for the
runner's death. The runners' hostile cases are tests/test_hostile_bots.py. Nothing is timed:
the waits only guard against hangs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest

from ref_sim.series import keeper

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


def marked(mark: str) -> list[int]:
    """Live processes (not zombies) with ``mark`` as an argument."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if mark.encode() not in handle.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat", "rb") as handle:
                if handle.read().rpartition(b")")[2].split()[0] == b"Z":
                    continue
        except OSError:
            continue
        found.append(int(entry))
    return found


def kill(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def started(mark: str, seconds: float, code: int) -> subprocess.Popen:
    """A keeper of this process running the detacher, once its two sleepers run."""
    process = subprocess.Popen(keeper.wrapped([PY, "-c", DETACHER, mark, str(seconds), str(code)]),
                               stderr=subprocess.PIPE, start_new_session=True)
    assert process.stderr.readline() == b"up\n"
    assert len(marked(mark)) == 4           # the keeper, the detacher and its two sleepers
    return process


def wait_gone(mark: str) -> list[int]:
    deadline = time.monotonic() + PATIENCE
    while marked(mark) and time.monotonic() < deadline:
        time.sleep(0.02)                    # (a killed process takes a moment to be reaped)
    return marked(mark)


def test_the_bot_s_status_passes_and_what_it_detached_ends_with_it():
    mark = f"uttt-keeper-{uuid.uuid4().hex}"
    process = None
    try:
        process = started(mark, 0.0, 3)
        assert process.wait(PATIENCE) == 3
        assert wait_gone(mark) == []
    finally:
        kill(marked(mark))
        if process is not None:
            process.kill()
            process.communicate()


def test_asked_to_stop_the_keeper_ends_the_whole_tree_and_itself_by_sigkill():
    mark = f"uttt-keeper-{uuid.uuid4().hex}"
    process = None
    try:
        process = started(mark, 120.0, 0)
        process.send_signal(signal.SIGTERM)
        assert process.wait(PATIENCE) == -signal.SIGKILL
        assert wait_gone(mark) == []
    finally:
        kill(marked(mark))
        if process is not None:
            process.kill()
            process.communicate()


def test_the_end_of_the_thread_that_started_it_is_not_the_runner_s_death():
    # PR_SET_PDEATHSIG fires when the starting *thread* ends; the runner's games start bots from
    # pool threads. The keeper must wait on (the runner still its parent), past its grace.
    mark = f"uttt-keeper-{uuid.uuid4().hex}"
    holder = []
    try:
        thread = threading.Thread(target=lambda: holder.append(started(mark, 120.0, 0)))
        thread.start()
        thread.join(PATIENCE)
        assert holder, "the keeper did not start"
        time.sleep(keeper_grace() + 1.0)    # past the grace a real death would have
        assert holder[0].poll() is None and len(marked(mark)) == 4
    finally:
        kill(marked(mark))
        for process in holder:
            process.kill()
            process.communicate()


def keeper_grace() -> float:
    """The keeper's GRACE, read from its code (it runs as a script, not imported)."""
    for line in keeper.KEEPER.splitlines():
        if line.startswith("GRACE = "):
            return float(line.split("=")[1])
    raise AssertionError("no GRACE in the keeper's code")
