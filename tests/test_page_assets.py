"""The pages' files (ref_sim/views/assets/): shipped with the package, scripts that parse, each
page built from its own files, and no page's script or styles left in a Python string."""

import ast
import fnmatch
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ref_sim.views import board_page, replay_page

ROOT = Path(__file__).resolve().parent.parent
ASSETS = sorted(replay_page.ASSETS.iterdir())


def test_every_page_file_is_package_data():
    patterns = re.findall(r'"([^"]+)"', re.search(r'^ref_sim = \[(.*)\]$',
                                                  (ROOT / "pyproject.toml").read_text(), re.M).group(1))
    for path in ASSETS:
        relative = path.relative_to(ROOT / "ref_sim").as_posix()
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in patterns), relative
    assert {path.suffix for path in ASSETS} >= {".js", ".css", ".html"}


@pytest.mark.e2e
@pytest.mark.parametrize("script", [path for path in ASSETS if path.suffix == ".js"], ids=lambda path: path.name)
def test_the_scripts_parse(script):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the scripts' syntax is checked where it is")
    result = subprocess.run([node, "--check", str(script)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


#: Each page's scripts, and how many times its text holds each: the analysis board carries its
#: core's script twice (once as text for the Web Worker it makes, once to run in the page).
PAGE_SCRIPTS = {
    "replay": {"errors.js": 1, "shared.js": 1, "replay.js": 1},
    "board": {"errors.js": 1, "shared.js": 1, "board.js": 1, "board_core.js": 2, "board_worker.js": 1},
}


@pytest.fixture(scope="module")
def pages():
    return {"replay": replay_page.page("{}"), "board": board_page.page()}


@pytest.mark.parametrize("name", sorted(PAGE_SCRIPTS))
def test_each_page_holds_its_files(pages, name):
    page = pages[name]
    for script, times in PAGE_SCRIPTS[name].items():
        assert page.count(replay_page.asset(script).strip()) == times, script
    assert "@" + "STYLE@" not in page and "@SCRIPT@" not in page and "@ERRORS@" not in page
    # The styles are there, their colours filled in.
    assert page.count(replay_page.coloured(replay_page.asset(f"{name}.css"))) == 1


def test_every_script_belongs_to_a_page():
    used = {script for scripts in PAGE_SCRIPTS.values() for script in scripts}
    assert {path.name for path in ASSETS if path.suffix == ".js"} == used


def test_the_crosstable_styles_come_from_their_file():
    from ref_sim.views import crosstable

    assert crosstable.STYLE.strip() == replay_page.asset("crosstable.css").strip()


#: What a page's code looks like in a Python string: a JavaScript function, listener or constant,
#: or a CSS rule.
PAGE_CODE = re.compile(r"\bfunction\b[\s\w]*\(|addEventListener\(|\bconst \w+ = |"
                       r"^[\w#.*:\[\]=\"-][^{}\n]*\{[^{}]*:[^{}]*;[^{}]*\}", re.M)


def test_no_page_code_in_a_python_string():
    """The pages' scripts and styles are files (checked above, and by node); a Python module of
    ref_sim/ holds at most a line or two of them. Docstrings and f-strings (the crosstable's HTML
    around its data) are not looked at."""
    offenders = []
    for path in sorted((ROOT / "ref_sim").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        fstring_parts = {id(value) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)
                         for value in node.values}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                    and id(node) not in fstring_parts and node.value.count("\n") >= 3
                    and PAGE_CODE.search(node.value)):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
