"""Text from outside (the referee's files, an opponent's line, a bad command-line value) made fit
for one log or stdout line. Imports nothing: the command line and the file protocol both use it.
"""

from __future__ import annotations


def printable(text: str, limit: int = 200) -> str:
    """``text`` made safe for one log or stdout line: unprintable characters as ``?``, cut at ``limit``.

    >>> printable("Otter\\x1b[2J 4 0"), printable("x" * 5, 3)
    ('Otter?[2J 4 0', 'xxx...')
    """
    shown = "".join(char if char.isprintable() else "?" for char in text[:limit])
    return shown + ("..." if len(text) > limit else "")
