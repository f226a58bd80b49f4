"""Our agent at CodinGame's time control through the stdin/stdout referee (ref_sim.stdio).

    python -m scripts.bench_codingame [--turn-ms 100] [--first-turn-ms 1000] [--margin-ms M]
                                      [--games 1] [--seed 1] [--out DIR] [--hog]

Plays ``--games`` full games against the random stdio player and as many against our own agent
(agent 1 moves first in odd games), then prints for each opponent: the result, our nodes/s
(mean over our searched moves), the depth our agent completed on each of its moves (read from
its stderr lines), and the slowest turn as the referee measured it, next to the agent's own
measure (from its first input line to its answer) and the limit, the time-outs, invalid moves
and crashes, and how much the agent kept back for the pauses it measured. Figures only: no
assertion. The machine's load shows in the slowest turn; run it on an idle machine for
CodinGame-like conditions, and with ``--hog`` (a busy loop on another core for the whole run)
for a loaded one: ``--hog --games 20`` should show no time-out.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from agent.options import real, whole
from ref_sim.series.command import MAX_GAMES
from ref_sim.referees import codingame_shell
from ref_sim import stdio
from ref_sim.series import loop, realbots, specs
from ref_sim.series.codingame_games import StdioGames, StdioGameSettings
from ref_sim.series.output.game_line import GameLine
from ref_sim.series.run import scheduler


def agent_command(args) -> str:
    command = "{python} -m agent --protocol codingame --turn-ms {turn_ms} --first-turn-ms {first_turn_ms}"
    if args.margin_ms is not None:
        command += f" --margin-ms {args.margin_ms:g}"
    return command


def report(title: str, games: list[GameLine], name: str, args, logs: Path) -> None:
    mine = [m for g in games for m in g.moves if m["player"] == name]
    searched = [m for m in mine if "nps" in m]
    later = [m for g in games for m in [m for m in g.moves if m["player"] == name][1:]]
    first = [m for g in games for m in [m for m in g.moves if m["player"] == name][:1]]
    print(f"== {title}")
    for game in games:
        print(f"  game {game.game}: {codingame_shell.describe(game)}")
    if searched:
        print(f"  nodes/s: mean {statistics.mean(m['nps'] for m in searched):,.0f}, "
              f"median {statistics.median(m['nps'] for m in searched):,.0f} over {len(searched)} moves")
        print("  depth per move: " + " ".join(str(m["depth"]) for m in searched))
    if later:
        slow = max(later, key=lambda m: m["ms"])
        print(f"  slowest turn (referee): {slow['ms']:.1f} ms of {args.turn_ms:g} "
              f"(agent's own measure {1000 * slow.get('agent_seconds', float('nan')):.1f} ms); "
              f"median {statistics.median(m['ms'] for m in later):.1f} ms")
    if first:
        print(f"  first turn (referee): {max(m['ms'] for m in first):.1f} ms of {args.first_turn_ms:g}")
    lost = {reason: sum(g.loser == name and g.reason == reason for g in games)
            for reason in (codingame_shell.TIME_OUT, codingame_shell.INVALID_MOVE, codingame_shell.CRASHED)}
    print(f"  time-outs {lost[codingame_shell.TIME_OUT]} of {len(games)} games, invalid moves "
          f"{lost[codingame_shell.INVALID_MOVE]}, crashes {lost[codingame_shell.CRASHED]}")
    kept = [int(ms) for g in games
            for ms in re.findall(r"kept back (\d+) ms", read_log(logs, g, name))]
    if kept:
        print(f"  kept back for pauses: median {statistics.median(kept):.0f} ms, most {max(kept)} ms "
              f"({len(kept)} of {len(later)} later turns)")
    for game in games:
        if game.reason in (codingame_shell.TIME_OUT, codingame_shell.INVALID_MOVE, codingame_shell.CRASHED) or game.notes:
            print(f"  !! game {game.game}: {game.reason} {game.notes}")


def read_log(logs: Path, game: GameLine, name: str) -> str:
    """The agent's stderr in that game (``logs``: its series' logs folder, game-NNNN-NAME.log)."""
    try:
        return (logs / f"game-{game.game:04d}-{name}.log").read_text(errors="replace")
    except OSError:
        return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turn-ms", type=real(0, stdio.MAX_TURN_MS, low_open=True), default=stdio.DEFAULT_TURN_MS)
    parser.add_argument("--first-turn-ms", type=real(0, stdio.MAX_TURN_MS, low_open=True), default=stdio.DEFAULT_FIRST_TURN_MS)
    parser.add_argument("--grace-ms", type=real(0, stdio.MAX_TURN_MS), default=stdio.DEFAULT_GRACE_MS)
    parser.add_argument("--margin-ms", type=real(0, stdio.MAX_TURN_MS), default=None, help="the agent's margin (default: its own)")
    parser.add_argument("--games", type=whole(1, MAX_GAMES), default=1, help="games against each opponent (default 1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=None)
    parser.add_argument("--hog", action="store_true", help="keep a busy loop running on another core meanwhile")
    args = parser.parse_args(argv)
    if args.out is None:        # the games' files only while it runs: --out keeps them
        with tempfile.TemporaryDirectory(prefix="uttt-bench-cg-") as temp:
            return run(args, Path(temp), kept=False)
    return run(args, Path(args.out), kept=True)


def play_series(bots: list[specs.StdioSpec], games: int, out: Path, seed: int,
                settings: StdioGameSettings) -> list[dict]:
    """Games 1..``games`` (agent 1 first in odd games) as ``uttt-stdio`` plays them: its games
    (:class:`StdioGames`) on the series engine (:func:`ref_sim.series.loop.play_games`), one at a
    time here, each appended to ``out/games.jsonl``; a stop (Ctrl-C) aborts the game in play and
    goes on."""
    series = StdioGames(bots, realbots.side_names(bots), seed, settings, out)
    played: list[dict] = []

    def finished(k: int, ticket) -> None:
        game = series.line(runner, ticket, k)
        if game is not None:
            loop.append_game(out / "games.jsonl", game)
            played.append(game)

    with scheduler.LocalRunner(1) as runner:    # the games in a thread: a stop lands here
        stopped = loop.play_games(runner, range(1, games + 1),
                                  lambda k: series.submit(runner, k, must_start=not played),
                                  finished, series.stop)
    stopped.raise_error()
    return played


def run(args, out: Path, kept: bool) -> int:
    print(f"{os.cpu_count()} cores, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}"
          f"{', with a CPU hog' if args.hog else ''}; "
          f"{f'files in {out}' if kept else 'files not kept (--out DIR keeps them)'}")
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.hog else None
    try:
        ours = specs.StdioSpec("Agent", agent_command(args), "agent")
        for title, opponent in (("vs random", specs.stdio_spec("random")),
                                ("vs our agent", specs.StdioSpec("Self", agent_command(args), "agent"))):
            where = out / title.replace(" ", "-")
            where.mkdir(parents=True, exist_ok=True)
            settings = StdioGameSettings(args.turn_ms, args.first_turn_ms, args.grace_ms)
            games = play_series([ours, opponent], args.games, where, args.seed, settings)
            report(title, games, "Agent1", args, where / "logs")
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    print(f"load average at the end {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    from ref_sim.stops import guarded     # Ctrl-C, SIGTERM, SIGHUP: one line, 128 + the signal

    sys.exit(guarded("bench_codingame.py", main))
