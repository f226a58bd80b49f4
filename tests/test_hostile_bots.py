"""Hostile bots against the real runners: each case of
tests/bots/hostile_files.py plays one short game under ``uttt-match`` or ``uttt-stdio``, and the
test checks what the runner must keep: nothing written outside the game directory, a verdict at
the time limit instead of a hang, a bounded read, and no process of a bot left once its game is
over, isolated or not. The decisions themselves are tables in tests/test_file_referee.py; the
shell's reads and writes, tests/test_hostile_directory.py. With bwrap installed, the ``--isolate``
cases run in its sandbox; without it, with the rest of ``--isolate``."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ref_sim import match, stdio
from ref_sim.referees.file_shell import MOVE_READ_LIMIT
from ref_sim.referees.file_referee import INVALID_MOVE, TIME_OUT
from scripts.processes import carrying, kill, marked

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(os.name != "posix", reason="the hostile bots need POSIX (fork, FIFOs)")]

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "tests" / "bots" / "hostile_files.py"
PY = sys.executable
#: Short waits: a hostile bot that never says anything is not waited for long.
QUICK = ["--startup-wait", "1", "--exit-wait", "1"]
#: Only guards against a hang; nothing is timed.
PATIENCE = 60.0


def hostile(case: str, *args: str) -> str:
    """The command of the hostile bot playing ``case`` in a file-protocol series."""
    return " ".join([PY, str(BOT), case, "{name}", "{dir}", *args])


def one_game(out: Path, bot: str, *options: str, limit: str = "0.3") -> dict:
    """One game of the random player against ``bot`` under ``uttt-match``; its games.jsonl line."""
    assert match.main(["random", bot, "--games", "1", "--time-limit", limit, "--seed", "1",
                       "--out", str(out), "-q", *QUICK, *options]) == 0
    (line,) = (out / "games.jsonl").read_text().splitlines()
    return json.loads(line)


def hostile_side(game: dict) -> str:
    return game["agents"][1]["name"]


def planted(out: Path, name: str) -> str:
    """What the hostile bot says it did (its log), so that no case passes without the attack."""
    log = (out / "logs" / f"game-0001-{name}.log").read_text(errors="replace")
    said = re.findall(r"planted: (.*) at \d", log)
    assert said, log
    return said[0]


# -- item 1: the game directory is hostile ground ----------------------------------------------

@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links")
def test_symbolic_links_planted_where_the_referee_writes_are_never_written_through(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    names = ("first_four_moves", "end_game")
    for name in names:
        (outside / name).write_text("the user's own file\n")
    out = tmp_path / "out"
    game = one_game(out, hostile("plant", str(outside)))
    side = hostile_side(game)
    (outside / f"{side}.go").write_text("the user's own file\n")    # its .go: planted too
    assert planted(out, side).startswith("symbolic links")
    # It never moves (and its planted end_game may stop the other side first): a loss on time,
    # which end_game said in the game directory, not outside.
    assert (game["result"], game["reason"]) == ("win", TIME_OUT)
    for entry in outside.iterdir():
        assert entry.read_text() == "the user's own file\n", entry.name
    assert sorted(p.name for p in outside.iterdir()) == sorted([*names, f"{side}.go"])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_at_move_file_loses_invalid_move_at_the_limit_with_a_hint(tmp_path):
    out = tmp_path / "out"
    game = one_game(out, hostile("fifo"))
    side = hostile_side(game)
    assert planted(out, side) == "fifo move_file"
    assert (game["result"], game["loser"], game["reason"]) == ("win", side, INVALID_MOVE)
    assert game["hints"] == {side: f"at {side}'s turn move_file was a FIFO (named pipe), not a file "
                                   "a move can be read from: Invalid move! (docs/protocol.md, section 10)"}
    assert not (out / "game-0001").exists()         # the clean-up took the FIFO too


@pytest.mark.parametrize("case, found", [("directory", "a directory"), ("devzero", "a symbolic link")])
def test_a_directory_or_a_link_to_a_device_at_move_file_is_not_read(tmp_path, case, found):
    out = tmp_path / "out"
    game = one_game(out, hostile(case))
    side = hostile_side(game)
    assert planted(out, side) == f"{case} move_file"
    assert (game["loser"], game["reason"]) == (side, INVALID_MOVE)
    assert f"move_file was {found}," in game["hints"][side]
    record = json.loads((out / "logs" / "game-0001.json").read_text())
    assert record["unreadable"] == found and record["bad_line"] is None
    if case == "devzero":                           # the link itself went with the clean-up
        assert not (out / "game-0001").exists()


def test_a_huge_sparse_move_file_is_judged_on_a_bounded_read(tmp_path):
    size = 16 << 20                                 # sparse: no disk used
    out = tmp_path / "out"
    game = one_game(out, hostile("sparse", str(size)))
    side = hostile_side(game)
    assert (game["loser"], game["reason"]) == (side, INVALID_MOVE)
    assert f"a file of {size:,} bytes with no blank line in its first 64 KiB" in game["hints"][side]


def test_past_a_blank_line_a_large_move_file_is_never_read(tmp_path):
    # The move line, a blank line, then zeros to 8 MB and a byte no UTF-8 decoder takes: read
    # whole, the file crashes the referee (an aborted game); read to the bound, the line is judged.
    out = tmp_path / "out"
    game = one_game(out, hostile("sparse", str(8 << 20), "'{name} 9 9'"), "--encoding", "utf-8")
    side = hostile_side(game)
    assert 8 << 20 > MOVE_READ_LIMIT
    assert (game["result"], game["loser"], game["reason"]) == ("win", side, INVALID_MOVE)
    assert game["bad_line"] == f"{side} 9 9\n" and game["hints"] == {}


# -- item 3: nothing a bot starts outlives its game ---------------------------------------------

@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, and a keeper needs Linux")
@pytest.mark.parametrize("isolate", [False, True], ids=["plain", "isolated"])
def test_setsid_and_double_forked_children_end_with_their_file_protocol_game(tmp_path, isolate):
    mark = f"uttt-daemon-{uuid.uuid4().hex}"
    try:
        game = one_game(tmp_path / "out", hostile("daemons", mark),
                        *(["--isolate", "--isolate-memory", "0"] if isolate else []))
        assert game["result"] in ("win", "tie")
        assert planted(tmp_path / "out", hostile_side(game)).startswith("two daemons")
        assert marked(mark) == []
    finally:
        kill(marked(mark))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, and a keeper needs Linux")
@pytest.mark.parametrize("isolate", [False, True], ids=["plain", "isolated"])
def test_setsid_and_double_forked_children_end_with_their_stdio_game(tmp_path, isolate):
    mark = f"uttt-daemon-{uuid.uuid4().hex}"
    out = tmp_path / "out"
    try:
        assert stdio.main(["random", f"{PY} {BOT} daemons-stdio - - {mark}", "--games", "1",
                           "--seed", "1", "--out", str(out), "-q", "--turn-ms", "200",
                           "--first-turn-ms", "1000", *QUICK,
                           *(["--isolate", "--isolate-memory", "0"] if isolate else [])]) == 0
        (line,) = (out / "games.jsonl").read_text().splitlines()
        game = json.loads(line)
        assert game["result"] in ("win", "tie"), game
        assert planted(out, hostile_side(game)).startswith("two daemons")
        assert marked(mark) == []
    finally:
        kill(marked(mark))


# -- a runner stopped while a hostile bot holds its game ---------------------------------------

@pytest.mark.skipif(not (hasattr(os, "mkfifo") and sys.platform.startswith("linux")),
                    reason="FIFOs and /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_runner_stopped_during_a_fifo_turn_ends_at_once_leaving_nothing(tmp_path, signum):
    # A 30 s limit: the FIFO would be judged only then. The runner is stopped long before, while
    # its referee waits on the FIFO's turn: it ends, ends its bots (isolated: their scratch
    # folders go too) and leaves nothing in its TMPDIR.
    temp, out, token = tmp_path / "tmp", tmp_path / "out", uuid.uuid4().hex
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "UTTT_HOSTILE_RUN": token}
    runner = subprocess.Popen([PY, "-m", "ref_sim.match", "random", hostile("fifo"), "--games", "1",
                               "--time-limit", "30", "--seed", "1", "--out", str(out), *QUICK,
                               "--isolate", "--isolate-memory", "0"],
                              cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + PATIENCE
        while not any("planted: fifo" in log.read_text(errors="replace")
                      for log in (out / "logs").glob("game-0001-*.log")):
            assert runner.poll() is None and time.monotonic() < deadline, runner.communicate()
            time.sleep(0.05)
        runner.send_signal(signum)
        _, err = runner.communicate(timeout=PATIENCE)
        assert runner.returncode == 128 + signum, err
        assert "Traceback" not in err
        while carrying("UTTT_HOSTILE_RUN", token) and time.monotonic() < deadline:
            time.sleep(0.05)                        # (a killed process takes a moment to go)
        assert carrying("UTTT_HOSTILE_RUN", token) == []
        assert os.listdir(temp) == []
    finally:
        kill(carrying("UTTT_HOSTILE_RUN", token))
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
            runner.communicate()
