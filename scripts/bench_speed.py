"""Search speed of the cores on a fixed suite of positions from real games: nodes/s, completed depth, ratios.

Usage:
  python -m scripts.bench_speed [--seconds 1 9] [--phase opening middle endgame] [--limit N]
                                [--cores python compiled wasm] [--evaluation classic|fitted]
  python -m scripts.bench_speed --quick      # 2 positions per phase, 1 s: about 15 s
  python -m scripts.bench_speed --generate   # rebuild scripts/bench_positions.txt from new games
  python -m scripts.bench_speed --cores python compiled wasm --seconds 1 --rounds 5 --record docs/figures/speed.json
  python -m scripts.bench_speed --table docs/figures/speed.json   # the Markdown table made from a record

Each position is searched by each core (the pure-Python search, the compiled one and the same C as
WebAssembly, agent/core.py; default python and compiled) from a fresh engine (empty table) for each
time budget, one after the other on the same position. The summary gives per budget each core's
mean nodes/s and the ratio of each pair of cores, and the median completed depth per phase. The
machine's load average is printed before and after: figures taken on a busy machine are lower and
noisier.

--rounds N runs the whole suite N times; --record FILE writes the ratios of the cores' mean nodes/s,
one per round, with their min and median, and the machine and its load, as JSON. That file
(docs/figures/speed.json) is the one source of the cores' speed ratios: docs/measurements.md's
table is --table's output for it, and tests/test_speed_figures.py keeps the two equal and every
other page from restating a ratio.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import statistics
import sys
from pathlib import Path

from agent import core as search_core
from agent.engines import DEFAULT_EVALUATION, EVALUATIONS, AlphaBetaEngine
from agent.limits import SearchLimit
from agent.options import MAX_TIME_LIMIT, real, whole
from agent.rules import Move, Position
from ref_sim.series.openings import cell_opening
from ref_sim.selfplay import play_uttt_game

SUITE = Path(__file__).with_name("bench_positions.txt")
#: The cores (agent/core.py) by name, and their short names in the table's columns.
SHORT = {"python": "py", "compiled": "C", "wasm": "wasm"}
PHASES = {"opening": (6, 12), "middle": (20, 36), "endgame": (44, 60)}


def generate(games: int = 12, seed: int = 4341) -> None:
    """Play engine-vs-engine games from referee-style openings; keep one position per phase per game."""
    rng = random.Random(seed)
    lines = ["# phase: moves from the empty board (BOARD SPOT, comma separated); made by --generate"]
    for g in range(games):
        result = play_uttt_game((AlphaBetaEngine(nodes=20000), AlphaBetaEngine(nodes=20000)), cell_opening(rng), g % 2)
        for phase, (low, high) in PHASES.items():
            if result.plies - 2 <= low:
                continue
            ply = rng.randint(low, min(high, result.plies - 2))
            moves = ",".join(str(Move.from_index(m)) for m in result.moves[:ply])
            lines.append(f"{phase}: {moves}")
        print(f"game {g + 1}: {result.plies} plies", file=sys.stderr)
    SUITE.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines) - 1} positions to {SUITE}")


def load_suite() -> list[tuple[str, Position]]:
    suite = []
    for line in SUITE.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        phase, moves = line.split(":", 1)
        suite.append((phase, Position.from_moves(Move.parse(m) for m in moves.split(","))))
    return suite


def load_text() -> str:
    try:
        return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):  # not on Windows
        return "load average unknown"


#: The ratios a record keeps, faster core first: (numerator, denominator).
RATIOS = (("compiled", "python"), ("wasm", "compiled"), ("wasm", "python"))
#: How the docs' table names each core.
CORE_NAMES = {"python": "pure Python", "compiled": "compiled", "wasm": "WebAssembly (wasmtime)"}


def machine_text() -> str:
    """The CPU's model and count, the system and Python: where a record was measured."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            model = next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{os.cpu_count()} x {model}, {platform.system()}, Python {platform.python_version()}"


def spread(values: list[float], digits: int = 3) -> dict:
    return {"min": round(min(values), digits), "median": round(statistics.median(values), digits),
            "max": round(max(values), digits)}


def make_record(rounds: list[dict], command: str, seconds: float, positions: int, loads: list[float]) -> dict:
    """The JSON record of a run: ``rounds`` holds each round's mean nodes/s per core."""
    cores = [name for name in SHORT if name in rounds[0]]
    record = {
        "command": command,
        "date": datetime.date.today().isoformat(),
        "machine": machine_text(),
        "load_average_1min": spread(loads, 2),
        "positions": positions,
        "seconds_per_position": seconds,
        "rounds": len(rounds),
        "mean_nodes_per_second": {name: [round(r[name]) for r in rounds] for name in cores},
        "ratios": {},
    }
    for top, bottom in RATIOS:
        if top in cores and bottom in cores:
            per_round = [round(r[top] / r[bottom], 3) for r in rounds]
            record["ratios"][f"{top}/{bottom}"] = {"per_round": per_round, **spread(per_round)}
    return record


def speed_table(record: dict) -> str:
    """The Markdown table docs/measurements.md shows for a record (the test compares the two)."""
    def figure(x: float) -> str:
        return f"{x:.2f}" if x < 10 else f"{x:.1f}"
    lines = ["| speed ratio (mean nodes/s) | min | median | rounds |", "| --- | ---: | ---: | ---: |"]
    for key, ratio in record["ratios"].items():
        top, bottom = key.split("/")
        lines.append(f"| {CORE_NAMES[top]} / {CORE_NAMES[bottom]} | {figure(ratio['min'])} | "
                     f"{figure(ratio['median'])} | {len(ratio['per_round'])} |")
    load = record["load_average_1min"]
    lines += ["", f"Measured {record['date']} on {record['machine']}, load average (1 min) "
              f"{load['min']:.2f} to {load['max']:.2f} (at each round's start and at the end), "
              f"{record['positions']} positions at {record['seconds_per_position']:g} s each per round, by "
              f"`{record['command']}`."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=real(0, MAX_TIME_LIMIT, low_open=True), nargs="+", default=None, help="budgets per position (default: 1 9)")
    parser.add_argument("--phase", nargs="+", choices=list(PHASES), default=list(PHASES))
    parser.add_argument("--limit", type=whole(1), help="only the first N positions of each phase")
    parser.add_argument("--cores", nargs="+", choices=SHORT, default=["python", "compiled"])
    parser.add_argument("--evaluation", choices=EVALUATIONS, default=DEFAULT_EVALUATION)
    parser.add_argument("--quick", action="store_true", help="a short run: --limit 2 --seconds 1")
    parser.add_argument("--generate", action="store_true")
    parser.add_argument("--rounds", type=whole(1, 100), default=1, help="times the whole suite is run (default 1)")
    parser.add_argument("--record", type=Path, metavar="FILE", help="write the ratios per round, the machine and its load as JSON")
    parser.add_argument("--table", type=Path, metavar="FILE", help="print the Markdown table of a --record file, and measure nothing")
    args = parser.parse_args(argv)
    if args.generate:
        generate()
        return 0
    if args.table:
        print(speed_table(json.loads(args.table.read_text(encoding="utf-8"))), end="")
        return 0
    if args.quick:
        args.limit = args.limit or 2
        args.seconds = args.seconds or [1.0]
    args.seconds = args.seconds or [1.0, 9.0]
    missing = {"compiled": search_core.unavailable_reason(), "wasm": search_core.wasm_unavailable_reason()}
    for name, reason in missing.items():
        if name in args.cores and reason:
            print(f"bench_speed: {reason}; measuring without the {name} core", file=sys.stderr)
            args.cores = [c for c in args.cores if c != name]
    cores = list(dict.fromkeys(args.cores))
    if not cores:
        print("bench_speed: no core to measure", file=sys.stderr)
        return 2
    suite = [(phase, pos) for phase, pos in load_suite() if phase in args.phase]
    if args.limit:
        suite = [item for phase in args.phase for item in [s for s in suite if s[0] == phase][: args.limit]]
    print(f"{len(suite)} positions, budgets {args.seconds} s, cores {' and '.join(cores)}, "
          f"{args.evaluation} evaluation, python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {load_text()}")
    header = f"{'#':>3} {'phase':8} {'ply':>3}"
    for seconds in args.seconds:
        for name in cores:
            header += f" {f'{SHORT[name]} d@{seconds:g}s':>10} {'knodes/s':>8}"
    print(header)
    table = {(s, name): [] for s in args.seconds for name in cores}
    rounds = []      # per round, each core's mean nodes/s at the first budget
    loads = []
    for round_number in range(1, args.rounds + 1):
        loads.append(os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan"))
        if args.rounds > 1:
            print(f"round {round_number} of {args.rounds}, {load_text()}")
        for i, (phase, pos) in enumerate(suite, 1):
            cells = []
            for seconds in args.seconds:
                for name in cores:
                    engine = AlphaBetaEngine(core=name, evaluation=args.evaluation)
                    result = engine.choose(pos, SearchLimit.seconds(seconds))
                    table[seconds, name].append((phase, result))
                    mark = "*" if result.proven else ""
                    cells.append(f"{str(result.depth) + mark:>10} {result.nodes_per_second / 1000:>8.0f}")
            print(f"{i:>3} {phase:8} {pos.ply:>3} " + " ".join(cells), flush=True)
        this_round = {name: table[args.seconds[0], name][-len(suite):] for name in cores}
        rounds.append({name: statistics.mean(r.nodes_per_second for _, r in rows) for name, rows in this_round.items()})
        if args.rounds > 1:
            print("  this round: " + ", ".join(f"{b} / {a} {rounds[-1][b] / rounds[-1][a]:.3f}x"
                                               for a, b in ((a, b) for i, a in enumerate(cores) for b in cores[i + 1:])))
    loads.append(os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan"))
    print("\n(* = result proven: the search stopped early)")
    for seconds in args.seconds:
        print(f"\n{seconds:g} s per position, {len(suite)} positions, {args.rounds} round(s) pooled:")
        means = {}
        for name in cores:
            rows = table[seconds, name]
            means[name] = statistics.mean(r.nodes_per_second for _, r in rows)
            print(f"  {name:8} core: mean {means[name]:>12,.0f} nodes/s")
        for base, name in ((a, b) for i, a in enumerate(cores) for b in cores[i + 1:]):
            ratios = [c.nodes_per_second / max(p.nodes_per_second, 1)
                      for (_, p), (_, c) in zip(table[seconds, base], table[seconds, name])]
            print(f"  {name} / {base}: {means[name] / means[base]:.2f}x the mean nodes/s "
                  f"(per position: median {statistics.median(ratios):.2f}x, min {min(ratios):.2f}x, "
                  f"max {max(ratios):.2f}x)")
        for phase in args.phase:
            depths = {name: [r.depth for p, r in table[seconds, name] if p == phase] for name in cores}
            if not depths[cores[0]]:
                continue
            text = ", ".join(f"{name} {statistics.median(d):g} (min {min(d)}, max {max(d)})" for name, d in depths.items())
            print(f"  {phase:8} median completed depth: {text}, n={len(depths[cores[0]])}")
    print(f"\n{load_text()}")
    if args.record:
        command = "python -m scripts.bench_speed " + " ".join(sys.argv[1:] if argv is None else argv)
        record = make_record(rounds, command, args.seconds[0], len(suite), loads)
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(f"\nwrote {args.record}; its table (docs/measurements.md shows it):\n")
        print(speed_table(record), end="")
    return 0


if __name__ == "__main__":
    from ref_sim.stops import guarded     # Ctrl-C, SIGTERM, SIGHUP: one line, 128 + the signal

    sys.exit(guarded("bench_speed.py", main))
