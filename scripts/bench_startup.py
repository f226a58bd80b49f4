"""Start-up cost of a player: CPU seconds and wall time from launch to its ready line.

    python -m scripts.bench_startup [--runs 11] [--bytecode] [--agent-root DIR] [--baseline-root DIR]

The players (the agent at full strength and at a fixed depth, the random player), the engine
alone, and how each is timed: docs/measurements.md, "scripts.bench_startup".
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
import threading
import time
from pathlib import Path

from agent.options import whole

ROOT = Path(__file__).resolve().parent.parent

#: (label, arguments after the interpreter, the line that says it is ready)
PLAYERS = (
    ("agent", ["-m", "agent", "Startup", "--dir", "{dir}"], re.compile(r" ready in ")),
    ("agent --depth 2", ["-m", "agent", "Startup", "--dir", "{dir}", "--depth", "2"], re.compile(r" ready in ")),
    ("random_agent", ["-m", "ref_sim.bots.random_agent", "Startup", "--dir", "{dir}"], re.compile(r"waiting in ")),
)
#: The engine build alone, in a fresh process that times itself: (label, build_engine's depth).
BUILDS = (("build_engine", None), ("build_engine --depth 2", 2))
#: What such a process runs: its CPU seconds for imports and for the build, on one line.
BUILD_CODE = """import time
started = time.process_time()
from agent import engines
imported = time.process_time()
engines.build_engine(None, {depth}, None, None, 1)
print(imported - started, time.process_time() - imported)
"""
#: A player not ready in this long is broken, not slow.
READY_TIMEOUT = 60.0


def one_start(arguments: list[str], ready: re.Pattern, directory: Path, cwd: Path,
              bytecode: bool) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one launch until ``ready`` appears in its output."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("UTTT_RUNNER_PID", None)  # started by hand: no runner to watch
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    command = [sys.executable, *(a.format(dir=directory) for a in arguments)]
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    said = []
    # A player that hangs silent is killed: its output then ends, and so does the loop.
    watchdog = threading.Timer(READY_TIMEOUT, kill_group, (process.pid,))
    watchdog.start()
    try:
        for line in process.stdout:
            said.append(line)
            if ready.search(line):
                break
        wall = time.perf_counter() - started
    finally:
        watchdog.cancel()
        kill_group(process.pid)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = -signal.SIGKILL if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        process.stdout.close()
    if not said or not ready.search(said[-1]):
        last = said[-1].strip() if said else "nothing"
        raise SystemExit(f"bench_startup.py: {' '.join(command)} (in {cwd}) never said it was ready; its last line: {last}")
    return usage.ru_utime + usage.ru_stime, wall


def one_build(depth: int | None, cwd: Path, bytecode: bool) -> float:
    """CPU seconds of build_engine in a fresh process (its imports not counted)."""
    env = dict(os.environ)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run([sys.executable, "-c", BUILD_CODE.format(depth=depth)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=READY_TIMEOUT)
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
        raise SystemExit(f"bench_startup.py: build_engine failed in {cwd}: {last}")
    return float(done.stdout.split()[1])


def kill_group(pid: int) -> None:
    """SIGKILL the player's process group (it leads one: start_new_session)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} (min {min(values):.3f}, max {max(values):.3f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="How each player is timed: docs/measurements.md, \"scripts.bench_startup\".")
    parser.add_argument("--runs", type=whole(1, 1000), default=11, help="launches of each player (default 11)")
    parser.add_argument("--agent-root", type=Path, default=ROOT, metavar="DIR",
                        help="run the players from this source tree (default: this one)")
    parser.add_argument("--bytecode", action="store_true",
                        help="let the players write and read Python's bytecode cache (default: as the environment says)")
    parser.add_argument("--baseline-root", type=Path, default=None, metavar="DIR",
                        help="also run the players from this tree, in the same rounds (a before/after)")
    args = parser.parse_args()
    trees = {"": args.agent_root}
    if args.baseline_root is not None:
        trees[" [baseline]"] = args.baseline_root
    for option, tree in zip(("--agent-root", "--baseline-root"), trees.values()):
        if not (tree / "agent" / "__main__.py").is_file():
            parser.error(f"{option} {tree}: no agent/__main__.py there")
    figures = {label + tag: ([], []) for label, _, _ in PLAYERS for tag in trees}
    builds: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as temp:
        for run in range(-1, args.runs):  # run -1: the warm-up
            for label, arguments, ready in PLAYERS:
                for tag, tree in trees.items():
                    directory = Path(temp) / f"{run}-{label}{tag}".replace(" ", "_")
                    directory.mkdir()
                    cpu, wall = one_start(arguments, ready, directory, tree, args.bytecode)
                    if run >= 0:
                        figures[label + tag][0].append(cpu)
                        figures[label + tag][1].append(wall)
            for label, depth in BUILDS:
                for tag, tree in trees.items():
                    cpu = one_build(depth, tree, args.bytecode)
                    if run >= 0:
                        builds.setdefault(label + tag, []).append(cpu)
    load = os.getloadavg()
    cache = ("written and read" if args.bytecode or not os.environ.get("PYTHONDONTWRITEBYTECODE")
             else "off (PYTHONDONTWRITEBYTECODE): every start compiles its modules")
    print(f"start-up to the ready line, {args.runs} runs each, bytecode cache {cache}, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    for tag, tree in trees.items():
        print(f"  agent from {tree.resolve()}{tag}")
    for label, (cpu, wall) in figures.items():
        print(f"  {label:34s} CPU s {summary(cpu)}   wall s {summary(wall)}")
    print("the engine alone (agent.engines.build_engine in a fresh process, after its imports)")
    for label, cpu in builds.items():
        print(f"  {label:34s} CPU s {summary(cpu)}")
    return 0


if __name__ == "__main__":
    from ref_sim.stops import guarded     # Ctrl-C, SIGTERM, SIGHUP: one line, 128 + the signal

    sys.exit(guarded("bench_startup.py", main))
