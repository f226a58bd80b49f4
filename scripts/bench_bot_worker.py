"""What running a bot's choose() in a child process costs per move (agent/bot.py, agent/bot_worker.py).

    python -m scripts.bench_bot_worker [--moves 300] [--kills 20] [--seed 1] [--series]

Times ``ChooseEngine.choose`` around a choose() that answers at once (the first legal move), over
the positions of random games, three ways: called directly in this thread (no protection at
all), in a thread of its own joined with a timeout (the old agent.bot, which a GIL-holding call
or sys.exit still beat), and in the worker process (now). Then the replacement: ``--kills``
times a choose() that never returns is killed at a short deadline, and the next turn pays for
the new worker's fork; and what making an engine costs (the starter and the first worker, before
the game). With ``--series``, also the seconds a bot that sleeps 90 % of its time is given per turn
in one game of each protocol against the random player (``ref_sim.stdio`` at 100 ms turns,
``ref_sim.match`` at 1 s): the time the protocols keep back for pauses shows there. Figures only:
no assertion. Milliseconds; the machine's load shows in the tails.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent import bot_worker
from agent.bot import ChooseEngine, move_index
from agent.limits import SearchLimit
from agent.options import whole
from agent.rules import Position

#: The deadline of a timed turn: far, so that only the cost is measured.
PLENTY = 10.0


def first_move(position, seconds):
    return position.moves()[0]


def positions(count: int, rng: random.Random) -> list[Position]:
    """``count`` positions from random games, every ply of each."""
    found: list[Position] = []
    while len(found) < count:
        position = Position()
        while position.winner is None and len(found) < count:
            found.append(position.copy())
            position.push(rng.choice(list(position.legal_moves())))
    return found


def milliseconds(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return (f"median {1000 * statistics.median(ordered):7.3f}  p90 {1000 * p90:7.3f}  "
            f"max {1000 * ordered[-1]:7.3f}  (n={len(ordered)})")


def timed(call, items) -> list[float]:
    times = []
    for item in items:
        started = time.perf_counter()
        call(item)
        times.append(time.perf_counter() - started)
    return times


def in_a_thread_engine() -> ChooseEngine:
    """The old path: choose() in a thread of this process."""
    can_fork, bot_worker.CAN_FORK = bot_worker.CAN_FORK, False
    try:
        return ChooseEngine(first_move)
    finally:
        bot_worker.CAN_FORK = can_fork


def never_returns(position, seconds):
    while True:
        pass


ROOT = Path(__file__).resolve().parent.parent

SLEEPY_BOT = """\
import random, sys, time
from agent.bot import run
def choose(position, seconds):
    print("seconds given %.4f" % seconds, file=sys.stderr, flush=True)
    time.sleep(0.9 * seconds)
    return random.choice(position.moves())
if __name__ == "__main__":
    run(choose)
"""


def seconds_given(runner: str, *argv: str) -> list[float]:
    """The seconds the sleepy bot was given on each of its turns but the first, over one game."""
    with tempfile.TemporaryDirectory() as work:
        Path(work, "sleepy_bot.py").write_text(SLEEPY_BOT, encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        subprocess.run([sys.executable, "-m", f"ref_sim.{runner}", argv[0], "random", *argv[1:], "--games", "1",
                        "--seed", "1", "--out", "out", "-q"], cwd=work, env=env, capture_output=True, timeout=600)
        logs = "".join(path.read_text(errors="replace") for path in Path(work, "out", "logs").glob("*.log"))
    return [float(value) for value in re.findall(r"seconds given ([0-9.]+)", logs)][1:]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--moves", type=whole(1, 100_000), default=300, help="timed turns per way (default 300)")
    parser.add_argument("--kills", type=whole(1, 1000), default=20, help="worker replacements timed (default 20)")
    parser.add_argument("--seed", type=whole(0, 2**32 - 1), default=1)
    parser.add_argument("--series", action="store_true", help="also the seconds a bot is given in real games")
    args = parser.parse_args(argv)
    boards = positions(args.moves, random.Random(args.seed))
    print(f"choose() answering at once, {args.moves} positions of random games; per move, ms:")

    direct = timed(lambda position: move_index(first_move(position.copy(), PLENTY)), boards)
    print(f"  direct call, no protection   {milliseconds(direct)}")
    thread = in_a_thread_engine()
    in_thread = timed(lambda position: thread.choose(position, SearchLimit.seconds(PLENTY)), boards)
    print(f"  thread + join (old)          {milliseconds(in_thread)}")
    if not bot_worker.CAN_FORK:
        print("  worker process: not on this system (no fork)")
        return 0
    started = time.perf_counter()
    engine = ChooseEngine(first_move)
    made = time.perf_counter() - started
    try:
        in_worker = timed(lambda position: engine.choose(position, SearchLimit.seconds(PLENTY)), boards)
        print(f"  worker process (now)         {milliseconds(in_worker)}")
        extra = statistics.median(in_worker) - statistics.median(direct)
        print(f"  worker less direct call      median {1000 * extra:.3f} ms")
    finally:
        engine.close()
    print(f"making the engine (starter + first worker, before the game): {1000 * made:.1f} ms")

    hung = ChooseEngine(never_returns)
    stopped, next_turn = [], []
    try:
        workers = hung._workers
        for _ in range(args.kills):
            started = time.perf_counter()
            try:
                hung.choose(boards[0], SearchLimit.seconds(0.02))
            except TimeoutError:
                pass
            stopped.append(time.perf_counter() - started - 0.02)
            started = time.perf_counter()
            workers._start_worker()  # what the next turn does first
            workers._wait_hello(time.perf_counter() + PLENTY)
            next_turn.append(time.perf_counter() - started)
    finally:
        hung.close()
    print(f"a never-returning choose(), {args.kills} times; ms:")
    print(f"  from its deadline to the kill done  {milliseconds(stopped)}")
    print(f"  the next turn's new worker (fork until ready)  {milliseconds(next_turn)}")
    if args.series:
        python = sys.executable
        for title, runner, argv, _planned in (
                ("CodinGame, 100 ms turns (80 ms planned)", "stdio",
                 [f"{python} sleepy_bot.py --protocol codingame"], 0.080),
                ("file protocol, 1 s limit (0.8 s planned)", "match",
                 [f"{python} sleepy_bot.py {{name}} --dir {{dir}} --time-limit {{time_limit}}", "--time-limit", "1"],
                 0.8)):
            given = seconds_given(runner, *argv)
            if given:
                print(f"a bot sleeping 90 % of its time, {title}: given median {statistics.median(given):.3f} s, "
                      f"min {min(given):.3f} s over {len(given)} turns")
            else:
                print(f"a bot sleeping 90 % of its time, {title}: no turn logged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
