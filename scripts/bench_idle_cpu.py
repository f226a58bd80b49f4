#!/usr/bin/env python3
"""CPU cost of a waiting agent: CPU seconds per wall second in each waiting state.

    python -m scripts.bench_idle_cpu [--seconds 5] [--polling] [--agent-root DIR]

How it measures and what it prints: docs/measurements.md, "scripts.bench_idle_cpu".
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent.options import MAX_TIME_LIMIT, real

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.02
OPENING = "Walrus 6 2\nOtter 2 4\nWalrus 4 5\nOtter 5 8\n"


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds the process has used so far."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        # After "pid (comm)": state is field 3, utime field 14, stime field 15 (1-based, proc(5)).
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except FileNotFoundError:
        import psutil  # not a dependency of the project: only where /proc is missing

        times = psutil.Process(pid).cpu_times()
        return times.user + times.system


def measure(pid: int, seconds: float) -> float:
    wall, cpu = time.monotonic(), cpu_seconds(pid)
    time.sleep(seconds)
    return (cpu_seconds(pid) - cpu) / (time.monotonic() - wall)


def start_agent(game: Path, log_file: Path, args, *, engine: str | None = "random", extra=(),
                root: Path = ROOT) -> subprocess.Popen:
    """``python -m agent Walrus [extra...]`` in ``game``, once it logs that it is watching.
    ``engine=None``: the default engine. ``root``: the source tree it runs from (``-m`` finds the
    package in the working directory)."""
    command = [sys.executable, "-m", "agent", "Walrus", "--dir", str(game), "--time-limit", str(args.time_limit),
               "--log-file", str(log_file), *extra]
    if engine is not None:
        command += ["--engine", engine]
    if args.polling:
        command.append("--polling")
    process = subprocess.Popen(command, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while "watching" not in (log_file.read_text() if log_file.exists() else ""):
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the agent did not start: {process.stderr.read().decode(errors='replace')}")
        time.sleep(0.02)
    return process


def wait_for_my_move(game: Path, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if (game / "move_file").read_text().startswith("Walrus "):
                return
        except FileNotFoundError:
            pass
        time.sleep(0.001)
    raise SystemExit("the agent did not move")


def staged_states(work: Path, args) -> dict[str, float]:
    game = work / "staged"
    game.mkdir()
    agent = start_agent(game, work / "staged.log", args, root=args.agent_root)
    try:
        (game / "move_file").write_text("")
        (game / "first_four_moves").write_text(OPENING)
        (game / "Walrus.go").touch()
        wait_for_my_move(game)
        results = {"own .go lingering": measure(agent.pid, args.seconds)}
        (game / "Walrus.go").unlink()
        (game / "Otter.go").touch()
        results["opponent's turn"] = measure(agent.pid, args.seconds)
        return results
    finally:
        agent.kill()
        agent.wait()


def killed_referee_state(work: Path, args) -> dict[str, float]:
    game = work / "killed"
    game.mkdir()
    agent = start_agent(game, work / "killed.log", args, root=args.agent_root)
    opponent = subprocess.Popen([sys.executable, "-m", "ref_sim.bots.random_agent", "Otter", "--dir", str(game)],
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    referee = subprocess.Popen([sys.executable, "-m", "ref_sim", "Walrus", "Otter", "--dir", str(game),
                                "--time-limit", str(args.time_limit), "-q"],
                               cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_my_move(game)
        referee.send_signal(signal.SIGKILL)
        referee.wait()
        opponent.kill()
        if agent.poll() is not None:
            raise SystemExit("the agent exited when the referee was killed")
        lingering = (game / "Walrus.go").exists()
        name = f"killed referee ({'own .go lingering' if lingering else 'opponent turn'})"
        return {name: measure(agent.pid, args.seconds)}
    finally:
        for process in (agent, referee, opponent):
            if process.poll() is None:
                process.kill()
            process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.strip().splitlines()[-1])
    parser.add_argument("--seconds", type=real(0, MAX_TIME_LIMIT, low_open=True), default=5.0, help="wall seconds measured per state (default 5)")
    parser.add_argument("--time-limit", type=real(0, MAX_TIME_LIMIT, low_open=True), default=10.0, help="the referee's and agent's limit (default 10)")
    parser.add_argument("--polling", action="store_true", help="run the agent with --polling")
    parser.add_argument("--agent-root", type=Path, default=ROOT, metavar="DIR",
                        help="run the agent from this source tree (default: this one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-idle-") as temp:
        work = Path(temp)
        results = staged_states(work, args)
        results.update(killed_referee_state(work, args))
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    backend = "polling" if args.polling else "watchdog"
    print(f"waiting agent ({backend}), {args.seconds:g} s per state"
          + (f", load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}" if load else ""))
    for state, rate in results.items():
        print(f"  {state:42s} {rate:.4f} CPU-s/s  {'ok' if rate < TARGET else 'ABOVE TARGET'} (< {TARGET})")
    return 0 if all(rate < TARGET for rate in results.values()) else 1


if __name__ == "__main__":
    from ref_sim.stops import guarded     # Ctrl-C, SIGTERM, SIGHUP: one line, 128 + the signal

    sys.exit(guarded("bench_idle_cpu.py", main))
