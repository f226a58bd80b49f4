"""README.md and docs/ must be true on a fresh clone: every path, module and command they name
exists in the repository, and nothing points outside it (a user's clone has no ../shared)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OUR_PACKAGES = ("agent", "ref_sim", "scripts")

#: A repository path as the docs write it: `scripts/perft.py`, [link](docs/protocol.md). Not a
#: tail of a longer path (dist/uttt-agent/...) and not a built or user-made file (dist/, runs/).
REPO_PATH = re.compile(r"(?<![\w./\\-])((?:agent|ref_sim|scripts|tests|docs)/[\w./-]*)")
#: `python -m X` / `python3 -m X`.
MODULE = re.compile(r"\bpython3? -m ([A-Za-z_][\w.]*)")
#: A console script at the start of a command line in a code block: `uttt-agent Walrus ...`.
SCRIPT = re.compile(r"^(uttt-[\w-]+)", re.MULTILINE)
#: Things that exist only next to the developers' checkout, never in a user's clone.
OUTSIDE = re.compile(r"\.\./shared|PROTOCOL\.md")


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def project_scripts() -> set[str]:
    """The console scripts of ``[project.scripts]`` (read by hand: tomllib needs Python 3.11)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = re.search(r"^\[project\.scripts\]\n(.*?)(?=^\[|\Z)", text, re.MULTILINE | re.DOTALL)
    return set(re.findall(r"^([\w-]+)\s*=", section.group(1), re.MULTILINE))


def module_exists(name: str) -> bool:
    top = name.split(".")[0]
    if top in OUR_PACKAGES:  # look in this checkout, not at whatever is installed
        path = ROOT.joinpath(*name.split("."))
        return path.with_suffix(".py").is_file() or (path / "__main__.py").is_file()
    return importlib.util.find_spec(top) is not None


def code_blocks(text: str) -> str:
    return "\n".join(re.findall(r"```[^\n]*\n(.*?)```", text, re.DOTALL))


def problems(text: str, scripts: set[str]) -> list[str]:
    """Every reference in ``text`` that a fresh clone cannot satisfy, one line each."""
    found = []
    for match in OUTSIDE.finditer(text):
        found.append(f"points outside the repository: {match.group(0)!r}")
    for path in REPO_PATH.findall(text):
        path = path.rstrip(".")
        if not (ROOT / path).exists():
            found.append(f"no such path in the repository: {path}")
    for module in MODULE.findall(text):
        if not module_exists(module.rstrip(".")):
            found.append(f"no such module: python -m {module}")
    for script in SCRIPT.findall(code_blocks(text)):
        if script not in scripts:
            found.append(f"no such console script in pyproject.toml: {script}")
    return found


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_name_only_what_a_fresh_clone_has(path):
    assert problems(path.read_text(encoding="utf-8"), project_scripts()) == []


def test_the_project_carries_its_own_protocol_document():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert (ROOT / "docs" / "protocol.md").is_file()
    assert "docs/protocol.md" in readme


def test_the_references_are_all_seen():
    # Guards the patterns themselves: a regex that silently matched nothing would pass above.
    text = "\n".join(path.read_text(encoding="utf-8") for path in doc_files())
    paths = set(REPO_PATH.findall(text))
    assert {"scripts/bench_speed.py", "scripts/build-exe", "tests/test_exe.py", "docs/protocol.md"} <= paths
    assert not any(p.startswith("agent/uttt") for p in paths)  # dist/uttt-agent/uttt-agent is no repo path
    assert {"ref_sim.match", "agent", "pytest", "scripts.perft"} <= set(MODULE.findall(text))
    assert {"uttt-agent", "uttt-show", "uttt-match"} <= set(SCRIPT.findall(code_blocks(text)))


def test_the_readme_links_every_page_of_docs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert [page.name for page in sorted((ROOT / "docs").glob("*.md")) if f"docs/{page.name}" not in readme] == []


def test_each_kind_of_broken_reference_is_reported():
    text = """See ../shared/PROTOCOL.md and scripts/no_such_bench.py or [doc](docs/missing.md).

```sh
python -m ref_sim.no_such_tool --games 1
python3 -m no_such_package_xyz
uttt-no-such-script Walrus
uttt-agent Walrus --dir .
```
"""
    found = problems(text, project_scripts())
    assert found == [
        "points outside the repository: '../shared'",
        "points outside the repository: 'PROTOCOL.md'",
        "no such path in the repository: scripts/no_such_bench.py",
        "no such path in the repository: docs/missing.md",
        "no such module: python -m ref_sim.no_such_tool",
        "no such module: python -m no_such_package_xyz",
        "no such console script in pyproject.toml: uttt-no-such-script",
    ]


#: A script run by its path (`python scripts/perft.py 5`). The scripts are modules of the bench's
#: package and run from the project's folder as `python -m scripts.perft 5`: by path, none would
#: find the project's packages (they no longer put its folder on sys.path).
SCRIPT_BY_PATH = re.compile(r"\b(?:python3?|py) (scripts[/\\]\w+\.py)\b")
#: The speed table quotes the command its record was made by (docs/figures/speed.json), as run then.
SPEED_TABLE = re.compile(r"<!-- speed table: .*?<!-- end of speed table -->", re.DOTALL)
#: Built apart, with its own instructions, until it lands.
BUILT_APART = {"scripts/windows_lane.py"}


def test_the_scripts_are_run_as_modules():
    texts = {path: SPEED_TABLE.sub("", path.read_text(encoding="utf-8")) for path in doc_files()}
    texts.update({path: path.read_text(encoding="utf-8") for path in sorted((ROOT / "scripts").rglob("*.py"))
                  if path.relative_to(ROOT).as_posix() not in BUILT_APART})
    found = [f"{path.relative_to(ROOT)}: {match.group(0)}" for path, text in texts.items()
             for match in SCRIPT_BY_PATH.finditer(text) if match.group(1) not in BUILT_APART]
    assert found == [], "write python -m scripts.NAME"
    assert [m.group(0) for m in SCRIPT_BY_PATH.finditer("python scripts/perft.py 5; py scripts\\bench_speed.py")] == [
        "python scripts/perft.py", "py scripts\\bench_speed.py"]
