"""The tic-tac-toe family for the generic search: classic 3x3, nine-board, Qubic (4x4x4), and
Ultimate Tic-Tac-Toe itself, all behind one registry (``GAMES``) so the tools treat them alike.

Every state offers what ``agent.search`` needs (``turn``, ``winner``, ``key``, ``legal_moves()``,
``push``/``pop``, ``ply``, ``max_plies_left()``) plus ``parse_move``/``format_move``/``render``
for people; every game has its own evaluator. The search itself is shared, never copied; the
engines that play the games are agent.engines' (``make_engine(spec, game)``).
"""

from .registry import GAMES, Game, get_game, result_text, search_engine

__all__ = ["GAMES", "Game", "get_game", "result_text", "search_engine"]
