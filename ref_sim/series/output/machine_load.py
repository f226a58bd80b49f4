"""What the records say of the bots' time-outs: whether each was the machine's (a bot kept waiting
for a core over the turn it lost: :mod:`ref_sim.series.process.turn_share` measures it as a game is
played), and the lines the summaries, the crosstable, the replay and the team pages print of it.

A game's record keeps the loser's figures (``timeout_share``) and, when they make the time-out
the machine's, ``machine_timeout`` (docs/formats.md).  Records are untrusted input: figures
that cannot be read are said so, never raised.
"""

from __future__ import annotations

from ref_sim.series.output.game_line import GameLine

#: Less than half a core over the turn it lost: a bot alone on a core has all of it; half is
#: what it keeps when one other busy program shares that core with it.  Below that the machine
#: took more than a fair share of the bot's turn.
FAIR_SHARE = 0.5
#: ...and it waited, runnable, on a run queue for at least half the turn: it wanted the core and
#: did not get it.  A bot that sleeps or blocks waits on no run queue (its own time-out).
MACHINE_WAIT = 0.5
NOT_MEASURED = ("not measured (the machine that played it has no /proc/PID/schedstat: not "
                "Linux), so not told the machine's")


def is_machines(measured) -> bool:
    """Whether a time-out's figures make it the machine's (see the module's docstring)."""
    try:
        return float(measured["cpu"]) < FAIR_SHARE and float(measured["waited"]) >= MACHINE_WAIT
    except (TypeError, KeyError, ValueError):
        return False                        # unmeasured, or not the runner's record


def _pairs(game: GameLine, key: str) -> dict:
    value = getattr(game, key)
    return value if isinstance(value, dict) else {}


def describe(name: str, measured) -> str:
    """``Otter had 41 % of a core and waited for one 55 % of its 1.00 s turn``."""
    try:
        return (f"{name} had {100 * float(measured['cpu']):.0f} % of a core and waited for one "
                f"{100 * float(measured['waited']):.0f} % of its "
                f"{float(measured['seconds']):.2f} s turn")
    except (TypeError, KeyError, ValueError):     # a record is untrusted input
        return f"{name} (its figures unreadable: {str(measured)[:80]})"


def verdict_line(game: GameLine) -> str | None:
    """Whose fault a game's time-out was, as the pages say it; None without a measure."""
    for name, measured in _pairs(game, "timeout_share").items():
        if measured is None:
            return f"Load: {name}'s turn was {NOT_MEASURED}."
        text = describe(name, measured)
        if marked(game, name):
            return (f"Load: {text}: the machine's time-out more than the bot's (it was ready to "
                    f"run and kept waiting: below {FAIR_SHARE:g} of a core, waiting over "
                    f"{100 * MACHINE_WAIT:.0f} % of the turn).")
        return (f"Load: {text}: its own time-out (the machine gave it the core when it asked "
                "for one).")
    return None


def marked(game: GameLine, name: str) -> bool:
    """Whether ``name``'s time-out in ``game`` is marked as the machine's."""
    return name in _pairs(game, "machine_timeout")


def machine_games(games: list[GameLine]) -> list[tuple[GameLine, str, dict]]:
    """``(game, bot, figures)`` of each time-out marked as the machine's."""
    return [(game, name, measured) for game in games
            for name, measured in _pairs(game, "machine_timeout").items()]


def load_lines(games: list[GameLine]) -> list[str]:
    """The summary's lines on load: how many results it may have decided and which, how many
    time-outs were the bots' own, and once whether none could be measured; [] without a
    measured or unmeasured time-out."""
    marked = machine_games(games)
    shares = [measured for game in games for measured in _pairs(game, "timeout_share").values()]
    unknown = sum(measured is None for measured in shares)
    own = len(shares) - unknown - len(marked)
    if not shares:
        return []
    results = len({id(game) for game, _, _ in marked})
    lines = [f"Load: {results} result{'s' * (results != 1)} load may have decided "
             f"(time-outs of a bot kept waiting for a core: below {FAIR_SHARE:g} of one, waiting "
             f"over {100 * MACHINE_WAIT:.0f} % of its turn); {own} time-out{'s' * (own != 1)} "
             "the bots' own." + (" Replay those games on a quiet machine." if results else "")]
    lines += [f"  game {game.game}: {describe(name, measured)}"
              for game, name, measured in marked]
    if unknown:
        lines.append(f"  {unknown} time-out{'s' * (unknown != 1)} {NOT_MEASURED}.")
    return lines
