"""The pinned install: refresh requirements/lock.txt on purpose, and test the newest and the lowest
versions the project allows.

Usage:
  python3 -m scripts.pins refresh    # a new lock from today's releases, then the whole suite on it
  python3 -m scripts.pins lowest     # the quick lane on the lowest versions pyproject.toml allows

requirements/lock.txt pins every package that the install and every extra pull, for Python 3.10
and newer on Linux, macOS and Windows at once (uv's universal resolution); the README's commands
and CI install with it as pip's constraints (``-c``), so a release upstream cannot change what a
fresh clone installs. ``refresh`` writes the lock anew (every package at its newest release
allowed) and runs the whole suite in a fresh virtual environment with it: keep the lock if the
suite passes. ``lowest`` resolves every requirement the project states to its lowest allowed
version (their own dependencies at their newest), installs wheels only, and runs the quick lane:
a floor that fails there must be raised. Both make their environment in a temporary folder and
remove it. Needs uv (``python3 -m pip install uv==UV_VERSION``) and the package index.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "lock.txt"
#: The uv these commands were written against (its resolution decides the lock's contents).
UV_VERSION = "0.13.9"
#: Every Python the project supports is in the lock: its markers choose per version.
OLDEST_PYTHON = "3.10"
#: Written into the lock's header as the command that made it.
REFRESH_COMMAND = "python3 -m scripts.pins refresh"


def uv() -> list[str]:
    """The command that runs uv: the one on PATH, or the module beside this Python."""
    found = shutil.which("uv")
    if found:
        return [found]
    if subprocess.run([sys.executable, "-c", "import uv"], capture_output=True).returncode == 0:
        return [sys.executable, "-m", "uv"]
    raise SystemExit(f"pins: uv is needed; install it with: python3 -m pip install uv=={UV_VERSION}")


def compile_lock(output: Path, *options: str) -> None:
    """Resolve the project's requirements (every extra) into ``output``."""
    subprocess.run([*uv(), "pip", "compile", "pyproject.toml", "--all-extras", "--quiet", "-o", str(output),
                    "--custom-compile-command", REFRESH_COMMAND, *options], cwd=ROOT, check=True)


def fresh_environment(folder: Path, requirements: list[str]) -> Path:
    """A virtual environment in ``folder`` with ``requirements`` and the project (editable, as the
    README installs it); its Python."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    python = folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    environment = dict(os.environ, VIRTUAL_ENV=str(folder))
    subprocess.run([*uv(), "pip", "install", "--quiet", *requirements], cwd=ROOT, env=environment, check=True)
    return python


def run_suite(python: Path, *arguments: str) -> int:
    print(f"+ {python} -m pytest {' '.join(arguments)}", flush=True)
    return subprocess.run([str(python), "-m", "pytest", *arguments], cwd=ROOT).returncode


def refresh() -> int:
    compile_lock(LOCK, "--universal", "--python-version", OLDEST_PYTHON, "--upgrade")
    print(f"pins: wrote {LOCK.relative_to(ROOT)}; the whole suite on it follows", flush=True)
    with tempfile.TemporaryDirectory(prefix="uttt-pins-") as folder:
        python = fresh_environment(Path(folder, "venv"), ["-c", str(LOCK), "-e", ".[test]"])
        return run_suite(python)


def lowest() -> int:
    with tempfile.TemporaryDirectory(prefix="uttt-pins-") as folder:
        floors = Path(folder, "lowest.txt")
        version = f"{sys.version_info[0]}.{sys.version_info[1]}"
        compile_lock(floors, "--resolution", "lowest-direct", "--python-version", version, "--no-annotate")
        direct = [line for line in floors.read_text().splitlines() if line and not line.startswith("#")]
        print("pins: the lowest set: " + ", ".join(direct), flush=True)
        # Wheels only: a floor that has none for this Python would be compiled from source, and is
        # no floor a user can install.
        python = fresh_environment(Path(folder, "venv"), ["--only-binary", ":all:", "-r", str(floors)])
        subprocess.run([*uv(), "pip", "install", "--quiet", "--no-deps", "-e", "."], cwd=ROOT, check=True,
                       env=dict(os.environ, VIRTUAL_ENV=str(python.parent.parent)))
        return run_suite(python, "-m", "quick")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m scripts.pins", description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("refresh", "lowest"), help="refresh the lock, or test the lowest versions")
    args = parser.parse_args(argv)
    return refresh() if args.what == "refresh" else lowest()


if __name__ == "__main__":
    sys.exit(main())
