"""Play a series of games between two agents through the simulated referee.

    python -m ref_sim.match AGENT1 AGENT2 [--games N] [--time-limit S] [--seed N]
                            [--out DIR] [--resume] [--unpaired] [--concurrency N]
                            [--sprt ELO0 ELO1 ALPHA BETA] [--show] [-q] [--cluster ADDRESS]
                            [--encoding ENC]
    python -m ref_sim.match --resume --out DIR     # continue the series in DIR as it was

AGENT is a built-in agent, optionally with options, or a shell-style command:

``random``                the reference random player (ref_sim.bots.random_agent), seeded per game
``seed``, ``seed:depth=4``    a typical student bot: line-count minimax at depth 3 (or N)
                          (``python -m agent NAME --engine seed --depth N``)
``agent``                 our agent at full strength (iterative deepening to the time limit)
``agent:depth=6``, ``agent:nodes=20000``   our agent at a fixed depth / node count (still
                          bounded by the time limit)
``eager``                 hostile: the random player answering the opponent's line at once,
                          before its own ``.go`` (it writes out of turn)
``flood``, ``flood:rate=N``   hostile: the random player writing 20,000 (N) lines a second,
                          flushing each, into ``<name>-flood.log`` in the game directory
                          (deleted after the game) to load the other player's watcher
``nbsp``                  hostile: the random player separating its tokens with byte 0xA0,
                          written as Latin-1: a valid move only where the referee decodes
                          Latin-1 or cp1252 (such a locale, or ``--encoding latin-1``);
                          under UTF-8 the real referee crashes on it
a command                 with the placeholders ``{name}``, ``{dir}``, ``{time_limit}`` (and
                          ``{seed}``, a per-game seed, and ``{encoding}``, the referee's),
                          e.g. ``"python my_bot.py {name} {dir}"``
``name=NAME:AGENT``       any of the above answering to NAME instead of ``<Label>1``: a bot
                          whose name is hard-coded (``name=Otter:java -cp bots Otter``); a
                          built-in also takes it as an option (``agent:depth=4,name=Walrus``)

Every agent runs in its game directory, as under the real referee (relative ``move_file``);
a command's relative paths are made absolute against the folder the runner was started in
(:mod:`ref_sim.series.realbots`, docs/real-bots.md).

``--encoding ENC`` makes the referee decode ``move_file`` as ENC (strictly, as the real one
under another locale: ``cp1252`` for Windows, ``latin-1``) instead of this machine's
locale's encoding, and passes ``--encoding ENC`` to every built-in agent.

Agent 1 is called ``<Label>1`` and agent 2 ``<Label>2`` in every game (``Random1``,
``Agent2``...), unless its spec fixes its name.  Each game runs as in the tournament: the agents are started first, then the
referee, in a fresh directory ``<out>/game-0001/``; the agents' output goes to
``<out>/logs/game-0001-<name>.log`` (outside the game directory, which the referee cleans).

Openings and pairs (:mod:`ref_sim.series.openings`): random 4-move openings like the referee's, each
played twice with the sides swapped (``--unpaired``: one game per opening, a coin flip for
p1).  An odd ``--games`` is rounded up to whole pairs, except ``--games 1`` (one game).  The
whole schedule follows from ``--seed`` (random and printed when not given), so a series is
reproducible up to the agents' timing, and game k is always the same game.  The summary
says how many games were distinct (the same moves from the same first player count once) and
warns when some repeat.

Results, in the style of cutechess-cli and fastchess (formulas in :mod:`ref_sim.series.stats`)::

    Score of Agent1 vs Seed2: 120 - 30 - 50  [0.725] 200
    Elo difference: 168.4 +/- 48.2, LOS: 100.0 %, DrawRatio: 25.0 %
    Ptnml(0-2): [1, 5, 20, 34, 40]
    SPRT: llr 2.95 (100.1%), lbound -2.94, ubound 2.94 - H1 was accepted

    Distinct games: 200 of 200

Scores and Elo are agent 1's.  A 1-game series (or one stopped before a pair was complete)
has no Ptnml line: it would be all zeros.  The error bar and the SPRT use the pentanomial model over
complete pairs when the games are paired, the trinomial model otherwise.  With ``--sprt`` the
series stops as soon as the LLR crosses a bound (``--games`` is then a maximum, default 1000).
Time-outs, invalid and out-of-order moves, crashes (an agent that exits before the end) and
hangs (an agent still running ``EXIT_WAIT`` seconds after ``end_game``, or one time limit
and a second if longer, then killed) are counted per agent.  The game's files stay until
every agent has exited or that time is up, so an agent still searching when the game ended
reads ``end_game`` as it would with the real referee.  Every game starts new agent
processes, so a crash costs one game only.

Progress (:mod:`ref_sim.series.progress`): on a terminal one line redrawn in place (games, W-L-D,
Elo +/- error, the LLR and its bounds under ``--sprt``, each agent's time-outs, the time
left) with the games that went wrong printed above it; otherwise one line per game and the
progress line every 10 games.

Stopping (:mod:`ref_sim.stops`).  Ctrl-C, SIGTERM and SIGHUP (SIGBREAK on Windows) stop a
series alike: the games being played are aborted and their agents killed with their whole
process group (a shell command's children too), the temporary directory (no ``--out``) is
removed, the games finished so far are summarised, and the last line, on stderr, is the
command that continues the series (``--resume --out DIR``); the exit code is 128 + the
signal (130, 143, 129).  Every agent gets this runner's process id in ``UTTT_RUNNER_PID``
(:mod:`agent.lifeline`): one whose runner was killed outright (SIGKILL) ends by itself.
Without ``--out`` the logs of the games that went wrong (a time-out, a bad move, a crash, a
hang, or an agent that could not start) are moved to a ``uttt-logs-*`` folder of the
system's temporary directory, which is kept and named: a message never points into the
deleted folder.

``--cluster ADDRESS`` (or ``UTTT_CLUSTER``) plays the games on the workers of a Dask
scheduler instead (:mod:`ref_sim.series.cluster`, the ``cluster`` extra): the same schedule, one game
per task, each worker ``cores - 1`` games at once (``--concurrency`` is for local play), the
logs sent back into ``--out``.  A game whose worker is lost is played again elsewhere; the
summary ends with each worker's games and time-outs and the number of games retried.

Files in ``--out``:

``series.json``   the series: ``{"format": 1, "seed", "agents": [spec1, spec2], "names",
                  "time_limit", "paired", "encoding", "games", "sprt"}``.  ``--resume --out
                  DIR`` alone continues the series with these settings; a setting given
                  again must be the same (else one line, exit 2), but for ``--games``,
                  which may grow or shrink the series.
``games.jsonl``   one JSON object per finished game, one line each, in the order the games
                  finished (sort by ``game``): the names, sides, opening, moves with their
                  times and our agent's search figures, the verdict and the points (the keys:
                  docs/formats.md).  Games aborted by a stop are not written, so
                  ``--resume`` plays them again.
``logs/``         each agent's output per game (at most 8 MiB kept: its start and end), its search log
                  (``game-NNNN-NAME.search.jsonl``) and ``game-NNNN.json`` (the referee's record).
``runner.lock``   while a runner uses the folder: who (pid, host, command, since when).

Nothing lost, nothing mixed (:mod:`ref_sim.series.records`, which reads and writes these files):
a second runner on the same ``--out`` (a ``--resume`` too) is refused in one line naming the
one that holds it (exit 2); a full disk (any error writing the records) ends the series as a
stop does, with the summary so far, the reason and the resume line (exit 1), and the games
recorded intact; a bad line of ``games.jsonl`` (not JSON, NaN, ``1e999``, absurd nesting,
wrong types) is left out on ``--resume`` with one warning, its game played again, the line
kept in ``games.jsonl.dropped``; a bad ``series.json`` is one line and exit 2.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

from agent.commandline import OneLineParser
from agent.options import MAX_GAMES, MAX_SECONDS, real, whole
from ref_sim import console
from ref_sim.referees.file_protocol import check_encoding, check_time_limit, locale_encoding
from ref_sim.series import cluster, isolation, realbots, records, stats
from ref_sim.series import launch
from ref_sim.series.file_games import EXIT_WAIT, FORMAT, STARTUP_WAIT, FileGames, FileGameSettings
from ref_sim.series.loop import (RESUME_HELP, add_agents, append_game, capped_concurrency, check_agents,
                                 conclude, play_games, prepare_out, run_in, series_settings, went_wrong)
from ref_sim.series.progress import Progress
from ref_sim.series.report import describe, report_lines, summarize
from ref_sim.series.specs import agent_spec, keep_recorded_names

SPRT_MAX_GAMES = stats.SPRT_MAX_GAMES
MODULE = "ref_sim.match"


# -- the series ---------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=console.prog(MODULE),
        description="Play a series of games between two agents through the referee files, "
                    "with paired openings, cutechess-style statistics and optional SPRT.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="""\
agents:
  random                  the reference random player
  seed, seed:depth=N      the seed-style student bot (line-count minimax, depth 3 or N)
  agent                   our agent, full strength
  agent:depth=N, agent:nodes=N   our agent at a fixed depth / node count
  eager                   hostile: a random player that answers the opponent's line at
                          once, before its own .go (it writes out of turn)
  flood, flood:rate=N     hostile: a random player writing 20000 (N) lines a second into
                          <name>-flood.log in the game directory (deleted after the game)
  nbsp                    hostile: a random player whose move lines separate the tokens
                          with byte 0xA0, written as Latin-1: valid only where the referee
                          decodes Latin-1 or cp1252 (such a locale, or --encoding latin-1);
                          the UTF-8 referee crashes on it
  "COMMAND"               any command; placeholders {name} {dir} {time_limit} {seed}
                          {encoding}, e.g. "python my_bot.py {name} --dir {dir}"; it runs in
                          the game directory, its relative paths made absolute
  "name=NAME:AGENT"       any agent answering to NAME (a bot with its name hard-coded),
                          e.g. "name=Otter:java -cp bots Otter"; or agent:depth=4,name=Walrus

encoding: the referee decodes move_file strictly with this machine's locale encoding, as
the real one's Python does; --encoding ENC rehearses another machine's (cp1252 for
Windows, latin-1) and is passed on as --encoding ENC to every built-in agent.  A file
the referee cannot decode aborts the game: the real referee would crash.

output (agent 1's view; error bars at 95 %, pentanomial over pairs when paired):
  Score of A vs B: W - L - D  [score] games
  Elo difference: E +/- err, LOS: x %, DrawRatio: y %
  Ptnml(0-2): [pairs scoring 0, 1/2, 1, 3/2, 2 points]
  SPRT: llr L (p%), lbound a, ubound b   (GSPRT on the expected score, logistic Elo,
        regularised as fishtest and fastchess do: one won pair adds ~0.06 at --sprt 0 20)

files in --out (created if missing): series.json, games.jsonl (one JSON line per game;
its keys in docs/formats.md), logs/ (each agent's output per game).
Without --out they go to a temporary directory that is deleted at the end.

time limit: at least 0.1 s (the referee looks for a move every 50 ms); the real referee
takes whole seconds, other limits are for rehearsal.  The built-in agents are always given
the series' limit; an agent command gets it through {time_limit}.  After end_game the
game's files stay until both agents have exited (at most max(3 s, limit + 1 s), then a
still-running agent is killed and counted as a hang).

stopping: Ctrl-C, SIGTERM (kill, timeout, a cancelled CI job) and SIGHUP (the terminal or
ssh session closed; not under nohup) stop the series alike: the games still running are
aborted and their agents killed (each agent's whole process group), the temporary
directory is removed, the games finished so far are summarised, and the last line gives
the command that continues the series (--resume --out DIR: its settings come from
series.json; an option that contradicts them is refused, --games may grow or shrink it).
An agent whose runner was killed outright (SIGKILL) finds out by itself (UTTT_RUNNER_PID
in its environment) and exits.  Without --out, the logs of games that went wrong (time-out,
bad move, crash, hang) are moved to a uttt-logs-* folder of the temporary directory, which
is kept and named in the output.

exit codes: 0 the series ran, 1 an agent could not start in the first game (its command
is wrong: the series stops rather than score forfeits), 2 bad arguments (a bare word that
is neither a built-in nor a command on the PATH, such as "Random"), 130 Ctrl-C, 143
SIGTERM, 129 SIGHUP (128 + the signal; the games played so far are kept), 141 the output
was closed (| head).

examples:
  python -m ref_sim.match agent random --games 1 --time-limit 1 --show
  python -m ref_sim.match agent seed:depth=4 --games 100 --time-limit 0.5 --seed 1
  python -m ref_sim.match agent agent:depth=4 --sprt 0 10 0.05 0.05 --out runs/a --resume
  python -m ref_sim.match --resume --out runs/a""")
    add_agents(parser, "agent")
    # Settings a series keeps (series.json) default to None: given or not, --resume knows.
    parser.add_argument("--games", type=whole(1, MAX_GAMES), default=None,
                        help="games to play (default 2; with --sprt a maximum, default "
                             f"{SPRT_MAX_GAMES}); rounded up to whole pairs when paired; with "
                             "--resume it may grow or shrink the series")
    # Below 0.1 s check_time_limit says why; here nan, inf and hours are refused.
    parser.add_argument("--time-limit", type=real(-math.inf, MAX_SECONDS), default=None,
                        metavar="S", help="seconds per move (default 10)")
    parser.add_argument("--seed", type=int, help="seed of the series: openings, who moves "
                        "first, the agents' seeds (default: random, printed)")
    parser.add_argument("--out", help="directory for the games, logs and records "
                                      "(default: a new temporary directory)")
    parser.add_argument("--resume", action="store_true", help=RESUME_HELP)
    pairing = parser.add_mutually_exclusive_group()
    pairing.add_argument("--paired", action="store_true", default=None,
                         help="each opening twice, sides swapped (the default)")
    pairing.add_argument("--unpaired", dest="paired", action="store_false",
                         help="one game per opening, a coin flip for who moves first")
    parser.add_argument("--concurrency", type=whole(1), default=1, metavar="N",
                        help="games at once (default 1; at most the number of cores - 1)")
    stats.add_sprt_option(parser, "0 10 0.05 0.05")
    parser.add_argument("--show", action="store_true", help="print the boards as games go")
    parser.add_argument("-q", "--quiet", action="store_true", help="only the final summary")
    parser.add_argument("--encoding", metavar="ENC",
                        help="the referee's encoding, also given to the built-in agents "
                             f"(default: this machine's, {locale_encoding()})")
    cluster.add_cluster_options(parser, note="each worker plays cores - 1 games at once")
    isolation.add_options(parser)
    launch.add_wait_options(parser, STARTUP_WAIT, EXIT_WAIT, ", or one time limit and a second")
    return parser


def game_settings(args, isolate: isolation.Isolation | None) -> FileGameSettings:
    """How each game is played, from the parsed command line."""
    return FileGameSettings(args.time_limit, encoding=args.encoding, isolate=isolate,
                            show=args.show, **launch.waits_given(args))


@console.entry_point(MODULE)
def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    isolation.check_options(parser, args)
    cluster.check_options(parser, args)
    check_agents(parser, args, "agent")
    stats.check_sprt_option(parser, args.sprt)
    if args.encoding is not None:
        try:
            args.encoding = check_encoding(args.encoding)
        except ValueError as error:
            parser.error(str(error))
    given = {"agents": None if args.agent1 is None else [args.agent1, args.agent2],
             "time_limit": args.time_limit, "paired": args.paired, "encoding": args.encoding,
             "seed": args.seed, "sprt": args.sprt, "games": args.games,
             "isolate": isolation.recorded_setting(isolation.from_args(args))}
    defaults = {"agents": None, "time_limit": 10.0, "paired": True, "encoding": None,
                "seed": random.randrange(2 ** 32), "sprt": None, "games": None, "isolate": None}
    flags = {"agents": "AGENT1 AGENT2", "time_limit": "--time-limit", "paired": "--paired",
             "encoding": "--encoding", "seed": "--seed", "sprt": "--sprt", "games": "--games",
             "isolate": "--isolate"}
    try:
        settings, recorded = series_settings(Path(args.out) if args.out else None, args.resume,
                                             given, defaults, flags)
        specs = [agent_spec(text) for text in settings["agents"]]
        if recorded is not None:
            keep_recorded_names(specs, recorded.get("names"))
        realbots.side_names(specs)              # a clash of names: refused before any game
        args.isolated_as_recorded = isolation.resume_setting(args, settings["isolate"])
    except ValueError as error:
        parser.error(str(error))
    if args.out:        # created once the settings are known: a refused --resume makes nothing
        problem = prepare_out(args.out)
        if problem:
            parser.error(problem)
    limit_error, limit_warning = check_time_limit(settings["time_limit"])
    if limit_error:
        parser.error(limit_error)
    (args.agent1, args.agent2), args.time_limit = settings["agents"], settings["time_limit"]
    args.paired, args.encoding, args.seed = settings["paired"], settings["encoding"], settings["seed"]
    args.sprt = settings["sprt"]
    if settings["games"] is None:
        settings["games"] = SPRT_MAX_GAMES if args.sprt else 2
    args.games = settings["games"]
    say = (lambda *a, **k: None) if args.quiet else print

    games_wanted = args.games
    if args.paired and args.games > 1 and args.games % 2:
        args.games += 1
        say(f"--games {games_wanted} rounded up to {args.games}: openings are played in pairs "
            "(--unpaired for an odd number)")
    elif args.paired and args.games == 1:
        say("--games 1: one game, the first of its opening pair")
    if recorded is not None and recorded.get("games") not in (None, args.games):
        say(f"the series now has {args.games} games (it had {recorded['games']})")

    concurrency = capped_concurrency(args.concurrency)
    if args.show and concurrency > 1:
        print("warning: --show plays one game at a time", file=sys.stderr)
        concurrency = 1

    if limit_warning:
        print(limit_warning, file=sys.stderr)
    address = cluster.cluster_target(args)
    if address and args.show:
        parser.error("--show plays here, one game at a time: not with --cluster")
    with records.lock_out(args.out, console.prog(MODULE), argv):     # one runner per --out
        return run_in(parser, address, args.out, "uttt-match-", lambda runner, out: _run_series(
            args, parser, specs, out, say, concurrency, runner), concurrency)


def _run_series(args, parser, specs, out: Path, say, concurrency: int, runner) -> int:
    names = realbots.side_names(specs)
    logs = out / "logs"
    records.make_dirs(logs)
    games_path = out / "games.jsonl"
    recorded = records.recorded_games(games_path)
    if recorded and not args.resume:
        parser.error(f"{games_path} already holds {recorded} games: "
                     "add --resume to continue that series, or choose another --out")
    series_seed = args.seed
    records.write_json(out / "series.json",
        {"format": FORMAT, "seed": series_seed, "agents": [args.agent1, args.agent2],
         "names": names, "time_limit": args.time_limit, "paired": args.paired,
         "encoding": args.encoding, "games": args.games, "sprt": args.sprt,
         "isolate": isolation.recorded_setting(isolation.from_args(args))})
    done = records.resume_games(games_path)     # bad lines: a warning, played again

    done = [g for g in done if g["game"] <= args.games]
    done_numbers = {g["game"] for g in done}
    todo = [k for k in range(1, args.games + 1) if k not in done_numbers]
    say(f"{names[0]}: {specs[0].template}\n{names[1]}: {specs[1].template}\n"
        f"series seed {series_seed}; {args.games} game{'s' if args.games > 1 else ''}"
        + (" in pairs" if args.paired else "") + f" at {args.time_limit:g} s per move"
        + (f", {concurrency} at once" if concurrency > 1 and not runner.remote else "")
        + (f", on {len(runner.slots())} cluster worker(s), {runner.capacity()} at once"
           if runner.remote else "")
        + (f"; games, logs and records in {out}" if args.out else
           "; games and logs in a temporary directory, deleted at the end (--out DIR "
           "keeps them), but for the logs of games that go wrong"))
    if done:
        say(f"resuming: {len(done)} of {args.games} games already played, {len(todo)} to go")

    games = list(done)
    isolate = isolation.from_args(args)
    if isolate is not None:
        say(isolation.status_line(isolate, concurrency))
        if getattr(args, "isolated_as_recorded", False):
            say("isolated as the series began: --resume keeps the isolation it recorded")
    play = FileGames(specs, names, series_seed, game_settings(args, isolate), out, paired=args.paired)
    # On a terminal the line is redrawn (not with --show, whose boards scroll); elsewhere
    # a line per game and the figures every few games.
    progress = None if args.quiet else Progress(
        args.games, terminal=sys.stdout.isatty() and not args.show, done=len(done))
    decided = None
    if done and args.sprt:          # a resumed series may have been decided already
        decided = summarize(games, names, args.paired, args.sprt).sprt.decision

    def submit(k: int):
        return play.submit(runner, k, must_start=len(games) == len(done))   # none finished yet

    def finished(k: int, ticket) -> None:
        nonlocal decided
        game = play.line(runner, ticket, k)
        if game is None:
            return
        append_game(games_path, game)
        games.append(game)
        summary = summarize(games, names, args.paired, args.sprt)
        if summary.sprt is not None and summary.sprt.decision:
            decided = summary.sprt.decision
        if progress is not None:
            used = isolation.usage_line(game) if isolate is not None else None
            progress.game(f"Game {k}/{args.games}: {describe(game)}" + (f" -- {used}" if used else ""),
                          notable=went_wrong(game))
            progress.update(len(games), summary)

    if progress is not None and progress.terminal:
        progress.update(len(games), summarize(games, names, args.paired, args.sprt))
    # How the series ends early: Ctrl-C or a stop signal, the output closed (| head), or an
    # agent that cannot start in the first games of this run (its command is wrong).
    stopped = play_games(runner, todo, submit, finished, play.stop,
                         wanted=lambda: decided is None)
    return conclude(MODULE, games, lambda games: report_lines(games, names, args.paired, args.sprt),
                    out_arg=args.out, out=out, say=say, progress=progress,
                    resume_options=isolation.command_options(isolate),
                    figures=lambda games: summarize(games, names, args.paired, args.sprt),
                    decided=decided, **stopped)


if __name__ == "__main__":
    sys.exit(main())
