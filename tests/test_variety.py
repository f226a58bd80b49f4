"""A seeded choice among equally good first moves (agent/variety.py)."""

from __future__ import annotations

from agent import engines
from agent.limits import SearchLimit
from agent.rules import CODINGAME, Position
from agent.variety import MARGIN, OpeningVariety


def fixed(depth: int = 4):
    return engines.make_engine("alphabeta", depth=depth)


def test_a_seed_gives_the_same_first_move_and_seeds_differ():
    first = {seed: OpeningVariety(fixed(), seed).choose(Position(CODINGAME), SearchLimit()).move for seed in range(12)}
    again = {seed: OpeningVariety(fixed(), seed).choose(Position(CODINGAME), SearchLimit()).move for seed in range(12)}
    assert first == again
    assert len(set(first.values())) >= 3, first


def test_every_varied_move_is_within_the_margin_of_the_best():
    variety = OpeningVariety(fixed(), 0)
    position = Position(CODINGAME)
    scores, depth, _ = variety._scores(position, SearchLimit())
    assert depth == 3 and len(scores) == 81  # one less than the fixed depth, every move
    best = max(scores.values())
    for seed in range(20):
        move = OpeningVariety(fixed(), seed).choose(position, SearchLimit()).move
        assert scores[move] >= best - MARGIN
    assert position.ply == 0, "the position was left as it was given"


def test_only_each_sides_first_move_is_varied():
    position = Position(CODINGAME)
    position.push(40)
    replies = {OpeningVariety(fixed(), seed).choose(position, SearchLimit()).move for seed in range(12)}
    assert len(replies) >= 2
    position.push(36)
    plain = fixed().choose(position, SearchLimit()).move
    assert {OpeningVariety(fixed(), seed).choose(position, SearchLimit()).move for seed in range(5)} == {plain}


def test_a_deadline_bounds_the_side_by_side_search():
    result = OpeningVariety(engines.make_engine("alphabeta"), 1).choose(Position(CODINGAME), SearchLimit.seconds(0.3))
    assert result.depth >= 1 and 0 <= result.move < 81
