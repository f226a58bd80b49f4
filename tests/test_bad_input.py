"""Every bad input is one line on stderr and a non-zero exit, on every path, for all 13 commands:
one table of (command, case), each run as a user would (``python -m MODULE ...``, or its
``main(argv)`` in this process where nothing can block or outlive the test), each family on
every command that takes it: the engine's effort (--depth, time limits), paths that cannot be read
(a folder it may not read, a path under a file), special files given to read (a FIFO, a device,
/proc), outputs that are a FIFO, a symbolic link or the kernel's, and core builds that do not load.
A case that blocks (a FIFO opened) fails at its timeout rather than hanging the suite."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.test_replay import file_protocol_line, random_game
from tests.test_runner_kit import console_scripts

ROOT = Path(__file__).resolve().parent.parent
#: A case that has not answered by then is blocked (on a FIFO, a search of no end): a failure.
CASE_TIMEOUT = 60
#: The console scripts' modules as ``python -m`` runs them.
MODULES = {script: "agent" if module == "agent.__main__" else module for script, module in console_scripts().items()}

#: What is unreadable: a folder this user may not read (needs the privilege to be dropped for root).
LOCKED = "{locked}"

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and POSIX paths")]

# -- the table: (command, case, argv); {names} are filled from the scratch folder -----------------

EFFORT = [
    ("uttt-play", "depth 0", ["uttt", "--depth", "0"]),
    ("uttt-play", "depth -1", ["uttt", "--depth", "-1"]),
    ("uttt-play", "depth 1000", ["uttt", "--depth", "1000"]),
    ("uttt-play", "time nan", ["uttt", "--time-limit", "nan"]),
    ("uttt-play", "time -5", ["uttt", "--time-limit", "-5"]),
    ("uttt-play", "time 0", ["uttt", "--time-limit", "0"]),
    ("uttt-play", "time inf", ["uttt", "--time-limit", "inf"]),
    ("uttt-play", "time 1e308", ["uttt", "--seconds", "1e308"]),
    ("uttt-arena", "depth 0", ["ttt", "alphabeta", "random", "--depth", "0"]),
    ("uttt-arena", "depth 1000", ["ttt", "alphabeta", "random", "--depth", "1000"]),
    ("uttt-arena", "time inf", ["ttt", "alphabeta", "random", "--time-limit", "inf"]),
    ("uttt-arena", "time 0", ["ttt", "alphabeta", "random", "--time-limit", "0"]),
    ("uttt-agent", "depth 0", ["A", "--dir", "{dir}", "--depth", "0"]),
    ("uttt-agent", "time nan", ["A", "--dir", "{dir}", "--time-limit", "nan"]),
    ("uttt-agent", "time inf", ["A", "--dir", "{dir}", "--time-limit", "inf"]),
    ("uttt-replay", "depth 0", ["{games}", "--analyse", "--depth", "0"]),
    ("uttt-replay", "time nan", ["{games}", "--analyse", "--time-limit", "nan"]),
    ("uttt-replay", "time 1e308", ["{games}", "--analyse", "--time-limit", "1e308"]),
    ("uttt-ref", "time nan", ["A", "B", "--dir", "{dir}", "--time-limit", "nan"]),
    ("uttt-match", "time inf", ["random", "random", "--out", "{out}", "--time-limit", "inf"]),
    ("uttt-stdio", "time 0", ["random", "random", "--out", "{out}", "--time-limit", "0"]),
    ("uttt-tournament", "time nan", ["random", "random", "--out", "{out}", "--time-limit", "nan"]),
    ("uttt-agent", "nodes 0", ["A", "--dir", "{dir}", "--nodes", "0"]),
    ("uttt-arena", "nodes 0", ["ttt", "alphabeta", "random", "--nodes", "0"]),
    ("uttt-replay", "nodes 0", ["{games}", "--analyse", "--nodes", "0"]),
    ("uttt-agent", "turn nan ms", ["--protocol", "codingame", "--turn-ms", "nan"]),
    ("uttt-stdio", "turn inf ms", ["random", "random", "--out", "{out}", "--turn-ms", "inf"]),
    ("uttt-tournament", "first turn 0 ms", ["random", "random", "--out", "{out}", "--protocol", "stdio",
                                            "--first-turn-ms", "0"]),
    ("uttt-match", "startup wait nan", ["random", "random", "--out", "{out}", "--startup-wait", "nan"]),
]

UNREADABLE = [
    ("uttt-match", "resume an unreadable --out", ["--resume", "--out", LOCKED]),
    ("uttt-stdio", "resume an unreadable --out", ["--resume", "--out", LOCKED]),
    ("uttt-tournament", "resume an unreadable --out", ["--resume", "--out", LOCKED]),
    ("uttt-tournament", "--bots in an unreadable folder", ["--bots", LOCKED + "/x.txt", "--out", "{out}"]),
    ("uttt-ref", "an unreadable --dir", ["A", "B", "--dir", LOCKED]),
    ("uttt-agent", "an unreadable --dir", ["A", "--dir", LOCKED]),
    ("uttt-agent", "--log-file in an unreadable folder", ["A", "--dir", "{dir}", "--log-file", LOCKED + "/a.log"]),
    ("uttt-show", "an unreadable series", [LOCKED]),
    ("uttt-plot", "an unreadable series", [LOCKED, "--out", "{dir}/p.png"]),
    ("uttt-replay", "an unreadable series", [LOCKED]),
    ("uttt-render", "--out in an unreadable folder", ["40", "--out", LOCKED + "/b.svg"]),
    ("uttt-board", "-o in an unreadable folder", ["-o", LOCKED + "/b.html"]),
    ("uttt-arena", "--tls an unreadable folder", ["ttt", "random", "random", "--tls", LOCKED,
                                                  "--cluster", "tls://127.0.0.1:9"]),
    ("uttt-arena", "a core build in an unreadable folder", ["uttt", "alphabeta:core_build=" + LOCKED + "/c.so",
                                                            "random", "--depth", "1"]),
    ("uttt-match", "--tls an unreadable folder", ["random", "random", "--out", "{out}", "--tls", LOCKED,
                                                  "--cluster", "tls://127.0.0.1:9"]),
    ("uttt-cluster", "certs into an unreadable folder", ["certs", LOCKED + "/certs"]),
    ("uttt-cluster", "a scheduler's unreadable --tls", ["scheduler", "--tls", LOCKED]),
    ("uttt-stdio", "--tls an unreadable folder", ["random", "random", "--out", "{out}", "--tls", LOCKED,
                                                  "--cluster", "tls://127.0.0.1:9"]),
    ("uttt-tournament", "--tls an unreadable folder", ["random", "random", "--out", "{out}", "--tls", LOCKED,
                                                       "--cluster", "tls://127.0.0.1:9"]),
    ("uttt-replay", "--tls an unreadable folder", ["{games}", "--analyse", "--tls", LOCKED,
                                                   "--cluster", "tls://127.0.0.1:9"]),
]

UNDER_A_FILE = [
    ("uttt-match", "resume --out under a file", ["--resume", "--out", "{file}/run"]),
    ("uttt-tournament", "--bots under a file", ["--bots", "{file}/x.txt", "--out", "{out}"]),
    ("uttt-tournament", "--bots a folder", ["random", "--bots", "{dir}", "--out", "{out}"]),
    ("uttt-ref", "--dir under a file", ["A", "B", "--dir", "{file}/game"]),
    ("uttt-show", "a series under a file", ["{file}/run"]),
    ("uttt-stdio", "--out under a file", ["random", "random", "--out", "{file}/run"]),
    ("uttt-cluster", "--tls a file", ["worker", "tls://127.0.0.1:9", "--tls", "{file}"]),
]

SPECIAL_INPUTS = [
    ("uttt-show", "a FIFO", ["{fifo}"]),
    ("uttt-show", "/dev/zero", ["/dev/zero"]),
    ("uttt-show", "/proc", ["/proc/version"]),
    ("uttt-plot", "a FIFO", ["{fifo}", "--out", "{dir}/p.png"]),
    ("uttt-replay", "/proc", ["/proc/self/status"]),
    ("uttt-replay", "/sys", ["/sys/kernel"]),
    ("uttt-tournament", "--bots a FIFO", ["--bots", "{fifo}", "--out", "{out}"]),
    ("uttt-tournament", "--bots /proc", ["--bots", "/proc/version", "--out", "{out}"]),
    ("uttt-match", "resume a FIFO series.json", ["--resume", "--out", "{fifo_run}"]),
    ("uttt-stdio", "resume a FIFO series.json", ["--resume", "--out", "{fifo_run}"]),
    ("uttt-cluster", "--tls holding a FIFO", ["scheduler", "--tls", "{fifo_run}"]),
    ("uttt-ref", "--wait-for a FIFO", ["A", "B", "--dir", "{dir}", "--wait-for", "{fifo}"]),
    ("uttt-arena", "a core build that is a FIFO", ["uttt", "alphabeta:core_build={fifo}", "random", "--depth", "1"]),
    ("uttt-arena", "a core build in /proc", ["uttt", "alphabeta:core_build=/proc/version", "random", "--depth", "1"]),
    ("uttt-arena", "a core build that is text", ["uttt", "alphabeta:core_build={file}", "random", "--depth", "1"]),
]

OUTPUTS = [
    ("uttt-replay", "-o a FIFO", ["{games}", "-o", "{fifo}"]),
    ("uttt-replay", "-o a symlink", ["{games}", "-o", "{link}"]),
    ("uttt-replay", "-o in /proc", ["{games}", "-o", "/proc/version"]),
    ("uttt-render", "--out a FIFO", ["40", "--out", "{fifo}.svg"]),
    ("uttt-render", "--out a symlink", ["40", "--out", "{link}.svg"]),
    ("uttt-render", "--out a FIFO png", ["40", "--out", "{fifo}.png"]),
    ("uttt-show", "--svg a FIFO", ["{games}", "--game", "1", "--svg", "{fifo}.svg"]),
    ("uttt-show", "--svg a symlink", ["{games}", "--game", "1", "--svg", "{link}.svg"]),
    ("uttt-show", "--png a FIFO", ["{games}", "--game", "1", "--png", "{fifo}.png"]),
    ("uttt-plot", "--out a FIFO", ["{games}", "--out", "{fifo}.png"]),
    ("uttt-plot", "--out a symlink", ["{games}", "--out", "{link}.svg"]),
    ("uttt-board", "-o a FIFO", ["-o", "{fifo}"]),
    ("uttt-board", "-o a symlink", ["-o", "{link}"]),
    ("uttt-board", "-o in /proc", ["-o", "/proc/version"]),
    ("uttt-board", "-o in /sys", ["-o", "/sys/board.html"]),
    ("uttt-ref", "--record a FIFO", ["A", "B", "--dir", "{dir}", "--record", "{fifo}"]),
    ("uttt-ref", "--record a symlink", ["A", "B", "--dir", "{dir}", "--record", "{link}"]),
    ("uttt-ref", "--record in /proc", ["A", "B", "--dir", "{dir}", "--record", "/proc/version"]),
    ("uttt-agent", "--log-file a FIFO", ["A", "--dir", "{dir}", "--log-file", "{fifo}"]),
    ("uttt-agent", "--log-file in /proc", ["A", "--dir", "{dir}", "--log-file", "/proc/version"]),
    ("uttt-match", "--out a file", ["random", "random", "--out", "{file}"]),
    ("uttt-tournament", "--out in /proc", ["random", "random", "--out", "/proc/run"]),
    ("uttt-cluster", "certs into /proc", ["certs", "/proc/certs"]),
    ("uttt-cluster", "certs into a FIFO", ["certs", "{fifo}"]),
    ("uttt-cluster", "--scheduler-file a FIFO", ["scheduler", "--port", "0", "--scheduler-file", "{fifo}"]),
    ("uttt-cluster", "--scheduler-file a symlink", ["scheduler", "--port", "0", "--scheduler-file", "{link}"]),
    ("uttt-match", "--out a FIFO", ["random", "random", "--out", "{fifo}"]),
]

LIBRARIES = [
    ("uttt-arena", "PyInit__core returns an int", ["uttt", "alphabeta:core_build={int_core}", "random", "--depth", "1"]),
    ("uttt-arena", "PyInit__core returns NULL", ["uttt", "alphabeta:core_build={null_core}", "random", "--depth", "1"]),
]

CASES = EFFORT + UNREADABLE + UNDER_A_FILE + SPECIAL_INPUTS + OUTPUTS + LIBRARIES


def test_the_table_covers_every_command_and_every_command_is_one():
    assert {command for command, _, _ in CASES} == set(MODULES), "a command with no case, or one unknown"
    assert len({(command, case) for command, case, _ in CASES}) == len(CASES), "a case named twice"


# -- the scratch folder: what the cases name -------------------------------------------------

FAKE_CORES = {"int_core": "return PyLong_FromLong(7);", "null_core": "return NULL;"}


def _compiler() -> str | None:
    include = sysconfig.get_paths().get("include")
    if include is None or not os.path.exists(os.path.join(include, "Python.h")):
        return None
    return shutil.which("cc") or shutil.which("gcc")


@pytest.fixture(scope="module")
def fake_cores(tmp_path_factory) -> dict[str, str]:
    """Libraries whose PyInit__core breaks the rules, built once (none without a compiler)."""
    if _compiler() is None:
        return {}
    folder = tmp_path_factory.mktemp("cores")
    built = {}
    for name, body in FAKE_CORES.items():
        source = folder / f"{name}.c"
        source.write_text("#include <Python.h>\nPyMODINIT_FUNC PyInit__core(void) { " + body + " }\n")
        subprocess.run([_compiler(), "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}", str(source),
                        "-o", str(folder / f"{name}.so")], check=True, capture_output=True, timeout=120)
        built[name] = str(folder / f"{name}.so")
    return built


def unprivileged() -> list[str] | None:
    """The prefix that runs a command without the right to read what it may not (root reads
    everything: setpriv drops that capability), [] for a user who has none, None when neither."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        return None
    drop = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]
    done = subprocess.run(drop + ["true"], capture_output=True, timeout=CASE_TIMEOUT)
    return drop if done.returncode == 0 else None


@pytest.fixture
def scratch(tmp_path, fake_cores):
    """The names of the table, each a fresh thing in ``tmp_path``; the locked folder is opened
    again at the end, so that it can be removed."""
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("not a folder, a bot list or a library\n")
    (tmp_path / "precious").write_text("keep me\n")
    for link in ("link", "link.svg"):
        (tmp_path / link).symlink_to(tmp_path / "precious")
    for fifo in ("fifo", "fifo.svg", "fifo.png"):
        os.mkfifo(tmp_path / fifo)
    lines = [file_protocol_line(number, *random_game(number)) for number in (1, 2)]
    (tmp_path / "games.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    (tmp_path / "fifo_run").mkdir()
    for name in ("series.json", "ca.pem"):
        os.mkfifo(tmp_path / "fifo_run" / name)
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "series.json").write_text("{}\n")
    locked.chmod(0)
    names = {"dir": tmp_path / "dir", "file": tmp_path / "file", "link": tmp_path / "link",
             "fifo": tmp_path / "fifo", "games": tmp_path / "games.jsonl", "out": tmp_path / "out",
             "fifo_run": tmp_path / "fifo_run", "locked": locked, **fake_cores}
    yield {name: str(path) for name, path in names.items()}
    locked.chmod(0o700)
    assert (tmp_path / "precious").read_text() == "keep me\n"         # never written through a link
    assert all(os.path.exists(tmp_path / fifo) and not os.path.isfile(tmp_path / fifo)
               for fifo in ("fifo", "fifo.svg", "fifo.png"))


# -- the rule ----------------------------------------------------------------------------------

#: Commands that get a process of their own for every case: the agent and play (their own signal
#: handling, logging and prompt), uttt-cluster (it becomes Dask) and uttt-ref (a game that waits for
#: its agents): what a regression would start must not run in the test's process.
OWN_PROCESS = {"uttt-agent", "uttt-play", "uttt-cluster", "uttt-ref"}
#: Cases that get one whatever the command: one that may block for ever (a FIFO opened), needs the
#: right to read dropped, or loads a library that may crash the process loading it.
OWN_PROCESS_NAMES = ("{fifo", LOCKED, *("{" + name + "}" for name in FAKE_CORES))


def own_process(command: str, argv: list[str]) -> bool:
    return command in OWN_PROCESS or any(name in part for part in argv for name in OWN_PROCESS_NAMES)


def run_apart(command: str, given: list[str], prefix: list[str], cwd: Path) -> tuple[int, str]:
    """``python -m MODULE ...`` as a user runs it: its exit code and stderr; a failure if blocked."""
    path = os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))
    try:
        done = subprocess.run(prefix + [sys.executable, "-m", MODULES[command], *given], capture_output=True,
                              text=True, cwd=cwd, timeout=CASE_TIMEOUT, stdin=subprocess.DEVNULL,
                              env={**os.environ, "PYTHONPATH": path})
    except subprocess.TimeoutExpired:         # subprocess.run killed it
        pytest.fail(f"{command} {' '.join(given)}: no answer in {CASE_TIMEOUT} s (blocked)")
    return done.returncode, done.stderr


def run_here(command: str, given: list[str], capfd) -> tuple[int, str]:
    """The command's ``main(argv)`` in this process (a third of the time): its exit code and
    stderr; an exception it lets out fails the test as a traceback would."""
    main = importlib.import_module(MODULES[command]).main
    try:
        code = main(given)
    except SystemExit as stop:
        code = stop.code
    return code if isinstance(code, int) else 1 if code else 0, capfd.readouterr().err


@pytest.mark.parametrize("command, case, argv", CASES, ids=[f"{command}: {case}" for command, case, _ in CASES])
def test_every_bad_input_is_one_line(scratch, command, case, argv, capfd, monkeypatch):
    prefix = []
    if any(LOCKED in part for part in argv):
        prefix = unprivileged()
        if prefix is None:
            pytest.skip("running as root without setpriv: nothing here is unreadable")
    missing = [name for name in FAKE_CORES if "{" + name + "}" in " ".join(argv) and name not in scratch]
    if missing:
        pytest.skip("no C compiler with Python's headers to build a core that breaks the rules")
    given = [part.format(**scratch) for part in argv]
    # In the scratch folder: whatever a command writes by default lands there, not in the project.
    folder = Path(scratch["dir"]).parent
    monkeypatch.chdir(folder)
    code, err = (run_apart(command, given, prefix, folder) if own_process(command, argv)
                 else run_here(command, given, capfd))
    lines = [line for line in err.splitlines() if line.strip()]
    assert code != 0 and "Traceback" not in err and len(lines) == 1, (
        f"{command} {' '.join(given)} exited {code} with stderr:\n{err}")
