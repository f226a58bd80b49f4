"""Series end to end: real agent processes, the simulated referee, the real file protocol.

Fast limits (0.3-0.5 s per move) and the random agent; agents that crash or hang are plain
``python -c`` commands.
"""

import json
import sys

import pytest

from ref_sim import match

CRASH = f"{sys.executable} -c 'import sys; sys.exit(3)'"
HANG = f"{sys.executable} -c 'import time; time.sleep(60)'"


@pytest.fixture(autouse=True)
def quick_waits(monkeypatch):
    # A silent agent (HANG) holds the referee's start for STARTUP_WAIT; a hung one is
    # killed EXIT_WAIT after end_game.  Shorter than in real series, same behaviour.
    monkeypatch.setattr(match, "STARTUP_WAIT", 0.5)
    monkeypatch.setattr(match, "EXIT_WAIT", 1.3)


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
    assert not any((tmp_path / "game-0001").iterdir())    # referee cleaned its directory

    # Resume after losing game 2 (as if interrupted): only game 2 is played again, and it
    # is the same game: same opening, same first player, same seeds.
    (tmp_path / "games.jsonl").write_text(json.dumps(first) + "\n")
    assert match.main(["random", "random", "--games", "2", "--time-limit", "0.5",
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
    assert match.main([CRASH, HANG, "--games", "2", "--time-limit", "0.3", "--seed", "1",
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
    assert match.main(["random", CRASH, "--games", "2", "--time-limit", "0.3", "--seed", "1",
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
    monkeypatch.setattr(match, "STARTUP_WAIT", 10.0)   # our agent says when it is ready
    assert match.main(["agent:depth=1", "random", "--games", "1", "--time-limit", "0.5",
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
