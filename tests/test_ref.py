"""python -m ref_sim: argument checks and one quiet game."""

import json

import pytest

from ref_sim.ref import main


@pytest.mark.parametrize("argv", [["A", "A"], ["A B", "C"], ["", "C"], ["a/b", "C"],
                                  ["A", "B", "--time-limit", "0"]])
def test_bad_arguments_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "error:" in capsys.readouterr().err


@pytest.mark.parametrize("limit", ["0.05", "0.099", "-1"])
def test_limits_below_two_ticks_are_refused(limit, capsys):
    # At 0.1 s the referee looks once (at 50 ms); below, a move could never count.
    with pytest.raises(SystemExit) as exit_info:
        main(["A", "B", "--time-limit", limit, "--dir", "/nonexistent-never-created"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "every 50 ms" in err and "use at least 0.1" in err


@pytest.mark.parametrize("limit, message", [("nan", "must be a number at most 3,600, got 'nan'"),
                                            ("inf", "must be a number at most 3,600, got 'inf'"),
                                            ("1e300", "must be a number at most 3,600, got '1e300'")])
def test_limits_that_are_no_number_of_seconds_are_refused(limit, message, capsys):
    # inf used to end in an OverflowError traceback (int(inf)); nan passed every check.
    with pytest.raises(SystemExit) as exit_info:
        main(["A", "B", "--time-limit", limit, "--dir", "/nonexistent-never-created"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == \
        f"python -m ref_sim: error: argument --time-limit: {message}"


def test_a_file_as_dir_is_named_as_a_file(tmp_path, capsys):
    path = tmp_path / "notes.txt"
    path.write_text("x")
    with pytest.raises(SystemExit) as exit_info:
        main(["A", "B", "--dir", str(path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "not a directory (it is a file)" in err and "no such directory" not in err


@pytest.mark.e2e
def test_missing_dir_is_created_and_short_limits_warned(tmp_path, capsys):
    game_dir = tmp_path / "new" / "game"
    assert main(["Walrus", "Otter", "--dir", str(game_dir), "--time-limit", "0.1",
                 "--seed", "1", "-q"]) == 0
    assert game_dir.is_dir() and list(game_dir.iterdir()) == []
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"created the game directory {game_dir}"
    assert err[1] == ("warning: the real referee takes whole seconds (--time_limit N); "
                      "0.1 s per move is for rehearsal only")
    assert len(err) == 2


@pytest.mark.e2e
def test_end_game_stays_one_time_limit(tmp_path, capsys, monkeypatch):
    # An agent still searching when the game ends must find end_game: the files stay one
    # time limit (here 1.2 s, more than the old fixed second) before the clean-up.
    import threading
    import time
    seen = []

    def watch():
        while not (tmp_path / "end_game").exists():
            time.sleep(0.005)
        start = time.monotonic()
        while (tmp_path / "end_game").exists():
            time.sleep(0.005)
        seen.append(time.monotonic() - start)
    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    assert main(["Walrus", "Otter", "--dir", str(tmp_path), "--time-limit", "1.2",
                 "--seed", "1", "-q"]) == 0
    thread.join(5)
    assert seen and seen[0] >= 1.15
    assert "end_game stays" not in capsys.readouterr().err     # -q: only the result line


@pytest.mark.e2e
def test_the_wait_after_the_end_is_announced(tmp_path, capsys):
    assert main(["Walrus", "Otter", "--dir", str(tmp_path), "--time-limit", "1",
                 "--seed", "1"]) == 0
    assert capsys.readouterr().err == ("(end_game stays 1 s for the agents to read, then the "
                                       "files are deleted; Ctrl-C closes now)\n")


def test_ctrl_c_is_reported_once(tmp_path, capsys):
    from ref_sim.referees.file_referee import INTERRUPTED, Event, GameRecord

    def interrupted(directory, name1, name2, settings, on_event=None, **kwargs):
        record = GameRecord((name1, name2), 1.0, result="aborted", reason=INTERRUPTED)
        on_event(Event("abort", None, record))
        raise KeyboardInterrupt
    assert main(["A", "B", "--dir", str(tmp_path), "--time-limit", "1"], referee=interrupted) == 130
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == "Interrupted: protocol files deleted, no end_game written."


@pytest.mark.e2e
def test_quiet_game_prints_the_result_and_saves_the_record(tmp_path, capsys):
    record_path = tmp_path / "record.json"
    game_dir = tmp_path / "game"
    game_dir.mkdir()
    assert main(["Walrus", "Otter", "--dir", str(game_dir), "--time-limit", "0.1",
                 "--seed", "1", "--record", str(record_path), "-q"]) == 0
    out = capsys.readouterr().out.strip()
    data = json.loads(record_path.read_text())
    assert out == data["end_text"]
    assert out.endswith("LOSES! Time out!")


def test_every_command_ends_ctrl_c_and_a_closed_pipe_in_one_line(capsys):
    from ref_sim import entry_point

    @entry_point.entry_point("tool")
    def interrupted(argv=None):
        raise KeyboardInterrupt

    @entry_point.entry_point("tool")
    def piped(argv=None):
        print("one line")
        raise BrokenPipeError
    assert interrupted([]) == 130
    assert capsys.readouterr().err == "python -m tool: interrupted\n"
    assert piped([]) == 141
    assert capsys.readouterr().err == "python -m tool: output closed (broken pipe)\n"
    from ref_sim import match, stdio
    from ref_sim.views import plot, render, show
    for command in (main, match.main, plot.main, render.main, show.main, stdio.main):
        assert command.__wrapped__ is not None        # each one is wrapped


@pytest.mark.e2e
def test_ctrl_c_while_a_command_imports_is_one_line():
    # What python -m ref_sim.<command> looks like while it imports (argv[0] is "-m"): an
    # uncaught Ctrl-C prints one line, and Python still exits as interrupted by SIGINT.
    # Other errors keep their traceback.
    import subprocess
    import sys
    code = "import sys; sys.argv[0] = '-m'; import ref_sim; raise {}"
    result = subprocess.run([sys.executable, "-c", code.format("KeyboardInterrupt")],
                            capture_output=True, text=True)
    assert result.stderr == "python -m ref_sim: interrupted\n"
    assert result.returncode in (130, -2)
    result = subprocess.run([sys.executable, "-c", code.format("ValueError('x')")],
                            capture_output=True, text=True)
    assert "Traceback" in result.stderr and result.returncode == 1
    # Imported as a library (argv[0] is not "-m"), ref_sim leaves sys.excepthook alone.
    result = subprocess.run([sys.executable, "-c", "import sys, ref_sim; "
                             "print(sys.excepthook is sys.__excepthook__)"],
                            capture_output=True, text=True)
    assert result.stdout == "True\n"


def test_help_says_how_long_the_files_stay(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "stay one time limit (at least 1 s)" in text and "created if missing" in text
    assert "at least 0.1" in text and "same --time-limit as the referee" in text
