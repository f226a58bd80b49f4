"""Series end to end: real agent processes, the simulated referee, the real file protocol.

Fast limits (0.3-0.5 s per move) and the random agent; agents that crash or hang are plain
``python -c`` commands.
"""

import functools
import json
import re
import sys
import time
from pathlib import Path

import pytest

from ref_sim import match
from ref_sim.series import file_games
pytestmark = pytest.mark.e2e

# Crashes once the game has begun (the opening is written): a crash in a game.  An agent
# that exits before its first game begins cannot start at all: that stops the series.
CRASH = (f"{sys.executable} -c 'import os, sys, time\n"
         "while not os.path.exists(sys.argv[1]): time.sleep(0.01)\n"
         "sys.exit(3)' {dir}/first_four_moves")
HANG = f"{sys.executable} -c 'import time; time.sleep(60)'"


#: A silent agent holds the referee's start for the start-up wait; a hung one is killed the exit
#: wait after end_game. Shorter than in real series, same behaviour.
QUICK = ["--startup-wait", "0.5", "--exit-wait", "1.3"]


def read_lines(out):
    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


def test_paired_series_then_resume(tmp_path, capsys):
    args = ["random", "random", "--games", "2", "--time-limit", "0.5", "--seed", "3",
            "--out", str(tmp_path)]
    assert match.main(args) == 0
    out = capsys.readouterr().out
    assert "Game 1/2" in out and "Game 2/2" in out
    assert "Score of Random1 vs Random2:" in out and "Ptnml(0-2): [" in out
    first, second = sorted(read_lines(tmp_path), key=lambda g: g["game"])
    # The pair: the same four cells, the other agent moving first.
    assert first["pair"] == second["pair"] == 0
    assert [m[1:] for m in first["opening"]] == [m[1:] for m in second["opening"]]
    assert first["p1"] == second["p2"] and first["p2"] == second["p1"]
    assert [m[0] for m in first["opening"]] == [first["p1"], first["p2"]] * 2
    for game in (first, second):
        assert game["result"] in ("win", "tie") and game["notes"] == {}
        assert game["agents"][0]["name"] == "Random1" and game["agents"][1]["spec"] == "random"
        assert game["score"] in (0, 0.5, 1) and game["series_seed"] == 3
        assert all(set(m) >= {"player", "board", "spot", "seconds"} for m in game["moves"])
        assert len(game["moves"]) >= 1
    logs = tmp_path / "logs"
    for n in (1, 2):
        for name in ("Random1", "Random2"):
            assert "game over: END:" in (logs / f"game-000{n}-{name}.log").read_text()
    assert not (tmp_path / "game-0001").exists()    # cleaned by the referee, then removed

    # Resume after losing game 2 (as if interrupted): only game 2 is played again, and it
    # is the same game: same opening, same first player, same seeds.
    (tmp_path / "games.jsonl").write_text(json.dumps(first) + "\n")
    assert match.main([*QUICK, "random", "random", "--games", "2", "--time-limit", "0.5",
                       "--out", str(tmp_path), "--resume"]) == 0
    out = capsys.readouterr().out
    assert "1 of 2 games already played, 1 to go" in out
    assert "Game 1/2" not in out and "Game 2/2" in out
    lines = read_lines(tmp_path)
    assert [g["game"] for g in lines] == [1, 2]
    again = lines[1]
    for key in ("opening", "p1", "p2", "seed", "agents", "pair"):
        assert again[key] == second[key]
    assert "Score of Random1 vs Random2:" in out and out.count("Score of") == 1
    played = sum(1 for g in lines)
    assert f"] {played}\n" in out                          # statistics over both games


def test_crash_and_time_out_are_counted_and_the_series_completes(tmp_path, capsys):
    assert match.main([*QUICK, CRASH, HANG, "--games", "2", "--time-limit", "0.3", "--seed", "1",
                       "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # Each loses the game it should have opened: nobody ever moves.
    assert "Score of Python1 vs Python2: 1 - 1 - 0  [0.500] 2" in out
    assert "Python1: 1 wins, 1 losses, 0 draws (crashes 2, time-outs 1); " \
           "exited with code 3 x2" in out
    assert "Python2: 1 wins, 1 losses, 0 draws (hangs 2, time-outs 1); " \
           "did not exit (killed) x2" in out
    lines = read_lines(tmp_path)
    assert len(lines) == 2
    for game in lines:
        assert game["reason"] == "Time out!" and game["loser"] == game["p1"]
        assert game["notes"] == {"Python1": "crashed (exited with code 3)",
                                 "Python2": "did not exit (killed)"}


def test_random_beats_a_crashing_agent_every_game(tmp_path, capsys):
    assert match.main([*QUICK, "random", CRASH, "--games", "2", "--time-limit", "0.3", "--seed", "1",
                       "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("Random1 wins: Time out!") == 2
    assert "Python2 crashed (exited with code 3)" in out
    assert "Score of Random1 vs Python2: 2 - 0 - 0  [1.000] 2" in out
    assert "Python2: 0 wins, 2 losses, 0 draws (crashes 2, time-outs 2)" in out
    assert [g["score"] for g in read_lines(tmp_path)] == [1.0, 1.0]


def test_one_game_shown_with_our_agents_search_figures(tmp_path, capsys, monkeypatch):
    """The README's job (one game, the board as it goes), with our agent at a fixed depth:
    its moves carry the depth and score read from its log."""
    # A built-in is waited for until it says it is up, whatever the start-up wait.
    assert match.main([*QUICK, "agent:depth=1", "random", "--games", "1", "--time-limit", "0.5",
                       "--seed", "2", "--out", str(tmp_path), "--show"]) == 0
    out = capsys.readouterr().out
    assert "--games 1: one game" in out
    assert "is X and moves first" in out and "Move 5:" in out and "Game 1/1:" in out
    (game,) = read_lines(tmp_path)
    assert game["agents"][0]["spec"] == "agent:depth=1"
    ours = [m for m in game["moves"] if m["player"] == "Agent1"]
    theirs = [m for m in game["moves"] if m["player"] == "Random2"]
    assert ours and all(m["depth"] == 1 and isinstance(m["score"], int) for m in ours)
    assert theirs and not any("depth" in m for m in theirs)      # logs nothing of the kind


# -- what users see ------------------------------------------------------------

WAIT_THEN_READ = (f"{sys.executable} -c 'import os, sys, time\n"
                  "path = os.path.join(sys.argv[1], \"end_game\")\n"
                  "print(\"up\", flush=True)\n"
                  "while not os.path.exists(path): time.sleep(0.01)\n"
                  "time.sleep(1.3)\n"
                  "try: print(\"read:\", open(path).read(), flush=True)\n"
                  "except OSError: print(\"end_game was gone\", flush=True)' {dir}")


def test_end_game_stays_for_an_agent_still_searching(tmp_path, capsys):
    # An agent that reads end_game 1.3 s after it appeared (as one still searching at a 1 s
    # limit would): the files stay until it has exited, so it reads the result.  The old
    # fixed second after the end cleaned them first.
    assert match.main([*QUICK, WAIT_THEN_READ, "random", "--games", "1", "--time-limit", "1",
                       "--seed", "5", "--out", str(tmp_path), "-q"]) == 0
    (game,) = read_lines(tmp_path)
    log = (tmp_path / "logs" / "game-0001-Python1.log").read_text()
    assert f"read: {game['end_text']}" in log, log
    assert game["notes"] == {}


def test_an_agent_that_cannot_start_stops_the_series(tmp_path, capsys):
    # Exits at once with an error (a wrong path): the series stops with one error line
    # instead of scoring forfeits, and no game is recorded.
    missing = f"{sys.executable} {tmp_path / 'no_such_bot.py'} {{name}}"
    assert match.main([*QUICK, "random", missing, "--games", "4", "--time-limit", "1",
                       "--seed", "4", "--out", str(tmp_path / "out")]) == 1
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: Nosuchbot2 could not start (exited "
                                               "with code 2 before the game began: ")
    assert "No such file or directory" in err[0] and "the series stopped" in err[0]
    assert "Score of" not in captured.out and "Traceback" not in captured.err
    assert read_lines_or_none(tmp_path / "out") == []


def read_lines_or_none(out):
    path = out / "games.jsonl"
    return read_lines(out) if path.exists() else []


def test_a_command_that_cannot_be_launched_stops_the_series(tmp_path, capsys):
    assert match.main([*QUICK, "random", "/nonexistent/bot {name}", "--games", "2", "--time-limit",
                       "0.3", "--seed", "4", "--out", str(tmp_path), "-q"]) == 1
    err = capsys.readouterr().err
    assert "Bot2 could not start (the command could not be launched: could not start:" in err
    assert read_lines_or_none(tmp_path) == []


def test_no_out_leaves_nothing_behind(tmp_path, capsys, monkeypatch):
    # Without --out the series used to leave a uttt-match-* folder in /tmp at every run.
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    # A whole second a move: the random players answer at once, and a loaded machine makes no
    # game go wrong (whose logs would rightly be kept).
    assert match.main([*QUICK, "random", "random", "--games", "1", "--time-limit", "1",
                       "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "deleted at the end (--out DIR keeps them)" in out and "Games: " not in out
    assert list(tmp_path.iterdir()) == []


def test_closed_output_ends_in_one_line(tmp_path):
    # python -m ref_sim.match ... | head -2: no traceback, exit code 141, the games stop.
    import os
    import subprocess
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)       # buffered, as in a shell: the pipe breaks mid-series
    process = subprocess.Popen(
        [sys.executable, "-m", "ref_sim.match", "random", "random", "--games", "6",
         "--time-limit", "1", "--seed", "1", "--out", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(tmp_path), env=env)
    head = [process.stdout.readline() for _ in range(2)]
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(60) == 141, err
    assert all(head)
    assert "Traceback" not in err
    assert err.strip().splitlines() == [err.strip()]
    assert err.startswith("python -m ref_sim.match: output closed (broken pipe) after ")
    assert "the series stopped" in err
    assert 1 <= len(read_lines_or_none(tmp_path)) < 6


def test_an_aborted_game_is_reported_once_with_show(tmp_path, capsys):
    from ref_sim.referees.file_referee import CRASHED, Event, GameRecord

    def crashed_referee(directory, name1, name2, settings, on_event=None, first=None, **kwargs):
        record = GameRecord((name1, name2), 1.0, p1=first,
                            p2=name2 if first == name1 else name1,
                            result="aborted", reason=CRASHED)
        on_event(Event("abort", None, record))
        return record
    assert match.main([*QUICK, "random", "random", "--games", "1", "--time-limit", "1", "--seed", "1",
                       "--out", str(tmp_path), "--show"],
                      play=functools.partial(file_games.play_game, referee=crashed_referee)) == 0
    out = capsys.readouterr().out
    assert out.count(CRASHED) == 1, out           # the "Game 1/1:" line only
    assert "Game 1/1: " in out and f"aborted: {CRASHED}" in out


def test_a_flood_file_is_deleted_after_the_game(tmp_path, capsys):
    # The flood's log survives the referee's clean-up; the runner deletes it once the
    # agents have exited, and the empty game directory with it.
    assert match.main([*QUICK, "flood:rate=2000", CRASH, "--games", "1", "--time-limit", "0.3",
                       "--seed", "1", "--out", str(tmp_path), "-q"]) == 0
    game = read_lines(tmp_path)[0]
    assert game["result"] == "win" and game["winner"] == "Flood1"
    assert not (tmp_path / "game-0001").exists()
    assert re.search(r"flooded [1-9]\d* lines in", (tmp_path / "logs" /
                                                    "game-0001-Flood1.log").read_text())


def test_without_out_the_logs_of_games_that_went_wrong_are_kept(tmp_path, capsys, monkeypatch):
    # The temporary folder is deleted at the end: the logs that say why a game went wrong are
    # moved out first, and the message names where they are, never a deleted file.
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert match.main([*QUICK, "random", CRASH, "--games", "1", "--time-limit", "0.3", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    kept = Path(re.search(r"Logs of the games that went wrong: (\S+) \(kept;", out).group(1))
    assert kept.parent == tmp_path and kept.name.startswith("uttt-logs-")
    assert sorted(path.name for path in kept.iterdir()) == [
        "game-0001-Python2.log", "game-0001-Random1.log", "game-0001.json"]
    assert list(tmp_path.iterdir()) == [kept]
    missing = f"{sys.executable} {tmp_path / 'no_such_bot.py'} {{name}}"
    assert match.main([*QUICK, "random", missing, "--games", "2", "--time-limit", "1", "--seed", "4"]) == 1
    log = Path(re.search(r"its output: (\S+);", capsys.readouterr().err).group(1))
    assert log.exists() and "no_such_bot.py" in log.read_text()


def test_an_agent_that_exits_as_soon_as_end_game_appears_has_not_crashed(tmp_path, capsys, monkeypatch):
    """The referee writes end_game, then both .go files, then reports the end. A loaded machine
    can pause the runner between the two: an agent that exits on end_game in that pause left
    after the end, and is no crash (a CI run once counted it as one)."""
    from ref_sim.referees import file_shell
    write = file_shell.write_file

    def slow_after_end_game(directory, name, text, encoding):
        write(directory, name, text, encoding)
        if name == "end_game":
            time.sleep(0.3)         # the runner descheduled: the random agents exit meanwhile
    monkeypatch.setattr(file_shell, "write_file", slow_after_end_game)
    assert match.main([*QUICK, "random", "random", "--games", "2", "--time-limit", "0.3",
                       "--seed", "4", "--out", str(tmp_path), "-q"]) == 0
    assert "crash" not in capsys.readouterr().out
    assert [game["notes"] for game in read_lines(tmp_path)] == [{}, {}]
