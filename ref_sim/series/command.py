"""The series command: the one skeleton under ``uttt-match``, ``uttt-stdio`` and ``uttt-tournament``.

A command is a :class:`SeriesCommand` that says what differs (its options, its settings value
and file, its games, its header and report); :meth:`SeriesCommand.main` runs the rest alike.  The
options the commands share: :mod:`ref_sim.series.command_line`; the settings: :mod:`ref_sim.series.settings`.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from ref_sim import stops
from ref_sim.series.run import cluster, cluster_address
from ref_sim.series.process import isolation, contain, metering, sandbox
from ref_sim.series import realbots
from ref_sim.series.command_line import MAX_GAMES, MAX_TURN_MS, check_agents, given_isolation, run_settings
from ref_sim.series.settings import HeadToHeadSettings, series_settings
from ref_sim.series.output import out_lock, records
from ref_sim.series.loop import (Stopped, append_game, capped_concurrency, conclude, play_games,
                                 prepare_out, run_in, went_wrong)
from ref_sim.series.output.game_line import GameLine
from ref_sim.series.specs import keep_recorded_names
from ref_sim.series.process.launch import AgentCannotStart
from ref_sim.series.output.progress import Progress

__all__ = ["MAX_GAMES", "MAX_TURN_MS", "Slot", "SeriesCommand", "HeadToHead"]


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

    def __init__(self, total: int, figures, played: list[GameLine], terminal: bool) -> None:
        self.line = Progress(total, terminal=terminal, done=len(played))
        self.figures, self.played = figures, list(played)
        if self.line.terminal:
            self.line.update(len(self.played), figures(self.played))

    def start(self, pairing: int) -> None:
        """A game is starting: nothing to show."""

    def game(self, pairing: int, line: str, game: GameLine) -> None:
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

    def __init__(self, *, connect=cluster.connect) -> None:
        self.connect = connect          # how --cluster's scheduler is reached
    #: A bot that cannot start: False stops the run (a rehearsal of two bots says why at once);
    #: True scores each game it could not start as its loss, and the run goes on (an event).
    forfeits = False

    def build_parser(self) -> argparse.ArgumentParser:
        raise NotImplementedError

    def check(self, parser, args) -> None:
        """Usage errors the parsed command line alone shows."""

    def settle(self, args) -> None:
        """The command line's one reading: :attr:`settings`, this run's settings value (the
        recorded ones when resuming, :mod:`ref_sim.series.settings`), and the bots; ValueError
        (one line), or CannotResume."""
        raise NotImplementedError

    def only_check(self) -> int | None:
        """A run that only checks its bots and plays nothing into --out (the tournament's
        ``--check``): its exit code; None: play the games."""
        return None

    def ready(self, parser) -> None:
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

    def series(self, out: Path, isolate, stop: threading.Event, done: list[GameLine]) -> list:
        """The :class:`ref_sim.series.loop.SeriesGames` of each pairing (one for a series)."""
        raise NotImplementedError

    def progress(self, done: list[GameLine]):
        """What shows the games as they end (``start``, ``game``, ``close``)."""
        raise NotImplementedError

    def describe(self, game: GameLine) -> str:
        """A finished game in one line."""
        raise NotImplementedError

    def annotate(self, slot: Slot, game: GameLine) -> GameLine:
        """``game`` with what its line holds beyond its series' (a tournament's pairing)."""
        return game

    def after_game(self, out: Path, games: list[GameLine], game: GameLine) -> None:
        """A game was just recorded (``games``: all so far)."""

    def report(self, games: list[GameLine]) -> list[str]:
        """The summary's lines over ``games``."""
        raise NotImplementedError

    def more_lines(self) -> list[str]:
        """Lines after where the files are (read once the report is made)."""
        return []

    # -- the skeleton ---------------------------------------------------------------------

    def main(self, argv: list[str] | None = None) -> int:
        """Parse, settle the settings, make --out, hold it, and play the games here or on a cluster."""
        self.parser = parser = self.build_parser()
        args = parser.parse_args(argv)
        self.warnings: list[str] = []
        isolation.check_options(parser, args)
        cluster_address.check_options(parser, args)
        self.check(parser, args)
        try:
            self.settle(args)               # args is read here, and no more
        except (ValueError, records.CannotResume) as error:
            parser.error(str(error))
        run = self.settings.run
        self.say = (lambda *a, **k: None) if run.quiet else (lambda *a, **k: print(*a, **k, flush=True))
        checked = self.only_check()         # before --out is made: a check writes nothing there
        if checked is not None:
            return checked
        if run.out:         # created once the settings are known: a refused --resume makes nothing
            problem = prepare_out(run.out)
            if problem:
                parser.error(problem)
        self.ready(parser)
        concurrency = capped_concurrency(run.concurrency)
        if run.show and concurrency > 1:
            print("warning: --show plays one game at a time", file=sys.stderr)
            concurrency = 1
        for warning in self.warnings:
            print(warning, file=sys.stderr)
        if run.cluster and run.show:
            parser.error("--show plays here, one game at a time: not with --cluster")
        with out_lock.lock_out(run.out, stops.invoked_as(self.module), argv):   # one runner per --out
            return run_in(parser, run.cluster, run.out, self.prefix, self.play, concurrency,
                          connect=self.connect)

    def play(self, runner, out: Path) -> int:
        """Play the games not yet in ``out``'s games.jsonl, then the report; the exit code."""
        run, say = self.settings.run, self.say
        games_path = out / "games.jsonl"
        if records.recorded_games(games_path) and not run.resume:
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
            isolate = sandbox.for_event(run.isolate, [spec.template for spec in self.specs], out)
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
            say(self.header(runner, out, bool(run.out)))
            if done:
                say(f"resuming: {len(done)} of {len(slots)} games already played, {len(todo)} to go")
            if isolate is not None:
                say(contain.status_line(isolate, runner.capacity()))
                if run.isolated_as_recorded:
                    say(f"isolated as the {self.what} began: --resume keeps the isolation it recorded")
            series = self.series(out, isolate, stop, done)
            progress = None if run.quiet else self.progress(done)
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

        def report(games: list[GameLine]) -> list[str]:
            lines = self.report(games)
            pages.extend(self.more_lines())
            return lines

        return conclude(self.module, games, report, out_arg=run.out, out=out, say=say,
                        progress=progress, figures=self.figures, decided=self.decided,
                        what=self.what, resume_options=isolation.command_options(isolate),
                        more_lines=pages, stopped=stopped)


class HeadToHead(SeriesCommand):
    """A series between two bots (match, stdio): AGENT1 AGENT2, series.json, one series of games.
    A subclass gives its own settings (:meth:`given`, :meth:`defaults`, :attr:`flags`, and
    :meth:`value`, the settings value they make) and how it reads a bot (:meth:`spec`)."""

    noun = "agent"
    flags: dict = {}                # each of its own settings' option, for messages
    settings: HeadToHeadSettings

    def spec(self, text: str):
        raise NotImplementedError

    def given(self, args) -> dict:
        """Its own settings as the command line gives them (None: left out)."""
        return {}

    def defaults(self) -> dict:
        """Its own settings in a new series (``games`` among them)."""
        return {}

    def value(self, settings: dict, run, say) -> HeadToHeadSettings:
        """The settings value of the merged ``settings`` (``say``: notes on the games)."""
        raise NotImplementedError

    def check(self, parser, args) -> None:
        check_agents(parser, args, self.noun)

    def settle(self, args) -> None:
        given = {"agents": None if args.agent1 is None else [args.agent1, args.agent2],
                 "seed": args.seed, "games": args.games, **self.given(args),
                 "isolate": given_isolation(args)}
        defaults = {"agents": None, "seed": random.randrange(2 ** 32), **self.defaults(),
                    "isolate": None}
        flags = {"agents": "AGENT1 AGENT2", "seed": "--seed", "games": "--games", **self.flags,
                 "isolate": "--isolate"}
        out = Path(args.out) if args.out else None
        settings, self.before = series_settings(out, args.resume, given, defaults, flags)
        self.specs = [self.spec(text) for text in settings["agents"]]
        if self.before is not None:
            keep_recorded_names(self.specs, self.before.get("names"))
        self.names = realbots.side_names(self.specs)    # a clash of names: refused before any game
        run = run_settings(args, settings["isolate"], out and out / self.settings_name)
        self.notes: list[str] = []      # said once --out is made
        self.settings = self.value(settings, run, self.notes.append)

    def ready(self, parser) -> None:
        for note in self.notes:
            self.say(note)

    def slots(self) -> list[Slot]:
        return [Slot(k, 0, k) for k in range(1, self.settings.games + 1)]

    def bots_lines(self) -> str:
        return "\n".join(f"{name}: {spec.template}" for name, spec in zip(self.names, self.specs))

    def progress(self, done: list[GameLine]) -> SeriesProgress:
        # On a terminal the line is redrawn (not with --show, whose boards scroll).
        return SeriesProgress(self.settings.games, self.figures, done,
                              terminal=sys.stdout.isatty() and not self.settings.run.show)
