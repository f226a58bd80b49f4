"""The generic alpha-beta search, checked on Ultimate Tic-Tac-Toe positions."""

import random

import pytest

from agent.engines import AlphaBetaEngine
from agent.evaluation import Evaluator
from agent.limits import SearchLimit
from agent.rules import O, WON_X, X, Move, Position
from agent.search import PLAIN, PROVEN_SCORE, WIN_SCORE, AlphaBeta, _terminal_score

EVALUATOR = Evaluator()


def searcher(hash_mb=16, features=None):
    return AlphaBeta(EVALUATOR, move_space=81, hash_mb=hash_mb, features=features)


def minimax(pos: Position, depth: int, ply: int = 0, evaluate=EVALUATOR.evaluate) -> int:
    """Plain negamax, no pruning: the reference the search must equal."""
    if pos.winner is not None:
        return _terminal_score(pos.winner, pos.turn, ply)
    if depth == 0:
        return evaluate(pos)
    best = -WIN_SCORE - 1
    for move in pos.legal_moves():
        pos.push(move)
        best = max(best, -minimax(pos, depth - 1, ply + 1, evaluate))
        pos.pop()
    return best


def random_position(rng, plies):
    pos = Position()
    while pos.ply < plies and pos.winner is None:
        pos.push(rng.choice(list(pos.legal_moves())))
    return pos


def state_of(p):
    return (p.masks[0][:], p.masks[1][:], p.status[:], p.won[:], p.drawn, p.forced, p.turn, p.key, p.ply)


def two_boards_for_x_to_win_with(board_to_finish, spots_held):
    """X has won boards 0 and 4 and holds ``spots_held`` in board 8; X to move in board 8."""
    p = Position()
    for b in (0, 4):
        p.masks[X][b] = p.occupied[b] = 0b111
        p.status[b] = WON_X
    p.won[X] = 1 | 1 << 4
    for s in spots_held:
        p.masks[X][board_to_finish] |= 1 << s
    p.masks[O][3] = 0b111000000  # some O marks elsewhere, to keep the position plausible
    p.occupied[3] = p.masks[O][3]
    p.occupied[board_to_finish] = p.masks[X][board_to_finish]
    p.forced = board_to_finish
    return p


def test_finds_the_win_in_one():
    p = two_boards_for_x_to_win_with(8, [0, 1])  # 8 2 completes board 8, and 0-4-8 on the grid
    result = searcher().search(p, SearchLimit(depth=4))
    assert Move.from_index(result.move) == Move(8, 2)
    assert result.score == WIN_SCORE - 1 and result.proven


def test_blocks_the_win_in_one():
    # O to move in board 8, where X threatens 8 2 (completing board 8 and the diagonal 0-4-8).
    p = two_boards_for_x_to_win_with(8, [0, 1])
    p.turn = O
    result = searcher().search(p, SearchLimit(depth=3))
    assert Move.from_index(result.move) == Move(8, 2)
    assert result.score > -PROVEN_SCORE  # blocked: no forced loss seen at this depth


@pytest.mark.parametrize("seed", range(12))
def test_fixed_depth_equals_plain_minimax(seed):
    rng = random.Random(seed)
    pos = random_position(rng, rng.randint(10, 40))
    if pos.winner is not None:
        pytest.skip("random game ended early")
    depth = 3 if len(pos.legal_moves()) > 9 else 4
    expected = minimax(pos, depth)
    before = state_of(pos)
    result = searcher(hash_mb=0, features=PLAIN).search(pos, SearchLimit(depth=depth))  # reductions change it
    assert result.score == expected
    assert state_of(pos) == before
    pos.push(result.move)  # the chosen move achieves the score
    assert -minimax(pos, depth - 1, 1) == expected


@pytest.mark.parametrize("seed", range(6))
def test_solved_endgames_equal_plain_minimax_with_the_table(seed):
    rng = random.Random(100 + seed)
    while True:  # an endgame with a small tree: few plies left
        pos = random_position(rng, 81)
        while pos.ply > 0 and pos.max_plies_left() < 7:
            pos.pop()
        if pos.winner is None and pos.max_plies_left() <= 8:
            break
    expected = minimax(pos, 20)
    result = searcher().search(pos, SearchLimit())
    assert result.score == expected and result.proven


def test_prefers_the_quickest_win():
    rng = random.Random(3)
    found = 0
    for _ in range(300):
        pos = random_position(rng, 81)
        pos.pop()
        if pos.winner is not None or len(pos.legal_moves()) < 2:
            continue
        result = searcher().search(pos, SearchLimit(depth=3))
        if result.score >= PROVEN_SCORE:
            assert result.score == WIN_SCORE - 1  # a win in one exists (the game's last move)
            found += 1
    assert found > 10


def test_stops_at_the_deadline_or_node_limit_and_restores_the_position():
    pos = random_position(random.Random(11), 12)
    before = state_of(pos)
    result = searcher().search(pos, SearchLimit(nodes=5000))
    assert 5000 <= result.nodes < 5000 + 300  # the limit is checked every 256 nodes
    assert state_of(pos) == before
    assert result.move in pos.legal_moves()
    result = searcher().search(pos, SearchLimit.seconds(0.05))
    assert state_of(pos) == before and result.move in pos.legal_moves()


def test_node_limited_search_is_deterministic():
    pos = random_position(random.Random(12), 15)
    a = AlphaBetaEngine(nodes=20000).choose(pos, SearchLimit())
    b = AlphaBetaEngine(nodes=20000).choose(pos, SearchLimit())
    assert (a.move, a.score, a.depth, a.nodes) == (b.move, b.score, b.depth, b.nodes)


def test_single_legal_move_is_played_at_once():
    p = Position()
    p.masks[X][5] = 0b000110110
    p.masks[O][5] = 0b011001001
    p.occupied[5] = p.masks[X][5] | p.masks[O][5]
    p.forced = 5
    assert len(p.legal_moves()) == 1
    result = searcher().search(p, SearchLimit.seconds(5))
    assert result.move == p.legal_moves()[0] and result.nodes == 0


def test_table_stays_within_its_memory_bound():
    s = searcher(hash_mb=0.2)  # a tiny table: about 1,000 entries
    pos = random_position(random.Random(13), 14)
    s.search(pos, SearchLimit(depth=9))
    assert s.nodes > 20 * s.tt_capacity  # the search would have stored far more entries than fit
    assert len(s.tt) <= s.tt_capacity + 300  # checked every 256 nodes


def test_the_seed_bot_stays_plain_minimax_late_in_the_game():
    """The seed bot is the fixed student-style opponent: the search's refinements (reductions,
    the end-of-game solver) must not reach it. Near the end, where the solver would search to the
    end, its score is still plain minimax to its depth with its own evaluation."""
    from agent.engines import SeedEngine

    rng = random.Random(7)
    checked = 0
    while checked < 4:
        pos = random_position(rng, 60)
        if pos.winner is not None:
            continue
        seed = SeedEngine(depth=2)
        result = seed.choose(pos.copy(), SearchLimit(depth=2))
        assert result.score == minimax(pos.copy(), 2, evaluate=seed.searcher.evaluator.evaluate)
        checked += 1
