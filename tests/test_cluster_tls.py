"""A cluster that is safe by default (ref_sim.cluster_serve, ref_sim.series.run.cluster_tls): scheduler and
workers on loopback unless told, TLS from one certificate folder, a series played through it,
and clients without the folder's certificates refused, each in one line by our runners.

The certificate folder's and the command lines' tests always run; those that start a cluster
need the ``cluster`` extra (``distributed``, ``cryptography``) and are skipped without it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import ssl
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from ref_sim.series.run import cluster_address, cluster_tls
from ref_sim import cluster_serve, match

ROOT = Path(__file__).resolve().parent.parent
# A scheduler serves health checks over HTTP on 127.0.0.1:8787, or on another port with a
# warning when a cluster of another test has it.
pytestmark = pytest.mark.filterwarnings("ignore:Port 8787 is already in use:UserWarning")


@pytest.fixture(autouse=True)
def no_cluster_from_the_environment(monkeypatch):
    monkeypatch.delenv(cluster_address.ENV, raising=False)
    monkeypatch.delenv(cluster_tls.ENV, raising=False)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Two certificate folders: this cluster's, and another cluster's."""
    pytest.importorskip("cryptography")
    root = tmp_path_factory.mktemp("certs")
    return cluster_tls.make_folder(root / "ours"), cluster_tls.make_folder(root / "theirs")


# -- the certificate folder ------------------------------------------------------------------

def test_a_new_folder_is_private_and_checks(folders):
    ours, _ = folders
    if os.name == "posix":                      # Windows has no such modes
        assert stat.S_IMODE(ours.folder.stat().st_mode) == 0o700
        for path in (ours.ca, ours.cert, ours.key):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in ours.folder.iterdir()) == sorted(cluster_tls.FILES)  # no CA key
    assert cluster_tls.read_folder(ours.folder) == ours
    # The member certificate is the CA's: a TLS server with it is trusted by a client of the CA.
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(ours.cert, ours.key)
    client = ssl.create_default_context(cafile=str(ours.ca))
    client.check_hostname = False
    here, there = socket.socketpair()
    with here, there:
        there.settimeout(30)
        here.settimeout(30)
        wrapped = client.wrap_socket(here, do_handshake_on_connect=False)
        served = server.wrap_socket(there, server_side=True, do_handshake_on_connect=False)
        side = threading.Thread(target=served.do_handshake)
        side.start()
        wrapped.do_handshake()                  # raises if the chain does not verify
        side.join(30)


def test_a_folder_with_certificates_is_kept_unless_forced(folders, tmp_path):
    made = cluster_tls.make_folder(tmp_path / "tls")
    before = {name: (made.folder / name).read_bytes() for name in cluster_tls.FILES}
    with pytest.raises(cluster_tls.TLSFolderError) as refused:
        cluster_tls.make_folder(tmp_path / "tls")
    assert str(refused.value) == (
        f"{tmp_path / 'tls'} holds certificates already (ca.pem, member.pem, member-key.pem): "
        "kept; --force replaces them (then copy the new folder to every machine and restart the "
        "cluster)")
    assert {name: (made.folder / name).read_bytes() for name in cluster_tls.FILES} == before
    cluster_tls.make_folder(tmp_path / "tls", replace=True)
    assert (made.folder / cluster_tls.CA_FILE).read_bytes() != before[cluster_tls.CA_FILE]


def test_a_folder_that_cannot_be_used_is_one_line(folders, tmp_path):
    ours, theirs = folders
    with pytest.raises(cluster_tls.TLSFolderError, match=r"^--tls .*nowhere: no such folder "
                       r"\(make one with: uttt-cluster certs DIR\)$"):
        cluster_tls.read_folder(tmp_path / "nowhere")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "ca.pem").write_bytes(ours.ca.read_bytes())
    with pytest.raises(cluster_tls.TLSFolderError, match=r": no member.pem, member-key.pem there: "
                       r"not a certificate folder"):
        cluster_tls.read_folder(tmp_path / "half")
    junk = tmp_path / "junk"
    junk.mkdir()
    for name in cluster_tls.FILES:
        (junk / name).write_bytes(b"\x00not a certificate\n")
    with pytest.raises(cluster_tls.TLSFolderError, match=r": ca.pem is no certificate \("):
        cluster_tls.read_folder(junk)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "ca.pem").write_bytes(ours.ca.read_bytes())
    (mixed / "member.pem").write_bytes(ours.cert.read_bytes())
    (mixed / "member-key.pem").write_bytes(theirs.key.read_bytes())        # another's key
    with pytest.raises(cluster_tls.TLSFolderError) as error:
        cluster_tls.read_folder(mixed)
    assert str(error.value).startswith(f"--tls {mixed}: member.pem and member-key.pem are no "
                                       "certificate and its key (")
    assert "\n" not in str(error.value)


def test_certs_makes_the_folder_and_says_where_it_goes(tmp_path, capsys):
    pytest.importorskip("cryptography")
    assert cluster_serve.main(["certs", str(tmp_path / "tls"), "--days", "3"]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"{tmp_path / 'tls'}: ca.pem, member.pem, member-key.pem, valid until ")
    assert "whoever holds it can run programs on the workers" in said
    assert cluster_serve.main(["certs", str(tmp_path / "tls")]) == 2
    assert capsys.readouterr().err.strip().endswith("--force replaces them (then copy the new "
                                                    "folder to every machine and restart the "
                                                    "cluster)")


# -- addresses and options ---------------------------------------------------------------------

def test_certificates_make_an_address_tls_and_tls_needs_them(folders, monkeypatch):
    ours, _ = folders
    assert cluster_address.secured_address("head") == ("tcp://head:8786", None)
    assert cluster_address.secured_address("head", str(ours.folder)) == ("tls://head:8786", ours)
    monkeypatch.setenv(cluster_tls.ENV, str(ours.folder))
    assert cluster_address.secured_address("head:9000") == ("tls://head:9000", ours)
    monkeypatch.delenv(cluster_tls.ENV)
    with pytest.raises(cluster_address.ClusterError) as error:
        cluster_address.secured_address("tls://head:8786")
    assert str(error.value) == (
        "tls://head:8786 needs the cluster's certificates: --tls DIR or $UTTT_CLUSTER_TLS (the "
        "folder the scheduler was started with; make one with: uttt-cluster certs DIR)")
    with pytest.raises(cluster_address.ClusterError) as error:
        cluster_address.secured_address("tcp://head:8786", str(ours.folder))
    assert str(error.value) == (
        f"tcp://head:8786 with certificates (--tls {ours.folder}): tcp:// is not encrypted; a "
        "scheduler started with --tls is at tls://HOST:PORT")


def runner_parsers():
    """Every runner that takes --cluster, with the rest of a command line it accepts."""
    from ref_sim import arena, stdio, tournament
    from ref_sim.views import replay
    from scripts import train_eval
    return {"match": (match.build_parser(), ["random", "random"]),
            "stdio": (stdio.build_parser(), ["random", "random"]),
            "tournament": (tournament.build_parser(), ["random", "seed"]),
            "arena": (arena.build_parser(), ["ttt", "random", "random"]),
            "replay": (replay.build_parser(), ["runs/x", "--analyse"]),
            "train_eval": (train_eval.build_parser(), ["generate"])}


def test_every_runner_takes_the_certificate_folder():
    for name, (parser, rest) in runner_parsers().items():
        args = parser.parse_args(rest + ["--cluster", "head", "--tls", "certs"])
        assert cluster_address.cluster_target(args) == cluster_address.ClusterTarget("head", "certs"), name
        assert cluster_address.cluster_target(parser.parse_args(rest)) is None, name


def test_a_tls_address_without_certificates_is_one_line(capsys, tmp_path):
    with pytest.raises(SystemExit) as stop:
        match.main(["random", "random", "--out", str(tmp_path), "--cluster", "tls://127.0.0.1:1"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "python -m ref_sim.match: error: tls://127.0.0.1:1 needs the cluster's certificates: "
        "--tls DIR or $UTTT_CLUSTER_TLS (the folder the scheduler was started with; make one "
        "with: uttt-cluster certs DIR)")


# -- the commands that start a scheduler or a worker -------------------------------------------

def command_of(*argv):
    """``(dask argv, environment additions, lines said)`` of ``uttt-cluster ARGV``."""
    pytest.importorskip("distributed")
    args = cluster_serve.build_parser().parse_args(argv)
    build = cluster_serve.scheduler_command if args.command == "scheduler" else \
        cluster_serve.worker_command
    return build(args, [])


def option(argv, name):
    return argv[argv.index(name) + 1]


def test_by_default_everything_listens_on_loopback():
    argv, environment, said = command_of("scheduler")
    assert option(argv, "--host") == "127.0.0.1" and option(argv, "--port") == "8786"
    assert "--no-dashboard" in argv and option(argv, "--dashboard-address") == "127.0.0.1:8787"
    assert environment == {} and not any("warning" in line for line in said)
    argv, _, said = command_of("worker", "tcp://127.0.0.1:8786")
    assert option(argv, "--host") == "127.0.0.1"
    assert "--no-dashboard" in argv and option(argv, "--dashboard-address") == "127.0.0.1:0"
    assert not any("warning" in line for line in said)


def test_opening_without_tls_is_warned_in_one_line():
    argv, _, said = command_of("scheduler", "--host", "0.0.0.0")
    assert option(argv, "--host") == "0.0.0.0"
    (warning,) = [line for line in said if line.startswith("warning:")]
    assert warning.startswith("warning: the scheduler listens on 0.0.0.0 without TLS: anyone who "
                              "reaches port 8786 can run any program as ")
    argv, _, said = command_of("worker", "tcp://10.0.0.1:8786", "--host", "0.0.0.0")
    assert [line for line in said if line.startswith("warning: the worker listens on 0.0.0.0 "
                                                     "without TLS")]


def test_with_tls_the_programs_get_the_folder_and_require_encryption(folders):
    ours, _ = folders
    argv, environment, said = command_of("scheduler", "--host", "0.0.0.0", "--tls",
                                         str(ours.folder))
    assert option(argv, "--protocol") == "tls" and option(argv, "--tls-cert") == str(ours.cert)
    assert option(argv, "--tls-ca-file") == str(ours.ca)
    assert environment == cluster_serve.REQUIRE_ENCRYPTION
    assert not any(line.startswith("warning") for line in said)
    argv, environment, _ = command_of("worker", "127.0.0.1", "--tls", str(ours.folder))
    assert argv[3] == "tls://127.0.0.1:8786" and option(argv, "--tls-key") == str(ours.key)
    assert environment == cluster_serve.REQUIRE_ENCRYPTION


def test_a_worker_for_another_machine_must_say_where_it_listens():
    with pytest.raises(cluster_serve.ServeError) as error:
        command_of("worker", "tcp://10.0.0.1:8786")
    assert str(error.value) == (
        "the scheduler tcp://10.0.0.1:8786 is not on this machine's loopback: give --host (an "
        "address of this machine that the scheduler and the other workers reach) or --interface")


def test_where_it_listens_cannot_be_passed_to_dask_behind_our_back(capsys):
    pytest.importorskip("distributed")
    with pytest.raises(SystemExit) as stop:
        cluster_serve.main(["scheduler", "--dry-run", "--", "--host", "0.0.0.0"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        "error: --host after --: where Dask listens and how it encrypts are this command's own "
        "options (--host, --interface, --port, --tls, --dashboard)")
    assert cluster_serve.main(["scheduler", "--dry-run", "--", "--idle-timeout", "1h"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("--idle-timeout 1h")


@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("127.1.2.3", True),
                                            ("[::1]", True), ("localhost", True),
                                            ("0.0.0.0", False), ("::", False), ("", False),
                                            ("10.1.2.3", False)])
def test_loopback_is_this_machine_only(host, loopback):
    assert cluster_serve.is_loopback(host) is loopback


# -- real clusters on this machine, started by our commands -------------------------------------

def serve(tmp_path, log_name, *argv):
    """``python -m ref_sim.cluster_serve ARGV`` from this checkout, in a session of its own (its
    nanny's worker process with it), its output in ``log_name``."""
    if os.name != "posix":
        pytest.skip("the cluster's processes are stopped by their session: POSIX")
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmp_path))
    with open(tmp_path / log_name, "w") as log:
        return subprocess.Popen([sys.executable, "-m", "ref_sim.cluster_serve", *argv],
                                stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                                start_new_session=True)


def wait_until(condition, what, seconds=90):
    """A generous hang guard, not a timing: ``condition()`` comes true, or the test fails."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.1)


def scheduler_address(path: Path):
    try:
        return json.loads(path.read_text())["address"]
    except (OSError, ValueError, KeyError):
        return None


def stop(processes):
    """SIGTERM to each process's session (a worker's nanny and its worker), SIGKILL if needed."""
    for process in processes:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:          # ended already, its session with it
            pass
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def start_cluster(tmp_path, *tls):
    """A scheduler on any free port and one single-threaded worker, through our commands."""
    file = tmp_path / "scheduler.json"
    scheduler = serve(tmp_path, "scheduler.log", "scheduler", "--port", "0",
                      "--scheduler-file", str(file), *tls)
    try:
        address = wait_until(lambda: scheduler_address(file) or scheduler.poll() is not None,
                             "the scheduler's address")
        assert scheduler.poll() is None, (tmp_path / "scheduler.log").read_text()
        worker = serve(tmp_path, "worker.log", "worker", address, "--nthreads", "1", *tls)
    except BaseException:
        stop([scheduler])
        raise
    return SimpleNamespace(address=address, scheduler=scheduler, worker=worker,
                           processes=[scheduler, worker], logs=tmp_path)


def wait_for_a_worker(address, security=None):
    distributed = pytest.importorskip("distributed")
    with distributed.Client(address, security=security, timeout=60) as client:
        # The listing that showed it: asking again raced a worker's registration (a run at -n 4 met an
        # empty second listing, and next() raised StopIteration out of the fixture).
        return next(iter(wait_until(lambda: client.scheduler_info()["workers"], "a worker to join")))


def listening(pid: int) -> set[tuple[str, int]]:
    """The addresses a process and its children listen on."""
    psutil = pytest.importorskip("psutil")
    top = psutil.Process(pid)
    found = set()
    for process in [top, *top.children(recursive=True)]:
        connections = getattr(process, "net_connections", None) or process.connections
        found |= {(c.laddr.ip, c.laddr.port) for c in connections(kind="inet")
                  if c.status == psutil.CONN_LISTEN}
    return found


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory, folders):
    """Scheduler and worker with our certificate folder, on loopback (the default)."""
    pytest.importorskip("distributed")
    ours, _ = folders
    lc = start_cluster(tmp_path_factory.mktemp("tls-cluster"), "--tls", str(ours.folder))
    try:
        lc.worker_address = wait_for_a_worker(lc.address, ours.security())
        lc.folder = ours.folder
        yield lc
    finally:
        stop(lc.processes)


@pytest.mark.cluster
def test_a_scheduler_and_worker_started_by_default_listen_on_loopback_only(tmp_path):
    pytest.importorskip("distributed")
    lc = start_cluster(tmp_path)
    try:
        worker = wait_for_a_worker(lc.address)
        scheduler_port = int(lc.address.rsplit(":", 1)[1])
        worker_port = int(worker.rsplit(":", 1)[1])
        on = {"scheduler": listening(lc.scheduler.pid), "worker": listening(lc.worker.pid)}
    finally:
        stop(lc.processes)
    assert lc.address.startswith("tcp://127.0.0.1:") and worker.startswith("tcp://127.0.0.1:")
    assert scheduler_port in {port for _, port in on["scheduler"]}
    assert worker_port in {port for _, port in on["worker"]}
    for who, addresses in on.items():           # the HTTP servers and the nanny's port too
        assert addresses and all(cluster_serve.is_loopback(ip) for ip, _ in addresses), (who,
                                                                                         addresses)


def same_everywhere(game):
    """What a game line must say wherever it was played (seeded random agents)."""
    return ({key: game[key] for key in ("game", "seed", "p1", "p2", "opening", "result", "winner",
                                        "reason")},
            [(m["player"], m["board"], m["spot"]) for m in game["moves"]])


def read_games(out: Path) -> list[dict]:
    return sorted((json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()),
                  key=lambda game: game["game"])


@pytest.mark.cluster
def test_a_series_on_a_tls_cluster_is_the_local_series(tls_cluster, tmp_path, capsys):
    args = ["random", "random", "--games", "2", "--seed", "5", "--time-limit", "2"]
    assert match.main(args + ["--out", str(tmp_path / "local")]) == 0
    assert match.main(args + ["--out", str(tmp_path / "far"), "--cluster", tls_cluster.address,
                              "--tls", str(tls_cluster.folder)]) == 0
    said = capsys.readouterr().out
    assert "on 1 cluster worker(s), 1 at once" in said
    far, local = read_games(tmp_path / "far"), read_games(tmp_path / "local")
    assert [game["game"] for game in far] == [1, 2]
    assert [same_everywhere(game) for game in far] == [same_everywhere(game) for game in local]
    assert {game["worker"] for game in far} == {tls_cluster.worker_address}
    assert tls_cluster.worker_address.startswith("tls://127.0.0.1:")


@pytest.mark.cluster
def test_the_arena_plays_on_the_tls_cluster_from_the_environment(tls_cluster, monkeypatch,
                                                                   capsys):
    from ref_sim import arena
    monkeypatch.setenv(cluster_tls.ENV, str(tls_cluster.folder))
    host_port = tls_cluster.address.partition("://")[2]       # no scheme: tls, as certificates say
    assert arena.main(["ttt", "random", "random", "--games", "2", "--cluster", host_port]) == 0
    said = capsys.readouterr().out
    assert "arena: on 1 cluster worker(s), 1 games at once" in said
    assert f"Worker {tls_cluster.worker_address}: 2 games, 0 time-outs" in said


@pytest.mark.cluster
def test_the_tls_scheduler_refuses_clients_without_its_certificates(tls_cluster, folders):
    distributed = pytest.importorskip("distributed")
    _, theirs = folders
    host, port = tls_cluster.address.partition("://")[2].rsplit(":", 1)
    # TLS without a client certificate: the scheduler ends the connection with an alert.
    anyone = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    anyone.check_hostname, anyone.verify_mode = False, ssl.CERT_NONE
    with pytest.raises(ssl.SSLError, match="alert"):
        with socket.create_connection((host, int(port)), timeout=30) as raw:
            with anyone.wrap_socket(raw) as tls:
                tls.settimeout(30)
                tls.recv(1)
    # Dask clients: in the clear, or with another cluster's certificates.
    with pytest.raises(OSError):
        distributed.Client(f"tcp://{host}:{port}", timeout=2)
    with pytest.raises(OSError):
        distributed.Client(tls_cluster.address, security=theirs.security(), timeout=2)


@pytest.mark.cluster
def test_our_runners_say_in_one_line_why_they_are_refused(tls_cluster, folders, tmp_path,
                                                          capsys):
    ours, theirs = folders
    host_port = tls_cluster.address.partition("://")[2]
    mixed = tmp_path / "mixed"                      # our CA, another cluster's certificate
    mixed.mkdir()
    (mixed / "ca.pem").write_bytes(ours.ca.read_bytes())
    for name in (cluster_tls.CERT_FILE, cluster_tls.KEY_FILE):
        (mixed / name).write_bytes((theirs.folder / name).read_bytes())
    expected = {
        ("--cluster", f"tcp://{host_port}"):
            f"cannot reach the scheduler at tcp://{host_port}: the scheduler there speaks TLS: "
            f"connect with tls://{host_port} and its certificate folder (--tls DIR or "
            "$UTTT_CLUSTER_TLS)",
        ("--cluster", tls_cluster.address, "--tls", str(theirs.folder)):
            f"cannot reach the scheduler at {tls_cluster.address}: the scheduler's certificate "
            "is not this cluster's (",
        ("--cluster", tls_cluster.address, "--tls", str(mixed)):
            f"cannot reach the scheduler at {tls_cluster.address}: the scheduler refused this "
            "client's certificate (",
    }
    for options, start in expected.items():
        with pytest.raises(SystemExit) as stopped:
            match.main(["random", "random", "--out", str(tmp_path / "out"), *options])
        assert stopped.value.code == 2
        error = capsys.readouterr().err.strip().splitlines()[-1]
        assert error.startswith(f"python -m ref_sim.match: error: {start}"), error
    assert not (tmp_path / "out" / "games.jsonl").exists()


@pytest.mark.cluster
def test_a_worker_with_another_clusters_certificates_is_one_line(tls_cluster, folders, tmp_path):
    _, theirs = folders
    worker = serve(tmp_path, "worker.log", "worker", tls_cluster.address, "--tls",
                   str(theirs.folder))
    try:
        assert worker.wait(timeout=120) == 2        # said, not started: no worker retrying
    finally:
        stop([worker])
    error = (tmp_path / "worker.log").read_text().strip().splitlines()[-1]
    assert error.startswith(f"python -m ref_sim.cluster_serve: error: {tls_cluster.address}: "
                            "the scheduler's certificate is not this cluster's ("), error


@pytest.mark.cluster
def test_a_tls_client_at_a_plain_scheduler_is_one_line(folders, tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    ours, _ = folders
    # A plain Dask scheduler in this process: what the client meets is the same as at one our
    # command starts without --tls (tcp://, as the loopback test above shows), and no process
    # start (~2 CPU-s) is paid for it.
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp://", host="127.0.0.1",
                                  dashboard_address=None, silence_logs=40) as plain:
        address = plain.scheduler_address
        assert address.startswith("tcp://127.0.0.1:")
        with pytest.raises(SystemExit):
            match.main(["random", "random", "--cluster", address.replace("tcp://", "tls://"),
                        "--tls", str(ours.folder)])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"python -m ref_sim.match: error: cannot reach the scheduler at "
                            f"{address.replace('tcp://', 'tls://')}: no TLS there (")
    assert error.endswith("a scheduler started without certificates? (uttt-cluster scheduler "
                          "--tls DIR starts one with them)")
