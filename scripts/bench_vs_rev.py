"""This checkout's engine against another git revision's, in one process: a paired series at a fixed time.

Usage:
  python -m scripts.bench_vs_rev [--rev main] [--games 100] [--seconds 0.1] [--seed 1] [--spec lmr=0,...]

The revision's ``agent`` package is exported (git archive) to a temporary folder, its C core built
there, and imported under another name, so both engines play in one process, move after move on
the same machine load: the arena's paired openings (``ref_sim.arena.plan_games``), fresh engines for
every game (the agent's defaults, a 64 MB table each, touched before the clock runs). ``--spec``
changes this checkout's search features (``agent.search.Features``, as the arena's engine options).
Prints the arena's summary every 10 games and at the end: Score, Elo +/- (pentanomial), Ptnml.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from agent.engines import FEATURE_OPTIONS, AlphaBetaEngine
from ref_sim.games import get_game
from agent.options import MAX_TIME_LIMIT, parse_options, real, whole
from ref_sim.series.command import MAX_GAMES
from agent.search import Features
from ref_sim import arena, stops

ROOT = Path(__file__).resolve().parent.parent

#: The other revision's package is imported under this name (its imports inside are relative).
REF_PACKAGE = "agent_ref"
#: A table both engines can clear quickly for every new game.
HASH_MB = 64


def import_revision(rev: str, into: Path):
    """``rev``'s agent package, built and imported as REF_PACKAGE; its engines module."""
    archive = into / "rev.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "archive", rev], cwd=ROOT, stdout=out, check=True)
    source = into / "source"
    with tarfile.open(archive) as tar:
        tar.extractall(source)
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=source, check=True,
                   capture_output=True)
    shutil.copytree(source / "agent", into / REF_PACKAGE)
    sys.path.insert(0, str(into))
    return importlib.import_module(f"{REF_PACKAGE}.engines")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rev", default="main", help="the git revision to play against (default main)")
    parser.add_argument("--games", type=whole(2, MAX_GAMES), default=100)
    parser.add_argument("--seconds", type=real(0, MAX_TIME_LIMIT, low_open=True), default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--spec", default="", help="this checkout's features, e.g. lmr=0,asp=0")
    args = parser.parse_args(argv)
    try:
        features = Features(**parse_options(args.spec, FEATURE_OPTIONS, "the search"))
    except ValueError as error:
        parser.error(f"--spec: {error}")
    game = get_game("uttt")
    with tempfile.TemporaryDirectory() as folder:
        reference = import_revision(args.rev, Path(folder))
        series = arena.EngineSeries(("this checkout", args.rev))
        planned = arena.plan_games(game, args.games, args.seed, game.opening_plies)
        for number, (pair, opening, first, _) in enumerate(planned, 1):
            engines = (AlphaBetaEngine(hash_mb=HASH_MB, features=features), reference.AlphaBetaEngine(hash_mb=HASH_MB))
            moves, winner = arena.play_engine_game(game, engines, opening, first, {"seconds": args.seconds})
            series.games.append(arena.EngineGame(pair, first, opening, moves, winner))
            if number % 10 == 0 or number == len(planned):
                print(f"after {number} games:", *series.report_lines(), sep="\n  ", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(stops.guarded("bench_vs_rev.py", main, sys.argv[1:]))
