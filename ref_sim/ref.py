"""Command line of the referee simulator: one headless game in a directory.

    python -m ref_sim NAME1 NAME2 [--dir DIR] [--time-limit SECONDS] [--seed N]
                      [--linger] [--busy-poll] [--encoding ENC] [--record FILE]
                      [--wait-for FILE ...] [-q]

Where it differs from the real referee on purpose (files kept one limit after the end, limits
below 0.1 s refused, ``--wait-for``): docs/bench.md, "The simulated referee", and docs/protocol.md,
"The simulator, where the real referee leaves room". Exit codes: its ``--help``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time

from agent.cli_common import OneLineParser, check_output, write_output
from agent.lifeline import ready_pid
from ref_sim import stops
from agent.options import MAX_TIME_LIMIT, real
from ref_sim.entry_point import entry_point, prog
from ref_sim.referees.file_referee import EXIT_DELAY, RefereeSettings
from ref_sim.referees.file_shell import Printer, check_time_limit, run_game
from ref_sim.referees.file_text import encoding_problem, locale_encoding, prepare_directory

#: The module of the command line (``python -m ref_sim``; the console script is uttt-ref).
MODULE = "ref_sim"
#: How long ``--wait-for`` waits for the agents' ready files (a loaded machine starts Python slowly).
WAIT_FOR_LIMIT = 120.0
#: A player name: one token usable in a file name ("NAME.go") and in "NAME BOARD SPOT".
NAME_PATTERN = re.compile(r"[^\s/\\:*?\"<>|\x00]+")


def check_name(name: str) -> str | None:
    """None if ``name`` can be a player name, else why not."""
    if not name:
        return "a name cannot be empty"
    if not NAME_PATTERN.fullmatch(name) or name in (".", ".."):
        return (f"bad name {name!r}: use one token without spaces or "
                "any of / \\ : * ? \" < > |")
    return None


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=prog(MODULE),
        description="Referee one game of Ultimate Tic-Tac-Toe through files, exactly like "
                    "the CS 4341 referee v7 (start the two agents first, each with the "
                    "same --time-limit as the referee).",
        epilog="After the end, end_game and both .go files stay one time limit (at least "
               "1 s) so that an agent still searching can read the result; then the "
               "protocol files are deleted (--linger: not before Ctrl-C, like the real "
               "referee). Exit codes: 0 a game was played, 1 it was aborted where the "
               "real referee would crash (move_file vanished or could not be decoded), "
               "2 bad arguments, 130 Ctrl-C, 141 output closed.")
    parser.add_argument("name1", help="first player's name (the coin flip decides who starts)")
    parser.add_argument("name2", help="second player's name")
    parser.add_argument("--dir", default=".",
                        help="game directory, created if missing (default: current)")
    # Below 0.1 s check_time_limit says why; here nan, inf and hours are refused.
    parser.add_argument("--time-limit", type=real(-math.inf, MAX_TIME_LIMIT), default=10.0,
                        metavar="SECONDS",
                        help="seconds per move, at least 0.1 (default 10; the real referee "
                             "takes whole seconds)")
    parser.add_argument("--seed", type=int, help="seed for the coin flip and the opening")
    parser.add_argument("--linger", action="store_true",
                        help="after the end, keep running like the real referee until Ctrl-C")
    parser.add_argument("--busy-poll", action="store_true",
                        help="burn a core between ticks like the real referee")
    parser.add_argument("--encoding", metavar="ENC",
                        help="decode move_file (and write the referee's files) as ENC, strictly, "
                             "like the real referee under another locale: cp1252 (Windows), "
                             f"latin-1... (default: this machine's, {locale_encoding()})")
    parser.add_argument("--record", metavar="FILE", help="save the game record as JSON")
    parser.add_argument("--wait-for", nargs="+", default=[], metavar="FILE",
                        help="start only once each FILE names a running agent (agents started with "
                             f"--ready-file FILE); give up after {WAIT_FOR_LIMIT:g} s")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print only the final result line")
    return parser


def wait_for_agents(files: list[str], limit: float) -> list[str]:
    """Wait until each ready file names a running agent (agent.lifeline.ready_pid), at most
    ``limit`` seconds; return the files still missing."""
    deadline = time.monotonic() + limit
    missing = [path for path in files if ready_pid(path) is None]
    if missing:
        print(f"waiting for {', '.join(missing)} (the agents' --ready-file)", file=sys.stderr, flush=True)
    while missing and time.monotonic() < deadline:
        time.sleep(0.05)
        missing = [path for path in missing if ready_pid(path) is None]
    return missing


def save_record(record, path: str) -> bool:
    """Write ``record`` as JSON to ``path``, a regular file (a FIFO put there during the game
    would block for ever); one line and False if it cannot be written."""
    try:
        write_output(path, json.dumps(record.to_dict(), indent=2) + "\n")
    except OSError as error:
        print(f"{prog(MODULE)}: {error}", file=sys.stderr)
        return False
    return True


@entry_point(MODULE)
def main(argv: list[str] | None = None, *, referee=run_game, wait_limit: float = WAIT_FOR_LIMIT) -> int:
    """The command; ``referee`` plays the game (:func:`ref_sim.referees.file_shell.run_game`),
    ``wait_limit``: how long ``--wait-for`` waits (:data:`WAIT_FOR_LIMIT`)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in (args.name1, args.name2):
        problem = check_name(name)
        if problem:
            parser.error(problem)
    if args.name1 == args.name2:
        parser.error(f"the two names must differ (both are {args.name1!r})")
    error, warning = check_time_limit(args.time_limit)
    if error:
        parser.error(error)
    encoding, problem = encoding_problem(args.encoding, (args.name1, args.name2))
    if problem:
        parser.error(problem)
    # Files written later (the record after the game, the ready files by the agents): said now.
    for option, paths in (("--record", [args.record] if args.record else []), ("--wait-for", args.wait_for or [])):
        for path in paths:
            try:
                check_output(path)
            except OSError as error:
                parser.error(f"{option}: {error}")
    created = not os.path.exists(args.dir)
    problem = prepare_directory(args.dir)
    if problem:
        parser.error(problem)
    if created:
        print(f"created the game directory {args.dir}", file=sys.stderr)
    if warning:
        print(warning, file=sys.stderr)
    try:
        missing = wait_for_agents(args.wait_for, wait_limit)
    except KeyboardInterrupt as interrupt:
        print("Interrupted while waiting for the agents: no game played.", file=sys.stderr)
        return stops.exit_code(interrupt)
    if missing:
        print(f"{prog(MODULE)}: no running agent wrote {', '.join(missing)} within {wait_limit:g} s "
              "(start each with --ready-file FILE): no game played", file=sys.stderr)
        return 1
    printer = Printer(boards=not args.quiet)

    def on_event(event):
        printer(event)
        if event.kind == "end" and not args.quiet and not args.linger:
            keep = max(EXIT_DELAY, args.time_limit)
            print(f"(end_game stays {keep:g} s for the agents to read, then the files are "
                  "deleted; Ctrl-C closes now)", file=sys.stderr, flush=True)
    try:
        settings = RefereeSettings(time_limit=args.time_limit, linger=args.linger,
                                   busy_poll=args.busy_poll, encoding=encoding)
        record = referee(args.dir, args.name1, args.name2, settings, seed=args.seed,
                         on_event=on_event)
    except KeyboardInterrupt as interrupt:      # Ctrl-C, or SIGTERM/SIGHUP (ref_sim.stops)
        said = stops.said(interrupt)
        print(f"{said[0].upper()}{said[1:]}: protocol files deleted, no end_game written.",
              file=sys.stderr)
        return stops.exit_code(interrupt)
    if args.record and not save_record(record, args.record):
        return 1
    return 0 if record.result != "aborted" else 1


if __name__ == "__main__":
    sys.exit(main())
