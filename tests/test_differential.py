"""The agent's fast rules against the referee simulator's plain rules, ply by ply.

Two independent implementations that agree on legal moves, local results and outcomes over
thousands of random games are the best evidence that both follow docs/protocol.md, "The rules,
as the referee codes them".
"""

import random

import pytest

from agent.rules import CODINGAME, DRAWN, OPEN, TIE, WON_O, WON_X, WPI, Position
from ref_sim.rules import Game

GAMES = 10_000
#: Games per test: the games of one variant are played in chunks of their own seed, so that
#: parallel workers share them.
CHUNK = 1_000
STATUS_AS_PLAIN = {OPEN: None, WON_X: 0, WON_O: 1, DRAWN: "draw"}
WINNER_AS_PLAIN = {0: 0, 1: 1, TIE: "tie", None: None}


def play_both(rng: random.Random, variant: str = WPI) -> tuple[int, object]:
    fast, plain = Position(variant), Game(variant)
    while True:
        plain_moves = plain.legal_moves()
        fast_moves = sorted(divmod(m, 9) for m in fast.legal_moves())
        assert fast_moves == plain_moves, f"legal moves differ after {plain.moves}"
        assert [STATUS_AS_PLAIN[s] for s in fast.status] == plain.local_results(), plain.moves
        assert WINNER_AS_PLAIN[fast.winner] == plain.result, plain.moves
        if not plain_moves:
            return len(plain.moves), plain.result
        board, spot = rng.choice(plain_moves)
        plain.play(board, spot)
        fast.play(board * 9 + spot)


@pytest.mark.parametrize("variant,chunk", [(WPI, k) for k in range(GAMES // CHUNK)]
                         + [(CODINGAME, k) for k in range(GAMES // 2 // CHUNK)])
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
    rng = random.Random(5)
    seen = 0
    for _ in range(3000):
        fast = Position()
        while fast.winner is None:
            fast.push(rng.choice(list(fast.legal_moves())))
        outcome = fast.outcome()
        if outcome.winner is None and "drawn boards in a line" in outcome.reason:
            seen += 1
    assert seen > 0
