"""A bot's command line split into words and joined back by the rules of the system it runs on,
in one place (the runners' bot specs, their relative paths made absolute, a resume command).

POSIX: a shell's words (:mod:`shlex`). Windows: the rules every Windows program splits its own
command line by (the C runtime's, CommandLineToArgvW's), which :func:`subprocess.list2cmdline`
writes when Popen starts a list there: a backslash is a backslash (``C:\\bots\\otter.exe``) and
double quotes group (``"C:\\Program Files\\x\\bot.exe" {name}``). POSIX rules on Windows ate
the backslashes: the program was not found and the bot was named ``Cbotsotter``.

Each function takes ``windows`` (None: this system's), so that either system's rules run and
are tested on both.

>>> split(r'"C:\\Program Files\\x\\bot.exe" {name}', windows=True)
['C:\\\\Program Files\\\\x\\\\bot.exe', '{name}']
>>> split("python3 'my bots/otter.py' {name}", windows=False)
['python3', 'my bots/otter.py', '{name}']
"""

from __future__ import annotations

import os
import shlex
import subprocess

#: This system's rules (a module global read at each call: tests switch it).
WINDOWS = os.name == "nt"


def _windows(windows: bool | None) -> bool:
    return WINDOWS if windows is None else windows


def split(text: str, windows: bool | None = None) -> list[str]:
    """The words of the command line ``text``. ValueError for an unclosed quote (POSIX; on
    Windows an unclosed quote runs to the end, as there)."""
    return _split_windows(text) if _windows(windows) else shlex.split(text)


def join(words, windows: bool | None = None) -> str:
    """``words`` as one command line that :func:`split` gives back, by the same rules."""
    words = list(words)
    return subprocess.list2cmdline(words) if _windows(windows) else shlex.join(words)


def _split_windows(text: str) -> list[str]:
    """The C runtime's split of a Windows command line (CommandLineToArgvW): words end at a space
    or tab outside double quotes; a quote toggles quoting (``""`` inside quotes is a quote);
    backslashes are literal except before a quote, where each pair is one backslash and an odd
    one left makes the quote literal. The program's name, the first word, takes no escapes at
    all (a path never holds a quote)."""
    words: list[str] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            return words
        word: list[str] = []
        quoted = False
        while i < n and (quoted or text[i] not in " \t"):
            char = text[i]
            if char == "\\" and words:
                end = i
                while end < n and text[end] == "\\":
                    end += 1
                count = end - i
                if end < n and text[end] == '"':
                    word.append("\\" * (count // 2))
                    if count % 2:               # an escaped quote: a literal one
                        word.append('"')
                        end += 1
                else:
                    word.append("\\" * count)
                i = end
            elif char == '"':
                if quoted and words and text.startswith('""', i):
                    word.append('"')
                    i += 2
                else:
                    quoted = not quoted
                    i += 1
            else:
                word.append(char)
                i += 1
        words.append("".join(word))
