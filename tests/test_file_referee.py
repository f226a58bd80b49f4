"""The file referee's decisions as tables: :class:`FileReferee` driven on a virtual directory with a
virtual clock, no files, threads or sleeps (ref_sim/referees/file_referee.py).

Each player is a script: at its ``.go`` it writes a text some seconds later (or nothing). The
virtual directory keeps each file's text and modification time; a look (``Stat``) sees the writes
made by then. Every action is logged with its time, so the order of the referee's files, when it
looks, its verdicts and how long the files stay are checked exactly, where a real game could only
check them within a tick. A few real-tick games (tests/test_file_shell.py) show that the shell
does what the machine asks.
"""

from __future__ import annotations

import pytest

from ref_sim.referees.file_referee import (
    CRASHED,
    EXIT_DELAY,
    INTERRUPTED,
    INVALID_MOVE,
    OUT_OF_ORDER,
    TICK_SLACK,
    TIME_OUT,
    UNDECODABLE,
    WIN_REASON,
    Clean,
    Crash,
    FileReferee,
    RefereeSettings,
    Remove,
    Stat,
    Unreadable,
    Wait,
    Write,
    tick_count,
)
from virtual_games import NAMES, Virtual, legal, on_ply


# -- the opening and the order of the files ------------------------------------------------------

def test_the_start_is_the_real_referees_clean_up_empty_move_file_delay_then_opening():
    run = Virtual(on_ply(0, lambda mover, game: None))
    record = run.play(RefereeSettings(time_limit=0.2, exit_delay=0), seed=5)
    first = [action for _, action in run.log[:5]]
    assert first == [Clean(), Write("move_file", ""), Wait(0.3),
                     Write("first_four_moves", "Walrus 4 0\nOtter 0 4\nWalrus 4 8\nOtter 8 4\n"),
                     first[4]]
    assert first[4].event.kind == "start"
    assert record.opening == [("Walrus", 4, 0), ("Otter", 0, 4), ("Walrus", 4, 8), ("Otter", 8, 4)]
    assert (record.p1, record.p2) == ("Walrus", "Otter")


def test_each_turn_removes_the_other_go_notes_m_then_creates_its_own_go():
    run = Virtual(legal(0.01))
    run.play(RefereeSettings(time_limit=1.0), seed=1)
    turn = [action for _, action in run.log[5:9]]
    assert turn[:3] == [Remove("Otter.go"), Stat("Walrus"), Write("Walrus.go")]
    assert turn[3].event.kind == "turn" and turn[3].event.player == "Walrus"
    later = [action for _, action in run.log]
    second = later.index(Write("Otter.go"))
    assert later[second - 2:second] == [Remove("Walrus.go"), Stat("Otter")]


def test_the_coin_flip_and_opening_are_seeded_and_either_side_may_start():
    firsts = set()
    for seed in range(12):
        one = FileReferee(*NAMES, seed=seed)
        two = FileReferee(*NAMES, seed=seed)
        list_one = [one.start(0.0), one.send(0.0), one.send(0.0), one.send(0.3)]
        list_two = [two.start(0.0), two.send(0.0), two.send(0.0), two.send(0.3)]
        assert list_one == list_two and one.players == two.players
        firsts.add(one.players[0])
    assert firsts == set(NAMES)


@pytest.mark.parametrize("seed", range(20))
def test_a_random_opening_is_four_chained_moves_named_p1_p2_p1_p2(seed):
    run = Virtual()
    record = run.play(RefereeSettings(time_limit=0.1, exit_delay=0, start_delay=0), seed=seed, first=None,
                      opening=None)
    written = next(a.text for _, a in run.log if isinstance(a, Write) and a.name == "first_four_moves")
    lines = [line.split(" ") for line in written.splitlines()]
    assert written.endswith("\n") and len(lines) == 4
    assert [name for name, _, _ in lines] == [record.p1, record.p2, record.p1, record.p2]
    cells = [(int(board), int(spot)) for _, board, spot in lines]
    assert len(set(cells)) == 4 and all(cells[i][0] == cells[i - 1][1] for i in range(1, 4))
    assert record.opening == [(name, board, spot) for (name, _, _), (board, spot) in zip(lines, cells)]
    assert run.actions(Write)[0][1] == Write("move_file", "")      # empty when p1's .go appears


def test_names_and_a_forced_first_player_are_checked():
    with pytest.raises(ValueError, match="must differ"):
        FileReferee("A", "A")
    with pytest.raises(ValueError, match="neither"):
        FileReferee("A", "B", first="C")
    assert FileReferee("A", "B", first="B").players == ("B", "A")


# -- when the referee looks, and time-outs ------------------------------------------------------

@pytest.mark.parametrize("limit, looks", [(0.1, [0.05]), (0.125, [0.05, 0.1]), (0.3, [0.05, 0.1, 0.15, 0.2, 0.25]),
                                         (1.0, [round(0.05 * k, 2) for k in range(1, 20)])])
def test_it_looks_once_per_tick_while_under_the_limit_and_the_verdict_waits_for_the_limit(limit, looks):
    run = Virtual()                                         # Walrus never writes
    record = run.play(RefereeSettings(time_limit=limit, exit_delay=0, start_delay=0))
    go = next(at for at, action in run.log if action == Write("Walrus.go"))
    seen = [round(at - go, 4) for at, action in run.actions(Stat)[1:]]     # the first notes M
    assert seen == [round(t + TICK_SLACK, 4) for t in looks] and len(seen) == tick_count(limit)
    end = next(at for at, action in run.log if isinstance(action, Write) and action.name == "end_game")
    assert round(end - go, 6) == limit                       # the verdict at the limit, not at the last look
    assert (record.result, record.winner, record.loser, record.reason) == ("win", "Otter", "Walrus", TIME_OUT)
    assert record.end_text == f"END: Otter WINS! Walrus LOSES! {TIME_OUT}"


@pytest.mark.parametrize("written, verdict, seconds", [
    (0.01, None, 0.05),             # read at the first tick
    (0.051, None, 0.1),             # just after a tick's look: the next one
    (0.249, None, 0.25),            # before the last tick under 0.3 s
    (0.251, TIME_OUT, None),        # after it: no look sees it
    (0.29, TIME_OUT, None),
])
def test_a_move_counts_only_if_a_tick_under_the_limit_sees_it(written, verdict, seconds):
    run = Virtual(on_ply(0, lambda mover, game: "Walrus 4 4\n", delay=written))
    record = run.play(RefereeSettings(time_limit=0.3, exit_delay=0, start_delay=0))
    if verdict is None:
        assert record.moves[0].player == "Walrus" and (record.moves[0].board, record.moves[0].spot) == (4, 4)
        assert record.moves[0].seconds == pytest.approx(seconds + TICK_SLACK, abs=1e-4)
    else:
        assert record.reason == verdict and record.loser == "Walrus" and record.moves == []
        assert record.timeout_line == "Walrus 4 4\n"        # what move_file said then, for the hints


def test_a_tick_missed_by_a_late_referee_is_not_replayed():
    # The referee wakes 0.12 s late for its first tick: it looks at 0.17 s, then at the next tick due.
    run = Virtual(late={2: 0.12})        # wait 1 is the start delay, wait 2 the first tick
    run.play(RefereeSettings(time_limit=0.4, exit_delay=0, start_delay=0))
    go = next(at for at, action in run.log if action == Write("Walrus.go"))
    seen = [round(at - go, 4) for at, action in run.actions(Stat)[1:]]
    assert seen[:3] == [0.1705, 0.2005, 0.2505]
    assert all(at < 0.4 for at in seen)


def test_a_line_written_before_the_next_turn_notes_m_is_never_read():
    # Each file action takes 1 ms. Walrus's first move is read at its first tick; a second line
    # of Walrus's lands after that read but before Otter's turn notes M: it is no newer than M,
    # never read as a move, and Otter's own answer later is read as usual.
    step = 0.001

    def answer(mover, ply, game):
        board, spot = game.legal_moves()[0]
        move = (0.01, f"{mover} {board} {spot}\n")
        # After the .go (1 ms) its first tick looks at +0.0515 and reads at +0.0525 (1 ms each);
        # the next turn removes Walrus.go at +0.0535 and notes M at +0.0545.
        return [move, (0.0505 + 3 * step, "Walrus 3 3\n")] if ply == 0 else move
    run = Virtual(answer, step=step)
    record = run.play(RefereeSettings(time_limit=0.3, exit_delay=0, start_delay=0), seed=2)
    assert record.result in ("win", "tie") and record.reason in (WIN_REASON, "tie"), record
    assert "Walrus 3 3" not in [f"{m.player} {m.board} {m.spot}" for m in record.moves]


# -- verdicts ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, winner, reason, bad_line", [
    ("garbage\n", "Otter", INVALID_MOVE, "garbage\n"),                 # unparseable: the mover loses
    ("Walrus 4\n", "Otter", INVALID_MOVE, "Walrus 4\n"),
    ("\nWalrus 4 4\n", "Otter", INVALID_MOVE, ""),                    # a leading blank line reads as empty
    ("Otter 4 4\n", "Walrus", OUT_OF_ORDER, "Otter 4 4\n"),            # another name: the mover wins
    ("walrus 4 4\n", "Walrus", OUT_OF_ORDER, "walrus 4 4\n"),          # names are case-sensitive
    ("Walrus 4 0\n", "Otter", INVALID_MOVE, "Walrus 4 0\n"),           # an occupied cell
    ("Walrus 5 5\n", "Otter", INVALID_MOVE, "Walrus 5 5\n"),           # the wrong board
    ("Walrus 4 9", "Otter", INVALID_MOVE, "Walrus 4 9"),
    ("Walrus 4 4 extra tokens", None, None, None),                     # extra tokens, no newline: a move
    ("Walrus 1 1\nWalrus 4 4\n\nWalrus 4 5\n", None, None, None),      # the last line before a blank one
])
def test_the_verdict_on_the_line_read_is_the_real_referees_in_its_order(text, winner, reason, bad_line):
    run = Virtual(on_ply(0, lambda mover, game: text))
    record = run.play(RefereeSettings(time_limit=0.5, exit_delay=0, start_delay=0))
    if reason is None:
        assert (record.moves[0].board, record.moves[0].spot) == (4, 4)
        return
    loser = NAMES[1 - NAMES.index(winner)]
    assert (record.result, record.winner, record.loser, record.reason, record.bad_line) == \
        ("win", winner, loser, reason, bad_line)
    assert record.end_text == f"END: {winner} WINS! {loser} LOSES! {reason}"
    writes = [action for _, action in run.actions(Write)]
    assert writes[-3:] == [Write("end_game", record.end_text), Write("Walrus.go"), Write("Otter.go")]


@pytest.mark.parametrize("written, found, verdict_at", [
    # What the real referee would block on (a FIFO waits for a writer) or crash on (a directory):
    # the mover loses at the limit, 0.5 s after its .go, whenever the thing was put there.
    (0.01, Unreadable("a FIFO (named pipe)"), 0.5),
    (0.33, Unreadable("a directory"), 0.5),
    (0.01, Unreadable("a symbolic link"), 0.5),
    # A file far too large for a move, with no blank line near its start: judged at once, at the
    # tick that saw it (the real referee would read all of it, then judge the one huge line).
    (0.01, Unreadable("a file of 1,073,741,824 bytes with no blank line in its first 64 KiB",
                      at_limit=False), 0.05 + TICK_SLACK),
])
def test_what_no_line_can_be_read_from_loses_invalid_move_with_a_note(written, found, verdict_at):
    run = Virtual(on_ply(0, lambda mover, game: found, delay=written))
    record = run.play(RefereeSettings(time_limit=0.5, exit_delay=0, start_delay=0))
    assert (record.result, record.winner, record.loser, record.reason) == \
        ("win", "Otter", "Walrus", INVALID_MOVE)
    assert (record.unreadable, record.bad_line, record.timeout_line) == (found.what, None, None)
    assert record.end_text == f"END: Otter WINS! Walrus LOSES! {INVALID_MOVE}"
    (go_at,) = [at for at, action in run.actions(Write) if action == Write("Walrus.go")][:1]
    (end_at,) = [at for at, action in run.actions(Write) if action.name == "end_game"]
    assert end_at - go_at == pytest.approx(verdict_at)
    looks = [at for at, _ in run.actions(Stat)]
    assert max(looks) - go_at <= written + 0.05 + TICK_SLACK    # no look after the one that saw it


def test_ctrl_c_while_an_unreadable_move_file_waits_for_the_limit_aborts_the_game():
    run = Virtual(on_ply(0, lambda mover, game: Unreadable("a FIFO (named pipe)"), delay=0.01),
                  interrupt_at=0.2)
    record = run.play(RefereeSettings(time_limit=0.5, exit_delay=0, start_delay=0))
    assert (record.result, record.reason, record.end_text) == ("aborted", INTERRUPTED, None)
    assert run.log[-1][1] == Clean()


def test_an_opponent_line_read_at_the_movers_tick_makes_the_mover_win():
    # In Otter's turn move_file holds a line of Walrus's (written out of turn): Otter wins.
    run = Virtual(on_ply(1, lambda mover, game: "Walrus 0 0\n"))
    record = run.play(RefereeSettings(time_limit=0.5, exit_delay=0, start_delay=0))
    assert (record.winner, record.loser, record.reason) == ("Otter", "Walrus", OUT_OF_ORDER)


def test_answering_an_out_of_turn_line_before_the_tick_is_judged_in_the_referees_position():
    # Walrus's out-of-turn line, then Otter's answer to it, before Otter's tick: the referee reads
    # Otter's line as Otter's move in its own position, where it is illegal.
    def answer(mover, game):
        assert not game.is_legal(0, 1)       # Walrus's first move sent Otter to board 1
        return "Walrus 0 0\nOtter 0 1\n"
    run = Virtual(on_ply(1, answer))
    record = run.play(RefereeSettings(time_limit=0.5, exit_delay=0, start_delay=0))
    assert (record.winner, record.loser, record.reason) == ("Walrus", "Otter", INVALID_MOVE)
    assert record.bad_line == "Otter 0 1\n"


def test_a_full_game_ends_on_the_board_and_every_move_is_recorded():
    run = Virtual(legal(0.02))
    record = run.play(RefereeSettings(time_limit=0.5, exit_delay=0, start_delay=0), seed=3)
    assert record.result in ("win", "tie") and record.reason in (WIN_REASON, "tie")
    assert record.end_text in ("END: Match TIED!", f"END: {record.winner} WINS! {record.loser} LOSES! {WIN_REASON}")
    assert len(record.moves) > 10 and all(move.seconds == pytest.approx(0.05 + TICK_SLACK) for move in record.moves)
    assert [move.player for move in record.moves] == [NAMES[i % 2] for i in range(len(record.moves))]
    kinds = [kind for kind, _ in run.events()]
    assert kinds[0] == "start" and kinds[-1] == "end" and kinds.count("move") == len(record.moves)


# -- crashes and interruptions -------------------------------------------------------------------

def test_move_file_missing_when_noted_or_looked_at_crashes_without_end_game():
    run = Virtual(legal(0.01))
    original = run.perform

    def perform(action):                 # move_file deleted after Walrus's first move
        if isinstance(action, Stat) and run.referee.record.moves:
            return None
        return original(action)
    run.perform = perform
    record = run.play(RefereeSettings(time_limit=0.5, exit_delay=0, start_delay=0))
    assert (record.result, record.reason, record.end_text) == ("aborted", CRASHED, None)
    assert not any(isinstance(a, Write) and a.name == "end_game" for _, a in run.log)
    assert run.log[-1][1] == Clean() and run.events()[-1] == ("abort", None)


def test_an_undecodable_move_file_is_the_real_referees_crash():
    crash = Crash(f"{UNDECODABLE} utf-8: byte 0xff at offset 7 (UnicodeDecodeError)", "Walrus \\xff")
    run = Virtual(legal(0.01), crash_read=crash)
    record = run.play(RefereeSettings(time_limit=0.5, exit_delay=0, start_delay=0))
    assert (record.result, record.reason, record.bad_line) == ("aborted", crash.reason, crash.bad_line)
    assert record.end_text is None


@pytest.mark.parametrize("at, aborted", [(0.2, True), (50.0, False)])
def test_ctrl_c_before_the_end_aborts_after_it_closes(at, aborted):
    run = Virtual(legal(0.01), interrupt_at=at)
    record = run.play(RefereeSettings(time_limit=0.5, exit_delay=100, start_delay=0))
    if aborted:
        assert (record.result, record.reason, record.end_text) == ("aborted", INTERRUPTED, None)
        assert run.referee.interrupted_game and run.events()[-1] == ("abort", None)
    else:
        assert record.result in ("win", "tie") and not run.referee.interrupted_game
    assert run.log[-1] == (run.log[-1][0], Clean())


def test_without_clean_at_exit_the_end_files_stay():
    run = Virtual(legal(0.01))
    run.play(RefereeSettings(time_limit=0.5, exit_delay=0, start_delay=0, clean_at_exit=False))
    assert not isinstance(run.log[-1][1], Clean) and "end_game" in run.files


# -- after the end -------------------------------------------------------------------------------

@pytest.mark.parametrize("limit, exit_delay, gone_at, stays", [
    (0.5, None, None, EXIT_DELAY),       # at least a second
    (3.0, None, None, 3.0),              # one time limit: an agent may be searching when it ends
    (0.5, 2.5, None, 2.5),               # as the runner asks
    (3.0, None, "end+0.4", 0.4),         # until every agent has exited
])
def test_the_end_files_stay_until_the_agents_could_read_them(limit, exit_delay, gone_at, stays):
    probe = Virtual(legal(0.01))
    probe.play(RefereeSettings(time_limit=limit, exit_delay=exit_delay, start_delay=0))
    ended = next(at for at, a in probe.log if isinstance(a, Write) and a.name == "end_game")
    run = Virtual(legal(0.01), gone_at=None if gone_at is None else ended + 0.4)
    run.play(RefereeSettings(time_limit=limit, exit_delay=exit_delay, start_delay=0))
    cleaned = run.log[-1][0]
    assert isinstance(run.log[-1][1], Clean)
    assert cleaned - ended == pytest.approx(stays, abs=1e-6)


def test_lingering_rewrites_the_end_files_then_cleans():
    run = Virtual(legal(0.01))
    run.play(RefereeSettings(time_limit=0.5, linger=2.5, linger_rewrite=1.0, start_delay=0))
    ended = next(at for at, a in run.log if isinstance(a, Write) and a.name == "end_game")
    rewrites = [round(at - ended, 6) for at, a in run.log if isinstance(a, Write) and a.name == "end_game"]
    assert rewrites == [0.0, 1.0, 2.0]
    assert run.log[-1] == (round(ended + 2.5, 6), Clean())


def test_lingering_until_stopped_ends_when_interrupted_and_the_game_stands():
    run = Virtual(legal(0.01), interrupt_at=40.0)
    record = run.play(RefereeSettings(time_limit=0.5, linger=True, start_delay=0))
    assert record.result in ("win", "tie") and record.end_text
    assert sum(1 for _, a in run.log if isinstance(a, Write) and a.name == "end_game") >= 30
