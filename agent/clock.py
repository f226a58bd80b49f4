"""The agent's clock: how long it thinks each turn, in both protocols. Pure functions of the limit,
the time already gone and the pauses kept back; every constant of the time budget is here, once.

File protocol: :func:`cutoff_for` (the limit less :func:`default_margin`, never past the
referee's :func:`last_tick`), :func:`file_thinking_time` (less the recent pauses, never under
``PAUSE_FLOOR_SHARE``) and :func:`file_deadlines`, counted from the ``.go``'s mtime. CodinGame:
:func:`codingame_thinking_time`, counted from the turn's first line. Why these margins:
docs/protocol.md, "Timing at the tournament's 10 s", and docs/agent.md.

>>> round(cutoff_for(10), 3), round(file_thinking_time(10, cutoff_for(10), kept_back=0.2), 3)
(9.0, 8.8)
>>> round(codingame_thinking_time(100, 20, kept_back=0.0), 3)
0.08
"""

from __future__ import annotations

import math

# -- the file protocol ---------------------------------------------------------------------------

#: The referee's poll period (docs/protocol.md, "What the referee does").
REFEREE_TICK = 0.05
#: The coarsest file timestamps an agent may meet (FAT: 2 s).
COARSEST_TIMESTAMP = 2.0
#: At p2's first turn in a fresh game, its .go comes one p1 turn (at most the limit) after
#: first_four_moves, plus the referee's own delays: this much slack on top of the limit.
FIRST_TURN_SLACK = 1.0
#: How long an unanswered opponent line may stand, under a .go that looks like the one I answered,
#: before it counts as a real turn (only where timestamps are whole seconds): the referee calls a
#: line written out of turn at its next tick, 50 ms later; four ticks leave room for a loaded
#: referee.
OUT_OF_TURN_WAIT = 4 * REFEREE_TICK
#: Default seconds the protocol files may be missing in a joined game before it counts as aborted.
VANISH_GRACE = 2.0

#: Share of the time to the referee's last tick the agent thinks at short limits (:func:`cutoff_for`).
SHORT_LIMIT_SHARE = 0.3
#: However long the pauses kept back (:mod:`agent.pauses`), the engine still thinks this share of
#: the time to the referee's last tick (file protocol) or of the turn (CodinGame).
PAUSE_FLOOR_SHARE = 0.25
#: The first turn has no pause measured yet (:mod:`agent.pauses`): it keeps back this share of the
#: time to the referee's last tick, 0.4 s at 10 s. Beside a busy-waiting bot at load 5-7 the first
#: move landed 0.358 s past its 9.0 s target while the later moves of those games kept back 150-360
#: ms and stayed at 9.008 s or under (scripts/bench_first_move.py); the first turn pays nothing else that the later
#: ones do not (scripts/bench_first_move.py traces both).
FIRST_TURN_SHARE = 0.04
#: A ``.go`` whose modification time lies this far in the future is a clock out of step with the
#: filesystem's (a network mount): count the turn from now.
FUTURE_SLACK = 0.5


def default_margin(time_limit: float) -> float:
    """Seconds kept between the agent's cutoff and the referee's limit: ``max(0.1 * limit, 0.2)``.

    At the tournament's 10 s this is 1 s: the move lands at about 9 s, leaving room for the
    referee's last 50 ms tick (~9.95 s), the time to notice the ``.go``, a search that overruns
    its deadline, and a loaded machine. At short test limits the 0.2 s floor still leaves
    several referee ticks of slack.
    """
    return max(0.1 * time_limit, 0.2)


def default_silence(time_limit: float) -> float:
    """Seconds without any change in a joined game's files before it counts as aborted: ``max(3 * limit, 30)``.

    Nothing legitimate keeps a live game silent for much longer than one limit: the referee calls
    a time-out at the limit. Three limits, and never under 30 s, leave room for an agent started
    with a shorter ``--time-limit`` than the referee's, and for a badly stalled machine.
    """
    return max(3.0 * time_limit, 30.0)


def last_tick(time_limit: float) -> float:
    """Seconds after the ``.go`` of the referee's last look for a move: the last multiple of its
    50 ms tick strictly under the limit (9.95 s at 10 s, 0.05 s at 0.1 s; 0 when none counts).

    >>> round(last_tick(10), 3), round(last_tick(0.1), 3), round(last_tick(0.12), 3)
    (9.95, 0.05, 0.1)
    """
    ticks = math.ceil(round(time_limit / REFEREE_TICK, 6)) - 1
    return max(ticks, 0) * REFEREE_TICK


def cutoff_for(time_limit: float, margin: float | None = None) -> float:
    """Thinking budget from the ``.go`` creation: ``limit - margin``, never past the referee's last
    tick, and never under ``SHORT_LIMIT_SHARE`` (30 %) of the time to that tick.

    The floor matters at rehearsal limits (under ~0.4 s), where ``limit - margin`` leaves nothing:
    at 0.1 s only the 50 ms tick sees a move, so the agent thinks 15 ms and keeps 35 ms for
    noticing the ``.go``, stopping the search and writing (about 7 ms on an idle machine, past
    20 ms on a loaded one).
    """
    if margin is None:
        margin = default_margin(time_limit)
    tick = last_tick(time_limit)
    return max(min(time_limit - margin, tick), SHORT_LIMIT_SHARE * tick)


def first_turn_keep_back(time_limit: float) -> float:
    """Seconds the first turn keeps back for pauses, none measured yet: ``FIRST_TURN_SHARE`` of the
    time to the referee's last tick (0.398 s at 10 s, 0.118 s at 3 s, 18 ms at 0.5 s)."""
    return FIRST_TURN_SHARE * last_tick(time_limit)


def file_thinking_time(time_limit: float, cutoff: float, kept_back: float) -> float:
    """Seconds after the ``.go`` the engine thinks this turn: ``cutoff`` less the pauses kept back,
    never under ``PAUSE_FLOOR_SHARE`` of the time to the referee's last tick (nor above ``cutoff``).
    On a quiet machine nothing is kept back after the first turn (9.0 s at 10 s); on a loaded one
    a pause near the deadline no longer pushes the move past the referee's last look."""
    floor = min(cutoff, PAUSE_FLOOR_SHARE * last_tick(time_limit))
    return max(cutoff - kept_back, floor)


def rename_retry_end(time_limit: float) -> float:
    """Seconds after the ``.go`` past which a rename onto move_file that Windows refused is not
    retried: the move goes into move_file in place at once. The referee's last tick less
    ``max(2 ticks, 5 % of the limit)``, kept for that write on a loaded machine (9.45 s at 10 s,
    1.85 s at 2 s, none at 0.1 s). Retrying until the limit itself lost a game on time under Wine:
    the write in place after the last retry landed at 2.164 s of 2 s.

    >>> round(rename_retry_end(10), 3), round(rename_retry_end(2), 3), rename_retry_end(0.1)
    (9.45, 1.85, 0.0)
    """
    return max(last_tick(time_limit) - max(2 * REFEREE_TICK, 0.05 * time_limit), 0.0)


def implausible_go_age(elapsed: float, time_limit: float, coarse: bool) -> bool:
    """True when a ``.go`` that is ``elapsed`` seconds old cannot be this turn's: from the future
    (clocks out of step) or older than the limit (and a coarse timestamp's granule)."""
    return elapsed < -FUTURE_SLACK or elapsed > time_limit + (COARSEST_TIMESTAMP if coarse else 0.0)


def file_deadlines(time_limit: float, thinking: float, elapsed: float, coarse: bool) -> tuple[float, float]:
    """``(stop thinking, last useful write)`` in seconds from now, ``elapsed`` seconds after the
    ``.go``'s modification time, ``thinking`` seconds of thought in the turn.

    On whole-second timestamps (``coarse``) the ``.go`` was really created up to a granule after
    its mtime (but before now): thinking still counts from the mtime, the safe side, while writes
    go on until the latest moment the referee's limit can end."""
    elapsed = max(elapsed, 0.0)
    think = max(thinking - elapsed, 0.0)
    write = time_limit - elapsed + (min(elapsed, COARSEST_TIMESTAMP) if coarse else 0.0)
    return think, max(write, think)


# -- CodinGame ------------------------------------------------------------------------------------

#: CodinGame's limits for this game.
DEFAULT_TURN_MS = 100.0
DEFAULT_FIRST_TURN_MS = 1000.0
#: Kept below the limit, counted from the turn's first line. Measured on a 2-core machine
#: (scripts/bench_codingame.py): the search overshoots its deadline by up to ~4 ms, reading the
#: list, answering and the referee's pipe latency take well under 1 ms; the rest is for the
#: scheduler. A loaded machine needs more, measured as it plays (agent.pauses).
DEFAULT_MARGIN_MS = 20.0
#: Long limits keep back at least this fraction: the first turn's 1000 ms keeps 100 ms, since a
#: loaded machine overshot 980 ms by 35 ms (the first turn has no measured pause to go by yet).
MARGIN_FRACTION = 0.1


def codingame_thinking_time(limit_ms: float, margin_ms: float, kept_back: float) -> float:
    """Seconds of thought in a CodinGame turn of ``limit_ms``, counted from its first line: the
    limit less the margin (at least ``MARGIN_FRACTION`` of it) and the pauses kept back (seconds),
    never under ``PAUSE_FLOOR_SHARE`` of the limit."""
    margin = max(margin_ms, MARGIN_FRACTION * limit_ms)
    return max((limit_ms - margin) / 1000.0 - kept_back, PAUSE_FLOOR_SHARE * limit_ms / 1000.0)
