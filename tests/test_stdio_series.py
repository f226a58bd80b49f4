"""ref_sim.stdio: the CodinGame referee for stdin/stdout programs, its verdicts, the boards-count
tie-break, and a series of our agent against the random stdio player."""

import json
import re
import sys
import textwrap
from pathlib import Path

import pytest

from ref_sim.referees import codingame_shell
from ref_sim import stdio
from ref_sim.rules import WPI, Game
from ref_sim.series import codingame_games, specs
#: The same random game as tests/test_codingame.py (cells board*9+spot): after it, O's move
#: 72 decides the last boards with no line, O holding more boards.
COUNT_WIN_GAME = [19, 13, 37, 15, 56, 18, 6, 61, 64, 9, 2, 22, 44, 79, 70, 65, 21, 32, 50, 51, 58, 36,
                  7, 69, 59, 48, 28, 11, 26, 75, 27, 1, 23, 45, 3, 31, 43, 67, 40, 78, 57, 30, 74, 20,
                  24, 25, 8, 72]

#: A scripted player: each turn takes the next word of its arguments: "R,C" plays that cell,
#: "first" the first valid action, "garbage" prints a non-move, "sleep" answers after 0.5 s,
#: "exit" exits with code 3.
SCRIPT = textwrap.dedent("""\
    import sys, time
    plan = sys.argv[1:]
    print("ready", file=sys.stderr, flush=True)
    while True:
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        actions = [sys.stdin.readline().strip() for _ in range(int(sys.stdin.readline()))]
        step = plan.pop(0) if plan else "first"
        if step == "exit":
            sys.exit(3)
        if step == "sleep":
            time.sleep(0.5)
        text = {"garbage": "hello", "first": actions[0], "sleep": actions[0]}.get(step, step.replace(",", " "))
        print(text, flush=True)
""")


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "scripted.py"
    path.write_text(SCRIPT)
    return lambda *plan: [sys.executable, str(path), *plan]


def play(commands, first="A", tmp_path=None, **timing):
    settings = codingame_games.StdioGameSettings(**{"turn_ms": 100, "first_turn_ms": 100, **timing})
    return codingame_games.play_game(commands, first, tmp_path / "logs", settings).record


def test_coordinates_and_turn_input():
    assert [codingame_shell.from_cell(*codingame_shell.to_cell(b, s)) for b in range(9) for s in range(9)] == \
        [(b, s) for b in range(9) for s in range(9)]
    game = Game("codingame")
    game.play(4, 5)                 # row 4, col 5: sends the opponent to board 5
    lines = codingame_shell.turn_input(game).splitlines()
    assert lines[:2] == ["4 5", "9"]
    assert lines[2:] == [f"{r} {c}" for r in range(3, 6) for c in range(6, 9)]


def test_more_boards_won_wins_where_the_referee_would_tie(script, tmp_path):
    cells = ["{},{}".format(*codingame_shell.to_cell(*divmod(i, 9))) for i in COUNT_WIN_GAME]
    record = play({"A": script(*cells[0::2]), "B": script(*cells[1::2])}, tmp_path=tmp_path)
    assert record["result"] == "win" and record["winner"] == "B" and record["reason"] == codingame_shell.COUNT_WIN
    assert record["boards"]["B"] > record["boards"]["A"]
    assert len(record["moves"]) == len(COUNT_WIN_GAME)
    plain = Game(WPI)
    for index in COUNT_WIN_GAME:
        plain.play(*divmod(index, 9))
    assert plain.result == "tie"


@pytest.mark.parametrize("plan, reason, note", [
    (["sleep"], codingame_shell.TIME_OUT, None),
    (["exit"], codingame_shell.CRASHED, "crashed (exited with code 3)"),
], ids=["time-out", "crash"])
@pytest.mark.e2e
def test_verdicts(script, tmp_path, plan, reason, note):
    # The shell with real programs: a late line stamped as it came, an exit and its code. Every
    # verdict, the first turn's longer limit included, is a table in tests/test_codingame_referee.py.
    # B moves first at the centre; A then misbehaves as planned.
    record = play({"A": script(*plan), "B": script("4,4", "first", "first")}, first="B", tmp_path=tmp_path)
    assert record["result"] == "win" and record["loser"] == "A" and record["reason"] == reason
    assert record["notes"].get("A") == note
    assert "B" not in record["notes"]
    if reason == codingame_shell.TIME_OUT:
        assert record["late_ms"] is not None and record["late_ms"] > 100


#: The built-in ``agent:depth=3`` without its ``--seed {seed}``: our agent refuses --seed until
#: agent/codingame.py takes it (the built-in's command line is checked in test_seeds_per_game).
OUR_AGENT_DEPTH_3 = (f"{sys.executable} -m agent --protocol codingame --turn-ms {{turn_ms}} "
                     "--first-turn-ms {first_turn_ms} --depth 3")


@pytest.mark.e2e
def test_series_of_our_agent_against_random(tmp_path, capsys):
    out = tmp_path / "series"
    # A small fixed depth keeps the test about the protocol, not about this machine's load: it
    # ends long before a whole second's turn (at 100 ms a loaded machine cut it short), and the
    # grace makes a descheduled process no reason to fail.
    code = stdio.main([OUR_AGENT_DEPTH_3, "random", "--games", "2", "--seed", "7", "--out", str(out),
                       "--turn-ms", "1000", "--first-turn-ms", "1000", "--grace-ms", "400"])
    assert code == 0
    text = capsys.readouterr().out
    assert "Score of Agent1 vs Random2:" in text
    assert "Elo difference:" in text and "LOS:" in text and "DrawRatio:" in text
    assert "Ptnml(0-2):" in text
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert [g["game"] for g in games] == [1, 2] and [g["pair"] for g in games] == [0, 0]
    assert [g["p1"] for g in games] == ["Agent1", "Random2"]     # the sides swap
    for game in games:
        assert game["rules"] == "codingame"
        assert game["reason"] not in (codingame_shell.TIME_OUT, codingame_shell.INVALID_MOVE, codingame_shell.CRASHED)
        assert game["result"] in ("win", "tie") and game["score"] in (0, 0.5, 1)
        assert not game["notes"]
        ours = [m for m in game["moves"] if m["player"] == "Agent1"]
        assert ours and all(m.get("depth") == 3 for m in ours[:-1])
        assert all(m["ms"] >= 0 for m in game["moves"])
        assert (out / "logs" / f"game-{game['game']:04d}-Agent1.log").exists()


def test_specs():
    assert specs.stdio_spec("agent:nodes=500").template.endswith("--nodes 500")
    assert specs.stdio_spec("random").command(5, 100, 1000)[-2:] == ["--seed", "5"]
    with pytest.raises(ValueError):
        specs.stdio_spec("random:depth=3")


# -- what users see ------------------------------------------------------------

def test_mistyped_builtin_names_the_stdio_builtins(capsys):
    with pytest.raises(SystemExit) as exit_info:
        stdio.main(["agent", "Random"])
    assert exit_info.value.code == 2
    assert ("'Random' is not a built-in agent (built-ins: agent, random) nor a command found "
            "on the PATH; did you mean 'random'?") in capsys.readouterr().err


def test_a_program_that_cannot_start_stops_the_series(tmp_path, capsys):
    missing = f"{sys.executable} {tmp_path / 'no_such_bot.py'}"
    assert stdio.main(["random", missing, "--games", "4", "--seed", "1",
                       "--out", str(tmp_path / "out")]) == 1
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: Nosuchbot2 could not start (exited with "
                                               "code 2 before the game began: ")
    assert "Score of" not in captured.out
    assert not (tmp_path / "out" / "games.jsonl").exists()


@pytest.mark.e2e
def test_out_on_a_file_and_no_out_leaves_nothing(tmp_path, capsys, monkeypatch):
    path = tmp_path / "file.txt"
    path.write_text("x")
    with pytest.raises(SystemExit):
        stdio.main(["random", "random", "--out", str(path)])
    assert "not a directory (it is a file)" in capsys.readouterr().err
    import tempfile
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    assert stdio.main(["random", "random", "--games", "2", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "deleted at the end (--out DIR keeps them)" in out and "Games: " not in out
    assert list(temp.iterdir()) == []


# -- different games, --resume, kept logs ----------------------------------------------

def test_seeds_per_game_for_every_builtin():
    # Our agent gets --seed like the random player: each game, each program its own seed (our
    # agent's --seed for this protocol lands in agent/codingame.py; the flag name is shared).
    agent = specs.stdio_spec("agent:depth=2")
    assert agent.command(11, 100, 1000)[-4:] == ["--seed", "11", "--depth", "2"]
    seeds = {seed for number in range(1, 21) for seed in codingame_games.agent_seeds(7, number)}
    assert len(seeds) == 40                                     # no two programs, no two games alike
    assert codingame_games.agent_seeds(7, 3) == codingame_games.agent_seeds(7, 3) != codingame_games.agent_seeds(8, 3)


@pytest.mark.e2e
def test_deterministic_programs_are_counted_once_and_warned_about(script, tmp_path, capsys):
    first = " ".join(script())          # always the first valid action: every pair replays
    assert stdio.main([first, first, "--games", "4", "--seed", "1", "--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "Distinct games: 2 of 4 (warning: 2 repeat an earlier game move for move (game " in out
    assert f"), and count again in the figures above; {codingame_games.REPEAT_HINT})" in out
    assert stdio.main(["random", "random", "--games", "4", "--seed", "1", "--out", str(tmp_path / "b")]) == 0
    assert "Distinct games: 4 of 4\n" in capsys.readouterr().out


@pytest.mark.e2e
def test_resume_with_out_alone_plays_the_missing_games_with_their_seeds(tmp_path, capsys):
    out = tmp_path / "series"
    assert stdio.main(["random", "random", "--games", "4", "--seed", "3", "--turn-ms", "500",
                       "--out", str(out), "-q"]) == 0
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    (out / "games.jsonl").write_text("".join(json.dumps(g) + "\n" for g in games[:2]))
    assert stdio.main(["--resume", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "series seed 3; 4 games at 500 ms per turn" in text
    assert "resuming: 2 of 4 games already played, 2 to go" in text
    again = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert [g["game"] for g in again] == [1, 2, 3, 4]
    for before, after in zip(games[2:], again[2:]):           # the same seeds: the same games
        assert after["agents"] == before["agents"]
        assert [(m["row"], m["col"]) for m in after["moves"]] == [(m["row"], m["col"]) for m in before["moves"]]
    assert "Score of Random1 vs Random2: " in text and "] 4\n" in text
    with pytest.raises(SystemExit) as exit_info:                # contradicting the series
        stdio.main(["--resume", "--out", str(out), "--turn-ms", "100"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"python -m ref_sim.stdio: error: cannot resume: --turn-ms was 500 in {out}, not 100 "
        "(leave --turn-ms out to continue the series as it was, or choose another --out)")
    with pytest.raises(SystemExit):                             # without --resume: refused
        stdio.main(["random", "random", "--out", str(out)])
    assert "already holds games: add --resume" in capsys.readouterr().err


@pytest.mark.e2e
def test_without_out_the_logs_of_games_that_went_wrong_are_kept(script, tmp_path, capsys, monkeypatch):
    import tempfile
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    assert stdio.main(["random", " ".join(script("garbage")), "--games", "2", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    kept = Path(re.search(r"Logs of the games that went wrong: (\S+) \(kept;", out).group(1))
    assert kept.parent == temp and kept.name.startswith("uttt-logs-")
    assert sorted(path.name for path in kept.iterdir()) == [
        "game-0001-Random1.log", "game-0001-Scripted2.log",
        "game-0002-Random1.log", "game-0002-Scripted2.log"]
    assert list(temp.iterdir()) == [kept]                       # the temporary folder is gone
    # A program that cannot start: the error names its log where it still is.
    missing = f"{sys.executable} {tmp_path / 'no_such_bot.py'}"
    assert stdio.main(["random", missing, "--games", "2", "--seed", "1"]) == 1
    log = Path(re.search(r"its output: (\S+);", capsys.readouterr().err).group(1))
    assert log.exists() and "no_such_bot.py" in log.read_text()


@pytest.mark.parametrize("argv, message", [
    (["--turn-ms", "nan"], "argument --turn-ms: must be a number above 0 and at most 3,600,000, got 'nan'"),
    (["--turn-ms", "0"], "argument --turn-ms: must be a number above 0 and at most 3,600,000, got '0'"),
    (["--first-turn-ms", "-5"], "argument --first-turn-ms: must be a number above 0 and at most 3,600,000, got '-5'"),
    (["--grace-ms", "inf"], "argument --grace-ms: must be a number from 0 to 3,600,000, got 'inf'"),
    (["--grace-ms", "1e12"], "argument --grace-ms: must be a number from 0 to 3,600,000, got '1e12'"),
    (["--games", "-2"], "argument --games: must be an integer from 1 to 100,000, got '-2'"),
])
def test_numbers_are_checked_in_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        stdio.main(["random", "random"] + argv)
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"python -m ref_sim.stdio: error: {message}"
