"""A game's bots end with the game whatever happened: ref_sim.series.process.bot_process."""

from __future__ import annotations

import sys

import pytest

from ref_sim.series.process.bot_process import GameBots

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


def test_a_game_that_goes_wrong_ends_its_bots_and_leaves_only_their_logs(tmp_path):
    logs, game = tmp_path / "logs", tmp_path / "game"
    logs.mkdir()
    game.mkdir()
    scratch = game / "Sleeper1.tmp"
    with pytest.raises(RuntimeError), GameBots(logs, 7) as bots:
        bot = bots.start("Sleeper1", SLEEPER, directory=game, scratch=[scratch])
        scratch.write_text("its own file")
        assert bot.ready.exists() and not bot.exited()
        raise RuntimeError("the referee failed")
    assert bot.process.returncode is not None
    assert not scratch.exists() and not bot.ready.exists()
    assert bot.log.read_text().startswith("$ ")


def test_a_bot_that_cannot_be_launched_says_so_in_its_log(tmp_path):
    with GameBots(tmp_path, 1) as bots:
        bot = bots.start("Ghost1", [str(tmp_path / "no-such-program")], piped=True)
        assert bot.process is None and bots.all_exited()
        assert bot.exit_note() == "could not start"
    assert "could not start: " in bot.log.read_text()
    assert bots.end() is None                       # nothing ran: nothing measured
