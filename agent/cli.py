"""The agent's command line: ``python -m agent NAME`` / ``uttt-agent NAME`` plays one game in a
referee directory (the file protocol, :mod:`agent.file_protocol`); ``python -m agent --protocol
codingame`` plays one game over stdin/stdout (:mod:`agent.codingame`). Here are its parser and
``--help``, the checks of its values, the log set-up, the engine it asks for
(agent.engines.build_engine) and the run of either protocol; the protocols hold no command line.

What every command of the project shares (one-line usage errors, a closed stdout) is in
:mod:`agent.cli_common`; checked numbers, their bounds and engine specs in :mod:`agent.options`.
Values are checked as they are parsed, so nan, inf, 1e309 and 10**30 are one-line usage errors
like any other bad value.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import logging
import os
import sys
from pathlib import Path

from . import core, engines, variety
from .clock import DEFAULT_FIRST_TURN_MS, DEFAULT_MARGIN_MS, DEFAULT_TURN_MS, REFEREE_TICK, SHORT_LIMIT_SHARE, cutoff_for
from .cli_common import OneLineParser, UsageError, open_regular, reason, say_error, shown, silence_output
from .engines import DEFAULT_ENGINE, build_engine
from .exits import EXIT_INPUT_ENDED
from .lifeline import READY_ENV
from .options import MAX_DEPTH, MAX_NODES, MAX_SILENCE, MAX_TIME_LIMIT, bounded, search_depth, search_nodes
from .file_protocol import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    FileProtocolAgent,
    check_encoding,
    referee_encoding,
)
from .referee_files import SYSTEM, Files, create_temp_file
from .rules import check_player_name
from .search_log import SEARCH_LOG_ENV, SearchLog

log = logging.getLogger("agent")

PROG = "uttt-agent"

CODINGAME_EPILOG = f"""\
CodinGame protocol (--protocol codingame; NAME, if given, labels the log lines; --time-limit S
is the turn's time as --turn-ms; --dir, --margin, --encoding, --silence, --polling and
--ready-file are refused, being the file protocol's):
  Reads each turn from stdin ('oppRow oppCol', 'N', N x 'row col'), answers 'row col' on
  stdout and prints nothing else; logs go to stderr (or --log-file). Thinks until
  --margin-ms (default {DEFAULT_MARGIN_MS:g}) before --turn-ms (default {DEFAULT_TURN_MS:g}; --first-turn-ms,
  default {DEFAULT_FIRST_TURN_MS:g}, on the first turn), counted from the turn's first line.
  Bad input, one message on stderr, never a traceback:
    EOF between turns         exit 0 if the game is over by our rules or the opponent's
                              (unsent) reply could end it, else exit 3
    malformed line            exit 4: not two integers, coordinate not 0-8, count not 1-81,
                              repeated action, EOF inside a turn, too few or too many lines
    illegal opponent move     trust the referee: position lost, play the first listed action
    action list != our moves  play only from the list: our engine's move if listed, else the
                              first listed move legal for us, else the first listed
    stdin or stdout closed    exit 3: the game cannot go on
  exit codes: 0 finished, 1 internal error, 2 bad command line, 3 input ended early (or stdin
  or stdout closed), 4 bad input, 130 interrupted"""

EPILOG = f"""\
timing:
  The referee's clock starts when NAME.go is created; the agent counts from that file's mtime
  and stops thinking at LIMIT - MARGIN seconds. The default margin is max(0.1 * LIMIT, 0.2):
  {cutoff_for(10):.1f} s of thought at the tournament's 10 s limit, {cutoff_for(1):.2f} s at 1 s, {cutoff_for(0.5):.2f} s at 0.5 s. The referee
  polls every 50 ms and only polls under the limit count (last at 9.95 s of 10 s, at 0.05 s of
  0.1 s), so at short rehearsal limits the agent thinks {SHORT_LIMIT_SHARE:.0%} of the time to that last poll
  ({cutoff_for(0.2):.3f} s at 0.2 s, {cutoff_for(0.1):.3f} s at 0.1 s). Give the agent the referee's own --time-limit: with a
  longer one it is timed out, with a shorter one it plays faster than it may (the log says so).

exit codes:
  0    the game finished (end_game read: won, lost or tied)
  1    internal error in the agent
  2    bad command line: player name, directory, log file, engine or any option's value (one line)
  3    game aborted before end_game: the referee's files vanished (Ctrl-C of the referee),
       nothing changed in them for --silence seconds (a killed referee), or the series runner
       that started the agent (UTTT_RUNNER_PID) is gone
  4    protocol error: end_game was read, but the game could not be followed (started after
       it began, malformed or illegal opponent move, unreadable first_four_moves, a second
       agent playing under the same name)
  130  interrupted (Ctrl-C)

A new first_four_moves before any end_game is a new game (the old one's referee was stopped):
the agent says so and plays it; it still plays one game and exits after that game's end_game.

Logs go to stderr, or to --log-file, which must lie outside DIR: the referee deletes files
in its directory. --ready-file (outside DIR too) holds the agent's process id while it watches
DIR: start the referee once it exists (python -m ref_sim ... --wait-for FILE does). The result line goes to stdout; if stdout is closed, to stderr instead, and
the exit code stays the game's. stdin is not read.

limits: --time-limit above {REFEREE_TICK:g} s (the referee looks for a move every {REFEREE_TICK * 1000:g} ms, only under the
limit) and at most {MAX_TIME_LIMIT:g} s; --silence at most {MAX_SILENCE:g} s; --depth at most {MAX_DEPTH} (moves in a game);
--nodes at most {MAX_NODES:,}; --threads 1 to {core.MAX_THREADS}, or auto.

""" + CODINGAME_EPILOG


def check_log_file(log_file: str | None) -> Path | None:
    """``--log-file`` as a Path once it is known to be writable (created if missing); UsageError if not."""
    if log_file is None:
        return None
    try:        # a regular file: a FIFO or a device there would block the agent or take its log
        if log_file != os.devnull:
            os.close(open_regular(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND))
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot write log file {shown(log_file)}: {reason(error)}") from None
    return Path(log_file)


def setup_logging(args, log_path: Path | None, name: str) -> None:
    """Log to ``log_path`` (or stderr) at the level ``-v``/``-q`` ask for, each line naming ``name``."""
    level = logging.DEBUG if args.verbose else logging.WARNING if args.quiet else logging.INFO
    handler = logging.FileHandler(log_path, encoding="utf-8") if log_path else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"%(asctime)s.%(msecs)03d {name} %(levelname)s %(message)s",
                                           datefmt="%H:%M:%S"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # watchdog and other libraries stay quiet unless asked for debug.
    logging.getLogger("watchdog").setLevel(logging.DEBUG if args.verbose else logging.WARNING)


def build_parser(prog: str = PROG, description: str | None = None, engine_options: bool = True
                 ) -> argparse.ArgumentParser:
    """The agent's command line; without ``engine_options`` (a bot of one's own, agent.bot) the
    options that choose and limit our engine are left out."""
    parser = OneLineParser(
        prog=prog,
        description=description or ("Play one game of Ultimate Tic-Tac-Toe through the CS 4341 referee's files, "
                                    "then exit once end_game appears."),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("name", metavar="NAME", nargs="?",
                        help="player name: one token of letters, digits, '_' or '-' (file protocol)")
    parser.add_argument("--protocol", choices=("file", "codingame"), default="file",
                        help="file: the CS 4341 referee's files (default); codingame: stdin/stdout")
    # The options of one protocol default to None: given to the other, they are refused.
    parser.add_argument("--dir", default=None, metavar="DIR", help="the referee's working directory (default: cwd)")
    parser.add_argument("--time-limit", type=bounded(float, REFEREE_TICK, MAX_TIME_LIMIT, above=True, unit="seconds"),
                        default=None, metavar="SECONDS", help="the referee's time limit per move (default: 10)")
    parser.add_argument("--margin", type=bounded(float, 0, MAX_TIME_LIMIT, unit="seconds"), default=None,
                        metavar="SECONDS", help="seconds to keep below the limit (default: max(0.1 * limit, 0.2))")
    parser.add_argument("--encoding", default=None, metavar="ENC",
                        help="the encoding the referee reads the files with (default: this machine's locale "
                             f"encoding, as the referee's Python opens files: {referee_encoding()} here)")
    if engine_options:
        _add_engine_options(parser)
    else:
        parser.set_defaults(engine=None, depth=None, nodes=None, core=None, evaluation=None, threads=1, version=False)
    parser.add_argument("--silence", type=bounded(float, 0, MAX_SILENCE, unit="seconds"), default=None,
                        metavar="SECONDS",
                        help="report the game aborted (exit 3) after this long without any change in the referee's "
                             "files, as a killed referee leaves them (default: max(3 * limit, 30); 0: never)")
    parser.add_argument("--polling", action="store_true", default=None,
                        help="do not use watchdog; poll the directory only")
    verbosity = parser.add_mutually_exclusive_group()
    verbosity.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    verbosity.add_argument("-q", "--quiet", action="store_true", help="warnings and errors only")
    parser.add_argument("--log-file", default=None, metavar="PATH", help="log here instead of stderr (outside DIR)")
    parser.add_argument("--ready-file", default=None, metavar="PATH",
                        help=f"write this process's id here once watching DIR, remove it at exit: a script can "
                             f"start the referee only then (default: ${READY_ENV}, set by the series runners; "
                             f"outside DIR)")
    parser.add_argument("--search-log", default=None, metavar="PATH",
                        help=f"append one JSON line per move (cell, depth, score, nodes, nps, seconds) here, for "
                             f"programs (default: ${SEARCH_LOG_ENV}, set by the series runners; none without it)")
    _add_codingame_options(parser)
    if engine_options:  # a bot of one's own has its own version, and no core of ours
        parser.add_argument("--version", action="store_true",
                            help="print the version and the search core the agent runs here, and why (the ready "
                                 "line says it too), then exit")
    return parser


def _add_engine_options(parser) -> None:
    parser.add_argument("--engine", default=None, metavar="E",
                        help=f"move chooser, one of {', '.join(sorted(engines.ENGINES))} (default: {DEFAULT_ENGINE})")
    parser.add_argument("--depth", type=search_depth, default=None, metavar="N",
                        help="search at most N plies (deterministic)")
    parser.add_argument("--nodes", type=search_nodes, default=None, metavar="N",
                        help="search at most N nodes (deterministic)")
    parser.add_argument("--core", choices=core.CORES, default=None,
                        help=f"search core of the alphabeta engine: compiled (C), wasm (the same C as WebAssembly, "
                             f"where no compiler built it) or pure Python; auto (default, or ${core.CORE_ENV}) takes "
                             f"the first of them that runs: {core.default_core_text()}")
    parser.add_argument("--threads", type=engines.THREADS.as_type(), default=1, metavar="N",
                        help="threads the alphabeta engine's compiled core searches on, sharing its table: N, or "
                             f"auto for every core but one, which the referee needs ({core.auto_threads()} here); "
                             "default 1. Only where the tournament allows more than one core: see docs/engine.md")
    parser.add_argument("--eval", default=None, choices=engines.EVALUATIONS, dest="evaluation",
                        help=f"evaluation of the alphabeta engine (default: {engines.DEFAULT_EVALUATION})")


def _add_codingame_options(parser) -> None:
    group = parser.add_argument_group("CodinGame protocol (--protocol codingame)")
    milliseconds = bounded(float, 0, MAX_TIME_LIMIT * 1000, above=True, unit="milliseconds")
    group.add_argument("--turn-ms", type=milliseconds, default=None, metavar="MS",
                       help=f"time per turn (default {DEFAULT_TURN_MS:g})")
    group.add_argument("--first-turn-ms", type=milliseconds, default=None, metavar="MS",
                       help=f"time for our first turn (default {DEFAULT_FIRST_TURN_MS:g})")
    group.add_argument("--margin-ms", type=bounded(float, 0, MAX_TIME_LIMIT * 1000, unit="milliseconds"),
                       default=None, metavar="MS",
                       help=f"stop thinking this long before the limit (default {DEFAULT_MARGIN_MS:g})")
    group.add_argument("--seed", type=bounded(int, 0, 2**32 - 1), default=None, metavar="N",
                       help="vary the game at no cost in strength: play it on the board turned by one of the "
                            "square's eight symmetries, picked by N (series runners give each game its own)")


#: Each protocol's own options ({option: dest}): given to the other protocol, they are refused
#: in one line instead of being ignored.
FILE_ONLY = {"--dir": "dir", "--margin": "margin", "--encoding": "encoding", "--silence": "silence",
             "--polling": "polling", "--ready-file": "ready_file"}
CODINGAME_ONLY = {"--turn-ms": "turn_ms", "--first-turn-ms": "first_turn_ms", "--margin-ms": "margin_ms"}
FILE_DEFAULTS = {"dir": ".", "time_limit": 10.0, "polling": False}
CODINGAME_DEFAULTS = {"turn_ms": DEFAULT_TURN_MS, "first_turn_ms": DEFAULT_FIRST_TURN_MS,
                      "margin_ms": DEFAULT_MARGIN_MS}


def settle_protocol_options(args) -> None:
    """Check that the options given belong to the protocol played, and fill in the defaults.
    ``--time-limit S`` is every command's name for the time per move: under CodinGame's protocol
    it is the turn's time (``--turn-ms``, in milliseconds, the same setting).  UsageError."""
    codingame_game = args.protocol == "codingame"
    other = FILE_ONLY if codingame_game else CODINGAME_ONLY
    given = [flag for flag, dest in other.items() if getattr(args, dest, None) is not None]
    if given:
        owner = "the file protocol (the default)" if codingame_game else "--protocol codingame"
        raise UsageError(f"{' and '.join(given)} {'is' if len(given) == 1 else 'are'} for {owner}, "
                         f"not this game: leave {'it' if len(given) == 1 else 'them'} out")
    if codingame_game and args.time_limit is not None:
        if args.turn_ms is not None:
            raise UsageError("--time-limit and --turn-ms are the same setting: give one")
        args.turn_ms, args.time_limit = 1000 * args.time_limit, None
    for dest, value in (CODINGAME_DEFAULTS if codingame_game else FILE_DEFAULTS).items():
        if getattr(args, dest, None) is None:
            setattr(args, dest, value)


def _check_directory(directory: Path, name: str, files: Files) -> Path:
    where = f"referee directory {shown(directory)}"
    try:
        if not directory.is_dir():
            raise UsageError(f"{where} {'is not a directory' if directory.exists() else 'does not exist'}")
        # Try what a move does: create the temp file there, then remove it.
        os.remove(create_temp_file(directory, b"", files=files))
    except (OSError, ValueError) as error:  # ValueError: a NUL byte; OSError: a path too long...
        raise UsageError(f"cannot write in {where}: {reason(error)}") from None
    try:  # the referee's NAME.go there must be a path this system takes (not too long, say)
        os.lstat(directory / f"{name}.go")
    except FileNotFoundError:
        pass
    except OSError as error:
        raise UsageError(f"cannot use {name}.go in {where}: {reason(error)}") from None
    return directory


def _outside(path: str, directory: Path, what: str) -> None:
    """UsageError unless ``path`` lies outside the referee directory, whose clean-up deletes files."""
    try:
        resolved_dir, resolved = directory.resolve(), Path(path).resolve()
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot write {what} {shown(path)}: {reason(error)}") from None
    if resolved == resolved_dir or resolved_dir in resolved.parents:
        raise UsageError(f"{what} {shown(path)} is inside the referee directory {shown(directory)}, "
                         "whose clean-up deletes files; put it elsewhere")


def _check_log_file(log_file: str | None, directory: Path) -> Path | None:
    if log_file is None:
        return None
    _outside(log_file, directory, "log file")
    return check_log_file(log_file)


def _check_ready_file(ready_file: str | None, directory: Path) -> Path | None:
    """``--ready-file`` (or $UTTT_READY_FILE) outside the directory, in a folder that exists."""
    if ready_file is None:
        return None
    _outside(ready_file, directory, "ready file")
    folder = Path(ready_file).parent
    if not folder.is_dir():
        raise UsageError(f"cannot write ready file {shown(ready_file)}: its folder {shown(folder)} does not exist")
    return Path(ready_file)


def _print_result(line: str) -> None:
    """The result line on stdout; stdout closed (``| head -0``, ``>&-``), on stderr so it is not lost."""
    try:
        if sys.stdout is None:  # closed before we started: print() would say nothing
            raise OSError("stdout is closed")
        print(line, flush=True)
    except (OSError, ValueError):
        silence_output(sys.stdout)
        say_error(PROG, f"stdout is closed; the result: {line}")


def version_line() -> str:
    """``--version``: the package's version and the search core the agent runs here, and why."""
    try:
        version = importlib.metadata.version("uttt-agent")
    except importlib.metadata.PackageNotFoundError:  # run from a source folder never installed
        version = "(not installed)"
    return f"{PROG} {version}; {core.core_in_use()}"


def _print_version() -> int:
    try:
        line = version_line()
    except ValueError as error:  # a bad $UTTT_CORE
        say_error(PROG, f"error: {error}")
        return EXIT_USAGE
    try:
        if sys.stdout is None:  # closed before we started: print() would say nothing
            raise OSError("stdout is closed")
        print(line, flush=True)
    except (OSError, ValueError):  # stdout closed: the line on stderr, as the result line goes
        silence_output(sys.stdout)
        say_error(PROG, f"stdout is closed; {line}")
    return 0


def main(argv: list[str] | None = None, *, parser=None, make_engine=None, make_agent=FileProtocolAgent,
         setup_logging=setup_logging, files: Files = SYSTEM) -> int:
    """Run the agent's command line. ``parser`` and ``make_engine(args)`` (an engine with
    ``choose(position, limit)``) stand in for ours: agent.bot runs a bot of one's own so.
    ``make_agent`` makes the file protocol's player (:class:`FileProtocolAgent`'s arguments),
    ``setup_logging(args, log_path, name)`` sets up the logs, and ``files`` is how the referee's
    files are reached (agent.referee_files.Files)."""
    args = (parser or build_parser()).parse_args(argv)
    args.threads, capped = core.threads_for_a_clock(args.threads)
    if capped is not None:  # before logging starts: stderr, where both protocols' logs go
        say_error(PROG, capped)
    if args.core is not None:  # every engine this process makes reads it (agent/core.py)
        os.environ[core.CORE_ENV] = args.core
    if args.version:
        return _print_version()
    try:
        settle_protocol_options(args)
    except UsageError as error:
        say_error(PROG, f"error: {error}")
        return EXIT_USAGE
    if args.protocol == "codingame":
        return _play_codingame(args, make_engine, setup_logging)
    try:
        if args.name is None:
            raise UsageError("NAME is required with the file protocol")
        name = check_player_name(args.name)
        if args.margin is not None and not args.margin < args.time_limit:
            raise UsageError(f"--margin must be below the time limit ({args.time_limit:g}), got {args.margin:g}")
        encoding = None if args.encoding is None else check_encoding(args.encoding)
        directory = _check_directory(Path(args.dir), name, files)
        log_path = _check_log_file(args.log_file, directory)
        ready_file = _check_ready_file(args.ready_file or os.environ.get(READY_ENV) or None, directory)
    except (UsageError, ValueError) as error:
        say_error(PROG, f"error: {error}")
        return EXIT_USAGE
    setup_logging(args, log_path, name)

    try:
        # Build the engine before the first .go can appear: the referee gives no warning.
        try:
            if make_engine is not None:
                engine = make_engine(args)
            else:
                _, engine = build_engine(args.engine, args.depth, args.nodes, args.evaluation, args.threads)
        except (UsageError, ValueError) as error:
            say_error(PROG, f"error: {error}")
            return EXIT_USAGE
        agent = make_agent(name, directory, engine, time_limit=args.time_limit, margin=args.margin,
                           depth=args.depth, nodes=args.nodes, use_watchdog=not args.polling,
                           silence=args.silence, encoding=encoding,
                           search_log=SearchLog.chosen(args.search_log, "file", {"threads": args.threads}),
                           ready_file=ready_file, files=files)
        summary = agent.run()  # logs "ready" once it is watching: match runners wait for that
    except KeyboardInterrupt:
        log.warning("interrupted")
        return EXIT_INTERRUPTED
    except Exception:
        log.exception("internal error")
        return EXIT_INTERNAL
    _print_result(summary.result_line())
    if summary.status != "finished":
        log.error("%s", summary.message)
    return summary.exit_code


def _play_codingame(args, make_engine, setup_logging) -> int:
    """One game of the CodinGame protocol for parsed arguments (their values are checked as they
    are parsed: agent.options.bounded)."""
    from . import codingame  # here, not at the top: the file protocol (every referee game) never needs it
    try:
        if not args.margin_ms < min(args.turn_ms, args.first_turn_ms):
            raise UsageError(f"--margin-ms must be below the turn time, got {args.margin_ms:g}")
        if args.name is not None:
            check_player_name(args.name)  # it labels every log line
        log_path = check_log_file(args.log_file)
        if make_engine is not None:  # a bot of one's own (agent.bot): it does what it likes with --seed
            engine_name, engine = "own", make_engine(args)
        else:
            engine_name, engine = build_engine(args.engine, args.depth, args.nodes, args.evaluation, args.threads)
        if args.seed is not None and engine_name not in ("random", "own"):
            engine = variety.varied(engine, args.seed)
    except (UsageError, ValueError) as error:
        say_error(PROG, f"error: {error}")
        return EXIT_USAGE
    setup_logging(args, log_path, args.name or "codingame")
    for stream, what in ((sys.stdin, "stdin"), (sys.stdout, "stdout")):
        if stream is None:  # its descriptor was closed before we started
            log.error("%s is closed: no game can be played; exiting (code %d)", what, EXIT_INPUT_ENDED)
            return EXIT_INPUT_ENDED
    agent = None
    try:
        agent = codingame.CodinGameAgent(engine, turn_ms=args.turn_ms, first_turn_ms=args.first_turn_ms,
                               margin_ms=args.margin_ms, depth=args.depth, nodes=args.nodes,
                               search_log=SearchLog.chosen(args.search_log, "codingame",
                                                           {"threads": args.threads}))
        code = agent.run()
    except KeyboardInterrupt:
        log.warning("interrupted")
        code = EXIT_INTERRUPTED
    except codingame.OutputClosed as error:
        log.warning("stdout closed by the referee (%s): my move cannot reach it; exiting (code %d)",
                    error, EXIT_INPUT_ENDED)
        silence_output(sys.stdout)  # Python flushes stdout again on exit: let that say nothing
        code = EXIT_INPUT_ENDED
    except Exception:
        log.exception("internal error")
        code = EXIT_INTERNAL
    if agent is not None and agent.reader.reading:
        codingame.exit_past_the_reader(code)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
