"""Ctrl-C stops the WebAssembly core as it stops the compiled one, in every command that searches:
``uttt-play``, ``uttt-arena``, ``uttt-replay --analyse`` (in this process and in a pool), and
``uttt-agent`` on both protocols. Real processes on ``UTTT_CORE=wasm``, a real SIGINT while they
search; each ends at once with its documented code and words, keeps what the compiled core keeps,
and says nothing of the "Exception ignored on calling ctypes callback function" that a handler run
in wasmtime-py's trampoline printed while the search went on to its limit (agent/core_wasm.py,
``_DeferredSignals``).

The times asserted are hang checks, far above what it takes (a fraction of a second): each search
here may think a minute, and stopping well before that is what is tested.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent import core
from ref_sim.views import analysis

ROOT = Path(__file__).resolve().parent.parent
from test_replay import file_protocol_line, random_game, write_series  # noqa: E402

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not core.wasm_available(), reason=core.wasm_unavailable_reason() or "runs"),
    pytest.mark.skipif(os.name != "posix", reason="POSIX signals and select() on pipes"),
]

#: What the bug printed (and the search went on).
IGNORED = "Exception ignored"
#: Far above a stop's fraction of a second, far below the minute each search may think.
STOPPED_WITHIN = 20.0


def default_sigint() -> None:
    """The child's Ctrl-C at its default: under ``nohup`` or in a background job it would start
    with SIGINT ignored, and so would never see the signal this test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Command:
    """A command run on the WebAssembly core, its output read as it comes."""

    def __init__(self, args: list[str], stdin_text: str = "") -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT), **{core.CORE_ENV: "wasm"})
        # A session of its own: a failure kills whatever it started too (the analysis' pool).
        self.process = subprocess.Popen([sys.executable, *args], cwd=ROOT, env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        preexec_fn=default_sigint, start_new_session=True)
        self.out = self.err = ""
        if stdin_text:
            # Kept open: a closed stdin is an abandoned game, not an interrupt.
            self.process.stdin.write(stdin_text.encode())
            self.process.stdin.flush()

    def wait_for(self, ready, timeout: float = 120.0) -> None:
        """Read until ``ready(out, err)``; a hang check, not a timing (start-up on a loaded machine)."""
        streams = {self.process.stdout.fileno(): "out", self.process.stderr.fileno(): "err"}
        end = time.monotonic() + timeout
        while not ready(self.out, self.err):
            assert time.monotonic() < end and self.process.poll() is None, (self.out, self.err)
            for fd in select.select(list(streams), [], [], 0.1)[0]:
                text = os.read(fd, 65536).decode(errors="replace")
                setattr(self, streams[fd], getattr(self, streams[fd]) + text)

    def interrupt(self) -> float:
        """Ctrl-C; the seconds it took to exit (its code in ``code``, all it wrote in out, err)."""
        self.process.send_signal(signal.SIGINT)
        started = time.monotonic()
        try:
            out, err = self.process.communicate(timeout=120)
        finally:
            self.end()
        self.out, self.err = self.out + out.decode(errors="replace"), self.err + err.decode(errors="replace")
        self.code = self.process.returncode
        assert IGNORED not in self.err and "Traceback" not in self.err, self.err
        return time.monotonic() - started

    def end(self) -> None:
        if self.process.returncode is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except OSError:
                pass
            self.process.communicate()


@pytest.fixture
def command():
    started = []

    def start(args, stdin_text=""):
        started.append(Command(args, stdin_text))
        return started[-1]

    yield start
    for each in started:
        each.end()


def test_play_stops_thinking(command):
    play = command(["-m", "ref_sim.play", "uttt", "--first", "engine", "--time-limit", "60"])
    play.wait_for(lambda out, err: "you are O" in out)
    time.sleep(0.5)  # into the engine's first move
    assert play.interrupt() < STOPPED_WITHIN
    assert play.code == 130, play.err
    assert play.err.strip().splitlines() == ["python -m ref_sim.play: interrupted"]
    assert "Engine plays" not in play.out


def test_arena_stops_and_reports_the_games_played(command):
    # Ten games of 0.1 s a move: a minute, were the interrupt lost. Small tables: a game's
    # engines are made in a moment, and the second game is searching a second after the first.
    engine = "alphabeta:hash_mb=16"
    arena = command(["-m", "ref_sim.arena", "uttt", engine, engine, "--games", "10", "--seconds", "0.1", "-v"])
    arena.wait_for(lambda out, err: "game 1:" in out)
    time.sleep(1)
    assert arena.interrupt() < STOPPED_WITHIN
    assert arena.code == 130, arena.err
    assert re.fullmatch(r"python -m ref_sim.arena: interrupted after [12] games?", arena.err.strip()), arena.err
    played = int(arena.err.split("after ")[1].split()[0])
    assert len(re.findall(r"^game \d+:", arena.out, re.MULTILINE)) == played
    # The games played are kept: the summary of those.
    assert re.search(rf"^Score of {re.escape(engine)}#1 vs {re.escape(engine)}#2: .*\] {played}$", arena.out,
                     re.MULTILINE), arena.out


@pytest.mark.parametrize("jobs", ["1", "2"], ids=["in-process", "pool"])
def test_an_analysis_stops_and_keeps_the_positions_searched(command, tmp_path, jobs):
    folder = write_series(tmp_path / "run", [file_protocol_line(n, *random_game(n)) for n in (1, 2)])
    replay = command(["-m", "ref_sim.replay", str(folder), "--analyse", "--time", "0.2", "--jobs", jobs])
    # "  k/N": a tenth searched; the rest takes many seconds.
    replay.wait_for(lambda out, err: re.search(r"^\s+\d+/\d+$", err, re.MULTILINE))
    searched = int(re.search(r"^\s+(\d+)/(\d+)$", replay.err, re.MULTILINE).group(1))
    total = int(re.search(r"analysing (\d+) positions", replay.err).group(1))
    time.sleep(0.1)  # into the next position's search
    assert replay.interrupt() < STOPPED_WITHIN
    assert replay.code == 130, replay.err
    assert replay.err.strip().splitlines()[-1] == "python -m ref_sim.replay: interrupted"
    kept = json.loads((folder / analysis.CACHE_NAME).read_text())["settings"]["time=0.2 depth=None nodes=None"]
    assert searched <= len(kept) < total and f"kept the {len(kept)} positions searched" in replay.err
    assert not (folder / "replay.html").exists()


def test_the_agent_stops_thinking_on_the_file_protocol(command, tmp_path):
    game, log = tmp_path / "game", tmp_path / "Alice.log"
    game.mkdir()
    agent = command(["-m", "agent", "Alice", "--dir", str(game), "--time-limit", "60", "--log-file", str(log)])
    agent.wait_for(lambda out, err: log.exists() and "ready in" in log.read_text())
    (game / "move_file").write_text("")
    (game / "first_four_moves").write_text("Alice 6 2\nBob 2 4\nAlice 4 5\nBob 5 8\n")
    (game / "Alice.go").touch()
    agent.wait_for(lambda out, err: "search core: wasm" in log.read_text())
    time.sleep(0.5)  # into the search of its first move
    assert agent.interrupt() < STOPPED_WITHIN
    assert agent.code == 130, agent.err
    said = log.read_text()
    assert said.rstrip().endswith("WARNING interrupted") and IGNORED not in said, said
    assert (game / "move_file").read_text() == ""  # no move: the compiled core writes none either


def test_the_agent_stops_thinking_on_the_codingame_protocol(command):
    turn = "-1 -1\n81\n" + "".join(f"{row} {col}\n" for row in range(9) for col in range(9))
    agent = command(["-m", "agent", "--protocol", "codingame", "--first-turn-ms", "60000"], stdin_text=turn)
    agent.wait_for(lambda out, err: "search core: wasm" in err)
    time.sleep(0.5)  # into the search of its first move
    assert agent.interrupt() < STOPPED_WITHIN
    assert agent.code == 130, agent.err
    assert agent.err.rstrip().endswith("WARNING interrupted") and agent.out == ""
