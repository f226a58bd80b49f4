"""Tournaments of many bots: a round-robin or a gauntlet, ending in a rating table.

    python -m ref_sim.tournament BOT BOT [BOT ...] [--bots FILE_OR_DIR] [--gauntlet]
                                 [--rounds N] [--seed N]
                                 [--out DIR] [--resume] [--concurrency N] [--cluster ADDRESS]
                                 [--anchor BOT] [-q]
                                 [--protocol file] [--time-limit S] [--encoding ENC]
                                 [--protocol stdio] [--turn-ms MS] [--first-turn-ms MS]
                                 [--grace-ms MS]
    python -m ref_sim.tournament --resume --out DIR [--rounds N]      # the tournament in DIR

(``uttt-tournament`` is the console script.)  A BOT is what ``ref_sim.match`` takes
(``--protocol file``, the default: the referee's files) or what ``ref_sim.stdio`` takes
(``--protocol stdio``: CodinGame's stdin/stdout): a built-in with options (``agent:depth=4``,
``seed:depth=2``, ``random``, ``eager``...) or a command.  The same spec may come twice (a bot
against itself measures the noise).  Bot ``i`` (1-based) is called its label and ``i``:
``Agent1``, ``Agent2``, ``Random3``..., or the name its spec fixes (``name=Otter:java -cp bots
Otter``, :mod:`ref_sim.series.realbots`); two bots that would share a name are refused in one line.
``--bots FILE_OR_DIR`` adds the bots of a list, one spec a line, after those of the command
line (:mod:`ref_sim.series.bot_list`): a class's bots in one command.

Pairings: every bot against every other (round-robin), or the first bot against each of the
others (``--gauntlet``, to measure one bot against a field).  Each round, every pairing plays
one opening twice with the colours swapped; ``--rounds N`` plays N such pairs per pairing,
round after round, so a tournament stopped early has played every pairing about as often.

Each pairing is a series of its own with the tournament's ``--seed``: its game ``k`` is game
``k`` of ``python -m ref_sim.match A B --seed SEED`` (of ``ref_sim.stdio`` with stdio), with
the same opening, colours and seeds, so every pairing meets the same openings in the same
round, and any game can be replayed head to head.  The games are played by those runners'
own code (:class:`ref_sim.series.file_games.FileGames`, :class:`ref_sim.series.codingame_games.StdioGames`, the loop
:func:`ref_sim.series.loop.play_games`).  Games are numbered through the tournament in the order of
the schedule (round, then pairing); ``logs/`` names them by that number.

Progress (:mod:`ref_sim.series.progress`): each pairing's line, labelled ``A vs B`` (its games, its
first bot's W-L-D and Elo, each side's time-outs, the time left at its pace): a pairing is a
head-to-head series, whose figures mean something where a sum over the event would not, and
every round plays every pairing, so a pairing's bar and time left follow the tournament's.
On a terminal the pairings take turns on the one redrawn line, with the games that went
wrong printed above it; elsewhere one line per game and a pairing's figures every 10 of its
games.

Stopping, as ``ref_sim.match`` (:mod:`ref_sim.stops`): Ctrl-C, SIGTERM and SIGHUP alike abort
the games being played and kill their bots with their whole process groups, remove the
temporary directory (no ``--out``), rate the games finished so far in the table, and end in
the command that continues the tournament (``--resume --out DIR``, on stderr); the exit code
is 128 + the signal.  Every bot gets this runner's process id in ``UTTT_RUNNER_PID``
(:mod:`agent.lifeline`): one that reads it ends by itself when the runner was killed outright.

Files in ``--out`` (default: a temporary directory, deleted at the end; the logs of the games
that went wrong are moved to a kept ``uttt-logs-*`` folder, named in the output):

``tournament.json``  the tournament: ``{"format": 1, "kind": "round-robin" | "gauntlet",
                     "protocol": "file" | "stdio", "seed", "rounds", "time_limit",
                     "encoding"`` (stdio: ``"turn_ms", "first_turn_ms", "grace_ms"``)``,
                     "bots": [{"name", "spec"}], "pairings": [[i, j] ...], "isolate": null |
                     its settings, "openings": "per-pairing" | "shared"}`` (0-based bot
                     numbers, i plays as agent 1; openings: :func:`pairing_seed`).  ``--resume --out DIR`` alone continues
                     it, ``--rounds N`` extends it; an option that contradicts it is refused.
``games.jsonl``      one line per finished game, as ``ref_sim.match`` (or ``ref_sim.stdio``)
                     writes it, ``game`` the tournament's game number, with two more keys:
                     ``pairing`` ([i, j] as in tournament.json) and ``pairing_game`` (``k``
                     above); ``pair`` is the round, 0-based.  Agent 1 is bot ``i``.
``logs/``            each bot's output per game (``game-NNNN-NAME.log``) and, with the file
                     protocol, the referee's record ``game-NNNN.json``.
``crosstable.html``  the rating table beside the crosstable, each cell linked to the replay
                     page of its pairing's games, ``replays/NN-A-vs-MM-B.html``
                     (:mod:`ref_sim.views.crosstable`); written with ``--out`` each time a
                     pairing ends (with that pairing's replay page), so a long event can be
                     followed, and at the end of every run, a resumed or stopped one too.

As with ``ref_sim.match`` (:mod:`ref_sim.series.records`): one runner at a time per ``--out`` (the
second is refused in one line naming the first), a full disk ends the tournament with the
table so far and the resume line, a bad line of ``games.jsonl`` is left out on ``--resume``
with one warning (kept in ``games.jsonl.dropped``) and its game played again.

The rating table (:mod:`ref_sim.series.ratings`: Ordo's maximum-likelihood logistic Elo, the mean
at 0 or ``--anchor BOT`` at 0, 95 % error bars), each bot's games, score, draws, time-outs
and crashes, then each pairing's head-to-head result in the style of ``ref_sim.match`` (its
Elo difference with the pentanomial error bar of its opening pairs), then any other faults
(invalid moves, out-of-order moves, hangs) per bot, then how many games were distinct.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from agent.cli_common import OneLineParser
from ref_sim.series import cluster, records, stats
from agent.options import MAX_GAMES, MAX_SECONDS, real, whole
from ref_sim.series import bot_list, isolation, launch, ratings, realbots
from ref_sim import cli_common, match, stdio
from ref_sim.views import crosstable
from ref_sim.series.progress import Progress
from ref_sim.referees.file_protocol import check_encoding, check_time_limit, locale_encoding
from ref_sim.series.report import HANGS, distinct_line, pair_counts, summarize, tally
from ref_sim.series.loop import (SeriesGames, SettingsFile, append_game, capped_concurrency, conclude,
                            merge_settings, play_games, prepare_out, read_settings, run_in, went_wrong)
from ref_sim.series.specs import agent_spec, keep_recorded_names
from ref_sim.series import codingame_games, file_games
from ref_sim.series.specs import stdio_spec

MODULE = "ref_sim.tournament"
FORMAT = 1
#: Settings that make games what they are, per protocol: a resumed tournament keeps them.
FILE_SETTINGS = ("time_limit", "encoding")
STDIO_SETTINGS = ("turn_ms", "first_turn_ms", "grace_ms")
DEFAULTS = {"bots": None, "gauntlet": False, "protocol": "file", "seed": None, "rounds": 1,
            "time_limit": 10.0, "encoding": None, "turn_ms": stdio.DEFAULT_TURN_MS,
            "first_turn_ms": stdio.DEFAULT_FIRST_TURN_MS, "grace_ms": stdio.DEFAULT_GRACE_MS,
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


@dataclass(frozen=True)
class Slot:
    """One game of the event: its number, its pairing (an index into the pairings), and
    ``k``, its number in that pairing's series (the round is ``(k - 1) // 2``)."""
    number: int
    pairing: int
    k: int


def schedule(pairing_count: int, rounds: int) -> list[Slot]:
    """Round after round, each pairing's opening pair in turn.

    >>> [(s.number, s.pairing, s.k) for s in schedule(2, 2)][:5]
    [(1, 0, 1), (2, 0, 2), (3, 1, 1), (4, 1, 2), (5, 0, 3)]
    """
    return [Slot((r * pairing_count + p) * 2 + second + 1, p, 2 * r + second + 1)
            for r in range(rounds) for p in range(pairing_count) for second in (0, 1)]


# -- the games ----------------------------------------------------------------------------

def pairing_games(settings: dict, specs: list, out: Path, stop: threading.Event,
                  isolate: isolation.Isolation | None = None, waits: dict | None = None
                  ) -> list[SeriesGames]:
    """Each pairing's series (as ``settings["pairings"]``), played by its runner's code
    (``isolate``: each bot contained, :mod:`ref_sim.series.isolation`; ``waits``: the bots'
    start-up and exit waits, :func:`ref_sim.series.launch.waits_given`)."""
    names = [bot["name"] for bot in settings["bots"]]
    waits = waits or {}
    if settings["protocol"] == "file":
        game_settings = file_games.FileGameSettings(settings["time_limit"], encoding=settings["encoding"],
                                                    isolate=isolate, **waits)
    else:
        game_settings = codingame_games.StdioGameSettings(*(settings[key] for key in STDIO_SETTINGS),
                                                          isolate=isolate, **waits)
    series = []
    for i, j in settings["pairings"]:
        pair = ([specs[i], specs[j]], [names[i], names[j]], pairing_seed(settings, (i, j)))
        games = file_games.FileGames if settings["protocol"] == "file" else codingame_games.StdioGames
        series.append(games(*pair, game_settings, out, stop=stop))
    return series


#: How a tournament's pairings draw their openings (tournament.json's "openings"): each from its
#: own seed, so that the event is not one opening played by every pairing.  A tournament.json
#: without the key is from before: all its pairings play the event's seed, and go on doing so.
OWN_OPENINGS, SHARED_OPENINGS = "per-pairing", "shared"


def pairing_seed(settings: dict, pairing: tuple[int, int]) -> int:
    """The series seed of ``pairing`` (bot indexes): its games are games 1, 2... of
    ``uttt-match A B --seed`` it, colours paired as there.

    >>> pairing_seed({"seed": 7}, (0, 1)), pairing_seed({"seed": 7, "openings": "per-pairing"}, (0, 1))
    (7, 69974328)
    """
    if settings.get("openings", SHARED_OPENINGS) == SHARED_OPENINGS:
        return settings["seed"]
    i, j = pairing
    return random.Random(f"uttt-tournament/{settings['seed']}/pairing/{i}-{j}").randrange(2 ** 32)


def describe(settings: dict, game: dict) -> str:
    return (stdio if settings["protocol"] == "stdio" else match).describe(game)


# -- the tables ---------------------------------------------------------------------------

def rated_games(games: list[dict]):
    """``(agent 1, agent 2, agent 1's points)`` of each game with a result (not aborted)."""
    return [(g["agents"][0]["name"], g["agents"][1]["name"], g["score"])
            for g in games if g["score"] is not None]


def report_lines(settings: dict, games: list[dict], anchor: str | None = None) -> list[str]:
    """The rating table, the head-to-head results and the faults, over ``games``."""
    names = [bot["name"] for bot in settings["bots"]]
    specs = {bot["name"]: bot["spec"] for bot in settings["bots"]}
    pairs = ratings.pairwise(rated_games(games))
    fit = ratings.fit(names, pairs, anchor=anchor)
    totals = ratings.standings(names, pairs)
    sides = {name: tally([g for g in games if name in g["names"]], [name])[name]
             for name in names}
    lines = table_lines(fit, totals, sides, specs)
    joined = [group for group in fit.groups if totals[group[0]].games]
    if len(joined) > 1:
        lines.append(f"The bots fall into {len(joined)} groups that never met, even through "
                     "others: Elo compares within a group only ("
                     + "; ".join(", ".join(group) for group in joined) + ").")
    lines += ["", "Head to head (the first bot's score; Elo difference with its 95 % error "
                  "bar over the opening pairs):"]
    width = max(len(f"{names[i]} vs {names[j]}") for i, j in settings["pairings"])
    for i, j in settings["pairings"]:
        own = [g for g in games if g.get("pairing") == [i, j]]
        lines.append("  " + head_to_head(names[i], names[j], pairs, own, width))
    faulty = [sides[name].line() for name in fit.ranked() if sides[name].reasons]
    if faulty:
        lines += ["", f"Faults ({HANGS}):"] + ["  " + line for line in faulty]
    lines += ["  " + line for line in realbots.hint_lines(games)]      # why a bot never moved
    if games:
        hint = codingame_games.REPEAT_HINT if settings.get("protocol") == "stdio" else ""
        lines += ["", distinct_line(games, hint)]
    return lines


def table_lines(fit: ratings.Ratings, totals: dict, sides: dict, specs: dict) -> list[str]:
    """The rating table in the style of cutechess-cli's tournament table (and Ordo's)."""
    width = max(len("Bot"), *(len(name) for name in fit.elo))
    header = (f"{'Rank':>4} {'Bot':<{width}} {'Elo':>7} {'+/-':>6} {'Games':>6} {'Score':>7} "
              f"{'Draws':>7} {'Time-outs':>9} {'Crashes':>7} {'Invalid':>7}  Spec")
    lines = [header]
    for rank, name in enumerate(fit.ranked(), 1):
        record, side = totals[name], sides[name]
        error = "----" if name == fit.anchor else stats.format_elo(fit.error[name], sign=False)
        score = f"{100 * record.score:.1f}%" if record.games else "-"
        draws = f"{100 * record.draws / record.games:.1f}%" if record.games else "-"
        lines.append(f"{rank:>4} {name:<{width}} {stats.format_elo(fit.elo[name]):>7} "
                     f"{error:>6} {record.games:>6} {score:>7} {draws:>7} "
                     f"{side.reasons['time-outs']:>9} {side.reasons['crashes']:>7} "
                     f"{side.reasons['invalid moves'] + side.reasons['out-of-order']:>7}  {specs[name]}")
    where, against = ((f"{fit.anchor} at 0", fit.anchor) if fit.anchor
                      else ("the mean at 0", "the mean"))
    lines.append(f"Elo: maximum likelihood over all games, {where}; +/-: 95 %, each bot "
                 f"against {against} (ref_sim/series/ratings.py).")
    lines.append("Time-outs, Invalid: games lost by a late move, or an invalid or out-of-order one; "
                 "Crashes: games in which its program exited before the end.")
    return lines


def head_to_head(a: str, b: str, pairs: dict, games: list[dict], width: int = 0) -> str:
    """``A vs B: W - L - D  [score] N, Elo difference: ..., Ptnml(0-2): [...]`` (A's view)."""
    title = f"{a} vs {b}:".ljust(width + 1)
    record = pairs.get((a, b), ratings.Record())        # agent 1 of every game is a
    if not record.games:
        return f"{title} not played yet"
    ptnml = pair_counts(games)
    ptnml = ptnml if sum(ptnml) else None       # as match: no all-zero Ptnml before a pair
    estimate = stats.estimate(record.wins, record.losses, record.draws, ptnml)
    return (f"{title} {record.wins} - {record.losses} - {record.draws}  "
            f"[{record.score:.3f}] {record.games}, Elo difference: {estimate.elo_text()}, "
            f"LOS: {100 * estimate.los:.1f} %"
            + (f", Ptnml(0-2): [{', '.join(map(str, ptnml))}]" if ptnml else ""))


class PairingProgress:
    """Each pairing's progress line (see the module docstring): a :class:`Progress` labelled
    ``A vs B`` from the pairing's first game in this run (the time left is this run's pace)."""

    def __init__(self, settings: dict, games: list[dict]) -> None:
        names = [bot["name"] for bot in settings["bots"]]
        self.total = 2 * settings["rounds"]
        self.names = [[names[i], names[j]] for i, j in settings["pairings"]]
        self.played = [[g for g in games if g.get("pairing") == list(pair)]
                       for pair in settings["pairings"]]
        self.lines: dict[int, Progress] = {}
        self.shown: Progress | None = None        # the line on a terminal: the others drawn over

    def start(self, pairing: int) -> None:
        """The pairing's next game is starting."""
        if pairing not in self.lines:
            self.lines[pairing] = Progress(self.total, done=len(self.played[pairing]),
                                           label=" vs ".join(self.names[pairing]))
            if self.lines[pairing].terminal and self.shown is None:
                self._show(pairing)             # a line from the start, as ref_sim.match

    def game(self, pairing: int, line: str, game: dict) -> None:
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


# -- the command line ---------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=cli_common.prog(MODULE),
        description="A round-robin or gauntlet of many bots through the simulated referee "
                    "(or CodinGame's stdin/stdout), ending in an Ordo-style rating table.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="""\
bots: what ref_sim.match takes (--protocol file) or ref_sim.stdio takes (--protocol stdio):
  agent, agent:depth=N, agent:nodes=N, seed, seed:depth=N, random, eager, flood, nbsp,
  or "COMMAND" with the placeholders of that runner.  Bot i is called LABELi (Agent1...).

pairings: each round every pairing plays one opening twice, colours swapped (stdio: each
program moves first once).  Round-robin: every bot against every other; --gauntlet: the
first bot against each of the others.  Game k of a pairing is game k of ref_sim.match
(or ref_sim.stdio) A B --seed SEED.

output: a rating table (Elo by maximum likelihood over all games, draws half a win, the
mean at 0 or --anchor BOT at 0; +/- the 95 % error bar), each bot's games, score, draws,
time-outs and crashes, then each pairing's W - L - D with its Elo difference, then other
faults (invalid and out-of-order moves, hangs), then the distinct games.  While it plays:
each pairing's progress line (ref_sim.series.progress), redrawn on a terminal.

files in --out (created if missing): tournament.json (the tournament: --resume --out DIR
alone continues it, --rounds N extends it, an option that contradicts it is refused),
games.jsonl (one JSON line per game, as ref_sim.match writes them, plus "pairing" and
"pairing_game"), logs/, and at the end crosstable.html (the rating table beside the
crosstable, each cell linked to its pairing's replay page in replays/).  Without --out
they go to a temporary directory, deleted at the end (no pages), but for the logs of
games that went wrong (time-out, bad move, crash, hang): those are moved to a uttt-logs-*
folder of the temporary directory, named in the output.

stopping: Ctrl-C, SIGTERM and SIGHUP stop the tournament alike: the games being played are
aborted and their bots killed (each bot's whole process group), the temporary directory is
removed, the games finished so far are rated, and the last line gives the command that
continues the tournament (--resume --out DIR).  A bot whose runner was killed outright
(SIGKILL) finds out by itself if it reads UTTT_RUNNER_PID (our agent and the random
players do) and exits.

exit codes: 0 the tournament ran, 1 a bot could not start (its command is wrong), 2 bad
arguments, 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP (128 + the signal; the games so far are
kept and rated), 141 the output was closed (| head).

examples:
  python -m ref_sim.tournament agent agent:depth=4 seed random --rounds 5 --time-limit 1 --out runs/t
  python -m ref_sim.tournament --resume --out runs/t --rounds 10        # five rounds more
  python -m ref_sim.tournament agent seed:depth=2 seed:depth=4 random --gauntlet --time-limit 0.5
  python -m ref_sim.tournament agent:depth=2 agent:depth=4 random --protocol stdio --rounds 10
  uttt-tournament agent --bots class/bots.txt --rounds 2 --time-limit 1 --out runs/class""")
    parser.add_argument("bots", nargs="*", metavar="BOT",
                        help="two or more bots (none with --resume: those of --out)")
    parser.add_argument("--bots", dest="bot_lists", action="append", default=[],
                        metavar="FILE_OR_DIR",
                        help="more bots from a file, one spec a line (# comments), or from "
                             "a folder's *.bot files; repeatable (ref_sim/series/bot_list.py)")
    parser.add_argument("--gauntlet", action="store_true", default=None,
                        help="the first bot against each of the others (default: round-robin)")
    parser.add_argument("--rounds", type=whole(1, MAX_GAMES), metavar="N",
                        help="opening pairs per pairing (default 1; with --resume: as before, "
                             "or more to extend the tournament)")
    parser.add_argument("--protocol", choices=("file", "stdio"),
                        help="file: the referee's files (default); stdio: CodinGame's "
                             "stdin/stdout")
    parser.add_argument("--seed", type=int, help="seed of the tournament: openings, colours, "
                        "the bots' seeds (default: random, printed)")
    parser.add_argument("--out", help="directory for the tournament (default: a temporary one)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the tournament in --out (its bots and settings)")
    parser.add_argument("--concurrency", type=whole(1), default=1, metavar="N",
                        help="games at once (default 1; at most the number of cores - 1)")
    cluster.add_cluster_options(parser)
    parser.add_argument("--anchor", metavar="BOT",
                        help="rate this bot (its name, e.g. Random3, or its spec) at 0 "
                             "instead of the mean")
    parser.add_argument("-q", "--quiet", action="store_true", help="only the final tables")
    file_group = parser.add_argument_group("--protocol file (ref_sim.match)")
    # Below 0.1 s check_time_limit says why; here nan, inf and hours are refused.
    file_group.add_argument("--time-limit", type=real(-math.inf, MAX_SECONDS), metavar="S",
                            help="seconds per move (default 10; with --protocol stdio the turn's "
                                 f"time, default {stdio.DEFAULT_TURN_MS / 1000:g})")
    file_group.add_argument("--encoding", metavar="ENC",
                            help="the referee's encoding, also given to the built-ins "
                                 f"(default: this machine's, {locale_encoding()})")
    stdio.add_timing(parser.add_argument_group("--protocol stdio (ref_sim.stdio)"), time_limit=False)
    isolation.add_options(parser)
    launch.add_wait_options(parser, file_games.STARTUP_WAIT, file_games.EXIT_WAIT,
                            ", or one time limit and a second with the file protocol")
    return parser


def event_settings(args) -> dict:
    """tournament.json for this run: the recorded tournament's when resuming (what the command
    line gives again must agree, but ``--rounds``), else the command line's.  The bots are
    named by :func:`check_settings`.  Raises ValueError (:class:`EventError`)."""
    out = Path(args.out) if args.out else None
    recorded = read_settings(out, args.resume, bool(args.bots), TOURNAMENT_FILE)
    if recorded is not None:        # compared as the command line gives them
        try:
            recorded_names = [bot.get("name") if isinstance(bot, dict) else None for bot in recorded["bots"]]
            recorded = {**recorded, "bots": [bot["spec"] for bot in recorded["bots"]],
                        "gauntlet": recorded["kind"] == "gauntlet"}
            if not all(isinstance(spec, str) for spec in recorded["bots"]):
                raise TypeError("a bot's spec is not text")
        except (KeyError, TypeError):
            raise EventError(f"cannot resume: {out / TOURNAMENT_FILE.name} is not a "
                             "tournament file") from None
    given = {key: getattr(args, key) for key in DEFAULTS if key != "isolate"}
    given["bots"] = args.bots or None
    given["isolate"] = isolation.recorded_setting(isolation.from_args(args))
    flags = {key: "--" + key.replace("_", "-") for key in DEFAULTS}
    flags["bots"] = "BOT ..."
    if given["time_limit"] is not None and (given["protocol"] or (recorded or DEFAULTS)["protocol"]) == "stdio":
        # --time-limit is every command's name for the time per move; CodinGame counts it in ms.
        if given["turn_ms"] is not None:
            raise EventError("--time-limit and --turn-ms are the same setting: give one")
        if not 0 < given["time_limit"] <= stdio.MAX_TURN_MS / 1000:
            raise EventError(f"--time-limit {given['time_limit']:g}: a turn is more than 0 and at "
                             f"most {stdio.MAX_TURN_MS / 1000:,g} s")
        given["turn_ms"], given["time_limit"] = 1000 * given["time_limit"], None
    settings = merge_settings(recorded, given, {**DEFAULTS, "seed": random.randrange(2 ** 32)},
                                    flags, out, TOURNAMENT_FILE)
    protocol = settings["protocol"]
    own, other = ((FILE_SETTINGS, STDIO_SETTINGS) if protocol == "file"
                  else (STDIO_SETTINGS, FILE_SETTINGS))
    for key in other:
        if given[key] is not None:
            raise EventError(f"{flags[key]} is not for --protocol {protocol}")
    if len(settings["bots"] or ()) < 2:
        raise EventError("a tournament needs at least two bots")
    pairs = pairings(len(settings["bots"]), settings["gauntlet"])
    if 2 * len(pairs) * settings["rounds"] > MAX_GAMES:
        raise EventError(f"{2 * len(pairs) * settings['rounds']:,} games: at most {MAX_GAMES:,} "
                         "in one tournament (fewer --rounds or bots)")
    return {"format": FORMAT, "kind": "gauntlet" if settings["gauntlet"] else "round-robin",
            "protocol": protocol, "seed": settings["seed"], "rounds": settings["rounds"],
            "isolate": settings["isolate"],
            "openings": (recorded.get("openings", SHARED_OPENINGS) if recorded is not None
                         else OWN_OPENINGS),
            **{key: settings[key] for key in own},
            "bots": [{"spec": spec} for spec in settings["bots"]],
            "recorded_names": recorded_names if recorded is not None else None,
            "pairings": [list(pair) for pair in pairs]}


def check_settings(settings: dict) -> list:
    """The bots' specs, each bot named in ``settings``, after checking the time limit;
    ValueError."""
    if settings["protocol"] == "file":
        problem, _ = check_time_limit(settings["time_limit"])
        if problem:
            raise EventError(problem)
        parse = agent_spec
    else:
        parse = stdio_spec
    specs = [parse(bot["spec"]) for bot in settings["bots"]]
    keep_recorded_names(specs, settings.pop("recorded_names", None))
    settings["bots"] = [{"name": name, "spec": bot["spec"]}       # a clash: ValueError
                        for name, bot in zip(realbots.bot_names(specs), settings["bots"])]
    return specs


def find_bot(settings: dict, text: str) -> str:
    """The name of the bot ``text`` names (a name, any case, or a spec that only one has)."""
    bots = settings["bots"]
    found = ([b["name"] for b in bots if b["name"].lower() == text.lower()]
             or [b["name"] for b in bots if b["spec"] == text])
    if len(found) == 1:
        return found[0]
    why = f"{len(found)} bots have that spec" if found else "no such bot"
    raise EventError(f"--anchor {text}: {why}; name one of {', '.join(b['name'] for b in bots)}")


@cli_common.entry_point(MODULE)
def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    isolation.check_options(parser, args)
    cluster.check_options(parser, args)
    if args.resume and not args.out:
        parser.error("--resume needs --out (the directory of the tournament to continue)")
    try:
        if args.encoding is not None:
            args.encoding = check_encoding(args.encoding)
        listed = bot_list.read(args.bot_lists)
        args.bots = args.bots + [bot.text for bot in listed]
        settings = event_settings(args)
        args.isolated_as_recorded = isolation.resume_setting(args, settings["isolate"])
        bot_list.check(listed, agent_spec if settings["protocol"] == "file"
                       else stdio_spec)
        specs = check_settings(settings)
        anchor = find_bot(settings, args.anchor) if args.anchor else None
    except ValueError as error:         # EventError, and the runners' own checks
        parser.error(str(error))
    if args.out:        # created once the settings are known: a refused --resume makes nothing
        problem = prepare_out(args.out)
        if problem:
            parser.error(problem)
    concurrency = capped_concurrency(args.concurrency)
    if settings["protocol"] == "file":
        warning = check_time_limit(settings["time_limit"])[1]
        if warning:
            print(warning, file=sys.stderr)
    with records.lock_out(args.out, cli_common.prog(MODULE), argv):     # one runner per --out
        return run_in(parser, cluster.cluster_target(args), args.out,
                            "uttt-tournament-", lambda runner, out: run_event(
                                args, parser, settings, specs, anchor, runner, out), concurrency)


def run_event(args, parser, settings: dict, specs: list, anchor, runner, out: Path) -> int:
    say = (lambda *a, **k: None) if args.quiet else (lambda *a, **k: print(*a, **k, flush=True))
    games_path = out / "games.jsonl"
    recorded = records.recorded_games(games_path)
    if recorded and not args.resume:
        parser.error(f"{games_path} already holds {recorded} games: add --resume to continue "
                     "that tournament, or choose another --out")
    records.make_dirs(out / "logs")
    records.write_json(out / "tournament.json", settings)
    done = records.resume_games(games_path)     # bad lines: a warning, played again

    slots = schedule(len(settings["pairings"]), settings["rounds"])
    done = [g for g in done if g["game"] <= len(slots)]
    done_numbers = {g["game"] for g in done}
    todo = [slot for slot in slots if slot.number not in done_numbers]
    say(header(settings, runner, out, bool(args.out)))
    if done:
        say(f"resuming: {len(done)} of {len(slots)} games already played, {len(todo)} to go")

    games = list(done)
    proven: set[str] = set()        # bots that finished a game in this run: they can start
    stop = threading.Event()
    isolate = isolation.from_args(args)
    if isolate is not None:
        say(isolation.status_line(isolate, runner.capacity()))
        if getattr(args, "isolated_as_recorded", False):
            say("isolated as the tournament began: --resume keeps the isolation it recorded")
    series = pairing_games(settings, specs, out, stop, isolate, launch.waits_given(args))
    progress = None if args.quiet else PairingProgress(settings, done)

    def submit(slot: Slot):
        if progress is not None:
            progress.start(slot.pairing)
        own = series[slot.pairing]
        return own.submit(runner, slot.k, must_start=not set(own.names) <= proven,
                          number=slot.number)

    def finished(slot: Slot, ticket) -> None:
        game = series[slot.pairing].line(runner, ticket, slot.k, slot.number)
        if game is None:
            return
        game.update(pairing=list(settings["pairings"][slot.pairing]), pairing_game=slot.k)
        append_game(games_path, game)
        games.append(game)
        proven.update(game["names"])
        pairing = tuple(game["pairing"])
        if args.out and sum(tuple(g.get("pairing") or ()) == pairing for g in games) == 2 * settings["rounds"]:
            # A pairing just ended: the crosstable is kept current while a long event runs.
            crosstable.write_pages(out, settings, games, anchor, report_lines(settings, games, anchor),
                                   only={pairing})
        if progress is not None:
            used = isolation.usage_line(game) if isolate is not None else None
            progress.game(slot.pairing, f"Game {slot.number}/{len(slots)}: "
                                        f"{describe(settings, game)}"
                                        + (f" -- {used}" if used else ""), game)

    # Ctrl-C or SIGTERM/SIGHUP (ref_sim.stops), a bot that cannot start, the output closed.
    stopped = play_games(runner, todo, submit, finished, stop)
    pages: list[str] = []           # where the pages are: said after where the games are

    def report(games: list[dict]) -> list[str]:
        lines = report_lines(settings, games, anchor)
        if args.out:        # the pages stay with the games: not in a temporary folder
            pages.extend(crosstable.write_pages(out, settings, games, anchor, report=lines))
        return lines

    return conclude(MODULE, games, report, out_arg=args.out, out=out, say=say, progress=progress,
                    what="tournament", resume_options=isolation.command_options(isolate),
                    more_lines=pages, **stopped)


def header(settings: dict, runner, out: Path, kept: bool) -> str:
    """What is about to be played, one bot a line."""
    count, rounds = len(settings["pairings"]), settings["rounds"]
    if settings["protocol"] == "file":
        timing = f"{settings['time_limit']:g} s per move"
        pairing = "each opening twice, colours swapped"
    else:
        timing = (f"{settings['turn_ms']:g} ms per turn (first {settings['first_turn_ms']:g} "
                  f"ms, grace {settings['grace_ms']:g} ms), stdin/stdout")
        pairing = "each program first once"
    kind = "Gauntlet" if settings["kind"] == "gauntlet" else "Round-robin"
    width = max(len(bot["name"]) for bot in settings["bots"])
    lines = [f"{kind} of {len(settings['bots'])} bots, {count} pairing{'s' * (count > 1)}, "
             f"{rounds} round{'s' * (rounds > 1)}: {2 * count * rounds} games ({pairing}) at "
             f"{timing}; seed {settings['seed']}"]
    lines += [f"  {bot['name']:<{width}}  {bot['spec']}" for bot in settings["bots"]]
    if runner.remote:
        lines.append(f"on {len(runner.slots())} cluster worker(s), {runner.capacity()} at once")
    elif runner.capacity() > 1:
        lines.append(f"{runner.capacity()} games at once")
    lines.append(f"files in {out}" if kept else "games and logs in a temporary directory, deleted "
                 "at the end (--out DIR keeps them), but for the logs of games that go wrong")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
