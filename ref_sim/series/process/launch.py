"""Starting a game's bots, for both protocols' games (:mod:`ref_sim.series.file_games`,
:mod:`ref_sim.series.codingame_games`): the environment every bot runs with, and a bot that
cannot start at all (its command is wrong: the series stops rather than score forfeits)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from agent.lifeline import READY_ENV, RUNNER_ENV
from agent.options import real
from ref_sim.series import realbots
from ref_sim.series.output import telemetry
from ref_sim.series.specs import PROJECT_ROOT

#: The most either wait may be: an hour.
MAX_WAIT = 3600.0


def add_wait_options(parser, startup: float, exit_wait: float, exit_note: str) -> None:
    """``--startup-wait`` and ``--exit-wait`` on a runner's parser (match, stdio, tournament):
    how long a bot may take to start before the game begins anyway, and to exit after it."""
    group = parser.add_argument_group("bots starting and ending")
    group.add_argument("--startup-wait", type=real(0, MAX_WAIT), default=None, metavar="S",
                       help="the game begins once each bot is up (it printed something) or after "
                            f"this many seconds (default {startup:g}; longer on a loaded machine)")
    group.add_argument("--exit-wait", type=real(0, MAX_WAIT), default=None, metavar="S",
                       help=f"seconds a bot has to exit after the game before it is killed and "
                            f"counted as a hang (default {exit_wait:g}{exit_note})")


def waits_given(args) -> dict:
    """The waits given on the command line, as keyword arguments of a game's settings."""
    return {name: value for name in ("startup_wait", "exit_wait")
            if (value := getattr(args, name, None)) is not None}

def child_env() -> dict:
    """The environment of an agent process: this project importable, output unbuffered, and
    this runner's process id (agent.lifeline): a player whose runner died, even by SIGKILL,
    ends by itself instead of waiting for a referee that will never come."""
    env = dict(os.environ)
    # The runner's folder too: "python -m mybot" found mybot there before agents ran in the
    # game directory (ref_sim.series.realbots); after the project's, so that built-ins stay ours.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PROJECT_ROOT, realbots.runner_directory(),
                                                      env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    env[RUNNER_ENV] = str(os.getpid())
    return env


class AgentCannotStart(Exception):
    """An agent exited (or could not be launched) before its first game began: its command
    is wrong, and every game of the series would be a forfeit.  ``said``: the line of its log
    that says why ("" if none); ``gone``: every side of the game that had not started then,
    ``{name: said or why}`` (two bots that cannot start may meet in a tournament)."""

    def __init__(self, name: str, why: str, log: Path, said: str = "",
                 gone: dict | None = None) -> None:
        super().__init__(f"{name} could not start ({why}); its output: {log}")
        self.name, self.why, self.log, self.said = name, why, log, said
        self.gone = gone or {name: said or why}

    def __reduce__(self):       # from a cluster worker: rebuilt with all its parts
        return type(self), (self.name, self.why, self.log, self.said, self.gone)


def forfeit_result(names, gone) -> tuple[str, str | None, str | None]:
    """``(result, winner, loser)`` of a game between ``names`` that could not begin, ``gone``
    the sides that could not start: won by the side that could; if neither could, aborted
    (no score: a loss for both is no result Elo can rate)."""
    standing = [name for name in names if name not in gone]
    if len(standing) == 1:
        return "win", standing[0], next(name for name in names if name in gone)
    return "aborted", None, None


def last_output_line(log: Path) -> str:
    """The line of an agent's log (after the command line) that says why it failed, or its last,
    or "", printable and short, from the log's tail only (:func:`ref_sim.series.output.telemetry.error_line`)."""
    return telemetry.error_line(log)


#: In the first game, how long an agent that is up must stay up before the game begins to
#: count as started (one that prints an error and exits is caught exiting).
START_SETTLE = 0.3


def first_to_exit(processes: dict, seconds: float) -> str | None:
    """The name of a process (``{name: Popen or None}``) that is not running (None: it could
    not be launched) or exits within ``seconds``; None if all keep running."""
    deadline = time.monotonic() + seconds
    while True:
        for name, process in processes.items():
            if process is None or process.poll() is not None:
                return name
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.02)


# -- the loop -------------------------------------------------------------------------


#: Our own bots (the built-ins, and bots written on agent.bot) say when they are ready: a game
#: waits for a built-in this long, whatever the start-up wait (a loaded machine starts Python
#: slowly, and a game begun before it is up is lost at its first move).
READY_LIMIT = 120.0


def ready_path(logs: Path, number: int, name: str) -> Path:
    """The file a bot of game ``number`` writes once it is ready (:data:`agent.lifeline.READY_ENV`)."""
    return Path(logs).absolute() / f"game-{number:04d}-{name}.ready"


def ready_env(path: Path, env: dict) -> dict:
    """``env`` with the bot's ready file, made empty now (a sandbox lets the bot write this one
    file of logs/, not the folder; an empty file is a bot not yet ready)."""
    path.write_bytes(b"")
    return {**env, READY_ENV: str(path)}


#: Of a ready file (a process id and a newline) only this much is read: the bot writes it, at
#: whatever size (a sparse gigabyte was read whole, every poll), or puts a FIFO there.
READY_BYTES = 32


def said_ready(path: Path | None) -> bool:
    """True once the bot wrote its ready file (its process id and a newline)."""
    if path is None:
        return False
    try:
        with telemetry.open_log(path) as handle:
            return handle.read(READY_BYTES).endswith(b"\n")
    except OSError:                         # not yet there, or not a regular file
        return False


def wait_until_started(processes: dict, logs: dict, timeout: float, stop=None, *,
                       ready: dict | None = None, patient=(), ready_limit: float = READY_LIMIT
                       ) -> dict[str, float]:
    """Wait until each bot (``{name: Popen or None}``, its log in ``logs``) is up: it wrote its
    ready file (``ready``: ``{name: path}``), wrote past its log's command line, or exited. A bot
    of ``patient`` (a built-in: ours, and it says when it is up) is waited for up to
    ``ready_limit``, the others up to ``timeout`` seconds; ``stop`` (an Event) ends the wait.
    Returns ``{name: seconds waited}`` of the bots still not up when the game begins."""
    started = time.monotonic()
    ready = ready or {}
    limits = {name: ready_limit if name in patient else timeout for name in processes}
    waiting, late = set(processes), {}
    while waiting and not (stop is not None and stop.is_set()):
        waited = time.monotonic() - started
        for name in list(waiting):
            process = processes[name]
            grown = telemetry.wrote_past_first_line(logs[name])    # output after the "$ command"
            if process is None or process.poll() is not None or grown or said_ready(ready.get(name)):
                waiting.discard(name)
            elif waited >= limits[name]:
                waiting.discard(name)
                late[name] = limits[name]
        if waiting:
            time.sleep(0.02)
    return late


def refuse_early_exit(processes: dict, logs: dict) -> None:
    """In a series' first game: :class:`AgentCannotStart` when a bot could not be launched or
    exits within :data:`START_SETTLE` (its command is wrong), with the line that says why."""
    first = first_to_exit(processes, START_SETTLE)
    if first is None:
        return
    # The others get a settle too: two bots that cannot start may meet in a tournament, and
    # the one still importing would be scored the winner.
    others = {name: process for name, process in processes.items() if name != first}
    first_to_exit(others, START_SETTLE)
    whys, saids = {}, {}
    for name, process in processes.items():
        if process is None or process.poll() is not None:
            whys[name] = ("the command could not be launched" if process is None
                          else f"exited with code {process.returncode} before the game began")
            saids[name] = last_output_line(logs[name])
    said = saids[first]
    raise AgentCannotStart(first, whys[first] + (f": {said}" if said else ""), logs[first], said,
                           {name: saids[name] or whys[name] for name in whys})
