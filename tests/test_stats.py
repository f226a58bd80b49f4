"""ref_sim.series.stats.match_stats against values computed by hand (the working is in the comments).

Logarithms and square roots below were taken once with a calculator; the tests compare the
module's results with those literals, never with a second call of the same formula.
"""

import math

import pytest

from ref_sim.series.stats import match_stats
def close(a, b, tol=1e-6):
    return a == pytest.approx(b, abs=tol)


def test_score_and_logistic_elo():
    # 60 wins, 30 losses, 10 draws: (60 + 10/2) / 100 = 0.65
    assert match_stats.score(60, 30, 10) == 0.65
    # 1/0.65 - 1 = 0.538461538...; log10 = -0.268845312...; * -400 = 107.5381249
    assert close(match_stats.elo_from_score(0.65), 107.5381249)
    # 0.75: 1/0.75 - 1 = 1/3; -400 * log10(1/3) = 400 * 0.4771212547 = 190.8485019
    assert close(match_stats.elo_from_score(0.75), 190.8485019)
    assert close(match_stats.elo_from_score(0.25), -190.8485019)
    assert match_stats.elo_from_score(0.5) == 0.0
    # 10 Elo: 1 / (1 + 10^(-0.025)) = 1 / (1 + 0.9440608763) = 0.5143871842
    assert close(match_stats.score_from_elo(10), 0.5143871842)
    assert match_stats.elo_from_score(1.0) == math.inf and match_stats.elo_from_score(0.0) == -math.inf


def test_trinomial_error_bar():
    # w, l, d = 0.6, 0.3, 0.1 around mu = 0.65:
    # 0.6 * 0.35^2 + 0.3 * 0.65^2 + 0.1 * 0.15^2 = 0.0735 + 0.12675 + 0.00225 = 0.2025
    assert close(match_stats.trinomial_variance(60, 30, 10), 0.2025)
    # sigma = sqrt(0.2025 / 100) = 0.045; 1.959964 * 0.045 = 0.0881984
    # mu +- that: 0.7381984 and 0.5618016
    #   elo(0.7381984) = -400 log10(0.3546494) = 400 * 0.4502008 = 180.0803
    #   elo(0.5618016) = -400 log10(0.7799878) = 400 * 0.1079122 =  43.1649
    #   (180.0803 - 43.1649) / 2 = 68.4577
    est = match_stats.estimate(60, 30, 10)
    assert close(est.elo, 107.5381249)
    assert close(est.error, 68.4577, tol=1e-3)
    # LOS: 0.5 * (1 + erf(30 / sqrt(180))) = 0.5 * (1 + erf(2.2360680)) = 0.5 * 1.9984346
    assert close(est.los, 0.9992173)
    assert est.draw_ratio == 0.1
    assert est.line() == "Elo difference: 107.5 +/- 68.5, LOS: 99.9 %, DrawRatio: 10.0 %"


def test_los_and_draw_ratio():
    assert match_stats.los(10, 10) == 0.5
    # 3 wins 1 loss: erf(2 / sqrt(8)) = erf(0.7071068) = 0.6826895 -> 0.8413447
    assert close(match_stats.los(3, 1), 0.8413447)
    assert close(match_stats.los(1, 3), 1 - 0.8413447)
    assert match_stats.los(0, 0) == 0.5                       # all draws: no evidence either way
    assert match_stats.draw_ratio(1, 1, 2) == 0.5
    assert match_stats.draw_ratio(0, 0, 0) == 0.0


def test_pentanomial_counting_from_pairs():
    # points of the same agent in the two games of each pair -> bucket (a + b) * 2
    pairs = [(1, 1), (1, 0), (0.5, 0.5), (0, 0.5), (0, 0), (1, 0.5), (0.5, 1), (0, 1)]
    #   2 pts: (1,1)            -> bucket 4
    #   1 pt : (1,0) (.5,.5) (0,1) -> bucket 2, three pairs
    #   1/2  : (0,.5)           -> bucket 1
    #   0    : (0,0)            -> bucket 0
    #   3/2  : (1,.5) (.5,1)    -> bucket 3, two pairs
    assert match_stats.pentanomial(pairs) == [1, 1, 3, 2, 1]
    assert match_stats.pentanomial([]) == [0, 0, 0, 0, 0]


def test_pentanomial_error_bar():
    # counts [1, 2, 3, 2, 2] over scores 0, .25, .5, .75, 1 (10 pairs):
    # mean = (0 + 0.5 + 1.5 + 1.5 + 2) / 10 = 0.55
    # var = (1*0.55^2 + 2*0.3^2 + 3*0.05^2 + 2*0.2^2 + 2*0.45^2) / 10
    #     = (0.3025 + 0.18 + 0.0075 + 0.08 + 0.405) / 10 = 0.0975
    mu, var = match_stats.pentanomial_mean_variance([1, 2, 3, 2, 2])
    assert close(mu, 0.55) and close(var, 0.0975)
    # sigma = sqrt(0.0975 / 10) = 0.0987421; 1.959964 * sigma = 0.1935309
    # elo(0.7435309) = 400 * log10(0.7435309 / 0.2564691) = 400 * 0.4622640 = 184.9056
    # elo(0.3564691) = -400 * log10(0.6435309 / 0.3564691) = -400 * 0.2565475 = -102.6190
    # (184.9056 + 102.6190) / 2 = 143.7623
    # 11 wins 9 losses (the same 20 games counted one by one) give the point estimate:
    # mu = 0.55, elo = 400 * log10(0.55 / 0.45) = 400 * 0.0871502 = 34.8601
    est = match_stats.estimate(11, 9, 0, [1, 2, 3, 2, 2])
    assert close(est.elo, 34.8601, tol=1e-3)
    assert close(est.error, 143.7623, tol=1e-3)
    # One pair only: no spread to measure, the trinomial variance is used instead.
    one = match_stats.estimate(1, 1, 0, [0, 0, 1, 0, 0])
    assert one.error == math.inf        # mu 0.5, sigma 0.5/sqrt(2): the interval leaves 0..1


def test_edge_cases_print_sensibly():
    wins = match_stats.estimate(10, 0, 0)
    assert wins.elo == math.inf and wins.error == math.inf
    # LOS: 0.5 * (1 + erf(10 / sqrt(20))) = 0.5 * (1 + erf(2.2360680)) = 0.9992173
    assert wins.line() == "Elo difference: +inf +/- inf, LOS: 99.9 %, DrawRatio: 0.0 %"
    assert match_stats.estimate(0, 10, 0).line() == \
        "Elo difference: -inf +/- inf, LOS: 0.1 %, DrawRatio: 0.0 %"
    assert match_stats.estimate(0, 0, 10).line() == \
        "Elo difference: 0.0 +/- 0.0, LOS: 50.0 %, DrawRatio: 100.0 %"
    assert match_stats.estimate(0, 0, 0).line() == \
        "Elo difference: too few games, LOS: 50.0 %, DrawRatio: 0.0 %"
    assert match_stats.format_elo(-0.04) == "0.0"
    assert match_stats.format_elo(float("nan")) == "n/a"


def test_sprt_bounds():
    # alpha = beta = 0.05: ln(0.05 / 0.95) = ln(0.0526316) = -2.9444390, and its opposite
    lower, upper = match_stats.sprt_bounds(0.05, 0.05)
    assert close(lower, -2.9444390) and close(upper, 2.9444390)
    # alpha 0.05, beta 0.1: ln(0.1 / 0.95) = -2.2512918; ln(0.9 / 0.05) = ln 18 = 2.8903718
    lower, upper = match_stats.sprt_bounds(0.05, 0.1)
    assert close(lower, -2.2512918) and close(upper, 2.8903718)


def quadratic_llr(wins, losses, draws, elo0, elo1):
    """The regularised trinomial GLR worked out another way than the module's bisection.

    With three classes the MLE equation sum f_i d_i / (1 + t d_i) = 0 (d_i = a_i - s),
    multiplied by the three (1 + t d_j), is the quadratic
    t^2 (d0 d1 d2) + t (sum_i f_i d_i (sum_{j != i} d_j)) + sum_i f_i d_i = 0,
    whose root in (-1 / max d, -1 / min d) gives p_i = f_i / (1 + t d_i).
    """
    counts = [c or 1e-3 for c in (losses, draws, wins)]
    total = sum(counts)
    f = [c / total for c in counts]
    values = (0.0, 0.5, 1.0)

    def mle(s):
        d = [a - s for a in values]
        qa = d[0] * d[1] * d[2]
        qb = sum(f[i] * d[i] * (sum(d) - d[i]) for i in range(3))
        qc = sum(f[i] * d[i] for i in range(3))
        low, high = -1 / max(d), -1 / min(d)
        if abs(qa) < 1e-15:     # s = 0.5: the draw's d is 0 and the equation is linear
            roots = [-qc / qb]
        else:
            roots = [(-qb + sign * math.sqrt(qb * qb - 4 * qa * qc)) / (2 * qa) for sign in (1, -1)]
        (t,) = [r for r in roots if low < r < high]
        return [f[i] / (1 + t * d[i]) for i in range(3)]
    s0, s1 = (1 / (1 + 10 ** (-elo / 400)) for elo in (elo0, elo1))
    p0, p1 = mle(s0), mle(s1)
    return total * sum(f[i] * math.log(p1[i] / p0[i]) for i in range(3))


def test_sprt_llr_trinomial():
    # 60-30-10, H0: 0 Elo, H1: 10 Elo.  The normal approximation
    # n (s1 - s0) (2 mu - s0 - s1) / (2 var) = 1.0146084 (mu 0.65, var 0.2025); the exact
    # GLR of fishtest and fastchess is a little lower here.
    llr = match_stats.llr_trinomial(60, 30, 10, 0, 10)
    assert close(llr, quadratic_llr(60, 30, 10, 0, 10), 1e-9)
    assert 0.9 < llr < 1.0146084
    result = match_stats.sprt(0, 10, 0.05, 0.05, trinomial=(60, 30, 10))
    assert result.decision is None
    assert result.line() == f"SPRT: llr {llr:.3g} ({100 * llr / 2.9444390:.1f}%), lbound -2.94, ubound 2.94"
    # The mirror image heads for the lower bound with the same size.
    assert close(match_stats.llr_trinomial(30, 60, 10, -10, 0), -llr, 1e-9)


@pytest.mark.parametrize("wins, losses, draws", [(2, 0, 0), (0, 0, 2), (1, 1, 0), (7, 2, 5),
                                                 (0, 3, 1)])
def test_sprt_llr_trinomial_small_counts_by_the_quadratic(wins, losses, draws):
    assert close(match_stats.llr_trinomial(wins, losses, draws, 0, 20),
                 quadratic_llr(wins, losses, draws, 0, 20), 1e-9)


def test_two_wins_by_hand():
    # W 2, L 0, D 0 regularised: counts (L, D, W) = (0.001, 0.001, 2), N = 2.002,
    # f = (0.00049950, 0.00049950, 0.99900100).
    # H0, s0 = 0.5: d = (-0.5, 0, 0.5); the draw term vanishes, so
    #   f_L (-0.5) / (1 - t/2) + f_W (0.5) / (1 + t/2) = 0  =>  t0 = 2 (f_W - f_L) / (f_W + f_L)
    #   = 2 * 0.99850150 / 0.99950050 = 1.99800100;
    #   p0 = (f_L / 0.00099950, f_D, f_W / 1.99900050) = (0.49975, 0.00049950, 0.49975).
    # H1, 20 Elo: s1 = 1 / (1 + 10^-0.05) = 1 / 1.8912509 = 0.5287506; the quadratic of
    # quadratic_llr gives t1 = 1.8892452, so 1 + t1 (1 - s1) = 1.8903057 and for the class
    # holding 99.9 % of the mass ln(p1_W / p0_W) = ln(1.9990010 / 1.8903057) = 0.0559087.
    # LLR ~ N f_W 0.0559087 = 2.002 * 0.9990010 * 0.0559087 = 0.1118180, less a trace from
    # the two regularised classes: 0.1118140.
    assert close(match_stats.llr_trinomial(2, 0, 0, 0, 20), 0.1118140, 1e-6)


def test_sprt_llr_matches_fastchess_figures():
    # fastchess's own SPRT tests (app/tests/sprt_test.cpp, "logistic" model), to their
    # precision of 1 %: trinomial W-L-D and pentanomial [LL, LD, WL + DD, WD, WW].
    cases = [
        (match_stats.llr_trinomial(21404, 21184, 40708, 0.5, 2.5), -1.57),
        (match_stats.llr_trinomial(57433, 57030, 106593, 0, 2), -2.59),
        (match_stats.llr_pentanomial([223, 9863, 20279 + 1000, 10037, 246], 0.5, 2.5), -3.07),
        (match_stats.llr_pentanomial([871, 26175, 55003 + 980, 26678, 821], 0, 2), -4.98),
    ]
    for llr, expected in cases:
        assert llr == pytest.approx(expected, rel=0.01)


def polynomial_llr(ptnml, elo0, elo1):
    """The pentanomial GLR through the roots of the quartic (numpy), not by bisection."""
    np = pytest.importorskip("numpy")
    counts = [c or 1e-3 for c in ptnml]
    total = sum(counts)
    f = [c / total for c in counts]
    values = (0.0, 0.25, 0.5, 0.75, 1.0)

    def mle(s):
        d = [a - s for a in values]
        poly = np.polynomial.Polynomial([0.0])
        for i in range(5):
            term = np.polynomial.Polynomial([f[i] * d[i]])
            for j in range(5):
                if j != i:
                    term = term * np.polynomial.Polynomial([1.0, d[j]])
            poly = poly + term
        low, high = -1 / max(d), -1 / min(d)
        (t,) = [r.real for r in poly.roots() if abs(r.imag) < 1e-12 and low < r.real < high]
        return [f[i] / (1 + t * d[i]) for i in range(5)]
    s0, s1 = (1 / (1 + 10 ** (-elo / 400)) for elo in (elo0, elo1))
    p0, p1 = mle(s0), mle(s1)
    return total * sum(f[i] * math.log(p1[i] / p0[i]) for i in range(5))


@pytest.mark.parametrize("ptnml", [[1, 2, 3, 2, 2], [0, 0, 0, 0, 1], [0, 0, 1, 0, 0],
                                   [0, 1, 5, 9, 3], [4, 0, 0, 0, 0]])
def test_sprt_llr_pentanomial_by_the_quartic(ptnml):
    assert close(match_stats.llr_pentanomial(ptnml, 0, 20), polynomial_llr(ptnml, 0, 20), 1e-7)


def test_one_pair_does_not_decide():
    # The README's example, --sprt 0 20 0.05 0.05, after one pair won twice: the normal
    # approximation on near-zero variance gave LLR 7.46 and "H1 accepted" after 2 games.
    # The regularised GLR is 0.056: 1.9 % of the way to the upper bound.
    won = match_stats.sprt(0, 20, 0.05, 0.05, ptnml=[0, 0, 0, 0, 1])
    assert close(won.llr, 0.0560167, 1e-6) and won.decision is None
    split = match_stats.sprt(0, 20, 0.05, 0.05, ptnml=[0, 0, 1, 0, 0])
    assert split.decision is None and -2.94 < split.llr < 0
    # Unpaired, two games won: the same story.
    assert match_stats.sprt(0, 20, 0.05, 0.05, trinomial=(2, 0, 0)).decision is None


def test_sprt_decides_on_one_sided_series_without_crashing():
    # Wins only: it takes many of them, but H1 is accepted (each won pair adds ~0.056).
    assert match_stats.sprt(0, 20, 0.05, 0.05, ptnml=[0, 0, 0, 0, 10]).decision is None
    wins = match_stats.sprt(0, 20, 0.05, 0.05, ptnml=[0, 0, 0, 0, 60])
    assert wins.decision == "H1" and math.isfinite(wins.llr)
    # Draws only: the score sits at 0.5 = H0's score, far from H1's: H0, in time.
    draws = match_stats.sprt(0, 20, 0.05, 0.05, trinomial=(0, 0, 300))
    assert draws.decision == "H0"
    losses = match_stats.sprt(0, 20, 0.05, 0.05, ptnml=[60, 0, 0, 0, 0])
    assert losses.decision == "H0"
    nothing = match_stats.sprt(0, 5, 0.05, 0.05, ptnml=[0, 0, 0, 0, 0])
    assert nothing.llr == 0 and nothing.decision is None
    assert nothing.line() == "SPRT: llr 0 (0.0%), lbound -2.94, ubound 2.94"


def test_one_game_says_too_few_games():
    # One win used to print "Elo +inf +/- inf", which reads like a result.
    # LOS: 0.5 * (1 + erf(1 / sqrt 2)) = 0.5 * (1 + 0.6826895) = 0.8413447
    lines = match_stats.summary_lines(["A", "B"], 1, 0, 0)
    assert lines == ["Score of A vs B: 1 - 0 - 0  [1.000] 1",
                     "Elo difference: too few games, LOS: 84.1 %, DrawRatio: 0.0 %"]
    assert match_stats.estimate(0, 0, 1).elo_text() == "too few games"
    assert match_stats.estimate(2, 0, 0).elo_text() == "+inf +/- inf"


def test_score_has_three_decimals_like_cutechess():
    # 37 - 2 - 1: (37 + 0.5) / 40 = 0.9375 -> "0.938" (never "0.94")
    assert match_stats.summary_lines(["A", "B"], 37, 2, 1)[0] == "Score of A vs B: 37 - 2 - 1  [0.938] 40"
