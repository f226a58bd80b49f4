"""Openings, and the schedule of a series: each game's opening, who moves first, and its seeds.

Three ways of drawing an opening, each keeping the random numbers it has always drawn (a seed
still gives the games it gave): the real referee's ``first_four_moves`` (``referee_opening``, in
:mod:`ref_sim.referees.file_shell`: every series), :func:`cell_opening` for in-process
self-play, and :func:`random_opening` for any game of the family (the arena). Both games of a pair
share an opening, the other agent moving first; game ``k`` depends only on the series seed and
``k``, so it is the same game in a fresh series, after a resume, or with more games scheduled.

>>> a = schedule(7, 4)
>>> a[0].opening == a[1].opening and a[0].first != a[1].first
True
>>> schedule(7, 6)[:4] == a
True
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ref_sim.referees.file_referee import referee_opening


@dataclass(frozen=True)
class Scheduled:
    """One game of the series."""
    index: int                          # 1-based game number
    pair: int | None                    # 0-based pair number, None when unpaired
    opening: tuple[tuple[int, int], ...]    # four (board, spot), p1's first
    first: int                          # 0: agent 1 is p1 (X), 1: agent 2 is
    seed: int                           # the referee's seed for this game
    agent_seeds: tuple[int, int]        # {seed} of agent 1 and agent 2 (random players)


def cell_opening(rng: random.Random, length: int = 4) -> list[int]:
    """``length`` chained moves like the referee's, as cell numbers (``board * 9 + spot``):
    a random board, then each move a free spot of the previous spot's board.  Self-play's and
    the training games' draw: their seeds give the openings they always gave."""
    board = rng.randrange(9)
    moves, used = [], set()
    while len(moves) < length:
        spot = rng.choice([s for s in range(9) if board * 9 + s not in used])
        moves.append(board * 9 + spot)
        used.add(board * 9 + spot)
        board = spot
    return moves


def random_opening(game, rng: random.Random, plies: int) -> list[int]:
    """``plies`` random moves of ``game`` (ref_sim.games) that leave it open (redrawn until they do)."""
    for _ in range(1000):
        state = game.new_state()
        moves = []
        while len(moves) < plies and state.winner is None:
            move = rng.choice(list(state.legal_moves()))
            state.push(move)
            moves.append(move)
        if state.winner is None:
            return moves
    raise ValueError(f"no opening of {plies} plies leaves the game open")


def _rng(series_seed: int, what: str, number: int) -> random.Random:
    return random.Random(f"uttt-match/{series_seed}/{what}/{number}")


def game(series_seed: int, index: int, paired: bool = True) -> Scheduled:
    """Game ``index`` (1-based) of the series."""
    own = _rng(series_seed, "game", index)
    seed = own.randrange(2 ** 32)
    agent_seeds = (own.randrange(2 ** 32), own.randrange(2 ** 32))
    if paired:
        pair, second = divmod(index - 1, 2)
        shared = _rng(series_seed, "pair", pair)
        opening = referee_opening(shared)
        first = shared.randrange(2) ^ second     # the coin flip; swapped in the second game
    else:
        pair = None
        opening = referee_opening(own)
        first = own.randrange(2)
    return Scheduled(index, pair, opening, first, seed, agent_seeds)


def schedule(series_seed: int, games: int, paired: bool = True) -> list[Scheduled]:
    """Games 1..``games`` of the series."""
    return [game(series_seed, index, paired) for index in range(1, games + 1)]
