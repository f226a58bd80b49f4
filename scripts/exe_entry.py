"""Entry point of the standalone executable built by ``scripts/build-exe`` (PyInstaller).

PyInstaller freezes a script, not a ``package.module:function`` entry point, so this file is the
script: it does exactly what the ``uttt-agent`` console script of pyproject.toml does.
Relative imports would fail here (a frozen script runs as ``__main__`` with no package), hence
the absolute import of :mod:`agent.cli`.
"""

import sys

from agent.cli import main

if __name__ == "__main__":
    sys.exit(main())
