"""Series on a real Dask cluster on this machine (ref_sim.series.run.cluster): the same games as the local
runner (ref_sim.match, ref_sim.stdio, ref_sim.arena, self-play data), a worker killed mid-series,
workers without the project or with other code refused.

The cluster tests need the ``cluster`` extra (``pip install -e '.[test,cluster]'``, as .ci/run
does) and are skipped without it; the tests of the local pieces always run.
"""

import contextlib
import functools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ref_sim.series.run import cluster, admission, cluster_address, scheduler
from ref_sim.series import file_games, openings
from ref_sim import match
from ref_sim.series.specs import agent_spec
# A scheduler serves health checks over HTTP, on port 8787 or, when a cluster of another test
# has it, on another port with a warning.
pytestmark = pytest.mark.filterwarnings("ignore:Port 8787 is already in use:UserWarning")

# Fixed depth: the games are deterministic, whatever machine or worker plays them.
SPECS = [agent_spec("agent:depth=2"), agent_spec("seed:depth=1")]
NAMES = [SPECS[0].label + "1", SPECS[1].label + "2"]
SEED = 5
TIME_LIMIT = 2.0        # generous: fixed-depth moves take milliseconds, the machine is shared


def game_call(scheduled):
    """``ref_sim.match``'s arguments for game ``scheduled`` (its name order and options)."""
    order = NAMES if scheduled.index % 2 else NAMES[::-1]
    options = {"seed": scheduled.seed, "first": NAMES[scheduled.first], "opening": list(scheduled.opening),
               "agent_seeds": dict(zip(NAMES, scheduled.agent_seeds))}
    return (scheduled.index, dict(zip(NAMES, SPECS)), order, file_games.FileGameSettings(TIME_LIMIT)), options


def outcome(record):
    """What must not depend on where a game was played."""
    return (record.result, record.winner, record.reason, record.p1,
            [(m["player"], m["board"], m["spot"]) for m in record.to_dict()["moves"]])


def play_series(runner, games):
    """Each game through ``runner``, ``capacity()`` in flight, as the match runner does; returns
    {game: (record, notes, files, worker, attempts)} and checks each game comes back once."""
    pending = iter(openings.schedule(SEED, games))
    running, results = set(), {}
    while True:
        while len(running) < runner.capacity():
            scheduled = next(pending, None)
            if scheduled is None:
                break
            args, options = game_call(scheduled)
            running.add(runner.submit(f"game-{scheduled.index}", file_games.play_game_on_worker, *args,
                                      **options))
        if not running:
            return results
        done, running = runner.wait(running)
        for ticket in done:
            number = int(ticket.label.split("-")[1])
            assert number not in results, f"game {number} came back twice"
            played, files = ticket.result()
            results[number] = (played.record, played.notes, files, ticket.worker,
                               runner.attempts(ticket))


@pytest.fixture(scope="module")
def local_results():
    """The reference: the first two games of the series, played here one after the other."""
    with scheduler.LocalRunner(1) as runner:
        return play_series(runner, 2)


# -- pieces that need no cluster ----------------------------------------------------------

def test_cluster_address_from_the_option_or_the_environment(monkeypatch):
    monkeypatch.delenv(cluster_address.ENV, raising=False)
    assert cluster_address.cluster_address(None) is None
    monkeypatch.setenv(cluster_address.ENV, "tcp://head:8786")
    assert cluster_address.cluster_address(None) == "tcp://head:8786"
    assert cluster_address.cluster_address("tcp://other:1") == "tcp://other:1"


@pytest.mark.parametrize("given, address", [
    ("head", "tcp://head:8786"),                    # the scheduler's own port
    ("tcp://head", "tcp://head:8786"),
    (" 10.1.2.3:9000 ", "tcp://10.1.2.3:9000"),
    ("tls://head.example.org:8786", "tls://head.example.org:8786"),
    ("[::1]", "tcp://[::1]:8786"),
    ("tcp://[fe80::1%eth0]:9", "tcp://[fe80::1%eth0]:9"),
])
def test_an_address_is_read_with_the_schedulers_port_by_default(given, address):
    assert cluster_address.scheduler_address(given) == address


@pytest.mark.parametrize("given, why", [
    ("tcp://", "no host"),
    (":8786", "no host"),
    ("", "no host"),
    ("foo:bar", "the port 'bar' is not a number"),
    ("head:", "no port after ':'"),
    ("head:70000", "the port 70000 is not between 1 and 65535"),
    ("::1:8786", "an IPv6 address needs brackets: tcp://[::1]:8786"),
    ("fe80::1", "an IPv6 address needs brackets: tcp://[fe80::1]:8786"),
    ("a:b:c", "too many ':'; an IPv6 address goes in brackets: [::1]:PORT"),
    ("[::1:8786", "no ']' after the IPv6 address"),
    ("[head]:8786", "'head' is not an IPv6 address"),
    ("http://head:8786", "unknown scheme 'http://' (Dask's are tcp, tls, ws, wss)"),
    ("tcp://tcp://head:8786", "two schemes"),
    ("8786", "'8786' is a port, not a host"),
    ("head name:8786", "'head name' is no host name or IP address"),
])
def test_a_malformed_address_is_one_line_saying_why(given, why, monkeypatch):
    monkeypatch.delenv(cluster_address.ENV, raising=False)
    with pytest.raises(cluster_address.ClusterError) as error:
        cluster_address.scheduler_address(given)
    assert str(error.value) == (f"bad cluster address {given!r}: {why} (expected "
                                "tcp://HOST:PORT, as `dask scheduler` prints it)")


@pytest.mark.e2e
def test_a_malformed_address_from_the_environment_says_so(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv(cluster_address.ENV, "tcp://")
    with pytest.raises(SystemExit) as stop:                # connect() reads it: not Dask
        match.main(["random", "random", "--out", str(tmp_path)])
    assert stop.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.endswith("bad cluster address 'tcp://' (from $UTTT_CLUSTER): no host (expected "
                          "tcp://HOST:PORT, as `dask scheduler` prints it)")


def test_the_default_port_is_the_schedulers():
    distributed = pytest.importorskip("distributed")
    assert cluster_address.DEFAULT_PORT == distributed.Scheduler.default_port


def test_a_refusal_names_the_worker_and_both_versions():
    ours = "uttt-agent 0.1.0, sources aaaaaaaaaaaa"
    assert admission.refusal("tcp://w:1", ours, "uttt-agent 0.1.0, sources bbbbbbbbbbbb") == (
        "worker tcp://w:1 refused: it has uttt-agent 0.1.0, sources bbbbbbbbbbbb; this client "
        "has uttt-agent 0.1.0, sources aaaaaaaaaaaa (the same release, other sources: a file "
        "differs); install the same commit on both (pip install 'uttt-agent[cluster]')")
    assert "(the same release" not in admission.refusal("tcp://w:1", ours, "uttt-agent 0.2.0, "
                                                                         "sources aaaaaaaaaaaa")
    assert admission.refusal("tcp://w:1", ours, None, "ModuleNotFoundError: No module named "
                             "'agent'") == (
        "worker tcp://w:1 refused: uttt-agent is not installed there (ModuleNotFoundError: No "
        "module named 'agent'); install this client's uttt-agent 0.1.0, sources aaaaaaaaaaaa "
        "there (pip install 'uttt-agent[cluster]')")


def test_without_the_extra_connecting_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)     # import distributed fails
    with pytest.raises(cluster_address.ClusterError, match=r"pip install 'uttt-agent\[cluster\]'"):
        cluster.connect("tcp://127.0.0.1:1")


@pytest.mark.e2e
def test_local_runs_import_no_engine():
    code = ("import sys, ref_sim.series.run.cluster, ref_sim.arena, ref_sim.match, ref_sim.stdio;"
            "sys.exit('distributed' in sys.modules or 'dask' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


@pytest.mark.e2e
def test_the_agent_executable_never_reaches_the_cluster_module():
    # What PyInstaller freezes: every module the entry point imports, at any depth, lazily or
    # not (tests/test_layout.py reads the graph the same way).  Dask must stay out of it.
    layout = pytest.importorskip("test_layout")
    modules = layout.project_modules()
    graph = {name: layout.imports_of(name, path, set(modules)) for name, path in modules.items()}
    frozen, todo = set(), ["agent.__main__"]
    while todo:
        name = todo.pop()
        if name not in frozen:
            frozen.add(name)
            todo.extend(graph[name])
    assert "agent.cli" in frozen and "agent.search" in frozen      # the graph was followed
    assert "ref_sim.series.run.cluster" not in frozen and "ref_sim.arena" not in frozen


def test_game_slots_leave_a_core_free():
    assert admission.game_slots(16, cores=16) == 15       # one core per referee, one spare
    assert admission.game_slots(4, cores=16) == 4         # no more than its threads
    assert admission.game_slots(4, cores=2) == 1
    assert admission.game_slots(1, cores=1) == 1          # a single core still plays


def test_project_version_follows_the_sources(tmp_path):
    here = admission.project_version()
    assert here.startswith("uttt-agent ") and ", sources " in here
    # Another checkout of the same version, one file changed: another version.
    copy = tmp_path / "ref_sim"
    shutil.copytree(Path(match.__file__).parent, copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "rules.py").write_text((copy / "rules.py").read_text() + "\n# changed\n")
    real = admission.package_dir
    assert admission.project_version(where=lambda name: copy if name == "ref_sim" else real(name)) != here


def test_worker_lines_count_time_outs_per_worker():
    games = [("tcp://a:1", 1, "Time out!"), ("tcp://a:1", 3, "tie"), ("tcp://b:1", 1, "Time out!")]
    assert cluster.worker_lines(games, "Time out!") == [
        "Worker tcp://a:1: 2 games, 1 time-outs",
        "Worker tcp://b:1: 1 games, 1 time-outs",
        "Retried: 1 game started again after its worker was lost"]
    assert cluster.worker_lines([(None, None, "tie")], "Time out!") == []     # a local series


def echo_after(value, seconds, log):
    log.append(("start", value))
    time.sleep(seconds)
    log.append(("end", value))
    return value


def echo_once_ended(value, other: threading.Event, ended: threading.Event, log):
    """A game that ends only once ``other`` is set (one that takes longer, whatever the load),
    then sets ``ended``."""
    log.append(("start", value))
    assert other.wait(30), f"game {value} waited 30 s for another game to end"
    log.append(("end", value))
    ended.set()
    return value


def test_in_order_yields_in_the_order_of_the_calls():
    log = []
    ended = [threading.Event() for _ in range(6)]
    # Game 0 ends only after game 2, and game 4 after game 5: later games finish first.
    waits_for = {0: 2, 4: 5}
    at_once = threading.Event()
    at_once.set()
    calls = ((f"game-{i}", echo_once_ended, (i, ended[waits_for[i]] if i in waits_for else at_once, ended[i], log), {})
             for i in range(6))
    with scheduler.LocalRunner(2) as runner:
        got = [value for _, value in scheduler.in_order(runner, calls)]
    assert got == list(range(6))
    ends = [value for kind, value in log if kind == "end"]
    assert ends.index(2) < ends.index(0) and ends.index(5) < ends.index(4)      # not in order...
    running = peak = 0
    for kind, _ in log:
        running += 1 if kind == "start" else -1
        peak = max(peak, running)
    assert peak == 2                                # ...and two at a time


def test_in_order_stops_when_closed():
    log = []
    calls = ((f"game-{i}", echo_after, (i, 0.05, log), {}) for i in range(100))
    with scheduler.LocalRunner(1) as runner:
        results = scheduler.in_order(runner, calls)
        assert [next(results)[1] for _ in range(3)] == [0, 1, 2]
        results.close()
    assert len([e for e in log if e[0] == "start"]) <= 6      # queued games were dropped


@pytest.mark.e2e
def test_local_runner_plays_the_series(local_results):
    assert sorted(local_results) == [1, 2]
    for record, notes, files, worker, attempts in local_results.values():
        assert record.result in ("win", "tie") and notes == {}
        assert worker == "local" and attempts == 1
        assert any(name.endswith("-Agent1.log") for name in files)


# -- a real cluster on this machine -------------------------------------------------------

def start_cluster(tmp_path, monkeypatch, workers=2, processes=True):
    """A scheduler in this process and ``workers`` single-threaded workers, each in a process of
    its own (``processes``) or in threads of this process (no process start: 1.3 CPU-s each)."""
    distributed = pytest.importorskip("distributed")
    # The workers' temporary game directories live under tmp_path (a killed worker's too).
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes,
                                    protocol="tcp://",    # not inproc://: other processes join
                                    dashboard_address=None, silence_logs=40, local_directory=str(tmp_path))


def end_strays(marker: str) -> None:
    """Kill the agents a killed worker left behind (their command names ``marker``), by pid."""
    proc = Path("/proc")
    if not proc.is_dir():
        return
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in command and int(entry.name) != os.getpid():
                try:
                    os.kill(int(entry.name), signal.SIGKILL)
                except OSError:
                    pass


@pytest.fixture(scope="module")
def shared_cluster(tmp_path_factory):
    """Two workers for the tests that leave them as they found them."""
    scratch = tmp_path_factory.mktemp("workers")
    with pytest.MonkeyPatch.context() as monkeypatch:
        with start_cluster(scratch, monkeypatch) as lc:
            yield lc


@pytest.fixture
def own_cluster(tmp_path, monkeypatch):
    """Two workers of its own, for a test that kills one."""
    with start_cluster(tmp_path, monkeypatch) as lc:
        yield lc
    end_strays(str(tmp_path))


def read_games(out):
    return sorted((json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()),
                  key=lambda game: game["game"])


def same_everywhere(game):
    """What a game line must say wherever the game was played (fixed-depth agents)."""
    return ({key: game[key] for key in ("game", "pair", "seed", "p1", "p2", "opening", "result",
                                        "winner", "reason", "score", "notes")},
            [(m["player"], m["board"], m["spot"], m.get("depth")) for m in game["moves"]],
            [(agent["name"], agent["seed"]) for agent in game["agents"]])


@pytest.mark.cluster
def test_a_match_on_a_cluster_is_the_local_series(shared_cluster, tmp_path, capsys, monkeypatch):
    address = shared_cluster.scheduler_address
    args = ["agent:depth=2", "seed:depth=1", "--games", "4", "--seed", str(SEED),
            "--time-limit", str(TIME_LIMIT)]
    assert match.main(args + ["--out", str(tmp_path / "local")]) == 0
    local_text = capsys.readouterr().out
    assert match.main(args + ["--out", str(tmp_path / "far"), "--cluster", address]) == 0
    far_text = capsys.readouterr().out
    # Both workers, or the first admitted: beside two CPU hogs the second's admission came after
    # the header (the series then grows to its slots as they come).
    assert re.search(r"on ([12]) cluster worker\(s\), \1 at once", far_text), far_text
    local, far = read_games(tmp_path / "local"), read_games(tmp_path / "far")
    assert [same_everywhere(g) for g in far] == [same_everywhere(g) for g in local]
    assert all("worker" not in game for game in local)
    workers = {game["worker"] for game in far}
    assert workers <= {line.split()[1].rstrip(":") for line in far_text.splitlines()
                       if line.startswith("Worker ")}
    assert all(game["attempts"] == 1 for game in far)
    # The same summary, then each worker's games and time-outs and the retried games.
    summary = [line for line in local_text.splitlines() if line.startswith(("Score", "Ptnml"))]
    assert summary and all(line in far_text.splitlines() for line in summary)
    assert "Retried: 0 games started again" in far_text
    assert sum(int(line.split(": ")[1].split()[0]) for line in far_text.splitlines()
               if line.startswith("Worker ")) == 4
    # Logs came back under --out as a local series writes them.
    assert sorted(p.name for p in (tmp_path / "far" / "logs").iterdir()) == \
        sorted(p.name for p in (tmp_path / "local" / "logs").iterdir())

    # --resume on the cluster (named by the environment this time): game 3 was lost.
    lines = (tmp_path / "far" / "games.jsonl").read_text().splitlines()
    (tmp_path / "far" / "games.jsonl").write_text(
        "".join(line + "\n" for line in lines if json.loads(line)["game"] != 3))
    monkeypatch.setenv(cluster_address.ENV, address)
    assert match.main(args + ["--out", str(tmp_path / "far"), "--resume"]) == 0
    assert "resuming: 3 of 4 games already played, 1 to go" in capsys.readouterr().out
    resumed = read_games(tmp_path / "far")
    assert [g["game"] for g in resumed] == [1, 2, 3, 4]         # each game once
    assert [same_everywhere(g) for g in resumed] == [same_everywhere(g) for g in local]


@pytest.fixture
def closed_port():
    """A port of 127.0.0.1 where nothing listens (bound a moment ago, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


#: cluster.connect trying the scheduler for one second, not REACH_TIMEOUT's five: nothing listens.
QUICK_REACH = functools.partial(cluster.connect, reach_timeout=1.0)

REFUSED = "connection refused: no scheduler listens on that port (not started? another port?)"


@pytest.mark.cluster
def test_a_match_with_an_unreachable_cluster_is_one_line(tmp_path, capsys, monkeypatch,
                                                         closed_port):
    pytest.importorskip("distributed")
    with pytest.raises(SystemExit) as stop:
        match.main(["random", "random", "--out", str(tmp_path), "--cluster",
                    f"127.0.0.1:{closed_port}"], connect=QUICK_REACH)
    assert stop.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.endswith(f"cannot reach the scheduler at tcp://127.0.0.1:{closed_port}: {REFUSED}")
    assert not (tmp_path / "games.jsonl").exists()


@contextlib.contextmanager
def odd_peer(kind):
    """The port of something on 127.0.0.1 that is no scheduler: ``full`` accepts no
    connection (its queue is full: no answer, as from an unroutable address), ``silent``
    accepts and says nothing, ``http`` answers as a web server (a dashboard) does."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0 if kind == "full" else 8)
    port, held, stop = server.getsockname()[1], [server], threading.Event()

    def serve():
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                peer, _ = server.accept()
            except OSError:
                continue
            held.append(peer)
            if kind == "http":
                peer.settimeout(1.0)
                try:
                    peer.recv(4096)
                    peer.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    pass

    if kind == "full":
        for _ in range(4):                      # more than the queue holds
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
            held.append(filler)
        thread = None
    else:
        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
    try:
        yield port
    finally:
        stop.set()
        if thread is not None:
            thread.join(10)
        for sock in held:
            sock.close()


@pytest.mark.parametrize("kind, why", [
    ("full", "no answer within 1 s (a wrong address, a machine that is down, or a firewall?)"),
    ("silent", "something accepts connections there but says nothing (another service on that "
               "port? the scheduler's is 8786 unless told, its dashboard's 8787)"),
    ("http", "something answers there, but not as a Dask scheduler (another service on that "
             "port? the scheduler's is 8786 unless told, its dashboard's 8787)"),
])
@pytest.mark.cluster
def test_a_peer_that_is_no_scheduler_is_one_line_in_seconds(kind, why):
    pytest.importorskip("distributed")
    with odd_peer(kind) as port, pytest.raises(cluster_address.ClusterError) as error:
        cluster.connect(f"tcp://127.0.0.1:{port}", reach_timeout=1.0)       # a few seconds: no need to wait 5
    assert str(error.value) == f"cannot reach the scheduler at tcp://127.0.0.1:{port}: {why}"


@pytest.mark.cluster
def test_a_workers_address_is_not_the_schedulers(shared_cluster):
    worker = next(iter(shared_cluster.scheduler_info["workers"]))
    with pytest.raises(cluster_address.ClusterError) as error:
        cluster.connect(worker)
    assert str(error.value) == (f"{worker} is a Dask worker, not the scheduler: give the "
                                "scheduler's address (the one `dask worker` was given)")


@pytest.mark.cluster
def test_a_stdio_series_on_a_cluster_is_the_local_one(shared_cluster, tmp_path, capsys):
    from ref_sim import stdio
    # The built-ins agent:depth=2 and agent:depth=1 without their --seed {seed}, which our agent
    # refuses until agent/codingame.py takes it.
    ours = f"{sys.executable} -m agent --protocol codingame --first-turn-ms {{first_turn_ms}} --turn-ms 1000"
    args = [f"{ours} --depth 2", f"{ours} --depth 1", "--games", "2", "--seed", str(SEED),
            "--first-turn-ms", "3000", "--turn-ms", "1000"]      # fixed depth: time is no factor
    assert stdio.main(args + ["--out", str(tmp_path / "local")]) == 0
    local_text = capsys.readouterr().out
    assert stdio.main(args + ["--out", str(tmp_path / "far"), "--cluster",
                              shared_cluster.scheduler_address]) == 0
    far_text = capsys.readouterr().out
    local, far = read_games(tmp_path / "local"), read_games(tmp_path / "far")
    assert [game["game"] for game in far] == [1, 2]
    for here, there in zip(local, far):
        assert [(m["player"], m["row"], m["col"], m.get("depth")) for m in there["moves"]] == \
            [(m["player"], m["row"], m["col"], m.get("depth")) for m in here["moves"]]
        assert (there["result"], there["winner"], there["reason"], there["notes"]) == \
            (here["result"], here["winner"], here["reason"], here["notes"])
        assert there["worker"] and there["attempts"] == 1 and "worker" not in here
    score = next(line for line in local_text.splitlines() if line.startswith("Score"))
    assert score in far_text.splitlines()
    assert "Retried: 0 games" in far_text and "Worker " in far_text and "Worker " not in local_text


@pytest.mark.cluster
def test_selfplay_data_on_a_cluster_is_the_local_file(shared_cluster, tmp_path):
    def generate(directory, games, *more):
        run = subprocess.run([sys.executable, "-m", "scripts.train_eval", "generate", "--dir", str(directory),
                              "--games", str(games), "--nodes", "60", "--seed", "3", *more],
                             cwd=Path(__file__).resolve().parent.parent,
                             check=True, capture_output=True, text=True, timeout=300)
        assert ("on 2 cluster worker(s), 2 games at once" in run.stdout) == bool(more)
        return (directory / "games.jsonl").read_text()

    local = generate(tmp_path / "local", 6)
    far = generate(tmp_path / "far", 6, "--cluster", shared_cluster.scheduler_address)
    assert far == local and len(far.splitlines()) == 6           # the same games, in order
    # Resumed on the cluster after losing the last four games: the same file again.
    kept = "".join(line + "\n" for line in far.splitlines()[:2])
    (tmp_path / "far" / "games.jsonl").write_text(kept)
    assert generate(tmp_path / "far", 6, "--cluster", shared_cluster.scheduler_address) == local


@pytest.mark.cluster
def test_an_arena_series_on_a_cluster_is_the_local_one(shared_cluster):
    from ref_sim import arena
    from ref_sim.games import get_game
    uttt = get_game("uttt")
    series = dict(games=4, seed=SEED, depth=2)     # fixed depth: the same games anywhere

    def played(record):
        return (record.pair, record.first, record.opening, record.moves, record.winner)

    local = arena.run_series(uttt, "alphabeta", "seed", **series)
    seen = []
    with cluster.connect(shared_cluster.scheduler_address, say=lambda text: None) as runner:
        far = arena.run_series(uttt, "alphabeta", "seed", runner=runner,
                               on_game=lambda record, so_far: seen.append(played(record)),
                               **series)
        admitted = set(runner.admitted)
    assert [played(g) for g in far.games] == [played(g) for g in local.games]
    assert seen == [played(g) for g in local.games]             # reported in game order
    assert {g.worker for g in far.games} <= admitted and all(g.attempts == 1 for g in far.games)
    assert all(g.worker is None for g in local.games)
    # The same summary, then the workers' lines that only a cluster series has.
    assert far.report_lines()[:3] == local.report_lines()
    assert far.report_lines()[-1] == "Retried: 0 games started again after their worker was lost"
    assert sum(int(line.split(": ")[1].split()[0]) for line in far.report_lines()
               if line.startswith("Worker ")) == 4


@pytest.mark.cluster
def test_the_arena_command_on_a_cluster_prints_the_local_series(shared_cluster, monkeypatch):
    import io

    from ref_sim import arena
    # Random engines: their seeds, drawn here, must reach the workers.
    args = ["nineboard", "alphabeta:depth=2", "random", "--games", "4", "--seed", "3", "-v"]
    local, far = io.StringIO(), io.StringIO()
    monkeypatch.delenv(cluster_address.ENV, raising=False)
    assert arena.main(args, local) == 0
    monkeypatch.setenv(cluster_address.ENV, shared_cluster.scheduler_address)     # as --cluster does
    assert arena.main(args, far) == 0
    far_lines = far.getvalue().splitlines()
    assert far_lines[0] == "arena: on 2 cluster worker(s), 2 games at once"
    assert [line for line in far_lines[1:] if not line.startswith(("Worker ", "Retried: "))] == \
        local.getvalue().splitlines()
    assert "Retried: 0 games started again after their worker was lost" in far_lines


class SlottedLocalRunner(scheduler.LocalRunner):
    """A local runner that answers what ``ref_sim.arena`` asks a cluster runner."""

    def slots(self):
        return {"local": self.concurrency}


@pytest.mark.cluster
def test_the_arena_stops_in_one_line_when_a_game_loses_every_worker(capsys, monkeypatch):
    from ref_sim import arena
    real = arena.play_scheduled_game

    def third_game_lost(*args):
        if third_game_lost.calls == 2:
            raise cluster_address.ClusterError("game-3: every worker that played it died (test)")
        third_game_lost.calls += 1
        return real(*args)
    third_game_lost.calls = 0
    code = arena.main(["ttt", "alphabeta", "random", "--games", "6", "--cluster", "tcp://x:1"],
                      connect=lambda address, say=None: SlottedLocalRunner(1), play=third_game_lost)
    out, err = capsys.readouterr()
    assert code == 1
    score = next(line for line in out.splitlines() if line.startswith("Score of alphabeta#1"))
    assert score.endswith("] 2")                        # the two games played before it
    assert err.strip().splitlines() == ["python -m ref_sim.arena: stopped after 2 games: game-3: "
                                        "every worker that played it died (test)"]


@pytest.mark.cluster
def test_the_arena_with_an_unreachable_cluster_is_one_line(capsys, monkeypatch, closed_port):
    pytest.importorskip("distributed")
    from ref_sim import arena
    with pytest.raises(SystemExit) as stop:
        arena.main(["ttt", "random", "random", "--cluster", f"tcp://127.0.0.1:{closed_port}"],
                   connect=QUICK_REACH)
    assert stop.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.endswith(f"cannot reach the scheduler at tcp://127.0.0.1:{closed_port}: {REFUSED}")


def played_as(game):
    """A game line in the terms of :func:`outcome`."""
    return (game["result"], game["winner"], game["reason"], game["p1"],
            [(m["player"], m["board"], m["spot"]) for m in game["moves"]])


@pytest.mark.cluster
def test_a_killed_worker_loses_no_game(own_cluster, local_results, tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    address = own_cluster.scheduler_address
    killed = {}

    def kill_the_worker_of_game_1():
        with distributed.Client(address) as spy:
            pids = spy.run(os.getpid)                       # worker address -> process
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                for worker, keys in spy.processing().items():
                    if any(str(key).startswith("uttt-game-1-") for key in keys):
                        time.sleep(0.5)                     # well into the game
                        os.kill(pids[worker], signal.SIGKILL)
                        killed["worker"] = worker
                        return
                time.sleep(0.05)

    killer = threading.Thread(target=kill_the_worker_of_game_1)
    killer.start()
    code = match.main(["agent:depth=2", "seed:depth=1", "--games", "2", "--seed", str(SEED),
                       "--time-limit", str(TIME_LIMIT), "--out", str(tmp_path / "far"),
                       "--cluster", address])
    killer.join()
    text = capsys.readouterr().out
    assert code == 0 and "worker" in killed
    games = read_games(tmp_path / "far")
    assert [game["game"] for game in games] == [1, 2]          # each game once
    assert games[0]["attempts"] >= 2 and games[0]["worker"] != killed["worker"]
    assert games[1]["attempts"] == 1
    assert "Retried: 1 game started again after its worker was lost" in text
    for game in games:                                  # the rerun is the same game
        assert played_as(game) == outcome(local_results[game["game"]][0])
        assert game["notes"] == {}


@pytest.mark.cluster
def test_a_killed_worker_loses_no_arena_game(own_cluster):
    distributed = pytest.importorskip("distributed")
    from ref_sim import arena
    from ref_sim.games import get_game
    address = own_cluster.scheduler_address
    # Qubic at depth 4 against depth 2: about a second of the generic (Python) search per game,
    # long enough to be killed in whether or not the compiled uttt core is built. The fixed depths
    # decide every move (a time per move would cut them short on a loaded machine, and the rerun
    # of the killed game would differ).
    specs, series = ("alphabeta:depth=4", "alphabeta:depth=2"), dict(games=2, seed=SEED, seconds=600)
    local = arena.run_series(get_game("qubic"), *specs, **series)
    killed = {}

    def kill_the_worker_of_game_1(spy):
        pids = spy.run(os.getpid)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for worker, keys in spy.processing().items():
                if any(str(key).startswith("uttt-game-1-") for key in keys):
                    time.sleep(0.3)                         # into the game's search
                    os.kill(pids[worker], signal.SIGKILL)
                    killed["worker"] = worker
                    return
            time.sleep(0.02)

    # The spy stays connected until the series ends: closing a second client of this process
    # cancels the first one's wait in Dask (seen: UnboundLocalError from distributed.utils.sync).
    with cluster.connect(address, say=lambda text: None) as runner, \
            distributed.Client(address) as spy:
        killer = threading.Thread(target=kill_the_worker_of_game_1, args=(spy,))
        killer.start()
        far = arena.run_series(get_game("qubic"), *specs, runner=runner, **series)
        killer.join()
    assert "worker" in killed
    assert len(far.games) == 2                                  # each game once
    assert [(g.opening, g.moves, g.winner) for g in far.games] == \
        [(g.opening, g.moves, g.winner) for g in local.games]   # the rerun is the same game
    # Counted although the search held the worker's GIL: its start announcement may never
    # have left the worker (the scheduler's count of lost workers says it was retried).
    first, second = far.games
    assert first.attempts >= 2 and first.worker != killed["worker"]
    assert second.attempts == 1
    assert "Retried: 1 game started again after its worker was lost" in far.report_lines()


# -- admission --------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def start_worker(address, pythonpath, log, *options):
    """A ``dask worker`` process whose ``ref_sim`` is the one under ``pythonpath`` (started
    there: ``python -m`` puts its working directory first on the path)."""
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    return subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address,
                             "--nthreads", "1", "--no-dashboard", *options],
                            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=pythonpath)


def other_checkouts(tmp_path):
    """Two places to start workers from: ``bare``, where importing the project fails (a
    machine without it), and ``other``, this project's bench with one changed file."""
    bare = tmp_path / "bare" / "ref_sim"  # the bench, whose ref_sim.series.run.admission admits a worker
    bare.mkdir(parents=True)
    (bare / "__init__.py").write_text("raise ImportError('No module named ref_sim')\n")
    other = tmp_path / "other" / "ref_sim"
    shutil.copytree(Path(cluster.__file__).parents[2], other,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (other / "rules.py").write_text((other / "rules.py").read_text() + "\n# changed\n")
    return bare.parent, other.parent


def wait_until(condition, what, seconds=90):
    """A generous hang guard, not a timing: ``condition()`` comes true, or the test fails."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.05)


def stopped(processes, log, closing=True):
    """Wait for ``processes`` to end (``closing``: a refused worker closes itself); kill any
    left."""
    try:
        for process in processes:
            if closing:
                process.wait(timeout=90)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
        log.close()


def refusals(said):
    """The refusal lines among what a runner said, by worker: each must come once."""
    lines = [line for line in said if " refused: " in line]
    workers = [line.split()[2] for line in lines]
    assert len(set(workers)) == len(workers), lines
    return dict(zip(workers, lines))


def check_refusals(lines, runner):
    """One line for a worker without the project and one for the other code, saying so."""
    missing, other = sorted(lines.values(), key=lambda line: "not installed" not in line)
    assert missing.startswith("cluster: worker tcp://") and missing.endswith(
        f"refused: uttt-agent is not installed there (ImportError: No module named ref_sim); "
        f"install this client's {runner.version} there (pip install 'uttt-agent[cluster]')")
    assert "refused: it has uttt-agent 0.1.0, sources " in other
    assert f"; this client has {runner.version} (the same release, other sources: a file " \
           "differs); install the same commit on both" in other
    assert other.split("it has ")[1].split(";")[0] != runner.version


@pytest.mark.cluster
def test_workers_joining_during_a_series_are_refused_once(tmp_path, monkeypatch):
    bare, other = other_checkouts(tmp_path)
    # The admitted worker in a process of its own: the client's version is patched below.
    with start_cluster(tmp_path, monkeypatch, workers=1) as lc:
        said = []
        with cluster.connect(lc.scheduler_address, say=said.append) as runner:
            (good,) = runner.admitted                 # connect() returns once it has slots
            log = open(tmp_path / "workers.log", "w")
            workers = [start_worker(lc.scheduler_address, path, log) for path in (bare, other)]
            try:
                wait_until(lambda: len(runner.refused) == 2, "two refusals")
            finally:
                stopped(workers, log)                # each closes itself once refused
            check_refusals(refusals(said), runner)
            assert set(refusals(said)) == set(runner.refused)
            assert not any(" joined: " in line for line in said)    # refused ones never join
            # Only the admitted worker has game slots, and games still play there.
            assert runner.slots() == {good: 1}
            (scheduled,) = openings.schedule(SEED, 1)
            args, options = game_call(scheduled)
            ticket = runner.submit("game-1", file_games.play_game_on_worker, *args, **options)
            ticket.result()
            assert ticket.worker == good
            # A client whose code no worker runs is refused instead: it does not close them.
            with monkeypatch.context() as patch:
                patch.setattr(admission, "project_version", lambda: "uttt-agent 0.0.1, sources x")
                with pytest.raises(cluster_address.ClusterError, match=r"the cluster's 1 worker\(s\) run "
                                   r"uttt-agent .*; this client has uttt-agent 0.0.1, sources x"):
                    cluster.connect(lc.scheduler_address)
            assert runner.slots() == {good: 1}


@pytest.mark.cluster
def test_workers_there_before_a_series_are_named_once_even_between_series(tmp_path,
                                                                           monkeypatch):
    bare, other = other_checkouts(tmp_path)
    # The admitted worker runs this checkout's code in threads of this process: the workers that
    # admission refuses are the processes started below.
    with start_cluster(tmp_path, monkeypatch, workers=1, processes=False) as lc:
        log = open(tmp_path / "workers.log", "w")
        workers = [start_worker(lc.scheduler_address, path, log) for path in (bare, other)]
        try:
            wait_until(lambda: len(lc.scheduler_info["workers"]) == 3, "three workers")
            there = set(lc.scheduler_info["workers"])  # admission may close a refused one at once
            said = []
            with cluster.connect(lc.scheduler_address, say=said.append) as runner:
                # Named by the time connect() returns, from what the workers said they run.
                lines = refusals(said)
                assert set(lines) == there - set(runner.slots())
                check_refusals(lines, runner)
                stopped(workers, log)               # admission closes them...
                # ...and their refusal events reach this client too: still one line each.
                wait_until(lambda: set(lines) <= {worker for _, worker in runner._seen},
                           "the refusal events")
                assert refusals(said) == lines
            # Between two series no admission runs: a worker with other code that joins stays,
            # with no game slot, and the next series names it.
            log = open(tmp_path / "late.log", "w")
            late = start_worker(lc.scheduler_address, other, log)
            workers = [late]
            wait_until(lambda: len(lc.scheduler_info["workers"]) == 2, "the late worker")
            (address,) = set(lc.scheduler_info["workers"]) - set(runner.admitted)
            assert late.poll() is None
            said = []
            with cluster.connect(lc.scheduler_address, say=said.append) as runner:
                assert list(refusals(said)) == [address]
                assert "it has uttt-agent 0.1.0, sources " in said[0]
            stopped(workers, log)
        finally:
            stopped(workers, log)


@pytest.mark.cluster
def test_a_worker_that_joins_after_every_other_died_gets_the_waiting_games(tmp_path,
                                                                          monkeypatch):
    def until_there(path):
        """A game stand-in that lasts until ``path`` exists (a local function: it travels to
        the worker by value)."""
        import os
        import time
        while not os.path.exists(path):
            time.sleep(0.05)
        return "played"

    go = tmp_path / "go"
    with start_cluster(tmp_path, monkeypatch, workers=0) as lc:
        log = open(tmp_path / "workers.log", "w")
        # No nanny: killing the process kills the worker (a nanny would start it again).
        first = start_worker(lc.scheduler_address, ROOT, log, "--no-nanny")
        workers = [first]
        said, results = [], {}
        try:
            with cluster.connect(lc.scheduler_address, say=said.append, connect_wait=90) as runner:
                tickets = {runner.submit(f"game-{i}", until_there, str(go)) for i in (1, 2)}
                wait_until(lambda: any(runner.client.processing().values()), "games on it")
                first.kill()
                first.wait()

                def play_on():
                    pending = tickets
                    while pending:
                        done, pending = runner.wait(pending, patience=0.2)
                        results.update((ticket.label, (ticket.result(), ticket.worker))
                                       for ticket in done)

                waiter = threading.Thread(target=play_on, daemon=True)
                waiter.start()
                wait_until(lambda: any("no admitted worker is left" in line for line in said),
                           "the news that no worker is left")
                second = start_worker(lc.scheduler_address, ROOT, log, "--no-nanny")
                workers.append(second)
                wait_until(lambda: any(" joined: " in line for line in said), "a worker to join")
                go.touch()
                waiter.join(120)
                assert not waiter.is_alive(), f"the games never came back: {said}"
        finally:
            stopped(workers, log, closing=False)
    (joined,) = [line for line in said if " joined: " in line]
    worker = joined.split()[2]
    assert results == {"game-1": ("played", worker), "game-2": ("played", worker)}
    (alone,) = [line for line in said if "no admitted worker is left" in line]
    assert alone.endswith(": no admitted worker is left; the games wait for one to join, without "
                          "limit (Ctrl-C stops the series)")
    assert joined.startswith(f"cluster: worker {worker} joined: 1 game slot(s); the games go on "
                             "after ") and joined.endswith(" without a worker")


def wait_for_path(path):
    """A game stand-in that lasts until ``path`` exists."""
    while not os.path.exists(path):
        time.sleep(0.02)
    return "played"


@pytest.mark.cluster
def test_a_worker_joining_as_the_scheduler_says_none_is_there_is_not_followed_by_none_left(
        tmp_path, monkeypatch):
    """The runner asks the scheduler for workers, and hears of joins from another thread: a join
    heard between the scheduler's answer (none) and the news must not be followed by "no admitted
    worker is left" (a loaded CI run said it twice). The join is made to land in that window."""
    go = tmp_path / "go"
    with start_cluster(tmp_path, monkeypatch, workers=1, processes=False) as lc:
        said = []
        with cluster.connect(lc.scheduler_address, say=said.append) as runner:
            ticket = runner.submit("game-1", wait_for_path, str(go))
            looks = []

            def none_and_one_joins_meanwhile():
                looks.append(1)
                if len(looks) == 2:         # the second look: a worker joins as it answers none
                    runner._admission((time.time(), {"worker": "tcp://127.0.0.1:9", "slots": 1}))
                return {} if len(looks) <= 2 else {"tcp://127.0.0.1:9": 1}
            monkeypatch.setattr(runner, "slots", none_and_one_joins_meanwhile)
            waiter = threading.Thread(target=runner.wait, args=({ticket}, 0.05), daemon=True)
            waiter.start()
            wait_until(lambda: len(looks) >= 3, "the third look")
            go.touch()
            waiter.join(60)
            assert not waiter.is_alive()
    assert ["no admitted worker is left" in line for line in said] == [True, False]
    assert said[1].startswith("cluster: worker tcp://127.0.0.1:9 joined: 1 game slot(s); ")
