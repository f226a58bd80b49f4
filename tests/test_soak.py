"""scripts/soak.py's plumbing, with instant stand-in games: its --quick mode plays a pair
against every opponent, hostile ones included, the nbsp one in Latin-1, and counts an
opponent's out-of-turn loss as our win.  A real soak is run by hand."""

import importlib.util
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from ref_sim.referees.file_referee import OUT_OF_ORDER, WIN_REASON, GameRecord
from ref_sim.series.output.game_line import Played

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def soak(monkeypatch):
    spec = importlib.util.spec_from_file_location("soak", ROOT / "scripts" / "soak.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "soak", module)        # its dataclasses look it up
    spec.loader.exec_module(module)
    return module


def test_quick_plays_a_pair_against_every_opponent(soak, tmp_path, capsys):
    calls = []

    def play_game(number, specs, names, directory, logs, settings, *, seed, first=None,
                  opening=None, stop=None, agent_seeds=None, **options):
        calls.append((sorted(names)[1], settings))
        p2 = [n for n in names if n != first][0]
        record = GameRecord(names=tuple(names), time_limit=settings.time_limit, seed=seed, p1=first,
                            p2=p2, result="win", winner="Agent1",
                            reason=OUT_OF_ORDER if "Eager2" in names else WIN_REASON)
        record.loser = [n for n in names if n != "Agent1"][0]
        return Played(record)

    @contextmanager
    def latin1_locale():
        yield soak.Latin1("under a test locale", env={"LC_ALL": "test"},
                          referee_encoding="iso8859-1")
    assert soak.main(["--quick", "--no-hog", "--out", str(tmp_path)], play=play_game, latin1=latin1_locale) == 0
    out = capsys.readouterr().out
    assert [name for name, _ in calls] == [n for n in ("Random2", "Seed2", "Eager2", "Flood2",
                                                        "Nbsp2") for _ in range(2)]
    for name, settings in calls:
        latin1 = name == "Nbsp2"
        assert settings.env == ({"LC_ALL": "test"} if latin1 else None)
        assert settings.referee_encoding == ("iso8859-1" if latin1 else None)
        assert settings.encoding is None
        assert settings.busy_poll         # the referee burns a core between ticks, as the real one
    assert "nbsp: referee and agents in Latin-1, under a test locale" in out
    rows = {line.split()[3]: line.split()[4:] for line in out.splitlines()
            if line.startswith("0.5 s vs ")}
    # games, W-L-D, time-outs, invalid, crashes, hangs, their-ooo
    assert rows["eager"][:7] == ["2", "2-0-0", "0", "0", "0", "0", "2"]
    assert rows["random"][6] == "0"
    assert next(line for line in out.splitlines() if line.startswith("all")).split()[:3] == \
        ["all", "10", "10-0-0"]


def test_without_a_latin1_locale_the_soak_passes_the_encoding(soak, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))               # no localedef
    with soak.latin1_locale(("en_US.ISO-8859-1-not-installed",)) as latin1:
        assert latin1.encoding == "iso8859-1" and latin1.env is None
        assert latin1.how.startswith("no Latin-1 locale (localedef: ")
        assert latin1.how.endswith("--encoding latin-1 given to the referee and both agents")


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("localedef") is None, reason="no localedef here")
def test_a_latin1_locale_is_built_where_the_system_has_none(soak):
    with soak.latin1_locale() as latin1:
        assert latin1.referee_encoding == "iso8859-1" and latin1.encoding is None, latin1.how
        assert soak.preferred_encoding(latin1.env) == "iso8859-1"
        built = latin1.env.get("LOCPATH")
    assert built is None or not Path(built).exists()        # deleted afterwards
