"""A class tournament (ref_sim/views/crosstable.py, ref_sim/series/bot_list.py): bot lists read line by line
with one-line errors naming the file and line, the crosstable page from game lines (every bot
in both tables, every cell, each score from the row's side, names as text), the pages a real
tournament writes in --out (every link a file, each replay page its pairing's games, rewritten
on resume), and the page in Chromium (both tables beside each other, a cell's link opens the
replay page, no script errors)."""

import errno
import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ref_sim.series import bot_list
from ref_sim.series.output.event_record import EventSettings
from ref_sim.series.output.game_line import GameLine
from ref_sim import tournament
from ref_sim.views import crosstable, replay
from ref_sim.referees.file_referee import TIME_OUT
# The browser driver and its skip of tests/test_replay.py, not a copy of them.
from test_replay import browser, needs_chromium  # noqa: F401  (browser: the replay tests' Chromium fixture)

NASTY = '<script>alert("x")</script>&amp;'


def settings_of(names, gauntlet=False, rounds=1):
    pairs = tournament.pairings(len(names), gauntlet)
    return EventSettings.from_json({
        "kind": "gauntlet" if gauntlet else "round-robin", "protocol": "file", "seed": 1,
        "rounds": rounds, "time_limit": 1.0,
        "bots": [{"name": name, "spec": f"spec of {name}"} for name in names],
        "pairings": [list(pair) for pair in pairs]})


def game(settings, number, pairing, points, reason="3 in a row", notes=None):
    """A games.jsonl line with what the tables read: agent 1 is the pairing's first bot."""
    a, b = (settings.names[i] for i in pairing)
    return GameLine.from_json({
        "game": number, "pairing": list(pairing), "pair": 0, "agents": [{"name": a}, {"name": b}],
        "names": [a, b], "moves": [], "result": "tie" if points == 0.5 else "win", "score": points,
        "winner": {1: a, 0: b}.get(points), "reason": "tie" if points == 0.5 else reason,
        "notes": notes or {}})


class Page(HTMLParser):
    """What the tests read of a crosstable page: each table's rows of cells (text, attributes)
    and the links."""

    def __init__(self, text):
        super().__init__()
        self.tables, self.links, self.section = {}, [], None
        self.by_section = {}            # each section's links: the crosstable's own cells
        self._cell = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.section = attrs.get("id")
            self.tables.setdefault(self.section, [])
        elif tag == "tr" and self.section:
            self.tables[self.section].append([])
        elif tag in ("td", "th") and self.section and self.tables[self.section]:
            self._cell = {"tag": tag, "text": "", **attrs}
            self.tables[self.section][-1].append(self._cell)
        elif tag == "a":
            self.links.append(attrs["href"])
            self.by_section.setdefault(self.section, []).append(attrs["href"])

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data


def body_rows(table):
    return table[1:]


# -- bot lists ----------------------------------------------------------------------------

def test_a_bot_list_skips_comments_and_blank_lines_and_says_where_each_bot_was(tmp_path):
    listing = tmp_path / "class.txt"
    listing.write_text("# the class of 2026\n\nagent:depth=2\n   # indented comment\n"
                       "  java -cp team7 Main  \nrandom\n", encoding="utf-8")
    bots = bot_list.read([listing])
    assert [(bot.text, bot.where) for bot in bots] == [
        ("agent:depth=2", f"{listing}:3"), ("java -cp team7 Main", f"{listing}:5"),
        ("random", f"{listing}:6")]


def test_a_folder_of_bot_files_is_read_in_the_order_of_their_names(tmp_path):
    (tmp_path / "team2.bot").write_text("seed:depth=1\n")
    (tmp_path / "team1.bot").write_text("random\n")
    (tmp_path / "notes.txt").write_text("not a bot\n")
    (tmp_path / "sub.bot").mkdir()                     # a folder, even so named, is no list
    assert [bot.text for bot in bot_list.read([tmp_path])] == ["random", "seed:depth=1"]
    (tmp_path / "team3.bot").write_text("# forgot the line\n")    # a team is not left out
    with pytest.raises(bot_list.BotListError, match=f"^{re.escape(str(tmp_path / 'team3.bot'))}: no bots in it"):
        bot_list.read([tmp_path])


@pytest.mark.parametrize("content, message", [
    (None, "no such file or folder"),
    ("# only a comment\n\n", "no bots in it"),
    (b"\xff\xfe\x00binary", "not UTF-8 text at byte 0"),
    ("random\nra\0ndom\n", ":2: not a line of text"),
])
def test_a_list_that_is_no_list_is_one_line(tmp_path, content, message):
    path = tmp_path / "bots.txt"
    if isinstance(content, str):
        path.write_text(content)
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(bot_list.BotListError) as error:
        bot_list.read([path])
    assert message in str(error.value) and "\n" not in str(error.value)


def test_an_empty_folder_and_a_huge_file_are_refused_unread(tmp_path):
    with pytest.raises(bot_list.BotListError, match=r"no \*\.bot files in this folder"):
        bot_list.read([tmp_path])
    big = tmp_path / "big.txt"
    big.write_bytes(b"random\n" * 10)        # 70 bytes on every system (text mode writes \r\n on Windows)
    with pytest.raises(bot_list.BotListError, match="70 bytes, more than the 20 read here: not a bot list"):
        bot_list.read_file(big, max_bytes=20)


def test_a_bad_spec_in_a_list_is_one_line_naming_its_file_and_line(tmp_path, capsys):
    listing = tmp_path / "bots.txt"
    listing.write_text("random\nagent:depth=x\n")
    with pytest.raises(SystemExit) as stop:
        tournament.main(["--bots", str(listing), "--out", str(tmp_path / "event")])
    last = capsys.readouterr().err.strip().splitlines()[-1]        # after the usage
    assert stop.value.code == 2
    assert last == (f"python -m ref_sim.tournament: error: {listing}:2: built-in 'agent': "
                    "depth must be an integer from 1 to 81, got 'x'")
    assert not (tmp_path / "event").exists()                        # nothing made


@pytest.mark.skipif(os.name == "nt", reason="Windows' command lines have no unclosed quote (one runs to the "
                                              "end) and ' does not quote: ref_sim.command_words")
def test_quotes_that_do_not_close_are_one_line_too(tmp_path, capsys):
    listing = tmp_path / "bots.txt"
    listing.write_text("random\npython3 'bot.py\n")
    with pytest.raises(SystemExit) as stop:
        tournament.main(["--bots", str(listing), "--protocol", "stdio"])
    assert stop.value.code == 2
    assert f"{listing}:2: No closing quotation" in capsys.readouterr().err


# -- the page, from game lines ------------------------------------------------------------

def test_every_bot_and_every_cell_each_from_the_row_side():
    settings = settings_of(["Alpha1", "Beta2", NASTY])
    games = [game(settings, 1, (0, 1), 1), game(settings, 2, (0, 1), 0.5),
             game(settings, 3, (0, 2), 1), game(settings, 4, (0, 2), 1, reason=TIME_OUT),
             game(settings, 5, (1, 2), 0,
                  notes={"Beta2": "crashed (exited with code 1)"}), game(settings, 6, (1, 2), 1)]
    links = {(0, 1): "replays/a.html", (0, 2): "replays/b.html", (1, 2): "replays/c.html"}
    text = crosstable.page(settings, games, links, report=["Rank Bot", NASTY])
    assert NASTY not in text and "&lt;script&gt;" in text          # a name is text, not markup
    page = Page(text)

    ratings = page.tables["ratings"]
    assert [c["text"] for c in ratings[0]] == ["Rank", "Bot", "Elo", "±", "Games", "Score",
                                               "Draws", "Time-outs", "Crashes", "Invalid"]
    rows = {row[1]["text"]: [c["text"] for c in row] for row in body_rows(ratings)}
    assert list(rows) == ["Alpha1", "Beta2", NASTY]                 # best first
    assert rows["Alpha1"][0] == "1" and rows["Alpha1"][4:7] == ["4", "87.5%", "25.0%"]
    assert rows[NASTY][7:10] == ["1", "0", "0"]                     # lost once on time
    assert rows["Beta2"][7:10] == ["0", "1", "0"]                   # crashed once

    table = page.tables["crosstable"]
    header = [c.get("title") for c in table[0] if "col" in c.get("class", "")]
    assert header == ["Alpha1", "Beta2", NASTY]
    cells = {}
    assert table[0][0]["text"] == "Bot"          # numbered one way: the list number in the names
    for row in body_rows(table):
        name = row[0]["text"]
        for column, cell in zip(header, row[1:4]):
            cells[name, column] = cell
        assert row[4]["class"] == "total"
    assert len(cells) == 9
    assert all(cells[name, name]["class"] == "self" for name in header)
    # The row's points of the games, then its wins-losses-draws.
    assert cells["Alpha1", "Beta2"]["text"] == "1.5/21-0-1"
    assert cells["Beta2", "Alpha1"]["text"] == "0.5/20-1-1"
    assert cells["Alpha1", NASTY]["text"] == "2/22-0-0"
    assert cells[NASTY, "Alpha1"]["text"] == "0/20-2-0"
    assert cells["Beta2", NASTY]["text"] == "1/21-1-0"
    assert cells["Alpha1", NASTY]["data-pairing"] == cells[NASTY, "Alpha1"]["data-pairing"] == "0-2"
    assert [row[4]["text"] for row in body_rows(table)] == ["3.5/4", "1.5/4", "1/4"]
    # Each played cell links to its pairing's page, from both sides.
    assert sorted(page.by_section["crosstable"]) == sorted(2 * list(links.values()))
    assert "<li>Beta2: 1 wins, 2 losses, 1 draws (crashes 1); exited with code 1 x1<ul" in text
    assert "1 wins, 3 losses, 0 draws (time-outs 1)<ul" in text
    assert [row[2]["text"] for row in body_rows(page.tables["bots"])] == \
        ["spec of Alpha1", "spec of Beta2", f"spec of {NASTY}"]
    assert "1.5/2" in text and "The text report" in text


def test_a_gauntlet_stopped_early_leaves_the_cells_it_did_not_play():
    settings = settings_of(["Agent1", "Random2", "Seed3"], gauntlet=True)
    games = [game(settings, 1, (0, 1), 1)]
    page = Page(crosstable.page(settings, games, {(0, 1): "replays/x.html"}))
    classes = {(row[0]["text"], i): cell["class"] for row in body_rows(page.tables["crosstable"])
               for i, cell in enumerate(row[1:4])}
    header = [c["title"] for c in page.tables["crosstable"][0] if "col" in c.get("class", "")]
    at = {name: i for i, name in enumerate(header)}
    assert classes["Agent1", at["Random2"]] == "played"
    assert classes["Agent1", at["Seed3"]] == "unplayed"            # paired, not played yet
    assert classes["Random2", at["Seed3"]] == "none"               # a gauntlet never pairs them
    assert page.links == ["replays/x.html"] * 2                   # from both sides
    text = crosstable.page(settings, games, {})
    assert "1 of 4 games played (stopped early or under way" in text
    # Seed3 has no game: no rank, no rating, and not a group that never met the others.
    assert "groups that never met" not in text
    rows = {row[1]["text"]: [c["text"] for c in row]
            for row in body_rows(Page(text).tables["ratings"])}
    assert rows["Seed3"][:4] == ["-", "Seed3", "-", "-"]


def test_a_page_that_cannot_be_written_is_a_line_not_a_traceback(tmp_path):
    settings = settings_of(["Agent1", "Random2"])
    games = [game(settings, 1, (0, 1), 1)]
    # No games.jsonl to read the moves from: the crosstable without replay pages.
    lines = crosstable.write_pages(tmp_path, settings, games)
    assert lines[0] == f"Crosstable: {tmp_path / 'crosstable.html'}"
    assert lines[1].startswith("replay pages not written: ") and "no games.jsonl" in lines[1]
    assert (tmp_path / "crosstable.html").is_file() and not (tmp_path / "replays").exists()
    gone = tmp_path / "gone"
    lines = crosstable.write_pages(gone, settings, games)
    assert len(lines) == 1 and lines[0].startswith(f"Crosstable not written: {gone}")


def test_a_full_disk_leaves_no_half_page_and_stops_nothing(tmp_path, monkeypatch):
    settings = settings_of(["Agent1", "Random2"])
    games = [game(settings, 1, (0, 1), 1)]

    write_text = Path.write_text

    def full(path, text, *args, **kwargs):      # a start written, then no space left
        write_text(path, text[:100], *args, **kwargs)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(Path, "write_text", full)
    lines = crosstable.write_pages(tmp_path, settings, games)
    assert lines == [f"Crosstable not written: {tmp_path / 'crosstable.html'}: "
                     f"{os.strerror(errno.ENOSPC)}"]
    assert list(tmp_path.iterdir()) == []


def test_the_docstring_examples_hold():
    import doctest
    assert doctest.testmod(bot_list).failed == 0


def test_replay_file_names_are_unique_and_safe():
    settings = settings_of(["Team 7", "Team/7", "../x", ""] + [f"B{n}" for n in range(8)])
    names = {replay.replay_file(settings, pair) for pair in settings.pairings}
    assert len(names) == len(settings.pairings)
    assert all(re.fullmatch(r"[\w.-]+\.html", name) and not name.startswith(".") for name in names)
    assert replay.replay_file(settings, [0, 1]) == "01-Team_7-vs-02-Team_7.html"
    assert replay.replay_file(settings, [2, 3]) == "03-x-vs-04-bot.html"


# -- a real tournament --------------------------------------------------------------------

def embedded(text):
    found = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>',
                      text, re.DOTALL)
    return json.loads(found.group(1))


def links_of(out):
    return Page((out / "crosstable.html").read_text(encoding="utf-8")).by_section["crosstable"]


@pytest.mark.e2e
def test_one_command_from_a_bot_list_writes_the_crosstable_and_a_replay_page_per_pairing(
        tmp_path, capsys):
    listing = tmp_path / "bots.txt"
    listing.write_text("# three stdin/stdout players\nrandom\n\nrandom\n")
    out = tmp_path / "event"
    assert tournament.main(["agent:depth=1", "--bots", str(listing), "--protocol", "stdio",
                            "--seed", "4", "-q", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"Crosstable: {out / 'crosstable.html'}  replays: {out / 'replays'} (3 pages" in printed
    event = json.loads((out / "tournament.json").read_text())
    assert [bot["spec"] for bot in event["bots"]] == ["agent:depth=1", "random", "random"]
    links = links_of(out)
    assert len(links) == 6 and len(set(links)) == 3                # each pairing from both sides
    for link in set(links):
        target = out / link
        assert target.is_file(), link
        data = embedded(target.read_text(encoding="utf-8"))
        games = data["games"]
        assert len(games) == 2 and len({tuple(g["agents"]) for g in games}) == 1
        assert data["agents"] == games[0]["agents"]
        assert link.startswith("replays/") and all(name in link for name in data["agents"])
    page = Page((out / "crosstable.html").read_text(encoding="utf-8"))
    assert [row[1]["text"] for row in body_rows(page.tables["ratings"])][0] == "Agent1"
    assert sorted(tuple(row[0]["text"] for row in body_rows(page.tables["crosstable"]))) == \
        ["Agent1", "Random2", "Random3"]

    # Resumed for a second round: the pages are written again with all four games.
    assert tournament.main(["--resume", "--out", str(out), "--rounds", "2", "-q"]) == 0
    capsys.readouterr()
    for link in set(links_of(out)):
        assert len(embedded((out / link).read_text(encoding="utf-8"))["games"]) == 4
    assert "12 of 12 games played (complete)" in (out / "crosstable.html").read_text()


@pytest.mark.e2e
def test_without_out_no_pages_are_promised(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert tournament.main(["random", "random", "--protocol", "stdio", "--seed", "2", "-q"]) == 0
    assert "Crosstable" not in capsys.readouterr().out


# -- in a real browser --------------------------------------------------------------------

@pytest.mark.e2e
@needs_chromium
def test_the_crosstable_in_a_browser_sits_beside_the_ratings_and_opens_the_replays(
        tmp_path, browser, capsys):  # noqa: F811 (browser: the replay tests' fixture, imported above)
    out = tmp_path / "event"
    assert tournament.main(["agent:depth=1", "random", "random", "random", "--protocol",
                            "stdio", "--seed", "5", "-q", "--out", str(out)]) == 0
    capsys.readouterr()
    browser.open((out / "crosstable.html").as_uri(), width=1400, height=900)
    js = browser.js
    assert js("document.querySelectorAll('#ratings tbody tr').length") == 4
    assert js("document.querySelectorAll('#crosstable tbody tr').length") == 4
    assert js("document.querySelectorAll('#crosstable td.self').length") == 4
    assert js("document.querySelectorAll('#crosstable td.played a').length") == 12
    # Beside each other on a wide screen: the crosstable starts right of the ratings, level.
    ratings = js("JSON.stringify(document.getElementById('ratings').getBoundingClientRect())")
    cross = js("JSON.stringify(document.getElementById('crosstable').getBoundingClientRect())")
    ratings, cross = json.loads(ratings), json.loads(cross)
    assert cross["left"] >= ratings["right"] and cross["top"] == ratings["top"]
    # Every cell is drawn: none collapsed to nothing.
    assert js("[...document.querySelectorAll('#crosstable td.played')]"
              ".every(td => td.offsetWidth > 20 && td.offsetHeight > 20)")
    browser.screenshot(tmp_path / "crosstable.png")
    assert (tmp_path / "crosstable.png").stat().st_size > 10_000
    assert browser.errors() == []

    href = js("document.querySelector('#crosstable td.played a').href")
    browser.events.clear()
    browser.open(href)
    assert js("document.body.dataset.ready") == "1"
    assert js("document.getElementById('errors').hidden") is True
    assert js("document.querySelectorAll('#games tr').length") == 2
    assert " vs " in js("document.title")
    assert browser.errors() == []
    back = js("document.getElementById('crosstable-link').href")
    assert back == (out / "crosstable.html").as_uri()


def pages_written(out: Path) -> list[str]:
    """The crosstable and replay pages in ``out`` written since the last call (each one's
    modification time is set to 0 once seen: a page written again has a new one)."""
    written = []
    for page in [out / crosstable.PAGE, *(out / replay.REPLAYS).glob("*-vs-*.html")]:
        if page.exists() and page.stat().st_mtime_ns != 0:
            written.append(page.name)
            os.utime(page, ns=(0, 0))
    return sorted(written)


@pytest.mark.e2e
def test_the_crosstable_is_kept_current_as_each_pairing_ends(tmp_path):
    out, seen = tmp_path / "t", []

    class Watched(tournament.Tournament):
        def after_game(self, out, games, game):
            super().after_game(out, games, game)
            seen.append((len(games), pages_written(out)))

    code = Watched().main(["random", "random", "random", "--rounds", "1", "--time-limit", "0.2",
                           "--out", str(out), "-q"])
    assert code == 0
    # As each pairing ends (every second game), the crosstable and that pairing's page only.
    assert [games for games, _ in seen] == [1, 2, 3, 4, 5, 6]
    assert all(written == [] for games, written in seen if games % 2)
    ended = [written for games, written in seen if games % 2 == 0]
    assert all(len(written) == 2 and crosstable.PAGE in written for written in ended)
    pairings = {name for written in ended for name in written} - {crosstable.PAGE}
    assert len(pairings) == 3
    assert pages_written(out) == sorted({crosstable.PAGE} | pairings)    # at the end, every one
