"""The referee's files in each player's view (ref_sim.referees.file_shell._ViewsShell), action
by action on real folders: what the referee writes reaches every view, a move is read from the
mover's view and handed on, and only a player's own move line written out of turn is seen."""

import os
import time

import pytest

from ref_sim.referees import file_shell
from ref_sim.referees.file_referee import MOVE_FILE, Clean, ReadMove, RefereeSettings, Remove, Stat, Write


@pytest.fixture
def shell(tmp_path):
    views = {name: tmp_path / name for name in ("Walrus", "Otter")}
    for view in views.values():
        view.mkdir()
    shell = file_shell._ViewsShell(views, RefereeSettings(encoding="utf-8"), None, None, None)
    shell.perform(Write(MOVE_FILE))
    return shell


def write(shell, name, text, later_than=None):
    """``text`` into ``name``'s move_file, its mtime after ``later_than``'s (a coarse clock)."""
    path = shell.views[name] / MOVE_FILE
    path.write_text(text)
    if later_than is not None:
        stamp = file_shell.mtime_of(shell.views[later_than] / MOVE_FILE) + 1
        os.utime(path, (stamp, stamp))


def test_what_the_referee_writes_and_removes_is_in_every_view(shell):
    shell.perform(Write("Walrus.go"))
    assert all((view / "Walrus.go").is_file() for view in shell.views.values())
    shell.perform(Remove("Walrus.go"))
    assert not any((view / "Walrus.go").exists() for view in shell.views.values())
    shell.perform(Write("end_game", "Walrus won"))
    shell.perform(Clean())
    assert all(not any(view.iterdir()) for view in shell.views.values())


def test_a_move_is_read_from_the_movers_view_and_handed_to_the_other(shell):
    noted = shell.perform(Stat("Walrus"))
    write(shell, "Walrus", "Walrus 4 4\n", later_than="Walrus")
    assert shell.perform(Stat("Walrus")) > noted
    assert shell.perform(ReadMove("Walrus")) == "Walrus 4 4\n"
    assert (shell.views["Otter"] / MOVE_FILE).read_text() == "Walrus 4 4\n"


def test_a_line_forged_in_the_movers_name_in_another_view_is_not_read(shell):
    noted = shell.perform(Stat("Walrus"))
    write(shell, "Otter", "Walrus 9 9\n", later_than="Walrus")     # Otter forges at Walrus's turn
    assert shell.perform(Stat("Walrus")) == noted
    (shell.views["Otter"] / "Walrus.go").unlink(missing_ok=True)    # and what it deletes is its own
    write(shell, "Walrus", "Walrus 4 4\n", later_than="Otter")
    assert shell.perform(ReadMove("Walrus")) == "Walrus 4 4\n"


def test_a_players_own_line_out_of_turn_is_read_as_in_the_shared_directory(shell):
    noted = shell.perform(Stat("Walrus"))
    write(shell, "Otter", "Otter 4 4\n", later_than="Walrus")      # Otter plays at Walrus's turn
    assert shell.perform(Stat("Walrus")) > noted
    assert shell.perform(ReadMove("Walrus")) == "Otter 4 4\n"       # the referee: Out-of-order move!


def test_the_movers_line_reaches_the_other_view_before_the_referees_look(shell):
    shell.perform(Stat("Walrus"))
    write(shell, "Walrus", "Walrus 4 4\n", later_than="Walrus")
    shell.wait(time.perf_counter() + 3 * file_shell.MIRROR_INTERVAL, False)
    assert (shell.views["Otter"] / MOVE_FILE).read_text() == "Walrus 4 4\n"
