"""Ratings of many bots from the games of one event: pure functions, no I/O.

Ordo's model, logistic Elo fitted by maximum likelihood (:func:`fit`), with one virtual draw per
pairing, the mean or one bot anchored, groups that never met fitted apart, and 95 % error bars
from the inverse Hessian. Why each, and why not BayesElo's: docs/bench.md ("How the ratings are
fitted").

>>> games = [("A", "B", 1.0)] * 300 + [("A", "B", 0.0)] * 100
>>> r = fit(["A", "B"], pairwise(games))
>>> round(r.elo["A"] - r.elo["B"], 1), abs(round(r.elo["A"] + r.elo["B"], 6))
(190.3, 0.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ref_sim.series.stats import match_stats
#: Elo points per unit of the natural logistic scale (400 / ln 10).
ELO_PER_NAT = 400.0 / math.log(10.0)
#: Virtual draws added to every pairing that played: the prior (docs/bench.md, "How the ratings are fitted").
PRIOR_DRAWS = 1.0


@dataclass(frozen=True)
class Record:
    """Wins, losses and draws of one side (a bot overall, or the first of a pairing)."""
    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws

    @property
    def points(self) -> float:
        return self.wins + self.draws / 2

    @property
    def score(self) -> float:
        return match_stats.score(self.wins, self.losses, self.draws)

    def add(self, points: float) -> Record:
        """This record after one more game worth ``points`` (1, 0.5 or 0)."""
        if points not in (0, 0.5, 1):
            raise ValueError(f"a game is worth 1, 0.5 or 0 points, not {points!r}")
        return Record(self.wins + (points == 1), self.losses + (points == 0),
                      self.draws + (points == 0.5))

    def reversed(self) -> Record:
        """The same games from the other side."""
        return Record(self.losses, self.wins, self.draws)


def pairwise(games) -> dict[tuple[str, str], Record]:
    """Each pairing's record from ``games``, ``(a, b, points of a)`` each (1, 0.5 or 0).

    A pairing is keyed ``(a, b)`` in the order of its first game; later games between the
    two count from ``a``'s side whatever their order.

    >>> pairwise([("A", "B", 1), ("B", "A", 0.5), ("A", "C", 0)])
    {('A', 'B'): Record(wins=1, losses=0, draws=1), ('A', 'C'): Record(wins=0, losses=1, draws=0)}
    """
    records: dict[tuple[str, str], Record] = {}
    for a, b, points in games:
        if a == b:
            raise ValueError(f"{a} cannot play itself")
        if (b, a) in records:
            a, b, points = b, a, 1 - points
        records[a, b] = records.get((a, b), Record()).add(points)
    return records


def standings(names, pairs: dict[tuple[str, str], Record]) -> dict[str, Record]:
    """Each bot's record over all its games (``pairs`` from :func:`pairwise`)."""
    totals = {name: Record() for name in names}
    for (a, b), record in pairs.items():
        for name, side in ((a, record), (b, record.reversed())):
            old = totals.get(name, Record())
            totals[name] = Record(old.wins + side.wins, old.losses + side.losses,
                                  old.draws + side.draws)
    return totals


@dataclass(frozen=True)
class Ratings:
    """The fit: each bot's Elo and 95 % error (nan for a bot without games), the groups of
    bots that can be compared (one group when every bot is connected to every other), and
    the anchor (None: the mean of each group is 0)."""
    elo: dict[str, float]
    error: dict[str, float]
    groups: list[list[str]]
    anchor: str | None = None

    def ranked(self) -> list[str]:
        """The bots, best first; bots without a rating last, in their given order."""
        order = list(self.elo)
        return sorted(order, key=lambda n: (math.isnan(self.elo[n]),
                                            -self.elo[n] if not math.isnan(self.elo[n]) else 0,
                                            order.index(n)))


def fit(names, pairs: dict[tuple[str, str], Record], anchor: str | None = None,
        anchor_elo: float = 0.0, prior_draws: float = PRIOR_DRAWS) -> Ratings:
    """Maximum-likelihood Elo of every bot in ``names`` from ``pairs`` (:func:`pairwise`),
    with ``prior_draws`` virtual draws per pairing that played, the mean of each connected
    group at 0, or ``anchor`` (a name) at ``anchor_elo`` (in its group)."""
    names = list(names)
    if anchor is not None and anchor not in names:
        raise ValueError(f"anchor {anchor!r} is not one of the bots ({', '.join(names)})")
    played = {key: record for key, record in pairs.items() if record.games}
    unknown = sorted({n for key in played for n in key} - set(names))
    if unknown:
        raise ValueError(f"games of bots not in the list: {', '.join(unknown)}")
    elo = dict.fromkeys(names, math.nan)
    error = dict.fromkeys(names, math.nan)
    groups = _groups(names, played)
    for group in groups:
        if len(group) < 2:
            continue                    # no game: no rating
        x, covariance = _fit_group(group, played, prior_draws)
        index = {name: i for i, name in enumerate(group)}
        pivot = index.get(anchor)
        shift = anchor_elo - ELO_PER_NAT * x[pivot] if pivot is not None else 0.0
        for name, i in index.items():
            variance = covariance[i][i]
            if pivot is not None:
                variance += covariance[pivot][pivot] - 2 * covariance[i][pivot]
            elo[name] = ELO_PER_NAT * x[i] + shift
            error[name] = match_stats.Z95 * ELO_PER_NAT * math.sqrt(max(variance, 0.0))
    return Ratings(elo, error, groups, anchor)


def _groups(names, played) -> list[list[str]]:
    """The connected groups of bots (by games played), each in the order of ``names``."""
    parent = {name: name for name in names}

    def root(name):
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for a, b in played:
        parent[root(a)] = root(b)
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(root(name), []).append(name)
    return list(groups.values())


def _fit_group(group, played, prior_draws: float):
    """Newton's method on the log-likelihood of one connected group, the mean held at 0.

    Returns the ratings on the natural scale and their covariance (the pseudo-inverse of
    the information matrix, the mean fixed)."""
    index = {name: i for i, name in enumerate(group)}
    # (i, j, points of i, games), the prior's virtual draws included.
    terms = [(index[a], index[b], r.points + prior_draws / 2, r.games + prior_draws)
             for (a, b), r in played.items() if a in index]
    size = len(group)
    x = [0.0] * size
    for _ in range(100):
        gradient, information = _derivatives(x, terms, size)
        step = _matmul_vector(_centred_inverse(information), gradient)
        # The log-likelihood is concave: a full step is right near the optimum; halving it
        # keeps the first steps from overshooting when a bot won nearly everything.
        scale, before = 1.0, _log_likelihood(x, terms)
        while scale > 1e-6:
            trial = [xi + scale * si for xi, si in zip(x, step)]
            if _log_likelihood(trial, terms) >= before - 1e-12:
                break
            scale /= 2
        x = trial
        if max(abs(s) for s in step) * scale < 1e-10:
            break
    _, information = _derivatives(x, terms, size)
    return x, _centred_inverse(information)


def _expected(xi: float, xj: float) -> float:
    return 1.0 / (1.0 + math.exp(xj - xi))


def _log_likelihood(x, terms) -> float:
    total = 0.0
    for i, j, points, games in terms:
        p = _expected(x[i], x[j])
        total += points * math.log(p) + (games - points) * math.log1p(-p)
    return total


def _derivatives(x, terms, size):
    """The gradient of the log-likelihood and the information matrix (minus its Hessian)."""
    gradient = [0.0] * size
    information = [[0.0] * size for _ in range(size)]
    for i, j, points, games in terms:
        p = _expected(x[i], x[j])
        gradient[i] += points - games * p
        gradient[j] -= points - games * p
        w = games * p * (1.0 - p)
        information[i][i] += w
        information[j][j] += w
        information[i][j] -= w
        information[j][i] -= w
    return gradient, information


def _centred_inverse(matrix):
    """The pseudo-inverse of a connected group's information matrix, whose null space is the
    constant vector: ``(M + J/n)^-1 - J/n`` (``J`` all ones).  Applied to a gradient it gives
    the Newton step with the mean unchanged; it is the covariance of the centred ratings."""
    size = len(matrix)
    shifted = [[value + 1.0 / size for value in row] for row in matrix]
    inverse = _inverse(shifted)
    return [[value - 1.0 / size for value in row] for row in inverse]


def _inverse(matrix):
    """Gauss-Jordan inverse with partial pivoting (a few bots: plain Python is enough)."""
    size = len(matrix)
    rows = [list(row) + [float(i == k) for k in range(size)] for i, row in enumerate(matrix)]
    for column in range(size):
        pivot = max(range(column, size), key=lambda r: abs(rows[r][column]))
        rows[column], rows[pivot] = rows[pivot], rows[column]
        lead = rows[column][column]
        rows[column] = [value / lead for value in rows[column]]
        for r in range(size):
            if r != column and rows[r][column]:
                factor = rows[r][column]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[column])]
    return [row[size:] for row in rows]


def _matmul_vector(matrix, vector):
    return [sum(a * b for a, b in zip(row, vector)) for row in matrix]


# -- does the ranking separate the bots? -------------------------------------------------------

#: More rounds than this are said as "more than": the estimate means little that far out.
MOST_ROUNDS = 1000


@dataclass(frozen=True)
class Gap:
    """Two bots next to each other in the ranking: ``upper`` above ``lower`` by ``gap`` Elo,
    with 95 % bars ``bars`` (the sum of theirs: the anchor's is 0).  ``rounds``: about how many
    rounds in all would make the gap exceed the bars (None when it already does, or when the
    gap is 0: no number of rounds)."""
    upper: str
    lower: str
    gap: float
    bars: float
    rounds: float | None

    @property
    def separated(self) -> bool:
        return self.gap > self.bars


def gaps(fit: Ratings, rounds: float) -> list[Gap]:
    """Each pair of neighbours in the ranking (within a group that met) and whether their
    error bars overlap, after ``rounds`` rounds (played, a fraction when part of one).

    The estimate: a bar shrinks as 1/sqrt(games), and every round adds the same games, so after
    R rounds the bars are ``bars * sqrt(rounds / R)``; the gap, assumed to stay as it is,
    exceeds them once ``R > rounds * (bars / gap) ** 2``.

    >>> r = Ratings({"A": 50.0, "B": 0.0, "C": -50.0}, {"A": 40.0, "B": 40.0, "C": 40.0},
    ...             [["A", "B", "C"]])
    >>> [(g.upper, g.lower, g.separated, round(g.rounds)) for g in gaps(r, 2)]
    [('A', 'B', False, 5), ('B', 'C', False, 5)]
    """
    group_of = {name: i for i, group in enumerate(fit.groups) for name in group}
    rated = [name for name in fit.ranked() if not math.isnan(fit.elo[name])]
    # Neighbours within a group: groups that never met, even through others, do not compare.
    neighbours = [(upper, lower) for i, upper in enumerate(rated)
                  for lower in [next((n for n in rated[i + 1:] if group_of[n] == group_of[upper]),
                                     None)] if lower is not None]
    result = []
    for upper, lower in neighbours:
        bars = sum(0.0 if math.isnan(fit.error[n]) else fit.error[n] for n in (upper, lower))
        gap = fit.elo[upper] - fit.elo[lower]
        needed = None
        if gap <= bars and gap > 0 and rounds > 0:
            needed = rounds * (bars / gap) ** 2
        result.append(Gap(upper, lower, gap, bars, needed))
    return result


def separation_lines(fit: Ratings, rounds: float) -> list[str]:
    """What :func:`gaps` finds, a line for each pair of neighbours and one to sum up."""
    found = gaps(fit, rounds)
    if not found:
        return []
    apart = sum(g.separated for g in found)
    lines = [f"The ranking separates {apart} of {len(found)} pairs of neighbours (their 95 % "
             "error bars do not overlap)" + (":" if apart < len(found) else ".")]
    for g in found:
        if g.separated:
            lines.append(f"  {g.upper} above {g.lower}: separated ({g.gap:.0f} Elo apart, "
                         f"bars {g.bars:.0f} together)")
            continue
        if g.rounds is None:
            more = "no number of rounds would separate them (the same rating)"
        elif g.rounds - rounds > MOST_ROUNDS:
            more = f"more than {MOST_ROUNDS} more rounds would be needed"
        else:
            more = f"about {max(1, math.ceil(g.rounds - rounds))} more rounds might separate them"
        lines.append(f"  {g.upper} and {g.lower}: bars overlap ({g.gap:.0f} Elo apart, bars "
                     f"{g.bars:.0f} together): {more}")
    if apart < len(found):
        lines.append(f"  An estimate after {round(rounds, 2):g} round{'s' * (rounds != 1)}: bars shrink as "
                     "1/sqrt(games), the gaps assumed to stay as they are.")
    return lines
