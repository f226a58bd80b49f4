"""The series command: the one skeleton under ``uttt-match``, ``uttt-stdio`` and ``uttt-tournament``.

A command is a :class:`SeriesCommand` that says what differs (its options, its settings file,
its games, its header and report); :meth:`SeriesCommand.main` runs the rest alike.  The options
the commands share are defined here, each help text once.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from agent.cli_common import OneLineParser
from agent.options import MAX_TIME_LIMIT, real, whole
from ref_sim import stops
from ref_sim.referees.codingame_shell import DEFAULT_FIRST_TURN_MS, DEFAULT_GRACE_MS, DEFAULT_TURN_MS
from ref_sim.referees.file_text import locale_encoding
from ref_sim.series.run import cluster_address
from ref_sim.series.process import isolation, contain, metering, sandbox, launch
from ref_sim.series import realbots
from ref_sim.series.output import out_lock, records
from ref_sim.series.loop import (Stopped, append_game, capped_concurrency, conclude, play_games,
                                 prepare_out, run_in, series_settings, went_wrong)
from ref_sim.series.output.game_line import GameLine
from ref_sim.series.specs import keep_recorded_names
from ref_sim.series.process.launch import AgentCannotStart
from ref_sim.series.output.progress import Progress

#: More games than this in one run is a typo (a day of the quickest games is ~50,000).
MAX_GAMES = 100_000
#: --turn-ms and the others above an hour are a typo.
MAX_TURN_MS = 3_600_000.0


# -- the options every series command shares ----------------------------------------------

def parser_for(module: str, description: str, epilog: str) -> argparse.ArgumentParser:
    """A series command's parser: one-line usage errors, the epilog as written."""
    return OneLineParser(prog=stops.invoked_as(module), description=description, epilog=epilog,
                         formatter_class=argparse.RawDescriptionHelpFormatter)


def files_and_exits(noun: str) -> str:
    """The end of a head-to-head series' epilog: its files and exit codes (``noun``: agent, program)."""
    return f"""\
files in --out: series.json (the settings --resume continues from), games.jsonl (one JSON
line per game, docs/formats.md), logs/.  Without --out: a temporary directory, deleted at
the end but for the logs of games that went wrong (kept in a uttt-logs-* folder).

exit codes: 0 the series ran, 1 {'an' if noun[0] in 'aeiou' else 'a'} {noun} could not start in the first game, 2 bad
arguments, 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP (the last line gives the command that
continues the series), 141 the output was closed (| head)."""


def add_agents(parser, noun: str) -> None:
    """AGENT1 and AGENT2 (``noun``: agent or program), both left out with ``--resume``."""
    parser.add_argument("agent1", metavar="AGENT1", nargs="?",
                        help=f"{noun} 1 (its score is the one reported); with --resume, leave "
                             "both out to continue the series as it was")
    parser.add_argument("agent2", metavar="AGENT2", nargs="?", help=f"{noun} 2")


def check_agents(parser, args, noun: str) -> None:
    """Both agents, or neither with ``--resume --out DIR``: else a usage error."""
    if args.agent1 is None and not args.resume:
        parser.error("AGENT1 and AGENT2 are required (or --resume --out DIR, to continue "
                     "the series in DIR)")
    if args.agent2 is None and args.agent1 is not None:
        parser.error(f"AGENT2 is missing: give both {noun}s (or neither, with --resume)")
    if args.resume and not args.out:
        parser.error("--resume needs --out (the directory of the series to continue)")


def add_games(parser, sprt_max: int | None = None) -> None:
    """``--games N`` (default None: a resumed series keeps its own)."""
    sprt = f"; with --sprt a maximum, default {sprt_max}" if sprt_max else ""
    parser.add_argument("--games", type=whole(1, MAX_GAMES), default=None,
                        help=f"games to play (default 2{sprt}); rounded up to whole pairs when "
                             "paired; with --resume it may grow or shrink the series")


def add_time_limit(parser, stdio_default: bool = False) -> None:
    """The file protocol's ``--time-limit S`` (``stdio_default``: the tournament's, which is
    also the stdio turn's)."""
    also = (f"; with --protocol stdio the turn's time, default {DEFAULT_TURN_MS / 1000:g}"
            if stdio_default else "")
    # Below 0.1 s check_time_limit says why; here nan, inf and hours are refused.
    parser.add_argument("--time-limit", type=real(-math.inf, MAX_TIME_LIMIT), default=None,
                        metavar="S", help=f"seconds per move (default 10{also})")


def add_encoding(parser) -> None:
    parser.add_argument("--encoding", metavar="ENC",
                        help="the referee's encoding, also given to the built-in agents "
                             f"(default: this machine's, {locale_encoding()})")


def seconds_in_ms(text: str) -> float:
    """``--time-limit S``, the name every command gives the time per move, as milliseconds."""
    return 1000 * real(0, MAX_TURN_MS / 1000, low_open=True)(text)


def add_timing(parser, time_limit: bool = True) -> None:
    """CodinGame's --time-limit S (or --turn-ms MS, its old name there), --first-turn-ms and
    --grace-ms (default None: a resumed series keeps its own), on ``parser`` or an argument
    group (the tournament's, whose own --time-limit serves both protocols: ``time_limit=False``)."""
    turn = parser.add_mutually_exclusive_group() if time_limit else parser
    if time_limit:
        turn.add_argument("--time-limit", type=seconds_in_ms, dest="turn_ms", default=None,
                          metavar="S", help=f"seconds per turn (default {DEFAULT_TURN_MS / 1000:g})")
    turn.add_argument("--turn-ms", type=real(0, MAX_TURN_MS, low_open=True), default=None,
                      metavar="MS", help=f"time per turn in milliseconds (default {DEFAULT_TURN_MS:g})"
                                         + ("; the same as --time-limit" if time_limit else ""))
    parser.add_argument("--first-turn-ms", type=real(0, MAX_TURN_MS, low_open=True), default=None,
                        metavar="MS",
                        help=f"time of each program's first turn (default {DEFAULT_FIRST_TURN_MS:g})")
    parser.add_argument("--grace-ms", type=real(0, MAX_TURN_MS), default=None, metavar="MS",
                        help=f"added to every turn's limit (default {DEFAULT_GRACE_MS:g})")


def add_run_options(parser, what: str = "series", seeds: str = "openings, who moves first, the "
                    "agents' seeds", concurrency: bool = True, show: bool = True,
                    summary: str = "summary") -> None:
    """--seed, --out, --resume, --concurrency, --show, -q: how a series (``what``) is run."""
    parser.add_argument("--seed", type=int,
                        help=f"seed of the {what}: {seeds} (default: random, printed)")
    parser.add_argument("--out", help=f"directory for the games, logs and records of the {what} "
                                      "(default: a new temporary directory)")
    parser.add_argument("--resume", action="store_true",
                        help=f"continue the {what} in --out with the settings it recorded: games "
                             "already in games.jsonl are not replayed, and they count in the "
                             "statistics")
    if concurrency:
        parser.add_argument("--concurrency", type=whole(1), default=1, metavar="N",
                            help="games at once (default 1; at most the number of cores - 1)")
    if show:
        parser.add_argument("--show", action="store_true", help="print the board after every move")
    parser.add_argument("-q", "--quiet", action="store_true", help=f"only the final {summary}")


def add_bot_options(parser, startup: float, exit_wait: float, exit_note: str,
                    cluster_note: str = "each worker plays cores - 1 games at once") -> None:
    """Where the bots run and how they are held: --cluster, --isolate, the start and exit waits."""
    cluster_address.add_cluster_options(parser, note=cluster_note)
    isolation.add_options(parser)
    launch.add_wait_options(parser, startup, exit_wait, exit_note)


def whole_pairs(games: int, paired: bool, recorded: dict | None, say, why: str,
                single: str | None = None) -> int:
    """``games`` rounded up to whole pairs when ``paired`` (but one game), said with ``why``;
    and said when a resumed series (``recorded``: its settings) now has another number."""
    if paired and games > 1 and games % 2:
        say(f"--games {games} rounded up to {games + 1}: {why}")
        games += 1
    elif paired and games == 1 and single:
        say(single)
    if recorded is not None and recorded.get("games") not in (None, games):
        say(f"the series now has {games} games (it had {recorded['games']})")
    return games


# -- the skeleton -------------------------------------------------------------------------

@dataclass(frozen=True)
class Slot:
    """One game to play: its number in the files, its pairing (an index into the command's
    series of games) and ``k``, its number in that pairing's series (the round is ``(k - 1) // 2``)."""
    number: int
    pairing: int
    k: int


class SeriesProgress:
    """A series' progress line (:class:`ref_sim.series.output.progress.Progress`), told of games as a
    tournament's pairings are (``start``, ``game``): drawn at once on a terminal."""

    def __init__(self, total: int, figures, played: list[dict], terminal: bool) -> None:
        self.line = Progress(total, terminal=terminal, done=len(played))
        self.figures, self.played = figures, list(played)
        if self.line.terminal:
            self.line.update(len(self.played), figures(self.played))

    def start(self, pairing: int) -> None:
        """A game is starting: nothing to show."""

    def game(self, pairing: int, line: str, game: dict) -> None:
        self.played.append(game)
        self.line.game(line, notable=went_wrong(game))
        self.line.update(len(self.played), self.figures(self.played))

    def update(self, done: int, summary, stopped: bool = False) -> None:
        self.line.update(done, summary, stopped=stopped)

    def close(self) -> None:
        self.line.close()


class SeriesCommand:
    """A series command: :meth:`main` is the skeleton every one runs; a subclass says what
    differs through the attributes and the methods above :meth:`main`.  One instance per run."""

    module = ""                     # ref_sim.match: in usage lines and the resume line
    prefix = "uttt-series-"         # of its temporary folder
    what = "series"                 # or tournament, in messages
    settings_name = "series.json"   # the file in --out that --resume continues from
    decided = None                  # an SPRT's decision, once made
    wanted = None                   # () -> False once no more games are wanted
    figures = None                  # (games) -> the progress line's figures, shown after a stop
    #: A bot that cannot start: False stops the run (a rehearsal of two bots says why at once);
    #: True scores each game it could not start as its loss, and the run goes on (an event).
    forfeits = False

    def build_parser(self) -> argparse.ArgumentParser:
        raise NotImplementedError

    def check(self, parser, args) -> None:
        """Usage errors the parsed command line alone shows."""

    def settle(self, args) -> None:
        """This run's settings (the recorded ones when resuming) and bots; ValueError, one line."""
        raise NotImplementedError

    def only_check(self) -> int | None:
        """A run that only checks its bots and plays nothing into --out (the tournament's
        ``--check``): its exit code; None: play the games."""
        return None

    def ready(self, parser, args) -> None:
        """Once --out is made: what needs the settings (usage errors, notes on the games)."""

    def record(self) -> dict:
        """The settings file's content."""
        raise NotImplementedError

    def slots(self) -> list[Slot]:
        """Every game of the run, in the order they are played."""
        raise NotImplementedError

    def header(self, runner, out: Path, kept: bool) -> str:
        """What is about to be played, said first (``kept``: ``out`` is --out, not temporary)."""
        raise NotImplementedError

    def series(self, out: Path, isolate, stop: threading.Event, done: list[dict]) -> list:
        """The :class:`ref_sim.series.loop.SeriesGames` of each pairing (one for a series)."""
        raise NotImplementedError

    def progress(self, done: list[dict]):
        """What shows the games as they end (``start``, ``game``, ``close``)."""
        raise NotImplementedError

    def describe(self, game: dict) -> str:
        """A finished game in one line."""
        raise NotImplementedError

    def annotate(self, slot: Slot, game: GameLine) -> GameLine:
        """``game`` with what its line holds beyond its series' (a tournament's pairing)."""
        return game

    def after_game(self, out: Path, games: list[dict], game: dict) -> None:
        """A game was just recorded (``games``: all so far)."""

    def report(self, games: list[dict]) -> list[str]:
        """The summary's lines over ``games``."""
        raise NotImplementedError

    def more_lines(self) -> list[str]:
        """Lines after where the files are (read once the report is made)."""
        return []

    # -- the skeleton ---------------------------------------------------------------------

    def main(self, argv: list[str] | None = None) -> int:
        """Parse, settle the settings, make --out, hold it, and play the games here or on a cluster."""
        self.parser = parser = self.build_parser()
        self.args = args = parser.parse_args(argv)
        self.warnings: list[str] = []
        isolation.check_options(parser, args)
        cluster_address.check_options(parser, args)
        self.check(parser, args)
        self.say = (lambda *a, **k: None) if args.quiet else (lambda *a, **k: print(*a, **k, flush=True))
        try:
            self.settle(args)
        except ValueError as error:
            parser.error(str(error))
        checked = self.only_check()         # before --out is made: a check writes nothing there
        if checked is not None:
            return checked
        if args.out:        # created once the settings are known: a refused --resume makes nothing
            problem = prepare_out(args.out)
            if problem:
                parser.error(problem)
        self.ready(parser, args)
        concurrency = capped_concurrency(getattr(args, "concurrency", 1))
        if getattr(args, "show", False) and concurrency > 1:
            print("warning: --show plays one game at a time", file=sys.stderr)
            concurrency = 1
        for warning in self.warnings:
            print(warning, file=sys.stderr)
        address = cluster_address.cluster_target(args)
        if address and getattr(args, "show", False):
            parser.error("--show plays here, one game at a time: not with --cluster")
        with out_lock.lock_out(args.out, stops.invoked_as(self.module), argv):   # one runner per --out
            return run_in(parser, address, args.out, self.prefix, self.play, concurrency)

    def play(self, runner, out: Path) -> int:
        """Play the games not yet in ``out``'s games.jsonl, then the report; the exit code."""
        args, say = self.args, self.say
        games_path = out / "games.jsonl"
        if records.recorded_games(games_path) and not args.resume:
            self.parser.error(f"{games_path} already holds games: add --resume to continue "
                              f"that {self.what}, or choose another --out")
        records.make_dirs(out / "logs")
        records.write_json(out / self.settings_name, self.record())
        done = records.resume_games(games_path)     # bad lines: a warning, played again
        slots = self.slots()
        done = [g for g in done if g.game <= len(slots)]
        done_numbers = {g.game for g in done}
        todo = [slot for slot in slots if slot.number not in done_numbers]
        try:    # what no bot may see: --out, each bot's program to every other bot
            isolate = sandbox.for_event(isolation.from_args(args),
                                        [spec.template for spec in self.specs], out)
        except ValueError as error:
            self.parser.error(str(error))
        stop = threading.Event()
        games = list(done)
        proven: set[str] = set()        # bots that finished a game in this run: they can start
        progress = None                 # made below with the series, where a stop ends as one

        def submit(slot: Slot):
            if progress is not None:
                progress.start(slot.pairing)
            own = series[slot.pairing]
            return own.submit(runner, slot.k, must_start=not set(own.names) <= proven,
                              number=slot.number)

        def finished(slot: Slot, ticket) -> None:
            own = series[slot.pairing]
            try:
                game = own.line(runner, ticket, slot.k, slot.number)
            except AgentCannotStart as error:
                if not self.forfeits or stop.is_set():  # stopped: --resume plays it again
                    raise
                game = own.forfeit_line(error, k=slot.k, number=slot.number)
            if game is None:
                return
            game = self.annotate(slot, game)
            append_game(games_path, game)
            games.append(game)
            if not game.cannot_start:           # a forfeit proves neither side can start
                proven.update(game.names)
            self.after_game(out, games, game)
            if progress is not None:
                used = metering.usage_line(game.usage) if isolate is not None else None
                progress.game(slot.pairing, f"Game {slot.number}/{len(slots)}: {self.describe(game)}"
                                            + (f" -- {used}" if used else ""), game)

        try:
            say(self.header(runner, out, bool(args.out)))
            if done:
                say(f"resuming: {len(done)} of {len(slots)} games already played, {len(todo)} to go")
            if isolate is not None:
                say(contain.status_line(isolate, runner.capacity()))
                if getattr(args, "isolated_as_recorded", False):
                    say(f"isolated as the {self.what} began: --resume keeps the isolation it recorded")
            series = self.series(out, isolate, stop, done)
            progress = None if args.quiet else self.progress(done)
        except KeyboardInterrupt as interrupt:
            # Stopped before its first game (a user who saw "resuming:" and pressed Ctrl-C):
            # the settings are written, so it ends as a stop between games does, with the command
            # that continues it.
            stopped = Stopped(interrupt=interrupt)
        else:
            # How the games end early: Ctrl-C or a stop signal (ref_sim.stops), the output closed
            # (| head), or a bot that cannot start in its first game of this run (its command is wrong).
            stopped = play_games(runner, todo, submit, finished, stop, wanted=self.wanted)
        pages: list[str] = []

        def report(games: list[dict]) -> list[str]:
            lines = self.report(games)
            pages.extend(self.more_lines())
            return lines

        return conclude(self.module, games, report, out_arg=args.out, out=out, say=say,
                        progress=progress, figures=self.figures, decided=self.decided,
                        what=self.what, resume_options=isolation.command_options(isolate),
                        more_lines=pages, stopped=stopped)


class HeadToHead(SeriesCommand):
    """A series between two bots (match, stdio): AGENT1 AGENT2, series.json, one series of games.
    A subclass gives its own settings (:meth:`given`, :meth:`defaults`, :attr:`flags`) and
    how it reads a bot (:meth:`spec`)."""

    noun = "agent"
    flags: dict = {}                # each of its own settings' option, for messages

    def spec(self, text: str):
        raise NotImplementedError

    def given(self, args) -> dict:
        """Its own settings as the command line gives them (None: left out)."""
        return {}

    def defaults(self) -> dict:
        """Its own settings in a new series (``games`` among them)."""
        return {}

    def check(self, parser, args) -> None:
        check_agents(parser, args, self.noun)

    def settle(self, args) -> None:
        given = {"agents": None if args.agent1 is None else [args.agent1, args.agent2],
                 "seed": args.seed, "games": args.games, **self.given(args),
                 "isolate": isolation.recorded_setting(isolation.from_args(args))}
        defaults = {"agents": None, "seed": random.randrange(2 ** 32), **self.defaults(),
                    "isolate": None}
        flags = {"agents": "AGENT1 AGENT2", "seed": "--seed", "games": "--games", **self.flags,
                 "isolate": "--isolate"}
        self.settings, self.before = series_settings(Path(args.out) if args.out else None,
                                                     args.resume, given, defaults, flags)
        self.specs = [self.spec(text) for text in self.settings["agents"]]
        if self.before is not None:
            keep_recorded_names(self.specs, self.before.get("names"))
        self.names = realbots.side_names(self.specs)    # a clash of names: refused before any game
        args.isolated_as_recorded = isolation.resume_setting(args, self.settings["isolate"])

    def slots(self) -> list[Slot]:
        return [Slot(k, 0, k) for k in range(1, self.args.games + 1)]

    def bots_lines(self) -> str:
        return "\n".join(f"{name}: {spec.template}" for name, spec in zip(self.names, self.specs))

    def progress(self, done: list[dict]) -> SeriesProgress:
        # On a terminal the line is redrawn (not with --show, whose boards scroll).
        return SeriesProgress(self.args.games, self.figures, done,
                              terminal=sys.stdout.isatty() and not self.args.show)
