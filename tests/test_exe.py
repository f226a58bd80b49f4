"""The standalone executable of ``scripts/build-exe``: opt-in, since a build is slow and needs PyInstaller.

    UTTT_BUILD_EXE=1 python -m pytest tests/test_exe.py        # build one-folder in a temp dir, test it
    UTTT_BUILD_EXE=onefile python -m pytest tests/test_exe.py  # the same, one-file
    UTTT_AGENT_EXE=dist/uttt-agent/uttt-agent python -m pytest tests/test_exe.py   # an existing build

The executable must behave as ``python -m agent`` does: the whole of ``test_agent_e2e.py`` is run
against it, and it must watch the referee's directory with the platform's native watchdog
observer, not silently fall back to polling (watchdog imports its observers dynamically).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD_MODE = os.environ.get("UTTT_BUILD_EXE", "").strip().lower()
BUILD_MODES = {"1": "onedir", "onedir": "onedir", "onefile": "onefile"}
NATIVE_OBSERVERS = {"linux": ("InotifyObserver",), "darwin": ("FSEventsObserver", "KqueueObserver"),
                    "win32": ("WindowsApiObserver",)}

OPT_IN = ("opt-in: UTTT_BUILD_EXE=1 (or =onefile) builds the executable with scripts/build-exe and tests it; "
          "UTTT_AGENT_EXE=path/to/uttt-agent tests an existing build")


@pytest.fixture(scope="session")
def exe(tmp_path_factory) -> Path:
    """The executable: every test that takes it is opt-in (the checks before a build run always)."""
    if not os.environ.get("UTTT_AGENT_EXE") and BUILD_MODE in ("", "0"):
        pytest.skip(OPT_IN)
    given = os.environ.get("UTTT_AGENT_EXE")
    if given:
        path = Path(given).resolve()
        assert path.is_file(), f"UTTT_AGENT_EXE={given!r} is not a file"
        return path
    assert BUILD_MODE in BUILD_MODES, f"UTTT_BUILD_EXE={BUILD_MODE!r}: use 1, onedir or onefile"
    out = tmp_path_factory.mktemp("exe")
    command = [sys.executable, str(ROOT / "scripts" / "build-exe"), "--dist", str(out / "dist"),
               "--work", str(out / "work"), "--no-measure"]
    if BUILD_MODES[BUILD_MODE] == "onefile":
        command.append("--onefile")
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=900)
    print(done.stdout)
    assert done.returncode == 0, done.stdout[-4000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("executable:")]
    assert lines, done.stdout[-4000:]
    return Path(lines[-1].split(":", 1)[1].strip())


def test_help_and_usage_errors_come_through_the_bootloader(exe, tmp_path):
    done = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: uttt-agent") and "exit codes:" in done.stdout
    done = subprocess.run([str(exe), "Walrus", "--dir", str(tmp_path / "missing")], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "does not exist" in done.stderr


def test_the_frozen_agent_watches_with_the_native_observer(exe, tmp_path):
    game, log_file = tmp_path / "game", tmp_path / "agent.log"
    game.mkdir()
    process = subprocess.Popen([str(exe), "Walrus", "--dir", str(game), "--log-file", str(log_file)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 30
        while not (log_file.exists() and "watching" in log_file.read_text()):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < end, "the agent never logged that it is watching"
            time.sleep(0.02)
    finally:
        process.terminate()
        process.communicate(timeout=10)
    line = next(line for line in log_file.read_text().splitlines() if "watching" in line)
    assert "with watchdog" in line and "falling back" not in log_file.read_text(), line
    native = NATIVE_OBSERVERS.get(sys.platform if not sys.platform.startswith("linux") else "linux")
    if native:
        assert any(f"({observer})" in line for observer in native), line


def test_the_end_to_end_games_pass_against_the_executable(exe):
    """tests/test_agent_e2e.py, unchanged, with the executable as the agent (UTTT_AGENT_EXE)."""
    env = dict(os.environ, UTTT_AGENT_EXE=str(exe))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_agent_e2e.py"],
                          cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    print(done.stdout)
    assert done.returncode == 0, done.stdout[-6000:]
    assert " passed" in done.stdout and " failed" not in done.stdout


# -- the checks before a build: they run always, and build nothing ---------------------------------

def _build_exe():
    """scripts/build-exe as a module (its file name has no .py)."""
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader("build_exe", str(ROOT / "scripts" / "build-exe"))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("build_exe", loader))
    loader.exec_module(module)
    return module


@pytest.mark.e2e
def test_a_python_without_the_project_is_refused_before_anything_is_installed(tmp_path):
    """A bare virtual environment (no watchdog, not even pip): one line that says what to do, and
    nothing installed or built, where it once installed PyInstaller and its three dependencies first."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    before = sorted(p.name for p in venv.rglob("*"))
    done = subprocess.run([str(python), str(ROOT / "scripts" / "build-exe"), "--no-measure",
                           "--dist", str(tmp_path / "dist"), "--work", str(tmp_path / "work")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == "", (done.stdout, done.stderr)
    assert done.stderr == (f"build-exe: watchdog is not installed for {python}: run build-exe with the Python the "
                           f"project is installed in (its virtual environment's python), or install the project "
                           f"into this one: {python} -m pip install -e {ROOT}\n")
    assert sorted(p.name for p in venv.rglob("*")) == before
    assert not (tmp_path / "dist").exists() and not (tmp_path / "work").exists()


@pytest.mark.parametrize("compiled, wasm, said", [
    ("", "", "carrying the compiled core"),
    ("no compiler", "", "carrying the wasm core"),
    ("no compiler", "no wasmtime", None),
])
def test_check_says_which_core_the_executable_would_carry(compiled, wasm, said, monkeypatch, fake_machine, capsys):
    """--check with this (the project's) Python, each machine faked through agent.core's seams."""
    from agent import core

    build_exe = _build_exe()
    monkeypatch.setattr(sys, "path", list(sys.path))  # check_python puts the project first on it
    fake_machine(compiled=compiled or None, wasm=wasm or None)
    if not compiled and not core.compiled_available() or not wasm and compiled and not core.wasm_available():
        pytest.skip("this machine cannot run the core to fake")
    installs = []
    monkeypatch.setattr(build_exe, "ensure_pyinstaller", lambda: installs.append("PyInstaller"))
    if said is None:
        with pytest.raises(SystemExit) as stopped:
            build_exe.main(["--check"])
        assert stopped.value.code == ("build-exe: no compiler; and the WebAssembly core cannot run: no wasmtime: the "
                                      "executable would run the pure-Python search")
    else:
        assert build_exe.main(["--check"]) == 0
        out = capsys.readouterr().out.splitlines()  # after the note of a missing compiled core, if any
        assert out[-1].startswith(f"build-exe: {sys.executable} can build the executable, {said}"), out
    assert installs == []
