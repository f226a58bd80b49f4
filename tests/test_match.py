"""The match runner: agent specs, the schedule, log parsing, and the series logic.

Series logic runs against a stand-in for ``play_game``, given as ``match.main(argv, play=...)``
(no processes, instant games); ``tests/test_match_e2e.py`` plays real games through the referee.
"""

import json
import os
import sys
from pathlib import Path

import pytest

from ref_sim import match
from ref_sim.series import file_games, loop as series, openings
from ref_sim.series.output import report
from ref_sim.series.output.game_line import GameLine, Played
from ref_sim.referees.file_referee import WIN_REASON, GameRecord
from ref_sim.rules import Game
from ref_sim.series.specs import BUILTINS, agent_spec
import virtual_games


def test_agent_specs_and_names():
    assert agent_spec("random").label == "Random"
    assert agent_spec("agent").label == "Agent"
    assert agent_spec("python my_bot.py {name} --dir {dir}").label == "Mybot"
    assert agent_spec("python -m foo.bar {name}").label == "Bar"
    spec = agent_spec('./player --name {name} --dir "{dir}" -t {time_limit}')     # " quotes on Windows too
    assert spec.command("X1", "/a b", 0.5) == ["./player", "--name", "X1", "--dir", "/a b",
                                               "-t", "0.5"]


def test_builtin_options():
    seed = agent_spec("seed:depth=4")
    assert seed.label == "Seed" and seed.spec == "seed:depth=4"
    assert seed.command("Seed2", "/d", 1)[1:] == [
        "-m", "agent", "Seed2", "--dir", "/d", "--time-limit", "1", "--engine", "seed",
        "--depth", "4"]
    assert agent_spec("seed").command("S", "/d", 1)[-2:] == ["--engine", "seed"]
    assert agent_spec("agent:depth=6").command("A", "/d", 1)[-2:] == ["--depth", "6"]
    assert agent_spec("agent:nodes=20000").command("A", "/d", 1)[-2:] == \
        ["--nodes", "20000"]
    assert agent_spec("random").command("R", "/d", 1, seed=7)[-2:] == ["--seed", "7"]
    for bad in ("seed:nodes=5", "agent:depth=0", "agent:depth=x", "random:depth=3",
                "agent:depth"):
        with pytest.raises(ValueError):
            agent_spec(bad)


def test_bad_spec_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        match.main(["seed:nodes=5", "random"])
    assert exit_info.value.code == 2
    assert "takes no option 'nodes'" in capsys.readouterr().err


def test_schedule_pairs_share_openings_with_sides_swapped():
    games = openings.schedule(11, 20)
    for a, b in zip(games[::2], games[1::2]):
        assert a.pair == b.pair and a.opening == b.opening and a.first != b.first
    assert len({g.opening for g in games}) == 10
    assert {g.first for g in games[::2]} == {0, 1}          # the coin is flipped per pair
    for g in games:                                         # chained, legal, no repeats
        assert len(g.opening) == 4 and len(set(g.opening)) == 4
        for (_, spot), (board, _) in zip(g.opening, g.opening[1:]):
            assert board == spot
        position = Game()
        for board, spot in g.opening:
            assert position.is_legal(board, spot)
            position.play(board, spot)
    # Deterministic: game k is the same game however many are scheduled.
    assert openings.schedule(11, 7) == games[:7]
    assert openings.schedule(12, 4) != games[:4]
    unpaired = openings.schedule(11, 6, paired=False)
    assert all(g.pair is None for g in unpaired)
    assert len({g.opening for g in unpaired}) == 6


# -- series logic with instant fake games ---------------------------------------------------

class FakeGames:
    """Stands in for play_game: ``winner(scheduled_index, p1_name, names)`` decides."""

    def __init__(self, decide):
        self.decide = decide
        self.played = []
        self.encodings = []     # the encoding play_game was given, per game

    def __call__(self, number, specs, names, directory, logs, settings, *, seed=None, first=None,
                 opening=None, stop=None, agent_seeds=None, must_start=False):
        p1 = first
        p2 = [n for n in names if n != p1][0]
        encoding = settings.encoding
        record = GameRecord(names=tuple(names), time_limit=settings.time_limit, seed=seed, p1=p1, p2=p2,
                            encoding=encoding or "utf-8",
                            opening=[((p1, p2)[i % 2], b, s) for i, (b, s) in enumerate(opening)],
                            duration=0.01)
        winner = self.decide(number, p1, sorted(specs))
        if winner is None:
            record.result, record.reason = "tie", "tie"
        else:
            record.result, record.reason = "win", WIN_REASON
            record.winner, record.loser = winner, [n for n in names if n != winner][0]
        self.played.append((number, p1, [tuple(m) for m in opening]))
        self.encodings.append(encoding)
        return Played(record)


def read_lines(out):
    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


def test_sprt_stops_the_series_and_says_which(tmp_path, capsys):
    fake = FakeGames(lambda number, p1, names: "Agent1")      # Agent1 wins every game
    assert match.main(["agent", "random", "--sprt", "0", "10", "0.05", "0.05", "--seed", "3",
                       "--out", str(tmp_path)], play=fake) == 0
    out = capsys.readouterr().out
    assert "H1 was accepted (Elo >= 10)" in out and "SPRT decided (H1 accepted)" in out
    lines = read_lines(tmp_path)
    assert 2 <= len(lines) < match.SPRT_MAX_GAMES and len(lines) % 2 == 0
    assert len(lines) == len(fake.played)
    assert f"Score of Agent1 vs Random2: {len(lines)} - 0 - 0  [1.000] {len(lines)}" in out
    assert "Elo difference: +inf +/- inf" in out
    assert f"Ptnml(0-2): [0, 0, 0, 0, {len(lines) // 2}]" in out
    # Resuming a decided series plays nothing more.
    match.main(["agent", "random", "--sprt", "0", "10", "0.05", "0.05", "--out", str(tmp_path),
                "--resume"], play=fake)
    assert len(read_lines(tmp_path)) == len(lines) == len(fake.played)
    assert "H1 was accepted" in capsys.readouterr().out


def test_sprt_accepts_h0_for_a_losing_agent(tmp_path, capsys):
    play = FakeGames(lambda n, p1, names: "Random2")
    match.main(["agent", "random", "--sprt", "0", "10", "0.05", "0.05", "--unpaired",
                "--games", "500", "--out", str(tmp_path), "-q"], play=play)
    out = capsys.readouterr().out
    assert "H0 was accepted (Elo <= 0)" in out and "Ptnml" not in out
    assert len(read_lines(tmp_path)) < 500


def test_pairs_rounding_and_pentanomial(tmp_path, capsys):
    # p1 always wins: every pair is split 1-1, so the pentanomial is all in the middle.
    fake = FakeGames(lambda number, p1, names: p1)
    match.main(["agent", "random", "--games", "5", "--seed", "8", "--out", str(tmp_path)], play=fake)
    out = capsys.readouterr().out
    assert "--games 5 rounded up to 6" in out
    assert "Score of Agent1 vs Random2: 3 - 3 - 0  [0.500] 6" in out
    assert "Ptnml(0-2): [0, 0, 3, 0, 0]" in out
    lines = read_lines(tmp_path)
    assert sorted(g["game"] for g in lines) == [1, 2, 3, 4, 5, 6]
    for a, b in zip(lines[::2], lines[1::2]):
        assert a["pair"] == b["pair"] and a["p1"] == b["p2"]
        assert [m[1:] for m in a["opening"]] == [m[1:] for m in b["opening"]]


def test_an_existing_series_needs_resume(tmp_path, capsys):
    play = FakeGames(lambda n, p1, names: None)
    match.main(["random", "random", "--games", "2", "--seed", "1", "--out", str(tmp_path)], play=play)
    with pytest.raises(SystemExit):
        match.main(["random", "random", "--games", "2", "--out", str(tmp_path)], play=play)
    assert "add --resume" in capsys.readouterr().err
    with pytest.raises(SystemExit):      # a different series cannot be resumed
        match.main(["random", "agent", "--games", "4", "--out", str(tmp_path), "--resume"], play=play)
    assert (f"cannot resume: AGENT1 AGENT2 was random random in {tmp_path}, not random agent "
            "(leave AGENT1 AGENT2 out to continue the series as it was, or choose another --out)"
            ) in capsys.readouterr().err
    # A line cut by a crash is dropped and its game played again.
    path = tmp_path / "games.jsonl"
    path.write_text(path.read_text() + '{"format": 1, "game": 3, "pa')
    match.main(["random", "random", "--games", "4", "--out", str(tmp_path), "--resume"], play=play)
    out, err = capsys.readouterr()
    assert f"warning: {path} line 3: not JSON" in err and "2 of 4 games already played, 2 to go" in out
    assert (tmp_path / "games.jsonl.dropped").read_text().startswith('{"format": 1, "game": 3, "pa')
    assert sorted(g["game"] for g in read_lines(tmp_path)) == [1, 2, 3, 4]
    assert "Score of Random1 vs Random2: 0 - 0 - 4  [0.500] 4" in out


def test_concurrency_is_capped_below_the_cores(tmp_path, capsys, monkeypatch):
    play = FakeGames(lambda n, p1, names: p1)
    monkeypatch.setattr(series.os, "cpu_count", lambda: 4)
    assert series.concurrency_cap() == 3
    match.main(["random", "random", "--games", "8", "--concurrency", "16", "--out",
                str(tmp_path), "-q"], play=play)
    assert "--concurrency 16 capped to 3" in capsys.readouterr().err
    assert len(read_lines(tmp_path)) == 8
    monkeypatch.setattr(series.os, "cpu_count", lambda: 1)
    assert series.concurrency_cap() == 1


def test_help_documents_the_agents_and_output(capsys):
    with pytest.raises(SystemExit):
        match.main(["--help"])
    text = capsys.readouterr().out
    for needle in ("seed:depth=N", "agent:nodes=N", "{time_limit}", "--sprt", "Ptnml(0-2)",
                   "--resume", "--concurrency", "games.jsonl"):
        assert needle in text


def test_mistyped_builtin_is_a_usage_error(capsys, monkeypatch):
    # "Random" ran as a shell command, crashed every game and scored 2-0 with exit 0.
    for typo, hint in (("Random", "; did you mean 'random'?"), ("foo", ""), ("agnet", ""),
                       ("Seed:depth=4", "; did you mean 'seed'?")):
        with pytest.raises(SystemExit) as exit_info:
            match.main(["agent", typo])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert (f"error: {typo!r} is not a built-in agent (built-ins: random, agent, seed, "
                f"eager, flood, nbsp) nor a command found on the PATH{hint}\n") in err
    # A command on the PATH, or anything with arguments or a path, is still a command.
    # This Python's folder on the PATH: Windows has no python3 there.
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    python = Path(sys.executable).stem
    assert agent_spec(python).template == python
    assert agent_spec("./my_bot {name}").label == "Mybot"


def test_out_pointing_at_a_file_is_one_clear_error(tmp_path, capsys):
    path = tmp_path / "results.txt"
    path.write_text("x")
    with pytest.raises(SystemExit) as exit_info:
        match.main(["random", "random", "--out", str(path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"error: --out {path}: not a directory (it is a file)" in err
    assert "Traceback" not in err


def test_time_limits_are_checked(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        match.main(["random", "random", "--time-limit", "0.05"])
    assert exit_info.value.code == 2
    assert "use at least 0.1" in capsys.readouterr().err
    play = FakeGames(lambda number, p1, names: None)
    assert match.main(["random", "random", "--time-limit", "0.5", "--out", str(tmp_path)], play=play) == 0
    assert capsys.readouterr().err == ("warning: the real referee takes whole seconds "
                                       "(--time_limit N); 0.5 s per move is for rehearsal only\n")


def test_builtin_agents_always_get_the_series_limit():
    # An agent left at its default 10 s against a shorter referee loses on time: every
    # built-in that thinks is given the limit (the random agent answers at once).
    for spec in ("agent", "agent:depth=6", "agent:nodes=500", "seed", "seed:depth=2"):
        command = agent_spec(spec).command("A1", "/d", 0.7)
        assert command[command.index("--time-limit") + 1] == "0.7", spec
    assert "{time_limit}" not in BUILTINS["random"][0]


@pytest.mark.e2e
def test_readme_sprt_example_does_not_stop_after_one_pair(tmp_path, capsys):
    # --sprt 0 20 0.05 0.05 used to accept H1 after 2 won games (LLR 7.46).  Each won pair
    # now adds ~0.056 to the LLR: H1 is accepted only after dozens of won pairs.
    fake = FakeGames(lambda number, p1, names: "Agent1")
    assert match.main(["agent", "agent:depth=6", "--sprt", "0", "20", "0.05", "0.05",
                       "--seed", "1", "--out", str(tmp_path), "-q"], play=fake) == 0
    out = capsys.readouterr().out
    assert "H1 was accepted (Elo >= 20)" in out
    assert len(fake.played) >= 100


# -- hostile built-ins and --encoding --------------------------

def test_hostile_builtins():
    random_agent = [sys.executable, "-m", "ref_sim.bots.random_agent", "Eager2", "--dir", "/d",
                    "--seed", "3"]
    assert agent_spec("eager").command("Eager2", "/d", 1, 3) == random_agent + ["--eager"]
    assert agent_spec("nbsp").command("N2", "/d", 1)[-1] == "--nbsp"
    assert agent_spec("flood").command("F2", "/d", 1)[-2:] == ["--flood", "20000"]
    slower = agent_spec("flood:rate=500").command("F2", "/d", 1)
    assert slower[-2:] == ["--flood", "500"] and slower.count("--flood") == 1
    assert [agent_spec(s).label for s in ("eager", "flood:rate=5", "nbsp")] == \
        ["Eager", "Flood", "Nbsp"]
    # The flood's file survives the referee's clean-up: the runner deletes it.
    from ref_sim.referees.file_shell import is_cleanup_name
    assert agent_spec("flood").scratch == ("{name}-flood.log",)
    assert not is_cleanup_name("Flood2-flood.log")
    with pytest.raises(ValueError, match="'eager' takes no option 'rate'"):
        agent_spec("eager:rate=5")


def test_encoding_goes_to_every_builtin_and_to_commands_that_ask(tmp_path):
    for spec in ("agent", "agent:depth=6", "seed", "random", "eager", "flood", "nbsp"):
        command = agent_spec(spec).command("A1", "/d", 1, 0, "iso8859-1")
        assert command[-2:] == ["--encoding", "iso8859-1"], spec
        assert "--encoding" not in agent_spec(spec).command("A1", "/d", 1, 0), spec
    bot = agent_spec("./bot {name} --codec {encoding}")
    assert bot.command("B1", "/d", 1, 0, "cp1252") == ["./bot", "B1", "--codec", "cp1252"]
    assert bot.command("B1", "/d", 1, 0)[-1] == match.locale_encoding()
    # The command line the runner launches (our agent's own --encoding is another
    # engineer's: whether it accepts it is not looked at here).
    log = tmp_path / "agent.log"
    process = file_games.start_agent(agent_spec("agent"), "Agent1", tmp_path, 1.0, log, 0,
                                "iso8859-1")
    process.kill()
    process.wait()
    first = log.read_text().splitlines()[0]
    assert first.startswith("$ ") and first.endswith(" --encoding iso8859-1"), first


def test_series_encoding_is_given_to_every_game_and_kept(tmp_path, capsys):
    fake = FakeGames(lambda n, p1, names: p1)
    assert match.main(["agent", "nbsp", "--games", "2", "--encoding", "Latin-1", "--out",
                       str(tmp_path), "-q"], play=fake) == 0
    assert fake.encodings == ["iso8859-1", "iso8859-1"]
    assert json.loads((tmp_path / "series.json").read_text())["encoding"] == "iso8859-1"
    for game in read_lines(tmp_path):
        assert game["encoding"] == "iso8859-1"
        assert all(a["command"][-2:] == ["--encoding", "iso8859-1"] for a in game["agents"])
    with pytest.raises(SystemExit):      # the referee's encoding is part of the series
        match.main(["agent", "nbsp", "--games", "4", "--out", str(tmp_path), "--resume",
                    "--encoding", "cp1252"], play=fake)
    assert "cannot resume: --encoding was iso8859-1 in " in capsys.readouterr().err
    # Left out, it is the series' own: --resume continues in Latin-1.
    assert match.main(["agent", "nbsp", "--games", "4", "--out", str(tmp_path), "--resume",
                       "-q"], play=fake) == 0
    assert fake.encodings == ["iso8859-1"] * 4
    with pytest.raises(SystemExit) as exit_info:
        match.main(["agent", "nbsp", "--encoding", "utf-16"], play=fake)
    assert exit_info.value.code == 2
    assert "--encoding utf-16: no locale uses it" in capsys.readouterr().err


# -- --resume --out DIR alone, refusals, distinct games, one game -------------------

def test_resume_with_out_alone_continues_the_series_as_recorded(tmp_path, capsys):
    fake = FakeGames(lambda n, p1, names: p1)
    assert match.main(["agent", "seed:depth=2", "--games", "6", "--time-limit", "0.7", "--seed",
                       "5", "--unpaired", "--encoding", "latin-1", "--sprt", "0", "10", "0.001",
                       "0.001", "--out", str(tmp_path), "-q"], play=fake) == 0
    recorded = json.loads((tmp_path / "series.json").read_text())
    assert {key: recorded[key] for key in ("agents", "time_limit", "paired", "encoding", "seed",
                                           "games", "sprt")} == {
        "agents": ["agent", "seed:depth=2"], "time_limit": 0.7, "paired": False,
        "encoding": "iso8859-1", "seed": 5, "games": 6, "sprt": [0, 10, 0.001, 0.001]}
    first_run = list(fake.played)
    lines = read_lines(tmp_path)
    (tmp_path / "games.jsonl").write_text("".join(json.dumps(g) + "\n" for g in lines[:2]))
    fake.played.clear()
    assert match.main(["--resume", "--out", str(tmp_path)], play=fake) == 0
    out = capsys.readouterr().out
    assert "resuming: 2 of 6 games already played, 4 to go" in out
    assert "series seed 5; 6 games at 0.7 s per move" in out          # unpaired, as recorded
    assert fake.played == first_run[2:]                               # the same games again
    assert fake.encodings[-1] == "iso8859-1"
    assert json.loads((tmp_path / "series.json").read_text()) == recorded
    # --games may grow the series; the new count is recorded.
    assert match.main(["--resume", "--out", str(tmp_path), "--games", "8", "-q"], play=fake) == 0
    assert json.loads((tmp_path / "series.json").read_text())["games"] == 8
    assert sorted(g["game"] for g in read_lines(tmp_path)) == list(range(1, 9))


@pytest.mark.parametrize("option, message", [
    (["--time-limit", "1"], "--time-limit was 0.7 in {out}, not 1"),
    (["--paired"], "--paired was no in {out}, not yes"),
    (["--seed", "6"], "--seed was 5 in {out}, not 6"),
    (["--encoding", "utf-8"], "--encoding was none in {out}, not utf-8"),
    (["--sprt", "0", "10", "0.05", "0.05"], "--sprt was none in {out}, not 0 10 0.05 0.05"),
    (["random", "seed:depth=2"], "AGENT1 AGENT2 was agent seed:depth=2 in {out}, not random "
                                 "seed:depth=2"),
], ids=["time-limit", "pairing", "seed", "encoding", "sprt", "agents"])
def test_resume_refuses_what_contradicts_the_series_in_one_line(option, message, tmp_path, capsys):
    play = FakeGames(lambda n, p1, names: p1)
    assert match.main(["agent", "seed:depth=2", "--games", "2", "--time-limit", "0.7", "--seed",
                       "5", "--unpaired", "--out", str(tmp_path), "-q"], play=play) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        match.main(["--resume", "--out", str(tmp_path)] + option, play=play)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (f"python -m ref_sim.match: error: cannot resume: {message.format(out=tmp_path)} "
                   f"(leave {message.split(' was ')[0]} out to continue the series as it was, or "
                   "choose another --out)")


def test_resume_needs_a_series_or_agents_and_makes_nothing(tmp_path, capsys):
    missing = tmp_path / "nothing-here"
    for argv, error in [
            (["--resume", "--out", str(missing)], f"--resume: {missing} holds no series to continue "
                                                  "(no series.json); give AGENT1 AGENT2 to start one there"),
            (["--resume"], "--resume needs --out (the directory of the series to continue)"),
            ([], "AGENT1 and AGENT2 are required (or --resume --out DIR, to continue the series in DIR)"),
            (["agent"], "AGENT2 is missing: give both agents (or neither, with --resume)")]:
        with pytest.raises(SystemExit) as exit_info:
            match.main(argv)
        assert exit_info.value.code == 2
        assert capsys.readouterr().err.strip().splitlines()[-1] == f"python -m ref_sim.match: error: {error}"
    assert not missing.exists()


def test_one_game_has_no_empty_pentanomial_and_repeated_games_are_counted_once(tmp_path, capsys):
    play = FakeGames(lambda n, p1, names: p1)
    assert match.main(["agent", "random", "--games", "1", "--out", str(tmp_path / "one")], play=play) == 0
    out = capsys.readouterr().out
    assert "Score of Agent1 vs Random2: " in out and "] 1\n" in out and "Ptnml" not in out
    assert "Distinct games: 1 of 1\n" in out
    games = [GameLine(k, "tie", ["A", "B"], {}, [{"board": 4, "spot": 0}], p1=p1, opening=[[p1, 4, 4]])
             for k, p1 in enumerate(["A", "B", "A"], 1)]      # the other side, then a repeat
    assert report.distinct_line(games, "vary them") == (
        "Distinct games: 2 of 3 (warning: 1 repeats an earlier game move for move (game 3 = game 1), and counts "
        "again in the figures above; vary them)")


@pytest.mark.parametrize("argv, message", [
    (["--games", "0"], "argument --games: must be an integer from 1 to 100,000, got '0'"),
    (["--games", "1000001"], "argument --games: must be an integer from 1 to 100,000, got '1000001'"),
    (["--time-limit", "nan"], "argument --time-limit: must be a number at most 3,600, got 'nan'"),
    (["--time-limit", "inf"], "argument --time-limit: must be a number at most 3,600, got 'inf'"),
    (["--time-limit", "-1"], "--time-limit -1: the referee looks for a move every 50 ms"),
    (["--concurrency", "0"], "argument --concurrency: must be an integer at least 1, got '0'"),
    (["--sprt", "0", "inf", "0.05", "0.05"], "argument --sprt: must be a number from -1,000 to 1,000, got 'inf'"),
    (["--sprt", "0", "10", "0", "0.05"], "--sprt needs ELO0 < ELO1 and 0 < ALPHA, BETA < 1"),
    (["--sprt", "0", "5000", "0.05", "0.05"], "argument --sprt: must be a number from -1,000 to 1,000, got '5000'"),
])
def test_numbers_are_checked_in_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        match.main(["random", "random"] + argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err.strip().splitlines()[-1]


def test_a_lost_cluster_stops_the_series_in_one_line_with_its_resume_line(tmp_path, capsys):
    """A game that lost every worker (or a scheduler that went away) ends the series as a stop does:
    the games so far summarised, one line saying why, the command that continues it; exit 1."""
    from ref_sim.series.run import cluster_address
    calls = []

    def flaky(number, *args, **kwargs):         # games on a virtual clock: no process needed here
        calls.append(number)
        if len(calls) == 2:
            raise cluster_address.ClusterError("game-2 was lost by every worker that tried it")
        return virtual_games.play_game(number, *args, **kwargs)

    out = tmp_path / "run"
    code = match.main(["random", "random", "--games", "4", "--time-limit", "0.2", "--seed", "1",
                       "--out", str(out), "-q"], play=flaky)
    captured = capsys.readouterr()
    assert code == 1, captured.err
    (line,) = [line for line in captured.err.splitlines() if "lost by every worker" in line]
    assert "the series stopped after 1 game" in line and "--resume --out" in line
    assert "Score of Random1 vs Random2" in captured.out


# -- a resumed series keeps the isolation it began with -----------------------

@pytest.mark.skipif(os.name != "posix", reason="--isolate is refused off POSIX (cgroups, bwrap, resource limits)")
def test_a_resumed_series_keeps_its_isolation_and_refuses_a_new_one(tmp_path, capsys):
    from ref_sim.series.process import isolation
    fake = FakeGames(lambda n, p1, names: p1)
    seen = []

    def play(*args, **kwargs):
        seen.append(args[5].isolate)
        return fake(*args, **kwargs)
    isolated, plain = tmp_path / "isolated", tmp_path / "plain"
    assert match.main(["random", "random", "--games", "2", "--out", str(isolated), "--isolate",
                       "--isolate-memory", "300", "-q"], play=play) == 0
    assert json.loads((isolated / "series.json").read_text())["isolate"] == {
        "cores": 1, "memory_mb": 300, "processes": isolation.DEFAULT_PROCESSES,
        "disk_mb": isolation.DEFAULT_DISK_MB}
    capsys.readouterr()
    assert match.main(["--resume", "--out", str(isolated), "--games", "4"], play=play) == 0     # no --isolate
    assert "isolated as the series began" in capsys.readouterr().out
    assert seen == [isolation.Isolation(1, 300, isolation.DEFAULT_PROCESSES)] * 4
    assert match.main(["random", "random", "--games", "2", "--out", str(plain), "-q"], play=play) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        match.main(["--resume", "--out", str(plain), "--isolate", "--games", "4"], play=play)
    assert exit_info.value.code == 2
    assert "cannot resume: --isolate was none in" in capsys.readouterr().err
    (plain / "series.json").write_text(json.dumps({**json.loads((plain / "series.json").read_text()),
                                                   "isolate": {"cores": "all"}}))
    with pytest.raises(SystemExit):
        match.main(["--resume", "--out", str(plain), "--games", "4"], play=play)
    assert "the recorded 'isolate' must be null or" in capsys.readouterr().err


def test_the_resume_command_is_the_last_line_and_repeats_the_isolation(tmp_path, monkeypatch):
    import io

    from ref_sim.series.process import isolation
    both = io.StringIO()            # stdout and stderr in the order a terminal shows them
    monkeypatch.setattr(sys, "stdout", both)
    monkeypatch.setattr(sys, "stderr", both)
    code = series.conclude("ref_sim.tournament", [], lambda games: ["the table"], out_arg=str(tmp_path),
                           out=tmp_path, say=print, what="tournament",
                           stopped=series.Stopped(interrupt=KeyboardInterrupt()),
                           resume_options=isolation.command_options(isolation.Isolation()),
                           more_lines=["Crosstable: x.html"])
    lines = both.getvalue().splitlines()
    assert code != 0 and lines[-2] == "Crosstable: x.html"
    assert lines[-1].endswith(f"--resume --out {tmp_path} --isolate --isolate-cores 1 --isolate-memory "
                              f"{isolation.DEFAULT_MEMORY_MB} --isolate-processes {isolation.DEFAULT_PROCESSES} "
                              f"--isolate-disk {isolation.DEFAULT_DISK_MB}")


def test_bots_are_named_from_their_command_and_a_resumed_series_keeps_its_names(tmp_path):
    play = FakeGames(lambda n, p1, names: p1)
    walrus = f"{sys.executable} bots/walrus.py {{name}} --dir {{dir}}"
    assert match.main(["random", walrus, "--games", "2", "--out", str(tmp_path), "-q"], play=play) == 0
    recorded = json.loads((tmp_path / "series.json").read_text())
    assert recorded["names"] == ["Random1", "Walrus2"]
    # A series begun when such a bot was named after its interpreter goes on under that name.
    (tmp_path / "series.json").write_text(json.dumps({**recorded, "names": ["Random1", "Python2"]}))
    (tmp_path / "games.jsonl").write_text((tmp_path / "games.jsonl").read_text().replace("Walrus2", "Python2"))
    assert match.main(["--resume", "--out", str(tmp_path), "--games", "4", "-q"], play=play) == 0
    assert all(set(game["names"]) == {"Random1", "Python2"} for game in read_lines(tmp_path))
