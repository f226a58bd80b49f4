"""Checked option values, for every command line and every spec: argparse types that refuse in
one line what would otherwise play instantly, loop forever or end in a traceback (``nan`` passes
every ``<`` check by failing it, ``inf`` overflows ``int()``, a billion games builds its whole
schedule first), each naming its range in the error::

    parser.add_argument("--depth", type=whole(1, 64))

and the one parser of ``NAME:KEY=VALUE,...`` specs (:func:`parse_spec`), checked against the
:class:`Option` values the engines and the runners' built-in bots declare. Light to import.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

from .cli_common import shown

#: The longest time per move a time option takes: an hour. The course's referee gives 10 s,
#: CodinGame 100 ms; a limit beyond an hour is a slip (milliseconds given as seconds), and the
#: waits derived from it (the silence abort at three limits) would be past any use.
MAX_TIME_LIMIT = 3600.0
#: ``--silence`` at most: a day, longer than any game lasts (0 already means "never").
MAX_SILENCE = 86400.0
#: ``--depth`` at most: a game has 81 moves, so no search goes deeper.
MAX_DEPTH = 81
#: ``--nodes`` at most: a trillion, days of search at the compiled core's 1-2 million nodes a
#: second (and far inside the 64-bit counter the compiled core compares it with).
MAX_NODES = 10 ** 12


def bounded(convert, low, high=None, *, above: bool = False, unit: str = ""):
    """An argparse ``type``: ``convert(text)`` (int or float), finite, from ``low`` (or ``above``
    it) to ``high`` (no upper bound when None); anything else is one line saying what is allowed
    (nan fails every comparison, 1e309 is inf).

    >>> bounded(int, 1, 10)("3"), bounded(float, 0, 1, above=True)("0.5")
    (3, 0.5)
    """
    allowed = _allowed(convert, low, high, above, unit)

    def parse(text: str):
        value = _within(convert, text, low, high, above)
        if value is None:
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {shown(text)}")
        return value

    parse.__name__ = "integer" if convert is int else "number"  # argparse's "invalid ... value" wording
    return parse


def _allowed(convert, low, high, above: bool = False, unit: str = "") -> str:
    """What :func:`bounded` takes, in words: ``an integer from 1 to 81``."""
    number = "{:,.15g}".format  # 3,600, 0.05, 1,000,000,000,000
    kind = "an integer" if convert is int else f"a number{' of ' + unit if unit else ''}"
    if low == -math.inf:
        return f"{kind} at most {number(high)}"
    if high is None:
        return f"{kind} {'above' if above else 'at least'} {number(low)}"
    if above:
        return f"{kind} above {number(low)} and at most {number(high)}"
    return f"{kind} from {number(low)} to {number(high)}"


def _within(convert, text: str, low, high, above: bool = False):
    """``convert(text)`` if it is finite and in range, else None."""
    try:
        value = convert(text)
    except (ValueError, OverflowError):  # not a number, or int() of thousands of digits
        return None
    if not math.isfinite(value) or not (low < value if above else low <= value) or high is not None and value > high:
        return None
    return value


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


#: The search's effort on every command line that runs our engine (the agent, uttt-arena,
#: uttt-play, uttt-replay --analyse): one check each, so that no command plays at depth 1 for a
#: time limit of 0 or thinks for ever for one of inf. (The referees' --time-limit is the
#: referee's, not the engine's: its own checks.)
search_depth = whole(1, MAX_DEPTH)
search_nodes = whole(1, MAX_NODES)
seconds_per_move = real(0, MAX_TIME_LIMIT, low_open=True)


# -- specs: NAME:KEY=VALUE,... ----------------------------------------------------------------------

class SpecError(ValueError):
    """A spec naming nothing known, an option its name does not take, or a bad value: one line."""


@dataclass(frozen=True)
class Option:
    """One ``key=value`` that a spec's name takes (``alphabeta:depth=4``), declared by the engine or
    built-in bot that takes it: its type and range, the words it takes beside numbers (``auto``;
    for a ``str`` option, its choices) and its value when the spec leaves it out (None: nothing
    fixed, as an unbounded depth or a fresh seed)."""

    name: str
    kind: type = int                    # int, float or str
    low: float = 0
    high: float | None = None           # None: no upper bound
    words: tuple[str, ...] = ()
    default: object = None

    def parse(self, text: str):
        """The value of ``text``; ValueError("must be ...") saying what is allowed."""
        if text in self.words:
            return text
        if self.kind is str and not self.words:     # free text (a path): any, but empty
            if text:
                return text
            raise ValueError(self._must())
        value = None if self.kind is str else _within(self.kind, text, self.low, self.high)
        if value is None:
            raise ValueError(self._must())
        return value

    def check(self, value):
        """A value given in Python (``make_engine("alphabeta", depth=3)``), checked as its text would
        be; a bool, or a float where an integer is declared, is refused too."""
        number = int if self.kind is int else (int, float)
        if isinstance(value, str) or isinstance(value, number) and not isinstance(value, bool):
            try:
                return self.parse(value if isinstance(value, str) else repr(value))
            except ValueError:
                pass
        raise ValueError(f"{self.name} {self._must()}, got {value!r}")

    def _must(self) -> str:
        if self.kind is str and not self.words:
            return "must not be empty"
        numbers = () if self.kind is str else (_allowed(self.kind, self.low, self.high),)
        return f"must be {' or '.join((*self.words, *numbers))}"

    def as_type(self):
        """This option as an argparse ``type`` (the agent's ``--threads`` is alphabeta's ``threads``)."""
        def parse(text: str):
            try:
                return self.parse(text)
            except ValueError as error:
                raise argparse.ArgumentTypeError(f"{error}, got {shown(text)}") from None

        parse.__name__ = self.name
        return parse

    def allowed(self) -> str:
        """What it takes, short: ``1-81``, ``0 or more``, ``auto or 1-64``, ``classic or fitted``."""
        if self.kind is str:
            return " or ".join(self.words) if self.words else "a path"
        number = "{:,.15g}".format
        span = f"{number(self.low)} or more" if self.high is None else f"{number(self.low)}-{number(self.high)}"
        return " or ".join((*self.words, span))

    def described(self) -> str:
        default = "" if self.default is None else f", default {self.default}"
        return f"{self.name} ({self.allowed()}{default})"

    def example(self) -> str:
        return str(self.default if self.default is not None else self.words[0] if self.words else self.low)


def options_text(options) -> str:
    """Every option of a declaration in one phrase, for an error message."""
    return f"its options: {', '.join(option.described() for option in options)}" if options else "it takes none"


def parse_options(text: str, options, owner: str, example: str = "") -> dict:
    """``KEY=VALUE,...`` (empty items skipped) -> {key: value} for the declared ``options``;
    SpecError in one line naming ``owner`` and, for an unknown key, every option it takes.

    >>> parse_options("depth=4,nodes=100", [Option("depth", low=1), Option("nodes", low=1)], "engine 'x'")
    {'depth': 4, 'nodes': 100}
    """
    declared = {option.name: option for option in options}
    values = {}
    for item in filter(None, text.split(",")):
        key, eq, value = item.partition("=")
        option = declared.get(key)
        if option is None:
            raise SpecError(f"{owner} takes no option {shown(key)}; {options_text(options)}")
        if not eq or not value:
            raise SpecError(f"{owner}: {key} needs a value, as in {example}{key}={option.example()}")
        if key in values:
            raise SpecError(f"{owner}: {key} is given twice")
        try:
            values[key] = option.parse(value)
        except ValueError as error:
            raise SpecError(f"{owner}: {key} {error}, got {shown(value)}") from None
    return values


def parse_spec(text: str, declared, what: str = "engine") -> tuple[str, dict]:
    """``NAME`` or ``NAME:KEY=VALUE,...`` -> (name, {key: value}), for names ``declared`` (a mapping
    name -> its options); SpecError in one line for an unknown name (with the choices), an
    unknown option (with the name's options), a missing or bad value (with what is allowed).
    The one parser of engine and built-in bot specs (agent.engines, ref_sim.series.specs).

    >>> parse_spec("seed:depth=4", {"seed": [Option("depth", low=1, high=81, default=3)]})
    ('seed', {'depth': 4})
    """
    name, _, rest = text.partition(":")
    if name not in declared:
        raise SpecError(f"unknown {what} {shown(name)}; choose from {', '.join(declared)}")
    return name, parse_options(rest, declared[name], f"{what} {name!r}", f"{name}:")
