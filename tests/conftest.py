"""Shared helpers (a referee game against scripted players that drive the files, our agent as a
process), the lanes (markers), and the session's promise that no test leaves a process or a
scratch folder behind."""

import hashlib
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass

import pytest

# -- lanes and leftovers ------------------------------------------------------------------------

#: The markers that keep a test out of the quick lane (``pytest -m quick``): pyproject.toml
#: registers them all.
SLOW_LANES = ("e2e", "docs", "cluster", "slow")
#: Every process a test starts inherits this variable (its value names the run), so that the
#: session can find, at its end, any that outlived their test, wherever they were reparented.
RUN_ENV = "UTTT_TEST_RUN"
#: Dask settings for every process of the run (see pytest_configure).
DASK_QUIET = {"DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
              "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "1s",
              "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL": "5s",
              "DASK_DISTRIBUTED__WORKER__MULTIPROCESSING_METHOD": "forkserver"}
#: How long processes still ending (killed at a test's end, not yet reaped) are given.
LEFTOVER_GRACE = 5.0


#: Signals a caller may have ignored (a script's background job: SIGINT and SIGQUIT; nohup:
#: SIGHUP) that the tests send to the processes they start (SIGQUIT: a terminal's Ctrl-\).
CALLER_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
#: Those the caller ignored, for the workers: the controller sets it.
IGNORED_ENV = "UTTT_TEST_IGNORED_SIGNALS"


def _dropped(signum, frame):
    """SIG_IGN's stand-in in the suite's own processes (see _children_start_at_the_default)."""


def _children_start_at_the_default(config) -> None:
    """A signal ignored when a process starts stays ignored in all it starts, and Python installs
    no KeyboardInterrupt handler where SIGINT is ignored (the product's intent under nohup:
    tests/test_runner_kit.py): under ``nohup pytest &`` every agent and runner the tests start
    ignored the Ctrl-C and stop signals the tests send them. A handler, unlike SIG_IGN, goes back
    to the default at exec: the suite's own processes still drop what their caller ignored (a
    hangup does not end a nohup run), and what they start begins as from a terminal (xdist's
    workers, and the tests' processes, which tests/test_suite_signals.py checks)."""
    if hasattr(config, "workerinput"):
        names = [name for name in os.environ.get(IGNORED_ENV, "").split(",") if name]
    else:
        names = [name for name in CALLER_SIGNALS
                 if hasattr(signal, name) and signal.getsignal(getattr(signal, name)) is signal.SIG_IGN]
        os.environ[IGNORED_ENV] = ",".join(names)
    for name in names:
        signal.signal(getattr(signal, name), _dropped)


@pytest.hookimpl(trylast=True)      # after pytest's own temporary folders are set up
def pytest_configure(config):
    """Signals as from a terminal for what the tests start (before xdist starts its workers).
    On the controller (or a run without workers): a token for this run and a temporary folder
    of its own (TMPDIR), so that what tests leave behind is found and nothing of another run is
    blamed. Workers inherit both through their environment. pytest's own folders (tmp_path)
    stay where they always are: their base is fixed before TMPDIR changes."""
    _children_start_at_the_default(config)
    if hasattr(config, "workerinput") or RUN_ENV in os.environ:
        return
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is not None:
        # Dask keeps its lock files in a scratch folder it never removes: among pytest's.
        os.environ.setdefault("DASK_TEMPORARY_DIRECTORY", str(factory.getbasetemp() / "dask"))
    # Dask's own watchers (each server's event-loop tick 50 times a second, a worker's profiler
    # sampling its threads every 10 ms, the system monitor twice a second) cost an idle two-worker
    # cluster 0.15 CPU-s a second (4.6 s of 30 s idle, measured): the clusters of the tests need
    # none of them. A LocalCluster's workers are forked from a server that has imported Dask once,
    # rather than each a fresh Python importing it (spawn, ~1.3 CPU-s a worker): still a process of
    # their own, as the tests need. test_cluster.py and test_cluster_tls.py: 137 -> 121 CPU-s,
    # counted over every process of the run, the orphaned fork server's children too.
    for name, value in DASK_QUIET.items():
        os.environ.setdefault(name, value)
    os.environ[RUN_ENV] = uuid.uuid4().hex
    run_temp = tempfile.mkdtemp(prefix="uttt-tests-")
    os.environ["TMPDIR"] = run_temp
    tempfile.tempdir = None         # tempfile reads TMPDIR again
    config._uttt_run_temp = run_temp


@pytest.fixture(autouse=True)
def _core_choice_restored():
    """``uttt-agent --core`` sets ``$UTTT_CORE`` for its whole process, as every engine it makes
    reads it; a test that calls ``agent.cli.main`` in-process would pass its choice on to the tests
    after it in that worker (test_threads saw a pure-Python arena). Put back after each test."""
    before = os.environ.get("UTTT_CORE")
    yield
    if before is None:
        os.environ.pop("UTTT_CORE", None)
    else:
        os.environ["UTTT_CORE"] = before


@pytest.fixture
def fake_machine(monkeypatch):
    """``fake_machine(compiled=WHY, wasm=WHY, cores=N)``: this process as on a machine where the
    compiled core cannot run (``compiled``: why not), nor the WebAssembly one (``wasm``: why not),
    or that grants it ``cores`` cores; what is not given stays this machine's. The one place tests
    stand in for what is built and installed and what the system grants: the agent asks
    agent.core.unavailable_reason, agent.core_wasm.unavailable_reason and agent.core.usable_cores."""
    from agent import core, core_wasm

    def fake(*, compiled: str | None = None, wasm: str | None = None, cores: int | None = None) -> None:
        if compiled is not None:
            monkeypatch.setattr(core, "unavailable_reason", lambda: compiled)
        if wasm is not None:
            monkeypatch.setattr(core_wasm, "unavailable_reason", lambda: wasm)
        if cores is not None:
            monkeypatch.setattr(core, "usable_cores", lambda: cores)
    return fake


#: The share of a large random sample the everyday lane (``pytest -m quick``) takes.
EVERYDAY_SHARE = 5


@pytest.fixture(scope="session")
def sample(request):
    """``sample(n)``: how many of the ``n`` random games or positions a sampling test takes in this
    run. All of them in every run but the everyday lane, CI's too; a fifth (the first ones, same
    seeds) in ``pytest -m quick``, as Hypothesis's profiles do: feedback in seconds while editing,
    the whole evidence before anything lands."""
    everyday = request.config.getoption("markexpr", "").strip() == "quick"
    return (lambda n: max(1, n // EVERYDAY_SHARE)) if everyday else (lambda n: n)


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: three workers a core (at most 12), as most tests of the whole run wait (on the
    referee's 50 ms ticks, on processes starting) and one worker a core leaves the cores idle half
    the time; the quick lane alone (``-m quick``) only computes: a worker a core."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if config.getoption("markexpr", "").strip() == "quick":
        return cores
    return min(12, 3 * cores)


#: The order the lanes start in: the longest first, so that the many short tests fill the gaps at
#: the end instead of a long one starting last (each lane keeps its files' order).
LANE_ORDER = ("docs", "cluster", "e2e", "slow", "quick")
#: Fixtures that start a Dask cluster: a test that takes one is in the cluster lane, marked or not.
CLUSTER_FIXTURES = {"shared_cluster", "own_cluster", "tls_cluster"}


def pytest_collection_modifyitems(config, items):
    """A test in none of the slow lanes is in the quick one; the long lanes go first."""
    for item in items:
        if CLUSTER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.cluster)
        if not any(item.get_closest_marker(lane) for lane in SLOW_LANES):
            item.add_marker(pytest.mark.quick)
    items.sort(key=lambda item: next(i for i, lane in enumerate(LANE_ORDER) if item.get_closest_marker(lane)))


def _resource_tracker() -> int | None:
    """The helper multiprocessing starts for this process (it ends when this process does)."""
    tracker = sys.modules.get("multiprocessing.resource_tracker")
    return getattr(getattr(tracker, "_resource_tracker", None), "_pid", None)


def _run_processes(token: str) -> dict[int, str]:
    """``{pid: command line}`` of the processes that carry this run's token (Linux: /proc)."""
    found = {}
    mine = {os.getpid(), os.getppid(), _resource_tracker()}
    marker = f"{RUN_ENV}={token}".encode()
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit() or int(entry.name) in mine:
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as handle:
                if marker not in handle.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                if handle.read().rpartition(b")")[2].split()[0] == b"Z":
                    continue        # a zombie: ended, its parent not yet told
        except (OSError, IndexError):
            continue                # gone meanwhile, or another user's
        found[int(entry.name)] = command[:300]
    return found


def _test_folder(nodeid: str) -> str:
    """The name of a test's own folder in the run's TMPDIR: short, as programs put their sockets
    there (a Unix socket's path has at most 107 bytes)."""
    return "t-" + hashlib.sha1(nodeid.encode()).hexdigest()[:10]


@pytest.fixture(autouse=True)
def own_temp_folder(request, monkeypatch):
    """Each test's TMPDIR is a folder of the run's of its own (its processes inherit it), so that
    what a test leaves there is reported with the test's name; removed when empty."""
    run_temp = os.environ.get("TMPDIR")
    if not run_temp or RUN_ENV not in os.environ:
        yield
        return
    folder = os.path.join(run_temp, _test_folder(request.node.nodeid))
    os.makedirs(folder, exist_ok=True)
    monkeypatch.setenv("TMPDIR", folder)
    monkeypatch.setattr(tempfile, "tempdir", None)      # tempfile reads TMPDIR again
    yield
    try:
        os.rmdir(folder)
    except OSError:
        pass                        # not empty: the session's end reports it


def pytest_runtest_logreport(report):
    """The tests that ran (on the controller, those of every worker): whose folder is whose."""
    TESTS_RUN.add(report.nodeid)


#: The node ids of the tests this process has seen reports of.
TESTS_RUN: set[str] = set()


def _leftover_folders(run_temp: str) -> list[str]:
    """What the run's TMPDIR still holds, what is in a test's folder as ``TEST: what``."""
    tests = {_test_folder(nodeid): nodeid for nodeid in TESTS_RUN}
    found = []
    try:
        for name in sorted(os.listdir(run_temp)):
            path = os.path.join(run_temp, name)
            if name in tests and os.path.isdir(path):
                found += [f"{tests[name]}: {entry}" for entry in sorted(os.listdir(path))]
            else:
                found.append(name)
    except OSError:
        pass
    return found


@pytest.hookimpl(trylast=True)      # after pytest-xdist has stopped its workers
def pytest_sessionfinish(session, exitstatus):
    config = session.config
    run_temp = getattr(config, "_uttt_run_temp", None)
    if run_temp is None:
        return
    token = os.environ[RUN_ENV]
    deadline = time.monotonic() + LEFTOVER_GRACE
    while (processes := _run_processes(token)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in processes:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    folders = _leftover_folders(run_temp)
    config._uttt_leftovers = (processes, folders)
    if processes or folders:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    shutil.rmtree(run_temp, ignore_errors=True)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    processes, folders = getattr(config, "_uttt_leftovers", ({}, []))
    if not (processes or folders):
        return
    terminalreporter.section("left behind by the tests (the run fails)", red=True)
    for pid, command in processes.items():
        terminalreporter.write_line(f"process {pid} (killed now): {command}")
    for name in folders:
        terminalreporter.write_line(f"in TMPDIR (removed now): {name}")


# -- a referee game against scripted players -----------------------------------------------------


@dataclass
class Turn:
    """What a scripted player sees when its .go appears."""
    directory: str
    player: str
    opponent: str
    game: object          # ref_sim.rules.Game, a copy at the start of the turn
    ply: int              # moves played after the opening before this one
    rng: random.Random

    @property
    def move_file(self):
        return os.path.join(self.directory, "move_file")

    def legal_move(self):
        return self.rng.choice(self.game.legal_moves())

    def write(self, text, name="move_file"):
        """Write ``text`` to a file of the game directory at once (temp file + rename)."""
        time.sleep(0.015)       # let the clock move past the referee's recorded mtime
        temp = os.path.join(self.directory, ".scripted-tmp")
        with open(temp, "w") as handle:
            handle.write(text)
        os.replace(temp, os.path.join(self.directory, name))

    def play_legal(self):
        board, spot = self.legal_move()
        self.write(f"{self.player} {board} {spot}\n")


def run_scripted(directory, act, observe=None, *, seed=1, first=None, opening=None, stop=None,
                 **settings):
    """Referee a game between 'Walrus' and 'Otter'; ``act(turn)`` plays every turn.

    ``act`` runs in a helper thread, like another process would; ``observe(event)`` runs in
    the referee's thread at each event (to look at the files at exact moments). ``settings``:
    fields of the referee's :class:`RefereeSettings` (by default a 0.5 s limit, no start-up
    delay, no exit delay). Returns (record, events) where events is the list of (kind, player).
    """
    from ref_sim.referees.file_shell import run_game
    from ref_sim.referees.file_referee import RefereeSettings

    settings = RefereeSettings(**{"time_limit": 0.5, "exit_delay": 0.0, "start_delay": 0.0, **settings})
    turns = queue.Queue()
    events = []
    errors = []
    rng = random.Random(seed)

    def on_event(event):
        events.append((event.kind, event.player))
        if observe is not None:
            observe(event)
        if event.kind == "turn":
            ply = len(event.record.moves)
            opponent = [n for n in event.record.names if n != event.player][0]
            turns.put(Turn(str(directory), event.player, opponent, event.game.copy(), ply, rng))

    def worker():
        while True:
            turn = turns.get()
            if turn is None:
                return
            try:
                act(turn)
            except Exception as error:     # reported by the test, not lost in a thread
                errors.append(error)

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    try:
        record = run_game(directory, "Walrus", "Otter", settings, seed=seed, first=first, opening=opening,
                          on_event=on_event, stop=stop)
    finally:
        turns.put(None)
        thread.join(5)
    assert not errors, errors
    return record, events


@pytest.fixture
def scripted(tmp_path):
    """``scripted(act, observe=None, **run_scripted_options)`` -> (record, events) in tmp_path."""
    def run(act, observe=None, **kwargs):
        return run_scripted(tmp_path, act, observe, **kwargs)
    return run


#: How ``sh`` starts a command with one of its standard descriptors closed.
CLOSED_BY_SH = {"stdin": "<&-", "stdout": ">&-", "stderr": "2>&-"}


@pytest.fixture
def start_agent():
    """``start_agent(args, closed=None, **popen)``: ``python -m agent ARGS`` as a Popen (text mode,
    run from the repository), with ``closed`` ("stdin", "stdout" or "stderr") closed as a shell's
    ``>&-`` leaves it (POSIX only). Processes still running at the end are killed."""
    started = []

    def start(args, closed=None, **popen):
        command = [sys.executable, "-m", "agent", *args]
        if closed is not None:
            command = ["sh", "-c", f'exec "$@" {CLOSED_BY_SH[closed]}', "sh", *command]
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        started.append(subprocess.Popen(command, cwd=root, text=True, **popen))
        return started[-1]

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()


# -- measuring (opt-in): CPU seconds each test used, itself and the processes it waited for ------

CPU_LOG_ENV = "UTTT_TEST_CPU_LOG"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    path = os.environ.get(CPU_LOG_ENV)
    if not path:
        yield
        return
    import resource
    before = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    yield
    after = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    used = [a.ru_utime + a.ru_stime - b.ru_utime - b.ru_stime for a, b in zip(after, before)]
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(f"{used[0]:.3f} {used[1]:.3f} {item.nodeid}\n")
