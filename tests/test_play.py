"""ref_sim.play: a person against the engine, driven by scripted stdin."""

import io
import subprocess
import sys

import pytest

from ref_sim.play import describe_score, main


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


@pytest.mark.parametrize("game,move,example", [("nineboard", "5 5", "5 1"), ("qubic", "2 2 2", "2 3 1"),
                                               ("uttt", "4 4", "4 0")])
def test_other_games_take_a_move_and_answer(game, move, example):
    code, text = play([game, "--depth", "1"], ["1 2 3 4 5", move, "quit"])
    assert code == 0
    assert f"e.g. {example}" in text
    assert "Not a move here" in text
    assert "Engine plays" in text and "Game abandoned." in text


def test_score_text():
    assert describe_score(12) == "+12"
    assert describe_score(1_000_000 - 3) == "win in 3"
    assert describe_score(-(1_000_000 - 4)) == "loss in 4"


def test_command_line_through_a_real_process():
    process = subprocess.run([sys.executable, "-m", "ref_sim.play", "qubic", "--depth", "1"],
                             input="1 1 1\n9 9 9\n", capture_output=True, text=True, timeout=60)
    assert process.returncode == 0, process.stderr
    assert "layer 1" in process.stdout and "Engine plays" in process.stdout
    assert "Not a move here" in process.stdout and "Game abandoned." in process.stdout
    bad = subprocess.run([sys.executable, "-m", "ref_sim.play", "chess"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
