"""``uttt-match``: a series between two bots through the simulated referee's files, with paired
openings, cutechess-style statistics and SPRT (the user's guide: docs/bench.md).

A front-end of :class:`ref_sim.series.command.SeriesCommand`: its options, series.json and games.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ref_sim import entry_point
from ref_sim.referees.file_shell import check_time_limit
from ref_sim.referees.file_text import check_encoding, locale_encoding
from ref_sim.series import command, command_line
from ref_sim.series.run import cluster
from ref_sim.series.stats import match_stats
from ref_sim.series.output.game_line import GameLine
from ref_sim.series.file_games import EXIT_WAIT, FORMAT, STARTUP_WAIT, FileGames, FileGameSettings, play_game
from ref_sim.series.output.report import describe, report_lines, summarize
from ref_sim.series.settings import MatchSettings, whole_pairs
from ref_sim.series.specs import agent_spec

__all__ = ["main", "build_parser", "describe", "locale_encoding", "SPRT_MAX_GAMES"]

SPRT_MAX_GAMES = match_stats.SPRT_MAX_GAMES
MODULE = "ref_sim.match"

EPILOG = """\
agents:
  random                  the reference random player
  seed, seed:depth=N      a typical student bot (line-count minimax, depth 3 or N)
  agent                   our agent, full strength
  agent:depth=N, agent:nodes=N   our agent at a fixed depth / node count
  eager, flood, flood:rate=N, nbsp   hostile players (docs/bench.md: the built-ins)
  "COMMAND"               any command; placeholders {name} {dir} {time_limit} {seed}
                          {encoding} {python}, e.g. "python my_bot.py {name} --dir {dir}";
                          it runs in the game directory (docs/real-bots.md)
  "name=NAME:AGENT"       any agent answering to NAME, e.g. "name=Otter:java -cp bots Otter"

output (agent 1's view; error bars at 95 %, pentanomial over pairs when paired):
  Score of A vs B: W - L - D  [score] games
  Elo difference: E +/- err, LOS: x %, DrawRatio: y %
  Ptnml(0-2): [pairs scoring 0, 1/2, 1, 3/2, 2 points]
  SPRT: llr L (p%), lbound a, ubound b

""" + command_line.files_and_exits("agent") + """

examples:
  python -m ref_sim.match agent random --games 1 --time-limit 1 --show
  python -m ref_sim.match agent seed:depth=4 --games 100 --time-limit 0.5 --seed 1
  python -m ref_sim.match agent agent:depth=4 --sprt 0 10 0.05 0.05 --out runs/a --resume
  python -m ref_sim.match --resume --out runs/a

More in docs/bench.md: openings and pairs, the statistics, stops and --resume, --encoding."""


def build_parser():
    parser = command_line.parser_for(
        MODULE, "Play a series of games between two agents through the referee files, "
                "with paired openings, cutechess-style statistics and optional SPRT.", EPILOG)
    command_line.add_agents(parser, "agent")
    # Settings a series keeps (series.json) default to None: given or not, --resume knows.
    command_line.add_games(parser, sprt_max=SPRT_MAX_GAMES)
    command_line.add_time_limit(parser)
    pairing = parser.add_mutually_exclusive_group()
    pairing.add_argument("--paired", action="store_true", default=None,
                         help="each opening twice, sides swapped (the default)")
    pairing.add_argument("--unpaired", dest="paired", action="store_false",
                         help="one game per opening, a coin flip for who moves first")
    match_stats.add_sprt_option(parser, "0 10 0.05 0.05")
    command_line.add_encoding(parser)
    command_line.add_run_options(parser)
    command_line.add_bot_options(parser, STARTUP_WAIT, EXIT_WAIT, ", or one time limit and a second")
    return parser


class Match(command.HeadToHead):
    """A series through the referee's files, each game played by ``play``
    (:func:`ref_sim.series.file_games.play_game`, or what takes its arguments)."""

    module, prefix = MODULE, "uttt-match-"
    flags = {"time_limit": "--time-limit", "paired": "--paired", "encoding": "--encoding",
             "sprt": "--sprt"}

    def __init__(self, *, play=play_game, connect=cluster.connect) -> None:
        super().__init__(connect=connect)
        self.play_game = play

    def build_parser(self):
        return build_parser()

    def spec(self, text: str):
        return agent_spec(text)

    def check(self, parser, args) -> None:
        super().check(parser, args)
        match_stats.check_sprt_option(parser, args.sprt)

    def given(self, args) -> dict:
        encoding = None if args.encoding is None else check_encoding(args.encoding)
        return {"time_limit": args.time_limit, "paired": args.paired, "encoding": encoding,
                "sprt": args.sprt}

    def defaults(self) -> dict:
        return {"time_limit": 10.0, "paired": True, "encoding": None, "sprt": None, "games": None}

    def value(self, settings: dict, run, say) -> MatchSettings:
        sprt = None if settings["sprt"] is None else tuple(settings["sprt"])
        games = whole_pairs(settings["games"] or (SPRT_MAX_GAMES if sprt else 2), settings["paired"],
                            self.before, say, "openings are played in pairs (--unpaired for an odd number)",
                            single="--games 1: one game, the first of its opening pair")
        return MatchSettings(run=run, agents=tuple(settings["agents"]), seed=settings["seed"],
                             games=games, time_limit=settings["time_limit"],
                             paired=settings["paired"], encoding=settings["encoding"], sprt=sprt)

    def ready(self, parser) -> None:
        limit_error, limit_warning = check_time_limit(self.settings.time_limit)
        if limit_error:
            parser.error(limit_error)
        if limit_warning:
            self.warnings.append(limit_warning)
        super().ready(parser)

    def record(self) -> dict:
        return self.settings.record(FORMAT, self.names)

    def header(self, runner, out: Path, kept: bool) -> str:
        settings = self.settings
        return (f"{self.bots_lines()}\n"
                f"series seed {settings.seed}; {settings.games} game{'s' if settings.games > 1 else ''}"
                + (" in pairs" if settings.paired else "") + f" at {settings.time_limit:g} s per move"
                + (f", {runner.capacity()} at once" if runner.capacity() > 1 and not runner.remote else "")
                + (f", on {len(runner.slots())} cluster worker(s), {runner.capacity()} at once"
                   if runner.remote else "")
                + (f"; games, logs and records in {out}" if kept else
                   "; games and logs in a temporary directory, deleted at the end (--out DIR "
                   "keeps them), but for the logs of games that go wrong"))

    def series(self, out: Path, isolate, stop, done: list[GameLine]) -> list[FileGames]:
        own = self.settings
        settings = FileGameSettings(own.time_limit, encoding=own.encoding, isolate=isolate,
                                    show=own.run.show, **dict(own.run.waits))
        if done and own.sprt:           # a resumed series may have been decided already
            self.decided = self.figures(done).sprt.decision
        return [FileGames(self.specs, self.names, own.seed, settings, out, paired=own.paired,
                          stop=stop, play=self.play_game)]

    def describe(self, game: GameLine) -> str:
        return describe(game)

    def figures(self, games: list[GameLine]):
        return summarize(games, self.names, self.settings.paired, self.settings.sprt)

    def after_game(self, out: Path, games: list[GameLine], game: GameLine) -> None:
        summary = self.figures(games)
        if summary.sprt is not None and summary.sprt.decision:
            self.decided = summary.sprt.decision

    def wanted(self) -> bool:
        return self.decided is None

    def report(self, games: list[GameLine]) -> list[str]:
        return report_lines(games, self.names, self.settings.paired, self.settings.sprt)


@entry_point.entry_point(MODULE)
def main(argv: list[str] | None = None, *, play=play_game, connect=cluster.connect) -> int:
    """The command; ``play`` plays each game (:func:`ref_sim.series.file_games.play_game`),
    ``connect`` reaches --cluster's scheduler (:func:`ref_sim.series.run.cluster.connect`)."""
    return Match(play=play, connect=connect).main(argv)


if __name__ == "__main__":
    sys.exit(main())
