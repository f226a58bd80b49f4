"""Threads of the compiled core (``--threads``, agent/_core.c's search_team, "Lazy SMP").

One thread is the single-threaded search, node for node (tests/test_core.py holds it to the Python
reference; here through every way of asking for one thread). More threads: legal moves at the
depth asked, every thread's nodes counted; helpers run during a search and none outlives it; a
deadline, should_stop, its exception and an exception in a helper's call of the evaluation memo
all end every thread. The option: auto, refusals (the pure-Python core, other engines and games,
bad values) in one line, and the engine's name. Elsewhere: Ctrl-C and the ready line with threads
(tests/test_core.py), the threaded path's callbacks and refusals (tests/test_core_fuzz.py).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from agent import cli, core
from agent.engines import AlphaBetaEngine
from agent.evaluation import Evaluator
from agent.limits import SearchLimit
from agent.search import AlphaBeta
from ref_sim import arena

ROOT = Path(__file__).resolve().parent.parent
from scripts.bench_speed import load_suite  # noqa: E402
from native_threads import AVAILABLE as TASKS_LISTED, HelperWatch  # noqa: E402

compiled = pytest.mark.skipif(not core.compiled_available(), reason=core.unavailable_reason() or "built")
linux_tasks = pytest.mark.skipif(not TASKS_LISTED, reason="counts threads in /proc")


def outcome(result):
    return result.move, result.score, result.depth, result.nodes, result.pv, result.proven


def middle_game():
    return next(pos for phase, pos in load_suite() if phase == "middle")


# -- the search ------------------------------------------------------------------------------------

@compiled
@pytest.mark.parametrize("threads", [1, "auto"])
def test_one_thread_is_the_single_threaded_search(threads, fake_machine):
    fake_machine(cores=2)  # auto: one core for the referee, one for us
    for _, pos in load_suite()[::9]:
        engine = AlphaBetaEngine(depth=5, hash_mb=64, core="compiled", threads=threads, evaluation="classic")
        assert engine.searcher.threads == 1 and engine.name == "alphabeta (compiled core)"
        python = AlphaBeta(Evaluator(), move_space=81, hash_mb=256).search(pos.copy(), SearchLimit(depth=5))
        assert outcome(engine.choose(pos, SearchLimit())) == outcome(python)
        assert engine.searcher._core.helper_nodes == 0


@compiled
@pytest.mark.parametrize("evaluation", ["classic", "fitted"])
def test_threads_search_to_the_depth_asked_and_count_every_threads_nodes(evaluation):
    helped = 0
    for _, pos in load_suite()[::7]:
        before = (pos.key, pos.ply)
        engine = AlphaBetaEngine(depth=7, hash_mb=16, core="compiled", threads=3, evaluation=evaluation)
        assert engine.name == "alphabeta (compiled core, 3 threads)"
        result = engine.choose(pos, SearchLimit())
        c = engine.searcher._core
        assert result.move in pos.legal_moves() and (result.depth == 7 or result.proven)
        assert result.nodes == c.nodes + c.helper_nodes
        assert (pos.key, pos.ply) == before
        helped += c.helper_nodes > 0
    assert helped >= 3  # helpers start at depth 5: every search not proven before it had them


@compiled
@linux_tasks
def test_helpers_run_during_a_search_and_none_outlives_it():
    searcher = core.CompiledAlphaBeta(Evaluator(), tt_slots=1 << 16, threads=3)
    watch, asked = HelperWatch(), []

    def should_stop():  # called in the main thread, while the helpers search
        watch.sample()
        asked.append(1)
        return len(asked) >= 40

    searcher.search(middle_game(), SearchLimit(should_stop=should_stop))
    assert watch.most == 2      # threads=3: the main thread and two helpers
    assert not watch.alive()


@compiled
def test_a_deadline_stops_every_thread_promptly():
    searcher = core.CompiledAlphaBeta(Evaluator(), tt_slots=1 << 16, threads=3)
    watch = HelperWatch() if TASKS_LISTED else None

    def should_stop():  # never stops the search: it looks at the threads while they run
        if watch is not None:
            watch.sample()
        return False

    start = time.perf_counter()
    result = searcher.search(middle_game(), SearchLimit.seconds(0.1, should_stop=should_stop))
    late = time.perf_counter() - start - 0.1
    assert result.move in middle_game().legal_moves() and not result.proven
    # A hang check, not a speed check: each helper sees the stop within 256 nodes once it runs
    # (scripts/bench_threads.py prints how late searches return), but a loaded machine may not
    # run a descheduled thread for a long while.
    assert late < 10, f"stopped {late:.3f} s after the deadline"
    assert watch is None or not watch.alive()


@compiled
def test_should_stop_and_its_exception_stop_every_thread():
    searcher = core.CompiledAlphaBeta(Evaluator(), tt_slots=1 << 16, threads=2)
    asked = []

    def should_stop():
        asked.append(1)
        return len(asked) >= 30

    result = searcher.search(middle_game(), SearchLimit(should_stop=should_stop))
    assert len(asked) == 30 and result.move in middle_game().legal_moves()

    def broken():
        raise RuntimeError("watcher gone")

    pos = middle_game()
    with pytest.raises(RuntimeError, match="watcher gone"):
        searcher.search(pos, SearchLimit(should_stop=broken))
    assert searcher._core.state()[3] == pos.key  # unwound


@compiled
def test_an_exception_in_a_helpers_memo_call_reaches_the_caller():
    """The helpers call the classic evaluation's memo themselves (for the boards' states the main
    thread has not met yet): an exception there is raised by the search, as the main thread's is."""
    main, calls = threading.get_ident(), []
    local, memo, free_move = core._classic_arguments(Evaluator())

    def memo_failing_in_helpers(*boards):
        calls.append(threading.get_ident() == main)
        if not calls[-1]:
            raise ArithmeticError("memo failed in a helper")
        return memo(*boards)

    searcher = core.CompiledAlphaBeta(Evaluator(), tt_slots=1 << 16, threads=2)
    searcher._core.set_classic(local, memo_failing_in_helpers, free_move)
    with pytest.raises(ArithmeticError, match="memo failed in a helper"):
        searcher.search(middle_game(), SearchLimit(depth=12))
    assert calls.count(False) == 1  # the first failure stopped the team
    searcher._core.set_classic(local, memo, free_move)  # and the searcher still works
    assert searcher.search(middle_game(), SearchLimit(depth=6)).move in middle_game().legal_moves()


@compiled
def test_without_a_table_threads_have_nothing_to_share_and_none_start():
    searcher = core.CompiledAlphaBeta(Evaluator(), hash_mb=0, threads=2)
    assert searcher.search(middle_game(), SearchLimit(depth=6)).move in middle_game().legal_moves()
    assert searcher._core.helper_nodes == 0


# -- asking for threads -------------------------------------------------------------------------

@pytest.mark.parametrize("cores, expected", [(1, 1), (2, 1), (4, 3), (8, 7), (1000, core.MAX_THREADS)])
def test_auto_is_every_core_but_the_referees(cores, expected, fake_machine):
    fake_machine(cores=cores)
    assert core.auto_threads() == expected


@pytest.mark.parametrize("cores, asked, given", [
    (1, 1, 1), (1, 2, 1), (2, 2, 1), (2, 64, 1), (4, 3, 3), (4, 4, 3), (8, 64, 7), (2, "auto", "auto"),
])
def test_threads_under_a_clock_never_exceed_the_free_cores(cores, asked, given, fake_machine):
    fake_machine(cores=cores)
    threads, why = core.threads_for_a_clock(asked)
    assert threads == given
    if asked == given:
        assert why is None
    else:
        assert why == (f"--threads {asked} capped to {given}: this process may run on {cores} core(s) and one is "
                       f"left to the referee and the opponent; a thread without a core of its own makes moves late")


@pytest.mark.parametrize("protocol", [["Probe", "--dir", "{dir}"], ["--protocol", "codingame"]])
def test_the_agent_caps_threads_above_the_free_cores_in_one_line(protocol, tmp_path, capsys, fake_machine):
    fake_machine(cores=2)
    made = []

    def make_engine(args):  # stands in for the engine: records what it was given, then stops the run
        made.append(args.threads)
        raise ValueError("stop here")

    argv = [arg.format(dir=tmp_path) for arg in protocol] + ["--threads", "64"]
    assert cli.main(argv, make_engine=make_engine) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert made == [1]
    assert lines[0] == ("uttt-agent: --threads 64 capped to 1: this process may run on 2 core(s) and one is left "
                        "to the referee and the opponent; a thread without a core of its own makes moves late")


def test_the_python_core_refuses_more_than_one_thread_and_auto_is_one_there():
    with pytest.raises(core.CoreUnavailable, match=r"^2 threads need the compiled core; the search here is "
                                                   r"pure Python \(--core python\), on one thread$"):
        core.make_searcher(Evaluator(), 16, "python", threads=2)
    searcher, name, _ = core.make_searcher(Evaluator(), 16, "python", threads="auto")
    assert name == "python" and type(searcher) is AlphaBeta


@compiled
def test_the_core_refuses_a_thread_count_out_of_range():
    for threads in (0, core.MAX_THREADS + 1):
        with pytest.raises(ValueError, match=f"threads must be 1 to {core.MAX_THREADS}, got {threads}"):
            core.CompiledAlphaBeta(Evaluator(), tt_slots=1024, threads=threads)


@pytest.mark.parametrize("value", ["0", "65", "two", "1.5", "nan", "Auto", ""])
def test_a_bad_threads_value_is_one_line(value, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--protocol", "codingame", "--threads", value])
    err = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and "\n" not in err
    assert err.startswith(f"uttt-agent: error: argument --threads: must be auto or an integer from 1 to "
                          f"{core.MAX_THREADS}, got"), err


@pytest.mark.parametrize("protocol", [["Probe", "--dir", "{dir}"], ["--protocol", "codingame"]])
@pytest.mark.parametrize("extra, message", [
    (["--core", "python"], "2 threads need the compiled core; the search here is pure Python"),
    (["--engine", "random"], "engine random searches on one thread; --threads 2 is for alphabeta"),
])
def test_threads_nobody_can_run_are_a_usage_error_on_both_protocols(protocol, extra, message, tmp_path, capsys,
                                                                       monkeypatch, fake_machine):
    monkeypatch.setenv(core.CORE_ENV, "auto")  # restored afterwards: --core sets it for the process
    fake_machine(cores=4)  # 2 threads fit: not capped
    argv = [arg.format(dir=tmp_path) for arg in protocol] + ["--threads", "2", *extra]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"uttt-agent: error: {message}") and "\n" not in err, err
    assert list(tmp_path.iterdir()) == []


@compiled
def test_the_arena_takes_threads_for_uttt_only(capsys):
    assert arena.main(["uttt", "alphabeta:threads=2", "alphabeta", "--depth", "5", "--games", "2"]) == 0
    assert "Score of alphabeta:threads=2#1 vs alphabeta#2" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stop:
        arena.main(["qubic", "alphabeta:threads=2", "alphabeta", "--games", "2"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().endswith("error: qubic searches on one thread: threads=N is for uttt")
