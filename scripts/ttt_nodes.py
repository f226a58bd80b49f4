"""Node counts of four searches that solve classic tic-tac-toe, from the empty board and a few positions.

    python -m scripts.ttt_nodes

How it measures and what it prints: docs/measurements.md, "scripts.perft and scripts.ttt_nodes".
"""

from __future__ import annotations

import sys
import time

from ref_sim.games.tictactoe import TicTacToe, TicTacToeEvaluator
from agent.limits import SearchLimit
from agent.search import AlphaBeta

MINIMAX_NODES_FROM_EMPTY = 549_946  # 1 root + 549,945 moves
FINISHED_GAMES_FROM_EMPTY = 255_168

POSITIONS = [
    ("empty board", ""),
    ("X centre", "b2"),
    ("X corner", "a1"),
    ("X corner, O edge (X wins)", "a1 b1"),
    ("X centre, O corner", "b2 a1"),
    ("4 plies", "b2 a1 c3 a3"),
]


def value_of(state) -> int:
    """+1 / 0 / -1 for the side to move of a finished game."""
    if state.winner in (0, 1):
        return 1 if state.winner == state.turn else -1
    return 0


class Counter:
    def __init__(self) -> None:
        self.nodes = 0
        self.leaves = 0  # finished games reached


def minimax(state, counter: Counter) -> int:
    """Negamax value (+1 win, 0 draw, -1 loss for the side to move), every node counted."""
    counter.nodes += 1
    if state.winner is not None:
        counter.leaves += 1
        return value_of(state)
    best = -2
    for move in state.legal_moves():
        state.push(move)
        best = max(best, -minimax(state, counter))
        state.pop()
    return best


def alphabeta(state, alpha: int, beta: int, counter: Counter) -> int:
    """Fail-hard alpha-beta over the same tree, same move order, no table."""
    counter.nodes += 1
    if state.winner is not None:
        counter.leaves += 1
        return value_of(state)
    for move in state.legal_moves():
        state.push(move)
        score = -alphabeta(state, -beta, -alpha, counter)
        state.pop()
        if score >= beta:
            return beta
        if score > alpha:
            alpha = score
    return alpha


def generic(state, hash_mb: float) -> tuple[int, int, int, int]:
    """(value, nodes over all passes, nodes of the last pass, passes) of the generic search."""
    searcher = AlphaBeta(TicTacToeEvaluator(), move_space=9, hash_mb=hash_mb)
    passes = []
    result = searcher.search(state, SearchLimit(), on_iteration=lambda r: passes.append(r.nodes))
    assert result.proven
    value = 0 if abs(result.score) < 1000 else (1 if result.score > 0 else -1)
    total = result.nodes + len(passes)
    last = passes[-1] - (passes[-2] if len(passes) > 1 else 0) + 1
    return value, total, last, len(passes)


def main() -> int:
    header = (f"{'position':<28} {'value':>5} {'minimax':>9} {'games':>8} {'alpha-beta':>10} "
              f"{'+ordering':>10} {'+ord+table':>10} {'(last pass)':>11} {'passes':>6}")
    print(header)
    print("-" * len(header))
    ok = True
    start = time.perf_counter()
    for label, moves in POSITIONS:
        state = TicTacToe.from_text(moves)
        mm = Counter()
        value = minimax(state, mm)
        ab = Counter()
        ab_value = alphabeta(state, -2, 2, ab)
        ord_value, ord_nodes, _, _ = generic(state, hash_mb=0)
        tt_value, tt_nodes, tt_last, tt_passes = generic(state, hash_mb=16)
        values_agree = value == ab_value == ord_value == tt_value
        ok &= values_agree
        print(f"{label:<28} {value:>+5d} {mm.nodes:>9,} {mm.leaves:>8,} {ab.nodes:>10,} "
              f"{ord_nodes:>10,} {tt_nodes:>10,} {tt_last:>11,} {tt_passes:>6}"
              + ("" if values_agree else "   VALUES DISAGREE"))
        if not moves:
            expected = (mm.nodes, mm.leaves) == (MINIMAX_NODES_FROM_EMPTY, FINISHED_GAMES_FROM_EMPTY)
            ok &= expected
            empty = (mm.nodes, mm.leaves)
    print("\nvalue: for the side to move (+1 win, 0 draw, -1 loss). games: finished games minimax reached.")
    print(f"{time.perf_counter() - start:.1f} s")
    verdict = "OK" if empty == (MINIMAX_NODES_FROM_EMPTY, FINISHED_GAMES_FROM_EMPTY) else "MISMATCH"
    print(f"minimax from the empty board: {empty[0]:,} nodes, {empty[1]:,} finished games; "
          f"known {MINIMAX_NODES_FROM_EMPTY:,} and {FINISHED_GAMES_FROM_EMPTY:,}: {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    from ref_sim.stops import guarded     # Ctrl-C, SIGTERM, SIGHUP: one line, 128 + the signal

    sys.exit(guarded("ttt_nodes.py", main))
