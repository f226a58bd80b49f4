"""Tournaments (ref_sim/tournament.py): the schedule, the tables from game lines, bad options
in one line, and real events: three fast bots through the file protocol (the files, the
table, Ctrl-C and the printed --resume line), a stdin/stdout gauntlet whose pairings are the
head-to-head series of ref_sim.stdio, and the same event on a Dask cluster."""

import json
import re
import shlex
import signal
import subprocess
import sys

import pytest

from ref_sim import match, openings, stdio, tournament
from ref_sim.referee import TIME_OUT


def read_games(out):
    return sorted((json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()),
                  key=lambda game: game["game"])


# -- the schedule -------------------------------------------------------------------------

def test_rounds_play_every_pairing_before_the_next_round():
    slots = tournament.schedule(pairing_count=3, rounds=2)
    assert [s.number for s in slots] == list(range(1, 13))
    assert [(s.pairing, s.k) for s in slots[:6]] == [(0, 1), (0, 2), (1, 1), (1, 2), (2, 1), (2, 2)]
    assert [(s.pairing, s.k) for s in slots[6:8]] == [(0, 3), (0, 4)]
    # Each pairing's games are its own series' games 1, 2, 3...: in round r every pairing
    # meets the same opening, once from each side.
    assert [s.k for s in slots if s.pairing == 2] == [1, 2, 3, 4]
    first, second = openings.game(9, 1), openings.game(9, 2)
    assert first.opening == second.opening and first.first != second.first


def test_gauntlet_and_round_robin_pairings():
    assert tournament.pairings(4) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert tournament.pairings(4, gauntlet=True) == [(0, 1), (0, 2), (0, 3)]


# -- the tables, from game lines ----------------------------------------------------------

SETTINGS = {"bots": [{"name": "Agent1", "spec": "agent:depth=3"},
                     {"name": "Random2", "spec": "random"},
                     {"name": "Seed3", "spec": "seed:depth=1"}],
            "pairings": [[0, 1], [0, 2], [1, 2]]}


def game(number, pairing, points, pair=0, reason="3 in a row", notes=None):
    """A games.jsonl line with what the tables read: agent 1 is the pairing's first bot."""
    a, b = (SETTINGS["bots"][i]["name"] for i in pairing)
    winner = {1: a, 0: b}.get(points)
    return {"game": number, "pairing": list(pairing), "pair": pair,
            "agents": [{"name": a}, {"name": b}], "names": [a, b],
            "result": "tie" if points == 0.5 else "win", "score": points,
            "winner": winner, "reason": "tie" if points == 0.5 else reason,
            "notes": notes or {}}


def test_the_table_ranks_rates_and_counts_faults():
    games = [game(1, (0, 1), 1), game(2, (0, 1), 1), game(3, (0, 2), 1), game(4, (0, 2), 0.5),
             game(5, (1, 2), 0, reason=TIME_OUT), game(6, (1, 2), 0.5),
             game(7, (1, 2), 0, notes={"Random2": "crashed (exited with code 1)"})]
    lines = tournament.report_lines(SETTINGS, games)
    header = lines[0].split()
    assert header == ["Rank", "Bot", "Elo", "+/-", "Games", "Score", "Draws", "Time-outs",
                      "Crashes", "Spec"]
    rows = [line.split() for line in lines[1:4]]
    assert [row[1] for row in rows] == ["Agent1", "Seed3", "Random2"]
    agent, seed, rand = rows
    assert agent[0] == "1" and float(agent[2]) > 0 > float(rand[2])
    assert abs(sum(float(row[2]) for row in rows)) < 0.2                 # the mean at 0
    assert agent[4:7] == ["4", "87.5%", "25.0%"] and agent[-1] == "agent:depth=3"
    assert rand[4:9] == ["5", "10.0%", "20.0%", "1", "1"]                # time-out, crash
    assert "the mean at 0" in lines[4]
    text = "\n".join(lines)
    assert "  Agent1 vs Random2: 2 - 0 - 0  [1.000] 2, Elo difference: +inf +/- inf" in text
    assert "Random2 vs Seed3:  0 - 2 - 1  [0.167] 3" in text
    assert "Ptnml(0-2): [0, 0, 0, 0, 1]" in text
    faults = text.split("Faults:\n")[1].splitlines()
    assert faults == ["  Random2: 0 wins, 4 losses, 1 draws (crashes 1, time-outs 1); "
                      "exited with code 1 x1"]


def test_the_table_with_an_anchor_and_an_event_stopped_early():
    lines = tournament.report_lines(SETTINGS, [game(1, (0, 1), 1), game(2, (0, 1), 0.5)],
                                    anchor="Random2")
    rows = {line.split()[1]: line.split() for line in lines[1:4]}
    assert rows["Random2"][2:4] == ["0.0", "----"]
    assert float(rows["Agent1"][2]) > 0
    assert rows["Seed3"][:4] == ["3", "Seed3", "n/a", "n/a"]             # no game yet: last
    assert "Random2 at 0" in lines[4]
    assert any(line.endswith("Agent1 vs Seed3:   not played yet") for line in lines)
    # Two pairs that never met, even through others: said, not silently compared.
    apart = {"bots": SETTINGS["bots"] + [{"name": "Eager4", "spec": "eager"}],
             "pairings": [[0, 1], [2, 3], [0, 2]]}
    text = "\n".join(tournament.report_lines(apart, [game(1, (0, 1), 1), {
        **game(2, (0, 1), 1), "pairing": [2, 3], "agents": [{"name": "Seed3"}, {"name": "Eager4"}],
        "names": ["Seed3", "Eager4"], "winner": "Seed3"}]))
    assert "The bots fall into 2 groups that never met" in text
    assert "(Agent1, Random2; Seed3, Eager4)" in text


# -- bad options: one line each ------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["random"], "a tournament needs at least two bots"),
    (["random", "random", "--rounds", "0"], "--rounds must be at least 1"),
    (["random", "agnet"], "'agnet' is not a built-in agent"),
    (["random", "random", "--anchor", "Seed9"], "--anchor Seed9: no such bot; name one of "
                                                "Random1, Random2"),
    (["random", "random", "--anchor", "random"], "--anchor random: 2 bots have that spec"),
    (["random", "random", "--time-limit", "0.01"], "--time-limit 0.01: the referee looks"),
    (["random", "random", "--encoding", "rot13"], "--encoding rot13: not a text encoding"),
    (["random", "random", "--protocol", "stdio", "--time-limit", "1"],
     "--time-limit is not for --protocol stdio"),
    (["random", "random", "--turn-ms", "50"], "--turn-ms is not for --protocol file"),
    (["random", "random", "--protocol", "stdio", "--turn-ms", "0"], "--turn-ms and "),
    (["random", "random", "--concurrency", "0"], "--concurrency must be at least 1"),
    (["random", "random", "--rounds", "two"], "argument --rounds: invalid int value"),
    (["--resume"], "--resume needs --out"),
])
def test_a_bad_option_is_one_line_and_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        tournament.main(argv)
    assert stop.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("python -m ref_sim.tournament: error: ") and message in error


def test_resuming_what_is_not_there_or_another_event_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit):
        tournament.main(["--resume", "--out", str(tmp_path)])
    assert "nothing to resume in " in capsys.readouterr().err
    (tmp_path / "tournament.json").write_text(json.dumps({
        "format": 1, "kind": "round-robin", "protocol": "file", "seed": 4, "rounds": 1,
        "time_limit": 1.0, "encoding": None, "pairings": [[0, 1]],
        "bots": [{"name": "Random1", "spec": "random"}, {"name": "Random2", "spec": "random"}]}))
    with pytest.raises(SystemExit):
        tournament.main(["random", "seed", "--resume", "--out", str(tmp_path), "--seed", "5",
                         "--time-limit", "2", "--gauntlet"])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error == (f"python -m ref_sim.tournament: error: cannot resume the event in {tmp_path}"
                     " with --time-limit 2.0 (the event has 1.0); --seed 5 (the event has 4); "
                     "other bots (the event has random random); --gauntlet (the event is a "
                     "round-robin)")
    (tmp_path / "tournament.json").write_text("[1]")
    with pytest.raises(SystemExit):
        tournament.main(["--resume", "--out", str(tmp_path)])
    assert "tournament.json is not a tournament's description" in capsys.readouterr().err


# -- real events --------------------------------------------------------------------------

@pytest.fixture
def quick_waits(monkeypatch):
    monkeypatch.setattr(match, "STARTUP_WAIT", 10.0)       # our agent says when it is ready
    monkeypatch.setattr(match, "EXIT_WAIT", 1.3)


def test_a_round_robin_of_three_bots_through_the_files(tmp_path, capsys, quick_waits):
    # Fixed depths and a seeded random player: the moves are instant, the limit is no factor.
    bots = ["agent:depth=1", "random", "seed:depth=1"]
    assert tournament.main(bots + ["--seed", "1", "--time-limit", "1", "--out",
                                   str(tmp_path)]) == 0
    out = capsys.readouterr().out
    event = json.loads((tmp_path / "tournament.json").read_text())
    assert {k: event[k] for k in ("format", "kind", "protocol", "seed", "rounds", "time_limit",
                                  "encoding", "pairings")} == {
        "format": 1, "kind": "round-robin", "protocol": "file", "seed": 1, "rounds": 1,
        "time_limit": 1.0, "encoding": None, "pairings": [[0, 1], [0, 2], [1, 2]]}
    assert event["bots"] == [{"name": "Agent1", "spec": "agent:depth=1"},
                             {"name": "Random2", "spec": "random"},
                             {"name": "Seed3", "spec": "seed:depth=1"}]
    games = read_games(tmp_path)
    assert [g["game"] for g in games] == [1, 2, 3, 4, 5, 6]
    assert [(g["pairing"], g["pairing_game"], g["pair"]) for g in games] == [
        ([0, 1], 1, 0), ([0, 1], 2, 0), ([0, 2], 1, 0), ([0, 2], 2, 0), ([1, 2], 1, 0),
        ([1, 2], 2, 0)]
    for g in games:
        a, b = (event["bots"][i]["name"] for i in g["pairing"])
        assert [agent["name"] for agent in g["agents"]] == [a, b] and g["series_seed"] == 1
        assert g["result"] in ("win", "tie") and g["notes"] == {}
        # Game k of the pairing is game k of `ref_sim.match A B --seed 1`.
        scheduled = openings.game(1, g["pairing_game"])
        assert [tuple(m[1:]) for m in g["opening"]] == list(scheduled.opening)
        assert g["p1"] == [a, b][scheduled.first]
        assert [agent["seed"] for agent in g["agents"]] == list(scheduled.agent_seeds)
        for name in (a, b):
            assert "END: " in (tmp_path / "logs" / f"game-{g['game']:04d}-{name}.log").read_text()
        assert (tmp_path / "logs" / f"game-{g['game']:04d}.json").is_file()
    assert any("depth" in m for m in games[0]["moves"])           # our agent's search figures
    assert "Round-robin of 3 bots, 3 pairings, 1 round: 6 games" in out
    table = out[out.index("Rank Bot"):].splitlines()
    assert sorted(line.split()[1] for line in table[1:4]) == ["Agent1", "Random2", "Seed3"]
    assert all(line.split()[4] == "4" for line in table[1:4])     # 4 games each
    assert table[1].split()[1] == "Agent1"                          # depth 1 beats both
    assert "Head to head" in out and out.count(" vs ") >= 3
    assert f"Games: {tmp_path / 'games.jsonl'}" in out


def test_ctrl_c_keeps_the_games_and_the_printed_line_resumes(tmp_path):
    command = [sys.executable, "-m", "ref_sim.tournament", "random", "random", "random",
               "--gauntlet", "--time-limit", "1", "--seed", "2", "--out", str(tmp_path)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=str(tmp_path))
    lines = []
    while not any(line.startswith("Game 1/4") for line in lines):
        line = process.stdout.readline()
        assert line, "".join(lines)
        lines.append(line)
    process.send_signal(signal.SIGINT)          # Ctrl-C reaches the runner, not the bots
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    (said,) = err.strip().splitlines()
    found = re.fullmatch(r"Interrupted after ([12]) of 4 games; (.*) continues the event\.", said)
    assert found, said
    played = int(found.group(1))
    assert len(read_games(tmp_path)) == played
    assert "Rank Bot" in out and "Random1 vs Random3: not played yet" in out   # the table so far
    # The resume line, run as printed, plays the rest and nothing twice.
    resumed = subprocess.run(shlex.split(found.group(2)), capture_output=True, text=True,
                             cwd=str(tmp_path), timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {played} of 4 games already played, {4 - played} to go" in resumed.stdout
    assert [g["game"] for g in read_games(tmp_path)] == [1, 2, 3, 4]
    table = resumed.stdout[resumed.stdout.index("Rank Bot"):].splitlines()[1:4]
    assert sorted(line.split()[4] for line in table) == ["2", "2", "4"]


STDIO_BOTS = ["agent:depth=2", "agent:depth=1", "random"]
#: Fixed depths: time is no factor, so every game is the same wherever it is played.
STDIO_TIMING = ["--first-turn-ms", "3000", "--turn-ms", "1000"]


def moves_of(game):
    """The moves, each player as 0 (agent 1) or 1: the names differ between runners."""
    first = game["agents"][0]["name"]
    return [(m["player"] != first, m["row"], m["col"]) for m in game["moves"]]


def test_a_stdio_gauntlet_is_the_head_to_head_series_of_ref_sim_stdio(tmp_path, capsys):
    assert tournament.main(STDIO_BOTS + ["--protocol", "stdio", "--gauntlet", "--rounds", "2",
                                         "--seed", "6", "--anchor", "random", "-q", "--out",
                                         str(tmp_path / "event")] + STDIO_TIMING) == 0
    out = capsys.readouterr().out
    assert out.startswith("Rank Bot")                              # -q: the tables only
    games = read_games(tmp_path / "event")
    assert [(g["pairing"], g["pairing_game"]) for g in games] == [
        ([0, 1], 1), ([0, 1], 2), ([0, 2], 1), ([0, 2], 2), ([0, 1], 3), ([0, 1], 4),
        ([0, 2], 3), ([0, 2], 4)]
    assert all(g["rules"] == "codingame" and g["series_seed"] == 6 for g in games)
    assert all(g["p1"] == g["agents"][(g["pairing_game"] - 1) % 2]["name"] for g in games)
    rows = {line.split()[1]: line.split() for line in out.splitlines()[1:4]}
    assert rows["Random3"][2:4] == ["0.0", "----"] and rows["Agent2"][4] == "4"
    assert "Random3 at 0" in out
    # Agent1 against Random3 is `ref_sim.stdio agent:depth=2 random --seed 6`, game for game.
    assert stdio.main([STDIO_BOTS[0], STDIO_BOTS[2], "--games", "4", "--seed", "6", "-q",
                       "--out", str(tmp_path / "alone")] + STDIO_TIMING) == 0
    alone = read_games(tmp_path / "alone")
    ours = [g for g in games if g["pairing"] == [0, 2]]
    assert [moves_of(g) for g in ours] == [moves_of(g) for g in alone]
    assert [[a["seed"] for a in g["agents"]] for g in ours] == \
        [[a["seed"] for a in g["agents"]] for g in alone]


def test_without_out_the_files_go_unless_the_event_is_interrupted(tmp_path, capsys, monkeypatch):
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert tournament.main(["random", "random", "--protocol", "stdio", "--seed", "1"]) == 0
    assert "(temporary: deleted at the end; --out DIR keeps them)" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []
    # Ctrl-C as the second game is written: the first is kept, and so is the directory.
    collect, calls = tournament.Event.collect, []

    def interrupted(self, *args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return collect(self, *args)
    monkeypatch.setattr(tournament.Event, "collect", interrupted)
    assert tournament.main(["random", "random", "--protocol", "stdio", "--seed", "1"]) == 130
    captured = capsys.readouterr()
    (kept,) = tmp_path.iterdir()
    assert f"--resume --out {kept} continues the event." in captured.err
    assert "Random1 vs Random2: 1 - 0 - 0" in captured.out or \
        "Random1 vs Random2: 0 - 1 - 0" in captured.out
    monkeypatch.setattr(tournament.Event, "collect", collect)
    assert tournament.main(["--resume", "--out", str(kept), "-q"]) == 0
    assert [g["game"] for g in read_games(kept)] == [1, 2]


@pytest.mark.filterwarnings("ignore:Port 8787 is already in use:UserWarning")
def test_a_stdio_round_robin_on_a_cluster_is_the_local_one(tmp_path, capsys, monkeypatch):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setenv("TMPDIR", str(tmp_path))      # the workers' game directories
    args = STDIO_BOTS + ["--protocol", "stdio", "--seed", "8", "-q"] + STDIO_TIMING
    assert tournament.main(args + ["--out", str(tmp_path / "local")]) == 0
    local_text = capsys.readouterr().out
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as lc:
        assert tournament.main(args + ["--out", str(tmp_path / "far"), "--cluster",
                                       lc.scheduler_address]) == 0
    far_text = capsys.readouterr().out
    local, far = read_games(tmp_path / "local"), read_games(tmp_path / "far")
    assert [moves_of(g) for g in far] == [moves_of(g) for g in local]
    assert all(g["worker"] and g["attempts"] == 1 for g in far)
    def tables(text):
        return text.split("\nWorker ")[0].split("\nGames: ")[0]
    assert tables(far_text) == tables(local_text)
    assert "Retried: 0 games" in far_text
    assert sorted(p.name for p in (tmp_path / "far" / "logs").iterdir()) == \
        sorted(p.name for p in (tmp_path / "local" / "logs").iterdir())


def test_the_docstring_examples_hold():
    import doctest
    assert doctest.testmod(tournament).failed == 0
