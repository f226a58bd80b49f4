"""``--isolate`` as a normal user (no sudo, no delegated cgroup), where it holds least: a user made
for the test (and removed by it) runs a tiny isolated match whose bot fills its in-memory /tmp,
/dev/shm and tries the sandbox's root, and two bots where one forks without end.  What the status
line claims is what is asserted.  docs/isolation.md, "Platform and privilege"."""

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

try:
    import pwd
except ImportError:  # Windows: the tests skip there (_why_not), but the module must import
    pwd = None

from ref_sim.series.process import sandbox
PROJECT = sandbox.PROJECT
MEMORY_MB = 100


def _why_not() -> str | None:
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return "needs root on Linux to make a test user"
    for tool in ("useradd", "userdel", "runuser"):
        if shutil.which(tool) is None:
            return f"no {tool} here"
    if sandbox.bwrap()[0] is None:
        return f"no sandbox here: {sandbox.bwrap()[1]}"
    return None


pytestmark = [pytest.mark.e2e, pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))]


def _pids_of(uid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    found.append(int(name))
            except OSError:
                pass
    return found


@pytest.fixture
def user():
    """``(name, folder it owns, a Python it can run with the project importable)``; the user,
    its processes and its folder are gone afterwards."""
    name = "uttt-t-" + secrets.token_hex(3)
    subprocess.run(["useradd", "--no-create-home", "--home-dir", "/nonexistent", "--shell",
                    "/usr/sbin/nologin", name], check=True, capture_output=True, timeout=60)
    folder = tempfile.mkdtemp(prefix="uttt-user-", dir="/tmp")
    try:
        uid = pwd.getpwnam(name).pw_uid
        os.chown(folder, uid, -1)
        python = None       # the runner's may live in root's home, which the user cannot enter
        for candidate in dict.fromkeys([sys.executable,
                                        shutil.which("python3", path="/usr/local/bin:/usr/bin")]):
            if candidate and as_user(name, [candidate, "-c", "import ref_sim.series.process.isolation"],
                                     folder).returncode == 0:
                python = candidate
                break
        if python is None:
            pytest.skip("no Python the test user can run imports the project")
        yield name, folder, python
    finally:
        uid = pwd.getpwnam(name).pw_uid
        for _ in range(100):            # what it ran ends with its runner; a moment at most
            pids = _pids_of(uid)
            if not pids:
                break
            time.sleep(0.1)
        for pid in _pids_of(uid):       # never left running: the user goes next
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run(["userdel", name], capture_output=True, timeout=60)
        assert pids == [], "the test user's processes outlived its run"


def as_user(name, command, cwd, timeout=120):
    return subprocess.run(["runuser", "-u", name, "--", "env", f"PYTHONPATH={PROJECT}", *command],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout)


def script(folder, subfolder, text):
    os.makedirs(os.path.join(folder, subfolder))
    path = os.path.join(folder, subfolder, "bot.py")
    with open(path, "w") as handle:
        handle.write(textwrap.dedent(text))
    os.chmod(os.path.dirname(path), 0o755)
    os.chmod(path, 0o644)
    return path


#: Once its game began: 5 MB files into /tmp, /dev/shm, the sandbox's root, /var/tmp and /home
#: (500 MB asked of each), then what each took, in MB, on its log.
TMPFS_FILLER = """\
    import json, os, sys, time
    print("up", flush=True)
    while not os.path.exists(sys.argv[1] + ".go"):
        time.sleep(0.02)
    took = {}
    for place in ("/tmp", "/dev/shm", "/", "/var/tmp", "/home"):
        took[place] = 0
        for n in range(100):
            try:
                os.makedirs(place, exist_ok=True)
                with open(os.path.join(place, "fill-%d" % n), "wb") as handle:
                    handle.write(b"t" * (5 << 20))
                took[place] += 5
            except OSError:
                break
    print("took " + json.dumps(took), flush=True)
    time.sleep(60)
    """


def test_a_tmpfs_filler_gets_its_memory_cap_and_nothing_else(user):
    name, folder, python = user
    bot = script(folder, "filler", TMPFS_FILLER)
    out = os.path.join(folder, "out")
    # The disk cap above the memory cap: the sizes of the tmpfs are what refuse here.
    done = as_user(name, [python, "-m", "ref_sim.match", f"name=Filler:{python} {bot} {{name}}",
                          "random", "--games", "1", "--time-limit", "0.5", "--isolate",
                          "--isolate-memory", str(MEMORY_MB), "--isolate-disk", "1000",
                          "--out", out], folder)
    assert done.returncode == 0, done.stderr
    status = next(line for line in done.stdout.splitlines() if line.startswith("isolation:"))
    assert f"private /tmp and /dev/shm of {MEMORY_MB} MB each, nothing else writable" in status
    log = open(os.path.join(out, "logs", "game-0001-Filler.log"), errors="replace").read()
    took = json.loads(log.split("took ", 1)[1].splitlines()[0])
    assert 0 < took["/tmp"] <= MEMORY_MB and 0 < took["/dev/shm"] <= MEMORY_MB
    assert took["/"] == took["/var/tmp"] == took["/home"] == 0
    game = json.loads(open(os.path.join(out, "games.jsonl")).read())
    assert game["winner"] == "Random2"
    kept = sum(os.path.getsize(os.path.join(root, file)) for root, _, files in os.walk(folder)
               for file in files)
    assert kept < 1 << 20       # in memory, gone with its sandbox: nothing big remains


#: Started first, it waits; once told (a line on stdin) it starts 20 threads.
THREADS = """\
    import sys, threading, time
    print("up", flush=True)
    sys.stdin.readline()
    started = 0
    try:
        for _ in range(20):
            threading.Thread(target=time.sleep, args=(1,)).start()
            started += 1
    except RuntimeError:
        pass
    print("started %d" % started, flush=True)
    """
BOMB = """\
    import os, time
    forked = 0
    try:
        while forked < 2000:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            forked += 1
    except OSError:
        pass
    print("forked %d" % forked, flush=True)
    time.sleep(30)
    """
#: The runner's side, run as the user: the waiting bot, then the bomb; once the bomb is at its
#: cap, the other starts its threads.  Prints the status line's process part and what each said.
PAIR = """\
    import json, subprocess, sys, time
    from ref_sim import stops
    from ref_sim.series.process import isolation, cgroups, contain, disk_cap, metering, sandbox
    threads, bomb, folder = sys.argv[1:4]
    isolate = isolation.Isolation(memory_mb=0, processes=50)
    part = next(p for p in contain.status_line(isolate).split("; ") if "process cap" in p)
    logs = [open(folder + "/" + n + ".log", "w+") for n in ("threads", "bomb")]
    def said(log, word):
        for _ in range(600):
            text = open(log.name).read()
            if word in text:
                return text
            time.sleep(0.05)
        return text
    waiting = contain.start([sys.executable, threads], isolate, stdout=logs[0],
                            stderr=subprocess.STDOUT, stdin=subprocess.PIPE)
    said(logs[0], "up")
    forker = contain.start([sys.executable, bomb], isolate, stdout=logs[1],
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    bombed = said(logs[1], "forked")
    waiting.stdin.write(b"go\\n")
    waiting.stdin.close()
    other = said(logs[0], "started")
    for process in (waiting, forker):
        stops.kill_tree(process)
    print(json.dumps({"status": part, "bomb": bombed, "other": other}))
    """


def test_a_fork_bomb_leaves_its_opponent_what_the_status_line_says(user):
    name, folder, python = user
    threads, bomb = script(folder, "threads", THREADS), script(folder, "bomb", BOMB)
    pair = os.path.join(folder, "pair.py")
    with open(pair, "w") as handle:
        handle.write(textwrap.dedent(PAIR))
    os.chmod(pair, 0o644)
    done = as_user(name, [python, pair, threads, bomb, folder], folder)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    forked = int(seen["bomb"].split("forked ")[1].split()[0])
    started = int(seen["other"].split("started ")[1].split()[0])
    assert forked < 50                  # its cap held whichever way it is counted
    if "its own" in seen["status"]:
        assert started == 20            # the bomb took nothing of the other's
    else:
        assert "SHARED" in seen["status"]
