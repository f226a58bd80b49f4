"""The agent's fast rules against the referee simulator's plain rules, ply by ply.

Two independent implementations that agree on legal moves, local results and outcomes over
thousands of random games are the best evidence that both follow docs/protocol.md, "The rules,
as the referee codes them".
"""

import random

import pytest

from agent.rules import CODINGAME, DRAWN, LINES, OPEN, TIE, WON_O, WON_X, WPI, Position
from ref_sim.rules import Game

GAMES = 10_000
#: Games per test: the games of one variant are played in chunks of their own seed, so that
#: parallel workers share them.
CHUNK = 1_000
#: The chunks every run plays (3,000 games); the rest of the 10,000 and 5,000 are the slow lane's
#: (``pytest -m slow``). Mutants of agent/rules.py (stop 37) were each caught within 22 games of
#: each variant, save those of the drawn-line quirk, which the directed test below catches and
#: which random games found late or never (at game 2,739, 6,667, and not in 10,000).
EVERY_RUN = {WPI: 2, CODINGAME: 1}
#: The plain rules' local result of a board in the fast rules' codes, and a move as its (board, spot).
STATUS_OF_PLAIN = {None: OPEN, 0: WON_X, 1: WON_O, "draw": DRAWN}
WINNER_AS_PLAIN = {0: 0, 1: 1, TIE: "tie", None: None}
AS_PLAIN = tuple(divmod(index, 9) for index in range(81))


def play_both(rng: random.Random, variant: str = WPI) -> tuple[int, object]:
    fast, plain = Position(variant), Game(variant)
    # The plain local results, in the fast codes, kept as the game goes: Game.local_result(board)
    # reads that board's cells alone and a move changes its own board's, so after each move only
    # that board's result is asked again (all nine, every ply, were a third of this test's time).
    # At the end all nine are asked again, which checks this bookkeeping.
    expected = [OPEN] * 9
    while True:
        plain_moves = plain.legal_moves()
        assert [AS_PLAIN[m] for m in sorted(fast.legal_moves())] == plain_moves, \
            f"legal moves differ after {plain.moves}"
        assert fast.status == expected, plain.moves
        assert WINNER_AS_PLAIN[fast.winner] == plain.result, plain.moves
        if not plain_moves:
            assert expected == [STATUS_OF_PLAIN[r] for r in plain.local_results()], plain.moves
            return len(plain.moves), plain.result
        board, spot = rng.choice(plain_moves)
        plain.play(board, spot)
        fast.play(board * 9 + spot)
        expected[board] = STATUS_OF_PLAIN[plain.local_result(board)]


@pytest.mark.parametrize("variant,chunk", [
    pytest.param(variant, k, marks=() if k < EVERY_RUN[variant] else pytest.mark.slow)
    for variant, games in ((WPI, GAMES), (CODINGAME, GAMES // 2)) for k in range(games // CHUNK)])
def test_fast_and_plain_rules_agree_on_random_games(variant, chunk, sample):
    rng = random.Random(f"{variant}/{chunk}")
    results = {}
    for _ in range(sample(CHUNK)):
        _, result = play_both(rng, variant)
        results[result] = results.get(result, 0) + 1
    # The games must cover every kind of ending, or the comparison proves little.
    assert set(results) == {0, 1, "tie"}, results


def test_drawn_line_quirk_occurs_in_random_games():
    # The quirk (three drawn boards in a line end the game) must be exercised by the comparison.
    # Up to 3,000 games, stopping at the first such ending (the 580th).
    rng = random.Random(5)
    for _ in range(3000):
        fast = Position()
        while fast.winner is None:
            fast.push(rng.choice(list(fast.legal_moves())))
        outcome = fast.outcome()
        if outcome.winner is None and "drawn boards in a line" in outcome.reason:
            break
    else:
        pytest.fail("no game of 3,000 ended on three drawn boards in a line")


#: A full board with no line, as (X's spots, O's spots), and the same board before X's last mark.
DRAWN_BOARD = ((0, 2, 3, 7, 8), (1, 4, 5, 6))
LAST_SPOT = 0


@pytest.mark.parametrize("variant", [WPI, CODINGAME])
@pytest.mark.parametrize("line", LINES, ids=["-".join(map(str, line)) for line in LINES])
def test_both_rules_end_on_each_line_of_drawn_boards_alike(line, variant):
    """Random games make three drawn boards in a line in a few games of a thousand, and on some
    lines hardly ever: fast rules that missed the quirk on the diagonal 0-4-8 agreed with the
    plain ones over all 10,000 games above. Here each line's third board is drawn by X's move, the
    other two drawn already (the second with the marks swapped, so that X is to move)."""
    first, second, third = line
    fast, plain = Position(variant), Game(variant)
    for board, (x_spots, o_spots) in ((first, DRAWN_BOARD), (second, DRAWN_BOARD[::-1]),
                                      (third, (tuple(s for s in DRAWN_BOARD[0] if s != LAST_SPOT), DRAWN_BOARD[1]))):
        for player, spots in enumerate((x_spots, o_spots)):
            for spot in spots:
                plain.cells[board][spot] = player
                fast.masks[player][board] |= 1 << spot
        fast.occupied[board] = fast.masks[0][board] | fast.masks[1][board]
        fast.status[board] = STATUS_OF_PLAIN[plain.local_result(board)]
        fast.drawn |= (fast.status[board] == DRAWN) << board
    plain.moves = [(first, third)]      # the last move sent X to the third board
    fast.forced = third
    fast.ply = sum(bin(cells).count("1") for cells in fast.occupied)       # the key is not compared
    assert [STATUS_OF_PLAIN[r] for r in plain.local_results()] == fast.status
    plain.play(third, LAST_SPOT)
    fast.play(third * 9 + LAST_SPOT)
    assert plain.local_result(third) == "draw"
    assert plain.result == ("tie" if variant == WPI else None)      # docs/protocol.md: the quirk is the referee's
    assert WINNER_AS_PLAIN[fast.winner] == plain.result
    assert [STATUS_OF_PLAIN[r] for r in plain.local_results()] == fast.status
    assert [AS_PLAIN[m] for m in sorted(fast.legal_moves())] == plain.legal_moves()
