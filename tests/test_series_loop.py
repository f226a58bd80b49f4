"""The one series loop (ref_sim.series.loop.play_games on ref_sim.series.run.scheduler.stream) as the in-process
series use it: in schedule order, stopped by an SPRT, played in the calling thread."""

from __future__ import annotations

import errno
import threading
import time
from pathlib import Path

import pytest

from agent.engines import AlphaBetaEngine, RandomEngine
from ref_sim.games import get_game
from ref_sim import arena
from ref_sim import selfplay
from ref_sim.series.output import records
from ref_sim.series.run import scheduler
from ref_sim.series.loop import play_games
from scripts.training.selfplay import generate

ROOT = Path(__file__).resolve().parent.parent


def after(value, seconds, log):
    log.append(("start", value, threading.current_thread().name))
    time.sleep(seconds)
    log.append(("end", value, threading.current_thread().name))
    return value


def series_of(runner, delays, log, **options):
    """play_games over ``delays`` (game k sleeps delays[k]); the games in the order handed."""
    handed = []

    def submit(k):
        return runner.submit(f"game-{k}", after, k, delays[k], log)

    def finished(k, ticket):
        handed.append(ticket.result())

    stopped = play_games(runner, range(len(delays)), submit, finished, threading.Event(), **options)
    return handed, stopped


DELAYS = [0.3, 0.0, 0.1, 0.0, 0.2, 0.0]         # later games often end first


def test_ordered_hands_the_games_in_the_order_of_the_schedule():
    log: list = []
    with scheduler.LocalRunner(2) as runner:
        handed, stopped = series_of(runner, DELAYS, log, ordered=True)
    assert not stopped and handed == list(range(6))
    assert [event[1] for event in log if event[0] == "end"][0] == 1     # yet played two at once


def test_unordered_hands_each_game_as_it_ends():
    log: list = []
    with scheduler.LocalRunner(2) as runner:
        handed, _ = series_of(runner, DELAYS, log)
    assert sorted(handed) == list(range(6)) and handed != list(range(6))


def test_ordered_series_once_decided_hands_no_later_game_and_cancels_the_rest():
    log: list = []
    handed: list = []
    with scheduler.LocalRunner(2) as runner:
        def submit(k):
            return runner.submit(f"game-{k}", after, k, 0.05, log)

        stopped = play_games(runner, range(40), submit, lambda k, t: handed.append(t.result()),
                             threading.Event(), wanted=lambda: len(handed) < 3, ordered=True)
    assert not stopped and handed == [0, 1, 2]
    assert len([event for event in log if event[0] == "start"]) <= 3 + 2 * 2   # the window, at most


def test_the_inline_runner_plays_in_this_thread_and_ctrl_c_leaves_nothing_in_flight():
    played: list = []

    def game(k):
        if k == 3:
            raise KeyboardInterrupt
        played.append((k, threading.current_thread() is threading.main_thread()))
        return k

    runner = scheduler.InlineRunner()
    handed: list = []
    stopped = play_games(runner, range(10), lambda k: runner.submit(f"game-{k}", game, k),
                         lambda k, ticket: handed.append(ticket.result()), threading.Event())
    assert isinstance(stopped.interrupt, KeyboardInterrupt) and stopped.error is stopped.interrupt
    assert handed == [0, 1, 2] and played == [(0, True), (1, True), (2, True)]


def test_a_game_that_fails_ends_the_loop_with_its_error():
    runner = scheduler.InlineRunner()

    def game(k):
        raise RuntimeError(f"game {k}: an illegal move")

    with pytest.raises(RuntimeError, match="game 0: an illegal move"):
        play_games(runner, range(3), lambda k: runner.submit("game", game, k),
                   lambda k, ticket: ticket.result(), threading.Event())


def test_play_pairs_plays_no_game_once_no_more_is_wanted():
    seen: list = []
    tally = selfplay.play_pairs(lambda: AlphaBetaEngine(depth=1), lambda: RandomEngine(seed=1), 10,
                                seed=3, on_game=lambda result, tally: seen.append(result.winner),
                                wanted=lambda: len(seen) < 3)
    assert len(seen) == 3 and sum(tally) == 3       # wanted() is asked before each game
    again = selfplay.play_pairs(lambda: AlphaBetaEngine(depth=1), lambda: RandomEngine(seed=1), 2,
                                seed=3)
    assert sum(again) == 4


def test_arena_series_in_threads_is_the_series_played_inline():
    ttt = get_game("ttt")
    options = dict(games=6, seed=5, depth=2, sprt=(0, 400, 0.2, 0.2))
    inline = arena.run_series(ttt, "alphabeta", "random", **options)
    with scheduler.LocalRunner(2) as runner:
        threaded = arena.run_series(ttt, "alphabeta", "random", runner=runner, **options)
    assert [(g.pair, g.first, g.opening, g.moves, g.winner) for g in threaded.games] == \
           [(g.pair, g.first, g.opening, g.moves, g.winner) for g in inline.games]
    assert inline.report_lines() == threaded.report_lines()


@pytest.mark.e2e
def test_self_play_data_on_a_full_disk_ends_in_one_line_and_keeps_what_was_written(tmp_path, monkeypatch):
    real_write, writes = records._write_all, []

    def filling(fd, data):
        writes.append(data)
        if len(writes) > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(fd, data)

    monkeypatch.setattr(records, "_write_all", filling)
    with pytest.raises(SystemExit) as stopped:
        generate(tmp_path, 5, nodes=30, seed=1, deviation=0.0, engine_eval="classic",
                 again="train_eval.py generate")
    message = str(stopped.value.code)
    assert message.startswith("generate: cannot write ") and "(the disk is full)" in message
    assert "after 2 of 5 games" in message and message.endswith("continues: train_eval.py generate")
    assert (tmp_path / "games.jsonl").read_text().count("\n") == 2    # whole lines only
