"""An event can be checked before it starts (``uttt-tournament --check``), and a bot that cannot
start loses its games without stopping the event.

The bots are the habits an instructor met: a Python bot whose interpreter lacks a library, a name
hard-coded in the bot, a crash at the first move, a bot tuned for a longer limit, and a good one
(tests/bots/student_bot.py).  Time limits of 0.5 s: the slow bot takes three of them a move.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sys
from pathlib import Path

import pytest

from ref_sim import tournament
from ref_sim.views import crosstable
# The runner processes of tests/test_stops.py; no_leftovers is its autouse clean-up, here too.
from test_stops import SHELL_RANDOM, Run, assert_stopped, no_leftovers, started_by, wait_until  # noqa: F401

BOTS = Path(__file__).resolve().parent / "bots"
PY = sys.executable
GOOD = f"{PY} {BOTS / 'student_bot.py'} {{name}}"
OTTER = f"{PY} {BOTS / 'otter.py'}"            # answers to Otter.go only
LIMIT = "0.5"
WAITS = ["--startup-wait", "0.5", "--exit-wait", "1.3"]

#: A Python bot whose interpreter lacks a library it imports.
MISSING_MODULE = "import uttt_no_such_module  # noqa: F401\n"
#: Crashes once its turn comes (a bot that never sees its .go ends with the game all the same).
CRASHES = """\
import os, sys, time
deadline = time.monotonic() + 30
while not os.path.exists(sys.argv[1] + ".go") and time.monotonic() < deadline:
    time.sleep(0.005)
raise RuntimeError("boom at the first move")
"""
#: The good bot, but each move 1.5 s late: tuned for a longer limit than the event's.
SLOW = f"""\
import sys, time
sys.path.insert(0, {str(BOTS)!r})
import student_bot
write = student_bot.write_move
student_bot.write_move = lambda text: (time.sleep(1.5), write(text))
sys.exit(student_bot.main())
"""


def bot(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return f"{PY} {path} {{name}}"


def bots_list(tmp_path: Path, lines: list[str]) -> str:
    path = tmp_path / "bots.txt"
    path.write_text("# the class\n" + "\n".join(lines) + "\n")
    return str(path)


@pytest.mark.e2e
def test_check_says_for_each_bot_what_it_does_and_why_it_fails(tmp_path, capsys):
    listed = bots_list(tmp_path, [GOOD, bot(tmp_path, "numpybot", MISSING_MODULE), OTTER,
                                  bot(tmp_path, "crashbot", CRASHES), bot(tmp_path, "slowbot", SLOW)])
    assert tournament.main(["--bots", listed, "--check", "--time-limit", LIMIT, *WAITS]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("Checking 5 bots: each plays one game against the built-in random bot at "
                        "500 ms per move, 1 at once")
    text = "\n".join(lines)
    assert re.search(r"^ok   Studentbot1  starts, answers to its name, moves in time \(slowest "
                     r"\d+ ms of 500 ms\), exits at the end$", text, re.M), text
    assert re.search(r"^FAIL Numpybot2 +does not start: exited with code 1 before the game "
                     r"began\n +ModuleNotFoundError: No module named 'uttt_no_such_module'  "
                     r"\(game-0002-Numpybot2\.log\)$", text, re.M), text
    assert re.search(r"^FAIL Otter3 +starts; never moved: no move within 500 ms, nor within 2\.5 s "
                     r"in a second game; does it answer to the name it is given\?\n +hint: Otter3 never "
                     r"wrote move_file after its \.go.*is its name hard-coded\?", text, re.M), text
    assert re.search(r"^FAIL Crashbot4 +starts; crashed at its move 1: exited with code 1\n"
                     r" +RuntimeError: boom at the first move  \(game-0004-Crashbot4\.log\)$",
                     text, re.M), text
    assert re.search(r"^FAIL Slowbot5 +starts, answers to its name; moves too slowly: no move "
                     r"within 500 ms; given 2\.5 s its first took 1\.\d+ s$", text, re.M), text
    kept = re.search(r"^4 of 5 bots failed: fix them, .*; the logs: (\S+)$", text, re.M)
    assert kept, text
    # The failing bots' logs are kept (the check's folder is gone); the good bot's are not.
    logs = sorted(path.name for path in Path(kept.group(1)).iterdir())
    shutil.rmtree(kept.group(1))
    assert "game-0002-Numpybot2.log" in logs and "game-0004-Crashbot4.log" in logs
    assert not any("Studentbot1" in name for name in logs)


@pytest.mark.e2e
def test_check_passes_good_bots_and_writes_nothing_in_out(tmp_path, capsys):
    out = tmp_path / "event"
    assert tournament.main([GOOD, "random", "--check", "--time-limit", LIMIT, "--out", str(out),
                            *WAITS]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[-1] == "All 2 bots passed: they start, move in time and exit."
    assert text.count("\nok   ") == 2
    assert not out.exists()                 # a check plays nothing into the event's folder


@pytest.mark.e2e
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals and /proc")
def test_a_stopped_check_ends_its_bots_and_leaves_no_folder(tmp_path):
    # Bot 1 is a shell with a child of its own: the check must end its whole process group.
    run = Run([PY, "-m", "ref_sim.tournament", SHELL_RANDOM, "random", "--check",
               "--time-limit", LIMIT], tmp_path / "tmp")
    run.wait_for(r"^Checking 2 bots: ")
    wait_until(lambda: len(started_by(run.pid)) >= 3, "the first game's processes")
    code, _, err = run.stop(signal.SIGTERM)
    assert assert_stopped(run, signal.SIGTERM, code, err, None) == \
        "Stopped by SIGTERM: the check stopped"
    assert os.listdir(run.temp) == []               # no uttt-check-* folder, no logs kept


def test_check_is_not_for_a_cluster(capsys):
    with pytest.raises(SystemExit) as stopped:
        tournament.main(["random", "random", "--check", "--cluster", "tcp://127.0.0.1:1"])
    assert stopped.value.code == 2
    assert "--check plays each bot here, not on --cluster" in capsys.readouterr().err


def test_the_second_look_has_room_for_a_slow_first_move_and_the_examples_hold():
    import doctest
    from ref_sim.series import preflight
    assert doctest.testmod(preflight).failed == 0
    assert [preflight.second_look_limit(s) for s in (0.3, 0.5, 2, 10, 30)] == [2, 2.5, 10, 50, 60]


@pytest.mark.e2e
def test_a_bot_that_cannot_start_loses_its_games_and_the_event_goes_on(tmp_path, capsys):
    out = tmp_path / "event"
    missing = bot(tmp_path, "numpybot", MISSING_MODULE)
    assert tournament.main([GOOD, missing, "random", "--time-limit", LIMIT, "--seed", "2",
                            "--out", str(out), *WAITS]) == 0
    text = capsys.readouterr().out
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 6
    forfeits = [g for g in games if "Numpybot2" in g["names"]]
    assert len(forfeits) == 4 and all(
        g["result"] == "win" and g["loser"] == "Numpybot2" and g["reason"] == "could not start"
        and g["cannot_start"] == {"Numpybot2": "ModuleNotFoundError: No module named "
                                                "'uttt_no_such_module'"} for g in forfeits)
    assert all(g["result"] in ("win", "tie") and g["moves"] for g in games if g not in forfeits)
    why = "could not start (ModuleNotFoundError: No module named 'uttt_no_such_module')"
    assert re.search(rf"^Numpybot2: {re.escape(why)}; its 4 games scored as losses \(its output: "
                     r"game-\d{4}-Numpybot2\.log\)$", text, re.M), text
    row = next(line for line in text.splitlines() if re.match(r" +\d+ Numpybot2 ", line))
    assert row.split()[4:6] == ["4", "0.0%"] and row.endswith("[could not start: 4 games]")
    assert re.search(r"^Game \d/6: .* wins: Numpybot2 " + re.escape(why) + r" \[not played\]$", text, re.M)
    page = (out / crosstable.PAGE).read_text()
    assert "Numpybot2: 0 wins, 4 losses, 0 draws (could not start 4)" in page   # its Faults
    # The games are not left behind as folders, and their logs say why.
    assert sorted(path.name for path in out.iterdir() if path.name.startswith("game-")) == []
    assert "ModuleNotFoundError" in (out / "logs" / f"game-{forfeits[0]['game']:04d}-Numpybot2.log").read_text()


@pytest.mark.e2e
def test_two_bots_that_cannot_start_meet_in_a_game_that_is_not_rated(tmp_path, capsys):
    out = tmp_path / "event"
    missing = bot(tmp_path, "numpybot", MISSING_MODULE)
    assert tournament.main(["random", missing, missing, "--time-limit", LIMIT, "--seed", "2",
                            "--out", str(out), *WAITS]) == 0
    text = capsys.readouterr().out
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    both = [g for g in games if g["pairing"] == [1, 2]]
    assert [(g["result"], g["score"], sorted(g["cannot_start"])) for g in both] == [
        ("aborted", None, ["Numpybot2", "Numpybot3"])] * 2
    assert ("Numpybot2: could not start (ModuleNotFoundError: No module named "
            "'uttt_no_such_module'); 2 of its 4 games scored as losses, 2 against bots that "
            "could not start either not rated") in text
