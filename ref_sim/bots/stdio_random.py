"""A random player for the CodinGame stdin/stdout protocol: ``python -m ref_sim.bots.stdio_random [--seed N]``.

Each turn it reads ``oppRow oppCol``, ``N`` and N ``row col`` lines and answers one of those
lines at random; it trusts the referee's list completely and keeps no position. It says
``ready`` on stderr once it is listening, and exits 0 at the end of its input.

Started by a series runner (``ref_sim.stdio``, which puts its process id in
``UTTT_RUNNER_PID``), it also looks about once a second whether that runner still runs, while
it waits for its input: a runner killed outright (SIGKILL) closes the input with its death,
unless another process holds the pipe open, and then only this look ends the wait.  Once the
runner is gone it says so in one line on stderr and exits with code 3
(:data:`agent.exits.EXIT_ABORTED`, as our agent's).

Exit codes: 0 the input ended, 3 the series runner that started it is gone, 4 unreadable
input, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import threading
import time

from agent.exits import EXIT_ABORTED
from agent.lifeline import Lifeline


def watch_runner(lifeline: Lifeline) -> None:
    """Exit the whole process (the main thread may be blocked reading) once the runner is gone."""
    while not lifeline.lost():
        time.sleep(lifeline.interval / 4)
    print(f"stdio_random: the series runner that started me (pid {lifeline.pid}) is gone; "
          "stopping", file=sys.stderr, flush=True)
    os._exit(EXIT_ABORTED)


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
    parser = argparse.ArgumentParser(prog="python -m ref_sim.bots.stdio_random", description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=None, help="seed of the choices (default: random)")
    args = parser.parse_args(argv)
    lifeline = Lifeline()
    if lifeline.pid is not None:
        threading.Thread(target=watch_runner, args=(lifeline,), daemon=True).start()
    print("stdio_random: ready", file=sys.stderr, flush=True)
    try:
        return play(sys.stdin, sys.stdout, random.Random(args.seed))
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    sys.exit(main())
