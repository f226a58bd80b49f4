"""The tables the evaluations build at every start of the agent, each against its plain
construction: a loop over every board pattern, as the tables were first written. The fast builds
must give the same lists, entry for entry."""

from agent import eval_fitted, evaluation
from agent.eval_fitted import FittedEvaluator, load_data, pair_tables, pattern_index, swapped_indexes
from agent.evaluation import build_can_win_table, pattern_keys
from agent.rules import FULL, WINS, board_patterns


def test_pattern_keys_list_every_pattern_in_pattern_order():
    keys = pattern_keys()
    assert len(keys) == 3 ** 9
    assert keys == sorted((a << 9 | b for a, b in board_patterns()), key=lambda key: pattern_index(key >> 9, key & 511))
    assert [pattern_index(key >> 9, key & 511) for key in keys] == list(range(3 ** 9))


def test_ternary_digits_are_the_plain_sums():
    assert eval_fitted.TERNARY == tuple(sum(3 ** s for s in range(9) if mask >> s & 1) for mask in range(512))


def test_swapped_indexes_see_each_pattern_from_the_other_side():
    assert swapped_indexes() == [pattern_index(key & 511, key >> 9) for key in pattern_keys()]


def plain_can_win_table() -> list[bool]:
    table = [False] * (1 << 18)
    for mover, other in board_patterns():
        if WINS[mover] or WINS[other]:
            continue
        free = FULL ^ (mover | other)
        table[mover << 9 | other] = any(WINS[mover | 1 << s] for s in range(9) if free >> s & 1)
    return table


def test_the_can_win_table_is_its_plain_construction():
    table = build_can_win_table()
    assert table == plain_can_win_table()
    assert all(type(value) is bool for value in table)  # the compiled core takes bytes(table)
    assert evaluation.can_win_table() == table


def plain_fitted_tables(data: dict) -> tuple[list, list]:
    chance, mover, waiter = data["chance"], data["mover"], data["waiter"]
    idle: list = [None] * (1 << 18)
    sent: list = [None] * (1 << 18)
    for a, b in board_patterns():
        i, j = pattern_index(a, b), pattern_index(b, a)
        idle[a << 9 | b] = (chance[i], chance[j])
        sent[a << 9 | b] = (mover[i], waiter[i])
    return idle, sent


def test_the_fitted_tables_are_their_plain_construction():
    for path in sorted(eval_fitted.DATA_DIR.glob("*.json")):
        data = load_data(path)
        evaluator = FittedEvaluator(data)
        assert (evaluator._idle, evaluator._sent) == plain_fitted_tables(data), path.name


def test_the_fitted_tables_with_made_up_values_too():
    # Every entry distinct (its own pattern index), so a table read in the wrong order shows.
    data = load_data()
    made_up = dict(data, chance=list(range(3 ** 9)), mover=[3 ** 9 + i for i in range(3 ** 9)],
                   waiter=[2 * 3 ** 9 + i for i in range(3 ** 9)])
    assert pair_tables(made_up) == plain_fitted_tables(made_up)
