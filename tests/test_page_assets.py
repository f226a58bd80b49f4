"""The pages' files (ref_sim/views/assets/): shipped with the package, and scripts that parse."""

import fnmatch
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ref_sim.views import replay_page

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


def test_the_page_holds_each_file_once():
    page = replay_page.page("{}")
    for path in ASSETS:
        if path.suffix == ".js":
            assert page.count(path.read_text(encoding="utf-8").strip()) == 1, path.name
