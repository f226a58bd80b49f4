"""Iterative-deepening alpha-beta (negamax with principal variation search) over a small game interface.

The search knows nothing about Ultimate Tic-Tac-Toe: a game state offers ``turn``, ``winner``,
``key``, ``legal_moves()``, ``push(move)`` and ``pop()``, an evaluator ``evaluate(state)`` and
``move_priority(state, moves)`` (the interface in full: docs/engine.md, "The other games of the
family"). The refinements beyond plain PVS (aspiration windows, late-move reductions, the
history's aging, the end-of-game solver) are switched by :class:`Features`, so each can be
measured against the search without it (``alphabeta:lmr=0`` in the arena).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields, replace
from itertools import islice

from .limits import STOP_POLL_SECONDS, SearchLimit, SearchResult

WIN_SCORE = 1_000_000
#: Scores beyond this are forced results (wins or losses within the longest possible game).
PROVEN_SCORE = WIN_SCORE - 1000
INFINITY = WIN_SCORE + 1

EXACT, LOWER, UPPER = 0, 1, 2

#: Nodes between two looks at the clock: under 1 ms of search at full speed, and still a few ms
#: when a loaded machine slows the search tenfold (100 ms CodinGame turns need that); a look costs
#: about 0.1 us, so checking this often is free.
CLOCK_INTERVAL = 256
#: Resident bytes one transposition-table entry costs in CPython (dict slot, int key, 4-tuple), measured.
TT_ENTRY_BYTES = 200
MAX_PLY = 128

#: Each failed aspiration window is this many times wider than the last: two or three tries
#: reach any score the evaluation gives, and a proven score opens the window fully.
ASPIRATION_GROWTH = 4
#: Late-move reductions start at this remaining depth: below it a reduced search is a bare
#: evaluation, which misses the short tactics (a board taken, a send to a won board) too often.
LMR_MIN_DEPTH = 3
#: ... and with this move in the ordered list: the table's move, the killers and the tactical
#: moves the ordering puts first are searched to full depth.
LMR_FIRST_MOVE = 3
#: lmr=2 reduces two plies from this move on in nodes this deep: in a forced board (9 moves at
#: most) only the last few, which the ordering found least promising.
LMR_DEEP_MOVE = 6
LMR_DEEP_DEPTH = 5


@dataclass(frozen=True)
class Features:
    """The search's switchable refinements; an engine takes them as options (``alphabeta:lmr=0``).
    The defaults are the ones that won their SPRT against the search without them (docs/engine.md)."""

    #: Half-width of the root's first window around the last depth's score; 0: the full window.
    #: 50 (a twentieth of the fitted evaluation's usual range, about -450 to +630) against 0:
    #: +23 +/- 19 Elo (SPRT [0, 20], 20k nodes/move, 862 games).
    asp: int = 50
    #: Late-move reductions: 1 searches late moves a ply shallower first, 2 the latest two plies;
    #: 0: off. 1 against 0: +52 +/- 32 Elo (SPRT [0, 20], 20k nodes/move, 244 games).
    lmr: int = 1
    #: The history's values are shifted right by this at each new search (older cut-offs fade).
    age: int = 3
    #: A node whose game can last at most this many more plies is searched to the end (exact).
    #: 8 (such a node costs a few hundred nodes) against 0: +18 +/- 14 Elo (SPRT [0, 20], 20k
    #: nodes/move, 312 games); 12 cost -50 +/- 32 Elo.
    solve: int = 8

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def values(self) -> tuple[int, ...]:
        """In field order: what agent/_core.c's set_features takes."""
        return tuple(getattr(self, name) for name in self.names())


#: Plain iterative-deepening PVS with killers and history: the search before its extensions (docs/engine.md).
PLAIN = Features(asp=0, lmr=0, age=3, solve=0)


def features_for_table(features: Features, has_table: bool) -> Features:
    """``features`` as a search with or without a table runs them: without one the solver would
    search every transposition of the last plies again and again (minutes a move), so it is off."""
    return features if has_table else replace(features, solve=0)


class _Stop(Exception):
    """Raised inside the tree when the clock or the node budget runs out."""


class _NoTable(dict):
    """A transposition table that stores nothing (``hash_mb=0``), for plain alpha-beta."""

    def __setitem__(self, key, value) -> None:
        pass


class AlphaBeta:
    """A reusable searcher: keeps its transposition table and history between moves of one game.

    ``hash_mb`` bounds the table's memory; 0 disables it. ``features`` switches the refinements.
    """

    def __init__(self, evaluator, move_space: int, hash_mb: float = 192.0,
                 features: Features | None = None) -> None:
        self.evaluator = evaluator
        self.features = features_for_table(features or Features(), hash_mb > 0)
        self.tt: dict[int, tuple[int, int, int, int]] = _NoTable() if hash_mb <= 0 else {}
        self.tt_capacity = max(1024, int(hash_mb * 1024 * 1024 / TT_ENTRY_BYTES))
        self.history = [[0] * move_space for _ in range(2)]
        self.killers = [[-1, -1] for _ in range(MAX_PLY)]
        self.nodes = 0

    # -- public ------------------------------------------------------------------------------

    def search(self, state, limit: SearchLimit, on_iteration=None) -> SearchResult:
        """The best move found within ``limit``: the deepest completed iteration's, or a move
        proven better inside the unfinished one. ``on_iteration(result)`` is called after each depth."""
        result = None
        for result in self.iterate(state, limit):
            if on_iteration is not None:
                on_iteration(result)
        return result

    def iterate(self, state, limit: SearchLimit):
        """Yield a SearchResult after every completed depth (and a last one if time ran out)."""
        moves = list(state.legal_moves())
        if not moves:
            raise ValueError("no legal moves: the game is over")
        start = time.perf_counter()
        self._start_search(state, limit)

        best = SearchResult(move=self._initial_move(state, moves))
        if len(moves) == 1 and limit.depth is None and limit.nodes is None:
            best.elapsed = time.perf_counter() - start
            yield best  # a forced move needs no thinking
            return
        max_depth = limit.depth if limit.depth is not None else MAX_PLY - 1
        plies_left = self._plies_left_bound(state)
        # Within the solver's reach every child of the root is searched to the end (_negamax).
        solved_from = 1 if plies_left <= self.features.solve else plies_left
        for depth in range(1, max_depth + 1):
            # The depth that sees the whole game reduces nothing, so that it proves its result.
            whole_game = depth >= solved_from
            found = self._windowed_root(state, moves, depth, best.score, not whole_game)
            if found is None:  # a limit stopped this depth
                better = self._root_best or self._failed_high
                if better is not None:  # proven better than the completed first move
                    best.move, best.score = better
                best.nodes, best.elapsed = self.nodes, time.perf_counter() - start
                yield best
                return
            score, move = found
            best = SearchResult(move=move, score=score, depth=depth, nodes=self.nodes,
                                elapsed=time.perf_counter() - start, pv=self._principal_variation(state, move, depth))
            best.proven = abs(score) >= PROVEN_SCORE or whole_game
            moves.remove(move)
            moves.insert(0, move)
            yield best
            if best.proven:
                return
            if self._out_of_time():
                return

    # -- the steps iterate() takes: agent/core.py's CompiledAlphaBeta runs them in C ------------

    def _start_search(self, state, limit: SearchLimit) -> None:
        """Take in ``limit`` and ready the table, history and killers for a new search."""
        self.nodes = 0
        self._deadline = limit.deadline
        self._node_limit = limit.nodes
        self._should_stop = limit.should_stop
        self._next_stop_poll = time.perf_counter() + STOP_POLL_SECONDS
        self._next_check = CLOCK_INTERVAL
        # The solver needs the game's bound on the plies left (optional in the interface).
        self._solve = self.features.solve if hasattr(state, "max_plies_left") else 0
        if len(self.tt) > self.tt_capacity * 3 // 4:  # room for this search's new entries
            self._trim_table(self.tt_capacity // 2)
        age = self.features.age
        for row in self.history:  # age the history so old cut-offs do not dominate
            for i, value in enumerate(row):
                row[i] = value >> age
        self.killers = [[-1, -1] for _ in range(MAX_PLY)]

    def _windowed_root(self, state, moves, depth, guess, reduce):
        """The root searched to ``depth`` as ``_search_root``, in an aspiration window around
        ``guess`` (the last depth's score) widened until the score falls inside it. A move that
        fails high goes first for the next try, and is ``_failed_high`` if a limit stops that."""
        self._failed_high = None
        delta = self.features.asp
        if not delta or guess is None or abs(guess) >= PROVEN_SCORE:
            return self._search_root(state, moves, depth, -INFINITY, INFINITY, reduce)
        alpha, beta = guess - delta, guess + delta
        while True:
            found = self._search_root(state, moves, depth, alpha, beta, reduce)
            if found is None:
                return None
            score, move = found
            if alpha < score < beta:
                return found
            # A forced result outside the window is only a bound on it: open that side fully
            # (guess -/+ INFINITY would leave a forced loss or win of the guess's sign outside
            # the window again, for ever).
            forced = abs(score) >= PROVEN_SCORE
            delta *= ASPIRATION_GROWTH
            if score <= alpha:
                alpha = -INFINITY if forced else max(guess - delta, -INFINITY)
            else:
                beta = INFINITY if forced else min(guess + delta, INFINITY)
                self._failed_high = (move, score)
                moves.remove(move)
                moves.insert(0, move)

    def _search_root(self, state, moves, depth, alpha, beta, reduce):
        """``(score, move)`` of the root searched to ``depth`` in the window ``(alpha, beta)``
        (a bound when outside it), with late-move reductions if ``reduce``; None when a limit
        stopped it, and then ``_root_best`` is ``(move, score)`` of a move proven better than the
        first, or None."""
        self._root_best = None
        self._reduce = reduce
        root_ply = state.ply if hasattr(state, "ply") else None
        try:
            return self._root(state, moves, depth, alpha, beta)
        except _Stop:
            self._unwind(state, root_ply)
            return None

    def _probe(self, key):
        """The table's ``(depth, flag, score, move)`` for ``key``, or None."""
        return self.tt.get(key)

    # -- internals ---------------------------------------------------------------------------

    def _initial_move(self, state, moves) -> int:
        entry = self._probe(state.key)
        if entry is not None and entry[3] in moves:
            return entry[3]
        priorities = self.evaluator.move_priority(state, moves)
        return moves[priorities.index(max(priorities))]

    @staticmethod
    def _plies_left_bound(state) -> int:
        """Searching deeper than the plies the game can still last can change nothing."""
        bound = getattr(state, "max_plies_left", None)
        return bound() if bound is not None else MAX_PLY

    def _out_of_time(self) -> bool:
        return self._deadline is not None and time.perf_counter() >= self._deadline

    def _unwind(self, state, root_ply) -> None:
        # A _Stop can leave moves made below the root; take them back.
        if root_ply is not None:
            while state.ply > root_ply:
                state.pop()

    def _check_limits(self) -> None:
        self._next_check = self.nodes + CLOCK_INTERVAL
        if len(self.tt) > self.tt_capacity:  # the memory bound holds inside one long search too
            self._trim_table(self.tt_capacity // 2)
        if self._node_limit is not None and self.nodes >= self._node_limit:
            raise _Stop
        if self._deadline is not None and time.perf_counter() >= self._deadline:
            raise _Stop
        if self._should_stop is not None:  # rare: only every STOP_POLL_SECONDS
            now = time.perf_counter()
            if now >= self._next_stop_poll:
                self._next_stop_poll = now + STOP_POLL_SECONDS
                if self._should_stop():
                    raise _Stop

    def _trim_table(self, target: int) -> None:
        # Dicts keep insertion order: dropping the oldest entries keeps the recent, relevant ones.
        excess = len(self.tt) - target
        if excess > 0:
            for key in list(islice(self.tt, excess)):
                del self.tt[key]

    def _root(self, state, moves, depth, alpha, beta):
        original_alpha = alpha
        best_move, best_score = moves[0], -INFINITY
        first_score = None
        for i, move in enumerate(moves):
            state.push(move)
            if i == 0:
                score = -self._negamax(state, depth - 1, -beta, -alpha, 1)
                first_score = score
            else:
                score = -self._negamax(state, depth - 1, -alpha - 1, -alpha, 1)
                if score > alpha:
                    score = -self._negamax(state, depth - 1, -beta, -alpha, 1)
                    if score > first_score:
                        self._root_best = (move, score)
            state.pop()
            if score > best_score:
                best_score, best_move = score, move
                if score > alpha:
                    alpha = score
                    if score >= beta:
                        break
        self.tt[state.key] = (depth, _flag(best_score, original_alpha, beta), best_score, best_move)
        return best_score, best_move

    def _negamax(self, state, depth, alpha, beta, ply):
        self.nodes += 1
        if self.nodes >= self._next_check:
            self._check_limits()
        winner = state.winner
        if winner is not None:
            return _terminal_score(winner, state.turn, ply)
        exact = False
        if self._solve:
            left = state.max_plies_left()
            if left <= self._solve:  # few plies left: search them all, unreduced, and know the result
                exact = True
                depth = max(depth, left)
        if depth <= 0:
            return self.evaluator.evaluate(state)

        key = state.key
        tt = self.tt
        entry = tt.get(key)
        tt_move = -1
        if entry is not None:
            e_depth, e_flag, e_score, tt_move = entry
            if e_depth >= depth:
                if e_score > PROVEN_SCORE:
                    e_score -= ply
                elif e_score < -PROVEN_SCORE:
                    e_score += ply
                if e_flag == EXACT:
                    return e_score
                if e_flag == LOWER:
                    if e_score >= beta:
                        return e_score
                elif e_score <= alpha:
                    return e_score

        moves = self._ordered(state, depth, tt_move, ply)
        push, pop = state.push, state.pop
        original_alpha = alpha
        best_score, best_move = -INFINITY, moves[0]

        if depth == 1:
            # Children are leaves: evaluate them here and save a call per child.
            evaluate = self.evaluator.evaluate
            child_ply = ply + 1
            for move in moves:
                push(move)
                self.nodes += 1
                winner = state.winner
                if winner is None:
                    score = -evaluate(state)
                else:
                    score = -_terminal_score(winner, state.turn, child_ply)
                pop()
                if score > best_score:
                    best_score, best_move = score, move
                    if score > alpha:
                        alpha = score
                        if score >= beta:
                            break
        else:
            # Late moves of a deep enough node are searched a ply shallower with a null window
            # first; only one that then beats alpha is searched again to full depth.
            lmr, count = self.features.lmr, len(moves)
            inexact = self._reduce and not exact
            reduce_from = LMR_FIRST_MOVE if inexact and lmr and depth >= LMR_MIN_DEPTH else count
            deep_from = LMR_DEEP_MOVE if inexact and lmr >= 2 and depth >= LMR_DEEP_DEPTH else count
            for i, move in enumerate(moves):
                push(move)
                if i == 0:
                    score = -self._negamax(state, depth - 1, -beta, -alpha, ply + 1)
                else:
                    reduced = depth - 1 if i < reduce_from else depth - 3 if i >= deep_from else depth - 2
                    score = -self._negamax(state, reduced, -alpha - 1, -alpha, ply + 1)
                    if reduced < depth - 1 and score > alpha:
                        score = -self._negamax(state, depth - 1, -alpha - 1, -alpha, ply + 1)
                    if alpha < score < beta:
                        score = -self._negamax(state, depth - 1, -beta, -score, ply + 1)
                pop()
                if score > best_score:
                    best_score, best_move = score, move
                    if score > alpha:
                        alpha = score
                        if score >= beta:
                            break

        flag = _flag(best_score, original_alpha, beta)
        if flag == LOWER:
            killers = self.killers[ply]
            if killers[0] != best_move:
                killers[1] = killers[0]
                killers[0] = best_move
            self.history[state.turn][best_move] += depth * depth
        stored = best_score
        if stored > PROVEN_SCORE:
            stored += ply
        elif stored < -PROVEN_SCORE:
            stored -= ply
        tt[key] = (depth, flag, stored, best_move)
        return best_score

    def _ordered(self, state, depth, tt_move, ply):
        moves = state.legal_moves()
        if len(moves) <= 1:
            return moves
        hist = self.history[state.turn]
        if depth >= 2:
            # Tactics first (wins, blocks), history among equals. Near the leaves history alone:
            # the tactical scan costs more there than the cut-offs it buys.
            priorities = self.evaluator.move_priority(state, moves)
            keyed = sorted(zip(priorities, [hist[m] for m in moves], moves), reverse=True)
            moves = [m for _, _, m in keyed]
        else:
            moves = sorted(moves, key=hist.__getitem__, reverse=True)
        killers = self.killers[ply]
        front = []
        for m in (tt_move, killers[0], killers[1]):
            if m >= 0 and m not in front and m in moves:
                front.append(m)
        if front:
            moves = front + [m for m in moves if m not in front]
        return moves

    def _principal_variation(self, state, move, depth) -> list[int]:
        pv = [move]
        seen = {state.key}
        state.push(move)
        made = 1
        while len(pv) < depth and state.winner is None:
            entry = self._probe(state.key)
            if entry is None or state.key in seen or not _is_legal(state, entry[3]):
                break
            seen.add(state.key)
            pv.append(entry[3])
            state.push(entry[3])
            made += 1
        for _ in range(made):
            state.pop()
        return pv


def _is_legal(state, move) -> bool:
    return move in state.legal_moves()


def _flag(score, alpha, beta) -> int:
    """What a score found in the window ``(alpha, beta)`` is: a lower or upper bound, or exact."""
    if score >= beta:
        return LOWER
    if score <= alpha:
        return UPPER
    return EXACT


def _terminal_score(winner, turn, ply) -> int:
    """Score of a finished game for the side to move: quicker wins and slower losses score higher."""
    if winner == turn:
        return WIN_SCORE - ply
    if winner == 1 - turn:
        return -(WIN_SCORE - ply)
    return 0
