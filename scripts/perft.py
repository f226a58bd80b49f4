"""Count leaf positions N plies from the empty board with the agent's fast rules.

Usage: python -m scripts.perft N [--divide] [--variant wpi|codingame]
The last line ends with the count. Expected (docs/protocol.md, "The rules, as the referee codes
them"): 81, 720, 6336, 55080, 473256, 4020960, 33782544, 281067408 for N = 1..8, for both rule
variants (they differ only in how a game with all boards decided ends, which cannot happen within 8
plies).
"""

from __future__ import annotations

import argparse
import sys
import time

from agent.options import whole
from agent.rules import VARIANTS, WPI, Move, Position, perft


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("depth", type=whole(0, 81))
    parser.add_argument("--divide", action="store_true", help="print the count below each first move")
    parser.add_argument("--variant", choices=VARIANTS, default=WPI, help="rules variant (default: wpi)")
    args = parser.parse_args(argv)
    position = Position(args.variant)
    start = time.perf_counter()
    if args.divide and args.depth > 0:
        total = 0
        for move in position.legal_moves():
            position.push(move)
            count = perft(position, args.depth - 1)
            position.pop()
            total += count
            print(f"{Move.from_index(move)}: {count}")
    else:
        total = perft(position, args.depth)
    elapsed = time.perf_counter() - start
    print(f"time {elapsed:.2f} s, {total / max(elapsed, 1e-9):,.0f} leaves/s")
    print(f"perft {args.depth}: {total}")
    return 0


if __name__ == "__main__":
    from ref_sim.stops import guarded     # Ctrl-C, SIGTERM, SIGHUP: one line, 128 + the signal

    sys.exit(guarded("perft.py", main))
