"""The compiled search core (agent/_core.c via agent/core.py) against the pure-Python reference.

Same results: at a fixed depth both cores give the same move, score, principal variation and node
count on the 35 benchmark positions and on a few hundred positions of random games (both rule
variants), over whole games with one engine per side (table and history carried between moves),
under node limits (the stop and the proven-better root move), for each evaluation the core
supports. The parts are compared too: move generation (perft), evaluation, move priorities.

Where the core is not built these tests are skipped with the reason (pytest -rs shows it); the
fallback tests run everywhere.
"""

from __future__ import annotations

import ast
import functools
import logging
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from agent import core
from agent.baselines import SeedEvaluator
from agent.engines import AlphaBetaEngine
from agent.evaluation import Evaluator, Weights
from agent.limits import SearchLimit
from agent.rules import CODINGAME, Position, perft
from agent.search import PLAIN, AlphaBeta, Features

ROOT = Path(__file__).resolve().parent.parent
from scripts.bench_install import copy_of_the_project, without_a_compiler  # noqa: E402
from scripts.bench_speed import load_suite  # noqa: E402

compiled = pytest.mark.skipif(not core.compiled_available(), reason=core.unavailable_reason() or "built")

#: Large enough that neither table drops anything in these searches: the Python one is never
#: trimmed and no C entry is replaced, which is when node counts must agree (every comparison
#: asserts it). The largest search here stores 11,711 entries, 4% of the C table's slots: at
#: 1 << 15 slots two tests replace entries. 4 MiB of C table, not 64: a fresh table's memory is
#: zeroed as a search first touches it, and with 64 MiB that was ~9 ms of every search at depth
#: 3 to 5, more than the Python search it is compared with (test_same_results_on_positions_of_
#: random_games: 2.7 -> 0.5 CPU-s of C search for its 300 positions).
PY_HASH_MB = 256.0
C_SLOTS = 1 << 18


@functools.cache
def classic() -> Evaluator:
    """The classic evaluation, built once a process (its tables take 40 ms; the one state it
    keeps is a memo of pure values, so searches that share it find what fresh ones would)."""
    return Evaluator()


@functools.cache
def evaluators():
    """Every evaluation the compiled core computes; one that cannot be loaded is a visible skip.
    Loaded once a process: several tests are parametrized with them."""
    found = [pytest.param(classic(), id="classic")]
    try:
        from agent.eval_fitted import FittedEvaluator

        fitted = FittedEvaluator()
    except (ImportError, ValueError) as error:  # not in this version, or its data file is missing
        return found + [pytest.param(None, id="fitted", marks=pytest.mark.skip(reason=f"no fitted evaluation: {error}"))]
    return found + [pytest.param(fitted, id="fitted")]


def pair(evaluator, features: Features | None = None):
    return (AlphaBeta(evaluator, move_space=81, hash_mb=PY_HASH_MB, features=features),
            core.CompiledAlphaBeta(evaluator, tt_slots=C_SLOTS, prefault=False, features=features))


def outcome(result):
    return result.move, result.score, result.depth, result.nodes, result.pv, result.proven


def assert_same(python, compiled_result, where):
    assert outcome(compiled_result) == outcome(python), where


def assert_nothing_dropped(py, c):
    assert len(py.tt) <= py.tt_capacity * 3 // 4  # never trimmed
    assert c.tt_replaced == 0


def random_positions(count: int, seed: int):
    """Positions of random games at every stage (a quarter under CodinGame's rules)."""
    rng = random.Random(seed)
    positions = []
    while len(positions) < count:
        variant = CODINGAME if len(positions) % 4 == 3 else "wpi"
        pos = Position(variant)
        stop = rng.randint(0, 60)
        while pos.winner is None and pos.ply < stop:
            pos.push(rng.choice(list(pos.legal_moves())))
        if pos.winner is None:
            positions.append(pos)
    return positions


# -- the parts -----------------------------------------------------------------------------------

@compiled
@pytest.mark.parametrize("variant", ["wpi", CODINGAME])
def test_move_generation_matches_perft(variant):
    rng = random.Random(11)
    for plies in (0, 8, 20, 35, 50):
        pos = Position(variant)
        while pos.winner is None and pos.ply < plies:
            pos.push(rng.choice(list(pos.legal_moves())))
        if pos.winner is not None:
            continue
        searcher = core.CompiledAlphaBeta(classic(), tt_slots=1024)._core
        core.load_position(searcher, pos)
        assert searcher.legal_moves() == list(pos.legal_moves())
        depth = 3 if plies < 20 else 4
        assert searcher.perft(depth) == perft(pos, depth), (variant, plies)


@compiled
def test_make_unmake_follows_the_python_position_to_the_end_of_games():
    rng = random.Random(5)
    searcher = core.CompiledAlphaBeta(classic(), tt_slots=1024)._core
    for variant in ("wpi", CODINGAME) * 10:
        pos = Position(variant)
        core.load_position(searcher, pos)
        while pos.winner is None:
            move = rng.choice(list(pos.legal_moves()))
            pos.push(move)
            searcher.push(move)
            winner = -1 if pos.winner is None else pos.winner
            assert searcher.state() == (pos.turn, winner, pos.forced, pos.key, pos.ply)
        while pos.ply:
            pos.pop()
            searcher.pop()
            assert searcher.state() == (pos.turn, -1, pos.forced, pos.key, pos.ply)


@compiled
@pytest.mark.parametrize("evaluator", evaluators())
def test_evaluation_and_move_priority_match_python(evaluator):
    searcher = core.CompiledAlphaBeta(evaluator, tt_slots=1024)._core
    checked = 0
    for pos in random_positions(600, seed=3) + [p for _, p in load_suite()]:
        core.load_position(searcher, pos)
        moves = list(pos.legal_moves())
        assert searcher.evaluate() == evaluator.evaluate(pos), pos
        assert searcher.move_priority(moves) == evaluator.move_priority(pos, moves), pos
        checked += 1
    assert checked == 635


# -- whole searches ------------------------------------------------------------------------------

@compiled
@pytest.mark.parametrize("evaluator", evaluators())
def test_same_results_on_the_benchmark_positions(evaluator):
    suite = load_suite()
    assert len(suite) == 35
    for phase, pos in suite:
        py, c = pair(evaluator)
        assert_same(py.search(pos, SearchLimit(depth=6)), c.search(pos, SearchLimit(depth=6)), (phase, pos))
        assert_nothing_dropped(py, c)


@pytest.mark.slow
@compiled
@pytest.mark.parametrize("evaluator", evaluators())
def test_same_results_deeper_on_the_benchmark_positions(evaluator):
    """Depth 8 (opt-in: pytest -m slow): minutes of Python search."""
    for phase, pos in load_suite():
        py, c = pair(evaluator)
        assert_same(py.search(pos, SearchLimit(depth=8)), c.search(pos, SearchLimit(depth=8)), (phase, pos))
        assert_nothing_dropped(py, c)


@compiled
@pytest.mark.parametrize("evaluator", evaluators())
def test_same_results_on_positions_of_random_games(evaluator, sample):
    for i, pos in enumerate(random_positions(sample(300), seed=2026)):
        py, c = pair(evaluator)
        depth = 3 + i % 3  # 3, 4 and 5 plies
        assert_same(py.search(pos, SearchLimit(depth=depth)), c.search(pos, SearchLimit(depth=depth)), (depth, pos))
        assert_nothing_dropped(py, c)


@compiled
@pytest.mark.parametrize("evaluator", evaluators())
def test_same_results_under_node_limits(evaluator, sample):
    """A node limit stops both at the same node (the clock is looked at every 256 nodes in both),
    so even the unfinished depth's proven-better root move agrees."""
    for i, pos in enumerate(random_positions(sample(40), seed=7)):
        py, c = pair(evaluator)
        nodes = 300 + 397 * i
        a, b = py.search(pos, SearchLimit(nodes=nodes)), c.search(pos, SearchLimit(nodes=nodes))
        assert_same(a, b, (nodes, pos))
        assert_nothing_dropped(py, c)


@compiled
@pytest.mark.parametrize("evaluator", evaluators())
def test_same_moves_over_whole_games_with_tables_kept_between_moves(evaluator):
    """One searcher per side for the whole game, as in a match: the table, its generations and
    the aged history carry over from move to move."""
    rng = random.Random(99)
    for game in range(2):
        pos = Position(CODINGAME if game else "wpi")
        for _ in range(4):
            pos.push(rng.choice(list(pos.legal_moves())))
        pys, cs = zip(pair(evaluator), pair(evaluator))
        while pos.winner is None:
            side = pos.turn
            limit = SearchLimit(depth=5)
            a, b = pys[side].search(pos, limit), cs[side].search(pos, limit)
            assert_same(a, b, pos)
            assert_nothing_dropped(pys[side], cs[side])
            pos.push(a.move)


#: Each refinement of the search alone (agent.search.Features), none and all: the tests above run
#: the defaults.
FEATURE_SETS = [pytest.param(PLAIN, id="plain"), pytest.param(replace(PLAIN, asp=25), id="asp"),
                pytest.param(replace(PLAIN, lmr=1), id="lmr"), pytest.param(replace(PLAIN, lmr=2), id="lmr2"),
                pytest.param(replace(PLAIN, age=1), id="age"), pytest.param(replace(PLAIN, solve=14), id="solve"),
                pytest.param(Features(asp=25, lmr=2, age=1, solve=14), id="all")]


@compiled
@pytest.mark.parametrize("features", FEATURE_SETS)
def test_each_feature_gives_the_same_results_in_both_cores(features, sample):
    """Fixed depths, node limits (the stop inside an aspiration re-search too), and a whole game
    with the tables, history and counter moves kept between moves."""
    evaluator = evaluators()[-1].values[0] or classic()
    for i, pos in enumerate(random_positions(sample(30), seed=17)):
        py, c = pair(evaluator, features)
        limit = SearchLimit(depth=3 + i % 3) if i % 3 else SearchLimit(nodes=400 + 613 * i)
        assert_same(py.search(pos, limit), c.search(pos, limit), (limit, pos))
        assert_nothing_dropped(py, c)
    rng = random.Random(8)
    pos = Position()
    for _ in range(4):
        pos.push(rng.choice(list(pos.legal_moves())))
    pys, cs = zip(pair(evaluator, features), pair(evaluator, features))
    while pos.winner is None:
        a, b = pys[pos.turn].search(pos, SearchLimit(depth=4)), cs[pos.turn].search(pos, SearchLimit(depth=4))
        assert_same(a, b, pos)
        assert_nothing_dropped(pys[pos.turn], cs[pos.turn])
        pos.push(a.move)


@compiled
def test_iterations_report_the_same_results_at_every_depth():
    pos = load_suite()[15][1]
    py, c = pair(classic())
    assert [outcome(r) for r in py.iterate(pos, SearchLimit(depth=7))] == \
        [outcome(r) for r in c.iterate(pos, SearchLimit(depth=7))]


@compiled
def test_same_results_without_a_table(sample):
    """hash_mb=0: plain alpha-beta with the same ordering, in both cores."""
    evaluator = classic()
    for i, pos in enumerate(random_positions(sample(30), seed=8)):
        py = AlphaBeta(evaluator, move_space=81, hash_mb=0)
        c = core.CompiledAlphaBeta(evaluator, hash_mb=0)
        assert c.tt_slots == 0
        depth = 3 + i % 2
        assert_same(py.search(pos, SearchLimit(depth=depth)), c.search(pos, SearchLimit(depth=depth)), pos)


def test_without_a_table_the_solver_is_off_in_both_cores():
    """A table-less search would solve every transposition of the last plies again: the solver
    (on by default) is switched off there, and only there."""
    assert AlphaBeta(classic(), move_space=81, hash_mb=0).features.solve == 0
    assert AlphaBeta(classic(), move_space=81, hash_mb=1).features.solve == Features().solve > 0
    if core.compiled_available():
        assert core.CompiledAlphaBeta(classic(), hash_mb=0).features.solve == 0
        assert core.CompiledAlphaBeta(classic(), hash_mb=1).features.solve == Features().solve


@compiled
def test_a_tiny_table_replaces_entries_and_still_plays_legal_moves():
    pos = load_suite()[20][1]
    c = core.CompiledAlphaBeta(classic(), tt_slots=64)
    result = c.search(pos, SearchLimit(depth=6))
    assert c.tt_replaced > 0 and c.tt_count <= 64
    assert result.move in pos.legal_moves() and result.depth == 6


@compiled
def test_the_search_leaves_the_position_as_it_found_it():
    pos = load_suite()[3][1]
    before = (pos.key, pos.ply, pos.moves_played())
    c = core.CompiledAlphaBeta(classic(), tt_slots=1 << 16)
    c.search(pos, SearchLimit(nodes=3000))  # stopped mid-depth
    c.search(pos, SearchLimit(depth=4))
    assert (pos.key, pos.ply, pos.moves_played()) == before


@compiled
def test_a_deadline_stops_the_compiled_search():
    pos = load_suite()[15][1]
    result = core.CompiledAlphaBeta(classic()).search(pos, SearchLimit.seconds(0.05))
    assert result.move in pos.legal_moves() and 1 <= result.depth < 20 and not result.proven


@compiled
def test_should_stop_stops_the_compiled_search():
    pos = load_suite()[15][1]
    asked = []

    def should_stop():
        asked.append(1)
        return len(asked) >= 2

    result = core.CompiledAlphaBeta(classic()).search(pos, SearchLimit(should_stop=should_stop))
    assert len(asked) == 2  # asked every STOP_POLL_SECONDS, and stopped at the first True
    assert result.move in pos.legal_moves() and not result.proven


@compiled
def test_an_exception_in_should_stop_reaches_the_caller():
    def broken():
        raise RuntimeError("watcher gone")

    pos = load_suite()[15][1]
    before = pos.key
    with pytest.raises(RuntimeError, match="watcher gone"):
        core.CompiledAlphaBeta(classic()).search(pos, SearchLimit(should_stop=broken))
    assert pos.key == before


@compiled
def test_an_exception_in_the_evaluation_memo_reaches_the_caller():
    c = core.CompiledAlphaBeta(classic(), tt_slots=1024)

    def broken(won_x, won_o, drawn):
        raise ArithmeticError("memo failed")

    c._core.set_classic(core._int32_bytes(classic()._local), broken, 200)
    with pytest.raises(ArithmeticError, match="memo failed"):
        c.search(Position(), SearchLimit(depth=3))


# -- choosing the core, and falling back ------------------------------------------------------------

@compiled
def test_auto_runs_the_compiled_core_and_the_engine_says_so(monkeypatch, caplog):
    monkeypatch.delenv(core.CORE_ENV, raising=False)
    engine = AlphaBetaEngine(depth=2)
    assert engine.core == "compiled" and isinstance(engine.searcher, core.CompiledAlphaBeta)
    assert engine.name == "alphabeta (compiled core)"
    assert engine.choose(Position(), SearchLimit()).move in Position().legal_moves()


def test_python_is_chosen_by_argument_or_environment(monkeypatch):
    assert AlphaBetaEngine(core="python").core == "python"
    monkeypatch.setenv(core.CORE_ENV, "python")
    engine = AlphaBetaEngine()
    assert engine.core == "python" and type(engine.searcher) is AlphaBeta
    assert engine.name == "alphabeta (python core)"


def test_a_bad_core_name_is_a_clear_error(monkeypatch):
    with pytest.raises(ValueError, match="core must be one of auto, compiled, wasm, python, got 'fast'"):
        AlphaBetaEngine(core="fast")
    monkeypatch.setenv(core.CORE_ENV, "fast")
    with pytest.raises(ValueError, match="UTTT_CORE must be one of"):
        AlphaBetaEngine()


def test_without_the_core_auto_falls_back_and_compiled_is_an_error(monkeypatch, fake_machine, caplog):
    """Without the compiled core and without wasmtime (tests/test_core_wasm.py: with it, auto runs
    the WebAssembly core)."""
    fake_machine(compiled=core.NOT_BUILT, wasm="wasmtime is not installed (python -m pip install wasmtime)")
    monkeypatch.delenv(core.CORE_ENV, raising=False)
    announce = core.Announcements().announce  # as a fresh process's
    with caplog.at_level(logging.INFO, logger="agent.core"):
        engine = AlphaBetaEngine(depth=2, announce=announce)
        assert not caplog.records  # nothing before the first move: the ready line comes first
        for each in (engine, AlphaBetaEngine(depth=2, announce=announce)):
            each.choose(Position(), SearchLimit())
    assert each.core == "python" and type(each.searcher) is AlphaBeta
    said = [r.getMessage() for r in caplog.records if r.name == "agent.core"]
    assert said == ["search core: pure Python (the compiled core is not built: no C compiler worked when the "
                    "package was installed, see docs/wasm.md; the WebAssembly core cannot run: wasmtime is not "
                    "installed (python -m pip install wasmtime))"]  # once
    with pytest.raises(core.CoreUnavailable, match="--core compiled: the compiled core is not built"):
        AlphaBetaEngine(core="compiled")


@compiled
def test_an_evaluator_the_core_does_not_compute_falls_back_with_a_warning():
    searcher, used, (level, message) = core.make_searcher(SeedEvaluator(), hash_mb=1, core="auto")
    assert used == "python" and type(searcher) is AlphaBeta
    assert level == logging.WARNING and "no SeedEvaluator evaluation" in message
    with pytest.raises(core.CoreUnavailable, match="no SeedEvaluator evaluation"):
        core.make_searcher(SeedEvaluator(), hash_mb=1, core="compiled")


@compiled
def test_the_self_check_refuses_a_compiled_evaluation_that_disagrees():
    """Drift between the C and Python evaluations is caught when an engine is made (here the
    Python side drifts: the C tables are made from the evaluator's own)."""
    evaluator = Evaluator(Weights(free_move=41))
    real = evaluator.evaluate
    evaluator.evaluate = lambda pos: real(pos) + 1
    with pytest.raises(core.UnsupportedEvaluation, match="the compiled evaluation gives"):
        core.CompiledAlphaBeta(evaluator, tt_slots=1024, checked=set())


def test_the_table_fits_the_memory_budget():
    assert core.table_slots(192) * core.TT_ENTRY_BYTES <= 192 * 2**20 < core.table_slots(192) * 2 * core.TT_ENTRY_BYTES
    assert core.table_slots(0) == 1024


def setup_constant(project: Path, name: str):
    """A constant of the project's setup.py (the floors are written there once), read without running it."""
    tree = ast.parse((project / "setup.py").read_text())
    return next(ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                and any(getattr(target, "id", None) == name for target in node.targets))


def dependencies(project: Path, env: dict) -> list[str]:
    """What the package would install with, as setup.py decides it in ``env``."""
    done = subprocess.run([sys.executable, "setup.py", "-q", "egg_info"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    requires = next(project.glob("*.egg-info")) / "requires.txt"
    return requires.read_text().split("\n\n")[0].split()      # the section before the extras'


@pytest.mark.skipif(sys.platform == "win32", reason="CC and PATH do not choose the compiler on Windows")
def test_wasmtime_is_a_dependency_only_where_no_compiler_works(tmp_path):
    """setup.py: users with a compiler get the compiled core and do not download the runtime."""
    pytest.importorskip("setuptools", reason="setup.py needs setuptools in this environment (pip brings its own)")
    project = copy_of_the_project(tmp_path / "project")
    always, runtime = setup_constant(project, "REQUIRES"), setup_constant(project, "WASM_RUNTIME")
    assert dependencies(project, without_a_compiler(tmp_path / "bin")) == [*always, runtime]
    if not core.compiled_available():
        pytest.skip(f"no compiler here to check the other half: {core.unavailable_reason()}")
    shutil.rmtree(next(project.glob("*.egg-info")))
    assert dependencies(project, dict(os.environ)) == always


@pytest.mark.e2e
@pytest.mark.skipif(sys.platform == "win32", reason="CC and PATH do not choose the compiler on Windows")
def test_installation_without_a_compiler_plays_with_the_webassembly_core(tmp_path):
    """The README's install on a machine without a C compiler (no gcc or cc on PATH, CC=false): it
    succeeds with a warning, brings wasmtime, and the agent runs the WebAssembly core with no step
    more. It makes a virtual environment and installs into it from the package index, with this
    Python's pip (``--python``): a venv's own copy of pip would only cost its install (8 CPU-s)."""
    project = copy_of_the_project(tmp_path / "project")
    env = without_a_compiler(tmp_path / "bin")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, env=env, timeout=300)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    done = subprocess.run([*pip, "install", "-v", "-e", "."], cwd=project, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "could not be built" in done.stdout + done.stderr and "as WebAssembly" in done.stdout + done.stderr
    assert not list(project.rglob("_core*.so"))
    assert subprocess.run([*pip, "show", "wasmtime"], env=env, capture_output=True).returncode == 0
    played = subprocess.run([str(python), "-m", "agent", "--protocol", "codingame"], stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert "engine alphabeta (wasm core)" in played.stderr, played.stderr
    # pip showed its warning only because of -v: the agent says it where the user looks.
    assert f"; core: wasm ({core.NOT_BUILT})" in played.stderr, played.stderr
    version = subprocess.run([str(python), "-m", "agent", "--version"], capture_output=True, text=True, env=env,
                             cwd=tmp_path, timeout=120)
    assert version.stdout.endswith(f"; core: wasm ({core.NOT_BUILT})\n"), (version.stdout, version.stderr)


# -- the command line ------------------------------------------------------------------------------

def test_help_says_which_core_auto_runs_here():
    from agent import cli

    text = " ".join(cli.build_parser().format_help().split())
    expected = ("compiled (C) here" if core.compiled_available() else "wasm here: the compiled core is not built"
                if core.wasm_available() else "pure Python here: the compiled core is not built")
    assert "--core {auto,compiled,wasm,python}" in text and expected in text


def test_asking_for_the_missing_core_on_the_command_line_is_a_usage_error(monkeypatch, fake_machine, tmp_path, capsys):
    from agent import cli

    fake_machine(compiled=core.NOT_BUILT)
    monkeypatch.setenv(core.CORE_ENV, "auto")  # restored afterwards: --core sets it for the process
    assert cli.main(["Probe", "--dir", str(tmp_path), "--core", "compiled"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("uttt-agent: error: --core compiled: the compiled core is not built") and "\n" not in err
    assert list(tmp_path.iterdir()) == []  # nothing written in the referee's directory


@pytest.mark.e2e
@pytest.mark.parametrize("choice", ["python", "compiled"])
def test_the_agent_process_says_which_core_it_runs_in_its_first_line(choice, tmp_path):
    if choice == "compiled" and not core.compiled_available():
        pytest.skip(core.unavailable_reason())
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop(core.CORE_ENV, None)
    process = subprocess.Popen([sys.executable, "-m", "agent", "Probe", "--dir", str(tmp_path), "--core", choice],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, env=env)
    lines = []
    try:
        for line in process.stderr:
            lines.append(line)
            if " ready in " in line:
                break
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stderr.close()
    # Nothing before it watches (match runners start the referee when an agent speaks); the ready
    # line names the core. The log says more at the first move.
    assert len(lines) == 2 and " watching " in lines[0], lines
    assert f"engine alphabeta ({choice} core)" in lines[1], lines
    assert lines[1].rstrip().endswith(f"; core: {choice} (chosen with --core or UTTT_CORE)"), lines


# Two threads where the machine has a core free for each, else capped to the free ones (one line).
TWO_THREADS = "compiled core, 2 threads" if core.auto_threads() >= 2 else "compiled core"


@pytest.mark.parametrize("options, engine", [(["--core", "python"], "python core"),
                                             pytest.param(["--threads", "2"], TWO_THREADS, marks=compiled)])
@pytest.mark.e2e
def test_the_codingame_protocol_takes_the_core_options_too(options, engine):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop(core.CORE_ENV, None)
    done = subprocess.run([sys.executable, "-m", "agent", "--protocol", "codingame", *options],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=60)
    assert f"ready: CodinGame protocol, engine alphabeta ({engine})" in done.stderr, done.stderr
    assert ("--threads 2 capped to" in done.stderr) == (engine == "compiled core"), done.stderr
    assert done.stdout == ""


@compiled
@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
@pytest.mark.parametrize("threads", [1, 3])
def test_ctrl_c_interrupts_a_compiled_search(threads):
    """Python runs signal handlers only between its own instructions: the C search lets it now and
    then, or Ctrl-C would wait for the search (here one without any limit: forever). The fitted
    evaluation, where it loads, never calls Python from the search by itself. With threads, the
    main thread's stop ends the helpers (tests/test_threads.py)."""
    import signal

    code = ("import time; from agent import engines; from agent.core import CompiledAlphaBeta; "
            "from agent.core import load_position; from agent.rules import Position\n"
            "try:\n    evaluator = engines.make_evaluator('fitted')\n"
            "except Exception:\n    evaluator = engines.make_evaluator('classic')\n"
            f"searcher = CompiledAlphaBeta(evaluator, tt_slots=1 << 16, threads={threads})._core\n"
            "load_position(searcher, Position())\n"
            "searcher.new_search(None, None, None)\n"
            "print('searching', flush=True)\n"
            "from agent.search import INFINITY\n"
            "searcher.root(list(range(81)), 40, -INFINITY, INFINITY, 0)")  # one depth of 40 plies: it would take years
    process = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        assert process.stdout.readline() == "searching\n"
        time.sleep(0.5)  # well inside the C search
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait()
    assert "KeyboardInterrupt" in err
