"""Checked numbers for the runners' command lines: argparse types that refuse in one line what
would otherwise play instantly, loop forever or end in a traceback far from the command line.

``float("nan")`` passes every ``<`` check by failing it, ``inf`` overflows ``int()`` and
``time.sleep``, a negative limit plays at once, and a billion games builds its whole schedule
before the first one.  Each type names its range in the error::

    parser.add_argument("--games", type=whole(1, MAX_GAMES))
    parser.add_argument("--seconds", type=real(0, MAX_SECONDS, low_open=True))

argparse reports ``PROG: error: argument --games: must be an integer from 1 to 100,000, got '0'``
with exit code 2. The agent's own command line uses the same types (agent.commandline).
"""

from __future__ import annotations

import argparse
import math

#: More games than this in one run is a typo (a day of the quickest games is ~50,000).
MAX_GAMES = 100_000
#: Seconds per move above an hour is a typo too (the real referee's limits are seconds).
MAX_SECONDS = 3600.0


def bounded(convert, low, high=None, *, above: bool = False, unit: str = ""):
    """An argparse ``type``: ``convert(text)`` (int or float), finite, from ``low`` (or ``above``
    it) to ``high`` (no upper bound when None); anything else is one line saying what is allowed
    (nan fails every comparison, 1e309 is inf).

    >>> bounded(int, 1, 10)("3"), bounded(float, 0, 1, above=True)("0.5")
    (3, 0.5)
    """
    number = "{:,.15g}".format  # 3,600, 0.05, 1,000,000,000,000
    kind = "an integer" if convert is int else f"a number{' of ' + unit if unit else ''}"
    if low == -math.inf:
        allowed = f"{kind} at most {number(high)}"
    elif high is None:
        allowed = f"{kind} {'above' if above else 'at least'} {number(low)}"
    elif above:
        allowed = f"{kind} above {number(low)} and at most {number(high)}"
    else:
        allowed = f"{kind} from {number(low)} to {number(high)}"

    def parse(text: str):
        try:
            value = convert(text)
        except (ValueError, OverflowError):  # not a number, or int() of thousands of digits
            value = None
        if value is None or not math.isfinite(value) or not (low < value if above else low <= value) \
                or high is not None and value > high:
            from .turns import printable  # here, not at the top: this module stays light to import

            raise argparse.ArgumentTypeError(f"must be {allowed}, got {printable(str(text), 60)!r}")
        return value

    parse.__name__ = "integer" if convert is int else "number"  # argparse's "invalid ... value" wording
    return parse


def whole(low: int, high: int | None = None):
    """An integer in ``[low, high]`` (no upper bound when ``high`` is None).

    >>> whole(1, 10)("3")
    3
    """
    return bounded(int, low, high)


def real(low: float, high: float, *, low_open: bool = False):
    """A finite number in ``[low, high]`` (``(low, high]`` with ``low_open``).

    >>> real(0, 1)("0.5")
    0.5
    """
    return bounded(float, low, high, above=low_open)
