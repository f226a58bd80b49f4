"""What the WebAssembly core costs before its first move: size, and start-up in fresh processes.

Usage:
  python -m scripts.bench_wasm_start [--runs 7]

Each run is a new Python process that times, in order: importing wasmtime; reading and compiling
agent/data/core.wasm (agent.core_wasm.load); making the engine's searcher (an instance with its
table, the fitted evaluation's tables and the self-check against the Python evaluation); and a
first search to depth 1. The compiled core's searcher is timed the same way beside it, where it is
built. Printed: the module's size (and gzipped, as a web server sends it), then min and median of
each step over the runs, in milliseconds.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from agent import core, core_wasm
from agent.options import whole

ROOT = Path(__file__).resolve().parent.parent

#: One run, in a fresh process: the steps' times in ms, as a JSON object on stdout.
PROBE = r"""
import json, sys, time
times = {}
start = time.perf_counter()
def step(name):
    global start
    now = time.perf_counter()
    times[name] = (now - start) * 1000
    start = now
from agent.engines import make_evaluator
from agent.limits import SearchLimit
from agent.rules import Position
evaluator = make_evaluator("fitted")
start = time.perf_counter()
import wasmtime
step("import wasmtime")
from agent import core, core_wasm
core_wasm.load()
step("compile the module")
searcher = core.WasmAlphaBeta(evaluator, hash_mb=64)
step("searcher and self-check")
searcher.search(Position(), SearchLimit(depth=1))
step("first search, depth 1")
if core.compiled_available():
    searcher = core.CompiledAlphaBeta(evaluator, hash_mb=64)
    step("compiled core: searcher and self-check")
print(json.dumps(times))
"""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=whole(1, 100), default=7)
    args = parser.parse_args(argv)
    if not core.wasm_available():
        print(f"bench_wasm_start: {core.wasm_unavailable_reason()}", file=sys.stderr)
        return 2
    data = core_wasm.WASM_PATH.read_bytes()
    print(f"{core_wasm.WASM_PATH.relative_to(ROOT)}: {len(data):,} bytes, {len(gzip.compress(data, 9)):,} gzipped")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    runs = []
    for _ in range(args.runs):
        done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, cwd=ROOT)
        if done.returncode != 0:
            print(f"bench_wasm_start: a run failed:\n{done.stderr}", file=sys.stderr)
            return 1
        runs.append(json.loads(done.stdout))
    print(f"{args.runs} fresh processes, python {sys.version.split()[0]}, table 64 MiB; milliseconds, min / median:")
    for name in runs[0]:
        values = [run[name] for run in runs]
        print(f"  {name:40} {min(values):7.1f} / {statistics.median(values):7.1f}")
    ready = [sum(v for k, v in run.items() if not k.startswith("compiled")) for run in runs]
    print(f"  {'WebAssembly core ready and searched':40} {min(ready):7.1f} / {statistics.median(ready):7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
