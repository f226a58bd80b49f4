"""The measuring scripts the README names still run (on tiny settings): a script that broke when
the code under it changed would otherwise only be found by the next person who needs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent


def run_script(name: str, *args: str) -> subprocess.CompletedProcess:
    """``python -m scripts.NAME ARGS`` from the project's folder, as the docs run it."""
    return subprocess.run([sys.executable, "-m", f"scripts.{name}", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_tune_eval_plays_its_candidates():
    # It tunes the classic evaluation's weights, whatever the agent's default evaluation is.
    done = run_script("tune_eval", "--pairs", "1", "--nodes", "200", "--param", "free_move")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("free_move=")]
    assert len(lines) == 2 and all("score" in line for line in lines), done.stdout


def test_bench_proof_reports_each_spec():
    done = run_script("bench_proof", "--games", "1", "--nodes", "300", "solve=0", "solve=6")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if "first proof" in line]
    assert [line.split(":")[0].strip() for line in lines] == ["solve=0", "solve=6"], done.stdout
    assert run_script("bench_proof", "nonsense=1").returncode == 2


@pytest.mark.slow
def test_bench_vs_rev_plays_the_other_revision():
    """Opt-in (pytest -m slow): it exports and compiles the other revision first."""
    done = run_script("bench_vs_rev", "--rev", "HEAD", "--games", "2", "--seconds", "0.01")
    assert done.returncode == 0, done.stderr
    assert "Score of this checkout vs HEAD: " in done.stdout, done.stdout


def test_bench_first_move_shows_each_games_first_move_beside_the_later_ones():
    done = run_script("bench_first_move", "--time-limit", "0.5", "--games", "2", "--moves", "2",
                      "--ab", "UTTT_FIRST_MOVE_BENCH_PROBE=1")
    assert done.returncode == 0, done.stderr
    games = [line for line in done.stdout.splitlines() if line.startswith("game ")]
    assert len(games) == 2 and all("first 0." in line and "later median" in line for line in games), done.stdout
    traces = [line for line in done.stdout.splitlines() if line.strip().startswith("turn ")]
    assert len(traces) == 4 and all("noticed" in line and "written" in line for line in traces), done.stdout
    assert "[A UTTT_FIRST_MOVE_BENCH_PROBE=1] first moves" in done.stdout and "[B (without)] first moves" in done.stdout
    assert run_script("bench_first_move", "--ab", "nothing").returncode == 2


def test_bench_startup_times_each_player_and_the_engine_build():
    done = run_script("bench_startup", "--runs", "1")
    assert done.returncode == 0, done.stderr
    rows = [line.split("CPU s")[0].strip() for line in done.stdout.splitlines() if "CPU s" in line]
    assert rows == ["agent", "agent --depth 2", "random_agent", "build_engine", "build_engine --depth 2"], done.stdout
    assert run_script("bench_startup", "--agent-root", "/nonexistent").returncode == 2


def test_bench_hostile_bots_reports_a_bounded_read_and_the_keeper_s_start():
    done = run_script("bench_hostile_bots", "sparse", "keeper", "--size-mb", "1",
                      "--time-limit", "0.3", "--repeat", "2")
    assert done.returncode == 0, done.stderr
    sparse, kept = (json.loads(line) for line in done.stdout.splitlines())
    assert sparse["verdict"] == "win: Invalid move!" and sparse["left_running"] == 0, sparse
    assert sparse["runner_peak_mb"] > 0 and not sparse["hung"]
    assert kept["case"] == "keeper" and kept["keeper_ms"] > 0 and kept["plain_ms"] > 0, kept
