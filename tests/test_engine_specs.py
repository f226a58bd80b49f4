"""One engine registry and one spec parser: every engine declares its options
(agent.engines.ENGINES), agent.options.parse_spec checks every ``NAME:KEY=VALUE`` spec, and each
place that reads a spec (the arena, the agent's --engine, the runners' built-ins, the scripts)
goes through it, so a bad spec is the same one line everywhere."""

from __future__ import annotations

import inspect
import io
import logging
import re
from pathlib import Path

import pytest

from agent import cli, engines
from agent.engines import ENGINES, FEATURE_OPTIONS, build_engine, make_engine, parse_engine_spec
from ref_sim.games import get_game, search_engine
from agent.options import Option, SpecError, parse_options, parse_spec
from agent.search import Features
from ref_sim import arena
from ref_sim.series.specs import BUILTINS, agent_spec
from ref_sim.series import specs
ROOT = Path(__file__).resolve().parent.parent

#: What alphabeta says it takes, as every error about its options lists it.
ALPHABETA_OPTIONS = ("its options: depth (1-128), nodes (1-1,000,000,000,000), hash_mb (0-65,536), "
                     "threads (auto or 1-{threads}, default 1), evaluation (classic or fitted, default fitted), "
                     "core_build (a path), core (auto or compiled or wasm or python), "
                     "asp (0-1,000,001, default 50), lmr (0-2, default 1), age (0-62, default 3), "
                     "solve (0-128, default 8)")


def alphabeta_options() -> str:
    from agent.core import MAX_THREADS

    return ALPHABETA_OPTIONS.format(threads=MAX_THREADS)


# -- the parser --------------------------------------------------------------------------------

@pytest.mark.parametrize("spec, parsed", [
    ("alphabeta", ("alphabeta", {})),
    ("alphabeta:", ("alphabeta", {})),                        # empty items are skipped, as always
    ("alphabeta:depth=4,hash_mb=0", ("alphabeta", {"depth": 4, "hash_mb": 0.0})),
    ("alphabeta:depth=4,", ("alphabeta", {"depth": 4})),
    ("alphabeta:lmr=0,age=1,depth=2", ("alphabeta", {"lmr": 0, "age": 1, "depth": 2})),
    ("alphabeta:threads=2", ("alphabeta", {"threads": 2})),
    ("alphabeta:threads=auto", ("alphabeta", {"threads": "auto"})),
    ("alphabeta:evaluation=classic,nodes=20000", ("alphabeta", {"evaluation": "classic", "nodes": 20000})),
    ("alphabeta:hash_mb=0.5", ("alphabeta", {"hash_mb": 0.5})),
    ("random", ("random", {})),
    ("random:seed=7", ("random", {"seed": 7})),
    ("seed", ("seed", {})),
    ("seed:depth=04", ("seed", {"depth": 4})),
])
def test_valid_engine_specs(spec, parsed):
    assert parse_engine_spec(spec) == parsed


@pytest.mark.parametrize("spec, error", [
    ("minimax", "unknown engine 'minimax'; choose from alphabeta, random, seed"),
    ("Alphabeta:depth=2", "unknown engine 'Alphabeta'; choose from alphabeta, random, seed"),
    ("x" * 100, f"unknown engine '{'x' * 60}...'; choose from alphabeta, random, seed"),
    ("alphabeta:speed=3", "engine 'alphabeta' takes no option 'speed'; {alphabeta}"),
    ("random:depth=3", "engine 'random' takes no option 'depth'; its options: seed (0-4,294,967,295)"),
    ("seed:nodes=5", "engine 'seed' takes no option 'nodes'; its options: depth (1-128, default 3)"),
    ("alphabeta:depth", "engine 'alphabeta': depth needs a value, as in alphabeta:depth=1"),
    ("alphabeta:lmr=", "engine 'alphabeta': lmr needs a value, as in alphabeta:lmr=1"),
    ("alphabeta:depth=x", "engine 'alphabeta': depth must be an integer from 1 to 128, got 'x'"),
    ("alphabeta:depth=0", "engine 'alphabeta': depth must be an integer from 1 to 128, got '0'"),
    ("alphabeta:depth=2.5", "engine 'alphabeta': depth must be an integer from 1 to 128, got '2.5'"),
    ("alphabeta:lmr=3", "engine 'alphabeta': lmr must be an integer from 0 to 2, got '3'"),
    ("alphabeta:hash_mb=nan", "engine 'alphabeta': hash_mb must be a number from 0 to 65,536, got 'nan'"),
    ("alphabeta:hash_mb=-1", "engine 'alphabeta': hash_mb must be a number from 0 to 65,536, got '-1'"),
    ("alphabeta:threads=two", "engine 'alphabeta': threads must be auto or an integer from 1 to {threads}, got 'two'"),
    ("alphabeta:evaluation=best", "engine 'alphabeta': evaluation must be classic or fitted, got 'best'"),
    ("alphabeta:depth=3,depth=4", "engine 'alphabeta': depth is given twice"),
    ("random:seed=-1", "engine 'random': seed must be an integer from 0 to 4,294,967,295, got '-1'"),
])
def test_each_kind_of_bad_engine_spec_is_one_line_naming_the_engine(spec, error):
    from agent.core import MAX_THREADS

    with pytest.raises(SpecError) as refused:
        parse_engine_spec(spec)
    assert str(refused.value) == error.format(alphabeta=alphabeta_options(), threads=MAX_THREADS)
    assert isinstance(refused.value, ValueError)             # every caller's usage-error path takes it


def test_options_given_in_python_are_checked_as_a_specs_are():
    assert make_engine("alphabeta", depth=3).depth == 3
    assert search_engine(get_game("ttt"), depth=None).depth is None   # None: not given (ref_sim.play)
    with pytest.raises(SpecError, match=r"^engine 'random' takes no option 'depth'; its options: seed"):
        make_engine("random", depth=3)                       # once a TypeError, caught and guessed at
    with pytest.raises(ValueError, match=r"^depth must be an integer from 1 to 128, got 0$"):
        make_engine("alphabeta", depth=0)
    with pytest.raises(ValueError, match=r"^depth must be an integer from 1 to 128, got 2.0$"):
        make_engine("alphabeta", depth=2.0)
    with pytest.raises(SpecError, match=r"^engine 'alphabeta': depth is given twice$"):
        make_engine("alphabeta:depth=2", depth=3)
    # Defaults from the caller reach only the engines that declare them (a series' seed).
    assert make_engine("alphabeta:depth=1", get_game("ttt"), defaults={"seed": 5}).depth == 1
    assert make_engine("random", defaults={"seed": 5}).choose.__self__._rng.random() == \
        make_engine("random:seed=5").choose.__self__._rng.random()


def test_the_games_an_engine_plays_and_the_options_for_one_game():
    with pytest.raises(SpecError, match=r"^engine 'seed' plays uttt only, not ttt$"):
        make_engine("seed", get_game("ttt"))
    with pytest.raises(SpecError, match="evaluation is for uttt; qubic has one of its own"):
        make_engine("alphabeta:evaluation=classic", get_game("qubic"))
    from agent.evaluation import Evaluator

    assert isinstance(make_engine("alphabeta:evaluation=classic,depth=1", get_game("uttt")).searcher.evaluator,
                      Evaluator)


def test_declared_defaults_are_the_ones_the_engines_use():
    for name, kind in ENGINES.items():
        made = inspect.signature(kind.make).parameters
        for option in kind.options:
            if option.name in made:
                assert made[option.name].default in (option.default, None), (name, option.name)
    assert {option.name: option.default for option in FEATURE_OPTIONS} == vars(Features())
    assert make_engine("seed").depth == 3
    assert make_engine("alphabeta:depth=1", get_game("ttt")).searcher.features == Features()


def test_a_parse_of_options_alone_and_a_spec_of_any_registry():
    assert parse_options("lmr=0,solve=6", FEATURE_OPTIONS, "the search") == {"lmr": 0, "solve": 6}
    declared = {"walrus": [Option("tusks", int, 0, 2, default=2)], "otter": []}
    assert parse_spec("walrus:tusks=1", declared, "bot") == ("walrus", {"tusks": 1})
    with pytest.raises(SpecError, match=r"^unknown bot 'seal'; choose from walrus, otter$"):
        parse_spec("seal", declared, "bot")
    with pytest.raises(SpecError, match=r"^bot 'otter' takes no option 'tusks'; it takes none$"):
        parse_spec("otter:tusks=1", declared, "bot")


# -- the runners' built-ins: the same parser --------------------------------------------------

@pytest.mark.parametrize("spec, tail", [
    ("agent", "--time-limit {time_limit}"),
    ("agent:depth=6", "--depth 6"),
    ("agent:nodes=20000,depth=3", "--nodes 20000 --depth 3"),   # in the spec's order, as before
    ("seed:depth=4", "--engine seed --depth 4"),
    ("flood", "--flood 20000"),
    ("flood:rate=5", "--flood 5"),                                # the template's default replaced
    ("agent:depth=4,name=Walrus", "--depth 4"),
])
def test_valid_builtin_specs(spec, tail):
    assert agent_spec(spec).template.endswith(tail)


@pytest.mark.parametrize("spec, error", [
    ("seed:nodes=5", "built-in 'seed' takes no option 'nodes'; its options: depth (1-81)"),
    ("random:depth=3", "built-in 'random' takes no option 'depth'; it takes none"),
    ("eager:rate=3", "built-in 'eager' takes no option 'rate'; it takes none"),
    ("agent:depth", "built-in 'agent': depth needs a value, as in agent:depth=1"),
    ("agent:depth=0", "built-in 'agent': depth must be an integer from 1 to 81, got '0'"),
    # 82 once became --depth 82, which the agent refused in every game: each a forfeit.
    ("agent:depth=82", "built-in 'agent': depth must be an integer from 1 to 81, got '82'"),
    ("agent:speed=3", "built-in 'agent' takes no option 'speed'; its options: depth (1-81), "
                      "nodes (1-1,000,000,000,000)"),
    ("flood:rate=0", "built-in 'flood': rate must be an integer at least 1, got '0'"),
])
def test_each_kind_of_bad_builtin_spec(spec, error):
    with pytest.raises(SpecError) as refused:
        agent_spec(spec)
    assert str(refused.value) == error


def test_the_builtins_declare_what_their_programs_take():
    from agent.options import MAX_DEPTH, MAX_NODES

    depth, nodes = (option for option, _ in BUILTINS["agent"].flags)
    assert (depth.high, nodes.high) == (MAX_DEPTH, MAX_NODES)     # the agent's own --depth, --nodes
    assert cli.build_parser().parse_args(["W", "--depth", str(MAX_DEPTH), "--nodes", str(MAX_NODES)])
    assert BUILTINS["random"][0] == BUILTINS["random"].template


# -- every caller goes through it -------------------------------------------------------------

def test_the_arena_reads_its_specs_with_the_parser(capsys):
    with pytest.raises(SystemExit) as stop:
        arena.main(["ttt", "alphabeta:speed=3", "random"], io.StringIO())
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        f"error: engine 'alphabeta' takes no option 'speed'; {alphabeta_options()}")
    with pytest.raises(SpecError, match="takes no option 'speed'"):
        arena.run_series(get_game("ttt"), "alphabeta", "alphabeta:speed=3", games=2)
    with pytest.raises(SpecError, match="takes no option 'speed'"):
        search_engine(get_game("ttt"), speed=3)


@pytest.mark.parametrize("protocol", [["Walrus", "--dir", "{dir}"], ["--protocol", "codingame"]])
def test_the_agents_engine_option_is_read_with_the_parser(protocol, tmp_path, capsys):
    argv = [arg.format(dir=tmp_path) for arg in protocol] + ["--engine", "seed:nodes=5"]
    assert cli.main(argv, setup_logging=lambda *args: None) == 2  # ours would take pytest's log capture away
    assert capsys.readouterr().err == ("uttt-agent: error: engine 'seed' takes no option 'nodes'; "
                                       "its options: depth (1-128, default 3)\n")


@pytest.mark.e2e
def test_the_agents_command_line_gives_each_engine_what_it_declares(caplog):
    caplog.set_level(logging.INFO, logger="agent")
    name, engine = build_engine("seed", 5, 100)        # depth it takes; nodes reach it through the limit
    assert (name, engine.depth) == ("seed", 5)
    assert "engine seed takes no nodes option" in caplog.text
    name, engine = build_engine("seed:depth=2", 5, None)  # the spec's own option wins
    assert engine.depth == 2
    name, engine = build_engine("alphabeta:depth=3", None, None, "classic")
    assert (name, engine.depth, type(engine.evaluator).__name__) == ("alphabeta", 3, "Evaluator")
    with pytest.raises(SpecError, match=r"^engine random searches on one thread; --threads 2 is for alphabeta$"):
        build_engine("random", None, None, threads=2)
    assert build_engine("random", None, None, threads="auto")[0] == "random"


def test_the_stdio_runner_reads_its_builtins_with_the_parser():
    with pytest.raises(SpecError, match=r"^built-in 'agent' takes no option 'speed'; its options: depth"):
        specs.stdio_spec("agent:speed=3")
    assert specs.stdio_spec("agent:depth=4").template.endswith("--depth 4")


def test_the_scripts_read_feature_lists_with_the_parser():
    from scripts import bench_proof
    assert bench_proof.features_from("solve=6,lmr=0") == Features(solve=6, lmr=0)
    with pytest.raises(SpecError, match=r"^the search: lmr must be an integer from 0 to 2, got '9'$"):
        bench_proof.features_from("lmr=9")


def test_nothing_else_splits_options_or_guesses_them_from_a_type_error():
    """Only agent/options.py takes ``KEY=VALUE`` items apart; no engine is made on a guess."""
    splitters = []
    for path in sorted([*ROOT.glob("agent/**/*.py"), *ROOT.glob("ref_sim/**/*.py"), *ROOT.glob("scripts/*.py")]):
        text = path.read_text(encoding="utf-8")
        if re.search(r"""partition\(["']=["']\)""", text):
            splitters.append(path.relative_to(ROOT).as_posix())
    # sandbox: a java command's --class-path=PATH token, to show the bot its class path;
    # realbots: a command's --flag=PATH tokens, made absolute; replay: a recorded command's
    # --engine=E token, to tell whose scale its scores are on; bench_first_move: its --ab
    # VAR=VALUE, an environment variable (none is a spec).
    assert splitters == ["agent/options.py", "ref_sim/series/process/sandbox.py", "ref_sim/series/realbots.py",
                         "ref_sim/views/replay.py", "scripts/bench_first_move.py"]
    assert "TypeError" not in inspect.getsource(engines)
