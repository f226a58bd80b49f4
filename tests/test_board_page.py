"""The analysis board (ref_sim/views/board_page.py, uttt-board): the command, and the page in a real
headless Chromium, its engine in a Web Worker: positions from links and pasted moves, the lines it
shows as it deepens, a game played through the page against it, every answer the Python search's
at the same depth, and the replay page's links to it."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from agent.engines import make_evaluator
from agent.limits import SearchLimit
from agent.rules import CODINGAME, Position
from agent.search import AlphaBeta
from ref_sim.views import board_page, replay

ROOT = Path(__file__).resolve().parent.parent
from scripts.headless_chromium import NO_CHROMIUM, Browser, find_chromium  # noqa: E402

CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
#: The page's engine: the fitted evaluation (board_page.page_data), the search's default features.
EVALUATOR = make_evaluator("fitted")


def python_search(rules: str, moves, depth: int):
    """What the pure-Python search finds at ``depth`` with a fresh table, as the page searches."""
    result = AlphaBeta(EVALUATOR, move_space=81, hash_mb=256).search(Position.from_moves(moves, rules),
                                                                     SearchLimit(depth=depth))
    return [result.move, result.score, result.depth, result.nodes, result.pv]


# -- the command -------------------------------------------------------------------------------

def test_the_command_writes_the_page_and_prints_the_link_to_its_position(tmp_path, capsys):
    out = tmp_path / "b.html"
    assert board_page.main(["-o", str(out), "--moves", "4 4, 4 0", "--rules", CODINGAME]) == 0
    assert capsys.readouterr().out.strip() == out.resolve().as_uri() + "#rules=codingame&moves=4440"
    text = out.read_text(encoding="utf-8")
    assert 'id="board-data"' in text and "new Worker(URL.createObjectURL" in text
    # Everything is inside: the module, the tables, the scripts; nothing to fetch from anywhere.
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in text and "<link" not in text and " src=" not in text and "fetch(" not in text


@pytest.mark.parametrize("argv, message", [
    (["--moves", "4 4, 5 0"], "--moves: move 2 ('5 0'): 5 0 is not legal: the move must be in board 4"),
    (["--moves", "44"], "--moves: move 1 ('44'): expected 'BOARD SPOT', got '44'"),
])
def test_bad_moves_are_one_line_and_exit_2(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as stop:
        board_page.main(["-o", str(tmp_path / "b.html"), *argv])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().endswith("error: " + message)
    assert not (tmp_path / "b.html").exists()


# -- in a browser ----------------------------------------------------------------------------

@pytest.fixture
def browser(tmp_path):
    browser = Browser(CHROMIUM, tmp_path / "profile")
    yield browser
    browser.close()


def wait_for(browser, expression: str, seconds: float = 60):
    """Poll ``expression`` in the page until it is truthy; its value. A hang check, not a timing."""
    deadline = time.monotonic() + seconds
    while True:
        value = browser.js(expression)
        if value:
            return value
        assert not browser.errors(), browser.errors()
        assert time.monotonic() < deadline, f"still false after {seconds} s: {expression}"
        time.sleep(0.05)


@pytest.mark.e2e
@needs_chromium
def test_the_page_analyses_a_linked_position_as_the_python_search_does(tmp_path, browser):
    page = board_page.write_page(tmp_path / "board.html")
    moves = [40, 36, 2, 20]                                   # 4 4, 4 0, 0 2, 2 2
    browser.open(board_page.position_link(page.as_uri(), "wpi", moves) + "&analyse=1")
    wait_for(browser, "document.body.dataset.ready === '1'")
    assert browser.js("document.getElementById('errors').hidden") is True
    assert browser.js("document.querySelectorAll('#board .cell').length") == 81
    assert browser.js("document.querySelectorAll('#board .cell[data-mark=\"X\"], "
                      "#board .cell[data-mark=\"O\"]').length") == 4
    assert browser.js("document.body.dataset.ply") == "4"
    wait_for(browser, "Number(document.body.dataset.depth) >= 7")
    shown = browser.js("lines.map(r => [r.move, r.score, r.depth, r.nodes, r.pv])")
    assert [r[2] for r in shown] == list(range(len(shown), 0, -1))    # the deepest first, each depth once
    for found in shown[-7:]:
        assert found == python_search("wpi", moves, found[2]), found[2]
    assert browser.js("document.querySelectorAll('#board .engine-best').length") == 1
    browser.screenshot(tmp_path / "analysis.png")
    assert (tmp_path / "analysis.png").stat().st_size > 10_000
    browser.js("document.getElementById('analyse').click()")     # stop: the worker is replaced
    assert browser.js("document.getElementById('analyse').textContent") == "Analyse"
    assert browser.errors() == []


@pytest.mark.e2e
@needs_chromium
@pytest.mark.parametrize("rules", ["wpi", CODINGAME])
def test_a_game_played_through_the_page_against_the_engine(tmp_path, browser, rules):
    """We click X's moves (random legal cells), the engine answers as O at depth 3: every answer
    legal and the Python search's; then the moves step back and forth."""
    page = board_page.write_page(tmp_path / "board.html")
    browser.open(f"{page.as_uri()}#rules={rules}")
    wait_for(browser, "document.body.dataset.ready === '1'")
    browser.js("document.getElementById('limit-kind').value = 'depth';"
               "document.getElementById('limit-value').value = '3';"
               "{ const side = document.getElementById('side'); side.value = 'O'; side.dispatchEvent(new Event('change')); }")
    rng = random.Random(rules)
    position = Position(rules)
    while position.winner is None:
        if position.turn == 0:
            legal = browser.js("[...document.querySelectorAll('#board .cell.legal')].map(c => Number(c.dataset.cell))")
            assert sorted(legal) == sorted(position.legal_moves())
            move = rng.choice(legal)
            browser.js(f"document.querySelector('#board .cell[data-cell=\"{move}\"]')"
                       ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
        else:
            answers = len(position.moves_played()) // 2 + 1
            wait_for(browser, f"window.engineLog.length >= {answers}")
            answer = browser.js("window.engineLog[window.engineLog.length - 1]")
            assert answer["moves"] == position.moves_played() and answer["rules"] == rules
            assert answer["move"] in position.legal_moves()
            expected = python_search(rules, position.moves_played(), 3)
            assert [answer[k] for k in ("move", "score", "depth", "nodes", "pv")] == expected
            move = answer["move"]
        position.push(move)
        wait_for(browser, f"Number(document.body.dataset.ply) >= {position.ply}")  # the engine may be on already
    assert browser.js("document.body.dataset.over") == "1"
    assert len(browser.js("window.engineLog")) == position.ply // 2
    browser.screenshot(tmp_path / "game.png")
    browser.key("ArrowLeft")
    browser.key("ArrowLeft")
    assert browser.js("document.body.dataset.ply") == str(position.ply - 2)
    assert browser.js("document.body.dataset.over") == ""
    browser.key("Home")
    assert browser.js("document.querySelectorAll('#board .mark').length") == 0
    browser.key("End")
    assert browser.js("document.body.dataset.ply") == str(position.ply)
    assert browser.errors() == []


@pytest.mark.e2e
@needs_chromium
def test_pasted_moves_set_the_position_and_a_bad_one_says_so(tmp_path, browser):
    page = board_page.write_page(tmp_path / "board.html")
    browser.open(page.as_uri())
    wait_for(browser, "document.body.dataset.ready === '1'")
    browser.js("document.getElementById('position').value = '4 4, 4 0, 0 4';"
               "document.getElementById('load').click()")
    assert browser.js("document.body.dataset.ply") == "3"
    browser.js("document.getElementById('position').value = '4 4, 5 0';"
               "document.getElementById('load').click()")
    assert "Move 2 (5 0) is not legal" in browser.js("document.getElementById('errors').textContent")
    assert browser.js("document.body.dataset.ply") == "1"


@pytest.mark.e2e
@needs_chromium
def test_each_position_of_a_replay_links_to_the_board(tmp_path, browser):
    from test_replay import file_protocol_line, random_game, write_series

    folder = write_series(tmp_path / "run", [file_protocol_line(1, *random_game(5))])
    out = replay.write_page(replay.read_run(folder), tmp_path / "replay.html")
    assert (tmp_path / "board.html").is_file()
    browser.open(out.as_uri())
    wait_for(browser, "document.body.dataset.ready === '1'")
    browser.key("Home")
    for _ in range(6):
        browser.key("ArrowRight")
    href = browser.js("document.getElementById('board-link').href")
    game = replay.read_run(folder)["games"][0]
    cells = [9 * m["board"] + m["spot"] for m in game["moves"][:6]]
    assert href == board_page.position_link((tmp_path / "board.html").as_uri(), game["rules"], cells)
    browser.open(href)
    wait_for(browser, "document.body.dataset.ready === '1'")
    assert browser.js("document.body.dataset.ply") == "6"
    assert browser.errors() == []
