"""The linter's rules (pyproject.toml, [tool.ruff]) hold for the whole tree: the suite runs it."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None,
                    reason="ruff is not installed here (it comes with the test extra: pip install -e '.[test]')")
def test_the_tree_passes_the_linter():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
