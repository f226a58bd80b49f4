"""The agent's clock (agent/clock.py) as tables: each protocol's thinking time from the limit, the
time already gone and the pauses kept back."""

import pytest

from agent import clock
from agent.pauses import RecentPauses, StallWatch


@pytest.mark.parametrize("limit, margin, cutoff", [
    (10, None, 9.0), (1, None, 0.8), (0.5, None, 0.3), (10, 0.5, 9.5), (10, 0, 9.95),   # never past the last tick
    (0.3, None, 0.1), (0.2, None, 0.045), (0.1, None, 0.015),  # 30 % of the last tick at rehearsal limits
])
def test_the_cutoff_is_the_limit_less_the_margin_within_the_referees_last_look(limit, margin, cutoff):
    assert clock.cutoff_for(limit, margin) == pytest.approx(cutoff)


@pytest.mark.parametrize("limit, tick", [(10, 9.95), (1, 0.95), (0.1, 0.05), (0.12, 0.1), (0.05, 0.0), (0.051, 0.05)])
def test_the_referees_last_look_is_its_last_tick_under_the_limit(limit, tick):
    assert clock.last_tick(limit) == pytest.approx(tick)


@pytest.mark.parametrize("limit, first, thinking", [
    (10, 0.398, 8.602), (3, 0.118, 2.582), (1, 0.038, 0.762), (0.5, 0.018, 0.282),
    (0.1, 0.002, 0.013),     # 2 ms of the 15 ms a rehearsal limit thinks
])
def test_the_first_turn_keeps_back_a_share_of_the_last_tick_as_no_pause_is_measured_yet(limit, first, thinking):
    assert clock.first_turn_keep_back(limit) == pytest.approx(first)
    assert clock.file_thinking_time(limit, clock.cutoff_for(limit), first) == pytest.approx(thinking)


def test_the_first_turns_keep_back_gives_way_to_the_first_measured_pause():
    pauses = RecentPauses(unmeasured=0.4)
    assert pauses.largest() == 0.4
    pauses.record(late=-0.2, stall=0.03)
    assert pauses.largest() == pytest.approx(0.03)


@pytest.mark.parametrize("limit, kept_back, thinking", [
    (10, 0.0, 9.0), (10, 0.35, 8.65), (10, 8.0, 0.25 * 9.95),   # never under a quarter of the last tick
    (0.5, 0.0, 0.3), (0.5, 0.07, 0.23), (0.5, 0.25, 0.25 * 0.45),
    (0.1, 0.5, 0.0125),                                          # a quarter of 50 ms
])
def test_file_thinking_time_keeps_back_the_pauses_down_to_a_floor(limit, kept_back, thinking):
    assert clock.file_thinking_time(limit, clock.cutoff_for(limit), kept_back) == pytest.approx(thinking)


@pytest.mark.parametrize("limit, thinking, elapsed, coarse, think, write", [
    (10, 9.0, 0.01, False, 8.99, 9.99),
    (10, 9.0, -0.2, False, 9.0, 10.0),           # a .go stamped a little ahead: counted from now
    (10, 9.0, 9.5, False, 0.0, 0.5),             # late: no thought, still time to write
    (10, 9.0, 0.7, True, 8.3, 10.0),             # whole seconds: written until the limit can end
    (10, 9.0, 2.5, True, 6.5, 9.5),              # at most one granule (FAT: 2 s) of doubt
    (0.5, 0.3, 0.6, False, 0.0, 0.0),
])
def test_file_deadlines_count_from_the_go(limit, thinking, elapsed, coarse, think, write):
    assert clock.file_deadlines(limit, thinking, elapsed, coarse) == pytest.approx((think, write))


@pytest.mark.parametrize("elapsed, coarse, implausible", [
    (0.0, False, False), (-0.4, False, False), (-0.6, False, True), (10.5, False, True), (10.5, True, False),
    (12.5, True, True),
])
def test_a_go_older_than_the_limit_or_from_the_future_is_counted_from_now(elapsed, coarse, implausible):
    assert clock.implausible_go_age(elapsed, 10, coarse) is implausible


@pytest.mark.parametrize("limit_ms, margin_ms, kept_back, thinking", [
    (100, 20, 0.0, 0.080), (1000, 20, 0.0, 0.900),          # the first turn keeps a tenth back
    (100, 20, 0.045, 0.035), (100, 20, 0.070, 0.025),       # never under a quarter of the turn
    (100, 50, 0.0, 0.050), (1000, 200, 0.1, 0.700),
])
def test_codingame_thinking_time_keeps_back_the_margin_and_the_pauses(limit_ms, margin_ms, kept_back, thinking):
    assert clock.codingame_thinking_time(limit_ms, margin_ms, kept_back) == pytest.approx(thinking)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("gaps, returned_after, stall", [
    ([], 0.5, 0.0),                       # never polled: an engine that does not poll shows nothing
    ([0.01, 0.01, 0.01], 0.005, 0.0),     # polled on time throughout
    ([0.01, 0.06, 0.01], 0.005, 0.05),    # one stall of 50 ms beyond the 10 ms period
    ([0.01, 0.01], 0.09, 0.08),           # a stall after the last poll, at the deadline
    ([0.03], 0.0, 0.02),                  # before the first poll too
])
def test_a_stall_is_the_longest_gap_between_polls_beyond_the_period(gaps, returned_after, stall):
    fake = FakeClock()
    watch = StallWatch(period=0.01, clock=fake)
    asked = []
    should_stop = watch.watching(lambda: asked.append(1) or False)
    for gap in gaps:
        fake.now += gap
        assert should_stop() is False
    fake.now += returned_after
    watch.returned()
    assert watch.stall() == pytest.approx(stall)
    assert len(asked) == len(gaps)
