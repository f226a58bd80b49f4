"""ref_sim.render: the SVG is well-formed and shows every mark and highlight; PNG through matplotlib."""

import builtins
import xml.etree.ElementTree as ET

import pytest

from ref_sim.views import render
from ref_sim.rules import Game

SVG = "{http://www.w3.org/2000/svg}"
# A random game of 45 moves: O has won boards 0 and 7, and O is sent to board 4.
MOVES = ("33 32 25 57 71 10 07 75 53 31 18 88 87 74 42 23 38 81 17 77 76 60 01 12 28 85 50 "
         "03 30 04 48 86 67 78 84 46 68 83 37 70 05 51 11 14 44")


def elements(svg_text, cls):
    root = ET.fromstring(svg_text)
    return [e for e in root.iter() if cls in (e.get("class") or "").split()]


def test_parse_moves_accepts_any_spacing_and_rejects_nonsense():
    assert render.parse_moves("4 0, 0 3") == render.parse_moves("40 03") == [(4, 0), (0, 3)]
    for bad in ("4 0 0", "49", "403 1", "hello", "4 0 x", "4 0 0 3 then 3 8", "\u0664 0"):
        with pytest.raises(ValueError):
            render.parse_moves(bad)
    with pytest.raises(ValueError, match="move 2 of the list is illegal"):
        render.position_from_moves([(4, 0), (4, 1)])
    # "hello" used to draw an empty board; the empty board is asked for with "".
    with pytest.raises(ValueError, match="'hello' is not a move list"):
        render.parse_moves("hello")
    assert render.parse_moves("") == [] and render.parse_moves("[(4, 0); (0, 3)]") == [(4, 0), (0, 3)]


def test_svg_has_one_mark_per_occupied_cell_and_the_highlights():
    game = render.position_from_moves(render.parse_moves(MOVES))
    text = render.to_svg(render.scene(game, title="Walrus (X) vs Otter (O)"))
    root = ET.fromstring(text)
    assert root.tag == SVG + "svg"
    occupied = sum(cell is not None for board in game.cells for cell in board)
    assert occupied == 45
    marks = elements(text, "mark")
    assert len(marks) == occupied
    assert {e.tag for e in marks} == {SVG + "path", SVG + "circle"}
    x_marks = [e for e in marks if "x" in e.get("class").split()]
    assert len(x_marks) == sum(c == 0 for board in game.cells for c in board)

    last = elements(text, "last-move")
    assert len(last) == 1
    x, y = render.cell_origin(*game.moves[-1])
    assert float(last[0].get("x")) == pytest.approx(x + 2)
    assert float(last[0].get("y")) == pytest.approx(y + 2)

    to_play = elements(text, "to-play")
    assert len(to_play) == len(render.boards_to_play(game)) == 1       # sent to board 4
    assert (float(to_play[0].get("x")), float(to_play[0].get("y"))) == render.board_origin(4)

    won = elements(text, "won")
    results = game.local_results()
    assert len(won) == sum(r in (0, 1) for r in results)
    assert len(elements(text, "coordinate")) == 18
    assert "Walrus (X) vs Otter (O)" in text


def test_won_drawn_and_empty_positions():
    game = Game()
    game.cells[0] = [0, 1, 0, 0, 1, 1, 1, 0, 0]        # drawn
    game.cells[8] = [1, 1, 1, None, 0, 0, None, None, 0]   # won by O
    text = render.to_svg(render.scene(game))
    assert len(elements(text, "drawn")) == 1
    won = elements(text, "won")
    assert len(won) == 1 and won[0].tag == SVG + "circle"
    empty = render.to_svg(render.scene(Game()))
    assert elements(empty, "mark") == [] and elements(empty, "last-move") == []
    assert len(elements(empty, "to-play")) == 9          # the first move may go anywhere
    assert "&lt;b&gt;" in render.to_svg(render.scene(Game(), title="<b>"))


def test_png_is_a_real_picture(tmp_path):
    pytest.importorskip("matplotlib", reason="PNG output needs the plot extra (matplotlib)")
    game = render.position_from_moves(render.parse_moves(MOVES))
    path = tmp_path / "position.png"
    render.save(render.scene(game), path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20_000


def test_png_without_matplotlib_is_one_clear_line(tmp_path, monkeypatch, capsys):
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    assert render.main(["40 03", "--out", str(tmp_path / "p.png")]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip().splitlines() == [
        "python -m ref_sim.render: error: " + render.MATPLOTLIB_MISSING]
    assert "pip install -e '.[plot]'" in err
    assert not (tmp_path / "p.png").exists()


def test_command_line_writes_svg_and_rejects_bad_input(tmp_path, capsys):
    path = tmp_path / "p.svg"
    assert render.main(["4 0 0 3", "--out", str(path)]) == 0
    assert len(elements(path.read_text(), "mark")) == 2
    assert render.main(["4 0 4 1", "--out", str(path)]) == 2
    assert render.main(["4 0", "--out", str(tmp_path / "p.txt")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("python -m ref_sim.render: error: ")
                                 for line in err)
