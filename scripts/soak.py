"""Soak test: many games through the simulated referee on a busy machine; no game may be lost
to time, a bad move or a crash.

    python -m scripts.soak [--games 100] [--limits 2 0.5]
                           [--opponents random seed eager flood nbsp]
                           [--seed 1] [--out DIR] [--no-hog] [--quick]

A full soak takes about 40 minutes; --quick plays one pair per opponent at 0.5 s (10 games) as
a smoke test. The conditions, what it prints and its exit codes: docs/measurements.md. Exit code
0 when every target (no time-out, invalid move, crash or hang) is met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import codecs
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from ref_sim import stops
from agent.options import MAX_TIME_LIMIT, real, whole
from ref_sim.series.command import MAX_GAMES
from ref_sim.series import file_games, loop as series, realbots
from ref_sim.series.run import scheduler
from ref_sim.series.output import records, report
from ref_sim.series.output.game_line import GameLine
from ref_sim.referees.file_referee import INVALID_MOVE, OUT_OF_ORDER, TIME_OUT
from ref_sim.referees.file_shell import check_time_limit
from ref_sim.series.specs import agent_spec
OURS = "agent"
DEFAULT_GAMES = 100
DEFAULT_LIMITS = (2.0, 0.5)
DEFAULT_OPPONENTS = ("random", "seed", "eager", "flood", "nbsp")
#: --quick: one pair per opponent at these limits.
QUICK_LIMITS = (0.5,)
#: Opponents played under a Latin-1 locale (see latin1_locale).
LATIN1_OPPONENTS = ("nbsp",)
#: Where the system has no Latin-1 locale, ``localedef -i en_US -f ISO-8859-1`` builds one
#: (no root needed) into a temporary LOCPATH.
LATIN1_LOCALES = ("en_US.ISO-8859-1", "en_US.ISO8859-1")
#: Rough seconds per game at a limit: our agent thinks to ~90 % of it about 20 times a game.
SECONDS_PER_GAME_PER_LIMIT_SECOND = 20.0


@dataclass
class Tally:
    """What happened to our agent over some games."""
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    time_outs: int = 0
    invalid_moves: int = 0
    crashes: int = 0
    hangs: int = 0
    aborted: int = 0
    their_out_of_order: int = 0     # the opponent wrote out of turn: our win
    slowest: float = 0.0            # referee's measure / limit
    slowest_own: float = 0.0        # agent's own measure / limit
    where: list[str] = field(default_factory=list)   # "0.5 s vs seed, game 7: Time out!"

    def add(self, game: GameLine, ours: str, label: str) -> None:
        self.games += 1
        limit = game.time_limit
        if game.result == "tie":
            self.draws += 1
        elif game.result == "win":
            if game.winner == ours:
                self.wins += 1
                self.their_out_of_order += game.reason == OUT_OF_ORDER
            else:
                self.losses += 1
        else:
            self.aborted += 1
            self.where.append(f"{label}, game {game.game}: aborted ({game.reason})")
        if game.result == "win" and game.loser == ours:
            if game.reason == TIME_OUT:
                self.time_outs += 1
            elif game.reason in (INVALID_MOVE, OUT_OF_ORDER):
                self.invalid_moves += 1
            if game.reason in (TIME_OUT, INVALID_MOVE, OUT_OF_ORDER):
                self.where.append(f"{label}, game {game.game}: {game.reason}")
        note = game.notes.get(ours, "")
        if note.startswith("crashed"):
            self.crashes += 1
        elif note:
            self.hangs += 1
        if note:
            self.where.append(f"{label}, game {game.game}: {note}")
        mine = [m for m in game.moves if m["player"] == ours]
        self.slowest = max([self.slowest] + [m["seconds"] / limit for m in mine])
        self.slowest_own = max([self.slowest_own] + [m["agent_seconds"] / limit
                                                     for m in mine if "agent_seconds" in m])

    def merge(self, other: Tally) -> None:
        for name in ("games", "wins", "losses", "draws", "time_outs", "invalid_moves", "crashes",
                     "hangs", "aborted", "their_out_of_order"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.slowest = max(self.slowest, other.slowest)
        self.slowest_own = max(self.slowest_own, other.slowest_own)
        self.where += other.where

    def failures(self) -> int:
        return self.time_outs + self.invalid_moves + self.crashes + self.hangs

    def line(self, label: str) -> str:
        return row(label, self.games, f"{self.wins}-{self.losses}-{self.draws}", self.time_outs,
                   self.invalid_moves, self.crashes, self.hangs, self.their_out_of_order,
                   f"{self.slowest:.2f}", f"{self.slowest_own:.2f}")


def row(*cells) -> str:
    widths = (-18, 5, 11, 10, 8, 8, 6, 10, 8, 6)    # negative: left-aligned
    return "".join(f"{str(c):<{-w}}" if w < 0 else f"{str(c):>{w}}" for c, w in zip(cells, widths))


HEADER = row("", "games", "W-L-D", "time-outs", "invalid", "crashes", "hangs", "their-ooo",
             "slowest", "own")
RULE = "-" * len(HEADER)


@contextmanager
def cpu_hog(enabled: bool):
    """A busy loop in another process, killed at the end."""
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if enabled else None
    try:
        yield
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()


def plays_in_latin1(opponent: str) -> bool:
    return opponent.partition(":")[0] in LATIN1_OPPONENTS


def preferred_encoding(env: dict) -> str | None:
    """The codec a Python started with ``env`` added reads files with (the referee's under
    that locale), or None if that Python cannot tell."""
    probe = "import locale; print(locale.getpreferredencoding(False))"
    try:
        done = subprocess.run([sys.executable, "-c", probe], env={**os.environ, **env},
                              capture_output=True, text=True, timeout=30)
        return codecs.lookup(done.stdout.strip()).name if done.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, LookupError):
        return None


@dataclass
class Latin1:
    """How the Latin-1 opponents are played: ``env`` for the agents (a locale) and the
    referee's encoding, or ``encoding`` for all three; ``how``: one line saying which."""
    how: str
    env: dict | None = None
    referee_encoding: str | None = None
    encoding: str | None = None


@contextmanager
def latin1_locale(locales: tuple[str, ...] = LATIN1_LOCALES):
    """A Latin-1 locale to run the referee and the agents under: the system's (one of
    ``locales``), or one ``localedef`` builds into a temporary directory (deleted at the end) as
    the first of them; where neither works, ``--encoding latin-1`` for the referee and both agents."""
    for name in locales:
        if preferred_encoding({"LC_ALL": name}) == "iso8859-1":
            yield Latin1(f"under the system's locale {name}", env={"LC_ALL": name},
                         referee_encoding="iso8859-1")
            return
    built = tempfile.mkdtemp(prefix="uttt-locale-")
    try:
        env = {"LOCPATH": built, "LC_ALL": locales[0]}
        try:
            made = subprocess.run(["localedef", "-i", "en_US", "-f", "ISO-8859-1",
                                   os.path.join(built, locales[0])],
                                  capture_output=True, text=True, timeout=120)
            why = (made.stderr.strip().splitlines() or [f"exit code {made.returncode}"])[-1]
        except (OSError, subprocess.SubprocessError) as error:
            why = f"localedef: {error}"
        # localedef may warn and still build it: the locale is judged by what Python reads.
        if preferred_encoding(env) == "iso8859-1":
            yield Latin1(f"under the locale {locales[0]} built by localedef in {built}",
                         env=env, referee_encoding="iso8859-1")
        else:
            yield Latin1(f"no Latin-1 locale ({why}): --encoding latin-1 given to the referee "
                         "and both agents", encoding="iso8859-1")
    finally:
        shutil.rmtree(built, ignore_errors=True)


def play_share(limit: float, opponent: str, games: int, seed: int, out: Path, runner, on_game,
               latin1: Latin1 | None = None, *, play=file_games.play_game) -> dict:
    """``games`` games of our agent against ``opponent`` at ``limit`` through ``ref_sim.match``'s
    games (:class:`ref_sim.series.file_games.FileGames`) on the series engine's loop, one at a time on
    ``runner``; each finished game goes to ``out/games.jsonl`` and to ``on_game(game)``.
    ``latin1``: play them in Latin-1 (the referee, our agent and the opponent); ``play``: what
    plays each game (:func:`ref_sim.series.file_games.play_game`).  Returns how
    they stopped early (:func:`ref_sim.series.loop.play_games`: false when they did not)."""
    latin1 = latin1 or Latin1("")
    specs = [agent_spec(OURS), agent_spec(opponent)]
    # The referee burns a core between its ticks, as the real one does.
    settings = file_games.FileGameSettings(limit, encoding=latin1.encoding, env=latin1.env,
                                           referee_encoding=latin1.referee_encoding, busy_poll=True)
    share = file_games.FileGames(specs, realbots.side_names(specs), seed, settings, out, play=play)
    records.make_dirs(share.logs)

    def finished(k: int, ticket) -> None:
        game = share.line(runner, ticket, k)
        if game is None:
            return                                  # Ctrl-C: not a game
        series.append_game(out / "games.jsonl", game)
        on_game(game)

    return series.play_games(runner, range(1, games + 1),
                             lambda k: share.submit(runner, k, must_start=False), finished, share.stop)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m scripts.soak", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=whole(1, MAX_GAMES), default=None,
                        help=f"games in all, split over limits and opponents (default {DEFAULT_GAMES})")
    parser.add_argument("--limits", type=real(0, MAX_TIME_LIMIT, low_open=True), nargs="+", default=None,
                        metavar="S",
                        help=f"time limits in seconds (default {' '.join(f'{x:g}' for x in DEFAULT_LIMITS)})")
    parser.add_argument("--opponents", nargs="+", default=list(DEFAULT_OPPONENTS), metavar="AGENT",
                        help=f"ref_sim.match agents to play (default: {' '.join(DEFAULT_OPPONENTS)}; "
                             f"{', '.join(LATIN1_OPPONENTS)} under a Latin-1 locale)")
    parser.add_argument("--seed", type=int, default=1, help="series seed: openings and agents' seeds")
    parser.add_argument("--out", help="directory for the games and logs (default: a new temporary one)")
    parser.add_argument("--no-hog", dest="hog", action="store_false", help="no CPU hog")
    parser.add_argument("--quick", action="store_true",
                        help=f"smoke test: one pair per opponent at {QUICK_LIMITS[0]:g} s unless given")
    return parser


def load_average() -> str:
    """The last minute's load average, where the system has one (Windows has none)."""
    return f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "unknown"


def main(argv: list[str] | None = None, *, play=file_games.play_game, latin1=latin1_locale) -> int:
    """The soak; SIGTERM and SIGHUP stop it as Ctrl-C does (ref_sim.stops).  ``play`` plays each
    game (:func:`ref_sim.series.file_games.play_game`); ``latin1()`` gives the Latin-1 opponents'
    conditions (:func:`latin1_locale`)."""
    return stops.guarded("soak", _main, argv, play=play, latin1=latin1)


def _main(argv: list[str] | None, *, play, latin1) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    limits = args.limits or list(QUICK_LIMITS if args.quick else DEFAULT_LIMITS)
    quick_games = 2 * len(limits) * len(args.opponents)
    total = args.games if args.games is not None else quick_games if args.quick else DEFAULT_GAMES
    for limit in limits:
        error, _ = check_time_limit(limit)
        if error:
            parser.error(error)
    try:
        for opponent in args.opponents:        # a typo, or a name=... that clashes with ours
            realbots.side_names([agent_spec(OURS), agent_spec(opponent)])
    except ValueError as error:
        parser.error(str(error))
    shares = [(limit, opponent) for limit in limits for opponent in args.opponents]
    per_share = -(-total // len(shares))
    per_share += per_share % 2                      # whole pairs
    problem = series.prepare_out(args.out) if args.out else None
    if problem:
        parser.error(problem)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="uttt-soak-"))
    estimate = sum(per_share * SECONDS_PER_GAME_PER_LIMIT_SECOND * limit for limit, _ in shares)
    print(f"soak: {per_share * len(shares)} games ({per_share} per limit and opponent: "
          f"{', '.join(f'{limit:g} s vs {opponent}' for limit, opponent in shares)}); "
          f"busy-polling referee{', CPU hog' if args.hog else ''}; {os.cpu_count()} cores, "
          f"load average {load_average()}; about {estimate / 60:.0f} min; files in {out}",
          flush=True)

    tallies: dict[str, Tally] = {}
    done = [0]
    started, cpu_started = time.monotonic(), time.process_time()
    interrupted = None
    latin1_wanted = any(map(plays_in_latin1, args.opponents))
    # The games in a thread of their own (scheduler.LocalRunner): Ctrl-C is seen while one plays.
    with cpu_hog(args.hog), scheduler.LocalRunner(1) as runner, \
            (latin1() if latin1_wanted else nullcontext()) as in_latin1:
        if in_latin1 is not None:
            print(f"{', '.join(LATIN1_OPPONENTS)}: referee and agents in Latin-1, {in_latin1.how}",
                  flush=True)
        for limit, opponent in shares:
            label = f"{limit:g} s vs {opponent}"
            tally = tallies.setdefault(label, Tally())

            def on_game(game, label=label, tally=tally):
                done[0] += 1
                tally.add(game, "Agent1", label)
                mine = [m for m in game.moves if m["player"] == "Agent1"]
                slowest = max((m["seconds"] for m in mine), default=0.0) / game.time_limit
                print(f"[{done[0]}/{per_share * len(shares)}] {label}: {report.describe(game)}; "
                      f"our slowest move {slowest:.2f} of the limit "
                      f"({time.monotonic() - started:.0f} s)", flush=True)

            where = out / f"{limit:g}s-{opponent.replace(':', '-')}"
            stopped = play_share(limit, opponent, per_share, args.seed, where, runner, on_game,
                                 in_latin1 if plays_in_latin1(opponent) else None, play=play)
            if stopped:         # Ctrl-C, SIGTERM, SIGHUP; a full disk; the output closed
                interrupted = stopped.error
                break
    if isinstance(interrupted, BrokenPipeError):
        raise interrupted                           # one line (ref_sim.stops.guarded), 141

    total_tally = Tally()
    print(f"\nour agent ({OURS}); their-ooo = games the opponent lost by writing out of turn "
          f"(Out-of-order move!: our win); slowest = slowest move / limit (the referee's measure, "
          f"then the agent's own); targets: 0 time-outs, invalid moves, crashes, hangs")
    print(HEADER)
    print(RULE)
    for label, tally in tallies.items():
        print(tally.line(label))
        total_tally.merge(tally)
    print(RULE)
    print(total_tally.line("all"))
    for where in total_tally.where:
        print(f"  !! {where}")
    wall = time.monotonic() - started
    # The referee runs in this process: busy-polling, it takes a whole core when it can get one
    # (one CPU-second per second); on a crowded machine the scheduler gives it less.
    print(f"{wall:.0f} s; referee (this process) {(time.process_time() - cpu_started) / max(wall, 1e-9):.2f} "
          f"CPU-s/s; load average now {load_average()}; games and logs in {out}")
    if interrupted:
        played = total_tally.games
        said = stops.said(interrupted) if isinstance(interrupted, KeyboardInterrupt) else \
            f"stopped: {interrupted};"
        print(f"soak: {said} after {played} game{'' if played == 1 else 's'}", file=sys.stderr)
        return stops.exit_code(interrupted) if isinstance(interrupted, KeyboardInterrupt) else 1
    return 0 if total_tally.failures() == 0 and total_tally.aborted == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
