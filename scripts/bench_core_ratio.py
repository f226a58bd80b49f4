"""Speed of two builds of the compiled core in one run: fixed-depth searches, alternated, same results.

Usage:
  python -m scripts.bench_core_ratio [--old main] [--new PATH] [--depth 10] [--rounds 3]
                                     [--phase ...] [--limit N] [--evaluation fitted|classic]
  python -m scripts.bench_core_ratio --only new --rounds 1   # one build alone (the profile's load)

How it measures and what it prints: docs/measurements.md, "scripts.bench_core_ratio".
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent import core, core_wasm
from ref_sim.games.core_builds import load_core_build
from agent.engines import DEFAULT_EVALUATION, EVALUATIONS, make_evaluator
from agent.limits import SearchLimit
from agent.options import whole
from scripts.bench_speed import PHASES, load_suite, load_text

ROOT = Path(__file__).resolve().parent.parent


def build_revision(rev: str, folder: Path) -> Path:
    """Build git revision ``rev``'s core (its agent/*.c and *.h: agent/_core.c, and from the split on
    agent/core_search.c) with its own setup.py into ``folder``; the .so's path."""
    (folder / "agent").mkdir(parents=True)
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "--name-only", f"{rev}:agent"],
                            capture_output=True, text=True)
    if listed.returncode != 0:
        raise SystemExit(f"bench_core_ratio: cannot list agent/ at {rev}: {listed.stderr.strip()}")
    sources = [f"agent/{name}" for name in listed.stdout.split() if name.endswith((".c", ".h"))]
    for name in (*sources, "setup.py"):
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{name}"], capture_output=True, text=True)
        if text.returncode != 0:
            raise SystemExit(f"bench_core_ratio: cannot read {name} at {rev}: {text.stderr.strip()}")
        (folder / name).write_text(text.stdout)
    built = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=folder,
                           capture_output=True, text=True)
    found = sorted((folder / "agent").glob("_core*.so")) + sorted((folder / "agent").glob("_core*.pyd"))
    if built.returncode != 0 or not found:
        raise SystemExit(f"bench_core_ratio: building {rev}'s core failed:\n{built.stdout}{built.stderr}")
    return found[0]


def load_build(spec: str | None, folder: Path, label: str):
    """A core module from a path, a git revision or (None) this checkout's agent._core."""
    if spec is None:
        if not core.compiled_available():
            raise SystemExit(f"bench_core_ratio: {core.unavailable_reason()}")
        return core._core, "this checkout's agent._core"
    path = Path(spec)
    if path.suffix == ".wasm":  # the WebAssembly core (agent/data/core.wasm), against a compiled build
        try:
            return core_wasm.WasmCore(path), f"{path} (WebAssembly, in wasmtime)"
        except (ImportError, OSError) as error:
            raise SystemExit(f"bench_core_ratio: {error}") from None
    if not path.is_file():
        path = build_revision(spec, folder / label)
        text = f"{spec} ({path.name} built here)"
    else:
        text = str(path)
    try:
        return load_core_build(str(path)), text
    except ValueError as error:
        raise SystemExit(f"bench_core_ratio: {error}") from None


def outcome(result):
    return result.move, result.score, result.depth, result.nodes, result.pv, result.proven


def timed_search(module, evaluator, pos, depth):
    engine = core.CompiledAlphaBeta(evaluator, core_module=module)  # a fresh, prefaulted table
    start = time.thread_time()
    result = engine.search(pos, SearchLimit(depth=depth))
    return time.thread_time() - start, result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog=__doc__.strip().splitlines()[-1])
    parser.add_argument("--old", default="main", help="a built core's path or a git revision (default: main)")
    parser.add_argument("--new", default=None, help="a built core's path or a git revision (default: agent._core)")
    parser.add_argument("--only", choices=("old", "new"), help="time one build alone (for a profile)")
    parser.add_argument("--depth", type=whole(1, 40), default=10)
    parser.add_argument("--rounds", type=whole(1), default=3)
    parser.add_argument("--phase", nargs="+", choices=list(PHASES), default=list(PHASES))
    parser.add_argument("--limit", type=whole(1), help="only the first N positions of each phase")
    parser.add_argument("--evaluation", choices=EVALUATIONS, default=DEFAULT_EVALUATION)
    args = parser.parse_args(argv)
    suite = [(phase, pos) for phase, pos in load_suite() if phase in args.phase]
    if args.limit:
        suite = [item for phase in args.phase for item in [s for s in suite if s[0] == phase][: args.limit]]
    evaluator = make_evaluator(args.evaluation)
    with tempfile.TemporaryDirectory(prefix="core_builds_") as tmp:
        builds = {}
        for label in ("old", "new") if args.only is None else (args.only,):
            builds[label] = load_build(getattr(args, label), Path(tmp), label)
        for label, (_, text) in builds.items():
            print(f"{label}: {text}")
        print(f"{len(suite)} positions, depth {args.depth}, {args.rounds} rounds, {args.evaluation} evaluation, "
              f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {load_text()}", flush=True)
        labels = list(builds)
        best = {label: [] for label in labels}
        nodes = []
        print(f"{'#':>3} {'phase':8} {'ply':>3} {'nodes':>10} " + " ".join(f"{label + ' s':>8}" for label in labels)
              + (f" {'ratio':>6}" if len(labels) == 2 else ""))
        for i, (phase, pos) in enumerate(suite, 1):
            times = {label: [] for label in labels}
            results = {}
            for r in range(args.rounds):
                for label in labels if r % 2 == 0 else reversed(labels):
                    seconds, result = timed_search(builds[label][0], evaluator, pos, args.depth)
                    times[label].append(seconds)
                    if results.setdefault(label, outcome(result)) != outcome(result):
                        raise SystemExit(f"bench_core_ratio: {label} gave two results at position {i}")
            if len(labels) == 2 and results["old"] != results["new"]:
                raise SystemExit(f"bench_core_ratio: the builds differ at position {i} ({phase}, ply {pos.ply}):\n"
                                 f"  old {results['old']}\n  new {results['new']}")
            nodes.append(results[labels[0]][3])
            for label in labels:
                best[label].append(min(times[label]))
            cells = " ".join(f"{best[label][-1]:>8.3f}" for label in labels)
            if len(labels) == 2:
                cells += f" {best['old'][-1] / best['new'][-1]:>6.3f}"
            print(f"{i:>3} {phase:8} {pos.ply:>3} {nodes[-1]:>10} {cells}", flush=True)
        total = sum(nodes)
        print(f"\n{total:,} nodes in all (the same for every build: same trees)")
        for label in labels:
            seconds = sum(best[label])
            print(f"  {label}: {seconds:.3f} s to depth {args.depth} over the suite, {total / seconds:,.0f} nodes/s")
        if len(labels) == 2:
            ratios = [o / n for o, n in zip(best["old"], best["new"])]
            geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
            print(f"  new / old nodes/s: {sum(best['old']) / sum(best['new']):.3f}x over the suite "
                  f"(per position: geometric mean {geo:.3f}x, min {min(ratios):.3f}x, max {max(ratios):.3f}x)")
        print(load_text())
    return 0


if __name__ == "__main__":
    from ref_sim.stops import guarded  # Ctrl-C, SIGTERM, SIGHUP: one line, 128 + the signal

    sys.exit(guarded("bench_core_ratio.py", main))
