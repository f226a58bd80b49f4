"""A random player for the CodinGame stdin/stdout protocol: ``python -m ref_sim.stdio_random [--seed N]``.

Each turn it reads ``oppRow oppCol``, ``N`` and N ``row col`` lines and answers one of those
lines at random; it trusts the referee's list completely and keeps no position. It says
``ready`` on stderr once it is listening, and exits 0 at the end of its input.
"""

from __future__ import annotations

import argparse
import random
import sys


def play(stdin, stdout, rng: random.Random) -> int:
    """Answer turns until the input ends; returns the exit code (0, or 4 for unreadable input)."""
    while True:
        line = stdin.readline()
        if not line:
            return 0
        try:
            count = int(stdin.readline())
            actions = [stdin.readline().split() for _ in range(count)]
            row, col = rng.choice(actions)
        except (ValueError, IndexError):
            print("stdio_random: unreadable turn input", file=sys.stderr)
            return 4
        stdout.write(f"{row} {col}\n")
        stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ref_sim.stdio_random", description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=None, help="seed of the choices (default: random)")
    args = parser.parse_args(argv)
    print("stdio_random: ready", file=sys.stderr, flush=True)
    try:
        return play(sys.stdin, sys.stdout, random.Random(args.seed))
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    sys.exit(main())
