"""``fit``: the model fitted to a directory's games for each label mix, the best on the held-out
results kept, measured against the simple evaluations, quantised and written."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

from scripts.training.errors import InputError
from scripts.training.examples import arrays, deep_scale, read_games, replay, subset, targets
from scripts.training.model import (PATTERN_FEATURES, SENT_FEATURES, WEIGHTS, cross_entropy, fit_model,
                                    initial_params, model_loss, pattern_tables, quantise, split, write_data)
from scripts.training.selfplay import GAMES_FILE, read_settings

#: v2's fit (agent/data/eval-v2.json): the label mix, the per-pattern logits' pull (in examples)
#: and the global terms held at 0, each chosen by held-out loss (agent/eval_fitted.py says how).
DEFAULT_MIX = (0.5,)
DEFAULT_PER_PATTERN = 30.0
DEFAULT_WITHOUT = ("board",)


def quantised_loss(data, held_games) -> float:
    """Held-out loss of the shipped integer evaluation itself (the agent's code path)."""
    import numpy as np

    from agent.eval_fitted import FittedEvaluator

    evaluate = FittedEvaluator(data).evaluate
    z, results = zip(*((evaluate(pos), result) for _, pos, result, _ in replay(held_games)))
    return cross_entropy(np.array(z) / data["score_per_logit"], np.array(results))


def classic_loss(train_games, held_games):
    """The classic evaluation with its best single scale (fitted on the training games)."""
    import numpy as np
    from scipy.optimize import minimize_scalar

    from agent.evaluation import Evaluator

    evaluate = Evaluator().evaluate
    scores, results = [], []
    for part in (train_games, held_games):
        z, r = zip(*((evaluate(pos), result) for _, pos, result, _ in replay(part)))
        scores.append(np.array(z))
        results.append(np.array(r))
    best = minimize_scalar(lambda k: cross_entropy(k * scores[0], results[0]), bounds=(1e-6, 0.1), method="bounded")
    return cross_entropy(best.x * scores[1], results[1]), best.x


def fit_command(directory: Path, out: Path, args) -> None:
    started = time.time()
    # The games first: a missing or broken file is the user's to fix whether or not numpy is here.
    games = read_games(directory / GAMES_FILE, args.games)
    train_games = [g for g in games if g["game"] % 5]
    held_games = [g for g in games if g["game"] % 5 == 0]
    if not train_games or not held_games:
        raise InputError(f"fit: {len(games)} game(s) in {directory / GAMES_FILE} "
                         "among the first --games: it takes games to fit and games numbered 0 mod 5 "
                         "to hold out (at least 2)")
    try:
        import numpy as np
        import scipy  # noqa: F401
    except ImportError:
        sys.exit("fit needs numpy and scipy: pip install -e '.[tune]'")
    data = arrays(games)
    held_rows = data["game"] % 5 == 0
    train, held = subset(data, ~held_rows), subset(data, held_rows)
    scored = ~np.isnan(train["score"])
    print(f"fit: {len(held_rows)} positions from {len(games)} games: {len(train['result'])} to fit, "
          f"{len(held['result'])} held out (games numbered 0 mod 5), {int(scored.sum())} scored by the "
          f"self-play search; read in {time.time() - started:.0f} s", flush=True)
    pt = pattern_tables()
    losses = {"half": math.log(2)}
    print(f"held-out loss, always 1/2:            {losses['half']:.5f}")
    losses["classic"], k = classic_loss(train_games, held_games)
    print(f"held-out loss, classic (x{k:.5f}/pt):  {losses['classic']:.5f}")
    scale = None
    if scored.any():
        scale = deep_scale(train)
        has = ~np.isnan(held["score"])
        losses["search"] = cross_entropy(held["score"][has] / scale, held["result"][has])
        print(f"held-out loss, the self-play search:  {losses['search']:.5f} (x1/{scale:.1f}/pt; "
              f"{int(has.sum())} positions it scored)")
    elif args.mix != [1.0]:
        raise InputError(f"fit: --mix {' '.join(map(str, args.mix))}: the games in {directory} hold no "
                         "search scores (made before they were noted): only --mix 1 can fit them")
    losses["start"] = model_loss(np.array(initial_params()), pt, held)
    print(f"held-out loss, fitted model at start: {losses['start']:.5f}", flush=True)
    if args.without:
        print(f"fit: without the {', '.join(args.without)} term(s)")
    by_mix = {}
    for mix in args.mix:   # the label: mix * result + (1 - mix) * the search's opinion
        train["target"] = targets(train, mix, scale) if scale else train["result"]
        t0 = time.time()
        # Each from the same start: a mix gives the same tables whether it is fitted alone or not.
        found = fit_model(pt, train, args.without, strength=args.per_pattern)
        by_mix[mix] = (model_loss(found.x, pt, held), found)
        print(f"held-out loss, fitted model, mix {mix:<4}: {by_mix[mix][0]:.5f} (training {found.fun:.5f} "
              f"against its target; {found.nit} iterations, {time.time() - t0:.0f} s)", flush=True)
    mix = min(by_mix, key=lambda m: by_mix[m][0])      # the first of equals: --mix's order
    losses["fitted"], found = by_mix[mix]
    params = found.x
    if len(by_mix) > 1:
        print(f"fit: mix {mix} predicts the held-out results best")
    theta, mu, omega, weights = split(params)
    print("parameters (logits):")
    for group, names, values in (("chance", PATTERN_FEATURES, theta), ("mover", SENT_FEATURES, mu),
                                 ("waiter", SENT_FEATURES, omega), ("global", WEIGHTS, weights)):
        print(f"  {group:7} " + "  ".join(f"{n}={v:+.3f}" for n, v in zip(names, values)))
    quantised = quantise(params, pt, scale=1000, score_per_logit=500)
    losses["shipped"] = quantised_loss(quantised, held_games)
    print(f"held-out loss, shipped integer tables: {losses['shipped']:.5f}")
    quantised["fit"] = {
        "games": len(games), "positions": len(held_rows), "held_out": len(held["result"]),
        "self_play": read_settings(directory) or {"nodes": args.nodes, "deviation": args.deviation,
                                                  "seed": args.seed, "eval": args.engine_eval},
        "labels": {"mix": mix, "search_scale": None if scale is None else round(scale, 3),
                   "scored": int(scored.sum())},
        "without": list(args.without), "per_pattern": args.per_pattern,
        "held_out_loss": dict({k: round(v, 5) for k, v in losses.items()},
                              by_mix={str(m): round(v[0], 5) for m, v in by_mix.items()}),
        "parameters": {"chance": dict(zip(PATTERN_FEATURES, map(float, theta))),
                       "mover": dict(zip(SENT_FEATURES, map(float, mu))),
                       "waiter": dict(zip(SENT_FEATURES, map(float, omega))),
                       "global_logits": dict(zip(WEIGHTS, map(float, weights)))}}
    write_data(quantised, out)
    print(f"fit: wrote {out} ({out.stat().st_size / 1000:.0f} kB) in {time.time() - started:.0f} s")
