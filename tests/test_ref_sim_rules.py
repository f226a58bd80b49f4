"""The plain rules of ref_sim.rules: perft and targeted cases of docs/protocol.md, "The rules,
as the referee codes them"."""

import random

import pytest

from ref_sim.rules import DRAW, LINES, TIE, Game, IllegalMoveError


def perft(game: Game, depth: int) -> int:
    if depth == 0:
        return 1
    total = 0
    for move in game.legal_moves():
        child = game.copy()
        child.play(*move)
        total += perft(child, depth - 1)
    return total


@pytest.mark.parametrize("depth, nodes", [(1, 81), (2, 720), (3, 6336), (4, 55080)])
def test_perft(depth, nodes):
    assert perft(Game(), depth) == nodes


def play_all(game, moves):
    for move in moves:
        game.play(*move)
    return game


def test_new_game():
    game = Game()
    assert game.turn == 0 and game.result is None
    assert game.local_results() == [None] * 9
    assert game.legal_moves() == sorted(game.legal_moves())
    assert len(game.legal_moves()) == 81


def test_forced_board_and_illegal_moves():
    game = Game()
    game.play(4, 7)
    assert game.turn == 1
    assert game.legal_moves() == [(7, spot) for spot in range(9)]
    assert not game.is_legal(4, 0)
    with pytest.raises(IllegalMoveError, match="sends O to board 7"):
        game.play(4, 0)
    game.play(7, 7)
    with pytest.raises(ValueError, match="taken by O"):
        game.play(7, 4 + 3)  # (7, 7) again
    with pytest.raises(ValueError, match="integers 0-8"):
        game.play(9, 0)


def test_won_board_is_closed_even_with_empty_cells():
    game = Game()
    game.cells[0][0] = game.cells[0][1] = 0
    game.play(0, 2)                                    # X completes the top row of board 0
    assert game.local_results()[0] == 0
    assert game.cells[0].count(None) == 6
    # O is sent to board 2 (open); play there a move that sends X back to board 0 (closed).
    game.play(2, 0)
    moves = game.legal_moves()
    assert all(board != 0 for board, _ in moves)       # won board closed
    assert {board for board, _ in moves} == set(range(1, 9))
    with pytest.raises(ValueError, match="closed"):
        game.play(0, 6)


def fill_drawn_board(game_cells, board):
    """X O X / X O O / O X X: full, no line."""
    for spot, mark in enumerate([0, 1, 0, 0, 1, 1, 1, 0, 0]):
        game_cells[board][spot] = mark


def test_drawn_board_is_closed_and_sends_anywhere():
    game = Game()
    fill_drawn_board(game.cells, 3)
    assert game.local_results()[3] == DRAW
    game.play(5, 3)                      # sends O to board 3: drawn, so anywhere
    moves = game.legal_moves()
    assert {board for board, _ in moves} == set(range(9)) - {3}
    assert len(moves) == 8 * 9 - 1


def test_drawn_line_quirk_ends_game_as_tie():
    game = Game()
    fill_drawn_board(game.cells, 0)
    fill_drawn_board(game.cells, 4)
    # Board 8: X O X / X O O / O X . -> X completes a draw at spot 8.
    for spot, mark in enumerate([0, 1, 0, 0, 1, 1, 1, 0]):
        game.cells[8][spot] = mark
    game.play(8, 8)
    assert game.local_results()[8] == DRAW
    assert game.result == TIE
    assert game.legal_moves() == []
    assert sum(result is None for result in game.local_results()) == 6


def test_all_boards_decided_without_line_is_tie():
    game = Game()
    # Won boards in no line for either player, the rest drawn: X X O / O O X / X O ?
    owners = [0, 0, 1, 1, 1, 0, 0, 1, None]
    for board, owner in enumerate(owners[:8]):
        for spot in (0, 1, 2):
            game.cells[board][spot] = owner
    for spot, mark in enumerate([0, 1, 0, 0, 1, 1, 1, 0]):
        game.cells[8][spot] = mark
    game.play(8, 8)          # board 8 drawn: all nine decided, no line of X or O or draws
    assert game.result == TIE


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize("player", [0, 1])
def test_global_win_on_each_line(line, player):
    game = Game()
    a, b, c = line
    for board in (a, b):
        for spot in (0, 1, 2):
            game.cells[board][spot] = player
    game.cells[c][0] = game.cells[c][1] = player
    game.turn = player
    game.play(c, 2)
    assert game.result == player
    assert game.legal_moves() == []
    with pytest.raises(ValueError, match="over"):
        game.play(*[(bd, s) for bd in range(9) for s in range(9) if game.cells[bd][s] is None][0])


def test_random_games_invariants():
    rng = random.Random(7)
    for _ in range(50):
        game = Game()
        while game.result is None:
            moves = game.legal_moves()
            assert moves and moves == sorted(set(moves))
            snapshot = game.copy()
            game.play(*rng.choice(moves))
            assert snapshot.moves == game.moves[:-1]       # copy is independent
        assert game.result in (0, 1, TIE)
        assert "Result" in game.render()


def test_render_shape():
    game = Game()
    game.play(4, 4)
    text = game.render()
    lines = text.splitlines()
    assert len(lines) == 12
    assert "x" in lines[4 + 1]           # last move in lower case, grid row 4 (+1 separator)
    assert lines[3] == "-------+-------+-------"
    # A legend says what the lower case is.
    assert lines[11] == ("x = the last move (4 4); right: the global board "
                         "(X/O won, = drawn, . open)")
    assert "last move" not in Game().render()     # nothing played, nothing to explain
