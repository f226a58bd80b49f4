"""One game through the referee's files, as a series plays it: both bots started in the game's
directory, refereed by :mod:`ref_sim.referees.file_protocol`, collected, and recorded as a
``games.jsonl`` line (:func:`game_line`; the keys: docs/formats.md).  :class:`FileGames` is the
series engine's view of such games (:mod:`ref_sim.series.loop`); ``uttt-match``, the tournament
and the soak play them.  CodinGame's counterpart is :mod:`ref_sim.series.codingame_games`."""

from __future__ import annotations

import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from ref_sim import command_words
from ref_sim import stops
from ref_sim.referees.file_protocol import Printer, run_game
from ref_sim.referees.file_referee import START_DELAY, TICK, GameRecord, RefereeSettings
from ref_sim.series import cluster, isolation, openings, realbots, telemetry, turn_share
from ref_sim.series import launch
from ref_sim.series.launch import AgentCannotStart, child_env, refuse_early_exit, wait_until_started
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
    (:mod:`ref_sim.series.isolation`).  ``show``: print every move's board.  ``startup_wait``:
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
    """Launch one agent, its output into ``log``; ``env``: variables added to its
    environment (a locale to run it under); ``isolate``: contained (ref_sim.series.isolation), it
    may write ``directory`` only, ``search_log``, the file its moves' figures go to
    (``UTTT_SEARCH_LOG``, ref_sim.series.telemetry), and ``ready``, the file it writes once it is
    up (``UTTT_READY_FILE``); None if it could not be launched. It runs in ``directory``: every
    path it is given is absolute."""
    env = {**child_env(), **(env or {})}
    writable = [Path(directory).absolute()]
    if search_log is not None:
        search_log = search_log.absolute()
        env = telemetry.search_log_env(search_log, env)
        if isolate is not None:     # a sandbox lets it write this one file of logs/, not the folder
            search_log.touch()
            writable.append(search_log)
    if ready is not None:
        env = launch.ready_env(ready.absolute(), env)
        writable.append(ready.absolute())
    directory = Path(directory).absolute()      # its working directory, as the real referee's
    handle = open(log, "w", encoding="utf-8")
    try:
        command = spec.command(name, directory, time_limit, seed, encoding)
        handle.write(f"$ {command_words.join(command)}\n")
        handle.flush()
        # A session of its own (stops.start): Ctrl-C in the terminal stops the runner, which
        # stops the agents; and a process group that stops.kill_tree ends whole.
        process = isolation.start(command, isolate, writable=writable, stdout=handle,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                  cwd=directory)
    except (OSError, ValueError) as error:
        handle.write(f"could not start: {error}\n")
        process = None
    handle.close()
    return process


def play_game(number: int, specs: dict, names, directory: Path, logs: Path,
              settings: FileGameSettings, *, seed: int | None = None, first=None, opening=None,
              agent_seeds=None, must_start: bool = False, stop=None, observe=None):
    """One game: start both agents, referee, then collect them.  Returns (record, notes).

    specs maps each name to its AgentSpec; names is the order given to the referee.
    notes maps a name to "crashed (...)" (exited before the end) or "did not exit (killed)".
    settings: how it is played (:class:`FileGameSettings`); seed, first, opening: the
    referee's (:func:`ref_sim.referees.file_protocol.run_game`); agent_seeds: each agent's.
    stop: a threading.Event that aborts the game (Ctrl-C); observe: called with each of the
    referee's events (``uttt-tournament --check`` stops a game once a bot moved).  must_start: raise
    :class:`AgentCannotStart` instead of playing when an agent has already exited (or could
    not be launched) once the others are up (the first game of a series).  What each agent
    used is ``record.usage``, isolated or not.
    """
    agent_seeds = agent_seeds or {}
    directory.mkdir(parents=True, exist_ok=True)
    # Contained bots each play in a view of their own (the referee keeps its files in both), so
    # that neither can touch the other's turn: ref_sim.referees.file_protocol._ViewsShell.
    views = {name: directory / name for name in names} if settings.isolate is not None else None
    home = views or dict.fromkeys(names, directory)
    for view in home.values():
        view.mkdir(exist_ok=True)
    processes, log_paths = {}, {}
    ready = {name: launch.ready_path(logs, number, name) for name in names}
    for name in names:
        log_paths[name] = logs / f"game-{number:04d}-{name}.log"
        processes[name] = start_agent(specs[name], name, home[name], settings.time_limit,
                                      log_paths[name], agent_seeds.get(name, 0), settings.encoding,
                                      settings.env, settings.isolate,
                                      telemetry.search_log_path(logs, number, name), ready[name])
    late = wait_until_started(processes, log_paths, settings.startup_wait, ready=ready,
                              patient={name for name in names if specs[name].builtin})
    if must_start:
        try:
            refuse_early_exit(processes, log_paths)
        except AgentCannotStart:
            for other in processes.values():
                stops.kill_tree(other)
            for name in names:          # a tournament goes on: no trace of the game but its logs
                ready[name].unlink(missing_ok=True)
            for folder in [*(views or {}).values(), directory]:
                try:
                    folder.rmdir()
                except OSError:
                    pass                # a bot wrote something there: kept
            raise
    exited_early = {}
    finished = threading.Event()
    game = {}                       # the referee's record, from its "start" event on

    def decided() -> bool:
        # The referee sets the end's text before it writes end_game, and reports the end only
        # after both .go files: an agent may exit on end_game before that report, not before this.
        return game.get("record") is not None and game["record"].end_text is not None

    def watch():                    # notes which agents exit before the game ends
        while not finished.wait(0.02):
            for name, process in processes.items():
                if process is None:
                    exited_early.setdefault(name, "could not start")
                elif name not in exited_early and process.poll() is not None and not decided():
                    said = process.disk_note() if hasattr(process, "disk_note") else ""
                    exited_early[name] = (f"exited with code {process.returncode}"
                                          + (f": {said}" if said else ""))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    printer = Printer(boards=True) if settings.show else None
    meter = turn_share.TurnMeter(processes)     # was a time-out the machine's?

    def on_event(event):
        if observe is not None:
            observe(event)
        meter.file_event(event)
        if event.kind == "start":
            game["record"] = event.record
        if event.kind in ("end", "abort"):
            finished.set()
        # The end and an abort are reported once, by the series' "Game N:" line.
        if printer is not None and event.kind not in ("end", "abort"):
            printer(event)

    def all_exited() -> bool:
        return all(p is None or p.poll() is not None for p in processes.values())
    try:
        record = run_game(directory, names[0], names[1], settings.referee(), seed=seed,
                          first=first, opening=opening, on_event=on_event, stop=stop,
                          agents_gone=all_exited, views=views)
    except BaseException:       # no agent outlives a game that went wrong here
        for process in processes.values():
            stops.kill_tree(process)
        raise
    finally:
        finished.set()
        watcher.join()
        if stop is not None and stop.is_set():
            for process in processes.values():
                stops.kill_tree(process)
    notes = {name: f"crashed ({why})" for name, why in exited_early.items()}
    for name, process in processes.items():     # run_game waited for them to exit
        if process is None or name in notes:
            continue
        try:
            process.wait(0.05)
        except subprocess.TimeoutExpired:
            stops.kill_tree(process)
            if record.result != "aborted":      # no end_game to read: not the agent's fault
                notes[name] = "did not exit (killed)"
    for process in processes.values():          # what an agent left running goes with it
        stops.kill_tree(process)
    record.usage = isolation.usage_of(processes)    # reaped: CPU seconds, peak memory
    for name in names:                          # bounded, whatever an agent wrote
        telemetry.trim_log(log_paths[name])
        telemetry.trim_log(telemetry.search_log_path(logs, number, name))
    for name in names:                          # every agent has exited: nothing rewrites them
        for scratch in specs[name].scratch:
            (home[name] / scratch.format(name=name)).unlink(missing_ok=True)
        ready[name].unlink(missing_ok=True)
    record.late_start = late                    # for the hints: who was not up when it began
    # games.jsonl's timeout_share and machine_timeout
    record.turn_share = meter.keys(record.reason, record.loser)
    record.save(logs / f"game-{number:04d}.json")
    for folder in [*(views or {}).values(), directory]:
        try:
            folder.rmdir()                  # the referee cleaned it: no empty folder left
        except OSError:
            pass                            # something else is in it: keep it
    return record, notes


def play_game_on_worker(number: int, specs: dict, names, settings: FileGameSettings, **options):
    """:func:`play_game` in a temporary directory of the machine that runs it (a cluster
    worker).  Returns ``(record, notes, logs)``, ``logs`` the game's log files by name, for
    :func:`ref_sim.series.cluster.save_files` into the series' ``logs/``."""
    with tempfile.TemporaryDirectory(prefix="uttt-game-") as temp:
        logs = Path(temp) / "logs"
        logs.mkdir()
        record, notes = play_game(number, specs, names, Path(temp) / f"game-{number:04d}", logs,
                                  settings, **options)
        return record, notes, cluster.read_files(logs)


def game_line(record: GameRecord, notes: dict, scheduled: openings.Scheduled, series_seed: int,
              specs: list[AgentSpec], names: list[str], logs: Path,
              encoding: str | None = None) -> dict:
    """The games.jsonl object of a game, each key described in docs/formats.md (keep the two
    together); ``encoding``: the series' ``--encoding``, as given to the agents."""
    data = record.to_dict()
    moves = data["moves"]
    skipped = {}
    for name in names:
        path = telemetry.search_log_path(logs, scheduled.index, name)
        skipped[name] = telemetry.attach_search_log(moves, name, path)[1]
    if record.result == "tie":
        points = 0.5
    elif record.result == "win":
        points = 1.0 if record.winner == names[0] else 0.0
    else:
        points = None
    return {
        "format": FORMAT, "game": scheduled.index, "pair": scheduled.pair,
        "series_seed": series_seed, "seed": scheduled.seed, "time_limit": record.time_limit,
        "encoding": record.encoding,
        "agents": [{"name": name, "spec": spec.spec,
                    "command": spec.command(name, "{dir}", record.time_limit, agent_seed,
                                            encoding),
                    "seed": agent_seed}
                   for name, spec, agent_seed in zip(names, specs, scheduled.agent_seeds)],
        "names": list(record.names), "p1": record.p1, "p2": record.p2,
        "opening": [list(item) for item in record.opening], "moves": moves,
        "result": record.result, "winner": record.winner, "loser": record.loser,
        "reason": record.reason, "end_text": record.end_text, "bad_line": record.bad_line,
        "score": points, "notes": dict(notes),
        "hints": realbots.stall_notes(record, notes, dict(zip(names, specs)),
                                      getattr(record, "late_start", None)),
        "started": record.started, "duration": round(record.duration, 3),
        **({"usage": record.usage} if getattr(record, "usage", None) else {}),
        **(getattr(record, "turn_share", None) or {}),
        **telemetry.skipped_key(skipped),
    }


class FileGames(SeriesGames):
    """A series through the referee's files: game ``k`` is :func:`ref_sim.series.openings.game`'s
    (opening, who moves first, the seeds), played by :func:`play_game` in ``out`` with
    ``settings`` (:class:`FileGameSettings`)."""

    def __init__(self, specs: list[AgentSpec], names: list[str], seed: int,
                 settings: FileGameSettings, out: Path, *, paired: bool = True,
                 stop: threading.Event | None = None) -> None:
        self.specs, self.names, self.seed, self.settings = specs, names, seed, settings
        self.out, self.logs = out, out / "logs"
        self.paired = paired
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
                                 replace(self.settings, show=False), **options)
        return runner.submit(f"game-{number}", play_game, number, specs, order,
                             self.out / f"game-{number:04d}", self.logs, self.settings,
                             stop=self.stop, **options)

    def game_line(self, record, notes, *, k: int, number: int) -> dict:
        return game_line(record, notes, self.scheduled(k, number), self.seed, self.specs,
                         self.names, self.logs, self.settings.encoding)

    def forfeit_line(self, error: AgentCannotStart, *, k: int, number: int) -> dict:
        scheduled = self.scheduled(k, number)
        p1 = self.names[scheduled.first]
        gone = {name: why for name, why in error.gone.items() if name in self.names}
        result, winner, loser = launch.forfeit_result(self.names, gone)
        record = GameRecord(tuple(self.names), self.settings.time_limit, seed=scheduled.seed,
                            p1=p1, p2=next(name for name in self.names if name != p1),
                            result=result, winner=winner, loser=loser,
                            reason=launch.CANNOT_START, started=time.time())
        return {**self.game_line(record, {}, k=k, number=number), "cannot_start": gone}
