"""A series runner for stdin/stdout programs under CodinGame's rules (its referee:
:mod:`ref_sim.referees.codingame`).

    python -m ref_sim.stdio AGENT1 AGENT2 [--games N] [--turn-ms 100] [--first-turn-ms 1000]
                            [--grace-ms 5] [--seed N] [--out DIR] [--resume] [--show] [-q]
                            [--cluster ADDRESS]
    python -m ref_sim.stdio --resume --out DIR     # continue the series in DIR as it was

The protocol is CodinGame's "Ultimate Tic-Tac-Toe": each program is one process per game.  On
its turn a program reads ``opponentRow opponentCol`` (``-1 -1`` on the very first move of the
game), a line ``validActionCount`` and that many ``row col`` lines (sorted by row, then
column), and answers one line ``row col`` (more words after the two numbers are allowed, as a
message).  Rows and columns run 0-8 over the 9x9 grid from the top-left: cell ``(row, col)`` is
local board ``(row // 3) * 3 + col // 3``, square ``(row % 3) * 3 + col % 3``.  The rules are
:class:`ref_sim.rules.Game` with ``variant="codingame"``: when all boards are decided with no
line, more boards won wins (equal: a draw).

AGENT is a built-in or a command (split like a shell would, placeholders ``{python}``,
``{seed}``, ``{turn_ms}``, ``{first_turn_ms}``):

``agent``, ``agent:depth=N``, ``agent:nodes=N``   ``python -m agent --protocol codingame --seed {seed}``
``random``                                        ``python -m ref_sim.bots.stdio_random --seed {seed}``

Timing, fair but strict.  Both programs are started first, and the first input is sent once
each has written something on stderr (our agent logs ``ready``) or exited, or after
``STARTUP_WAIT`` seconds: start-up is not charged to the first turn.  A turn's time runs from
the moment its input has been written and flushed to the moment the answer line is read (a
thread per program stamps each line as it arrives): ``--turn-ms``, or ``--first-turn-ms`` on a
program's first turn, plus ``--grace-ms`` (default 5: the referee's own pipe and thread
latency, well under 1 ms, with room to spare).  Verdicts, each a loss for the program at fault:

* no answer within the limit: ``Time out!``;
* an answer that is not ``row col`` or not one of the valid actions: ``Invalid move!`` (the line
  is kept as ``bad_line``).  A program that printed more than one line in a turn has its next
  line read as the answer to the next turn, as CodinGame does;
* the program's output ended (it exited) or its input pipe broke before it answered: a crash
  (reason ``Crashed!``, and the note ``crashed (exited with code N)``).

When the game ends, both programs' stdin is closed (CodinGame never sends the final move); a
program still running ``EXIT_WAIT`` seconds later is killed and noted ``did not exit (killed)``.

Series.  CodinGame starts every game from the empty board, and a program knows only its
opponent's moves, so a referee cannot impose an opening without making a player "play" moves
it never chose.  Games therefore come in pairs with the sides swapped: agent 1 moves first in
odd games, agent 2 in even games; variety comes from the programs: each game gives each
program its own seed (``{seed}``, drawn from ``--seed`` and the game's number; the built-ins
get ``--seed``), and timing varies a program that searches to a time limit.  Two programs
that ignore their seed and search to a fixed depth still replay one pair over and over: the
summary counts the distinct games (the same moves from the same first player count once) and
warns when games repeat.  An odd ``--games`` is rounded up to whole pairs, except ``--games
1``.  The summary is ``ref_sim.match``'s (cutechess-style Score, Elo, LOS, DrawRatio, Ptnml,
then each program's wins, losses, draws, time-outs, invalid moves, crashes and hangs, then
the distinct games), from :func:`ref_sim.series.report.report_lines` and :mod:`ref_sim.series.stats`; the
progress line is :mod:`ref_sim.series.progress`'s.

Stopping: as :mod:`ref_sim.match` (Ctrl-C, SIGTERM, SIGHUP alike; the game being played
aborted and its programs killed with their process groups; the games so far summarised; the
command that continues the series; exit 128 + the signal).  Each program gets this runner's
process id in ``UTTT_RUNNER_PID`` (:mod:`agent.lifeline`).  ``--resume --out DIR`` continues
a series from its ``series.json``.

``--cluster ADDRESS`` (or ``UTTT_CLUSTER``) plays the games on the workers of a Dask scheduler
(:mod:`ref_sim.series.cluster`, the ``cluster`` extra), each worker ``cores - 1`` games at once, the
programs started there (``{python}`` is the worker's); the logs come back into ``--out`` and
the summary ends with each worker's games and time-outs and the games retried after a lost
worker.

Files in ``--out`` (default: a new temporary directory, deleted at the end but for the logs of
the games that went wrong, moved to a kept ``uttt-logs-*`` folder): ``series.json``, the
settings (``{"format": 1, "rules": "codingame", "seed", "agents", "names", "games", "turn_ms",
"first_turn_ms", "grace_ms"}``), ``games.jsonl``, one JSON object per game, and
``logs/game-NNNN-NAME.log``, each program's stderr (at most 8 MiB kept: its start and end), and
``logs/game-NNNN-NAME.search.jsonl``, the search log it may write (``UTTT_SEARCH_LOG``).  One
runner at a time per ``--out``, a full disk ending the series cleanly, bad lines left out on
``--resume`` with a warning: as ``ref_sim.match`` (:mod:`ref_sim.series.records`).  The keys of a
game line: docs/formats.md.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
from pathlib import Path

from agent.commandline import OneLineParser
from agent.options import MAX_GAMES, real, whole
from ref_sim import console
from ref_sim.referees.codingame import DEFAULT_FIRST_TURN_MS, DEFAULT_GRACE_MS, DEFAULT_TURN_MS, describe
from ref_sim.rules import CODINGAME
from ref_sim.referees.codingame import EXIT_WAIT
from ref_sim.series import cluster, isolation, launch, realbots, records, scheduler
from ref_sim.series.codingame_games import FORMAT, REPEAT_HINT, STARTUP_WAIT, StdioGames, StdioGameSettings
from ref_sim.series.loop import (RESUME_HELP, add_agents, append_game, check_agents, conclude, play_games,
                                 prepare_out, run_in, series_settings, went_wrong)
from ref_sim.series.progress import Progress
from ref_sim.series.report import report_lines, summarize
from ref_sim.series.specs import StdioSpec, keep_recorded_names, stdio_spec

#: --turn-ms and the others above an hour are a typo.
MAX_TURN_MS = 3_600_000.0
MODULE = "ref_sim.stdio"


def run_series(specs: list[StdioSpec], games: int, out: Path, seed: int,
               settings: StdioGameSettings = StdioGameSettings(), say=print, show=None,
               runner=None, played: list | None = None, progress=None,
               stop: threading.Event | None = None) -> list[dict]:
    """Play games 1..``games`` (agent 1 first in odd games) but those already in ``played``,
    append each to ``out/games.jsonl`` and to ``played`` as it finishes; return them all.
    ``settings``: how each game is played (the turn's times, ``--isolate``...).

    ``runner``: a :class:`ref_sim.series.cluster.ClusterRunner` plays them on its workers, as many at
    once as it has slots; without one they are played here, one at a time, in a thread, so
    that this thread only waits and a stop (KeyboardInterrupt, or a signal through
    :mod:`ref_sim.stops`) lands here: then ``stop`` is set, the game still running is aborted
    (its programs killed) and not recorded, and the exception goes on.  ``progress``: a
    :class:`ref_sim.series.progress.Progress` shows each game instead of ``say``.  With
    ``settings.isolate`` what each program used is said after each game.
    """
    played = [] if played is None else played
    stopped = _play_series(specs, games, out, seed, settings, say, show, runner, played,
                           progress, stop)
    for error in stopped.values():
        raise error
    return sorted(played, key=lambda game: game["game"])


def _play_series(specs, games: int, out: Path, seed: int, settings: StdioGameSettings, say, show,
                 runner, played: list, progress, stop=None) -> dict:
    """:func:`run_series`, a stop returned as :func:`ref_sim.series.loop.play_games` returns it."""
    names = realbots.side_names(specs)
    play = StdioGames(specs, names, seed, settings, out, show=show, stop=stop)
    before = len(played)
    local = runner is None
    runner = scheduler.LocalRunner(1) if local else runner

    def submit(number: int):
        return play.submit(runner, number, must_start=len(played) == before)  # none finished yet

    def finished(number: int, ticket) -> None:
        game = play.line(runner, ticket, number)
        if game is None:
            return
        append_game(out / "games.jsonl", game)
        played.append(game)
        line = f"Game {number}/{games}: {describe(game)}"
        used = isolation.usage_line(game) if settings.isolate is not None else None
        line += f" -- {used}" if used else ""
        if progress is None:
            say(line)
        else:
            progress.game(line, notable=went_wrong(game))
            progress.update(len(played), summarize(played, names, paired=games > 1))

    done_numbers = {game["game"] for game in played}
    try:
        return play_games(runner, [k for k in range(1, games + 1) if k not in done_numbers],
                          submit, finished, play.stop)
    finally:
        if local:
            runner.close()


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=console.prog(MODULE),
        description="Referee games between two stdin/stdout programs with CodinGame's Ultimate "
                    "Tic-Tac-Toe protocol and rules, in pairs, with cutechess-style statistics.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="""\
agents:
  agent, agent:depth=N, agent:nodes=N   our agent (python -m agent --protocol codingame
                          --seed N: each game its own seed)
  random                  a random player (python -m ref_sim.bots.stdio_random --seed N)
  "COMMAND"               any command; placeholders {python} {seed} {turn_ms} {first_turn_ms}

pairs: agent 1 moves first in odd games, agent 2 in even games (every game starts from the
empty board, as on CodinGame). Verdicts: Time out! (no answer within the turn's time + grace,
measured from writing the input to reading the answer), Invalid move! (not 'row col' or not a
valid action), Crashed! (output ended before an answer).

different games: a referee cannot impose an opening on CodinGame's protocol, so the games
differ only if the programs do: each game gives each program its own seed ({seed}; the
built-ins get --seed).  The summary counts the distinct games (the same moves count once)
and warns when games repeat: two deterministic programs replay the same pair.

output (agent 1's view; error bars at 95 %, pentanomial over pairs):
  Score of A vs B: W - L - D  [score] games
  Elo difference: E +/- err, LOS: x %, DrawRatio: y %
  Ptnml(0-2): [pairs scoring 0, 1/2, 1, 3/2, 2 points]
  Distinct games: D of N

files in --out (created if missing): series.json (the settings: --resume continues from
them), games.jsonl (one JSON line per game; keys in docs/formats.md),
logs/ (each program's stderr per game).  Without --out they go to a temporary directory,
deleted at the end, but for the logs of games that went wrong (time-out, bad move, crash,
hang): those are moved to a uttt-logs-* folder of the temporary directory, named in the
output.

stopping: Ctrl-C, SIGTERM and SIGHUP stop the series alike: the game being played is
aborted and its programs killed (their whole process groups), the temporary directory is
removed, the games so far are summarised, and the last line gives the command that
continues the series (--resume --out DIR; its settings come from series.json, and an
option that contradicts them is refused; --games may grow or shrink it).

exit codes: 0 the series ran, 1 a program could not start in the first game (its command
is wrong: the series stops rather than score forfeits), 2 bad arguments (a bare word that
is neither a built-in nor a command on the PATH), 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP
(128 + the signal), 141 the output was closed (| head).

examples:
  python -m ref_sim.stdio agent random --games 2
  python -m ref_sim.stdio agent agent:depth=4 --games 20 --seed 1 --out runs/cg
  python -m ref_sim.stdio --resume --out runs/cg""")
    add_agents(parser, "program")
    # Settings a series keeps (series.json) default to None: given or not, --resume knows.
    parser.add_argument("--games", type=whole(1, MAX_GAMES), default=None,
                        help="games to play (default 2), rounded up to pairs")
    add_timing(parser)
    parser.add_argument("--seed", type=int, help="seed of the series: the programs' {seed} (default: random, printed)")
    parser.add_argument("--out", help="directory for games.jsonl and logs (default: a new temporary directory)")
    parser.add_argument("--resume", action="store_true", help=RESUME_HELP)
    parser.add_argument("--show", action="store_true", help="print the board after every move")
    parser.add_argument("-q", "--quiet", action="store_true", help="only the final summary")
    cluster.add_cluster_options(parser, note="each worker plays cores - 1 games at once")
    isolation.add_options(parser)
    launch.add_wait_options(parser, STARTUP_WAIT, EXIT_WAIT, "")
    return parser


def seconds_in_ms(text: str) -> float:
    """``--time-limit S``, the name every command gives the time per move, as milliseconds."""
    return 1000 * real(0, MAX_TURN_MS / 1000, low_open=True)(text)


def add_timing(parser, time_limit: bool = True) -> None:
    """--time-limit S (or --turn-ms MS, its old name here), --first-turn-ms and --grace-ms
    (default None: a resumed series keeps its own), on ``parser`` or an argument group (the
    tournament's, whose own --time-limit serves both protocols: ``time_limit=False``)."""
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


@console.entry_point(MODULE)
def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    isolation.check_options(parser, args)
    cluster.check_options(parser, args)
    check_agents(parser, args, "program")
    given = {"agents": None if args.agent1 is None else [args.agent1, args.agent2],
             "turn_ms": args.turn_ms, "first_turn_ms": args.first_turn_ms,
             "grace_ms": args.grace_ms, "seed": args.seed, "games": args.games,
             "isolate": isolation.recorded_setting(isolation.from_args(args))}
    defaults = {"agents": None, "turn_ms": DEFAULT_TURN_MS, "first_turn_ms": DEFAULT_FIRST_TURN_MS,
                "grace_ms": DEFAULT_GRACE_MS, "seed": random.randrange(2 ** 32), "games": 2, "isolate": None}
    flags = {"agents": "AGENT1 AGENT2", "turn_ms": "--turn-ms", "first_turn_ms": "--first-turn-ms",
             "grace_ms": "--grace-ms", "seed": "--seed", "games": "--games", "isolate": "--isolate"}
    try:
        settings, recorded = series_settings(Path(args.out) if args.out else None, args.resume,
                                             given, defaults, flags)
        specs = [stdio_spec(text) for text in settings["agents"]]
        if recorded is not None:
            keep_recorded_names(specs, recorded.get("names"))
        realbots.side_names(specs)              # a clash of names: refused before any game
        args.isolated_as_recorded = isolation.resume_setting(args, settings["isolate"])
    except ValueError as error:
        parser.error(str(error))
    say = (lambda *a, **k: None) if args.quiet else (lambda *a, **k: print(*a, **k, flush=True))
    args.games = settings["games"]
    if args.games > 1 and args.games % 2:
        args.games += 1
        say(f"--games rounded up to {args.games}: games are played in pairs, sides swapped")
    if recorded is not None and recorded.get("games") not in (None, args.games):
        say(f"the series now has {args.games} games (it had {recorded['games']})")
    if args.out:        # created once the settings are known: a refused --resume makes nothing
        problem = prepare_out(args.out)
        if problem:
            parser.error(problem)
        games_path = Path(args.out) / "games.jsonl"
        if not args.resume and games_path.exists() and games_path.stat().st_size:
            parser.error(f"{games_path} already holds games: add --resume to continue that "
                         "series, or choose another --out")
    address = cluster.cluster_target(args)
    if address and args.show:
        parser.error("--show plays here, one game at a time: not with --cluster")
    with records.lock_out(args.out, console.prog(MODULE), argv):     # one runner per --out
        return run_in(parser, address, args.out, "uttt-stdio-",
                      lambda runner, out: _run(args, settings, specs, out, say, runner))


def _run(args, settings: dict, specs, out: Path, say, runner) -> int:
    seed = settings["seed"]
    names = realbots.side_names(specs)
    turn_ms, first_turn_ms, grace_ms = (settings[key] for key in ("turn_ms", "first_turn_ms", "grace_ms"))
    records.make_dirs(out / "logs")
    done = records.resume_games(out / "games.jsonl")     # bad lines: a warning, played again
    records.write_json(out / "series.json",
        {"format": FORMAT, "rules": CODINGAME, "seed": seed, "agents": settings["agents"],
         "names": names, "games": args.games, "turn_ms": turn_ms, "first_turn_ms": first_turn_ms,
         "grace_ms": grace_ms, "isolate": isolation.recorded_setting(isolation.from_args(args))})
    done = [game for game in done if game["game"] <= args.games]
    say(f"{names[0]}: {specs[0].template}\n{names[1]}: {specs[1].template}\n"
        f"series seed {seed}; {args.games} game{'s' if args.games > 1 else ''} at {turn_ms:g} ms "
        f"per turn (first {first_turn_ms:g} ms, grace {grace_ms:g} ms); "
        + (f"on {len(runner.slots())} cluster worker(s), {runner.capacity()} at once; "
           if runner.remote else "")
        + (f"files in {out}" if args.out else "files in a temporary directory, deleted at the end "
           "(--out DIR keeps them), but for the logs of games that go wrong"))
    if done:
        say(f"resuming: {len(done)} of {args.games} games already played, "
            f"{args.games - len(done)} to go")
    show = (lambda text: print(text, flush=True)) if args.show else None
    progress = None if args.quiet else Progress(
        args.games, terminal=sys.stdout.isatty() and not args.show, done=len(done))
    played = list(done)
    isolate = isolation.from_args(args)
    if isolate is not None:
        say(isolation.status_line(isolate, runner.capacity()))
        if getattr(args, "isolated_as_recorded", False):
            say("isolated as the series began: --resume keeps the isolation it recorded")
    # Ctrl-C or SIGTERM/SIGHUP (ref_sim.stops), a program that cannot start, the output closed.
    game_settings = StdioGameSettings(turn_ms, first_turn_ms, grace_ms, isolate,
                                      **launch.waits_given(args))
    stopped = _play_series(specs, args.games, out, seed, game_settings, say, show, runner, played,
                           progress)
    paired = args.games > 1
    return conclude(MODULE, played, lambda games: report_lines(games, names, paired,
                                                               repeat_hint=REPEAT_HINT),
                    out_arg=args.out, out=out, say=say, progress=progress,
                    resume_options=isolation.command_options(isolate),
                    figures=lambda games: summarize(games, names, paired), **stopped)


if __name__ == "__main__":
    sys.exit(main())
