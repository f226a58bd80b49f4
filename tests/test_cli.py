"""The command line: usage errors in one line with exit code 2, and one staged game through a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent import cli
from agent.file_protocol import EXIT_USAGE
from agent.referee_files import Files
from agent.rules import parse_move_line

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, timeout: float = 20.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agent", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def assert_usage_error(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == EXIT_USAGE
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("uttt-agent: error: "), result.stderr
    for word in words:
        assert word in lines[0]
    assert result.stdout == ""


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["two words", "a/b", "", "Dot.go"])
def test_bad_name(tmp_path, name):
    assert_usage_error(run_cli(name, "--dir", str(tmp_path)), "player name")


@pytest.mark.e2e
def test_missing_directory(tmp_path):
    assert_usage_error(run_cli("Walrus", "--dir", str(tmp_path / "nowhere")), "does not exist")


@pytest.mark.e2e
def test_directory_is_a_file(tmp_path):
    (tmp_path / "file").write_text("")
    assert_usage_error(run_cli("Walrus", "--dir", str(tmp_path / "file")), "not a directory")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write anywhere")
def test_unwritable_directory(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        assert_usage_error(run_cli("Walrus", "--dir", str(locked)), "cannot write")
    finally:
        locked.chmod(0o700)


def test_unwritable_directory_in_process(tmp_path, capsys):
    def refuse(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    assert cli.main(["Walrus", "--dir", str(tmp_path)], files=Files(open=refuse)) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write in referee directory" in err and "Permission denied" in err


@pytest.mark.e2e
@pytest.mark.parametrize("where", ["agent.log", "sub/agent.log"])
def test_log_file_inside_the_referee_directory(tmp_path, where):
    (tmp_path / "sub").mkdir()
    assert_usage_error(run_cli("Walrus", "--dir", str(tmp_path), "--log-file", str(tmp_path / where)),
                       "inside the referee directory")
    assert not (tmp_path / where).exists()


@pytest.mark.parametrize("args, words", [
    (["--engine", "nonsense"], ["unknown engine"]),
    (["--time-limit", "0"], ["--time-limit"]),
    (["--margin", "5", "--time-limit", "2"], ["--margin"]),
    (["--depth", "0"], ["--depth"]),
    (["--silence", "-1"], ["--silence"]),
])
@pytest.mark.e2e
def test_bad_options(tmp_path, args, words):
    assert_usage_error(run_cli("Walrus", "--dir", str(tmp_path), *args), *words)


# -- every bad value is one line ------------------------------------------------

def no_log_setup(*args) -> None:
    """Stands in for cli.setup_logging, which would take pytest's log capture away."""


@pytest.fixture
def usage_line(capsys):
    """``usage_line(argv, **seams)``: run the command line in this process (``seams`` passed to
    cli.main); it must end in exactly one usage-error line, exit 2, nothing on stdout. Returns that line."""

    def run(argv: list[str], **seams) -> str:
        try:
            code = cli.main(argv, setup_logging=no_log_setup, **seams)
        except SystemExit as stop:  # argparse's own errors, through OneLineParser.error
            code = stop.code
        out, err = capsys.readouterr()
        assert code == EXIT_USAGE and out == "", err
        assert "Traceback" not in err and err.count("\n") == 1 and err.startswith("uttt-agent: error: "), err
        assert len(err) < 600  # a huge bad value is quoted cut short
        return err
    return run


NAN_AND_FRIENDS = ["nan", "inf", "-inf", "1e309", str(10 ** 30), "-1", "", "ten", "9" * 5000]


@pytest.mark.parametrize("option, values, words", [
    ("--time-limit", NAN_AND_FRIENDS + ["0", "0.05", "3601"], "a number of seconds above 0.05 and at most 3,600"),
    ("--margin", NAN_AND_FRIENDS + ["3601"], "a number of seconds from 0 to 3,600"),
    ("--silence", NAN_AND_FRIENDS + ["86401"], "a number of seconds from 0 to 86,400"),
    ("--depth", NAN_AND_FRIENDS + ["0", "82", "1.5"], "an integer from 1 to 81"),
    ("--nodes", NAN_AND_FRIENDS + ["0", str(10 ** 12 + 1), "1e3"], "an integer from 1 to 1,000,000,000,000"),
])
def test_bad_numbers_of_the_file_protocol(tmp_path, usage_line, option, values, words):
    for value in values:
        line = usage_line(["Walrus", "--dir", str(tmp_path), f"{option}={value}"])  # = for -inf
        assert f"argument {option}: must be {words}" in line, value


@pytest.mark.parametrize("option, values, words", [
    ("--turn-ms", NAN_AND_FRIENDS + ["0", "3600001"], "a number of milliseconds above 0 and at most 3,600,000"),
    ("--first-turn-ms", NAN_AND_FRIENDS + ["0"], "a number of milliseconds above 0 and at most 3,600,000"),
    ("--margin-ms", NAN_AND_FRIENDS, "a number of milliseconds from 0 to 3,600,000"),
    ("--depth", ["nan", str(10 ** 30), "0"], "an integer from 1 to 81"),
    ("--nodes", ["inf", str(10 ** 30), "0"], "an integer from 1 to 1,000,000,000,000"),
])
def test_bad_numbers_of_the_codingame_protocol(usage_line, option, values, words):
    for value in values:
        line = usage_line(["--protocol", "codingame", f"{option}={value}"])
        assert f"argument {option}: must be {words}" in line, value


def test_the_bounds_themselves_are_accepted():
    args = cli.build_parser().parse_args(["W", "--time-limit", "3600", "--margin", "0", "--silence", "86400",
                                          "--depth", "81", "--nodes", str(10 ** 12), "--turn-ms", "0.5",
                                          "--margin-ms", "0"])
    assert (args.time_limit, args.margin, args.silence, args.depth, args.nodes) == (3600, 0, 86400, 81, 10 ** 12)
    assert cli.build_parser().parse_args(["W", "--time-limit", "0.051"]).time_limit == 0.051


@pytest.mark.parametrize("args, words", [
    (["--margin", "10"], "--margin must be below the time limit (10), got 10"),
    (["--margin", "2", "--time-limit", "1"], "--margin must be below the time limit"),
    (["--encoding", "klingon"], "unknown encoding 'klingon'"),
    (["--encoding", "x" * 5000], "unknown encoding 'xxxx"),
    (["--encoding", "rot13"], "cannot read the referee's files"),   # a codec, but not of text
    (["--encoding", "utf-16"], "cannot read the referee's files"),  # ASCII does not read as itself
    (["--engine", "x" * 5000], "unknown engine 'xxx"),
    (["--eval", "best"], "invalid choice: 'best'"),
    (["--protocol", "telepathy"], "invalid choice: 'telepathy'"),
    (["--bogus", "x" * 5000], "unrecognized arguments: --bogus"),
    (["--log-file", "\x00"], "cannot write log file '?'"),
    # Windows says a name too long is not found (ENOENT): the line still names the file.
    (["--log-file", "x" * 5000], "File name too long" if os.name == "posix" else "cannot write log file 'xxx"),
    (["--dir", "\x00"], "referee directory '?'"),
    (["--dir", "x" * 5000], "referee directory 'xxx"),
])
def test_other_bad_values_of_the_file_protocol(tmp_path, usage_line, args, words):
    argv = ["Walrus", "--dir", str(tmp_path), *args] if "--dir" not in args else ["Walrus", *args]
    assert words in usage_line(argv)


@pytest.mark.parametrize("given, passed", [(None, None), ("latin-1", "iso8859-1"), ("UTF8", "utf-8")])
def test_the_encoding_reaches_the_agent(tmp_path, given, passed):
    made = []

    def agent(*args, **kwargs):
        made.append(kwargs["encoding"])
        raise KeyboardInterrupt  # stop there: no game

    argv = ["Walrus", "--dir", str(tmp_path), "--engine", "random"] + (["--encoding", given] if given else [])
    assert cli.main(argv, make_agent=agent, setup_logging=no_log_setup) == cli.EXIT_INTERRUPTED
    assert made == [passed]  # None: the agent takes the locale's, as the referee's Python does


@pytest.mark.parametrize("name, words", [
    ("a" * 300, "player name is 300 characters long: at most 252"),
    ("", "player name is empty"),
    ("Walr\u00fcs", "player name 'Walrüs' must be one token"),
    ("a\x1b[31mred", "must be one token"),
    ("two\nlines", "must be one token"),
    ("CON", "device name on Windows"),
    ("aux", "device name on Windows"),
])
def test_names_that_cannot_be_a_file_name(tmp_path, usage_line, name, words):
    assert words in usage_line([name, "--dir", str(tmp_path)])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.name != "posix", reason="a path's limit here is Linux's PATH_MAX (4096); Windows' differ")
def test_a_name_the_directory_cannot_hold(tmp_path, usage_line):
    # Within the 252 characters, but DIR/NAME.go is longer than a path may be (4096 on Linux),
    # while DIR and the temp file of a move still fit.
    deep = tmp_path
    while len(str(deep)) < 3800:
        deep = deep / ("d" * 200)
    deep = deep / ("d" * (3950 - len(str(deep))))
    try:
        deep.mkdir(parents=True)
    except OSError:
        pytest.skip("cannot make so deep a directory here")
    # make_agent=None: were it to start, exit 1 at once, no game
    assert f"cannot use {'a' * 252}.go in referee directory" in usage_line(["a" * 252, "--dir", str(deep)],
                                                                           make_agent=None)


def test_codingame_name_and_log_file_are_checked(tmp_path, usage_line):
    assert "must be one token" in usage_line(["--protocol", "codingame", "50%"])
    assert "cannot write log file" in usage_line(["--protocol", "codingame", "--log-file", str(tmp_path)])


@pytest.mark.e2e
def test_the_reported_values_through_the_real_command(tmp_path):
    """The issue's own examples, through ``python -m agent`` itself."""
    for args in (["Walrus", "--time-limit", "nan"], ["a" * 300], ["--protocol", "codingame", "--turn-ms", "inf"]):
        assert_usage_error(run_cli(*args, "--dir", str(tmp_path)))


def test_a_bad_data_file_at_start_is_one_line(tmp_path, monkeypatch, usage_line):
    # The packaged evaluation tables, corrupt (here: inverted): refused before the game, exit 2.
    from agent import eval_fitted

    data = eval_fitted.load_data()
    bad = dict(data, chance=[data["scale"] - v for v in data["chance"]])
    path = tmp_path / "eval-v1.json"
    path.write_text(json.dumps(bad))
    monkeypatch.setattr(eval_fitted, "DEFAULT_DATA", path)  # the package's file on disk: read at the first use
    game = tmp_path / "game"
    game.mkdir()
    for argv in (["Walrus", "--dir", str(game)], ["--protocol", "codingame"]):
        line = usage_line(argv)
        assert str(path) in line and "chance[" in line and "an inverted or corrupt table?" in line


def test_help_documents_timing_and_exit_codes():
    result = run_cli("--help")
    assert result.returncode == 0
    for text in ("exit codes:", "130", "aborted", "protocol error", "max(0.1 * LIMIT, 0.2)", "9.0 s"):
        assert text in result.stdout
    # The silence abort, the tick-aware short limits, a replaced opening, the limit to pass.
    for text in ("--silence", "a killed referee", "0.015 s at 0.1 s", "is a new game", "the referee's own --time-limit"):
        assert text in result.stdout


def test_engine_options_reach_the_engine():
    name, engine = cli.build_engine(None, 2, None)
    assert name == "alphabeta" and engine.depth == 2
    name, engine = cli.build_engine("random", 2, 100)  # takes no such options: still built
    assert name == "random"


@pytest.mark.e2e
def test_a_staged_game_through_the_command_line(tmp_path):
    """Ready before the first .go; one logged move; result on stdout; exit 0 after end_game."""
    game = tmp_path / "game"
    game.mkdir()
    log_file = tmp_path / "logs" / "walrus.log"
    log_file.parent.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "agent", "Walrus", "--dir", str(game), "--time-limit", "1", "--engine", "random",
         "--log-file", str(log_file), "-v"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while "watching" not in (log_file.read_text() if log_file.exists() else "") and time.monotonic() < deadline:
            time.sleep(0.02)
        (game / "move_file").write_text("")
        (game / "first_four_moves").write_text("Walrus 6 2\nOtter 2 4\nWalrus 4 5\nOtter 5 8\n")
        (game / "Walrus.go").touch()
        while not (game / "move_file").read_text() and time.monotonic() < deadline:
            time.sleep(0.01)
        line = (game / "move_file").read_text()
        name, move = parse_move_line(line)
        assert name == "Walrus" and move.board == 8 and line.count("\n") == 1
        (game / "end_game").write_text("END: Otter WINS! Walrus LOSES! Time out!")
        out, err = process.communicate(timeout=5)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0
    assert out == "Walrus lost: END: Otter WINS! Walrus LOSES! Time out!\n"
    assert err == ""
    log = log_file.read_text()
    assert f"move {move}" in log and "since .go" in log and "nps" in log
    assert "watching" in log and "watchdog" in log
    assert sorted(os.listdir(game)) == ["Walrus.go", "end_game", "first_four_moves", "move_file"]


@pytest.mark.e2e
def test_a_killed_referee_ends_the_agent_with_exit_3(tmp_path):
    """Item 9: a referee killed after my move leaves its files as they were; with --silence 1 the
    agent reports the game aborted and exits 3 instead of waiting forever."""
    game = tmp_path / "game"
    game.mkdir()
    log_file = tmp_path / "walrus.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "agent", "Walrus", "--dir", str(game), "--time-limit", "0.5", "--engine", "random",
         "--silence", "1", "--log-file", str(log_file)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while "watching" not in (log_file.read_text() if log_file.exists() else "") and time.monotonic() < deadline:
            time.sleep(0.02)
        (game / "move_file").write_text("")
        (game / "first_four_moves").write_text("Walrus 6 2\nOtter 2 4\nWalrus 4 5\nOtter 5 8\n")
        (game / "Walrus.go").touch()
        out, err = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 3
    assert (game / "move_file").read_text().startswith("Walrus ")
    assert out.startswith("Walrus: no result (nothing changed") and out.count("\n") == 1
    assert log_file.read_text().count("the referee was probably killed") == 1  # said once, not twice


# -- closed standard streams -----------------------------------------------------------------------

def end_a_game_at_once(game: Path, log_file: Path, process: subprocess.Popen) -> tuple[str, str]:
    """Once the agent is ready, start a game in ``game`` and end it at once (Walrus loses):
    the quickest way to a result line. Returns the agent's (stdout, stderr)."""
    deadline = time.monotonic() + 20
    while "ready" not in (log_file.read_text() if log_file.exists() else "") and time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read()
        time.sleep(0.02)
    (game / "move_file").write_text("")
    (game / "first_four_moves").write_text("Walrus 6 2\nOtter 2 4\nWalrus 4 5\nOtter 5 8\n")
    (game / "end_game").write_text("END: Otter WINS! Walrus LOSES! Time out!")
    return process.communicate(timeout=20)


@pytest.mark.e2e
@pytest.mark.skipif(os.name != "posix", reason="closes descriptors with sh")
@pytest.mark.parametrize("stream", ["stdout", "stdout-pipe", "stdin"])
def test_closed_standard_streams_in_the_file_protocol(tmp_path, start_agent, stream):
    """stdout closed: the result line goes to stderr, one line, and the exit code stays the game's
    (0: it finished). stdin is never read: closing it changes nothing."""
    game = tmp_path / "game"
    game.mkdir()
    log_file = tmp_path / "walrus.log"
    args = ["Walrus", "--dir", str(game), "--engine", "random", "--time-limit", "1", "--log-file", str(log_file)]
    if stream == "stdout-pipe":  # the reader went away (``| head -0``): EPIPE on the first write
        read_end, write_end = os.pipe()
        os.close(read_end)
        process = start_agent(args, stdout=write_end, stderr=subprocess.PIPE)
        os.close(write_end)
    else:
        process = start_agent(args, closed=stream, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = end_a_game_at_once(game, log_file, process)
    result = "Walrus lost: END: Otter WINS! Walrus LOSES! Time out!"
    assert process.returncode == 0, err
    if stream == "stdin":
        assert out == result + "\n" and err == ""
    else:
        assert err == f"uttt-agent: stdout is closed; the result: {result}\n"
    assert "Traceback" not in log_file.read_text()
