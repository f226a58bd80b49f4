"""python -m ref_sim.show: saved games move by move in the terminal, and its one-line errors."""

import json
import random

import pytest

from ref_sim.series.output.game_line import GameLine
from ref_sim.views import show
from ref_sim.rules import Game

WIN_REASON = "The winning player has won 3 local boards in a row on the global board!"


def random_record(seed, names=("Walrus", "Otter"), extra=False):
    """A GameRecord-shaped dict of a random legal game played to its end."""
    rng = random.Random(seed)
    game = Game()
    p1, p2 = names
    opening, moves = [], []
    while not game.is_over():
        board, spot = rng.choice(game.legal_moves())
        player = (p1, p2)[game.turn]
        game.play(board, spot)
        if len(opening) < 4:
            opening.append([player, board, spot])
        else:
            move = {"player": player, "board": board, "spot": spot,
                    "seconds": round(rng.uniform(0.01, 0.5), 4)}
            if extra:
                move.update(depth=rng.randint(1, 9), score=rng.randint(-99, 99))
            moves.append(move)
    if game.result == "tie":
        result = {"result": "tie", "winner": None, "loser": None, "reason": "tie"}
    else:
        result = {"result": "win", "winner": (p1, p2)[game.result],
                  "loser": (p1, p2)[1 - game.result], "reason": WIN_REASON}
    return {"names": list(names), "time_limit": 0.5, "seed": seed, "p1": p1, "p2": p2,
            "opening": opening, "moves": moves, **result}, game


def decided_game_seed():
    """A seed whose game has a local board won before the last move."""
    for seed in range(100):
        record, game = random_record(seed)
        if any(r in (0, 1) for board, r in enumerate(game.local_results())
               if board != game.moves[-1][0]):
            return seed
    raise AssertionError("no seed with a won board")


@pytest.fixture
def saved(tmp_path):
    record, game = random_record(decided_game_seed())
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record, indent=2))
    return path, record, game


def run(argv, capsys):
    code = show.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_prints_every_move_and_one_board_per_move_after_the_opening(saved, capsys):
    path, record, game = saved
    code, out, err = run([path, "--no-color"], capsys)
    assert code == 0 and err == ""
    total = 4 + len(record["moves"])
    move_lines = [line for line in out.splitlines() if line.startswith("Move ")]
    assert [line.split(":")[0] for line in move_lines] == [f"Move {n}" for n in
                                                           range(1, total + 1)]
    assert sum("(opening)" in line for line in move_lines) == 4
    # One board after the opening, then one after each move: each board has 4 borders.
    assert out.count("+----0----+----1----+----2----+") == 1 + len(record["moves"])
    last = record["moves"][-1]
    assert move_lines[-1].startswith(f"Move {total}: {last['player']} ")
    assert move_lines[-1].split(")")[1].split()[:2] == [str(last["board"]), str(last["spot"])]
    assert out.rstrip().splitlines()[-1].startswith("Result: ")
    if record["result"] == "win":
        assert f"Result: {record['winner']}" in out
    assert "\x1b[" not in out                          # plain text: not a terminal


def test_last_move_won_and_playable_boards_are_marked_in_plain_text(saved, capsys):
    path, record, game = saved
    lines = show.board_lines(game, color=False)
    text = "\n".join(lines)
    assert text.count("[") == 1 and text.count("]") == 1          # the last move only
    board, spot = game.moves[-1]
    row = 1 + 4 * (board // 3) + spot // 3
    column = 1 + 10 * (board % 3) + 3 * (spot % 3)
    assert lines[row][column:column + 3] == f"[{'XO'[game.cells[board][spot]]}]"
    won = [b for b, r in enumerate(game.local_results()) if r in (0, 1) and b != board]
    art_rows = {0: "    X    ", 1: "  | O |  "}
    for b in won:
        middle = lines[1 + 4 * (b // 3) + 1]
        cell = middle[1 + 10 * (b % 3):10 + 10 * (b % 3)]
        assert cell == art_rows[game.local_results()[b]]
    # In the middle of a game the cells the next move may take are starred.
    middle = Game()
    for b, s in game.moves[:10]:
        middle.play(b, s)
    starred = "\n".join(show.board_lines(middle)).count("*")
    boards = {b for b, _ in middle.legal_moves()}
    assert starred == len(middle.legal_moves()) + len(boards)     # cells + global board


def test_drawn_board_and_colour_mode():
    game = Game()
    game.cells[0] = [0, 1, 0, 0, 1, 1, 1, 0, 0]        # X O X / X O O / O X X: no line
    game.cells[4][4] = 1
    game.moves = [(4, 4)]
    assert game.local_result(0) == "draw"
    text = "\n".join(show.board_lines(game))
    assert "  drawn  " in text and "=" in text.splitlines()[1]
    assert "[O]" in text
    coloured = "\n".join(show.board_lines(game, color=True))
    assert "\x1b[7m" in coloured and "[O]" not in coloured


def test_ply_shows_one_position(saved, capsys):
    path, record, game = saved
    code, out, _ = run([path, "--ply", 6, "--no-color"], capsys)
    assert code == 0
    assert "Position after move 6 of" in out
    assert out.count("+----0----+") == 1
    assert [l for l in out.splitlines() if l.startswith("Move ")][0].startswith("Move 6:")
    assert "Next: " in out
    code, out, _ = run([path, "--ply", 0], capsys)
    assert code == 0 and "the empty board" in out and "[" not in out.split("\n", 3)[3]
    total = 4 + len(record["moves"])
    code, out, _ = run([path, "--ply", total], capsys)
    assert code == 0 and "Result: " in out


def test_series_numbered_by_game_field_in_finishing_order(tmp_path, capsys):
    """games.jsonl lists games as they finish; "game" is their number in the series."""
    path = tmp_path / "games.jsonl"
    records = [random_record(seed)[0] for seed in range(3)]
    for number, record in zip((3, 1, 2), records):
        record["game"] = number
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, out, _ = run([path], capsys)
    assert [line.split()[0] for line in out.strip().splitlines()[1:]] == ["1", "2", "3"]
    code, out, _ = run([path, "--game", 3, "--ply", 4, "--no-color"], capsys)
    move4 = records[0]["opening"][3]
    assert code == 0 and out.startswith("Game 3: ")
    assert f"Move 4: {move4[0]} (O) {move4[1]} {move4[2]}" in out
    code, _, err = run([path, "--game", 4], capsys)
    assert code == 2 and "holds 3 games (1-3)" in err


def test_series_lists_games_and_selects_one(tmp_path, capsys):
    path = tmp_path / "games.jsonl"
    records = [random_record(seed, extra=True)[0] for seed in range(3)]
    for pair, record in enumerate(records, 1):
        record["pair"] = pair
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, out, _ = run([path], capsys)
    assert code == 0
    lines = out.strip().splitlines()
    assert "3 games" in lines[0] and len(lines) == 4
    assert lines[1].split()[0] == "1" and "Walrus (X) vs Otter (O)" in lines[1]
    code, out, _ = run([path, "--game", 2, "--no-color"], capsys)
    assert code == 0 and out.startswith("Game 2: Walrus (X) vs Otter (O)")
    assert "depth " in out and "score " in out
    assert out.count("+----0----+") == 1 + len(records[1]["moves"])


@pytest.mark.parametrize("case, message", [
    ("missing", "no such file"),
    ("not-json", "not JSON"),
    ("not-a-record", "expected a game record"),
    ("game-out-of-range", "--game 4 is out of range"),
    ("ply-out-of-range", "--ply 999 is out of range"),
    ("negative-ply", "--ply -1 is out of range"),
    ("illegal-move", "is illegal"),
    ("series-without-game", "choose one with --game N"),
    ("wrong-suffix", "must end in .svg"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, case, message):
    record, _ = random_record(1)
    game = tmp_path / "game.json"
    game.write_text(json.dumps(record))
    series = tmp_path / "games.jsonl"
    series.write_text((json.dumps(record) + "\n") * 3)
    argv = {
        "missing": [tmp_path / "nope.json"],
        "not-json": [tmp_path / "bad.json"],
        "not-a-record": [tmp_path / "list.json"],
        "game-out-of-range": [series, "--game", 4],
        "ply-out-of-range": [game, "--ply", 999],
        "negative-ply": [game, "--ply", -1],
        "illegal-move": [tmp_path / "illegal.json"],
        "series-without-game": [series, "--ply", 5],
        "wrong-suffix": [game, "--svg", tmp_path / "x.png"],
    }[case]
    (tmp_path / "bad.json").write_text("{\"names\": [")
    (tmp_path / "list.json").write_text("[1, 2]")
    illegal = dict(record, moves=[dict(record["moves"][0], board=9)] + record["moves"][1:])
    (tmp_path / "illegal.json").write_text(json.dumps(illegal))
    code, out, err = run(argv, capsys)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and message in err
    assert err.startswith("python -m ref_sim.show: error: ")


def test_svg_of_a_saved_game(saved, tmp_path, capsys):
    path, record, game = saved
    out_file = tmp_path / "final.svg"
    code, out, _ = run([path, "--svg", out_file], capsys)
    assert code == 0 and out.strip() == str(out_file)
    text = out_file.read_text()
    assert text.count('class="mark ') == sum(c is not None for row in game.cells for c in row)
    assert "Walrus (X) vs Otter (O)" in text


@pytest.mark.e2e
def test_a_record_from_the_referee_simulator(scripted, tmp_path, capsys):
    """A GameRecord saved by run_game shows as is: here a time-out after three moves."""
    def act(turn):
        if turn.ply < 3:
            turn.play_legal()
    record, _ = scripted(act, time_limit=0.3)
    path = tmp_path / "record.json"
    record.save(path)
    code, out, err = run([path, "--no-color"], capsys)
    assert code == 0 and err == ""
    assert [l.split(":")[0] for l in out.splitlines() if l.startswith("Move ")] == \
        [f"Move {n}" for n in range(1, 8)]
    assert out.count("+----0----+") == 4
    assert out.rstrip().endswith(f"Result: {record.winner} ({'XO'[record.p1 != record.winner]})"
                                 " wins: Time out!")


def test_a_game_without_winner_is_a_draw_as_in_every_summary():
    # The records keep "tie" (their format); what a user reads says "draw", as the Score
    # lines and DrawRatio of the series tools do.
    for seed in range(300):
        record, game = random_record(seed)
        if record["result"] == "tie":
            break
    else:
        raise AssertionError("no drawn game in 300 seeds")
    line = GameLine.from_json(show.record_line(record))
    assert show.result_text(line) == "Result: draw"
    assert show.summary(1, line).endswith(": draw, " + f"{len(game.moves)} moves")
    assert game.render().splitlines()[-1] == "Result: draw"
