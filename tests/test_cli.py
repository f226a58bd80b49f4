"""The command line: usage errors in one line with exit code 2, and one staged game through a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent import cli
from agent.protocol import EXIT_USAGE
from agent.rules import parse_move_line

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, timeout: float = 20.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def assert_usage_error(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == EXIT_USAGE
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("uttt-agent: error: "), result.stderr
    for word in words:
        assert word in lines[0]
    assert result.stdout == ""


@pytest.mark.parametrize("name", ["two words", "a/b", "", "Dot.go"])
def test_bad_name(tmp_path, name):
    assert_usage_error(run_cli(name, "--dir", str(tmp_path)), "player name")


def test_missing_directory(tmp_path):
    assert_usage_error(run_cli("Walrus", "--dir", str(tmp_path / "nowhere")), "does not exist")


def test_directory_is_a_file(tmp_path):
    (tmp_path / "file").write_text("")
    assert_usage_error(run_cli("Walrus", "--dir", str(tmp_path / "file")), "not a directory")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write anywhere")
def test_unwritable_directory(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        assert_usage_error(run_cli("Walrus", "--dir", str(locked)), "cannot write")
    finally:
        locked.chmod(0o700)


def test_unwritable_directory_in_process(tmp_path, monkeypatch, capsys):
    def refuse(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(cli, "open", refuse, raising=False)
    assert cli.main(["Walrus", "--dir", str(tmp_path)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write in referee directory" in err and "Permission denied" in err


@pytest.mark.parametrize("where", ["agent.log", "sub/agent.log"])
def test_log_file_inside_the_referee_directory(tmp_path, where):
    (tmp_path / "sub").mkdir()
    assert_usage_error(run_cli("Walrus", "--dir", str(tmp_path), "--log-file", str(tmp_path / where)),
                       "inside the referee directory")
    assert not (tmp_path / where).exists()


@pytest.mark.parametrize("args, words", [
    (["--engine", "nonsense"], ["unknown engine"]),
    (["--time-limit", "0"], ["--time-limit"]),
    (["--margin", "5", "--time-limit", "2"], ["--margin"]),
    (["--depth", "0"], ["--depth"]),
    (["--silence", "-1"], ["--silence"]),
])
def test_bad_options(tmp_path, args, words):
    assert_usage_error(run_cli("Walrus", "--dir", str(tmp_path), *args), *words)


def test_help_documents_timing_and_exit_codes():
    result = run_cli("--help")
    assert result.returncode == 0
    for text in ("exit codes:", "130", "aborted", "protocol error", "max(0.1 * LIMIT, 0.2)", "9.0 s"):
        assert text in result.stdout
    # Issue 9: the silence abort, the tick-aware short limits, a replaced opening, the limit to pass.
    for text in ("--silence", "a killed referee", "0.015 s at 0.1 s", "is a new game", "the referee's own --time-limit"):
        assert text in result.stdout


def test_engine_options_reach_the_engine():
    name, engine = cli.build_engine(None, 2, None)
    assert name == "alphabeta" and engine.depth == 2
    name, engine = cli.build_engine("random", 2, 100)  # takes no such options: still built
    assert name == "random"


def test_a_staged_game_through_the_command_line(tmp_path):
    """Ready before the first .go; one logged move; result on stdout; exit 0 after end_game."""
    game = tmp_path / "game"
    game.mkdir()
    log_file = tmp_path / "logs" / "walrus.log"
    log_file.parent.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "agent", "Walrus", "--dir", str(game), "--time-limit", "1", "--engine", "random",
         "--log-file", str(log_file), "-v"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while "watching" not in (log_file.read_text() if log_file.exists() else "") and time.monotonic() < deadline:
            time.sleep(0.02)
        (game / "move_file").write_text("")
        (game / "first_four_moves").write_text("Walrus 6 2\nOtter 2 4\nWalrus 4 5\nOtter 5 8\n")
        (game / "Walrus.go").touch()
        while not (game / "move_file").read_text() and time.monotonic() < deadline:
            time.sleep(0.01)
        line = (game / "move_file").read_text()
        name, move = parse_move_line(line)
        assert name == "Walrus" and move.board == 8 and line.count("\n") == 1
        (game / "end_game").write_text("END: Otter WINS! Walrus LOSES! Time out!")
        out, err = process.communicate(timeout=5)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0
    assert out == "Walrus lost: END: Otter WINS! Walrus LOSES! Time out!\n"
    assert err == ""
    log = log_file.read_text()
    assert f"move {move}" in log and "since .go" in log and "nps" in log
    assert "watching" in log and "watchdog" in log
    assert sorted(os.listdir(game)) == ["Walrus.go", "end_game", "first_four_moves", "move_file"]


def test_a_killed_referee_ends_the_agent_with_exit_3(tmp_path):
    """Item 9: a referee killed after my move leaves its files as they were; with --silence 1 the
    agent reports the game aborted and exits 3 instead of waiting forever."""
    game = tmp_path / "game"
    game.mkdir()
    log_file = tmp_path / "walrus.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "agent", "Walrus", "--dir", str(game), "--time-limit", "0.5", "--engine", "random",
         "--silence", "1", "--log-file", str(log_file)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while "watching" not in (log_file.read_text() if log_file.exists() else "") and time.monotonic() < deadline:
            time.sleep(0.02)
        (game / "move_file").write_text("")
        (game / "first_four_moves").write_text("Walrus 6 2\nOtter 2 4\nWalrus 4 5\nOtter 5 8\n")
        (game / "Walrus.go").touch()
        out, err = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 3
    assert (game / "move_file").read_text().startswith("Walrus ")
    assert out.startswith("Walrus: no result (nothing changed") and out.count("\n") == 1
    assert log_file.read_text().count("the referee was probably killed") == 1  # said once, not twice
