"""Classic tic-tac-toe: rules, move text, and perfect play by the generic search against every opponent line."""

import importlib.util
from pathlib import Path

import pytest

from ref_sim.games import get_game
from ref_sim.games.tictactoe import DRAW, TicTacToe, parse_cell
from agent.limits import SearchLimit
from agent.rules import LINES, IllegalMoveError, InvalidMoveError, O, X

GAME = get_game("ttt")


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize("winner", [X, O])
def test_every_line_wins_for_either_player(line, winner):
    others = [c for c in range(9) if c not in line]
    state = TicTacToe()
    if winner == O:
        state.push(others.pop())  # X first, elsewhere
    mine = list(line)
    while True:
        state.push(mine.pop(0))
        if not mine:
            break
        assert state.winner is None
        state.push(next(c for c in others if c not in state.moves_played() and not _completes(state, c)))
    assert state.winner == winner
    assert state.legal_moves() == ()


def _completes(state, cell):
    state.push(cell)
    won = state.winner is not None
    state.pop()
    return won


def test_full_board_without_a_line_is_a_draw():
    state = TicTacToe.from_text("a1 b2 c3 b1 b3 a3 c1 c2 a2")
    assert state.winner == DRAW and state.max_plies_left() == 0 and state.legal_moves() == ()


def test_push_pop_restores_everything_and_key_is_the_position():
    state = TicTacToe.from_text("b2 a1")
    before = (state.masks[:], state.turn, state.key, state.ply)
    for move in state.legal_moves():
        state.push(move)
        assert state.key == state.masks[X] | state.masks[O] << 9
        state.pop()
        assert (state.masks[:], state.turn, state.key, state.ply) == before


def test_move_text_round_trips_and_errors_are_typed():
    for cell in range(9):
        text = TicTacToe.format_move(cell)
        assert parse_cell(text) == cell == parse_cell(text.upper()) == parse_cell(f"{cell // 3 + 1} {cell % 3 + 1}")
    for bad in ("", "d1", "a4", "b", "1 2 3", "0 1", "hello"):
        with pytest.raises(InvalidMoveError):
            parse_cell(bad)
    with pytest.raises(IllegalMoveError, match="taken by X"):
        TicTacToe.from_text("b2").parse_move("b2")
    text = TicTacToe.from_text("b2").render()
    assert "a   b   c" in text and " 2  . | X | ." in text


# -- perfect play --------------------------------------------------------------------------------

def minimax_values():
    """Game-theoretic value (+1/0/-1 for the side to move) of every reachable position, by plain minimax."""
    memo = {}

    def value(state):
        if state.key in memo:
            return memo[state.key]
        if state.winner is not None:
            v = 0 if state.winner == DRAW else (1 if state.winner == state.turn else -1)
        else:
            v = -2
            for move in state.legal_moves():
                state.push(move)
                v = max(v, -value(state))
                state.pop()
        memo[state.key] = v
        return v

    value(TicTacToe())
    return memo


VALUES = minimax_values()


@pytest.mark.parametrize("engine_side", [X, O])
def test_engine_plays_perfectly_against_every_opponent_line(engine_side):
    """Every opponent move sequence: the engine never loses, keeps the game-theoretic value with
    each move, and wins every game in which the opponent made a value-losing move."""
    engine = GAME.searcher(hash_mb=4)
    state = TicTacToe()
    tally = {"games": 0, "opponent_erred": 0, "engine_won": 0}

    def explore(erred):
        if state.winner is not None:
            tally["games"] += 1
            assert state.winner != 1 - engine_side, f"engine lost: {state!r}"
            if erred:
                tally["opponent_erred"] += 1
                assert state.winner == engine_side, f"opponent erred but engine did not win: {state!r}"
                tally["engine_won"] += 1
            else:
                assert state.winner == DRAW  # both sides perfect: the solved value
            return
        before = VALUES[state.key]
        if state.turn == engine_side:
            result = engine.search(state, SearchLimit())
            assert result.proven or len(state.legal_moves()) == 1  # a forced move is not searched
            state.push(result.move)
            assert -VALUES[state.key] == before, f"engine move {result.move} lost value in {state!r}"
            explore(erred)
            state.pop()
        else:
            for move in state.legal_moves():
                state.push(move)
                explore(erred or -VALUES[state.key] < before)
                state.pop()

    explore(False)
    assert tally["opponent_erred"] > 0 and tally["games"] > tally["opponent_erred"]
    assert tally["engine_won"] == tally["opponent_erred"]


def test_empty_board_is_a_draw_and_search_proves_it():
    result = GAME.searcher().search(TicTacToe(), SearchLimit())
    assert VALUES[0] == 0 and result.proven and result.score == 0 and result.depth == 9


def test_node_count_script_matches_the_known_minimax_figure(capsys):
    path = Path(__file__).resolve().parent.parent / "scripts" / "ttt_nodes.py"
    spec = importlib.util.spec_from_file_location("ttt_nodes", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    counter = module.Counter()
    assert module.minimax(TicTacToe(), counter) == 0
    assert (counter.nodes, counter.leaves) == (549_946, 255_168)
    ab = module.Counter()
    assert module.alphabeta(TicTacToe(), -2, 2, ab) == 0 and ab.nodes < counter.nodes
