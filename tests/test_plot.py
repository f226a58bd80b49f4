"""ref_sim.plot: the running score with its band, move times, PNG and SVG output."""

import builtins
import dataclasses
import json
import random
import re
import xml.etree.ElementTree as ET

import pytest

from ref_sim.views import plot
from ref_sim.rules import Game


def series_records(count=6, time_limit=0.5):
    """Random legal games between A1 and B2, names alternating like the match runner's."""
    records = []
    for number in range(1, count + 1):
        rng = random.Random(number)
        names = ["A1", "B2"] if number % 2 else ["B2", "A1"]
        game = Game()
        opening, moves = [], []
        while not game.is_over():
            board, spot = rng.choice(game.legal_moves())
            player = names[game.turn]
            game.play(board, spot)
            if len(opening) < 4:
                opening.append([player, board, spot])
            else:
                moves.append({"player": player, "board": board, "spot": spot,
                              "seconds": round(rng.uniform(0.01, time_limit), 4),
                              "depth": rng.randint(1, 8), "score": 0})
        winner = None if game.result == "tie" else names[game.result]
        records.append({"names": names, "time_limit": time_limit, "p1": names[0],
                        "p2": names[1], "opening": opening, "moves": moves,
                        "result": "tie" if winner is None else "win", "winner": winner,
                        "reason": "tie" if winner is None else "3 in a row",
                        "pair": (number + 1) // 2})
    return records


@pytest.fixture
def series(tmp_path):
    """The series' games.jsonl, and its games as the plot reads them."""
    path = tmp_path / "games.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in series_records()))
    return path, plot.load_series(path)


def test_running_score_and_band():
    rows = plot.running_score([1, 0, 0.5, 1])
    assert [round(m, 3) for m, _, _ in rows] == [1.0, 0.5, 0.5, 0.625]
    assert all(0 <= low <= m <= high <= 1 for m, low, high in rows)
    # The Wilson interval: (p + z²/2n ± z √(p(1-p)/n + z²/4n²)) / (1 + z²/n).
    z, n, p = 1.959963984540054, 4, 0.625
    centre, half = (p + z * z / (2 * n)), z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    assert rows[-1][1:] == pytest.approx(((centre - half) / (1 + z * z / n),
                                          (centre + half) / (1 + z * z / n)))


def test_a_clean_sweep_still_has_a_band():
    # 20-0 used to draw a zero-width band (the scores' spread is 0): as if 20 games were proof.
    mean, low, high = plot.running_score([1.0] * 20)[-1]
    assert mean == high == 1.0 and 0.8 < low < 0.85
    # The band narrows as the games add up, and never closes.
    widths = [high - low for _, low, high in plot.running_score([1.0] * 100)]
    assert all(a > b > 0 for a, b in zip(widths, widths[1:]))


def test_scores_times_and_limit(series):
    _, records = series
    assert plot.agents(records) == ("A1", "B2")
    swapped = [dataclasses.replace(records[1], agents=[{"name": "A1"}, {"name": "B2"}])] + records
    assert plot.agents(swapped) == ("A1", "B2")         # the runner's agent 1 comes first
    scores = [plot.game_score(r, "A1") for r in records]
    assert set(scores) <= {0.0, 0.5, 1.0}
    assert plot.game_score(dataclasses.replace(records[0], result="aborted"), "A1") is None
    times = plot.move_times(records)
    assert sum(len(v) for v in times.values()) == sum(len(r.moves) for r in records)
    assert min(n for v in times.values() for n, _ in v) == 5      # after the opening
    assert plot.time_limit(records) == 0.5


def test_writes_png_and_svg(series, tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="plots need the plot extra (matplotlib)")
    path, records = series
    png, svg = tmp_path / "plot.png", tmp_path / "plot.svg"
    assert plot.main([str(path), "--out", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    assert plot.main([str(path), "--out", str(svg), "--agent", "B2"]) == 0
    assert ET.parse(svg).getroot().tag.endswith("svg")
    out = capsys.readouterr().out
    assert "Score of A1 vs B2: " in out and "Score of B2 vs A1: " in out
    # The same line as the series runners print: the score with three decimals.
    assert re.search(r"Score of A1 vs B2: \d+ - \d+ - \d+  \[\d\.\d{3}\] \d+", out)


def test_a_logs_directory_is_a_series(tmp_path):
    pytest.importorskip("matplotlib", reason="plots need the plot extra (matplotlib)")
    for number, record in enumerate(series_records(3), 1):
        (tmp_path / f"game-{number:04d}.json").write_text(json.dumps(record, indent=2))
    assert len(plot.load_series(tmp_path)) == 3
    assert plot.main([str(tmp_path), "--out", str(tmp_path / "p.png")]) == 0


@pytest.mark.parametrize("argv, message", [
    (["missing.jsonl"], "no such file"),
    (["games.jsonl", "--out", "plot.pdf"], "must end in .png or .svg"),
    (["games.jsonl", "--agent", "Nobody"], "plays no game"),
])
def test_bad_input_is_one_line_and_exit_2(series, tmp_path, monkeypatch, capsys, argv,
                                          message):
    monkeypatch.chdir(tmp_path)
    assert plot.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert err[0].startswith("python -m ref_sim.plot: error: ")


def test_without_matplotlib_one_clear_line(series, tmp_path, monkeypatch, capsys):
    path, _ = series
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    assert plot.main([str(path), "--out", str(tmp_path / "p.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install -e '.[plot]'" in err[0]
