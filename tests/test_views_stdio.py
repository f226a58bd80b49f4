"""The views read a uttt-stdio series as docs/viewing.md says (CodinGame's games
have no opening, and time their turns in ms)."""

from __future__ import annotations

import json

import pytest

from ref_sim.views import plot, show

MOVES = [{"player": "Random1", "row": 3, "col": 5, "board": 4, "spot": 2, "ms": 0.24},
         {"player": "Random2", "row": 0, "col": 7, "board": 2, "spot": 1, "ms": 31.5},
         {"player": "Random1", "row": 0, "col": 5, "board": 1, "spot": 2, "ms": 0.09}]


def stdio_game(number: int, p1: str, p2: str, winner: str) -> dict:
    """A game line as uttt-stdio writes it (the keys the views read; no "opening")."""
    return {"format": 1, "game": number, "pair": 0, "rules": "codingame", "turn_ms": 100.0,
            "first_turn_ms": 1000.0, "grace_ms": 5.0, "names": ["Random1", "Random2"], "p1": p1, "p2": p2,
            "moves": [dict(move, player=(p1, p2)[i % 2]) for i, move in enumerate(MOVES)],
            "result": "win", "winner": winner, "loser": p2 if winner == p1 else p1,
            "reason": "three local boards in a line", "notes": {}, "score": 1.0 if winner == "Random1" else 0.0}


@pytest.fixture
def series(tmp_path):
    games = [stdio_game(1, "Random1", "Random2", "Random1"), stdio_game(2, "Random2", "Random1", "Random1")]
    (tmp_path / "games.jsonl").write_text("".join(json.dumps(game) + "\n" for game in games))
    return tmp_path


def test_show_replays_a_stdio_game(series, capsys):
    assert show.main([str(series), "--game", "2"]) == 0
    out = capsys.readouterr().out
    assert "Game 2: Random2 (X) vs Random1 (O)" in out and "Move 3: Random2 (X) 1 2" in out
    assert "opening" not in out.lower().split("move 1:")[1]


def test_plot_reads_a_stdio_series_and_its_turn_times(series, tmp_path, capsys):
    records = plot.load_series(series)
    assert plot.time_limit(records) == 0.1
    assert (2, 0.0315) in plot.move_times(records)["Random2"]
    pytest.importorskip("matplotlib", reason="plots need the plot extra (matplotlib)")
    assert plot.main([str(series), "--out", str(tmp_path / "p.png")]) == 0
    assert (tmp_path / "p.png").stat().st_size > 0
    assert "Score of Random1 vs Random2: 2 - 0 - 0" in capsys.readouterr().out
