"""The WebAssembly core (agent/data/core.wasm via agent/core_wasm.py) against the pure-Python search.

The module is agent/core_search.c, the compiled core's search, built for WebAssembly: at a fixed
depth it must search the Python search's trees node for node (tests/test_core_pins.py holds it to
the compiled core's pinned results too). Here: the shipped file is what its sources build to, the
parts (moves, make/unmake, the evaluations) and whole searches agree with Python, the limits and
callbacks behave as the compiled core's, and the core is chosen where the compiled one is missing.

wasmtime comes with the test extra; where it is missing these tests are skipped with the reason.
"""

from __future__ import annotations

import functools
import logging
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent import core, core_wasm
from agent.engines import AlphaBetaEngine, make_evaluator
from agent.evaluation import Evaluator, can_win_table
from agent.limits import SearchLimit
from agent.rules import CODINGAME, Position, perft
from agent.search import INFINITY, PLAIN, AlphaBeta, Features

ROOT = Path(__file__).resolve().parent.parent
from scripts import build_wasm  # noqa: E402
from scripts.bench_speed import load_suite  # noqa: E402
from test_core import C_SLOTS, random_positions  # noqa: E402

wasm = pytest.mark.skipif(not core.wasm_available(), reason=core.wasm_unavailable_reason() or "runs")


@functools.cache
def evaluation(name: str):
    """make_evaluator(name), built once a process (the tables take 40 ms; the evaluators keep no
    state but memos of pure values, so searches that share one find what fresh ones would)."""
    return make_evaluator(name)


# The C comparisons' table size (test_core.C_SLOTS says why): the same searches, the same entries.
def wasm_searcher(evaluator=None, slots: int = C_SLOTS, features: Features | None = None) -> core.WasmAlphaBeta:
    return core.WasmAlphaBeta(evaluator or evaluation("fitted"), tt_slots=slots, prefault=False, features=features)


def outcome(result):
    return result.move, result.score, result.depth, result.nodes, result.pv, result.proven


# -- the shipped file ---------------------------------------------------------------------------

def test_the_shipped_module_is_what_its_sources_build_to(tmp_path):
    reason = build_wasm.why_not_buildable()
    if reason:
        pytest.skip(f"cannot rebuild agent/data/core.wasm here: {reason}")
    fresh = tmp_path / "core.wasm"
    build_wasm.build(fresh)
    assert fresh.read_bytes() == build_wasm.OUT.read_bytes(), \
        "agent/data/core.wasm is not what agent/core_search.c and agent/core_wasm.c build to: python -m scripts.build_wasm"


@wasm
def test_the_module_asks_its_host_for_a_clock_a_poll_and_the_memo_only():
    """What the browser page must give it (ref_sim/views/board_page.py), and nothing of an OS."""
    module = core_wasm.load().module
    assert sorted((i.module, i.name) for i in module.imports) == [
        ("env", "memo"), ("env", "poll"), ("wasi_snapshot_preview1", "clock_time_get")]


# -- the parts --------------------------------------------------------------------------------------

@wasm
def test_moves_perft_and_make_unmake_follow_the_python_position():
    rng = random.Random(31)
    searcher = wasm_searcher(slots=1024)._core
    for variant in ("wpi", CODINGAME) * 3:
        pos = Position(variant)
        core.load_position(searcher, pos)
        while pos.winner is None:
            assert searcher.legal_moves() == list(pos.legal_moves())
            if pos.ply in (0, 20, 40):
                assert searcher.perft(3) == perft(pos, 3)
            move = rng.choice(list(pos.legal_moves()))
            pos.push(move)
            searcher.push(move)
            winner = -1 if pos.winner is None else pos.winner
            assert searcher.state() == (pos.turn, winner, pos.forced, pos.key, pos.ply)
        assert searcher.legal_moves() == []
        while pos.ply:
            pos.pop()
            searcher.pop()
        with pytest.raises(IndexError, match="no move to take back"):
            searcher.pop()


@wasm
def test_the_modules_own_can_win_table_is_pythons():
    """The page has no Python: the module builds evaluation.build_can_win_table itself."""
    searcher = wasm_searcher(slots=1024)._core
    searcher.call("uttt_fill_can_win")
    start = searcher.call("uttt_buffer", core_wasm.CAN_WIN)
    assert searcher._memory.read(searcher._store, start, start + (1 << 18)) == bytes(can_win_table())


@wasm
@pytest.mark.parametrize("name", ["fitted", "classic"])
def test_evaluations_and_move_priorities_match_python(name):
    evaluator = evaluation(name)
    searcher = wasm_searcher(evaluator, slots=1024)._core
    for pos in random_positions(150, seed=4) + [p for _, p in load_suite()]:
        core.load_position(searcher, pos)
        moves = list(pos.legal_moves())
        assert searcher.evaluate() == evaluator.evaluate(pos)
        assert searcher.move_priority(moves) == evaluator.move_priority(pos, moves)


# -- whole searches -------------------------------------------------------------------------------------

@wasm
@pytest.mark.parametrize("name", ["fitted", "classic"])
def test_same_results_as_the_python_search(name):
    """Fixed depths and node limits (the stop at the same node, the proven-better root move)."""
    evaluator = evaluation(name)
    for i, pos in enumerate(random_positions(24, seed=2027)):
        limit = SearchLimit(depth=3 + i % 3) if i % 2 else SearchLimit(nodes=500 + 397 * i)
        python = AlphaBeta(evaluator, move_space=81, hash_mb=256).search(pos, limit)
        webassembly = wasm_searcher(evaluator)
        assert outcome(webassembly.search(pos, limit)) == outcome(python), (limit, pos)
        assert webassembly.tt_replaced == 0


@wasm
@pytest.mark.parametrize("features", [PLAIN, Features(asp=25, lmr=2, age=1, solve=14)], ids=["plain", "all"])
def test_same_moves_over_a_game_with_the_table_kept_between_moves(features):
    evaluator = evaluation("fitted")
    pos = Position()
    rng = random.Random(12)
    for _ in range(4):
        pos.push(rng.choice(list(pos.legal_moves())))
    python = [AlphaBeta(evaluator, move_space=81, hash_mb=256, features=features) for _ in range(2)]
    webassembly = [wasm_searcher(evaluator, features=features) for _ in range(2)]
    while pos.winner is None:
        a = python[pos.turn].search(pos, SearchLimit(depth=4))
        assert outcome(webassembly[pos.turn].search(pos, SearchLimit(depth=4))) == outcome(a), pos
        assert webassembly[pos.turn].tt_replaced == 0
        pos.push(a.move)


@wasm
def test_a_deadline_and_should_stop_stop_it():
    pos = load_suite()[15][1]
    result = wasm_searcher().search(pos, SearchLimit.seconds(0.05))
    assert result.move in pos.legal_moves() and 1 <= result.depth < 30 and not result.proven
    asked = []

    def should_stop():
        asked.append(1)
        return len(asked) >= 2

    result = wasm_searcher().search(pos, SearchLimit(should_stop=should_stop))
    assert len(asked) == 2 and result.move in pos.legal_moves()


@wasm
def test_exceptions_in_its_callbacks_reach_the_caller():
    def broken():
        raise RuntimeError("watcher gone")

    pos = load_suite()[15][1]
    with pytest.raises(RuntimeError, match="watcher gone"):
        wasm_searcher().search(pos, SearchLimit(should_stop=broken))
    searcher = wasm_searcher(Evaluator(), slots=1024)

    def memo(won_x, won_o, drawn):
        raise ArithmeticError("memo failed")

    searcher._core.set_classic(core._int32_bytes(Evaluator()._local), memo, 200)
    with pytest.raises(ArithmeticError, match="memo failed"):
        searcher.search(Position(), SearchLimit(depth=3))
    searcher._core.set_classic(core._int32_bytes(Evaluator()._local), lambda *boards: (1 << 30,) * 10, 200)
    with pytest.raises(ValueError, match="could take scores beyond 2..30"):
        searcher.search(Position(), SearchLimit(depth=3))
    searcher._core.set_classic(core._int32_bytes(Evaluator()._local), lambda *boards: (1,) * 9, 200)
    with pytest.raises(ValueError, match="must hold 10 ints, got 9"):
        searcher.search(Position(), SearchLimit(depth=3))


@wasm
def test_its_callbacks_may_not_use_their_own_searcher():
    searcher = wasm_searcher()
    refused = []

    def should_stop():
        try:
            searcher._core.set_position(*([0] * 9,) * 2, [0] * 9, -1, 0, -1, Position().key, 0, 1)
        except RuntimeError as error:
            refused.append(str(error))
        return True

    pos = load_suite()[15][1]
    result = searcher.search(pos, SearchLimit(should_stop=should_stop))
    assert refused and refused[0].startswith("Searcher.set_position refused: Searcher.root is running")
    assert result.move in pos.legal_moves()


@wasm
def test_inconsistent_positions_are_refused_in_position_checks_words():
    searcher = wasm_searcher(slots=1024)._core
    # What it has, set here: a new searcher's first one may be where its evaluation's self-check
    # left it (the check runs once a process, at whichever searcher comes first).
    core.load_position(searcher, Position())
    pos = load_suite()[20][1]
    fields = [pos.masks[0][:], pos.masks[1][:], pos.status[:], pos.forced, pos.turn, -1, pos.key, pos.ply, 1]
    for index, value, message in ((3, 9, "forced must be -1 to 8, got 9"), (4, 1 - pos.turn, "turn is"),
                                  (6, pos.key ^ 1, "key is not the Zobrist hash"), (7, "7", "ply must be an int")):
        wrong = list(fields)
        wrong[index] = value
        with pytest.raises((ValueError, TypeError), match=message):
            searcher.set_position(*wrong)
    assert searcher.state()[3] == Position().key  # kept what it had


def test_more_threads_are_refused_with_the_reason():
    with pytest.raises(core.CoreUnavailable, match="2 threads need the compiled core"):
        core.WasmAlphaBeta(evaluation("fitted"), threads=2)


# -- choosing it ------------------------------------------------------------------------------------------

@wasm
def test_auto_runs_it_where_the_compiled_core_is_missing_and_says_why(monkeypatch, fake_machine, caplog):
    fake_machine(compiled=core.NOT_BUILT)
    monkeypatch.delenv(core.CORE_ENV, raising=False)
    engine = AlphaBetaEngine(depth=3, announce=core.Announcements().announce)  # as a fresh process's
    assert engine.core == "wasm" and isinstance(engine.searcher, core.WasmAlphaBeta)
    assert engine.name == "alphabeta (wasm core)"
    with caplog.at_level(logging.INFO, logger="agent.core"):
        assert engine.choose(Position(), SearchLimit()).move in Position().legal_moves()
    said = [r.getMessage() for r in caplog.records if r.name == "agent.core"]
    assert len(said) == 1 and said[0].startswith("search core: wasm (the C search as WebAssembly, core.wasm in "
                                                 "wasmtime), fitted evaluation") and "not built" in said[0]
    assert "wasm here" in core.default_core_text()


def test_without_wasmtime_the_python_fallback_says_how_to_get_it(fake_machine):
    # A module loaded before does not hide it: WasmAlphaBeta asks why it could not run first.
    fake_machine(compiled=core.NOT_BUILT, wasm=f"wasmtime is not installed ({core_wasm.INSTALL_HINT})")
    searcher, used, (level, message) = core.make_searcher(evaluation("fitted"), hash_mb=1, core="auto")
    assert used == "python" and type(searcher) is AlphaBeta
    assert "the compiled core is not built" in message and "python -m pip install wasmtime" in message
    with pytest.raises(core.CoreUnavailable, match="--core wasm: the WebAssembly core cannot run: wasmtime is not"):
        core.make_searcher(evaluation("fitted"), hash_mb=1, core="wasm")


@pytest.mark.e2e
@wasm
def test_the_agent_says_it_runs_the_wasm_core_in_its_ready_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop(core.CORE_ENV, None)
    done = subprocess.run([sys.executable, "-m", "agent", "--protocol", "codingame", "--core", "wasm"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=60)
    assert "ready: CodinGame protocol, engine alphabeta (wasm core)" in done.stderr, done.stderr


@pytest.mark.e2e
@wasm
@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
def test_ctrl_c_interrupts_a_wasm_search():
    """The signal's handler runs in the module's poll (every 10 ms of search), as it does in the
    compiled core's: a search with no limit stops at Ctrl-C, with Python's own words for it (not
    "Exception ignored" in wasmtime-py's trampoline, the search going on)."""
    code = ("from agent import core, engines; from agent.rules import Position; from agent.search import INFINITY\n"
            "searcher = core.WasmAlphaBeta(engines.make_evaluator('fitted'), tt_slots=1 << 16)._core\n"
            "core.load_position(searcher, Position())\n"
            "searcher.new_search(None, None, None)\n"
            "print('searching', flush=True)\n"
            "searcher.root(list(range(81)), 40, -INFINITY, INFINITY, 0)")
    process = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                               # Ctrl-C at its default, also where this runs under nohup
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert process.stdout.readline() == "searching\n"
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)  # a hang check: the search has no limit
    finally:
        process.kill()
        process.wait()
        process.stdout.close()
        process.stderr.close()
    assert err.rstrip().endswith("KeyboardInterrupt") and "Exception ignored" not in err, err
    assert process.returncode == -signal.SIGINT  # Python's exit on an uncaught KeyboardInterrupt


def signal_during_a_search(signum, polls_to_stop: int):
    """A search that gets ``signum`` from another thread 50 ms after its first poll, while the
    module runs (sent from the poll itself, the handler would run there, in the poll's own try);
    it stops itself at poll ``polls_to_stop`` (10 ms each). Returns the result and the SIGUSR1
    handler each poll saw."""
    seen = []
    timer = threading.Timer(0.05, os.kill, (os.getpid(), signum))

    def should_stop():
        seen.append(signal.getsignal(signal.SIGUSR1))
        if len(seen) == 1:
            timer.start()
        return len(seen) >= polls_to_stop

    try:
        return wasm_searcher().search(load_suite()[15][1], SearchLimit(should_stop=should_stop)), seen
    finally:
        timer.cancel()
        timer.join()


in_the_main_thread = pytest.mark.skipif(
    sys.platform == "win32" or threading.current_thread() is not threading.main_thread(),
    reason="POSIX signals sent to this process, handled in its main thread")


@wasm
@in_the_main_thread
def test_a_signals_handler_runs_in_the_poll_and_goes_back_after_the_search():
    """While the module runs, a handler only notes its signal (_DeferredSignals); the next poll
    runs it. One that does not raise lets the search go on, as in the compiled core."""
    handled = []

    def handler(signum, frame):
        handled.append(signum)

    previous = signal.signal(signal.SIGUSR1, handler)
    try:
        result, seen = signal_during_a_search(signal.SIGUSR1, polls_to_stop=100)
        assert handled == [signal.SIGUSR1] and len(seen) == 100 and result.move is not None
        assert seen[0] is not handler  # noting, during the search
        assert signal.getsignal(signal.SIGUSR1) is handler  # put back
    finally:
        signal.signal(signal.SIGUSR1, previous)


@wasm
@in_the_main_thread
def test_ctrl_c_in_a_search_reaches_its_caller_and_the_handler_goes_back():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            signal_during_a_search(signal.SIGINT, polls_to_stop=1000)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


@wasm
def test_what_a_signal_raises_in_wasmtimes_own_code_reaches_the_search_caller(monkeypatch):
    """A signal's handler may run in wasmtime-py's code around the poll callback, outside the poll's
    own try; wasmtime-py then turns the exception into a trap and keeps it aside. The search's caller
    gets the exception itself (the Ctrl-C test above failed once in a full run with "the
    WebAssembly core stopped with a trap")."""
    def poll_interrupted(self):
        raise KeyboardInterrupt  # as if the handler ran before the poll's try

    monkeypatch.setattr(core_wasm.Searcher, "_poll", poll_interrupted)
    searcher = core.WasmAlphaBeta(evaluation("fitted"), tt_slots=1 << 16)._core
    core.load_position(searcher, Position())
    searcher.new_search(None, None, None)
    with pytest.raises(KeyboardInterrupt):
        searcher.root(list(range(81)), 40, -INFINITY, INFINITY, 0)


@wasm
def test_the_arena_plays_it_against_the_compiled_core_by_name():
    from agent.engines import make_engine
    from ref_sim.games.registry import get_game

    engine = make_engine("alphabeta", get_game("uttt"), core="wasm", depth=3)
    assert isinstance(engine.searcher, core.WasmAlphaBeta)
    with pytest.raises(ValueError, match="core is for uttt"):
        make_engine("alphabeta", get_game("ttt"), core="wasm")
