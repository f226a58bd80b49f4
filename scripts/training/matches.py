"""``match``: the fitted evaluation against another in one process, with paired openings, and
the runner's summary of it."""

from __future__ import annotations

import time
from pathlib import Path

from agent.core import make_searcher
from agent.engines import SearchEngine
from ref_sim.selfplay import self_play_evaluator
from scripts.training.errors import InputError, StepStopped


def match(pairs: int, nodes: int, opponent_nodes: int, seed: int, data: Path | None, opponent: str = "classic",
          seconds: float | None = None, sprt_bounds: list[float] | None = None) -> None:
    """Fitted (``data``, default the packaged file) against ``opponent`` -- classic, the seed bot
    at depth 3, or a data file of agent/data (``eval-v1``) -- in one process, with paired
    openings, at fixed node budgets (the result depends on the evaluations only, not on the
    load) or ``seconds`` per move; with ``sprt_bounds`` (Elo0, Elo1) until the pentanomial SPRT
    (alpha = beta = 0.05) decides or ``pairs`` are played."""
    from agent.engines import SeedEngine
    from ref_sim.series.stats import match_stats
    from agent.eval_fitted import EvalDataError, FittedEvaluator, load_data
    from ref_sim.selfplay import play_pairs

    try:
        fitted = FittedEvaluator(load_data(data) if data else None)
    except EvalDataError as error:
        raise InputError(f"match: --data: {error}") from None
    other = None if opponent == "seed" else self_play_evaluator(opponent)
    budget = (f"{seconds:g} s" if seconds else f"{nodes}", f"{seconds:g} s" if seconds else f"{opponent_nodes}")
    names = (f"{data.stem if data else 'fitted'}@{budget[0]}",
             "seed:depth=3" if opponent == "seed" else f"{opponent}@{budget[1]}")
    print(f"match: {names[0]} vs {names[1]}{' per move' if seconds else ' nodes per move'}, {pairs} openings x 2"
          f"{' at most' if sprt_bounds else ''}, seed {seed}", flush=True)
    points: list[float] = []
    started = time.time()

    def engine(evaluator, budget):
        # The compiled core where there is one (a fresh table per game), as the agent runs.
        return SearchEngine(make_searcher(evaluator, 16, None, prefault=bool(seconds))[0],
                            nodes=None if seconds else budget)

    def sprt():
        return match_stats.sprt(*sprt_bounds, 0.05, 0.05, ptnml=match_stats.pentanomial(
            [points[i], points[i + 1]] for i in range(0, len(points) - 1, 2)))

    def on_game(result, tally):
        points.append(1.0 if result.winner == 0 else 0.0 if result.winner == 1 else 0.5)
        if len(points) % 20 == 0:
            print(f"  {len(points)} games: +{tally[0]} -{tally[1]} ={tally[2]}  ({time.time() - started:.0f} s)",
                  flush=True)

    def undecided() -> bool:
        """No SPRT, or not decided after a whole pair."""
        return not (sprt_bounds and points and len(points) % 2 == 0 and sprt().decision)

    try:
        play_pairs(lambda: engine(fitted, nodes),
                   SeedEngine if other is None else lambda: engine(other, opponent_nodes),
                   pairs, seed=seed, seconds=seconds, on_game=on_game, wanted=undecided)
    except KeyboardInterrupt as interrupt:          # the games so far, then one line
        summary(names, points, sprt_bounds and sprt())
        raise StepStopped(interrupt, f"after {len(points)} games") from None
    summary(names, points, sprt_bounds and sprt())
    print(f"match: {len(points)} games in {time.time() - started:.0f} s")


def summary(names, points: list[float], sprt=None) -> None:
    """The match runner's summary of agent A's points (1, 1/2, 0 per game, in pairs), and the
    SPRT's state when there is one."""
    from ref_sim.series.stats import match_stats
    wins, losses = points.count(1.0), points.count(0.0)
    ptnml = match_stats.pentanomial([points[i], points[i + 1]] for i in range(0, len(points) - 1, 2))
    for line in match_stats.summary_lines(names, wins, losses, len(points) - wins - losses,
                                          ptnml if sum(ptnml) else None):
        print(line, flush=True)
    if sprt:
        print(sprt.line() + {"H1": " (H1 accepted)", "H0": " (H0 accepted)"}.get(sprt.decision, ""), flush=True)
