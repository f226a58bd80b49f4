#!/usr/bin/env python3
"""What ``--isolate`` costs a bot at start-up: milliseconds from starting ``python -c pass``
through ``ref_sim.series.process.contain`` to having reaped it (and, isolated, removed its cgroup),
without isolation, isolated without the sandbox, and isolated with it.

    python -m scripts.bench_sandbox_start [--starts 20]

Prints the median and the quartiles of each; the three take turns, so that the machine's other
load falls on all three alike.  Figures depend on the machine and its load: compare the lines
with each other.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from agent.options import whole
from ref_sim import stops
from ref_sim.series.process import isolation, contain
WAYS = {"plain": None, "isolated, no sandbox": isolation.Isolation(sandbox=False),
        "isolated": isolation.Isolation()}


def one_start(isolate) -> float:
    """Milliseconds from start to reaped (its cores given back, its cgroup removed)."""
    began = time.perf_counter()
    process = contain.start([sys.executable, "-S", "-c", "pass"], isolate,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        process.wait()      # blocking: wait(timeout) polls, in steps of up to 50 ms
    finally:
        stops.kill_tree(process)
    return (time.perf_counter() - began) * 1000


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=whole(1, 10_000), default=20, help="starts of each way")
    args = parser.parse_args(argv)
    print(contain.status_line(isolation.Isolation()))
    times = {way: [] for way in WAYS}
    for _ in range(args.starts):
        for way, isolate in WAYS.items():
            times[way].append(one_start(isolate))
    for way, figures in times.items():
        low, median, high = statistics.quantiles(figures, n=4) if len(figures) > 1 else figures * 3
        print(f"{way:22s} median {median:7.1f} ms  (quartiles {low:.1f}-{high:.1f}) over "
              f"{len(figures)} starts")
    return 0


if __name__ == "__main__":
    sys.exit(stops.guarded("bench_sandbox_start", main))
