"""The import graph keeps the layout honest: the product (``agent``, which ships as the
executable) never needs the simulator, and no two modules import each other.

Imports inside functions count too: a lazy import is still a dependency."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("agent", "ref_sim")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    return {module_name(path): path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules ``name`` imports, resolving relative imports and ``from pkg import mod``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            targets = [prefix] + [f"{prefix}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            # The deepest project module the import names: `agent.rules.X` is `agent.rules`.
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imports_of(name, path, set(modules)) for name, path in modules.items()}


def test_the_graph_is_read(graph):
    # Guards the two checks below against passing on an empty or unresolved graph.
    assert "agent.rules" in graph["agent.search"] or "agent.limits" in graph["agent.search"]
    assert "agent.file_protocol" in graph["agent.cli"]
    assert "ref_sim.referees.file_shell" in graph["ref_sim.match"]


def test_the_product_does_not_import_the_simulator(graph):
    offenders = sorted(f"{name} -> {target}" for name, targets in graph.items() if name.startswith("agent")
                       for target in targets if target.startswith("ref_sim"))
    assert offenders == []


#: The bench's top-level packages: the bot imports none of them, not even lazily.
BENCH_PACKAGES = ("ref_sim", "scripts", "tests")


def test_the_bot_imports_nothing_of_the_bench():
    """The graph above knows only agent/ and ref_sim/; this reads every import statement of agent/
    as written, so that ``scripts.NAME`` (a package of the bench too) or ``tests`` count."""
    offenders = []
    for path in sorted((ROOT / "agent").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            offenders += [f"{path.relative_to(ROOT)}: {name}" for name in names
                          if name.partition(".")[0] in BENCH_PACKAGES]
    assert offenders == []


def test_no_script_puts_the_project_on_the_path():
    """The scripts run from the project's folder as ``python -m scripts.NAME``, which puts that
    folder on the path; ``scripts/build-exe``, run by its path, is the one that must (not a module).
    Another folder (bench_vs_rev's other revision) may be put there."""
    pattern = re.compile(r"sys\.path\.(?:insert|append)\([^\n]*(?:ROOT|__file__)")
    offenders = [f"{path.relative_to(ROOT)}: {line.strip()}" for path in sorted((ROOT / "scripts").rglob("*.py"))
                 for line in path.read_text(encoding="utf-8").splitlines() if pattern.search(line)]
    assert offenders == []
    assert pattern.search("sys.path.insert(0, str(Path(__file__).resolve().parent.parent))")


#: What only the bench uses, by the name it is defined under: each lives on the bench's side.
BENCH_ONLY_DEFINITIONS = {
    "load_core_build": "ref_sim.games.core_builds",  # other builds of the compiled core (the arena, bench_core_ratio)
}


def test_bench_only_code_lives_on_the_bench():
    modules = project_modules()
    defined = {}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in BENCH_ONLY_DEFINITIONS:
                defined.setdefault(node.name, set()).add(name)
    assert defined == {name: {home} for name, home in BENCH_ONLY_DEFINITIONS.items()}


def test_no_two_modules_import_each_other(graph):
    pairs = sorted({tuple(sorted((a, b))) for a, targets in graph.items() for b in targets
                    if a != b and a in graph.get(b, ()) and not _is_package_of(a, b) and not _is_package_of(b, a)})
    assert pairs == []


def _is_package_of(package: str, module: str) -> bool:
    # A package's __init__ re-exporting its submodules is not a tangle of two modules.
    return module.startswith(package + ".")


def test_the_time_budget_depends_on_no_decider(graph):
    """agent/clock.py holds every constant and formula of the time budget; the deciders and the
    protocols read it, never the other way round."""
    assert graph["agent.clock"] == set()
    assert "agent.clock" in graph["agent.file_turns"] and "agent.clock" in graph["agent.file_protocol"]


#: The agent's command line, both protocols': its parser, --help and main().
COMMAND_LINE = "agent.cli"
#: The two protocols: they read, write and time a game; no option of the command line is theirs.
PROTOCOLS = ("agent.file_protocol", "agent.codingame")


def test_the_protocols_hold_no_command_line(graph):
    for name in PROTOCOLS:
        assert COMMAND_LINE not in graph[name]
        tree = ast.parse((ROOT / (name.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        assert "argparse" not in imported, name
    assert {"agent.file_protocol", "agent.codingame", "agent.engines"} <= graph[COMMAND_LINE]


#: What the bot plays with, and why each is in agent/ (the bot apart from the bench).
BOT_MODULES = {
    "agent", "agent.__main__", "agent.cli",  # its command line (both protocols)
    "agent.cli_common", "agent.options", "agent.text",  # what every command shares; checked values, bounds, specs; outside text made printable
    "agent.platform_io",  # how files are opened and refused where POSIX and Windows differ
    "agent.file_protocol", "agent.referee_files", "agent.file_turns", "agent.watcher", "agent.lifeline",  # the file protocol
    "agent.pauses",
    "agent.clock", "agent.exits",  # both protocols' time budget and exit codes
    "agent.codingame", "agent.codingame_turns", "agent.variety",  # CodinGame's protocol
    "agent.search_log",  # each move's figures as JSON, for the runners
    "agent.rules", "agent.search", "agent.core", "agent.core_wasm", "agent.limits",  # rules and search (C, WebAssembly)
    "agent.engines", "agent.baselines", "agent.evaluation", "agent.eval_fitted",  # engines, evaluations
    "agent.bot", "agent.bot_worker",  # a bot of one's own on the same layer, and the process it thinks in
}
#: The bench: series, arena, self-play, statistics, clusters, tournaments, pictures, replay.
BENCH_MODULES = {"ref_sim.series.stats.match_stats", "ref_sim.series.run.cluster", "ref_sim.arena", "ref_sim.selfplay", "ref_sim.stops",
                 "ref_sim.play", "ref_sim.match", "ref_sim.stdio", "ref_sim.tournament", "ref_sim.series.stats.ratings",
                 "ref_sim.series.output.progress", "ref_sim.show", "ref_sim.render", "ref_sim.plot", "ref_sim.replay",
                 "ref_sim.views.analysis",
                 # the two referees side by side, and the series engine under every runner
                 "ref_sim.referees.file_shell", "ref_sim.referees.file_referee", "ref_sim.referees.codingame_shell",
                 "ref_sim.referees.codingame_referee",
                 "ref_sim.series.openings", "ref_sim.series.loop", "ref_sim.series.output.report", "ref_sim.series.specs",
                 # the generic search's other games, for the arena, play and their tests
                 "ref_sim.games", "ref_sim.games.base", "ref_sim.games.registry", "ref_sim.games.tictactoe",
                 "ref_sim.games.nineboard", "ref_sim.games.qubic",
                 # other builds of the compiled core, for the arena's core_build=PATH and bench_core_ratio
                 "ref_sim.games.core_builds"}


def test_the_bot_holds_only_what_it_plays_with(graph):
    agent_modules = {name for name in graph if name.startswith("agent")}
    assert agent_modules == BOT_MODULES
    assert BENCH_MODULES <= set(graph)


#: The command lines of series: thin front-ends over the engine, which none of the
#: referees, the engine's modules or the views may need.
SERIES_FRONT_ENDS = {"ref_sim.match", "ref_sim.stdio", "ref_sim.tournament"}
#: What sits under the front-ends: the two referees, the series engine, the views.
UNDER_THE_FRONT_ENDS = {"ref_sim.referees.file_shell", "ref_sim.referees.file_referee", "ref_sim.referees.codingame_shell",
                        "ref_sim.rules", "ref_sim.series.openings",
                        "ref_sim.series.loop", "ref_sim.series.output.report", "ref_sim.series.specs", "ref_sim.series.output.records",
                        "ref_sim.series.output.progress", "ref_sim.series.output.telemetry", "ref_sim.series.realbots", "ref_sim.series.process.isolation",
                        "ref_sim.series.run.cluster", "ref_sim.series.stats.match_stats", "ref_sim.show", "ref_sim.render", "ref_sim.plot",
                        "ref_sim.replay", "ref_sim.views.replay_page", "ref_sim.views.analysis", "ref_sim.views.crosstable"}


def test_the_referees_engine_and_views_do_not_import_the_front_ends(graph):
    assert UNDER_THE_FRONT_ENDS <= set(graph)
    offenders = sorted(f"{name} -> {target}" for name in UNDER_THE_FRONT_ENDS
                       for target in graph[name] & SERIES_FRONT_ENDS)
    assert offenders == []


#: The commands at the top of ref_sim: each one a front-end (python -m ref_sim.NAME).
COMMANDS = {"ref_sim.ref", "ref_sim.__main__", "ref_sim.match", "ref_sim.stdio", "ref_sim.tournament",
            "ref_sim.arena", "ref_sim.play", "ref_sim.cluster_serve", "ref_sim.selfplay", "ref_sim.show",
            "ref_sim.render", "ref_sim.plot", "ref_sim.replay"}


def test_ref_sim_shows_its_parts(graph):
    """The two referees side by side, knowing nothing of series; the series engine one package
    that imports no command; each protocol's one game in it."""
    referees = {name for name in graph if name.startswith("ref_sim.referees.")}
    series = {name for name in graph if name.startswith("ref_sim.series.")}
    assert referees == {"ref_sim.referees.file_shell", "ref_sim.referees.file_referee", "ref_sim.referees.codingame_shell",
                        "ref_sim.referees.codingame_referee", "ref_sim.referees.file_text"}
    # The referee's text and checks, which the random agent takes at each start: nothing of ours.
    assert graph["ref_sim.referees.file_text"] == set()
    # Both referees' decisions know no files, pipes, clocks or threads: only the rules (sans I/O).
    assert graph["ref_sim.referees.file_referee"] <= {"ref_sim.rules"}
    assert graph["ref_sim.referees.codingame_referee"] <= {"ref_sim.rules", "ref_sim.referees.file_referee"}
    assert {"ref_sim.series.loop", "ref_sim.series.file_games", "ref_sim.series.codingame_games",
            "ref_sim.series.output.records", "ref_sim.series.output.report", "ref_sim.series.specs"} <= series
    assert sorted(f"{name} -> {target}" for name in referees for target in graph[name]
                  if target.startswith("ref_sim.series")) == []
    assert sorted(f"{name} -> {target}" for name in series for target in graph[name] & COMMANDS) == []
    # The views apart from both: they import no command, and neither referees nor engine need them.
    views = {name for name in graph if name.startswith("ref_sim.views.")}
    assert {"ref_sim.views.show", "ref_sim.views.replay", "ref_sim.views.analysis", "ref_sim.views.crosstable"} <= views
    assert sorted(f"{name} -> {target}" for name in views for target in graph[name] & COMMANDS) == []
    assert sorted(f"{name} -> {target}" for name in referees | series for target in graph[name]
                  if target.startswith("ref_sim.views")) == []


#: The series engine's own core: the loop, its commands and each protocol's game, over everything
#: else of ``ref_sim/series/``; the parts below it never import it.
SERIES_ENGINE = {"ref_sim.series.loop", "ref_sim.series.command", "ref_sim.series.command_line",
                 "ref_sim.series.settings", "ref_sim.series.event", "ref_sim.series.preflight",
                 "ref_sim.series.file_games", "ref_sim.series.codingame_games"}
#: The series' parts (subpackages), each with the parts it must never import.
SERIES_PARTS = {
    "ref_sim.series.stats": {"ref_sim.series.output", "ref_sim.series.process", "ref_sim.series.run"},
    "ref_sim.series.output": {"ref_sim.series.process", "ref_sim.series.run"},
    "ref_sim.series.run": {"ref_sim.series.process", "ref_sim.series.output.report", "ref_sim.series.output.progress"},
    "ref_sim.series.process": {"ref_sim.series.run", "ref_sim.series.output.report", "ref_sim.series.output.progress"},
}
#: Programs of their own that a bot is started through (``python -I -S PATH``: no site, nothing
#: of the project on the path): the project never imports them, and they import nothing of it.
PROGRAMS = {"ref_sim.series.process.keeper_program", "ref_sim.series.process.shim_program"}


def test_the_series_parts_keep_their_floors(graph):
    """stats/ (pure functions) and output/ (the files and what is printed) know nothing of how
    bots are run or where games are played; no part imports the engine above it; stats/ imports
    nothing of the series but itself."""
    for part in SERIES_PARTS:
        assert any(name.startswith(part + ".") for name in graph), part
    offenders = sorted(f"{name} -> {target}" for part, never in SERIES_PARTS.items()
                       for name in graph if name.startswith(part + ".")
                       for target in graph[name]
                       if target in SERIES_ENGINE or any(target.startswith(other) for other in never))
    assert offenders == []
    stats_reach = {target for name in graph if name.startswith("ref_sim.series.stats.") for target in graph[name]}
    assert {t for t in stats_reach if t.startswith("ref_sim.") and not t.startswith("ref_sim.series.stats")} == set()


def test_the_keeper_and_the_shim_stand_alone(graph):
    """They run as ``python -I -S PATH``: the standard library alone, and nothing imports them
    (imported, as pytest's doctests do, they only define their parts)."""
    assert PROGRAMS <= set(graph)
    for name in PROGRAMS:
        assert graph[name] == set(), name
        tree = ast.parse((ROOT / (name.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
        imported = {alias.name.partition(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                    for alias in node.names}
        imported |= {(node.module or "").partition(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert imported <= set(sys.stdlib_module_names), (name, imported)
        assert tree.body[-1].test.comparators[0].value == "__main__", name     # if __name__ == "__main__"
    assert sorted(f"{name} -> {target}" for name, targets in graph.items() for target in targets & PROGRAMS) == []
