"""Write your own bot on this project's protocol layer: a ``choose`` function, nothing else.

    from agent.bot import Move, Position, run

    def choose(position: Position, seconds: float) -> Move:
        return position.moves()[0]

    if __name__ == "__main__":
        run(choose)

``run(choose)`` gives it the agent's whole command line and both protocols; ``choose`` runs in a
child process (agent/bot_worker.py), so whatever it does the referee gets a legal move in time.
What ``choose`` gets and may return, where it runs and what that costs: docs/your-bot.md.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time

from . import bot_worker
from .limits import SearchLimit, SearchResult
from .rules import O, TIE, X, IllegalMoveError, InvalidMoveError, Move, Position

__all__ = ["Move", "Position", "X", "O", "TIE", "InvalidMoveError", "IllegalMoveError", "run", "ChooseEngine"]

#: Seconds ``choose`` is given when the protocol sets no deadline (fixed-effort tests).
NO_DEADLINE_SECONDS = 10.0

log = logging.getLogger(__name__)


class ChooseEngine:
    """An engine (``choose(position, limit) -> SearchResult``, what the protocols drive) around a
    bot's ``choose(position, seconds) -> move``, which runs in a child process that the protocol
    outlives whatever ``choose`` does (agent/bot_worker.py). ``close()`` ends that process."""

    def __init__(self, function) -> None:
        self.function = function
        self.name = getattr(function, "__name__", "choose")
        self._busy: threading.Thread | None = None
        self._workers = None
        self._why_in_process = "no fork on this system"
        if bot_worker.CAN_FORK:
            try:
                self._workers = bot_worker.Workers(function, move_index, self.name)
            except OSError as error:  # a process cap (ulimit -u, a sandbox): play on without one
                self._why_in_process = f"its process could not be started: {error}"
        self._said_in_process = False

    def choose(self, position: Position, limit: SearchLimit) -> SearchResult:
        started = time.perf_counter()
        deadline = started + NO_DEADLINE_SECONDS if limit.deadline is None else limit.deadline
        if self._workers is None:
            move = self._choose_in_a_thread(position, max(deadline - started, 0.0))
        else:
            move = self._workers.ask(position.moves_played(), position.variant, deadline, limit.should_stop)
        return SearchResult(move=move, elapsed=time.perf_counter() - started)

    def close(self) -> None:
        """End the processes ``choose`` runs in (also done when this process exits)."""
        if self._workers is not None:
            self._workers.close()

    def _choose_in_a_thread(self, position: Position, seconds: float) -> int:
        """Where this system cannot fork (Windows): a thread, which stops neither a C call that holds
        the GIL nor what choose() prints or reads."""
        if not self._said_in_process:
            self._said_in_process = True
            log.warning("%s() runs in a thread of this process (%s): a call that holds the GIL or never "
                        "ends, a print or a read of stdin in it can still lose the game", self.name,
                        self._why_in_process)
        answer: dict = {}

        def think() -> None:
            try:
                answer["move"] = move_index(self.function(position.copy(), seconds))
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
        error = answer.get("error")
        if isinstance(error, Exception):
            raise error
        if error is not None:  # SystemExit, KeyboardInterrupt: the bot's, not ours to obey
            raise bot_worker.ChooseFailed(f"{self.name}() raised {type(error).__name__}")
        return answer["move"]


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

    made: list[ChooseEngine] = []

    def make_engine(args):
        if args.seed is not None:
            random.seed(args.seed)
        made.append(ChooseEngine(choose))
        return made[-1]

    parser = cli.build_parser(prog=prog, engine_options=False, description=(
        f"Play one game of Ultimate Tic-Tac-Toe with {getattr(choose, '__name__', 'choose')}(), through the "
        "CS 4341 referee's files, or CodinGame's stdin/stdout with --protocol codingame."))
    try:
        code = cli.main(argv, parser=parser, make_engine=make_engine)
    finally:
        for engine in made:
            engine.close()
    if argv is None:
        sys.exit(code)
    return code
