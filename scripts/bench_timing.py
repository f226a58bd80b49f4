"""Move times at the tournament limit under load: does the move land at about 9 s, never past 9.5 s?

Usage: python -m scripts.bench_timing [--time-limit 10] [--hogs 1] [--opponent random|agent] [--seed N]

Plays one full game through the referee simulator with the real referee's busy-polling (one core
burnt during every turn) and ``--hogs`` extra processes spinning on the CPU the whole game (an
opponent searching on the other core). Prints our agent's move times as the referee's 50 ms
ticks saw them, their distribution, the slowest move, and the agent's peak resident memory
(Linux: VmHWM from /proc).
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from agent.options import MAX_TIME_LIMIT, real, whole
from ref_sim.series.file_games import start_agent
from ref_sim.series.process.launch import wait_until_started
from ref_sim.series.specs import agent_spec
from ref_sim.referees.file_shell import run_game
from ref_sim.referees.file_referee import RefereeSettings

OURS = "Agent1"


def spin(stop_at: float) -> None:
    while time.time() < stop_at:
        pass


def peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=real(0, MAX_TIME_LIMIT, low_open=True), default=10.0)
    parser.add_argument("--hogs", type=whole(0, 256), default=1, help="CPU-spinning processes during the game")
    parser.add_argument("--opponent", default="random")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)

    base = Path(tempfile.mkdtemp(prefix="uttt-timing-"))
    game_dir, logs = base / "game", base / "logs"
    game_dir.mkdir()
    logs.mkdir()
    names = [OURS, "Opponent2"]
    log_paths = [logs / "agent.log", logs / "opponent.log"]
    agents = [start_agent(agent_spec("agent"), names[0], game_dir, args.time_limit, log_paths[0]),
              start_agent(agent_spec(args.opponent), names[1], game_dir, args.time_limit, log_paths[1])]
    hogs = [multiprocessing.Process(target=spin, args=(time.time() + 3600,), daemon=True) for _ in range(args.hogs)]
    for hog in hogs:
        hog.start()
    peak = [0.0]

    def watch_memory():
        while agents[0].poll() is None:
            peak[0] = max(peak[0], peak_rss_mb(agents[0].pid) or 0.0)
            time.sleep(0.5)

    watcher = threading.Thread(target=watch_memory, daemon=True)
    watcher.start()
    # Agents start before the referee, as in the tournament: wait until both say they are ready.
    wait_until_started(dict(zip(names, agents)), dict(zip(names, log_paths)), timeout=10.0)
    print(f"one game at {args.time_limit:g} s, busy-polling referee, {args.hogs} CPU hog(s); logs in {logs}",
          flush=True)
    try:
        record = run_game(game_dir, names[0], names[1],
                          RefereeSettings(time_limit=args.time_limit, busy_poll=True), seed=args.seed)
    finally:
        for hog in hogs:
            hog.kill()          # SIGTERM would be a Stopped traceback in it (ref_sim.stops)
    for process in agents:
        try:
            process.wait(timeout=10)
        except Exception:
            process.kill()
    watcher.join(timeout=2)

    times = [m.seconds for m in record.moves if m.player == OURS]
    print(f"result: {record.end_text}")
    print(f"our moves: {len(times)}")
    if times:
        ordered = sorted(times)
        print(f"move time: min {ordered[0]:.3f}  median {statistics.median(ordered):.3f}  "
              f"p90 {ordered[int(0.9 * (len(ordered) - 1))]:.3f}  max {ordered[-1]:.3f} s")
        bins = time_histogram(times, args.time_limit)
        for label, count in bins:
            print(f"  {label:>14}: {count:3} {'#' * count}")
        print(f"slowest move: {max(times):.3f} s of {args.time_limit:g} s")
    print(f"agent peak resident memory: {peak[0]:.0f} MB" if peak[0] else "peak memory: not measurable here")
    return 0


def time_histogram(times, limit):
    edges = [0.0, 0.5 * limit, 0.8 * limit, 0.85 * limit, 0.9 * limit, 0.95 * limit, limit]
    rows = []
    for low, high in zip(edges, edges[1:]):
        count = sum(low <= t < high for t in times)
        rows.append((f"{low:.2f}-{high:.2f} s", count))
    return rows


if __name__ == "__main__":
    from ref_sim.stops import guarded     # Ctrl-C, SIGTERM, SIGHUP: one line, 128 + the signal

    sys.exit(guarded("bench_timing.py", main))
