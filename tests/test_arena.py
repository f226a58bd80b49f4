"""ref_sim.arena: paired engine series for every game, with the match runner's statistics."""

import io
import random
import shutil
from pathlib import Path

import pytest

from agent import core
from ref_sim.arena import main, run_series
from ref_sim.series.openings import random_opening
from agent.engines import make_engine, parse_engine_spec
from ref_sim.games import GAMES, get_game
from ref_sim.games.core_builds import load_core_build
from agent.limits import SearchLimit


def test_perfect_ttt_engine_never_loses_to_random():
    series = run_series(get_game("ttt"), "alphabeta", "random", games=20, seed=3)
    assert len(series.games) == 20 and series.losses == 0 and series.wins > 10
    assert sum(series.ptnml()) == 10


def test_games_come_in_pairs_with_sides_swapped_and_a_shared_opening():
    series = run_series(get_game("nineboard"), "alphabeta:depth=1", "random", games=6, seed=7, opening_plies=3)
    for a, b in zip(series.games[::2], series.games[1::2]):
        assert a.pair == b.pair and a.opening == b.opening and len(a.opening) == 3
        assert (a.first, b.first) == (0, 1)
    assert len({tuple(g.opening) for g in series.games}) == 3  # different openings per pair


def test_deterministic_engines_do_not_replay_one_game():
    series = run_series(get_game("ttt"), "alphabeta", "alphabeta", games=8, seed=1)
    assert len({tuple(g.opening + g.moves) for g in series.games}) > 1
    assert series.wins == series.losses == 0  # perfect against perfect: all draws


@pytest.mark.parametrize("game", list(GAMES))
def test_every_game_runs_alphabeta_against_random(game):
    series = run_series(get_game(game), "alphabeta", "random", games=2, depth=1, seed=2)
    assert len(series.games) == 2
    for record in series.games:  # replaying every game through the rules checks legality
        state = get_game(game).new_state()
        for move in record.opening + record.moves:
            assert move in state.legal_moves()
            state.push(move)
        assert state.winner is not None


def test_cli_prints_the_match_runner_summary():
    out = io.StringIO()
    assert main(["qubic", "alphabeta", "random", "--games", "2", "--depth", "1", "--seed", "5", "-v"], out) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("game 1: X=alphabeta#1")
    assert lines[-3].startswith("Score of alphabeta#1 vs random#2: ")
    assert lines[-2].startswith("Elo difference: ") and "LOS: " in lines[-2] and "DrawRatio: " in lines[-2]
    assert lines[-1].startswith("Ptnml(0-2): [")


def test_bad_engine_specs_are_refused():
    with pytest.raises(ValueError, match="unknown engine"):
        parse_engine_spec("minimax")
    with pytest.raises(ValueError, match="takes no option 'speed'; its options: depth"):
        parse_engine_spec("alphabeta:speed=3")
    with pytest.raises(ValueError, match="plays uttt"):
        make_engine("seed", get_game("ttt"))
    with pytest.raises(SystemExit):
        main(["ttt", "alphabeta", "nonsense"], io.StringIO())


@pytest.mark.e2e
@pytest.mark.skipif(not core.compiled_available(), reason=core.unavailable_reason() or "built")
def test_an_engine_may_run_another_build_of_the_core(capsys, tmp_path):
    """core_build=PATH: two builds of the compiled core in one series (an SPRT of two revisions). Here a
    copy of this build (a file of its own, so its own library), so both sides find the same moves."""
    build = tmp_path / Path(core._core.__file__).name
    shutil.copyfile(core._core.__file__, build)
    engine = make_engine(f"alphabeta:core_build={build},depth=3", get_game("uttt"))
    assert type(engine.searcher._core) is load_core_build(build).Searcher is not core._core.Searcher
    series = run_series(get_game("uttt"), f"alphabeta:core_build={build}", "alphabeta", 2, seed=3, depth=3)
    first, second = series.games  # one opening, sides swapped: the same game twice
    assert first.moves == second.moves and first.score_a + second.score_a == 1.0
    with pytest.raises(SystemExit):
        main(["qubic", f"alphabeta:core_build={build}", "random"], io.StringIO())
    assert "core_build=PATH is for uttt" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["uttt", "alphabeta:core_build=/no/such/core.so", "random"], io.StringIO())
    assert "/no/such/core.so" in capsys.readouterr().err


def test_openings_leave_the_game_open_and_the_registry_is_uniform():
    rng = random.Random(0)
    for game in GAMES.values():
        opening = random_opening(game, rng, game.opening_plies)
        state = game.new_state()
        for move in opening:
            state.push(move)
        assert state.winner is None
        # Move text round-trips for every legal move, and the engine answers with one of them.
        for move in state.legal_moves():
            assert game.parse_move(state, game.format_move(state, move)) == move
        result = make_engine("alphabeta:depth=2", game).choose(state, SearchLimit())
        assert result.move in state.legal_moves()
        assert game.render(state)


def test_uttt_in_the_arena_and_play_uses_the_agents_default_evaluation():
    # ref_sim.play and ref_sim.arena must meet the evaluation the competition agent plays with.
    from agent.engines import DEFAULT_EVALUATION, make_evaluator
    from ref_sim.games.registry import GAMES

    assert type(GAMES["uttt"].new_evaluator()) is type(make_evaluator(DEFAULT_EVALUATION))


def test_uttt_in_the_arena_and_play_searches_with_the_agents_core():
    from agent.core import make_searcher

    expected = type(make_searcher(GAMES["uttt"].new_evaluator(), 1, prefault=False)[0])
    assert type(GAMES["uttt"].searcher(1)) is expected
    assert type(GAMES["nineboard"].searcher(1)).__name__ == "AlphaBeta"


def test_engine_options_switch_the_search_features():
    from agent.search import Features

    engine = make_engine("alphabeta:lmr=0,age=1,depth=2", get_game("uttt"))
    assert engine.searcher.features == Features(lmr=0, age=1) and engine.depth == 2
    assert make_engine("alphabeta:solve=3", get_game("qubic")).searcher.features.solve == 3
    with pytest.raises(ValueError, match=r"lmr \(0-2, default 1\)"):
        parse_engine_spec("alphabeta:reductions=1")


def test_sprt_stops_the_series_once_it_decides():
    series = run_series(get_game("ttt"), "alphabeta", "random", games=400, seed=4, sprt=(0, 100, 0.05, 0.05))
    assert series.sprt_result().decision == "H1" and len(series.games) < 400
    assert len(series.games) % 2 == 0  # stopped at the end of a pair
    out = io.StringIO()
    assert main(["ttt", "alphabeta", "random", "--sprt", "0", "100", "0.05", "0.05", "--seed", "4"], out) == 0
    assert out.getvalue().splitlines()[-1].endswith("H1 was accepted (Elo >= 100)")
    with pytest.raises(SystemExit):
        main(["ttt", "alphabeta", "random", "--sprt", "10", "0", "0.05", "0.05"], io.StringIO())
