"""What the runners share: stop signals, killing an agent's process tree, the names
of the console scripts, checked numbers, and the players that end once their runner is gone;
and the one-line errors of the scripts and commands that had tracebacks."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent import options

from ref_sim import arena, command_words, stops
from agent.lifeline import RUNNER_ENV

ROOT = Path(__file__).resolve().parent.parent
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and process groups")


def ended(pid: int) -> bool:
    """Whether ``pid`` ends within a minute (a signal is delivered soon, not at once)."""
    deadline = time.monotonic() + 60
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


def alive(pid: int) -> bool:
    """Running (a zombie is not: its parent may not reap it at once)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


# -- stop signals -------------------------------------------------------------------------

@posix_only
def test_a_stop_signal_is_ctrl_c_with_its_own_exit_code_and_a_second_one_waits():
    with pytest.raises(KeyboardInterrupt) as caught:
        with stops.stop_signals():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)                   # interrupted at once; never slept through
    assert isinstance(caught.value, stops.Stopped)
    assert stops.exit_code(caught.value) == 143 and stops.said(caught.value) == "stopped by SIGTERM"
    # While the runner cleans up after the first signal, more signals do not cut the clean-up.
    cleaned = False
    with pytest.raises(stops.Stopped):
        with stops.stop_signals():
            try:
                os.kill(os.getpid(), signal.SIGHUP)
                time.sleep(5)
            finally:
                os.kill(os.getpid(), signal.SIGTERM)
                os.kill(os.getpid(), signal.SIGINT)
                cleaned = True
    assert cleaned
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL      # the handlers are put back


@pytest.mark.e2e
@posix_only
def test_a_signal_ignored_at_start_stays_ignored_as_under_nohup():
    code = ("import os, signal, sys, time\n"
            "from ref_sim import stops\n"
            "with stops.stop_signals():\n"
            "    os.kill(os.getpid(), signal.SIGHUP)\n"
            "    time.sleep(0.2)\n"
            "print('still here')\n")
    result = subprocess.run(["nohup", sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, timeout=60)
    assert result.returncode == 0 and "still here" in result.stdout


# -- process trees ------------------------------------------------------------------------

@posix_only
def test_kill_tree_ends_an_agent_with_its_children_and_what_it_left_behind():
    shell = "sleep 300 & echo $!; exec sleep 301"
    process = stops.start(["sh", "-c", shell], stdout=subprocess.PIPE, text=True)
    child = int(process.stdout.readline())
    assert alive(process.pid) and alive(child)
    stops.kill_tree(process)
    assert process.returncode is not None and ended(child)
    # An agent that exited by itself and left a child running: the child goes too.
    process = stops.start(["sh", "-c", "sleep 300 & echo $!"], stdout=subprocess.PIPE, text=True)
    child = int(process.stdout.readline())
    process.wait()
    assert alive(child)
    stops.kill_tree(process)
    assert ended(child)
    stops.kill_tree(None)                                     # an agent that never started


# -- names --------------------------------------------------------------------------------

def console_scripts() -> dict[str, str]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    scripts = text.split("[project.scripts]", 1)[1].split("\n[", 1)[0]
    return dict(re.findall(r'^(uttt-[\w-]+)\s*=\s*"([\w.]+):\w+"', scripts, re.MULTILINE))


def test_every_series_runner_has_its_console_script():
    assert {"uttt-match", "uttt-stdio", "uttt-show", "uttt-render", "uttt-plot", "uttt-replay",
            "uttt-ref", "uttt-arena", "uttt-play"} <= set(console_scripts())
    assert console_scripts()["uttt-stdio"] == "ref_sim.stdio"


@pytest.mark.e2e
@pytest.mark.parametrize("script", sorted(set(console_scripts()) - {"uttt-agent"}))
def test_usage_errors_name_the_console_script_or_the_module(script):
    module = console_scripts()[script]
    module = "ref_sim" if module == "ref_sim.ref" else module       # python -m ref_sim
    installed = Path(sys.executable).with_name(script)
    for command, prog in [([str(installed)], script), ([sys.executable, "-m", module], f"python -m {module}")]:
        if command[0] == str(installed) and not installed.exists():
            continue                     # not installed in this environment: the -m form only
        result = subprocess.run(command + ["--no-such-option"], capture_output=True, text=True,
                                cwd=ROOT, timeout=60, stdin=subprocess.DEVNULL)
        assert result.returncode == 2
        lines = result.stderr.strip().splitlines()     # one line, as the README promises
        assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), result.stderr


def test_the_resume_command_runs_as_printed(monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(ROOT / "ref_sim" / "match.py")])
    line = stops.command_line("ref_sim.match", "--resume", "--out", "runs/a b")
    # Quoted by this system's rules: 'runs/a b' for a POSIX shell, "runs/a b" on Windows.
    assert command_words.split(line)[1:] == ["-m", "ref_sim.match", "--resume", "--out", "runs/a b"]
    interpreter = line.split(" -m ")[0]
    if os.name == "posix":      # as a shell finds it
        assert line.endswith(" -m ref_sim.match --resume --out 'runs/a b'")
        interpreter = subprocess.run(["sh", "-c", f"command -v {interpreter}"], capture_output=True,
                                     text=True).stdout.strip()
    assert os.path.samefile(command_words.split(interpreter)[0], sys.executable)
    monkeypatch.setattr(sys, "argv", ["/nowhere/bin/uttt-match"])
    assert stops.command_line("ref_sim.match", "--resume") == "uttt-match --resume"


# -- numbers and one-line errors ----------------------------------------------------------

def test_checked_numbers():
    assert options.whole(1, 10)("7") == 7 and options.real(0, 1)("0.25") == 0.25
    for parse, text, message in [
            (options.whole(1), "0", "must be an integer at least 1, got '0'"), (options.whole(1, 5), "6", "must be an integer from 1 to 5, got '6'"),
            (options.whole(1), "1.5", "must be an integer at least 1, got '1.5'"),
            (options.real(0, 10), "nan", "must be a number from 0 to 10, got 'nan'"),
            (options.real(0, 10), "-inf", "must be a number from 0 to 10, got '-inf'"),
            (options.real(0, 10, low_open=True), "0", "must be a number above 0 and at most 10, got '0'"),
            (options.real(0, 10), "11", "must be a number from 0 to 10, got '11'")]:
        with pytest.raises(Exception) as error:
            parse(text)
        assert str(error.value).startswith(message)


@pytest.mark.parametrize("argv, message", [
    (["--seconds", "-1"], "argument --time-limit/--seconds: must be a number above 0 and at most 3,600, got '-1'"),
    (["--seconds", "0"], "argument --time-limit/--seconds: must be a number above 0 and at most 3,600, got '0'"),
    (["--seconds", "nan"], "argument --time-limit/--seconds: must be a number above 0 and at most 3,600, got 'nan'"),
    (["--games", "0"], "argument --games: must be an integer from 1 to 100,000, got '0'"),
    (["--depth", "0"], "argument --depth: must be an integer from 1 to 81, got '0'"),
    (["--opening-plies", "20"], "--opening-plies 20: no opening of 20 plies leaves the game open in ttt"),
])
def test_the_arena_refuses_limits_that_would_play_instantly(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        arena.main(["ttt", "alphabeta", "random"] + argv)
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"python -m ref_sim.arena: error: {message}"


def train_eval(*argv):
    return subprocess.run([sys.executable, "-m", "scripts.train_eval", *map(str, argv)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.e2e
def test_train_eval_says_what_is_missing_in_one_line(tmp_path):
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "games.jsonl").write_text('{"game": 0, "winner": null, "moves": [99]}\n')
    for argv, message in [
            (["fit", "--dir", tmp_path / "none"], f"fit: cannot read the games in {tmp_path / 'none' / 'games.jsonl'}"),
            (["fit", "--dir", tmp_path / "bad"], f"fit: {tmp_path / 'bad' / 'games.jsonl'} line 1 is not a self-play game"),
            (["match", "--data", tmp_path / "none.json"], f"match: --data: cannot read evaluation data {tmp_path / 'none.json'}"),
            (["generate", "--dir", tmp_path / "a-file"], f"--dir {tmp_path / 'a-file'}: not a directory")]:
        result = train_eval(*argv)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith(f"train_eval.py: error: {message}"), line
    for argv, message in [(["--games", "0"], "argument --games: must be an integer from 1 to 10,000,000, got '0'"),
                          (["--deviation", "nan"], "argument --deviation: must be a number from 0 to 1, got 'nan'"),
                          (["--nodes", "-3"], "argument --nodes: must be an integer from 1 to 1,000,000,000, got '-3'"),
                          (["--engine-eval", "nope"], "argument --engine-eval: invalid choice: 'nope'")]:
        result = train_eval("generate", *argv)
        assert result.returncode == 2 and result.stderr.strip().splitlines()[-1].startswith(
            f"train_eval.py: error: {message}"), result.stderr


def test_render_takes_its_moves_quoted_or_not(tmp_path, capsys):
    from ref_sim.views import render
    assert render.main(["40", "03", "38", "--out", str(tmp_path / "a.svg")]) == 0
    assert render.main(["40 03 38", "--out", str(tmp_path / "b.svg")]) == 0
    assert (tmp_path / "a.svg").read_text() == (tmp_path / "b.svg").read_text()
    assert render.main(["--out", str(tmp_path / "empty.svg")]) == 0          # the empty board
    assert render.main(["40", "0", "--out", str(tmp_path / "c.svg")]) == 2
    assert "an odd number of digits" in capsys.readouterr().err


# -- players that end once their runner is gone -------------------------------------------

@pytest.mark.e2e
@posix_only
def test_the_stdio_random_player_ends_once_its_runner_is_gone(tmp_path):
    # Its input pipe stays open (another process holds it): only the runner's death can end it.
    runner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    read_end, write_end = os.pipe()
    try:
        player = subprocess.Popen([sys.executable, "-m", "ref_sim.bots.stdio_random"], stdin=read_end,
                                  stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                  env=dict(os.environ, **{RUNNER_ENV: str(runner.pid)}))
        os.close(read_end)
        assert player.stderr.readline() == "stdio_random: ready\n"
        runner.kill()
        runner.wait()
        assert player.wait(60) == stops.EXIT_RUNNER_GONE
        assert f"(pid {runner.pid}) is gone" in player.stderr.read()
    finally:
        os.close(write_end)
        runner.kill()


@pytest.mark.e2e
@posix_only
def test_the_random_file_player_ends_once_its_runner_is_gone(tmp_path):
    runner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    try:
        player = subprocess.Popen([sys.executable, "-m", "ref_sim.bots.random_agent", "Walrus", "--dir",
                                   str(tmp_path)], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                                  env=dict(os.environ, **{RUNNER_ENV: str(runner.pid)}))
        assert "waiting in" in player.stdout.readline()
        runner.kill()
        runner.wait()
        assert player.wait(60) == stops.EXIT_RUNNER_GONE
        assert f"the series runner that started me (pid {runner.pid}) is gone" in player.stdout.read()
    finally:
        runner.kill()
