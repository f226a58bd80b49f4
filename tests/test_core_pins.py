"""The compiled core finds what it found before its speed work (516d79d), node for node.

tests/core_pins.json holds fixed-depth results (move, score, depth, nodes, principal variation,
proven) of main's core before that work (scripts/pin_core.py wrote them): the benchmark positions
at depth 11 (fitted evaluation) and 9 (classic), deeper than tests/test_core.py can check against
the pure-Python search in a test; with a table of 1,024 slots, which replaces entries all the time;
and a game searched move after move by one engine whose small table, ages and history carry over.
Speed may change, the trees may not: a change that makes one of these differ is a search change.
The WebAssembly core (agent/core_wasm.py), built from the same search, must find them too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent import core, core_wasm

ROOT = Path(__file__).resolve().parent.parent
from scripts.pin_core import CASES, GAME, run_case  # noqa: E402

PINS = json.loads((ROOT / "tests" / "core_pins.json").read_text())

compiled = pytest.mark.skipif(not core.compiled_available(), reason=core.unavailable_reason() or "built")
wasm = pytest.mark.skipif(not core.wasm_available(), reason=core.wasm_unavailable_reason() or "runs")
BUILDS = [pytest.param("compiled", marks=compiled), pytest.param("wasm", marks=wasm)]


@pytest.fixture(scope="module")
def now():
    """A case's results with a build of the core ("compiled", "wasm"), each run once in a worker
    and only where a test asks for it (parallel workers share the cases out)."""
    found = {}

    def results(build: str, case: str) -> dict:
        if (build, case) not in found:
            found[build, case] = run_case(case, None if build == "compiled" else core_wasm.load())
        return found[build, case]

    return results


def test_the_pins_are_of_the_cases_run_now():
    assert PINS["cases"] == {**{k: list(v) for k, v in CASES.items()}, "game": list(GAME)}
    assert len(PINS["fitted"]) == 35 and len(PINS["game"]) > 40


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("case", [*CASES, "game"])
def test_same_results_as_before(now, build, case):
    found = now(build, case)[case]
    for i, (pinned, result) in enumerate(zip(PINS[case], found)):
        assert result == pinned, (case, i)
    assert len(found) == len(PINS[case])


@pytest.mark.parametrize("build", BUILDS)
def test_the_small_tables_replaced_entries_as_before(now, build):
    assert now(build, "game")["game-replaced"] == PINS["game-replaced"] > 0
