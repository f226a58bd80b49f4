"""How early the search proves a game's result: plies before the end at which it first reports one.

Usage:
  python -m scripts.bench_proof [--games 40] [--seconds 0.1 | --nodes N] [--seed S] SPEC [SPEC ...]
  python -m scripts.bench_proof --games 40 --seconds 0.1 solve=0 solve=14

Each SPEC is a set of search features (agent.search.Features, as the arena's engine options:
``solve=14,lmr=1``; ``default`` for the defaults). Every SPEC plays out the same referee-style
openings in self-play (a fresh engine per side; the SPECs take turns, opening by opening, so that
the machine's load hits them alike), and for each game the first move whose
search reports a proven result (a forced win or loss, or the whole game searched) is noted as
plies before the game's last move. The summary per SPEC: games with a proof, the mean and median
of that distance (decisive games and draws apart), and the mean depth the searches completed.
At ``--seconds`` the machine's load shifts the figures; ``--nodes`` does not.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys

from agent.engines import FEATURE_OPTIONS, AlphaBetaEngine
from agent.limits import SearchLimit
from agent.options import MAX_TIME_LIMIT, parse_options, real, whole
from ref_sim.series.command import MAX_GAMES
from agent.rules import Position
from agent.search import Features
from ref_sim import stops
from ref_sim.series.openings import cell_opening


def features_from(spec: str) -> Features:
    """``solve=14,lmr=1`` (or ``default``) -> Features; ValueError (one line, with the features
    and their ranges) otherwise: the alphabeta engine's own options (agent.engines)."""
    if spec == "default":
        return Features()
    return Features(**parse_options(spec, FEATURE_OPTIONS, "the search"))


def proof_distance(opening, features: Features, seconds: float | None, nodes: int | None):
    """Play one self-play game at ``nodes`` or else ``seconds`` per move; return (plies before the
    end of the first proof or None, the game's winner or None, the depths the searches completed)."""
    engines = [AlphaBetaEngine(nodes=nodes, hash_mb=64, features=features) for _ in range(2)]
    position = Position.from_moves(opening)
    first_proof, depths = None, []
    while position.winner is None:
        result = engines[position.turn].choose(position, SearchLimit() if nodes else SearchLimit.seconds(seconds))
        depths.append(result.depth)
        if result.proven and first_proof is None:
            first_proof = position.ply
        position.push(result.move)
    end = position.ply
    winner = position.winner if position.winner in (0, 1) else None
    return (None if first_proof is None else end - 1 - first_proof), winner, depths


def describe(values) -> str:
    if not values:
        return "none"
    return f"mean {statistics.mean(values):5.1f}, median {statistics.median(values):4.1f} (n={len(values)})"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("specs", nargs="+", metavar="SPEC")
    parser.add_argument("--games", type=whole(1, MAX_GAMES), default=40)
    effort = parser.add_mutually_exclusive_group()
    effort.add_argument("--seconds", type=real(0, MAX_TIME_LIMIT, low_open=True), default=0.1,
                        help="seconds per move (default 0.1)")
    effort.add_argument("--nodes", type=whole(1), help="nodes per move instead")
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args(argv)
    try:
        specs = [(spec, features_from(spec)) for spec in args.specs]
    except ValueError as error:
        parser.error(str(error))
    rng = random.Random(args.seed)
    openings = [cell_opening(rng) for _ in range(args.games)]
    effort = f"{args.nodes:,} nodes" if args.nodes else f"{args.seconds:g} s"
    print(f"{args.games} self-play games per spec at {effort} per move")
    # Each opening is played by every SPEC in turn, so that a change of load hits them alike.
    found = {spec: ([], [], [], []) for spec, _ in specs}  # decisive, drawn, never proven, depths
    for opening in openings:
        for spec, features in specs:
            decisive, drawn, unproven, depths = found[spec]
            distance, winner, game_depths = proof_distance(opening, features, args.seconds, args.nodes)
            depths += game_depths
            if distance is None:
                unproven.append(opening)
            else:
                (drawn if winner is None else decisive).append(distance)
    for spec, (decisive, drawn, unproven, depths) in found.items():
        print(f"{spec:>16}: first proof, plies before the end: decisive {describe(decisive)}; "
              f"drawn {describe(drawn)}; all {describe(decisive + drawn)}; never proven {len(unproven)}; "
              f"mean depth {statistics.mean(depths):.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(stops.guarded("bench_proof.py", main, sys.argv[1:]))
