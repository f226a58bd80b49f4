"""Write your own bot on this project's protocol layer: a ``choose`` function, nothing else.

A bot is a function from a position and the seconds it may think to a move::

    from agent.bot import Move, Position, run

    def choose(position: Position, seconds: float) -> Move:
        return position.moves()[0]

    if __name__ == "__main__":
        run(choose)

``run(choose)`` gives it the agent's whole command line and protocol handling: ``python my_bot.py
NAME --dir DIR --time-limit S`` plays one game through the CS 4341 referee's files (the watcher,
the turn rules, the checks of the opponent's moves, atomic writes, the timing margins, logging, exit
codes: ``python my_bot.py --help``), and ``python my_bot.py --protocol codingame`` plays
CodinGame's stdin/stdout protocol. ``ref_sim.match "python my_bot.py {name} --dir {dir}
--time-limit {time_limit}" agent`` plays it against our agent in the referee simulator.

The values (all from :mod:`agent.rules`, as in python-chess):

* :class:`Position`: ``moves()`` (the legal :class:`Move` values), ``play(move)`` and ``pop()``,
  ``turn`` (``X`` or ``O``, the player to move), ``winner`` (None while the game goes on, else
  ``X``, ``O`` or ``TIE``), ``outcome()``, ``cell(index)``, ``status[board]``, ``won[player]``
  (a 9-bit mask of the local boards a player won), ``forced`` (the board to play in, or -1),
  ``copy()``, ``render()``. ``variant`` says whose rules: ``"wpi"`` or ``"codingame"``.
* :class:`Move`: ``Move(board, spot)`` (both 0-8, row-major), ``Move.parse("4 5")``, ``str(move)``,
  ``move.index``.
* Two kinds of error, both ``ValueError``: :class:`InvalidMoveError` (text that does not parse as a
  move) and :class:`IllegalMoveError` (a move the rules do not allow here).

``choose`` gets a copy of the position (change it as you like) and the seconds left before the
agent's cutoff, the referee's limit less a safety margin. It may return a :class:`Move`, a cell
index or ``(board, spot)``. Whatever happens inside it, the referee sees a legal move in time: if
it raises, returns something illegal, or is still thinking at the cutoff, the agent logs why and
plays a random legal move. ``--seed N`` seeds Python's ``random`` module before the game (the
series runners give each game its own seed).
"""

from __future__ import annotations

import os
import random
import threading
import time

from .limits import SearchLimit, SearchResult
from .rules import O, TIE, X, IllegalMoveError, InvalidMoveError, Move, Position

__all__ = ["Move", "Position", "X", "O", "TIE", "InvalidMoveError", "IllegalMoveError", "run", "ChooseEngine"]

#: Seconds ``choose`` is given when the protocol sets no deadline (fixed-effort tests).
NO_DEADLINE_SECONDS = 10.0


class ChooseEngine:
    """An engine (``choose(position, limit) -> SearchResult``, what the protocols drive) around a
    bot's ``choose(position, seconds) -> move``."""

    def __init__(self, function) -> None:
        self.function = function
        self.name = getattr(function, "__name__", "choose")
        self._busy: threading.Thread | None = None

    def choose(self, position: Position, limit: SearchLimit) -> SearchResult:
        started = time.perf_counter()
        seconds = NO_DEADLINE_SECONDS if limit.deadline is None else max(limit.deadline - started, 0.0)
        answer: dict = {}

        def think() -> None:
            try:
                answer["move"] = self.function(position.copy(), seconds)
            except BaseException as error:  # reported in the protocol's log, never a crash
                answer["error"] = error

        if self._busy is not None and self._busy.is_alive():
            raise RuntimeError(f"{self.name}() is still busy with an earlier turn")
        # A thread of its own, so that a bot still thinking at the cutoff cannot make us late.
        worker = threading.Thread(target=think, name=f"bot-{self.name}", daemon=True)
        worker.start()
        worker.join(seconds)
        if worker.is_alive():
            self._busy = worker
            raise TimeoutError(f"{self.name}() was still thinking after the {seconds:.3f} s it had")
        if "error" in answer:
            raise answer["error"]
        return SearchResult(move=move_index(answer.get("move")), elapsed=time.perf_counter() - started)


def move_index(move) -> int:
    """The cell index of a move given as a :class:`Move`, an index or ``(board, spot)``."""
    if isinstance(move, Move):
        return move.index
    if isinstance(move, int) and not isinstance(move, bool) and 0 <= move < 81:
        return move
    if isinstance(move, tuple) and len(move) == 2:
        return Move(*move).index
    raise InvalidMoveError(f"choose() returned {move!r}, not a Move, a cell index 0-80 or (board, spot)")


def run(choose, argv: list[str] | None = None) -> int:
    """Play one game with ``choose`` under the command line ``argv`` (default: this process's), and
    end the process with the agent's exit code (``python my_bot.py --help`` lists them)."""
    import sys

    from . import cli

    prog = os.path.basename(sys.argv[0]) if argv is None else "bot"

    def make_engine(args):
        if args.seed is not None:
            random.seed(args.seed)
        return ChooseEngine(choose)

    parser = cli.build_parser(prog=prog, engine_options=False, description=(
        f"Play one game of Ultimate Tic-Tac-Toe with {getattr(choose, '__name__', 'choose')}(), through the "
        "CS 4341 referee's files, or CodinGame's stdin/stdout with --protocol codingame."))
    code = cli.main(argv, parser=parser, make_engine=make_engine)
    if argv is None:
        sys.exit(code)
    return code
