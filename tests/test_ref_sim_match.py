"""The match runner: a short series, and a crashing agent that loses while the series goes on."""

import json
import sys

from ref_sim import match


def test_agent_specs_and_names():
    assert match.agent_spec("random").label == "Random"
    assert match.agent_spec("agent").label == "Agent"
    assert match.agent_spec("python my_bot.py {name} --dir {dir}").label == "Mybot"
    assert match.agent_spec("python -m foo.bar {name}").label == "Bar"
    spec = match.agent_spec("./player --name {name} --dir '{dir}' -t {time_limit}")
    assert spec.command("X1", "/a b", 0.5) == ["./player", "--name", "X1", "--dir", "/a b",
                                               "-t", "0.5"]


def test_random_vs_random_series(tmp_path, capsys):
    assert match.main(["random", "random", "--games", "2", "--time-limit", "0.5",
                       "--seed", "3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Game 1/2" in out and "Game 2/2" in out
    assert "Score of Random1 vs Random2:" in out
    logs = tmp_path / "logs"
    records = [json.loads((logs / f"game-000{n}.json").read_text()) for n in (1, 2)]
    assert all(r["result"] in ("win", "tie") for r in records)
    assert all(sorted(r["names"]) == ["Random1", "Random2"] for r in records)
    for n in (1, 2):
        for name in ("Random1", "Random2"):
            assert "game over: END:" in (logs / f"game-000{n}-{name}.log").read_text()
    assert not any((tmp_path / "game-0001").iterdir())    # referee cleaned its directory
    assert "did not exit" not in out and "crash" not in out


def test_crashing_agent_loses_and_the_series_goes_on(tmp_path, capsys):
    crash = f"{sys.executable} -c 'import sys; sys.exit(3)'"
    assert match.main(["random", crash, "--games", "2", "--time-limit", "0.3",
                       "--seed", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("Random1 wins: Time out!") == 2
    assert "Python2 crashed (exited with code 3)" in out
    assert "Score of Random1 vs Python2: 2 - 0 - 0 [1.00] 2" in out
    assert "Python2: 0 wins, 2 losses, 0 draws (crashes 2, time-outs 2)" in out


def test_hung_agent_is_killed_after_the_game(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(match, "EXIT_WAIT", 1.5)
    hang = f"{sys.executable} -c 'import time; time.sleep(60)'"
    match.main(["random", hang, "--games", "1", "--time-limit", "0.3", "--seed", "2",
                "--out", str(tmp_path), "-q"])
    out = capsys.readouterr().out
    assert "Python2: 0 wins, 1 losses, 0 draws (did not exit 1, time-outs 1)" in out
