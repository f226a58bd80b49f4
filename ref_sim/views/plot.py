"""Plots of a series of games: the running score with its confidence band, and move times.

    python -m ref_sim.plot SERIES.jsonl [--out plot.png|plot.svg] [--agent NAME]

Needs matplotlib (``pip install -e '.[plot]'``). What the panels show, and why the band is a
Wilson interval: docs/viewing.md, "As text, pictures and plots".
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from agent.cli_common import OneLineParser
from ref_sim.series.stats import match_stats
from ref_sim.series.output import records
from ref_sim.series.output.game_line import GameLine
from ref_sim.views import render
from ref_sim.entry_point import entry_point, prog
from ref_sim.series.output.strict_json import RecordError
from ref_sim.views.show import load_games, player_names

MODULE = "ref_sim.plot"
AGENT_COLOURS = ("#d62839", "#1d5fd1")


def load_series(path) -> list[GameLine]:
    """The game records of a series' folder, its games.jsonl, or one game's record (read as
    every view reads them, :func:`ref_sim.series.output.records.games_source`); the records of a folder that
    holds only game-*.json files (a series' logs/) too."""
    path = Path(path)
    if path.is_dir() and not (path / "games.jsonl").is_file() and any(path.glob("game-*.json")):
        return [game for file in sorted(path.glob("game-*.json")) for game in load_games(file).games]
    return load_games(path).games


def game_score(record: GameLine, agent: str) -> float | None:
    """1, 0.5 or 0 for ``agent`` in ``record``; None if the game has no result (aborted)."""
    if record.result == "tie":
        return 0.5
    if record.result == "win":
        return 1.0 if record.winner == agent else 0.0
    return None


def wilson(mean: float, n: int, z: float = match_stats.Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``mean`` over ``n`` trials (95 % by default).

    >>> [round(x, 3) for x in wilson(1.0, 20)]
    [0.839, 1.0]
    """
    z2 = z * z
    centre = (mean + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(mean * (1 - mean) / n + z2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def running_score(scores: list[float]) -> list[tuple[float, float, float]]:
    """(mean, low, high) after each game: the running mean and its 95 % Wilson interval.

    >>> [tuple(round(x, 2) for x in row) for row in running_score([1.0, 0.0])]
    [(1.0, 0.21, 1.0), (0.5, 0.09, 0.91)]
    """
    out = []
    total = 0.0
    for n, score in enumerate(scores, 1):
        total += score
        out.append((total / n, *wilson(total / n, n)))
    return out


def agents(records: list[GameLine]) -> tuple[str, str]:
    """The two agents of a series, A first.

    A is agent 1 of the match runner's ``"agents"`` list when the records have one, else
    the first name of the first game (game 1 gives the names in the runner's order).
    """
    listed = records[0].agents
    if len(listed) == 2 and all(agent["name"] for agent in listed):
        return str(listed[0]["name"]), str(listed[1]["name"])
    names = [str(n) for n in records[0].names or player_names(records[0])]
    if len(names) != 2:
        raise RecordError("the first game does not name two players")
    return names[0], names[1]


def move_times(records: list[GameLine]) -> dict[str, list[tuple[int, float]]]:
    """For each player, (move number, seconds) of every timed move of the series."""
    times: dict[str, list[tuple[int, float]]] = {}
    for record in records:
        first = len(record.opening or []) + 1
        for number, move in enumerate(record.moves, first):
            seconds = move.get("seconds")
            if seconds is None and _number(move.get("ms")):
                seconds = move["ms"] / 1000         # a uttt-stdio game times its turns in ms
            if isinstance(seconds, (int, float)) and math.isfinite(seconds):
                times.setdefault(str(move.get("player")), []).append((number, float(seconds)))
    return times


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def time_limit(records: list[GameLine]) -> float | None:
    """The time limit per move if every record that gives one gives the same."""
    limits = {record.turn_ms / 1000 if _number(record.turn_ms) else record.time_limit
              for record in records if _number(record.time_limit) or _number(record.turn_ms)}
    return limits.pop() if len(limits) == 1 else None


def plot(records: list[GameLine], out, agent: str | None = None) -> str:
    """Draw the two panels for ``records`` into ``out`` (.png or .svg); return a summary line."""
    if not records:
        raise RecordError("no games to plot")
    a, b = agents(records)
    if agent is not None:
        if agent not in (a, b):
            raise RecordError(f"--agent {agent!r} plays no game of this series "
                              f"(the agents are {a} and {b})")
        if agent == b:
            a, b = b, a
    Figure, FigureCanvasAgg = render.require_matplotlib()

    played = [(index, score) for index, record in enumerate(records, 1)
              if (score := game_score(record, a)) is not None]
    wins = sum(1 for _, s in played if s == 1.0)
    losses = sum(1 for _, s in played if s == 0.0)
    draws = len(played) - wins - losses
    band = running_score([s for _, s in played])
    headline = match_stats.summary_lines((a, b), wins, losses, draws)[0]   # as the runners print it

    figure = Figure(figsize=(9, 7.5), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    top, bottom = figure.subplots(2, 1, height_ratios=(1, 1.1))

    x = [index for index, _ in played]
    if played:
        means, lows, highs = zip(*band)
        top.fill_between(x, lows, highs, color=AGENT_COLOURS[0], alpha=0.18, linewidth=0,
                         step=None, label="95% confidence band")
        top.plot(x, means, color=AGENT_COLOURS[0], linewidth=2, marker="o" if len(x) <= 40
                 else None, markersize=3.5, label=f"score of {a} (running mean)")
    top.axhline(0.5, color="#6b7280", linewidth=1, linestyle="--", label="even")
    top.set_ylim(-0.02, 1.2)              # room for the legend above the data
    top.set_yticks([0, 0.25, 0.5, 0.75, 1])
    top.set_xlim(0.5, max(len(records), 1) + 0.5)
    top.set_xlabel("game")
    top.set_ylabel(f"score of {a}")
    top.set_title(headline, fontsize=12, fontweight="bold", loc="left")
    top.grid(True, alpha=0.3)
    top.legend(loc="upper right", fontsize=9, frameon=False, ncols=3)
    if len(records) <= 30:
        top.set_xticks(range(1, len(records) + 1))

    times = move_times(records)
    for colour, name in zip(AGENT_COLOURS, (a, b)):
        points = times.get(name, [])
        if points:
            numbers, seconds = zip(*points)
            bottom.scatter(numbers, seconds, s=10, alpha=0.55, color=colour, linewidths=0,
                           label=f"{name} ({len(points)} moves, "
                                 f"max {max(seconds):.2f} s)")
    for name, points in times.items():        # a third name, e.g. a hand-edited record
        if name not in (a, b) and points:
            numbers, seconds = zip(*points)
            bottom.scatter(numbers, seconds, s=10, alpha=0.55, color="#6b7280", label=name)
    limit = time_limit(records)
    if limit is not None:
        bottom.axhline(limit, color="#111827", linewidth=1.2, linestyle="-",
                       label=f"time limit {limit:g} s")
    bottom.set_xlabel("move number (opening moves 1-4 are the referee's)"
                      if any(record.opening for record in records) else "move number")
    bottom.set_ylabel("seconds")
    bottom.set_title("Time per move", fontsize=11, loc="left")
    highest = max([s for points in times.values() for _, s in points] + [limit or 0.0])
    bottom.set_ylim(0, (highest or 1.0) * 1.25)   # room for the legend above the data
    bottom.grid(True, alpha=0.3)
    if bottom.get_legend_handles_labels()[0]:
        bottom.legend(loc="upper right", fontsize=9, frameon=False, ncols=3)
    else:
        bottom.text(0.5, 0.5, "no move times in these records", ha="center",
                    transform=bottom.transAxes, color="#6b7280")
    render.save_figure(figure, out)
    return headline


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m ref_sim.plot``."""
    parser = OneLineParser(
        prog=prog(MODULE),
        description="Plot a series: the running score of agent A with a 95% band, and the "
                    "time of every move.  Needs matplotlib: pip install -e '.[plot]' in the project.",
        epilog="Exit codes: 0 done, 2 bad input or matplotlib missing.")
    parser.add_argument("series", metavar="SERIES",
                        help=f"{records.GAMES_ARGUMENT}, or a logs/ folder of game records")
    parser.add_argument("--out", default="plot.png", metavar="FILE",
                        help="output file, .png or .svg (default plot.png)")
    parser.add_argument("--agent", metavar="NAME",
                        help="whose score to plot (default: the first name of the first game)")
    return parser


@entry_point(MODULE)
def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m ref_sim.plot``; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        if Path(args.out).suffix.lower() not in (".png", ".svg"):
            raise RecordError(f"--out {args.out!r}: the file must end in .png or .svg")
        headline = plot(load_series(args.series), args.out, args.agent)
    except (RecordError, render.MissingDependency, OSError) as error:
        print(f"{prog(MODULE)}: error: {error}", file=sys.stderr)
        return 2
    print(headline)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
