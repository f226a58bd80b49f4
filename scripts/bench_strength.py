"""Strength through the referee simulator: our agent against the random and the seed-style bots.

Usage: python scripts/bench_strength.py [--opponents random seed] [--games 100]
                                         [--time-limit 0.5] [--out DIR] [--seed N]

Each series runs ``python -m ref_sim.match agent OPPONENT --paired`` (real files, real processes,
the referee's random openings played twice with the sides swapped), then reads the JSON game
records and prints our score, the reasons games ended, our slowest move and the targets:
at least 99% of games won against random, at least 95% of points against seed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.options import MAX_TIME_LIMIT, real, whole
from ref_sim.series.command import MAX_GAMES
from ref_sim.series import records

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"random": ("games won", 0.99), "seed": ("points", 0.95)}
OURS = "Agent1"


def run_series(opponent: str, games: int, time_limit: float, out: Path, seed: int) -> list[dict] | int:
    """The series through ``ref_sim.match`` (its own process: the series engine, the files);
    its games as ``games.jsonl`` records them, or its exit code when it did not finish."""
    command = [sys.executable, "-m", "ref_sim.match", "agent", opponent, "--games", str(games),
               "--time-limit", str(time_limit), "--paired", "--seed", str(seed), "--out", str(out), "-q"]
    code = subprocess.run(command, cwd=ROOT).returncode
    return code or records.read_games(out / "games.jsonl")[0]


def summarize(opponent: str, records: list[dict], time_limit: float) -> None:
    wins = sum(r["winner"] == OURS for r in records)
    draws = sum(r["result"] == "tie" for r in records)
    losses = len(records) - wins - draws
    points = (wins + draws / 2) / len(records)
    reasons = Counter(f"{'won' if r['winner'] == OURS else 'tie' if r['result'] == 'tie' else 'lost'}: "
                      f"{r['reason']}" for r in records)
    our_times = [m["seconds"] for r in records for m in r["moves"] if m["player"] == OURS]
    print(f"\nagent vs {opponent}, {len(records)} games at {time_limit:g} s per move")
    print(f"  +{wins} -{losses} ={draws}: {wins / len(records):.1%} of games won, {points:.1%} of points")
    for reason, count in reasons.most_common():
        print(f"  {count:4} {reason}")
    if our_times:
        print(f"  our moves: {len(our_times)}, slowest {max(our_times):.3f} s "
              f"(as the referee's 50 ms ticks saw them)")
    if opponent in TARGETS:
        what, target = TARGETS[opponent]
        value = wins / len(records) if what == "games won" else points
        print(f"  target: at least {target:.0%} of {what}: {'met' if value >= target else 'NOT met'} ({value:.1%})")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opponents", nargs="+", default=["random", "seed"])
    parser.add_argument("--games", type=whole(1, MAX_GAMES), default=100)
    parser.add_argument("--time-limit", type=real(0, MAX_TIME_LIMIT, low_open=True), default=0.5)
    parser.add_argument("--seed", type=int, default=4341)
    parser.add_argument("--out", help="keep games and records here (default: a temporary directory)")
    args = parser.parse_args(argv)
    base = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="uttt-strength-"))
    for opponent in args.opponents:
        games = run_series(opponent, args.games, args.time_limit, base / opponent, args.seed)
        if isinstance(games, int):      # ref_sim.match said why on stderr
            return games
        summarize(opponent, games, args.time_limit)
    print(f"\ngames and records in {base}")
    return 0


if __name__ == "__main__":
    from ref_sim.stops import guarded     # Ctrl-C, SIGTERM, SIGHUP: one line, 128 + the signal

    sys.exit(guarded("bench_strength.py", main))
