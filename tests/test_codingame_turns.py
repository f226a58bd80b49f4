"""The CodinGame protocol's decisions (agent/codingame_turns.py), case by case, without streams,
threads or clocks: each row is what the referee sent (and the times, as numbers) and what the
decider must answer."""

from __future__ import annotations

import logging

import pytest

from agent.codingame_turns import (
    WAITING_ALREADY_S,
    BadInput,
    CodinGameDecider,
    TurnLines,
    cell_text,
    cell_to_index,
)
from agent.exits import EXIT_FINISHED, EXIT_INPUT_ENDED
from agent.rules import CODINGAME, Position

#: A codingame-variant game after which O (to move) has a reply that ends it (test_codingame's).
COUNT_WIN_GAME = [19, 13, 37, 15, 56, 18, 6, 61, 64, 9, 2, 22, 44, 79, 70, 65, 21, 32, 50, 51, 58, 36,
                  7, 69, 59, 48, 28, 11, 26, 75, 27, 1, 23, 45, 3, 31, 43, 67, 40, 78, 57, 30, 74, 20,
                  24, 25, 8]

EOF = object()  # the input ends here
TIME_UP = object()  # the next line has not come when the turn's time is up


def decider(moves=(), turns=0, lost=False, turn_ms=100.0, first_turn_ms=1000.0, margin_ms=20.0) -> CodinGameDecider:
    made = CodinGameDecider(turn_ms=turn_ms, first_turn_ms=first_turn_ms, margin_ms=margin_ms,
                            position=Position.from_moves(list(moves), CODINGAME))
    made.turns = turns
    if lost:
        made.position = None
    return made


def cells_of(indices) -> list[str]:
    return [cell_text(index) + "\n" for index in indices]


def legal_after(moves) -> list[int]:
    return sorted(Position.from_moves(list(moves), CODINGAME).legal_moves())


# -- a turn's lines ----------------------------------------------------------------------------------


def read(lines):
    """Feed ``lines`` (EOF / TIME_UP markers included) as the agent does: ``(opponent, actions)``
    of a complete turn, or the BadInput message. A line after a complete turn is extra input."""
    lines = list(lines)
    try:
        turn = TurnLines(lines.pop(0))
        for line in lines:
            if turn.wanted is None:
                raise turn.extra(line)
            if line is EOF:
                raise turn.ended()
            if line is TIME_UP:
                raise turn.timed_out()
            turn.add(line)
        if turn.wanted is not None:
            raise AssertionError("the row gives too few lines")
    except BadInput as error:
        return str(error)
    return turn.opponent, turn.actions


@pytest.mark.parametrize("lines, expected", [
    (["-1 -1\n", "2\n", "0 0\n", "8 8\n"], (None, [0, 80])),
    (["4 4\n", "1\n", "3 3\n"], (40, [36])),
    ([" 4   5 \r\n", " 1\n", "\t0  1\n"], (41, [1])),                       # spaces and CRLF are fine
    (["-1 -1\n"] + ["81\n"] + [f"{r} {c}\n" for r in range(9) for c in range(9)], (None, None)),
    (["a b\n"], "opponent move: expected 'row col', got 'a b'"),
    (["4\n"], "opponent move: expected 'row col', got '4'"),
    (["1 2 3\n"], "opponent move: expected 'row col'"),
    (["9 0\n"], "opponent move: row and col must be 0-8 (or -1 -1), got '9 0'"),
    (["-1 4\n"], "opponent move: row and col must be 0-8 (or -1 -1), got '-1 4'"),
    (["-1 -1\n", "many\n"], "valid-action count: expected an integer, got 'many'"),
    (["-1 -1\n", "0\n"], "valid-action count must be 1-81, got '0'"),
    (["-1 -1\n", "82\n"], "valid-action count must be 1-81, got '82'"),
    (["-1 -1\n", "9" * 4000 + "\n"], "valid-action count must be 1-81, got '9999"),
    (["-1 -1\n", "2\n", "0 0\n", "0\n"], "valid action 2 of 2: expected 'row col', got '0'"),
    (["-1 -1\n", "2\n", "0 0\n", "-1 -1\n"], "valid action 2 of 2: row and col must be 0-8, got '-1 -1'"),
    (["-1 -1\n", "2\n", "0 0\n", "0 0\n"], "valid action 2 of 2: '0 0' is listed twice"),
    (["-1 -1\n", EOF], "input ended inside a turn, before the valid-action count"),
    (["-1 -1\n", "3\n", "0 0\n", "0 1\n", EOF], "input ended inside a turn, before valid action 3 of 3"),
    (["-1 -1\n", "3\n", "0 0\n", TIME_UP], "valid action 2 of 3 did not arrive within the turn's time"),
    (["-1 -1\n", TIME_UP], "the valid-action count did not arrive within the turn's time"),
    (["-1 -1\n", "2\n", "0 0\n", "0 1\n", "0 2\n"], "more input than the 2 announced valid actions: '0 2'"),
    (["x" * 5000 + "\n"], "opponent move: expected 'row col', got 'xxxx"),
], ids=["first", "opponent", "spaces", "all-81", "letters", "one-number", "three-numbers", "row-9",
        "minus-one-col", "count-word", "count-0", "count-82", "count-4000-digits", "action-short",
        "action-minus-one", "action-twice", "eof-before-count", "eof-inside", "time-up-inside",
        "time-up-before-count", "extra-line", "huge-line"])
def test_a_turns_lines(lines, expected):
    got = read(lines)
    if isinstance(expected, str):
        assert isinstance(got, str) and got.startswith(expected), got
        assert len(got) < 200  # copies of bad input are cut
    elif expected[1] is None:  # every cell, in the referee's order
        assert got == (None, [cell_to_index(r, c) for r in range(9) for c in range(9)])
    else:
        assert got == expected


# -- the clock ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("turns, arrived, ready_at, launched, kept_back, expected", [
    # (started, deadline, read deadline, waited)
    (0, 10.0, 9.0, 8.0, 0.0, (10.0, 10.9, 11.0, None)),          # first turn: 1000 ms less a tenth
    (0, 10.0, 10.0 - WAITING_ALREADY_S / 2, 8.0, 0.0, (8.0, 8.9, 11.0, 2.0)),   # was waiting: from launch
    (0, 10.0, 10.0 - WAITING_ALREADY_S / 2, None, 0.0, (10.0, 10.9, 11.0, None)),  # launch unknown
    (0, 10.0, 10.0 - WAITING_ALREADY_S / 2, 10.5, 0.0, (10.0, 10.9, 11.0, 0.0)),   # launch stamped after it
    (1, 10.0, 10.0 - WAITING_ALREADY_S / 2, 8.0, 0.0, (10.0, 10.08, 10.1, None)),  # later turns: from arrival
    (5, 10.0, 0.0, 8.0, 0.045, (10.0, 10.035, 10.1, None)),       # a 45 ms pause kept back
    (5, 10.0, 0.0, 8.0, 0.090, (10.0, 10.025, 10.1, None)),       # never under a quarter of the limit
    (0, 10.0, 9.0, 8.0, 0.200, (10.0, 10.7, 11.0, None)),         # the first turn keeps pauses back too
], ids=["first", "first-waiting", "first-waiting-no-launch", "launch-after-arrival", "second-waiting",
        "pause-kept", "pause-floor", "first-with-pause"])
def test_a_turns_clock(turns, arrived, ready_at, launched, kept_back, expected):
    clock = decider(turns=turns).clock(arrived, ready_at=ready_at, launched=launched, kept_back=kept_back)
    started, deadline, read_deadline, waited = expected
    assert clock.started == pytest.approx(started)
    assert clock.deadline == pytest.approx(deadline)
    assert clock.read_deadline == pytest.approx(read_deadline)
    assert clock.waited == (None if waited is None else pytest.approx(waited))


@pytest.mark.parametrize("turns, turn_ms, first_turn_ms, margin_ms, kept_back, budget", [
    (0, 100, 1000, 20, 0.0, 0.900),     # the first turn keeps a tenth of its limit back
    (1, 100, 1000, 20, 0.0, 0.080),
    (1, 100, 1000, 5, 0.0, 0.090),      # a tenth of the limit at least
    (1, 100, 1000, 20, 0.045, 0.035),
    (1, 100, 1000, 20, 0.090, 0.025),
    (3, 50, 1000, 20, 0.0, 0.030),
], ids=["first", "later", "margin-floor", "kept-back", "quarter-floor", "50-ms"])
def test_the_budget(turns, turn_ms, first_turn_ms, margin_ms, kept_back, budget):
    made = decider(turns=turns, turn_ms=turn_ms, first_turn_ms=first_turn_ms, margin_ms=margin_ms)
    assert made.budget(kept_back) == pytest.approx(budget)


# -- the opponent's move -----------------------------------------------------------------------------


@pytest.mark.parametrize("moves, turns, lost, opponent, after, words", [
    ([], 0, False, None, [], None),                              # -1 -1: we move first
    ([], 0, False, 40, [40], None),                              # the opponent opened in the centre
    ([40, 36], 1, False, 4, [40, 36, 4], None),                  # a legal reply is played
    ([40, 36], 1, False, None, None, "opponent move -1 -1 after the first turn"),
    ([40], 1, False, None, None, "-1 -1 after the first turn"),   # -1 -1 again after we moved first
    ([40, 36], 1, False, 40, None, "opponent move 4 4 is illegal in my position"),
    ([40, 36], 1, True, 4, None, None),                           # position already lost: nothing to say
], ids=["we-start", "they-start", "reply", "minus-one-later", "minus-one-after-our-first", "illegal",
        "already-lost"])
def test_the_opponents_move(moves, turns, lost, opponent, after, words):
    made = decider(moves, turns, lost)
    note = made.follow_opponent(opponent)
    if words is None:
        assert note is None
    else:
        assert note.level == logging.WARNING and words in note.message and "lose track" in note.message
    assert (None if made.position is None else made.position.moves_played()) == after


# -- which move answers ------------------------------------------------------------------------------


OURS_AFTER_40 = legal_after([40])  # board 4: the eight cells around the centre


@pytest.mark.parametrize("moves, lost, actions, engine_move, search, move, note, engine, words", [
    # the list is our legal moves: the engine's move
    ([40], False, OURS_AFTER_40, OURS_AFTER_40[2], True, OURS_AFTER_40[2], "", True, None),
    # the list is one of ours: the engine's move if listed, else the first listed legal for us
    ([40], False, [OURS_AFTER_40[3]], OURS_AFTER_40[3], True, OURS_AFTER_40[3],
     "  (my move, listed by the referee)", True, "only theirs: none; only mine: "),
    ([40], False, [OURS_AFTER_40[3]], OURS_AFTER_40[0], True, OURS_AFTER_40[3],
     "  (first listed action legal for me)", False, "differ from my 8 legal moves"),
    # a listed illegal move first, then one of ours: ours
    ([40], False, [0, OURS_AFTER_40[5]], OURS_AFTER_40[0], True, OURS_AFTER_40[5],
     "  (first listed action legal for me)", False, "only theirs: 0 0"),
    # nothing listed is legal for us: the first listed
    ([40], False, [0, 1], OURS_AFTER_40[0], True, 0, "  (first listed action)", False, "only theirs: 0 0, 0 1"),
    # no position: the first listed, no search
    ([40], True, [7, 3], None, False, 7, "  (first listed action: position unknown)", False, None),
    # the game is over by our rules and the referee still lists moves: the first listed, no search
    (COUNT_WIN_GAME + [72], False, [5], None, False, 5, "  (first listed action: position unknown)", False, None),
], ids=["agree", "differ-engine-listed", "differ-first-legal", "differ-skip-illegal", "differ-none-legal",
        "position-lost", "game-over"])
def test_which_move_answers(moves, lost, actions, engine_move, search, move, note, engine, words):
    made = decider(moves, turns=1, lost=lost)
    plan = made.plan(actions)
    assert plan.search == search
    if words is None:
        assert plan.warning is None
    else:
        assert plan.warning.level == logging.WARNING and words in plan.warning.message
        assert "playing from its list" in plan.warning.message
    pick = made.pick(plan, actions, engine_move if search else None)
    assert (pick.move, pick.note, pick.engine) == (move, note, engine)


@pytest.mark.parametrize("moves, lost, move, after, words", [
    ([40], False, 36, [40, 36], None),
    ([40], False, 0, None, "my move 0 0 is illegal in my position; I lose track of it"),
    ([40], True, 0, None, None),
], ids=["legal", "illegal", "position-lost"])
def test_our_move_is_played_on_our_position(moves, lost, move, after, words):
    made = decider(moves, turns=1, lost=lost)
    note = made.answered(move)
    assert made.turns == 2
    assert (None if made.position is None else made.position.moves_played()) == after
    assert (None if note is None else note.message) == words


def test_a_move_that_ends_the_game_is_said():
    made = decider(COUNT_WIN_GAME, turns=1)
    assert made.game_over() is None
    made.answered(72)
    note = made.game_over()
    assert note.level == logging.INFO and note.message.startswith("game over by my rules after my move: O wins")


# -- input ending between turns ----------------------------------------------------------------------


@pytest.mark.parametrize("moves, turns, lost, code, level, words", [
    ([], 0, False, EXIT_INPUT_ENDED, logging.WARNING, "input ended before the first turn; exiting (code 3)"),
    ([40, 36], 1, True, EXIT_INPUT_ENDED, logging.WARNING, "input ended; I had lost track of the position (code 3)"),
    (COUNT_WIN_GAME + [72], 24, False, EXIT_FINISHED, logging.INFO, "input ended: game over (O wins"),
    (COUNT_WIN_GAME, 24, False, EXIT_FINISHED, logging.INFO, "input ended: the game is over for the referee"),
    (COUNT_WIN_GAME[:20], 10, False, EXIT_INPUT_ENDED, logging.WARNING,
     "input ended although no opponent reply can end the game"),
], ids=["before-first-turn", "position-lost", "over-by-our-rules", "a-reply-can-end-it", "early-end"])
def test_input_ending_between_turns(moves, turns, lost, code, level, words):
    ending = decider(moves, turns, lost).input_ended()
    assert (ending.code, ending.note.level) == (code, level)
    assert ending.note.message.startswith(words), ending.note.message
