"""The fitted evaluation: the shipped data file, the formula of agent/eval_fitted.py, its choice by
name, and the self-play data generation of scripts/train_eval.py."""

import copy
import importlib.util
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent import engines
from agent.engines import build_engine
from agent.eval_fitted import (DEFAULT_DATA, GLOBAL_LINES, PACKAGED_DIGESTS, PATTERNS, EvalDataError, FittedEvaluator,
                               check_data, decided_chance, file_digest, load_data, pattern_index)
from agent.evaluation import Evaluator
from agent.limits import SearchLimit
from agent.rules import WINS, Position, board_patterns
from agent.search import PLAIN, PROVEN_SCORE, WIN_SCORE, AlphaBeta, _terminal_score
from ref_sim.series.openings import cell_opening
from ref_sim.selfplay import selfplay_game, training_game
from scripts.training import examples, model
from scripts.training.errors import InputError
from scripts.training.selfplay import generate

ROOT = Path(__file__).resolve().parent.parent
DATA = load_data()
EVALUATOR = FittedEvaluator(DATA)


def random_positions(count, seed=7):
    rng = random.Random(seed)
    positions = []
    while len(positions) < count:
        pos = Position.from_moves(cell_opening(rng))
        while pos.winner is None and len(positions) < count:
            positions.append(pos.copy())
            pos.push(rng.choice(list(pos.legal_moves())))
    return positions


def reference_score(pos, data):
    """The formula of docs/engine.md, "What it computes", written out plainly from the raw tables."""
    q = data["scale"]
    w = data["weights"]
    me, them = pos.masks[pos.turn], pos.masks[1 - pos.turn]
    m, t = [], []
    for b in range(9):
        if b == pos.forced:
            m.append(data["mover"][pattern_index(me[b], them[b])])
            t.append(data["waiter"][pattern_index(me[b], them[b])])
        else:
            m.append(data["chance"][pattern_index(me[b], them[b])])
            t.append(data["chance"][pattern_index(them[b], me[b])])
    big_m = sum(m[i] * m[j] * m[k] for i, j, k in GLOBAL_LINES)
    big_t = sum(t[i] * t[j] * t[k] for i, j, k in GLOBAL_LINES)
    score = w["line"] * big_m // q ** 3 - w["line"] * big_t // q ** 3
    score += w["board"] * sum(m) // q - w["board"] * sum(t) // q
    return score + w["tempo"] + (w["free_move"] if pos.forced == -1 else 0)


# -- the data file ---------------------------------------------------------------------------

def test_pattern_order_is_base_three_by_spot():
    assert pattern_index(0, 0) == 0
    assert pattern_index(1, 0) == 1 and pattern_index(0, 1) == 2
    assert pattern_index(1 << 8, 0) == 3 ** 8 and pattern_index(0, 1 << 8) == 2 * 3 ** 8
    indices = {pattern_index(a, b) for a, b in board_patterns()}
    assert indices == set(range(PATTERNS))


def test_shipped_data_is_valid_and_decided_boards_are_certain():
    q = DATA["scale"]
    for a, b in board_patterns():
        i = pattern_index(a, b)
        for table, owner, other in (("chance", a, b), ("mover", a, b), ("waiter", b, a)):
            want = decided_chance(owner, other, q)
            if want is not None:
                assert DATA[table][i] == want, (table, a, b)


def test_data_file_states_how_it_was_fitted():
    fit = DATA["fit"]
    assert fit["positions"] > 0 and fit["held_out"] > 0
    assert set(fit["held_out_loss"]) >= {"classic", "start", "fitted", "shipped"}


def inverted(table):
    return [DATA["scale"] - v for v in table]


def transposed(table):
    """Indexed by pattern_index(b, a) where pattern_index(a, b) is meant."""
    swapped = list(table)
    for a, b in board_patterns():
        swapped[pattern_index(a, b)] = table[pattern_index(b, a)]
    return swapped


#: A board the first side (A, on spot 0) cannot win although nobody won it and it is not full:
#: B on spots 1, 3, 4 and 8 sits on every line.
A_BLOCKED = pattern_index(0b000000001, 0b100011010)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(version=2), "version 1"),
    (lambda d: d["chance"].pop(), "chance must be 19683"),
    (lambda d: d["mover"].__setitem__(0, -1), "mover must be"),
    (lambda d: d["waiter"].__setitem__(5, d["scale"] + 1), "waiter must be 19683 integers in 0..1000"),
    (lambda d: d["chance"].__setitem__(5, 500.0), "chance must be 19683 integers"),       # a float
    (lambda d: d["chance"].__setitem__(5, True), "chance must be 19683 integers"),        # JSON true
    (lambda d: d["weights"].update(line=-5), "non-negative"),
    (lambda d: d["weights"].update(line=20_000), "scores could reach"),
    (lambda d: d["weights"].update(tempo=10 ** 30), "scores could reach"),
    (lambda d: d["weights"].update(board=1.5), "weights.board must be an integer"),
    (lambda d: d["weights"].pop("tempo"), "weights.tempo"),
    (lambda d: d.update(weights=[1, 2, 3, 4]), "weights must be an object"),
    (lambda d: d.update(scale=0), "scale must be an integer from 1 to 1290"),
    (lambda d: d.update(scale=100_000), "scale must be an integer from 1 to 1290"),   # Q^3 past 32 bits
    (lambda d: d.update(scale=True), "scale must be an integer"),
    # Well-formed, in range, and wrong: what the model fixes is checked on every pattern.
    (lambda d: d.update(chance=inverted(d["chance"])), r"chance\[19682\] is 1000, not 0: on board BBB/BBB/BBB A cannot"),
    (lambda d: d.update(mover=inverted(d["mover"])), r"mover\[\d+\] is \d+, not \d+"),
    (lambda d: d.update(waiter=inverted(d["waiter"])), r"waiter\[\d+\] is \d+, not \d+"),
    (lambda d: d.update(mover=d["waiter"], waiter=d["mover"]), r"mover\[\d+\] is 1000, not 0"),   # swapped
    (lambda d: d.update(chance=transposed(d["chance"])), r"chance\[\d+\] is \d+, not \d+"),
    (lambda d: d["chance"].__setitem__(A_BLOCKED, 1), rf"chance\[{A_BLOCKED}\] is 1, not 0: on board AB./BB./..B A cannot win"),
    (lambda d: d["waiter"].__setitem__(pattern_index(0b111, 0b11000), 999), "B cannot win"),   # A won
    (lambda d: d["mover"].__setitem__(pattern_index(0b111, 0b11000), 999), "A has won"),
])
def test_bad_data_is_refused_with_one_line(change, message):
    data = copy.deepcopy({k: v for k, v in DATA.items() if k != "fit"})
    change(data)
    with pytest.raises(EvalDataError, match=message) as error:
        check_data(data)
    assert "\n" not in str(error.value) and len(str(error.value)) < 200


def test_non_finite_numbers_in_the_file_are_refused(tmp_path):
    # Python's json reads NaN and Infinity: they are floats, refused like any float.
    data = {k: v for k, v in DATA.items() if k != "fit"}
    for where, _text in (("chance", "NaN"), ("weights", "Infinity")):
        bad = tmp_path / f"{where}.json"
        if where == "chance":
            bad.write_text(re.sub(r'"chance": \[\d+', '"chance": [NaN', json.dumps(data), count=1))
        else:
            bad.write_text(json.dumps(data).replace('"tempo": ', '"tempo": Infinity, "was": ', 1))
        with pytest.raises(EvalDataError, match=f"{re.escape(str(bad))}: .*must be") as error:
            load_data(bad)
        assert "\n" not in str(error.value)


def test_the_packaged_file_loads_and_holds_every_fixed_value():
    check_data(json.loads(DEFAULT_DATA.read_bytes()))  # in full: load_data trusts its recorded digest
    q = DATA["scale"]
    blocked = sum(decided_chance(a, b, q) == 0 and not (WINS[b] or a | b == 0x1FF) for a, b in board_patterns())
    assert blocked > 0 and DATA["chance"][A_BLOCKED] == 0


# The packaged files are checked in full here, once; the agent's load_data trusts a file whose
# bytes have a recorded digest and checks every other file in full.
PACKAGED = sorted((ROOT / "agent" / "data").glob("*.json"))


@pytest.mark.parametrize("path", PACKAGED, ids=lambda path: path.name)
def test_each_packaged_file_passes_the_full_check_and_its_digest_is_recorded(path):
    raw = path.read_bytes()
    check_data(json.loads(raw), str(path))  # what the recorded digest vouches for
    digest = file_digest(raw)
    assert PACKAGED_DIGESTS.get(path.name) == digest, (
        f"{path.relative_to(ROOT)} changed (or is new): it passes the full check, so record its digest in "
        f"agent/eval_fitted.py: PACKAGED_DIGESTS[{path.name!r}] = {digest!r}")


def test_every_recorded_digest_is_a_packaged_files():
    assert PACKAGED, "no data files in agent/data"
    stale = set(PACKAGED_DIGESTS) - {path.name for path in PACKAGED}
    assert not stale, f"agent/eval_fitted.py's PACKAGED_DIGESTS names files agent/data does not have: {sorted(stale)}"


class FullChecks(list):
    """A load_data ``check`` that notes the paths it checks in full."""

    def __call__(self, data, where="evaluation data"):
        self.append(where)
        check_data(data, where)


def test_a_packaged_files_bytes_skip_the_full_check_wherever_they_are(tmp_path):
    checked = FullChecks()
    copy_of_it = tmp_path / "mine.json"
    copy_of_it.write_bytes(DEFAULT_DATA.read_bytes())
    assert load_data(DEFAULT_DATA, check=checked) == load_data(copy_of_it, check=checked) == DATA
    assert checked == []


def test_an_edited_packaged_file_is_checked_in_full(tmp_path):
    checked = FullChecks()
    text = DEFAULT_DATA.read_text(encoding="utf-8")
    # The same tables written out again: other bytes, so checked (and valid).
    same = tmp_path / "rewritten.json"
    same.write_text(json.dumps(json.loads(text)), encoding="utf-8")
    assert load_data(same, check=checked) == DATA and checked == [str(same)]
    # One fixed value edited in place, every other byte the packaged file's: refused as before.
    start = re.search(r'"chance": *\[', text).end()  # the table ("fit" has a "chance" object too)
    position = [match.start() for match in re.finditer(r"-?\d+", text[start:])][A_BLOCKED]
    assert text[start + position] == "0" and not text[start + position + 1].isdigit()
    edited = tmp_path / DEFAULT_DATA.name
    edited.write_text(text[:start + position] + "1" + text[start + position + 1:], encoding="utf-8")
    with pytest.raises(EvalDataError, match=rf"^{re.escape(str(edited))}: chance\[{A_BLOCKED}\] is 1, not 0: "
                                            "on board AB./BB./..B A cannot win") as error:
        load_data(edited, check=checked)
    assert "\n" not in str(error.value) and checked == [str(same), str(edited)]


def test_unreadable_data_file_is_one_clear_error(tmp_path):
    bad = tmp_path / "eval.json"
    bad.write_text("{not json")
    with pytest.raises(EvalDataError, match="cannot read evaluation data"):
        load_data(bad)


# -- the formula -----------------------------------------------------------------------------

def test_evaluate_is_exactly_the_documented_formula():
    for pos in random_positions(1500):
        assert EVALUATOR.evaluate(pos) == reference_score(pos, DATA)


def test_formula_with_other_tables_too():
    # Made-up tables exercise every term (rounding, tempo, free move), not just the fitted values.
    rng = random.Random(3)
    data = copy.deepcopy({k: v for k, v in DATA.items() if k != "fit"})
    data["weights"] = {"line": 4321, "board": 77, "tempo": -13, "free_move": 250}
    q = data["scale"]
    for name in ("chance", "mover", "waiter"):
        data[name] = [rng.randrange(q + 1) for _ in range(PATTERNS)]
    for a, b in board_patterns():  # where the model fixes a chance, the loader wants that one
        i = pattern_index(a, b)
        for name, owner, other in (("chance", a, b), ("mover", a, b), ("waiter", b, a)):
            fixed = decided_chance(owner, other, q)
            data[name][i] = data[name][i] if fixed is None else fixed
    evaluator = FittedEvaluator(data)
    for pos in random_positions(800, seed=11):
        assert evaluator.evaluate(pos) == reference_score(pos, data)


def test_scores_stay_far_from_forced_results():
    assert all(abs(EVALUATOR.evaluate(p)) < PROVEN_SCORE // 10 for p in random_positions(1500, seed=5))


def leaning_position(boards):
    """X has two in the top row of each of ``boards`` and O one mark in a corner; O to play anywhere."""
    pos = Position()
    for b in boards:
        pos.masks[0][b] = 0b000000011
        pos.masks[1][b] = 0b100000000
    pos.turn = 1
    return pos


def test_leaning_boards_compound_along_a_global_line():
    # The same three boards leaning X's way are worth more to X when they make a global line:
    # the line's product sees them together, long before any of them is won.
    in_line = leaning_position((0, 1, 2))
    scattered = leaning_position((0, 5, 7))   # no global line through all three
    assert -EVALUATOR.evaluate(in_line) > -EVALUATOR.evaluate(scattered)


def test_the_board_the_mover_is_sent_to_counts_its_immediate_threat():
    # X to move with two in a row on board 4: sent there, X wins it next move.
    pos = Position()
    pos.masks[0][4] = 0b000000011
    pos.masks[1][0] = 0b000000001
    pos.masks[1][8] = 0b000000001
    pos.turn = 0
    pos.forced = 4
    sent = EVALUATOR.chances(pos)[4]
    pos.forced = 0
    elsewhere = EVALUATOR.chances(pos)[4]
    assert sent[0] > elsewhere[0]


def minimax(pos, depth, ply=0):
    """Plain negamax with the fitted evaluation, no pruning: what the search must equal."""
    if pos.winner is not None:
        return _terminal_score(pos.winner, pos.turn, ply)
    if depth == 0:
        return EVALUATOR.evaluate(pos)
    best = -WIN_SCORE - 1
    for move in pos.legal_moves():
        pos.push(move)
        best = max(best, -minimax(pos, depth - 1, ply + 1))
        pos.pop()
    return best


@pytest.mark.parametrize("seed", range(4))
def test_the_generic_search_with_the_fitted_evaluation_equals_plain_minimax(seed):
    pos = random_positions(25 + 7 * seed, seed=40 + seed)[-1]
    depth = 3 if len(pos.legal_moves()) > 9 else 4
    result = AlphaBeta(EVALUATOR, move_space=81, hash_mb=0, features=PLAIN).search(pos, SearchLimit(depth=depth))  # no reductions
    assert result.score == minimax(pos, depth)


# -- choosing it -----------------------------------------------------------------------------

def test_evaluations_by_name():
    assert isinstance(engines.make_evaluator("fitted"), FittedEvaluator)
    assert isinstance(engines.make_evaluator("classic"), Evaluator)
    with pytest.raises(ValueError, match="unknown evaluation 'best'"):
        engines.make_evaluator("best")
    _, engine = build_engine("alphabeta", 3, None, "fitted")
    assert isinstance(engine.evaluator, FittedEvaluator)
    _, engine = build_engine("alphabeta", 3, None, "classic")
    assert isinstance(engine.evaluator, Evaluator)


@pytest.mark.e2e
def test_the_fitted_evaluation_is_the_default_and_classic_stays_selectable():
    assert isinstance(engines.AlphaBetaEngine(depth=1).evaluator, FittedEvaluator)
    assert isinstance(engines.AlphaBetaEngine(depth=1, evaluation="classic").evaluator, Evaluator)
    _, engine = build_engine(None, None, None)
    assert isinstance(engine.evaluator, FittedEvaluator)


def test_fixed_depth_search_with_the_fitted_evaluation_is_deterministic():
    pos = random_positions(30, seed=2)[-1]
    results = [engines.AlphaBetaEngine(depth=4, evaluation="fitted").choose(pos.copy(), SearchLimit())
               for _ in range(2)]
    assert (results[0].move, results[0].score, results[0].nodes) == (results[1].move, results[1].score,
                                                                     results[1].nodes)


@pytest.mark.e2e
def test_agent_runs_without_numpy():
    code = ("import sys; sys.modules['numpy'] = None; sys.modules['scipy'] = None\n"
            "from agent.engines import AlphaBetaEngine\n"
            "from agent.limits import SearchLimit\n"
            "from agent.rules import Position\n"
            "print(AlphaBetaEngine(depth=2, evaluation='fitted').choose(Position(), SearchLimit()).move)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert 0 <= int(done.stdout) < 81


def test_data_file_is_package_data_and_bundled_in_the_executable():
    assert DEFAULT_DATA.parent == ROOT / "agent" / "data" and DEFAULT_DATA.is_file()
    package_data = re.search(r'^agent = \[(.*)\]$', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert '"data/*.json"' in package_data
    assert "agent' / 'data'" in (ROOT / "scripts" / "build-exe").read_text()


# -- self-play data --------------------------------------------------------------------------

def test_training_games_follow_from_their_seed():
    make = lambda: engines.AlphaBetaEngine(nodes=60, hash_mb=1)  # noqa: E731
    first, again, other = (training_game(s, make, deviation=0.2) for s in (5, 5, 6))
    assert first.moves == again.moves and first.winner == again.winner
    assert first.moves != other.moves
    pos = Position.from_moves(first.moves)  # every move legal, and the game over
    assert pos.winner is not None


def load_train_eval():
    spec = importlib.util.spec_from_file_location("train_eval", ROOT / "scripts" / "train_eval.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generation_resumes_where_it_stopped(tmp_path, capsys):
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    generate(whole, 4, nodes=40, seed=3, deviation=0.1, engine_eval="classic")
    generate(parts, 2, nodes=40, seed=3, deviation=0.1, engine_eval="classic")
    with (parts / "games.jsonl").open("a") as handle:
        handle.write('{"game": 2, "winner"')       # a line cut short by an interrupted run
    generate(parts, 4, nodes=40, seed=3, deviation=0.1, engine_eval="classic")
    assert (parts / "games.jsonl").read_text() == (whole / "games.jsonl").read_text()
    games = [json.loads(line) for line in (whole / "games.jsonl").read_text().splitlines()]
    assert [g["game"] for g in games] == [0, 1, 2, 3]
    assert "holds 4 games" in capsys.readouterr().out
    # Continuing with other settings would mix two data sets in one file.
    with pytest.raises(InputError, match=r"settings.json says its games were played with --nodes 40, "
                                                    r"--deviation 0.1, --seed 3, --engine-eval classic"):
        generate(parts, 6, nodes=80, seed=3, deviation=0.1, engine_eval="classic")


def test_games_note_the_self_play_search_score_of_each_ply_it_searched():
    winner, plies, moves, scores = selfplay_game(12, 60, "eval-v1", 0.3)
    assert len(moves) == len(scores) == plies
    assert scores[:4] == [None] * 4                        # the random opening
    assert None in scores[4:30]                            # a random deviation (30 % a ply)
    assert all(isinstance(s, int) for s in scores[30:])    # the engine's own moves, every one
    pos = Position.from_moves(moves)
    assert pos.winner is not None
    # The last move's score is the mover's: the side that ended the game won it (or drew).
    if winner is not None:
        assert scores[-1] > 0


def test_labels_mix_the_result_and_the_search_score():
    np = pytest.importorskip("numpy")
    data = {"result": np.array([1.0, 0.0, 0.5, 1.0]), "score": np.array([0.0, 400.0, -999_990.0, np.nan])}
    assert examples.targets(data, 1.0, 400.0).tolist() == [1.0, 0.0, 0.5, 1.0]
    deep = examples.targets(data, 0.0, 400.0)
    assert deep[0] == 0.5 and deep[1] == pytest.approx(1 / (1 + np.exp(-1))) and deep[2] == 0.0
    assert deep[3] == 1.0                                  # no search score: the result alone
    assert examples.targets(data, 0.25, 400.0)[1] == pytest.approx(0.75 * deep[1])


def unscored_games(count, seed):
    """``count`` random games as the fit reads them (results, no search scores)."""
    return [{"game": g, "winner": g % 3 or None, "moves": moves, "scores": None}
            for g, moves in enumerate(random_games(count, seed=seed))]


def test_the_fitted_model_is_the_agents_evaluation():
    """The fit's float model (model.forward) and the agent's integer one agree up to
    rounding on real positions: the fit optimises what the agent computes."""
    np = pytest.importorskip("numpy")
    pytest.importorskip("scipy")
    games = unscored_games(40, seed=9)
    data = examples.arrays(games)
    pt = model.pattern_tables()
    rng = np.random.default_rng(4)
    params = np.array(model.initial_params()) + rng.normal(0, 0.3, len(model.initial_params()))
    params[-4:] = [3.0, 0.4, -0.3, 1.2]
    z = model.forward(model.chance_tables(params, pt), model.split(params)[3], data)[0]
    quantised = model.quantise(params, pt, scale=1000, score_per_logit=500)
    evaluate = FittedEvaluator(quantised).evaluate
    scores = [evaluate(pos) / 500 for _, pos, _, _ in examples.replay(games)]
    assert len(scores) == len(z) > 500
    assert np.max(np.abs(np.array(scores) - z)) < 0.05


def test_the_gradient_is_exact_with_per_pattern_logits_and_mixed_labels():
    np = pytest.importorskip("numpy")
    pytest.importorskip("scipy")
    games = unscored_games(12, seed=5)
    data = examples.arrays(games)
    data["score"] = np.random.default_rng(1).normal(0, 400, len(data["result"]))
    data["target"] = examples.targets(data, 0.5, 400.0)
    pt = model.pattern_tables()
    rng = np.random.default_rng(2)
    params = np.concatenate([np.array(model.initial_params()) + rng.normal(0, 0.1, 20),
                             rng.normal(0, 0.3, pt["classes"])])
    loss, gradient = model.loss_and_gradient(params, pt, data, 1e-3)
    for i in [0, 7, 11, 15, 16, 17, 18, 19, *rng.choice(np.arange(20, len(params)), 6, replace=False)]:
        step = np.zeros_like(params)
        step[i] = 1e-6
        numeric = (model.loss_and_gradient(params + step, pt, data, 1e-3)[0]
                   - model.loss_and_gradient(params - step, pt, data, 1e-3)[0]) / 2e-6
        assert numeric == pytest.approx(gradient[i], abs=1e-8)


def test_match_against_a_data_file_runs_its_sprt(capsys):
    train_eval = load_train_eval()
    assert train_eval.main(["match", "--pairs", "2", "--match-nodes", "150", "--opponent", "eval-v1",
                            "--sprt", "0", "15"]) == 0
    out = capsys.readouterr().out
    assert "Score of fitted@150 vs eval-v1@150: " in out and "] 4\n" in out
    assert re.search(r"^SPRT: llr -?[\d.]+ \(-?[\d.]+%\), lbound -2.94, ubound 2.94$", out, re.M)


def random_games(count, seed):
    rng = random.Random(seed)
    for _ in range(count):
        pos = Position.from_moves(cell_opening(rng))
        while pos.winner is None:
            pos.push(rng.choice(list(pos.legal_moves())))
        yield pos.moves_played()


@pytest.mark.slow
def test_whole_pipeline_from_an_empty_directory(tmp_path, capsys):
    pytest.importorskip("numpy")
    pytest.importorskip("scipy")
    train_eval = load_train_eval()
    out = tmp_path / "eval.json"
    assert train_eval.main(["all", "--dir", str(tmp_path / "work"), "--games", "10", "--nodes", "40",
                            "--mix", "1", "0.5", "--per-pattern", "30", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "held-out loss, fitted model, mix 0.5 :" in text and "held-out loss, shipped integer tables:" in text
    assert "held-out loss, the self-play search:" in text
    data = load_data(out)
    assert data["fit"]["games"] == 10 and data["fit"]["labels"]["mix"] in (1.0, 0.5)
    assert data["fit"]["per_pattern"] == 30
    assert data["fit"]["self_play"] == {"nodes": 40, "deviation": 0.04, "seed": 2, "eval": "eval-v1"}
    again = tmp_path / "again.json"    # the same games and seed: the same bytes
    assert train_eval.main(["fit", "--dir", str(tmp_path / "work"), "--games", "10", "--mix", "1", "0.5",
                            "--per-pattern", "30", "--out", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()
    assert all(isinstance(FittedEvaluator(data).evaluate(p), int) for p in random_positions(50))
