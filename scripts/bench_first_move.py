"""Is the first move of a game later than the others? Each game's first move beside its later ones.

Usage: python -m scripts.bench_first_move [--time-limit 10] [--games 4] [--moves 4] [--hogs N] [--io-hogs N]
           [--opponent random|otter|agent] [--drop-caches] [--memory-limit MB] [--evict]
           [--pause-for S [--pause-at S]] [--ab VAR=VALUE]

How it measures and what it prints: docs/measurements.md, "scripts.bench_first_move".
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import shlex
import signal
import statistics
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from agent.clock import cutoff_for
from agent.options import MAX_TIME_LIMIT, real, whole
from agent.pauses import TRACE_ENV
from ref_sim.series.file_games import start_agent
from ref_sim.series.process.launch import wait_until_started
from ref_sim.referees.file_referee import INTERRUPTED, RefereeSettings
from ref_sim.referees.file_shell import run_game
from ref_sim.series.specs import AgentSpec, agent_spec
from ref_sim import command_words
from ref_sim.stops import kill_tree

ROOT = Path(__file__).resolve().parent.parent

OURS = "Agent1"
AGENT = "{python} -m agent {name} --dir {dir} --time-limit {time_limit}"
CGROUP = Path("/sys/fs/cgroup/memory")
TRACE = re.compile(r"turn trace \(s after the \.go's mtime\): (.*?)  target ([\d.]+)  stall ([\d.]+)  faults (\d+) minor (\d+) major"
                   r"  (\d+) involuntary")


def spin() -> None:
    while True:
        pass


def write_and_sync(path: str) -> None:
    """An I/O hog: rewrite 8 MB and wait for the disk, again and again (a test suite's files, a log)."""
    block = os.urandom(8 << 20)
    handle = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    while True:
        os.pwrite(handle, block, 0)
        os.fsync(handle)


def opponent_spec(name: str):
    if name == "otter":
        return agent_spec("name=Otter:" + command_words.join([sys.executable, str(ROOT / "tests/bots/otter.py")]))
    return agent_spec(name)


def drop_caches() -> str:
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as handle:
            handle.write("3\n")
    except OSError as error:
        return f"could not drop the caches ({error.strerror})"
    return ""


def memory_cgroup(megabytes: int | None) -> Path:
    group = CGROUP / f"uttt-first-move-{os.getpid()}"
    group.mkdir()
    set_limit(group, megabytes * 1024 * 1024 if megabytes else -1)
    return group


def set_limit(group: Path, limit: int) -> None:
    (group / "memory.limit_in_bytes").write_text(f"{limit}\n")


def evict(group: Path, megabytes: int | None) -> str:
    """Reclaim the agent's file pages (its code, its data files) as memory pressure during a long
    wait would: the cgroup's limit lowered to its anonymous memory (which cannot go: no swap), then
    raised again. Returns what was evicted. The pages count only if the agent read them first:
    the caches are dropped before it starts."""
    def usage() -> int:
        return int((group / "memory.usage_in_bytes").read_text())

    before = usage()
    stat = dict(line.split() for line in (group / "memory.stat").read_text().splitlines())
    floor = int(stat["total_rss"])
    for slack_mb in (1, 2, 4, 8, 16, 32):
        try:
            set_limit(group, floor + slack_mb * 1024 * 1024)
            break
        except OSError:  # EBUSY: cannot reclaim that far
            continue
    set_limit(group, megabytes * 1024 * 1024 if megabytes else -1)
    return f"evicted {(before - usage()) / 1e6:.1f} of {before / 1e6:.1f} MB of the agent's pages"


def pause(pid: int, seconds: float) -> None:
    """Take our agent off the CPU for ``seconds``, as a loaded machine may at any moment."""
    try:
        os.kill(pid, signal.SIGSTOP)
        time.sleep(seconds)
        os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        pass


def parse_trace(log: Path) -> list[dict]:
    """The agent's turn traces, in order: moments (seconds after the .go), target, faults."""
    traces = []
    for line in log.read_text(errors="replace").splitlines():
        found = TRACE.search(line)
        if found:
            marks = dict(re.findall(r"([\w-]+) ([+-][\d.]+)", found.group(1)))
            traces.append({"marks": {k: float(v) for k, v in marks.items()}, "target": float(found.group(2)),
                           "stall": float(found.group(3)), "minor": int(found.group(4)),
                           "major": int(found.group(5)), "switches": int(found.group(6))})
    return traces


def play_one(number: int, args, env: dict, base: Path, group: Path | None) -> tuple[list[float], list[dict], str]:
    """One game stopped after our ``args.moves``-th move: our latencies and the agent's traces."""
    game_dir, logs = base / f"game{number}", base / f"logs{number}"
    game_dir.mkdir(exist_ok=True)
    logs.mkdir(exist_ok=True)
    template = AGENT
    if group is not None:   # into the cgroup before exec: everything it allocates is charged there
        enter = f'echo $$ > {group}/cgroup.procs && exec "$@"'
        template = f"sh -c {shlex.quote(enter)} sh " + AGENT
    ours = AgentSpec("Agent", template, builtin=True)
    opponent = opponent_spec(args.opponent)
    other = opponent.fixed_name or "Opponent2"
    log_paths = {OURS: logs / "agent.log", other: logs / "opponent.log"}
    if args.drop_caches or args.evict:  # a cold start; and what it reads is charged to its cgroup
        drop_caches()
    agents = {OURS: start_agent(ours, OURS, game_dir, args.time_limit, log_paths[OURS], env=env),
              other: start_agent(opponent, other, game_dir, args.time_limit, log_paths[other])}
    latencies: list[float] = []
    go_mtime = [0.0]
    timers: list[threading.Timer] = []
    stop = threading.Event()

    def on_event(event) -> None:
        if event.player != OURS:
            return
        if event.kind == "turn":
            go_mtime[0] = os.stat(game_dir / f"{OURS}.go").st_mtime_ns / 1e9
            if args.pause_for:
                timer = threading.Timer(go_mtime[0] + args.pause_at - time.time(), pause,
                                        (agents[OURS].pid, args.pause_for))
                timer.daemon = True
                timer.start()
                timers.append(timer)
        elif event.kind == "move":
            for timer in timers:  # a pause due after our move would strike in a later turn
                timer.cancel()
            latencies.append(os.stat(game_dir / "move_file").st_mtime_ns / 1e9 - go_mtime[0])
            if len(latencies) >= args.moves:
                stop.set()

    note = ""
    try:
        wait_until_started(agents, log_paths, timeout=30.0)
        if args.drop_caches:
            note = drop_caches()
        if args.evict:
            note = " ".join(filter(None, [note, evict(group, args.memory_limit)]))
        settings = RefereeSettings(time_limit=args.time_limit, busy_poll=True, exit_delay=0.2)
        record = run_game(game_dir, OURS, other, settings, seed=args.seed + number, on_event=on_event, stop=stop)
        if record.reason != INTERRUPTED:   # stopped by us after our last move, or ended before it
            note = " ".join(filter(None, [note, f"game ended: {record.end_text or record.reason}"]))
    finally:
        for process in agents.values():
            kill_tree(process)
    return latencies, parse_trace(log_paths[OURS]), note


def spread(values: list[float], unit: str) -> str:
    """``median M max X (n=N)`` of seconds, shown in seconds or as signed milliseconds."""
    if not values:
        return "none"
    shown = (lambda x: f"{x:.3f}") if unit == "s" else (lambda x: f"{x * 1000:+.0f}")
    return f"median {shown(statistics.median(values))} max {shown(max(values))} (n={len(values)})"


def describe(trace: dict) -> str:
    marks = "  ".join(f"{name} {value:+.3f}" for name, value in trace["marks"].items())
    return (f"{marks}  stall {trace['stall'] * 1000:.0f} ms  faults {trace['minor']}/{trace['major']} "
            f"(minor/major)  {trace['switches']} preempted")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog=__doc__.strip().splitlines()[-1])
    parser.add_argument("--time-limit", type=real(0, MAX_TIME_LIMIT, low_open=True), default=10.0)
    parser.add_argument("--games", type=whole(1, 1000), default=4)
    parser.add_argument("--moves", type=whole(2, 200), default=4, help="our moves per game before it is stopped")
    parser.add_argument("--hogs", type=whole(0, 64), default=0, help="CPU-spinning processes during the run")
    parser.add_argument("--io-hogs", type=whole(0, 64), default=0,
                        help="processes rewriting 8 MB and fsyncing it, again and again, during the run")
    parser.add_argument("--opponent", default="random", help="random, otter (a busy-waiting bot), agent, or a spec")
    parser.add_argument("--drop-caches", action="store_true", help="drop the page cache before the agents start and before the first .go (root)")
    parser.add_argument("--memory-limit", type=whole(64, 1 << 20), default=None, metavar="MB",
                        help="our agent in a memory cgroup of MB megabytes (root, cgroup v1)")
    parser.add_argument("--evict", action="store_true",
                        help="reclaim our agent's file pages (code, data) before each game, as memory pressure "
                             "during its wait would (root, cgroup v1)")
    parser.add_argument("--pause-at", type=real(0, MAX_TIME_LIMIT), default=8.8, metavar="S",
                        help="with --pause-for: when, in seconds after each of our .go files (default 8.8)")
    parser.add_argument("--pause-for", type=real(0, MAX_TIME_LIMIT), default=0.0, metavar="S",
                        help="stop our agent (SIGSTOP) for S seconds in each of its turns: a machine's pause")
    parser.add_argument("--ab", default=None, metavar="VAR=VALUE",
                        help="set VAR=VALUE in our agent's environment in games 1, 3, 5...")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="keep the games' files and logs here (default: removed at the end)")
    args = parser.parse_args(argv)
    ab = None
    if args.ab is not None:
        var, eq, value = args.ab.partition("=")
        if not eq or not var:
            parser.error(f"--ab wants VAR=VALUE, got {args.ab!r}")
        ab = (var, value)

    try:
        group = memory_cgroup(args.memory_limit) if args.memory_limit or args.evict else None
    except OSError as error:
        parser.error(f"--memory-limit and --evict need root and a cgroup v1 memory controller at {CGROUP} "
                     f"({error.strerror})")
    if args.out:
        base = Path(args.out)
        base.mkdir(parents=True, exist_ok=True)
    else:
        base = Path(tempfile.mkdtemp(prefix="uttt-first-move-"))
    hogs = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.hogs)]
    hogs += [multiprocessing.Process(target=write_and_sync, args=(str(base / f"io-hog-{n}"),), daemon=True)
             for n in range(args.io_hogs)]
    for hog in hogs:
        hog.start()
    load = [f"{args.hogs} CPU hog(s)", f"{args.io_hogs} I/O hog(s)", f"opponent {args.opponent}"]
    load += ["caches dropped"] if args.drop_caches else []
    load += [f"agent in {args.memory_limit} MB"] if args.memory_limit else []
    load += ["agent's pages evicted"] if args.evict else []
    load += [f"agent stopped {args.pause_for:g} s at {args.pause_at:g} s each turn"] if args.pause_for else []
    print(f"{args.games} games at {args.time_limit:g} s, our first {args.moves} moves each; busy-polling referee, "
          f"{', '.join(load)}; " + (f"logs in {base}" if args.out else "logs not kept (--out DIR keeps them)"),
          flush=True)
    print("overshoot = latency (move_file mtime - .go mtime) - the agent's target", flush=True)
    groups: dict[str, dict[str, list[float]]] = {}  # by A/B label: latencies and overshoots
    try:
        for number in range(1, args.games + 1):
            label = "all"
            env = {TRACE_ENV: "1"}
            if ab is not None:
                label = f"A {ab[0]}={ab[1]}" if number % 2 else "B (without)"
                if number % 2:
                    env[ab[0]] = ab[1]
            latencies, traces, note = play_one(number, args, env, base, group)
            targets = [t["target"] for t in traces] + [cutoff_for(args.time_limit)] * len(latencies)
            if not latencies:
                print(f"game {number} [{label}]: no move of ours {note}", flush=True)
                continue
            stats = groups.setdefault(label, {"first": [], "later": [], "first over": [], "later over": []})
            over = [lat - target for lat, target in zip(latencies, targets)]
            for key, values in (("first", latencies[:1]), ("later", latencies[1:]), ("first over", over[:1]),
                                ("later over", over[1:])):
                stats[key].extend(values)
            later = (f"later {spread(latencies[1:], 's')}, overshoot {spread(over[1:], 'ms')}" if len(latencies) > 1
                     else "no later move")
            print(f"game {number} [{label}]: first {latencies[0]:.3f} s, target {targets[0]:.3f}, overshoot "
                  f"{over[0] * 1000:+.0f} ms; {later} {note}", flush=True)
            for index in (0, 1):
                if index < len(traces):
                    print(f"    turn {index + 1}: {describe(traces[index])}", flush=True)
    finally:
        for hog in hogs:
            hog.kill()  # not terminate: a hog inherits this runner's handler that turns SIGTERM into a traceback
            hog.join(5)
        for written in base.glob("io-hog-*"):
            written.unlink()
        if not args.out:
            shutil.rmtree(base, ignore_errors=True)
        if group is not None:
            try:
                group.rmdir()
            except OSError as error:
                print(f"could not remove the cgroup {group}: {error.strerror}", file=sys.stderr)
    print("summary: latency (s) and overshoot past the target (ms)")
    for label, stats in groups.items():
        print(f"  [{label}] first moves: {spread(stats['first'], 's')}, {spread(stats['first over'], 'ms')};  "
              f"later moves: {spread(stats['later'], 's')}, {spread(stats['later over'], 'ms')}")
    return 0


if __name__ == "__main__":
    from ref_sim.stops import guarded     # Ctrl-C, SIGTERM, SIGHUP: one line, 128 + the signal

    sys.exit(guarded("bench_first_move.py", main))
