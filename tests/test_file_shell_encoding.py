"""The simulator decodes move_file as the real referee's Python does.

The real referee reads ``open("move_file", "r")``: the locale's preferred encoding, strict
errors, universal newlines, then ``readlines()``, the last line before the first blank one,
``split()`` and ``int()``.  A byte its codec refuses raises UnicodeDecodeError outside any
``try``: the referee crashes without an end_game.
"""

import locale
import os
import subprocess
import sys
import time

import pytest

from ref_sim.ref import main as referee_main
from ref_sim.referees.file_referee import INVALID_MOVE, UNDECODABLE, judge, parse_move_line
from ref_sim.referees.file_shell import RefereeCrash, read_move_line
from ref_sim.referees.file_text import check_encoding
from ref_sim.rules import Game

# Walrus (p1) 4 0, Otter 0 4, Walrus 4 8, Otter 8 4: Walrus plays next, in board 4.
OPENING = [(4, 0), (0, 4), (4, 8), (8, 4)]


def plain_python(path, encoding):
    """What the real referee's code makes of the file: "crash", INVALID_MOVE or the tuple."""
    try:
        with open(path, encoding=encoding) as handle:
            lines = handle.readlines()
    except UnicodeDecodeError:
        return "crash"
    line = ""
    for next_line in lines:
        if next_line.isspace():
            break
        line = next_line
    try:
        tokens = line.split()
        return tokens[0], int(tokens[1]), int(tokens[2])
    except (IndexError, ValueError):
        return INVALID_MOVE


def simulator(path, encoding, game):
    """The simulator's verdict in Walrus's turn: "crash", a reason, or the move it plays."""
    try:
        line = read_move_line(path, encoding)
    except RefereeCrash as crash:
        assert crash.reason.startswith(f"{UNDECODABLE} {check_encoding(encoding)}: byte 0x")
        return "crash"
    verdict = judge(game, line, "Walrus", "Otter")
    return verdict[1] if verdict else parse_move_line(line)


@pytest.mark.parametrize("encoding", ["utf-8", "cp1252", "latin-1"])
def test_every_high_byte_between_or_after_the_tokens_reads_as_plain_python(tmp_path,
                                                                           encoding):
    game = Game()
    for board, spot in OPENING:
        game.play(board, spot)
    path = tmp_path / "move_file"
    outcomes = {"between": {}, "after": {}}
    for byte in range(0x80, 0x100):
        x = bytes([byte])
        for place, data in (("between", b"Walrus" + x + b"4" + x + b"1\n"),
                            ("after", b"Walrus 4 1" + x + b"\n")):
            path.write_bytes(data)
            outcomes[place][byte] = expected = plain_python(path, encoding)
            assert simulator(path, encoding, game) == expected, (hex(byte), place)
    # What each codec makes of a lone high byte: the bytes it crashes on, and the bytes
    # that are whitespace to split() (a move between the tokens and after them).
    crashes = {b for b, outcome in outcomes["after"].items() if outcome == "crash"}
    spaces = {b for b, outcome in outcomes["between"].items() if outcome != INVALID_MOVE
              and outcome != "crash"}
    assert {b for b, outcome in outcomes["between"].items() if outcome == "crash"} == crashes
    assert {"utf-8": (set(range(0x80, 0x100)), set()),
            "cp1252": ({0x81, 0x8D, 0x8F, 0x90, 0x9D}, {0xA0}),
            "latin-1": (set(), {0x85, 0xA0})}[encoding] == (crashes, spaces)


def test_an_undecodable_byte_after_a_blank_line_still_crashes(tmp_path):
    # readlines() decodes the whole file before the loop stops at the blank line.
    path = tmp_path / "move_file"
    path.write_bytes(b"Walrus 4 1\n\nOtter \xff 9\n")
    assert plain_python(path, "utf-8") == "crash"
    with pytest.raises(RefereeCrash) as crash:
        read_move_line(path, "utf-8")
    assert crash.value.reason == (f"{UNDECODABLE} utf-8: byte 0xff at offset 18 "
                                  "(UnicodeDecodeError)")
    assert read_move_line(path, "latin-1") == "Walrus 4 1\n"


def test_the_default_is_the_locales_encoding(tmp_path, monkeypatch):
    path = tmp_path / "move_file"
    path.write_bytes(b"Walrus\xa04\xa01\n")
    monkeypatch.setattr(locale, "getpreferredencoding", lambda do_setlocale=True: "cp1252")
    assert read_move_line(path) == "Walrus\xa04\xa01\n"
    monkeypatch.setattr(locale, "getpreferredencoding", lambda do_setlocale=True: "UTF-8")
    with pytest.raises(RefereeCrash):
        read_move_line(path)


def write_bytes(turn, data):
    """As the scripted Turn.write, for bytes: past the referee's mtime, then a rename."""
    time.sleep(0.015)
    temp = os.path.join(turn.directory, ".scripted-tmp")
    with open(temp, "wb") as handle:
        handle.write(data)
    os.replace(temp, turn.move_file)


@pytest.mark.parametrize("encoding, byte, outcome", [
    ("latin-1", 0xA0, "played"), ("cp1252", 0xA0, "played"), ("utf-8", 0xA0, "crash"),
    ("cp1252", 0x81, "crash"), ("cp1252", 0x85, INVALID_MOVE), ("latin-1", 0x85, "played")])
@pytest.mark.e2e
def test_whole_games_under_each_encoding(scripted, tmp_path, encoding, byte, outcome):
    def act(turn):              # p1's first move with the byte for spaces, then nothing
        if turn.ply == 0:
            board, spot = turn.legal_move()
            write_bytes(turn, f"{turn.player} {board} {spot}\n".encode().replace(b" ",
                                                                               bytes([byte])))
    ends = []
    record, events = scripted(act, lambda e: ends.append((tmp_path / "end_game").exists()),
                              time_limit=0.2, encoding=encoding)
    assert record.encoding == check_encoding(encoding)
    if outcome == "played":                 # then p2 lets its clock run out
        assert len(record.moves) == 1 and record.reason == "Time out!"
    elif outcome == "crash":                # as the real referee: no end_game, aborted
        assert record.result == "aborted" and record.end_text is None
        assert record.reason.startswith(f"{UNDECODABLE} {check_encoding(encoding)}: byte "
                                        f"0x{byte:02x} at offset {len(record.p1)} ")
        assert record.bad_line.startswith(f"{record.p1}\\x{byte:02x}")   # the bytes shown
        assert events[-1][0] == "abort" and not any(ends)
    else:
        assert record.reason == outcome and record.loser == record.p1


@pytest.mark.e2e
def test_the_command_line_takes_an_encoding(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        referee_main(["A", "B", "--encoding", "klingon", "--dir", str(tmp_path)])
    assert exit_info.value.code == 2
    assert ("error: --encoding klingon: not a text encoding Python knows (e.g. utf-8, "
            "cp1252, latin-1)") in capsys.readouterr().err
    with pytest.raises(SystemExit):
        referee_main(["Zo\u00eb", "\u0411\u043e\u0431", "--encoding", "cp1252"])
    assert "the name 'Боб' cannot be written in cp1252" in capsys.readouterr().err
    record = tmp_path / "record.json"
    assert referee_main(["A", "B", "--dir", str(tmp_path), "--time-limit", "0.1", "-q",
                         "--encoding", "Latin-1", "--record", str(record)]) == 0
    assert '"encoding": "iso8859-1"' in record.read_text()


@pytest.mark.e2e
def test_a_crash_exits_1_like_a_vanished_move_file(tmp_path):
    # A bot writing a UTF-8-invalid byte: the game is aborted, python -m ref_sim exits 1.
    script = (f"import time, pathlib; d = pathlib.Path({str(tmp_path)!r})\n"
              "while not (d / 'first_four_moves').exists(): time.sleep(0.005)\n"
              "time.sleep(0.03); (d / 'move_file').write_bytes(b'A\\xa04\\xa00\\n')\n")
    bot = subprocess.Popen([sys.executable, "-c", script])
    try:
        done = subprocess.run([sys.executable, "-m", "ref_sim", "A", "B", "--dir", str(tmp_path),
                               "--time-limit", "1", "-q", "--encoding", "utf-8"],
                              capture_output=True, text=True, timeout=30)
    finally:
        bot.wait(10)
    assert done.returncode == 1, done.stderr
    assert "Game aborted: referee crashed: move_file is not valid utf-8: byte 0xa0" in done.stdout


def test_check_encoding_refuses_what_no_locale_uses():
    with pytest.raises(ValueError, match="--encoding utf-16: no locale uses it"):
        check_encoding("utf-16")
