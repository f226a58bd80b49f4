"""The built-in random agent as a real process against the referee simulator."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ref_sim.referees.file_shell import run_game
from ref_sim.referees.file_referee import RefereeSettings

ROOT = str(Path(__file__).resolve().parent.parent)
WIN = "The winning player has won 3 local boards in a row on the global board!"


def start_random_agent(directory, name, seed, *options):
    """``python -m ref_sim.bots.random_agent NAME`` with ``options`` (``--eager``...)."""
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [sys.executable, "-m", "ref_sim.bots.random_agent", name, "--dir", str(directory),
         "--seed", str(seed), *options],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


def finish(process, timeout=5.0):
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        raise AssertionError(f"agent did not exit:\n{output}") from None
    return process.returncode, output


@pytest.mark.e2e
def test_random_vs_random_full_game_through_files(tmp_path):
    # Stale files of an earlier game, as a killed referee leaves them: must not fool anyone.
    stale = {"first_four_moves": "Walrus 0 0\nOtter 0 1\nWalrus 1 0\nOtter 0 2\n",
             "move_file": "Walrus 2 0\n", "end_game": "END: Match TIED!", "Walrus.go": "",
             "Otter.go": ""}
    old = time.time() - 3600
    for age, (name, text) in enumerate(stale.items()):
        (tmp_path / name).write_text(text)
        os.utime(tmp_path / name, (old + age, old + age))
    agents = [start_random_agent(tmp_path, "Walrus", 1), start_random_agent(tmp_path, "Otter", 2)]
    try:
        for agent in agents:
            agent.stdout.readline()                 # "[NAME] waiting in ...": it watches the files
        time.sleep(0.5)
        assert all(agent.poll() is None for agent in agents), "exited on a stale end_game"
        record = run_game(tmp_path, "Walrus", "Otter", RefereeSettings(time_limit=1.0, start_delay=0.3), seed=4)
    finally:
        results = [finish(agent) for agent in agents]
    assert record.result in ("win", "tie"), record
    assert record.reason in (WIN, "tie")
    assert len(record.moves) >= 5
    for code, output in results:
        assert code == 0, output
        assert f"game over: {record.end_text}" in output
    assert os.listdir(tmp_path) == []           # the referee cleaned up at exit


@pytest.mark.e2e
def test_random_agent_exits_when_the_game_is_aborted(tmp_path):
    agent = start_random_agent(tmp_path, "Walrus", 1)
    stop = threading.Event()

    def stop_after_the_first_move(event):       # mid-game, however slow the machine
        if event.kind == "move":
            stop.set()
    try:
        agent.stdout.readline()                     # "[Walrus] waiting in ...": it watches the files
        record = run_game(tmp_path, "Walrus", "Otter", RefereeSettings(time_limit=3.0, start_delay=0.2),
                          seed=0, first="Walrus", stop=stop, on_event=stop_after_the_first_move)
    finally:
        code, output = finish(agent, timeout=6)
    assert record.result == "aborted"
    assert code == 1 and "aborted" in output


# -- reading the files as the referee does -----------------------------

# Walrus (p1) 4 0, Otter 0 4, Walrus 4 8, Otter 8 4: Walrus plays next, in board 4.
OPENING = ["Walrus 4 0", "Otter 0 4", "Walrus 4 8", "Otter 8 4"]


def joined_agent(tmp_path, name, opening_text, move_file=""):
    """A RandomAgent that has just seen its .go appear on the given files. Both in UTF-8, whatever
    the locale: the separators tried (U+2028...) exist in no cp1252 file (Windows' locale)."""
    from ref_sim.bots.random_agent import RandomAgent
    agent = RandomAgent(name, str(tmp_path), seed=1, encoding="utf-8")     # files written after: not stale
    (tmp_path / "move_file").write_text(move_file, encoding="utf-8", newline="")
    (tmp_path / "first_four_moves").write_text(opening_text, encoding="utf-8", newline="")
    (tmp_path / f"{name}.go").write_text("")
    agent.load_opening()
    return agent


@pytest.mark.parametrize("separator", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85",
                                       "\u2028", "\u2029"])
def test_opening_lines_are_cut_only_where_the_referee_cuts(tmp_path, separator):
    # str.splitlines would cut "Walrus 4 0<sep>junk" in two and refuse a 5-line opening.
    text = f"{OPENING[0]}{separator}junk\n{OPENING[1]}\r\n{OPENING[2]}\r{OPENING[3]}\n"
    agent = joined_agent(tmp_path, "Walrus", text)
    assert agent.game is not None and agent.me == 0
    assert agent.game.moves == [(4, 0), (0, 4), (4, 8), (8, 4)]


@pytest.mark.parametrize("separator", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85",
                                       "\u2028", "\u2029"])
def test_opponent_move_is_read_as_the_referee_reads_it(tmp_path, separator):
    # The referee's Python reads "Walrus 4 1<sep>Walrus 4 2" as one line, tokens
    # Walrus 4 1 Walrus 4 2: the move is 4 1.  splitlines would have seen 4 2.
    agent = joined_agent(tmp_path, "Otter", "\n".join(OPENING) + "\n",
                         f"Walrus 4 1{separator}Walrus 4 2\n")
    assert agent.me == 1
    assert agent.my_turn() and agent.game.moves[-1] == (4, 1)


@pytest.mark.parametrize("windows", [True, False], ids=["windows", "posix"])
def test_a_file_refused_while_replaced_is_missing_for_one_poll(tmp_path, monkeypatch, windows):
    """The random agent crashed under Wine on a PermissionError reading move_file while the
    referee replaced it: Windows' transient refusals (agent.platform_io.transient) count as a
    missing file, looked at again next poll; on POSIX a refusal is for good and is raised."""
    from agent import platform_io
    from ref_sim.bots import random_agent
    agent = joined_agent(tmp_path, "Otter", "\n".join(OPENING) + "\n", "Walrus 4 1\n")
    monkeypatch.setattr(platform_io, "WINDOWS", windows)

    def refused(*args, **kwargs):
        raise PermissionError(13, "Access is denied", str(args[0]))

    monkeypatch.setattr(random_agent.os, "stat", refused)
    monkeypatch.setattr(random_agent, "open", refused, raising=False)
    for look in (lambda: agent.mtime("move_file"), lambda: agent.read("move_file"),
                 lambda: agent.identity("move_file")):
        if windows:
            assert look() is None
        else:
            with pytest.raises(PermissionError):
                look()


def test_opponent_move_with_trailing_junk_after_a_separator(tmp_path):
    agent = joined_agent(tmp_path, "Otter", "\n".join(OPENING) + "\n", "Walrus 4 3\x1cjunk\n")
    assert agent.my_turn() and agent.game.moves[-1] == (4, 3)
    assert not agent.stuck


def test_carriage_returns_end_lines(tmp_path):
    agent = joined_agent(tmp_path, "Otter", "\r\n".join(OPENING) + "\r\n", "Walrus 4 2\rWalrus 4 1\r")
    assert agent.my_turn() and agent.game.moves[-1] == (4, 1)


def test_opening_naming_a_third_player_is_refused(tmp_path, capsys):
    text = "\n".join(OPENING[:2] + ["Walrus 4 8", "Seal 8 4"]) + "\n"
    agent = joined_agent(tmp_path, "Walrus", text)
    assert agent.game is None
    out = capsys.readouterr().out
    assert "not an opening (lines 3-4 name Walrus and Seal" in out and "waiting for end_game" in out
    agent.load_opening()                   # said once, not at every poll
    assert capsys.readouterr().out == ""


def test_end_game_garbage_is_printed_as_one_clean_line(tmp_path):
    from ref_sim.referees.file_text import one_line
    assert one_line("END: Match TIED!") == "END: Match TIED!"
    shown = one_line("END: A WINS!\x1b[2J\nrm -rf ~\r" + "x" * 500)
    assert "\n" not in shown and "\x1b" not in shown and "\r" not in shown
    assert shown.startswith("END: A WINS!\\x1b[2J\\nrm -rf ~\\r") and shown.endswith("...")
    assert len(shown) == 203


def test_random_agent_dir_on_a_file_is_named_as_a_file(tmp_path, capsys):
    from ref_sim.bots.random_agent import main
    path = tmp_path / "file.txt"
    path.write_text("x")
    with pytest.raises(SystemExit) as exit_info:
        main(["Walrus", "--dir", str(path)])
    assert exit_info.value.code == 2
    assert f"--dir {path}: not a directory (it is a file)" in capsys.readouterr().err


@pytest.mark.e2e
def test_an_end_game_not_written_yet_is_read_once_it_is(tmp_path):
    # The referee creates end_game and then writes it: an empty read is not the result.
    agent = start_random_agent(tmp_path, "Otter", 3)
    try:
        agent.stdout.readline()                     # "[Otter] waiting in ...": it watches the files
        (tmp_path / "first_four_moves").write_text("Walrus 0 4\nOtter 4 0\nWalrus 0 8\nOtter 8 0\n")
        (tmp_path / "move_file").write_text("")
        time.sleep(0.3)
        (tmp_path / "end_game").write_text("")
        time.sleep(0.5)
        (tmp_path / "end_game").write_text("END: Match TIED!")
    finally:
        code, output = finish(agent)
    assert code == 0 and "game over: END: Match TIED!" in output, output


# -- the hostile variants ----------------------------------------------

def put(directory, text):
    """Replace move_file with ``text`` at once, past the mtime the referee noted."""
    time.sleep(0.015)
    (directory / ".staged-tmp").write_text(text)
    os.replace(directory / ".staged-tmp", directory / "move_file")


@pytest.mark.e2e
def test_eager_answers_before_its_go_and_hands_the_mover_the_win(tmp_path):
    # Walrus is played from the referee's own thread: at its second turn it moves, then
    # holds the referee (no tick, no new .go) until the eager Otter has answered.
    seen = {}

    def walrus(event):
        if event.kind != "turn" or event.player != "Walrus":
            return
        board, spot = event.game.legal_moves()[0]
        put(tmp_path, f"Walrus {board} {spot}\n")
        if len(event.record.moves) == 2:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                line = (tmp_path / "move_file").read_text()
                if line.startswith("Otter"):
                    seen["line"], seen["go"] = line, (tmp_path / "Otter.go").exists()
                    break
                time.sleep(0.002)
    otter = start_random_agent(tmp_path, "Otter", 1, "--eager")
    try:
        otter.stdout.readline()                     # "[Otter] waiting in ..."
        record = run_game(tmp_path, "Walrus", "Otter", RefereeSettings(time_limit=2.0, start_delay=0, exit_delay=3),
                          seed=1, first="Walrus", agents_gone=lambda: otter.poll() is not None, on_event=walrus)
    finally:
        code, output = finish(otter)
    assert seen.get("go") is False, (seen, output)          # written with no Otter.go
    assert record.reason == "Out-of-order move!" and record.winner == "Walrus", record
    assert record.bad_line == seen["line"] and len(record.moves) == 2
    assert code == 0, output


@pytest.mark.e2e
def test_flood_writes_about_the_rate_asked(tmp_path):
    # A count over a short run, with wide bounds: paced (not as fast as it can), and really
    # a flood (not a trickle).
    rate = 20000
    flood = start_random_agent(tmp_path, "Flood1", 1, "--flood", str(rate))
    path = tmp_path / "Flood1-flood.log"
    try:
        deadline = time.monotonic() + 20
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        counts = []
        for _ in range(2):
            counts.append((time.monotonic(), path.read_bytes().count(b"\n")))
            time.sleep(1.0)
    finally:
        flood.kill()
        finish(flood)
    (start, before), (end, after) = counts
    assert 0.25 * rate < (after - before) / (end - start) < 1.5 * rate, counts
    assert path.read_text().startswith("Flood1 flood 0\nFlood1 flood 1\n")


@pytest.mark.e2e
def test_nbsp_writes_latin1_no_break_spaces_that_a_latin1_referee_accepts(tmp_path):
    # Both players and the referee decode Latin-1: every Walrus line is the bytes asked,
    # every one a legal move, and the game ends normally.
    wrong = []
    checked = []

    def check(event):
        if event.kind == "move" and event.player == "Walrus":
            data = (tmp_path / "move_file").read_bytes()
            expected = f"Walrus\xa0{event.move.board}\xa0{event.move.spot}\n".encode("latin-1")
            (checked if data == expected else wrong).append(data)
    agents = [start_random_agent(tmp_path, "Walrus", 1, "--nbsp", "--encoding", "latin-1"),
              start_random_agent(tmp_path, "Otter", 2, "--encoding", "latin-1")]
    try:
        for agent in agents:
            agent.stdout.readline()
        record = run_game(tmp_path, "Walrus", "Otter",
                          RefereeSettings(time_limit=1.0, start_delay=0, encoding="latin-1", exit_delay=3),
                          seed=2, on_event=check, agents_gone=lambda: all(a.poll() is not None for a in agents))
    finally:
        results = [finish(agent) for agent in agents]
    assert not wrong and len(checked) >= 2, (wrong, record)
    assert record.reason in (WIN, "tie"), record
    assert all(code == 0 for code, _ in results), results
