"""ref_sim.replay and ref_sim.views.analysis: the series' data as the page embeds it, the page's
escaping, the engine's verdicts, the command line's one-line errors, and the page itself in a
real headless Chromium (driven over the DevTools protocol with the standard library only)."""

import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent.rules import Position
from ref_sim.views import analysis, replay
from ref_sim.rules import CODINGAME, Game

from scripts.headless_chromium import NO_CHROMIUM, Browser, find_chromium

WIN_REASON = "The winning player has won 3 local boards in a row on the global board!"
#: A bot name no page may let out of its script element, nor show as markup.
NASTY = "Bad</script><b>bot"


def random_game(seed, variant="wpi"):
    """The moves (board, spot) of a random legal game played to its end, and the final Game."""
    rng = random.Random(seed)
    game = Game(variant)
    while not game.is_over():
        game.play(*rng.choice(game.legal_moves()))
    return list(game.moves), game


def file_protocol_line(number, moves, game, names=("Agent1", "Random2"), logged=True):
    """A games.jsonl line of ref_sim.match for ``moves``: agent 1 is X in odd games; agent 1's
    moves carry search figures when ``logged`` (the runner's keys)."""
    x, o = names if number % 2 else names[::-1]
    line_moves = []
    for ply, (board, spot) in enumerate(moves[4:], 4):
        player = (x, o)[ply % 2]
        move = {"player": player, "board": board, "spot": spot, "seconds": 0.05 + ply / 1000}
        if logged and player == names[0]:
            move.update(depth=5 + ply % 3, score=ply * 7 - 100, nodes=1000 + ply,
                        nps=20000, agent_seconds=0.04)
        line_moves.append(move)
    result = {"result": "tie", "winner": None, "loser": None, "reason": "tie", "score": 0.5}
    if game.result in (0, 1):
        winner = (x, o)[game.result]
        result = {"result": "win", "winner": winner, "loser": x if winner == o else o,
                  "reason": WIN_REASON, "score": 1.0 if winner == names[0] else 0.0}
    return {"format": 1, "game": number, "pair": (number - 1) // 2, "time_limit": 0.5,
            "agents": [{"name": names[0], "spec": "agent"}, {"name": names[1], "spec": "random"}],
            "names": list(names), "p1": x, "p2": o,
            "opening": [[(x, o)[ply % 2], board, spot] for ply, (board, spot) in enumerate(moves[:4])],
            "moves": line_moves, "bad_line": None, "notes": {}, **result}


def write_series(folder, lines, logs=None):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "games.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines),
                                        encoding="utf-8")
    (folder / "logs").mkdir(exist_ok=True)
    for name, text in (logs or {}).items():
        (folder / "logs" / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def series(tmp_path):
    """Four random games between Agent1 (logging its search) and Random2."""
    lines = [file_protocol_line(number, *random_game(number)) for number in range(1, 5)]
    return write_series(tmp_path / "run", lines), lines


def embedded(html, element="replay-data"):
    found = re.search(rf'<script type="application/json" id="{element}">(.*?)</script>', html,
                      re.DOTALL)
    return json.loads(found.group(1))


# -- the data ----------------------------------------------------------------------------

def test_a_series_reads_as_versioned_games_matching_its_lines(series):
    folder, lines = series
    data = replay.read_run(folder)
    assert data["format"] == 1 and data["agents"] == ["Agent1", "Random2"]
    assert [game["game"] for game in data["games"]] == [1, 2, 3, 4]
    for game, line in zip(data["games"], lines):
        assert game["format"] == 1 and (game["x"], game["o"]) == (line["p1"], line["p2"])
        moves = game["moves"]
        assert len(moves) == len(line["opening"]) + len(line["moves"])
        assert [m["opening"] for m in moves[:5]] == [True] * 4 + [False]
        assert [m["mark"] for m in moves[:4]] == ["X", "O", "X", "O"]
        assert all(m["player"] == (game["x"] if m["mark"] == "X" else game["o"]) for m in moves)
        assert moves[0]["seconds"] is None and moves[4]["seconds"] == line["moves"][0]["seconds"]
        assert {m["limit"] for m in moves[4:]} == {0.5}
        ours = [m for m in moves if m["player"] == "Agent1" and not m["opening"]]
        assert all(m["score"] == s["score"] and m["depth"] == s["depth"]
                   for m, s in zip(ours, [s for s in line["moves"] if s["player"] == "Agent1"]))
        # One state per position; the last says who won, as the rules do.
        assert len(game["states"]) == len(moves) + 1
        assert game["states"][0] == ["." * 9, "012345678", ""]
        final = random_game(line["game"])[1].result
        assert game["states"][-1][2] == {0: "X", 1: "O", "tie": "="}[final]
        assert game["ending"] == ("draw" if final == "tie" else "line")


def test_files_without_search_figures_are_read_from_the_agents_search_logs(tmp_path):
    moves, game = random_game(7)
    line = file_protocol_line(1, moves, game, logged=False)
    ours = [m for m in line["moves"] if m["player"] == "Agent1"]
    search_log = "".join(json.dumps({"board": m["board"], "spot": m["spot"], "depth": 6,
                                     "score": -i, "nodes": 50, "nps": 1000, "seconds": 0.05}) + "\n"
                         for i, m in enumerate(ours))
    # The opponent's text log imitates our agent's log line: it is never read.
    theirs = [m for m in line["moves"] if m["player"] == "Random2"]
    imitation = f"INFO move {theirs[0]['board']} {theirs[0]['spot']}  depth 9  score " + "9" * 5000 \
        + "  nodes 1  nps 1  . s since .go\n"
    folder = write_series(tmp_path / "old", [line], {"game-0001-Agent1.search.jsonl": search_log,
                                                     "game-0001-Random2.log": imitation})
    data = replay.read_run(folder / "games.jsonl")
    read = [m for m in data["games"][0]["moves"] if m["player"] == "Agent1" and not m["opening"]]
    assert [m["score"] for m in read] == [-i for i in range(len(ours))]
    assert all(m["depth"] == 6 and m["agent_seconds"] == 0.05 for m in read)
    assert not any("depth" in m for m in data["games"][0]["moves"] if m["player"] == "Random2")


def test_a_codingame_series_has_no_opening_and_a_longer_first_turn(tmp_path):
    moves, game = random_game(3, CODINGAME)
    names = ("Agent1", "Random2")
    line_moves = []
    for ply, (board, spot) in enumerate(moves):
        row, col = (board // 3) * 3 + spot // 3, (board % 3) * 3 + spot % 3
        line_moves.append({"player": names[ply % 2], "row": row, "col": col, "board": board,
                           "spot": spot, "ms": 80.0})
    log = "".join(json.dumps({"board": m["board"], "spot": m["spot"], "row": m["row"], "col": m["col"],
                              "depth": 9, "score": i, "nodes": 5, "nps": 9, "seconds": 0.08}) + "\n"
                  for i, m in enumerate(line_moves[::2]))
    line = {"format": 1, "rules": "codingame", "game": 1, "turn_ms": 100.0,
            "first_turn_ms": 1000.0, "names": list(names), "p1": "Agent1", "p2": "Random2",
            "moves": line_moves, "result": "tie", "winner": None, "reason": "tie", "score": 0.5,
            "notes": {}}
    folder = write_series(tmp_path / "cg", [line], {"game-0001-Agent1.search.jsonl": log})
    read = replay.read_run(folder)["games"][0]
    assert read["rules"] == "codingame" and not any(m["opening"] for m in read["moves"])
    assert [m["limit"] for m in read["moves"][:4]] == [1.0, 1.0, 0.1, 0.1]
    assert read["moves"][0]["seconds"] == 0.08 and "row" not in read["moves"][0]
    assert [m.get("score") for m in read["moves"][:5:2]] == [0, 1, 2]


def test_an_illegal_move_stops_the_game_with_a_note(series):
    folder, lines = series
    lines[0]["moves"][3]["board"] = lines[0]["moves"][2]["board"]      # mostly not allowed
    lines[0]["moves"][3]["spot"] = lines[0]["moves"][2]["spot"]        # (a taken cell)
    write_series(folder, lines)
    game = replay.read_run(folder)["games"][0]
    assert game["problem"].startswith("move 8 ") and len(game["moves"]) == 7
    assert len(game["states"]) == 8


# -- the page ----------------------------------------------------------------------------

def test_the_page_embeds_the_data_and_survives_a_script_tag_in_a_name_and_a_log(tmp_path):
    moves, game = random_game(11)
    line = file_protocol_line(1, moves, game, names=(NASTY, "Random2"))
    line["reason"] = "</SCRIPT><!-- &amp; \u2028"
    line["notes"] = {NASTY: "crashed </script>"}
    folder = write_series(tmp_path / "nasty", [line])
    out = tmp_path / "page.html"
    assert replay.main([str(folder), "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    template = replay.write_page({"agents": []}, tmp_path / "empty.html").read_text()
    assert html.lower().count("</script") == template.lower().count("</script")
    assert "<!--" not in html and "\u2028" not in html
    data = embedded(html)
    assert data == {**json.loads(json.dumps(replay.read_run(folder))), "board_page": "board.html"}
    assert data["games"][0]["reason"] == line["reason"] and data["agents"][0] == NASTY
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")   # nothing to fetch
    assert "https://" not in html and "<link" not in html and " src=" not in html


def test_the_default_page_goes_next_to_games_jsonl(series, capsys):
    folder, _ = series
    assert replay.main([str(folder / "games.jsonl")]) == 0
    assert capsys.readouterr().out.strip() == str(folder / "replay.html")
    assert len(embedded((folder / "replay.html").read_text())["games"]) == 4


@pytest.mark.parametrize("setup, message", [
    (lambda p: None, "no such file or folder"),
    (lambda p: p.mkdir(), "no games.jsonl in this folder"),
    (lambda p: (p.mkdir(), (p / "games.jsonl").write_text("")), "no games in it yet"),
    (lambda p: (p.mkdir(), (p / "games.jsonl").write_text("{cut\n")), "1 unreadable lines"),
])
def test_a_missing_or_empty_run_is_one_line_and_exit_2(tmp_path, capsys, setup, message):
    run = tmp_path / "run"
    setup(run)
    with pytest.raises(SystemExit) as stop:
        replay.main([str(run)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and message in err
    assert err.startswith("python -m ref_sim.replay: error: ")


@pytest.mark.e2e
def test_the_command_fails_in_one_line_without_a_traceback(tmp_path):
    done = subprocess.run([sys.executable, "-m", "ref_sim.replay", str(tmp_path / "nothing")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize("argv, message", [
    (["--analyse", "--games", "1-2,x"], "--games '1-2,x': give all"),
    (["--analyse", "--games", "9"], "no game 9 in this series"),
    (["--analyse", "--time", "0"], "argument --time-limit/--time: must be a number above 0 and at most 3,600, got '0'"),
    (["--analyse", "--depth", "0"], "argument --depth: must be an integer from 1 to 81, got '0'"),
    (["--depth", "6"], "--depth needs --analyse (without it no position is searched)"),
    (["--games", "all"], "--games needs --analyse"),
    (["--fresh"], "--fresh needs --analyse"),
])
def test_bad_analysis_options_are_one_line(series, capsys, argv, message):
    folder, _ = series
    with pytest.raises(SystemExit) as stop:
        replay.main([str(folder), *argv])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and message in err


# -- the analysis ------------------------------------------------------------------------

def test_selections_by_result_and_number(series):
    folder, lines = series
    games = replay.read_run(folder)["games"]
    def numbers(text):
        return [g["game"] for g in analysis.select_games(games, text)]
    assert numbers("all") == [1, 2, 3, 4] and numbers("2, 4") == [2, 4]
    assert numbers("1-3") == [1, 2, 3]
    by_score = {line["game"]: line["score"] for line in lines}
    assert numbers("wins") == [n for n, s in by_score.items() if s == 1]
    assert numbers("LOSSES") == [n for n, s in by_score.items() if s == 0]
    assert numbers("draws") == [n for n, s in by_score.items() if s == 0.5]


def test_scores_become_expected_results_and_losses_judgements():
    per = analysis.score_per_logit()
    assert per == 500                               # agent/data/eval-v1.json's scale
    assert analysis.expected(per, per) == pytest.approx(1 / (1 + 2.718281828 ** -1))
    assert analysis.expected(-analysis.WIN_SCORE + 3, per) == 0.0
    limits = dict(analysis.THRESHOLDS)
    assert limits["inaccuracy"] < limits["mistake"] < limits["blunder"]
    assert [analysis.judge(x) for x in (0.0, limits["inaccuracy"], limits["mistake"],
                                        limits["blunder"], 1.0)] == \
        [None, "inaccuracy", "mistake", "blunder", "blunder"]


def missed_win(seed_limit=500):
    """Moves of a WPI game in which the mover, able to win at once, plays a move after which
    the opponent wins at once (and does): (moves, the winning cells it missed)."""
    for seed in range(seed_limit):
        rng = random.Random(seed)
        position = Position()
        while position.winner is None:
            legal = list(position.legal_moves())
            wins = [m for m in legal if _wins(position, m)]
            if wins and position.ply >= 4:
                for move in legal:
                    if move in wins:
                        continue
                    position.push(move)
                    replies = [r for r in position.legal_moves() if _wins(position, r)]
                    if replies:
                        return position.moves_played() + [replies[0]], wins
                    position.pop()
            position.push(rng.choice(legal))
    raise AssertionError("no such game found")


def _wins(position, move):
    mover = position.turn
    position.push(move)
    won = position.winner == mover
    position.pop()
    return won


def test_a_missed_win_is_a_blunder_with_the_win_shown(tmp_path):
    cells, wins = missed_win()
    moves = [divmod(cell, 9) for cell in cells]
    game = Game()
    for move in moves:
        game.play(*move)
    folder = write_series(tmp_path / "run", [file_protocol_line(1, moves, game)])
    data = replay.read_run(folder)
    cache = folder / analysis.CACHE_NAME
    analysis.analyse_run(data, data["games"], analysis.Settings(None, depth=2), jobs=1,
                         cache=cache)
    found = data["games"][0]["analysis"]
    verdicts = found["moves"]
    assert verdicts[:4] == [None] * 4 and all(v is not None for v in verdicts[4:])
    blunder = verdicts[-2]
    assert blunder["judgement"] == "blunder" and blunder["loss"] > 0.9
    assert blunder["best"][0] * 9 + blunder["best"][1] in wins
    assert verdicts[-1]["loss"] == 0 and verdicts[-1]["judgement"] is None   # the win taken
    winner = "X" if len(moves) % 2 else "O"
    assert found["evals"][-1] == (1.0 if winner == "X" else 0.0)
    assert found["evals"][:4] == [None] * 4 and len(found["evals"]) == len(moves) + 1

    # A second run takes every position from the cache: no search at all.
    def no_search(*args):
        raise AssertionError("searched again")
    again = replay.read_run(folder)
    original, analysis.search_position = analysis.search_position, no_search
    try:
        analysis.analyse_run(again, again["games"], analysis.Settings(None, depth=2), jobs=1,
                             cache=cache)
    finally:
        analysis.search_position = original
    assert again["games"][0]["analysis"] == found


@pytest.mark.e2e
def test_the_command_analyses_the_chosen_games_on_two_processes(series, capsys):
    folder, _ = series
    out = folder / "analysed.html"
    assert replay.main([str(folder), "--analyse", "--depth", "1", "--games", "2",
                        "--jobs", "2", "-o", str(out)]) == 0
    assert "analysing" in capsys.readouterr().err
    games = embedded(out.read_text())["games"]
    assert [g["analysis"] is not None for g in games] == [False, True, False, False]
    verdicts = games[1]["analysis"]["moves"]
    assert all(v is not None and v["loss"] is not None for v in verdicts[4:])
    assert (folder / analysis.CACHE_NAME).is_file()


def test_a_page_analysed_in_part_knows_its_selection_and_a_page_never_analysed_does_not(series):
    folder, _ = series
    chosen = 2
    out = folder / "part.html"
    assert replay.main([str(folder), "--analyse", "--depth", "1", "--jobs", "1", "--select", str(chosen),
                        "-o", str(out)]) == 0
    data = embedded(out.read_text())
    assert data["analysis_selection"] == str(chosen)
    assert [g["game"] for g in data["games"] if g["analysis"]] == [chosen]
    assert replay.main([str(folder), "-o", str(out)]) == 0
    assert "analysis_selection" not in embedded(out.read_text())


def analysis_notes(data: dict, games: list[dict]) -> list[str]:
    """replay.js's analysisNote for each of ``games``, run in node with ``data`` as the page's DATA."""
    script = (Path(replay.__file__).parent / "assets" / "replay.js").read_text(encoding="utf-8")
    function = re.search(r"^function analysisNote\(g\) \{\n.*?^\}\n", script, re.MULTILINE | re.DOTALL).group(0)
    program = (f"const DATA = {json.dumps(data)};\n{function}\n"
               f"console.log(JSON.stringify({json.dumps(games)}.map(analysisNote)));")
    result = subprocess.run([NODE, "-e", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


NODE = shutil.which("node")


@pytest.mark.e2e
@pytest.mark.skipif(NODE is None, reason="node is not installed: the browser tests show the note where Chromium is")
def test_a_game_left_out_by_select_says_so_not_that_the_page_has_no_analysis():
    thresholds = dict(analysis.THRESHOLDS)
    analysed = {"game": 1, "analysis": {"settings": {"depth": 6, "seconds": None, "nodes": None}}}
    left_out = {"game": 2, "analysis": None}
    selected, never = analysis_notes({"thresholds": thresholds, "analysis_selection": "losses"},
                                     [analysed, left_out]), analysis_notes({"thresholds": thresholds}, [left_out])
    assert selected[0].startswith("Engine analysis:") and "depth 6 per position." in selected[0]
    assert selected[1].startswith("Game 2 was not selected for analysis (--select losses): ")
    assert "--select all" in selected[1] and "--select 2 " in selected[1]
    assert never == ["No engine analysis in this page: python -m ref_sim.replay RUN --analyse."]


# -- in a real browser -------------------------------------------------------------------

CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)


@pytest.fixture
def browser(tmp_path):
    browser = Browser(CHROMIUM, tmp_path / "profile")
    yield browser
    browser.close()


@pytest.mark.e2e
@needs_chromium
def test_the_page_in_a_browser_steps_with_the_keys_and_draws_its_graphs(tmp_path, browser):
    lines = [file_protocol_line(n, *random_game(n), names=(NASTY, "Random2")) for n in (1, 2, 3)]
    lines[2].update(result="win", winner="Random2", loser=NASTY, reason="Time out!", score=0.0)
    folder = write_series(tmp_path / "run", lines)
    out = tmp_path / "replay.html"
    assert replay.main([str(folder), "--analyse", "--depth", "1", "--jobs", "1", "--games", "1",
                        "-o", str(out)]) == 0
    total = len(lines[0]["opening"]) + len(lines[0]["moves"])
    browser.open(out.as_uri())
    js = browser.js
    assert js("document.body.dataset.ready") == "1"
    assert js("document.getElementById('errors').hidden") is True
    assert js("document.querySelectorAll('#board .cell').length") == 81
    assert js("document.querySelectorAll('#games tr').length") == 3
    assert js("document.querySelectorAll('#moves tr').length") == total + 1   # and the start
    # The bot's name is text on the page, not markup.
    assert NASTY in js("document.getElementById('games').textContent")
    assert js("document.querySelectorAll('#games b').length") == 0

    marks = "document.querySelectorAll('#board .cell[data-mark=\"X\"], " \
            "#board .cell[data-mark=\"O\"]').length"
    assert js("document.body.dataset.ply") == str(total) and js(marks) == total
    browser.key("Home")
    assert js("document.body.dataset.ply") == "0" and js(marks) == 0
    for _ in range(5):
        browser.key("ArrowRight")
    assert js("document.body.dataset.ply") == "5" and js(marks) == 5
    assert js("document.querySelector('#moves tr.current').dataset.ply") == "5"
    browser.key("ArrowLeft")
    assert js("document.body.dataset.ply") == "4" and js(marks) == 4
    assert js("document.querySelectorAll('#board .forced, #board .to-play').length") >= 1

    # The graph: the engine's line and the agent's logged scores, and a bar per timed move.
    assert int(js("document.getElementById('score-graph').dataset.points")) > total
    assert js("document.querySelector('#score-graph .engine-line').getAttribute('d')")
    assert js("document.querySelectorAll('#score-graph .logged-dot').length") == \
        sum(1 for m in lines[0]["moves"] if "score" in m)
    assert js("document.querySelectorAll('#time-graph .time-bar').length") == len(lines[0]["moves"])
    browser.screenshot(tmp_path / "replay.png")

    # The engine's move for the player to move, on request.
    assert js("document.querySelectorAll('#board .suggestion').length") == 0
    js("document.getElementById('show-best').click()")
    assert js("document.querySelectorAll('#board .suggestion').length") == 1

    browser.key("ArrowDown")                       # the next game of the list
    assert js("document.body.dataset.game") == "2"
    assert js("document.getElementById('analysis-note').textContent").startswith(
        "Game 2 was not selected for analysis (--select 1): ")
    assert js("document.querySelector('#games tr.current').dataset.index") == "1"

    # The list filtered by agent 1's results and by time-outs.
    def shown(choice):
        js(f"{{ const s = document.getElementById('filter'); s.value = '{choice}'; "
           "s.dispatchEvent(new Event('change')); }")
        return js("[...document.querySelectorAll('#games tr')].map(r => +r.cells[0].textContent)")
    by_score = {line["game"]: line["score"] for line in lines}
    for choice, score in (("wins", 1.0), ("losses", 0.0), ("draws", 0.5)):
        wanted = [n for n, s in by_score.items() if s == score]
        if wanted:
            assert shown(choice) == wanted
    assert shown("time-out") == [3] and shown("all") == [1, 2, 3]
    assert browser.errors() == []
    assert (tmp_path / "replay.png").stat().st_size > 10_000


def seed_bot_series(folder):
    """Agent1 (our agent) against Seed2 (the seed engine, its own scale: +575 to +1160 logged
    in games it loses), each logging its search, as ref_sim.match records them."""
    lines = []
    for number in (1, 2):
        line = file_protocol_line(number, *random_game(number), names=("Agent1", "Seed2"))
        line["agents"] = [{"name": "Agent1", "spec": "agent",
                           "command": ["python", "-m", "agent", "Agent1", "--dir", "{dir}"]},
                          {"name": "Seed2", "spec": "seed",
                           "command": ["python", "-m", "agent", "Seed2", "--dir", "{dir}",
                                       "--engine", "seed"]}]
        rng = random.Random(number)
        for move in line["moves"]:
            if move["player"] == "Seed2":
                score = rng.randint(575, 1160)
                move.update(depth=3, score=score if move is line["moves"][0] else -score,
                            nodes=500, nps=10000, agent_seconds=0.01)
        lines.append(line)
    return write_series(folder, lines), lines


def test_only_our_engine_logs_on_our_scale():
    assert replay.on_our_scale({"spec": "agent:depth=6"})
    assert replay.on_our_scale({"spec": "name=Walrus:agent"})
    assert replay.on_our_scale({"spec": "x", "command": ["/venv/bin/uttt-agent", "A", "--dir", "d"]})
    assert not replay.on_our_scale({"spec": "seed"})
    assert not replay.on_our_scale({"spec": "seed", "command": ["py", "-m", "agent", "--engine=seed"]})
    assert not replay.on_our_scale({"spec": "agent", "command": ["py", "-m", "agent", "--eval", "classic"]})
    assert not replay.on_our_scale({"spec": "java -cp bots Otter", "command": ["java", "Otter"]})
    assert not replay.on_our_scale({"name": "Agent1"}) and not replay.on_our_scale("agent")


@pytest.mark.e2e
@needs_chromium
def test_the_page_at_common_sizes_charts_on_screen_scales_apart_arrows_readable(tmp_path, browser):
    folder, lines = seed_bot_series(tmp_path / "run")
    out = tmp_path / "replay.html"
    assert replay.main([str(folder), "--analyse", "--depth", "1", "--jobs", "1", "--games", "1",
                        "-o", str(out)]) == 0
    assert embedded(out.read_text())["games"][0]["logged_scale"] == {"Agent1": "engine",
                                                                     "Seed2": "own"}
    logged = {name: sum(1 for m in lines[0]["moves"] if m["player"] == name and "score" in m)
              for name in ("Agent1", "Seed2")}
    js = browser.js
    for width, height in ((1400, 1000), (1280, 800)):
        browser.events.clear()                  # open() waits for this load's event
        browser.open(out.as_uri(), width, height)
        assert js("document.body.dataset.ready") == "1"
        # The time chart and its legend without scrolling; the board still a fair size.
        box = js("[document.getElementById('time-legend').getBoundingClientRect().bottom, "
                 "innerHeight, scrollY, document.querySelector('#board .cell')"
                 ".getBoundingClientRect().width]")
        assert box[0] <= box[1] and box[2] == 0, box
        assert box[3] >= 25, box                # pixels per cell
        browser.screenshot(tmp_path / f"replay-{width}x{height}.png")
        assert (tmp_path / f"replay-{width}x{height}.png").stat().st_size > 10_000

    # The seed bot's scores are text (the moves table, the legend), not a line at "X wins".
    assert js("document.querySelectorAll('#score-graph .logged-dot').length") == logged["Agent1"]
    assert js("document.querySelectorAll('#moves td.own-scale').length") == logged["Seed2"]
    assert "Seed2 (O) logged" in js("document.getElementById('own-scales').textContent")
    assert "on a scale of its own: in the moves table only" in js("document.getElementById('own-scales').textContent")

    # The better move in the next cell: the arrow bows out, longer than a cell, not a stub
    # under the ring (it was 33 units, most of them hidden).
    ply = next(i for i, m in enumerate(lines[0]["moves"], len(lines[0]["opening"]) + 1)
               if m["spot"] % 3 < 2 and not any(o[1:] == [m["board"], m["spot"] + 1]
                                                for o in lines[0]["opening"]))
    js(f"{{ const m = DATA.games[0].moves[{ply - 1}]; DATA.games[0].analysis.moves[{ply - 1}] = "
       "{best: [m.board, m.spot + 1], best_score: 0, loss: 0.5, judgement: 'blunder'}; "
       f"setPly({ply}); }}")
    assert js("document.querySelectorAll('#board .best-arrow').length") == 1
    assert js("document.querySelector('#board .best-arrow').getTotalLength()") >= 50
    browser.screenshot(tmp_path / "replay-arrow.png")
    assert browser.errors() == []


@pytest.mark.cluster
def test_the_analysis_on_a_cluster_is_the_local_one(series, tmp_path, monkeypatch, capsys):
    distributed = pytest.importorskip("distributed")
    folder, _ = series
    local = replay.read_run(folder)
    analysis.analyse_run(local, local["games"][:1], analysis.Settings(None, depth=1), jobs=1)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    out = tmp_path / "cluster.html"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                  dashboard_address=None, silence_logs=40,
                                  local_directory=str(tmp_path)) as workers:
        assert replay.main([str(folder), "--analyse", "--depth", "1", "--games", "1", "--fresh",
                            "--cluster", workers.scheduler_address, "-o", str(out)]) == 0
    assert "on the cluster" in capsys.readouterr().err
    remote = embedded(out.read_text())["games"][0]["analysis"]
    assert remote["scores"] == local["games"][0]["analysis"]["scores"]
    assert remote["moves"][4:] and all(remote["moves"][4:])


@pytest.mark.cluster
def test_an_unreachable_cluster_is_one_line(series, capsys):
    pytest.importorskip("distributed")
    from ref_sim.series.run import cluster
    folder, _ = series

    def connect(address, say):          # a closed port is retried for a second, not five
        return cluster.connect(address, say=say, reach_timeout=1.0)
    with pytest.raises(SystemExit) as stop:
        replay.main([str(folder), "--analyse", "--cluster", "tcp://127.0.0.1:9"],  # discard port
                    connect=connect)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert "cannot reach the scheduler at tcp://127.0.0.1:9" in err
    assert not (folder / "replay.html").exists()


def test_ctrl_c_in_an_analysis_is_one_line_and_keeps_what_was_searched(series, capsys):
    folder, _ = series
    calls = []

    def search_then_stop(*args):
        calls.append(args)
        if len(calls) > 3:
            raise KeyboardInterrupt
        return analysis.search_position(*args)
    assert replay.main([str(folder), "--analyse", "--depth", "1", "--jobs", "1"],
                       search=search_then_stop) == 130
    assert capsys.readouterr().err.splitlines()[-1] == "python -m ref_sim.replay: interrupted"
    cached = json.loads((folder / analysis.CACHE_NAME).read_text())
    assert len(cached["settings"]["time=None depth=1 nodes=None"]) == 3
    assert not (folder / "replay.html").exists()


@pytest.mark.e2e
@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_signal_ends_an_analysis_at_once_and_a_rerun_goes_on(tmp_path, capsys, signum):
    # A real process searching on two processes, a real signal once a tenth is done.  Before,
    # the pool's exit searched every queued position (here about a minute: beyond the hang
    # check below) and the cache kept only the positions seen by then.
    folder = write_series(tmp_path / "run", [file_protocol_line(number, *random_game(number))
                                             for number in range(1, 9)])
    command = [sys.executable, "-m", "ref_sim.replay", str(folder), "--analyse", "--time",
               "0.25", "--jobs", "2"]
    # A background shell starts its jobs with SIGINT ignored: this test wants Ctrl-C's default.
    # A session of its own: a failure kills the searching processes too (they hold stderr).
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=Path(__file__).parent.parent,
                               start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        first = process.stderr.readline()
        total = int(re.match(r"analysing (\d+) positions", first).group(1))
        progress = process.stderr.readline()        # "  24/241": a tenth is searched
        assert re.match(r"\s+\d+/\d+$", progress), progress
        process.send_signal(signum)
        _, err = process.communicate(timeout=30)    # a hang check: it takes a fraction of a second
    finally:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
    assert process.returncode == 128 + signum, err
    assert "Traceback" not in err and not (folder / "replay.html").exists()
    kept = json.loads((folder / analysis.CACHE_NAME).read_text())["settings"]
    kept = kept["time=0.25 depth=None nodes=None"]
    assert int(progress.split("/")[0]) <= len(kept) < total
    assert f"kept the {len(kept)} positions searched" in err

    # The same command again searches only the others (a stand-in search: the test is fast).
    searched = []

    def stand_in(rules, moves, settings):
        searched.append(analysis._position_key(rules, moves))
        return {"best": Position.from_moves(moves, rules).legal_moves()[0], "score": 0,
                "depth": 1, "nodes": 1, "pv": []}
    assert replay.main([str(folder), "--analyse", "--time", "0.25", "--jobs", "1"],
                       search=stand_in) == 0
    assert len(searched) == total - len(kept) and not set(searched) & set(kept)
    assert f"analysing {total - len(kept)} positions" in capsys.readouterr().err


@pytest.mark.cluster
def test_a_stop_on_a_cluster_keeps_the_finished_positions_and_cancels_the_rest(series):
    # The cluster's loop with the runners' interface (ref_sim.series.run.scheduler.LocalRunner: threads).
    # Five short searches finish, three long ones hold the slots, the stop comes before any
    # result was collected: the five are kept all the same, the others are cancelled.
    from ref_sim.series.run.scheduler import LocalRunner
    folder, _ = series
    game = replay.read_run(folder)["games"][0]
    tasks = analysis._tasks(game)[:12]          # 4 to 15 moves
    short = {analysis._position_key(*task) for task in tasks if len(task[1]) <= 8}
    release = threading.Event()

    def stand_in(rules, moves, settings):
        if len(moves) > 8:                      # a long search
            release.wait(30)
        return {"best": 0, "score": 0, "depth": 1, "nodes": 1, "pv": []}
    cancelled = []

    class StoppedRunner(LocalRunner):
        def wait(self, tickets):
            time.sleep(0.3)                     # the short searches finish meanwhile
            raise KeyboardInterrupt

        def cancel(self, tickets):
            cancelled.extend(tickets)
            release.set()                       # what is still searching ends (dropped)
    runner = StoppedRunner(8)
    found = {}
    try:
        with pytest.raises(KeyboardInterrupt):
            analysis.search_positions(tasks, analysis.Settings(None, depth=1), None, found,
                                      runner=runner, search=stand_in)
    finally:
        release.set()
        runner.close()
    assert set(found) == short and len(short) == 5
    assert len(cancelled) == len(tasks) - len(short)


# -- odd values in a record do not stop the page's script ------------------------

def odd_lines():
    """Game lines edited by hand: text, null and booleans where the page computes with numbers,
    in the keys a game line takes as they are (a move's figures, the time limit, the loser, the
    hints)."""
    lines = [file_protocol_line(n, *random_game(n)) for n in (1, 2)]
    moves = lines[0]["moves"]
    moves[0].update(score="x", depth="3", nodes="many", nps=True, agent_seconds=None)
    moves[1].update(seconds="fast")
    moves[2].pop("seconds", None)
    lines[0].update(time_limit="ten", loser=5, hints={"Agent1": 3})
    lines[1].update(score=None)
    return lines


def test_odd_values_reach_the_page_as_numbers_or_nothing(tmp_path, capsys):
    # A line whose keys the summary reads are wrong (ref_sim.series.output.game_line) is left
    # out, said in one line naming the line and the key.
    refused = {**file_protocol_line(3, *random_game(3)), "score": "half"}
    data = replay.read_run(write_series(tmp_path / "run", [*odd_lines(), refused]))
    assert [game["game"] for game in data["games"]] == [1, 2]
    assert "games.jsonl line 3: 'score' must be 1, 0.5, 0 or null" in capsys.readouterr().err
    first = data["games"][0]
    assert first["time_limit"] is None and first["loser"] == "5" and first["hints"] == {"Agent1": "3"}
    assert {key: first["moves"][4][key] for key in ("score", "depth", "nodes", "nps", "agent_seconds")} == \
        dict.fromkeys(("score", "depth", "nodes", "nps", "agent_seconds"))
    assert first["moves"][5]["seconds"] is None
    assert data["games"][1]["score"] is None


@pytest.mark.e2e
@needs_chromium
def test_the_page_shows_odd_values_without_a_script_error(tmp_path, browser):
    out = tmp_path / "replay.html"
    assert replay.main([str(write_series(tmp_path / "run", odd_lines())), "-o", str(out)]) == 0
    browser.open(out.as_uri())
    js = browser.js
    assert js("document.body.dataset.ready") == "1"
    for key in ("Home", "ArrowRight", "ArrowRight", "ArrowRight", "ArrowRight", "ArrowRight", "ArrowRight",
                "End", "ArrowDown", "ArrowUp"):
        browser.key(key)
        assert js("document.getElementById('errors').hidden") is True, js("document.getElementById('errors').textContent")
    assert js("document.querySelectorAll('#games tr').length") == 2
