"""Every verdict explains itself in a tournament's pages (ref_sim/views/replay.py's verdict,
ref_sim/views/crosstable.py, ref_sim/views/team_page.py): a tournament whose bot Otter loses on
time (silent at its first .go) and to an empty line, played by the referee's own state machine
on a virtual clock (tests/virtual_games.py), no process started. Its pages say who ran out of
time and how late, the empty line, the runner's hints (true ones: ref_sim/series/realbots.py);
its replay pages link the analysis board; the whole event's replay is titled as one; the
crosstable's faults link their replays and logs; each team has a page of its own. Then the
pages in Chromium, as a person sees them."""

import dataclasses
import json
import random
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

import virtual_games
from ref_sim import replay as replay_command
from ref_sim.referees.file_referee import INVALID_MOVE, TIME_OUT, GameRecord, MoveRecord
from ref_sim.series import realbots
from ref_sim.series.output.event_record import Bot, EventSettings
from ref_sim.series.output.game_line import GameLine, Played
from ref_sim.series.specs import agent_spec
from ref_sim.views import replay, team_page
from test_replay import browser, embedded, needs_chromium  # noqa: F401  (browser: the replay tests' fixture)

#: What Otter's log says in every game, markup in it: a page shows it as text.
OTTER_LOG = "Traceback (most recent call last):\nValueError: <b>boom</b>\n"


def faulty_game(number, specs, names, directory, logs, settings, *, seed=None, first=None,
                opening=None, agent_seeds=None, must_start=False, stop=None):
    """ref_sim.series.file_games.play_game's stand-in: random legal players, but Otter never
    writes against Random2 (not up when the game began: a time-out at its first .go) and writes
    an empty line at its move from ply 6 on against Random3 (Invalid move!). Each bot used
    0.25 CPU-s and 31.5 MB."""
    logs.mkdir(parents=True, exist_ok=True)
    players = {name: random.Random((agent_seeds or {}).get(name, 0)) for name in names}
    for name in names:
        command = " ".join(specs[name].command(name, directory, settings.time_limit))
        (logs / f"game-{number:04d}-{name}.log").write_text(
            f"$ {command}\n" + (OTTER_LOG if name == "Otter" else ""))
    other = next(name for name in names if name != "Otter") if "Otter" in names else None

    def answer(mover, ply, game):
        if mover == "Otter" and other == "Random2":
            return None
        if mover == "Otter" and other == "Random3" and ply >= 6:
            return 0.01, "\n"
        board, spot = players[mover].choice(game.legal_moves())
        return 0.01, f"{mover} {board} {spot}\n"
    record = virtual_games.Virtual(answer).play(settings.referee(), names=tuple(names), seed=seed,
                                                first=first, opening=opening)
    record.save(logs / f"game-{number:04d}.json")
    return Played(record, late_start={"Otter": 2.0} if other == "Random2" else {},
                  usage={name: {"cpu_seconds": 0.25, "peak_mb": 31.5} for name in names})


@pytest.fixture(scope="module")
def event(tmp_path_factory):
    """The tournament's --out folder, its whole replay written by uttt-replay too."""
    out = virtual_games.tournament(faulty_game, tmp_path_factory.mktemp("event") / "class")
    assert replay.main([str(out)]) == 0
    return out


def lines_of(out):
    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


def page_data(path):
    return embedded(Path(path).read_text(encoding="utf-8"))


class Links(HTMLParser):
    """Each link of a page, with the section it is in."""

    def __init__(self, text):
        super().__init__()
        self.section, self.links = None, []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.section = attrs.get("id")
        elif tag == "a" and "href" in attrs:
            self.links.append((self.section, attrs["href"]))


def pairing_page(out, name):
    return next(path for path in (out / "replays").glob("*-vs-*.html") if name in path.name)


# -- the replay pages -----------------------------------------------------------------------

def test_a_tournaments_replay_pages_link_each_position_to_the_analysis_board(event):
    page = pairing_page(event, "Random2")
    data = page_data(page)
    assert data["board_page"] == "board.html"
    assert (page.parent / "board.html").is_file()
    assert "<title>" in (page.parent / "board.html").read_text(encoding="utf-8")


def test_a_time_out_says_who_ran_out_of_time_on_which_move_and_the_limit(event):
    games = {g["game"]: g for g in page_data(pairing_page(event, "Random2"))["games"]}
    for game in games.values():
        moves = len(game["moves"])              # the opening's and Random2's only
        assert game["verdict"][0] == (f"Otter ran out of time on move {moves + 1} (its move 1): "
                                      "no move seen within the 1 s limit")


def test_the_hints_are_on_the_page_and_true(event):
    for game in page_data(pairing_page(event, "Random2"))["games"]:
        hint = game["hints"]["Otter"]
        assert f"Hint: {hint}" in game["verdict"]
        # It ran, silent: not "had not started"; its name was given: not "give it with name=NAME:".
        assert "it was running but had printed nothing after 2 s" in hint
        assert "had not started" not in hint and "name=NAME:" not in hint
        assert "it was given name=Otter" in hint


def test_an_empty_bad_line_is_shown_as_one(event):
    games = page_data(pairing_page(event, "Random3"))["games"]
    assert [g["reason"] for g in games] == [INVALID_MOVE] * 2 and all(g["bad_line"] == "" for g in games)
    for game in games:
        assert game["verdict"] == ["Otter lost to Invalid move!: the line read was an empty line"]


def test_a_codingame_time_out_says_how_late_the_answer_came():
    line = GameLine(game=1, result="win", names=["Bot1", "Random2"], notes={},
                    winner="Random2", loser="Bot1", reason=TIME_OUT, turn_ms=100,
                    first_turn_ms=1000, late_ms=153.2,
                    moves=[{"player": "Bot1", "ms": 950.0}, {"player": "Random2", "ms": 3.0}])
    assert replay.verdict(line) == [
        "Bot1 ran out of time on move 3 (its move 2): its answer came after 0.15 s, 53.2 ms over "
        "the 0.1 s limit; its slowest move before: 0.95 s of 1 s"]
    line = dataclasses.replace(line, late_ms=None)
    assert "no answer within the 0.1 s limit, nor in the 1 s after" in replay.verdict(line)[0]


def test_a_tournaments_whole_replay_is_titled_as_the_tournament(event):
    data = page_data(event / "replay.html")
    assert data["tournament"] == {"bots": 3, "kind": "round-robin"}
    assert len(data["games"]) == 6
    # A pairing's page stays that pairing's.
    assert page_data(pairing_page(event, "Random2"))["tournament"] is None


NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not installed: the browser test reads the title where Chromium is")
def test_the_title_a_person_reads_names_the_tournament_not_its_first_pairing(event):
    script = (Path(replay.__file__).parent / "assets" / "replay.js").read_text(encoding="utf-8")
    function = re.search(r"^function pageTitle\(\) \{.*?^\}\n", script, re.MULTILINE | re.DOTALL).group(0)
    titles = []
    for data in (page_data(event / "replay.html"), page_data(pairing_page(event, "Random2"))):
        program = f"const DATA = {json.dumps(data)};\n{function}\nconsole.log(JSON.stringify(pageTitle()));"
        titles.append(json.loads(subprocess.run([NODE, "-e", program], capture_output=True, text=True,
                                                check=True, timeout=60).stdout))
    assert titles[0] == ["Tournament of 3 bots", "Tournament of 3 bots: 6 games, 0 drawn"]
    assert titles[1] == ["Otter vs Random2", "Otter vs Random2: 2 games, Otter 0 won, 2 lost, 0 drawn"]


# -- the crosstable and the team pages --------------------------------------------------------

def test_the_crosstables_faults_link_each_games_replay_and_log(event):
    links = Links((event / "crosstable.html").read_text(encoding="utf-8")).links
    faults = [href for section, href in links if section == "faults"]
    assert "team-Otter.html" in faults
    for number in (1, 2, 3, 4):             # Otter's four games: two time-outs, two empty lines
        log = f"logs/game-{number:04d}-Otter.log"
        assert log in faults and (event / log).is_file()
        replays = [href for href in faults if href.endswith(f"#game={number}")]
        target = event / replays[0].partition("#")[0]
        assert len(replays) == 1 and number in [g["game"] for g in page_data(target)["games"]]
    text = (event / "crosstable.html").read_text(encoding="utf-8")
    assert "game 3: Otter lost to Invalid move!: the line read was an empty line" in text
    # Every bot's name in the ratings links its page.
    ratings = [href for section, href in links if section == "ratings"]
    assert sorted(ratings) == ["team-Otter.html", "team-Random2.html", "team-Random3.html"]


def test_a_team_page_holds_its_games_faults_logs_usage_and_move_times(event):
    text = (event / "team-Otter.html").read_text(encoding="utf-8")
    assert "<b>boom</b>" not in text and "ValueError: &lt;b&gt;boom&lt;/b&gt;" in text   # the log as text
    assert text.count('<tr data-game="') == 4                   # its games, no others'
    assert text.count('<li data-game="') == 4                   # each a fault, with its cause
    assert "Otter ran out of time on move" in text and "the line read was an empty line" in text
    assert "it was running but had printed nothing after 2 s" in text
    assert "CPU 1.0 s over its games; peak memory 32 MB." in text
    assert re.search(r"\d+ moves timed; the slowest [\d.]+ ms of 1 s", text)
    hrefs = [href for _, href in Links(text).links]
    assert "crosstable.html" in hrefs
    for href in hrefs:                                          # every link leads to a file
        assert (event / href.partition("#")[0]).is_file(), href
    random2 = (event / "team-Random2.html").read_text(encoding="utf-8")
    assert "No faults" in random2 and random2.count('<tr data-game="') == 4


def test_uttt_replay_team_writes_one_teams_page_of_a_tournament_played_before(event, tmp_path, capsys):
    old = shutil.copytree(event, tmp_path / "class")
    for page in old.glob("team-*.html"):        # as a tournament played before team pages
        page.unlink()
    assert replay_command.main([str(old), "--team", "Otter"]) == 0
    assert capsys.readouterr().out.strip() == str(old / "team-Otter.html")
    assert [p.name for p in old.glob("team-*.html")] == ["team-Otter.html"]
    mine = (old / "team-Otter.html").read_text(encoding="utf-8")
    assert mine == (event / "team-Otter.html").read_text(encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        replay_command.main([str(old), "--team", "Walrus"])
    assert stop.value.code == 2
    assert "--team 'Walrus': no such bot in" in capsys.readouterr().err


def test_a_bot_that_could_not_start_has_why_as_its_fault(tmp_path):
    why = "exited with code 1 before the game began: ModuleNotFoundError: No module named 'x'"
    line = GameLine.from_json({
        "game": 7, "names": ["Walrus", "Otter"], "p1": "Walrus", "p2": "Otter", "result": "win",
        "winner": "Otter", "loser": "Walrus", "reason": "could not start", "notes": {},
        "cannot_start": {"Walrus": why}, "opening": [], "moves": []})
    assert replay.verdict(line) == [f"Walrus could not start: {why}"]
    assert team_page.is_fault(line, "Walrus") and not team_page.is_fault(line, "Otter")
    settings = EventSettings((Bot("x", "Walrus"), Bot("random", "Otter")))
    text = team_page.page(tmp_path, settings, [line], "Walrus", {})
    assert "Walrus could not start: exited with code 1" in text and "No module named &#x27;x&#x27;" in text


def test_a_team_file_name_is_safe_and_unique():
    settings = EventSettings(tuple(Bot("random", name) for name in ("Otter", "Team 7", "Team/7", "../x")))
    assert [team_page.team_file(settings, name) for name in settings.names] == \
        ["team-Otter.html", "team-02-Team_7.html", "team-03-Team_7.html", "team-04-x.html"]


def test_a_log_excerpt_is_its_end_bounded(tmp_path):
    log = tmp_path / "a.log"
    log.write_text("x" * 100_000 + "\n" + "".join(f"line {n}\n" for n in range(40)) + "y" * 500 + "\n")
    tail = team_page.log_tail(log)
    assert tail.splitlines()[-1] == "y" * team_page.TAIL_WIDTH + "..."
    assert tail.splitlines()[0] == "line 26" and len(tail.splitlines()) == team_page.TAIL_LINES
    assert team_page.log_tail(tmp_path) is None and team_page.log_tail(tmp_path / "gone") is None


# -- the hints are true ---------------------------------------------------------------------

NAMED = {"Otter": agent_spec("name=Otter:python3 otter.py"), "Random2": agent_spec("random")}
UNNAMED = {"Otter1": agent_spec("python3 otter.py"), "Random2": agent_spec("random")}


def timed_out(specs, loser, line=""):
    names = tuple(specs)
    winner = next(name for name in names if name != loser)
    return GameRecord(names, 1.0, result="win", winner=winner, loser=loser, reason=TIME_OUT,
                      timeout_line=line)


def test_a_bot_given_its_name_is_not_told_to_give_it():
    hint = realbots.stall_notes(timed_out(NAMED, "Otter"), {}, NAMED)["Otter"]
    assert "name=NAME:" not in hint and "is its name hard-coded?" not in hint
    assert "it was given name=Otter" in hint
    # Where no name was given, the hint still is.
    assert "give it with name=NAME:python3 otter.py" in \
        realbots.stall_notes(timed_out(UNNAMED, "Otter1"), {}, UNNAMED)["Otter1"]
    # Given one name, writing under another: the given name is not the one in its code.
    other = realbots.stall_notes(timed_out(NAMED, "Otter", "Walrus 4 0"), {}, NAMED)["Otter"]
    assert other == ("move_file had lines from 'Walrus' while Otter was to move: it was given "
                     "name=Otter but writes as 'Walrus'; give it with name=Walrus:python3 otter.py")


def test_started_and_silent_is_told_apart_from_never_started_and_crashed():
    def hint(notes, late):
        return realbots.stall_notes(timed_out(UNNAMED, "Otter1"), notes, UNNAMED, late)["Otter1"]
    silent = hint({}, {"Otter1": 2.0})
    assert "it was running but had printed nothing after 2 s, when the game began" in silent
    assert "--startup-wait S" in silent and "it kept running" in silent
    crashed = hint({"Otter1": "crashed (exited with code 1)"}, {"Otter1": 2.0})
    assert crashed == ("Otter1 never wrote move_file after its .go; it ran, printed nothing, and "
                       "exited with code 1 before its first move (its log says why)")
    never = hint({"Otter1": "crashed (could not start)"}, {"Otter1": 2.0})
    assert never == "Otter1 never started: its command could not be launched (its log says why)"
    for text in (silent, crashed, never):
        assert "had not started (said nothing)" not in text


def test_a_side_that_had_moved_gets_no_hint():
    record = timed_out(UNNAMED, "Otter1")
    record.moves = [MoveRecord("Otter1", 4, 0, 0.1)]
    assert realbots.stall_notes(record, {}, UNNAMED, {"Otter1": 2.0}) == {}


# -- in a real browser ------------------------------------------------------------------------

@pytest.mark.e2e
@needs_chromium
def test_the_pages_in_a_browser_say_why_each_game_was_lost(event, browser, tmp_path):  # noqa: F811
    page = pairing_page(event, "Random2")
    first = min(g["game"] for g in page_data(page)["games"])
    browser.open(page.as_uri() + f"#game={first}", width=1280, height=900)
    js = browser.js
    assert js("document.body.dataset.ready") == "1"
    verdict = js("document.getElementById('verdict').innerText")
    assert js("document.getElementById('verdict').hidden") is False
    assert verdict.startswith("Otter ran out of time on move ") and "Hint: Otter never wrote" in verdict
    assert js("document.getElementById('verdict').getBoundingClientRect().height") > 20
    href = js("document.getElementById('board-link').getAttribute('href')")
    assert href.startswith("board.html#rules=wpi&moves=")
    assert js("document.getElementById('board-link').hidden") is False
    browser.screenshot(tmp_path / "pairing.png")
    assert browser.errors() == []

    browser.open((event / "replay.html").as_uri(), width=1280, height=900)
    assert js("document.title") == "Tournament of 3 bots \u00b7 replay"
    assert js("document.getElementById('title').textContent").startswith("Tournament of 3 bots: 6 games")
    # No agent 1 in a whole event: no filter by its wins.
    assert "wins" not in js("[...document.querySelectorAll('#filter option')].map(o => o.value).join()")
    assert browser.errors() == []

    browser.open((event / "team-Otter.html").as_uri(), width=1280, height=900)
    assert js("document.querySelectorAll('#faults li[data-game]').length") == 4
    assert "ValueError: <b>boom</b>" in js("document.querySelector('#faults pre').textContent")
    browser.screenshot(tmp_path / "team.png")
    assert (tmp_path / "team.png").stat().st_size > 10_000
