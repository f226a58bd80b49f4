"""Command line of the referee simulator: one headless game in a directory.

    python -m ref_sim NAME1 NAME2 [--dir DIR] [--time-limit SECONDS] [--seed N]
                      [--linger] [--busy-poll] [--record FILE] [-q]
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from ref_sim.referee import Printer, run_game

#: A player name: one token usable in a file name ("NAME.go") and in "NAME BOARD SPOT".
NAME_PATTERN = re.compile(r"[^\s/\\:*?\"<>|\x00]+")


def check_name(name: str) -> str | None:
    """None if ``name`` can be a player name, else why not."""
    if not name:
        return "a name cannot be empty"
    if not NAME_PATTERN.fullmatch(name) or name in (".", ".."):
        return (f"bad name {name!r}: use one token without spaces or "
                "any of / \\ : * ? \" < > |")
    return None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ref_sim",
        description="Referee one game of Ultimate Tic-Tac-Toe through files, exactly like "
                    "the CS 4341 referee v7 (start the two agents first).")
    parser.add_argument("name1", help="first player's name (the coin flip decides who starts)")
    parser.add_argument("name2", help="second player's name")
    parser.add_argument("--dir", default=".", help="game directory (default: current)")
    parser.add_argument("--time-limit", type=float, default=10.0, metavar="SECONDS",
                        help="seconds per move, may be below 1 (default 10)")
    parser.add_argument("--seed", type=int, help="seed for the coin flip and the opening")
    parser.add_argument("--linger", action="store_true",
                        help="after the end, keep running like the real referee until Ctrl-C")
    parser.add_argument("--busy-poll", action="store_true",
                        help="burn a core between ticks like the real referee")
    parser.add_argument("--record", metavar="FILE", help="save the game record as JSON")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print only the final result line")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in (args.name1, args.name2):
        problem = check_name(name)
        if problem:
            parser.error(problem)
    if args.name1 == args.name2:
        parser.error(f"the two names must differ (both are {args.name1!r})")
    if not os.path.isdir(args.dir):
        parser.error(f"no such directory: {args.dir}")
    if not args.time_limit > 0:
        parser.error("--time-limit must be positive")
    try:
        record = run_game(args.dir, args.name1, args.name2, time_limit=args.time_limit,
                          seed=args.seed, linger=args.linger, busy_poll=args.busy_poll,
                          on_event=Printer(boards=not args.quiet))
    except KeyboardInterrupt:
        print("Interrupted: protocol files deleted, no end_game written.", file=sys.stderr)
        return 130
    if args.record:
        record.save(args.record)
    return 0 if record.result != "aborted" else 1


if __name__ == "__main__":
    sys.exit(main())
