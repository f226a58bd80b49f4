#!/usr/bin/env python3
"""Our agent's nodes/s beside a busy-waiting opponent, with and without ``--isolate``.

    python -m scripts.bench_isolation [--games 2] [--rounds 1] [--time-limit 1] [--spinners 2]

How it measures and what it prints: docs/measurements.md, "scripts.bench_isolation".
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from agent.options import MAX_TIME_LIMIT, real, whole
from ref_sim.series.command import MAX_GAMES
from ref_sim.series.output import records
from ref_sim.series.output.game_line import GameLine
ROOT = Path(__file__).resolve().parent.parent


def spin_forever(parent: int) -> None:
    """Busy-wait as long as ``parent`` (the bot) lives: a tight loop, no sleep."""
    while os.getppid() == parent:
        pass
    os._exit(0)


def spinner(name: str, directory: str, seed: str, count: int) -> int:
    """The busy-waiting bot: ``count - 1`` spinning helper processes, and the random player
    (ref_sim.bots.random_agent) with a spinning thread beside it: ``count`` cores' worth of appetite."""
    parent = os.getpid()
    for _ in range(max(0, count - 1)):
        if os.fork() == 0:
            spin_forever(parent)
    import threading

    from ref_sim.bots import random_agent

    threading.Thread(target=spin_forever, args=(os.getppid(),), daemon=True).start()
    return random_agent.main([name, "--dir", directory, "--seed", seed])


def series(opponent: str, args, isolate: bool, seed: int) -> list[dict]:
    """One series; its games."""
    with tempfile.TemporaryDirectory(prefix="uttt-bench-isolation-") as out:
        command = [sys.executable, "-m", "ref_sim.match", "agent", opponent, "--games",
                   str(args.games), "--time-limit", f"{args.time_limit:g}", "--seed",
                   str(seed), "--out", out, "-q"] + (["--isolate"] if isolate else [])
        done = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
        if done.returncode != 0:
            sys.exit(f"bench_isolation: the series against {opponent} failed ({done.returncode}):\n"
                     f"{done.stdout}")
        return records.read_games(Path(out, "games.jsonl"))[0]


def figures(label: str, games: list[GameLine]) -> dict:
    """Our agent's mean nodes/s and depth, each bot's mean CPU seconds per game."""
    moves = [m for g in games for m in g.moves if m["player"] == "Agent1" and "nps" in m]
    usage = [g.usage or {} for g in games]
    cpu = {name: statistics.mean(u[name]["cpu_seconds"] for u in usage if name in u)
           for name in ("Agent1", next(n for n in games[0].names if n != "Agent1"))
           if any(name in u for u in usage)}
    return {"label": label, "games": len(games), "moves": len(moves),
            "nps": statistics.mean(m["nps"] for m in moves) if moves else 0.0,
            "depth": statistics.mean(m["depth"] for m in moves) if moves else 0.0,
            "cpu": cpu}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--spinner"]:
        name, directory, seed, count = argv[1:5]
        return spinner(name, directory, seed, int(count))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     epilog=__doc__.strip().splitlines()[-1])
    parser.add_argument("--games", type=whole(1, MAX_GAMES), default=2, help="games per series")
    parser.add_argument("--rounds", type=whole(1, 1000), default=1,
                        help="times the three series take turns (default 1)")
    parser.add_argument("--time-limit", type=real(0.1, MAX_TIME_LIMIT), default=1.0, metavar="S")
    parser.add_argument("--spinners", type=whole(1, 64), default=2,
                        help="busy processes of the spinning bot (default 2: a 2-core laptop)")
    parser.add_argument("--seed", type=int, default=1, help="series seed of the first round "
                        "(round r: seed + r; the three series of a round play the same openings)")
    args = parser.parse_args(argv)
    spin = (f"{sys.executable} {Path(__file__).resolve()} --spinner {{name}} {{dir}} {{seed}} "
            f"{args.spinners}")
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; agent at "
          f"{args.time_limit:g} s per move, {args.games} games per series, {args.rounds} "
          f"round(s); the spinner keeps {args.spinners} processes busy")
    kinds = [("quiet (vs random)", "random", False), ("spinner", spin, False),
             ("spinner --isolate", spin, True)]
    played = {label: [] for label, _, _ in kinds}
    for round_ in range(args.rounds):   # in turns: the machine's other load falls on all three
        for label, opponent, isolate in kinds:
            played[label] += series(opponent, args, isolate, args.seed + round_)
    rows = [figures(label, games) for label, games in played.items()]
    quiet = rows[0]
    for row in rows:
        cpu = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in row["cpu"].items())
        share = row["nps"] / quiet["nps"] if quiet["nps"] else 0.0
        print(f"{row['label']:<18} nodes/s {row['nps']:>10,.0f} ({share:4.0%} of quiet)  "
              f"depth {row['depth']:4.1f}  over {row['moves']} moves; CPU per game: {cpu}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
