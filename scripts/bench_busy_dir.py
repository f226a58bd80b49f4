#!/usr/bin/env python3
"""A waiting agent's CPU, and its search speed, while another process writes into the referee
directory (unrelated writes must cost nothing).

    python -m scripts.bench_busy_dir [--seconds 5] [--rate 20000] [--trials 5] [--agent-root DIR]
    python -m scripts.bench_busy_dir --patterns open-close --no-search     # one pattern, CPU only

How it measures and what it prints: docs/measurements.md, "scripts.bench_busy_dir".
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scripts.bench_idle_cpu import OPENING, ROOT, TARGET, measure, start_agent, wait_for_my_move

PATTERNS = ("flush", "open-close", "create-delete")
LINE = "node 123456 depth 7 score +12 best 4 5\n"


# -- the writer (a separate process: ``--write PATTERN DIR``) -----------------------------------


def write(pattern: str, directory: Path, rate: float) -> None:
    """Perform ``pattern`` ``rate`` times a second until SIGTERM; then print the rate reached."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    log_path = directory / "opponent.log"
    handle = open(log_path, "a") if pattern == "flush" else None
    start, done = time.perf_counter(), 0
    while not stop:
        due = int((time.perf_counter() - start) * rate)
        while done < due and not stop:
            if pattern == "flush":
                handle.write(LINE)
                handle.flush()
            elif pattern == "open-close":
                with open(log_path, "a") as each:
                    each.write(LINE)
            else:
                scratch = directory / f"node-{done}.tmp"
                with open(scratch, "w") as each:
                    each.write(LINE)
                scratch.unlink()
            done += 1
        time.sleep(0.001)
    print(f"{done / (time.perf_counter() - start):.0f}")


class Writer:
    """The writer process for one pattern (None: no writer); ``rate`` is what it reached."""

    def __init__(self, pattern: str | None, directory: Path, rate: float) -> None:
        self.pattern, self.rate, self.process = pattern, None, None
        if pattern is not None:
            self.process = subprocess.Popen([sys.executable, "-m", "scripts.bench_busy_dir", "--write", pattern,
                                             str(directory), "--rate", str(rate)],
                                            cwd=ROOT, stdout=subprocess.PIPE, text=True)

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc_info) -> None:
        if self.process is not None:
            self.process.terminate()
            output = self.process.communicate(timeout=10)[0].strip()
            self.rate = float(output) if output else None


# -- the measures ----------------------------------------------------------------------------------


def stage_game(game: Path) -> None:
    """Start a game in ``game`` with Walrus (the agent) to move."""
    (game / "move_file").write_text("")
    (game / "first_four_moves").write_text(OPENING)
    (game / "Walrus.go").touch()


def waiting_cpu(work: Path, args, polling: bool, pattern: str | None) -> tuple[float, float, float | None]:
    """(CPU-s in the writer's first second, CPU-s/s over the next ``--seconds``, the writer's rate)
    for a fresh agent waiting through the opponent's turn (fresh: no pause left by another pattern)."""
    game = work / f"waiting-{'polling' if polling else 'watchdog'}-{pattern or 'none'}"
    game.mkdir()
    # --silence: the opponent's turn lasts as long as the measure, past the agent's patience.
    agent = start_agent(game, work / f"{game.name}.log", agent_args(args, polling), extra=("--silence", "3600"),
                        root=args.agent_root)
    try:
        stage_game(game)
        wait_for_my_move(game)
        (game / "Walrus.go").unlink()
        (game / "Otter.go").touch()
        with Writer(pattern, game, args.rate) as writer:
            first = measure(agent.pid, 1.0)
            rate = measure(agent.pid, args.seconds)
        if agent.poll() is not None:
            raise SystemExit(f"the agent exited while measured: see {work / game.name}.log")
        return first, rate, writer.rate
    finally:
        agent.kill()
        agent.wait()


def search_nps(work: Path, args, polling: bool, pattern: str | None, trial: int) -> float:
    """Nodes per second of one fresh agent's first move, the writer running throughout."""
    game = work / f"search-{'polling' if polling else 'watchdog'}-{pattern or 'none'}-{trial}"
    game.mkdir()
    log_file = work / f"{game.name}.log"
    agent = start_agent(game, log_file, agent_args(args, polling), engine=None, root=args.agent_root)
    try:
        with Writer(pattern, game, args.rate):
            time.sleep(0.3)  # the writer at full rate before the turn starts
            stage_game(game)
            wait_for_my_move(game, timeout=args.time_limit + 10)
        deadline = time.monotonic() + 5  # the agent logs its move just after writing it
        while (found := re.search(r" nps (\d+)", log_file.read_text())) is None:
            if time.monotonic() > deadline:
                raise SystemExit(f"no nps in {log_file}")
            time.sleep(0.01)
        return float(found.group(1))
    finally:
        agent.kill()
        agent.wait()


def agent_args(args, polling: bool) -> argparse.Namespace:
    return argparse.Namespace(time_limit=args.time_limit, polling=polling)


def report_waiting(work: Path, args) -> bool:
    print(f"waiting agent, CPU-s per wall-s over {args.seconds:g} s after the writer's first second "
          "(CPU-s in that first second):")
    ok = True
    for backend in args.backends:
        for pattern in (None, *args.patterns):
            first, rate, reached = waiting_cpu(work, args, backend == "polling", pattern)
            ok &= rate < TARGET
            writer = f", writer reached {reached:.0f} op/s" if reached is not None else ""
            print(f"  {backend:9s} {pattern or 'no writer':14s} {rate:.4f} CPU-s/s  "
                  f"{'ok' if rate < TARGET else 'ABOVE TARGET'} (< {TARGET})  ({first:.3f} CPU-s{writer})",
                  flush=True)
    return ok


def report_search(work: Path, args) -> None:
    """Each trial searches with no writer, then with each pattern, per backend; a pattern's ratio is
    to the no-writer search of its own trial (the machine's load drifts between trials)."""
    print(f"search, nps of a first move at --time-limit {args.time_limit:g}: median of {args.trials} trials, "
          "and the median ratio to the same trial's search with no writer (each trial's ratio):")
    conditions = [(backend, pattern) for backend in args.backends for pattern in (None, *args.patterns)]
    nps = {condition: [] for condition in conditions}
    for trial in range(args.trials):
        for backend, pattern in conditions:
            nps[backend, pattern].append(search_nps(work, args, backend == "polling", pattern, trial))
    for backend, pattern in conditions:
        ratios = [value / base for value, base in zip(nps[backend, pattern], nps[backend, None])]
        print(f"  {backend:9s} {pattern or 'no writer':14s} {statistics.median(nps[backend, pattern]):10.0f} nps  "
              f"x{statistics.median(ratios):.2f}  ({' '.join(f'{ratio:.2f}' for ratio in ratios)})", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.strip().splitlines()[-1])
    parser.add_argument("--seconds", type=float, default=5.0, help="wall seconds per waiting measure (default 5)")
    parser.add_argument("--rate", type=float, default=20000, help="writer operations per second (default 20000)")
    parser.add_argument("--patterns", nargs="+", choices=PATTERNS, default=list(PATTERNS))
    parser.add_argument("--backends", nargs="+", choices=("watchdog", "polling"), default=["watchdog", "polling"])
    parser.add_argument("--trials", type=int, default=5, help="searches per backend and pattern (default 5)")
    parser.add_argument("--time-limit", type=float, default=2.0,
                        help="the agent's limit: each search thinks about this long less the margin (default 2)")
    parser.add_argument("--no-waiting", action="store_true", help="measure the search only")
    parser.add_argument("--no-search", action="store_true", help="measure the waiting agent's CPU only")
    parser.add_argument("--agent-root", type=Path, default=ROOT, metavar="DIR",
                        help="run the agent from this source tree (default: this one)")
    parser.add_argument("--write", nargs=2, metavar=("PATTERN", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        write(args.write[0], Path(args.write[1]), args.rate)
        return 0

    load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"
    print(f"agent from {args.agent_root}; writer at {args.rate:.0f} op/s; load average {load}")
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-busy-") as temp:
        if not args.no_waiting:
            ok = report_waiting(Path(temp), args)
        if not args.no_search:
            report_search(Path(temp), args)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
