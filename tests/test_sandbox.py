"""Limits a bot cannot undo: small hostile bots started through
``ref_sim.series.process.isolation`` try to widen their cores, fill shared memory, fork without end, leave
a daemon behind, raise their limits and reach the host's sockets and files.

Each test needs what it tests and skips, saying what is missing, elsewhere: a cgroup this runner
may make (root, or a delegated one; v1 or v2), bwrap, or two cores.  Every cgroup a test makes
is gone after it (checked after each test, also when it failed).
"""

import json
import mmap
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

try:
    import resource
except ImportError:  # Windows: no rlimits (the one test that reads them skips)
    resource = None

from ref_sim import stops
from ref_sim.series.process import cgroups, contain, isolation, keeper, sandbox
#: The sandbox (--isolate: cgroups, bwrap, rlimits) is Linux's; elsewhere the runners refuse it.
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="--isolate's sandbox is Linux's")

CGROUPS, NO_CGROUPS = cgroups.cgroups()
BWRAP, NO_BWRAP = sandbox.bwrap()
needs_cgroup = pytest.mark.skipif(CGROUPS is None, reason=f"no cgroup here: {NO_CGROUPS}")
needs_bwrap = pytest.mark.skipif(BWRAP is None, reason=f"no sandbox here: {NO_BWRAP}")
needs_two_cores = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2
                                     if hasattr(os, "sched_getaffinity") else True,
                                     reason="needs two cores this process may use")


@pytest.fixture(autouse=True)
def no_cgroup_left():
    """Every cgroup a test made is removed, whatever the test did."""
    yield
    if CGROUPS is None:
        return
    mine = f"{cgroups.CGROUP_PREFIX}{os.getpid()}-"
    for group in list(cgroups.BotCgroup.live):
        group.remove()
    left = [os.path.join(base, name) for base in CGROUPS.bases for name in os.listdir(base)
            if name.startswith(mine)]
    assert left == []


def bot(tmp_path, text):
    """A bot's script in a folder of its own (the sandbox shows it that folder, read-only)."""
    folder = tmp_path / "bot"
    folder.mkdir(exist_ok=True)
    path = folder / "bot.py"
    path.write_text(textwrap.dedent(text))
    return path


def run_bot(tmp_path, script, isolate, timeout=60):
    """Run ``script`` isolated to its end; returns (process, what it printed)."""
    log = tmp_path / "bot.log"
    with open(log, "w") as handle:
        process = contain.start([sys.executable, str(script)], isolate, stdout=handle,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=str(tmp_path))
    try:
        process.wait(timeout)
    finally:
        stops.kill_tree(process)
    return process, log.read_text()


def alive(pid: int) -> bool:
    """Running (a zombie, dead but not yet reaped by whoever adopted it, is not)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


# -- the cgroup ---------------------------------------------------------------------------------

@pytest.mark.e2e
@needs_cgroup
@needs_two_cores
def test_affinity_widener_stays_on_its_core(tmp_path):
    if "cpuset" not in CGROUPS.controllers:
        pytest.skip("the cgroups given to this runner have no cpuset (pinned only)")
    script = bot(tmp_path, """\
        import os
        before = sorted(os.sched_getaffinity(0))
        try:
            os.sched_setaffinity(0, range(os.cpu_count()))
            said = "widened"
        except OSError as error:
            said = "refused " + str(error)
        print("before", before, "after", sorted(os.sched_getaffinity(0)), said, flush=True)
        """)
    process, said = run_bot(tmp_path, script, isolation.Isolation(sandbox=False))
    assert process.returncode == 0, said
    core = process.cores[0]
    assert said.startswith(f"before [{core}] after [{core}] "), said


@pytest.mark.e2e
@needs_cgroup
def test_shared_memory_filler_is_killed_at_its_cap_and_the_runner_goes_on(tmp_path):
    # MAP_SHARED is not "data": RLIMIT_DATA let it have 300 MB under a 100 MB cap.
    script = bot(tmp_path, """\
        import mmap
        block = mmap.mmap(-1, 300 << 20, flags=mmap.MAP_SHARED)
        for mb in range(300):
            for offset in range(mb << 20, (mb + 1) << 20, 4096):
                block[offset] = 1
            if mb % 50 == 49:
                print("touched", mb + 1, "MB", flush=True)
        print("filled", flush=True)
        """)
    process, said = run_bot(tmp_path, script, isolation.Isolation(memory_mb=100, sandbox=False))
    assert "filled" not in said and "touched 150 MB" not in said, said
    assert process.returncode == -9, said           # the kernel's OOM killer, in its group only
    block = mmap.mmap(-1, 1 << 20, flags=mmap.MAP_SHARED)      # the runner is fine
    block[0] = 1


@pytest.mark.e2e
@needs_cgroup
def test_fork_bomb_is_bounded_and_gone_after_the_game(tmp_path):
    # Each child leaves the bot's session (setsid): the process group kill no longer reaches it.
    script = bot(tmp_path, """\
        import os, sys, time
        children = []
        while len(children) < 300:
            try:
                pid = os.fork()
            except OSError as error:
                print("fork refused:", error.strerror, flush=True)
                break
            if pid == 0:
                os.setsid()
                time.sleep(120)
                os._exit(0)
            children.append(pid)
        print("children", *children, flush=True)
        """)
    process, said = run_bot(tmp_path, script, isolation.Isolation(processes=20, sandbox=False))
    assert process.returncode == 0, said
    assert "fork refused: Resource temporarily unavailable" in said
    children = [int(pid) for pid in said.split("children", 1)[1].split()]
    assert 0 < len(children) < 20
    assert [pid for pid in children if alive(pid)] == []
    assert process.cgroup.removed


@pytest.mark.e2e
@needs_cgroup
def test_double_forked_daemon_ends_with_its_bot(tmp_path):
    marker = tmp_path / "daemon.pid"
    script = bot(tmp_path, f"""\
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                with open({str(marker)!r}, "w") as handle:
                    handle.write(str(os.getpid()))
                while True:
                    pass
            os._exit(0)
        os.wait()
        while not os.path.exists({str(marker)!r}):
            time.sleep(0.01)
        print("left a daemon", flush=True)
        """)
    process, said = run_bot(tmp_path, script, isolation.Isolation(sandbox=False))
    assert process.returncode == 0 and "left a daemon" in said, said
    daemon = int(marker.read_text())
    assert not alive(daemon)


@needs_cgroup
def test_status_line_names_the_cgroup_guarantees():
    line = contain.status_line(isolation.Isolation(memory_mb=100, processes=20))
    assert f"cgroup v{CGROUPS.version} per bot" in line
    assert "held by its cgroup's cpuset" in line or "no sched_setaffinity" in line
    assert "memory cap 100 MB, shared memory and tmpfs included" in line
    assert "process cap 20 (cgroup pids.max)" in line
    assert "its whole cgroup killed at the end of its game" in line


@pytest.mark.parametrize("keepers", [True, False], ids=["keeper", "no-keeper"])
def test_status_line_without_cgroups_says_what_is_not_held(monkeypatch, keepers):
    monkeypatch.setattr(keeper, "AVAILABLE", keepers)
    monkeypatch.setattr(cgroups, "cgroups", lambda: (None, "no cgroup (test)"))
    monkeypatch.setattr(sandbox, "bwrap", lambda: (None, "bwrap not found"))
    line = contain.status_line(isolation.Isolation(memory_mb=100, processes=20))
    assert "no cgroup (test): cores, shared memory, processes and the end NOT held" in line
    assert "memory cap 100 MB of heap only (RLIMIT_DATA): shared memory NOT capped" in line
    if keepers:     # (ref_sim.series.process.keeper: Linux)
        assert "process tree ended at the end of its game by its keeper" in line
        assert "NOT if the bot kills its keeper first" in line
    else:
        assert "a setsid child is NOT reached" in line
    assert "no sandbox (bwrap not found)" in line
    if hasattr(os, "sched_setaffinity"):
        assert "NOT held (sched_setaffinity only" in line


@pytest.mark.parametrize("per_namespace", [True, False], ids=["own-count", "shared-count"])
def test_status_line_of_a_user_without_cgroup_says_whose_processes_are_counted(monkeypatch,
                                                                               per_namespace):
    # A normal user, bwrap, no cgroup: RLIMIT_NPROC set in the bot's user namespace counts its
    # own processes (Linux 5.14+); elsewhere the count is the user's, shared, and said so.
    monkeypatch.setattr(os, "getuid", lambda: 1000)
    monkeypatch.setattr(cgroups, "cgroups", lambda: (None, "no cgroup (test)"))
    monkeypatch.setattr(sandbox, "bwrap", lambda: ("/usr/bin/bwrap", ""))
    monkeypatch.setattr(contain, "per_namespace_processes", lambda: per_namespace)
    line = contain.status_line(isolation.Isolation(memory_mb=100, processes=20, disk_mb=7))
    if per_namespace:
        assert "no cgroup (test): cores and shared memory NOT held by the kernel" in line
        assert "process cap 20 per bot, its own (RLIMIT_NPROC in its user namespace" in line
    else:
        assert "no cgroup (test): cores, shared memory and processes NOT held" in line
        assert "process cap 20 more than the user runs, SHARED by the bots" in line
        assert "systemd-run --user --scope -p Delegate=yes" in line
    assert "its sandbox's pid namespace" in line and "kills its keeper" not in line
    assert "disk cap 7 MB per bot" in line
    assert "private /tmp and /dev/shm of 100 MB each, nothing else writable" in line


@pytest.mark.e2e
@needs_cgroup
def test_a_cgroup_that_cannot_be_entered_is_a_failure_to_start(tmp_path, monkeypatch):
    # The shim refuses to run the bot outside the limits it was promised.
    real = cgroups.BotCgroup.procs_files
    monkeypatch.setattr(cgroups.BotCgroup, "procs_files",
                        lambda self: [*real(self), str(tmp_path / "no" / "cgroup.procs")])
    script = bot(tmp_path, "print('ran')\n")
    process, said = run_bot(tmp_path, script, isolation.Isolation(sandbox=False))
    assert process.returncode == 127
    assert said.startswith("could not start: cannot enter its cgroup") and "ran" not in said


# -- hard limits --------------------------------------------------------------------------------

@pytest.mark.e2e
@needs_bwrap
def test_raising_a_limit_gains_nothing(tmp_path):
    # Soft and hard alike: raising the soft limit to the hard one changes nothing, and in the
    # sandbox (no capabilities) the hard one cannot be raised, even by root.
    script = bot(tmp_path, """\
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        resource.setrlimit(resource.RLIMIT_DATA, (hard, hard))
        print("data", soft, hard, resource.getrlimit(resource.RLIMIT_DATA)[0], flush=True)
        try:
            resource.setrlimit(resource.RLIMIT_DATA, (hard * 2, hard * 2))
            print("raised", flush=True)
        except (ValueError, OSError) as error:
            print("refused", error, flush=True)
        """)
    process, said = run_bot(tmp_path, script, isolation.Isolation(memory_mb=100))
    cap = 100 << 20
    assert process.returncode == 0, said
    assert f"data {cap} {cap} {cap}\n" in said and "refused" in said, said


@pytest.mark.e2e
@pytest.mark.skipif(resource is None, reason="POSIX resource limits (no resource module here)")
def test_shim_sets_hard_process_cap_for_a_user(tmp_path):
    # RLIMIT_NPROC as a normal user: the shim's arithmetic, run in a child that is given the
    # same hard limit whoever runs the test (the kernel exempts root from enforcing it only).
    if os.getuid() == 0:
        pytest.skip("root: the shim leaves RLIMIT_NPROC alone (the kernel exempts root)")
    probe = "import resource; print(*resource.getrlimit(resource.RLIMIT_NPROC))"
    done = subprocess.run([sys.executable, "-I", "-S", contain.SHIM, "-", "-", "-", "50",
                           "-", sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60)
    soft, hard = map(int, done.stdout.split())
    assert soft == hard and soft != resource.RLIM_INFINITY


# -- the sandbox's file system ----------------------------------------------------------------------

@pytest.mark.e2e
@needs_bwrap
def test_host_unix_sockets_are_out_of_reach(tmp_path):
    host = tempfile.mkdtemp(prefix="uttt-sock-", dir="/tmp")    # a short path: sun_path
    servers, paths = [], [os.path.join(host, "s"), str(tmp_path / "host.sock")]
    try:
        for path in paths:
            server = socket.socket(socket.AF_UNIX)
            server.bind(path)
            server.listen(1)
            server.settimeout(0.2)
            servers.append(server)
        script = bot(tmp_path, f"""\
            import socket
            for path in {paths!r}:
                client = socket.socket(socket.AF_UNIX)
                try:
                    client.connect(path)
                    client.sendall(b"hello")
                    print("reached", path, flush=True)
                except OSError as error:
                    print("unreachable", path, error.strerror, flush=True)
            """)
        process, said = run_bot(tmp_path, script, isolation.Isolation())
        for server in servers:
            with pytest.raises(socket.timeout):
                server.accept()
    finally:
        for server in servers:
            server.close()
        for path in paths:
            if os.path.exists(path):
                os.unlink(path)
        os.rmdir(host)
    assert process.returncode == 0, said
    assert "reached" not in said and said.count("unreachable") == 2, said


@pytest.mark.e2e
@needs_bwrap
def test_minimal_file_system(tmp_path):
    # Writable: its game directory and its own /tmp and /dev/shm; read-only: its folder; not
    # there: what lies beside its folder, the host's TMPDIR, /run, /var, the rest of home.
    game = tmp_path / "game"
    game.mkdir()
    secret = tmp_path / "secret.txt"       # beside the bot's folder, not in it
    secret.write_text("x")
    host_temp = tempfile.NamedTemporaryFile(prefix="uttt-host-", delete=False)   # host's TMPDIR
    host_temp.close()
    home = os.path.expanduser("~")
    script_folder = tmp_path / "bot"
    script = bot(tmp_path, f"""\
        import json, os
        for path in ({str(secret)!r}, {host_temp.name!r}, "/run", "/var", "/etc/shadow"):
            print("sees" if os.path.exists(path) else "hidden", path, flush=True)
        home = {home!r}
        print("home holds", json.dumps(os.listdir(home) if os.path.isdir(home) else []), flush=True)
        for folder in ({str(game)!r}, "/tmp", "/dev/shm", "/dev", {str(tmp_path)!r},
                       {str(script_folder)!r}):
            try:
                with open(os.path.join(folder, "written"), "w") as handle:
                    handle.write("x")
                print("wrote", folder, flush=True)
            except OSError as error:
                print("refused", folder, error.strerror, flush=True)
        for folder in ("/", "/var/tmp", "/home"):  # on bwrap's own root, a tmpfs of no size
            try:
                os.makedirs(folder, exist_ok=True)
                with open(os.path.join(folder, "written"), "w") as handle:
                    handle.write("x")
                print("wrote", folder, flush=True)
            except OSError as error:
                print("refused", folder, error.strerror, flush=True)
        print("TMPDIR", os.environ["TMPDIR"], "HOME", os.environ["HOME"], flush=True)
        """)
    try:
        log = tmp_path / "bot.log"
        with open(log, "w") as handle:
            process = contain.start([sys.executable, str(script)], isolation.Isolation(),
                                    writable=[game], stdout=handle, stderr=subprocess.STDOUT,
                                    cwd=str(game))
        try:
            process.wait(60)
        finally:
            stops.kill_tree(process)
    finally:
        os.unlink(host_temp.name)
    said = log.read_text()
    assert process.returncode == 0, said
    for path in (secret, host_temp.name, "/run", "/var", "/etc/shadow"):
        assert f"hidden {path}\n" in said
    readable = sandbox.readable_paths([sys.executable, str(script)], dict(os.environ))
    shown = {path[len(home):].strip("/").split("/")[0] for path in readable
             if path.startswith(home.rstrip("/") + "/")}
    held = json.loads(said.split("home holds ", 1)[1].splitlines()[0])
    assert set(held) <= shown, said             # only what the bot's command needs of home
    assert f"wrote {game}\n" in said and "wrote /tmp\n" in said and "wrote /dev/shm\n" in said
    assert "refused /dev Read-only file system" in said
    for folder in ("/", "/var/tmp", "/home"):
        assert f"refused {folder} Read-only file system" in said
    assert f"refused {script_folder} Read-only file system" in said
    # Its folder's parents are only the private /tmp's: what it writes there stays there.
    assert not os.path.exists("/tmp/written") and not (tmp_path / "written").exists()
    assert not (tmp_path / "bot" / "written").exists()
    assert "TMPDIR /tmp HOME /tmp" in said


@pytest.mark.e2e
@needs_bwrap
def test_dev_shm_filler_stops_at_its_cap(tmp_path):
    script = bot(tmp_path, """\
        import sys
        written = 0
        try:
            with open("/dev/shm/fill", "wb") as handle:
                for _ in range(300):
                    handle.write(b"x" * (1 << 20))
                    handle.flush()
                    written += 1
        except OSError as error:
            print("stopped at", written, "MB:", error.strerror, flush=True)
            sys.exit(1)
        print("filled", written, flush=True)
        """)
    process, said = run_bot(tmp_path, script, isolation.Isolation(memory_mb=100))
    assert "filled" not in said, said
    # The tmpfs is full at 100 MB (ENOSPC), or the cgroup's memory cap killed it just before
    # (bwrap, between, exits with 128 + SIGKILL).
    assert process.returncode in (-9, 128 + 9) or ("No space left on device" in said
                                        and int(said.split()[2]) <= 100), said


# -- cgroup v2 ----------------------------------------------------------------------------------

def test_v2_place_enables_the_controllers_where_it_may(tmp_path, monkeypatch):
    # A cgroup2 tree made of plain files: the root (as root) gets the three controllers enabled
    # for its children; a tree that lacks one is refused, saying which.
    root = tmp_path / "cgroup2"
    (root / "runner.scope").mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpu cpuset io memory pids\n")
    (root / "cgroup.subtree_control").write_text("memory\n")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert cgroups._v2_place(str(root), "/runner.scope") == (
        cgroups.CgroupPlace(2, (str(root),), ("cpuset", "memory", "pids")), "")
    assert (root / "cgroup.subtree_control").read_text() == "+cpuset +pids"
    # A user's delegated tree (systemd gives memory and pids, not cpuset): the runner's parent.
    user = root / "user.slice"
    (user / "runner.scope").mkdir(parents=True)
    (user / "cgroup.controllers").write_text("memory pids\n")
    (user / "cgroup.subtree_control").write_text("")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert cgroups._v2_place(str(root), "/user.slice/runner.scope") == (
        cgroups.CgroupPlace(2, (str(user),), ("memory", "pids")), "")
    assert (user / "cgroup.subtree_control").read_text() == "+memory +pids"
    (user / "cgroup.controllers").write_text("cpu io memory\n")
    place, why = cgroups._v2_place(str(root), "/user.slice/runner.scope")
    assert place is None and why == f"cgroup v2 lacks pids at {user}"


def writable_cgroup2():
    """A cgroup2 folder where this process may make a group with cgroup.kill, or None."""
    try:
        mounts = cgroups._cgroup_mounts()[1]
        probe = os.path.join(mounts, f"uttt-probe-{os.getpid()}") if mounts else None
        if probe is None:
            return None
        os.mkdir(probe)
    except OSError:
        return None
    try:
        return mounts if os.path.exists(os.path.join(probe, "cgroup.kill")) else None
    finally:
        os.rmdir(probe)


CGROUP2 = writable_cgroup2() if os.name == "posix" and sys.platform.startswith("linux") else None


@pytest.mark.skipif(CGROUP2 is None, reason="no cgroup2 folder this process may write, with "
                                            "cgroup.kill (Linux 5.14)")
@pytest.mark.e2e
def test_v2_group_is_entered_killed_whole_and_removed(tmp_path):
    # The v2 path where this machine has a cgroup2 tree but its controllers are v1's: no limits,
    # but entering, cgroup.kill and the removal are the real ones.
    group = cgroups.BotCgroup(cgroups.CgroupPlace(2, (CGROUP2,), ()), [0], 0, 0)
    marker = tmp_path / "daemon.pid"
    script = bot(tmp_path, f"""\
        import os, time
        if os.fork() == 0:
            os.setsid()
            with open({str(marker)!r}, "w") as handle:
                handle.write(str(os.getpid()))
            time.sleep(120)
        time.sleep(120)
        """)
    shim = [sys.executable, "-I", "-S", contain.SHIM, ",".join(group.procs_files()),
            "-", "-", "-", "-", sys.executable, str(script)]
    process = subprocess.Popen(shim, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not marker.exists():
            assert process.poll() is None and time.monotonic() < deadline, "the bot did not start"
            time.sleep(0.02)
        daemon = int(marker.read_text())
        assert sorted(group.pids()) == sorted([process.pid, daemon])
        assert group.kill_all()
        process.wait(30)
        assert process.returncode == -9 and not alive(daemon)
    finally:
        group.remove()
        stops.kill_tree(process)
    assert not os.path.exists(group.folders[0])


def running_with(token: str) -> list[int]:
    """The host's pids of the processes whose command line holds ``token`` (zombies aside)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if token.encode() in handle.read() and alive(int(entry)):
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


@pytest.mark.e2e
@needs_bwrap
def test_without_a_cgroup_the_sandbox_still_ends_a_daemon(tmp_path, monkeypatch):
    # The bot is pid 1 of its pid namespace: when it goes, the kernel kills the namespace.
    monkeypatch.setattr(cgroups, "cgroups", lambda: (None, "no cgroup (test)"))
    token = f"uttt-daemon-{os.getpid()}-{time.monotonic_ns()}"
    marker = tmp_path / "game" / "daemon.started"
    marker.parent.mkdir()
    script = bot(tmp_path, f"""\
        import os, sys, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                open({str(marker)!r}, "w").close()
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)",
                                          {token!r}])
            os._exit(0)
        os.wait()
        while not os.path.exists({str(marker)!r}):
            time.sleep(0.01)
        time.sleep(120)
        """)
    log = tmp_path / "bot.log"
    with open(log, "w") as handle:
        process = contain.start([sys.executable, str(script)], isolation.Isolation(),
                                writable=[marker.parent], stdout=handle,
                                stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while not running_with(token):
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.02)
        assert process.cgroup is None
    finally:
        stops.kill_tree(process)
    deadline = time.monotonic() + 10      # the kernel kills the namespace as its pid 1 exits
    while running_with(token) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert running_with(token) == []


@pytest.mark.e2e
@needs_cgroup
def test_a_fork_bomb_in_a_series_loses_and_leaves_nothing(tmp_path, capsys):
    # Through the runner: the bomb's children (each in a session of its own) are bounded, the
    # bot loses on time, the series completes and nothing of it runs after the game.
    from ref_sim import match

    token = f"uttt-bomb-{os.getpid()}-{time.monotonic_ns()}"
    script = bot(tmp_path, f"""\
        import os, sys, time
        while True:
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                os.setsid()
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)",
                                          {token!r}])
            print("child", pid, flush=True)
        time.sleep(120)
        """)
    out = tmp_path / "out"
    assert match.main(["--startup-wait", "0.5", "--exit-wait", "1.3", "random",
                       f"name=Bomb:{sys.executable} {script}", "--games", "1", "--time-limit",
                       "0.5", "--seed", "3", "--out", str(out), "--isolate",
                       "--isolate-processes", "20"]) == 0
    game = json.loads((out / "games.jsonl").read_text().splitlines()[0])
    assert game["winner"] == "Random1" and game["loser"] == "Bomb"
    said = (out / "logs" / "game-0001-Bomb.log").read_text()
    assert 0 < said.count("child ") < 20, said
    assert running_with(token) == []
    assert "process cap 20 (cgroup pids.max)" in capsys.readouterr().out


def test_a_class_path_is_shown_but_not_what_a_command_merely_names(tmp_path):
    script = bot(tmp_path, "pass\n")
    classes = tmp_path / "classes"
    classes.mkdir()
    loose = tempfile.NamedTemporaryFile(prefix="uttt-loose-", suffix=".py", dir="/tmp",
                                        delete=False)
    loose.close()
    try:
        shown = sandbox.readable_paths(
            ["java", "-cp", f"{classes}{os.pathsep}/usr/share/java", "Main", str(script), loose.name,
             "/tmp", os.path.expanduser("~")], {"PATH": os.environ.get("PATH", "")})
    finally:
        os.unlink(loose.name)
    assert str(classes) in shown                # its program: the class path
    # Merely named, after its main class: a script, a file of /tmp, /tmp, home.
    assert str(script.parent) not in shown and loose.name not in shown
    for shared in isolation.SHARED_DIRS:
        assert shared not in shown
    assert not any(path.startswith("/usr/") for path in shown)     # the system's, bound anyway


def test_a_program_run_through_a_link_is_shown_where_the_command_names_it(tmp_path):
    """``python`` on PATH as a link to the interpreter (as a venv's is): the sandbox must hold
    the link itself, or bwrap cannot exec it, and what it leads to."""
    links = tmp_path / "bin"
    links.mkdir()
    (links / "python").symlink_to(sys.executable)
    shown = sandbox.readable_paths([str(links / "python"), "-c", "pass"], {"PATH": ""})
    assert str(links) in shown
    real = os.path.realpath(sys.executable)
    assert any(real.startswith(path + os.sep) for path in shown) or real.startswith("/usr/")


def test_a_version_managers_shim_on_path_shows_the_managers_folder(tmp_path):
    """``python3`` on PATH as pyenv's shim (~/.pyenv/shims/python3, a script that runs
    ~/.pyenv/libexec/pyenv, which reads ~/.pyenv/version and runs ~/.pyenv/versions/...): the
    shim's folder alone left the bot exiting 127, "~/.pyenv/libexec/pyenv: No such file"."""
    root = tmp_path / ".pyenv"
    (root / "shims").mkdir(parents=True)
    (root / "libexec").mkdir()
    shim = root / "shims" / "python3"
    shim.write_text(f'#!/bin/sh\nexec "{root}/libexec/pyenv" exec python3 "$@"\n')
    shim.chmod(0o755)
    script = tmp_path / "team" / "bot.py"
    script.parent.mkdir()
    script.write_text("print('hello')\n")
    shown = sandbox.readable_paths(["python3", str(script), "Team"], {"PATH": str(shim.parent)})
    assert str(root) in shown and str(script.parent) in shown


@pytest.mark.e2e
@needs_bwrap
def test_a_home_folder_named_on_the_command_line_is_not_shown(tmp_path, monkeypatch):
    # A `~/.ssh` argument alone exposed the key: a folder named on a bot's command line is
    # not its program's, so it is not shown, wherever it is.
    home = tmp_path / "home" / "teacher"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    monkeypatch.setenv("HOME", str(home))
    script = bot(tmp_path, f"""\
        import os
        for path in ({str(home / ".ssh" / "id_rsa")!r}, {str(home)!r}):
            try:
                print("READ", path, open(path).read() if os.path.isfile(path) else os.listdir(path), flush=True)
            except OSError as error:
                print("BLOCKED", path, error.strerror, flush=True)
        """)
    log = tmp_path / "bot.log"
    with open(log, "w") as handle:
        process = contain.start([sys.executable, str(script), str(home / ".ssh"),
                                   str(home / ".ssh" / "id_rsa")], isolation.Isolation(),
                                  stdout=handle, stderr=subprocess.STDOUT, cwd=str(tmp_path))
    try:
        process.wait(60)
    finally:
        stops.kill_tree(process)
    said = log.read_text()
    assert process.returncode == 0, said
    assert "READ" not in said and said.count("BLOCKED") == 2, said


def test_a_bot_cannot_widen_its_view_to_the_host(tmp_path, monkeypatch):
    # Its program's folder is what it sees, normalised first ('//', '/./', links): never '/',
    # a home, /proc, /run, the runner's folder, --out or another bot's program; in doubt, it is
    # refused in one line rather than shown.
    monkeypatch.chdir(tmp_path)
    team1, team2 = tmp_path / "team1", tmp_path / "team2"
    for team in (team1, team2):
        team.mkdir()
        (team / "bot.py").write_text("pass\n")
    (tmp_path / "root-link").symlink_to("/")
    out = tmp_path / "out"
    out.mkdir()
    event = sandbox.for_event(isolation.Isolation(), [[sys.executable, str(team1 / "bot.py")],
                                                        [sys.executable, str(team2 / "bot.py")]],
                                out)
    env = {"PATH": os.environ.get("PATH", "")}
    shown = sandbox.readable_paths([sys.executable, str(team1 / "bot.py"), "//", "/./",
                                      str(team2), "/run", "/proc"], env, event)
    assert str(team1) in shown
    for hidden in ("/", "//", "/run", "/proc", str(team2), str(tmp_path), str(out),
                   os.path.expanduser("~")):
        assert hidden not in shown
    for program in ("//", "/./", "/proc/self", str(tmp_path / "root-link"), "/run",
                    os.path.expanduser("~"), str(team2), str(out)):
        with pytest.raises(ValueError) as refused:
            sandbox.readable_paths(["java", "-cp", program, "Main"], env, event)
        assert "\n" not in str(refused.value) and "--isolate" in str(refused.value)
    # A link in its own folder that leads into another team's folder.
    (team2 / "notes.py").write_text("pass\n")
    (team1 / "evil.py").symlink_to(team2 / "notes.py")
    with pytest.raises(ValueError, match="a link into another bot's folder"):
        sandbox.readable_paths([sys.executable, str(team1 / "evil.py")], env, event)
    # An interpreter its line names in another team's folder (a venv there): not shown.
    (team2 / "venv" / "bin").mkdir(parents=True)
    (team2 / "venv" / "bin" / "python").symlink_to(sys.executable)
    shown = sandbox.readable_paths([str(team2 / "venv" / "bin" / "python"),
                                      str(team1 / "bot.py")], env, event)
    assert str(team1) in shown and not any(path.startswith(str(team2)) for path in shown)
    # A script in the runner's folder: that file alone, never the folder.
    (tmp_path / "loose.py").write_text("pass\n")
    shown = sandbox.readable_paths([sys.executable, str(tmp_path / "loose.py")], env, event)
    assert str(tmp_path / "loose.py") in shown and str(tmp_path) not in shown
    # A module found through the runner's folder on PYTHONPATH: its own folder only.
    modules = {**env, "PYTHONPATH": str(tmp_path)}
    module = [sys.executable, "-m", "team1.bot"]
    event = sandbox.for_event(isolation.Isolation(), [module, [sys.executable,
                                                                 str(team2 / "bot.py")]], out)
    shown = sandbox.readable_paths(module, modules, event)
    assert str(team1) in shown and str(tmp_path) not in shown and str(team2) not in shown
    # Two modules of one package (python3 -m teams.kea): each its own file, not the package.
    (tmp_path / "teams").mkdir()
    kea, otter = ([sys.executable, "-m", f"teams.{name}"] for name in ("kea", "otter"))
    for name in ("kea", "otter"):
        (tmp_path / "teams" / f"{name}.py").write_text("pass\n")
    shown = sandbox.readable_paths(kea, modules, sandbox.for_event(isolation.Isolation(),
                                                                       [kea, otter], out))
    assert str(tmp_path / "teams" / "kea.py") in shown and str(tmp_path / "teams") not in shown
