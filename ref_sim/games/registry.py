"""The games by name, each with what tools need to treat all of them alike.

A :class:`Game` bundles a state factory, an evaluator factory and the move space (what the generic
:class:`agent.search.AlphaBeta` needs), the move text for people (parse/format, an example), a
board drawing, and the defaults of the tools (seconds per move, random opening plies in series).
Ultimate Tic-Tac-Toe is here too, through its own ``agent.rules.Position`` and
default evaluation (``agent.engines.make_evaluator``: the fitted one), so ``ref_sim.play`` and ``ref_sim.arena`` serve all four games.
The engines that play them are agent.engines' (``make_engine(spec, game)``), one registry for
the agent and every game.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

from agent.core import make_searcher
from agent.engines import SearchEngine, make_engine, make_evaluator
from agent.rules import DRAWN, OPEN, WON_X, IllegalMoveError, Move, Position
from agent.search import AlphaBeta, Features
from .core_builds import build_searcher
from .nineboard import NineBoard, NineBoardEvaluator, render_grid
from .qubic import Qubic, QubicEvaluator
from .tictactoe import TicTacToe, TicTacToeEvaluator


@dataclass(frozen=True)
class Game:
    name: str
    title: str
    new_state: Callable[[], object]
    new_evaluator: Callable[[], object]
    move_space: int
    parse_move: Callable[[object, str], int]     # (state, text) -> move; InvalidMoveError / IllegalMoveError
    format_move: Callable[[object, int], str]    # (state, move) -> text
    render: Callable[[object], str]
    move_example: str                            # shown in prompts: how to type a move
    seconds: float                               # default thinking time per move
    opening_plies: int                           # default random plies before a series game
    # (evaluator, move_space, hash_mb, features) -> searcher: the generic AlphaBeta unless the game has a faster one
    new_searcher: Callable[[object, int, float, object], object] = AlphaBeta

    def searcher(self, hash_mb: float = 64.0, features: Features | None = None, threads: int | str = 1,
                 evaluator=None, core_build: str | None = None, core: str | None = None):
        """The search with this game's evaluator (or ``evaluator``; ``AlphaBeta``'s interface);
        ``threads`` above 1, ``core_build`` (the path of another build of the compiled core, to
        play two builds against each other) and ``core`` (agent.core.CORES: compiled against wasm,
        say) only where the game's own searcher takes them (uttt's compiled core)."""
        evaluator = self.new_evaluator() if evaluator is None else evaluator
        if core is not None:
            if self.new_searcher is AlphaBeta:
                raise ValueError(f"{self.name} has the Python search only: core=NAME is for uttt")
            return self.new_searcher(evaluator, self.move_space, hash_mb, features, threads=threads,
                                     core_build=core_build, core=core)
        if core_build is not None:
            if self.new_searcher is AlphaBeta:
                raise ValueError(f"{self.name} has no compiled core: core_build=PATH is for uttt")
            return self.new_searcher(evaluator, self.move_space, hash_mb, features, threads=threads,
                                     core_build=core_build)
        if threads == 1:
            return self.new_searcher(evaluator, self.move_space, hash_mb, features)
        if self.new_searcher is AlphaBeta:
            raise ValueError(f"{self.name} searches on one thread: threads=N is for uttt")
        return self.new_searcher(evaluator, self.move_space, hash_mb, features, threads=threads)


# -- Ultimate Tic-Tac-Toe, through agent.rules (not edited here) --------------------------------

def _uttt_parse(state: Position, text: str) -> int:
    move = Move.parse(text.replace(",", " "))
    reason = state.why_illegal(move.index)
    if reason:
        raise IllegalMoveError(reason)
    return move.index


def _uttt_note(state: Position, board: int) -> str:
    status = state.status[board]
    return "" if status == OPEN else " drawn" if status == DRAWN else " X won" if status == WON_X else " O won"


def _uttt_searcher(evaluator, move_space: int, hash_mb: float, features: Features | None = None, threads: int = 1,
                   core_build: str | None = None, core: str | None = None):
    # The agent's own choice of core (compiled where built, $UTTT_CORE), or the core or build asked
    # for, without touching the whole table up front: series make many short-lived engines.
    if core_build is not None:  # another build of the compiled core (two builds against each other)
        return build_searcher(evaluator, hash_mb, core_build, prefault=False, features=features, threads=threads)
    return make_searcher(evaluator, hash_mb, core=core, prefault=False, features=features, threads=threads)[0]


def _uttt_render(state: Position) -> str:
    text = render_grid(state.cell, first_number=0, marked=state.forced if state.winner is None else -1,
                       closed=lambda b: _uttt_note(state, b))
    if state.winner is None:
        where = "any open board" if state.forced < 0 else f"board {state.forced}"
        text += f"\n  spots are numbered 0-8 like the boards; {'XO'[state.turn]} to play in {where}"
    return text


GAMES: dict[str, Game] = {
    "ttt": Game("ttt", "tic-tac-toe", TicTacToe, TicTacToeEvaluator, 9,
                TicTacToe.parse_move, lambda s, m: TicTacToe.format_move(m), TicTacToe.render,
                "b2 (column a-c, row 1-3) or '2 2' (row col)", 1.0, 1),
    "nineboard": Game("nineboard", "nine-board tic-tac-toe", NineBoard, NineBoardEvaluator, 81,
                      NineBoard.parse_move, lambda s, m: NineBoard.format_move(m), NineBoard.render,
                      "5 1 (board 1-9, cell 1-9; the cell alone when the board is forced)", 2.0, 2),
    "qubic": Game("qubic", "Qubic (4x4x4)", Qubic, QubicEvaluator, 64,
                  Qubic.parse_move, lambda s, m: Qubic.format_move(m), Qubic.render,
                  "2 3 1 (layer row col, each 1-4)", 5.0, 2),
    "uttt": Game("uttt", "Ultimate Tic-Tac-Toe", Position, make_evaluator, 81,
                 _uttt_parse, lambda s, m: str(Move.from_index(m)), _uttt_render,
                 "4 0 (board 0-8, spot 0-8, like the referee)", 2.0, 4, new_searcher=_uttt_searcher),
}


def get_game(name: str) -> Game:
    try:
        return GAMES[name]
    except KeyError:
        raise ValueError(f"unknown game {name!r}; choose from {', '.join(GAMES)}") from None


def result_text(state) -> str:
    """'X wins', 'O wins' or 'draw' for a finished game."""
    if state.winner in (0, 1):
        return f"{'XO'[state.winner]} wins"
    return "draw"


# -- engines for any game --------------------------------------------------------------------

def search_engine(game: Game, **options) -> SearchEngine:
    """The generic alpha-beta with the game's evaluator: agent.engines' ``alphabeta`` for ``game``,
    with its options (``depth``/``nodes`` fix its effort, ``hash_mb``, the search's features...)."""
    return make_engine("alphabeta", game, **options)
