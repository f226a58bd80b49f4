"""Nine-board tic-tac-toe: rules (lines on every board, sending, full boards, draws), move text, tactics."""

import random

import pytest

from ref_sim.games import get_game
from ref_sim.games.nineboard import NineBoard, NineBoardEvaluator
from ref_sim.games.tictactoe import DRAW, WIN_NEXT
from agent.limits import SearchLimit
from agent.rules import LINES, IllegalMoveError, InvalidMoveError, X

GAME = get_game("nineboard")


@pytest.mark.parametrize("board", range(9))
def test_three_in_a_row_on_any_board_wins_on_every_line(board):
    for line in LINES:
        for last in line:  # completing the line with any of its three cells
            held = [board * 9 + c for c in line if c != last]
            state = NineBoard.setup(x_cells=held, turn=X, forced=board)
            assert state.winner is None
            state.push(board * 9 + last)
            assert state.winner == X and state.legal_moves() == ()
            state.pop()
            assert state.winner is None and state.turn == X and state.forced == board


def test_a_move_sends_the_opponent_to_the_board_of_its_cell():
    state = NineBoard()
    assert len(state.legal_moves()) == 81  # first move anywhere
    rng = random.Random(5)
    for _ in range(30):
        if state.winner is not None:
            break
        move = rng.choice(list(state.legal_moves()))
        state.push(move)
        cell = move % 9
        if state.occupied[cell] != 0x1FF and state.winner is None:
            assert state.forced == cell
            assert {m // 9 for m in state.legal_moves()} == {cell}


def test_a_full_board_sent_to_means_play_anywhere():
    # Board 4 full with no line: X 0 2 3 7 8... as a drawn pattern; O the rest.
    x_spots, o_spots = (0, 2, 3, 7), (1, 4, 5, 6, 8)
    state = NineBoard.setup(x_cells=[36 + s for s in x_spots], o_cells=[36 + s for s in o_spots], turn=X, forced=0)
    state.push(0 * 9 + 4)  # X plays cell 5 (index 4) of board 1: sends O to board 5, which is full
    assert state.forced == -1
    moves = state.legal_moves()
    assert len(moves) == 81 - 10 and not any(m // 9 == 4 for m in moves)
    assert len({m // 9 for m in moves}) == 8
    state.pop()
    assert state.forced == 0


#: A legal 81-move game with no line (found once by a backtracking search over non-winning moves).
DRAWN_GAME = [35, 79, 71, 74, 26, 75, 28, 11, 21, 27, 7, 70, 66, 34, 64, 12, 33, 60, 62, 80, 73, 16, 65, 22,
              38, 18, 2, 23, 50, 46, 14, 48, 30, 32, 52, 67, 39, 29, 20, 24, 55, 17, 78, 59, 45, 4, 43, 63, 3,
              31, 36, 6, 57, 37, 10, 13, 41, 53, 77, 51, 56, 19, 9, 5, 49, 44, 72, 1, 15, 61, 69, 54, 0, 8, 76,
              42, 58, 40, 25, 68, 47]


def test_all_boards_full_without_a_line_is_a_draw():
    state = NineBoard()
    anywhere = 0
    for move in DRAWN_GAME:
        assert state.winner is None
        state.play(move)  # checks legality, board sending included
        anywhere += state.forced == -1 and state.winner is None and len({m // 9 for m in state.legal_moves()}) > 1
    assert state.winner == DRAW and state.ply == 81 and state.legal_moves() == () and state.max_plies_left() == 0
    assert anywhere > 0  # the game went through "sent to a full board: play anywhere"


def _wins(state, move):
    state.push(move)
    won = state.winner is not None
    state.pop()
    return won


def test_push_pop_restore_the_state_and_the_zobrist_key():
    rng = random.Random(2)
    for _ in range(20):
        state = NineBoard()
        seen = []
        while state.winner is None:
            seen.append((state.key, [m[:] for m in state.masks], state.occupied[:], state.forced, state.turn))
            state.push(rng.choice(list(state.legal_moves())))
        fresh = NineBoard.from_moves(state.moves_played())
        assert fresh.key == state.key
        while state.ply:
            state.pop()
            assert seen.pop() == (state.key, [m[:] for m in state.masks], state.occupied[:], state.forced, state.turn)


def test_move_text():
    state = NineBoard()
    for move in range(81):
        assert state.parse_move(NineBoard.format_move(move)) == move
    state.push(40)  # "5 5": O must play in board 5
    assert state.parse_move("3") == 4 * 9 + 2  # the cell alone in the forced board
    with pytest.raises(IllegalMoveError, match="must be in board 5"):
        state.parse_move("1 1")
    with pytest.raises(IllegalMoveError, match="taken"):
        state.parse_move("5 5")
    for bad in ("0 1", "10 1", "a b", "1 2 3", ""):
        with pytest.raises(InvalidMoveError):
            state.parse_move(bad)
    assert "[5]*" in state.render() and "O to play in board 5" in state.render()


def test_engine_takes_a_win_in_one():
    # X holds cells 1 and 2 (0-based 0, 1) of board 3 and must play there: cell 3 wins.
    state = NineBoard.setup(x_cells=[2 * 9 + 0, 2 * 9 + 1, 60], o_cells=[2 * 9 + 4, 70, 71], turn=X, forced=2)
    assert NineBoardEvaluator().evaluate(state) == WIN_NEXT
    for depth in (1, 2, 4):
        result = GAME.searcher().search(state, SearchLimit(depth=depth))
        assert result.move == 2 * 9 + 2 and result.score > 900_000


def test_engine_never_sends_the_opponent_to_a_board_it_wins_on():
    # X must play in board 1 (index 0); its free cells 3-7 (0-based) send O to boards 3-7.
    # O holds two in a row on boards 3, 4, 5 and 6 (0-based): only cell 7 is safe.
    o_cells = [b * 9 + s for b in (3, 4, 5, 6) for s in (0, 1)]
    state = NineBoard.setup(x_cells=[1, 8, 80, 79, 10, 20, 30], o_cells=[0, 2] + o_cells, turn=X, forced=0)
    assert sorted(state.legal_moves()) == [3, 4, 5, 6, 7]
    for depth in (2, 3):
        result = GAME.searcher().search(state, SearchLimit(depth=depth))
        assert result.move == 7, depth
    # Even a search cut off at once falls back on move ordering, which puts the safe cell first.
    priorities = NineBoardEvaluator().move_priority(state, [3, 4, 5, 6, 7])
    assert priorities.index(max(priorities)) == 4


def test_engine_beats_random_quickly():
    from ref_sim.arena import run_series
    series = run_series(GAME, "alphabeta:depth=2", "random", games=4, seed=1)
    assert series.wins == 4
