"""python -m ref_sim: argument checks and one quiet game."""

import json

import pytest

from ref_sim.cli import main


@pytest.mark.parametrize("argv", [["A", "A"], ["A B", "C"], ["", "C"], ["a/b", "C"],
                                  ["A", "B", "--dir", "/no/such/dir"],
                                  ["A", "B", "--time-limit", "0"]])
def test_bad_arguments_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_quiet_game_prints_the_result_and_saves_the_record(tmp_path, capsys):
    record_path = tmp_path / "record.json"
    game_dir = tmp_path / "game"
    game_dir.mkdir()
    assert main(["Walrus", "Otter", "--dir", str(game_dir), "--time-limit", "0.1",
                 "--seed", "1", "--record", str(record_path), "-q"]) == 0
    out = capsys.readouterr().out.strip()
    data = json.loads(record_path.read_text())
    assert out == data["end_text"]
    assert out.endswith("LOSES! Time out!")
