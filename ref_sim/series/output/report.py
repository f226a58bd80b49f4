"""The tally and report of a series, whichever runner played it: each side's wins, losses,
draws and what went wrong (:func:`tally`), the figures the progress line shows
(:func:`summarize`), the cutechess-style summary with the distinct games (:func:`report_lines`)
and a finished game in one line (:func:`describe`).

Used by every series front-end (ref_sim.match, ref_sim.stdio, ref_sim.tournament) and the
views that count games (ref_sim.views.crosstable); the formulas are :mod:`ref_sim.series.stats.match_stats`'.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ref_sim.series import realbots
from ref_sim.series.output import machine_load
from ref_sim.series.output.game_line import GameLine
from ref_sim.series.output.progress import Summary
from ref_sim.series.output.records import CANNOT_START
from ref_sim.series.stats import match_stats
from ref_sim.referees.file_referee import INVALID_MOVE, OUT_OF_ORDER, TIME_OUT

#: The verdicts a losing side is counted under, by the referee's reason.
SHORT = {TIME_OUT: "time-outs", INVALID_MOVE: "invalid moves", OUT_OF_ORDER: "out-of-order"}


@dataclass
class Side:
    """One agent's results over the series."""
    name: str
    wins: int = 0
    losses: int = 0
    draws: int = 0
    reasons: Counter = field(default_factory=Counter)   # "time-outs", "crashes", ...
    details: Counter = field(default_factory=Counter)   # "exited with code 3", ...

    def line(self) -> str:
        parts = []
        for reason, count in sorted(self.reasons.items()):
            parts.append(f"{reason} {count}")
        details = ", ".join(f"{why} x{count}" for why, count in sorted(self.details.items()))
        text = (f"{self.name}: {self.wins} wins, {self.losses} losses, {self.draws} draws"
                + (f" ({', '.join(parts)})" if parts else ""))
        return text + (f"; {details}" if details else "")


def tally(games: list[GameLine], names: list[str]) -> dict[str, Side]:
    """Each agent's wins, losses, draws and what went wrong, over ``games``."""
    sides = {name: Side(name) for name in names}
    for game in games:
        for name, side in sides.items():
            gone = game.cannot_start or {}
            if name in gone:            # a forfeit: never started, so no other fault counts
                side.reasons[CANNOT_START] += 1
                side.details[str(gone[name])] += 1
                side.losses += game.result == "win"
                continue
            if game.result == "tie":
                side.draws += 1
            elif game.result == "win":
                if game.winner == name:
                    side.wins += 1
                else:
                    side.losses += 1
                    if game.reason in SHORT:
                        side.reasons[SHORT[game.reason]] += 1
            else:
                side.reasons["aborted"] += 1
            note = game.notes.get(name)
            if note:
                if note.startswith("crashed"):
                    side.reasons["crashes"] += 1
                    side.details[note[len("crashed ("):-1]] += 1
                else:
                    side.reasons["hangs"] += 1
                    side.details[note] += 1
    return sides


def pair_counts(games: list[GameLine]) -> list[int]:
    """Pentanomial counts of agent 1 over the complete pairs among ``games``."""
    return match_stats.paired_pentanomial((game.pair, game.score) for game in games
                                          if game.pair is not None and game.score is not None)


def summarize(games: list[GameLine], names: list[str], paired: bool, sprt_args=None) -> Summary:
    sides = tally(games, names)
    a = sides[names[0]]
    ptnml = pair_counts(games) if paired else None
    result = None
    if sprt_args is not None:
        elo0, elo1, alpha, beta = sprt_args
        if paired:
            result = match_stats.sprt(elo0, elo1, alpha, beta, ptnml=ptnml)
        else:
            result = match_stats.sprt(elo0, elo1, alpha, beta, trinomial=(a.wins, a.losses, a.draws))
    timeouts = tuple(sides[name].reasons[SHORT[TIME_OUT]] for name in names)
    return Summary(a.wins, a.losses, a.draws, ptnml, result, timeouts)


def game_moves(game: GameLine) -> tuple:
    """What makes a game the same game: who moved first, then every cell in order (the
    opening's too).  Two games with the same moves are one game played twice."""
    cells = [(int(board), int(spot)) for _, board, spot in game.opening or []]
    cells += [(move["board"], move["spot"]) for move in game.moves]
    return game.p1, tuple(cells)


def distinct_line(games: list[GameLine], hint: str = "") -> str:
    """``Distinct games: D of N``, with a warning when some repeat (``hint``: how to vary them).

    >>> distinct_line([GameLine(1, "tie", [], {}, [], p1="A"), GameLine(2, "tie", [], {}, [], p1="A")])
    'Distinct games: 1 of 2 (warning: 1 repeats an earlier game move for move (game 2 = game 1), and counts again in the figures above)'
    """
    first_of: dict = {}
    repeated = []                   # (game, the earlier game it repeats)
    for game in games:
        moves = game_moves(game)
        if moves in first_of:
            repeated.append((game.game, first_of[moves]))
        else:
            first_of[moves] = game.game
    line = f"Distinct games: {len(first_of)} of {len(games)}"
    repeats = len(repeated)
    if repeats:
        which = ", ".join(f"game {game} = game {earlier}" for game, earlier in repeated[:REPEATS_NAMED])
        which += f", and {repeats - REPEATS_NAMED} more" if repeats > REPEATS_NAMED else ""
        line += (f" (warning: {repeats} {'repeats' if repeats == 1 else 'repeat'} an earlier game "
                 f"move for move ({which}), and {'counts' if repeats == 1 else 'count'} again in the "
                 f"figures above{'; ' + hint if hint else ''})")
    return line


#: How many repeated games the warning names (the rest are counted).
REPEATS_NAMED = 5
#: What a hang is, for the reports that count them.
HANGS = ("hangs: games after which the bot was still running at the end of the exit wait "
         "(--exit-wait), and was killed")


def report_lines(games: list[GameLine], names: list[str], paired: bool, sprt_args=None,
                 repeat_hint: str = "") -> list[str]:
    """The cutechess-style summary, then how many games were distinct (``repeat_hint``: what
    to do when some repeat).  No Ptnml line before a pair is complete: it would be all zeros."""
    summary = summarize(games, names, paired, sprt_args)
    ptnml = summary.ptnml if summary.ptnml and sum(summary.ptnml) else None
    lines = match_stats.summary_lines(names, summary.wins, summary.losses, summary.draws, ptnml)
    if summary.sprt is not None:
        lines.append(summary.sprt.report_line(*sprt_args[:2]))
    sides = tally(games, names)
    lines += [sides[name].line() for name in names]
    if any(sides[name].reasons["hangs"] for name in names):
        lines.append(f"({HANGS})")
    lines += realbots.hint_lines(games)         # why a bot never moved, for -q too
    lines += machine_load.load_lines(games)       # which time-outs the machine's load caused
    if games:
        lines.append(distinct_line(games, repeat_hint))
    return lines


def describe(game: GameLine) -> str:
    """One line about a finished game of the file protocol (a CodinGame game:
    :func:`ref_sim.referees.codingame_shell.describe`)."""
    if game.cannot_start:       # a forfeit: no game was played
        gone = "; ".join(f"{name} could not start ({why})" for name, why in game.cannot_start.items())
        return (f"{game.p1} (X) vs {game.p2} (O): "
                + (f"{game.winner} wins: " if game.winner else "not rated: ")
                + f"{gone} [not played]")
    if game.result == "tie":
        text = "draw"
    elif game.result == "win":
        text = f"{game.winner} wins: {game.reason}"
    else:
        text = f"aborted: {game.reason}"
    extra = "; ".join([f"{name} {note}" for name, note in game.notes.items()]
                      + list((game.hints or {}).values()))
    return (f"{game.p1} (X) vs {game.p2} (O): {text} "
            f"[{len(game.moves) + 4} moves, {game.duration:.1f} s]"
            + (f" -- {extra}" if extra else ""))
