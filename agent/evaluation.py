"""The classic static evaluation of Ultimate Tic-Tac-Toe positions (:class:`Evaluator`, table-driven:
local board patterns scaled by the global lines still open through them, and the global lines),
and the tactical move ordering every evaluation shares (:class:`TacticalOrdering`). The fitted
evaluation is agent/eval_fitted.py; both are chosen by name in agent/engines.py. How it scores and
how its weights were chosen: docs/engine.md, "The fits".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .rules import BIT_OF, BOARD_OF, FULL, LINE_MASKS, OPEN, SPOT_OF, WINS, X, Position, board_patterns

CORNERS = (0, 2, 6, 8)


@dataclass(frozen=True)
class Weights:
    """Evaluation weights, in score units before the board scales (see ``board_scales``)."""

    board_won: int = 100
    local_two: int = 14
    local_one: int = 3
    local_center: int = 4
    local_corner: int = 1
    global_two: int = 400
    global_one: int = 60
    free_move: int = 40
    # Each open board is scaled by the global lines through it that either player can still
    # use, each counting 1 + this many per board that player already won on the line.
    live_line_scale: int = 2

    def as_dict(self) -> dict:
        return asdict(self)


DEFAULT_WEIGHTS = Weights()


def _local_value(xm: int, om: int, w: Weights) -> int:
    """Value of one local board pattern for X (before the board-place scaling)."""
    if WINS[xm]:
        return w.board_won
    if WINS[om]:
        return -w.board_won
    value = 0
    live = False
    for line in LINE_MASKS:
        x, o = xm & line, om & line
        if x and o:
            continue
        live = True
        if x:
            value += w.local_two if x & (x - 1) else w.local_one
        elif o:
            value -= w.local_two if o & (o - 1) else w.local_one
    if not live:  # nobody can win this board any more: it will be drawn
        return 0
    if xm & 0x10:
        value += w.local_center
    elif om & 0x10:
        value -= w.local_center
    for c in CORNERS:
        if xm >> c & 1:
            value += w.local_corner
        elif om >> c & 1:
            value -= w.local_corner
    return value


def build_local_table(w: Weights) -> list[int]:
    """LOCAL[(xmask << 9) | omask] for every disjoint pair of masks (3^9 patterns)."""
    table = [0] * (1 << 18)
    for xm, om in board_patterns():
        table[xm << 9 | om] = _local_value(xm, om, w)
    return table


def build_can_win_table() -> list[bool]:
    """CAN_WIN[(mover << 9) | other]: the mover can complete a line on this board in one move.

    Neither side has won, and a spot that completes one of the mover's lines (two of its three
    spots held) is free. Listed from :func:`pattern_keys` and a 512-entry table of those spots:
    the agent builds it at every start, and a test holds it to the plain construction (every
    free spot tried)."""
    completes = [0 if WINS[mask] else _completing_spots(mask) for mask in range(512)]
    table = [False] * (1 << 18)
    # completes[mover] is at most 511, so ``& ~key`` keeps the spots outside ``other``.
    for key in [key for key in pattern_keys() if completes[key >> 9] & ~key and not WINS[key & 511]]:
        table[key] = True
    return table


def _completing_spots(mask: int) -> int:
    """The spots that would complete a line of ``mask``: the third spot of each line it holds two of."""
    spots = 0
    for line in LINE_MASKS:
        held = mask & line
        if held and held & (held - 1) and held != line:
            spots |= line & ~mask
    return spots


_pattern_keys: list[int] | None = None


def pattern_keys() -> list[int]:
    """``a << 9 | b`` of every 3x3 board pattern (``a`` and ``b`` disjoint 9-bit masks: the 3^9 of
    rules.board_patterns), listed in pattern order (agent/eval_fitted.py): entry ``i`` has ``a`` on
    the spots whose ternary digit of ``i`` is 1 and ``b`` on those where it is 2, spot 0 the lowest
    digit. Built once per process, a digit at a time with whole-list steps (no loop per pattern):
    the start-up tables are made from it."""
    global _pattern_keys
    if _pattern_keys is None:
        keys = [0]
        for spot in range(9):  # the new digit is the highest so far: 0, then 1 (a's), then 2 (b's)
            keys = keys + [key | 1 << (spot + 9) for key in keys] + [key | 1 << spot for key in keys]
        _pattern_keys = keys
    return _pattern_keys


def global_value(won_x: int, won_o: int, drawn: int, w: Weights) -> int:
    """Value for X of the global grid's lines, from the masks of won and drawn boards."""
    value = 0
    for line in LINE_MASKS:
        if line & drawn:
            continue
        x, o = won_x & line, won_o & line
        if x and o:
            continue
        if x:
            value += w.global_two if x & (x - 1) else w.global_one
        elif o:
            value -= w.global_two if o & (o - 1) else w.global_one
    return value


def board_scales(won_x: int, won_o: int, drawn: int, w: Weights) -> list[int]:
    """How much each local board matters now: the global lines through it still usable."""
    scales = []
    for b in range(9):
        scale = 2
        for line in LINE_MASKS:
            if not line >> b & 1 or line & drawn:
                continue
            for mine, theirs in ((won_x, won_o), (won_o, won_x)):
                if not line & theirs:
                    scale += 1 + w.live_line_scale * bin(line & mine).count("1")
        scales.append(scale)
    return scales


_can_win_table: list[bool] | None = None


def can_win_table() -> list[bool]:
    """``build_can_win_table()``, built once per process and shared by every evaluator."""
    global _can_win_table
    if _can_win_table is None:
        _can_win_table = build_can_win_table()
    return _can_win_table


class TacticalOrdering:
    """``move_priority``: the static move ordering every Ultimate Tic-Tac-Toe evaluator shares."""

    def __init__(self) -> None:
        self._can_win_next = can_win_table()

    def move_priority(self, pos: Position, moves) -> list[int]:
        """Static priority of each move: a local win first, then a block; a move that sends the
        opponent to a board they can win at once, or lets them play anywhere, last."""
        me = pos.masks[pos.turn]
        them = pos.masks[1 - pos.turn]
        status = pos.status
        occupied = pos.occupied
        can_win = self._can_win_next
        priorities = []
        for m in moves:
            b, bit, s = BOARD_OF[m], BIT_OF[m], SPOT_OF[m]
            if WINS[me[b] | bit]:
                p = 4
            elif WINS[them[b] | bit]:
                p = 2
            else:
                p = 0
            if s == b:  # sent back into this board, as it will be after the move
                if p == 4 or occupied[b] | bit == FULL:
                    p -= 2
                elif can_win[them[b] << 9 | me[b] | bit]:
                    p -= 3
            elif status[s] != OPEN:
                p -= 2
            elif can_win[them[s] << 9 | me[s]]:
                p -= 3
            priorities.append(p)
        return priorities


class Evaluator(TacticalOrdering):
    """The classic evaluation: ``evaluate(position)`` from the side to move's view, and
    ``move_priority`` for ordering."""

    def __init__(self, weights: Weights = DEFAULT_WEIGHTS) -> None:
        super().__init__()
        self.weights = weights
        self._local = build_local_table(weights)
        self._global: dict[int, int] = {}
        self.evaluate = self._make_evaluate()

    def _make_evaluate(self):
        # A closure with the tables as locals: the hot path of the search.
        w = self.weights
        local = self._local
        global_memo = self._global
        free_move = w.free_move * 5

        def evaluate(pos: Position) -> int:
            xm, om = pos.masks
            won_x, won_o = pos.won
            key = won_x | won_o << 9 | pos.drawn << 18
            memo = global_memo.get(key)
            if memo is None:
                memo = global_memo[key] = (global_value(won_x, won_o, pos.drawn, w) * 5,
                                           *board_scales(won_x, won_o, pos.drawn, w))
            g, s0, s1, s2, s3, s4, s5, s6, s7, s8 = memo
            score = (local[xm[0] << 9 | om[0]] * s0 + local[xm[1] << 9 | om[1]] * s1
                     + local[xm[2] << 9 | om[2]] * s2 + local[xm[3] << 9 | om[3]] * s3
                     + local[xm[4] << 9 | om[4]] * s4 + local[xm[5] << 9 | om[5]] * s5
                     + local[xm[6] << 9 | om[6]] * s6 + local[xm[7] << 9 | om[7]] * s7
                     + local[xm[8] << 9 | om[8]] * s8 + g)
            if pos.turn != X:
                score = -score
            if pos.forced < 0:
                score += free_move
            return score

        return evaluate
