"""Match statistics as pure functions: Elo, error bars, LOS, pentanomial counts, SPRT.

The formulas are the ones chess engine testers use (cutechess-cli's Elo and error bar, fastchess's
pentanomial variance for paired games, fishtest's and fastchess's regularised generalized SPRT),
so the figures read like theirs; each formula: docs/bench.md, "The formulas".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Two-sided 95 %: the 0.975 quantile of the standard normal distribution.
Z95 = 1.959963984540054
#: What an empty outcome class counts as in the SPRT (fishtest's and fastchess's
#: regularisation).
EPSILON = 1e-3
#: Fewer games than this give no Elo estimate ("too few games").
MIN_GAMES = 2
#: Scores of a pentanomial pair, per game: 0-2, 1/2-2, 1-2, 3/2-2, 2-2 points out of 2.
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


def score(wins: int, losses: int, draws: int) -> float:
    """Points per game, a draw counting 1/2; 0.5 for no games.

    >>> score(2, 1, 1)
    0.625
    """
    n = wins + losses + draws
    return (wins + draws / 2) / n if n else 0.5


def elo_from_score(mu: float) -> float:
    """Logistic Elo difference for an expected score ``mu`` (0..1); +-inf at 1 and 0.

    >>> round(elo_from_score(0.75), 1)
    190.8
    """
    if mu >= 1.0:
        return math.inf
    if mu <= 0.0:
        return -math.inf
    return -400.0 * math.log10(1.0 / mu - 1.0)


def score_from_elo(elo: float) -> float:
    """The expected score for a logistic Elo difference (inverse of :func:`elo_from_score`).

    >>> score_from_elo(0.0)
    0.5
    """
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def trinomial_variance(wins: int, losses: int, draws: int) -> float:
    """Variance of one game's score (1, 0, 1/2) over the observed frequencies; 0 for no games."""
    n = wins + losses + draws
    if not n:
        return 0.0
    mu = score(wins, losses, draws)
    return (wins * (1 - mu) ** 2 + losses * mu ** 2 + draws * (0.5 - mu) ** 2) / n


def pentanomial_mean_variance(ptnml) -> tuple[float, float]:
    """Mean and variance of a pair's score per game (0, 1/4, 1/2, 3/4, 1) over the counts."""
    pairs = sum(ptnml)
    if not pairs:
        return 0.5, 0.0
    mu = sum(c * s for c, s in zip(ptnml, PAIR_SCORES)) / pairs
    return mu, sum(c * (s - mu) ** 2 for c, s in zip(ptnml, PAIR_SCORES)) / pairs


def elo_error(mu: float, sigma: float) -> float:
    """Half the width of the 95 % Elo interval for score ``mu`` with standard error ``sigma``.

    Infinite when an end of the interval reaches a score of 0 or 1 (all wins, say).
    """
    low, high = mu - Z95 * sigma, mu + Z95 * sigma
    if low <= 0.0 or high >= 1.0:
        return math.inf
    return (elo_from_score(high) - elo_from_score(low)) / 2.0


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority (0..1); draws do not count; 0.5 when W + L = 0.

    >>> los(10, 10)
    0.5
    """
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


def draw_ratio(wins: int, losses: int, draws: int) -> float:
    """Draws per game (0 for no games)."""
    n = wins + losses + draws
    return draws / n if n else 0.0


def pentanomial(pair_points) -> list[int]:
    """Count pairs by the first player's points over both games: ``[0, 1/2, 1, 3/2, 2]``.

    ``pair_points`` holds, per pair, the two game scores (1, 1/2 or 0) of the same agent.

    >>> pentanomial([(1, 1), (1, 0), (0.5, 0.5), (0, 0.5)])
    [0, 1, 2, 0, 1]
    """
    counts = [0] * 5
    for a, b in pair_points:
        counts[round((a + b) * 2)] += 1
    return counts


def paired_pentanomial(scores) -> list[int]:
    """:func:`pentanomial` over the complete pairs among ``scores``, ``(pair, points)`` each: the
    first agent's points (1, 1/2 or 0) in a game of that pair; a pair with one game so far
    does not count.

    >>> paired_pentanomial([(0, 1), (1, 0.5), (0, 0.5), (2, 1)])
    [0, 0, 0, 1, 0]
    """
    by_pair: dict = {}
    for pair, points in scores:
        by_pair.setdefault(pair, []).append(points)
    return pentanomial(points for points in by_pair.values() if len(points) == 2)


@dataclass(frozen=True)
class EloEstimate:
    """What the ``Elo difference`` line shows."""
    elo: float
    error: float
    los: float          # 0..1
    draw_ratio: float   # 0..1
    games: int = 2

    def elo_text(self) -> str:
        """``85.3 +/- 40.1``, or ``too few games`` below :data:`MIN_GAMES` games (one game
        would say ``+inf +/- inf``, which reads like a result)."""
        if self.games < MIN_GAMES:
            return "too few games"
        return f"{format_elo(self.elo)} +/- {format_elo(self.error, sign=False)}"

    def line(self) -> str:
        """``Elo difference: 85.3 +/- 40.1, LOS: 99.9 %, DrawRatio: 12.0 %``."""
        return (f"Elo difference: {self.elo_text()}, "
                f"LOS: {100 * self.los:.1f} %, DrawRatio: {100 * self.draw_ratio:.1f} %")


def estimate(wins: int, losses: int, draws: int, ptnml=None) -> EloEstimate:
    """Elo, 95 % error, LOS and draw ratio for W/L/D.

    The Elo is the score's over all games.  The error bar uses the pentanomial variance when
    ``ptnml`` (the counts over complete pairs) has at least two pairs (one pair has no
    spread to measure), else the trinomial one.
    """
    n = wins + losses + draws
    mu = score(wins, losses, draws)
    if ptnml is not None and sum(ptnml) >= 2:
        _, var = pentanomial_mean_variance(ptnml)
        sigma = math.sqrt(var / sum(ptnml))
    else:
        sigma = math.sqrt(trinomial_variance(wins, losses, draws) / n) if n else 0.0
    error = elo_error(mu, sigma) if n else 0.0
    return EloEstimate(elo_from_score(mu) if n else 0.0, error, los(wins, losses),
                       draw_ratio(wins, losses, draws), n)


def summary_lines(names, wins: int, losses: int, draws: int, ptnml=None) -> list[str]:
    """The cutechess-style lines: ``Score of A vs B: W - L - D  [s] N``, the Elo estimate (with
    the pentanomial error bar when ``ptnml`` has pairs), and ``Ptnml(0-2)`` when given.

    Every series tool (ref_sim.match, ref_sim.stdio, ref_sim.arena) prints these, so they
    share one convention: the score with 3 decimals as cutechess-cli prints it, and a game
    with no winner is a "draw" (``D``, ``DrawRatio``)."""
    lines = [f"Score of {names[0]} vs {names[1]}: {wins} - {losses} - {draws}  "
             f"[{score(wins, losses, draws):.3f}] {wins + losses + draws}",
             estimate(wins, losses, draws, ptnml if ptnml and sum(ptnml) else None).line()]
    if ptnml is not None:
        lines.append(f"Ptnml(0-2): [{', '.join(map(str, ptnml))}]")
    return lines


def format_elo(value: float, sign: bool = True) -> str:
    """One decimal; ``+inf``/``-inf`` and ``inf`` spelled out (never a traceback, never ``nan``)."""
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return ("+inf" if value > 0 else "-inf") if sign else "inf"
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


# -- SPRT ---------------------------------------------------------------------------------

def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's bounds on the LLR: ``(ln(beta / (1 - alpha)), ln((1 - beta) / alpha))``."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def _mle_theta(values, freqs, s: float) -> float:
    """The root of ``sum f_i d_i / (1 + theta d_i)`` (``d_i = a_i - s``), by bisection.

    The sum falls from +inf to -inf on ``(-1 / max d, -1 / min d)``, where every
    ``1 + theta d_i`` is positive, so the root is unique and bisection cannot miss it.
    """
    deltas = [a - s for a in values]
    low, high = -1.0 / max(deltas), -1.0 / min(deltas)
    for _ in range(200):
        middle = (low + high) / 2.0
        if middle in (low, high):          # the interval cannot shrink any more
            break
        total = sum(f * d / (1.0 + middle * d) for f, d in zip(freqs, deltas))
        if total > 0:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0


def _llr(values, counts, elo0: float, elo1: float) -> float:
    if not sum(counts):
        return 0.0
    counts = [c if c else EPSILON for c in counts]      # the regularisation
    total = sum(counts)
    freqs = [c / total for c in counts]
    log_ratio = 0.0
    s0, s1 = score_from_elo(elo0), score_from_elo(elo1)
    theta0, theta1 = _mle_theta(values, freqs, s0), _mle_theta(values, freqs, s1)
    for a, f in zip(values, freqs):
        # ln(p1 / p0) with p = f / (1 + theta (a - s)): the f cancels.
        log_ratio += f * (math.log1p(theta0 * (a - s0)) - math.log1p(theta1 * (a - s1)))
    return total * log_ratio


def llr_trinomial(wins: int, losses: int, draws: int, elo0: float, elo1: float) -> float:
    """GSPRT log-likelihood ratio of H1 (elo1) against H0 (elo0) from independent games."""
    return _llr((1.0, 0.5, 0.0), (wins, draws, losses), elo0, elo1)


def llr_pentanomial(ptnml, elo0: float, elo1: float) -> float:
    """GSPRT log-likelihood ratio from pair counts ``[0, 1/2, 1, 3/2, 2]`` points per pair."""
    return _llr(PAIR_SCORES, list(ptnml), elo0, elo1)


@dataclass(frozen=True)
class SprtResult:
    llr: float
    lower: float
    upper: float

    @property
    def decision(self) -> str | None:
        """``"H1"`` (elo >= elo1 accepted), ``"H0"`` (elo <= elo0 accepted) or None."""
        if self.llr >= self.upper:
            return "H1"
        if self.llr <= self.lower:
            return "H0"
        return None

    def line(self) -> str:
        """``SPRT: llr 1.23 (41.8%), lbound -2.94, ubound 2.94``; the percentage is of the
        bound the LLR heads for (negative towards the lower bound)."""
        bound = self.upper if self.llr >= 0 else -self.lower
        return (f"SPRT: llr {self.llr:.3g} ({100 * self.llr / bound:.1f}%), "
                f"lbound {self.lower:.3g}, ubound {self.upper:.3g}")

    def report_line(self, elo0: float, elo1: float) -> str:
        """:meth:`line`, then which hypothesis was accepted, if one was."""
        return self.line() + {"H1": f" - H1 was accepted (Elo >= {elo1:g})",
                              "H0": f" - H0 was accepted (Elo <= {elo0:g})",
                              None: ""}[self.decision]


# -- the runners' --sprt option (ref_sim.match, ref_sim.arena) ----------------------------------

#: --games with --sprt when not given: a maximum, the SPRT should decide before.
SPRT_MAX_GAMES = 1000
#: --sprt's Elo bounds beyond this are no test (the expected score is 1 or 0 to the float).
MAX_SPRT_ELO = 1000.0


def add_sprt_option(parser, example: str) -> None:
    """``--sprt ELO0 ELO1 ALPHA BETA`` on ``parser``; :func:`check_sprt_option` after parsing."""
    from agent.options import real

    parser.add_argument("--sprt", nargs=4, type=real(-MAX_SPRT_ELO, MAX_SPRT_ELO),
                        metavar=("ELO0", "ELO1", "ALPHA", "BETA"),
                        help="stop when the SPRT accepts H0 (Elo <= ELO0) or H1 (Elo >= ELO1), "
                             f"e.g. --sprt {example}")


def check_sprt_option(parser, values) -> None:
    """The parser's one-line error unless ``--sprt``'s values (or None) make a test."""
    if values:
        elo0, elo1, alpha, beta = values
        if not elo0 < elo1 or not (0 < alpha < 1 and 0 < beta < 1):
            parser.error("--sprt needs ELO0 < ELO1 and 0 < ALPHA, BETA < 1")


def sprt(elo0: float, elo1: float, alpha: float, beta: float, *, trinomial=None,
         ptnml=None) -> SprtResult:
    """The SPRT state: pentanomial if ``ptnml`` (pair counts) is given, else ``trinomial``
    (a ``(wins, losses, draws)`` triple)."""
    lower, upper = sprt_bounds(alpha, beta)
    if ptnml is not None:
        value = llr_pentanomial(ptnml, elo0, elo1)
    else:
        value = llr_trinomial(*trinomial, elo0, elo1)
    return SprtResult(value, lower, upper)
