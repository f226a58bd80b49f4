"""Tournaments (ref_sim/tournament.py): the schedule, the tables from game lines, each pairing's
progress line, bad options and resume rules in one line, and real tournaments: three fast bots
through the file protocol (the files, the table), a stdin/stdout gauntlet whose pairings are the
head-to-head series of ref_sim.stdio, kept logs and distinct games without --out, the same
tournament on a Dask cluster, and stop signals as tests/test_stops.py sends them to ref_sim.match
(every process ended, no temporary folder left, the table so far, the resume line run as
printed, 128 + the signal; a runner killed outright leaves no player waiting)."""

import io
import json
import os
import re
import signal
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from ref_sim import stdio, tournament
from ref_sim.series import openings
from ref_sim.series.output import records
from ref_sim.series.output.event_record import Bot, EventSettings
from ref_sim.series.output.game_line import GameLine
from ref_sim.series.output.strict_json import RecordError
from ref_sim.referees.file_referee import TIME_OUT
# The runner processes of tests/test_stops.py; no_leftovers is its autouse clean-up, here too.
from test_stops import (PATIENCE, SHELL_RANDOM, SIGNAL_IDS, SIGNALS, Run, assert_stopped,  # noqa: F401
                        no_leftovers, started_by, wait_until)

PY = sys.executable
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals and /proc")


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

SETTINGS = EventSettings.from_json({"bots": [{"name": "Agent1", "spec": "agent:depth=3"},
                                             {"name": "Random2", "spec": "random"},
                                             {"name": "Seed3", "spec": "seed:depth=1"}],
                                    "pairings": [[0, 1], [0, 2], [1, 2]]})


def game(number, pairing, points, pair=0, reason="3 in a row", notes=None):
    """A games.jsonl line with what the tables read: agent 1 is the pairing's first bot."""
    a, b = (SETTINGS.names[i] for i in pairing)
    winner = {1: a, 0: b}.get(points)
    return GameLine(game=number, pairing=list(pairing), pair=pair,
                    agents=[{"name": a}, {"name": b}], names=[a, b],
                    result="tie" if points == 0.5 else "win", score=points,
                    winner=winner, reason="tie" if points == 0.5 else reason,
                    notes=notes or {}, moves=[])


def test_the_table_ranks_rates_and_counts_faults():
    games = [game(1, (0, 1), 1), game(2, (0, 1), 1), game(3, (0, 2), 1), game(4, (0, 2), 0.5),
             game(5, (1, 2), 0, reason=TIME_OUT), game(6, (1, 2), 0.5),
             game(7, (1, 2), 0, notes={"Random2": "crashed (exited with code 1)"})]
    lines = tournament.report_lines(SETTINGS, games)
    header = lines[0].split()
    assert header == ["Rank", "Bot", "Elo", "+/-", "Games", "Score", "Draws", "Time-outs",
                      "Crashes", "Invalid", "Spec"]
    rows = [line.split() for line in lines[1:4]]
    assert [row[1] for row in rows] == ["Agent1", "Seed3", "Random2"]
    agent, seed, rand = rows
    assert agent[0] == "1" and float(agent[2]) > 0 > float(rand[2])
    assert abs(sum(float(row[2]) for row in rows)) < 0.2                 # the mean at 0
    assert agent[4:7] == ["4", "87.5%", "25.0%"] and agent[-1] == "agent:depth=3"
    assert rand[4:10] == ["5", "10.0%", "20.0%", "1", "1", "0"]          # time-out, crash
    assert "Invalid: games lost by a late move, or an invalid or out-of-order one" in lines[5]
    assert "the mean at 0" in lines[4]
    text = "\n".join(lines)
    assert "  Agent1 vs Random2: 2 - 0 - 0  [1.000] 2, Elo difference: +inf +/- inf" in text
    assert "Random2 vs Seed3:  0 - 2 - 1  [0.167] 3" in text
    assert "Ptnml(0-2): [0, 0, 0, 0, 1]" in text
    assert "Faults (hangs: games after which the bot was still running at the end of the exit wait" in text
    faults = text.split("was killed):\n")[1].split("\n\n")[0].splitlines()
    assert faults == ["  Random2: 0 wins, 4 losses, 1 draws (crashes 1, time-outs 1); "
                      "exited with code 1 x1"]
    assert lines[-1].startswith("Distinct games: ")                    # last, as in match


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
    apart = replace(SETTINGS, bots=SETTINGS.bots + (Bot("eager", "Eager4"),),
                    pairings=((0, 1), (2, 3), (0, 2)))
    text = "\n".join(tournament.report_lines(apart, [game(1, (0, 1), 1), replace(
        game(2, (0, 1), 1), pairing=[2, 3], agents=[{"name": "Seed3"}, {"name": "Eager4"}],
        names=["Seed3", "Eager4"], winner="Seed3")]))
    assert "The bots fall into 2 groups that never met" in text
    assert "(Agent1, Random2; Seed3, Eager4)" in text


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_on_a_terminal_the_pairings_take_turns_on_one_line(monkeypatch):
    monkeypatch.setattr(sys, "stdout", Terminal())
    settings = replace(SETTINGS, rounds=10)
    progress = tournament.PairingProgress(settings, [game(1, (0, 1), 1)])   # played before
    progress.start(0)                       # drawn at once, as ref_sim.match draws its line
    progress.start(1)
    progress.start(2)
    progress.game(1, "Game 4/60: a draw", game(4, (0, 2), 0.5))
    progress.game(2, "Game 5/60: Random2 loses on time", game(5, (1, 2), 0, reason=TIME_OUT))
    progress.close()
    text = sys.stdout.getvalue()
    assert text.startswith("\r[#.") and "] Agent1 vs Random2: 1/20  +1 -0 =0" in text
    assert "] Agent1 vs Seed3: 1/20  +0 -0 =1" in text and "Game 4/60" not in text
    # The game that went wrong is a line of its own above the bar; the last bar is ended once.
    assert "\rGame 5/60: Random2 loses on time\033[K\n" in text
    assert text.count("\n") == 2 and text.endswith("\033[K\n")
    assert "] Random2 vs Seed3: 1/20  +0 -1 =0  Elo too few games  time-outs 1/0" in text.split("\n")[1]


def test_in_a_log_every_game_is_a_line_and_each_pairing_its_figures(monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    progress = tournament.PairingProgress(replace(SETTINGS, rounds=10), [])
    for number in range(1, 13):
        pairing = (0, 1) if number <= 10 else (0, 2)
        progress.start(SETTINGS.pairings.index(pairing))
        progress.game(SETTINGS.pairings.index(pairing), f"Game {number}/60: won",
                      game(number, pairing, 1, pair=(number - 1) // 2))
    progress.close()
    lines = sys.stdout.getvalue().splitlines()
    assert [line for line in lines if line.startswith("Game ")] == [f"Game {n}/60: won" for n in range(1, 13)]
    (figures,) = [line for line in lines if line.startswith("Progress: ")]
    assert figures.startswith("Progress: Agent1 vs Random2: 10/20  +10 -0 =0  Elo ")
    assert "\r" not in sys.stdout.getvalue()


# -- bad options and resume rules: one line each ---------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["random"], "a tournament needs at least two bots"),
    (["random", "random", "--rounds", "0"], "argument --rounds: must be an integer from 1 to 100,000, got '0'"),
    (["random", "random", "--rounds", "two"], "argument --rounds: must be an integer from 1 to 100,000, got 'two'"),
    (["random", "random", "random", "--rounds", "20000"],
     "120,000 games: at most 100,000 in one tournament (fewer --rounds or bots)"),
    (["random", "agnet"], "'agnet' is not a built-in agent"),
    (["random", "random", "--anchor", "Seed9"], "--anchor Seed9: no such bot; name one of "
                                                "Random1, Random2"),
    (["random", "random", "--anchor", "random"], "--anchor random: 2 bots have that spec"),
    (["random", "random", "--time-limit", "0.01"], "--time-limit 0.01: the referee looks"),
    (["random", "random", "--time-limit", "nan"], "argument --time-limit: must be a number at most 3,600, got 'nan'"),
    (["random", "random", "--encoding", "rot13"], "--encoding rot13: "),
    (["random", "random", "--protocol", "stdio", "--time-limit", "1", "--turn-ms", "50"],
     "--time-limit and --turn-ms are the same setting: give one"),
    (["random", "random", "--protocol", "stdio", "--time-limit", "0"],
     "--time-limit 0: a turn is more than 0 and at most 3,600 s"),
    (["random", "random", "--turn-ms", "50"], "--turn-ms is not for --protocol file"),
    (["random", "random", "--protocol", "stdio", "--turn-ms", "0"],
     "argument --turn-ms: must be a number above 0 and at most 3,600,000, got '0'"),
    (["random", "random", "--concurrency", "0"], "argument --concurrency: must be an integer at least 1, got '0'"),
    (["--resume"], "--resume needs --out"),
])
def test_a_bad_option_is_one_line_and_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        tournament.main(argv)
    assert stop.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("python -m ref_sim.tournament: error: ") and message in error


RECORDED = {"format": 1, "kind": "round-robin", "protocol": "file", "seed": 4, "rounds": 1,
            "time_limit": 1.0, "encoding": None, "pairings": [[0, 1]],
            "bots": [{"name": "Random1", "spec": "random"}, {"name": "Random2", "spec": "random"}]}


@pytest.mark.parametrize("argv, message", [
    (["random", "seed"], "cannot resume: BOT ... was random random in {out}, not random seed "
                         "(leave BOT ... out to continue the tournament as it was, or choose "
                         "another --out)"),
    (["--gauntlet"], "cannot resume: --gauntlet was no in {out}, not yes"),
    (["--seed", "5"], "cannot resume: --seed was 4 in {out}, not 5"),
    (["--time-limit", "2"], "cannot resume: --time-limit was 1 in {out}, not 2"),
    (["--protocol", "stdio"], "cannot resume: --protocol was file in {out}, not stdio"),
    (["--turn-ms", "50"], "--turn-ms is not for --protocol file"),
])
def test_resuming_refuses_what_contradicts_the_tournament(argv, message, tmp_path, capsys):
    (tmp_path / "tournament.json").write_text(json.dumps(RECORDED))
    with pytest.raises(SystemExit):
        tournament.main(argv + ["--resume", "--out", str(tmp_path)])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("python -m ref_sim.tournament: error: " + message.format(out=tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["tournament.json"]          # nothing played


def test_resuming_what_is_not_there_is_one_line_and_makes_nothing(tmp_path, capsys):
    missing = tmp_path / "missing"
    with pytest.raises(SystemExit):
        tournament.main(["--resume", "--out", str(missing)])
    assert capsys.readouterr().err.strip().endswith(
        f"--resume: {missing} holds no tournament to continue (no tournament.json); give the "
        "bots to start one there")
    assert not missing.exists()
    for text in ("[1]", json.dumps({**RECORDED, "bots": ["random", "random"]})):
        (tmp_path / "tournament.json").write_text(text)
        with pytest.raises(SystemExit):
            tournament.main(["--resume", "--out", str(tmp_path)])
        assert capsys.readouterr().err.strip().endswith(
            f"cannot resume: {tmp_path / 'tournament.json'} is not a tournament file")


# -- real events --------------------------------------------------------------------------

@pytest.mark.e2e
def test_a_round_robin_of_three_bots_through_the_files(tmp_path, capsys):
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
        seed = tournament.pairing_seed(EventSettings.from_json(event), tuple(g["pairing"]))
        assert [agent["name"] for agent in g["agents"]] == [a, b] and g["series_seed"] == seed
        assert g["result"] in ("win", "tie") and g["notes"] == {}
        # Game k of the pairing is game k of `ref_sim.match A B --seed` its pairing's seed.
        scheduled = openings.game(seed, g["pairing_game"])
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
    assert "Distinct games: 6 of 6" in out
    assert f"Games: {tmp_path / 'games.jsonl'}" in out
    assert re.findall(r"^Game \d/6: ", out, re.MULTILINE) == [f"Game {n}/6: " for n in range(1, 7)]


STDIO_BOTS = ["agent:depth=2", "agent:depth=1", "random"]
#: Fixed depths: time is no factor, so every game is the same wherever it is played.
#: The referee's grace covers a process a loaded machine did not run in time (at load 11 a
#: 1000 ms turn was lost on time, and the local series differed from the cluster's).
STDIO_TIMING = ["--first-turn-ms", "3000", "--turn-ms", "1000", "--grace-ms", "3000"]


def moves_of(game):
    """The moves, each player as 0 (agent 1) or 1: the names differ between runners."""
    first = game["agents"][0]["name"]
    return [(m["player"] != first, m["row"], m["col"]) for m in game["moves"]]


@pytest.mark.e2e
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
    event = assert_round_trips(tmp_path / "event" / "tournament.json")
    assert all(g["rules"] == "codingame" and g["series_seed"] == tournament.pairing_seed(event, tuple(g["pairing"]))
               for g in games)
    assert all(g["p1"] == g["agents"][(g["pairing_game"] - 1) % 2]["name"] for g in games)
    rows = {line.split()[1]: line.split() for line in out.splitlines()[1:4]}
    assert rows["Random3"][2:4] == ["0.0", "----"] and rows["Agent2"][4] == "4"
    assert "Random3 at 0" in out
    # Agent1 against Random3 is `ref_sim.stdio agent:depth=2 random --seed` its pairing's seed, game for game.
    assert stdio.main([STDIO_BOTS[0], STDIO_BOTS[2], "--games", "4", "--seed", str(tournament.pairing_seed(event, (0, 2))), "-q",
                       "--out", str(tmp_path / "alone")] + STDIO_TIMING) == 0
    alone = read_games(tmp_path / "alone")
    ours = [g for g in games if g["pairing"] == [0, 2]]
    assert [moves_of(g) for g in ours] == [moves_of(g) for g in alone]
    assert [[a["seed"] for a in g["agents"]] for g in ours] == \
        [[a["seed"] for a in g["agents"]] for g in alone]


#: A stdin/stdout bot that plays the first valid action, or its argument (a non-move).
FIRST_BOT = """\
import sys
print("ready", file=sys.stderr, flush=True)
while sys.stdin.readline():
    actions = [sys.stdin.readline().strip() for _ in range(int(sys.stdin.readline()))]
    print(sys.argv[1] if len(sys.argv) > 1 else actions[0], flush=True)
"""


@pytest.mark.e2e
def test_resume_out_alone_extends_the_tournament_by_rounds(tmp_path, capsys):
    out = str(tmp_path / "event")
    assert tournament.main(["random", "random", "--protocol", "stdio", "--seed", "3", "-q",
                            "--out", out]) == 0
    assert tournament.main(["--resume", "--out", out, "--rounds", "2"]) == 0
    text = capsys.readouterr().out
    assert "resuming: 2 of 4 games already played, 2 to go" in text
    assert [(g["game"], g["pairing_game"]) for g in read_games(tmp_path / "event")] == \
        [(1, 1), (2, 2), (3, 3), (4, 4)]
    assert json.loads((tmp_path / "event" / "tournament.json").read_text())["rounds"] == 2


@pytest.mark.e2e
def test_without_out_only_the_logs_of_games_that_went_wrong_stay(tmp_path, capsys, monkeypatch):
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    bot = tmp_path / "bot.py"
    bot.write_text(FIRST_BOT)
    # Two bots that ignore their seed replay each opening pair; the third answers "hello".
    # Turns with room (the bots answer at once): at the default 100 ms the suite beside two CPU hogs
    # timed a game of the two good bots out, and its logs were rightly kept too.
    assert tournament.main([f"{PY} {bot}", f"{PY} {bot}", f"{PY} {bot} hello", "--rounds", "2",
                            "--protocol", "stdio", "--seed", "1"] + STDIO_TIMING) == 0
    out = capsys.readouterr().out
    kept = Path(re.search(r"Logs of the games that went wrong: (\S+) \(kept;", out).group(1))
    assert list(temp.iterdir()) == [kept] and kept.name.startswith("uttt-logs-")
    # Bot3 is in pairings 2 and 3: games 3-6 of round 1 and 9-12 of round 2, each two logs.
    assert sorted(path.name for path in kept.iterdir()) == sorted(
        f"game-{n:04d}-{name}.log" for n in (3, 4, 5, 6, 9, 10, 11, 12)
        for name in (("Bot1", "Bot3") if n in (3, 4, 9, 10) else ("Bot2", "Bot3")))
    assert "Bot3: 0 wins, 8 losses, 0 draws (invalid moves 8)" in out
    # Each pairing's rounds are the same games, and Bot3 moving first loses the same way
    # whoever it meets (the same first player, no move): 5 distinct games of 12.
    assert "Distinct games: 5 of 12 (warning: 7 repeat an earlier game move for move (game " in out
    assert "), and count again in the figures above; give each program its per-game seed" in out


def test_a_stdio_bot_that_cannot_start_loses_its_games_and_the_tournament_goes_on(tmp_path, capsys):
    missing = f"{PY} {tmp_path / 'no_such_bot.py'}"
    assert tournament.main(["random", missing, "random", "--protocol", "stdio", "--out",
                            str(tmp_path)] + STDIO_TIMING) == 0
    out = capsys.readouterr().out
    games = read_games(tmp_path)
    assert len(games) == 6
    forfeits = [g for g in games if "Nosuchbot2" in g["names"]]
    assert [(g["winner"], g["loser"], g["reason"]) for g in forfeits] == [
        ("Random1", "Nosuchbot2", "could not start"), ("Random1", "Nosuchbot2", "could not start"),
        ("Random3", "Nosuchbot2", "could not start"), ("Random3", "Nosuchbot2", "could not start")]
    # Python's "[Errno 2] No such file or directory", cut to the line's length after a Windows
    # path (whose backslashes Python doubles) at "directo...".
    assert all("[Errno 2] No such file or dir" in g["cannot_start"]["Nosuchbot2"] for g in forfeits), [
        g["cannot_start"] for g in forfeits]
    assert all(g["result"] in ("win", "tie") and not g.get("cannot_start")     # the others played
               for g in games if "Nosuchbot2" not in g["names"])
    assert re.search(r"^Nosuchbot2: could not start \(.*\[Errno 2\] No such file or dir[a-z.]*\); its 4 games "
                     r"scored as losses \(its output: game-\d{4}-Nosuchbot2\.log\)$", out, re.M), out


@pytest.mark.cluster
@pytest.mark.filterwarnings("ignore:Port 8787 is already in use:UserWarning")
def test_a_stdio_round_robin_on_a_cluster_is_the_local_one(tmp_path, capsys, monkeypatch):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setenv("TMPDIR", str(tmp_path))      # the workers' game directories
    args = STDIO_BOTS + ["--protocol", "stdio", "--seed", "8", "-q"] + STDIO_TIMING
    assert tournament.main(args + ["--out", str(tmp_path / "local")]) == 0
    local_text = capsys.readouterr().out
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40,
                                  local_directory=str(tmp_path)) as lc:
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


# -- stop signals, as tests/test_stops.py sends them to ref_sim.match ---------------------------

def resume_command(line: str) -> str:
    """The command a stop line gives, for a shell to run as printed (exec: the shell becomes
    the runner, so that the test's signals reach the runner itself)."""
    command = line.partition("; continue the tournament with: ")[2]
    assert command, line
    return "exec " + command


def table_games(stdout: str) -> int:
    """The games the rating table counts (each game counts for both its bots)."""
    table = stdout[stdout.index("Rank Bot"):stdout.index("\nElo: maximum likelihood")]
    return sum(int(row.split()[4]) for row in table.splitlines()[1:]) // 2


@pytest.mark.e2e
@linux_only
@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_a_stopped_tournament_ends_its_bots_and_resumes_as_printed(signum, tmp_path):
    out = tmp_path / "event"
    keep = signum != signal.SIGHUP          # one run without --out: its temporary folder goes
    # Bot 2 is a shell with a child of its own: the runner must end its whole process group.
    run = Run([PY, "-m", "ref_sim.tournament", "agent:depth=1", SHELL_RANDOM, "random",
               "--rounds", "5", "--time-limit", "0.3", "--seed", "1"]
              + (["--out", str(out)] if keep else []), tmp_path / "tmp")
    run.wait_for(r"^Game 1/30: ")
    wait_until(lambda: len(started_by(run.pid)) >= 3, "game 2's three processes")
    code, stdout, err = run.stop(signum)
    line = assert_stopped(run, signum, code, err, out / "logs" if keep else None)
    said = "Interrupted" if signum == signal.SIGINT else f"Stopped by {signal.Signals(signum).name}"
    played = int(re.match(rf"{said} after (\d+) games?", line).group(1))
    assert played >= 1 and table_games(stdout) == played             # the table so far
    assert "Head to head" in stdout and "Distinct games: " in stdout
    assert os.listdir(run.temp) == []                  # no uttt-tournament-* folder left
    if not keep:
        assert line.endswith("(the tournament was in a temporary directory, now deleted: with "
                             "--out DIR it can be continued)")
        return
    assert len(read_games(out)) == played
    # The printed command, run as printed by a shell, continues where the tournament stopped.
    again = Run(resume_command(line), tmp_path / "tmp", shell=True)
    again.wait_for(rf"^resuming: {played} of 30 games already played")
    code, stdout, err = again.stop(signal.SIGTERM)
    line = assert_stopped(again, signal.SIGTERM, code, err, out / "logs")
    assert re.match(r"Stopped by SIGTERM after \d+ games?; continue the tournament with: ", line)
    assert os.listdir(run.temp) == []


#: A stdin/stdout bot that thinks for ten minutes on its first turn.
HANGING_BOT = """\
import sys, time
print("ready", file=sys.stderr, flush=True)
sys.stdin.readline()
print("thinking", file=sys.stderr, flush=True)
time.sleep(600)
"""


@pytest.mark.e2e
@linux_only
def test_a_stopped_stdio_tournament_aborts_the_game_under_way(tmp_path):
    # Its turn may last ten minutes: only aborting the game ends the tournament in time.
    bot = tmp_path / "hanging_bot.py"
    bot.write_text(HANGING_BOT)
    out = tmp_path / "event"
    run = Run([PY, "-m", "ref_sim.tournament", "random", f"{PY} {bot}", "--protocol", "stdio",
               "--first-turn-ms", "600000", "--seed", "1", "--out", str(out)], tmp_path / "tmp")
    log = out / "logs" / "game-0001-Hangingbot2.log"
    wait_until(lambda: log.exists() and "thinking" in log.read_text(), "the bot's first turn")
    code, stdout, err = run.stop(signal.SIGTERM)
    line = assert_stopped(run, signal.SIGTERM, code, err, out / "logs")
    assert line.startswith("Stopped by SIGTERM after 0 games; continue the tournament with: ")
    assert line.endswith(f" -m ref_sim.tournament --resume --out {out}")
    assert "Random1 vs Hangingbot2: not played yet" in stdout and table_games(stdout) == 0
    assert not (out / "games.jsonl").exists()          # the aborted game is no game


@pytest.mark.e2e
@linux_only
def test_a_tournament_runner_killed_outright_leaves_no_player_waiting(tmp_path):
    # SIGKILL: the runner cannot clean up; its random players see it gone and end by themselves.
    out = tmp_path / "event"
    run = Run([PY, "-m", "ref_sim.tournament", "random", "random", "--rounds", "10",
               "--time-limit", "0.3", "--seed", "2", "--out", str(out)], tmp_path / "tmp")
    run.wait_for(r"^Game 1/20: ")
    players = wait_until(lambda: started_by(run.pid) if len(started_by(run.pid)) == 2 else None,
                         "game 2's two players")
    run.process.kill()
    run.process.wait(PATIENCE)
    wait_until(lambda: not started_by(run.pid), "the random players to end by themselves")
    assert set(players) >= set(started_by(run.pid))
    for name in ("Random1", "Random2"):
        log = (out / "logs" / f"game-0002-{name}.log").read_text()
        assert f"the series runner that started me (pid {run.pid}) is gone" in log, log


def test_the_docstring_examples_hold():
    import doctest
    assert doctest.testmod(tournament).failed == 0


def test_time_limit_is_the_turn_under_the_stdio_protocol_too():
    # One name for the time per move in every command: CodinGame's turn is counted in ms.
    args = tournament.build_parser().parse_args(["random", "random", "--protocol", "stdio",
                                                 "--time-limit", "0.05"])
    settings = tournament.event_settings(None, False, tournament.given_settings(args)[0])
    assert settings.turn_ms == 50 and "time_limit" not in settings.to_json()


# -- each pairing its own openings; an old event keeps its shared ones ----------

def assert_round_trips(path: Path) -> EventSettings:
    """The settings of the tournament.json at ``path``, which they write back byte for byte (the
    same keys in the same order: EventSettings.to_json is the dict the event writes)."""
    written = path.read_bytes()
    settings = EventSettings.from_json(json.loads(written), where=path)
    again = path.with_name("again.json")
    records.write_json(again, settings.to_json())
    assert again.read_bytes() == written
    again.unlink()
    return settings


@pytest.mark.parametrize("change, message", [
    ({"bots": [{"spec": "random"}, {"spec": 7}]}, "'bots' must be a list of bots with their specs, not "),
    ({"bots": "random random"}, "'bots' must be a list of bots with their specs"),
    ({"pairings": [[0, 2]]}, "'pairings' must be a list of pairs of bots, not [[0, 2]]"),
    ({"rounds": 0}, "'rounds' must be a positive whole number, not 0"),
])
def test_settings_that_are_no_tournaments_are_one_error_naming_the_file_and_the_key(change, message):
    with pytest.raises(RecordError) as error:
        EventSettings.from_json({**RECORDED, **change}, where="t/tournament.json")
    assert str(error.value).startswith(f"t/tournament.json: {message}")


def test_an_older_tournament_json_reads_as_it_was_played():
    older = {key: value for key, value in RECORDED.items() if key not in ("format", "isolate")}
    settings = EventSettings.from_json({**older, "bots": [{"spec": "random"}, {"spec": "seed"}]})
    assert settings.openings == tournament.SHARED_OPENINGS and settings.names == [None, None]
    assert settings.pairings == ((0, 1),) and settings.to_json()["bots"] == [{"spec": "random"}, {"spec": "seed"}]


def test_each_pairing_starts_from_openings_of_its_own_and_an_old_event_keeps_its_own(tmp_path):
    import virtual_games
    play = virtual_games.play_game
    out = tmp_path / "event"
    assert tournament.main(["random", "random", "random", "--rounds", "2", "--seed", "5", "--time-limit", "1",
                            "--out", str(out), "-q"], play=play) == 0
    settings = assert_round_trips(out / "tournament.json")
    assert settings.openings == tournament.OWN_OPENINGS
    games = read_games(out)
    by_pairing = {}
    for game in games:
        by_pairing.setdefault(tuple(game["pairing"]), []).append(game)
    firsts = {pairing: [tuple((b, s) for _, b, s in g["opening"]) for g in sorted(own, key=lambda g: g["pairing_game"])]
              for pairing, own in by_pairing.items()}
    assert len({own[0] for own in firsts.values()}) == 3               # no two pairings start alike
    for pairing, own in by_pairing.items():
        own.sort(key=lambda g: g["pairing_game"])
        assert firsts[pairing][0] == firsts[pairing][1] and own[0]["p1"] != own[1]["p1"]   # colours paired
        assert own[0]["series_seed"] == tournament.pairing_seed(settings, pairing)
    # A tournament.json from before the choice (no "openings") resumes with the event's seed.
    old = tmp_path / "old"
    assert tournament.main(["random", "random", "random", "--seed", "5", "--time-limit", "1",
                            "--out", str(old), "-q"], play=play) == 0
    recorded = json.loads((old / "tournament.json").read_text())
    del recorded["openings"]
    (old / "tournament.json").write_text(json.dumps(recorded))
    assert tournament.main(["--resume", "--out", str(old), "--rounds", "2", "-q"], play=play) == 0
    assert assert_round_trips(old / "tournament.json").openings == tournament.SHARED_OPENINGS
    resumed = [g for g in read_games(old) if g["pairing_game"] > 2]
    assert resumed and all(g["series_seed"] == 5 for g in resumed)
