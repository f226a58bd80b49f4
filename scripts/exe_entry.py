"""Entry point of the standalone executable built by ``scripts/build-exe`` (PyInstaller).

PyInstaller freezes a script, not a ``package.module:function`` entry point, so this file is the
script: it does exactly what the ``uttt-agent`` console script of pyproject.toml does.
Relative imports would fail here (a frozen script runs as ``__main__`` with no package), hence
the absolute import of :mod:`agent.__main__` (whose ``run`` imports :mod:`agent.cli`).
"""

import sys

from agent.__main__ import run

if __name__ == "__main__":
    sys.exit(run())
