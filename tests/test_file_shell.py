"""The referee simulator on real files at real ticks, against scripted (mis)behaving players
(docs/protocol.md): a handful of games for each kind of verdict, the races with a writer, the
clean-up and the tick. Every decision of the referee is also a table in tests/test_file_referee.py
(its state machine on a virtual directory and clock); these show that the shell does what it asks."""

import os
import time

import pytest

from ref_sim.referees.file_referee import CRASHED, GameRecord, parse_move_line
from ref_sim.referees.file_shell import clean, is_cleanup_name, read_move_line

WIN = "The winning player has won 3 local boards in a row on the global board!"


def loss_text(winner, loser, reason):
    return f"END: {winner} WINS! {loser} LOSES! {reason}"


def on_ply(ply, misbehave):
    """An act that plays legal moves, and ``misbehave(turn)`` instead at ``ply``."""
    def act(turn):
        if turn.ply == ply:
            misbehave(turn)
        else:
            turn.play_legal()
    return act


def check_end(record, winner, loser, reason, moves):
    assert record.result == "win"
    assert (record.winner, record.loser, record.reason) == (winner, loser, reason)
    assert record.end_text == loss_text(winner, loser, reason)
    assert len(record.moves) == moves


# -- verdicts ----------------------------------------------------------------------------

@pytest.mark.e2e
def test_time_out(scripted):
    start = time.perf_counter()
    record, _ = scripted(on_ply(0, lambda turn: None), time_limit=0.3)
    assert 0.25 < time.perf_counter() - start < 1.5      # a float limit below one second
    check_end(record, record.p2, record.p1, "Time out!", 0)


@pytest.mark.e2e
def test_unparseable_line_loses(scripted):
    record, _ = scripted(on_ply(1, lambda t: t.write(f"{t.player} four five\n")))
    check_end(record, record.p1, record.p2, "Invalid move!", 1)
    assert record.bad_line == f"{record.p2} four five\n"


@pytest.mark.e2e
def test_wrong_name_makes_the_mover_win(scripted):
    def opponents_name(turn):
        board, spot = turn.legal_move()
        turn.write(f"{turn.opponent} {board} {spot}\n")
    record, _ = scripted(on_ply(0, opponents_name))
    check_end(record, record.p1, record.p2, "Out-of-order move!", 0)


@pytest.mark.e2e
def test_truncate_then_write_slowly_is_read_at_once(scripted):
    def slow(turn):
        board, spot = turn.legal_move()
        time.sleep(0.015)
        with open(turn.move_file, "w") as handle:       # truncates: mtime goes up now
            handle.flush()
            time.sleep(0.25)                            # several ticks before the line
            handle.write(f"{turn.player} {board} {spot}\n")
    record, _ = scripted(on_ply(1, slow), time_limit=1.0)
    check_end(record, record.p1, record.p2, "Invalid move!", 1)
    assert record.bad_line == ""


@pytest.mark.e2e
def test_appending_plays_on_because_the_last_line_is_read(scripted, tmp_path):
    seen = []

    def append(turn):
        board, spot = turn.legal_move()
        time.sleep(0.015)
        with open(turn.move_file, "a") as handle:
            handle.write(f"{turn.player} {board} {spot}\n")

    def observe(event):
        if event.kind == "end":
            seen.append((tmp_path / "move_file").read_text().count("\n"))
    record, _ = scripted(append, observe)
    assert record.reason in (WIN, "tie")
    assert seen == [len(record.moves)]          # one line per move, all kept


@pytest.mark.e2e
def test_move_file_deleted_crashes_without_end_game(scripted, tmp_path):
    ends = []
    record, events = scripted(on_ply(1, lambda t: os.remove(t.move_file)),
                              observe=lambda e: ends.append(os.path.exists(tmp_path / "end_game")))
    assert record.result == "aborted" and record.reason == CRASHED
    assert record.end_text is None
    assert events[-1][0] == "abort" and not any(ends)
    assert not (tmp_path / "end_game").exists()


# -- files -------------------------------------------------------------------------------

def test_cleanup_patterns(tmp_path):
    deleted = ["move_file", "move_file.bak", "end_game", "end_game~", "first_four_moves",
               "first_four_moves.old", "Otter.go", "algo.py", "logo.png", "cargo.toml", ".go",
               "ago", "xgo", "Mango"]
    kept = ["go", "go.txt", "notes.txt", "game.log", "Go.txt", "my_move_file", "G.o",
            ".uttt-tmp-123-ab12", "match.json"]
    names_kept = kept
    if os.path.normcase("Go.txt") == "go.txt":     # Windows: one file for both names; the patterns still see both
        names_kept = [name for name in kept if name != "Go.txt"]
    for name in deleted + names_kept:
        (tmp_path / name).write_text("x")
    (tmp_path / "algo").mkdir()                 # directories are never deleted
    assert sorted(clean(tmp_path)) == sorted(deleted)
    assert sorted(os.listdir(tmp_path)) == sorted(names_kept + ["algo"])
    assert all(is_cleanup_name(n) for n in deleted)
    assert not any(is_cleanup_name(n) for n in kept)


@pytest.mark.e2e
def test_cleanup_at_start_and_at_exit(scripted, tmp_path):
    for name in ("end_game", "Walrus.go", "first_four_moves", "logo.png", "notes.txt"):
        (tmp_path / name).write_text("stale")
    at_start = []

    def observe(event):
        if event.kind == "start":
            at_start.append(sorted(os.listdir(tmp_path)))
    scripted(on_ply(0, lambda t: None), observe, time_limit=0.2)
    assert at_start == [["first_four_moves", "move_file", "notes.txt"]]
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"]


@pytest.mark.e2e
def test_go_file_life_cycle_and_end_game_text(scripted, tmp_path):
    problems = []
    at_end = {}

    def observe(event):
        files = set(os.listdir(tmp_path))
        if event.kind == "turn":
            other = [n for n in event.record.names if n != event.player][0]
            if f"{event.player}.go" not in files or f"{other}.go" in files:
                problems.append(("turn", event.player, sorted(files)))
        elif event.kind == "move":      # the mover's .go lingers after its move
            if f"{event.player}.go" not in files:
                problems.append(("move", event.player, sorted(files)))
        elif event.kind == "end":
            at_end["files"] = files
            at_end["end_game"] = (tmp_path / "end_game").read_bytes()
            at_end["go"] = [(tmp_path / f"{n}.go").read_bytes() for n in event.record.names]
    record, events = scripted(on_ply(6, lambda t: None), observe, time_limit=0.3)
    assert not problems
    assert [kind for kind, _ in events].count("move") == 6
    check_end(record, record.p2, record.p1, "Time out!", 6)   # ply 6 is p1's
    assert {"end_game", "Walrus.go", "Otter.go"} <= at_end["files"]
    assert at_end["end_game"] == record.end_text.encode()
    assert not at_end["end_game"].endswith(b"\n")
    assert at_end["go"] == [b"", b""]


@pytest.mark.e2e
def test_full_scripted_game_ends_with_a_win_or_tie(scripted):
    # The scripted moves are instant: a long limit costs nothing and no load can make one late.
    record, _ = scripted(lambda turn: turn.play_legal(), time_limit=5, seed=3)
    assert record.result in ("win", "tie")
    if record.result == "tie":
        assert record.end_text == "END: Match TIED!"
    else:
        assert record.end_text == loss_text(record.winner, record.loser, WIN)
    assert all(0 < move.seconds < 5 for move in record.moves)


@pytest.mark.e2e
def test_record_round_trip(scripted, tmp_path):
    record, _ = scripted(on_ply(3, lambda t: None), time_limit=0.2, clean_at_exit=False)
    path = tmp_path / "record.json"
    record.save(path)
    assert GameRecord.load(path) == record


@pytest.mark.parametrize("text, line, parsed", [
    ("A 1 2\n", "A 1 2\n", ("A", 1, 2)),
    ("A 1 2\nB 3 4\n", "B 3 4\n", ("B", 3, 4)),
    ("A 1 2\n\nB 3 4\n", "A 1 2\n", ("A", 1, 2)),
    ("A 1 2\n   \nB 3 4\n", "A 1 2\n", ("A", 1, 2)),
    ("\nA 1 2\n", "", None),
    ("", "", None),
    ("A 1\n", "A 1\n", None),
    ("A 1 2 3 4", "A 1 2 3 4", ("A", 1, 2)),
    ("A x 2", "A x 2", None),
    ("A -1 12", "A -1 12", ("A", -1, 12)),
    # Universal newlines: only \n, \r, \r\n end a line.
    ("A 1 2\rB 3 4\r", "B 3 4\n", ("B", 3, 4)),
    ("A 1 2\r\n\r\nB 3 4\r\n", "A 1 2\n", ("A", 1, 2)),
    ("A 1 2\x1cjunk\n", "A 1 2\x1cjunk\n", ("A", 1, 2)),
    ("A 1 2\x0bA 5 6\n", "A 1 2\x0bA 5 6\n", ("A", 1, 2)),
    ("A 1 2\u2028B 5 6\n", "A 1 2\u2028B 5 6\n", ("A", 1, 2)),
    ("A 1 2\x85B 5 6", "A 1 2\x85B 5 6", ("A", 1, 2)),
    # Every separator str.splitlines() knows and universal newlines do not: whitespace in a line.
    *[(f"A 1 2{sep}A 9 9\n", f"A 1 2{sep}A 9 9\n", ("A", 1, 2))
      for sep in ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")],
])
def test_reading_like_the_real_referee(tmp_path, text, line, parsed):
    path = tmp_path / "move_file"
    path.write_text(text, encoding="utf-8", newline="")
    # Read as a UTF-8 locale's referee reads: U+2028 and U+0085 exist in no cp1252 file (Windows').
    assert read_move_line(path, encoding="utf-8") == line
    assert parse_move_line(line) == parsed


# -- the tick (docs/protocol.md, "What the referee does") ------------------

def test_tick_count_is_the_referees():
    from ref_sim.referees.file_referee import MIN_TIME_LIMIT, tick_count
    # Looks at k * 50 ms while under the limit: the last one at 9.95 s of 10 s.
    assert [tick_count(t) for t in (10, 2, 1, 0.5, 0.3, 0.125, 0.1, 0.05)] == \
        [199, 39, 19, 9, 5, 2, 1, 0]
    assert MIN_TIME_LIMIT == 0.1 and tick_count(MIN_TIME_LIMIT) == 1


def test_limit_messages():
    from ref_sim.referees.file_shell import check_time_limit
    assert check_time_limit(10) == (None, None)
    error, _ = check_time_limit(0.08)
    assert error.startswith("--time-limit 0.08: the referee looks for a move every 50 ms")
    assert check_time_limit(0.5)[1] == ("warning: the real referee takes whole seconds "
                                        "(--time_limit N); 0.5 s per move is for rehearsal only")


@pytest.mark.e2e
def test_looks_at_move_file_once_per_tick_and_never_after_the_limit(scripted, tmp_path,
                                                                    monkeypatch):
    # A turn that times out at 0.3 s: the mtime noted before the .go, then at most one look
    # per tick (5: at 50..250 ms; a tick missed under load is not replayed), none at or
    # after the limit, and the verdict at the limit.
    import ref_sim.referees.file_shell as referee
    looks = []
    real_stat = os.lstat            # a look: the file itself, a link not followed

    def spy(path, *args, **kwargs):
        if str(path).endswith("move_file"):
            looks.append(time.perf_counter())
        return real_stat(path, *args, **kwargs)
    monkeypatch.setattr(referee.os, "lstat", spy)
    told, verdict_at = [], []

    def observe(event):
        if event.kind == "turn":
            told.append(time.perf_counter())
        elif event.kind == "end":
            verdict_at.append(time.perf_counter())
    record, _ = scripted(on_ply(0, lambda t: None), observe, time_limit=0.3)
    monkeypatch.undo()
    # The referee's clock starts between its look at the mtime (before the .go) and the "turn"
    # event (after it): measured from the look, times can only come out later than the referee's,
    # from the event only earlier, however loaded the machine (beside two CPU hogs the event came
    # 5 ms after the clock's start).
    noted = max(t for t in looks if t < told[0])
    assert record.reason == "Time out!" and verdict_at[0] - noted >= 0.3
    ticks = [t for t in looks if noted < t < verdict_at[0]]     # not the clean-up's
    assert 1 <= len(ticks) <= 5
    assert all(t - noted >= 0.05 and t - told[0] < 0.3 for t in ticks), ticks
    # One look per tick: the i-th look is never before the i-th tick is due (a loaded machine only
    # makes looks later, and a late one may then sit close to the next).
    assert all(t - noted >= 0.05 * (i + 1) for i, t in enumerate(ticks)), ticks


# -- lines outside their writer's turn (docs/protocol.md, "One move per .go")
# Staged in the referee's own thread (``observe``): a "turn" event comes right after the
# mover's .go is created and before its first tick, a "move" event after the tick that
# read the mover's move and before the next turn notes M, so the races are exact.

def put(directory, text):
    """Replace move_file with ``text`` at once, past the mtime the referee noted."""
    time.sleep(0.015)
    temp = os.path.join(directory, ".staged-tmp")
    with open(temp, "w") as handle:
        handle.write(text)
    os.replace(temp, os.path.join(directory, "move_file"))


def after(game, *moves):
    game = game.copy()
    for move in moves:
        game.play(*move)
    return game


@pytest.mark.e2e
def test_an_opponent_line_read_at_the_movers_tick_makes_the_mover_win(scripted, tmp_path):
    # p1 moves at ply 2 and p2, writing out of turn, answers before the referee's tick:
    # the tick reads p2's line in p1's turn, and p1 (the mover) wins.
    staged = []

    def observe(event):
        if event.kind == "turn" and len(event.record.moves) == 2:
            p1, p2 = event.record.p1, event.record.p2
            mine = event.game.legal_moves()[0]
            theirs = after(event.game, mine).legal_moves()[0]
            put(tmp_path, f"{p1} {mine[0]} {mine[1]}\n")
            put(tmp_path, f"{p2} {theirs[0]} {theirs[1]}\n")
            staged.append(f"{p2} {theirs[0]} {theirs[1]}\n")
    record, _ = scripted(on_ply(2, lambda t: None), observe)
    check_end(record, record.p1, record.p2, "Out-of-order move!", 2)
    assert record.bad_line == staged[0]


@pytest.mark.e2e
@pytest.mark.parametrize("again", [False, True])
def test_a_line_written_before_the_next_turn_notes_m_is_never_read(scripted, tmp_path,
                                                                   again):
    # p2 answers p1's first move after the tick that read it but before its own turn
    # begins: its line is older than the M its turn notes, so it is no move.  Unless p2
    # writes again in its turn (again=True), its clock runs out.
    staged = []

    def observe(event):
        if event.kind == "move" and len(event.record.moves) == 1:
            board, spot = event.game.legal_moves()[0]
            staged.append(f"{event.record.p2} {board} {spot}\n")
            put(tmp_path, staged[0])

    def act(turn):
        if turn.ply == 0:
            turn.play_legal()
        elif turn.ply == 1 and again:
            turn.write(staged[0])           # the same line, now in its turn
    record, _ = scripted(act, observe, time_limit=0.3)
    if again:
        check_end(record, record.p2, record.p1, "Time out!", 2)
        last = record.moves[-1]
        assert f"{last.player} {last.board} {last.spot}\n" == staged[0]
    else:
        check_end(record, record.p1, record.p2, "Time out!", 1)
