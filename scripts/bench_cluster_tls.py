"""What TLS costs a series: the same games on a plain and on a TLS cluster on this machine.

Usage: python -m scripts.bench_cluster_tls [--games 8] [--agents agent:depth=2 seed:depth=1]
                                           [--time-limit 2] [--seed 5] [--rounds 2]
                                           [--round-trips 50]

Needs the cluster extra (pip install -e '.[cluster]').  Each round starts a scheduler and one
single-threaded worker on loopback through ``uttt-cluster`` (ref_sim/cluster_serve.py), first
plain (tcp://), then with a fresh certificate folder (tls://), and for each prints: the time to
connect and be admitted (:func:`ref_sim.series.run.cluster.connect`), the fixed-depth file-protocol games'
wall time and games per minute (scripts/bench_cluster.py's loop and report), and the round trip of
an empty task (the scheduler's latency per task, where TLS's cost shows most).  The games are
checked to be the same on both.  Figures depend on the machine's load: it is printed first.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent.options import whole
from scripts.bench_cluster import add_series_options, play, report, series_of  # the same series as there
from ref_sim.series.run import cluster, cluster_address, cluster_tls
ROOT = Path(__file__).resolve().parent.parent

#: Seconds to wait for a scheduler's address: a hang guard on a busy machine.
START_WAIT = 120


def start(scratch: Path, tls: list[str]) -> tuple[str, list[subprocess.Popen]]:
    """A scheduler and one single-threaded worker through uttt-cluster: (address, processes)."""
    # The project's folder: the games' function is scripts.bench_cluster's, which the scheduler
    # unpickles by name.
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(scratch))
    env.pop(cluster_address.ENV, None)
    env.pop(cluster_tls.ENV, None)
    file = scratch / "scheduler.json"
    file.unlink(missing_ok=True)

    def serve(log: str, *argv):
        with open(scratch / log, "w") as out:
            return subprocess.Popen([sys.executable, "-m", "ref_sim.cluster_serve", *argv],
                                    stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                                    start_new_session=True)

    processes = [serve("scheduler.log", "scheduler", "--port", "0", "--scheduler-file",
                       str(file), *tls)]
    deadline = time.monotonic() + START_WAIT
    while True:
        try:
            address = json.loads(file.read_text())["address"]
            break
        except (OSError, ValueError, KeyError):
            if time.monotonic() > deadline or processes[0].poll() is not None:
                stop(processes)
                raise SystemExit(f"the scheduler did not start: see {scratch / 'scheduler.log'}") from None
            time.sleep(0.1)
    processes.append(serve("worker.log", "worker", address, "--nthreads", "1", *tls))
    return address, processes


def stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        try:
            os.killpg(process.pid, signal.SIGTERM)      # the worker's nanny and its worker
        except ProcessLookupError:
            pass
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_series_options(parser)
    parser.add_argument("--rounds", type=whole(1, 100), default=2,
                        help="plain then TLS, this many times (default 2)")
    parser.add_argument("--round-trips", type=whole(0, 1_000_000), default=50)
    args = parser.parse_args(argv)
    try:
        import distributed  # noqa: F401
        import cryptography  # noqa: F401
    except ImportError:
        print(f"needs the cluster extra: {cluster_address.INSTALL_HINT}", file=sys.stderr)
        return 2
    specs, names, schedule = series_of(args)
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores; "
          f"{args.games} games {args.agents[0]} vs {args.agents[1]}, seed {args.seed}, "
          f"{args.time_limit:g} s limit, 1 worker with 1 thread, {args.rounds} round(s)")
    reference = None
    totals: dict[str, list[float]] = {"tcp": [], "tls": []}
    with tempfile.TemporaryDirectory(prefix="uttt-bench-tls-") as scratch_name:
        scratch = Path(scratch_name)
        folder = cluster_tls.make_folder(scratch / "certs").folder
        for _ in range(args.rounds):
            for kind, tls in (("tcp", []), ("tls", ["--tls", str(folder)])):
                address, processes = start(scratch, tls)
                try:
                    began = time.perf_counter()
                    with cluster.connect(address, tls=str(folder) if tls else None,
                                         connect_wait=START_WAIT, say=lambda text: None) as runner:
                        up = time.perf_counter() - began
                        wall, outcomes, inside = play(runner, schedule, specs, names,
                                                      args.time_limit)
                        report(kind, args.games, wall, inside, runner.capacity())
                        totals[kind].append(wall)
                        reference = outcomes if reference is None else reference
                        trips = []
                        for number in range(args.round_trips):
                            started = time.perf_counter()
                            runner.submit(f"empty-{number}", time.sleep, 0).result()
                            trips.append(time.perf_counter() - started)
                        trip = (f"; an empty task's round trip: median "
                                f"{statistics.median(trips) * 1000:.1f} ms, max "
                                f"{max(trips) * 1000:.1f} ms" if trips else "")
                        print(f"{'':<11} (connect and admission {up:.1f} s{trip}; same games: "
                              f"{'yes' if outcomes == reference else 'NO'})", flush=True)
                finally:
                    stop(processes)
    plain, secure = statistics.fmean(totals["tcp"]), statistics.fmean(totals["tls"])
    print(f"mean wall time: tcp {plain:.1f} s, tls {secure:.1f} s "
          f"({(secure / plain - 1) * 100:+.1f} %)")
    return 0


if __name__ == "__main__":
    from ref_sim.stops import guarded     # Ctrl-C, SIGTERM, SIGHUP: one line, 128 + the signal

    sys.exit(guarded("bench_cluster_tls.py", main))
