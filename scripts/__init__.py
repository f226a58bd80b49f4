"""The bench's scripts, each run from the project's folder as ``python -m scripts.NAME`` (which
puts that folder on the path, so none touches ``sys.path``); what one shares with others and with
the tests (the benchmark positions, headless Chromium, the core pins...) is imported as
``scripts.NAME`` (pytest puts the project's folder on the path: pyproject.toml). ``build-exe``
alone is run by its path (``scripts/build-exe``; ``py scripts\\build-exe`` on Windows)."""
