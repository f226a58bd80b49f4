"""Real bots as they are: a name fixed in the bot, commands that run in the referee's directory,
and why a bot never moved.

Bots that course teams write are run the way the real referee runs them (docs/protocol.md, "What
the course's own bots do"). Here is what the runners need for that: a side's fixed name
(:func:`split_fixed_name`), the sides' names checked before any game (:func:`side_names`,
:func:`bot_names`), a command's relative paths made absolute (:func:`absolute_paths`), and what
the runner saw when a side lost without moving (:func:`stall_notes`). The user's documentation
is docs/real-bots.md.
"""

from __future__ import annotations

import os
import re
from collections import Counter

from ref_sim import command_words
from ref_sim.referees.file_referee import INVALID_MOVE, OUT_OF_ORDER, TIME_OUT
from ref_sim.referees.file_text import one_line

#: What a fixed name may be: a word the referee reads back as one token and a file name on
#: every system (``NAME.go``).  The real referee takes anything without whitespace.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
NAME_PREFIX = "name="
NAME_EXAMPLE = "name=Otter:python3 otter.py"


def check_name(name: str) -> str:
    """``name`` if it can be a fixed name, else ValueError in one line.

    >>> check_name("Otter")
    'Otter'
    """
    if not NAME_PATTERN.fullmatch(name):
        raise ValueError(f"name={one_line(name, 40)!r}: a fixed name is 1 to 32 letters, digits, "
                         f"'-' or '_', starting with a letter or digit, as in {NAME_EXAMPLE}")
    return name


def split_fixed_name(text: str, builtins: dict) -> tuple[str | None, str]:
    """The name ``text`` fixes (or None) and the spec without it.

    Any spec may start with ``name=NAME:``; a built-in of ``builtins`` may also take it as an
    option (``agent:depth=4,name=Walrus``), like its other options.

    >>> split_fixed_name("name=Otter:java -cp bots Otter", {})
    ('Otter', 'java -cp bots Otter')
    >>> split_fixed_name("agent:depth=4,name=Walrus", {"agent": None})
    ('Walrus', 'agent:depth=4')
    >>> split_fixed_name("random", {"random": None})
    (None, 'random')
    """
    name = None
    if text.startswith(NAME_PREFIX):
        name, colon, text = text[len(NAME_PREFIX):].partition(":")
        if not colon or not text.strip():
            raise ValueError(f"{NAME_PREFIX}{one_line(name, 40)}: the bot comes after a colon, "
                             f"as in {NAME_EXAMPLE}")
        check_name(name)
    base, colon, options = text.partition(":")
    if base in builtins and " " not in text:
        items = options.split(",") if colon else []
        named = [item for item in items if item.startswith(NAME_PREFIX)]
        if named and (name is not None or len(named) > 1):
            raise ValueError(f"{text!r}: more than one name= for one bot")
        if named:
            name = check_name(named[0][len(NAME_PREFIX):])
            rest = [item for item in items if item not in named]
            text = base + (":" + ",".join(rest) if rest else "")
    return name, text


def command_part(spec_text: str) -> str:
    """A spec without its ``name=NAME:`` prefix (what to put after a new one).

    >>> command_part("name=Otter:python3 otter.py"), command_part("python3 otter.py")
    ('python3 otter.py', 'python3 otter.py')
    """
    if spec_text.startswith(NAME_PREFIX):
        return spec_text.partition(":")[2]
    return spec_text


def side_names(specs) -> list[str]:
    """The names of a series' two sides: each one's fixed name, else its label and 1 or 2
    (``Random1``, ``Agent2``).  ValueError, one line, when both would be the same.

    >>> from types import SimpleNamespace as Spec
    >>> side_names([Spec(label="Otter", fixed_name="Otter"), Spec(label="Random", fixed_name=None)])
    ['Otter', 'Random2']
    """
    names = [spec.fixed_name or f"{spec.label}{number}" for number, spec in enumerate(specs, 1)]
    if len(names) == 2 and names[0] == names[1]:
        raise ValueError(f"both agents would answer to {names[0]!r}: the referee needs two "
                         f"different names; {_clash_hint(specs)}")
    return names


def bot_names(specs) -> list[str]:
    """The names of a tournament's bots: each one's fixed name, else its label and its number
    (``Agent1``, ``Random3``).  ValueError, one line, when two bots would share one: the
    referee could not tell them apart in their games, nor the table in its rows."""
    names = [spec.fixed_name or f"{spec.label}{number}" for number, spec in enumerate(specs, 1)]
    for number, name in enumerate(names, 1):
        first = names.index(name) + 1
        if first != number:
            raise ValueError(f"bots {first} and {number} would both answer to {name!r}: the "
                             f"referee needs different names; {_clash_hint([specs[first - 1], specs[number - 1]])}")
    return names


def _clash_hint(specs) -> str:
    fixed = [spec for spec in specs if spec.fixed_name]
    if len(fixed) == len(specs):
        return ("two bots whose name is fixed to the same word cannot meet (the real referee "
                "could not run them either); change one bot, or leave one of them out")
    return "fix another name for one of them with name=NAME: before its spec"


# -- commands run in the game directory ------------------------------------------------------

def absolute_paths(command: str, where: str | None = None) -> str:
    """``command`` with each argument that names an existing file or folder relative to
    ``where`` (default: the current directory, where the runner was started) made absolute,
    since the bot runs in the game directory.  Also the value of ``--flag=PATH``, each part
    of a ``PATH:PATH`` list (a classpath), and the program itself when written as a path
    (``./otter``, ``bots/otter``; a bare ``python3`` is looked up on the PATH).  Arguments
    with a ``{placeholder}``, options and the module after ``-m`` are kept as they are.
    The command comes back unchanged (the same text) when nothing was resolved.

    >>> import tempfile; temp = tempfile.TemporaryDirectory(); folder = temp.name
    >>> os.mkdir(os.path.join(folder, "bots"))
    >>> absolute_paths("java -cp bots Otter {name}", folder) == command_words.join(
    ...     ["java", "-cp", os.path.join(folder, "bots"), "Otter", "{name}"])
    True
    >>> temp.cleanup()
    """
    where = os.path.abspath(where or os.getcwd())
    tokens = command_words.split(command)   # by this system's rules, joined back by them below
    resolved = []
    for index, token in enumerate(tokens):
        after_module_flag = index > 0 and tokens[index - 1] == "-m"
        if "{" in token or after_module_flag:
            resolved.append(token)
        elif token.startswith("-"):
            flag, equals, value = token.partition("=")
            resolved.append(flag + equals + _absolute(value, where) if equals else token)
        elif index == 0 and not any(sep and sep in token for sep in (os.sep, os.altsep)):
            resolved.append(token)
        else:
            resolved.append(_absolute(token, where))
    return command if resolved == tokens else command_words.join(resolved)


def _absolute(value: str, where: str) -> str:
    """``value`` (a path or a list of paths), each existing relative part made absolute."""
    parts = value.split(os.pathsep) if os.pathsep in value else [value]
    return os.pathsep.join(os.path.normpath(os.path.join(where, part))
                           if part and not os.path.isabs(part)
                           and os.path.exists(os.path.join(where, part)) else part
                           for part in parts)


def runner_directory() -> str | None:
    """The folder the runner was started in (its bots' relative imports), None if it is gone."""
    try:
        return os.getcwd()
    except OSError:
        return None


# -- why a side never moved ------------------------------------------------------------------

def stall_notes(record, notes: dict, specs: dict, late: dict | None = None) -> dict[str, str]:
    """``{name: text}``: what the runner saw when a side never reacted to its ``.go``, from
    the referee's ``record`` (a :class:`ref_sim.referees.file_referee.GameRecord`), the game's ``notes``
    (``crashed (...)``, ``did not exit (killed)``), each name's spec (``specs``) and the sides
    not up when the game began (``late``: ``{name: seconds waited}``).

    A time-out whose ``move_file`` held a line from a name no side has, or an out-of-order
    move in such a name, says the name is probably hard-coded and how to give it; a side that
    lost on time at its first ``.go`` and never wrote says so, and what the runner saw of it:
    its command never ran (``crashed (could not start)``), it ran and exited (how), it was
    running but had printed nothing when the game began (the wait that ran out, and the option
    that lengthens it), or, still running, it waited for another ``.go`` (the hard-coded hint,
    ``name=NAME:`` only where no name was given; never for a built-in, whose name the runner
    gives).  Ordinary time-outs (a side that had moved before) get nothing.  A side that lost because
    ``move_file`` was no file a move can be read from (``record.unreadable``) is told what was
    there.
    """
    names = list(record.names)
    if record.result != "win":
        return {}
    what = getattr(record, "unreadable", None)
    if record.reason == INVALID_MOVE and what:
        return {record.loser: f"at {record.loser}'s turn move_file was {one_line(what, 80)}, "
                              "not a file a move can be read from: Invalid move! "
                              "(docs/protocol.md, section 10)"}
    if record.reason == OUT_OF_ORDER:
        writer = _writer(record.bad_line)
        if writer is None or writer in names:
            return {}
        side = _likely_writer(writer, names, specs, record.winner)    # the mover: the winner
        return {side: _hard_coded(writer, record.winner, specs.get(side))}
    if record.reason != TIME_OUT:
        return {}
    side = record.loser
    line = getattr(record, "timeout_line", None)
    writer = _writer(line)
    if writer is not None and writer not in names:
        return {side: _hard_coded(writer, side, specs.get(side))}
    if writer == side:
        return {side: f"{side} wrote {one_line(line, 60)!r} where the referee did not count it "
                      "(before its .go, or after the last look within the limit)"}
    if any(move.player == side for move in record.moves):
        return {}
    text = f"{side} never wrote move_file after its .go"
    spec = specs.get(side)
    note = str(notes.get(side, ""))
    # What the runner saw tells three cases apart: a command that never ran, a program that
    # ran and exited, and one that ran and printed nothing (late: not up when the game began).
    if note == "crashed (could not start)":
        return {side: f"{side} never started: its command could not be launched (its log "
                      "says why)"}
    if note.startswith("crashed"):
        if side in (late or {}):
            text += f"; it ran, printed nothing, and {note.removeprefix('crashed ')[1:-1]} " \
                    "before its first move (its log says why)"
        return {side: text}
    if side in (late or {}):
        text += (f"; it was running but had printed nothing after {late[side]:g} s, when the "
                 "game began: a slow start on a loaded machine? --startup-wait S waits longer")
    if getattr(spec, "builtin", False):
        return {side: text}
    fixed = getattr(spec, "fixed_name", None)
    if fixed:       # its name was given: suggesting name=NAME again would be no help
        text += (f" (it kept running: it was given name={fixed}; a bot that waits for another "
                 f"NAME.go, written in its code, never sees {side}.go)")
    else:
        text += (f" (it kept running: a bot that waits for its own fixed NAME.go never sees "
                 f"{side}.go; is its name hard-coded? give it with name=NAME:"
                 f"{_command(specs.get(side))})")
    return {side: text}


#: At most this many hint lines in a summary: the same few causes repeat over a series.
MAX_HINT_LINES = 4


def hint_lines(games: list) -> list[str]:
    """The summary's lines about the hints of ``games`` (games.jsonl lines: their ``hints``), each
    distinct one once with how many games it came in, so that ``-q`` shows them too."""
    counts = Counter(text for game in games if isinstance(game.hints, dict)
                     for text in game.hints.values() if isinstance(text, str))
    return [f"Hint: {text}" + (f" ({count} games)" if count > 1 else "")
            for text, count in counts.most_common(MAX_HINT_LINES)]


def _writer(line: str | None) -> str | None:
    """The name at the start of a move line, if it could be a bot's name."""
    tokens = (line or "").split()
    return tokens[0] if tokens and NAME_PATTERN.fullmatch(tokens[0]) else None


def _likely_writer(writer: str, names: list[str], specs: dict, default: str) -> str:
    """The side whose command mentions ``writer`` (``Otter`` in ``python3 otter.py``)."""
    mentioned = [name for name in names
                 if writer.lower() in _command(specs.get(name)).lower()]
    return mentioned[0] if len(mentioned) == 1 else default


def _hard_coded(writer: str, mover: str, spec) -> str:
    fixed = getattr(spec, "fixed_name", None)
    if fixed:       # given a name, it writes under another: the given one is not its code's
        return (f"move_file had lines from {writer!r} while {mover} was to move: it was given "
                f"name={fixed} but writes as {writer!r}; give it with name={writer}:"
                f"{_command(spec)}")
    return (f"move_file had lines from {writer!r} while {mover} was to move: is its name "
            f"hard-coded? give it with name={writer}:{_command(spec)}")


def _command(spec) -> str:
    return command_part(spec.spec) if spec is not None and getattr(spec, "spec", "") else "..."
