"""``uttt-tournament``: a round-robin or a gauntlet of many bots, through the referee's files or
CodinGame's stdin/stdout, ending in a rating table (the user's guide: docs/tournament.md).

A front-end of :class:`ref_sim.series.command.SeriesCommand`; the event itself (pairings,
schedule, tournament.json, the tables) is :mod:`ref_sim.series.event`.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from agent.options import whole
from ref_sim import entry_point
from ref_sim.referees.file_shell import check_time_limit
from ref_sim.referees.file_text import check_encoding
from ref_sim.series import bot_list, command, command_line, event, file_games, preflight
from ref_sim.series.command_line import MAX_GAMES
from ref_sim.series.settings import TournamentSettings
from ref_sim.series.output.game_line import GameLine
from ref_sim.series.run import cluster, cluster_address
from ref_sim.series.specs import agent_spec, stdio_spec
from ref_sim.series.event import (OWN_OPENINGS, SHARED_OPENINGS, PairingProgress, check_settings,
                                  event_settings, pairing_seed, pairings, report_lines, schedule)
from ref_sim.views import crosstable

__all__ = ["main", "build_parser", "OWN_OPENINGS", "SHARED_OPENINGS", "PairingProgress",
           "check_settings", "event_settings", "given_settings", "pairing_seed", "pairings", "report_lines", "schedule"]

MODULE = "ref_sim.tournament"

EPILOG = """\
bots: what ref_sim.match takes (--protocol file) or ref_sim.stdio takes (--protocol stdio):
  agent, agent:depth=N, agent:nodes=N, seed, seed:depth=N, random, eager, flood, nbsp,
  or "COMMAND" with the placeholders of that runner.  Bot i is called LABELi (Agent1...).

pairings: each round every pairing plays one opening twice, colours swapped (stdio: each
program moves first once).  Round-robin: every bot against every other; --gauntlet: the
first bot against each of the others.  Game k of a pairing is game k of ref_sim.match
(or ref_sim.stdio) A B --seed SEED.

output: a rating table (Elo by maximum likelihood, the mean or --anchor BOT at 0, 95 %
error bars), each pairing's W - L - D with its Elo difference, the faults, the distinct games.

files in --out: tournament.json (--resume --out DIR continues it, --rounds N extends it),
games.jsonl (as ref_sim.match writes them, plus "pairing" and "pairing_game"), logs/, and
crosstable.html with a replay page per pairing in replays/.  Without --out: a temporary
directory, deleted at the end but for the logs of games that went wrong.

a bot that cannot start (its program exits before its first move) loses each game it
could not start; the event goes on and the summary says why.  --check tries each bot first.

exit codes: 0 the tournament ran (--check: every bot passed; 1 one did not), 2 bad arguments, 130 Ctrl-C,
143 SIGTERM, 129 SIGHUP (the games so far are rated; the last line gives the command that
continues the tournament), 141 the output was closed (| head).

examples:
  python -m ref_sim.tournament agent agent:depth=4 seed random --rounds 5 --time-limit 1 --out runs/t
  python -m ref_sim.tournament --resume --out runs/t --rounds 10        # five rounds more
  python -m ref_sim.tournament agent seed:depth=2 seed:depth=4 random --gauntlet --time-limit 0.5
  python -m ref_sim.tournament agent:depth=2 agent:depth=4 random --protocol stdio --rounds 10
  uttt-tournament agent --bots class/bots.txt --rounds 2 --time-limit 1 --out runs/class

More in docs/tournament.md."""


def build_parser():
    parser = command_line.parser_for(
        MODULE, "A round-robin or gauntlet of many bots through the simulated referee "
                "(or CodinGame's stdin/stdout), ending in an Ordo-style rating table.", EPILOG)
    parser.add_argument("bots", nargs="*", metavar="BOT",
                        help="two or more bots (none with --resume: those of --out)")
    parser.add_argument("--bots", dest="bot_lists", action="append", default=[],
                        metavar="FILE_OR_DIR",
                        help="more bots from a file, one spec a line (# comments), or from "
                             "a folder's *.bot files; repeatable (ref_sim/series/bot_list.py)")
    parser.add_argument("--gauntlet", action="store_true", default=None,
                        help="the first bot against each of the others (default: round-robin)")
    parser.add_argument("--rounds", type=whole(1, MAX_GAMES), metavar="N",
                        help="opening pairs per pairing (default 1; with --resume: as before, "
                             "or more to extend the tournament)")
    parser.add_argument("--protocol", choices=("file", "stdio"),
                        help="file: the referee's files (default); stdio: CodinGame's "
                             "stdin/stdout")
    parser.add_argument("--check", action="store_true",
                        help="play nothing: try each bot once against the built-in random bot "
                             "at the event's time limit (and --isolate), one line a bot: it "
                             "starts, answers to its name, moves in time, exits; exit 1 if one "
                             "does not")
    parser.add_argument("--anchor", metavar="BOT",
                        help="rate this bot (its name, e.g. Random3, or its spec) at 0 "
                             "instead of the mean")
    command_line.add_run_options(parser, what="tournament", seeds="openings, colours, the bots' seeds",
                            show=False, summary="tables")
    file_group = parser.add_argument_group("--protocol file (ref_sim.match)")
    command_line.add_time_limit(file_group, stdio_default=True)
    command_line.add_encoding(file_group)
    command_line.add_timing(parser.add_argument_group("--protocol stdio (ref_sim.stdio)"), time_limit=False)
    command_line.add_bot_options(parser, file_games.STARTUP_WAIT, file_games.EXIT_WAIT,
                            ", or one time limit and a second with the file protocol", cluster_note="")
    return parser


def given_settings(args) -> tuple[dict, list]:
    """The event's settings as the command line gives them (None: left out), for
    :func:`ref_sim.series.event.event_settings`, and the bots its ``--bots`` lists hold."""
    encoding = None if args.encoding is None else check_encoding(args.encoding)
    listed = bot_list.read(args.bot_lists)
    given = {key: getattr(args, key) for key in event.DEFAULTS if key not in ("bots", "isolate")}
    given.update(bots=args.bots + [bot.text for bot in listed] or None, encoding=encoding,
                 isolate=command_line.given_isolation(args))
    return given, listed


class Tournament(command.SeriesCommand):
    """Every pairing's series at once, round after round (see the module docstring); ``play``
    plays each game through the referee's files (:func:`ref_sim.series.file_games.play_game`)."""

    module, prefix, what, settings_name = MODULE, "uttt-tournament-", "tournament", "tournament.json"
    forfeits = True         # a class's event goes on past a bot that cannot start

    def __init__(self, *, play=file_games.play_game, connect=cluster.connect) -> None:
        super().__init__(connect=connect)
        self.play_game = play

    def build_parser(self):
        return build_parser()

    def check(self, parser, args) -> None:
        if args.resume and not args.out:
            parser.error("--resume needs --out (the directory of the tournament to continue)")
        if args.check and cluster_address.cluster_target(args):
            parser.error("--check plays each bot here, not on --cluster: run it on a worker's "
                         "machine, whose interpreters the event will use")

    def settle(self, args) -> None:
        given, listed = given_settings(args)
        out = Path(args.out) if args.out else None
        settings = event_settings(out, args.resume, given)
        run = command_line.run_settings(args, settings.isolate, out and out / self.settings_name)
        bot_list.check(listed, agent_spec if settings.protocol == "file" else stdio_spec)
        specs, settings = check_settings(settings)
        anchor = event.find_bot(settings, args.anchor) if args.anchor else None
        if settings.protocol == "file":
            warning = check_time_limit(settings.time_limit)[1]
            if warning:
                self.warnings.append(warning)
        self.specs, self.settings = specs, TournamentSettings(run, settings, args.check, anchor)

    def only_check(self) -> int | None:
        if not self.settings.check:
            return None
        for warning in self.warnings:
            print(warning, file=sys.stderr)
        try:
            return preflight.run(self.settings.event, self.specs, self.settings.run)
        except ValueError as error:         # a --isolate-share that holds a bot's program
            self.parser.error(str(error))

    def record(self) -> dict:
        return self.settings.event.to_json()

    def slots(self) -> list[command.Slot]:
        return schedule(len(self.settings.event.pairings), self.settings.event.rounds)

    def header(self, runner, out: Path, kept: bool) -> str:
        return event.header(self.settings.event, runner, out, kept)

    def series(self, out: Path, isolate, stop, done: list[GameLine]) -> list:
        return event.pairing_games(self.settings.event, self.specs, out, stop, isolate,
                                   dict(self.settings.run.waits), play=self.play_game)

    def progress(self, done: list[GameLine]) -> PairingProgress:
        return PairingProgress(self.settings.event, done)

    def describe(self, game: GameLine) -> str:
        return event.describe(self.settings.event.protocol, game)

    def annotate(self, slot: command.Slot, game: GameLine) -> GameLine:
        return replace(game, pairing=list(self.settings.event.pairings[slot.pairing]),
                       pairing_game=slot.k)

    def after_game(self, out: Path, games: list[GameLine], game: GameLine) -> None:
        pairing = tuple(game.pairing)
        settings, anchor = self.settings.event, self.settings.anchor
        if self.settings.run.out and sum(tuple(g.pairing or ()) == pairing
                                         for g in games) == 2 * settings.rounds:
            # A pairing just ended: the crosstable is kept current while a long event runs.
            crosstable.write_pages(out, settings, games, anchor,
                                   report_lines(settings, games, anchor), only={pairing})

    def report(self, games: list[GameLine]) -> list[str]:
        settings, anchor, out = self.settings.event, self.settings.anchor, self.settings.run.out
        lines = report_lines(settings, games, anchor)
        self.pages = []                 # where the pages are: said after where the games are
        if out:                 # the pages stay with the games: not in a temporary folder
            self.pages = crosstable.write_pages(Path(out), settings, games, anchor, report=lines)
        return lines

    def more_lines(self) -> list[str]:
        return self.pages


@entry_point.entry_point(MODULE)
def main(argv: list[str] | None = None, *, play=file_games.play_game, connect=cluster.connect) -> int:
    """The command; ``play`` plays each file-protocol game (:func:`ref_sim.series.file_games.play_game`),
    ``connect`` reaches --cluster's scheduler (:func:`ref_sim.series.run.cluster.connect`)."""
    return Tournament(play=play, connect=connect).main(argv)


if __name__ == "__main__":
    sys.exit(main())
