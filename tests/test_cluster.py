"""Series on a real Dask cluster on this machine (ref_sim.cluster): the same games as the local
runner, a worker killed mid-series, workers without the project or with other code refused.

The cluster tests need the ``cluster`` extra (``pip install -e '.[test,cluster]'``, as .ci/run
does) and are skipped without it; the tests of the local pieces always run.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ref_sim import cluster, match, openings

# Fixed depth: the games are deterministic, whatever machine or worker plays them.
SPECS = [match.agent_spec("agent:depth=2"), match.agent_spec("seed:depth=1")]
NAMES = [SPECS[0].label + "1", SPECS[1].label + "2"]
SEED = 5
TIME_LIMIT = 2.0        # generous: fixed-depth moves take milliseconds, the machine is shared


def game_call(scheduled):
    """``ref_sim.match``'s arguments for game ``scheduled`` (its name order and options)."""
    order = NAMES if scheduled.index % 2 else NAMES[::-1]
    options = {"first": NAMES[scheduled.first], "opening": list(scheduled.opening),
               "agent_seeds": dict(zip(NAMES, scheduled.agent_seeds))}
    return (scheduled.index, dict(zip(NAMES, SPECS)), order, TIME_LIMIT, scheduled.seed), options


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
            running.add(runner.submit(f"game-{scheduled.index}", cluster.file_game, *args,
                                      **options))
        if not running:
            return results
        done, running = runner.wait(running)
        for ticket in done:
            number = int(ticket.label.split("-")[1])
            assert number not in results, f"game {number} came back twice"
            record, notes, files = ticket.result()
            results[number] = (record, notes, files, ticket.worker, runner.attempts(ticket))


@pytest.fixture(scope="module")
def local_results():
    """The reference: the first four games of the series, played here one after the other."""
    with cluster.LocalRunner(1) as runner:
        return play_series(runner, 4)


# -- pieces that need no cluster ----------------------------------------------------------

def test_cluster_address_from_the_option_or_the_environment(monkeypatch):
    monkeypatch.delenv(cluster.ENV, raising=False)
    assert cluster.cluster_address(None) is None
    monkeypatch.setenv(cluster.ENV, "tcp://head:8786")
    assert cluster.cluster_address(None) == "tcp://head:8786"
    assert cluster.cluster_address("tcp://other:1") == "tcp://other:1"


def test_without_the_extra_connecting_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)     # import distributed fails
    with pytest.raises(cluster.ClusterError, match=r"pip install 'uttt-agent\[cluster\]'"):
        cluster.connect("tcp://127.0.0.1:1")


def test_local_runs_import_no_engine():
    code = ("import sys, ref_sim.cluster, ref_sim.match, ref_sim.stdio;"
            "sys.exit('distributed' in sys.modules or 'dask' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_game_slots_leave_a_core_free():
    assert cluster.game_slots(16, cores=16) == 15       # one core per referee, one spare
    assert cluster.game_slots(4, cores=16) == 4         # no more than its threads
    assert cluster.game_slots(4, cores=2) == 1
    assert cluster.game_slots(1, cores=1) == 1          # a single core still plays


def test_project_version_follows_the_sources(tmp_path, monkeypatch):
    here = cluster.project_version()
    assert here.startswith("uttt-agent ") and ", sources " in here
    # Another checkout of the same version, one file changed: another version.
    copy = tmp_path / "ref_sim"
    shutil.copytree(Path(cluster.__file__).parent, copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "rules.py").write_text((copy / "rules.py").read_text() + "\n# changed\n")
    real = cluster._package_dir
    monkeypatch.setattr(cluster, "_package_dir", lambda name: copy if name == "ref_sim" else real(name))
    assert cluster.project_version() != here


def test_worker_lines_count_time_outs_per_worker():
    games = [{"worker": "tcp://a:1", "reason": "Time out!", "attempts": 1},
             {"worker": "tcp://a:1", "reason": "tie", "attempts": 3},
             {"worker": "tcp://b:1", "reason": "Time out!", "attempts": 1}]
    assert cluster.worker_lines(games, "Time out!") == [
        "Worker tcp://a:1: 2 games, 1 time-outs",
        "Worker tcp://b:1: 1 games, 1 time-outs",
        "Retried: 1 game started again after its worker was lost"]
    assert cluster.worker_lines([{"reason": "tie"}], "Time out!") == []     # a local series


def test_local_runner_plays_the_series(local_results):
    assert sorted(local_results) == [1, 2, 3, 4]
    for record, notes, files, worker, attempts in local_results.values():
        assert record.result in ("win", "tie") and notes == {}
        assert worker == "local" and attempts == 1
        assert any(name.endswith("-Agent1.log") for name in files)


# -- a real cluster on this machine -------------------------------------------------------

def start_cluster(tmp_path, monkeypatch, workers=2):
    distributed = pytest.importorskip("distributed")
    # The workers' temporary game directories live under tmp_path (a killed worker's too).
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                    dashboard_address=None, silence_logs=40)


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


@pytest.fixture
def local_cluster(tmp_path, monkeypatch):
    with start_cluster(tmp_path, monkeypatch) as lc:
        yield lc
    end_strays(str(tmp_path))


def test_a_cluster_series_plays_the_same_games(local_cluster, local_results):
    with cluster.connect(local_cluster.scheduler_address) as runner:
        assert set(runner.slots().values()) == {1}      # 2 workers, each: 2 cores - 1
        assert runner.capacity() == 2
        results = play_series(runner, 4)
        assert runner.retried() == {}
    assert sorted(results) == [1, 2, 3, 4]
    for number, (record, notes, files, worker, attempts) in results.items():
        assert outcome(record) == outcome(local_results[number][0])
        assert worker in runner.admitted and attempts == 1
        # The logs travel back with the result, under the same names as a local game's.
        assert sorted(files) == sorted(local_results[number][2])
        assert b"depth 2" in files[f"game-{number:04d}-Agent1.log"]


def test_a_killed_worker_loses_no_game(local_cluster, local_results):
    with cluster.connect(local_cluster.scheduler_address) as runner:
        pids = runner.client.run(os.getpid)                  # worker address -> process
        running, results = set(), {}
        for scheduled in openings.schedule(SEED, 2):        # one game on each worker
            args, options = game_call(scheduled)
            running.add(runner.submit(f"game-{scheduled.index}", cluster.file_game, *args,
                                      **options))
        # Kill the worker playing game 1 once it has started it.
        deadline = time.monotonic() + 60
        while not runner._starts.get("game-1"):
            assert time.monotonic() < deadline, "game 1 never started"
            time.sleep(0.05)
        victim = runner._starts["game-1"][0]
        time.sleep(0.5)                                     # well into the game
        os.kill(pids[victim], signal.SIGKILL)
        while running:
            done, running = runner.wait(running)
            for ticket in done:
                number = int(ticket.label.split("-")[1])
                assert number not in results
                results[number] = (ticket.result(), ticket.worker, runner.attempts(ticket))
        retried = runner.retried()
    assert sorted(results) == [1, 2]
    assert "game-1" in retried and retried["game-1"][0] == victim
    assert results[1][1] != victim and results[1][2] >= 2
    for number, ((record, notes, files), worker, attempts) in results.items():
        assert outcome(record) == outcome(local_results[number][0]), number
        assert notes == {}


# -- admission --------------------------------------------------------------------------

def start_worker(address, pythonpath, log):
    """A ``dask worker`` process whose ``ref_sim`` is the one under ``pythonpath`` (started
    there: ``python -m`` puts its working directory first on the path)."""
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    return subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address,
                             "--nthreads", "1", "--no-dashboard"],
                            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=pythonpath)


def test_workers_without_the_project_or_with_other_code_are_refused(tmp_path, monkeypatch):
    with start_cluster(tmp_path, monkeypatch, workers=1) as lc:
        with cluster.connect(lc.scheduler_address, say=lambda text: None) as runner:
            (good,) = runner.admitted
            # A machine without the project: importing it fails.
            bare = tmp_path / "bare" / "ref_sim"
            bare.mkdir(parents=True)
            (bare / "__init__.py").write_text("raise ImportError('No module named ref_sim')\n")
            # This project's ref_sim with one changed file: another version.
            other = tmp_path / "other" / "ref_sim"
            shutil.copytree(Path(cluster.__file__).parent, other,
                            ignore=shutil.ignore_patterns("__pycache__"))
            (other / "rules.py").write_text((other / "rules.py").read_text() + "\n# changed\n")
            log = open(tmp_path / "workers.log", "w")
            workers = [start_worker(lc.scheduler_address, path.parent, log)
                       for path in (bare, other)]
            try:
                deadline = time.monotonic() + 60
                while len(runner.refused) < 2 and time.monotonic() < deadline:
                    time.sleep(0.1)
                for process in workers:                  # each closes itself once refused
                    process.wait(timeout=max(1.0, deadline - time.monotonic()))
            finally:
                for process in workers:
                    if process.poll() is None:
                        process.kill()
                        process.wait()
                log.close()
            messages = sorted(runner.refused.values())
            assert len(messages) == 2, (messages, (tmp_path / "workers.log").read_text()[-3000:])
            assert any("the project is not installed there" in m for m in messages)
            assert any("it has uttt-agent" in m and runner.version in m
                       and cluster.project_version() not in m.split("this client has")[0]
                       for m in messages)
            assert all("refused" in m and "install the same version" in m for m in messages)
            # Only the admitted worker has game slots, and games still play there.
            assert runner.slots() == {good: 1}
            (scheduled,) = openings.schedule(SEED, 1)
            args, options = game_call(scheduled)
            ticket = runner.submit("game-1", cluster.file_game, *args, **options)
            ticket.result()
            assert ticket.worker == good
            # A client whose code no worker runs is refused instead: it does not close them.
            with monkeypatch.context() as patch:
                patch.setattr(cluster, "project_version", lambda: "uttt-agent 0.0.1, sources x")
                with pytest.raises(cluster.ClusterError, match=r"the cluster's 1 worker\(s\) run "
                                   r"uttt-agent .*; this client has uttt-agent 0.0.1, sources x"):
                    cluster.connect(lc.scheduler_address)
            assert runner.slots() == {good: 1}
