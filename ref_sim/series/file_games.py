"""One game through the referee's files, as a series plays it: both bots started in the game's
directory, refereed by :mod:`ref_sim.referees.file_shell`, collected, and recorded as a
``games.jsonl`` line (:func:`game_line`; the keys: docs/formats.md).  :class:`FileGames` is the
series engine's view of such games (:mod:`ref_sim.series.loop`); ``uttt-match``, the tournament
and the soak play them.  CodinGame's counterpart is :mod:`ref_sim.series.codingame_games`."""

from __future__ import annotations

import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from ref_sim.referees.file_shell import Printer, run_game
from ref_sim.referees.file_referee import START_DELAY, TICK, GameRecord, RefereeSettings
from ref_sim.series.run import shipping
from ref_sim.series.process import isolation, launch
from ref_sim.series import openings, realbots
from ref_sim.series.output import records, telemetry
from ref_sim.series.output.game_line import GameLine, Played, score_of
from ref_sim.series.process.bot_process import BotProcess, GameBots
from ref_sim.series.process.launch import AgentCannotStart
from ref_sim.series.loop import SeriesGames
from ref_sim.series.specs import AgentSpec

#: After end_game, how long an agent may take to exit before it is killed: this, or one
#: time limit and a second if that is longer (an agent may be searching when the game
#: ends).  The game's files stay until then, or until every agent has exited.
EXIT_WAIT = 3.0
#: The referee starts once each agent has printed something (it is up) or exited, or after
#: this many seconds.  The real referee has no handshake and writes the opening 0.3 s after
#: its launch; in a tournament the players are started by hand well before it, so a player
#: still importing its modules when the opening appears would be a runner artefact.
STARTUP_WAIT = 2.0
FORMAT = 1


@dataclass(frozen=True)
class FileGameSettings:
    """How every game of a series through the referee's files is played (picklable: it travels
    with a game to a cluster worker).

    ``encoding``: the referee's, passed to the built-in agents too (None: the locale's, for all).
    ``referee_encoding``: the referee's alone, where the agents learn theirs from ``env`` (added
    to their environment: a locale, ``LC_ALL``...).  ``isolate``: each agent contained
    (:mod:`ref_sim.series.process.isolation`).  ``show``: print every move's board.  ``startup_wait``:
    :data:`STARTUP_WAIT`; ``exit_wait``: :data:`EXIT_WAIT`.  ``tick``, ``start_delay`` and
    ``busy_poll``: the referee's (:class:`ref_sim.referees.file_referee.RefereeSettings`)."""
    time_limit: float
    encoding: str | None = None
    referee_encoding: str | None = None
    env: dict | None = field(default=None)
    isolate: isolation.Isolation | None = None
    show: bool = False
    startup_wait: float = STARTUP_WAIT
    exit_wait: float = EXIT_WAIT
    tick: float = TICK
    start_delay: float = START_DELAY
    busy_poll: bool = False

    def exit_time(self) -> float:
        """Seconds an agent has after end_game to exit: ``exit_wait``, or one time limit and a
        second if that is longer (an agent may be searching when the game ends)."""
        return max(self.exit_wait, self.time_limit + 1.0)

    def referee(self) -> RefereeSettings:
        """The referee's settings for one game: the files stay until the agents had time to exit."""
        return RefereeSettings(time_limit=self.time_limit, tick=self.tick, start_delay=self.start_delay,
                               exit_delay=self.exit_time(), busy_poll=self.busy_poll,
                               encoding=self.referee_encoding or self.encoding)


# -- one game -----------------------------------------------------------------------------

def start_agent(spec: AgentSpec, name: str, directory: Path, time_limit: float, log: Path,
                seed: int = 0, encoding: str | None = None, env: dict | None = None,
                isolate: isolation.Isolation | None = None, search_log: Path | None = None,
                ready: Path | None = None):
    """Launch one agent in ``directory`` (:meth:`ref_sim.series.process.bot_process.BotProcess.start`:
    ``env``, ``isolate``, ``search_log``, ``ready``), its output into ``log``; its process, or
    None if it could not be launched."""
    directory = Path(directory).absolute()
    return BotProcess.start(name, spec.command(name, directory, time_limit, seed, encoding), log,
                            isolate=isolate, directory=directory, env=env, search_log=search_log,
                            ready=ready).process


def play_game(number: int, specs: dict, names, directory: Path, logs: Path,
              settings: FileGameSettings, *, seed: int | None = None, first=None, opening=None,
              agent_seeds=None, must_start: bool = False, stop=None, observe=None,
              referee=run_game):
    """One game: start both agents, referee, then collect them.  Returns a
    :class:`ref_sim.series.output.game_line.Played`: the referee's record, the notes, what each
    agent used (isolated or not), who was late to start and a time-out's share of a core.

    specs maps each name to its AgentSpec; names is the order given to the referee.
    notes maps a name to "crashed (...)" (exited before the end) or "did not exit (killed)".
    settings: how it is played (:class:`FileGameSettings`); seed, first, opening: the
    referee's (:func:`ref_sim.referees.file_shell.run_game`); agent_seeds: each agent's.
    stop: a threading.Event that aborts the game (Ctrl-C); observe: called with each of the
    referee's events (``uttt-tournament --check`` stops a game once a bot moved).  must_start: raise
    :class:`AgentCannotStart` instead of playing when an agent has already exited (or could
    not be launched) once the others are up (the first game of a series).  referee: what referees the game in ``directory``
    (:func:`ref_sim.referees.file_shell.run_game`'s signature).
    """
    agent_seeds = agent_seeds or {}
    directory.mkdir(parents=True, exist_ok=True)
    # Contained bots each play in a view of their own (the referee keeps its files in both), so
    # that neither can touch the other's turn: ref_sim.referees.file_shell._ViewsShell.
    views = {name: directory / name for name in names} if settings.isolate is not None else None
    home = {name: (views or {}).get(name, directory).absolute() for name in names}
    for view in home.values():
        view.mkdir(exist_ok=True)
    seen = {}                       # the referee's record, from its "start" event on, and its end
    printer = Printer(boards=True) if settings.show else None
    try:
        with GameBots(logs, number) as bots:
            for name in names:
                bots.start(name, specs[name].command(name, home[name], settings.time_limit,
                                                     agent_seeds.get(name, 0), settings.encoding),
                           isolate=settings.isolate, directory=home[name], env=settings.env,
                           scratch=[home[name] / s.format(name=name) for s in specs[name].scratch])
            late = bots.wait_until_started(settings.startup_wait,
                                           patient={name for name in names if specs[name].builtin})
            if must_start:      # a tournament goes on: no trace of the game but its logs
                bots.refuse_early_exit()

            def decided() -> bool:
                # The referee sets the end's text before it writes end_game, and reports the end
                # only after both .go files: an agent may exit on end_game before that report, not
                # before this; after an abort, its exit is no crash either.
                record = seen.get("record")
                return "over" in seen or record is not None and record.end_text is not None

            def on_event(event):
                if observe is not None:
                    observe(event)
                bots.meter.file_event(event)
                if event.kind == "start":
                    seen["record"] = event.record
                if event.kind in ("end", "abort"):
                    seen["over"] = True
                # The end and an abort are reported once, by the series' "Game N:" line.
                elif printer is not None:
                    printer(event)

            with bots.exits_noted(decided) as exited_early:
                record = referee(directory, names[0], names[1], settings.referee(), seed=seed,
                                 first=first, opening=opening, on_event=on_event, stop=stop,
                                 agents_gone=bots.all_exited, views=views)
            if stop is not None and stop.is_set():
                bots.kill()
            notes = {name: f"crashed ({why})" for name, why in exited_early.items()}
            for name in bots.kill_lingering(0.05, skip=notes):  # run_game waited for them to exit
                if record.result != "aborted":      # no end_game to read: not the agent's fault
                    notes[name] = "did not exit (killed)"
            usage = bots.end()                      # reaped: CPU seconds, peak memory
        record.save(logs / f"game-{number:04d}.json")
    finally:
        for folder in [*(views or {}).values(), directory]:
            try:
                folder.rmdir()                  # the referee cleaned it: no empty folder left
            except OSError:
                pass                            # something else is in it: keep it
    return Played(record, notes, usage=usage or None, late_start=late,
                  **bots.meter.keys(record.reason, record.loser))


def play_game_on_worker(number: int, specs: dict, names, settings: FileGameSettings, *,
                        play=play_game, **options):
    """``play`` (:func:`play_game`) in a temporary directory of the machine that runs it (a
    cluster worker).  Returns ``(played, logs)``, ``logs`` the game's log files by name, for
    :func:`ref_sim.series.run.shipping.save_files` into the series' ``logs/``."""
    with tempfile.TemporaryDirectory(prefix="uttt-game-") as temp:
        logs = Path(temp) / "logs"
        logs.mkdir()
        played = play(number, specs, names, Path(temp) / f"game-{number:04d}", logs, settings,
                      **options)
        return played, shipping.read_files(logs)


def game_line(played: Played, scheduled: openings.Scheduled, series_seed: int,
              specs: list[AgentSpec], names: list[str], logs: Path,
              encoding: str | None = None) -> GameLine:
    """The games.jsonl line of a game, each key described in docs/formats.md (keep the two
    together); ``encoding``: the series' ``--encoding``, as given to the agents."""
    record, notes = played.record, played.notes
    moves = record.to_dict()["moves"]
    skipped = telemetry.attach_search_logs(moves, names, logs, scheduled.index)
    return GameLine(
        game=scheduled.index, pair=scheduled.pair, series_seed=series_seed, seed=scheduled.seed, time_limit=record.time_limit,
        encoding=record.encoding,
        agents=[{"name": name, "spec": spec.spec,
                 "command": spec.command(name, "{dir}", record.time_limit, agent_seed, encoding),
                 "seed": agent_seed}
                for name, spec, agent_seed in zip(names, specs, scheduled.agent_seeds)],
        names=list(record.names), p1=record.p1, p2=record.p2,
        opening=[list(item) for item in record.opening], moves=moves,
        result=record.result, winner=record.winner, loser=record.loser,
        reason=record.reason, end_text=record.end_text, bad_line=record.bad_line,
        score=score_of(record.result, record.winner, names[0]), notes=dict(notes),
        hints=realbots.stall_notes(record, notes, dict(zip(names, specs)), played.late_start),
        started=record.started, duration=round(record.duration, 3),
        usage=played.usage, timeout_share=played.timeout_share,
        machine_timeout=played.machine_timeout, **skipped)


class FileGames(SeriesGames):
    """A series through the referee's files: game ``k`` is :func:`ref_sim.series.openings.game`'s
    (opening, who moves first, the seeds), played by ``play`` (:func:`play_game`, or what takes
    its arguments) in ``out`` with ``settings`` (:class:`FileGameSettings`)."""

    def __init__(self, specs: list[AgentSpec], names: list[str], seed: int,
                 settings: FileGameSettings, out: Path, *, paired: bool = True,
                 stop: threading.Event | None = None, play=play_game) -> None:
        self.specs, self.names, self.seed, self.settings = specs, names, seed, settings
        self.out, self.logs = out, out / "logs"
        self.paired, self.play = paired, play
        self.stop = threading.Event() if stop is None else stop

    def scheduled(self, k: int, number: int | None = None) -> openings.Scheduled:
        return replace(openings.game(self.seed, k, self.paired), index=number or k)

    def submit(self, runner, k: int, must_start: bool, number: int | None = None):
        scheduled = self.scheduled(k, number)
        number = scheduled.index
        order = self.names if k % 2 else self.names[::-1]      # the referee's order: no meaning
        specs = dict(zip(self.names, self.specs))
        options = {"seed": scheduled.seed, "first": self.names[scheduled.first],
                   "opening": list(scheduled.opening),
                   "agent_seeds": dict(zip(self.names, scheduled.agent_seeds)),
                   "must_start": must_start}
        if runner.remote:       # played in a temporary directory of a worker, nothing shown
            return runner.submit(f"game-{number}", play_game_on_worker, number, specs, order,
                                 replace(self.settings, show=False), play=self.play, **options)
        return runner.submit(f"game-{number}", self.play, number, specs, order,
                             self.out / f"game-{number:04d}", self.logs, self.settings,
                             stop=self.stop, **options)

    def game_line(self, played: Played, *, k: int, number: int) -> GameLine:
        return game_line(played, self.scheduled(k, number), self.seed, self.specs, self.names,
                         self.logs, self.settings.encoding)

    def forfeit_line(self, error: AgentCannotStart, *, k: int, number: int) -> GameLine:
        scheduled = self.scheduled(k, number)
        p1 = self.names[scheduled.first]
        gone = {name: why for name, why in error.gone.items() if name in self.names}
        result, winner, loser = launch.forfeit_result(self.names, gone)
        record = GameRecord(tuple(self.names), self.settings.time_limit, seed=scheduled.seed,
                            p1=p1, p2=next(name for name in self.names if name != p1),
                            result=result, winner=winner, loser=loser,
                            reason=records.CANNOT_START, started=time.time())
        return replace(self.game_line(Played(record), k=k, number=number), cannot_start=gone)
