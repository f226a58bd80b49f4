"""The progress line of a series: one implementation for every runner (``ref_sim.match``,
``ref_sim.stdio``, and a tournament's pairings).

    [#########.....................] 30/100  +12 -9 =9  Elo 34.9 +/- 98.2  LLR 0.41 (-2.94, 2.94)  time-outs 1/0  ~4m10s left

On a terminal the line is redrawn in place and a game worth a look (a time-out, a bad move, a
crash, a hang) is printed above it; in a file or pipe every game is a line, and every
:data:`PLAIN_EVERY` games the figures come once as a ``Progress:`` line (docs/bench.md).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass

from ref_sim.series.stats import match_stats
#: In plain mode, a progress line every this many games.
PLAIN_EVERY = 10
#: Width of the bar in terminal mode.
BAR = 30


@dataclass
class Summary:
    """Agent 1's results so far: what the progress line and the summary show."""
    wins: int
    losses: int
    draws: int
    ptnml: list[int] | None                 # pentanomial counts over complete pairs (paired)
    sprt: match_stats.SprtResult | None
    timeouts: tuple[int, int] = (0, 0)      # games each agent lost on time

    @property
    def played(self) -> int:
        return self.wins + self.losses + self.draws


def duration(seconds: float) -> str:
    """``45s``, ``3m20s``, ``2h05m``.

    >>> duration(44.6), duration(200), duration(7500)
    ('45s', '3m20s', '2h05m')
    """
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Progress:
    """The progress line of one series (or one pairing: ``label``), see the module docstring.

    ``total``: the games of the series (its maximum under the SPRT); ``done``: those already
    played when this run began (a resumed series: the time left is estimated from this run's
    games).  ``terminal``: redraw in place (default: when ``stream`` is a terminal).
    ``clock``: seconds, for the estimate."""

    def __init__(self, total: int, stream=None, terminal: bool | None = None, done: int = 0,
                 every: int = PLAIN_EVERY, label: str = "", clock=time.monotonic) -> None:
        self.total, self.first_done, self.every, self.label = total, done, every, label
        self.clock = clock
        self.stream = stream if stream is not None else sys.stdout
        if terminal is None:
            isatty = getattr(self.stream, "isatty", None)
            terminal = bool(isatty and isatty())
        self.terminal = terminal
        self.started = clock()
        self.drawn = False                      # a line is on screen, not yet ended
        self.last: tuple[int, Summary] | None = None

    def text(self, done: int, summary: Summary) -> str:
        """The progress line's text (without the bar)."""
        ptnml = summary.ptnml if summary.ptnml and sum(summary.ptnml) else None
        estimate = match_stats.estimate(summary.wins, summary.losses, summary.draws, ptnml)
        parts = [f"{done}/{self.total}",
                 f"+{summary.wins} -{summary.losses} ={summary.draws}",
                 f"Elo {estimate.elo_text()}"]
        if summary.sprt is not None:
            parts.append(f"LLR {summary.sprt.llr:.2f} ({summary.sprt.lower:.2f}, "
                         f"{summary.sprt.upper:.2f})")
        parts.append(f"time-outs {summary.timeouts[0]}/{summary.timeouts[1]}")
        played, elapsed = done - self.first_done, self.clock() - self.started
        if 0 < done < self.total and played > 0 and elapsed > 0:
            left = (self.total - done) * elapsed / played
            if math.isfinite(left):
                parts.append(f"{'at most ' if summary.sprt is not None else '~'}"
                             f"{duration(left)} left")
        return (f"{self.label}: " if self.label else "") + "  ".join(parts)

    def update(self, done: int, summary: Summary, stopped: bool = False) -> None:
        """Show the figures after ``done`` games (terminal: redraw; plain: every
        :data:`PLAIN_EVERY` games, or now when ``stopped``)."""
        self.last = (done, summary)
        text = self.text(done, summary)
        if self.terminal:
            filled = BAR * min(done, self.total) // max(self.total, 1)
            self._write(f"\r[{'#' * filled}{'.' * (BAR - filled)}] {text}\033[K")
            self.drawn = True
        elif stopped or (done % self.every == 0 and 0 < done < self.total):
            self._write(f"Progress: {text}\n")

    def game(self, line: str, notable: bool = False) -> None:
        """A finished game's line: plain mode prints every one; terminal mode only the
        ``notable`` ones (something went wrong), above the bar, which is then redrawn."""
        if not self.terminal:
            self._write(line + "\n")
        elif notable:
            self._write(f"\r{line}\033[K\n")
            self.drawn = False
            if self.last is not None:
                self.update(*self.last)

    def close(self) -> None:
        """End the redrawn line (terminal mode), so what follows starts on a line of its own."""
        if self.drawn:
            self._write("\n")
            self.drawn = False

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()
