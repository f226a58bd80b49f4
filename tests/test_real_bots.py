"""Real bots as they are (ref_sim.series.realbots): fixed names, commands run in the game directory,
and what the runner says when a bot never reacts to its .go.

The series use the mimics of tests/bots/ (student_bot.py, otter.py): bots with the habits of
real course bots, against ``random`` (one against ``agent:depth=2``), with short limits.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ref_sim import command_words, match, tournament
from ref_sim.series import realbots, specs
from ref_sim.series.output.event_record import Bot, EventSettings
from ref_sim.series.process.launch import child_env
from ref_sim.series.specs import PROJECT_ROOT, agent_spec
from ref_sim.referees.file_referee import (INVALID_MOVE, OUT_OF_ORDER, TIME_OUT, WIN_REASON, GameRecord,
                                           MoveRecord, RefereeSettings)
from ref_sim.referees.file_shell import run_game
from game_story import story

BOTS = Path(__file__).resolve().parent / "bots"
STUDENT = f"{sys.executable} {BOTS / 'student_bot.py'} {{name}}"
OTTER = f"{sys.executable} {BOTS / 'otter.py'}"
HARD_CODED = "is its name hard-coded?"
LIMIT = "2"         # instant bots: a game takes as long whatever the limit; 2 s spares a slow CI


#: A silent agent holds the referee's start for the start-up wait; a hung one is killed the exit
#: wait after end_game. Shorter than in real series, same behaviour.
QUICK = ["--startup-wait", "0.5", "--exit-wait", "1.3"]


def read_games(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


def assert_legal(out: Path, count: int) -> list[dict]:
    """The series in ``out`` had ``count`` games, each played to its end on the board: no
    time-out, no bad move, no crash (the mimics' habits are all within the rules). A game that
    ended otherwise is shown with its last moves and the tail of each agent's log."""
    games = read_games(out)
    assert len(games) == count
    for game in games:
        on_the_board = game["result"] == "tie" or game["reason"] == WIN_REASON
        assert on_the_board, story(game, out / "logs")
        assert not any(note.startswith("crashed") for note in game["notes"].values()), game["notes"]
        assert game["hints"] == {}
    return games


# -- the spec: name=NAME: --------------------------------------------------------------------

def test_a_fixed_name_prefixes_any_spec_and_is_an_option_of_the_built_ins():
    otter = agent_spec("name=Otter:java -cp bots Otter")
    assert otter.fixed_name == "Otter" and otter.spec == "name=Otter:java -cp bots Otter"
    assert otter.template.startswith("java -cp") and otter.template.endswith(" Otter")
    walrus = agent_spec("agent:depth=4,name=Walrus")
    assert walrus.fixed_name == "Walrus" and walrus.builtin
    assert walrus.template == agent_spec("agent:depth=4").template
    assert agent_spec("name=Walrus:seed:depth=2").fixed_name == "Walrus"
    assert agent_spec("random").fixed_name is None
    assert specs.stdio_spec("name=Walrus:agent:depth=2").fixed_name == "Walrus"


@pytest.mark.parametrize("text, said", [
    ("name=Otter:", "the bot comes after a colon"),
    ("name=Otter", "the bot comes after a colon"),
    ("name=Ot ter:python3 otter.py", "1 to 32 letters"),
    ("name=../x:python3 otter.py", "1 to 32 letters"),
    ("name=:random", "1 to 32 letters"),
    ("agent:name=A,name=B", "more than one name="),
    ("name=A:agent:name=B", "more than one name="),
    ("agent:name=-x", "1 to 32 letters"),
])
def test_a_bad_fixed_name_is_one_line(text, said):
    with pytest.raises(ValueError, match=said) as error:
        agent_spec(text)
    assert "\n" not in str(error.value)


def test_side_names_use_the_fixed_name_and_refuse_a_clash():
    specs = [agent_spec("name=Otter:python3 otter.py"), agent_spec("random")]
    assert realbots.side_names(specs) == ["Otter", "Random2"]
    for clash in (["name=Otter:python3 a.py", "name=Otter:python3 b.py"],
                  ["name=Random2:python3 a.py", "random"]):
        with pytest.raises(ValueError, match="both agents would answer to"):
            realbots.side_names([agent_spec(text) for text in clash])


@pytest.mark.e2e
def test_a_clash_of_names_stops_match_before_any_game(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "ref_sim.match", f"name=Otter:{OTTER}", f"name=Otter:{OTTER}",
         "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(BOTS.parent.parent)})
    assert result.returncode == 2
    last = result.stderr.strip().splitlines()[-1]
    assert "both agents would answer to 'Otter'" in last
    assert not (tmp_path / "out").exists()


def test_a_tournament_refuses_two_bots_with_one_name_in_one_line():
    with pytest.raises(ValueError, match="bots 1 and 3 would both answer to 'Otter'"):
        tournament.check_settings(EventSettings(
            (Bot(f"name=Otter:{OTTER}"), Bot("random"), Bot(f"name=Otter:{OTTER}")), time_limit=1.0))


# -- commands: relative paths ----------------------------------------------------------------

def test_relative_paths_in_a_command_are_made_absolute(tmp_path):
    (tmp_path / "bots").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "otter.py").write_text("")
    (tmp_path / "run").write_text("")
    bots, lib = str(tmp_path / "bots"), str(tmp_path / "lib")

    def absolute(command):
        return realbots.absolute_paths(command, str(tmp_path))

    def words(command):     # joined back by this system's rules (command_words): ' quotes on POSIX only
        return command_words.split(absolute(command))

    assert words("java -cp bots Otter") == ["java", "-cp", bots, "Otter"]
    classpath = os.pathsep.join(["bots", "lib", "missing"])     # ; on Windows, where : is a drive's
    assert words(f"java -cp {classpath} Otter") == ["java", "-cp", os.pathsep.join([bots, lib, "missing"]), "Otter"]
    assert words("java --class-path=bots Otter") == ["java", f"--class-path={bots}", "Otter"]
    assert words("python3 otter.py {name}") == ["python3", str(tmp_path / "otter.py"), "{name}"]
    assert words("./run") == [str(tmp_path / "run")]
    assert absolute("run") == "run"                       # a bare program: the PATH's
    assert absolute("python3 -m bots") == "python3 -m bots"   # a module, not a folder
    assert words("python3 {dir}/x --dir bots") == ["python3", "{dir}/x", "--dir", bots]
    same = "python3  elsewhere.py  {name}"
    assert absolute(same) is same                          # nothing resolved: as written


# -- the referee sees move_file at a time-out -------------------------------------------------

@pytest.mark.e2e
def test_the_referee_keeps_move_files_line_at_a_time_out(tmp_path):
    def someone_else_writes(event):          # before the first turn: no move for the referee
        if event.kind == "start":
            (tmp_path / "move_file").write_text("Otter 4 0")

    quick = RefereeSettings(time_limit=0.1, start_delay=0, exit_delay=0)
    record = run_game(tmp_path, "Otter1", "Random2", quick, seed=1, first="Otter1",
                      on_event=someone_else_writes)
    assert (record.reason, record.loser, record.timeout_line) == (TIME_OUT, "Otter1", "Otter 4 0")
    record = run_game(tmp_path, "Otter1", "Random2", quick, seed=1)
    assert record.reason == TIME_OUT and record.timeout_line == ""


@pytest.mark.e2e
def test_junk_in_move_file_at_a_time_out_is_only_shown(tmp_path):
    def junk(event):                          # binary, long, no name: no hint, no crash
        if event.kind == "start":
            (tmp_path / "move_file").write_bytes(b"\xff\x00\x1b[2J" * 50_000)

    record = run_game(tmp_path, "Otter1", "Random2", RefereeSettings(time_limit=0.1, start_delay=0, exit_delay=0),
                      seed=1, first="Otter1", on_event=junk)
    assert record.reason == TIME_OUT and len(record.timeout_line) <= 4096
    assert realbots.stall_notes(record, {}, SPECS)["Otter1"].startswith("Otter1 never wrote")


# -- what the runner says ---------------------------------------------------------------------

def record(reason, loser="Otter1", moves=(), **fields):
    winner = "Random2" if loser == "Otter1" else "Otter1"
    return GameRecord(names=("Otter1", "Random2"), time_limit=1.0, result="win", winner=winner,
                      loser=loser, reason=reason, moves=[MoveRecord(*m, 0.1) for m in moves],
                      **fields)


SPECS = {"Otter1": agent_spec("python3 otter.py"), "Random2": agent_spec("random")}


def test_a_side_that_never_wrote_is_named_with_the_hard_coded_hint_while_it_ran():
    stalled = realbots.stall_notes(record(TIME_OUT, timeout_line=""), {}, SPECS)
    assert stalled["Otter1"].startswith("Otter1 never wrote move_file after its .go")
    assert HARD_CODED in stalled["Otter1"] and "name=NAME:python3 otter.py" in stalled["Otter1"]
    crashed = realbots.stall_notes(record(TIME_OUT, timeout_line="Random2 4 0"),
                                   {"Otter1": "crashed (exited with code 1)"}, SPECS)
    assert crashed == {"Otter1": "Otter1 never wrote move_file after its .go"}


def test_lines_from_another_name_ask_whether_it_is_hard_coded():
    timed_out = realbots.stall_notes(record(TIME_OUT, timeout_line="Otter 4 0"), {}, SPECS)
    assert timed_out == {"Otter1": "move_file had lines from 'Otter' while Otter1 was to move: "
                                   "is its name hard-coded? give it with name=Otter:python3 otter.py"}
    # The mover wins an out-of-order move; the line's name points at the bot that wrote it.
    out_of_order = realbots.stall_notes(record(OUT_OF_ORDER, loser="Random2", bad_line="Otter 4 0"),
                                        {}, SPECS)
    assert list(out_of_order) == ["Otter1"] and HARD_CODED in out_of_order["Otter1"]


def test_ordinary_endings_get_no_hint():
    moved = [("Random2", 4, 0), ("Otter1", 0, 4)]
    assert realbots.stall_notes(record(TIME_OUT, moves=moved, timeout_line="Random2 4 1"),
                                {}, SPECS) == {}
    assert realbots.stall_notes(record(INVALID_MOVE, bad_line="Otter1 9 9"), {}, SPECS) == {}
    assert realbots.stall_notes(record(OUT_OF_ORDER, loser="Random2", bad_line="Random2 1 1"),
                                {}, SPECS) == {}
    assert realbots.stall_notes(record(TIME_OUT, timeout_line="\x1b[2J junk"), {}, SPECS)[
        "Otter1"].startswith("Otter1 never wrote")
    late = realbots.stall_notes(record(TIME_OUT, timeout_line="Otter1 4 0"), {}, SPECS)
    assert "where the referee did not count it" in late["Otter1"]


# -- the mimics ---------------------------------------------------------------------------------

@pytest.mark.e2e
def test_the_mimic_reads_a_partial_opening_again(tmp_path):
    sys.path.insert(0, str(BOTS))
    try:
        import student_bot
    finally:
        sys.path.remove(str(BOTS))
    path = tmp_path / "first_four_moves"
    path.write_text("Otter1 4 0\nRandom2 0 4\nOtter1 4")
    looks = []

    def complete_it_later():
        looks.append(1)
        if len(looks) == 3:
            path.write_text("Otter1 4 0\nRandom2 0 4\nOtter1 4 8\nRandom2 8 2\n")

    assert student_bot.read_opening(complete_it_later, str(path)) == [(4, 0), (0, 4), (4, 8), (8, 2)]
    assert len(looks) == 3


@pytest.mark.e2e
@pytest.mark.parametrize("habit", ["--spin", "--no-newline", "--eager-opening", "--linger 0.5"])
def test_each_habit_of_real_bots_plays_a_series_against_random(tmp_path, habit):
    out = tmp_path / "out"
    assert match.main([*QUICK, f"{STUDENT} {habit}", "random", "--games", "2", "--time-limit", LIMIT,
                       "--seed", "5", "--out", str(out), "-q"]) == 0
    assert_legal(out, 2)


@pytest.mark.e2e
def test_the_hard_coded_bot_plays_with_its_name_given_relative_to_where_the_runner_ran(
        tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(BOTS.parent)          # the command's path is relative to here
    out = tmp_path / "out"
    assert match.main([*QUICK, f"name=Otter:{sys.executable} bots/otter.py", "random", "--games", "2",
                       "--time-limit", LIMIT, "--seed", "7", "--out", str(out)]) == 0
    games = assert_legal(out, 2)
    assert {game["agents"][0]["name"] for game in games} == {"Otter"}
    assert "Score of Otter vs Random2:" in capsys.readouterr().out
    assert json.loads((out / "series.json").read_text())["names"] == ["Otter", "Random2"]


@pytest.mark.e2e
def test_a_spinning_bot_without_newlines_plays_our_agent(tmp_path):
    out = tmp_path / "out"
    assert match.main([*QUICK, f"{STUDENT} --spin --no-newline --eager-opening", "agent:depth=2",
                       "--games", "2", "--time-limit", LIMIT, "--seed", "2", "--out", str(out),
                       "-q"]) == 0
    assert_legal(out, 2)


@pytest.mark.e2e
def test_without_its_name_the_hard_coded_bot_gets_the_hint(tmp_path, capsys):
    out = tmp_path / "out"
    assert match.main([*QUICK, OTTER, "random", "--games", "1", "--time-limit", "0.5", "--seed", "1",
                       "--out", str(out)]) == 0
    (game,) = read_games(out)
    assert game["reason"] == TIME_OUT and game["loser"] == "Otter1"
    assert game["hints"]["Otter1"].startswith("Otter1 never wrote move_file after its .go")
    assert HARD_CODED in game["hints"]["Otter1"]
    printed = capsys.readouterr().out
    assert HARD_CODED in [line for line in printed.splitlines() if line.startswith("Game 1/1")][0]
    assert any(line.startswith("Hint: Otter1 never wrote") for line in printed.splitlines())


@pytest.mark.e2e
def test_a_bot_writing_another_name_gets_the_hint(tmp_path, capsys):
    out = tmp_path / "out"
    assert match.main([*QUICK, f"{STUDENT} --write-as Otter", "random", "--games", "1", "--time-limit",
                       "0.5", "--seed", "1", "--out", str(out)]) == 0
    (game,) = read_games(out)
    assert game["reason"] == OUT_OF_ORDER
    assert "move_file had lines from 'Otter' while Studentbot1 was to move" in game["hints"][
        "Studentbot1"]
    assert "give it with name=Otter:" in capsys.readouterr().out


@pytest.mark.e2e
def test_a_tournament_with_the_mimics_completes(tmp_path, capsys):
    out = tmp_path / "out"
    assert tournament.main([*QUICK, f"name=Otter:{OTTER}", f"{STUDENT} --spin --no-newline",
                            "--time-limit", LIMIT, "--seed", "3", "--out", str(out), "-q"]) == 0
    games = assert_legal(out, 2)
    assert {name for game in games for name in game["names"]} == {"Otter", "Studentbot2"}
    table = capsys.readouterr().out
    assert "Otter vs Studentbot2:" in table and f"name=Otter:{OTTER}" in table


@pytest.mark.e2e
def test_a_module_of_the_runners_folder_stays_importable(tmp_path, monkeypatch):
    # "python -m mybot" found mybot in the runner's folder before bots ran in the game directory.
    monkeypatch.chdir(tmp_path)
    path = child_env()["PYTHONPATH"].split(os.pathsep)
    assert path[:2] == [PROJECT_ROOT, str(tmp_path)]


def test_a_teams_package_named_like_one_of_ours_is_the_teams(tmp_path, monkeypatch):
    """docs/tournament.md's `python3 -m bots.kea`: ref_sim's own subpackages (bots, series, views)
    are not top-level names on a bot's path, which once held ref_sim/ itself."""
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "kea.py").write_text("print('the team kea')\n")
    monkeypatch.chdir(tmp_path)
    done = subprocess.run([sys.executable, "-m", "bots.kea"], env=child_env(), cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "the team kea\n"), done.stderr


@pytest.mark.e2e
def test_a_relative_out_still_reaches_the_built_ins(tmp_path, monkeypatch):
    # The built-ins get --dir {dir}; run in the game directory, {dir} must be absolute.
    monkeypatch.chdir(tmp_path)
    assert match.main([*QUICK, "random", f"{STUDENT}", "--games", "1", "--time-limit", LIMIT,
                       "--seed", "4", "--out", "out", "-q"]) == 0
    assert_legal(tmp_path / "out", 1)
    assert "--dir " + str(tmp_path / "out" / "game-0001") in (
        tmp_path / "out" / "logs" / "game-0001-Random1.log").read_text()
