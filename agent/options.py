"""Checked numbers for the runners' command lines: argparse types that refuse in one line what
would otherwise play instantly, loop forever or end in a traceback far from the command line.

``float("nan")`` passes every ``<`` check by failing it, ``inf`` overflows ``int()`` and
``time.sleep``, a negative limit plays at once, and a billion games builds its whole schedule
before the first one.  Each type names its range in the error::

    parser.add_argument("--games", type=whole(1, MAX_GAMES))
    parser.add_argument("--seconds", type=real(0, MAX_SECONDS, low_open=True))

argparse reports ``PROG: error: argument --games: 0 is below 1`` with exit code 2.
"""

from __future__ import annotations

import argparse
import math

#: More games than this in one run is a typo (a day of the quickest games is ~50,000).
MAX_GAMES = 100_000
#: Seconds per move above an hour is a typo too (the real referee's limits are seconds).
MAX_SECONDS = 3600.0


def _show(value: float) -> str:
    """``3,600,000``, ``0.5``, ``1e+12``: as a person writes the number.

    >>> _show(3_600_000.0), _show(0.5), _show(1e12), _show(-5)
    ('3,600,000', '0.5', '1e+12', '-5')
    """
    if value == int(value) and abs(value) < 1e9:
        return f"{int(value):,}"
    return f"{value:g}"


def whole(low: int, high: int | None = None):
    """An argparse type: an integer in ``[low, high]`` (no upper bound when ``high`` is None).

    >>> whole(1, 10)("3")
    3
    """
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"{value} is above {_show(high)}, the most it takes")
        return value
    parse.__name__ = "whole number"         # argparse's "invalid whole number value" wording
    return parse


def real(low: float, high: float, *, low_open: bool = False):
    """An argparse type: a finite number in ``[low, high]`` (``(low, high]`` with ``low_open``).

    >>> real(0, 1)("0.5")
    0.5
    """
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if value < low or low_open and value == low:
            raise argparse.ArgumentTypeError(
                f"{_show(value)} must be {'more than' if low_open else 'at least'} {_show(low)}")
        if value > high:
            raise argparse.ArgumentTypeError(f"{_show(value)} is above {_show(high)}, the most it takes")
        return value
    parse.__name__ = "number"
    return parse
