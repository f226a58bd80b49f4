"""ref_sim.series.output.records: one runner per --out, a full disk ends a series cleanly, and every reader
of the records gives one line for a bad one (NaN, 1e999, absurd nesting...), never a traceback."""

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ref_sim import match, stdio, tournament
from ref_sim.views import plot, replay, show
from ref_sim.series.output import out_lock, records, strict_json
from ref_sim.series.output.game_line import GameLine
from ref_sim.referees.file_referee import GameRecord

import virtual_games

ROOT = Path(__file__).resolve().parent.parent
TINY = ["--games", "2", "--time-limit", "0.2", "--seed", "3", "-q"]

#: Lines no reader may choke on: (id, bytes of one games.jsonl line, a word of the message).
BAD_LINES = [
    ("nan", b'{"game": 1, "result": "tie", "x": NaN}', "NaN"),
    ("infinity", b'{"game": 1, "result": "tie", "x": -Infinity}', "-Infinity"),
    ("1e999", b'{"game": 1, "result": "tie", "x": 1e999}', "out of range"),
    ("giant-int", b'{"game": 1, "x": ' + b"9" * 5000 + b"}", "5000 digits"),
    ("nesting", b"[" * 100000 + b"]" * 100000, "nested"),
    ("nesting-in-game", b'{"game": 1, "moves": ' + b"[" * 100 + b"]" * 100 + b"}", "nested"),
    ("not-an-object", b"[1, 2, 3]", "list"),
    ("text", b'"game"', ""),
    ("wrong-types", b'{"game": "one", "result": 7, "notes": 5, "moves": "e4"}', ""),
    ("not-utf8", b'{"game": 1, "reason": "\xff\xfe"}', "not UTF-8"),
    ("cut", b'{"game": 1, "resu', "not JSON"),
    ("huge", b'{"game": 1, "x": "' + b"a" * strict_json.MAX_LINE_BYTES + b'"}', "longer than"),
]


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture(scope="module")
def good_series(tmp_path_factory):
    """A 2-game series of two random players written by uttt-match (its games.jsonl and
    series.json), each game refereed by the referee's own decisions on a virtual clock
    (tests/virtual_games.py): the records are the runner's, in milliseconds."""
    out = tmp_path_factory.mktemp("good")
    assert match.main(["random", "random", *TINY, "--out", str(out)], play=virtual_games.play_game) == 0
    assert len((out / "games.jsonl").read_text().splitlines()) == 2
    return out


def copy_series(good: Path, to: Path, extra: bytes = b"", keep_games: int = 2) -> Path:
    to.mkdir(parents=True, exist_ok=True)
    (to / "series.json").write_bytes((good / "series.json").read_bytes())
    lines = (good / "games.jsonl").read_bytes().splitlines(keepends=True)
    (to / "games.jsonl").write_bytes(b"".join(lines[:keep_games]) + extra)
    return to


# -- the parser ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, data, word", BAD_LINES, ids=[case[0] for case in BAD_LINES])
def test_read_lines_names_the_file_and_line_of_every_bad_line(tmp_path, name, data, word):
    path = tmp_path / "games.jsonl"
    path.write_bytes(b'{"a": 1}\n' + data + b"\n" + b'{"b": 2}\n')
    values, problems = strict_json.read_lines(path)
    if name in ("not-an-object", "text", "wrong-types"):   # JSON: the game check refuses them
        assert len(values) == 3
        with pytest.raises(strict_json.RecordError):
            GameLine.from_json(values[1][1])
        return
    assert [number for number, _ in values] == [1, 3]
    assert len(problems) == 1 and problems[0][0] == 2
    assert problems[0][1].startswith(f"{path} line 2: ") and word in problems[0][1]
    assert "\n" not in problems[0][1] and len(problems[0][1]) < 300


def test_a_whole_file_error_gives_the_line(tmp_path):
    path = tmp_path / "series.json"
    path.write_text('{\n  "seed": 1,\n  "time_limit": NaN\n}\n')
    with pytest.raises(strict_json.RecordError, match=r"series.json line 3: NaN is not a number"):
        strict_json.read_json(path)
    path.write_bytes(b'{\n  "seed": "\xff"\n}\n')
    with pytest.raises(strict_json.RecordError, match=r"series.json line 2: not UTF-8"):
        strict_json.read_json(path)


@pytest.mark.parametrize("key, change", [
    ("game", lambda g: 0), ("game", lambda g: True), ("result", lambda g: "won"),
    ("reason", lambda g: 3), ("winner", lambda g: ["A"]), ("names", lambda g: "Random1"),
    ("notes", lambda g: {"Random1": 3}), ("pair", lambda g: "0"), ("score", lambda g: 2),
    ("moves", lambda g: [dict(g["moves"][0], board="4")] + g["moves"][1:]),
    ("opening", lambda g: [["Random1", 4]] + g["opening"][1:]),
    ("agents", lambda g: [{"name": 1}, g["agents"][1]]), ("duration", lambda g: "3 s"),
])
def test_a_game_line_with_a_key_of_the_wrong_type_is_no_game(good_series, key, change):
    game = json.loads((good_series / "games.jsonl").read_text().splitlines()[0])
    GameLine.from_json(game)
    with pytest.raises(strict_json.RecordError, match=f"^{key!r} must be "):
        GameLine.from_json({**game, key: change(game)})


def test_what_the_runners_write_reads_back():
    line = records.dumps_line({"game": 1, "moves": [{"agent_seconds": float("inf")}],
                               "score": float("nan")})
    assert strict_json.loads(line, "x") == {"game": 1, "moves": [{"agent_seconds": None}],
                                        "score": None}


# -- every reader, through its command line ----------------------------------------------

@pytest.mark.parametrize("name, data, word", BAD_LINES, ids=[case[0] for case in BAD_LINES])
def test_show_and_plot_refuse_a_bad_line_in_one_line(tmp_path, capsys, good_series, name, data, word):
    folder = copy_series(good_series, tmp_path / "run", data + b"\n")
    path = str(folder / "games.jsonl")
    assert show.main([path, "--game", "1"]) == 2
    assert one_line(capsys.readouterr().err).startswith(f"python -m ref_sim.show: error: {path}")
    assert plot.main([path, "--out", str(tmp_path / "p.png")]) == 2
    assert one_line(capsys.readouterr().err).startswith(f"python -m ref_sim.plot: error: {path}")


@pytest.mark.parametrize("name, data, word", BAD_LINES, ids=[case[0] for case in BAD_LINES])
def test_show_refuses_a_bad_game_record_in_one_line(tmp_path, capsys, name, data, word):
    record = tmp_path / "game-0001.json"
    record.write_bytes(data + b"\n")
    assert show.main([str(record)]) == 2
    assert one_line(capsys.readouterr().err).startswith(f"python -m ref_sim.show: error: {record}")


def test_show_names_the_line_of_a_nan_in_an_indented_record(tmp_path, capsys, good_series):
    game = json.loads((good_series / "games.jsonl").read_text().splitlines()[0])
    game["moves"][0]["seconds"] = "@NAN@"
    record = tmp_path / "game-0001.json"
    text = json.dumps(game, indent=2)
    nan_line = next(number for number, line in enumerate(text.splitlines(), 1) if "@NAN@" in line)
    record.write_text(text.replace('"@NAN@"', "NaN"))
    assert show.main([str(record)]) == 2
    line = one_line(capsys.readouterr().err)
    assert f"{record} line {nan_line}: NaN is not a number" in line


def test_show_refuses_wrong_types_in_the_keys_it_shows(tmp_path, capsys, good_series):
    game = json.loads((good_series / "games.jsonl").read_text().splitlines()[0])
    for key, value in (("bad_line", 5), ("names", 3), ("winner", ["a"])):
        (tmp_path / "g.json").write_text(json.dumps(dict(game, **{key: value})))
        assert show.main([str(tmp_path / "g.json")]) == 2
        assert repr(key) in one_line(capsys.readouterr().err)


@pytest.mark.parametrize("name, data, word", BAD_LINES, ids=[case[0] for case in BAD_LINES])
def test_replay_leaves_a_bad_line_out_with_one_warning(tmp_path, capsys, good_series, name, data, word):
    folder = copy_series(good_series, tmp_path / "run", data + b"\n", keep_games=1)
    assert replay.main([str(folder)]) == 0
    warning = one_line(capsys.readouterr().err)
    assert warning.startswith(f"warning: {folder / 'games.jsonl'} line 2: ")
    assert warning.endswith("left out of the page")
    # Alone in the file: no game to show, one line and exit 2.
    (folder / "games.jsonl").write_bytes(data + b"\n")
    with pytest.raises(SystemExit) as stop:
        replay.main([str(folder)])
    assert stop.value.code == 2
    assert "no games in it yet (1 unreadable lines; line 1: " in one_line(capsys.readouterr().err)


@pytest.mark.parametrize("name, data, word", BAD_LINES, ids=[case[0] for case in BAD_LINES])
def test_resume_drops_a_bad_line_with_one_warning_and_keeps_it_aside(tmp_path, capsys, good_series,
                                                                     name, data, word):
    folder = copy_series(good_series, tmp_path / "run", data + b"\n", keep_games=1)
    games = records.resume_games(folder / "games.jsonl")
    assert [game.game for game in games] == [1]
    warning = one_line(capsys.readouterr().err)
    assert warning.startswith(f"warning: {folder / 'games.jsonl'} line 2: ")
    assert (folder / "games.jsonl.dropped").read_bytes() == data + b"\n"
    assert records.read_games(folder / "games.jsonl") == (games, [])


@pytest.mark.e2e
@pytest.mark.parametrize("runner", ["match", "stdio"])
def test_a_resumed_series_plays_the_bad_lines_games_again(tmp_path, capsys, runner):
    module = {"match": match, "stdio": stdio}[runner]
    out = tmp_path / runner
    tiny = TINY if runner == "match" else ["--games", "2", "--seed", "3", "-q"]
    assert module.main(["random", "random", *tiny, "--out", str(out)]) == 0
    capsys.readouterr()
    lines = (out / "games.jsonl").read_bytes().splitlines(keepends=True)
    second = json.loads(lines[1])
    bad = b"".join(case[1] + b"\n" for case in BAD_LINES)
    (out / "games.jsonl").write_bytes(lines[0] + bad)
    assert module.main(["--resume", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    warning, = [line for line in captured.err.splitlines() if "games.jsonl" in line]
    assert f"and {len(BAD_LINES) - 1} more bad lines" in warning
    assert "those games are played again" in warning
    games, problems = records.read_games(out / "games.jsonl")
    assert [game.game for game in games] == [1, 2] and problems == []
    assert (games[1].seed if runner == "match" else games[1].agents) == \
        second["seed" if runner == "match" else "agents"]
    assert (out / "games.jsonl.dropped").read_bytes() == bad


def exit_code(main, argv) -> int:
    try:
        return main(argv)
    except SystemExit as stop:          # argparse's error: its usage line, then the error
        return stop.code


#: Valid JSON that is no settings file: refused as before, by argparse (usage, then the error).
NOT_SETTINGS = ("not-an-object", "text", "wrong-types", "huge")


@pytest.mark.parametrize("name, data, word", BAD_LINES, ids=[case[0] for case in BAD_LINES])
def test_a_bad_series_json_is_one_line_and_exit_2(tmp_path, capsys, good_series, name, data, word):
    folder = copy_series(good_series, tmp_path / "run")
    (folder / "series.json").write_bytes(data)
    before = sorted(os.listdir(folder))
    code = exit_code(match.main, ["--resume", "--out", str(folder)])
    err = capsys.readouterr().err
    line = err.strip().splitlines()[-1] if name in NOT_SETTINGS else one_line(err)
    assert code == 2 and "Traceback" not in err
    assert line.startswith(f"python -m ref_sim.match: error: cannot resume: {folder / 'series.json'}")
    assert sorted(os.listdir(folder)) == before          # nothing written, nothing played


@pytest.mark.parametrize("name, data, word", BAD_LINES, ids=[case[0] for case in BAD_LINES])
def test_a_bad_tournament_json_is_one_line_and_exit_2(tmp_path, capsys, name, data, word):
    (tmp_path / "tournament.json").write_bytes(data)
    code = exit_code(tournament.main, ["--resume", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    line = err.strip().splitlines()[-1] if name in NOT_SETTINGS else one_line(err)
    assert code == 2 and "Traceback" not in err
    assert line.startswith("python -m ref_sim.tournament: error: cannot resume: ")
    assert sorted(os.listdir(tmp_path)) == ["tournament.json"]


@pytest.mark.parametrize("key, value, message", [
    ("time_limit", "fast", "'time_limit' must be seconds, not \"fast\""),
    ("agents", ["random"], "'agents' must be two agents"),
    ("seed", 1.5, "'seed' must be a whole number"),
    ("games", -3, "'games' must be a positive whole number"),
    ("sprt", [0, 5], "'sprt' must be four numbers or null"),
])
def test_series_settings_of_the_wrong_type_are_refused(tmp_path, capsys, good_series, key, value,
                                                       message):
    folder = copy_series(good_series, tmp_path / "run")
    settings = json.loads((folder / "series.json").read_text())
    (folder / "series.json").write_text(json.dumps({**settings, key: value}))
    assert exit_code(match.main, ["--resume", "--out", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"error: cannot resume: {folder / 'series.json'}: {message}" in err.strip().splitlines()[-1]


def test_a_tournament_bot_spec_that_is_not_text_is_refused(tmp_path, capsys):
    settings = {"format": 1, "kind": "round-robin", "protocol": "file", "seed": 4, "rounds": 1,
                "time_limit": 1.0, "encoding": None, "bots": [{"spec": "random"}, {"spec": 7}],
                "pairings": [[0, 1]]}
    (tmp_path / "tournament.json").write_text(json.dumps(settings))
    assert exit_code(tournament.main, ["--resume", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines()[-1].endswith(
        f"cannot resume: {tmp_path / 'tournament.json'} is not a tournament file")


# -- one runner per folder ----------------------------------------------------------------

HOLDER = textwrap.dedent("""
    import os, sys, time
    from ref_sim.series.output import out_lock
    lock = out_lock.OutLock(sys.argv[1], "the holder's command")
    lock.acquire()
    print("locked", os.getpid(), flush=True)
    time.sleep(600)
""")


@pytest.mark.parametrize("argv", [
    ["ref_sim.match", "random", "random", "--games", "2"],
    ["ref_sim.match", "--resume"],
    ["ref_sim.stdio", "random", "random"],
    ["ref_sim.tournament", "random", "random"],
])
def test_a_second_runner_on_the_folder_refuses_in_one_line(tmp_path, capsys, good_series, argv):
    folder = copy_series(good_series, tmp_path / "run")
    if argv[0] != "ref_sim.match":          # not a series of theirs: an empty folder
        (folder / "series.json").unlink()
        (folder / "games.jsonl").unlink()
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    module = {"ref_sim.match": match, "ref_sim.stdio": stdio,
              "ref_sim.tournament": tournament}[argv[0]]
    with out_lock.OutLock(folder, "python -m ref_sim.match random random --out run"):
        code = module.main(argv[1:] + ["--out", str(folder)])
        err = capsys.readouterr().err
        line = one_line("\n".join(line for line in err.splitlines()       # 0.2 s: said first
                                   if not line.startswith("warning: the real referee")))
    assert code == 2
    assert line.startswith(f"python -m {argv[0]}: error: --out {folder} is in use by another "
                           f"runner (pid {os.getpid()} on ")
    assert "python -m ref_sim.match random random --out run); wait for it" in line
    after = {path.name: path.read_bytes() for path in folder.iterdir()}
    assert after == before                               # the holder's files untouched
    assert not (folder / out_lock.LOCK_NAME).exists()     # removed with its holder's end


def test_a_lock_left_by_a_killed_runner_does_not_block(tmp_path, capsys):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], env=env,
                              stdout=subprocess.PIPE, text=True)
    try:
        # Its own pid: a Windows venv's python.exe is a launcher, whose child runs the script.
        said, pid = holder.stdout.readline().split()
        assert said == "locked"
        with pytest.raises(out_lock.OutInUse, match=f"pid {pid} on .* ago\\): "
                                                   "the holder's command\\); wait for it"):
            out_lock.OutLock(tmp_path, "second").acquire()
    finally:
        holder.kill()                       # SIGKILL: no clean-up of its own
        holder.wait(60)
    assert (tmp_path / out_lock.LOCK_NAME).exists()          # the file stays: it holds nothing
    with out_lock.OutLock(tmp_path, "third") as lock:
        assert json.loads((tmp_path / out_lock.LOCK_NAME).read_text())["command"] == "third"
        assert lock.fd is not None
    assert not (tmp_path / out_lock.LOCK_NAME).exists()


# -- a full disk ---------------------------------------------------------------------------

FULL_DISK_RUNS = {      # runner: (its main, a new run of 4 games (2 for the tournament), its summary's start)
    "match": (match.main, ["random", "random", "--games", "4", "--time-limit", "0.2", "--seed", "3"],
              "Score of Random1 vs Random2: "),
    "stdio": (stdio.main, ["random", "random", "--games", "4", "--seed", "3"],
              "Score of Random1 vs Random2: "),
    "tournament": (tournament.main, ["random", "random", "--time-limit", "0.2", "--seed", "3"],
                   "Rank"),
}


@pytest.mark.e2e
@pytest.mark.parametrize("runner", list(FULL_DISK_RUNS))
def test_a_full_disk_ends_the_series_cleanly_and_resume_continues(tmp_path, capsys, monkeypatch,
                                                                  runner):
    main, argv, summary = FULL_DISK_RUNS[runner]
    out = tmp_path / "out"
    real_write = records._write_all
    written = []

    def fill_disk_after_one_game(fd, data):
        if b'"result"' in data:             # a game's line
            if written:                     # the disk is full now: half a line, then ENOSPC
                real_write(fd, data[:len(data) // 2])
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            written.append(data)
        real_write(fd, data)

    monkeypatch.setattr(records, "_write_all", fill_disk_after_one_game)
    code = main(argv + ["--out", str(out)])
    captured = capsys.readouterr()
    assert code == 1 and "Traceback" not in captured.err
    assert summary in captured.out
    what = "tournament" if runner == "tournament" else "series"
    last = captured.err.strip().splitlines()[-1]
    assert last.startswith(f"Stopped: cannot write {out / 'games.jsonl'}: No space left on "
                           f"device (the disk is full); the {what} stopped after 1 game; "
                           f"continue the {what} with: ")
    assert last.endswith(f"--resume --out {out}")
    assert (out / "games.jsonl").read_bytes() == written[0]       # the game kept, no half line
    assert not (out / out_lock.LOCK_NAME).exists()

    monkeypatch.setattr(records, "_write_all", real_write)        # space again
    assert main(["--resume", "--out", str(out), "-q"]) == 0
    games, problems = records.read_games(out / "games.jsonl")
    assert [game.game for game in games] == list(range(1, len(games) + 1)) and problems == []
    assert len(games) == (2 if runner == "tournament" else 4)


@pytest.mark.e2e
def test_a_game_whose_record_cannot_be_written_stops_the_series(tmp_path, capsys, monkeypatch):
    def full(self, path):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(GameRecord, "save", full)
    out = tmp_path / "out"
    code = match.main(["random", "random", *TINY, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(
        f"Stopped: cannot write {out / 'logs' / 'game-0001.json'}: No space left on device "
        "(the disk is full); the series stopped after 0 games; continue the series with: ")
    assert records.read_games(out / "games.jsonl") == ([], [])


def test_a_cut_last_line_is_closed_before_the_next_game(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_bytes(b'{"game": 1, "resu')              # a runner killed while writing
    records.append_line(path, {"game": 2})
    assert path.read_bytes() == b'{"game": 1, "resu\n{"game": 2}\n'


def test_settings_are_replaced_whole(tmp_path, monkeypatch):
    path = tmp_path / "series.json"
    records.write_json(path, {"seed": 1})

    def full(*args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(records.WriteError, match="the disk is full"):
        records.write_json(path, {"seed": 2})
    assert json.loads(path.read_text()) == {"seed": 1}
    assert os.listdir(tmp_path) == ["series.json"]      # no temporary file left
