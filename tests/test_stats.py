"""ref_sim.stats against values computed by hand (the working is in the comments).

Logarithms and square roots below were taken once with a calculator; the tests compare the
module's results with those literals, never with a second call of the same formula.
"""

import math

import pytest

from ref_sim import stats


def close(a, b, tol=1e-6):
    return a == pytest.approx(b, abs=tol)


def test_score_and_logistic_elo():
    # 60 wins, 30 losses, 10 draws: (60 + 10/2) / 100 = 0.65
    assert stats.score(60, 30, 10) == 0.65
    # 1/0.65 - 1 = 0.538461538...; log10 = -0.268845312...; * -400 = 107.5381249
    assert close(stats.elo_from_score(0.65), 107.5381249)
    # 0.75: 1/0.75 - 1 = 1/3; -400 * log10(1/3) = 400 * 0.4771212547 = 190.8485019
    assert close(stats.elo_from_score(0.75), 190.8485019)
    assert close(stats.elo_from_score(0.25), -190.8485019)
    assert stats.elo_from_score(0.5) == 0.0
    # 10 Elo: 1 / (1 + 10^(-0.025)) = 1 / (1 + 0.9440608763) = 0.5143871842
    assert close(stats.score_from_elo(10), 0.5143871842)
    assert stats.elo_from_score(1.0) == math.inf and stats.elo_from_score(0.0) == -math.inf


def test_trinomial_error_bar():
    # w, l, d = 0.6, 0.3, 0.1 around mu = 0.65:
    # 0.6 * 0.35^2 + 0.3 * 0.65^2 + 0.1 * 0.15^2 = 0.0735 + 0.12675 + 0.00225 = 0.2025
    assert close(stats.trinomial_variance(60, 30, 10), 0.2025)
    # sigma = sqrt(0.2025 / 100) = 0.045; 1.959964 * 0.045 = 0.0881984
    # mu +- that: 0.7381984 and 0.5618016
    #   elo(0.7381984) = -400 log10(0.3546494) = 400 * 0.4502008 = 180.0803
    #   elo(0.5618016) = -400 log10(0.7799878) = 400 * 0.1079122 =  43.1649
    #   (180.0803 - 43.1649) / 2 = 68.4577
    est = stats.estimate(60, 30, 10)
    assert close(est.elo, 107.5381249)
    assert close(est.error, 68.4577, tol=1e-3)
    # LOS: 0.5 * (1 + erf(30 / sqrt(180))) = 0.5 * (1 + erf(2.2360680)) = 0.5 * 1.9984346
    assert close(est.los, 0.9992173)
    assert est.draw_ratio == 0.1
    assert est.line() == "Elo difference: 107.5 +/- 68.5, LOS: 99.9 %, DrawRatio: 10.0 %"


def test_los_and_draw_ratio():
    assert stats.los(10, 10) == 0.5
    # 3 wins 1 loss: erf(2 / sqrt(8)) = erf(0.7071068) = 0.6826895 -> 0.8413447
    assert close(stats.los(3, 1), 0.8413447)
    assert close(stats.los(1, 3), 1 - 0.8413447)
    assert stats.los(0, 0) == 0.5                       # all draws: no evidence either way
    assert stats.draw_ratio(1, 1, 2) == 0.5
    assert stats.draw_ratio(0, 0, 0) == 0.0


def test_pentanomial_counting_from_pairs():
    # points of the same agent in the two games of each pair -> bucket (a + b) * 2
    pairs = [(1, 1), (1, 0), (0.5, 0.5), (0, 0.5), (0, 0), (1, 0.5), (0.5, 1), (0, 1)]
    #   2 pts: (1,1)            -> bucket 4
    #   1 pt : (1,0) (.5,.5) (0,1) -> bucket 2, three pairs
    #   1/2  : (0,.5)           -> bucket 1
    #   0    : (0,0)            -> bucket 0
    #   3/2  : (1,.5) (.5,1)    -> bucket 3, two pairs
    assert stats.pentanomial(pairs) == [1, 1, 3, 2, 1]
    assert stats.pentanomial([]) == [0, 0, 0, 0, 0]


def test_pentanomial_error_bar():
    # counts [1, 2, 3, 2, 2] over scores 0, .25, .5, .75, 1 (10 pairs):
    # mean = (0 + 0.5 + 1.5 + 1.5 + 2) / 10 = 0.55
    # var = (1*0.55^2 + 2*0.3^2 + 3*0.05^2 + 2*0.2^2 + 2*0.45^2) / 10
    #     = (0.3025 + 0.18 + 0.0075 + 0.08 + 0.405) / 10 = 0.0975
    mu, var = stats.pentanomial_mean_variance([1, 2, 3, 2, 2])
    assert close(mu, 0.55) and close(var, 0.0975)
    # sigma = sqrt(0.0975 / 10) = 0.0987421; 1.959964 * sigma = 0.1935309
    # elo(0.7435309) = 400 * log10(0.7435309 / 0.2564691) = 400 * 0.4622640 = 184.9056
    # elo(0.3564691) = -400 * log10(0.6435309 / 0.3564691) = -400 * 0.2565475 = -102.6190
    # (184.9056 + 102.6190) / 2 = 143.7623
    # 11 wins 9 losses (the same 20 games counted one by one) give the point estimate:
    # mu = 0.55, elo = 400 * log10(0.55 / 0.45) = 400 * 0.0871502 = 34.8601
    est = stats.estimate(11, 9, 0, [1, 2, 3, 2, 2])
    assert close(est.elo, 34.8601, tol=1e-3)
    assert close(est.error, 143.7623, tol=1e-3)
    # One pair only: no spread to measure, the trinomial variance is used instead.
    one = stats.estimate(1, 1, 0, [0, 0, 1, 0, 0])
    assert one.error == math.inf        # mu 0.5, sigma 0.5/sqrt(2): the interval leaves 0..1


def test_edge_cases_print_sensibly():
    wins = stats.estimate(10, 0, 0)
    assert wins.elo == math.inf and wins.error == math.inf
    # LOS: 0.5 * (1 + erf(10 / sqrt(20))) = 0.5 * (1 + erf(2.2360680)) = 0.9992173
    assert wins.line() == "Elo difference: +inf +/- inf, LOS: 99.9 %, DrawRatio: 0.0 %"
    assert stats.estimate(0, 10, 0).line() == \
        "Elo difference: -inf +/- inf, LOS: 0.1 %, DrawRatio: 0.0 %"
    assert stats.estimate(0, 0, 10).line() == \
        "Elo difference: 0.0 +/- 0.0, LOS: 50.0 %, DrawRatio: 100.0 %"
    assert stats.estimate(0, 0, 0).line() == \
        "Elo difference: 0.0 +/- 0.0, LOS: 50.0 %, DrawRatio: 0.0 %"
    assert stats.format_elo(-0.04) == "0.0"
    assert stats.format_elo(float("nan")) == "n/a"


def test_sprt_bounds():
    # alpha = beta = 0.05: ln(0.05 / 0.95) = ln(0.0526316) = -2.9444390, and its opposite
    lower, upper = stats.sprt_bounds(0.05, 0.05)
    assert close(lower, -2.9444390) and close(upper, 2.9444390)
    # alpha 0.05, beta 0.1: ln(0.1 / 0.95) = -2.2512918; ln(0.9 / 0.05) = ln 18 = 2.8903718
    lower, upper = stats.sprt_bounds(0.05, 0.1)
    assert close(lower, -2.2512918) and close(upper, 2.8903718)


def test_sprt_llr_trinomial():
    # 60-30-10, H0: 0 Elo (s0 = 0.5), H1: 10 Elo (s1 = 0.5143872); mu 0.65, var 0.2025
    # LLR = n (s1 - s0) (2 mu - s0 - s1) / (2 var)
    #     = 100 * 0.0143872 * (1.3 - 0.5 - 0.5143872) / 0.405
    #     = 100 * 0.0143872 * 0.2856128 / 0.405 = 1.0146084
    assert close(stats.llr_trinomial(60, 30, 10, 0, 10), 1.0146084)
    result = stats.sprt(0, 10, 0.05, 0.05, trinomial=(60, 30, 10))
    assert result.decision is None
    # 1.0146084 / 2.9444390 = 34.46 %
    assert result.line() == "SPRT: llr 1.01 (34.5%), lbound -2.94, ubound 2.94"
    # The mirror image heads for the lower bound with the same size.
    assert close(stats.llr_trinomial(30, 60, 10, -10, 0), -1.0146084)


def test_sprt_llr_pentanomial():
    # counts [1, 2, 3, 2, 2]: mu 0.55, var 0.0975, 10 pairs; H0 0, H1 5 Elo:
    # s1 = 1 / (1 + 10^(-0.0125)) = 1 / (1 + 0.9716279) = 0.5071951
    # LLR = 10 * 0.0071951 * (1.1 - 0.5 - 0.5071951) / (2 * 0.0975)
    #     = 10 * 0.0071951 * 0.0928049 / 0.195 = 0.0342430
    assert close(stats.llr_pentanomial([1, 2, 3, 2, 2], 0, 5), 0.0342430)


def test_sprt_decides_on_one_sided_series_without_crashing():
    # Wins only: the variance is 0; empty classes count 1e-3 (fishtest), so H1 is accepted.
    wins = stats.sprt(0, 5, 0.05, 0.05, trinomial=(10, 0, 0))
    assert wins.decision == "H1" and math.isfinite(wins.llr)
    # Draws only: the score sits at 0.5 = H0's score, far from H1's: H0.
    draws = stats.sprt(0, 5, 0.05, 0.05, trinomial=(0, 0, 10))
    assert draws.decision == "H0"
    losses = stats.sprt(0, 5, 0.05, 0.05, ptnml=[6, 0, 0, 0, 0])
    assert losses.decision == "H0"
    nothing = stats.sprt(0, 5, 0.05, 0.05, ptnml=[0, 0, 0, 0, 0])
    assert nothing.llr == 0 and nothing.decision is None
    assert nothing.line() == "SPRT: llr 0 (0.0%), lbound -2.94, ubound 2.94"
