"""What a fresh install costs with a C compiler and without one: its size, and the core it runs.

Usage:
  python -m scripts.bench_install

Copies the package's sources to a temporary folder and installs them (pip install ., from PyPI)
into two fresh virtual environments: one as this machine is, one as a machine with no C compiler
(no gcc, cc, clang or the like on PATH, and CC=false: :func:`without_a_compiler`). Printed for each:
the time pip took, the size of the environment's site-packages and of wasmtime in it, and the
search core the agent's ready line names. Needs PyPI, and a compiler here for the first one.
POSIX only (PATH and CC choose the compiler; on Windows they do not).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Programs that compile C, left off PATH by without_a_compiler.
COMPILERS = re.compile(r"^(gcc|cc|c89|c99|c\+\+|g\+\+|cpp|clang.*|tcc|.*-gcc(-[\d.]+)?|gcc-[\d.]+)$")


def copy_of_the_project(folder: Path) -> Path:
    """The package's sources in ``folder`` (no build, no egg-info): an install or a build there
    leaves this checkout as it is."""
    skip = shutil.ignore_patterns("*.so", "*.pyd", "__pycache__", "build", "*.egg-info")
    for name in ("agent", "ref_sim"):
        shutil.copytree(ROOT / name, folder / name, ignore=skip)
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, folder / name)
    return folder


def without_a_compiler(folder: Path) -> dict:
    """An environment as on a machine with no C compiler: PATH without gcc, cc, clang and the like
    (``folder``, made here, of links to everything else on it), and CC=false."""
    folder.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        for entry in sorted(Path(directory).glob("*")) if Path(directory).is_dir() else ():
            link = folder / entry.name
            if not COMPILERS.match(entry.name) and not link.exists():
                link.symlink_to(entry)
    return dict(os.environ, PATH=str(folder), CC="false")


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def install(project: Path, venv: Path, env: dict) -> str:
    """A fresh environment with the project installed; a line of figures about it."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    python = venv / "bin" / "python"
    started = time.monotonic()
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "."], cwd=project, env=env,
                          capture_output=True, text=True)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"bench_install: pip install failed:\n{done.stderr[-3000:]}")
    site = next(venv.glob("lib/python*/site-packages"))
    runtime = site / "wasmtime"
    ready = subprocess.run([str(python), "-m", "agent", "--protocol", "codingame"], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, env=env, cwd=venv)
    core = re.search(r"engine alphabeta \((\w+) core", ready.stderr)
    return (f"pip install {seconds:5.1f} s, site-packages {size(site) / 2**20:5.1f} MiB, wasmtime "
            f"{size(runtime) / 2**20 if runtime.is_dir() else 0:4.1f} MiB, the agent runs the "
            f"{core.group(1) if core else '(unknown: ' + ready.stderr.strip()[-200:] + ')'} core")


def main() -> int:
    if os.name != "posix":
        print("bench_install: POSIX only (PATH and CC choose the compiler)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="uttt_install_") as tmp:
        work = Path(tmp)
        project = copy_of_the_project(work / "project")
        print(f"python {sys.version.split()[0]}, {sys.platform}", flush=True)
        print(f"  with a compiler:    {install(project, work / 'with', dict(os.environ))}", flush=True)
        shutil.rmtree(project / "build", ignore_errors=True)
        print(f"  without a compiler: {install(project, work / 'without', without_a_compiler(work / 'bin'))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
