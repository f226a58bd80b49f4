"""Tournaments of many bots: a round-robin or a gauntlet, ending in a rating table.

    python -m ref_sim.tournament BOT BOT [BOT ...] [--gauntlet] [--rounds N] [--seed N]
                                 [--out DIR] [--resume] [--concurrency N] [--cluster ADDRESS]
                                 [--anchor BOT] [-q]
                                 [--protocol file] [--time-limit S] [--encoding ENC]
                                 [--protocol stdio] [--turn-ms MS] [--first-turn-ms MS]
                                 [--grace-ms MS]
    python -m ref_sim.tournament --resume --out DIR [--rounds N]      # the event in DIR

A BOT is what ``ref_sim.match`` takes (``--protocol file``, the default: the referee's files)
or what ``ref_sim.stdio`` takes (``--protocol stdio``: CodinGame's stdin/stdout): a built-in
with options (``agent:depth=4``, ``seed:depth=2``, ``random``, ``eager``...) or a command.  The
same spec may come twice (a bot against itself measures the noise).  Bot ``i`` (1-based) is
called its label and ``i``: ``Agent1``, ``Agent2``, ``Random3``...

Pairings: every bot against every other (round-robin), or the first bot against each of the
others (``--gauntlet``, to measure one bot against a field).  Each round, every pairing plays
one opening twice with the colours swapped; ``--rounds N`` plays N such pairs per pairing,
round after round, so an event stopped early has played every pairing about as often.

Each pairing is a series of its own with the event's ``--seed``: its game ``k`` is game ``k``
of ``python -m ref_sim.match A B --seed SEED`` (of ``ref_sim.stdio`` with stdio), with the
same opening, colours and seeds, so every pairing meets the same openings in the same round,
and any game can be replayed head to head.  Games are numbered through the event in the
order of the schedule (round, then pairing); ``logs/`` names them by that number.

Files in ``--out`` (default: a temporary directory, deleted at the end unless the event is
interrupted):

``tournament.json``  the event: ``{"format": 1, "kind": "round-robin" | "gauntlet",
                     "protocol": "file" | "stdio", "seed", "rounds", "bots": [{"name",
                     "spec"}], "pairings": [[i, j] ...] (0-based bot numbers, i plays as
                     agent 1), "time_limit", "encoding"}`` (stdio: ``"turn_ms",
                     "first_turn_ms", "grace_ms"``).  ``--resume`` reads it: ``--resume
                     --out DIR`` alone continues the event, ``--rounds N`` extends it.
``games.jsonl``      one line per finished game, as ``ref_sim.match`` (or ``ref_sim.stdio``)
                     writes it, ``game`` the event's game number, with two more keys:
                     ``pairing`` ([i, j] as in tournament.json) and ``pairing_game`` (``k``
                     above); ``pair`` is the round, 0-based.  Agent 1 is bot ``i``.
``logs/``            each bot's output per game (``game-NNNN-NAME.log``) and, with the file
                     protocol, the referee's record ``game-NNNN.json``.

The rating table (:mod:`ref_sim.ratings`: Ordo's maximum-likelihood logistic Elo, the mean
at 0 or ``--anchor BOT`` at 0, 95 % error bars), each bot's games, score, draws, time-outs
and crashes, then each pairing's head-to-head result in the style of ``ref_sim.match`` (its
Elo difference with the pentanomial error bar of its opening pairs), then any other faults
(invalid moves, out-of-order moves, hangs) per bot.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from agent import cluster, stats
from agent.commandline import say_error, silence_output
from ref_sim import console, match, openings, ratings, stdio
from ref_sim.referee import TIME_OUT, check_encoding, check_time_limit, locale_encoding

PROG = "python -m ref_sim.tournament"
FORMAT = 1
#: Settings that make games what they are: a resumed event must keep them.
FILE_SETTINGS = ("time_limit", "encoding")
STDIO_SETTINGS = ("turn_ms", "first_turn_ms", "grace_ms")
DEFAULTS = {"protocol": "file", "rounds": 1, "time_limit": 10.0, "encoding": None,
            "turn_ms": stdio.DEFAULT_TURN_MS, "first_turn_ms": stdio.DEFAULT_FIRST_TURN_MS,
            "grace_ms": stdio.DEFAULT_GRACE_MS}


class EventError(ValueError):
    """A problem with the command line or the event in --out: one line, exit code 2."""


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


# -- the two protocols --------------------------------------------------------------------

@dataclass
class Event:
    """What the games need: the settings of tournament.json, the bots' specs, the files."""
    settings: dict
    specs: list                 # match.AgentSpec or stdio.StdioSpec, one per bot
    out: Path

    @property
    def names(self) -> list[str]:
        return [bot["name"] for bot in self.settings["bots"]]

    @property
    def on_stdio(self) -> bool:
        return self.settings["protocol"] == "stdio"

    def pair(self, slot: Slot) -> tuple[list[str], list]:
        i, j = self.settings["pairings"][slot.pairing]
        return [self.names[i], self.names[j]], [self.specs[i], self.specs[j]]

    def submit(self, runner, slot: Slot, must_start: bool, stop: threading.Event):
        """Start the game of ``slot`` on ``runner``; its ticket."""
        names, specs = self.pair(slot)
        by_name, s = dict(zip(names, specs)), self.settings
        label = f"game-{slot.number}"
        if self.on_stdio:
            first = names[(slot.k - 1) % 2]     # as ref_sim.stdio: agent 1 first in odd games
            seeds = dict(zip(names, stdio_seeds(s["seed"], slot.k)))
            timing = (s["turn_ms"], s["first_turn_ms"], s["grace_ms"])
            if runner.remote:
                return runner.submit(label, stdio.play_game_on_worker, slot.number, by_name,
                                     seeds, first, *timing, must_start=must_start)
            commands = {name: by_name[name].command(seeds[name], s["turn_ms"], s["first_turn_ms"])
                        for name in names}

            def play():             # returns what play_game_on_worker does, but the logs
                return stdio.play_game(commands, first, self.out / "logs", slot.number,
                                       *timing, must_start=must_start), commands
            return runner.submit(label, play)
        scheduled = openings.game(s["seed"], slot.k)
        options = {"first": names[scheduled.first], "opening": list(scheduled.opening),
                   "agent_seeds": dict(zip(names, scheduled.agent_seeds)),
                   "must_start": must_start, "encoding": s["encoding"]}
        if runner.remote:
            return runner.submit(label, match.play_game_on_worker, slot.number, by_name, names,
                                 s["time_limit"], scheduled.seed, **options)
        return runner.submit(label, match.play_game, slot.number, by_name, names,
                             self.out / f"game-{slot.number:04d}", self.out / "logs",
                             s["time_limit"], scheduled.seed, stop=stop, **options)

    def collect(self, runner, ticket, slot: Slot) -> dict:
        """The games.jsonl line of a finished game (its logs saved first when remote)."""
        names, specs = self.pair(slot)
        logs = self.out / "logs"
        result = ticket.result()
        if runner.remote:
            *result, files = result
            cluster.save_files(logs, files)
        if self.on_stdio:
            record, commands = result
            game = stdio_line(record, commands, slot, self.settings["seed"], names, specs, logs)
        else:
            record, notes = result
            scheduled = replace(openings.game(self.settings["seed"], slot.k), index=slot.number)
            game = match.game_line(record, notes, scheduled, self.settings["seed"], specs, names,
                                   logs, self.settings["encoding"])
        game.update(pairing=list(self.settings["pairings"][slot.pairing]), pairing_game=slot.k)
        if runner.remote:
            game.update(worker=ticket.worker, attempts=runner.attempts(ticket))
        return game

    def describe(self, game: dict) -> str:
        return (stdio if self.on_stdio else match).describe(game)


def stdio_seeds(seed: int, k: int) -> list[int]:
    """The two programs' ``{seed}`` in game ``k`` of ``ref_sim.stdio --seed SEED``."""
    rng = random.Random(f"uttt-stdio/{seed}/{k}")
    return [rng.randrange(2 ** 32), rng.randrange(2 ** 32)]


def stdio_line(record: dict, commands: dict, slot: Slot, seed: int, names, specs,
               logs: Path) -> dict:
    """The games.jsonl line of a stdin/stdout game, with the keys ``ref_sim.stdio`` writes."""
    for name in names:
        stdio.attach_search_info(record["moves"], name, logs / f"game-{slot.number:04d}-{name}.log")
    points = 0.5 if record["result"] == "tie" else float(record["winner"] == names[0])
    agents = [{"name": name, "spec": spec.spec, "command": commands[name], "seed": agent_seed}
              for name, spec, agent_seed in zip(names, specs, stdio_seeds(seed, slot.k))]
    return {"format": stdio.FORMAT, "game": slot.number, "pair": (slot.k - 1) // 2,
            "series_seed": seed, "agents": agents, **record, "score": points}


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
    sides = {name: match.tally([g for g in games if name in g["names"]], [name])[name]
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
        lines += ["", "Faults:"] + ["  " + line for line in faulty]
    return lines


def table_lines(fit: ratings.Ratings, totals: dict, sides: dict, specs: dict) -> list[str]:
    """The rating table in the style of cutechess-cli's tournament table (and Ordo's)."""
    width = max(len("Bot"), *(len(name) for name in fit.elo))
    header = (f"{'Rank':>4} {'Bot':<{width}} {'Elo':>7} {'+/-':>6} {'Games':>6} {'Score':>7} "
              f"{'Draws':>7} {'Time-outs':>9} {'Crashes':>7}  Spec")
    lines = [header]
    for rank, name in enumerate(fit.ranked(), 1):
        record, side = totals[name], sides[name]
        error = "----" if name == fit.anchor else stats.format_elo(fit.error[name], sign=False)
        score = f"{100 * record.score:.1f}%" if record.games else "-"
        draws = f"{100 * record.draws / record.games:.1f}%" if record.games else "-"
        lines.append(f"{rank:>4} {name:<{width}} {stats.format_elo(fit.elo[name]):>7} "
                     f"{error:>6} {record.games:>6} {score:>7} {draws:>7} "
                     f"{side.reasons['time-outs']:>9} {side.reasons['crashes']:>7}  {specs[name]}")
    where, against = ((f"{fit.anchor} at 0", fit.anchor) if fit.anchor
                      else ("the mean at 0", "the mean"))
    lines.append(f"Elo: maximum likelihood over all games, {where}; +/-: 95 %, each bot "
                 f"against {against} (ref_sim/ratings.py).")
    return lines


def head_to_head(a: str, b: str, pairs: dict, games: list[dict], width: int = 0) -> str:
    """``A vs B: W - L - D  [score] N, Elo difference: ..., Ptnml(0-2): [...]`` (A's view)."""
    title = f"{a} vs {b}:".ljust(width + 1)
    record = pairs.get((a, b), ratings.Record())        # agent 1 of every game is a
    if not record.games:
        return f"{title} not played yet"
    ptnml = match.pair_counts(games)
    estimate = stats.estimate(record.wins, record.losses, record.draws,
                              ptnml if sum(ptnml) else None)
    return (f"{title} {record.wins} - {record.losses} - {record.draws}  "
            f"[{record.score:.3f}] {record.games}, Elo difference: {estimate.elo_text()}, "
            f"LOS: {100 * estimate.los:.1f} %, Ptnml(0-2): [{', '.join(map(str, ptnml))}]")


def show_progress(stream, done: int, total: int, started: float, line: str = "") -> None:
    """The progress line, redrawn in place on a terminal; ``line``: a game to print above it.
    (One small function, to be replaced by the shared ref_sim/progress.py.)"""
    if line:
        stream.write(f"\r{line}\033[K\n")
    filled = 30 * done // max(total, 1)
    stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} games  "
                 f"{time.monotonic() - started:.0f} s\033[K")
    stream.flush()


# -- the command line ---------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
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
faults (invalid and out-of-order moves, hangs).

files in --out: tournament.json (the event), games.jsonl (one JSON line per game, as
ref_sim.match writes them, plus "pairing" and "pairing_game"), logs/.  Without --out a
temporary directory, deleted at the end (kept when the event is interrupted).

exit codes: 0 the event ran, 1 a bot could not start (its command is wrong), 2 bad
arguments, 130 Ctrl-C (the games so far are kept and rated: the printed --resume line
continues the event), 141 the output was closed (| head).

examples:
  python -m ref_sim.tournament agent agent:depth=4 seed random --rounds 5 --time-limit 1 --out runs/t
  python -m ref_sim.tournament --resume --out runs/t --rounds 10        # five rounds more
  python -m ref_sim.tournament agent seed:depth=2 seed:depth=4 random --gauntlet --time-limit 0.5
  python -m ref_sim.tournament agent:depth=2 agent:depth=4 random --protocol stdio --rounds 10""")
    parser.add_argument("bots", nargs="*", metavar="BOT",
                        help="two or more bots (none with --resume: those of --out)")
    parser.add_argument("--gauntlet", action="store_true", default=None,
                        help="the first bot against each of the others (default: round-robin)")
    parser.add_argument("--rounds", type=int, metavar="N",
                        help="opening pairs per pairing (default 1; with --resume: as before, "
                             "or more to extend the event)")
    parser.add_argument("--protocol", choices=("file", "stdio"),
                        help="file: the referee's files (default); stdio: CodinGame's "
                             "stdin/stdout")
    parser.add_argument("--seed", type=int, help="seed of the event: openings, colours, the "
                        "bots' seeds (default: random, printed)")
    parser.add_argument("--out", help="directory for the event (default: a temporary one)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the event in --out (its bots and settings)")
    parser.add_argument("--concurrency", type=int, default=1, metavar="N",
                        help="games at once (default 1; at most the number of cores - 1)")
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help="play the games on a Dask cluster, e.g. tcp://head:8786 (default: "
                             f"${cluster.ENV}; needs {cluster.INSTALL_HINT})")
    parser.add_argument("--anchor", metavar="BOT",
                        help="rate this bot (its name, e.g. Random3, or its spec) at 0 "
                             "instead of the mean")
    parser.add_argument("-q", "--quiet", action="store_true", help="only the final tables")
    file_group = parser.add_argument_group("--protocol file (ref_sim.match)")
    file_group.add_argument("--time-limit", type=float, metavar="S",
                            help="seconds per move (default 10)")
    file_group.add_argument("--encoding", metavar="ENC",
                            help="the referee's encoding, also given to the built-ins "
                                 f"(default: this machine's, {locale_encoding()})")
    stdio_group = parser.add_argument_group("--protocol stdio (ref_sim.stdio)")
    stdio_group.add_argument("--turn-ms", type=float, metavar="MS",
                             help=f"time per turn (default {stdio.DEFAULT_TURN_MS:g})")
    stdio_group.add_argument("--first-turn-ms", type=float, metavar="MS",
                             help="time of each program's first turn (default "
                                  f"{stdio.DEFAULT_FIRST_TURN_MS:g})")
    stdio_group.add_argument("--grace-ms", type=float, metavar="MS",
                             help=f"added to every turn's limit (default {stdio.DEFAULT_GRACE_MS:g})")
    return parser


def event_settings(args, out: Path | None) -> dict:
    """tournament.json's settings for this run: the stored event's when resuming (what the
    command line gives must agree, but ``--rounds``), else the command line's.  Raises
    :class:`EventError`."""
    path = out / "tournament.json" if out is not None else None
    stored = None
    if args.resume and path.exists():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = None
        if not isinstance(stored, dict) or not {"bots", "pairings", "protocol", "seed",
                                                 "rounds", "kind"} <= set(stored):
            raise EventError(f"{path} is not a tournament's description")
    elif args.resume and not args.bots:
        raise EventError(f"nothing to resume in {out}: no tournament.json (give the bots to "
                         "start an event there)")
    given = {"protocol": args.protocol, "rounds": args.rounds, "time_limit": args.time_limit,
             "encoding": args.encoding, "turn_ms": args.turn_ms,
             "first_turn_ms": args.first_turn_ms, "grace_ms": args.grace_ms}
    protocol = args.protocol or (stored or DEFAULTS)["protocol"]
    unused = STDIO_SETTINGS if protocol == "file" else FILE_SETTINGS
    for key in unused:
        if given[key] is not None:
            raise EventError(f"--{key.replace('_', '-')} is not for --protocol {protocol}")
    if stored is not None:
        changed = [f"--{key.replace('_', '-')} {given[key]} (the event has {stored.get(key)})"
                   for key in ("protocol", *(FILE_SETTINGS if protocol == "file" else STDIO_SETTINGS))
                   if given[key] is not None and given[key] != stored.get(key)]
        if args.seed is not None and args.seed != stored.get("seed"):
            changed.append(f"--seed {args.seed} (the event has {stored.get('seed')})")
        if args.bots and args.bots != [bot["spec"] for bot in stored["bots"]]:
            changed.append("other bots (the event has "
                           + " ".join(shlex.quote(bot["spec"]) for bot in stored["bots"]) + ")")
        if args.gauntlet is not None and args.gauntlet != (stored.get("kind") == "gauntlet"):
            changed.append(f"--gauntlet (the event is a {stored.get('kind')})")
        if changed:
            raise EventError(f"cannot resume the event in {out} with " + "; ".join(changed))
        return {**stored, "rounds": stored["rounds"] if args.rounds is None else args.rounds}
    if len(args.bots) < 2:
        raise EventError("a tournament needs at least two bots")
    settings = {"format": FORMAT, "kind": "gauntlet" if args.gauntlet else "round-robin",
                "protocol": protocol,
                "seed": args.seed if args.seed is not None else random.randrange(2 ** 32),
                "rounds": DEFAULTS["rounds"] if args.rounds is None else args.rounds}
    for key in (FILE_SETTINGS if protocol == "file" else STDIO_SETTINGS):
        settings[key] = given[key] if given[key] is not None else DEFAULTS[key]
    settings["bots"] = [{"spec": text} for text in args.bots]
    settings["pairings"] = [list(p) for p in pairings(len(args.bots), bool(args.gauntlet))]
    return settings


def check_settings(settings: dict) -> list:
    """The bots' specs (named in ``settings``), after checking every value; EventError."""
    if settings["rounds"] < 1:
        raise EventError("--rounds must be at least 1")
    if settings["protocol"] == "file":
        problem, _ = check_time_limit(settings["time_limit"])
        if problem:
            raise EventError(problem)
        if settings["encoding"] is not None:
            settings["encoding"] = check_encoding(settings["encoding"])
        parse = match.agent_spec
    else:
        if not (settings["turn_ms"] > 0 and settings["first_turn_ms"] > 0
                and settings["grace_ms"] >= 0):
            raise EventError("--turn-ms and --first-turn-ms must be positive, --grace-ms at "
                             "least 0")
        parse = stdio.stdio_spec
    specs = [parse(bot["spec"]) for bot in settings["bots"]]
    settings["bots"] = [{"name": bot.get("name") or f"{spec.label}{number}", "spec": bot["spec"]}
                        for number, (bot, spec) in enumerate(zip(settings["bots"], specs), 1)]
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


def resume_command(out: Path) -> str:
    """The command that continues the event in ``out``, as it can be typed here."""
    python = Path(sys.executable).name
    found = shutil.which(python)
    if not found or os.path.abspath(found) != os.path.abspath(sys.executable):
        python = sys.executable
    return shlex.join([python, "-m", "ref_sim.tournament", "--resume", "--out", str(out)])


@console.entry_point(PROG)
def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.resume and not args.out:
        parser.error("--resume needs --out (the directory of the event to continue)")
    if args.concurrency < 1:
        parser.error("--concurrency must be at least 1")
    if args.out:
        problem = match.prepare_out(args.out)
        if problem:
            parser.error(problem)
    out = Path(args.out) if args.out else None
    try:
        settings = event_settings(args, out)
        specs = check_settings(settings)
        anchor = find_bot(settings, args.anchor) if args.anchor else None
    except ValueError as error:         # EventError, and the runners' own checks
        parser.error(str(error))
    concurrency = args.concurrency
    if concurrency > match.concurrency_cap():
        concurrency = match.concurrency_cap()
        print(f"warning: --concurrency {args.concurrency} capped to {concurrency} "
              f"({os.cpu_count()} cores; each game needs a core)", file=sys.stderr)
    if settings["protocol"] == "file":
        warning = check_time_limit(settings["time_limit"])[1]
        if warning:
            print(warning, file=sys.stderr)
    address = cluster.cluster_address(args.cluster)
    try:
        runner = cluster.connect(address) if address else cluster.LocalRunner(concurrency)
    except cluster.ClusterError as error:
        parser.error(str(error))
    temporary = out is None
    out = out or Path(tempfile.mkdtemp(prefix="uttt-tournament-"))
    code = None
    try:
        code = run_event(args, parser, Event(settings, specs, out), anchor, runner, temporary)
        return code
    finally:
        runner.close()
        if temporary and code != console.INTERRUPTED:
            shutil.rmtree(out, ignore_errors=True)


def run_event(args, parser, event: Event, anchor, runner, temporary: bool) -> int:
    settings, out = event.settings, event.out
    say = (lambda *a, **k: None) if args.quiet else (lambda *a, **k: print(*a, **k, flush=True))
    games_path = out / "games.jsonl"
    done, bad = match.read_games(games_path)
    if done and not args.resume:
        parser.error(f"{games_path} already holds {len(done)} games: add --resume to continue "
                     "that event, or choose another --out")
    (out / "logs").mkdir(parents=True, exist_ok=True)
    (out / "tournament.json").write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    if bad:
        say(f"{games_path}: {bad} unreadable line(s) dropped (those games are played again)")
        games_path.write_text("".join(json.dumps(g) + "\n" for g in done), encoding="utf-8")

    slots = schedule(len(settings["pairings"]), settings["rounds"])
    done = [g for g in done if g["game"] <= len(slots)]
    done_numbers = {g["game"] for g in done}
    todo = [slot for slot in slots if slot.number not in done_numbers]
    say(header(settings, runner, temporary, out))
    if done:
        say(f"resuming: {len(done)} of {len(slots)} games already played, {len(todo)} to go")

    games = list(done)
    proven: set[str] = set()        # bots that finished a game in this run: they can start
    progress = sys.stdout.isatty() and not args.quiet
    started = time.monotonic()
    stop = threading.Event()
    slot_of = {}

    def finished(ticket) -> None:
        slot = slot_of[ticket]
        game = event.collect(runner, ticket, slot)
        if stop.is_set() and game["result"] == "aborted":
            return                      # Ctrl-C: not a game; --resume plays it again
        with open(games_path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(game) + "\n")
        games.append(game)
        proven.update(game["names"])
        text = f"Game {slot.number}/{len(slots)}: {event.describe(game)}"
        if progress:
            faulty = game["notes"] or game["reason"] in match.SHORT or game["result"] == "aborted"
            show_progress(sys.stdout, len(games), len(slots), started, text if faulty else "")
        else:
            say(text)

    def submit(slot: Slot):
        must_start = not set(event.pair(slot)[0]) <= proven
        ticket = event.submit(runner, slot, must_start, stop)
        slot_of[ticket] = slot
        return ticket

    def finishing(count: int) -> None:
        print(f"\nfinishing the {count} game(s) in progress (a stdin/stdout game cannot be "
              "stopped midway)", file=sys.stderr, flush=True)

    if progress:
        show_progress(sys.stdout, len(games), len(slots), started)
    stopped_by, cannot_start = stream(runner, todo, submit, finished, stop,
                                      finishing if event.on_stdio else None)
    if stopped_by == "broken pipe":
        say_error(PROG, f"output closed (broken pipe) after {len(games)} games; the event "
                        "stopped")
        return console.BROKEN_PIPE
    if progress:
        print()
    if stopped_by == "cannot start":
        print(f"error: {cannot_start}; the event stopped (a command that cannot start would "
              "lose every game)", file=sys.stderr)
        return 1
    games.sort(key=lambda g: g["game"])
    if stopped_by == "interrupted":
        print(f"Interrupted after {len(games)} of {len(slots)} games; "
              f"{resume_command(out)} continues the event.", file=sys.stderr, flush=True)
    for line in report_lines(settings, games, anchor):
        print(line)
    for line in cluster.worker_lines(games, TIME_OUT):     # games played on a cluster
        print(line)
    if not temporary or stopped_by:
        print(f"Games: {games_path}  logs: {out / 'logs'}")
    return console.INTERRUPTED if stopped_by == "interrupted" else 0


def stream(runner, todo, submit, finished, stop: threading.Event, finishing=None):
    """Play ``todo`` through ``runner``, ``runner.capacity()`` games in flight: ``submit(item)``
    starts one and returns its ticket, ``finished(ticket)`` handles each as it ends (in the
    order they were submitted when several end together).  Returns ``(None, None)`` when
    all were played, else how it stopped: ``("interrupted", None)`` (Ctrl-C), ``("broken
    pipe", None)`` or ``("cannot start", error)`` (:class:`ref_sim.match.AgentCannotStart`).
    On a stop the cluster's games are cancelled (``--resume`` plays them again); local ones
    are told through ``stop`` and handed to ``finished`` as they end (``finishing(count)``
    first, to say it), so a game that ended in time is kept.

    The loop of ``ref_sim.match``'s series, which has it inside ``_run_series``; written
    to move there for both runners."""
    order: dict = {}
    pending, running = iter(todo), set()
    stopped_by = cannot_start = None
    try:
        while True:
            while len(running) < runner.capacity():
                item = next(pending, None)
                if item is None:
                    break
                ticket = submit(item)
                order[ticket] = len(order)
                running.add(ticket)
            if not running:
                break
            ready, running = runner.wait(running)
            for ticket in sorted(ready, key=order.get):
                finished(ticket)
    except match.AgentCannotStart as error:
        stopped_by, cannot_start = "cannot start", error
    except KeyboardInterrupt:
        stopped_by = "interrupted"
    except BrokenPipeError:
        stopped_by = "broken pipe"
        silence_output(sys.stdout)
    finally:
        if stopped_by and runner.remote:
            runner.cancel(running)
        elif stopped_by:
            stop.set()
            if running and finishing is not None:
                finishing(len(running))
            for ticket in sorted(running, key=order.get):
                try:
                    finished(ticket)
                except (KeyboardInterrupt, match.AgentCannotStart):
                    pass
                except BrokenPipeError:
                    silence_output(sys.stdout)
    return stopped_by, cannot_start


def header(settings: dict, runner, temporary: bool, out: Path) -> str:
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
    lines.append(f"files in {out}" + (" (temporary: deleted at the end; --out DIR keeps them)"
                                      if temporary else ""))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
