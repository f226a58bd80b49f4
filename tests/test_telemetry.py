"""The machine channel from our agent (agent.search_log) and the runners' strict, bounded reading
of everything a program writes (ref_sim.series.output.telemetry), up to whole series against a hostile bot."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.search_log import SEARCH_LOG_ENV, SearchLog
from agent.limits import SearchResult
from agent import cli
from ref_sim.referees import codingame_shell
from ref_sim import match, stdio
from ref_sim.views import replay
from ref_sim.series import codingame_games
from ref_sim.series.process import launch
from ref_sim.series.output import telemetry
ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "bots" / "hostile.py"


def entry(**fields) -> bytes:
    return json.dumps({"board": 4, "spot": 8, "depth": 7, "score": -15, "nodes": 900,
                       "nps": 45000, "seconds": 0.021, **fields}).encode()


# -- the reader ------------------------------------------------------------------------------

def test_a_valid_line_gives_the_games_jsonl_keys():
    assert telemetry.parse_line(entry(proven=True, threads=2, turn=3)) == {
        "board": 4, "spot": 8, "depth": 7, "score": -15, "nodes": 900, "nps": 45000,
        "agent_seconds": 0.021}
    # A move chosen without a search: the cell alone.
    assert telemetry.parse_line(b'{"board": 0, "spot": 0, "seconds": 0}') == \
        {"board": 0, "spot": 0, "agent_seconds": 0.0}


@pytest.mark.parametrize("line", [
    b'{"board": 4, "spot": 8, "score": NaN}',
    b'{"board": 4, "spot": 8, "score": Infinity}',
    b'{"board": 4, "spot": 8, "seconds": -Infinity}',
    b'{"board": 4, "spot": 8, "score": 1e999}',
    b'{"board": 4, "spot": 8, "score": ' + b"9" * 5000 + b"}",
    b"[" * 2000 + b"]" * 2000,
    b'{"x": ' * 1000 + b"1" + b"}" * 1000,
    b'{"board": 9, "spot": 8}',
    b'{"board": -1, "spot": 8}',
    b'{"board": true, "spot": 8}',
    b'{"board": 4.0, "spot": 8}',
    b'{"spot": 8, "depth": 3}',
    b'{"board": 4, "spot": 8, "depth": "7"}',
    b'{"board": 4, "spot": 8, "depth": 7.5}',
    b'{"board": 4, "spot": 8, "depth": 82}',
    b'{"board": 4, "spot": 8, "score": 100000000}',
    b'{"board": 4, "spot": 8, "nodes": -1}',
    b'{"board": 4, "spot": 8, "nps": null}',
    b'{"board": 4, "spot": 8, "seconds": false}',
    b'{"board": 4, "spot": 8, "seconds": 1e6}',
    b'[4, 8]',
    b'"move 4 8  depth 7  score 0  nodes 1  nps 1  . s since .go"',
    b"move 4 8  depth 7  score 0  nodes 1  nps 1  . s since .go",
    b"\xff\xfe\x00 junk",
    entry(note="y" * telemetry.MAX_LINE_BYTES),
])
def test_a_bad_line_is_refused_without_an_error(line):
    assert telemetry.parse_line(line) is None


def test_bad_lines_are_skipped_and_counted_and_the_file_is_read_bounded(tmp_path):
    path = tmp_path / "search.jsonl"
    path.write_bytes(b"\n".join([entry(), b'{"board": 4, "spot": 8, "score": NaN}', b"",
                                 b"\xff junk", entry(board=0, spot=1, depth=3)]) + b"\n")
    entries, skipped = telemetry.read_search_log(path)
    assert [(e["board"], e["spot"], e["depth"]) for e in entries] == [(4, 8, 7), (0, 1, 3)]
    assert skipped == 2
    assert telemetry.read_search_log(tmp_path / "missing.jsonl") == ([], 0)
    # A file far past the cap: only its first MAX_FILE_BYTES are read, the cut line skipped.
    line = entry() + b"\n"
    path.write_bytes(line * (2 * telemetry.MAX_FILE_BYTES // len(line)))
    entries, skipped = telemetry.read_search_log(path)
    assert len(entries) == telemetry.MAX_FILE_BYTES // len(line) and skipped == 1


def test_figures_are_attached_to_the_right_moves():
    entries = [{"board": 4, "spot": 4, "depth": 4, "score": -20, "nodes": 459},
               {"board": 4, "spot": 2, "depth": 6, "score": 20, "agent_seconds": 0.31},
               {"board": 0, "spot": 0, "depth": 1, "score": 0}]
    moves = [{"player": "Agent1", "board": 4, "spot": 4},
             {"player": "Seed2", "board": 4, "spot": 2},
             {"player": "Agent1", "board": 4, "spot": 2}]
    # The last logged move was never accepted (too late): it is not attached anywhere.
    assert telemetry.attach(moves, "Agent1", entries) == 2
    assert moves[0]["depth"] == 4 and moves[0]["nodes"] == 459
    assert moves[2]["score"] == 20 and moves[2]["agent_seconds"] == 0.31
    assert "depth" not in moves[1]
    assert telemetry.attach(moves, "Seed2", []) == 0       # programs that write no search log


def test_skipped_lines_get_a_key_only_when_there_are_some():
    assert telemetry.skipped_key({"A1": 0, "B2": 0}) == {}
    assert telemetry.skipped_key({"A1": 0, "B2": 5}) == {"search_log_skipped": {"B2": 5}}


# -- bounded reading of text output ----------------------------------------------------------

def test_the_last_line_comes_from_a_bounded_tail_and_is_printable(tmp_path):
    log = tmp_path / "a.log"
    log.write_text("$ python bot.py\n")
    assert telemetry.last_line(log) == "" and launch.last_output_line(log) == ""
    log.write_text("$ python bot.py\nfirst\nerror: bad \x1b[2J thing\n\n")
    assert telemetry.last_line(log) == "error: bad ?[2J thing"
    with open(log, "ab") as handle:         # a huge log: its tail only
        handle.write(b"x" * (5 * telemetry.TAIL_BYTES) + b"\nthe end\n")
    assert telemetry.last_line(log) == "the end"
    log.write_bytes(b"$ cmd\n" + b"y" * (3 * telemetry.TAIL_BYTES))
    assert telemetry.last_line(log, limit=10) == "y" * 10 + "..."
    assert telemetry.last_line(tmp_path / "missing.log") == ""


def test_output_past_the_command_line_is_seen_from_the_head(tmp_path):
    log = tmp_path / "a.log"
    log.write_bytes(b"$ cmd\n")
    assert not telemetry.wrote_past_first_line(log)
    log.write_bytes(b"$ cmd\nready\n")
    assert telemetry.wrote_past_first_line(log)
    log.write_bytes(b"$ " + b"c" * (2 * telemetry.TAIL_BYTES))     # no newline within the head
    assert telemetry.wrote_past_first_line(log)


def test_stdout_lines_are_cut_and_the_rest_dropped():
    limit = 16
    stream = io.BytesIO(b"4 4\n" + b"9" * 100 + b"\n" + b"1 2 message\n" + b"z" * 40)
    assert list(codingame_shell.bounded_lines(stream, limit)) == \
        [b"4 4\n", b"9" * limit, b"1 2 message\n", b"z" * limit]


def test_a_long_log_keeps_its_start_and_its_end(tmp_path):
    log = tmp_path / "flood.log"
    log.write_bytes(b"$ flood\n" + b"x" * 5000 + b"\nthe end\n")
    assert telemetry.trim_log(log, cap=1000) == 5017 - 1000
    data = log.read_bytes()
    assert data.startswith(b"$ flood\nxxx") and data.endswith(b"x\nthe end\n")
    assert b"[runner: 4,017 bytes of output cut here; a game's log keeps its first and last 500 " \
        b"bytes]" in data and len(data) < 1200
    assert telemetry.trim_log(log, cap=10_000) == 0 and log.read_bytes() == data
    assert telemetry.trim_log(tmp_path / "missing.log") == 0


@pytest.mark.skipif(not hasattr(telemetry.os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_or_a_symlink_in_place_of_a_log_is_not_read(tmp_path):
    fifo = tmp_path / "game-0001-Bot1.search.jsonl"
    telemetry.os.mkfifo(fifo)               # opening it to read would wait for a writer
    assert telemetry.read_search_log(fifo) == ([], 0)
    assert telemetry.last_line(fifo) == "" and telemetry.trim_log(fifo, cap=1) == 0
    assert telemetry.wrote_past_first_line(fifo)
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes(entry() + b"\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert telemetry.read_search_log(link) == ([], 0)
    assert telemetry.trim_log(link, cap=1) == 0 and target.read_bytes() == entry() + b"\n"


def test_a_program_flooding_stdout_waits_instead_of_filling_the_memory(tmp_path):
    program = codingame_games.start_program("Flood1", [sys.executable, "-c", "while True: print('0 0')"],
                                            tmp_path / "flood.log")
    try:
        deadline = time.monotonic() + 60
        while program.lines.qsize() < codingame_shell.MAX_PENDING_LINES and time.monotonic() < deadline:
            time.sleep(0.05)
        assert program.lines.qsize() == codingame_shell.MAX_PENDING_LINES
        assert program.answer(1.0)[1] == "0 0" + os.linesep     # print's line end: \r\n on Windows
    finally:
        program.kill()
    assert program.process.wait(timeout=30) is not None


# -- the agent's side ------------------------------------------------------------------------

def test_the_search_log_is_one_json_line_per_move_and_never_an_error(tmp_path, caplog):
    path = tmp_path / "search.jsonl"
    log = SearchLog.chosen(None, "file", {"threads": 2}, environ={SEARCH_LOG_ENV: str(path)})
    log.move(4, 8, 0.0213, SearchResult(move=44, score=-15, depth=7, nodes=900, elapsed=0.02))
    log.move(0, 0, -1.0)
    first, second = [json.loads(line) for line in path.read_text().splitlines()]
    assert first == {"format": 1, "protocol": "file", "turn": 1, "board": 4, "spot": 8,
                     "seconds": 0.0213, "depth": 7, "score": -15, "nodes": 900, "nps": 45000,
                     "proven": False, "threads": 2}
    assert second["seconds"] == 0 and "depth" not in second
    assert telemetry.read_search_log(path)[1] == 0
    # The option wins over the environment; an unwritable path is one warning, then nothing.
    assert SearchLog.chosen("mine", "file", environ={SEARCH_LOG_ENV: "theirs"}).path == "mine"
    assert SearchLog.chosen(None, "file", environ={}).path is None
    broken = SearchLog(str(tmp_path / "missing" / "x.jsonl"), "file")
    broken.move(1, 1, 0.1)
    broken.move(1, 2, 0.1)
    assert broken.path is None
    assert [r.message for r in caplog.records].count(
        next(r.message for r in caplog.records if "cannot write the search log" in r.message)) == 1


def test_a_bot_of_ones_own_takes_the_option_too():
    parser = cli.build_parser(engine_options=False)
    assert parser.parse_args(["Bot1", "--search-log", "moves.jsonl"]).search_log == "moves.jsonl"


def run_codingame(*args, env=None) -> subprocess.CompletedProcess:
    turn = "-1 -1\n2\n4 4\n0 0\n"
    return subprocess.run([sys.executable, "-m", "agent", "--protocol", "codingame", "--depth", "2",
                           "--first-turn-ms", "5000", *args], input=turn, capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env=env)


@pytest.mark.e2e
def test_the_codingame_agent_writes_its_search_log_and_plays_on_when_it_cannot(tmp_path):
    path = tmp_path / "search.jsonl"
    done = run_codingame("--search-log", str(path))
    assert done.stdout.split("\n")[0] in ("4 4", "0 0")
    (record,) = [json.loads(line) for line in path.read_text().splitlines()]
    row, col = map(int, done.stdout.split())
    assert (record["row"], record["col"]) == (row, col) and record["protocol"] == "codingame"
    assert record["depth"] >= 1 and "score" in record
    assert "since input" in done.stderr                   # the human line is still there
    bad = run_codingame("--search-log", str(tmp_path / "no" / "such" / "dir.jsonl"))
    assert bad.stdout == done.stdout and "cannot write the search log" in bad.stderr


# -- whole series against a hostile bot ------------------------------------------------------

def check_series(out: Path, games: int, opponent: str) -> None:
    lines = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert sorted(g["game"] for g in lines) == list(range(1, games + 1))
    for game in lines:
        assert game["result"] in ("win", "tie")
        ours = [m for m in game["moves"] if m["player"] == "Agent1"]
        assert ours and all(isinstance(m["depth"], int) and isinstance(m["score"], int) and
                            isinstance(m["agent_seconds"], float) for m in ours)
        assert game["search_log_skipped"][opponent] > 0 and "Agent1" not in game["search_log_skipped"]
        log = out / "logs" / f"game-{game['game']:04d}-{opponent}.log"
        assert log.stat().st_size < telemetry.LOG_CAP_BYTES + 1000     # 100 MB printed
        with open(log, "rb") as handle:
            handle.seek(telemetry.LOG_CAP_BYTES // 2)
            assert handle.read(100).startswith(b"\n[runner: ")


@pytest.mark.e2e
def test_a_file_protocol_series_against_a_hostile_bot_completes(tmp_path, capsys):
    out = tmp_path / "run"
    code = match.main(["agent:depth=2", f"python {HOSTILE} file {{name}} --dir {{dir}} --seed {{seed}}",
                       "--games", "2", "--time-limit", "0.5", "--seed", "1", "--out", str(out), "-q"])
    assert code == 0, capsys.readouterr()
    check_series(out, 2, "Hostile2")
    # The replay page reads the hostile bot's search logs too (its moves have no figures).
    data = replay.read_run(out / "games.jsonl")
    assert len(data["games"]) == 2


@pytest.mark.e2e
def test_a_codingame_series_against_a_hostile_bot_completes_and_resumes(tmp_path, capsys):
    out = tmp_path / "run"
    hostile = f"{{python}} {HOSTILE} codingame --seed {{seed}}"
    common = ["--first-turn-ms", "5000", "--turn-ms", "1000", "-q"]
    assert stdio.main(["agent:depth=2", hostile, "--games", "2", "--seed", "1", "--out", str(out),
                       *common]) == 0, capsys.readouterr()
    check_series(out, 2, "Hostile2")     # named from its script
    assert stdio.main(["--resume", "--out", str(out), "--games", "4", "-q"]) == 0
    check_series(out, 4, "Hostile2")
