"""Games between two engines inside one process, with no referee files: for tuning and quick checks.

Openings are drawn like the referee's (four chained random moves, no repeated cell), and each is
played twice with the sides swapped so that an unbalanced opening favours nobody.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass

from ref_sim import arena
from ref_sim.series.run import scheduler
from ref_sim.series.loop import play_games
from ref_sim.series.openings import cell_opening
from agent.core import make_searcher
from agent.engines import SearchEngine
from ref_sim.games import get_game

#: The self-play searcher's table: 2 MB holds a whole game's searches at several thousand nodes a
#: move, and making a larger one per side and game costs more than the game's search.
SELF_PLAY_HASH_MB = 2


@dataclass
class GameResult:
    winner: int | None  # index of the winning engine (0 or 1), None for a draw
    plies: int
    moves: list[int]


def play_uttt_game(engines, opening: list[int], first: int, seconds: float | None = None) -> GameResult:
    """Play one game; ``engines[first]`` moves first. ``seconds`` per move if the engines are not
    limited by depth or nodes themselves. ``moves`` in the result include the opening."""
    moves, winner = arena.play_engine_game(get_game("uttt"), engines, opening, first, {"seconds": seconds})
    played = list(opening) + moves
    return GameResult(winner, len(played), played)


def play_pairs(make_a, make_b, pairs: int, seed: int = 0, seconds: float | None = None, on_game=None,
               wanted=None):
    """Play ``pairs`` openings twice each (sides swapped); return (wins of A, wins of B, draws).

    ``make_a``/``make_b`` build fresh engines for each game, so no table carries over.  The
    games are the series engine's (:func:`ref_sim.series.loop.play_games`), played here one after
    the other; ``wanted()`` false plays no more (an SPRT decided).  Ctrl-C and a stop signal
    end the games where they are and are raised again.
    """
    rng = random.Random(seed)
    tally = [0, 0, 0]
    runner = scheduler.InlineRunner()
    games = ((opening, first) for opening in (cell_opening(rng) for _ in range(pairs)) for first in (0, 1))

    def submit(game):
        return runner.submit("game", play_uttt_game, (make_a(), make_b()), *game, seconds)

    def finished(_, ticket) -> None:
        result = ticket.result()
        tally[2 if result.winner is None else result.winner] += 1
        if on_game is not None:
            on_game(result, tally)

    play_games(runner, games, submit, finished, threading.Event(), wanted).raise_error()
    return tuple(tally)


def training_game(seed: int, make_engine, deviation: float = 0.04, deviate_until: int = 30) -> GameResult:
    """One self-play game for fitting the evaluation, fully determined by ``seed``.

    A referee-style random four-move opening, then ``make_engine()`` plays both sides (one fresh
    engine per side, fixed effort, so the game does not depend on the machine's load), except that
    before ply ``deviate_until`` each move is, with probability ``deviation``, a random legal move
    instead: many different middle games from few openings. ``winner`` is the side (0 = X, 1 = O)
    or None for a draw.
    """
    from agent.limits import SearchLimit
    from agent.rules import Position

    rng = random.Random(seed)
    opening = cell_opening(rng)
    position = Position.from_moves(opening)
    engines = (make_engine(), make_engine())
    while position.winner is None:
        moves = list(position.legal_moves())
        if position.ply < deviate_until and rng.random() < deviation:
            move = rng.choice(moves)
        else:
            move = engines[position.turn].choose(position, SearchLimit()).move
        position.push(move)
    winner = position.winner if position.winner in (0, 1) else None
    return GameResult(winner, position.ply, position.moves_played())


def selfplay_game(game_seed: int, nodes: int, engine_eval: str, deviation: float) -> tuple:
    """One game of ``scripts/train_eval.py generate``: (winner, plies, moves, scores), ``scores[ply]``
    the self-play search's score for the side to move there (None where it did not search: the
    opening and the random deviations). Here, in an installed package, so that a cluster worker
    can import it by name."""
    evaluator = self_play_evaluator(engine_eval)
    scores: list = []

    def engine():
        # A fresh searcher per side and game (an empty table: the game depends on its seed only)
        # around one evaluator per process: building the tables is most of a short game's time.
        searcher = make_searcher(evaluator, SELF_PLAY_HASH_MB, None, prefault=False)[0]
        return ScoreNoting(SearchEngine(searcher, nodes=nodes), scores)

    result = training_game(game_seed, engine, deviation=deviation)
    scores += [None] * (result.plies - len(scores))
    return result.winner, result.plies, result.moves, scores


class ScoreNoting:
    """An engine that notes its search's score at each ply it plays (the deep-search label)."""

    def __init__(self, engine, scores: list) -> None:
        self.engine, self.scores = engine, scores

    def choose(self, position, limit):
        result = self.engine.choose(position, limit)
        self.scores += [None] * (position.ply + 1 - len(self.scores))
        self.scores[position.ply] = result.score
        return result


def self_play_evaluator(engine_eval: str):
    """The self-play engine's evaluator by ``--engine-eval`` name: ``classic``, or a data file of
    agent/data by its stem (``eval-v1``), named so that the games do not change when the packaged
    default does (made once per process, also on a cluster's workers)."""
    from agent.eval_fitted import packaged_evaluator
    from agent.evaluation import Evaluator

    return Evaluator() if engine_eval == "classic" else packaged_evaluator(engine_eval)
