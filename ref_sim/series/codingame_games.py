"""One game of CodinGame's protocol, as a series plays it: both programs started (each with
its seed, contained by ``--isolate``), refereed by :mod:`ref_sim.referees.codingame_shell`, ended,
and recorded as a ``games.jsonl`` line (the keys: docs/formats.md).
:class:`StdioGames` is the series engine's view of such games (:mod:`ref_sim.series.loop`);
``uttt-stdio`` and the tournament play them.  The file protocol's counterpart is
:mod:`ref_sim.series.file_games`."""

from __future__ import annotations

import random
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ref_sim.referees.codingame_shell import (DEFAULT_FIRST_TURN_MS, DEFAULT_GRACE_MS, DEFAULT_TURN_MS,
                                       EXIT_WAIT, Program, referee_game)
from ref_sim.rules import CODINGAME
from ref_sim.series.run import shipping
from ref_sim.series.process import isolation, launch, turn_share
from ref_sim.series.output import records, telemetry
from ref_sim.series.output.game_line import GameLine, Played, score_of
from ref_sim.series.process.bot_process import BotProcess, GameBots
from ref_sim.series.loop import SeriesGames
from ref_sim.series.specs import StdioSpec

#: series.json's format (the lines': :data:`ref_sim.series.output.game_line.FORMAT`).
FORMAT = 1
#: The first input waits for each program to write on stderr or exit, at most this long.
STARTUP_WAIT = 2.0


@dataclass(frozen=True)
class StdioGameSettings:
    """How every game of a series through stdin/stdout is played (picklable: it travels with a
    game to a cluster worker): the turn's times (:mod:`ref_sim.referees.codingame_shell`), each
    program contained by ``isolate``, and how long a program may take to start
    (:data:`STARTUP_WAIT`) and to exit after the game (the referee's ``EXIT_WAIT``)."""
    turn_ms: float = DEFAULT_TURN_MS
    first_turn_ms: float = DEFAULT_FIRST_TURN_MS
    grace_ms: float = DEFAULT_GRACE_MS
    isolate: isolation.Isolation | None = None
    startup_wait: float = STARTUP_WAIT
    exit_wait: float = EXIT_WAIT


def start_program(name: str, command: list[str], log: Path, isolate: isolation.Isolation | None = None,
                  search_log: Path | None = None, ready: Path | None = None) -> Program:
    """Start one program for the referee: stdin and stdout piped to it, stderr into ``log``
    (:meth:`ref_sim.series.process.bot_process.BotProcess.start`: ``isolate``, ``search_log``, ``ready``).
    A program that cannot be launched is a Program without a process."""
    return program_of(BotProcess.start(name, command, log, isolate=isolate, search_log=search_log,
                                       ready=ready, piped=True))


def program_of(bot: BotProcess) -> Program:
    """The referee's view of a piped bot, which ends it (it closes the pipes it reads)."""
    program = Program(bot.name, bot.command, bot.log, bot.process, bot.search_log)
    bot.ends_with(program.kill)
    return program


def play_game(commands: dict[str, list[str]], first: str, logs: Path,
              settings: StdioGameSettings = StdioGameSettings(), number: int = 1, *, show=None,
              must_start: bool = False, stop: threading.Event | None = None, patient=()) -> Played:
    """Play one game between two commands (``{name: argv}``); ``first`` moves first, as
    ``settings`` say (:class:`StdioGameSettings`); ``show``: given each position's text;
    ``patient``: the names of built-ins, waited for until they say they are up
    (:func:`ref_sim.series.process.launch.wait_until_started`).

    Returns a :class:`ref_sim.series.output.game_line.Played`: the game's record
    (:func:`ref_sim.referees.codingame_shell.referee_game`'s), what each program used and a
    time-out's share of a core.  ``must_start``: raise
    :class:`ref_sim.series.process.launch.AgentCannotStart` when a program has exited (or could not be
    launched) before the first input (the first game of a series: its command is wrong).
    ``stop``: a threading.Event that ends the game at once (result "aborted").  Whatever
    happens, no program outlives the game, and every log is bounded."""
    names = [first] + [name for name in commands if name != first]
    logs.mkdir(parents=True, exist_ok=True)
    with GameBots(logs, number) as bots:        # stopped, or an error: all ended
        programs = {name: program_of(bots.start(name, commands[name], isolate=settings.isolate,
                                                piped=True))
                    for name in names}
        bots.wait_until_started(settings.startup_wait, stop, patient=patient)
        if must_start:
            bots.refuse_early_exit()
        meter = bots.meter                      # was a time-out the machine's?
        for program in programs.values():
            turn_share.watch(meter, program)
        record = referee_game(programs, names, settings.turn_ms, settings.first_turn_ms,
                              settings.grace_ms, show, settings.exit_wait, stop)
        usage = bots.end()
    return Played(record, usage=usage or None, **meter.keys(record["reason"], record["loser"]))


def commands_of(specs: dict, agent_seeds: dict, turn_ms: float, first_turn_ms: float) -> dict:
    """Each program's command line (``specs`` and ``agent_seeds`` by name), built where it runs."""
    return {name: spec.command(agent_seeds[name], turn_ms, first_turn_ms)
            for name, spec in specs.items()}


def play_game_on_worker(number: int, specs: dict, agent_seeds: dict, first: str,
                        settings: StdioGameSettings, **options):
    """:func:`play_game` on the machine that runs it (a cluster worker), the commands built
    there (its Python), the logs in a temporary directory.  ``specs`` and ``agent_seeds`` map
    each name to its :class:`StdioSpec` and seed.  Returns ``(played, commands, logs)``, ``logs``
    the log files by name, for :func:`ref_sim.series.run.shipping.save_files`."""
    commands = commands_of(specs, agent_seeds, settings.turn_ms, settings.first_turn_ms)
    with tempfile.TemporaryDirectory(prefix="uttt-game-") as temp:
        logs = Path(temp) / "logs"
        played = play_game(commands, first, logs, settings, number,
                           patient={name for name, spec in specs.items() if spec.builtin}, **options)
        return played, commands, shipping.read_files(logs)


# -- the series ---------------------------------------------------------------------------

#: What the summary suggests when games repeat (two deterministic programs replay one pair).
REPEAT_HINT = ("give each program its per-game seed ({seed} in a command; the built-ins get "
               "--seed) or let it vary with its timing")


def agent_seeds(seed: int, number: int) -> list[int]:
    """The two programs' seeds in game ``number`` of the series ``seed`` (the same wherever
    and whenever the game is played: a resumed series gives a game the seeds it had)."""
    rng = random.Random(f"uttt-stdio/{seed}/{number}")
    return [rng.randrange(2 ** 32), rng.randrange(2 ** 32)]


def game_line(played: Played, commands: dict, number: int, series_seed: int, specs, names,
              logs: Path, k: int | None = None) -> GameLine:
    """The games.jsonl line of a game (each key described in docs/formats.md: keep the two
    together), with the search figures
    its programs logged.  ``k``: its number in its series when that is not ``number`` (a
    tournament's pairing): the pair and the seeds follow ``k``, ``game`` and the logs ``number``."""
    k, record = number if k is None else k, played.record
    skipped = telemetry.attach_search_logs(record["moves"], names, logs, number)
    score = score_of(record["result"], record["winner"], names[0])
    agents = [{"name": name, "spec": spec.spec, "command": commands[name], "seed": agent_seed}
              for name, spec, agent_seed in zip(names, specs, agent_seeds(series_seed, k))]
    return GameLine(game=number, pair=(k - 1) // 2, series_seed=series_seed, agents=agents,
                    **record, usage=played.usage, timeout_share=played.timeout_share,
                    machine_timeout=played.machine_timeout, score=score,
                    **skipped)


class StdioGames(SeriesGames):
    """A series through stdin/stdout: in game ``k`` agent 1 moves first when ``k`` is odd, and
    each program gets its seed of :func:`agent_seeds`; :func:`play_game` plays it here (its
    ``show``), :func:`play_game_on_worker` on a cluster worker."""

    def __init__(self, specs: list[StdioSpec], names: list[str], seed: int,
                 settings: StdioGameSettings, out: Path, *, show=None,
                 stop: threading.Event | None = None) -> None:
        self.specs, self.names, self.seed, self.show = specs, names, seed, show
        self.settings = settings
        self.logs = out / "logs"
        self.stop = threading.Event() if stop is None else stop

    def submit(self, runner, k: int, must_start: bool, number: int | None = None):
        number = number or k
        specs = dict(zip(self.names, self.specs))
        seeds = dict(zip(self.names, agent_seeds(self.seed, k)))
        first = self.names[(k - 1) % 2]
        if runner.remote:
            return runner.submit(f"game-{number}", play_game_on_worker, number, specs, seeds,
                                 first, self.settings, must_start=must_start)
        return runner.submit(f"game-{number}", self._play_here, number, specs, seeds, first,
                             must_start)

    def _play_here(self, number: int, specs: dict, seeds: dict, first: str, must_start: bool):
        commands = commands_of(specs, seeds, self.settings.turn_ms, self.settings.first_turn_ms)
        played = play_game(commands, first, self.logs, self.settings, number, show=self.show,
                           must_start=must_start, stop=self.stop,
                           patient={name for name, spec in specs.items() if spec.builtin})
        return played, commands

    def game_line(self, played: Played, commands, *, k: int, number: int) -> GameLine:
        return game_line(played, commands, number, self.seed, self.specs, self.names, self.logs, k)

    def forfeit_line(self, error: launch.AgentCannotStart, *, k: int, number: int) -> GameLine:
        settings, first = self.settings, self.names[(k - 1) % 2]
        names = [first] + [name for name in self.names if name != first]
        commands = commands_of(dict(zip(self.names, self.specs)),
                               dict(zip(self.names, agent_seeds(self.seed, k))),
                               settings.turn_ms, settings.first_turn_ms)
        gone = {name: why for name, why in error.gone.items() if name in self.names}
        result, winner, loser = launch.forfeit_result(self.names, gone)
        record = {"rules": CODINGAME, "turn_ms": settings.turn_ms,
                  "first_turn_ms": settings.first_turn_ms, "grace_ms": settings.grace_ms,
                  "names": names, "p1": names[0], "p2": names[1], "moves": [],
                  "result": result, "winner": winner, "loser": loser,
                  "reason": records.CANNOT_START, "bad_line": None, "late_ms": None,
                  "boards": dict.fromkeys(names, 0), "notes": {},
                  "slowest_ms": dict.fromkeys(names, 0.0), "started": time.time(), "duration": 0.0}
        return replace(self.game_line(Played(record), commands, k=k, number=number),
                       cannot_start=gone)
