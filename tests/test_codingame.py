"""The CodinGame stdin/stdout adapter against scripted input: coordinates, turns, every bad-input
case, the boards-count tie-break, and the command line (nothing but moves on stdout)."""

import logging
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent import codingame
from agent.codingame import CodinGameAgent, cell_to_index, index_to_cell
from agent.cli_common import UsageError
from agent.engines import make_engine
from agent.limits import STOP_POLL_SECONDS, SearchResult
from agent.rules import CODINGAME, WPI, Position
from ref_sim.rules import Game

ROOT = Path(__file__).resolve().parent.parent

#: A random game (seed 20) in the codingame variant: after these 47 moves O has five legal
#: moves, and two of them (cells 72 and 80) decide the last boards with no line and more boards
#: for O: a win for CodinGame, a tie for the CS 4341 referee.
COUNT_WIN_GAME = [19, 13, 37, 15, 56, 18, 6, 61, 64, 9, 2, 22, 44, 79, 70, 65, 21, 32, 50, 51, 58, 36,
                  7, 69, 59, 48, 28, 11, 26, 75, 27, 1, 23, 45, 3, 31, 43, 67, 40, 78, 57, 30, 74, 20,
                  24, 25, 8]
COUNT_WINS = {72, 80}


def eventually(predicate, timeout=3.0) -> bool:
    """The agent answers before it logs and updates its position: wait for that to happen."""
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            return False
        time.sleep(0.005)
    return True


def cell(index: int) -> str:
    return "{} {}".format(*index_to_cell(index))


def turn_text(opponent: str, actions) -> str:
    """One turn of input: the opponent's 'row col', the count, the actions as cells."""
    return "".join([f"{opponent}\n{len(actions)}\n"] + [cell(a) + "\n" for a in actions])


def legal_after(moves) -> list[int]:
    return sorted(Position.from_moves(moves, CODINGAME).legal_moves())


class Harness:
    """Runs a CodinGameAgent in a thread on a real pipe; the test plays the referee."""

    def __init__(self, depth=2, position=None, turn_ms=100.0, first_turn_ms=300.0, engine=None) -> None:
        read_fd, write_fd = os.pipe()
        self.stdin = os.fdopen(read_fd, "rb")
        self.feed = os.fdopen(write_fd, "wb", buffering=0)
        self.answers: queue.Queue = queue.Queue()
        harness = self

        class Out:
            def write(self, text):
                harness.written.append(text)
                for line in text.splitlines():
                    harness.answers.put(line)

            def flush(self):
                pass

        self.written: list[str] = []
        engine = engine if engine is not None else make_engine("alphabeta", depth=depth, hash_mb=4)
        self.agent = CodinGameAgent(engine, turn_ms=turn_ms,
                                    first_turn_ms=first_turn_ms, depth=depth, stdin=self.stdin,
                                    stdout=Out(), position=position, launched=None)
        self.code = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        self.code = self.agent.run()

    def send(self, text: str) -> None:
        self.feed.write(text.encode())

    def answer(self, timeout=5.0) -> str:
        return self.answers.get(timeout=timeout)

    def turn(self, opponent: str, actions) -> str:
        self.send(turn_text(opponent, actions))
        return self.answer()

    def close(self, timeout=5.0) -> int:
        """Close the input (EOF) and return the agent's exit code."""
        if not self.feed.closed:
            self.feed.close()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the agent did not stop"
        return self.code

    def wait(self, timeout=5.0) -> int:
        """Wait for the agent to stop by itself (bad input), then close the input."""
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the agent did not stop"
        self.feed.close()
        return self.code


@pytest.fixture
def harnesses():
    made = []

    def make(**kwargs):
        made.append(Harness(**kwargs))
        return made[-1]
    yield make
    for harness in made:
        if not harness.feed.closed:
            harness.feed.close()
        harness.thread.join(5)


# -- coordinates ---------------------------------------------------------------------------

def test_coordinates_convert_both_ways():
    assert [cell_to_index(*index_to_cell(i)) for i in range(81)] == list(range(81))
    assert sorted(index_to_cell(i) for i in range(81)) == [(r, c) for r in range(9) for c in range(9)]
    # (row, col) -> board (row // 3) * 3 + col // 3, square (row % 3) * 3 + col % 3
    assert cell_to_index(0, 0) == 0
    assert cell_to_index(0, 3) == 1 * 9 + 0
    assert cell_to_index(1, 6) == 2 * 9 + 3
    assert cell_to_index(4, 4) == 4 * 9 + 4
    assert cell_to_index(7, 2) == 6 * 9 + 5
    assert cell_to_index(8, 8) == 80
    assert index_to_cell(5 * 9 + 7) == (5, 7)


# -- normal turns --------------------------------------------------------------------------

def test_first_move_with_minus_one_and_the_game_goes_on(harnesses):
    h = harnesses()
    first = h.turn("-1 -1", range(81))
    row, col = map(int, first.split())
    mine = cell_to_index(row, col)
    # The opponent answers in the board our square points to; we must answer where it sends us.
    reply = legal_after([mine])[0]
    second = h.turn(cell(reply), legal_after([mine, reply]))
    assert cell_to_index(*map(int, second.split())) in legal_after([mine, reply])
    assert eventually(lambda: h.agent.turns == 2)
    assert h.agent.position.moves_played() == [mine, reply, cell_to_index(*map(int, second.split()))]
    assert h.close() == codingame.EXIT_INPUT_ENDED      # ended early: no reply could end it
    assert all(line.count(" ") == 1 for line in "".join(h.written).splitlines())


def test_opponent_first_sends_us_to_its_square(harnesses):
    h = harnesses()
    answer = h.turn("4 4", legal_after([40]))        # the centre: board 4, square 4
    row, col = map(int, answer.split())
    assert 3 <= row <= 5 and 3 <= col <= 5
    assert eventually(lambda: h.agent.turns == 1)
    assert h.agent.position.turn == 0 and h.agent.position.ply == 2   # we are O


def test_input_ending_before_any_turn_is_an_early_end(harnesses):
    assert harnesses().close() == codingame.EXIT_INPUT_ENDED


# -- the tie-break: more boards won ----------------------------------------------------------

def test_more_boards_won_is_a_win_through_the_adapter(harnesses, caplog):
    before, last = COUNT_WIN_GAME[:-1], COUNT_WIN_GAME[-1]
    h = harnesses(position=Position.from_moves(before, CODINGAME))
    with caplog.at_level(logging.INFO):
        answer = cell_to_index(*map(int, h.turn(cell(last), legal_after(COUNT_WIN_GAME)).split()))
        assert answer in COUNT_WINS
        assert h.close() == codingame.EXIT_FINISHED
    assert "more local boards won" in caplog.text
    # The plain rules agree: O wins for CodinGame, and the CS 4341 referee would call it a tie.
    for variant, result in ((CODINGAME, 1), (WPI, "tie")):
        game = Game(variant)
        for index in COUNT_WIN_GAME + [answer]:
            game.play(*divmod(index, 9))
        assert game.result == result


def test_eof_when_the_opponents_reply_can_end_the_game_is_normal():
    # CodinGame never sends the final move: input ending where the side to move (the opponent)
    # can end the game is a normal end; where it cannot, the game was stopped early.
    agent = CodinGameAgent(make_engine("random"), stdin=None, position=Position.from_moves(COUNT_WIN_GAME, CODINGAME))
    agent.turns = 1
    assert agent._input_ended() == codingame.EXIT_FINISHED
    agent.position = Position.from_moves(COUNT_WIN_GAME[:20], CODINGAME)
    assert agent._input_ended() == codingame.EXIT_INPUT_ENDED


# -- timing ----------------------------------------------------------------------------

def test_the_first_turn_keeps_a_tenth_of_its_limit_back():
    # A loaded machine answered 10-20 ms past CodinGame's 1000 ms when only 20 ms were kept back.
    agent = CodinGameAgent(make_engine("random"), stdin=None)
    assert agent.budget() == pytest.approx(0.900)
    agent.turns = 1
    assert agent.budget() == pytest.approx(0.080)            # 100 ms less the 20 ms margin


class StallingEngine:
    """Stalls ``seconds`` between two polls of should_stop (as a search the machine took off the CPU),
    well within the deadline, then plays the first legal move."""

    name = "stalling"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def choose(self, position, limit):
        limit.should_stop()
        time.sleep(self.seconds)
        limit.should_stop()
        return SearchResult(move=next(iter(position.legal_moves())))


def test_a_stall_of_the_search_is_kept_back_on_the_next_turns(harnesses, caplog):
    # Stalls strike at any moment, the deadline included: a search that stalled 40 ms between two
    # polls, even one that answered in time, makes the next deadlines keep that back (less the
    # polling period, the gap a running search has anyway).
    h = harnesses(engine=StallingEngine(0.040), first_turn_ms=1000.0)
    stall_ms = 1000 * (0.040 - STOP_POLL_SECONDS)
    with caplog.at_level(logging.INFO):
        first = cell_to_index(*map(int, h.turn("-1 -1", range(81)).split()))
        assert eventually(lambda: h.agent.turns == 1)
        assert stall_ms - 1 <= h.agent.keep_back_ms() < 200
        reply = legal_after([first])[0]
        h.turn(cell(reply), legal_after([first, reply]))
        assert eventually(lambda: "ms for pauses)" in caplog.text)   # logged with the move
        assert h.agent.keep_back_ms() >= stall_ms - 1
        assert h.agent.budget() <= 0.100 - 0.020 - (stall_ms - 1) / 1000
        for _ in range(codingame.KEEP_BACK_WINDOW - 1):     # remembered for the whole window
            h.agent.pauses.append(0.0)
        assert h.agent.keep_back_ms() >= stall_ms - 1
        h.agent.pauses.append(0.0)
        assert h.agent.keep_back_ms() == 0.0


def test_the_search_stops_earlier_after_a_pause():
    agent = CodinGameAgent(make_engine("random"), stdin=None)
    agent.turns = 5
    agent.pauses.append(0.045)     # the answer came 45 ms after the planned deadline
    assert agent.budget() == pytest.approx(0.100 - 0.020 - 0.045)
    agent.pauses.append(0.090)     # never under a quarter of the limit
    assert agent.budget() == pytest.approx(0.025)


# -- bad input -----------------------------------------------------------------------------

FIRST = turn_text("-1 -1", range(81))


@pytest.mark.parametrize("text, words", [
    ("a b\n", "opponent move"),
    ("4\n", "opponent move"),
    ("9 0\n81\n", "0-8"),
    ("-1 4\n81\n", "0-8"),
    ("-1 -1\nmany\n", "count"),
    ("-1 -1\n0\n", "1-81"),
    ("-1 -1\n82\n", "1-81"),
    ("-1 -1\n2\n0 0\n0\n", "valid action 2 of 2"),
    ("-1 -1\n2\n0 0\n0 0\n", "twice"),
    ("-1 -1\n3\n0 0\n0 1\n", "input ended inside a turn"),          # EOF in the middle
    ("-1 -1\n2\n0 0\n0 1\n0 2\n", "more input"),                      # more lines than said
], ids=["letters", "one-number", "row-9", "minus-one-col", "count-word", "count-0", "count-82",
        "action-short", "action-twice", "eof-inside", "extra-line"])
def test_malformed_input_exits_with_a_message_and_no_answer(harnesses, caplog, text, words):
    h = harnesses()
    with caplog.at_level(logging.INFO):
        h.send(text)
        if "input ended" in words:
            h.feed.close()
        assert h.wait() == codingame.EXIT_BAD_INPUT
    assert words in caplog.text
    assert h.written == []


def test_too_few_action_lines_time_out_the_turn(harnesses, caplog):
    h = harnesses(first_turn_ms=200)
    with caplog.at_level(logging.INFO):
        h.send("-1 -1\n3\n0 0\n0 1\n")       # the third line never comes
        started = time.monotonic()
        assert h.wait() == codingame.EXIT_BAD_INPUT
    assert time.monotonic() - started < 10      # it gave up at the turn's end, it did not hang
    assert "did not arrive within the turn's time" in caplog.text
    assert h.written == []


def test_illegal_opponent_move_then_the_referee_list_is_followed(harnesses, caplog):
    h = harnesses()
    with caplog.at_level(logging.INFO):
        mine = cell_to_index(*map(int, h.turn("-1 -1", range(81)).split()))
        # The opponent "plays" on our own cell; the referee's list is whatever it says.
        listed = [5, 6, 7]
        assert h.turn(cell(mine), listed) == cell(5)
        assert eventually(lambda: h.agent.position is None)
        assert h.turn("0 0", [30, 31]) == cell(30)
        assert h.close() == codingame.EXIT_INPUT_ENDED
    assert "is illegal in my position" in caplog.text


def test_minus_one_after_the_first_turn_loses_track(harnesses, caplog):
    h = harnesses()
    with caplog.at_level(logging.INFO):
        h.turn("-1 -1", range(81))
        assert h.turn("-1 -1", [12, 13]) == cell(12)
        assert eventually(lambda: h.agent.turns == 2)
    assert "-1 -1 after the first turn" in caplog.text and h.agent.position is None


def test_a_list_that_differs_is_obeyed_and_the_position_kept_when_possible(harnesses, caplog):
    h = harnesses()
    with caplog.at_level(logging.INFO):
        # The opponent took the centre; the referee offers one of our nine legal moves only.
        only = legal_after([40])[3]
        assert h.turn("4 4", [only]) == cell(only)
        assert eventually(lambda: "first listed action" in caplog.text)
        assert h.agent.position is not None and h.agent.position.moves_played() == [40, only]
        assert "differ from my" in caplog.text
        # Next turn the list agrees again: back to the engine (its search line has a depth).
        reply = legal_after([40, only])[0]
        caplog.clear()
        answer = h.turn(cell(reply), legal_after([40, only, reply]))
        assert cell_to_index(*map(int, answer.split())) in legal_after([40, only, reply])
        assert eventually(lambda: "depth 2" in caplog.text)
        assert "differ" not in caplog.text


def test_a_list_of_moves_illegal_for_us_is_obeyed_and_the_position_dropped(harnesses, caplog):
    h = harnesses()
    with caplog.at_level(logging.INFO):
        assert h.turn("4 4", [0, 1]) == cell(0)        # board 0: not where 4 4 sends us
        assert eventually(lambda: h.agent.position is None)
        assert h.close() == codingame.EXIT_INPUT_ENDED
    assert "only theirs: 0 0, 0 1" in caplog.text


# -- the command line ----------------------------------------------------------------------

def run_agent(*args, input_text="", timeout=30):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "agent", *args], input=input_text, capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT, env=env)


@pytest.mark.e2e
def test_command_line_prints_only_the_move_on_stdout():
    result = run_agent("--protocol", "codingame", "--depth", "2", input_text=FIRST)
    assert result.returncode == codingame.EXIT_INPUT_ENDED
    assert len(result.stdout.splitlines()) == 1
    row, col = map(int, result.stdout.split())
    assert 0 <= row <= 8 and 0 <= col <= 8
    # The search line; its depth can be under 2 when a loaded machine takes most of the first
    # turn to start (the input was waiting at launch, so the turn counts from then).
    assert "ready" in result.stderr and re.search(r"move \d \d  depth \d", result.stderr)
    assert "Traceback" not in result.stderr


@pytest.mark.e2e
def test_bad_input_with_the_referees_pipe_still_open_exits_with_its_code():
    # A referee keeps its end of stdin open: the reader thread is then still in a read when the
    # agent quits, and Python's shutdown used to abort the process (SIGABRT) instead.
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen([sys.executable, "-m", "agent", "--protocol", "codingame", "--engine", "random"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=ROOT, env=env)
    try:
        process.stdin.write("hello\n")
        process.stdin.flush()
        code = process.wait(timeout=30)
        stderr = process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
        process.stdin.close()
        process.stdout.close()
        process.stderr.close()
    assert code == codingame.EXIT_BAD_INPUT, stderr
    assert "bad input" in stderr and "Fatal" not in stderr


def test_the_evaluation_option_reaches_the_codingame_engine(monkeypatch, fake_machine):
    # --eval was dropped on the way to the CodinGame engine: it always got the default. --threads too.
    asked = []

    def build_engine(*args):
        asked.append(args)
        raise UsageError("stop here")

    from agent import cli
    monkeypatch.setattr(cli, "build_engine", build_engine)
    fake_machine(cores=4)  # 2 threads fit: not capped
    assert cli.main(["--protocol", "codingame", "--eval", "classic", "--depth", "3", "--threads", "2"]) == \
        codingame.EXIT_USAGE
    assert asked == [(None, 3, None, "classic", 2)]


@pytest.mark.e2e
def test_command_line_bad_input_and_options():
    bad = run_agent("--protocol", "codingame", "--engine", "random", input_text="hello\n")
    assert bad.returncode == codingame.EXIT_BAD_INPUT and bad.stdout == ""
    assert "bad input" in bad.stderr and "Traceback" not in bad.stderr
    nodes = run_agent("--protocol", "codingame", "--nodes", "300", input_text=turn_text("4 4", legal_after([40])))
    assert nodes.returncode == codingame.EXIT_INPUT_ENDED and len(nodes.stdout.splitlines()) == 1
    usage = run_agent("--protocol", "codingame", "--margin-ms", "200")
    assert usage.returncode == 2 and "--margin-ms" in usage.stderr
    # The file protocol is still the default, and still needs its NAME.
    assert run_agent("--dir", ".").returncode == 2
    helped = run_agent("--help")
    assert "--protocol" in helped.stdout and "CodinGame protocol" in helped.stdout
    assert "illegal opponent move" in helped.stdout


# -- closed streams and huge lines: one line, a documented code, never a traceback ------------------

@pytest.mark.skipif(os.name != "posix", reason="closes descriptors with sh")
@pytest.mark.parametrize("closed, input_text, code, words", [
    ("stdout", FIRST, codingame.EXIT_INPUT_ENDED, "stdout is closed: no game can be played"),
    ("stdin", None, codingame.EXIT_INPUT_ENDED, "stdin is closed: no game can be played"),
    ("stdout-pipe", FIRST, codingame.EXIT_INPUT_ENDED, "stdout closed by the referee (Broken pipe)"),
    (None, "x" * 5_000_000 + "\n", codingame.EXIT_BAD_INPUT, "bad input: opponent move: expected 'row col'"),
    (None, "-1 -1\n" + "9" * 4000 + "\n", codingame.EXIT_BAD_INPUT, "count must be 1-81, got '9999"),
    ("stderr", "hello\n", codingame.EXIT_BAD_INPUT, ""),   # nothing to say it on: still the code
], ids=["stdout", "stdin", "stdout-pipe", "5-MB-line", "4000-digit-count", "stderr"])
@pytest.mark.e2e
def test_closed_streams_and_huge_lines(start_agent, closed, input_text, code, words):
    args = ["--protocol", "codingame", "--engine", "random", "-q"]
    popen = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    if closed == "stdout-pipe":  # the referee stopped reading: EPIPE on our first answer
        read_end, popen["stdout"] = os.pipe()
        os.close(read_end)
        process = start_agent(args, **popen)
        os.close(popen["stdout"])
    else:
        popen.pop(closed, None)  # closed by sh instead
        process = start_agent(args, closed=closed, **popen)
    out, err = process.communicate(input_text, timeout=30)
    assert process.returncode == code, err
    assert not out
    if closed == "stderr":
        assert err is None
    else:
        assert err.count("\n") == 1 and words in err and len(err) < 300, err[:500]
