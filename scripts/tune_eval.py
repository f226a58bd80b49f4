"""Choose the classic evaluation's hand-set weights by matches: each candidate change against the
current weights. (The default, fitted evaluation is fitted to games by ``scripts/train_eval.py``.)

Usage: python -m scripts.tune_eval [--pairs N] [--nodes N] [--param NAME ...] [--factor F]

For each parameter, plays ``--pairs`` openings twice (sides swapped) between the default weights
scaled by ``factor`` and by ``1/factor`` in that parameter, and the defaults, at a fixed node
count (so the result depends on the evaluation, not on the machine's load). Prints the score of
each candidate with a 95% interval; a candidate whose interval lies above 50% is an improvement.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import fields, replace

from agent.engines import AlphaBetaEngine
from agent.evaluation import DEFAULT_WEIGHTS
from agent.options import real, whole
from ref_sim.series.command import MAX_GAMES
from ref_sim.selfplay import play_pairs


def score_interval(wins: int, losses: int, draws: int) -> tuple[float, float]:
    n = wins + losses + draws
    score = (wins + draws / 2) / n
    variance = (wins * (1 - score) ** 2 + losses * score ** 2 + draws * (0.5 - score) ** 2) / n
    return score, 1.96 * math.sqrt(variance / n)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=whole(1, MAX_GAMES), default=20)
    parser.add_argument("--nodes", type=whole(1, 10 ** 9), default=15000)
    parser.add_argument("--factor", type=real(0, 100, low_open=True), default=1.5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--param", nargs="*", default=[f.name for f in fields(DEFAULT_WEIGHTS)])
    args = parser.parse_args(argv)
    print(f"base weights: {DEFAULT_WEIGHTS.as_dict()}")
    print(f"{args.pairs * 2} games per candidate at {args.nodes} nodes per move\n")
    for name in args.param:
        base = getattr(DEFAULT_WEIGHTS, name)
        for value in sorted({round(base * args.factor), round(base / args.factor)} - {base}):
            weights = replace(DEFAULT_WEIGHTS, **{name: value})
            start = time.time()
            wins, losses, draws = play_pairs(lambda weights=weights: AlphaBetaEngine(nodes=args.nodes, weights=weights,
                                                                     evaluation="classic"),
                                             lambda: AlphaBetaEngine(nodes=args.nodes, evaluation="classic"),
                                             args.pairs, seed=args.seed)
            score, margin = score_interval(wins, losses, draws)
            print(f"{name}={value:<5} (base {base:<4}) +{wins} -{losses} ={draws}  "
                  f"score {score:.3f} +/- {margin:.3f}  ({time.time() - start:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    from ref_sim.stops import guarded     # Ctrl-C, SIGTERM, SIGHUP: one line, 128 + the signal

    sys.exit(guarded("tune_eval.py", main))
