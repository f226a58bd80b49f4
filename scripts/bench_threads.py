"""Threads of the compiled core: nodes/s and time to depth at 1, 2 and every core, on the benchmark positions.

Usage:
  python -m scripts.bench_threads [--seconds 1] [--threads 1 2 4] [--phase ...] [--limit N]
  python -m scripts.bench_threads --quick    # 2 positions per phase, 0.5 s: about 20 s

How it measures and what it prints: docs/measurements.md, "scripts.bench_threads".
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

from scripts.bench_speed import PHASES, load_suite, load_text

from agent import core
from agent.engines import DEFAULT_EVALUATION, EVALUATIONS, AlphaBetaEngine
from agent.limits import SearchLimit
from agent.options import MAX_TIME_LIMIT, real, whole


#: Positions whose common depth one thread reached sooner say nothing of threads (solved at once).
MIN_TIMED = 0.01


def search(pos, threads: int, seconds: float, evaluation: str):
    """One timed search from a fresh engine: (result, {depth: seconds to complete it}, CPU seconds,
    {depth: the main thread's nodes to complete it})."""
    engine = AlphaBetaEngine(core="compiled", threads=threads, evaluation=evaluation)
    reached, main_nodes = {}, {}

    def on_iteration(result) -> None:
        reached.setdefault(result.depth, time.perf_counter() - start)
        main_nodes.setdefault(result.depth, engine.searcher._core.nodes)  # idle between depths: readable

    start = time.perf_counter()
    cpu = time.process_time()
    result = engine.searcher.search(pos, SearchLimit.seconds(seconds), on_iteration=on_iteration)
    return result, reached, time.process_time() - cpu, main_nodes


def geometric_mean(values) -> float:
    return math.exp(statistics.mean(math.log(v) for v in values))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog=__doc__.strip().splitlines()[-1])
    parser.add_argument("--seconds", type=real(0, MAX_TIME_LIMIT, low_open=True), default=None,
                        help="search time per position (default 1)")
    parser.add_argument("--threads", type=whole(1, core.MAX_THREADS), nargs="+", default=None,
                        help=f"thread counts (default: 1, 2 and this machine's {core.usable_cores()} cores)")
    parser.add_argument("--phase", nargs="+", choices=list(PHASES), default=list(PHASES))
    parser.add_argument("--limit", type=whole(1), help="only the first N positions of each phase")
    parser.add_argument("--evaluation", choices=EVALUATIONS, default=DEFAULT_EVALUATION)
    parser.add_argument("--quick", action="store_true", help="a short run: --limit 2 --seconds 0.5")
    args = parser.parse_args(argv)
    if not core.compiled_available():
        parser.error(core.unavailable_reason())
    if args.quick:
        args.limit = args.limit or 2
        args.seconds = args.seconds or 0.5
    seconds = args.seconds or 1.0
    counts = sorted(set(args.threads or (1, 2, core.usable_cores())))
    suite = [(phase, pos) for phase, pos in load_suite() if phase in args.phase]
    if args.limit:
        suite = [item for phase in args.phase for item in [s for s in suite if s[0] == phase][: args.limit]]
    print(f"{len(suite)} positions, {seconds:g} s each, threads {counts}, {args.evaluation} evaluation, "
          f"python {sys.version.split()[0]}, {core.usable_cores()} usable cores, {load_text()}")
    print(f"{'#':>3} {'phase':8} {'ply':>3}" + "".join(f" {f'{n}t depth':>9} {'knodes/s':>8} {'cpu/s':>5}" for n in counts)
          + f" {'D':>3}" + "".join(f" {f'{n}t s@D':>8}" for n in counts))
    rows = []
    for i, (phase, pos) in enumerate(suite, 1):
        runs = {n: search(pos, n, seconds, args.evaluation) for n in counts}
        common = [d for d in runs[counts[0]][1] if all(d in runs[n][1] for n in counts)]
        depth = max(common) if common else None
        rows.append((phase, runs, depth))
        cells = "".join(f" {r.depth:>9} {r.nodes_per_second / 1000:>8.0f} {cpu / r.elapsed:>5.2f}"
                        for r, _, cpu, _ in runs.values())
        times = "".join(f" {runs[n][1][depth]:>8.3f}" for n in counts) if depth else ""
        print(f"{i:>3} {phase:8} {pos.ply:>3}{cells} {depth or '-':>3}{times}", flush=True)

    print(f"\n{seconds:g} s per position, {len(suite)} positions:")
    base_nps = statistics.mean(runs[counts[0]][0].nodes_per_second for _, runs, _ in rows)
    timed = [(runs, depth) for _, runs, depth in rows if depth and runs[counts[0]][1][depth] >= MIN_TIMED]
    for n in counts:
        nps = statistics.mean(runs[n][0].nodes_per_second for _, runs, _ in rows)
        cpu = statistics.mean(runs[n][2] / runs[n][0].elapsed for _, runs, _ in rows)
        speedup = geometric_mean(runs[counts[0]][1][d] / runs[n][1][d] for runs, d in timed)
        median = statistics.median(runs[n][1][d] for runs, d in timed)
        depth = statistics.median(runs[n][0].depth for _, runs, _ in rows)
        per_cpu = statistics.mean(runs[n][0].nodes / max(runs[n][2], 1e-9) for _, runs, _ in rows)
        late = [(runs[n][0].elapsed - seconds) * 1000 for _, runs, _ in rows if not runs[n][0].proven]
        print(f"  {n} thread{'s' if n > 1 else ' '}: {nps:>12,.0f} nodes/s ({nps / base_nps:.2f}x), "
              f"{cpu:.2f} CPU s per s, {per_cpu:>12,.0f} nodes per CPU s, median completed depth {depth:g}")
        if late:
            print(f"             returned after the deadline: median {statistics.median(late):.1f} ms, "
                  f"max {max(late):.1f} ms")
        saved = geometric_mean(runs[counts[0]][3][d] / runs[n][3][d] for runs, d in timed)
        print(f"             time to depth D: median {median:.3f} s, {speedup:.2f}x {counts[0]} thread's speed; "
              f"main thread's nodes to D: {saved:.2f}x fewer (geometric means over {len(timed)} positions)")
    print(f"\n{load_text()}")
    return 0


if __name__ == "__main__":
    from ref_sim.stops import guarded     # Ctrl-C, SIGTERM, SIGHUP: one line, 128 + the signal

    sys.exit(guarded("bench_threads.py", main))
