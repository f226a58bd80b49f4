"""The command line every series command shares (``uttt-match``, ``uttt-stdio``,
``uttt-tournament``): its options, each help text once, and its one reading
(:func:`run_settings`: how this run plays, a :class:`ref_sim.series.settings.RunSettings`).
Each command reads its own options into its settings value (:mod:`ref_sim.series.settings`)
in its ``settle``; nothing else reads the parsed command line.
"""

from __future__ import annotations

import argparse
import math

from agent.cli_common import OneLineParser
from agent.options import MAX_TIME_LIMIT, real, whole
from ref_sim import stops
from ref_sim.referees.codingame_shell import DEFAULT_FIRST_TURN_MS, DEFAULT_GRACE_MS, DEFAULT_TURN_MS
from ref_sim.referees.file_text import locale_encoding
from ref_sim.series.process import isolation, launch
from ref_sim.series.run import cluster_address
from ref_sim.series.settings import RunSettings, isolation_of

#: More games than this in one run is a typo (a day of the quickest games is ~50,000).
MAX_GAMES = 100_000
#: --turn-ms and the others above an hour are a typo.
MAX_TURN_MS = 3_600_000.0


# -- the options every series command shares ----------------------------------------------

def parser_for(module: str, description: str, epilog: str) -> argparse.ArgumentParser:
    """A series command's parser: one-line usage errors, the epilog as written."""
    return OneLineParser(prog=stops.invoked_as(module), description=description, epilog=epilog,
                         formatter_class=argparse.RawDescriptionHelpFormatter)


def files_and_exits(noun: str) -> str:
    """The end of a head-to-head series' epilog: its files and exit codes (``noun``: agent, program)."""
    return f"""\
files in --out: series.json (the settings --resume continues from), games.jsonl (one JSON
line per game, docs/formats.md), logs/.  Without --out: a temporary directory, deleted at
the end but for the logs of games that went wrong (kept in a uttt-logs-* folder).

exit codes: 0 the series ran, 1 {'an' if noun[0] in 'aeiou' else 'a'} {noun} could not start in the first game, 2 bad
arguments, 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP (the last line gives the command that
continues the series), 141 the output was closed (| head)."""


def add_agents(parser, noun: str) -> None:
    """AGENT1 and AGENT2 (``noun``: agent or program), both left out with ``--resume``."""
    parser.add_argument("agent1", metavar="AGENT1", nargs="?",
                        help=f"{noun} 1 (its score is the one reported); with --resume, leave "
                             "both out to continue the series as it was")
    parser.add_argument("agent2", metavar="AGENT2", nargs="?", help=f"{noun} 2")


def check_agents(parser, args, noun: str) -> None:
    """Both agents, or neither with ``--resume --out DIR``: else a usage error."""
    if args.agent1 is None and not args.resume:
        parser.error("AGENT1 and AGENT2 are required (or --resume --out DIR, to continue "
                     "the series in DIR)")
    if args.agent2 is None and args.agent1 is not None:
        parser.error(f"AGENT2 is missing: give both {noun}s (or neither, with --resume)")
    if args.resume and not args.out:
        parser.error("--resume needs --out (the directory of the series to continue)")


def add_games(parser, sprt_max: int | None = None) -> None:
    """``--games N`` (default None: a resumed series keeps its own)."""
    sprt = f"; with --sprt a maximum, default {sprt_max}" if sprt_max else ""
    parser.add_argument("--games", type=whole(1, MAX_GAMES), default=None,
                        help=f"games to play (default 2{sprt}); rounded up to whole pairs when "
                             "paired; with --resume it may grow or shrink the series")


def add_time_limit(parser, stdio_default: bool = False) -> None:
    """The file protocol's ``--time-limit S`` (``stdio_default``: the tournament's, which is
    also the stdio turn's)."""
    also = (f"; with --protocol stdio the turn's time, default {DEFAULT_TURN_MS / 1000:g}"
            if stdio_default else "")
    # Below 0.1 s check_time_limit says why; here nan, inf and hours are refused.
    parser.add_argument("--time-limit", type=real(-math.inf, MAX_TIME_LIMIT), default=None,
                        metavar="S", help=f"seconds per move (default 10{also})")


def add_encoding(parser) -> None:
    parser.add_argument("--encoding", metavar="ENC",
                        help="the referee's encoding, also given to the built-in agents "
                             f"(default: this machine's, {locale_encoding()})")


def seconds_in_ms(text: str) -> float:
    """``--time-limit S``, the name every command gives the time per move, as milliseconds."""
    return 1000 * real(0, MAX_TURN_MS / 1000, low_open=True)(text)


def add_timing(parser, time_limit: bool = True) -> None:
    """CodinGame's --time-limit S (or --turn-ms MS, its old name there), --first-turn-ms and
    --grace-ms (default None: a resumed series keeps its own), on ``parser`` or an argument
    group (the tournament's, whose own --time-limit serves both protocols: ``time_limit=False``)."""
    turn = parser.add_mutually_exclusive_group() if time_limit else parser
    if time_limit:
        turn.add_argument("--time-limit", type=seconds_in_ms, dest="turn_ms", default=None,
                          metavar="S", help=f"seconds per turn (default {DEFAULT_TURN_MS / 1000:g})")
    turn.add_argument("--turn-ms", type=real(0, MAX_TURN_MS, low_open=True), default=None,
                      metavar="MS", help=f"time per turn in milliseconds (default {DEFAULT_TURN_MS:g})"
                                         + ("; the same as --time-limit" if time_limit else ""))
    parser.add_argument("--first-turn-ms", type=real(0, MAX_TURN_MS, low_open=True), default=None,
                        metavar="MS",
                        help=f"time of each program's first turn (default {DEFAULT_FIRST_TURN_MS:g})")
    parser.add_argument("--grace-ms", type=real(0, MAX_TURN_MS), default=None, metavar="MS",
                        help=f"added to every turn's limit (default {DEFAULT_GRACE_MS:g})")


def add_run_options(parser, what: str = "series", seeds: str = "openings, who moves first, the "
                    "agents' seeds", concurrency: bool = True, show: bool = True,
                    summary: str = "summary") -> None:
    """--seed, --out, --resume, --concurrency, --show, -q: how a series (``what``) is run."""
    parser.add_argument("--seed", type=int,
                        help=f"seed of the {what}: {seeds} (default: random, printed)")
    parser.add_argument("--out", help=f"directory for the games, logs and records of the {what} "
                                      "(default: a new temporary directory)")
    parser.add_argument("--resume", action="store_true",
                        help=f"continue the {what} in --out with the settings it recorded: games "
                             "already in games.jsonl are not replayed, and they count in the "
                             "statistics")
    if concurrency:
        parser.add_argument("--concurrency", type=whole(1), default=1, metavar="N",
                            help="games at once (default 1; at most the number of cores - 1)")
    if show:
        parser.add_argument("--show", action="store_true", help="print the board after every move")
    parser.add_argument("-q", "--quiet", action="store_true", help=f"only the final {summary}")


def add_bot_options(parser, startup: float, exit_wait: float, exit_note: str,
                    cluster_note: str = "each worker plays cores - 1 games at once") -> None:
    """Where the bots run and how they are held: --cluster, --isolate, the start and exit waits."""
    cluster_address.add_cluster_options(parser, note=cluster_note)
    isolation.add_options(parser)
    launch.add_wait_options(parser, startup, exit_wait, exit_note)


def given_isolation(args) -> dict | None:
    """``--isolate`` and its settings as a settings file records them (None: not given)."""
    return isolation.recorded_setting(isolation.from_args(args))


def run_settings(args, isolate: dict | None, path) -> RunSettings:
    """How this run plays, as the command line says, isolated as ``isolate`` (the settings'
    "isolate", given or recorded in ``path``: :func:`ref_sim.series.settings.isolation_of`)."""
    isolated = isolation_of(isolate, path)
    return RunSettings(out=args.out, resume=args.resume, quiet=args.quiet,
                       show=getattr(args, "show", False), concurrency=getattr(args, "concurrency", 1),
                       cluster=cluster_address.cluster_target(args),
                       waits=tuple(launch.waits_given(args).items()), isolate=isolated,
                       isolated_as_recorded=isolated is not None and not args.isolate)
