"""Games per minute locally and on a local Dask cluster: the engine's overhead per game.

Usage: python -m scripts.bench_cluster [--games 8] [--agents agent:depth=2 seed:depth=1]
                                       [--time-limit 2] [--seed 5] [--round-trips 50]

How it measures and what it prints: docs/measurements.md, "scripts.bench_cluster".
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time

from ref_sim.series.run import cluster, cluster_address, scheduler
from agent.options import MAX_TIME_LIMIT, real, whole
from ref_sim.series.command import MAX_GAMES
from ref_sim.series import openings, loop as series
from ref_sim.series.file_games import FileGameSettings, play_game_on_worker
from ref_sim.series.specs import agent_spec


def timed_game(*args, **kwargs):
    """:func:`ref_sim.series.file_games.play_game_on_worker`, and how long it took where it ran."""
    started = time.perf_counter()
    record = play_game_on_worker(*args, **kwargs)[0].record
    return (record.result, record.winner, len(record.moves)), time.perf_counter() - started


def play(runner, schedule, specs, names, time_limit) -> tuple[float, dict, list[float]]:
    """All games through ``runner`` on the series loop, ``capacity()`` in flight: (wall s,
    outcomes, game times)."""
    by_name = dict(zip(names, specs))
    outcomes, inside = {}, []

    def submit(scheduled):
        order = names if scheduled.index % 2 else names[::-1]
        return runner.submit(f"game-{scheduled.index}", timed_game, scheduled.index, by_name, order,
                             FileGameSettings(time_limit), seed=scheduled.seed, first=names[scheduled.first],
                             opening=list(scheduled.opening),
                             agent_seeds=dict(zip(names, scheduled.agent_seeds)))

    def finished(_, ticket) -> None:
        outcome, seconds = ticket.result()
        outcomes[ticket.label] = outcome
        inside.append(seconds)

    started = time.perf_counter()
    series.play_games(runner, schedule, submit, finished, threading.Event()).raise_error()
    return time.perf_counter() - started, outcomes, inside


def report(label: str, games: int, wall: float, inside: list[float], slots: int) -> None:
    mean = statistics.fmean(inside)
    beyond = wall * slots / games - mean
    print(f"{label:<11} {games} games, {slots} at once: {wall:6.1f} s wall, "
          f"{games * 60 / wall:5.1f} games/min, {mean:5.2f} s in a game, "
          f"{beyond * 1000:+7.0f} ms per game beyond it")


def add_series_options(parser: argparse.ArgumentParser) -> None:
    """The series both cluster benches play (this one and bench_cluster_tls.py)."""
    parser.add_argument("--games", type=whole(1, MAX_GAMES), default=8)
    parser.add_argument("--agents", nargs=2, default=["agent:depth=2", "seed:depth=1"])
    parser.add_argument("--time-limit", type=real(0, MAX_TIME_LIMIT, low_open=True), default=2.0)
    parser.add_argument("--seed", type=int, default=5)


def series_of(args) -> tuple[list, list[str], list]:
    """``(specs, names, schedule)`` of the series :func:`add_series_options` described."""
    specs = [agent_spec(text) for text in args.agents]
    return specs, [specs[0].label + "1", specs[1].label + "2"], openings.schedule(args.seed, args.games)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog=__doc__.strip().splitlines()[-1])
    add_series_options(parser)
    parser.add_argument("--round-trips", type=whole(1, 1_000_000), default=50)
    args = parser.parse_args(argv)
    try:
        from distributed import LocalCluster
    except ImportError:
        print(f"needs the cluster extra: {cluster_address.INSTALL_HINT}", file=sys.stderr)
        return 2
    specs, names, schedule = series_of(args)
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"on {os.cpu_count()} cores; {args.games} games {args.agents[0]} vs {args.agents[1]}, "
          f"seed {args.seed}, {args.time_limit:g} s limit")

    with scheduler.LocalRunner(1) as runner:
        wall, reference, inside = play(runner, schedule, specs, names, args.time_limit)
    report("local", args.games, wall, inside, 1)

    for workers in (1, 2):
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="uttt-bench-cluster-") as scratch, \
                LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                             silence_logs=40, local_directory=scratch) as local_cluster:
            with cluster.connect(local_cluster.scheduler_address) as runner:
                up = time.perf_counter() - started
                slots = sum(runner.slots().values())
                wall, outcomes, inside = play(runner, schedule, specs, names, args.time_limit)
                report(f"cluster x{workers}", args.games, wall, inside, slots)
                print(f"{'':<11} (cluster start-up and admission {up:.1f} s, once per series; "
                      f"same games as local: {'yes' if outcomes == reference else 'NO'})")
                if workers == 2 and args.round_trips:
                    times = []
                    for number in range(args.round_trips):
                        begin = time.perf_counter()
                        runner.submit(f"empty-{number}", time.sleep, 0).result()
                        times.append(time.perf_counter() - begin)
                    print(f"{'':<11} an empty task's round trip: median "
                          f"{statistics.median(times) * 1000:.1f} ms, max "
                          f"{max(times) * 1000:.1f} ms ({args.round_trips} tasks)")
    return 0


if __name__ == "__main__":
    from ref_sim.stops import guarded     # Ctrl-C, SIGTERM, SIGHUP: one line, 128 + the signal

    sys.exit(guarded("bench_cluster.py", main))
