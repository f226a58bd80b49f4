"""A games.jsonl line as a value (ref_sim/series/output/game_line.py): what a series writes
reads back as the same bytes, a bad line is one error naming the line and the key, and lines of
older shapes still read."""

import json
import sys

import pytest

from ref_sim import match, stdio, tournament
from ref_sim.views import replay
from ref_sim.series.output import records
from ref_sim.series.output.game_line import CODINGAME_KEYS, FILE_KEYS, GameLine
from ref_sim.series.output.strict_json import RecordError

#: Our agent through CodinGame's protocol at a small depth (it writes a search log: the moves
#: carry its figures), without the built-in's --seed.
OUR_AGENT = (f"{sys.executable} -m agent --protocol codingame --turn-ms {{turn_ms}} "
             "--first-turn-ms {first_turn_ms} --depth 2")


def lines_of(path):
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def assert_round_trips(path, keys):
    for text in lines_of(path):
        obj = json.loads(text)
        line = GameLine.from_json(obj, where=f"{path} line 1")
        assert records.dumps_line(line.to_json()) == text
        # Made here from the same values (no order read), it is written in its protocol's order.
        fresh = GameLine(**{key: value for key, value in obj.items()})
        assert records.dumps_line(fresh.to_json()) == text
        assert list(obj) == [key for key in keys if key in obj]


@pytest.mark.e2e
def test_a_file_series_lines_read_back_as_the_same_bytes(tmp_path, capsys):
    out = tmp_path / "match"
    assert match.main(["agent:depth=2", "random", "--games", "2", "--time-limit", "0.3",
                       "--seed", "5", "--out", str(out)]) == 0
    capsys.readouterr()
    assert_round_trips(out / "games.jsonl", FILE_KEYS)
    games = records.read_games(out / "games.jsonl")[0]
    assert [type(game) for game in games] == [GameLine, GameLine]
    assert [game.game for game in games] == [1, 2] and not games[0].codingame
    assert any("depth" in move for game in games for move in game.moves)


@pytest.mark.e2e
def test_a_codingame_series_lines_read_back_as_the_same_bytes(tmp_path, capsys):
    out = tmp_path / "stdio"
    assert stdio.main([OUR_AGENT, "random", "--games", "2", "--seed", "5", "--out", str(out),
                       "--turn-ms", "1000", "--first-turn-ms", "1000", "--grace-ms", "400"]) == 0
    capsys.readouterr()
    assert_round_trips(out / "games.jsonl", CODINGAME_KEYS)
    games = records.read_games(out / "games.jsonl")[0]
    assert all(game.codingame and game.turn_ms == 1000 and game.time_limit is None
               for game in games)


LINE = {"format": 1, "game": 3, "pair": 1, "series_seed": 7, "seed": 11, "time_limit": 0.3,
        "encoding": "utf-8", "agents": [{"name": "A", "spec": "random", "command": [], "seed": 1},
                                        {"name": "B", "spec": "random", "command": [], "seed": 2}],
        "names": ["A", "B"], "p1": "A", "p2": "B", "opening": [["A", 0, 4], ["B", 4, 0]],
        "moves": [{"player": "A", "board": 0, "spot": 0, "seconds": 0.01}],
        "result": "win", "winner": "A", "loser": "B", "reason": "Time out!", "end_text": "END",
        "bad_line": None, "score": 1.0, "notes": {}, "hints": {}, "started": 1.5, "duration": 2.0}


def test_keys_it_does_not_know_and_keys_a_line_lacks_read_back_as_they_were():
    obj = {"later": {"x": [1]}, **{key: value for key, value in LINE.items()
                                   if key not in ("reason", "hints")}}
    line = GameLine.from_json(obj)
    assert line.reason is None and line.hints is None and line.extra == {"later": {"x": [1]}}
    assert json.dumps(line.to_json()) == json.dumps(obj)


def test_keys_set_after_reading_come_after_the_keys_read():
    line = GameLine.from_json(LINE)
    cluster = GameLine(**{**LINE, "worker": "w1", "attempts": 2, "pairing": [0, 1],
                          "pairing_game": 3})
    from dataclasses import replace
    assert replace(line, worker="w1", attempts=2, pairing=[0, 1], pairing_game=3).to_json() == \
        cluster.to_json()
    assert list(cluster.to_json())[-4:] == ["worker", "attempts", "pairing", "pairing_game"]


@pytest.mark.parametrize("key, value, said", [
    ("game", 0, "'game' must be a positive integer, not 0"),
    ("result", "won", "'result' must be win, tie or aborted, not \"won\""),
    ("names", None, "'names' must be a list of names, not null"),
    ("moves", [{"board": 1}], "'moves' must be a list of moves with their board and spot"),
    ("score", True, "'score' must be 1, 0.5, 0 or null, not true"),
])
def test_a_bad_line_is_one_error_naming_the_line_and_the_key(key, value, said):
    with pytest.raises(RecordError) as error:
        GameLine.from_json({**LINE, key: value}, where="out/games.jsonl line 4")
    assert str(error.value).startswith(f"out/games.jsonl line 4: {said}")
    with pytest.raises(RecordError, match="'notes' must be .*, not missing"):
        GameLine.from_json({k: v for k, v in LINE.items() if k != "notes"})
    with pytest.raises(RecordError, match=r"^x line 2: not a game \(a JSON list, not an object\)$"):
        GameLine.from_json([1], where="x line 2")


# -- older files: a series and a tournament written before later keys came ---------------------

#: Keys the lines gained after the first series was written (docs/formats.md's history: the
#: encoding and the hints in November, what a bot used and the time-out figures later).
LATER_KEYS = ("encoding", "hints", "usage", "search_log_skipped", "timeout_share", "machine_timeout")


def in_older_shape(path):
    """Rewrite the games.jsonl ``path`` as an older runner wrote it, without :data:`LATER_KEYS`;
    returns its lines."""
    lines = []
    for text in lines_of(path):
        obj = {key: value for key, value in json.loads(text).items() if key not in LATER_KEYS}
        lines.append(records.dumps_line(obj))
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return lines


def assert_resumed_and_replayed(out, old_lines, games):
    """``out``'s old lines are kept as they were, read as they were, the run played on to
    ``games`` games, and ``uttt-replay`` draws them all."""
    now = lines_of(out / "games.jsonl")
    assert now[:len(old_lines)] == old_lines and len(now) == games
    for text in old_lines:
        line = GameLine.from_json(json.loads(text))
        assert line.hints is None and line.encoding is None
        assert records.dumps_line(line.to_json()) == text
    assert [game.game for game in records.read_games(out / "games.jsonl")[0]] == list(range(1, games + 1))
    assert replay.main([str(out), "-o", str(out / "replay.html")]) == 0
    assert (out / "replay.html").stat().st_size > 0


@pytest.mark.e2e
def test_a_series_of_an_older_shape_resumes_and_replays(tmp_path, capsys):
    out = tmp_path / "old-series"
    assert match.main(["random", "random", "--games", "2", "--time-limit", "0.3", "--seed", "4",
                       "--out", str(out)]) == 0
    old_lines = in_older_shape(out / "games.jsonl")
    # series.json as the first ref_sim.match wrote it: no encoding, games, sprt or isolate.
    recorded = json.loads((out / "series.json").read_text())
    (out / "series.json").write_text(json.dumps({key: recorded[key] for key in (
        "format", "seed", "agents", "names", "time_limit", "paired")}))
    capsys.readouterr()
    assert match.main(["--resume", "--out", str(out), "--games", "4"]) == 0
    assert "resuming: 2 of 4 games already played" in capsys.readouterr().out
    assert_resumed_and_replayed(out, old_lines, 4)


@pytest.mark.e2e
def test_a_tournament_of_an_older_shape_resumes_and_replays(tmp_path, capsys):
    out = tmp_path / "old-event"
    assert tournament.main(["random", "random", "--time-limit", "0.3", "--seed", "4", "-q",
                            "--out", str(out)]) == 0
    old_lines = in_older_shape(out / "games.jsonl")
    assert all('"pairing": [0, 1]' in line for line in old_lines)
    # tournament.json as the first uttt-tournament wrote it: the bots unnamed, no "openings"
    # (every pairing plays the event's seed) and no isolate.
    recorded = json.loads((out / "tournament.json").read_text())
    (out / "tournament.json").write_text(json.dumps({
        **{key: recorded[key] for key in ("format", "kind", "protocol", "seed", "rounds",
                                          "time_limit", "encoding", "pairings")},
        "bots": [{"spec": bot["spec"]} for bot in recorded["bots"]]}))
    capsys.readouterr()
    assert tournament.main(["--resume", "--out", str(out), "--rounds", "2", "-q"]) == 0
    capsys.readouterr()
    assert_resumed_and_replayed(out, old_lines, 4)
