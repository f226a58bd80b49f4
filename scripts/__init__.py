"""The bench's scripts, each run as ``python scripts/NAME.py``; what one shares with others and
with the tests (the benchmark positions, headless Chromium, the core pins...) is imported as
``scripts.NAME``, with the project's folder on the path (pytest puts it there: pyproject.toml)."""
