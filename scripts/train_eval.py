"""Fit the "fitted" evaluation (agent/eval_fitted.py) to self-play games, from nothing to a data file.

    python -m scripts.train_eval all --dir runs/train --out agent/data/eval-v2.json  # generate, fit, write
    python -m scripts.train_eval generate --dir runs/train --games 25000  # self-play games only (resumable)
    python -m scripts.train_eval fit --dir runs/train --mix 1 0.5 0 --out runs/train/eval.json
    python -m scripts.train_eval match --data runs/train/eval.json --opponent eval-v1 --sprt 0 15 --pairs 2000
    python -m scripts.train_eval match --opponent classic --seconds 0.1 --pairs 100
    python -m scripts.train_eval speed --match-nodes 20000         # nodes/s, classic vs fitted

What each step does and prints, how it stops and resumes: docs/engine.md ("Fitting it again").
Exit codes: 0 done, 1 the cluster cannot be used (or generate cannot write its games), 2 bad
arguments or input, 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ref_sim.series.run import cluster_address
from ref_sim import stops
from agent.options import real, whole
from scripts.training.errors import InputError, StepStopped
from scripts.training.fit import DEFAULT_MIX, DEFAULT_PER_PATTERN, DEFAULT_WITHOUT, fit_command
from scripts.training.matches import match
from scripts.training.model import WEIGHTS
from scripts.training.selfplay import engine_evals, generate
from scripts.training.speed import speed

PROG = "train_eval.py"
#: More self-play games than this is a typo (25,000 take about an hour on two busy cores).
MAX_GAMES = 10_000_000
#: Node budgets above this are a typo (a move would take hours).
MAX_NODES = 10 ** 9


def strength(text: str) -> float | None:
    """--per-pattern's value: ``off``, or a pull from 0 to 10^6 examples."""
    return None if text == "off" else real(0, 1e6)(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("all", "generate", "fit", "match", "speed"))
    parser.add_argument("--dir", type=Path, default=Path("runs/train"), help="working directory (default runs/train)")
    parser.add_argument("--games", type=whole(1, MAX_GAMES), default=25000,
                        help="self-play games to generate, and to fit (default 25000)")
    parser.add_argument("--nodes", type=whole(1, MAX_NODES), default=6400,
                        help="node budget per move in self-play (default 6400)")
    parser.add_argument("--deviation", type=real(0, 1), default=0.04,
                        help="chance of a random move at each of the first 30 plies, 0-1 (default 0.04)")
    parser.add_argument("--seed", type=int, default=2, help="data seed (default 2)")
    parser.add_argument("--engine-eval", default="eval-v1", choices=engine_evals(),
                        help="evaluation the self-play engine uses: classic or a data file of agent/data "
                             "(default eval-v1)")
    cluster_address.add_cluster_options(parser, action="generate: play the games")
    parser.add_argument("--out", type=Path, default=None, help="data file to write (default DIR/eval.json)")
    parser.add_argument("--mix", type=real(0, 1), nargs="+", default=list(DEFAULT_MIX), metavar="LAMBDA",
                        help="fit: the label, LAMBDA * result + (1 - LAMBDA) * the self-play search's "
                             "opinion; several: fit each, keep the best on the held-out results "
                             f"(default {' '.join(map(str, DEFAULT_MIX))})")
    parser.add_argument("--per-pattern", type=strength, default=DEFAULT_PER_PATTERN, metavar="STRENGTH",
                        help="fit: also a logit per board pattern (up to symmetry) on top of the features', "
                             "each pulled to 0 by an L2 penalty weighing as much as STRENGTH examples; off: "
                             f"the features alone (default {DEFAULT_PER_PATTERN:g})")
    parser.add_argument("--without", nargs="*", default=list(DEFAULT_WITHOUT), choices=WEIGHTS,
                        help="fit: hold these global terms at 0 (ablation; the loss shows what they are worth); "
                             f"alone: none (default {' '.join(DEFAULT_WITHOUT)})")
    parser.add_argument("--pairs", type=whole(1, MAX_GAMES), default=50,
                        help="match: openings, each played twice (default 50)")
    parser.add_argument("--match-nodes", type=whole(1, MAX_NODES), default=4000,
                        help="match: the fitted side's nodes per move; speed: both sides' (default 4000)")
    parser.add_argument("--opponent-nodes", "--classic-nodes", type=whole(1, MAX_NODES), default=None,
                        help="match: the opponent's nodes per move (default: --match-nodes)")
    parser.add_argument("--seconds", type=real(0, 3600, low_open=True), default=None,
                        help="match: seconds per move for both sides instead of node budgets")
    parser.add_argument("--sprt", type=float, nargs=2, metavar=("ELO0", "ELO1"), default=None,
                        help="match: stop when the SPRT of ELO0 against ELO1 (alpha = beta = 0.05, pentanomial) "
                             "decides; --pairs is then a maximum")
    parser.add_argument("--core", choices=("python", "compiled", "auto"), default="python",
                        help="speed: the search core (default python: the evaluation as written here)")
    parser.add_argument("--opponent", choices=("seed", *engine_evals()), default="classic",
                        help="match: the other side: classic (default), seed (the seed bot at depth 3) or a "
                             "data file of agent/data (eval-v1)")
    parser.add_argument("--data", type=Path, default=None, help="match: the fitted side's data file (default: the packaged one)")
    return parser


def main(argv=None) -> int:
    """The command; every stop (Ctrl-C, SIGTERM, SIGHUP) and bad input is one line on stderr."""
    return stops.guarded(PROG, run, sys.argv[1:] if argv is None else list(argv))


def run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        steps(args, argv)
    except StepStopped as stopped:          # the step said what it kept
        print(f"{PROG}: {stops.said(stopped.interrupt)} {stopped.detail}", file=sys.stderr)
        return stops.exit_code(stopped.interrupt)
    except InputError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    return 0


def steps(args, argv: list[str]) -> None:
    started = time.time()
    if args.step in ("all", "generate"):
        generate(args.dir, args.games, args.nodes, args.seed, args.deviation, args.engine_eval, cluster_address.cluster_target(args),
                 again=stops.command_line("scripts.train_eval", *argv))
    if args.step in ("all", "fit"):
        fit_command(args.dir, args.out or args.dir / "eval.json", args)
    if args.step == "speed":
        speed(args.match_nodes, args.core)
    if args.step == "match":
        match(args.pairs, args.match_nodes, args.opponent_nodes or args.match_nodes, args.seed, args.data,
              args.opponent, args.seconds, args.sprt)
    print(f"train_eval: {args.step} took {time.time() - started:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
