"""Ctrl-C and a closed output end the agent's commands with one line on stderr and the
documented exit code (130 interrupted, 141 output closed), never a traceback.

* The agent while it is still starting up (its modules loading), through ``python -m agent`` and
  through the ``uttt-agent`` console script that pyproject.toml declares. The interrupt is a
  real SIGINT, sent by the process to itself from an import hook at the moment the first of the
  agent's own submodules is looked up while the command line loads, so it lands in the middle of
  the start-up imports every time (a SIGINT sent from outside after a sleep would land there
  only by luck).
* ``ref_sim.play`` at its prompt and while its engine thinks, and both ``ref_sim.play`` and
  ``ref_sim.arena`` with their output closed (``| head``): real processes, real SIGINT.  (A stopped
  arena series, by SIGINT, SIGTERM or SIGHUP: tests/test_stops.py.)
"""

import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and select() on pipes")

#: Installs a meta-path finder that sends SIGINT to this process when an agent submodule other
#: than the entry modules is first looked up, i.e. while ``agent.cli`` is importing its modules.
INTERRUPT_DURING_IMPORTS = """\
import os, signal, sys
class InterruptDuringImports:
    fired = False
    def find_spec(self, name, path=None, target=None):
        if (not self.fired and name.startswith("agent.")
                and name not in ("agent.__main__", "agent.cli")):
            self.fired = True
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, InterruptDuringImports())
"""


def run_python(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", INTERRUPT_DURING_IMPORTS + code, *args],
                          capture_output=True, text=True, timeout=60, cwd=ROOT,
                          stdin=subprocess.DEVNULL)


def assert_one_line_interrupt(result: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 130, result.stderr
    assert result.stderr.strip().splitlines() == ["uttt-agent: interrupted"]
    assert result.stdout == ""


@pytest.mark.parametrize("args", [["--protocol", "codingame"], ["Alice", "--dir", "no-such-dir"]],
                         ids=["codingame", "file"])
def test_ctrl_c_during_imports_of_python_m_agent(args):
    # What `python -m agent ARGS` does: run the package's __main__ as the main module.
    result = run_python("import runpy; runpy.run_module('agent', run_name='__main__', alter_sys=True)",
                        *args)
    assert_one_line_interrupt(result)


def console_script_entry(name: str) -> tuple[str, str]:
    """``(module, function)`` of a [project.scripts] entry of pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    scripts = text.split("[project.scripts]", 1)[1].split("\n[", 1)[0]
    match = re.search(rf'^{re.escape(name)}\s*=\s*"([\w.]+):(\w+)"', scripts, re.MULTILINE)
    assert match, f"no {name} entry in [project.scripts]"
    return match.group(1), match.group(2)


def test_ctrl_c_during_imports_of_the_uttt_agent_console_script():
    # pip writes console scripts as: from MODULE import FUNCTION; sys.exit(FUNCTION()).
    module, function = console_script_entry("uttt-agent")
    result = run_python(f"from {module} import {function}\nsys.exit({function}())",
                        "--protocol", "codingame")
    assert_one_line_interrupt(result)


def test_the_hook_really_interrupts_the_imports():
    # Without a handler the same hook ends in Python's KeyboardInterrupt traceback: the tests
    # above do exercise an interrupt in the middle of the agent's imports.
    result = run_python("import agent.cli")
    assert result.returncode != 0 and "KeyboardInterrupt" in result.stderr


def start_and_wait_for(module, argv, marker: str, timeout=30.0):
    """Start ``python -m MODULE ARGV`` on pipes and read its stdout until ``marker`` shows."""
    process = subprocess.Popen([sys.executable, "-m", module, *argv], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    seen = b""
    end = time.monotonic() + timeout
    while marker.encode() not in seen:
        assert time.monotonic() < end, f"no {marker!r} in {seen!r}"
        ready, _, _ = select.select([process.stdout], [], [], 0.1)
        if ready:
            chunk = os.read(process.stdout.fileno(), 4096)
            assert chunk, f"output ended before {marker!r}: {seen!r}"
            seen += chunk
    return process


def interrupt(process) -> tuple[int, str]:
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    return process.returncode, err.decode()


@pytest.mark.e2e
def test_play_ctrl_c_at_the_prompt_is_one_line_and_code_130():
    process = start_and_wait_for("ref_sim.play", ["ttt"], "Your move (X)")
    code, err = interrupt(process)
    assert "Traceback" not in err and code == 130
    assert err.strip().splitlines() == ["python -m ref_sim.play: interrupted"]


@pytest.mark.e2e
def test_play_ctrl_c_while_the_engine_thinks_is_one_line_and_code_130():
    # The engine moves first with a minute to think: the interrupt lands inside its search.
    process = start_and_wait_for("ref_sim.play", ["uttt", "--first", "engine", "--seconds", "60"], "you are O")
    time.sleep(0.3)
    started = time.monotonic()
    code, err = interrupt(process)
    assert "Traceback" not in err and code == 130
    assert err.strip().splitlines() == ["python -m ref_sim.play: interrupted"]
    assert time.monotonic() - started < 10       # it stopped thinking, it did not finish the minute


@pytest.mark.e2e
def test_play_closed_output_is_one_line_and_code_141():
    # `python -m ref_sim.play ttt | head -1`: the reader goes away after the first line.
    process = start_and_wait_for("ref_sim.play", ["ttt", "--first", "engine", "--seconds", "0.05"], "you are O")
    process.stdout.close()
    _, err = process.communicate(input=b"a1\nb1\nc1\na2\nb2\nc2\na3\nb3\nc3\n", timeout=30)
    err = err.decode()
    assert "Traceback" not in err and process.returncode == 141
    assert err.strip().splitlines() == ["python -m ref_sim.play: output closed (broken pipe)"]


@pytest.mark.e2e
def test_arena_closed_output_is_one_line_and_code_141():
    # `python -m ref_sim.arena ... -v | head -1`
    process = start_and_wait_for("ref_sim.arena", ["ttt", "alphabeta", "random", "--games", "40",
                                                 "--seconds", "0.02", "-v"], "game 1:")
    process.stdout.close()
    _, err = process.communicate(timeout=60)
    err = err.decode()
    assert "Traceback" not in err and process.returncode == 141
    assert err.strip().splitlines() == ["python -m ref_sim.arena: output closed (broken pipe)"]


def test_the_entry_points_code_for_ctrl_c_is_the_agents():
    """agent/__main__.py writes the code out (it may import nothing before it can catch Ctrl-C)."""
    import agent.__main__ as entry
    from agent.exits import EXIT_INTERRUPTED

    assert entry.EXIT_INTERRUPTED == EXIT_INTERRUPTED
