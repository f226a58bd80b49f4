"""The referee's text as its Python reads it (its encoding, its lines), and the checks the
simulated referee's command and the random agent share.

Standard library only: the random agent, started for every game of a series, needs these and
nothing of the referee itself (:mod:`ref_sim.referees.file_shell`).
"""

from __future__ import annotations

import codecs
import io
import locale
import os
from collections.abc import Iterable


def locale_encoding() -> str:
    """The encoding ``open()`` uses by default here, so the real referee's on this machine:
    the locale's preferred one (UTF-8 on most Linux and macOS, cp1252 on Windows, Latin-1
    under some locales; UTF-8 in Python's UTF-8 mode).  Asked at each game, not at import.

    Not shared with the agent's own copy (agent.file_protocol) on purpose: the simulator is the
    independent model the agent's reading is checked against."""
    return locale.getpreferredencoding(False)


def check_encoding(encoding: str) -> str:
    """The codec's canonical name (``latin-1`` -> ``iso8859-1``); ValueError with a one-line
    message for a name Python does not know.

    >>> check_encoding("Latin-1"), check_encoding("cp1252")
    ('iso8859-1', 'cp1252')
    """
    try:
        codec = codecs.lookup(encoding).name
        ascii_kept = "Walrus 4 0\n".encode(codec) == b"Walrus 4 0\n"
    except LookupError:             # unknown, or not a text encoding (rot13, hex)
        raise ValueError(f"--encoding {encoding}: not a text encoding Python knows "
                         "(e.g. utf-8, cp1252, latin-1)") from None
    except UnicodeError:
        ascii_kept = False
    if not ascii_kept:
        raise ValueError(f"--encoding {encoding}: no locale uses it (ASCII text would not "
                         "stay ASCII); e.g. utf-8, cp1252, latin-1")
    return codec


def referee_lines(text: str) -> list[str]:
    """``text`` cut into lines (each with its ``\\n``) as the referee's Python reads a file.

    Universal newlines: only ``\\n``, ``\\r`` and ``\\r\\n`` end a line.  ``str.splitlines``
    also cuts at ``\\x0b \\x0c \\x1c \\x1d \\x1e \\x85 \\u2028 \\u2029``, where the referee
    does not: inside a line those are whitespace, so ``Otter 3 4\\x1cjunk`` is the move 3 4.

    >>> referee_lines("A 1 2\\x0bA 5 6\\rB 3 4\\r\\n")
    ['A 1 2\\x0bA 5 6\\n', 'B 3 4\\n']
    """
    return io.StringIO(text, newline=None).readlines()


def last_line(lines: Iterable[str]) -> str:
    """The line the real referee keeps: the last one before the first blank line ("" if the
    first line is blank or there is none)."""
    line = ""
    for next_line in lines:
        if next_line.isspace():
            break
        line = next_line
    return line


def one_line(text: str, limit: int = 200) -> str:
    """``text`` fit to print on one line: stripped, control and other unprintable characters
    escaped (``\\x1b``...), cut at ``limit`` characters with ``...``.  A file written by
    someone else (``end_game``) must not move the cursor or paint the terminal.

    >>> one_line("END: A WINS!\\x1b[2J\\nmore")
    'END: A WINS!\\\\x1b[2J\\\\nmore'
    """
    text = text.strip()
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return shown if len(shown) <= limit else shown[:limit] + "..."


def encoding_problem(encoding: str | None, names) -> tuple[str | None, str | None]:
    """``(codec name, None)`` for ``--encoding`` (None: the locale's), or ``(None, why)``
    when Python does not know it or a player name cannot be written in it."""
    try:
        codec = check_encoding(encoding or locale_encoding())
    except ValueError as error:
        return None, str(error)
    for name in names:
        try:
            name.encode(codec)
        except UnicodeEncodeError:
            return None, f"the name {name!r} cannot be written in {codec}, the referee's encoding"
    return codec, None


def prepare_directory(path: str) -> str | None:
    """Make sure ``path`` is a directory, creating it (and its parents) if it does not
    exist; None when it is ready, else why it cannot be used."""
    if os.path.isdir(path):
        return None
    if os.path.exists(path):
        return f"--dir {path}: not a directory (it is a file)"
    try:
        os.makedirs(path)
    except OSError as error:
        return f"--dir {path}: cannot create it ({error.strerror or error})"
    return None
