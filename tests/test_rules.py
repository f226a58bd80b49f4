"""The agent's fast rules: move generation counts, the referee's rules, make/unmake, parsing."""

import random

import pytest

from agent.rules import (
    CODINGAME, DRAWN, OPEN, TIE, WON_O, WON_X, WPI, X, O, IllegalMoveError, InvalidMoveError, Move, Position,
    ZOBRIST_CELL, ZOBRIST_FORCED, check_player_name, format_move_line, parse_move_line, perft,
)

PERFT = [81, 720, 6336, 55080, 473256, 4020960]


@pytest.mark.parametrize("depth,count", list(enumerate(PERFT, start=1)))
def test_perft(depth, count):
    assert perft(Position(), depth) == count


def play(*moves):
    return Position.from_moves([Move(b, s) for b, s in moves])


def snapshot(p: Position):
    return (p.masks[0][:], p.masks[1][:], p.occupied[:], p.status[:], p.won[:], p.drawn, p.forced,
            p.turn, p.winner, p.key, p.ply)


def scratch_key(p: Position) -> int:
    key = ZOBRIST_FORCED[p.forced + 1]
    for index in range(81):
        who = p.cell(index)
        if who is not None:
            key ^= ZOBRIST_CELL[who][index]
    return key


def test_first_move_anywhere_then_sent_to_the_spot_board():
    p = Position()
    assert len(p.legal_moves()) == 81
    p.play(Move(4, 2))
    assert sorted(p.legal_moves()) == [2 * 9 + s for s in range(9)]
    with pytest.raises(IllegalMoveError, match="must be in board 2"):
        p.play(Move(3, 0))


def test_won_board_is_closed_and_sending_there_frees_the_mover():
    q = Position()
    for m in [(4, 0), (0, 4), (4, 3), (3, 4), (4, 6)]:  # X takes 0, 3, 6 of board 4 -> won
        q.play(Move(*m))
    assert q.status[4] == WON_X and q.won[X] == 1 << 4
    # X's last spot 6 sends O to board 6, which is open.
    assert q.forced == 6
    q.play(Move(6, 4))  # O sends X to board 4, which is won: X may play anywhere but in board 4
    assert q.forced == -1
    moves = q.legal_moves()
    assert all(m // 9 != 4 for m in moves)
    assert len(moves) == 81 - 9 - 3  # board 4 closed; O holds 0 4, 3 4 and 6 4
    with pytest.raises(IllegalMoveError, match="board 4 is already won"):
        q.play(Move(4, 8))


def test_drawn_board_and_three_drawn_in_a_line_is_a_tie():
    p = Position()
    # Reaching three drawn boards by play takes dozens of moves: set the masks up directly and
    # check what push does when the last cell of the third board is filled.
    p.masks[X][0], p.masks[O][0] = 0b110001101, 0b001110010   # X: 0 2 3 7 8, O: 1 4 5 6 -> full, no line
    p.masks[X][1], p.masks[O][1] = 0b110001101, 0b001110010
    for b in (0, 1):
        p.occupied[b] = 0x1FF
        p.status[b] = DRAWN
    p.drawn = 0b11
    # Board 2 one cell short of the same drawn pattern, X to move there.
    p.masks[X][2], p.masks[O][2] = 0b110001100, 0b001110010
    p.occupied[2] = p.masks[X][2] | p.masks[O][2]
    p.forced = 2
    p.push(2 * 9 + 0)
    assert p.status[2] == DRAWN
    assert p.winner == TIE
    assert p.outcome().winner is None and "drawn" in p.outcome().reason
    p.pop()
    assert p.winner is None and p.status[2] == OPEN and p.drawn == 0b11


def test_three_won_boards_in_a_line_win():
    p = Position()
    p.masks[X][0] = p.masks[X][4] = 0b111
    p.occupied[0] = p.occupied[4] = 0b111
    p.status[0] = p.status[4] = WON_X
    p.won[X] = 1 | 1 << 4
    p.masks[X][8] = 0b011
    p.occupied[8] = 0b011
    p.forced = 8
    p.push(8 * 9 + 2)
    assert p.winner == X
    assert p.outcome().winner == X
    assert p.legal_moves() == ()


def test_push_pop_restores_everything_over_random_games():
    rng = random.Random(7)
    for _ in range(200):
        p = Position()
        history = []
        while p.winner is None:
            history.append(snapshot(p))
            assert p.key == scratch_key(p)
            p.push(rng.choice(list(p.legal_moves())))
        while history:
            p.pop()
            assert snapshot(p) == history.pop()


def test_copy_is_independent():
    p = play((4, 4))
    q = p.copy()
    q.play(Move(4, 0))
    assert p.ply == 1 and q.ply == 2 and p.cell(36) is None


def test_move_text_round_trip_and_errors():
    for index in range(81):
        move = Move.from_index(index)
        assert Move.parse(str(move)) == move and move.index == index
    with pytest.raises(InvalidMoveError):
        Move(9, 0)
    with pytest.raises(InvalidMoveError, match="not a number"):
        Move.parse("4 x")
    with pytest.raises(InvalidMoveError, match="expected 'BOARD SPOT'"):
        Move.parse("4")


def test_move_line_parsing_matches_the_referee():
    assert parse_move_line("Otter 2 4\n") == ("Otter", Move(2, 4))
    assert parse_move_line("Otter 2 4 extra tokens") == ("Otter", Move(2, 4))  # ignored, like the referee
    assert format_move_line("Otter", Move(2, 4)) == "Otter 2 4\n"
    with pytest.raises(InvalidMoveError, match="expected 'NAME BOARD SPOT', got 'Otter 9'"):
        parse_move_line("Otter 9")
    with pytest.raises(InvalidMoveError, match="board and spot must be 0-8"):
        parse_move_line("Otter 9 9")
    # Nothing but ValueError escapes the parser, whatever the text.
    rng = random.Random(1)
    alphabet = "Ot 0123456789-+_x\n\t."
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        try:
            name, move = parse_move_line(text)
        except ValueError:
            continue
        assert parse_move_line(format_move_line(name, move)) == (name, move)


def test_player_names():
    assert check_player_name("Walrus_2") == "Walrus_2"
    for bad in ["", "two words", "a/b", "x.go", "tab\t", "Walr\u00fcs", "a\x1bb", "a\nb", "a\x00b"]:
        with pytest.raises(ValueError, match="must be one token"):
            check_player_name(bad)


@pytest.mark.parametrize("name, words", [
    ("a" * 253, "253 characters long: at most 252"),        # NAME.go: 256 bytes, one too many
    ("\x00" * 10_000, "10000 characters long"),              # not quoted back at that length
    ("CON", "device name on Windows"),
    ("nul", "device name on Windows"),                       # Windows ignores case
    ("Lpt1", "device name on Windows"),
    ("COM0", "device name on Windows"),
])
def test_names_that_cannot_be_a_file_name_somewhere(name, words):
    with pytest.raises(ValueError, match=words) as error:
        check_player_name(name)
    assert len(str(error.value)) < 300 and "\n" not in str(error.value)


def test_the_longest_name_and_names_like_device_names_are_fine():
    for name in ("a" * 252, "CONSOLE", "COM10", "Nul_", "LPT"):
        assert check_player_name(name) == name


def test_illegal_move_explanations():
    p = play((4, 4))
    assert "occupied" in p.why_illegal(4 * 9 + 4)
    with pytest.raises(IllegalMoveError, match="4 4 is not legal"):
        p.play(Move(4, 4))
    assert p.why_illegal(4 * 9 + 0) == ""


# -- the CodinGame variant -------------------------------------------------------------------------

def all_but_one_decided(variant, x_boards, o_boards, drawn_boards):
    """Boards 0-7 decided as given, board 8 one move from a draw, X to move there."""
    p = Position(variant)
    for b in range(8):
        if b in x_boards:
            p.masks[X][b] = 0b111
        elif b in o_boards:
            p.masks[O][b] = 0b111
        else:
            assert b in drawn_boards
            p.masks[X][b], p.masks[O][b] = 0b110001101, 0b001110010
        p.occupied[b] = p.masks[X][b] | p.masks[O][b]
        if b in x_boards or b in o_boards:
            p.occupied[b] = 0b111
    for b in x_boards:
        p.status[b], p.won[X] = WON_X, p.won[X] | 1 << b
    for b in o_boards:
        p.status[b], p.won[O] = WON_O, p.won[O] | 1 << b
    for b in drawn_boards:
        p.status[b], p.drawn = DRAWN, p.drawn | 1 << b
    p.masks[X][8], p.masks[O][8] = 0b110001100, 0b001110010  # one cell (spot 0) left, no line
    p.occupied[8] = p.masks[X][8] | p.masks[O][8]
    p.forced = 8
    return p


@pytest.mark.parametrize("x_boards,o_boards,winner", [
    ((0, 5, 7), (1, 3), X),          # 3 boards to 2, no line
    ((1, 3), (0, 5, 7), O),
    ((0, 5), (1, 3), TIE),           # equal counts
])
def test_codingame_counts_boards_when_all_are_decided(x_boards, o_boards, winner):
    drawn = tuple(b for b in range(8) if b not in x_boards + o_boards)
    for variant, expected in ((CODINGAME, winner), (WPI, TIE)):
        p = all_but_one_decided(variant, x_boards, o_boards, drawn)
        p.push(8 * 9 + 0)  # board 8 drawn: all boards decided, no line
        assert p.status[8] == DRAWN
        assert p.winner == expected, variant
        if expected != TIE:
            assert "more local boards" in p.outcome().reason


def test_codingame_has_no_drawn_line_quirk():
    for variant, ends in ((WPI, True), (CODINGAME, False)):
        p = Position(variant)
        for b in (0, 1):  # boards 0 and 1 drawn
            p.masks[X][b], p.masks[O][b] = 0b110001101, 0b001110010
            p.occupied[b], p.status[b] = 0x1FF, DRAWN
        p.drawn = 0b11
        p.masks[X][2], p.masks[O][2] = 0b110001100, 0b001110010
        p.occupied[2] = p.masks[X][2] | p.masks[O][2]
        p.forced = 2
        p.push(2 * 9 + 0)  # board 2 drawn: three drawn boards in the top row
        assert (p.winner == TIE) is ends, variant
        assert p.copy().variant == variant


def test_perft_is_the_same_for_both_variants():
    for depth in range(1, 6):
        assert perft(Position(CODINGAME), depth) == PERFT[depth - 1]


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="unknown rules variant"):
        Position("chess")


# -- consistency (Position.check; agent/_core.c's set_position makes the same checks) -----------------

def test_every_position_of_random_games_is_consistent():
    rng = random.Random(17)
    for g in range(60):
        p = Position(CODINGAME if g % 2 else WPI)
        p.check()
        while p.winner is None:
            p.push(rng.choice(list(p.legal_moves())))
            p.check()


def won_board_4():
    return play((4, 0), (0, 4), (4, 3), (3, 4), (4, 6))  # X wins board 4; O is sent to board 6


def set_item(name, index, value):
    return lambda p: getattr(p, name).__setitem__(index, value)


def set_mark(player, board, spot):
    def change(p):
        p.masks[player][board] |= 1 << spot
        p.occupied[board] |= 1 << spot
    return change


def both_global_lines(p):
    for b in range(9):  # X wins boards 0-2 and O 3-5, nine cells each: counts and statuses agree
        p.masks[X][b], p.masks[O][b] = (0b111 if b < 3 else 0), (0b111 if 3 <= b < 6 else 0)
        p.occupied[b] = p.masks[X][b] | p.masks[O][b]
        p.status[b] = WON_X if b < 3 else WON_O if b < 6 else OPEN
    p.won, p.drawn, p.ply, p.turn, p.forced = [0b111, 0b111000], 0, 18, X, -1


@pytest.mark.parametrize("change,error,message", [
    (set_item("masks", X, [0] * 8), ValueError, "masks[0] must hold 9 ints, got 8"),
    (lambda p: p.masks[O].__setitem__(3, 2**64), ValueError, "masks[1][3] must be 0 to 511, got an int beyond 64 bits"),
    (set_item("status", 0, 1.0), TypeError, "status[0] must be an int, not float"),
    (lambda p: setattr(p, "forced", 9), ValueError, "forced must be -1 to 8, got 9"),
    (lambda p: setattr(p, "winner", 3), ValueError, "winner must be -1 to 2, got 3"),
    (lambda p: setattr(p, "key", -1), ValueError, "key must be 0 to 2**64-1, got -1"),
    (set_mark(O, 4, 0), ValueError, "board 4: X and O both hold a cell"),
    (lambda p: [set_mark(O, 4, spot)(p) for spot in (1, 4, 7)], ValueError, "board 4: both X and O have a line"),
    (set_item("status", 6, DRAWN), ValueError, "status[6] is 3 (drawn) but the board's cells make it 0 (open)"),
    (set_item("occupied", 0, 0), ValueError, "occupied[0] does not match the masks"),
    (set_item("won", O, 1), ValueError, "won[1] does not match the statuses"),
    (lambda p: setattr(p, "drawn", 1), ValueError, "drawn does not match the statuses"),
    (lambda p: (set_mark(X, 8, 0)(p), set_mark(X, 8, 1)(p)), ValueError,
     "X holds 5 cells and O 2: X moves first, so X holds as many as O or one more"),
    (lambda p: setattr(p, "turn", X), ValueError, "turn is 0 but X holds 3 cells and O 2"),
    (lambda p: setattr(p, "ply", 4), ValueError, "ply is 4 but 5 cells are held"),
    (lambda p: setattr(p, "forced", 4), ValueError, "forced board 4 is not open"),
    (both_global_lines, ValueError, "both X and O have three boards in a line"),
    (lambda p: setattr(p, "winner", X), ValueError, "winner says X won but the boards say the game goes on"),
    (lambda p: setattr(p, "key", p.key ^ 1), ValueError, "key is not the Zobrist hash of the cells and the forced board"),
])
def test_each_inconsistency_is_named(change, error, message):
    p = won_board_4()
    p.check()
    change(p)
    with pytest.raises(error) as raised:
        p.check()
    assert str(raised.value) == message
