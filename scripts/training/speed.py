"""``speed``: nodes per second of the search with the classic and the fitted evaluation."""

from __future__ import annotations

import time
from pathlib import Path

from agent.engines import AlphaBetaEngine

#: The positions scripts/bench_speed.py measures too.
POSITIONS = Path(__file__).resolve().parent.parent / "bench_positions.txt"


def speed(nodes: int, core: str) -> None:
    """Nodes/s of the search with each evaluation on scripts/bench_positions.txt at a fixed node
    budget. The two alternate on every position (each goes first in one of two rounds) and CPU
    time is counted, so other programs' load slows both alike."""
    from agent.limits import SearchLimit
    from agent.rules import Move, Position

    suite = []
    for line in POSITIONS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            suite.append(Position.from_moves(Move.parse(m) for m in line.split(":", 1)[1].split(",")))
    print(f"speed: {len(suite)} positions x 2 rounds at {nodes} nodes, classic and fitted ({core} core)",
          flush=True)
    totals = {"classic": [0, 0.0], "fitted": [0, 0.0]}
    for order in (("classic", "fitted"), ("fitted", "classic")):
        for position in suite:
            for name in order:
                engine = AlphaBetaEngine(nodes=nodes, evaluation=name, core=core)
                started = time.process_time()
                result = engine.choose(position.copy(), SearchLimit())
                totals[name][0] += result.nodes
                totals[name][1] += time.process_time() - started
    rates = {name: count / seconds for name, (count, seconds) in totals.items()}
    for name, rate in rates.items():
        print(f"speed: {name:7} {rate:>9,.0f} nodes/s ({core} core, CPU time, {len(suite)} positions x 2 "
              f"at {nodes} nodes)")
    print(f"speed: fitted / classic = {rates['fitted'] / rates['classic']:.3f}")
