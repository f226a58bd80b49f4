"""The file protocol's decisions (agent/file_turns.py), case by case, without files, threads or clocks.

Each case is a short story: the looks the agent takes at the referee's directory, in order, and
what the decider must answer to each. ``Dir`` builds a look the way the files would show it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

import pytest

from agent.referee_files import FileLines
from agent.rules import Move, Position, parse_move_line
from agent.clock import OUT_OF_TURN_WAIT
from agent.file_turns import (
    Abort,
    Finish,
    Look,
    Play,
    Seen,
    TurnDecider,
    Wait,
)

ME, OPP = "Walrus", "Otter"
OPENING_ME_FIRST = [f"{ME} 6 2", f"{OPP} 2 4", f"{ME} 4 5", f"{OPP} 5 8"]
OPENING_OPP_FIRST = [f"{OPP} 6 2", f"{ME} 2 4", f"{OPP} 4 5", f"{ME} 5 8"]
T0 = 1_700_000_000.25  # first_four_moves' mtime: a fine-grained timestamp
LIMIT = 2.0


def text_of(lines) -> str:
    return "".join(line + "\n" for line in lines)


def seen(ino: int, mtime: float, text: str | None = None, undecodable: bool = False) -> Seen:
    mtime_ns = round(mtime * 1e9)
    return Seen((1, ino, mtime_ns, len(text or "")), mtime_ns, text, undecodable)


@dataclass
class Dir:
    """The referee's directory at one moment, and the clocks of the look that sees it."""

    opening: Seen | None = None
    move: Seen | None = None
    end: Seen | None = None
    go: Seen | None = None
    now: float = 0.0
    go_removed: bool = False
    directory_gone: bool = False

    def look(self) -> Look:
        # A look reads move_file and the opening only while my .go exists, end_game whenever it does.
        strip = (lambda s: None if s is None else replace(s, text=None)) if self.go is None else (lambda s: s)
        return Look(opening=strip(self.opening), move=strip(self.move), end=self.end, go=self.go,
                    now=self.now, wall=T0 + self.now, go_removed=self.go_removed,
                    directory_gone=self.directory_gone)


def fresh_game(opening=OPENING_ME_FIRST) -> Dir:
    """A game just started: the opening written, move_file empty, no .go yet."""
    return Dir(opening=seen(10, T0, text_of(opening)), move=seen(11, T0 - 0.001, ""))


def decider(**options) -> TurnDecider:
    options = {"time_limit": LIMIT, "grace": 2.0, "silence": 30.0, "encoding": "utf-8", **options}
    return TurnDecider(ME, **options)


def started(directory: Dir, **options) -> TurnDecider:
    turns = decider(**options)
    turns.start(directory.look())
    turns.take_notes()
    return turns


def my_go(directory: Dir, at: float, ino: int = 20) -> None:
    directory.go = seen(ino, T0 + at)
    directory.now = at


def move_line(directory: Dir, line: str, at: float, ino: int = 30) -> None:
    directory.move = seen(ino, T0 + at, line + "\n")
    directory.now = at


def write_mine(turns: TurnDecider, directory: Dir, play: Play, at: float) -> str:
    """Do what the agent does with a Play: write the first legal move and tell the decider."""
    move = Move.from_index(turns.game.position.legal_moves()[0])
    line = f"{ME} {move}"
    move_line(directory, line, at, ino=40)
    turns.wrote(line, play.go, move, T0 + at)
    return line


def legal_reply(turns: TurnDecider) -> str:
    position = turns.game.position
    return f"{OPP} {Move.from_index(position.legal_moves()[-1])}"


def notes_text(turns: TurnDecider) -> str:
    return "\n".join(note.message for note in turns.take_notes())


# -- a normal game ---------------------------------------------------------------------------------


def test_p1_plays_move_5_on_its_first_go_and_only_once():
    directory = fresh_game()
    turns = started(directory)
    assert turns.decide(directory.look()) == Wait()  # no .go yet
    my_go(directory, 0.3)
    play = turns.decide(directory.look())
    assert play == Play(directory.go)
    assert "game joined: I am Walrus (p1) against Otter" in notes_text(turns)
    write_mine(turns, directory, play, 1.0)
    # My .go lingers until the referee's next tick: my own line is not a turn (docs/protocol.md,
    # "What a bot must survive", row "Your own .go is still there").
    directory.now = 1.01
    assert turns.decide(directory.look()) == Wait()
    assert turns.game.moves == 1


def test_the_next_turn_needs_a_go_created_after_my_write():
    directory = fresh_game()
    turns = started(directory)
    my_go(directory, 0.3)
    write_mine(turns, directory, turns.decide(directory.look()), 1.0)
    reply = legal_reply(turns)
    # The referee read my move, deleted my .go, the opponent answered, my new .go came (same inode:
    # inode numbers are reused at once, but a later mtime).
    move_line(directory, reply, 1.1)
    my_go(directory, 1.15, ino=20)
    play = turns.decide(directory.look())
    assert play == Play(directory.go)
    assert turns.game.position.moves_played()[-1] == parse_move_line(reply)[1].index


def test_an_opponent_line_under_the_go_i_answered_is_out_of_turn():
    """Item 1: the opponent answers the instant my move appears, before its own .go: the referee
    calls that line (Out-of-order move!, my win); I must not answer it on the same .go."""
    directory = fresh_game()
    turns = started(directory)
    my_go(directory, 0.3)
    write_mine(turns, directory, turns.decide(directory.look()), 1.0)
    before = turns.game.position.moves_played()
    reply = legal_reply(turns)
    move_line(directory, reply, 1.001)  # my .go is the one I answered
    assert turns.decide(directory.look()) == Wait()
    assert "wrote out of turn; not answering it" in notes_text(turns)
    directory.now = 5.0  # however long it stands
    assert turns.decide(directory.look()) == Wait()
    assert turns.game.position.moves_played() == before and turns.error is None
    # The referee's verdict.
    directory.end = seen(50, T0 + 1.05, f"END: {ME} WINS! {OPP} LOSES! Out-of-order move!")
    assert turns.decide(directory.look()) == Finish(f"END: {ME} WINS! {OPP} LOSES! Out-of-order move!")


@pytest.mark.parametrize("evidence", ["seen-missing", "watcher-removed"])
def test_a_go_recreated_with_the_same_identity_is_new_if_it_was_seen_gone(evidence):
    """Whole-second timestamps and a reused inode: the re-created .go looks like the old one. A
    look that found it missing, or the watcher's removal event, says it is new."""
    directory = fresh_game()
    directory.opening = seen(10, 1_700_000_000.0, text_of(OPENING_ME_FIRST))
    directory.move = seen(11, 1_700_000_000.0, "")
    turns = started(directory)
    my_go(directory, 0.0)
    directory.go = seen(20, 1_700_000_000.0)
    play = turns.decide(directory.look())
    assert isinstance(play, Play)
    write_mine(turns, directory, play, 0.3)
    directory.move = seen(40, 1_700_000_000.0, directory.move.text)
    if evidence == "seen-missing":
        gone = replace(directory, go=None, now=0.35)
        assert turns.decide(gone.look()) == Wait()
    else:
        directory.go_removed = True
    directory.move = seen(41, 1_700_000_000.0, legal_reply(turns) + "\n")
    directory.now = 0.4
    assert isinstance(turns.decide(directory.look()), Play)


def test_on_whole_seconds_an_unanswered_line_that_no_end_follows_was_a_real_turn():
    """Item 6's last resort: no evidence at all that the .go was re-created (whole seconds, same
    inode, never seen missing): a line out of turn brings end_game within a tick or two; one that
    stands OUT_OF_TURN_WAIT without it came in a real turn."""
    stamp = 1_700_000_000.0
    directory = Dir(opening=seen(10, stamp, text_of(OPENING_ME_FIRST)), move=seen(11, stamp, ""))
    turns = started(directory)
    directory.go = seen(20, stamp)
    play = turns.decide(directory.look())
    write_mine(turns, directory, play, 0.2)
    directory.move = seen(41, stamp, legal_reply(turns) + "\n")
    directory.now = 0.3
    first = turns.decide(directory.look())
    assert isinstance(first, Wait) and first.again_in == pytest.approx(OUT_OF_TURN_WAIT, abs=0.01)
    directory.now = 0.3 + OUT_OF_TURN_WAIT / 2
    assert isinstance(turns.decide(directory.look()), Wait)
    directory.now = 0.3 + OUT_OF_TURN_WAIT
    assert isinstance(turns.decide(directory.look()), Play)


def test_p2_answers_p1s_first_move():
    directory = fresh_game(OPENING_OPP_FIRST)
    turns = started(directory)
    position = Position.from_moves(parse_move_line(line)[1] for line in OPENING_OPP_FIRST)
    reply = f"{OPP} {Move.from_index(position.legal_moves()[0])}"
    move_line(directory, reply, 0.8)
    my_go(directory, 0.85)
    assert isinstance(turns.decide(directory.look()), Play)
    assert turns.game.side == 1 and turns.game.answered == reply


def test_old_referee_x_o_opening_takes_the_side_from_move_file():
    tags = [f"{tag} {line.split(' ', 1)[1]}" for tag, line in zip("XOXO", OPENING_ME_FIRST)]
    directory = fresh_game(tags)
    turns = started(directory)
    my_go(directory, 0.3)
    assert isinstance(turns.decide(directory.look()), Play)
    assert turns.game.side == 0 and turns.game.opponent is None


# -- the end ---------------------------------------------------------------------------------------


def test_end_game_comes_before_everything_and_an_old_one_is_ignored():
    directory = fresh_game()
    directory.end = seen(50, T0 - 5, f"END: {OPP} WINS! {ME} LOSES! Time out!")  # an earlier game's
    turns = decider()
    turns.start(replace(directory, end=None).look())
    my_go(directory, 0.3)
    assert isinstance(turns.decide(directory.look()), Play)
    assert "ignoring an end_game older than first_four_moves" in notes_text(turns)
    directory.end = seen(51, T0 + 0.5, "END: Match TIED!")
    assert turns.decide(directory.look()) == Finish("END: Match TIED!")


def test_an_empty_end_game_is_looked_at_again_before_it_counts():
    directory = fresh_game()
    turns = started(directory)
    directory.end = seen(50, T0 + 1, "")
    directory.now = 1.0
    again = turns.decide(directory.look())
    assert isinstance(again, Wait) and again.again_in is not None
    directory.end = seen(50, T0 + 1, f"END: {ME} WINS! {OPP} LOSES! Time out!\n")
    assert turns.decide(directory.look()) == Finish(f"END: {ME} WINS! {OPP} LOSES! Time out!")
    still_empty = decider()
    still_empty.start(fresh_game().look())
    directory.end = seen(50, T0 + 1, "")
    still_empty.decide(directory.look())
    directory.now = 1.3
    assert still_empty.decide(directory.look()) == Finish("")


def test_a_game_that_ended_before_i_started_is_not_mine():
    directory = fresh_game()
    directory.end = seen(50, T0 + 5, f"END: {OPP} WINS! {ME} LOSES! Time out!")
    turns = decider()
    turns.start(directory.look())
    assert "ended before I started" in notes_text(turns)
    my_go(directory, 6.0)
    assert turns.decide(directory.look()) == Wait()
    new = fresh_game()
    new.opening = seen(12, T0 + 60, text_of(OPENING_ME_FIRST))
    my_go(new, 60.3)
    assert isinstance(turns.decide(new.look()), Play)


def test_a_time_out_before_my_limit_names_the_limit_mismatch():
    directory = fresh_game()
    turns = started(directory)
    my_go(directory, 0.3)
    turns.decide(directory.look())
    directory.end = seen(50, T0 + 0.8, f"END: {OPP} WINS! {ME} LOSES! Time out!")
    assert isinstance(turns.decide(directory.look()), Finish)
    assert "its limit is probably shorter than mine" in notes_text(turns)


# -- a game that goes away -------------------------------------------------------------------------


def test_files_missing_longer_than_the_grace_abort_a_joined_game():
    directory = fresh_game()
    turns = started(directory, grace=0.5)
    my_go(directory, 0.3)
    turns.decide(directory.look())
    gone = Dir(now=1.0)
    assert turns.decide(gone.look()) == Wait()
    gone.now = 1.4
    assert turns.decide(gone.look()) == Wait()
    gone.now = 1.6
    action = turns.decide(gone.look())
    assert isinstance(action, Abort) and "vanished" in action.message
    # Before any game is joined, missing files are only waited for.
    assert decider().decide(Dir(now=100.0).look()) == Wait()


def test_a_deleted_directory_ends_the_wait_for_a_game_after_the_silence():
    """Before any game: a directory made again may still get a referee, for ``silence`` s; then none can."""
    turns = started(Dir(), grace=0.5, silence=3.0)
    gone = Dir(now=1.0, directory_gone=True)
    assert turns.decide(gone.look()) == Wait()
    assert [note.level for note in turns.take_notes()] == [logging.WARNING]
    gone.now = 3.9
    assert turns.decide(gone.look()) == Wait()
    assert turns.take_notes() == []  # said once
    gone.now = 4.1
    action = turns.decide(gone.look())
    assert isinstance(action, Abort) and "deleted before any game" in action.message
    # Made again in time: the clock starts over.
    turns = started(Dir(), grace=0.5, silence=3.0)
    assert turns.decide(Dir(now=1.0, directory_gone=True).look()) == Wait()
    assert turns.decide(Dir(now=3.0).look()) == Wait()
    assert turns.decide(Dir(now=5.0, directory_gone=True).look()) == Wait()
    # With the silence off, the grace still ends it.
    turns = started(Dir(), grace=0.5, silence=0)
    assert turns.decide(Dir(now=1.0, directory_gone=True).look()) == Wait()
    assert isinstance(turns.decide(Dir(now=1.6, directory_gone=True).look()), Abort)


def test_a_directory_deleted_during_the_game_aborts_it_after_the_grace():
    directory = fresh_game()
    turns = started(directory, grace=0.5, silence=30.0)
    my_go(directory, 0.3)
    write_mine(turns, directory, turns.decide(directory.look()), 0.3)
    gone = Dir(now=1.0, directory_gone=True)
    assert turns.decide(gone.look()) == Wait()
    gone.now = 1.6
    action = turns.decide(gone.look())
    assert isinstance(action, Abort) and "deleted during my game" in action.message


def test_a_move_file_that_cannot_be_read_is_waited_on_with_one_note_per_version():
    directory = fresh_game(OPENING_OPP_FIRST)
    turns = started(directory)
    my_go(directory, 0.3)
    directory.move = Seen((1, 30, 1, 4096), 1, lines=FileLines(unreadable="a directory"))
    assert turns.decide(directory.look()) == Wait()
    directory.now = 0.5
    assert turns.decide(directory.look()) == Wait()
    notes = turns.take_notes()
    assert len(notes) == 2 and notes[0].key == notes[1].key  # the agent logs each key once
    assert "cannot read move_file (a directory)" in notes[0].message
    directory.move = Seen((1, 31, 2, 0), 2, lines=FileLines(unreadable="a FIFO (named pipe)"))
    assert turns.decide(directory.look()) == Wait()
    assert turns.take_notes()[0].key != notes[0].key  # another version: said again
    line = f"{OPP} 8 0"
    directory.move = seen(32, T0 + 0.2, line + "\n")
    assert isinstance(turns.decide(directory.look()), Play)


def test_a_silent_game_is_aborted_but_a_leftover_at_start_up_is_not():
    turns = started(Dir(), silence=1.0)  # started before the referee
    directory = fresh_game()
    my_go(directory, 0.3)
    write_mine(turns, directory, turns.decide(directory.look()), 0.3)
    assert turns.decide(directory.look()) == Wait()
    directory.now = 1.0
    assert turns.decide(directory.look()) == Wait()
    directory.now = 1.4
    action = turns.decide(directory.look())
    assert isinstance(action, Abort) and "nothing changed" in action.message
    leftover = fresh_game()
    at_start = started(leftover, silence=1.0)
    leftover.now = 100.0
    assert at_start.decide(leftover.look()) == Wait()


def test_a_replaced_opening_is_a_new_game():
    directory = fresh_game()
    turns = started(directory)
    my_go(directory, 0.3)
    write_mine(turns, directory, turns.decide(directory.look()), 0.5)
    new = fresh_game(OPENING_OPP_FIRST)
    new.opening = seen(12, T0 + 2, text_of(OPENING_OPP_FIRST))
    position = Position.from_moves(parse_move_line(line)[1] for line in OPENING_OPP_FIRST)
    move_line(new, f"{OPP} {Move.from_index(position.legal_moves()[0])}", 2.5)
    my_go(new, 2.6, ino=21)
    assert isinstance(turns.decide(new.look()), Play)
    assert "that game was abandoned" in notes_text(turns)
    assert turns.game.side == 1 and turns.game.moves == 0


def test_a_go_older_than_the_limit_at_start_up_is_a_leftover():
    directory = fresh_game()
    my_go(directory, 0.3)
    turns = decider()
    turns.start(replace(directory, now=10.0).look())
    directory.now = 10.0
    assert turns.decide(directory.look()) == Wait()
    young = fresh_game()
    my_go(young, 0.3)
    turns = decider()
    turns.start(replace(young, now=1.0).look())  # my .go younger than the limit: a live turn
    young.now = 1.0
    assert isinstance(turns.decide(young.look()), Play)


# -- what cannot be followed -----------------------------------------------------------------------


BAD_REPLIES = [
    (f"{OPP} 9 9", "must be 0-8"),
    (f"{OPP} x 1", "'x' is not a number"),
    (f"{OPP} 4", "expected 'NAME BOARD SPOT'"),
    ("Someone 8 0", "not from my opponent"),
    (f"{OPP} 6 2", "is not legal"),
    (f"{ME} 0 0", "another agent named 'Walrus' is probably playing"),
]


@pytest.mark.parametrize("line, why", BAD_REPLIES)
def test_a_bad_opponent_line_is_judged_on_a_second_look_then_only_end_game_counts(line, why):
    directory = fresh_game()
    turns = started(directory)
    my_go(directory, 0.3)
    write_mine(turns, directory, turns.decide(directory.look()), 0.5)
    move_line(directory, line, 1.0)
    my_go(directory, 1.05, ino=21)
    again = turns.decide(directory.look())
    assert isinstance(again, Wait) and again.again_in is not None and turns.error is None
    directory.now = 1.06
    assert turns.decide(directory.look()) == Wait()
    assert why in turns.error and "move_file line 1" in turns.error
    assert f"{why}" in notes_text(turns)
    directory.end = seen(50, T0 + 3, f"END: {ME} WINS! {OPP} LOSES! Invalid move!")
    assert isinstance(turns.decide(directory.look()), Finish)


def test_a_line_still_being_written_is_not_judged():
    directory = fresh_game()
    turns = started(directory)
    my_go(directory, 0.3)
    write_mine(turns, directory, turns.decide(directory.look()), 0.5)
    move_line(directory, f"{OPP}", 1.0)  # half a line: a writer that truncated, then writes
    my_go(directory, 1.05, ino=21)
    assert isinstance(turns.decide(directory.look()), Wait)
    move_line(directory, legal_reply(turns), 1.06)
    assert isinstance(turns.decide(directory.look()), Play) and turns.error is None


def test_a_line_in_my_name_under_the_go_i_answered_is_a_twin():
    directory = fresh_game()
    turns = started(directory)
    my_go(directory, 0.3)
    mine = write_mine(turns, directory, turns.decide(directory.look()), 0.5)
    other = next(Move.from_index(i) for i in reversed(turns.game.position.legal_moves()))
    move_line(directory, f"{ME} {other}", 0.6)
    assert turns.decide(directory.look()) == Wait()
    assert "another agent named 'Walrus' is probably playing" in turns.error and mine in turns.error


def test_undecodable_bytes_are_reported_as_the_referee_cannot_read_them():
    directory = fresh_game(OPENING_OPP_FIRST)
    turns = started(directory, encoding="utf-8")
    directory.move = seen(30, T0 + 0.5, f"{OPP}\ufffd8\ufffd4\n", undecodable=True)
    my_go(directory, 0.6)
    assert isinstance(turns.decide(directory.look()), Wait) and turns.error is None
    directory.now = 0.61
    turns.decide(directory.look())
    assert "not utf-8" in turns.error and "cannot decode" in turns.error


@pytest.mark.parametrize("history, opening", [
    (f"{OPP} 8 0\n", OPENING_ME_FIRST),  # p1 whose move_file is not empty
    (f"{ME} 8 0\n", OPENING_ME_FIRST),
    ("", OPENING_OPP_FIRST),  # p2 with nothing to answer
])
def test_started_after_the_game_began_is_refused(history, opening):
    directory = fresh_game(opening)
    turns = started(directory)
    directory.move = seen(30, T0 + 0.5, history)
    my_go(directory, 0.6)
    assert turns.decide(directory.look()) == Wait()
    assert "started after the game began" in turns.error


def test_p2_whose_first_go_comes_long_after_the_opening_refuses():
    directory = fresh_game(OPENING_OPP_FIRST)
    turns = started(directory)
    position = Position.from_moves(parse_move_line(line)[1] for line in OPENING_OPP_FIRST)
    move_line(directory, f"{OPP} {Move.from_index(position.legal_moves()[0])}", 4.0)
    my_go(directory, 5.0)
    assert turns.decide(directory.look()) == Wait()
    assert "5.0 s after first_four_moves" in turns.error


def test_a_short_opening_is_given_a_moment_then_refused():
    directory = fresh_game()
    directory.opening = seen(10, T0, text_of(OPENING_ME_FIRST[:3]))
    turns = started(directory)
    my_go(directory, 0.3)
    again = turns.decide(directory.look())
    assert isinstance(again, Wait) and again.again_in is not None and turns.error is None
    directory.now = 0.35
    assert turns.decide(directory.look()) == Wait()
    assert "has 3 lines" in turns.error


@pytest.mark.parametrize("lines, why", [
    (OPENING_ME_FIRST[:3] + ["Stoat 5 8"], "lines 1 and 3"),
    ([line.replace(ME, "Stoat") for line in OPENING_ME_FIRST], "not me"),
    (OPENING_ME_FIRST[:3] + [f"{OPP} 5 9"], "first_four_moves line 4"),
])
def test_an_opening_that_cannot_be_mine_is_refused(lines, why):
    directory = fresh_game(lines)
    turns = started(directory)
    my_go(directory, 0.3)
    assert turns.decide(directory.look()) == Wait()
    assert why in turns.error


def test_an_opponent_slower_than_my_limit_names_the_limit_mismatch(caplog):
    directory = fresh_game()
    turns = started(directory)
    my_go(directory, 0.3)
    write_mine(turns, directory, turns.decide(directory.look()), 0.5)
    move_line(directory, legal_reply(turns), 0.5 + LIMIT + 2)
    my_go(directory, 0.5 + LIMIT + 2.05, ino=21)
    assert isinstance(turns.decide(directory.look()), Play)
    notes = turns.take_notes()
    assert any(note.level == logging.WARNING and "referee's limit is probably longer" in note.message
               for note in notes)


# -- while I think: the checks the agent's should_stop and its last look before writing ask -----------


def thinking() -> tuple[TurnDecider, Dir, Play]:
    """A joined game, my turn being thought about (nothing written yet)."""
    directory = fresh_game()
    turns = started(directory)
    my_go(directory, 0.3)
    play = turns.decide(directory.look())
    assert isinstance(play, Play)
    turns.take_notes()
    return turns, directory, play


def go_removed(directory: Dir) -> None:
    directory.go = None


def go_recreated(directory: Dir) -> None:
    directory.go = seen(21, T0 + 0.8)


def end_written(directory: Dir) -> None:
    directory.end = seen(50, T0 + 0.8, "END: Otter WINS! Walrus LOSES! Time out!\n")


def stale_end(directory: Dir) -> None:
    directory.end = seen(50, T0 - 5.0, "END: Otter WINS! Walrus LOSES! Time out!\n")


def opening_removed(directory: Dir) -> None:
    directory.opening = None


def opening_replaced(directory: Dir) -> None:
    directory.opening = seen(12, T0 + 0.8, text_of(OPENING_ME_FIRST))


def opponent_writes(directory: Dir) -> None:
    move_line(directory, f"{OPP} 4 4", 0.8)


@pytest.mark.parametrize("change, moved_on, over", [
    (lambda directory: None, False, False),
    (go_removed, False, True),
    (go_recreated, False, True),
    (end_written, True, True),
    (stale_end, False, False),          # an end_game older than the opening is an earlier game's
    (opening_removed, True, True),
    (opening_replaced, True, True),
    (opponent_writes, False, False),    # a line out of turn does not end my turn (the referee calls it)
], ids=["nothing", "go-removed", "go-recreated", "end-game", "stale-end-game", "opening-removed",
        "opening-replaced", "opponent-out-of-turn"])
def test_while_i_think_the_files_say_whether_the_turn_is_over(change, moved_on, over):
    turns, directory, play = thinking()
    change(directory)
    look = directory.look()
    assert turns.game_moved_on(look) == moved_on
    assert turns.turn_is_over(look, play.go.identity) == over
    assert turns.take_notes() == [] and turns.error is None  # a question, not a decision: nothing changes


@pytest.mark.parametrize("last, level, words", [
    (None, logging.WARNING, "my .go vanished while I was thinking (the referee stopped, or moved on without me); "
                            "not writing "),
    ((1, f"{OPP} 4 4"), logging.WARNING, "my .go vanished while I was thinking (the referee stopped"),
    ((2, f"{ME} 4 4"), logging.ERROR, "my .go vanished while I was thinking and move_file now holds 'Walrus 4 4', a "
                                      "move in my name that I did not write: another agent named 'Walrus' is "
                                      "probably playing in this directory; not writing "),
], ids=["empty", "opponent-line", "my-name"])
def test_an_unwritten_move_is_explained_from_move_file(last, level, words):
    turns, directory, play = thinking()
    move = Move.from_index(turns.game.position.legal_moves()[0])
    turns.unwritten(move, last)
    [note] = turns.take_notes()
    assert note.level == level and note.message.startswith(words) and note.message.endswith(f"not writing {move}")
