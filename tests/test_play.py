"""ref_sim.play: a person against the engine, driven by scripted stdin."""

import io
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ref_sim.games import get_game
from ref_sim.play import describe_score, draw, main, parse_uttt


def play(argv, lines):
    out = io.StringIO()
    code = main(argv, io.StringIO("".join(line + "\n" for line in lines)), out)
    return code, out.getvalue()


def test_ttt_bad_and_illegal_entries_are_asked_again_and_the_engine_never_loses():
    code, text = play(["ttt", "--seconds", "0.2"],
                      ["nonsense", "b2", "b2", "moves", "a3", "c1", "c2", "b3", "a1", "a2", "b1", "c3"])
    assert code == 0
    assert "e.g. b2" in text
    assert "Not a move here: expected a cell like 'b2'" in text
    assert "is taken by" in text
    assert "Legal moves: " in text
    assert "Engine plays" in text and "depth" in text and "nodes" in text and "score" in text
    assert "Game over" in text and "you win" not in text
    assert "    a   b   c" in text  # coordinates around the board


def test_quit_and_end_of_input_leave_cleanly():
    code, text = play(["ttt"], ["quit"])
    assert code == 0 and "Game abandoned." in text
    code, text = play(["nineboard"], [])
    assert code == 0 and "Game abandoned." in text


def test_engine_first_wins_when_the_human_blunders():
    # The engine (X) opens (every first move is a proven draw, so which one is the search's
    # order); the human plays edges only, a taken one is asked again, and is punished.
    code, text = play(["ttt", "--first", "engine", "--seconds", "0.2"], ["b1", "a2", "c2", "b3", "a2", "c2", "b3"])
    assert code == 0 and "you are O" in text
    assert "X wins: the engine wins." in text


@pytest.mark.parametrize("game,move,example", [("nineboard", "5 5", "e.g. 5 1"),
                                               ("qubic", "2 2 2", "e.g. 2 3 1"),
                                               ("uttt", "4 4", "board spot (b4 s0) or row col (r4 c0)")])
def test_other_games_take_a_move_and_answer(game, move, example):
    code, text = play([game, "--depth", "1"], ["1 2 3 4 5", move, "quit"])
    assert code == 0
    assert example in text
    assert "Not a move here" in text
    assert "Engine plays" in text and "Game abandoned." in text


def test_score_text():
    assert describe_score(12) == "+12"
    assert describe_score(1_000_000 - 3) == "win in 3"
    assert describe_score(-(1_000_000 - 4)) == "loss in 4"


@pytest.mark.e2e
def test_command_line_through_a_real_process():
    process = subprocess.run([sys.executable, "-m", "ref_sim.play", "qubic", "--depth", "1"],
                             input="1 1 1\n9 9 9\n", capture_output=True, text=True, timeout=60)
    assert process.returncode == 0, process.stderr
    assert "layer 1" in process.stdout and "Engine plays" in process.stdout
    assert "Not a move here" in process.stdout and "Game abandoned." in process.stdout
    bad = subprocess.run([sys.executable, "-m", "ref_sim.play", "chess"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


# -- the board as a person reads it ----------------------------------------------------------

def random_states(name, seeds=range(6)):
    """Every position of random games of ``name`` played to their ends."""
    game = get_game(name)
    for seed in seeds:
        rng = random.Random(seed)
        state = game.new_state()
        yield game, state
        while state.winner is None:
            state.push(rng.choice(list(state.legal_moves())))
            yield game, state


@pytest.mark.parametrize("name, labels, bars", [("uttt", [8, 16, 24], [15, 23]),
                                                ("nineboard", [2, 10, 18], [9, 17])])
def test_the_nine_boards_stay_in_line_in_every_state(name, labels, bars):
    # Boards won by X or O, drawn, to play in: the headers, cells and bars keep their columns.
    seen_notes = set()
    for game, state in random_states(name):
        for line in draw(game, state).splitlines():
            if "[" in line and "board b" not in line:
                assert [i for i, c in enumerate(line) if c == "["] == labels, line
                seen_notes.update(re.findall(r"\] ?([XO=*])", line))
            elif "|" in line or "+" in line:
                assert [i for i, c in enumerate(line) if c in "|+"] == bars, line
    if name == "uttt":                  # the states above did include won and drawn boards
        assert {"X", "O", "=", "*"} <= seen_notes


@pytest.mark.parametrize("name", ["ttt", "nineboard", "qubic", "uttt"])
def test_the_last_move_is_drawn_in_parentheses(name):
    for game, state in random_states(name, seeds=[1]):
        text = draw(game, state)
        marked = re.findall(r"\(([XO])\)", text)
        if not state.moves_played():
            assert marked == []
            continue
        assert marked == ["XO"[(len(state.moves_played()) - 1) % 2]], text


def test_uttt_reads_board_spot_and_row_col_and_says_which():
    state = get_game("uttt").new_state()
    assert parse_uttt(state, "b4 s0") == (36, "board 4 spot 0 (= row 3 col 3)")
    assert parse_uttt(state, "board 4 spot 0")[0] == 36
    assert parse_uttt(state, "r4 c0") == (30, "row 4 col 0 (= board 3 spot 3)")
    assert parse_uttt(state, "row 4, col 0")[0] == 30
    assert parse_uttt(state, "4 4")[0] == 40            # the same cell both ways
    with pytest.raises(ValueError, match=r"'4 0' is board 4 spot 0 or 4 0 on the grid "
                                         r"\(board 3 spot 3\): type b4 s0 or r4 c0"):
        parse_uttt(state, "4 0")
    state.push(40 - 4 + 3)              # b4 s3: O must play in board 3
    assert parse_uttt(state, "4 0") == (30, "row 4 col 0 (= board 3 spot 3)")
    assert parse_uttt(state, "3 3") == (30, "board 3 spot 3 (= row 4 col 0)")
    with pytest.raises(ValueError, match=r"'8 0' \(board 8 spot 0, or row 8 col 0\): the move "
                                         "must be in board 3$"):
        parse_uttt(state, "8 0")
    with pytest.raises(ValueError, match="expected 'board spot' like b4 s0"):
        parse_uttt(state, "9 9")


def test_undo_takes_back_your_move_and_the_reply():
    code, text = play(["uttt", "--depth", "1"], ["undo", "r4 c4", "undo", "b4 s4", "quit"])
    assert code == 0
    assert text.count("Nothing to undo: you have not moved yet.") == 1
    assert "Read as row 4 col 4 (= board 4 spot 4)." in text
    assert "Took back your last move and the engine's reply." in text
    board_after_undo = text.split("Took back")[1].split("Your move")[0]
    assert not re.search(r"[XO]", board_after_undo.split("[b] board b")[0])
    assert text.count("Engine plays b4 s") == 2
    code, text = play(["ttt", "--first", "engine", "--depth", "1"], ["undo", "quit"])
    assert "Nothing to undo" in text


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("tmux") is None, reason="no tmux here (Debian: apt-get install tmux)")
def test_the_game_in_a_real_terminal(tmp_path):
    # What a person sees: tmux runs the command in a terminal, the pane is captured as text.
    server = ["tmux", "-L", f"uttt-play-test-{os.getpid()}", "-f", os.devnull]
    root = Path(__file__).resolve().parent.parent
    command = f"cd {shlex.quote(str(root))} && {shlex.quote(sys.executable)} -m ref_sim.play uttt --depth 1"
    subprocess.run(server + ["new-session", "-d", "-s", "play", "-x", "100", "-y", "50", command],
                   check=True, timeout=30)

    def pane():
        return subprocess.run(server + ["capture-pane", "-p", "-S", "-", "-t", "play"], capture_output=True,
                              text=True, check=True, timeout=30).stdout

    def wait_for(text, count=1):
        end = time.monotonic() + 30             # a hang check: it shows in a fraction of that
        while pane().count(text) < count:
            assert time.monotonic() < end, pane()
            time.sleep(0.05)
        return pane()

    try:
        wait_for("Your move (X)")
        for keys, prompts in (("r4 c4", 2), ("0 0", 3)):     # (0 0 is both forms' same cell)
            subprocess.run(server + ["send-keys", "-t", "play", keys, "Enter"], check=True, timeout=30)
            shown = wait_for("Your move (X)", prompts)
        board = shown.split("Engine plays")[-1].split("Your move")[0]
        assert len(re.findall(r"\(O\)", board)) == 1 and "(X)" not in board
        for line in board.splitlines():
            if line.startswith("  row") or line.startswith("        ["):
                assert [i for i, c in enumerate(line) if c == "["] == [8, 16, 24], line
        subprocess.run(server + ["send-keys", "-t", "play", "undo", "Enter"], check=True, timeout=30)
        assert "Took back your last move" in wait_for("Your move (X)", 4)
    finally:
        subprocess.run(server + ["kill-server"], timeout=30)
