"""A seeded symmetry varies the games of a deterministic engine (agent/variety.py)."""

from __future__ import annotations

import pytest

from agent import engines
from agent.limits import SearchLimit
from agent.rules import CODINGAME, LINES, WPI, Position
from agent.variety import SYMMETRIES, SymmetricVariety, cell_map


def test_the_eight_symmetries_keep_the_rules():
    assert len(set(SYMMETRIES)) == 8
    lines = {frozenset(line) for line in LINES}
    for symmetry in SYMMETRIES:
        assert {frozenset(symmetry[cell] for cell in line) for line in lines} == lines


@pytest.mark.parametrize("variant", [WPI, CODINGAME])
def test_a_turned_game_is_the_same_game(variant):
    """Every legal move, game result and board status maps across: the engine plays as well turned."""
    import random

    rng = random.Random(5)
    for symmetry in SYMMETRIES:
        forward = cell_map(symmetry)
        real, turned = Position(variant), Position(variant)
        while real.winner is None:
            assert sorted(forward[m] for m in real.legal_moves()) == sorted(turned.legal_moves())
            move = rng.choice(list(real.legal_moves()))
            real.push(move)
            turned.push(forward[move])
        assert real.winner == turned.winner


def fixed_game(seed_x, seed_o, depth=3):
    """A whole CodinGame game between two fixed-depth engines, either one turned by its seed."""
    players = [engines.make_engine("alphabeta", depth=depth) for _ in range(2)]
    players = [SymmetricVariety(player, seed) if seed is not None else player
               for player, seed in zip(players, (seed_x, seed_o))]
    position = Position(CODINGAME)
    while position.winner is None:
        move = players[position.turn].choose(position.copy(), SearchLimit()).move
        assert position.is_legal(move)
        position.push(move)
    return position.moves_played()


def test_seeds_vary_the_games_of_deterministic_engines_and_seed_zero_does_not():
    plain = fixed_game(None, None)
    assert fixed_game(0, 0) == plain  # the identity
    games = {tuple(fixed_game(seed, None)) for seed in range(8)} | {tuple(fixed_game(None, seed)) for seed in range(8)}
    # Where both engines play alike on turned boards (no ties to break), a seed gives the game's
    # image under its symmetry: at least the four turns of O's first answer off the centre.
    assert len(games) >= 4, len(games)
    assert tuple(fixed_game(3, None)) == tuple(fixed_game(3, None))  # a seed is one game


def test_x_first_move_is_drawn_from_the_list_and_o_answers_as_the_engine_does():
    from agent.variety import FIRST_MOVES, FirstMoveVariety

    engine = engines.make_engine("alphabeta", depth=3)
    position = Position(CODINGAME)
    moves = {FirstMoveVariety(engine, seed).choose(position, SearchLimit.seconds(0.05)).move for seed in range(20)}
    assert moves == set(FIRST_MOVES)
    assert position.ply == 0, "the position was left as it was given"
    position.push(40)
    assert {FirstMoveVariety(engine, seed).choose(position, SearchLimit()).move for seed in range(5)} == \
        {engine.choose(position, SearchLimit()).move}
