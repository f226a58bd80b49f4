"""A tournament of many bots (``uttt-tournament``): its pairings and schedule, its settings
(tournament.json), each pairing's games, the progress of the pairings, and the rating table.
The command line is :mod:`ref_sim.tournament`; the user's guide docs/tournament.md."""

from __future__ import annotations

import random
import threading
from dataclasses import replace
from pathlib import Path

from ref_sim.series.command import Slot
from ref_sim.series.command_line import MAX_GAMES, MAX_TURN_MS
from ref_sim.referees import codingame_shell
from ref_sim.referees.codingame_shell import DEFAULT_FIRST_TURN_MS, DEFAULT_GRACE_MS, DEFAULT_TURN_MS
from ref_sim.referees.file_shell import check_time_limit
from ref_sim.series import codingame_games, file_games, realbots
from ref_sim.series.process import isolation
from ref_sim.series.output import machine_load, report
from ref_sim.series.stats import match_stats, ratings
from ref_sim.series.output.records import CANNOT_START
from ref_sim.series.output.event_record import (FILE_SETTINGS, FORMAT, OWN_OPENINGS,
                                                SHARED_OPENINGS, STDIO_SETTINGS, Bot, EventSettings)
from ref_sim.series.output.game_line import GameLine
from ref_sim.series.loop import SeriesGames, went_wrong
from ref_sim.series.output.progress import Progress
from ref_sim.series.output.strict_json import RecordError
from ref_sim.series.output.report import HANGS, distinct_line, pair_counts, summarize, tally
from ref_sim.series.settings import SettingsFile, merge_settings, read_settings, refused
from ref_sim.series.specs import agent_spec, keep_recorded_names, stdio_spec

#: The command line's settings of a new event (FILE_SETTINGS, STDIO_SETTINGS: those that make
#: each protocol's games what they are, which a resumed tournament keeps).
DEFAULTS = {"bots": None, "gauntlet": False, "protocol": "file", "seed": None, "rounds": 1,
            "time_limit": 10.0, "encoding": None, "turn_ms": DEFAULT_TURN_MS,
            "first_turn_ms": DEFAULT_FIRST_TURN_MS, "grace_ms": DEFAULT_GRACE_MS,
            "isolate": None}
#: tournament.json, read and checked as match reads series.json; --rounds may extend it.
TOURNAMENT_FILE = SettingsFile("tournament.json", "tournament", start="the bots",
                                     grows="rounds",
                                     required=("kind", "protocol", "seed", "rounds", "bots"))


class EventError(ValueError):
    """A problem with the command line or the tournament in --out: one line, exit code 2."""


# -- the schedule -------------------------------------------------------------------------

def pairings(count: int, gauntlet: bool = False) -> list[tuple[int, int]]:
    """The pairings of ``count`` bots (0-based), the first of each playing as agent 1.

    >>> pairings(3), pairings(3, gauntlet=True)
    ([(0, 1), (0, 2), (1, 2)], [(0, 1), (0, 2)])
    """
    if gauntlet:
        return [(0, j) for j in range(1, count)]
    return [(i, j) for i in range(count) for j in range(i + 1, count)]


def schedule(pairing_count: int, rounds: int) -> list[Slot]:
    """Round after round, each pairing's opening pair in turn.

    >>> [(s.number, s.pairing, s.k) for s in schedule(2, 2)][:5]
    [(1, 0, 1), (2, 0, 2), (3, 1, 1), (4, 1, 2), (5, 0, 3)]
    """
    return [Slot((r * pairing_count + p) * 2 + second + 1, p, 2 * r + second + 1)
            for r in range(rounds) for p in range(pairing_count) for second in (0, 1)]


# -- the games ----------------------------------------------------------------------------

def pairing_games(settings: EventSettings, specs: list, out: Path, stop: threading.Event,
                  isolate: isolation.Isolation | None = None, waits: dict | None = None, *,
                  play=file_games.play_game) -> list[SeriesGames]:
    """Each pairing's series (as ``settings.pairings``), played by its runner's code
    (``isolate``: each bot contained, :mod:`ref_sim.series.process.isolation`; ``waits``: the bots'
    start-up and exit waits, :func:`ref_sim.series.process.launch.waits_given`; ``play``: what
    plays a game through the referee's files, :func:`ref_sim.series.file_games.play_game`)."""
    names = settings.names
    waits = waits or {}
    if settings.protocol == "file":
        game_settings = file_games.FileGameSettings(settings.time_limit, encoding=settings.encoding,
                                                    isolate=isolate, **waits)
    else:
        game_settings = codingame_games.StdioGameSettings(settings.turn_ms, settings.first_turn_ms,
                                                          settings.grace_ms, isolate=isolate, **waits)
    series = []
    for i, j in settings.pairings:
        pair = ([specs[i], specs[j]], [names[i], names[j]], pairing_seed(settings, (i, j)))
        if settings.protocol == "file":
            series.append(file_games.FileGames(*pair, game_settings, out, stop=stop, play=play))
        else:
            series.append(codingame_games.StdioGames(*pair, game_settings, out, stop=stop))
    return series


def pairing_seed(settings: EventSettings, pairing: tuple[int, int]) -> int:
    """The series seed of ``pairing`` (bot indexes): its games are games 1, 2... of
    ``uttt-match A B --seed`` it, colours paired as there (each pairing its own openings, or
    the event's seed for all: ``settings.openings``).

    >>> pairing_seed(EventSettings((), seed=7), (0, 1)), pairing_seed(EventSettings((), seed=7, openings="per-pairing"), (0, 1))
    (7, 69974328)
    """
    if settings.openings == SHARED_OPENINGS:
        return settings.seed
    i, j = pairing
    return random.Random(f"uttt-tournament/{settings.seed}/pairing/{i}-{j}").randrange(2 ** 32)


def describe(protocol: str, game: GameLine) -> str:
    """A game's line as the runner of the event's ``protocol`` says it."""
    stdio = protocol == "stdio" and not game.cannot_start   # a forfeit: alike
    return (codingame_shell.describe if stdio else report.describe)(game)


# -- the tables ---------------------------------------------------------------------------

def rated_games(games: list[GameLine]):
    """``(agent 1, agent 2, agent 1's points)`` of each game with a result (not aborted)."""
    return [(g.agents[0]["name"], g.agents[1]["name"], g.score)
            for g in games if g.score is not None]


def report_lines(settings: EventSettings, games: list[GameLine], anchor: str | None = None) -> list[str]:
    """The rating table, the head-to-head results and the faults, over ``games``."""
    names = settings.names
    specs = {bot.name: bot.spec for bot in settings.bots}
    pairs = ratings.pairwise(rated_games(games))
    fit = ratings.fit(names, pairs, anchor=anchor)
    totals = ratings.standings(names, pairs)
    sides = {name: tally([g for g in games if name in g.names], [name])[name]
             for name in names}
    lines = table_lines(fit, totals, sides, specs) + cannot_start_lines(names, games)
    joined = [group for group in fit.groups if totals[group[0]].games]
    if len(joined) > 1:
        lines.append(f"The bots fall into {len(joined)} groups that never met, even through "
                     "others: Elo compares within a group only ("
                     + "; ".join(", ".join(group) for group in joined) + ").")
    per_round = 2 * len(settings.pairings)       # each pairing plays twice a round
    apart = ratings.separation_lines(fit, sum(t.games for t in pairs.values()) / per_round
                                     if per_round else 0.0)
    lines += [""] + apart if apart else []
    lines += ["", "Head to head (the first bot's score; Elo difference with its 95 % error "
                  "bar over the opening pairs):"]
    width = max(len(f"{names[i]} vs {names[j]}") for i, j in settings.pairings)
    for i, j in settings.pairings:
        own = [g for g in games if g.pairing == [i, j]]
        lines.append("  " + head_to_head(names[i], names[j], pairs, own, width))
    faulty = [sides[name].line() for name in fit.ranked() if sides[name].reasons]
    if faulty:
        lines += ["", f"Faults ({HANGS}):"] + ["  " + line for line in faulty]
    lines += ["  " + line for line in realbots.hint_lines(games)]      # why a bot never moved
    load = machine_load.load_lines(games)         # which time-outs the machine's load caused
    lines += [""] + load if load else []
    if games:
        hint = codingame_games.REPEAT_HINT if settings.protocol == "stdio" else ""
        played = [g for g in games if not g.cannot_start]    # a forfeit has no moves
        if played:
            lines += ["", distinct_line(played, hint)]
    return lines


def table_lines(fit: ratings.Ratings, totals: dict, sides: dict, specs: dict) -> list[str]:
    """The rating table in the style of cutechess-cli's tournament table (and Ordo's)."""
    width = max(len("Bot"), *(len(name) for name in fit.elo))
    header = (f"{'Rank':>4} {'Bot':<{width}} {'Elo':>7} {'+/-':>6} {'Games':>6} {'Score':>7} "
              f"{'Draws':>7} {'Time-outs':>9} {'Crashes':>7} {'Invalid':>7}  Spec")
    lines = [header]
    for rank, name in enumerate(fit.ranked(), 1):
        record, side = totals[name], sides[name]
        error = "----" if name == fit.anchor else match_stats.format_elo(fit.error[name], sign=False)
        score = f"{100 * record.score:.1f}%" if record.games else "-"
        draws = f"{100 * record.draws / record.games:.1f}%" if record.games else "-"
        lines.append(f"{rank:>4} {name:<{width}} {match_stats.format_elo(fit.elo[name]):>7} "
                     f"{error:>6} {record.games:>6} {score:>7} {draws:>7} "
                     f"{side.reasons['time-outs']:>9} {side.reasons['crashes']:>7} "
                     f"{side.reasons['invalid moves'] + side.reasons['out-of-order']:>7}  {specs[name]}"
                     + (f"  [could not start: {side.reasons[CANNOT_START]} games]"
                        if side.reasons[CANNOT_START] else ""))
    where, against = ((f"{fit.anchor} at 0", fit.anchor) if fit.anchor
                      else ("the mean at 0", "the mean"))
    lines.append(f"Elo: maximum likelihood over all games, {where}; +/-: 95 %, each bot "
                 f"against {against} (ref_sim/series/stats/ratings.py).")
    lines.append("Time-outs, Invalid: games lost by a late move, or an invalid or out-of-order one; "
                 "Crashes: games in which its program exited before the end.")
    return lines


def cannot_start_lines(names: list[str], games: list[GameLine]) -> list[str]:
    """A line for each bot that could not start in some games: why (its log's line), how those
    games were scored, and the log that says so.  The event went on without it."""
    lines = []
    for name in names:
        forfeits = [g for g in games if name in (g.cannot_start or {})]
        if not forfeits:
            continue
        last = forfeits[-1]
        lost = sum(g.result == "win" for g in forfeits)
        played = sum(name in g.names for g in games)
        which = f"its {lost} game{'s' * (lost != 1)}" if lost == played else \
            f"{lost} of its {played} games"
        text = f"{name}: could not start ({last.cannot_start[name]}); {which} scored as losses"
        if len(forfeits) > lost:
            text += (f", {len(forfeits) - lost} against bots that could not start either not "
                     "rated")
        lines.append(text + f" (its output: game-{last.game:04d}-{name}.log)")
    return lines


def head_to_head(a: str, b: str, pairs: dict, games: list[GameLine], width: int = 0) -> str:
    """``A vs B: W - L - D  [score] N, Elo difference: ..., Ptnml(0-2): [...]`` (A's view)."""
    title = f"{a} vs {b}:".ljust(width + 1)
    record = pairs.get((a, b), ratings.Record())        # agent 1 of every game is a
    if not record.games:
        return f"{title} not played yet"
    ptnml = pair_counts(games)
    ptnml = ptnml if sum(ptnml) else None       # as match: no all-zero Ptnml before a pair
    estimate = match_stats.estimate(record.wins, record.losses, record.draws, ptnml)
    return (f"{title} {record.wins} - {record.losses} - {record.draws}  "
            f"[{record.score:.3f}] {record.games}, Elo difference: {estimate.elo_text()}, "
            f"LOS: {100 * estimate.los:.1f} %"
            + (f", Ptnml(0-2): [{', '.join(map(str, ptnml))}]" if ptnml else ""))


class PairingProgress:
    """Each pairing's progress line, labelled ``A vs B`` (a pairing is a head-to-head series,
    whose figures mean something where a sum over the event would not; every round plays every
    pairing, so a pairing's bar and time left follow the tournament's): a :class:`Progress` from the pairing's first game in this run (the time left is this run's pace)."""

    def __init__(self, settings: EventSettings, games: list[GameLine]) -> None:
        names = settings.names
        self.total = 2 * settings.rounds
        self.names = [[names[i], names[j]] for i, j in settings.pairings]
        self.played = [[g for g in games if g.pairing == list(pair)]
                       for pair in settings.pairings]
        self.lines: dict[int, Progress] = {}
        self.shown: Progress | None = None        # the line on a terminal: the others drawn over

    def start(self, pairing: int) -> None:
        """The pairing's next game is starting."""
        if pairing not in self.lines:
            self.lines[pairing] = Progress(self.total, done=len(self.played[pairing]),
                                           label=" vs ".join(self.names[pairing]))
            if self.lines[pairing].terminal and self.shown is None:
                self._show(pairing)             # a line from the start, as ref_sim.match

    def game(self, pairing: int, line: str, game: GameLine) -> None:
        """A finished game of the pairing: its line (in a log; on a terminal if it went wrong),
        then the pairing's figures."""
        self.played[pairing].append(game)
        self.lines[pairing].game(line, notable=went_wrong(game))
        self._show(pairing)

    def _show(self, pairing: int) -> None:
        played = self.played[pairing]
        self.shown = self.lines[pairing]
        self.shown.update(len(played), summarize(played, self.names[pairing], paired=True))

    def close(self) -> None:
        if self.shown is not None:
            self.shown.close()


def event_settings(out: Path | None, resume: bool, given: dict) -> EventSettings:
    """tournament.json for this run: the recorded tournament's in ``out`` when resuming (what
    the command line gives again, ``given``: each of :data:`DEFAULTS`, None where left out,
    must agree, but ``--rounds``), else the command line's.  The bots are named by
    :func:`check_settings`.  Raises ValueError (:class:`EventError`), or CannotResume."""
    recorded = read_settings(out, resume, bool(given["bots"]), TOURNAMENT_FILE)
    old = None
    if recorded is not None:        # compared as the command line gives them
        path = out / TOURNAMENT_FILE.name
        try:            # its pairings are made anew below, whatever it held
            old = EventSettings.from_json({**recorded, "pairings": []}, where=path)
        except RecordError:
            raise refused(f"cannot resume: {path} is not a tournament file", path, "bots") from None
        recorded = {**recorded, "bots": [bot.spec for bot in old.bots], "gauntlet": old.gauntlet}
    given = dict(given)
    flags = {key: "--" + key.replace("_", "-") for key in DEFAULTS}
    flags["bots"] = "BOT ..."
    if given["time_limit"] is not None and (given["protocol"] or (recorded or DEFAULTS)["protocol"]) == "stdio":
        # --time-limit is every command's name for the time per move; CodinGame counts it in ms.
        if given["turn_ms"] is not None:
            raise EventError("--time-limit and --turn-ms are the same setting: give one")
        if not 0 < given["time_limit"] <= MAX_TURN_MS / 1000:
            raise EventError(f"--time-limit {given['time_limit']:g}: a turn is more than 0 and at "
                             f"most {MAX_TURN_MS / 1000:,g} s")
        given["turn_ms"], given["time_limit"] = 1000 * given["time_limit"], None
    merged = merge_settings(recorded, given, {**DEFAULTS, "seed": random.randrange(2 ** 32)},
                            flags, out, TOURNAMENT_FILE)
    protocol = merged["protocol"]
    own, other = ((FILE_SETTINGS, STDIO_SETTINGS) if protocol == "file"
                  else (STDIO_SETTINGS, FILE_SETTINGS))
    for key in other:
        if given[key] is not None:
            raise EventError(f"{flags[key]} is not for --protocol {protocol}")
    if len(merged["bots"] or ()) < 2:
        raise EventError("a tournament needs at least two bots")
    pairs = pairings(len(merged["bots"]), merged["gauntlet"])
    if 2 * len(pairs) * merged["rounds"] > MAX_GAMES:
        raise EventError(f"{2 * len(pairs) * merged['rounds']:,} games: at most {MAX_GAMES:,} "
                         "in one tournament (fewer --rounds or bots)")
    return EventSettings(
        format=FORMAT, kind="gauntlet" if merged["gauntlet"] else "round-robin",
        protocol=protocol, seed=merged["seed"], rounds=merged["rounds"], isolate=merged["isolate"],
        openings=OWN_OPENINGS if old is None else old.openings,
        **{key: merged[key] for key in own},
        bots=tuple(Bot(spec) for spec in merged["bots"]), pairings=tuple(pairs),
        recorded_names=None if old is None else old.names)


def check_settings(settings: EventSettings) -> tuple[list, EventSettings]:
    """The bots' specs and ``settings`` with each bot named, after checking the time limit;
    ValueError."""
    if settings.protocol == "file":
        problem, _ = check_time_limit(settings.time_limit)
        if problem:
            raise EventError(problem)
        parse = agent_spec
    else:
        parse = stdio_spec
    specs = [parse(bot.spec) for bot in settings.bots]
    keep_recorded_names(specs, settings.recorded_names)
    bots = tuple(Bot(bot.spec, name)                                # a clash: ValueError
                 for name, bot in zip(realbots.bot_names(specs), settings.bots))
    return specs, replace(settings, bots=bots, recorded_names=None)


def find_bot(settings: EventSettings, text: str) -> str:
    """The name of the bot ``text`` names (a name, any case, or a spec that only one has)."""
    bots = settings.bots
    found = ([b.name for b in bots if b.name.lower() == text.lower()]
             or [b.name for b in bots if b.spec == text])
    if len(found) == 1:
        return found[0]
    why = f"{len(found)} bots have that spec" if found else "no such bot"
    raise EventError(f"--anchor {text}: {why}; name one of {', '.join(settings.names)}")


def header(settings: EventSettings, runner, out: Path, kept: bool) -> str:
    """What is about to be played, one bot a line."""
    count, rounds = len(settings.pairings), settings.rounds
    if settings.protocol == "file":
        timing = f"{settings.time_limit:g} s per move"
        pairing = "each opening twice, colours swapped"
    else:
        timing = (f"{settings.turn_ms:g} ms per turn (first {settings.first_turn_ms:g} "
                  f"ms, grace {settings.grace_ms:g} ms), stdin/stdout")
        pairing = "each program first once"
    kind = "Gauntlet" if settings.gauntlet else "Round-robin"
    width = max(len(bot.name) for bot in settings.bots)
    lines = [f"{kind} of {len(settings.bots)} bots, {count} pairing{'s' * (count > 1)}, "
             f"{rounds} round{'s' * (rounds > 1)}: {2 * count * rounds} games ({pairing}) at "
             f"{timing}; seed {settings.seed}"]
    lines += [f"  {bot.name:<{width}}  {bot.spec}" for bot in settings.bots]
    if runner.remote:
        lines.append(f"on {len(runner.slots())} cluster worker(s), {runner.capacity()} at once")
    elif runner.capacity() > 1:
        lines.append(f"{runner.capacity()} games at once")
    lines.append(f"files in {out}" if kept else "games and logs in a temporary directory, deleted "
                 "at the end (--out DIR keeps them), but for the logs of games that go wrong")
    return "\n".join(lines)
