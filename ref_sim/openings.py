"""The schedule of a series: each game's opening, who moves first, and its seeds.

Openings are drawn like the real referee's (docs/protocol.md, "The opening: first_four_moves"): four
chained moves (each board is the previous move's spot), no repeated cell.  With pairs, both
games of pair ``p`` share one opening and the other agent moves first in the second game.

Everything about game ``k`` depends only on the series seed and ``k`` (each pair, or each
game, has its own ``random.Random`` seeded from a string), so game ``k`` is the same game
whether it is played in a fresh series, after a resume, or with more games scheduled.

>>> a = schedule(7, 4)
>>> a[0].opening == a[1].opening and a[0].first != a[1].first
True
>>> schedule(7, 6)[:4] == a
True
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ref_sim.referee import random_opening as _referee_opening


@dataclass(frozen=True)
class Scheduled:
    """One game of the series."""
    index: int                          # 1-based game number
    pair: int | None                    # 0-based pair number, None when unpaired
    opening: tuple[tuple[int, int], ...]    # four (board, spot), p1's first
    first: int                          # 0: agent 1 is p1 (X), 1: agent 2 is
    seed: int                           # the referee's seed for this game
    agent_seeds: tuple[int, int]        # {seed} of agent 1 and agent 2 (random players)


def random_opening(rng: random.Random) -> tuple[tuple[int, int], ...]:
    """Four chained (board, spot) moves as the referee draws them."""
    return tuple((board, spot) for _, board, spot in _referee_opening(rng, "p1", "p2"))


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
        opening = random_opening(shared)
        first = shared.randrange(2) ^ second     # the coin flip; swapped in the second game
    else:
        pair = None
        opening = random_opening(own)
        first = own.randrange(2)
    return Scheduled(index, pair, opening, first, seed, agent_seeds)


def schedule(series_seed: int, games: int, paired: bool = True) -> list[Scheduled]:
    """Games 1..``games`` of the series."""
    return [game(series_seed, index, paired) for index in range(1, games + 1)]
