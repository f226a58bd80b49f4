"""The machine's time-outs told apart from the bot's (ref_sim/series/process/turn_share.py measures, ref_sim/series/output/machine_load.py reads), and whether a
ranking separates its bots (ref_sim/series/stats/ratings.py's gaps).

A turn's figures from scheduler counters (fake ones: tables); a fake /proc read as Linux lays it
out; the meter following the file referee's real events (its state machine on a virtual clock,
tests/virtual_games.py) with fake counters: a bot kept waiting for a core is marked, one that had
its core or slept is not, and nothing is marked where nothing can be measured.  A tournament
played through those seams says so in its text, crosstable and team pages.  Then two real games
(e2e): a bot asleep past its limit is its own fault; one pinned to a core three busy loops share
is the machine's.  Nothing here asserts on elapsed time."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import virtual_games
from ref_sim import match, tournament
from ref_sim.referees.file_referee import TIME_OUT, Notify
from ref_sim.series.stats import ratings
from ref_sim.series.output import machine_load, report
from ref_sim.series.output.event_record import read_event
from ref_sim.series.output.game_line import GameLine, Played
from ref_sim.series.process import turn_share
from ref_sim.views import replay, team_page

GIGA = 1_000_000_000


# -- one turn's figures -----------------------------------------------------------------------

@pytest.mark.parametrize("start, end, wall, expected", [
    # alone on its core: ran the whole turn, never waited
    ({1: (0, 0)}, {1: (GIGA, 0)}, 1.0, {"cpu": 1.0, "waited": 0.0, "seconds": 1.0}),
    # a shared core: ran 41 %, runnable but waiting 55 %
    ({1: (5 * GIGA, 2 * GIGA)}, {1: (5 * GIGA + 410_000_000, 2 * GIGA + 550_000_000)}, 1.0,
     {"cpu": 0.41, "waited": 0.55, "seconds": 1.0}),
    # asleep: neither ran nor waited
    ({1: (GIGA, 0)}, {1: (GIGA, 0)}, 2.0, {"cpu": 0.0, "waited": 0.0, "seconds": 2.0}),
    # two threads add up (more than a core: it had two); one begun during the turn counts whole
    ({1: (0, 0)}, {1: (GIGA, 0), 2: (GIGA // 2, GIGA // 4)}, 1.0,
     {"cpu": 1.5, "waited": 0.25, "seconds": 1.0}),
    # a thread that ended is lost, and a reused id never counts negative
    ({1: (0, 0), 2: (9 * GIGA, 9 * GIGA)}, {1: (GIGA // 2, 0), 2: (0, 0)}, 0.5,
     {"cpu": 1.0, "waited": 0.0, "seconds": 0.5}),
    (None, {1: (0, 0)}, 1.0, None),        # not running at its start
    ({1: (0, 0)}, None, 1.0, None),        # gone at its end
    ({1: (0, 0)}, {1: (0, 0)}, 0.0, None),  # no time passed: no share
])
def test_a_turns_figures_are_its_run_and_wait_over_the_wall_time(start, end, wall, expected):
    assert turn_share.figures(start, end, wall) == expected


@pytest.mark.parametrize("cpu, waited, machines", [
    (0.41, 0.55, True),      # wanted the core, kept waiting: the machine's
    (0.30, 0.50, True),      # at the thresholds: waited half the turn
    (0.02, 0.00, False),     # asleep or blocked: waited for no core, its own
    (0.98, 0.01, False),     # had its core and still ran out: its own
    (0.45, 0.30, False),     # slowed, but slept or blocked most of what it lost
    (0.60, 0.90, False),     # two threads waiting, yet more than half a core: a fair share
])
def test_a_time_out_is_the_machines_only_below_half_a_core_while_waiting_for_one(cpu, waited, machines):
    assert machine_load.is_machines({"cpu": cpu, "waited": waited, "seconds": 1.0}) is machines


@pytest.mark.parametrize("measured", [None, {}, {"cpu": "x", "waited": 1}, [0.1, 0.9], "0.1"])
def test_what_is_no_measure_never_marks(measured):
    assert machine_load.is_machines(measured) is False


def fake_proc(root: Path, tasks: dict) -> Path:
    """A /proc with ``tasks``: ``{pid: {tid: (run, wait, [children])}}``."""
    for pid, threads in tasks.items():
        for tid, (run, wait, children) in threads.items():
            folder = root / str(pid) / "task" / str(tid)
            folder.mkdir(parents=True)
            (folder / "schedstat").write_text(f"{run} {wait} 7\n")
            (folder / "children").write_text("".join(f"{child} " for child in children))
    return root


class Running:
    def __init__(self, pid):
        self.pid = pid

    def poll(self):
        return None


def test_the_whole_process_tree_is_read_every_thread_of_it(tmp_path):
    proc = fake_proc(tmp_path, {
        10: {10: (1, 2, [11])},                          # the keeper
        11: {11: (100, 200, [12]), 13: (5, 6, [])},       # the bot, two threads, a child
        12: {12: (7, 8, [])},
        99: {99: (1000, 1000, [])},                      # someone else's
    })
    assert sorted(turn_share.tree(10, str(proc))) == [10, 11, 12]
    assert turn_share.snapshot(Running(10), str(proc)) == {
        10: (1, 2), 11: (100, 200), 13: (5, 6), 12: (7, 8)}
    assert turn_share.snapshot(Running(12), str(proc)) == {12: (7, 8)}
    assert turn_share.snapshot(None, str(proc)) is None


def test_a_cgroups_processes_count_too_and_a_vanished_one_is_skipped(tmp_path):
    proc = fake_proc(tmp_path, {10: {10: (1, 1, [])}, 20: {20: (3, 4, [])}})

    class Cgroup:
        def pids(self):
            return [10, 20, 30]                         # 20 left the tree; 30 is gone

    process = Running(10)
    process.cgroup = Cgroup()
    assert turn_share.snapshot(process, str(proc)) == {10: (1, 1), 20: (3, 4)}


# -- the meter on the referee's events ------------------------------------------------------------

class Metered(virtual_games.Virtual):
    """The referee's game on a virtual clock, its events handed to ``meter`` as they happen."""

    def __init__(self, answer, meter):
        super().__init__(answer)
        self.meter = meter

    def perform(self, action):
        if isinstance(action, Notify):
            self.meter.file_event(action.event)
        return super().perform(action)


def silent(name):
    """Legal moves, except that ``name`` never writes one: it loses on time at its first .go."""
    def answer(mover, ply, game):
        return None if mover == name else virtual_games.legal(0.01)(mover, ply, game)
    return answer


def metered_game(rates: dict, enabled: bool = True, answer=None):
    """A game Otter loses on time; each bot's counters grow at ``rates[name]`` = (run, wait)
    seconds per second of the virtual clock.  Returns (record, the games.jsonl keys)."""
    holder = {}

    def read(name):
        run, wait = rates[name]
        now = holder["game"].now
        return {hash(name) % 1000: (int(run * now * GIGA), int(wait * now * GIGA))}
    meter = turn_share.TurnMeter({"Walrus": "Walrus", "Otter": "Otter"},
                                 clock=lambda: holder["game"].now, read=read, enabled=enabled)
    holder["game"] = game = Metered(answer or silent("Otter"), meter)
    record = game.play()
    return record, meter.keys(record.reason, record.loser)


def test_a_time_out_while_kept_waiting_for_a_core_is_marked_the_machines():
    record, keys = metered_game({"Walrus": (1.0, 0.0), "Otter": (0.4, 0.55)})
    assert (record.reason, record.loser) == (TIME_OUT, "Otter")
    figures = keys["timeout_share"]["Otter"]
    assert (figures["cpu"], figures["waited"]) == (0.4, 0.55)
    assert figures["seconds"] >= record.time_limit           # from its .go to the verdict
    assert keys["machine_timeout"] == {"Otter": figures}


def test_a_time_out_with_the_core_to_itself_or_asleep_is_the_bots_own():
    for rates in [(1.0, 0.0), (0.0, 0.0)]:
        _, keys = metered_game({"Walrus": (1.0, 0.0), "Otter": rates})
        assert keys["timeout_share"]["Otter"]["cpu"] == rates[0]
        assert "machine_timeout" not in keys


def test_without_the_counters_a_time_out_is_unmeasured_and_never_marked():
    _, keys = metered_game({"Walrus": (1.0, 0.0), "Otter": (0.1, 0.9)}, enabled=False)
    assert keys == {"timeout_share": {"Otter": None}}


def test_a_game_not_lost_on_time_has_no_keys():
    record, keys = metered_game({"Walrus": (0.1, 0.9), "Otter": (0.1, 0.9)},
                                answer=virtual_games.legal(0.01))
    assert record.reason != TIME_OUT and keys == {}


def test_a_codingame_programs_turns_are_measured_from_its_input_to_a_missed_answer():
    now = [0.0]
    meter = turn_share.TurnMeter({"P": "P"}, clock=lambda: now[0], enabled=True,
                                 read=lambda name: {1: (int(0.2 * now[0] * GIGA), int(0.7 * now[0] * GIGA))})

    class Program:
        name = "P"

        def send(self, text):
            return now[0]

        def answer(self, timeout, stop=None):
            now[0] += timeout
            return None                     # no answer in time

    program = Program()
    turn_share.watch(meter, program)
    now[0] = 3.0                            # the earlier turns took time: not this one's
    program.send("input")
    program.answer(0.1)
    program.answer(1.0)                     # the late wait after it: not the turn
    keys = meter.keys(TIME_OUT, "P")
    assert keys["machine_timeout"]["P"] == {"cpu": 0.2, "waited": 0.7, "seconds": 0.1}


# -- what the records say -----------------------------------------------------------------------

LOADED = {"Walrus": (1.0, 0.0), "Otter": (0.3, 0.65)}
ASLEEP = {"Walrus": (1.0, 0.0), "Otter": (0.0, 0.0)}


def loaded_game(number, specs, names, directory, logs, settings, *, seed=None, first=None,
                opening=None, agent_seeds=None, must_start=False, stop=None, observe=None):
    """ref_sim.series.file_games.play_game's stand-in: Otter never moves; against Random2 the
    machine kept it waiting for a core, against Random3 it slept.  The meter follows the real
    referee's events with those counters, as play_game's does."""
    logs.mkdir(parents=True, exist_ok=True)
    for name in names:
        (logs / f"game-{number:04d}-{name}.log").write_text("$ bot\n")
    other = next(name for name in names if name != "Otter") if "Otter" in names else None
    rates = {"Random2": LOADED, "Random3": ASLEEP}.get(other)
    holder = {}

    def read(name):
        run, wait = (rates or {}).get(name, (1.0, 0.0))
        now = holder["game"].now
        return {7: (int(run * now * GIGA), int(wait * now * GIGA))}
    meter = turn_share.TurnMeter({name: name for name in names}, clock=lambda: holder["game"].now,
                                 read=read, enabled=True)
    holder["game"] = game = Metered(silent("Otter") if other else virtual_games.legal(0.01), meter)
    record = game.play(settings.referee(), names=tuple(names), seed=seed, first=first,
                       opening=opening)
    record.save(logs / f"game-{number:04d}.json")
    return Played(record, **meter.keys(record.reason, record.loser))


@pytest.fixture(scope="module")
def event(tmp_path_factory):
    out = virtual_games.tournament(loaded_game, tmp_path_factory.mktemp("event") / "class")
    games = [GameLine.from_json(json.loads(line))
             for line in (out / "games.jsonl").read_text().splitlines()]
    return out, games


def test_the_record_marks_the_loaded_time_outs_and_keeps_the_figures_of_all(event):
    _, games = event
    for game in games:
        names = set(game.names)
        if "Otter" not in names:
            assert game.timeout_share is None and game.machine_timeout is None
        elif "Random2" in names:
            assert game.timeout_share["Otter"]["waited"] == 0.65
            assert game.machine_timeout == game.timeout_share
        else:
            assert game.timeout_share["Otter"]["cpu"] == 0.0
            assert game.machine_timeout is None


def test_the_tournaments_text_says_how_many_results_load_may_have_decided(event):
    out, games = event
    lines = tournament.report_lines(read_event(out / "tournament.json"), games)
    loaded = [g.game for g in games if g.machine_timeout is not None]
    (head,) = [line for line in lines if line.startswith("Load:")]
    assert head.startswith(f"Load: {len(loaded)} results load may have decided")
    assert f"{len(games) - len(loaded) - sum('Otter' not in g.names for g in games)} " \
           "time-outs the bots' own" in head
    assert loaded
    for number in loaded:
        assert any(line.startswith(f"  game {number}: Otter had 30 % of a core and waited for "
                                   "one 65 % of its") for line in lines)


def test_the_crosstable_counts_the_loaded_time_outs_and_lists_them(event):
    out, games = event
    page = (out / "crosstable.html").read_text()
    loaded = [g.game for g in games if g.machine_timeout is not None]
    timeouts = sum(g.timeout_share is not None for g in games)
    assert f"{timeouts} <small>({len(loaded)} load)</small>" in page
    assert '<section id="load">' in page
    for number in loaded:
        assert f'<li data-game="{number}">game {number}: Otter had 30 % of a core' in page
    faults = page[page.index('<section id="faults">'):page.index('<section id="load">')]
    marked = faults.count("[load: the machine&#x27;s time-out more than the bot&#x27;s]")
    assert marked == len(loaded)


def test_a_team_page_says_which_time_outs_were_the_machines_and_which_its_own(event):
    out, games = event
    page = (out / team_page.team_file(read_event(out / "tournament.json"), "Otter")).read_text()
    loaded = [g for g in games if g.machine_timeout is not None]
    assert loaded
    for game in [g for g in games if "Otter" in g.names]:     # its page: its games
        row = page[page.index(f'<tr data-game="{game.game}"'):]
        row = row[:row.index("</tr>")]
        marked = "Time out! (load: the machine&#x27;s more than the bot&#x27;s)" in row
        assert marked is (game.machine_timeout is not None)
    assert page.count("the machine&#x27;s time-out more than the bot&#x27;s (it was ready to run") \
        == len(loaded)
    own = [g for g in games if g.timeout_share is not None and g.machine_timeout is None]
    assert page.count("its own time-out (the machine gave it the core when it asked") == len(own)


def test_a_series_summary_says_it_too_and_that_an_unmeasured_one_is_unmarked():
    base = {"names": ["Otter", "Kea"], "agents": [{"name": "Otter"}, {"name": "Kea"}],
            "result": "win", "winner": "Kea", "loser": "Otter", "reason": TIME_OUT, "score": 0.0,
            "notes": {}, "moves": [], "opening": []}
    figures = {"cpu": 0.2, "waited": 0.75, "seconds": 1.01}
    games = [GameLine(**base, game=1, timeout_share={"Otter": figures},
                      machine_timeout={"Otter": figures}),
             GameLine(**base, game=2, timeout_share={"Otter": None}),
             GameLine(**base, game=3, timeout_share={"Otter": None})]
    lines = report.report_lines(games, ["Otter", "Kea"], paired=False)
    assert "  game 1: Otter had 20 % of a core and waited for one 75 % of its 1.01 s turn" in lines
    unmeasured = [line for line in lines if "not measured" in line]
    assert unmeasured == ["  2 time-outs not measured (the machine that played it has no "
                          "/proc/PID/schedstat: not Linux), so not told the machine's."]
    assert replay.verdict(games[1])[1].startswith("Load: Otter's turn was not measured")
    assert not any(line.startswith("Load:") for line in
                   report.report_lines([GameLine(**base, game=4)], ["Otter", "Kea"], paired=False))


# -- does the ranking separate the bots? ----------------------------------------------------

def fitted(elo, error):
    return ratings.Ratings(elo, error, [list(elo)])


def test_neighbours_whose_bars_overlap_get_an_estimate_of_the_rounds_that_would_separate_them():
    fit = fitted({"A": 60.0, "B": 20.0, "C": -80.0}, {"A": 30.0, "B": 30.0, "C": 30.0})
    overlapping, separated = ratings.gaps(fit, 2.0)
    assert (overlapping.upper, overlapping.lower, overlapping.separated) == ("A", "B", False)
    assert overlapping.rounds == pytest.approx(2.0 * (60 / 40) ** 2)     # 4.5 in all
    assert (separated.upper, separated.lower, separated.separated) == ("B", "C", True)
    assert separated.rounds is None
    lines = ratings.separation_lines(fit, 2.0)
    assert lines[0] == ("The ranking separates 1 of 2 pairs of neighbours (their 95 % error bars "
                        "do not overlap):")
    assert lines[1] == ("  A and B: bars overlap (40 Elo apart, bars 60 together): about 3 more "
                        "rounds might separate them")
    assert lines[2] == "  B above C: separated (100 Elo apart, bars 60 together)"
    assert "An estimate after 2 rounds" in lines[3]


def test_a_ranking_that_separates_everyone_says_so_and_estimates_nothing():
    fit = fitted({"A": 300.0, "B": 0.0}, {"A": 50.0, "B": 50.0})
    assert ratings.separation_lines(fit, 1.0) == [
        "The ranking separates 1 of 1 pairs of neighbours (their 95 % error bars do not overlap).",
        "  A above B: separated (300 Elo apart, bars 100 together)"]


def test_the_anchor_has_no_bar_and_groups_that_never_met_are_not_neighbours():
    fit = ratings.Ratings({"A": 0.0, "B": -30.0, "C": 5.0, "D": 0.0},
                          {"A": float("nan"), "B": 40.0, "C": 10.0, "D": 10.0},
                          [["A", "B"], ["C", "D"]], anchor="A")
    assert [(g.upper, g.lower, g.bars) for g in ratings.gaps(fit, 1.0)] == [
        ("C", "D", 20.0), ("A", "B", 40.0)]


def test_the_crosstable_and_the_text_say_whether_one_round_separates_the_bots(event):
    out, games = event
    page = (out / "crosstable.html").read_text()
    part = page[page.index('id="separation"'):]
    part = part[:part.index("</div>")]
    assert "The ranking separates 0 of 2 pairs of neighbours" in part
    assert part.count("bars overlap (") == 2
    assert "An estimate after 1 round: bars shrink as 1/sqrt(games)" in part
    text = tournament.report_lines(read_event(out / "tournament.json"), games)
    assert any(line.startswith("The ranking separates 0 of 2 pairs of neighbours") for line in text)


# -- real games (e2e) ---------------------------------------------------------------------------

needs_counters = pytest.mark.skipif(not turn_share.AVAILABLE,
                                    reason="needs Linux's /proc/PID/schedstat")

SLEEPER = "import time\ntime.sleep(60)\n"
#: Pinned to the first core it may use, it spins (a bot thinking hard).
SPINNER = ("import os\nos.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
           "while True:\n    pass\n")


def real_game(tmp_path, source):
    bot = tmp_path / "bot.py"
    bot.write_text(source)
    out = tmp_path / "out"
    assert match.main(["random", f"{sys.executable} {bot}", "--games", "1", "--time-limit", "0.3",
                       "--seed", "1", "--out", str(out), "-q", "--startup-wait", "1",
                       "--exit-wait", "1"]) == 0
    (line,) = (out / "games.jsonl").read_text().splitlines()
    return json.loads(line)


@pytest.mark.e2e
@needs_counters
def test_a_bot_asleep_past_its_limit_is_measured_and_its_own_fault(tmp_path):
    game = real_game(tmp_path, SLEEPER)
    loser = game["agents"][1]["name"]
    assert (game["reason"], game["loser"]) == (TIME_OUT, loser)
    figures = game["timeout_share"][loser]
    assert figures["cpu"] < machine_load.FAIR_SHARE and figures["waited"] < machine_load.MACHINE_WAIT
    assert "machine_timeout" not in game


@pytest.mark.e2e
@needs_counters
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity")
def test_a_bot_on_a_core_three_busy_loops_share_times_out_the_machines_fault(tmp_path):
    core = min(os.sched_getaffinity(0))
    # Each in a session of its own, as the bot is (the runner starts it so): with the kernel's
    # autogroups on, a core is shared fairly between sessions, and three hogs in the test's one
    # session would leave the bot half the core, on the limit of FAIR_SHARE (it failed so, loaded).
    hogs = [subprocess.Popen([sys.executable, "-c", SPINNER], start_new_session=True) for _ in range(3)]
    try:
        game = real_game(tmp_path, SPINNER)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    loser = game["agents"][1]["name"]
    assert (game["reason"], game["loser"], core) == (TIME_OUT, loser, core)
    figures = game["machine_timeout"][loser]       # about a quarter of the core, waiting the rest
    assert figures["cpu"] < machine_load.FAIR_SHARE <= machine_load.MACHINE_WAIT <= figures["waited"]
