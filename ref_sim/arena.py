"""Engine-vs-engine series for any game of the family, in one process (no referee files).

    python -m ref_sim.arena qubic alphabeta random --games 10 --seconds 0.2
    python -m ref_sim.arena nineboard alphabeta:depth=4 alphabeta:depth=2 --games 40 --seed 3
    python -m ref_sim.arena uttt alphabeta alphabeta:lmr=0 --nodes 20000 --sprt 0 20 0.05 0.05
    python -m ref_sim.arena uttt alphabeta seed --depth 4 --games 1000 --cluster tcp://head:8786

Engines and their options, paired openings, the SPRT, a cluster and stops:
docs/bench.md ("In one process: the arena"). Exit codes: 0 done, 1 a game lost every cluster
worker that tried it, 2 bad command line or cluster, 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP,
141 output closed.
"""

from __future__ import annotations

import argparse
import functools
import random
import sys
import threading
from dataclasses import dataclass, field

from ref_sim import stops
from ref_sim.series.run import cluster, cluster_address, scheduler
from ref_sim.series.stats import match_stats, ratings
from ref_sim.series.loop import play_games
from ref_sim.series.openings import random_opening
from agent.cli_common import OneLineParser, say_error, silence_output
from agent.engines import make_engine, parse_engine_spec
from ref_sim.games import GAMES, get_game
from agent.limits import SearchLimit
from agent.options import search_depth, search_nodes, seconds_per_move, whole
from ref_sim.series.command import MAX_GAMES

MODULE = "ref_sim.arena"
SPRT_MAX_GAMES = match_stats.SPRT_MAX_GAMES
EXIT_CLUSTER_LOST = 1   # a game lost every cluster worker that tried it


@dataclass
class EngineGame:
    """One game of an arena series, two engines in this process (or a cluster worker's): no
    referee, so no verdict but the rules' result."""
    pair: int
    first: int                  # which engine (0 = A, 1 = B) played X
    opening: list[int]
    moves: list[int]            # after the opening
    winner: int | None          # engine 0 or 1, None for a draw
    worker: str | None = None   # the cluster worker that played it (None: played here)
    attempts: int = 1           # times it was started (more than one: a worker was lost)

    @property
    def score_a(self) -> float:
        return 0.5 if self.winner is None else 1.0 if self.winner == 0 else 0.0


@dataclass
class EngineSeries:
    """An arena series so far: the engines' names (A first), the games in schedule order and
    the SPRT it runs; its figures are :mod:`ref_sim.series.stats`' over engine A's points."""
    names: tuple[str, str]
    games: list[EngineGame] = field(default_factory=list)
    sprt: tuple[float, float, float, float] | None = None  # (elo0, elo1, alpha, beta)

    def record(self) -> ratings.Record:
        """Engine A's wins, losses and draws."""
        return functools.reduce(ratings.Record.add, (g.score_a for g in self.games), ratings.Record())

    @property
    def wins(self) -> int:
        return self.record().wins

    @property
    def losses(self) -> int:
        return self.record().losses

    @property
    def draws(self) -> int:
        return self.record().draws

    def ptnml(self) -> list[int]:
        return match_stats.paired_pentanomial((g.pair, g.score_a) for g in self.games)

    def sprt_result(self) -> match_stats.SprtResult | None:
        """The SPRT over the complete pairs, when the series runs one."""
        return None if self.sprt is None else match_stats.sprt(*self.sprt, ptnml=self.ptnml())

    def report_lines(self) -> list[str]:
        """The match runner's summary (and the SPRT's line), then (a series on a cluster) each
        worker's games and how many games were retried; an in-process game has no referee, so
        no time-outs."""
        played_on = [(g.worker, g.attempts, None) for g in self.games]
        record = self.record()
        lines = match_stats.summary_lines(self.names, record.wins, record.losses, record.draws, self.ptnml())
        result = self.sprt_result()
        if result is not None:
            lines.append(result.report_line(*self.sprt[:2]))
        return lines + cluster.worker_lines(played_on, timeout_reason="Time out!")


def play_engine_game(game, engines, opening, first: int, limit_kwargs: dict):
    """One game from ``opening``; ``engines[first]`` plays X. Returns (moves after the opening,
    winner as engine index or None). Every move is checked against the rules."""
    state = game.new_state()
    for move in opening:
        state.push(move)
    # X belongs to engines[first] (with an odd opening, O moves first after it).
    by_side = {0: engines[first], 1: engines[1 - first]}
    moves = []
    while state.winner is None:
        limit = SearchLimit.seconds(limit_kwargs["seconds"]) if limit_kwargs.get("seconds") else \
            SearchLimit(depth=limit_kwargs.get("depth"), nodes=limit_kwargs.get("nodes"))
        move = by_side[state.turn].choose(state, limit).move
        if move not in state.legal_moves():
            raise RuntimeError(f"engine {by_side[state.turn]!r} chose an illegal move {move}")
        state.push(move)
        moves.append(move)
    if state.winner in (0, 1):
        winner = first if state.winner == 0 else 1 - first
    else:
        winner = None
    return moves, winner


def play_scheduled_game(game_name: str, specs: tuple[str, str], seeds: tuple[int, int],
                        opening: list[int], first: int, limit_kwargs: dict):
    """One game of a series from plain, picklable values, so a cluster worker can play it:
    fresh engines from ``specs`` with ``seeds``, then :func:`play_engine_game`. Returns (moves after
    the opening, winner as engine index or None)."""
    game = get_game(game_name)
    engines = tuple(make_engine(spec, game, defaults={"seed": seed}) for spec, seed in zip(specs, seeds))
    return play_engine_game(game, engines, opening, first, limit_kwargs)


def plan_games(game, games: int, seed: int, plies: int) -> list[tuple[int, list[int], int, tuple[int, int]]]:
    """Every game of a series as (pair, opening, first, (seed of A, seed of B)), drawn from one
    ``random.Random(seed)`` in play order: a pair's opening, then each game's two engine seeds.
    Drawn before any game is played, wherever the games are played."""
    rng = random.Random(seed)
    planned = []
    for pair in range((games + 1) // 2):
        opening = random_opening(game, rng, plies)
        for first in (0, 1):
            seeds = (rng.randrange(1 << 30), rng.randrange(1 << 30))
            planned.append((pair, opening, first, seeds))
    return planned


def run_series(game, spec_a: str, spec_b: str, games: int, seed: int = 0, opening_plies: int | None = None,
               seconds: float | None = None, depth: int | None = None, nodes: int | None = None,
               on_game=None, runner=None, sprt=None, play=play_scheduled_game) -> EngineSeries:
    """Play ``games`` games (rounded up to pairs) between two engine specs, here one after the
    other, or through ``runner`` (an :class:`ref_sim.series.run.cluster.ClusterRunner`) several at once;
    either way ``on_game`` sees the games in schedule order. ``sprt`` (elo0, elo1, alpha, beta):
    stop once the SPRT decides.  ``play``: what plays one game (:func:`play_scheduled_game`).

    The series engine's loop plays them (:func:`ref_sim.series.loop.play_games`), but not as a
    :class:`ref_sim.series.loop.SeriesGames` reported by :mod:`ref_sim.series.output.report`:
    those are a referee's games.jsonl lines (verdicts, logs shipped back from a worker, a forfeit
    when a program cannot start, an abort through a ``stop`` event, UTTT's board and spot moves),
    and an arena game has none of these: two engines search in this thread (an
    :class:`~ref_sim.series.run.scheduler.InlineRunner`, which only Ctrl-C stops) in any game of
    the family, and nothing is written. Its figures are :mod:`ref_sim.series.stats`' (:class:`EngineSeries`)."""
    parse_engine_spec(spec_a), parse_engine_spec(spec_b)  # fail before playing
    plies = game.opening_plies if opening_plies is None else opening_plies
    names = (f"{spec_a}#1", f"{spec_b}#2")
    series = EngineSeries(names, sprt=tuple(sprt) if sprt else None)
    limit_kwargs = {"seconds": seconds, "depth": depth, "nodes": nodes}
    if not (seconds or depth or nodes):
        limit_kwargs["seconds"] = game.seconds
    planned = plan_games(game, games, seed, plies)
    runner = scheduler.InlineRunner() if runner is None else runner

    def submit(number: int):
        pair, opening, first, seeds = planned[number - 1]
        return runner.submit(f"game-{number}", play, game.name, (spec_a, spec_b),
                             seeds, opening, first, limit_kwargs)

    def finished(number: int, ticket) -> None:
        pair, opening, first, _ = planned[number - 1]
        record = EngineGame(pair, first, opening, *ticket.result())
        if runner.remote:
            record.worker, record.attempts = ticket.worker, runner.attempts(ticket)
        series.games.append(record)
        if on_game is not None:
            on_game(record, series)

    def undecided() -> bool:
        """No SPRT, or not decided at the end of a pair."""
        return not (series.sprt and series.games and series.games[-1].first == 1
                    and series.sprt_result().decision)

    # In schedule order (on_game, the SPRT); an interrupted series drops the games not handled.
    stopped = play_games(runner, range(1, len(planned) + 1), submit, finished, threading.Event(),
                         wanted=undecided, ordered=True)
    stopped.raise_error()
    return series


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=stops.invoked_as(MODULE), description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("game", choices=list(GAMES))
    parser.add_argument("engine_a")
    parser.add_argument("engine_b")
    parser.add_argument("--games", type=whole(1, MAX_GAMES), default=None,
                        help=f"games to play, rounded up to pairs (default 10; with --sprt a maximum, "
                             f"default {SPRT_MAX_GAMES})")
    effort = parser.add_mutually_exclusive_group()
    effort.add_argument("--time-limit", "--seconds", dest="seconds", type=seconds_per_move,
                        help="seconds per move, more than 0 (default: the game's, e.g. qubic 5)")
    effort.add_argument("--depth", type=search_depth, help="fixed search depth per move")
    effort.add_argument("--nodes", type=search_nodes, help="fixed node budget per move")
    parser.add_argument("--seed", type=int, default=0, help="series seed: openings and random engines")
    parser.add_argument("--opening-plies", type=whole(0), default=None,
                        help="random plies before each pair's games (default: ttt 1, nineboard 2, qubic 2, uttt 4)")
    match_stats.add_sprt_option(parser, "0 20 0.05 0.05")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every game's moves")
    cluster_address.add_cluster_options(parser, note="start workers with --nthreads 1: a game holds "
                                             "its worker's GIL")
    return parser


def main(argv=None, stdout=None, *, connect=cluster.connect, play=play_scheduled_game) -> int:
    """The command; a stop signal anywhere (ref_sim.stops) ends in one line and 128 + its number.
    ``connect``: how a cluster is reached (:func:`ref_sim.series.run.cluster.connect`); ``play``:
    what plays one game (:func:`play_scheduled_game`)."""
    return stops.guarded(stops.invoked_as(MODULE), _main, argv, stdout, connect, play)


def _main(argv, stdout, connect, play) -> int:
    out = stdout if stdout is not None else sys.stdout
    prog = stops.invoked_as(MODULE)
    parser = build_parser()
    args = parser.parse_args(argv)
    game = get_game(args.game)
    match_stats.check_sprt_option(parser, args.sprt)
    if args.games is None:
        args.games = SPRT_MAX_GAMES if args.sprt else 10
    for spec in (args.engine_a, args.engine_b):
        try:
            make_engine(spec, game)  # options the engine refuses too (threads=2 for the Python core)
        except ValueError as error:
            parser.error(str(error))
    plies = game.opening_plies if args.opening_plies is None else args.opening_plies
    try:
        random_opening(game, random.Random(args.seed), plies)
    except ValueError as error:
        parser.error(f"--opening-plies {plies}: {error} in {args.game}")

    address = cluster_address.cluster_target(args)
    if not address:
        return _play(args, game, out, None, play)
    try:
        runner = connect(address, say=lambda message: say_error(prog, message))
    except cluster_address.ClusterError as error:
        parser.error(str(error))
    except KeyboardInterrupt as interrupt:
        say_error(prog, f"{stops.said(interrupt)} while connecting to the cluster")
        return stops.exit_code(interrupt)
    with runner:
        print(f"arena: on {len(runner.slots())} cluster worker(s), {runner.capacity()} games at once",
              file=out, flush=True)
        return _play(args, game, out, runner, play)


def _play(args, game, out, runner, play) -> int:
    """The series and its summary, here or through ``runner``; the exit code."""
    prog = stops.invoked_as(MODULE)
    so_far: list[EngineSeries] = []

    def on_game(record: EngineGame, series: EngineSeries) -> None:
        so_far[:] = [series]
        if args.verbose:
            state = game.new_state()
            texts = []
            for m in record.opening + record.moves:
                texts.append(game.format_move(state, m))
                state.push(m)
            result = "draw" if record.winner is None else f"{series.names[record.winner]} wins"
            print(f"game {len(series.games)}: X={series.names[record.first]} opening "
                  f"[{', '.join(texts[:len(record.opening)])}] then [{', '.join(texts[len(record.opening):])}]: "
                  f"{result}", file=out, flush=True)

    def report_so_far() -> str:
        """Print the summary of the games played so far (if any); say how many there were."""
        played = so_far[0].games if so_far else []
        if played:
            for line in so_far[0].report_lines():
                print(line, file=out, flush=True)
        return f"{len(played)} game{'' if len(played) == 1 else 's'}"

    try:
        try:
            series = run_series(game, args.engine_a, args.engine_b, args.games, seed=args.seed,
                                opening_plies=args.opening_plies, seconds=args.seconds, depth=args.depth,
                                nodes=args.nodes, on_game=on_game, runner=runner, sprt=args.sprt,
                                play=play)
        except KeyboardInterrupt as interrupt:      # Ctrl-C, SIGTERM, SIGHUP (ref_sim.stops)
            say_error(prog, f"{stops.said(interrupt)} after {report_so_far()}")
            return stops.exit_code(interrupt)
        except cluster_address.ClusterError as error:       # every worker that tried a game died
            say_error(prog, f"stopped after {report_so_far()}: {error}")
            return EXIT_CLUSTER_LOST
        for line in series.report_lines():
            print(line, file=out, flush=True)
    except BrokenPipeError:
        silence_output(out)
        say_error(prog, "output closed (broken pipe)")
        return stops.EXIT_BROKEN_PIPE
    return 0


if __name__ == "__main__":
    sys.exit(main())
