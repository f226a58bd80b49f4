"""Search speed on a fixed suite of positions from real games: nodes/s and completed depth.

Usage:
  python scripts/bench_speed.py [--seconds 1 9] [--phase opening middle endgame] [--limit N]
  python scripts/bench_speed.py --generate   # rebuild scripts/bench_positions.txt from new games

Each position is searched from a fresh engine (empty table) for each time budget. The summary
gives the mean nodes/s and the median completed depth per phase.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.engines import AlphaBetaEngine  # noqa: E402
from agent.limits import SearchLimit  # noqa: E402
from agent.rules import Move, Position  # noqa: E402
from agent.selfplay import play_game, random_opening  # noqa: E402

SUITE = Path(__file__).with_name("bench_positions.txt")
PHASES = {"opening": (6, 12), "middle": (20, 36), "endgame": (44, 60)}


def generate(games: int = 12, seed: int = 4341) -> None:
    """Play engine-vs-engine games from referee-style openings; keep one position per phase per game."""
    rng = random.Random(seed)
    lines = ["# phase: moves from the empty board (BOARD SPOT, comma separated); made by --generate"]
    for g in range(games):
        result = play_game((AlphaBetaEngine(nodes=20000), AlphaBetaEngine(nodes=20000)), random_opening(rng), g % 2)
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, nargs="+", default=[1.0, 9.0])
    parser.add_argument("--phase", nargs="+", choices=list(PHASES), default=list(PHASES))
    parser.add_argument("--limit", type=int, help="only the first N positions of each phase")
    parser.add_argument("--generate", action="store_true")
    args = parser.parse_args(argv)
    if args.generate:
        generate()
        return 0
    suite = [(phase, pos) for phase, pos in load_suite() if phase in args.phase]
    if args.limit:
        suite = [item for phase in args.phase for item in [s for s in suite if s[0] == phase][: args.limit]]
    print(f"{len(suite)} positions, budgets {args.seconds} s, python {sys.version.split()[0]}")
    print(f"{'#':>3} {'phase':8} {'ply':>3} " + " ".join(f"{f'depth@{s:g}s':>9} {'knodes/s':>9}" for s in args.seconds))
    table = {s: [] for s in args.seconds}
    for i, (phase, pos) in enumerate(suite, 1):
        cells = []
        for seconds in args.seconds:
            engine = AlphaBetaEngine()
            result = engine.choose(pos, SearchLimit.seconds(seconds))
            table[seconds].append((phase, result))
            mark = "*" if result.proven else ""
            cells.append(f"{str(result.depth) + mark:>9} {result.nodes_per_second / 1000:>9.0f}")
        print(f"{i:>3} {phase:8} {pos.ply:>3} " + " ".join(cells), flush=True)
    print("\n(* = result proven: the search stopped early)")
    for seconds, rows in table.items():
        nps = statistics.mean(r.nodes_per_second for _, r in rows)
        print(f"\n{seconds:g} s per position: mean {nps:,.0f} nodes/s over {len(rows)} positions")
        for phase in args.phase:
            depths = [r.depth for p, r in rows if p == phase]
            if depths:
                print(f"  {phase:8} median completed depth {statistics.median(depths):g} "
                      f"(min {min(depths)}, max {max(depths)}, n={len(depths)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
