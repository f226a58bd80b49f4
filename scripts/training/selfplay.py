"""``generate``: seeded self-play games appended to a directory's games file, here or on a cluster,
resumable, and the settings they were played with kept beside them."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from ref_sim.series.run import cluster, scheduler
from ref_sim.series.run.cluster_address import ClusterError, ClusterTarget
from ref_sim.series import loop as series

from ref_sim.series.output import records, strict_json
from ref_sim.selfplay import selfplay_game
from scripts.training.errors import InputError, StepStopped

GAMES_FILE = "games.jsonl"
#: Beside the games: the settings they were played with (a resumed run must use the same ones).
SETTINGS_FILE = "settings.json"


def engine_evals() -> tuple:
    """``--engine-eval``'s choices: classic and the data files shipped in agent/data."""
    from agent.eval_fitted import DATA_DIR

    return ("classic", *sorted(p.stem for p in DATA_DIR.glob("*.json")))


def generate(directory: Path, games: int, nodes: int, seed: int, deviation: float, engine_eval: str,
             cluster_address: ClusterTarget | str | None = None, again: str = "") -> Path:
    """Self-play games up to ``games`` in ``directory``, in game order through the series
    engine (:func:`ref_sim.series.loop.play_games`), here or on a cluster; ``again``: the command
    that continues after a stop (said then)."""
    problem = series.prepare_out(str(directory), "--dir")
    if problem:
        raise InputError(problem)
    path = directory / GAMES_FILE
    settings = {"nodes": nodes, "deviation": deviation, "seed": seed, "eval": engine_eval}
    kept = read_settings(directory)
    if kept is not None and kept != settings:
        raise InputError(f"generate: {directory / SETTINGS_FILE} says its games were played with "
                         + ", ".join(f"--{k.replace('eval', 'engine-eval')} {v}" for k, v in kept.items())
                         + ": continue with those, or use another --dir")
    done = 0
    if path.exists():
        with path.open("rb") as handle:
            data = handle.read()
        if data and not data.endswith(b"\n"):  # a line cut by an interrupted run: drop it
            data = data[: data.rfind(b"\n") + 1]
            path.write_bytes(data)
        done = data.count(b"\n")
    if done >= games:
        print(f"generate: {path} already holds {done} games (asked for {games})")
        return path
    if kept is None:
        try:
            records.write_json(directory / SETTINGS_FILE, settings)
        except records.WriteError as error:
            raise InputError(str(error)) from None
    print(f"generate: games {done}..{games - 1} at {nodes} nodes per move, eval {engine_eval}, "
          f"deviation {deviation}, seed {seed} -> {path}", flush=True)
    start = time.time()
    plies = made = 0
    if cluster_address:
        try:
            runner = cluster.connect(cluster_address)
        except ClusterError as error:
            sys.exit(f"generate: {error}")
        print(f"generate: on {len(runner.slots())} cluster worker(s), {runner.capacity()} games at once",
              flush=True)
    else:
        runner = scheduler.InlineRunner()

    def submit(i: int):
        return runner.submit(f"game-{i}", selfplay_game, seed * 1_000_003 + i, nodes, engine_eval, deviation)

    def finished(i: int, ticket) -> None:
        nonlocal plies, made
        winner, game_plies, moves, scores = ticket.result()
        # A whole line or none: a stop between games never cuts one.
        records.append_line(path, {"game": i, "winner": winner, "moves": moves, "scores": scores})
        plies += game_plies
        made = i + 1 - done
        if made % 100 == 0 or i + 1 == games:
            elapsed = time.time() - start
            left = (games - i - 1) * elapsed / made
            print(f"  {i + 1}/{games} games, {plies} plies this run, {elapsed:.0f} s, "
                  f"~{left:.0f} s left", flush=True)

    with runner:        # a cluster's games not yet handled are cancelled, the connection closed
        stopped = series.play_games(runner, range(done, games), submit, finished, threading.Event(),
                                    ordered=True)
    kept_line = f"after {done + made} of {games} games ({made} this run, kept in {path})"
    error = stopped.error
    if error is not None:
        if isinstance(error, KeyboardInterrupt):    # Ctrl-C, SIGTERM, SIGHUP (ref_sim.stops)
            raise StepStopped(error, f"{kept_line}; the same command continues: {again}")
        if isinstance(error, (ClusterError, records.WriteError)):
            sys.exit(f"generate: {error}; stopped {kept_line}; the same command continues: {again}")
        raise error
    elapsed = time.time() - start
    print(f"generate: {games - done} games in {elapsed:.0f} s ({(games - done) / max(elapsed, 1e-9):.1f} games/s); "
          f"{path} holds {games} games, {os.path.getsize(path) / 1e6:.1f} MB", flush=True)
    return path


def read_settings(directory: Path) -> dict | None:
    """The settings file of a games directory, or None where there is none (older runs)."""
    path = directory / SETTINGS_FILE
    if not path.exists():
        return None
    try:
        return strict_json.read_json(path, "settings file")
    except strict_json.RecordError as error:
        raise InputError(f"cannot read the settings: {error}") from None
