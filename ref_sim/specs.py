"""A bot as the file-protocol runners are told it: a built-in (``random``, ``seed:depth=4``,
``agent:nodes=20000``, the hostile ``eager``, ``flood``, ``nbsp``), or a command with
placeholders, either with the name it answers to fixed (``name=Otter:java -cp bots Otter``).

:func:`agent_spec` reads one into an :class:`AgentSpec`, whose :meth:`AgentSpec.command` is
the command line of one game; :func:`child_env` is the environment every bot runs with.
Used by ref_sim.match, ref_sim.tournament and the scripts; ref_sim.stdio reads its commands
with the same parser and its own built-ins (:func:`builtin_command`).  The options are
described in :mod:`ref_sim.match`'s docstring.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from agent.lifeline import RUNNER_ENV
from ref_sim import realbots
from ref_sim.random_agent import FLOOD_FILE
from ref_sim.referee import locale_encoding

RANDOM = "{python} -m ref_sim.random_agent {name} --dir {dir} --seed {seed}"
#: Built-in agents: name -> (command template, {option: command-line flag}).
#: {python} is this interpreter; {seed} a per-game seed.  Every one takes --encoding.
BUILTINS = {
    "random": (RANDOM, {}),
    "agent": ("{python} -m agent {name} --dir {dir} --time-limit {time_limit}",
              {"depth": "--depth", "nodes": "--nodes"}),
    # A typical student bot: depth-3 minimax with the seed code's line-count evaluation.
    "seed": ("{python} -m agent {name} --dir {dir} --time-limit {time_limit} --engine seed",
             {"depth": "--depth"}),
    # Hostile opponents: the random player with a plausible student's bug (random_agent).
    "eager": (RANDOM + " --eager", {}),
    "flood": (RANDOM + " --flood 20000", {"rate": "--flood"}),
    "nbsp": (RANDOM + " --nbsp", {}),
}
#: Files a built-in writes into the game directory that survive the referee's clean-up: the
#: runner deletes them after the game, whether the agent exited or was killed.
SCRATCH_FILES = {"flood": (FLOOD_FILE,)}
PROJECT_ROOT = str(Path(__file__).resolve().parent.parent)


@dataclass
class AgentSpec:
    label: str          # e.g. "Random"; the name in a game is label + "1" or "2"
    template: str       # command with {name}, {dir}, {time_limit}, {seed}, {encoding}
    spec: str = ""      # what the user wrote: "seed:depth=4", or the command
    builtin: bool = False                   # a built-in: it takes --encoding
    scratch: tuple[str, ...] = ()           # its files in the game directory ({name})
    fixed_name: str | None = None           # name=NAME: the name it answers to (realbots)

    def command(self, name: str, directory, time_limit: float, seed: int = 0,
                encoding: str | None = None) -> list[str]:
        """The command line; ``encoding``: the referee's when given explicitly (a built-in
        is then told ``--encoding``; by default it reads with the locale's, as the referee)."""
        values = {"name": name, "dir": str(directory), "time_limit": f"{time_limit:g}",
                  "python": sys.executable, "seed": str(seed),
                  "encoding": encoding or locale_encoding()}
        command = [token.format(**values) for token in shlex.split(self.template)]
        return command + (["--encoding", encoding] if encoding and self.builtin else [])


def builtin_command(text: str, builtins: dict) -> str | None:
    """The command template of a built-in with its options (``seed:depth=4``), or None when
    ``text`` names no built-in of ``builtins`` (``name -> (template, {option: flag})``)."""
    base, _, options = text.partition(":")
    if base not in builtins or " " in text:
        return None
    template, allowed = builtins[base]
    for item in filter(None, options.split(",")):
        key, eq, value = item.partition("=")
        if key not in allowed:
            known = ", ".join(allowed) or "none"
            raise ValueError(f"{base!r} takes no option {key!r} (options: {known})")
        if not eq or not value.isdigit() or int(value) < 1:
            raise ValueError(f"{text!r}: {key} must be a positive integer, as in {base}:{key}=4")
        flag = f" {allowed[key]} "
        if flag in template:                    # a default in the template: replace it
            template = re.sub(rf"(?<={re.escape(flag)})\S+", str(int(value)), template)
        else:
            template += f"{flag}{int(value)}"
    return template


def child_env() -> dict:
    """The environment of an agent process: this project importable, output unbuffered, and
    this runner's process id (agent.lifeline): a player whose runner died, even by SIGKILL,
    ends by itself instead of waiting for a referee that will never come."""
    env = dict(os.environ)
    # The runner's folder too: "python -m mybot" found mybot there before agents ran in the
    # game directory (ref_sim.realbots); after the project's, so that built-ins stay ours.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PROJECT_ROOT, realbots.runner_directory(),
                                                      env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    env[RUNNER_ENV] = str(os.getpid())
    return env


def check_bare_word(text: str, builtins: dict) -> None:
    """ValueError if ``text`` is one bare word that is neither a built-in of ``builtins``
    nor a command on the PATH: a mistyped built-in (``Random``, ``agnet``) would otherwise
    run as a command that cannot start, and every game be scored as a forfeit."""
    tokens = shlex.split(text)
    if len(tokens) != 1 or "{" in text or os.sep in text or (os.altsep or os.sep) in text:
        return
    if shutil.which(tokens[0]) is not None:
        return
    base = text.partition(":")[0]
    hint = next((f"; did you mean {name!r}?" for name in builtins if name == base.lower()), "")
    raise ValueError(f"{text!r} is not a built-in agent (built-ins: {', '.join(builtins)}) "
                     f"nor a command found on the PATH{hint}")


def agent_spec(text: str, builtins: dict | None = None) -> AgentSpec:
    """A built-in (``random``, ``seed:depth=4``, ``agent:nodes=20000``) or a command, either
    with the name it answers to fixed (``name=Otter:python3 otter.py``, ``agent:name=Walrus``;
    :mod:`ref_sim.realbots`).  A command's relative paths are made absolute: it runs in the
    game directory.

    >>> agent_spec("seed:depth=4").template.endswith("--engine seed --depth 4")
    True
    >>> agent_spec("name=Walrus:agent").fixed_name
    'Walrus'
    """
    builtins = BUILTINS if builtins is None else builtins
    whole_text = text
    fixed_name, text = realbots.split_fixed_name(text, builtins)
    template = builtin_command(text, builtins)
    if template is not None:
        base = text.partition(":")[0]
        return AgentSpec(base.capitalize(), template, whole_text, builtin=True,
                         scratch=SCRATCH_FILES.get(base, ()), fixed_name=fixed_name)
    tokens = shlex.split(text)
    if not tokens:
        raise ValueError("empty agent command")
    check_bare_word(text, builtins)
    program = tokens[0]
    if Path(program).name.startswith("python") and len(tokens) > 1:
        rest = tokens[1:]
        if rest[0] == "-m" and len(rest) > 1:
            program = rest[1].split(".")[-1] if rest[1].split(".")[-1] != "__main__" else rest[1]
        elif not rest[0].startswith("-"):
            program = rest[0]
        else:
            program = "Python"
    label = re.sub(r"[^A-Za-z0-9]", "", Path(program).stem).capitalize() or "Player"
    return AgentSpec(label, realbots.absolute_paths(text), whole_text, fixed_name=fixed_name)
