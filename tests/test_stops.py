"""Runners stop cleanly on SIGTERM, SIGHUP and SIGINT: real series, real signals.

Each runner is started as a real process in a session of its own, given a signal once a game is
under way, and then checked: the exit code (128 + the signal), the summary of the games so far,
one line on stderr with the command that continues the series (run as printed, it does), no
process left that the runner started (every player carries ``UTTT_RUNNER_PID``, so /proc tells
which processes a runner started, its players' children included) and no temporary folder left
(each runner gets a TMPDIR of its own).  A runner killed outright (SIGKILL) cannot clean up: its
random agents end by themselves.  No timing is asserted: the timeouts only guard against hangs.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ref_sim import stops
from ref_sim.series.process.keeper import KEEPER as KEEPER_PATH
from agent.lifeline import RUNNER_ENV

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
#: A keeper's command line holds its program's path.
KEEPER = KEEPER_PATH.encode()
#: Only guards against a hang; nothing is timed.
PATIENCE = 120.0

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not sys.platform.startswith("linux"),
                                                  reason="POSIX signals and /proc")]

#: Windows has no SIGHUP: the tests skip there (pytestmark), but the module must still import
#: (test_tournament.py takes these from it).
SIGHUP = getattr(signal, "SIGHUP", None)
SIGNALS = [signal.SIGTERM, SIGHUP, signal.SIGINT]
SIGNAL_IDS = ["SIGTERM", "SIGHUP", "SIGINT"]

#: The random file-protocol player behind a shell that first starts a child of its own (a
#: student's helper process): the runner must kill the whole process group to end that child.
SHELL_RANDOM = ("sh -c 'sleep 300 & exec \"$0\" -m ref_sim.bots.random_agent \"$1\" --dir \"$2\" "
                "--seed \"$3\"' {python} {name} {dir} {seed}")
#: A slow stdin/stdout player with a child of its own: the first valid action after 20 ms.
SLOW_BOT = """\
import subprocess, sys, time
subprocess.Popen(["sleep", "300"])
print("ready", file=sys.stderr, flush=True)
while True:
    if not sys.stdin.readline():
        break
    actions = [sys.stdin.readline().strip() for _ in range(int(sys.stdin.readline()))]
    time.sleep(0.02)
    print(actions[0], flush=True)
"""


def started_by(pid: int, keepers: bool = False) -> list[int]:
    """The live processes (not zombies) whose environment names ``pid`` as their runner: the
    players and their children, and with ``keepers`` the players' keepers (ref_sim.series.process.keeper)."""
    needle = f"{RUNNER_ENV}={pid}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environment = handle.read().split(b"\0")
            with open(f"/proc/{entry}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                keeper = KEEPER in handle.read()
        except OSError:
            continue
        if needle in environment and state != b"Z" and (keepers or not keeper):
            found.append(int(entry))
    return found


def wait_until(condition, what: str):
    deadline = time.monotonic() + PATIENCE
    while not (value := condition()):
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.05)
    return value


@pytest.fixture(autouse=True)
def no_leftovers():
    """Whatever a test leaves running when it fails is ended, by process id."""
    yield
    for run in Run.started:
        for pid in started_by(run.pid, keepers=True) + ([run.pid] if run.process.poll() is None else []):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    Run.started.clear()


class Run:
    """A runner in a session of its own, its output read as it comes."""

    started: list[Run] = []

    def __init__(self, argv, temp: Path, shell: bool = False) -> None:
        temp.mkdir(exist_ok=True)
        self.temp = temp
        env = dict(os.environ, TMPDIR=str(temp), PYTHONUNBUFFERED="1")
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        stdin=subprocess.DEVNULL, text=True, cwd=ROOT, env=env,
                                        shell=shell, start_new_session=True)
        self.out: list[str] = []
        self.err: list[str] = []
        self.readers = [threading.Thread(target=self._read, args=(stream, lines), daemon=True)
                        for stream, lines in ((self.process.stdout, self.out),
                                              (self.process.stderr, self.err))]
        for reader in self.readers:
            reader.start()
        Run.started.append(self)

    @staticmethod
    def _read(stream, lines) -> None:
        for line in stream:
            lines.append(line)

    @property
    def pid(self) -> int:
        return self.process.pid

    def wait_for(self, pattern: str) -> None:
        wait_until(lambda: any(re.search(pattern, line) for line in self.out)
                   or self.process.poll() is not None, pattern)
        assert self.process.poll() is None, "".join(self.out + self.err)

    def stop(self, signum: int) -> tuple[int, str, str]:
        """Send ``signum``; returns (exit code, stdout, stderr) once it has exited."""
        self.process.send_signal(signum)
        try:
            code = self.process.wait(PATIENCE)
        except subprocess.TimeoutExpired:
            os.killpg(self.pid, signal.SIGKILL)
            raise
        for reader in self.readers:
            reader.join(PATIENCE)
        return code, "".join(self.out), "".join(self.err)


def assert_stopped(run: Run, signum: int, code: int, err: str, logs: Path | None) -> str:
    """The common checks; returns the last stderr line (the stop line).  Every process the
    runner started has ended (the children of its players too: a signal takes a moment to land,
    hence the wait), killed by the runner: none had to find out by itself that its runner was
    gone (it would have said so in its log)."""
    assert code == 128 + signum, err
    assert "Traceback" not in err, err
    wait_until(lambda: not started_by(run.pid, keepers=True), "the runner's processes to end")
    if logs is not None:
        for log in logs.glob("*.log"):
            assert "is gone" not in log.read_text(errors="replace"), log
    return err.strip().splitlines()[-1]


def resume_command(line: str) -> str:
    """The command a stop line gives, for a shell to run as printed (exec: the shell becomes
    the runner, so that the signals of the test reach the runner itself)."""
    command = line.partition("; continue the series with: ")[2]
    assert command, line
    return "exec " + command


# -- ref_sim.match ----------------------------------------------------------------------------

@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_a_stopped_match_ends_its_agents_and_resumes_as_printed(signum, tmp_path):
    out = tmp_path / "series"
    keep = signum != signal.SIGHUP          # one run without --out: its temporary folder goes
    run = Run([PY, "-m", "ref_sim.match", "agent:depth=1", SHELL_RANDOM, "--games", "20",
               "--time-limit", "0.3", "--seed", "1"] + (["--out", str(out)] if keep else []),
              tmp_path / "tmp")
    run.wait_for(r"^Game 1/20: ")
    # A game is under way: our agent, the shell's random agent and its sleeping child.
    wait_until(lambda: len(started_by(run.pid)) >= 3, "game 2's three processes")
    code, stdout, err = run.stop(signum)
    line = assert_stopped(run, signum, code, err, out / "logs" if keep else None)
    said = "Interrupted" if signum == signal.SIGINT else f"Stopped by {signal.Signals(signum).name}"
    played = int(re.match(rf"{said} after (\d+) games?", line).group(1))
    assert played >= 1 and "Score of Agent1 vs Sh2: " in stdout
    assert f"] {played}\n" in stdout and f"Distinct games: {played} of {played}" in stdout
    assert os.listdir(run.temp) == []                      # no uttt-match-* folder left
    if not keep:
        assert line.endswith("(the series was in a temporary directory, now deleted: with "
                             "--out DIR it can be continued)")
        return
    assert len((out / "games.jsonl").read_text().splitlines()) == played
    # The printed command, run as printed by a shell, continues the series where it stopped.
    again = Run(resume_command(line), tmp_path / "tmp", shell=True)
    again.wait_for(rf"^resuming: {played} of 20 games already played")
    code, stdout, err = again.stop(signal.SIGTERM)
    line = assert_stopped(again, signal.SIGTERM, code, err, out / "logs")
    assert re.match(r"Stopped by SIGTERM after \d+ games?; continue the series with: ", line)
    assert os.listdir(run.temp) == []


def test_a_stop_before_the_first_game_of_a_resumed_series_says_how_to_continue(tmp_path, capsys):
    # The window between "resuming:" and the first game (the series being set up): a user who
    # stops there gets the line that continues the series, as between games. Met by
    # test_a_stopped_match_ends_its_agents_and_resumes_as_printed on a loaded machine, where the
    # resumed run's stop came before its first game and ended as "stopped by SIGTERM" alone.
    from ref_sim import match

    out = tmp_path / "series"
    assert match.main(["random", "random", "--games", "2", "--time-limit", "0.2", "--seed", "1",
                       "--out", str(out), "-q"]) == 0
    capsys.readouterr()

    class StoppedWhileSettingUp(match.Match):
        def series(self, *args):
            raise stops.Stopped(signal.SIGTERM)

    assert StoppedWhileSettingUp().main(["--resume", "--out", str(out), "--games", "4"]) == 128 + signal.SIGTERM
    said = capsys.readouterr()
    assert "resuming: 2 of 4 games already played, 2 to go" in said.out
    line = said.err.strip().splitlines()[-1]
    assert re.match(r"Stopped by SIGTERM after 2 games; continue the series with: .*--resume", line), said.err
    assert len((out / "games.jsonl").read_text().splitlines()) == 2


def test_a_match_runner_killed_outright_leaves_no_agent_waiting(tmp_path):
    # SIGKILL: the runner cannot clean up; its random agents see it gone and end by themselves.
    out = tmp_path / "series"
    run = Run([PY, "-m", "ref_sim.match", "random", "random", "--games", "20", "--time-limit",
               "0.3", "--seed", "2", "--out", str(out)], tmp_path / "tmp")
    run.wait_for(r"^Game 1/20: ")
    players = wait_until(lambda: started_by(run.pid) if len(started_by(run.pid)) == 2 else None,
                         "game 2's two agents")
    run.process.kill()
    run.process.wait(PATIENCE)
    wait_until(lambda: not any(started_by(run.pid, keepers=True)), "the random agents to end by themselves")
    assert set(players) >= set(started_by(run.pid))
    for name in ("Random1", "Random2"):
        log = (out / "logs" / f"game-0002-{name}.log").read_text()
        assert f"the series runner that started me (pid {run.pid}) is gone" in log, log


# -- ref_sim.stdio ----------------------------------------------------------------------------

@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_a_stopped_stdio_series_ends_its_programs_and_resumes_as_printed(signum, tmp_path):
    bot = tmp_path / "slow_bot.py"
    bot.write_text(SLOW_BOT)
    out = tmp_path / "series"
    keep = signum != signal.SIGHUP
    run = Run([PY, "-m", "ref_sim.stdio", "random", f"{PY} {bot}", "--games", "40", "--seed", "1",
               "--turn-ms", "1000"] + (["--out", str(out)] if keep else []), tmp_path / "tmp")
    run.wait_for(r"^Game 1/40: ")
    # A game is under way: the random player, the bot and the bot's child.
    wait_until(lambda: len(started_by(run.pid)) >= 3, "game 2's three processes")
    code, stdout, err = run.stop(signum)
    line = assert_stopped(run, signum, code, err, out / "logs" if keep else None)
    played = int(re.search(r" after (\d+) games?", line).group(1))
    assert played >= 1 and "Score of Random1 vs Slowbot2: " in stdout and f"] {played}\n" in stdout
    assert os.listdir(run.temp) == []                      # no uttt-stdio-* folder left
    if not keep:
        assert "now deleted: with --out DIR it can be continued" in line
        return
    assert len((out / "games.jsonl").read_text().splitlines()) == played
    again = Run(resume_command(line), tmp_path / "tmp", shell=True)
    again.wait_for(rf"^resuming: {played} of 40 games already played")
    code, stdout, err = again.stop(signal.SIGTERM)
    assert_stopped(again, signal.SIGTERM, code, err, out / "logs")
    assert os.listdir(run.temp) == []


# -- ref_sim.arena and scripts/train_eval.py (in-process games) ---------------------------------

@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_a_stopped_arena_summarises_its_games(signum, tmp_path):
    run = Run([PY, "-m", "ref_sim.arena", "ttt", "alphabeta", "random", "--games", "100000",
               "--depth", "2", "-v"], tmp_path / "tmp")
    run.wait_for(r"^game 1: ")
    code, stdout, err = run.stop(signum)
    assert code == 128 + signum and "Traceback" not in err
    played = int(re.fullmatch(rf"python -m ref_sim\.arena: {stops.said(stops.Stopped(signum))} "
                              r"after (\d+) games?", err.strip()).group(1))
    assert "Score of alphabeta#1 vs random#2: " in stdout and f"] {played}\n" in stdout


TRAIN_EVAL = [PY, "-m", "scripts.train_eval"]     # Run's folder is the project's


def test_train_eval_generate_stops_keeps_its_games_and_continues_as_printed(tmp_path):
    data = tmp_path / "train"
    run = Run(TRAIN_EVAL + ["generate", "--dir", str(data), "--games", "100000", "--nodes", "30"],
              tmp_path / "tmp")
    wait_until(lambda: (data / "games.jsonl").exists()
               and (data / "games.jsonl").read_text().count("\n") >= 2, "two games")
    code, stdout, err = run.stop(signal.SIGTERM)
    assert code == 143 and "Traceback" not in err
    (line,) = err.strip().splitlines()
    kept = int(re.match(r"train_eval\.py: stopped by SIGTERM after (\d+) of 100000 games", line).group(1))
    assert (data / "games.jsonl").read_text().count("\n") == kept
    command = line.partition("the same command continues: ")[2]
    again = Run("exec " + command, tmp_path / "tmp", shell=True)
    again.wait_for(rf"^generate: games {kept}\.\.99999 ")
    code, _, err = again.stop(signal.SIGHUP)
    assert code == 129 and "stopped by SIGHUP after" in err


@pytest.mark.parametrize("step, signum, shows", [
    ("match", SIGHUP, "Score of fitted@200 vs classic@200: "),
    ("speed", signal.SIGINT, None),
], ids=["match-SIGHUP", "speed-SIGINT"])
def test_train_eval_steps_stop_in_one_line(step, signum, shows, tmp_path):
    nodes = "200" if step == "match" else "100000000"     # speed: a search that lasts
    run = Run(TRAIN_EVAL + [step, "--pairs", "1000", "--match-nodes", nodes], tmp_path / "tmp")
    run.wait_for(r"^  20 games: " if step == "match" else r"^speed: ")
    code, stdout, err = run.stop(signum)
    assert code == 128 + signum and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and err.startswith("train_eval.py: ")
    if shows:
        assert shows in stdout
