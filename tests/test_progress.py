"""ref_sim.series.output.progress: the one progress line of the series runners, on a terminal and in a log."""

import io

from ref_sim.series.stats import match_stats
from ref_sim.series.output.progress import Progress, Summary, duration


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_on_a_terminal_the_line_is_redrawn_in_place_with_every_figure():
    stream, clock = io.StringIO(), Clock()
    progress = Progress(100, stream=stream, terminal=True, clock=clock)
    sprt = match_stats.sprt(0, 10, 0.05, 0.05, ptnml=[1, 2, 5, 3, 4])
    clock.now += 60.0                           # 30 games in a minute: 70 more in 2m20s
    progress.update(30, Summary(12, 9, 9, [1, 2, 5, 3, 4], sprt, (2, 1)))
    text = stream.getvalue()
    assert text.startswith("\r[#########.....................] 30/100  +12 -9 =9  Elo ")
    assert text.endswith("\033[K")              # clears what a longer line left
    assert f"LLR {sprt.llr:.2f} ({sprt.lower:.2f}, {sprt.upper:.2f})" in text
    assert "time-outs 2/1" in text and "at most 2m20s left" in text   # at most: the SPRT may stop
    assert "\n" not in text
    # A game that went wrong is printed above the line, which is drawn again under it.
    progress.game("Game 31/100: Random2 wins: Time out!", notable=True)
    progress.game("Game 32/100: draw", notable=False)             # not worth a line
    lines = stream.getvalue().split("\n")
    # The game's line overwrites the bar (back to the start, cleared to the end), then a new one.
    assert lines[0].endswith("\033[K\rGame 31/100: Random2 wins: Time out!\033[K")
    assert lines[1].startswith("\r[#########") and "Game 32" not in stream.getvalue()
    progress.close()
    assert stream.getvalue().endswith("\n")


def test_in_a_log_every_game_is_a_line_and_the_figures_come_every_ten_games():
    stream = io.StringIO()
    progress = Progress(25, stream=stream, terminal=False)
    assert not progress.terminal and Progress(5, stream=io.StringIO()).terminal is False
    for done in range(1, 26):
        progress.game(f"Game {done}/25: draw")
        progress.update(done, Summary(0, 0, done, [0, 0, done // 2, 0, 0], None))
    progress.close()
    lines = stream.getvalue().splitlines()
    assert [line for line in lines if line.startswith("Game ")] == [f"Game {n}/25: draw" for n in range(1, 26)]
    figures = [line for line in lines if line.startswith("Progress: ")]
    assert [line.split()[1] for line in figures] == ["10/25", "20/25"]    # not at 25: the summary follows
    assert "\r" not in stream.getvalue() and "\033" not in stream.getvalue()
    assert "LLR" not in figures[0] and "Elo 0.0 +/- " in figures[0]


def test_a_stop_prints_the_figures_once_in_a_log():
    stream, clock = io.StringIO(), Clock()
    progress = Progress(100, stream=stream, terminal=False, clock=clock)
    clock.now += 30.0
    progress.update(3, Summary(1, 1, 1, None, None), stopped=True)
    elo = match_stats.estimate(1, 1, 1).elo_text()
    assert stream.getvalue() == f"Progress: 3/100  +1 -1 =1  Elo {elo}  time-outs 0/0  ~16m10s left\n"


def test_a_resumed_series_estimates_from_its_own_games_and_a_pairing_has_its_label():
    stream, clock = io.StringIO(), Clock()
    progress = Progress(20, stream=stream, terminal=False, done=10, every=1, label="agent vs seed",
                        clock=clock)                       # resumed: 10 games were played before
    clock.now += 20.0
    progress.update(12, Summary(6, 6, 0, None, None))      # 2 games in 20 s: 8 more in 80 s
    last = stream.getvalue().splitlines()[-1]
    assert last.startswith("Progress: agent vs seed: 12/20  +6 -6 =0") and last.endswith("~1m20s left")


def test_one_game_says_too_few_games():
    stream = io.StringIO()
    Progress(2, stream=stream, terminal=True).update(1, Summary(1, 0, 0, None, None))
    assert "Elo too few games" in stream.getvalue() and "inf" not in stream.getvalue()


def test_durations():
    assert [duration(s) for s in (0, 59.4, 60, 3599, 3600, 36000)] == \
        ["0s", "59s", "1m00s", "59m59s", "1h00m", "10h00m"]
