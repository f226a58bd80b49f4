"""A bot as the file-protocol runners are told it: a built-in (``random``, ``seed:depth=4``,
``agent:nodes=20000``, the hostile ``eager``, ``flood``, ``nbsp``), or a command with
placeholders, either with the name it answers to fixed (``name=Otter:java -cp bots Otter``).

:func:`agent_spec` reads one into an :class:`AgentSpec`, whose :meth:`AgentSpec.command` is
the command line of one game; :func:`child_env` is the environment every bot runs with.
Used by ref_sim.match, ref_sim.tournament and the scripts; ref_sim.stdio reads its commands
with the same parser and its own built-ins (:func:`builtin_command`).  The user's guide to the
built-ins and placeholders: docs/bench.md.
"""

from __future__ import annotations

import os
import re
import shutil
import string
import sys
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath
from typing import NamedTuple

from agent.options import MAX_DEPTH, MAX_NODES, Option, parse_spec
from ref_sim import command_words
from ref_sim.series import realbots
from ref_sim.bots.random_agent import FLOOD_FILE
from ref_sim.referees.file_text import locale_encoding

RANDOM = "{python} -m ref_sim.bots.random_agent {name} --dir {dir} --seed {seed}"


#: The fields a file-protocol bot's command may hold, and a CodinGame bot's (docs/bench.md).
FILE_FIELDS = ("name", "dir", "time_limit", "seed", "encoding", "python")
STDIO_FIELDS = ("python", "seed", "turn_ms", "first_turn_ms")


def check_template(template: str, fields: tuple[str, ...]) -> None:
    """ValueError, one line naming ``fields``, unless every ``{...}`` in ``template`` is one of
    ``fields`` as it is: no attribute or index (``{dir.__class__}``, ``{name[0]}``), no format or
    conversion, no positional ``{}``/``{0}``.  ``{{`` and ``}}`` are a literal brace.

    >>> check_template("bot {name} {{x}}", FILE_FIELDS)
    >>> check_template("bot {dir.__class__}", ("dir",))
    Traceback (most recent call last):
    ...
    ValueError: '{dir.__class__}' in the command is not a field: the fields are {dir} (a literal brace is {{ or }})
    """
    def refuse(what: str):
        return ValueError(f"{what!r} in the command is not a field: the fields are "
                          f"{' '.join('{' + field + '}' for field in fields)} (a literal brace is {{{{ or }}}})")

    try:
        pieces = list(string.Formatter().parse(template))
    except ValueError:                                  # a lone { or }
        raise refuse("{" if "{" in template.replace("{{", "") else "}") from None
    for _, field, format_spec, conversion in pieces:
        if field is None:
            continue
        if field not in fields or format_spec or conversion:
            written = field + (f"!{conversion}" if conversion else "") + (f":{format_spec}" if format_spec else "")
            raise refuse("{" + written[:40] + "}")


def fill_template(token: str, values: dict[str, str]) -> str:
    """``token`` with each ``{field}`` replaced by its value: only plain names are looked up
    (the template was checked by :func:`check_template`), never an attribute or an index."""
    return "".join(literal + (values[field] if field is not None else "")
                   for literal, field, _, _ in string.Formatter().parse(token))


class Builtin(NamedTuple):
    """A built-in bot: its command template, and each option it declares (agent.options.Option:
    name, range) with the command-line flag that passes the option's value on."""

    template: str
    flags: tuple[tuple[Option, str], ...] = ()

    @property
    def options(self) -> tuple[Option, ...]:
        return tuple(option for option, _ in self.flags)


#: The agent's --depth and --nodes, as a built-in's options: its command line takes these.
AGENT_EFFORT = ((Option("depth", int, 1, MAX_DEPTH), "--depth"), (Option("nodes", int, 1, MAX_NODES), "--nodes"))
#: Built-in agents by name. {python} is this interpreter; {seed} a per-game seed.  Every one
#: takes --encoding.
BUILTINS = {
    "random": Builtin(RANDOM),
    "agent": Builtin("{python} -m agent {name} --dir {dir} --time-limit {time_limit}", AGENT_EFFORT),
    # A typical student bot: depth-3 minimax with the seed code's line-count evaluation.
    "seed": Builtin("{python} -m agent {name} --dir {dir} --time-limit {time_limit} --engine seed",
                    AGENT_EFFORT[:1]),
    # Hostile opponents: the random player with a plausible student's bug (random_agent).
    "eager": Builtin(RANDOM + " --eager"),
    "flood": Builtin(RANDOM + " --flood 20000", ((Option("rate", int, 1, default=20000), "--flood"),)),
    "nbsp": Builtin(RANDOM + " --nbsp"),
}
#: Files a built-in writes into the game directory that survive the referee's clean-up: the
#: runner deletes them after the game, whether the agent exited or was killed.
SCRATCH_FILES = {"flood": (FLOOD_FILE,)}
#: The folder that holds the agent and ref_sim packages, first on a bot's PYTHONPATH so that the
#: built-ins run from this checkout (ref_sim/series/specs.py: three levels up). It was ref_sim/
#: itself once, which made ref_sim's own subpackages (bots, series, views) top-level names that
#: hid a team's own: `python3 -m bots.kea` found ref_sim/bots.
PROJECT_ROOT = str(Path(__file__).resolve().parent.parent.parent)


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
        command = [fill_template(token, values) for token in command_words.split(self.template)]
        return command + (["--encoding", encoding] if encoding and self.builtin else [])


def builtin_command(text: str, builtins: dict) -> str | None:
    """The command template of a built-in with its options (``seed:depth=4``), or None when
    ``text`` names no built-in of ``builtins`` (name -> :class:`Builtin`); a bad option is a
    SpecError (agent.options.parse_spec, the engines' parser too)."""
    base = text.partition(":")[0]
    if base not in builtins or " " in text:
        return None
    _, values = parse_spec(text, {name: builtin.options for name, builtin in builtins.items()}, "built-in")
    template = builtins[base].template
    flags = {option.name: flag for option, flag in builtins[base].flags}
    for key, value in values.items():
        flag = f" {flags[key]} "
        if flag in template:                    # a default in the template: replace it
            template = re.sub(rf"(?<={re.escape(flag)})\S+", str(value), template)
        else:
            template += f"{flag}{value}"
    return template


def check_bare_word(text: str, builtins: dict) -> None:
    """ValueError if ``text`` is one bare word that is neither a built-in of ``builtins``
    nor a command on the PATH: a mistyped built-in (``Random``, ``agnet``) would otherwise
    run as a command that cannot start, and every game be scored as a forfeit."""
    tokens = command_words.split(text)
    if len(tokens) != 1 or "{" in text or os.sep in text or (os.altsep or os.sep) in text:
        return
    if shutil.which(tokens[0]) is not None:
        return
    base = text.partition(":")[0]
    hint = next((f"; did you mean {name!r}?" for name in builtins if name == base.lower()), "")
    raise ValueError(f"{text!r} is not a built-in agent (built-ins: {', '.join(builtins)}) "
                     f"nor a command found on the PATH{hint}")


def agent_spec(text: str, builtins: dict | None = None, fields: tuple[str, ...] = FILE_FIELDS) -> AgentSpec:
    """A built-in (``random``, ``seed:depth=4``, ``agent:nodes=20000``) or a command, either
    with the name it answers to fixed (``name=Otter:python3 otter.py``, ``agent:name=Walrus``;
    :mod:`ref_sim.series.realbots`).  A command's relative paths are made absolute: it runs in the
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
    tokens = command_words.split(text)
    if not tokens:
        raise ValueError("empty agent command")
    check_template(text, fields)
    check_bare_word(text, builtins)
    return AgentSpec(command_label(tokens), realbots.absolute_paths(text), whole_text, fixed_name=fixed_name)


#: Programs that run a bot given after them: a command of one is named after the bot, not them.
INTERPRETERS = re.compile(r"(\{python\}|python|pythonw|py|pyw|pypy|node|nodejs|java|ruby|perl|php|bash|sh|deno|bun|lua|mono|dotnet)"
                          r"[0-9.]*(\.exe)?")
#: Their options whose value is the next word (a classpath), not the bot.
VALUE_OPTIONS = {"-cp", "-classpath", "--class-path", "-p", "--module-path", "-r", "--require", "-W", "-X"}


def command_label(tokens: list[str]) -> str:
    """The name a command's bot plays under (with 1 or 2 added): its script's, module's, class's
    or program's name, never its interpreter's (name=NAME: sets one).

    >>> [command_label(c.split()) for c in ("python3 bots/walrus.py {name}", "node otter.js",
    ...     "java -cp bots Otter {name} {dir}", "java -jar dist/heron.jar", "./bots/my_bot",
    ...     "{python} -m ref_sim.bots.stdio_random --seed {seed}", "python3 -c pass")]
    ['Walrus', 'Otter', 'Otter', 'Heron', 'Mybot', 'Stdiorandom', 'Python']
    """
    program = tokens[0]
    if INTERPRETERS.fullmatch(PureWindowsPath(program).name):
        rest = iter(tokens[1:])
        for token in rest:
            if token in ("-m", "-jar"):
                module = next(rest, "")
                parts = [part for part in module.split(".") if part not in ("__main__", "jar")]
                program = PureWindowsPath(module).stem if token == "-jar" else (parts or [module])[-1]
                break
            if token == "-c":                   # a program in the argument: the interpreter's name
                program = re.sub(r"[0-9.]+$", "", PureWindowsPath(program).stem)
                break
            if token in VALUE_OPTIONS:
                next(rest, None)
            elif not token.startswith("-") and "{" not in token:
                program = token
                break
    # PureWindowsPath: / and \ both separate, so C:\bots\otter.exe is Otter on every system.
    return re.sub(r"[^A-Za-z0-9]", "", PureWindowsPath(program).stem).capitalize() or "Player"


# -- CodinGame's protocol (ref_sim.stdio) ---------------------------------------------------

#: CodinGame's built-in programs by name (ref_sim.series.specs.Builtin: command template, options and their flags).
STDIO_BUILTINS = {
    # --seed: every game its own seed, so that two games of our agent differ (agent.codingame).
    "agent": Builtin("{python} -m agent --protocol codingame --turn-ms {turn_ms} --first-turn-ms {first_turn_ms}"
                     " --seed {seed}", AGENT_EFFORT),
    "random": Builtin("{python} -m ref_sim.bots.stdio_random --seed {seed}"),
}


@dataclass
class StdioSpec:
    label: str          # the name in a game is label + "1" or "2"
    template: str
    spec: str
    fixed_name: str | None = None       # name=NAME: its name in the records (realbots)
    builtin: bool = False               # ours: it says when it is up

    def command(self, seed: int, turn_ms: float, first_turn_ms: float) -> list[str]:
        values = {"python": sys.executable, "seed": str(seed), "turn_ms": f"{turn_ms:g}",
                  "first_turn_ms": f"{first_turn_ms:g}"}
        return [fill_template(token, values) for token in command_words.split(self.template)]


def stdio_spec(text: str) -> StdioSpec:
    """A built-in (``agent``, ``agent:depth=4``, ``random``) or a command.

    >>> stdio_spec("agent:depth=4").template.endswith("--depth 4")
    True
    >>> stdio_spec("python bot.py").label
    'Bot'
    """
    fixed_name, command = realbots.split_fixed_name(text, STDIO_BUILTINS)
    template = builtin_command(command, STDIO_BUILTINS)
    if template is not None:
        return StdioSpec(command.partition(":")[0].capitalize(), template, text, fixed_name, builtin=True)
    if not command_words.split(command):
        raise ValueError("empty agent command")
    parsed = agent_spec(text, STDIO_BUILTINS, STDIO_FIELDS)          # a typo: ValueError
    return StdioSpec(parsed.label, parsed.template, text, fixed_name)


def keep_recorded_names(specs, names) -> None:
    """Give ``specs`` (a resumed series' two, or a tournament's bots) the labels their ``names``
    recorded (``Python1``: before bots were named from their command), so that a series begun
    under the old names goes on under them; names that are not a label and a number are left."""
    if not isinstance(names, list) or len(names) != len(specs):
        return
    for number, (spec, name) in enumerate(zip(specs, names), 1):
        if isinstance(name, str) and not spec.fixed_name and name.endswith(str(number)) \
                and re.fullmatch(r"[A-Za-z0-9]+", name[:-len(str(number))] or "-"):
            spec.label = name[:-len(str(number))]
