"""CodinGame's referee's decisions as tables: :class:`CodinGameReferee` driven by scripted programs
on a virtual clock, no processes, pipes, threads or sleeps (ref_sim/referees/codingame_referee.py).

Each program is a script: at each input it prints lines some seconds later, exits, or prints a
line that never ends. Every action is logged with its time, so each turn's limit, the verdicts
(a move, Invalid move!, Time out! and how late, a crash and its exit), the end on the board, the
programs' closing and a stop are checked exactly, where a real game could only check them with
sleeps. The shell (ref_sim/referees/codingame_shell.py, ``referee_game``) is checked here on programs
that answer at once; a few real games (tests/test_stdio_series.py) show it with processes.
"""

from __future__ import annotations

import random
import threading
import time

import pytest

from ref_sim.referees import codingame_shell
from ref_sim.referees.codingame_referee import (
    COUNT_WIN,
    CRASHED,
    EXIT_NOTE_WAIT,
    INVALID_MOVE,
    LATE_WAIT,
    LINE_WIN,
    STOPPED,
    TIME_OUT,
    AskExit,
    Await,
    CodinGameReferee,
    Done,
    Ended,
    Endless,
    Finish,
    Line,
    Send,
    Show,
    TimedOut,
    to_cell,
)
from ref_sim.rules import CODINGAME, TIE, Game, line_winner
from ref_sim.series.output.game_line import GameLine
from ref_sim.series.process import turn_share
#: Its output ends (the program exits) / a line of it never ends (its stdout is read no further).
EXIT, ENDLESS = object(), object()
WHY = "a line of over 1,048,576 bytes without a newline"

#: The random game of tests/test_stdio_series.py (cells board*9+spot): after it O (B) holds more
#: boards, none in a line, every board decided.
COUNT_WIN_GAME = [19, 13, 37, 15, 56, 18, 6, 61, 64, 9, 2, 22, 44, 79, 70, 65, 21, 32, 50, 51, 58, 36,
                  7, 69, 59, 48, 28, 11, 26, 75, 27, 1, 23, 45, 3, 31, 43, 67, 40, 78, 57, 30, 74, 20,
                  24, 25, 8, 72]


class Virtual:
    """Runs one referee with scripted programs on a virtual clock.

    ``scripts[name](turn, actions)`` gives, at the ``turn``-th input to ``name`` (from 0; ``actions``
    its valid moves as "row col"), what it prints: a list of ``(delay, what)``, ``what`` a line
    (with its newline), :data:`EXIT` or :data:`ENDLESS`, each ``delay`` seconds after that input.
    A program without a script plays its first valid action after 10 ms. ``exits``: what
    :class:`AskExit` learns of each; ``kept``: the programs that do not exit when closed.
    ``interrupt_at``: a stop then, waking an :class:`Await` as the shell's does;
    ``interrupt_after``: a stop right after that action. ``woke_late``: each :class:`Await` returns that much after its
    ``until`` (a loaded runner), with what came by then."""

    def __init__(self, scripts=None, *, exits=None, kept=(), interrupt_at=None, interrupt_after=None,
                 woke_late=0.0):
        self.scripts = scripts or {}
        self.exits, self.kept = exits or {}, set(kept)
        self.interrupt_at, self.interrupt_after, self.woke_late = interrupt_at, interrupt_after, woke_late
        self.pending: dict[str, list] = {}      # each program's output not yet read: (at, what)
        self.gone: set[str] = set()
        self.inputs: dict[str, int] = {}
        self.log: list[tuple[float, object]] = []
        self.now = 0.0

    def play(self, names=("A", "B"), turn_ms=100.0, first_turn_ms=1000.0, grace_ms=5.0, exit_wait=2.0):
        self.referee = referee = CodinGameReferee(list(names), turn_ms, first_turn_ms, grace_ms,
                                                  exit_wait=exit_wait, started=1234.5)
        action = referee.start(self.now)
        while not isinstance(action, Done):
            self.log.append((round(self.now, 6), action))
            answer = self.perform(action)
            if action == self.interrupt_after or self.interrupt_at is not None and self.now >= self.interrupt_at:
                self.interrupt_at = self.interrupt_after = None
                action = referee.interrupt(self.now)
            else:
                action = referee.send(self.now, answer)
        self.record = action.record
        return action.record

    def perform(self, action):
        if isinstance(action, Send):
            if action.player in self.gone:
                return Ended()
            turn = self.inputs[action.player] = self.inputs.get(action.player, -1) + 1
            actions = action.text.splitlines()[2:]
            script = self.scripts.get(action.player, lambda turn, actions: [(0.01, actions[0] + "\n")])
            queue = self.pending.setdefault(action.player, [])
            queue.extend((self.now + delay, what) for delay, what in script(turn, actions))
            queue.sort(key=lambda item: item[0])
            return None
        if isinstance(action, Await):
            return self.wait(action.player, action.until)
        if isinstance(action, AskExit):
            return self.exits.get(action.player, "exited with code 0")
        if isinstance(action, Finish):
            return "did not exit (killed)" if action.player in self.kept else None
        return None

    def wait(self, player, until):
        """What the shell's wait for ``player``'s next line gives, and when."""
        until += self.woke_late
        if self.interrupt_at is not None:
            until = min(until, max(self.now, self.interrupt_at))
        queue = self.pending.get(player, [])
        if queue and queue[0][0] <= until and queue[0][1] is not ENDLESS:
            at, what = queue.pop(0)
            self.now = max(self.now, at)
            if what is EXIT:
                self.gone.add(player)
                return Ended()
            return Line(at, what)
        self.now = max(self.now, until)             # nothing in time: it is asked at the deadline
        return Endless(WHY) if queue and queue[0][1] is ENDLESS and queue[0][0] <= until else TimedOut()

    def actions(self, kind) -> list[tuple[float, object]]:
        return [(at, action) for at, action in self.log if isinstance(action, kind)]


def then(turn: int, what):
    """A script: the first valid action 10 ms after each input, but ``what`` at input ``turn``."""
    def script(at, actions):
        return what if at == turn else [(0.01, actions[0] + "\n")]
    return script


def opens_at_centre(at, actions):
    """B's script in the verdict table: the centre first (A must answer in board 4), then the first."""
    return [(0.01, "4 4\n" if at == 0 else actions[0] + "\n")]


# -- each turn's input and limit ------------------------------------------------------------------

def test_each_input_is_sent_then_awaited_until_its_limit_the_first_turn_of_each_longer():
    run = Virtual()
    record = run.play()
    sends, awaits = run.actions(Send), run.actions(Await)
    assert sends[0][1].player == "A" and sends[0][1].text.startswith("-1 -1\n81\n0 0\n0 1\n")
    assert [action.player for _, action in sends[:4]] == ["A", "B", "A", "B"]
    # 1000 ms for each one's first turn, 100 ms after, 5 ms of grace on top; from the input on.
    limits = [round(await_.until - at, 6) for (at, _), (_, await_) in zip(sends, awaits)]
    assert limits[:5] == [1.005, 1.005, 0.105, 0.105, 0.105]
    # Each input says the opponent's last move, then the valid actions.
    first = record["moves"][0]
    assert sends[1][1].text.startswith(f"{first['row']} {first['col']}\n")
    assert all(move["ms"] == 10.0 for move in record["moves"])


@pytest.mark.parametrize("delay, in_time", [
    (0.5, True),                    # 0.5 s: too slow for a 100 ms turn, in time for the first
    (1.004999, True),               # within the grace
    (1.005001, False),              # past it
])
def test_the_first_turn_is_longer(delay, in_time):
    run = Virtual({"A": then(0, [(delay, "4 4\n")])})
    record = run.play()
    if in_time:
        assert record["moves"][0] == {"player": "A", "row": 4, "col": 4, "board": 4, "spot": 4,
                                      "ms": round(delay * 1000, 2)}
    else:
        assert (record["reason"], record["loser"], record["moves"]) == (TIME_OUT, "A", [])


# -- verdicts ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("prints, reason, bad_line, late_ms, note", [
    ([(0.01, "3 3\n")], None, None, None, None),                       # board 4's first cell
    ([(0.01, "3 3 a message\n")], None, None, None, None),             # words after row col
    ([(0.01, "3 3\r\n")], None, None, None, None),
    ([(0.01, "3 3")], None, None, None, None),                         # its last line, no newline
    ([(0.01, "hello\n")], INVALID_MOVE, "hello", None, None),
    ([(0.01, "0 0\n")], INVALID_MOVE, "0 0", None, None),              # not in board 4, where 4 4 sends A
    ([(0.01, "4 4\n")], INVALID_MOVE, "4 4", None, None),              # taken
    ([(0.01, "9 0\n")], INVALID_MOVE, "9 0", None, None),
    ([(0.01, "\n"), (0.02, "3 3\n")], INVALID_MOVE, "", None, None),   # a blank line is its answer
    ([(0.104, "3 3\n")], None, None, None, None),                      # within the grace
    ([(0.106, "3 3\n")], TIME_OUT, None, 106.0, None),                 # past it: how late is recorded
    ([(0.5, "3 3\n")], TIME_OUT, None, 500.0, None),
    ([(1.1, "3 3\n")], TIME_OUT, None, 1100.0, None),                  # the late wait is a second
    ([(1.2, "3 3\n")], TIME_OUT, None, None, None),                    # after it: not known
    ([], TIME_OUT, None, None, None),                                  # never answers
    ([(0.02, EXIT)], CRASHED, None, None, "crashed (exited with code 3)"),
    ([(0.02, ENDLESS)], TIME_OUT, None, None, f"printed {WHY} (its stdout was read no further)"),
], ids=["move", "message", "crlf", "no-newline", "garbage", "wrong-board", "taken", "row-9", "blank",
        "grace", "just-late", "late", "late-wait", "too-late", "silent", "exit", "endless"])
def test_what_a_program_prints_in_its_turn_is_judged(prints, reason, bad_line, late_ms, note):
    # B moves first at the centre; A then answers as planned, 100 ms a turn.
    run = Virtual({"A": then(0, prints), "B": opens_at_centre}, exits={"A": "exited with code 3"})
    record = run.play(first_turn_ms=100.0, names=("B", "A"))
    if reason is None:
        assert record["moves"][1]["player"] == "A" and (record["moves"][1]["board"], record["moves"][1]["spot"]) == (4, 0)
        assert record["reason"] not in (INVALID_MOVE, TIME_OUT, CRASHED)
        return
    assert (record["result"], record["winner"], record["loser"], record["reason"]) == ("win", "B", "A", reason)
    assert (record["bad_line"], record["late_ms"], record["notes"].get("A"), record["notes"].get("B")) == \
        (bad_line, late_ms, note, None)
    assert len(record["moves"]) == 1
    # Both closed at the end, in order, after everything else.
    assert [action for _, action in run.log[-2:]] == [Finish("B", 2.0), Finish("A", 2.0)]


def test_a_time_out_waits_for_the_late_answer_only_to_say_how_late():
    run = Virtual({"A": then(0, [(0.9, "4 4\n")])})
    record = run.play(turn_ms=100.0, first_turn_ms=100.0)
    (_, first), (at, late) = run.actions(Await)
    assert first == Await("A", 0.105) and at == 0.105      # the verdict came at the limit
    assert late.player == "A" and late.until == pytest.approx(0.105 + LATE_WAIT)
    assert (record["reason"], record["late_ms"]) == (TIME_OUT, 900.0)


def test_a_line_that_came_after_the_limit_is_late_though_the_referee_woke_later_still():
    run = Virtual({"A": then(0, [(0.12, "4 4\n")])}, woke_late=0.05)
    record = run.play(turn_ms=100.0, first_turn_ms=100.0)
    assert (record["reason"], record["late_ms"], record["moves"]) == (TIME_OUT, 120.0, [])
    assert len(run.actions(Await)) == 1             # its late answer is known: no late wait


def test_an_endless_line_is_a_time_out_without_a_late_wait():
    run = Virtual({"A": then(0, [(0.02, ENDLESS)])})
    run.play()
    assert [action for _, action in run.actions(Await)] == [Await("A", 1.005)]


def test_a_crash_asks_how_the_program_ended_then_closes_both():
    run = Virtual({"A": then(0, [(0.02, EXIT)])}, exits={"A": "exited with code 3"})
    record = run.play()
    assert [action for _, action in run.log[-3:]] == [AskExit("A", EXIT_NOTE_WAIT), Finish("A", 2.0),
                                                     Finish("B", 2.0)]
    assert (record["reason"], record["notes"]) == (CRASHED, {"A": "crashed (exited with code 3)"})


def test_a_program_gone_before_its_input_crashes_at_the_send():
    run = Virtual(exits={"B": "could not start"})
    run.gone.add("B")
    record = run.play()
    assert (record["reason"], record["loser"], record["notes"]) == (CRASHED, "B", {"B": "crashed (could not start)"})
    assert not any(action.player == "B" for _, action in run.actions(Await))


def test_a_second_line_answers_the_next_turn_when_it_was_printed():
    # A prints its move twice: the second line is read as its answer to the next turn, at once,
    # and is invalid there.
    run = Virtual({"A": then(0, [(0.01, "0 0\n"), (0.011, "0 0\n")]), "B": lambda at, actions: [(0.01, "0 1\n")]})
    record = run.play()
    assert [(m["player"], m["row"], m["col"], m["ms"]) for m in record["moves"]] == [("A", 0, 0, 10.0), ("B", 0, 1, 10.0)]
    assert (record["reason"], record["loser"], record["bad_line"]) == (INVALID_MOVE, "A", "0 0")
    (sent, _), (judged, _) = run.actions(Send)[2], run.actions(Finish)[0]
    assert judged == sent                           # read at once: it was there before its input


# -- the end on the board -----------------------------------------------------------------------------

def cells_script(cells):
    return lambda at, actions: [(0.01, "{} {}\n".format(*to_cell(*divmod(cells[at], 9))))]


def test_more_boards_won_wins_with_no_line():
    run = Virtual({"A": cells_script(COUNT_WIN_GAME[0::2]), "B": cells_script(COUNT_WIN_GAME[1::2])})
    record = run.play()
    assert (record["result"], record["winner"], record["loser"], record["reason"]) == ("win", "B", "A", COUNT_WIN)
    assert record["boards"]["B"] > record["boards"]["A"] and len(record["moves"]) == len(COUNT_WIN_GAME)


@pytest.mark.parametrize("seed", range(30))
def test_random_games_end_on_the_board_as_the_rules_say(seed):
    rng = random.Random(seed)
    run = Virtual({name: lambda at, actions: [(rng.random() / 20, rng.choice(actions) + "\n")] for name in "AB"})
    record = run.play()
    game = run.referee.game
    assert game.result is not None and len(record["moves"]) == len(game.moves)
    assert [m["player"] for m in record["moves"]] == ["AB"[i % 2] for i in range(len(game.moves))]
    results = game.local_results()
    assert record["boards"] == {"A": results.count(0), "B": results.count(1)}
    if game.result == TIE:
        assert (record["result"], record["reason"], record["winner"]) == ("tie", "tie", None)
    else:
        lined = line_winner([r if r in (0, 1) else None for r in results]) is not None
        assert (record["result"], record["winner"], record["reason"]) == \
            ("win", "AB"[game.result], LINE_WIN if lined else COUNT_WIN)
    assert record["slowest_ms"] == {name: max(m["ms"] for m in record["moves"] if m["player"] == name)
                                    for name in "AB"}
    shows = [action.text for _, action in run.actions(Show)]
    assert len(shows) == len(game.moves) and shows[-1].endswith(game.render() + "\n")
    assert shows[0].startswith(f"Move 1: A {record['moves'][0]['row']} {record['moves'][0]['col']} (")


def test_the_record_says_the_game_and_its_times():
    run = Virtual({"A": then(0, [(0.02, "hello\n")])}, kept={"B"})
    record = run.play(turn_ms=50.0, first_turn_ms=500.0, grace_ms=1.0, exit_wait=3.0)
    assert {key: record[key] for key in ("rules", "turn_ms", "first_turn_ms", "grace_ms", "names", "p1", "p2",
                                         "started", "duration")} == \
        {"rules": "codingame", "turn_ms": 50.0, "first_turn_ms": 500.0, "grace_ms": 1.0, "names": ["A", "B"],
         "p1": "A", "p2": "B", "started": 1234.5, "duration": 0.02}
    assert [action for _, action in run.log[-2:]] == [Finish("A", 3.0), Finish("B", 3.0)]
    assert record["notes"] == {"B": "did not exit (killed)"}      # the winner's, noted
    assert record["slowest_ms"] == {"A": 0.0, "B": 0.0}
    line = GameLine(game=1, **record)      # the games.jsonl line the series makes of it
    assert codingame_shell.describe(line).startswith("A (X) vs B (O): B wins: Invalid move! ('hello') [0 moves")


def test_a_crash_note_is_not_replaced_by_the_closing_one():
    run = Virtual({"A": then(0, [(0.02, EXIT)])}, kept={"A"})
    record = run.play()
    assert record["notes"] == {"A": "crashed (exited with code 0)"}


# -- a stop -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("at, result, reason, closed", [
    (0.005, "aborted", STOPPED, False),         # while A thinks: no verdict, no closing
    (0.5, "win", TIME_OUT, False),              # in the late wait after A's time-out: it stands
])
def test_a_stop_aborts_a_game_without_its_verdict_and_keeps_one_with_it(at, result, reason, closed):
    run = Virtual({"A": then(0, [(0.7, "4 4\n")])}, interrupt_at=at)
    record = run.play(turn_ms=100.0, first_turn_ms=100.0)
    assert (record["result"], record["reason"]) == (result, reason)
    assert record["late_ms"] is None and record["notes"] == {}
    assert bool(run.actions(Finish)) is closed
    assert record["duration"] == at


@pytest.mark.parametrize("last", ["show", "finish"])
def test_a_stop_after_the_last_move_keeps_the_result_and_closes_no_more(last):
    probe = Virtual()
    probe.play()
    stop_after = probe.actions(Show)[-1][1] if last == "show" else Finish("A", 2.0)
    run = Virtual(interrupt_after=stop_after)
    record = run.play()
    assert (record["result"], record["winner"], record["reason"]) == \
        (probe.record["result"], probe.record["winner"], probe.record["reason"])
    assert [action for _, action in run.actions(Finish)] == ([] if last == "show" else [Finish("A", 2.0)])


# -- the shell: the machine's actions on programs ------------------------------------------------------

class Scripted:
    """A :class:`ref_sim.referees.codingame_shell.Program` as the shell sees it, answering from ``said``
    at once: ``(at, line)``, ``(at, None)`` (its output ended), None (nothing in time)."""

    def __init__(self, name, said, endless=None, broken=False):
        self.name, self.said, self.endless, self.broken = name, list(said), endless, broken
        self.sent, self.closed = [], None

    def send(self, text):
        if self.broken:
            raise BrokenPipeError("gone")
        self.sent.append(text)

    def answer(self, timeout, stop=None):
        return self.said.pop(0) if self.said else None

    def exit_note(self, wait):
        return "exited with code 3"

    def finish(self, wait):
        self.closed = wait
        return None


def shell_game(a, b, **options):
    return codingame_shell.referee_game({"A": a, "B": b}, ["A", "B"], 100.0, 60000.0, 5.0, exit_wait=1.5, **options)


@pytest.mark.parametrize("said, endless, broken, reason, note", [
    ([None], None, False, TIME_OUT, None),
    ([None], WHY, False, TIME_OUT, f"printed {WHY} (its stdout was read no further)"),
    ([(0.0, None)], None, False, CRASHED, "crashed (exited with code 3)"),
    ([], None, True, CRASHED, "crashed (exited with code 3)"),
    (["hello\n"], None, False, INVALID_MOVE, None),
])
def test_the_shell_hands_the_machine_what_the_programs_did(said, endless, broken, reason, note):
    said = [(time.perf_counter(), item) if isinstance(item, str) else item for item in said]
    a, b = Scripted("A", said, endless, broken), Scripted("B", [])
    record = shell_game(a, b)
    assert (record["reason"], record["loser"], record["notes"].get("A")) == (reason, "A", note)
    assert a.sent == ([] if broken else [codingame_shell.turn_input(Game(CODINGAME))])
    assert (a.closed, b.closed) == (1.5, 1.5)


def test_the_shell_shows_each_move_and_a_stop_closes_nothing():
    shown, stop = [], threading.Event()
    a = Scripted("A", [(time.perf_counter(), "4 4\n")])
    b = Scripted("B", [])
    b.answer = lambda timeout, stop_=None: stop.set()       # the series stops while B thinks
    record = shell_game(a, b, show=shown.append, stop=stop)
    assert (record["result"], record["reason"], len(record["moves"])) == ("aborted", STOPPED, 1)
    assert shown[0].startswith("Move 1: A 4 4 (") and (a.closed, b.closed) == (None, None)


def test_the_shell_calls_the_programs_hooks_so_a_series_measures_the_turn_lost_on_time():
    # ref_sim.series.codingame_games hooks each program's send and answer (turn_share.watch).
    now = [0.0]
    meter = turn_share.TurnMeter({"A": "A", "B": "B"}, clock=lambda: now[0], enabled=True,
                                 read=lambda name: {1: (int(0.2e9 * now[0]), int(0.7e9 * now[0]))})
    a, b = Scripted("A", [None]), Scripted("B", [])
    real = a.answer

    def answer(timeout, stop=None):
        now[0] += 0.1
        return real(timeout, stop)
    a.answer = answer
    for program in (a, b):
        turn_share.watch(meter, program)
    record = shell_game(a, b)
    keys = meter.keys(record["reason"], record["loser"])
    assert keys["machine_timeout"]["A"] == {"cpu": 0.2, "waited": 0.7, "seconds": 0.1}
