"""Bot lists: the bots of a tournament read from files, one spec a line (``--bots``).

A list is a text file (UTF-8): each line one bot, as the command line gives it
(``agent:depth=4``, ``random``, ``java -cp team7 Main``...); blank lines and lines whose first
character (after spaces) is ``#`` are skipped.  A directory stands for its ``*.bot`` files in
the order of their names (one file a team, each holding its team's line), subfolders ignored.
The lines are passed as they are to the runner's own spec parser (:func:`check`), which is
also what names the file and line of a spec it refuses.

>>> [bot.text for bot in parse_list("# a class\\nagent:depth=2\\n\\n  random \\n", "b.txt")]
['agent:depth=2', 'random']
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent.cli_common import NotRegularFile, read_regular

#: A list bigger than this is not a list of bots (a binary given by mistake): refused unread.
MAX_LIST_BYTES = 1 << 20
#: More bots than this would make a round-robin of half a million pairings: refused.
MAX_BOTS = 1000
SUFFIX = ".bot"


class BotListError(ValueError):
    """A bot list that cannot be read; the message is one line naming the file (and line)."""


@dataclass(frozen=True)
class ListedBot:
    """One bot of a list: its spec and where it was read (``FILE:LINE``)."""
    text: str
    where: str


def parse_list(text: str, where: str) -> list[ListedBot]:
    """The bots of one list's ``text``; ``where`` names the file in messages."""
    bots = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "\0" in line:
            raise BotListError(f"{where}:{number}: not a line of text (a NUL byte)")
        bots.append(ListedBot(line, f"{where}:{number}"))
    return bots


def read_file(path: Path, max_bytes: int = MAX_LIST_BYTES) -> list[ListedBot]:
    """The bots of the list in the file ``path`` (a larger one than ``max_bytes`` is refused unread)."""
    try:
        text = read_regular(path, max_bytes).decode("utf-8")
    except NotRegularFile as error:
        raise BotListError(f"{path}: {error}: not a bot list (one spec a line, at most "
                           f"{max_bytes:,} bytes)") from None
    except UnicodeDecodeError as error:
        raise BotListError(f"{path}: not UTF-8 text at byte {error.start}: is it a bot list "
                           "(one spec a line)?") from None
    except OSError as error:
        raise BotListError(f"{path}: cannot read it ({error.strerror or error})") from None
    return parse_list(text, str(path))


def read(paths) -> list[ListedBot]:
    """The bots of every list in ``paths`` (files, or directories of ``*.bot`` files), in order."""
    bots: list[ListedBot] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            try:
                files = sorted(p for p in path.iterdir() if p.suffix == SUFFIX and p.is_file())
            except OSError as error:
                raise BotListError(f"{path}: cannot list it ({error.strerror or error})") from None
            if not files:
                raise BotListError(f"{path}: no *{SUFFIX} files in this folder (a bot list is "
                                   "a file of specs, one a line, or a folder of *.bot files)")
        elif path.exists():
            files = [path]
        else:
            raise BotListError(f"{path}: no such file or folder")
        for file in files:
            found = read_file(file)
            if not found:       # a team's empty file is a team left out: said, not skipped
                raise BotListError(f"{file}: no bots in it (one spec a line; # starts a "
                                   "comment)")
            bots += found
        if len(bots) > MAX_BOTS:
            raise BotListError(f"{path}: more than {MAX_BOTS} bots in the lists")
    return bots


def check(bots: list[ListedBot], parse) -> None:
    """Each listed spec through the runner's ``parse`` (``ref_sim.series.specs.agent_spec`` or
    ``ref_sim.series.specs.stdio_spec``): a spec it refuses is one line naming its file and line."""
    for bot in bots:
        try:
            parse(bot.text)
        except ValueError as error:
            raise BotListError(f"{bot.where}: {error}") from None
