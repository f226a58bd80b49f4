"""--isolate (ref_sim.series.process.isolation): each bot on its own core, under a memory cap, in a bwrap
sandbox where bwrap works (no network, read-only but its directories), and what each bot used.
The hostile bots that try to undo the limits are in tests/test_sandbox.py.

The sandbox tests skip where bwrap is missing or cannot build a sandbox (a fresh CI machine has
only Python, pip and gcc); the others run anywhere on Linux.
"""

import json
import os
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from ref_sim.series.process import isolation, cgroups, contain, metering, sandbox, keeper
from ref_sim import match, stdio, stops

BWRAP, NO_BWRAP = sandbox.bwrap()
needs_bwrap = pytest.mark.skipif(BWRAP is None, reason=f"no sandbox here: {NO_BWRAP}")
needs_linux = pytest.mark.skipif(not metering.CAN_SAMPLE or not hasattr(os, "sched_setaffinity"),
                                 reason="affinity and /proc are Linux's")
NO_SANDBOX = isolation.Isolation(sandbox=False)


#: A silent agent holds the referee's start for the start-up wait; a hung one is killed the exit
#: wait after end_game. Shorter than in real series, same behaviour.
QUICK = ["--startup-wait", "0.5", "--exit-wait", "1.3"]


def script(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def run_to_end(command, isolate, log, **options):
    """Start ``command`` through ref_sim.series.process.contain, wait for it (generously), return it."""
    with open(log, "w") as handle:
        process = contain.start(command, isolate, stdout=handle, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, **options)
    try:
        process.wait(60)
    finally:
        stops.kill_tree(process)
    return process


def kept(pid: int) -> int:
    """The process its keeper (ref_sim.series.process.keeper) runs, or ``pid`` where bots have none."""
    if not keeper.AVAILABLE:
        return pid
    children = f"/proc/{pid}/task/{pid}/children"
    wait_for(lambda: open(children).read().split(), "the keeper to start the bot")
    return int(open(children).read().split()[0])


def wait_for(predicate, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


def read_lines(out):
    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


# -- usage ------------------------------------------------------------------------------------

@pytest.mark.e2e
def test_usage_counts_cpu_and_memory_of_a_plain_bot(tmp_path):
    # Spins until it has used 0.3 s of CPU: the figure holds however loaded the machine is.
    spin = ("import time\nblock = bytearray(40 << 20)\nfor i in range(0, len(block), 4096): "
            "block[i] = 1\nwhile time.process_time() < 0.3: pass\n")
    process = run_to_end([sys.executable, "-c", spin], None, tmp_path / "spin.log")
    usage = metering.usage_of({"Spinner": process, "Absent": None})
    assert set(usage) == {"Spinner"}
    assert usage["Spinner"]["cpu_seconds"] >= 0.3
    assert usage["Spinner"]["peak_mb"] >= 40


@pytest.mark.e2e
@needs_linux
def test_usage_of_a_shell_child_killed_at_the_end_is_sampled(tmp_path):
    # The shell's child is never reaped by the shell (the whole group is killed): only the
    # /proc samples of the session see its CPU.
    marker = tmp_path / "spun"
    child = (f"import time\nwhile time.process_time() < 1.0: pass\n"
             f"open({str(marker)!r}, 'w').close()\ntime.sleep(60)\n")
    command = ["sh", "-c", f'{sys.executable} -c "$0"; true', child]
    with open(tmp_path / "shell.log", "w") as handle:
        process = contain.start(command, None, stdout=handle, stderr=subprocess.STDOUT)
    try:
        wait_for(marker.exists, "the child to spin for a second")
        # /proc counts in clock ticks, coarser than process_time(): 0.99 s may show for 1.0
        wait_for(lambda: process.sampled["cpu_seconds"] >= 0.9, "a sample after the spin")
    finally:
        stops.kill_tree(process)
    assert metering.usage_of({"Shell": process})["Shell"]["cpu_seconds"] >= 0.9


def test_usage_line_skips_what_is_malformed():
    game = {"usage": {"A1": {"cpu_seconds": 1.234, "peak_mb": 40.2}, "B2": {"cpu_seconds": "x"},
                      "C3": "junk", "D4": {"cpu_seconds": 1e999, "peak_mb": 1}}}
    assert metering.usage_line(game["usage"]) == "usage: A1 1.23 s CPU, 40 MB; D4 inf s CPU, 1 MB"
    assert metering.usage_line([1, 2]) is None
    assert metering.usage_line(None) is None


# -- cores and caps -----------------------------------------------------------------------------

@pytest.mark.e2e
@needs_linux
def test_each_bot_is_pinned_to_cores_of_its_own(tmp_path):
    pool = cgroups.core_pool()
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    processes = []
    try:
        for k in range(2):
            with open(tmp_path / f"sleeper{k}.log", "w") as handle:
                processes.append(contain.start(sleeper, NO_SANDBOX, stdout=handle))
        for process in processes:       # the shim has become the sleeper (same process)
            bot = kept(process.pid)
            sleeping = "\0".join(sleeper).encode() + b"\0"
            wait_for(lambda: open(f"/proc/{bot}/cmdline", "rb").read() == sleeping,
                     "the keeper's child, then the shim, to exec the bot")
            status = open(f"/proc/{bot}/status").read()
            allowed = next(line.split(":")[1].strip() for line in status.splitlines()
                           if line.startswith("Cpus_allowed_list"))
            assert allowed == str(process.cores[0]) and len(process.cores) == 1
        if len(pool.bot_cores) >= 2:
            assert processes[0].cores != processes[1].cores
    finally:
        for process in processes:
            stops.kill_tree(process)
    assert all(count == 0 for count in pool.holders.values())     # given back once reaped


@pytest.mark.e2e
def test_memory_cap_makes_the_hog_fail_not_the_runner(tmp_path):
    hog = script(tmp_path, "hog.py", """\
        import os, sys
        print("ready", flush=True)
        try:
            block = bytearray(600 << 20)
        except MemoryError:
            print("MemoryError", flush=True)
            sys.exit(1)
        print("allocated", flush=True)
        """)
    process = run_to_end([sys.executable, str(hog)], isolation.Isolation(memory_mb=200,
                                                                          sandbox=False),
                         tmp_path / "hog.log")
    assert process.returncode == 1
    assert "MemoryError" in (tmp_path / "hog.log").read_text()


@pytest.mark.e2e
def test_hog_loses_an_isolated_series_that_completes(tmp_path, capsys):
    hog = script(tmp_path, "hog.py", """\
        import os, sys, time
        name, directory = sys.argv[1:3]
        print("ready", flush=True)
        while not os.path.exists(os.path.join(directory, name + ".go")):
            time.sleep(0.01)
        block = bytearray(600 << 20)        # over the cap: MemoryError, a crash
        """)
    out = tmp_path / "out"
    code = match.main([*QUICK, "random", f"{sys.executable} {hog} {{name}} {{dir}}", "--games", "2",
                       "--time-limit", "0.5", "--seed", "4", "--out", str(out), "--isolate",
                       "--isolate-memory", "200"])
    assert code == 0
    games = read_lines(out)
    assert len(games) == 2
    for game in games:
        assert game["winner"] == "Random1" and game["loser"] == "Hog2"
        assert game["notes"]["Hog2"].startswith("crashed")
    assert "MemoryError" in (out / "logs" / "game-0001-Hog2.log").read_text()
    assert "; cores: 1 per bot" in capsys.readouterr().out


def test_bad_isolation_option_is_one_line(capsys):
    with pytest.raises(SystemExit) as stop:
        match.main([*QUICK, "random", "random", "--isolate", "--isolate-memory", "-5"])
    assert stop.value.code == 2
    assert "--isolate-memory: must be an integer from 0" in capsys.readouterr().err


# -- the sandbox --------------------------------------------------------------------------------

@pytest.mark.e2e
@needs_bwrap
def test_sandboxed_bot_cannot_reach_the_network(tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    caller = (f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), 5)\n"
              "    print('connected')\nexcept OSError as error:\n    print('blocked', error)\n")
    log = tmp_path / "caller.log"
    try:
        process = run_to_end([sys.executable, "-c", caller], isolation.Isolation(), log)
        with pytest.raises(socket.timeout):
            server.accept()
    finally:
        server.close()
    assert process.returncode == 0 and log.read_text().startswith("blocked")


@pytest.mark.e2e
def test_without_bwrap_isolation_is_partial_and_bots_still_run(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap", lambda: (None, "bwrap not found"))
    line = contain.status_line(isolation.Isolation())
    assert "no sandbox (bwrap not found): isolation is partial" in line
    process = run_to_end([sys.executable, "-c", "print('ran')"], isolation.Isolation(),
                         tmp_path / "plain.log")
    assert process.returncode == 0 and "ran" in (tmp_path / "plain.log").read_text()


@pytest.mark.e2e
def test_missing_program_cannot_be_launched_as_without_isolation(tmp_path):
    with pytest.raises(FileNotFoundError):
        contain.start(["/nonexistent/bot"], NO_SANDBOX)
    assert all(count == 0 for count in cgroups.core_pool().holders.values())


# -- whole series ---------------------------------------------------------------------------------

@pytest.mark.e2e
def test_isolated_series_of_our_agent_records_usage(tmp_path, capsys):
    out = tmp_path / "out"
    assert match.main([*QUICK, "agent:depth=2", "random", "--games", "2", "--time-limit", "0.5",
                       "--seed", "5", "--out", str(out), "--isolate"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("-- usage: ") == 2 and "; cores: 1 per bot" in printed
    for game in read_lines(out):
        assert game["result"] in ("win", "tie") and game["notes"] == {}
        assert set(game["usage"]) == {"Agent1", "Random2"}
        assert all(figures["peak_mb"] > 0 for figures in game["usage"].values())


@pytest.mark.e2e
def test_isolated_stdio_series_completes(tmp_path, capsys):
    out = tmp_path / "out"
    assert stdio.main([*QUICK, "agent:depth=2", "random", "--games", "2", "--seed", "5",
                       "--out", str(out), "--isolate"]) == 0
    games = read_lines(out)
    assert len(games) == 2 and all(set(g["usage"]) == {"Agent1", "Random2"} for g in games)
    assert capsys.readouterr().out.count("-- usage: ") == 2


@pytest.mark.e2e
def test_isolated_tournament_records_usage(tmp_path, capsys):
    from ref_sim import tournament

    out = tmp_path / "out"
    assert tournament.main([*QUICK, "random", "random", "--time-limit", "0.5", "--seed", "6",
                            "--out", str(out), "--isolate", "-q"]) == 0
    games = read_lines(out)
    assert len(games) == 2 and all(set(g["usage"]) == {"Random1", "Random2"} for g in games)


# -- what a sandboxed bot sees: its own submission and its own game -------------------------------

#: A spy: reports, in its log, every file of ``PATHS`` it could read and what it could list of
#: each folder of ``LISTED``; then sleeps (it loses on time) so that the series goes on.
SPY = """\
    import json, os, sys, time
    for path in {paths!r}:
        try:
            with open(path, "rb") as handle:
                print("READ", path, handle.read(40), flush=True)
        except OSError as error:
            print("BLOCKED", path, error.strerror, flush=True)
    for folder in {listed!r}:
        try:
            print("LISTED", folder, json.dumps(sorted(os.listdir(folder))), flush=True)
        except OSError as error:
            print("BLOCKED", folder, error.strerror, flush=True)
    time.sleep(60)
    """


def spy_said(log) -> tuple[list[str], dict]:
    """(the paths it read, ``{folder: names}`` it listed) of a spy's log."""
    lines = log.read_text().splitlines()
    read = [line.split()[1] for line in lines if line.startswith("READ ")]
    listed = {line.split()[1]: json.loads(line.split(" ", 2)[2]) for line in lines
              if line.startswith("LISTED ")}
    assert any(line.startswith("BLOCKED ") for line in lines), lines     # it ran
    return read, listed


@pytest.mark.e2e
@needs_bwrap
def test_a_spy_run_from_the_class_folder_reads_no_one_elses_files(tmp_path, monkeypatch, capsys):
    # The documented workflow: the instructor runs the tournament in the class folder, each
    # team's code in a folder of its own there, --out inside it. The spy (team 1) tries another
    # team's folder, the runner's folder and --out: games.jsonl exists by its second game.
    from ref_sim import tournament

    course = tmp_path / "class"
    (course / "team2").mkdir(parents=True)
    (course / "team2" / "secret.py").write_text("KEY = 'team2-secret'\n")
    (course / "notes.txt").write_text("grades\n")
    (course / "team1").mkdir()
    out = course / "out"
    paths = [str(course / "team2" / "secret.py"), str(course / "notes.txt"),
             str(out / "games.jsonl"), str(out / "tournament.json"),
             str(out / "logs" / "game-0001-Random2.log")]
    script(course / "team1", "spy.py", SPY.format(paths=paths, listed=[str(course), str(out),
                                                                       str(out / "logs")]))
    bots = course / "bots"
    bots.mkdir()
    (bots / "team1.bot").write_text("name=Spy:python3 team1/spy.py {name} {dir}\n")
    monkeypatch.chdir(course)
    assert tournament.main([*QUICK, "random", "--bots", "bots", "--time-limit", "0.2", "--seed",
                            "7", "--out", "out", "--isolate", "-q"]) == 0
    assert (out / "games.jsonl").exists() and (course / "team2" / "secret.py").exists()
    for number in (1, 2):
        read, listed = spy_said(out / "logs" / f"game-{number:04d}-Spy.log")
        assert read == []
        seen = {name for names in listed.values() for name in names}
        assert not seen & {"team2", "notes.txt", "bots", "games.jsonl", "tournament.json"}, listed
        # Of logs/ only its own files of this game (its ready file), never another bot's log.
        assert all(name.startswith(f"game-{number:04d}-Spy.") for name in listed[str(out / "logs")])
    capsys.readouterr()


@pytest.mark.e2e
@needs_bwrap
def test_a_bot_line_ending_in_a_double_slash_sees_no_host_root(tmp_path, capsys):
    # os.path.abspath('//') stays '//': it passed the check for '/' and bwrap bound the host's
    # whole root. A path merely named on a bot's line is never shown now.
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret\n")
    (tmp_path / "team").mkdir()
    spy = script(tmp_path / "team", "spy.py",
                 SPY.format(paths=[str(secret), f"/proc/{os.getpid()}/cmdline", "/etc/hostname"],
                            listed=["/run", str(tmp_path)]))
    out = tmp_path / "out"
    assert match.main([*QUICK, "random", f"name=Spy:python3 {spy} {{name}} {{dir}} //",
                       "--games", "1", "--time-limit", "0.2", "--seed", "8", "--out", str(out),
                       "--isolate", "-q"]) == 0
    read, listed = spy_said(out / "logs" / "game-0001-Spy.log")
    assert read == [] and listed.get("/run") in (None, [])
    assert "secret.txt" not in listed.get(str(tmp_path), [])
    capsys.readouterr()


@pytest.mark.e2e
@needs_bwrap
def test_a_bot_whose_program_is_the_root_is_refused_in_one_line_naming_it(tmp_path, capsys):
    out = tmp_path / "out"
    assert match.main([*QUICK, "random", "name=Spy:python3 //", "--games", "1", "--time-limit",
                       "0.2", "--out", str(out), "--isolate", "-q"]) != 0
    said = [line for line in capsys.readouterr().err.splitlines() if "Spy" in line]
    assert len(said) == 1 and "Spy could not start" in said[0], said
    assert "--isolate will not show python3's program /: it is the whole file system" in said[0]


@pytest.mark.e2e
@needs_bwrap
def test_what_the_instructor_shares_every_bot_reads(tmp_path):
    shared = tmp_path / "course-lib"
    shared.mkdir()
    (shared / "weights.txt").write_text("weights\n")
    (tmp_path / "beside.txt").write_text("not shared\n")
    (tmp_path / "team").mkdir()
    spy = script(tmp_path / "team", "spy.py", SPY.replace("time.sleep(60)", "").format(
        paths=[str(shared / "weights.txt"), str(tmp_path / "beside.txt")], listed=[]))
    log = tmp_path / "spy.log"
    process = run_to_end([sys.executable, str(spy)], isolation.Isolation(share=(str(shared),)),
                         log)
    read, _ = spy_said(log)
    assert process.returncode == 0 and read == [str(shared / "weights.txt")]


@pytest.mark.skipif(os.name != "posix", reason="--isolate is refused off POSIX (cgroups, bwrap, resource limits)")
def test_a_share_is_refused_where_it_would_open_the_host_and_kept_on_resume(tmp_path, capsys,
                                                                           monkeypatch):
    monkeypatch.chdir(tmp_path)
    for path in ("//", "/./proc", ".", os.path.expanduser("~")):
        with pytest.raises(SystemExit) as stop:
            match.main([*QUICK, "random", "random", "--isolate", "--isolate-share", path])
        assert stop.value.code == 2
        assert f"--isolate-share {path}: " in capsys.readouterr().err
    (tmp_path / "lib").mkdir()
    isolate = isolation.Isolation(share=(str(tmp_path / "lib"),))
    recorded = isolation.recorded_setting(isolate)
    assert recorded["share"] == [str(tmp_path / "lib")]
    assert isolation.from_record(json.loads(json.dumps(recorded))) == isolate
    assert isolation.command_options(isolate)[-2:] == ["--isolate-share", str(tmp_path / "lib")]
