"""Starting a game's bots, for both protocols' games (:mod:`ref_sim.series.file_games`,
:mod:`ref_sim.series.codingame_games`): the environment every bot runs with, and a bot that
cannot start at all (its command is wrong: the series stops rather than score forfeits)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from agent.lifeline import RUNNER_ENV
from ref_sim.series import realbots, telemetry
from ref_sim.series.specs import PROJECT_ROOT

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
    is wrong, and every game of the series would be a forfeit."""

    def __init__(self, name: str, why: str, log: Path) -> None:
        super().__init__(f"{name} could not start ({why}); its output: {log}")
        self.name, self.why, self.log = name, why, log


def last_output_line(log: Path) -> str:
    """The last line an agent wrote to its log (after the command line), or "", printable and
    short, from the log's tail only (:func:`ref_sim.series.telemetry.last_line`)."""
    return telemetry.last_line(log)


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
