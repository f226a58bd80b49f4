#!/usr/bin/env python3
"""A waiting agent's CPU, and its search speed, while another process writes into the referee
directory (issue 15, item 2: unrelated writes must cost nothing).

Writer patterns, each ``--rate`` operations per second (default 20,000) from a separate process
(an opponent that logs a line per node into the referee directory):

* ``flush``          one file kept open: a line written and flushed per operation;
* ``open-close``     a line appended to one file, opened and closed per operation;
* ``create-delete``  a new file created, written, closed and deleted per operation.

For each backend (watchdog, then ``--polling``), one agent in the "opponent's turn" state (staged
as scripts/bench_idle_cpu.py does) is measured for ``--seconds`` with no writer, then with each
pattern, each measure starting with the writer. Target: below 0.02 CPU-s/s in every row.

Then search speed: per backend and pattern, ``--trials`` fresh agents (the default engine) each
think once on the same position for ``--time-limit`` seconds with the writer running or not
(interleaved), and the nps their logs give is averaged. The writer needs a core of its own on a
2-core machine, so compare each backend's row with the writer against polling's row with it.

    python scripts/bench_busy_dir.py [--seconds 5] [--rate 20000] [--trials 3] [--agent-root DIR]
    python scripts/bench_busy_dir.py --patterns open-close --no-search     # one pattern, CPU only

``--agent-root`` runs the agent from another source tree (e.g. ``git archive main`` unpacked,
with its compiled core copied in) to compare versions with the same script.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_idle_cpu import OPENING, ROOT, TARGET, measure, start_agent, wait_for_my_move  # noqa: E402

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
            self.process = subprocess.Popen([sys.executable, __file__, "--write", pattern, str(directory),
                                             "--rate", str(rate)], stdout=subprocess.PIPE, text=True)

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


def waiting_cpu(work: Path, args, polling: bool) -> list[tuple[str, float, float | None]]:
    """(pattern, CPU-s/s, writer's rate) for an agent waiting through the opponent's turn."""
    game = work / f"waiting-{'polling' if polling else 'watchdog'}"
    game.mkdir()
    agent = start_agent(game, work / f"{game.name}.log", agent_args(args, polling), root=args.agent_root)
    try:
        stage_game(game)
        wait_for_my_move(game)
        (game / "Walrus.go").unlink()
        (game / "Otter.go").touch()
        rows = []
        for pattern in (None, *args.patterns):
            with Writer(pattern, game, args.rate) as writer:
                rate = measure(agent.pid, args.seconds)
            rows.append((pattern or "no writer", rate, writer.rate))
            time.sleep(0.5)  # the events the writer left queued
        return rows
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
    finally:
        agent.kill()
        agent.wait()
    found = re.search(r" nps (\d+)", log_file.read_text())
    if found is None:
        raise SystemExit(f"no nps in {log_file}")
    return float(found.group(1))


def agent_args(args, polling: bool) -> argparse.Namespace:
    return argparse.Namespace(time_limit=args.time_limit, polling=polling)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="wall seconds per waiting measure (default 5)")
    parser.add_argument("--rate", type=float, default=20000, help="writer operations per second (default 20000)")
    parser.add_argument("--patterns", nargs="+", choices=PATTERNS, default=list(PATTERNS))
    parser.add_argument("--backends", nargs="+", choices=("watchdog", "polling"), default=["watchdog", "polling"])
    parser.add_argument("--trials", type=int, default=3, help="searches per backend and pattern (default 3)")
    parser.add_argument("--time-limit", type=float, default=2.0,
                        help="the agent's limit: each search thinks about this long less the margin (default 2)")
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
        work = Path(temp)
        print(f"waiting agent, CPU-s per wall-s over {args.seconds:g} s from the writer's start:")
        for backend in args.backends:
            for pattern, rate, reached in waiting_cpu(work, args, backend == "polling"):
                ok &= rate < TARGET
                writer = f"  (writer reached {reached:.0f} op/s)" if reached is not None else ""
                print(f"  {backend:9s} {pattern:14s} {rate:.4f} CPU-s/s  "
                      f"{'ok' if rate < TARGET else 'ABOVE TARGET'} (< {TARGET}){writer}")
        if args.no_search:
            return 0 if ok else 1
        print(f"search, nps of a first move at --time-limit {args.time_limit:g}, mean of {args.trials} "
              "(ratio: to the same backend with no writer):")
        conditions = [(backend, pattern) for backend in args.backends for pattern in (None, *args.patterns)]
        nps = {condition: [] for condition in conditions}
        for trial in range(args.trials):
            for backend, pattern in conditions:
                nps[backend, pattern].append(search_nps(work, args, backend == "polling", pattern, trial))
        for backend, pattern in conditions:
            mean = statistics.mean(nps[backend, pattern])
            base = statistics.mean(nps[backend, None])
            spread = " ".join(f"{value:.0f}" for value in nps[backend, pattern])
            print(f"  {backend:9s} {pattern or 'no writer':14s} {mean:10.0f} nps  x{mean / base:.2f}  ({spread})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
