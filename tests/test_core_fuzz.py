"""No call can crash the compiled core (agent/_core.c): a fuzz of every entry point.

A crash would take pytest down with it, so the fuzz runs in a child process (this file run as a
script) and the test asserts that the child exited normally, naming the signal if one killed it.
The child, on positions of seeded random games (both rule variants):

* corrupts set_position's fields at random (mask bits, statuses, forced board, turn, winner, key,
  ply, variant, out-of-range values; sometimes mending some so that later checks are reached) and
  asserts that the core refuses exactly what Position.check refuses, with its exception and words,
  keeps its position when it refuses, and searches an accepted position as the Python search does;
* calls every entry point with one argument replaced by a wrong type, an out-of-range or a huge
  value (None, floats, nan, strings, 2**64, -2**63-1, 10**100, int subclasses, objects with
  __index__...) and asserts the TypeError or ValueError the argument's rules predict, the searcher
  unchanged, and that no Python code ran while the arguments were read;
* searches with callbacks (should_stop, the evaluation memo, a signal handler) that call every
  method of their own searcher, and from a second thread during a search: each call must be
  refused with a RuntimeError naming it; callbacks that let the refusal propagate abort the search;
  several threads share one searcher at random;
* searches on several threads (the core's helpers): callbacks run in the main thread or a helper's
  are refused every call of their searcher, a helper's exception reaches the caller, and every
  search ends with no thread left behind, its position unwound and a legal move.

Throughout, a compiled searcher and a pure-Python one do the same searches side by side and must
give the same move, score, depth, node count and principal variation after every step: a refused
call that changed anything in the searcher would show there.

Fast by default (a few seconds); UTTT_FUZZ_ROUNDS and UTTT_FUZZ_SEED make a longer or another run:
    UTTT_FUZZ_ROUNDS=2000 python -m pytest -q tests/test_core_fuzz.py
    python tests/test_core_fuzz.py --rounds 2000 --seed 7    # the child alone, with its counts
"""

from __future__ import annotations

import argparse
import collections
import math
import os
import random
import signal
import subprocess
import sys
import threading
from array import array
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # the child fuzzes this checkout's core

import pytest  # noqa: E402

import native_threads  # noqa: E402  (beside this file)
from agent import core, search  # noqa: E402
from agent.core_wasm import position_of_fields as position_of  # noqa: E402
from agent.evaluation import Evaluator  # noqa: E402
from agent.limits import SearchLimit  # noqa: E402
from agent.rules import CODINGAME, DRAWN, FULL, OPEN, WINS, WON_O, WON_X, WPI, Position, perft  # noqa: E402
from agent.rules import ZOBRIST_CELL, ZOBRIST_FORCED  # noqa: E402
from agent.search import INFINITY, AlphaBeta, Features  # noqa: E402

DEFAULT_ROUNDS = 30
ROUNDS_ENV, SEED_ENV = "UTTT_FUZZ_ROUNDS", "UTTT_FUZZ_SEED"


@pytest.mark.skipif(not core.compiled_available(), reason=core.unavailable_reason() or "built")
def test_no_call_crashes_the_compiled_core(sample):
    rounds, seed = int(os.environ.get(ROUNDS_ENV, sample(DEFAULT_ROUNDS))), int(os.environ.get(SEED_ENV, 0))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, __file__, "--rounds", str(rounds), "--seed", str(seed)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300 + 10 * rounds)
    again = f"again alone: python tests/{Path(__file__).name} --rounds {rounds} --seed {seed}"
    if done.returncode < 0:
        pytest.fail(f"the core crashed: the fuzz was killed by {signal.Signals(-done.returncode).name} ({again})\n"
                    f"{done.stderr[-6000:]}")
    assert done.returncode == 0, f"({again})\n{done.stderr[-6000:]}"
    assert done.stdout.startswith(f"fuzz: {rounds} rounds, seed {seed}, passed"), done.stdout


# -- the child ---------------------------------------------------------------------------------

STATS: collections.Counter = collections.Counter()
#: Valid values too costly to pass: a 2**32-entry table really takes 64 GiB, perft(9) hours.
CAPS = {"tt_slots": 1 << 20, "perft": 3}
#: Python code run while the core read arguments (it must stay empty).
CALLED_BACK: list[str] = []


class Indexable:
    """Not an int, though int() would take it: the core must refuse it without calling __index__."""

    def __index__(self):
        CALLED_BACK.append("__index__")
        return 0


class SneakyInt(int):
    """An int whose conversions would call back: the core must read its value without them."""

    def __index__(self):
        CALLED_BACK.append("SneakyInt.__index__")
        return 0

    def __int__(self):
        CALLED_BACK.append("SneakyInt.__int__")
        return 0


class Floaty:
    def __float__(self):
        CALLED_BACK.append("__float__")
        return 0.0


BAD_VALUES = [None, 0.0, 1.5, math.nan, math.inf, -math.inf, "1", b"", bytearray(3), [], [0], (), {}, object(),
              Indexable(), Floaty(), True, False, -1, 0, 1, 2, 3, 9, 2**31, 2**32 + 1, 2**63 - 1, 2**63, 2**64 - 1,
              2**64, -2**63, -2**63 - 1, 10**100, -10**100, SneakyInt(3), lambda: 0]


def random_positions(rng: random.Random, count: int) -> list[Position]:
    """Positions of random games at every stage, finished ones included; a quarter under CodinGame's rules."""
    positions = []
    while len(positions) < count:
        pos = Position(CODINGAME if len(positions) % 4 == 3 else WPI)
        stop = rng.randint(0, 81)
        while pos.winner is None and pos.ply < stop:
            pos.push(rng.choice(list(pos.legal_moves())))
        positions.append(pos)
    return positions


def fields_of(pos: Position) -> list:
    """set_position's arguments, as agent.core.load_position passes them."""
    return [pos.masks[0][:], pos.masks[1][:], pos.status[:], pos.forced, pos.turn,
            -1 if pos.winner is None else pos.winner, pos.key, pos.ply, pos.variant == WPI]


def state_of(fields) -> tuple:
    """What Searcher.state() says once these fields are loaded: (turn, winner, forced, key, ply)."""
    return fields[4], fields[5], fields[3], fields[6], fields[7]


def python_verdict(fields):
    """(exception type, message) that Position.check raises for these fields, or None."""
    if fields[5] is None:  # Position reads winner None as "no winner"; the core takes -1
        return TypeError, "winner must be an int, not NoneType"
    try:
        position_of(fields).check()
    except (TypeError, ValueError) as error:
        return type(error), str(error)
    return None


def board_state(x: int, o: int) -> int:
    return WON_X if WINS[x] else WON_O if WINS[o] else DRAWN if x | o == FULL else OPEN


def corrupt(rng: random.Random, fields: list) -> list:
    """The fields with one to three random faults; each fault is sometimes mended in part (the
    board's status, the key, turn and ply) so that the later checks are reached too."""
    f = [field[:] if isinstance(field, list) else field for field in fields]
    for _ in range(rng.choice((1, 1, 2, 3))):
        fault = rng.randrange(9)
        if fault == 0:  # a cell gained or lost
            player, b, spot = rng.randrange(2), rng.randrange(9), rng.randrange(9)
            f[player][b] ^= 1 << spot
            if rng.random() < 0.5 and 0 <= f[0][b] <= FULL and 0 <= f[1][b] <= FULL:
                f[2][b] = board_state(f[0][b], f[1][b])
            if rng.random() < 0.5:
                f[6] ^= ZOBRIST_CELL[player][b * 9 + spot]
            if rng.random() < 0.5:
                gained = 1 if f[player][b] >> spot & 1 else -1
                f[7] += gained
                f[4] = min(1, max(0, f[4] + (gained if player == 0 else -gained)))
        elif fault == 1:
            f[2][rng.randrange(9)] = rng.randrange(4)
        elif fault == 2:
            forced = rng.randrange(-1, 9)
            if rng.random() < 0.5 and -1 <= f[3] <= 8:
                f[6] ^= ZOBRIST_FORCED[f[3] + 1] ^ ZOBRIST_FORCED[forced + 1]
            f[3] = forced
        elif fault == 3:
            f[4] ^= 1
        elif fault == 4:
            f[5] = rng.randrange(-1, 3)
        elif fault == 5:
            f[6] ^= 1 << rng.randrange(64)
        elif fault == 6:
            f[7] += rng.choice((-2, -1, 1))
        elif fault == 7:
            f[8] = not f[8]
        else:  # a value out of range, or huge
            where, value = rng.choice([(0, 512), (1, -1), (2, 4), (3, 9), (3, -2), (4, 2), (5, 3), (6, -1),
                                       (6, 2**64), (7, 82), (7, -1), (0, 2**64), (2, -2**70)])
            if where < 3:
                f[where][rng.randrange(9)] = value
            else:
                f[where] = value
    return f


def hand_made_faults() -> list[list]:
    """Faults random corruption seldom makes: a board where both have a line; both with three
    boards in a line (counts, statuses and forced consistent, so that this is the first fault)."""
    both_lines = [[0o7] + [0] * 8, [0o70] + [0] * 8, [1] + [0] * 8, -1, 0, -1, 0, 6, True]
    xs, os_ = [0o7] * 3 + [0] * 6, [0] * 3 + [0o7] * 3 + [0] * 3
    both_global = [xs, os_, [board_state(x, o) for x, o in zip(xs, os_)], -1, 0, 0, 0, 18, True]
    return [both_lines, both_global]


#: The kind of fault each of Position.check's messages names (every kind must be seen).
MESSAGE_KINDS = [("must be", "value"), ("must hold", "value"), ("both hold a cell", "cell held twice"),
                 ("have a line", "both lines on a board"), ("the board's cells make it", "status"),
                 ("X moves first", "mark counts"), ("turn is", "turn"), ("ply is", "ply"),
                 ("is not open", "forced board"), ("three boards in a line", "both lines of boards"),
                 ("winner says", "winner"), ("Zobrist", "key")]


def kind_of(message: str) -> str:
    return next(kind for text, kind in MESSAGE_KINDS if text in message)


# -- what each argument must be (the core's reading rules), and the error it predicts --------------

def int_error(value, low, high):
    if not isinstance(value, int):
        return TypeError
    return None if low <= value <= high else ValueError


def ints_error(value, count, low, high, most=None):
    """A list or tuple of ``count`` ints (or 1 to ``most``)."""
    if not isinstance(value, (list, tuple)):
        return TypeError
    if (len(value) != count) if most is None else not 1 <= len(value) <= most:
        return ValueError
    return next(filter(None, (int_error(v, low, high) for v in value)), None)


def features_error(value):
    """search.Features.values(): asp, lmr, age, solve, each in its own range."""
    if not isinstance(value, (list, tuple)):
        return TypeError
    if len(value) != len(FEATURE_RANGES):
        return ValueError
    return next(filter(None, (int_error(v, 0, high) for v, high in zip(value, FEATURE_RANGES))), None)


#: The largest value of each of search.Features' fields that the core takes.
FEATURE_RANGES = (INFINITY, 2, 62, 128)


def seconds_error(value, none_ok=True):
    if value is None and none_ok:
        return None
    if not isinstance(value, (int, float)):
        return TypeError
    return ValueError if isinstance(value, float) and math.isnan(value) else None


def buffer_error(value, size):
    if not isinstance(value, (bytes, bytearray, memoryview, array)):
        return TypeError
    return None if memoryview(value).nbytes == size else ValueError


KINDS = {
    "mask": lambda v: ints_error(v, 9, 0, 511),
    "status": lambda v: ints_error(v, 9, 0, 3),
    "forced": lambda v: int_error(v, -1, 8),
    "turn": lambda v: int_error(v, 0, 1),
    "winner": lambda v: int_error(v, -1, 2),
    "key": lambda v: int_error(v, 0, 2**64 - 1),
    "ply": lambda v: int_error(v, 0, 81),
    "bool": lambda v: int_error(v, 0, 1),
    "move": lambda v: int_error(v, 0, 80),
    "moves": lambda v: ints_error(v, None, 0, 80, most=81),
    "depth": lambda v: int_error(v, 1, 127),
    "alpha": lambda v: int_error(v, -INFINITY, INFINITY - 1),
    "beta": lambda v: int_error(v, -INFINITY + 1, INFINITY),
    "features": features_error,
    "perft": lambda v: int_error(v, 0, 81),
    "seconds": seconds_error,
    "nodes": lambda v: None if v is None or isinstance(v, int) else TypeError,
    "should_stop": lambda v: None if v is None or callable(v) else TypeError,
    "poll": lambda v: seconds_error(v, none_ok=False) or (None if 0 <= v <= 3600 else ValueError),
    "memo": lambda v: None if callable(v) else TypeError,
    "eval": lambda v: int_error(v, -2**30, 2**30),
    "scale": lambda v: int_error(v, 1, 100000),
    "weight": lambda v: int_error(v, 0, 2**30),
    "local": lambda v: buffer_error(v, 4 << 18),
    "pattern": lambda v: buffer_error(v, 4 * 19683),
    "can_win": lambda v: buffer_error(v, 1 << 18),
    "tt_slots": lambda v: int_error(v, 0, 2**32) or (None if v == 0 or (v >= 8 and v & (v - 1) == 0) else ValueError),
    "threads": lambda v: int_error(v, 1, core.MAX_THREADS),
}

#: Searcher attributes: readable when idle, refused while a call holds the searcher.
ATTRIBUTES = ("nodes", "helper_nodes", "root_best", "tt_count", "tt_replaced", "tt_slots", "threads")


def variants(kind: str, valid, rng: random.Random) -> list:
    """Values to put in place of a valid argument of this kind."""
    values = list(BAD_VALUES)
    if isinstance(valid, list) and valid:  # the list with one item wrong, too short or too long, a tuple
        for bad in rng.sample(BAD_VALUES, 6):
            changed = valid[:]
            changed[rng.randrange(len(changed))] = bad
            values.append(changed)
        values += [valid[:-1], valid + valid[:1], tuple(valid), valid * 10]
    if isinstance(valid, (bytes, bytearray)):
        values += [valid[:-1], valid + b"\0", bytearray(valid), memoryview(valid), bytes(len(valid)),
                   rng.randbytes(len(valid)), "text"]
    return values


# -- the searchers -------------------------------------------------------------------------------

class Fuzz:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.evaluators = [Evaluator()]
        try:
            from agent.eval_fitted import FittedEvaluator

            self.evaluators.append(FittedEvaluator())
        except (ImportError, ValueError):  # pragma: no cover - not in this version, or no data file
            pass
        classic = self.evaluators[0]
        self.can_win = bytes(classic._can_win_next)
        self.classic_args = core._classic_arguments(classic)
        self.fitted_args = core._fitted_arguments(self.evaluators[1]) if len(self.evaluators) > 1 else None
        self.positions = random_positions(self.rng, 300)
        self.playable = [p for p in self.positions if p.winner is None]
        self.new_twins()

    def new_twins(self) -> None:
        """A compiled and a Python searcher that do the same searches and must give the same results;
        tables large enough that neither drops an entry (when results must agree to the node)."""
        evaluator = self.rng.choice(self.evaluators)
        self.c = core.CompiledAlphaBeta(evaluator, tt_slots=1 << 20, prefault=False)
        self.py = AlphaBeta(evaluator, move_space=81, hash_mb=256)
        self.searches = 0

    def searcher(self, evaluator=None, slots: int = 1 << 12) -> core.CompiledAlphaBeta:
        return core.CompiledAlphaBeta(evaluator or self.evaluators[0], tt_slots=slots, prefault=False)

    def same_search(self, pos: Position, limit: SearchLimit, should_stop=None, python_should_stop=None):
        """Both twins search ``pos``; their results must be equal (or both searches raise)."""
        c_limit = SearchLimit(depth=limit.depth, nodes=limit.nodes, should_stop=should_stop)
        p_limit = SearchLimit(depth=limit.depth, nodes=limit.nodes, should_stop=python_should_stop)
        outcomes = []
        for engine, lim, state in ((self.c, c_limit, pos), (self.py, p_limit, pos.copy())):
            try:
                r = engine.search(state, lim)
                outcomes.append((r.move, r.score, r.depth, r.nodes, r.pv, r.proven))
            except RuntimeError as error:
                outcomes.append(type(error))
        assert self.c.tt_replaced == 0 and len(self.py.tt) <= self.py.tt_capacity * 3 // 4
        assert outcomes[0] == outcomes[1], (outcomes, pos, limit)
        self.searches += 1
        STATS["searches compared with Python"] += 1
        return outcomes[0]

    def random_limit(self) -> SearchLimit:
        if self.rng.random() < 0.5:
            return SearchLimit(depth=self.rng.choice((1, 2, 3)))
        return SearchLimit(nodes=self.rng.randint(300, 3000))

    def every_call(self, s, fields, moves) -> list:
        """Every method and attribute of a Searcher, each with valid arguments: (name, call)."""
        calls = [("set_position", lambda: s.set_position(*fields)),
                 ("new_search", lambda: s.new_search(None, 1000, None)),
                 ("root", lambda: s.root(moves[:1], 1, -INFINITY, INFINITY, 1)),
                 ("set_features", lambda: s.set_features(Features().values())),
                 ("probe", lambda: s.probe(0)),
                 ("evaluate", s.evaluate),
                 ("move_priority", lambda: s.move_priority(moves)),
                 ("legal_moves", s.legal_moves),
                 ("state", s.state),
                 ("perft", lambda: s.perft(1)),
                 ("push", lambda: s.push(moves[0])),
                 ("pop", s.pop),
                 ("set_classic", lambda: s.set_classic(*self.classic_args)),
                 ("__init__", lambda: s.__init__(self.can_win, 1024))]
        if self.fitted_args is not None:
            calls.append(("set_fitted", lambda: s.set_fitted(*self.fitted_args)))
        return calls + [(name, lambda name=name: getattr(s, name)) for name in ATTRIBUTES]

    # -- 1. positions ----------------------------------------------------------------------------

    def check_positions(self, count: int) -> None:
        """Corrupted fields: refused exactly as Position.check refuses them, and nothing changes."""
        s = self.c._core
        cases = [corrupt(self.rng, fields_of(self.rng.choice(self.positions))) for _ in range(count)]
        for fields in cases + (hand_made_faults() if STATS["hand-made faults"] == 0 else []):
            STATS["hand-made faults"] += fields in hand_made_faults()
            verdict, before = python_verdict(fields), s.state()
            try:
                s.set_position(*fields)
            except (TypeError, ValueError) as error:
                assert verdict == (type(error), str(error)), (verdict, error, fields)
                assert s.state() == before
                STATS[f"inconsistent: {kind_of(str(error))}"] += 1
                continue
            assert verdict is None, (verdict, fields)
            assert s.state() == state_of(fields)
            STATS["corrupted but consistent: accepted"] += 1
            if fields[5] == -1 and self.rng.random() < 0.3:  # searched as Python searches it
                pos, evaluator = position_of(fields), self.rng.choice(self.evaluators)
                a = self.searcher(evaluator).search(pos, SearchLimit(depth=2))
                b = AlphaBeta(evaluator, move_space=81, hash_mb=16).search(pos.copy(), SearchLimit(depth=2))
                assert (a.move, a.score, a.nodes, a.pv) == (b.move, b.score, b.nodes, b.pv), fields
                STATS["consistent corruptions searched"] += 1

    # -- 2. arguments ------------------------------------------------------------------------------

    def expect(self, call, error, name: str) -> None:
        """``call()`` raises ``error`` (None: returns)."""
        try:
            call()
        except (TypeError, ValueError, OverflowError, RuntimeError, IndexError) as raised:
            assert error is not None and type(raised) is error, (name, error, raised)
            assert "\n" not in str(raised) and str(raised), (name, raised)
        else:
            assert error is None, (name, error)
        STATS[f"arguments: {name}"] += 1

    def substitute(self, name: str, method, spec: list, extra=lambda args: None, after=lambda: None) -> None:
        """Call ``method`` once per variant of one argument, the others valid: ``spec`` is
        [(kind, valid value)]; ``extra(args)`` is an error beyond the arguments' own rules."""
        i = self.rng.randrange(len(spec)) if spec else None
        valid = [value for _, value in spec]
        self.expect(lambda: method(*valid, None), TypeError, f"{name} (one argument too many)")
        if i is None:
            self.expect(lambda: method(), extra([]), name)
            return
        kind = spec[i][0]
        for value in variants(kind, valid[i], self.rng):
            args = valid[:i] + [value] + valid[i + 1:]
            if kind in CAPS and KINDS[kind](value) is None and value > CAPS[kind]:
                continue
            error = KINDS[kind](value) or extra(args)
            self.expect(lambda: method(*args), error, f"{name}({kind})")
            after()

    def check_arguments(self) -> None:
        rng, c = self.rng, self.c._core
        pos = rng.choice(self.playable)
        fields, moves = fields_of(pos), list(pos.legal_moves())
        core.load_position(c, pos)
        before = c.state()
        position_spec = list(zip(["mask", "mask", "status", "forced", "turn", "winner", "key", "ply", "bool"], fields))

        def verdict(args):
            error = python_verdict(args)
            return error and error[0]

        # The twins' compiled searcher: nothing here may change what its next search finds.
        self.substitute("set_position", c.set_position, position_spec, verdict, after=lambda: core.load_position(c, pos))
        self.substitute("probe", c.probe, [("key", pos.key)])
        self.substitute("move_priority", c.move_priority, [("moves", moves)])
        self.substitute("perft", c.perft, [("perft", 1)], lambda args: None if args[0] <= 81 - pos.ply else ValueError)
        self.substitute("push", c.push, [("move", moves[0])],
                        lambda args: None if args[0] in moves else ValueError, after=lambda: core.load_position(c, pos))
        for name in ("evaluate", "legal_moves", "state"):
            self.substitute(name, getattr(c, name), [])
        self.substitute("pop", c.pop, [], lambda args: IndexError)  # no move made since set_position
        assert c.state() == before
        # A scratch searcher for the calls that change what a search does.
        s = self.searcher()._core
        core.load_position(s, pos)
        limited = lambda: s.new_search(None, 1000, None)  # noqa: E731 - every root call below stops soon
        limited()
        self.substitute("root", s.root, [("moves", moves), ("depth", 3), ("alpha", -INFINITY), ("beta", INFINITY),
                                         ("bool", 1)],
                        lambda args: None if all(m in moves for m in args[0]) else ValueError, after=limited)
        self.substitute("set_features", s.set_features, [("features", list(Features().values()))],
                        after=lambda: s.set_features(Features().values()))
        self.substitute("new_search", s.new_search, [("seconds", 1.0), ("nodes", 100), ("should_stop", None),
                                                     ("poll", 0.01)], after=limited)
        restore = lambda: s.set_classic(*self.classic_args)  # noqa: E731
        self.substitute("set_classic", s.set_classic, list(zip(["local", "memo", "eval"], self.classic_args)),
                        after=restore)
        if self.fitted_args is not None:
            self.substitute("set_fitted", s.set_fitted,
                            list(zip(["pattern"] * 3 + ["scale", "weight", "weight", "eval", "eval"], self.fitted_args)),
                            self.fitted_error, after=restore)
        fresh = lambda: core._core.Searcher.__new__(core._core.Searcher)  # noqa: E731
        self.substitute("__init__", lambda *args: fresh().__init__(*args),
                        [("can_win", self.can_win), ("tt_slots", 1024), ("bool", False), ("threads", 2)])
        made = fresh()  # never initialised: state and the counters answer, the rest is refused
        for name, call in self.every_call(made, fields, moves):
            if name != "__init__":
                ok = name == "state" or name in ATTRIBUTES
                self.expect(call, None if ok else RuntimeError, "uninitialised searcher")
        zobrist = [("key", list(ZOBRIST_CELL[0])), ("key", list(ZOBRIST_CELL[1])), ("key", list(ZOBRIST_FORCED))]
        for i, (_, table) in enumerate(zobrist):  # tables of keys: any int 0 to 2**64-1 in each place
            for value in variants("key", table, rng):
                tables = [t for _, t in zobrist]
                tables[i] = value
                error = ints_error(value, len(table), 0, 2**64 - 1)
                self.expect(lambda: core._core.set_zobrist(*tables), error, "set_zobrist")
                core._core.set_zobrist(ZOBRIST_CELL[0], ZOBRIST_CELL[1], ZOBRIST_FORCED)
        assert not CALLED_BACK, CALLED_BACK

    def fitted_error(self, args):
        """set_fitted's checks beyond each argument's range: the scores' bound, 64-bit products, 0 <= table <= q."""
        q, line, board, tempo, free_move = args[3:]
        if 8 * line + 9 * board + abs(tempo) + abs(free_move) > 2**30 or line * 8 * q**3 >= 2**63:
            return ValueError
        tables = [array("i", bytes(t)) for t in args[:3]]
        return None if all(0 <= v <= q for t in tables for v in t) else ValueError

    # -- 3. callbacks -------------------------------------------------------------------------------

    def refused(self, name: str, call, running: str, here: bool) -> None:
        try:
            call()
        except RuntimeError as error:
            where = "is running and code it calls back" if here else "is running in another thread"
            assert str(error).startswith(f"Searcher.{name} refused: Searcher.{running} {where}"), str(error)
        else:
            raise AssertionError(f"Searcher.{name} was not refused while Searcher.{running} ran")
        STATS[f"refused {'in a callback' if here else 'to another thread'}: {name}"] += 1

    def zobrist_refused(self) -> None:
        try:
            core._core.set_zobrist(ZOBRIST_CELL[0], ZOBRIST_CELL[1], ZOBRIST_FORCED)
        except RuntimeError as error:
            assert str(error).startswith("set_zobrist refused"), str(error)
        else:
            raise AssertionError("set_zobrist was not refused during a search")
        STATS["refused: set_zobrist"] += 1

    def reentrant_search(self) -> None:
        """should_stop calls its own searcher: refused each time; the search goes on unchanged,
        or, when should_stop lets the refusal out, stops both twins at the same node."""
        pos = self.rng.choice(self.playable)
        s, fields, moves = self.c._core, fields_of(pos), list(pos.legal_moves())
        calls = self.every_call(s, fields, moves)
        abort_at = self.rng.choice((None, None, 1, 2, 5))
        polls = [0, 0]

        def should_stop():
            polls[0] += 1
            for name, call in calls if polls[0] == 1 else self.rng.sample(calls, 3):
                self.refused(name, call, "root", here=True)
            self.zobrist_refused()
            if polls[0] == abort_at:
                s.set_position(*fields)  # refused: the RuntimeError ends the search
            return False

        def python_should_stop():
            polls[1] += 1
            if polls[1] == abort_at:
                raise RuntimeError("stop here too")
            return False

        limit = SearchLimit(nodes=self.rng.randint(1500, 4000))  # polled every 256 nodes
        outcome = self.same_search(pos, limit, should_stop, python_should_stop)
        assert polls[0] == polls[1]  # both at the same nodes (none in a search proven at once)
        assert s.state() == state_of(fields)  # unwound
        STATS["callback searches" + (" aborted" if outcome is RuntimeError else "")] += 1

    def reentrant_memo(self) -> None:
        """The classic evaluation's memo calls its own searcher: refused; the results are unchanged."""
        if self.c.evaluation != "classic":
            return
        s = self.c._core
        local, memo, free_move = self.classic_args

        def calling_memo(*boards):
            name, call = self.rng.choice(self.every_call(s, fields_of(Position()), list(range(9))))
            self.refused(name, call, "root", here=True)
            STATS["memo callbacks"] += 1
            return memo(*boards)

        s.set_classic(local, calling_memo, free_move)  # a fresh memo: it is asked again
        self.same_search(self.rng.choice(self.playable), SearchLimit(depth=2))
        s.set_classic(*self.classic_args)

    def bad_memo(self) -> None:
        """A memo that raises or answers wrongly makes the search raise; the searcher is unwound."""
        s = self.searcher()._core
        local, memo, free_move = self.classic_args
        answers = [lambda *b: 1 / 0, lambda *b: None, lambda *b: memo(*b)[:9], lambda *b: [1.5] * 10,
                   lambda *b: [2**40] * 10, lambda *b: (2**30,) + memo(*b)[1:], lambda *b: [0] + [2**25] * 9]
        errors = [ZeroDivisionError, TypeError, ValueError, TypeError, ValueError, ValueError, ValueError]
        for answer, error in zip(answers, errors):
            pos = self.rng.choice([p for p in self.playable if p.ply < 30])  # leaves to evaluate
            core.load_position(s, pos)
            s.set_classic(local, answer, free_move)
            s.new_search(None, None, None)
            try:
                s.root(list(pos.legal_moves()), 2, -INFINITY, INFINITY, 1)
            except error:
                STATS["bad memo answers refused"] += 1
            else:
                raise AssertionError(f"the memo's bad answer was taken ({error.__name__} expected)")
            assert s.state() == state_of(fields_of(pos))  # unwound

    def signal_handler(self) -> None:
        """A signal handler run inside the search (which lets Python handle signals) is refused too."""
        if not hasattr(signal, "setitimer"):
            return
        pos = min(self.playable, key=lambda p: abs(p.ply - 20))
        fields, outcomes = fields_of(pos), []

        def handler(signum, frame):
            try:
                self.c._core.set_position(*fields)
                outcomes.append("accepted")  # between two depths: the same position again, harmless
            except RuntimeError as error:
                assert "refused: Searcher.root is running and code it calls back" in str(error), str(error)
                outcomes.append("refused")

        old = signal.signal(signal.SIGALRM, handler)
        signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
        try:
            self.same_search(pos, SearchLimit(nodes=20000))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        assert "refused" in outcomes, outcomes
        STATS["refused: in a signal handler"] += outcomes.count("refused")

    # -- 4. threads ---------------------------------------------------------------------------------

    def second_thread(self) -> None:
        """While one thread's search runs (in C without the GIL, or in its should_stop), every call
        from another thread is refused, and the search finds what Python finds."""
        pos = next(p for p in self.playable if p.forced >= 0 and 12 <= p.ply <= 40)
        fields, moves = fields_of(pos), list(pos.legal_moves())
        started, tried, polls, box = threading.Event(), threading.Event(), [], {}

        def should_stop():
            polls.append(1)
            if len(polls) == 1:
                started.set()  # the search goes on without the GIL while the main thread calls
            else:
                tried.wait(60)  # the next poll waits, so the search is still running meanwhile
            return False

        def work():
            try:
                self.c._start_search(pos, SearchLimit(should_stop=should_stop))
                box["found"] = self.c._search_root(pos, moves, 6, -INFINITY, INFINITY, True)
            except BaseException as error:  # reported below, not lost in the thread
                box["error"] = error

        thread = threading.Thread(target=work)
        thread.start()
        try:
            assert started.wait(60)
            for name, call in self.every_call(self.c._core, fields, moves):
                self.refused(name, call, "root", here=False)
            self.zobrist_refused()
        finally:
            tried.set()
            thread.join(120)
        assert "error" not in box, box
        assert len(polls) >= 2, "the search ended before the main thread's calls: search deeper"
        self.py._start_search(pos, SearchLimit(should_stop=lambda: False))
        assert box["found"] == self.py._search_root(pos.copy(), moves, 6, -INFINITY, INFINITY, True)
        assert self.c.nodes == self.py.nodes
        STATS["searches compared with Python"] += 1

    def shared_searcher(self, threads: int = 3, steps: int = 40) -> None:
        """Threads share one searcher at random: calls meeting a running one are refused, nothing
        else goes wrong, and the searcher still works afterwards."""
        shared = self.searcher()
        errors, counts = [], collections.Counter()
        together = threading.Barrier(threads)

        def work(seed: int) -> None:
            rng = random.Random(seed)
            together.wait(60)
            for _ in range(steps):
                pos = rng.choice(self.playable)
                s = shared._core
                ops = [lambda: shared.search(pos, SearchLimit(depth=rng.choice((1, 2, 3)))),
                       lambda: (core.load_position(s, pos), s.perft(2)), lambda: s.evaluate(), lambda: s.state(),
                       lambda: s.legal_moves(), lambda: s.push(rng.randrange(81)), lambda: s.pop(),
                       lambda: core.load_position(s, pos)]
                try:
                    rng.choice(ops)()
                    counts["done"] += 1
                except RuntimeError as error:
                    if "refused: Searcher." not in str(error) or "in another thread" not in str(error):
                        errors.append(error)
                    counts["refused"] += 1
                except ValueError as error:  # another thread moved the position between two calls
                    if "not legal" not in str(error):
                        errors.append(error)
                except IndexError:  # pop with no move made
                    pass
                except BaseException as error:
                    errors.append(error)

        pool = [threading.Thread(target=work, args=(self.rng.randrange(2**32),)) for _ in range(threads)]
        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-5)  # threads take turns often, inside each other's calls too
        try:
            for thread in pool:
                thread.start()
            for thread in pool:
                thread.join(300)
        finally:
            sys.setswitchinterval(interval)
        assert not errors, errors
        pos = self.rng.choice(self.playable)
        s = shared._core
        core.load_position(s, pos)
        assert s.legal_moves() == list(pos.legal_moves()) and s.perft(2) == perft(pos, 2)
        assert shared.search(pos, SearchLimit(depth=3)).move in pos.legal_moves()
        STATS["shared-searcher calls refused"] += counts["refused"]
        STATS["shared-searcher calls done"] += counts["done"]

    # -- 5. the threaded search -------------------------------------------------------------------

    def threaded(self) -> None:
        """One search on 2 to 4 threads under a random limit, whose should_stop (main thread) and
        memo (main thread or a helper) call every method of their searcher: all refused, with the
        words for their thread; either may raise, and then the search raises that, whichever
        thread it was in. No thread outlives the search; the position is unwound."""
        evaluator = self.rng.choice(self.evaluators)
        searcher = core.CompiledAlphaBeta(evaluator, tt_slots=self.rng.choice((1 << 10, 1 << 16)), prefault=False,
                                          threads=self.rng.choice((2, 3, 4)))
        s = searcher._core
        pos = self.rng.choice([p for p in self.playable if p.ply <= 50])
        fields, moves = fields_of(pos), list(pos.legal_moves())
        calls, main, rng = self.every_call(s, fields, moves), threading.get_ident(), random.Random(self.rng.random())
        raised = []

        def callback(where: str, raise_chance: float) -> None:
            here = threading.get_ident() == main
            for name, call in rng.sample(calls, 2):
                self.refused(name, call, "root", here=here)
            STATS[f"threaded: {where} called {'in the main thread' if here else 'in a helper'}"] += 1
            if rng.random() < raise_chance:
                raised.append("main" if here else "helper")
                raise ZeroDivisionError(f"{where} failed")

        def should_stop():
            callback("should_stop", 0.05)
            return False

        if searcher.evaluation == "classic":
            local, memo, free_move = self.classic_args

            def calling_memo(*boards):
                callback("memo", 0.02)
                return memo(*boards)

            s.set_classic(local, calling_memo, free_move)
        limit = rng.choice((SearchLimit(depth=rng.randint(5, 7)), SearchLimit(nodes=rng.randint(20000, 200000)),
                            SearchLimit.seconds(rng.uniform(0.01, 0.1))))
        limit = SearchLimit(deadline=limit.deadline, depth=limit.depth, nodes=limit.nodes, should_stop=should_stop)
        before = native_threads.native_threads() if native_threads.AVAILABLE else set()
        try:
            result = searcher.search(pos, limit)
        except ZeroDivisionError:
            assert raised, "raised with no callback raising"
            STATS[f"threaded: a {raised[0]} callback's exception raised"] += 1
        else:
            assert not raised, f"a {raised[0]} callback raised but the search did not"
            assert result.move in moves and result.nodes == s.nodes + s.helper_nodes
            STATS["threaded searches" + (" with helpers" if s.helper_nodes else "")] += 1
        if native_threads.AVAILABLE:
            left = native_threads.still_listed(native_threads.native_threads() - before)
            assert not left, f"helper threads {sorted(left)} outlived their search"
        assert s.state() == state_of(fields)

    # -- the run ------------------------------------------------------------------------------------

    def run(self, rounds: int) -> None:
        self.second_thread()
        self.signal_handler()
        self.bad_memo()
        for round_ in range(rounds):
            if self.searches >= 12:
                self.new_twins()
            self.check_positions(40)
            if round_ % 3 == 0:
                self.check_arguments()
            self.same_search(self.rng.choice(self.playable), self.random_limit())
            self.reentrant_search()
            if round_ % 4 == 0:
                self.reentrant_memo()
            self.threaded()
            self.threaded()
        self.shared_searcher()
        self.same_search(self.rng.choice(self.playable), SearchLimit(depth=3))  # and still the same


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Fuzz agent._core's entry points (the child of the test).")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not core.compiled_available():
        print(f"fuzz: skipped: {core.unavailable_reason()}")
        return 0
    # should_stop is asked at every look at the limits (every 256 nodes), in both searches, not
    # every 10 ms: callbacks come often, and at the same nodes in both.
    core.STOP_POLL_SECONDS = search.STOP_POLL_SECONDS = 0.0
    fuzz = Fuzz(args.seed)
    fuzz.run(args.rounds)
    kinds = {kind for _, kind in MESSAGE_KINDS}
    seen = {key.split(": ", 1)[1] for key in STATS if key.startswith("inconsistent: ")}
    assert seen == kinds, f"faults never made: {sorted(kinds - seen)}"
    names = {name for name, _ in fuzz.every_call(fuzz.c._core, [], [])}
    for where in ("in a callback", "to another thread"):
        refused = {key.split(": ", 1)[1] for key in STATS if key.startswith(f"refused {where}: ")}
        assert refused == names, f"never refused {where}: {sorted(names - refused)}"
    assert STATS["callback searches aborted"] > 0
    for seen in ("threaded searches with helpers", "threaded: memo called in a helper",
                 "threaded: a helper callback's exception raised", "threaded: a main callback's exception raised"):
        assert STATS[seen] > 0, f"never seen: {seen}"
    print(f"fuzz: {args.rounds} rounds, seed {args.seed}, passed")
    for key, count in sorted(STATS.items()):
        print(f"  {count:>7}  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
