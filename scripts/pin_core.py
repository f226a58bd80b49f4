"""Pin a core build's fixed-depth results for tests/test_core_pins.py.

Usage:
  python -m scripts.pin_core [--core main] [--out tests/core_pins.json]

``--core`` is a built core (path to an agent/_core*.so or .pyd) or a git revision, built as
scripts/bench_core_ratio.py builds one. The pins are searches deeper than the pure-Python search
can check in a test, on the benchmark positions, including searches whose table is small enough to
replace entries and a game played with one table throughout: what a faster core must still find,
node for node. They were written from main's core before its speed work (516d79d); the test runs
the same cases on the core this checkout builds.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from agent import core
from agent.engines import make_evaluator
from agent.limits import SearchLimit
from scripts.bench_core_ratio import load_build
from scripts.bench_speed import load_suite

ROOT = Path(__file__).resolve().parent.parent

#: name: (evaluation, table slots, depth). A table of 2^10 slots replaces entries at these depths.
CASES = {
    "fitted": ("fitted", 1 << 20, 11),
    "classic": ("classic", 1 << 20, 9),
    "fitted-small-table": ("fitted", 1 << 10, 10),
}
#: One engine searches every position of the suite's first game line in turn (table, its ages and
#: the history carried over), with a small table.
GAME = ("fitted", 1 << 12, 8)


def outcome(result) -> list:
    return [result.move, result.score, result.depth, result.nodes, list(result.pv), result.proven]


def game_positions():
    """The positions along the suite's longest line: its first endgame position's moves."""
    phase, last = next((phase, pos) for phase, pos in load_suite() if phase == "endgame")
    positions, pos = [], last.copy()
    while pos.ply:
        pos.pop()
        positions.append(pos.copy())
    return positions[::-1]


def run_case(name: str, module=None) -> dict:
    """One pinned case's results with a core module (default: this checkout's): ``{name: [...]}``,
    and for the game ``game-replaced`` too (the table entries its one engine replaced)."""
    if name == "game":
        evaluation, slots, depth = GAME
        engine = core.CompiledAlphaBeta(make_evaluator(evaluation), tt_slots=slots, prefault=False,
                                        core_module=module)
        return {"game": [outcome(engine.search(pos, SearchLimit(depth=depth))) for pos in game_positions()],
                "game-replaced": engine.tt_replaced}
    evaluation, slots, depth = CASES[name]
    evaluator = make_evaluator(evaluation)
    return {name: [outcome(core.CompiledAlphaBeta(evaluator, tt_slots=slots, prefault=False, core_module=module)
                           .search(pos, SearchLimit(depth=depth))) for _, pos in load_suite()]}


def run_cases(module=None) -> dict:
    """Every pinned case's results with a core module (default: this checkout's)."""
    pins = {}
    for name in [*CASES, "game"]:
        pins.update(run_case(name, module))
    return pins


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--core", default="main", help="a built core's path or a git revision (default: main)")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "core_pins.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="core_pin_") as tmp:
        module, text = load_build(args.core, Path(tmp), "pinned")
        pins = run_cases(module)
    pins = {"core": text, "cases": {**{k: list(v) for k, v in CASES.items()}, "game": list(GAME)}, **pins}
    args.out.write_text(json.dumps(pins, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {args.out}: {sum(len(v) for v in pins.values() if isinstance(v, list) and v and isinstance(v[0], list))} "
          f"searches of {text}; {pins['game-replaced']} entries replaced in the game")
    return 0


if __name__ == "__main__":
    sys.exit(main())
