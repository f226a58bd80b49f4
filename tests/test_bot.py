"""A bot of one's own on our protocol layer (agent/bot.py), and the README's example, word for word."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.bot import ChooseEngine, InvalidMoveError, Move, move_index
from agent.engines import choose_legal
from agent.limits import SearchLimit
from agent.rules import Position

ROOT = Path(__file__).resolve().parent.parent


def readme_bot() -> str:
    """The README's example bot: the python block of "Your own bot in a page of code"."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Your own bot in a page of code", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    return code


def test_the_readme_bot_is_about_twenty_lines():
    code = readme_bot()
    assert "from agent.bot import" in code and "run(choose)" in code
    assert len([line for line in code.splitlines() if line.strip()]) <= 25


def series(tmp_path: Path, runner: str, *argv: str) -> list[dict]:
    out = tmp_path / runner
    result = subprocess.run([sys.executable, "-m", f"ref_sim.{runner}", *argv, "--out", str(out), "-q"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr + result.stdout
    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


@pytest.mark.e2e
def test_the_readme_bot_plays_a_series_of_each_protocol(tmp_path):
    (tmp_path / "my_bot.py").write_text(readme_bot(), encoding="utf-8")
    python = sys.executable
    games = series(tmp_path, "match", f"{python} my_bot.py {{name}} --dir {{dir}} --time-limit {{time_limit}} "
                   "--seed {seed}", "random", "--games", "2", "--time-limit", "0.5", "--seed", "3")
    assert len(games) == 2 and all(game["result"] in ("win", "tie") for game in games)
    assert all(game["reason"] not in ("Time out!", "Invalid move!") or game["winner"] == "Mybot1" for game in games)
    # The referee's grace for a process a loaded machine did not run in time (the bot still plans
    # for its 100 ms): at load 6 a turn was lost on time without it.
    games = series(tmp_path, "stdio", f"{python} my_bot.py --protocol codingame --seed {{seed}}", "random",
                   "--games", "2", "--seed", "3", "--grace-ms", "300")
    assert len(games) == 2 and all(game["reason"] not in ("Time out!", "Invalid move!", "Crashed!")
                                   or game["winner"] == "Mybot1" for game in games)


@pytest.mark.parametrize("answer, index", [(Move(4, 5), 41), (41, 41), ((4, 5), 41)])
def test_a_move_may_be_a_move_an_index_or_a_pair(answer, index):
    assert move_index(answer) == index


@pytest.mark.parametrize("answer", [None, "4 5", 81, -1, True, (9, 0), 4.0])
def test_anything_else_is_an_invalid_move(answer):
    with pytest.raises(InvalidMoveError):
        move_index(answer)


def slow(position, seconds):
    time.sleep(seconds + 0.3)
    return position.moves()[0]


def broken(position, seconds):
    raise ZeroDivisionError("oops")


def occupied(position, seconds):
    return position.moves_played()[0]


@pytest.mark.parametrize("choose, said", [(slow, "still thinking after"), (broken, "engine failed"),
                                          (occupied, "illegal move")])
def test_whatever_choose_does_a_legal_move_comes_in_time(choose, said, caplog):
    position = Position.from_moves([40, 36])
    engine = ChooseEngine(choose)
    try:
        result = choose_legal(engine, position, SearchLimit.seconds(0.1), __import__("random").Random(1))
    finally:
        engine.close()
    assert position.is_legal(result.move)
    assert said in caplog.text


def test_choose_gets_a_copy_and_the_seconds_left(tmp_path):
    seen = tmp_path / "seconds"

    def spy(position, seconds):  # in its own process: it tells us through a file
        seen.write_text(repr(seconds))
        position.play(position.moves()[0])  # its own copy: ours stays as it was
        return position.moves()[0]

    position = Position()
    engine = ChooseEngine(spy)
    try:
        engine.choose(position, SearchLimit.seconds(0.5))
    finally:
        engine.close()
    assert position.ply == 0 and 0 < float(seen.read_text()) <= 0.5
