"""Qubic (4x4x4): the 76 lines, wins on each, a drawn full cube, bitboard invariants, move text, tactics."""

import random
from collections import Counter

import pytest

from ref_sim.games import get_game
from ref_sim.games.qubic import (LINE_MASKS, LINES, LINES_THROUGH, Qubic, QubicEvaluator, cell_index,
                               coordinates)
from ref_sim.games.tictactoe import DRAW, WIN_NEXT
from agent.limits import SearchLimit
from agent.rules import IllegalMoveError, InvalidMoveError, O, X

GAME = get_game("qubic")

#: A full cube with no line of four (found once by local search): X and O by cell index.
DRAWN_CUBE = "XXXOOOOXOXXOXOOXOXXXXOXOOXXOOXOOXOOXOXOOOOOXXXXOOXOXOOXXXOXXXXOO"


def _kind(direction):
    axes = sum(1 for d in direction if d)
    if axes == 1:
        return ("pillar", "column", "row")[[abs(d) for d in direction].index(1)]
    return {2: "plane diagonal", 3: "space diagonal"}[axes]


def test_there_are_76_lines_of_four_of_the_expected_kinds():
    assert len(LINES) == len(set(LINE_MASKS)) == 76
    kinds = Counter(_kind(d) for _, d in LINES)
    assert kinds == {"row": 16, "column": 16, "pillar": 16, "plane diagonal": 24, "space diagonal": 4}
    for cells, _ in LINES:  # four distinct cells, evenly spaced in every coordinate
        coords = [coordinates(c) for c in cells]
        assert len(set(cells)) == 4
        for axis in range(3):
            steps = {coords[i + 1][axis] - coords[i][axis] for i in range(3)}
            assert len(steps) == 1 and steps.pop() in (-1, 0, 1)
    # 8 corners and 8 centre cells lie on 7 lines, the other 48 on 4.
    assert Counter(len(lines) for lines in LINES_THROUGH) == {7: 16, 4: 48}


def _fillers(line_cells, count):
    """``count`` cells off the line, no four of them on one line (so the filler player cannot win)."""
    chosen = []
    for c in range(64):
        if c in line_cells:
            continue
        mask = sum(1 << x for x in chosen + [c])
        if any(mask & m == m for m in LINE_MASKS):
            continue
        chosen.append(c)
        if len(chosen) == count:
            return chosen
    raise AssertionError("no fillers")


@pytest.mark.parametrize("winner", [X, O])
def test_every_line_wins_for_either_player(winner):
    wins = 0
    for cells, _ in LINES:
        others = _fillers(cells, 4)
        state = Qubic()
        if winner == O:
            state.push(others.pop())
        mine = list(cells)
        while mine:
            assert state.winner is None
            state.push(mine.pop())
            if mine:
                state.push(others.pop())
        assert state.winner == winner and state.legal_moves() == ()
        wins += 1
        while state.ply:
            state.pop()
        assert state.key == 0 and state.masks == [0, 0] and state.winner is None
    assert wins == 76


def test_a_full_cube_without_a_line_is_a_draw():
    xs = [c for c in range(64) if DRAWN_CUBE[c] == "X"]
    os_ = [c for c in range(64) if DRAWN_CUBE[c] == "O"]
    assert len(xs) == len(os_) == 32
    state = Qubic()
    for x, o in zip(xs, os_):
        assert state.winner is None
        state.play(x)
        assert state.winner is None
        state.play(o)
    assert state.winner == DRAW and state.ply == 64 and state.max_plies_left() == 0 and state.legal_moves() == ()


def test_push_pop_and_zobrist_key_in_random_games():
    rng = random.Random(4)
    for _ in range(20):
        state = Qubic()
        history = []
        while state.winner is None:
            history.append((state.key, state.masks[:], state.turn))
            state.push(rng.choice(state.legal_moves()))
        rebuilt = Qubic.from_moves(state.moves_played())
        assert rebuilt.key == state.key and rebuilt.winner == state.winner
        while state.ply:
            state.pop()
            assert history.pop() == (state.key, state.masks, state.turn)


def test_move_text():
    state = Qubic()
    for c in range(64):
        text = Qubic.format_move(c)
        assert state.parse_move(text) == c == state.parse_move(text.replace(" ", ""))
    assert state.parse_move("2 3 1") == cell_index(1, 2, 0)
    state.push(0)
    with pytest.raises(IllegalMoveError, match="taken by X"):
        state.parse_move("1 1 1")
    for bad in ("", "0 1 1", "5 1 1", "1 1", "a b c", "1 1 1 1"):
        with pytest.raises(InvalidMoveError):
            state.parse_move(bad)
    text = state.render()
    assert "layer 1" in text and "layer 4" in text and "1 2 3 4" in text and " 1  X . . ." in text


# -- tactics: wins and blocks in one, under any limit ----------------------------------------------

def win_position():
    # X holds three of the space diagonal 0-21-42-63 (63 free); O holds 48, 49, 50 (row 1 of
    # layer 4, 51 free). X to move must win at 63, not block at 51.
    return Qubic.setup(x_cells=[0, 21, 42, 5], o_cells=[48, 49, 50, 12], turn=X)


def block_position():
    # O threatens 51 (row 1 of layer 4); X has no three in a line: X must block at 51.
    return Qubic.setup(x_cells=[0, 21, 7, 30], o_cells=[48, 49, 50, 12], turn=X)


@pytest.mark.parametrize("limit", [SearchLimit(depth=1), SearchLimit(depth=3), SearchLimit(nodes=5),
                                   SearchLimit(nodes=3000)], ids=["depth1", "depth3", "nodes5", "nodes3000"])
def test_engine_takes_the_win_in_one_rather_than_block(limit):
    state = win_position()
    result = GAME.searcher(hash_mb=1).search(state, limit)
    assert result.move == 63


@pytest.mark.parametrize("limit", [SearchLimit(depth=1), SearchLimit(depth=2), SearchLimit(nodes=5),
                                   SearchLimit(nodes=3000)], ids=["depth1", "depth2", "nodes5", "nodes3000"])
def test_engine_blocks_the_win_in_one(limit):
    state = block_position()
    result = GAME.searcher(hash_mb=1).search(state, limit)
    assert result.move == 51


def test_engine_under_a_short_time_limit_wins_and_blocks():
    assert GAME.searcher().search(win_position(), SearchLimit.seconds(0.05)).move == 63
    assert GAME.searcher().search(block_position(), SearchLimit.seconds(0.05)).move == 51


def test_evaluation_sees_threats_from_the_side_to_move():
    evaluator = QubicEvaluator()
    assert evaluator.evaluate(win_position()) == WIN_NEXT
    # O to move with two different winning cells of X's: lost for O.
    double = Qubic.setup(x_cells=[0, 1, 2, 16, 32, 13], o_cells=[60, 61, 62, 40, 44], turn=O)
    assert evaluator.evaluate(double) == WIN_NEXT  # O itself has an open three (63): it wins first
    double = Qubic.setup(x_cells=[0, 1, 2, 16, 32], o_cells=[60, 61, 40, 44, 9], turn=O)
    assert evaluator.evaluate(double) == -WIN_NEXT  # X threatens 3 and 48: one block is not enough
    quiet = Qubic.setup(x_cells=[21], o_cells=[], turn=O)
    assert evaluator.evaluate(quiet) < 0  # X's centre cell lies on 7 open lines


def test_iterative_deepening_under_a_time_limit_goes_past_depth_two():
    state = Qubic.setup(x_cells=[21, 0], o_cells=[42], turn=O)
    result = GAME.searcher().search(state, SearchLimit.seconds(0.5))
    assert result.depth >= 2 and result.move in state.legal_moves()
