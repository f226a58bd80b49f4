"""Ratings of many bots (ref_sim/series/stats/ratings.py): known cases, the edge cases, and the error bars'
coverage checked by simulation from known ratings."""

import math
import random

import pytest

from ref_sim.series.stats import match_stats, ratings
def games_of(a, b, wins, losses, draws=0):
    return [(a, b, 1.0)] * wins + [(a, b, 0.0)] * losses + [(a, b, 0.5)] * draws


def rate(names, games, **options):
    return ratings.fit(names, ratings.pairwise(games), **options)


def test_two_bots_at_75_percent_are_191_elo_apart_as_match_says():
    fit = rate(["A", "B"], games_of("A", "B", 300, 100))
    difference = fit.elo["A"] - fit.elo["B"]
    assert difference == pytest.approx(match_stats.elo_from_score(0.75), abs=1.0)   # 190.8
    assert fit.elo["A"] + fit.elo["B"] == pytest.approx(0.0, abs=1e-9)        # the mean at 0
    # Anchored on B, A's bar is the difference's: the one ref_sim.match prints for the pair.
    anchored = rate(["A", "B"], games_of("A", "B", 300, 100), anchor="B")
    assert anchored.elo["B"] == 0.0 and anchored.error["B"] == 0.0
    assert anchored.elo["A"] == pytest.approx(difference)
    assert anchored.error["A"] == pytest.approx(match_stats.estimate(300, 100, 0).error, rel=0.02)
    assert fit.error["A"] == pytest.approx(anchored.error["A"] / 2)


def test_draws_count_half_a_win_and_half_a_loss():
    half = rate(["A", "B"], games_of("A", "B", 150, 50, draws=200))        # 250 of 400: 62.5 %
    assert half.elo["A"] - half.elo["B"] == pytest.approx(match_stats.elo_from_score(0.625), abs=1.0)


def test_symmetric_results_give_equal_ratings():
    cycle = (games_of("A", "B", 3, 1) + games_of("B", "C", 3, 1) + games_of("C", "A", 3, 1))
    fit = rate(["A", "B", "C"], cycle)
    for name in "ABC":
        assert fit.elo[name] == pytest.approx(0.0, abs=1e-6)
    assert fit.error["A"] == pytest.approx(fit.error["B"]) == pytest.approx(fit.error["C"])
    draws = rate(["A", "B", "C"], games_of("A", "B", 0, 0, 4) + games_of("B", "C", 0, 0, 4))
    assert all(draws.elo[n] == pytest.approx(0.0, abs=1e-9) for n in "ABC")
    assert all(0 < draws.error[n] < math.inf for n in "ABC")


def test_a_bot_that_won_every_game_gets_a_finite_rating_from_the_prior():
    fit = rate(["A", "B", "C"], games_of("A", "B", 10, 0) + games_of("A", "C", 10, 0)
               + games_of("B", "C", 5, 5))
    assert fit.ranked()[0] == "A"
    assert math.isfinite(fit.elo["A"]) and math.isfinite(fit.error["A"])
    # One virtual draw per pairing: 10-0 reads as 10.5 of 11 against each.
    assert fit.elo["A"] - fit.elo["B"] == pytest.approx(match_stats.elo_from_score(10.5 / 11), abs=1.0)
    assert fit.error["A"] > fit.error["B"]            # fewer results to measure it by
    # Without the prior the likelihood has no maximum; with more wins it keeps growing.
    more = rate(["A", "B", "C"], games_of("A", "B", 40, 0) + games_of("A", "C", 40, 0)
                + games_of("B", "C", 20, 20))
    assert math.isfinite(more.elo["A"]) and more.elo["A"] > fit.elo["A"]


def test_one_game_is_a_rating_with_a_wide_bar():
    fit = rate(["A", "B"], [("B", "A", 0.0)])
    assert fit.elo["A"] - fit.elo["B"] == pytest.approx(match_stats.elo_from_score(0.75))  # 1.5 of 2
    assert 200 < fit.error["A"] < math.inf


def test_groups_that_never_met_are_rated_apart_and_a_bot_without_games_not_at_all():
    fit = rate(["A", "B", "C", "D", "E"], games_of("A", "B", 6, 2) + games_of("C", "D", 2, 6))
    assert fit.groups == [["A", "B"], ["C", "D"], ["E"]]
    assert fit.elo["A"] + fit.elo["B"] == pytest.approx(0.0, abs=1e-9)      # each group's mean
    assert fit.elo["C"] + fit.elo["D"] == pytest.approx(0.0, abs=1e-9)
    assert fit.elo["A"] == pytest.approx(fit.elo["D"])
    assert math.isnan(fit.elo["E"]) and math.isnan(fit.error["E"])
    assert fit.ranked()[-1] == "E"


def test_pairwise_and_standings_count_each_side():
    games = [("A", "B", 1.0), ("B", "A", 1.0), ("A", "B", 0.5), ("C", "A", 0.0)]
    pairs = ratings.pairwise(games)
    assert pairs == {("A", "B"): ratings.Record(1, 1, 1), ("C", "A"): ratings.Record(0, 1, 0)}
    table = ratings.standings(["A", "B", "C"], pairs)
    assert table["A"] == ratings.Record(2, 1, 1) and table["A"].points == 2.5
    assert table["B"] == ratings.Record(1, 1, 1) and table["C"] == ratings.Record(0, 1, 0)
    assert table["A"].score == pytest.approx(0.625)


def test_bad_input_is_a_one_line_value_error():
    with pytest.raises(ValueError, match="anchor 'Z' is not one of the bots"):
        rate(["A", "B"], games_of("A", "B", 1, 1), anchor="Z")
    with pytest.raises(ValueError, match="games of bots not in the list: C"):
        rate(["A", "B"], games_of("A", "C", 1, 1))
    with pytest.raises(ValueError, match="1, 0.5 or 0 points"):
        ratings.pairwise([("A", "B", 2)])
    with pytest.raises(ValueError, match="cannot play itself"):
        ratings.pairwise([("A", "A", 1)])


def simulated_event(rng, true: dict, games_per_pair: int, draw_rate: float):
    """A round-robin drawn from the model: ``p`` the expected score, draws at ``draw_rate``
    (or less where the score leaves no room), wins making up the rest of ``p``."""
    names, games = list(true), []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            p = match_stats.score_from_elo(true[a] - true[b])
            draws = min(draw_rate, 2 * min(p, 1 - p))
            wins = p - draws / 2
            for _ in range(games_per_pair):
                u = rng.random()
                games.append((a, b, 1.0 if u < wins else 0.5 if u < wins + draws else 0.0))
    return games


@pytest.mark.parametrize("games_per_pair", [10, 40])
def test_the_95_percent_bars_hold_the_true_ratings_95_percent_of_the_time(games_per_pair):
    # 300 simulated round-robins of four bots whose true ratings (mean 0) are known.  Without
    # draws the bars are right: 95.6 % (10 games a pair) and 95.3 % (40) of 1200 intervals.
    rng = random.Random(2024)
    true = {"A": -150.0, "B": -50.0, "C": 50.0, "D": 150.0}
    inside = total = 0
    for _ in range(300):
        fit = rate(list(true), simulated_event(rng, true, games_per_pair, draw_rate=0.0))
        inside += sum(abs(fit.elo[n] - true[n]) <= fit.error[n] for n in true)
        total += len(true)
    assert 0.93 <= inside / total <= 0.97


def test_with_draws_the_bars_are_conservative():
    # A draw varies less than the model's p (1 - p) assumes: with 30 % draws, 98.8 %.
    rng = random.Random(7)
    true = {"A": -100.0, "B": 0.0, "C": 100.0}
    inside = total = 0
    for _ in range(200):
        fit = rate(list(true), simulated_event(rng, true, 20, draw_rate=0.3))
        inside += sum(abs(fit.elo[n] - true[n]) <= fit.error[n] for n in true)
        total += len(true)
    assert 0.95 <= inside / total <= 1.0


def test_the_docstring_examples_hold():
    import doctest
    assert doctest.testmod(ratings).failed == 0
