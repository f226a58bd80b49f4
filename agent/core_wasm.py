"""The search core as WebAssembly, run by wasmtime: the compiled core where no C compiler built it.

``agent/data/core.wasm`` is agent/core_search.c (the compiled core's search, unchanged) with the
calls of agent/core_wasm.c, built by scripts/build_wasm.py with a pinned ``ziglang``. This module
drives it as agent._core's ``Searcher`` is driven, method for method, so that
:class:`agent.core.CompiledAlphaBeta` runs it unchanged (``core_module=``): the same trees, node
for node (tests/test_core_wasm.py), slower than the compiled core (docs/measurements.md, "The cores' speed").

What it does not do: threads (one search per instance, ``MAX_THREADS`` is 1). The classic
evaluation works (its memo is a call back into Python, a few hundred per game).

:func:`load` gives the module object, or raises :class:`WasmUnavailable` saying why (wasmtime
not installed, the file missing or from another version of agent/core_wasm.c).
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import signal
import struct
import threading
from pathlib import Path

try:
    # signal's own getsignal and signal turn each handler into an enum member where they can,
    # which costs microseconds a signal for a callable; a search swaps them at every root call.
    import _signal as raw_signal
except ImportError:  # pragma: no cover - not CPython
    raw_signal = signal

from .rules import CODINGAME, DRAWN, WPI, ZOBRIST_CELL, ZOBRIST_FORCED, Position, _check_int, _check_ints

#: The module, shipped as package data.
WASM_PATH = Path(__file__).with_name("data") / "core.wasm"
#: agent/core_wasm.c's WASM_VERSION this module drives.
WASM_VERSION = 1
#: What installs wasmtime (its wheels carry the runtime for Windows, macOS and Linux).
INSTALL_HINT = "python -m pip install wasmtime"

# agent/core_wasm.c's buffers (uttt_buffer's kinds) and failures (uttt_failure).
MOVES, INTS, CAN_WIN, ZOBRIST, FITTED, LOCAL, MEMO, POSITION, CELLS = range(9)
FAILED_HOST, FAILED_MEMO_RANGE = 1, 2
# agent/core_search.h's limits and the codes of core_check_fitted.
INFINITY_SCORE = 1_000_001
MAX_PLY = 128
EVAL_LIMIT = 1 << 30
TT_WINDOW = 8
PATTERNS = 19683
FITTED_BOUND, FITTED_LINE_RANGE, FITTED_TABLE_VALUE = 1, 2, 3
#: The largest table: wasm32's memory is 4 GiB, and the rest of the module needs some.
MAX_TT_SLOTS = 1 << 27


def _signed(key: int) -> int:
    """A 64-bit key as the module's i64 takes it (wasm has no unsigned types)."""
    return key - 2**64 if key >= 2**63 else key


def _caller(store, func):
    """An export as a Python function. wasmtime-py's own call reads the function's type and checks
    every argument each time, 30 to 60 us a call, and a search makes hundreds (the principal
    variation's probes) and the self-check thousands; this one goes through wasmtime's C call on raw
    values with the types read once (a few us). Where this wasmtime-py lacks what it needs, the
    checked call."""
    checked = functools.partial(func, store)
    try:
        import wasmtime
        from wasmtime import _ffi as ffi

        unchecked, trap_type, raw_type = ffi.wasmtime_func_call_unchecked, ffi.wasm_trap_t, ffi.wasmtime_val_raw_t
        # What a callback raised outside our own try (in wasmtime-py's trampoline around it; no
        # signal's handler raises there: _DeferredSignals) becomes a trap there, the exception
        # kept aside; its checked call raises that exception again, and so must ours.
        from wasmtime._func import maybe_raise_last_exn
        context, handle = store._context(), ctypes.byref(func._func)
        kind = func.type(store)
        params, results = [str(t) for t in kind.params], [str(t) for t in kind.results]
    except (ImportError, AttributeError, TypeError):
        return checked
    if len(results) > 1 or any(t not in ("i32", "i64", "f64") for t in params + results):
        return checked
    raw = (raw_type * max(1, len(params), len(results)))()
    result = results[0] if results else None

    def call(*args):
        for i, (field, value) in enumerate(zip(params, args)):
            setattr(raw[i], field, value)
        trap = ctypes.POINTER(trap_type)()
        error = unchecked(context, handle, raw, len(raw), ctypes.byref(trap))
        if error or trap:
            failure = wasmtime.Trap._from_ptr(trap) if trap else wasmtime.WasmtimeError._from_ptr(error)
            maybe_raise_last_exn()
            # Nothing in the module itself traps; say so plainly if it ever does.
            raise RuntimeError(f"the WebAssembly core stopped with a trap or an error: {failure}")
        return getattr(raw[0], result) if result else None

    return call


class _DeferredSignals:
    """The main thread's Python signal handlers, while the module runs and may call back into
    Python (a search, the classic memo): each only notes its signal; the poll runs the noted
    handlers inside its own try (what they raise ends the search and reaches its caller, as the
    compiled core's poll does), and :meth:`restore` runs what is left once the module returned.

    Why: CPython runs a handler at the next bytecode of the main thread, and inside a call from
    the module that is wasmtime-py's trampoline, whose first bytecode is outside its try.
    KeyboardInterrupt raised there is "Exception ignored on calling ctypes callback function" and
    the search goes on to its limit. A handler that only notes its signal is harmless wherever it
    runs."""

    def __init__(self) -> None:
        self.previous: dict = {}
        self.pending: list = []
        if threading.current_thread() is not threading.main_thread():
            return  # handlers run in the main thread only, never in this thread's callbacks
        try:
            for signum in _catchable_signals():
                if callable(raw_signal.getsignal(signum)):
                    self.previous[signum] = raw_signal.signal(signum, self._note)
        except BaseException:  # noqa: B036 - a handler that ran meanwhile raised: none of ours stays
            self.restore()
            raise

    def _note(self, signum, frame) -> None:
        self.pending.append((signum, frame))

    def deliver(self) -> None:
        """Run the noted signals' own handlers here; what they raise is the caller's."""
        while self.pending:
            signum, frame = self.pending.pop(0)
            handler = self.previous.get(signum) or raw_signal.getsignal(signum)
            if callable(handler):
                handler(signum, frame)

    def restore(self) -> None:
        """Put the handlers back (those still ours), then run the signals noted since the last
        poll, as Python would have run them had the module not been running."""
        try:
            self._put_back(list(self.previous.items()))
        finally:
            self.previous = {}
            self.deliver()

    def _put_back(self, handlers: list) -> None:
        # One that raises meanwhile (a restored handler running) must not leave ours in place.
        while handlers:
            signum, handler = handlers[-1]
            try:
                if raw_signal.getsignal(signum) == self._note:
                    raw_signal.signal(signum, handler)
                handlers.pop()
            except BaseException:  # noqa: B036 - raised again once the rest is back
                self._put_back(handlers)
                raise


@functools.cache
def _catchable_signals() -> tuple:
    """The signals a Python handler can be set for (not SIGKILL, SIGSTOP)."""
    uncatchable = {getattr(signal, name, None) for name in ("SIGKILL", "SIGSTOP")}
    return tuple(s for s in signal.valid_signals() if s not in uncatchable)


class WasmUnavailable(ImportError):
    """The WebAssembly core cannot run here; the message says why and what to do."""


def available() -> bool:
    """Could the WebAssembly core run here (wasmtime importable, the module shipped)? Cheap: it
    imports nothing."""
    return WASM_PATH.is_file() and importlib.util.find_spec("wasmtime") is not None


def unavailable_reason() -> str:
    """Why :func:`available` is false ('' when it is true), with what to do about it."""
    if not WASM_PATH.is_file():
        return f"{WASM_PATH} is missing (scripts/build_wasm.py builds it)"
    if importlib.util.find_spec("wasmtime") is None:
        return f"wasmtime is not installed ({INSTALL_HINT})"
    return ""


_loaded = None


def load():
    """The WebAssembly core as a core module (agent._core's interface), loaded and compiled once
    per process; WasmUnavailable if it cannot run here."""
    global _loaded
    if _loaded is None:
        reason = unavailable_reason()
        if reason:
            raise WasmUnavailable(reason)
        try:
            _loaded = WasmCore(WASM_PATH)
        except WasmUnavailable:
            raise
        except Exception as error:
            # wasmtime installed but its library does not load (a DLL Windows cannot load:
            # FileNotFoundError or OSError from ctypes, ImportError...): the next core plays.
            said = (str(error).strip().splitlines() or ["no message"])[0]
            raise WasmUnavailable(f"wasmtime is installed but does not load ({type(error).__name__}: {said})") from None
    return _loaded


class WasmCore:
    """The compiled module and what agent._core offers beside ``Searcher``."""

    CORE_VERSION = 9  # the interface of agent._core that Searcher below offers
    MAX_THREADS = 1
    TT_ENTRY_BYTES = 16
    WIN_SCORE = 1_000_000

    def __init__(self, path: Path) -> None:
        import wasmtime

        self.path = path
        self.engine = wasmtime.Engine()
        try:
            self.module = wasmtime.Module(self.engine, path.read_bytes())
        except (OSError, wasmtime.WasmtimeError) as error:
            raise WasmUnavailable(f"{path}: {error}") from None
        self.zobrist = struct.pack("<172Q", *ZOBRIST_CELL[0], *ZOBRIST_CELL[1], *ZOBRIST_FORCED)
        self.module_exports = [export.name for export in self.module.exports if export.name != "memory"]
        core = self

        class BoundSearcher(Searcher):
            _core = core

        self.Searcher = BoundSearcher
        version = self.Searcher(bytes(1 << 18), 0).call("uttt_version")
        if version != WASM_VERSION:
            raise WasmUnavailable(f"{path} was built from another version of agent/core_wasm.c "
                                  f"(version {version}, not {WASM_VERSION}); rebuild it: python -m scripts.build_wasm")

    def set_zobrist(self, cell_x, cell_o, forced) -> None:
        """agent.rules' keys, for the searchers made from now on."""
        _check_ints(cell_x, 81, 0, 2**64 - 1, "ZOBRIST_CELL[0]")
        _check_ints(cell_o, 81, 0, 2**64 - 1, "ZOBRIST_CELL[1]")
        _check_ints(forced, 10, 0, 2**64 - 1, "ZOBRIST_FORCED")
        self.zobrist = struct.pack("<172Q", *cell_x, *cell_o, *forced)


class Searcher:
    """agent._core.Searcher on one instance of the module: the same methods, arguments and
    results (agent/_core.c says what each does), one thread."""

    _core: WasmCore

    def __init__(self, can_win, tt_slots, prefault=True, threads=1) -> None:
        import wasmtime

        _check_int(tt_slots, 0, MAX_TT_SLOTS, "tt_slots")
        if tt_slots and (tt_slots < TT_WINDOW or tt_slots & (tt_slots - 1)):
            raise ValueError(f"tt_slots must be 0 or a power of two of at least {TT_WINDOW}")
        _check_int(prefault, 0, 1, "prefault")
        _check_int(threads, 1, 1, "threads")
        can_win = bytes(memoryview(can_win).cast("B"))
        if len(can_win) != 1 << 18:
            raise ValueError(f"can_win: expected {1 << 18} bytes, got {len(can_win)}")
        core = self._core
        self._store = wasmtime.Store(core.engine)
        self._store.set_wasi(wasmtime.WasiConfig())  # the clock only: no files, no environment
        linker = wasmtime.Linker(core.engine)
        linker.define_wasi()
        linker.define_func("env", "poll", wasmtime.FuncType([], [wasmtime.ValType.i32()]), self._poll)
        i32 = wasmtime.ValType.i32()
        linker.define_func("env", "memo", wasmtime.FuncType([i32, i32, i32], [i32]), self._memo)
        instance = linker.instantiate(self._store, core.module)
        exports = instance.exports(self._store)
        self._memory = exports["memory"]
        self._calls = {name: _caller(self._store, exports[name]) for name in core.module_exports}
        self._buffers = {}
        self._should_stop = self._memo_fn = self._error = self._busy = self._signals = None
        self._slots = tt_slots
        self._write(ZOBRIST, core.zobrist)
        self._write(CAN_WIN, can_win)
        if self.call("uttt_init", tt_slots) != 0:
            raise MemoryError(f"a table of {tt_slots} slots does not fit the WebAssembly core's memory")
        if prefault:
            self.call("uttt_prefault")

    # -- the module's calls and buffers ----------------------------------------------------------

    def call(self, name: str, *args):
        return self._calls[name](*args)

    def _idle(self, name: str) -> None:
        """agent/_core.c's check_idle: nothing may use a searcher while its search runs (a callback
        of its own, should_stop or the memo, changing the position under it)."""
        if self._busy is not None:
            raise RuntimeError(f"Searcher.{name} refused: Searcher.{self._busy} is running and code it calls "
                               "back (should_stop, the evaluation memo, a signal handler) may not use its searcher")

    def _run(self, name: str, export: str, *args):
        """An export that calls back into Python, the searcher held meanwhile and signals noted
        for the poll (:class:`_DeferredSignals`)."""
        signals = _DeferredSignals()
        try:
            self._busy, self._signals = name, signals
            return self.call(export, *args)
        finally:
            self._busy = self._signals = None
            signals.restore()

    def _address(self, kind: int) -> int:
        address = self._buffers.get(kind)
        if address is None:
            address = self._buffers[kind] = self.call("uttt_buffer", kind)
        return address

    def _write(self, kind: int, data: bytes) -> None:
        self._memory.write(self._store, data, self._address(kind))

    def _ints(self, count: int) -> tuple:
        start = self._address(INTS)
        return struct.unpack(f"<{count}i", self._memory.read(self._store, start, start + 4 * count))

    def _moves(self, count: int) -> list:
        start = self._address(MOVES)
        return list(self._memory.read(self._store, start, start + count))

    # -- what the module calls back ----------------------------------------------------------------

    def _poll(self) -> int:
        # The signals' handlers run here (Ctrl-C: KeyboardInterrupt), as in the compiled core's
        # poll; whatever is raised reaches the caller of the search.
        try:
            if self._signals is not None:
                self._signals.deliver()
            return 1 if self._should_stop is not None and self._should_stop() else 0
        except BaseException as error:  # noqa: B036 - kept and raised again by root()
            self._error = error
            return -1

    def _memo(self, won_x: int, won_o: int, drawn: int) -> int:
        try:
            answer = self._memo_fn(won_x, won_o, drawn)
            _check_ints(answer, 10, -EVAL_LIMIT, EVAL_LIMIT, "the evaluation memo's answer")
            self._write(MEMO, struct.pack("<10i", *answer))
            return 1
        except BaseException as error:  # noqa: B036
            self._error = error
            return 0

    def _raise_failure(self) -> None:
        """Raise what made the last search or evaluation fail."""
        error, self._error = self._error, None
        if self.call("uttt_failure") == FAILED_MEMO_RANGE:
            won_x, won_o, drawn = self._ints(3)
            raise ValueError(f"the evaluation memo's answer for won ({won_x}, {won_o}), drawn {drawn} could take "
                             "scores beyond 2**30 with this local table")
        raise error

    # -- agent._core.Searcher's methods --------------------------------------------------------------

    def set_features(self, values) -> None:
        self._idle("set_features")
        _check_ints(values, 4, 0, INFINITY_SCORE, "features")
        for name, value, high in zip(("asp", "lmr", "age", "solve"), values, (INFINITY_SCORE, 2, 62, MAX_PLY)):
            _check_int(value, 0, high, name)
        self.call("uttt_set_features", values[1], values[2], values[3])

    def set_fitted(self, chance, mover, waiter, scale, line, board, tempo, free_move) -> None:
        self._idle("set_fitted")
        weights = (scale, line, board, tempo, free_move)
        lows, highs = (1, 0, 0, -EVAL_LIMIT, -EVAL_LIMIT), (100000, EVAL_LIMIT, EVAL_LIMIT, EVAL_LIMIT, EVAL_LIMIT)
        for name, value, low, high in zip(("scale", "line", "board", "tempo", "free_move"), weights, lows, highs):
            _check_int(value, low, high, name)
        tables = []
        for name, table in zip(("chance", "mover", "waiter"), (chance, mover, waiter)):
            data = bytes(memoryview(table).cast("B"))
            if len(data) != 4 * PATTERNS:
                raise ValueError(f"{name}: expected {4 * PATTERNS} bytes, got {len(data)}")
            tables.append(data)
        self._write(FITTED, b"".join(tables))
        code = self.call("uttt_set_fitted", *weights)
        detail = self._ints(3)
        if code == FITTED_BOUND:
            raise ValueError("the weights could take scores beyond 2**30")
        if code == FITTED_LINE_RANGE:
            raise ValueError(f"line {line} with scale {scale}: line * 8 * scale**3 is beyond 64 bits")
        if code == FITTED_TABLE_VALUE:
            which, index, value = detail
            raise ValueError(f"{('chance', 'mover', 'waiter')[which]}[{index}] must be 0 to {scale}, got {value}")

    def set_classic(self, local, memo, free_move) -> None:
        self._idle("set_classic")
        if not callable(memo):
            raise TypeError("memo must be callable")
        _check_int(free_move, -EVAL_LIMIT, EVAL_LIMIT, "free_move")
        data = bytes(memoryview(local).cast("B"))
        if len(data) != 4 << 18:
            raise ValueError(f"local: expected {4 << 18} bytes, got {len(data)}")
        self._write(LOCAL, data)
        if self.call("uttt_set_classic", free_move) != 0:
            raise MemoryError("the classic evaluation's memo does not fit the WebAssembly core's memory")
        self._memo_fn = memo

    def set_position(self, masks_x, masks_o, status, forced, turn, winner, key, ply, drawn_lines_tie) -> None:
        """The fields checked by the module (agent/core_search.c's core_check_position); what it
        refuses, and what does not even reach it, is put in Position.check's words, the reference
        of these checks."""
        self._idle("set_position")
        fields = (masks_x, masks_o, status, forced, turn, winner, key, ply, drawn_lines_tie)
        try:
            if not all(isinstance(v, int) for v in (forced, turn, winner, key, ply, drawn_lines_tie)) or \
                    not (-1 <= forced <= 8 and 0 <= turn <= 1 and -1 <= winner <= 2 and 0 <= key < 2**64
                         and 0 <= ply <= 81 and 0 <= drawn_lines_tie <= 1):
                raise ValueError
            cells = struct.pack("<27H", *masks_x, *masks_o, *status)
            if max(*masks_x, *masks_o) > 0x1FF or max(status) > 3 or len(masks_x) != 9 or len(status) != 9:
                raise ValueError
        except (ValueError, TypeError, struct.error):
            cells = None
        if cells is not None:
            self._write(POSITION, cells)
            if self.call("uttt_set_position", forced, turn, winner, _signed(key), ply, drawn_lines_tie) == 0:
                return
        position_of_fields(fields).check()
        if winner is None:  # Position reads None as "no winner"; agent._core takes -1 only
            raise TypeError("winner must be an int, not NoneType")
        raise ValueError("the position's fields do not make a position")  # Position.check passed them

    def new_search(self, seconds_left, node_limit, should_stop, poll_seconds=0.01) -> None:
        self._idle("new_search")
        for name, value in (("seconds_left", seconds_left), ("poll_seconds", poll_seconds)):
            if value is not None and (not isinstance(value, (int, float)) or value != value):
                raise TypeError(f"{name} must be a number of seconds")
        if not 0 <= poll_seconds <= 3600:
            raise ValueError("poll_seconds must be 0 to 3600")
        if node_limit is not None:
            if not isinstance(node_limit, int):
                raise TypeError(f"node_limit must be an int, not {type(node_limit).__name__}")
            node_limit = min(max(node_limit, 0), 2**63 - 1)
        if should_stop is not None and not callable(should_stop):
            raise TypeError("should_stop must be callable")
        seconds = 0.0 if seconds_left is None else min(float(seconds_left), 1e18)
        self.call("uttt_new_search", int(seconds_left is not None), seconds,
                  -1 if node_limit is None else node_limit, float(poll_seconds))
        self._should_stop = should_stop

    def root(self, moves, depth, alpha, beta, reduce):
        self._idle("root")
        _check_moves(moves)
        _check_int(depth, 1, MAX_PLY - 1, "depth")
        _check_int(alpha, -INFINITY_SCORE, INFINITY_SCORE - 1, "alpha")
        _check_int(beta, alpha + 1, INFINITY_SCORE, "beta")
        _check_int(reduce, 0, 1, "reduce")
        legal = self.legal_moves()
        for move in moves:
            if move not in legal:
                raise ValueError(f"move {move} is not legal in the position")
        self._write(MOVES, bytes(moves))
        done = self._run("root", "uttt_root", len(moves), depth, alpha, beta, reduce)
        if done < 0:
            self._raise_failure()
        if done == 0:
            return None
        return self._ints(2)

    @property
    def root_best(self):
        self._idle("root_best")
        return self._ints(2) if self.call("uttt_root_best") else None

    def probe(self, key):
        self._idle("probe")
        if not isinstance(key, int):
            raise TypeError(f"key must be an int, not {type(key).__name__}")
        if not 0 <= key < 2**64:
            raise ValueError("key must be 0 to 2**64-1")
        return self._ints(4) if self.call("uttt_probe", _signed(key)) else None

    def evaluate(self) -> int:
        self._idle("evaluate")
        score = self._run("evaluate", "uttt_evaluate")
        if self._memo_fn is not None and self.call("uttt_failure"):  # only the classic memo can fail
            self._raise_failure()
        return score

    def move_priority(self, moves) -> list:
        self._idle("move_priority")
        _check_moves(moves)
        self._write(MOVES, bytes(moves))
        self.call("uttt_move_priority", len(moves))
        return list(self._ints(len(moves)))

    def legal_moves(self) -> list:
        self._idle("legal_moves")
        return self._moves(self.call("uttt_legal_moves"))

    def state(self) -> tuple:
        self._idle("state")
        self.call("uttt_state")
        turn, winner, forced, ply = self._ints(4)
        return turn, winner, forced, self.call("uttt_key") % 2**64, ply

    def perft(self, depth) -> int:
        _check_int(depth, 0, 81 - self.state()[4], "depth")
        return self.call("uttt_perft", depth)

    def push(self, move) -> None:
        self._idle("push")
        _check_int(move, 0, 80, "move")
        if self.call("uttt_push", move):
            raise ValueError(f"move {move} is not legal")

    def pop(self) -> None:
        self._idle("pop")
        if self.call("uttt_pop"):
            raise IndexError("no move to take back")

    @property
    def nodes(self) -> int:
        self._idle("nodes")
        return self.call("uttt_nodes")

    helper_nodes = 0
    threads = 1

    @property
    def tt_slots(self) -> int:
        return self._slots

    @property
    def tt_count(self) -> int:
        self._idle("tt_count")
        return self.call("uttt_tt_count")

    @property
    def tt_replaced(self) -> int:
        self._idle("tt_replaced")
        return self.call("uttt_tt_replaced")


def _check_moves(moves) -> None:
    """1 to 81 cells, as agent._core reads a list of moves."""
    if not isinstance(moves, (list, tuple)):
        raise TypeError(f"moves must be a list or tuple, not {type(moves).__name__}")
    if not 1 <= len(moves) <= 81:
        raise ValueError(f"moves must hold 1 to 81 ints, got {len(moves)}")
    for i, move in enumerate(moves):
        _check_int(move, 0, 80, f"moves[{i}]")


def position_of_fields(fields) -> Position:
    """A Python Position with set_position's fields (occupied, won and drawn derived as the C
    cores derive them), for Position.check's words (tests/test_core_fuzz.py compares them)."""
    masks_x, masks_o, status, forced, turn, winner, key, ply, drawn_lines_tie = fields
    pos = Position(WPI if drawn_lines_tie else CODINGAME)
    pos.masks, pos.status, pos.forced, pos.turn, pos.key, pos.ply = [masks_x, masks_o], status, forced, turn, key, ply
    pos.winner = None if isinstance(winner, int) and winner == -1 else winner
    try:
        pos.occupied = [x | o for x, o in zip(masks_x, masks_o)]
        pos.won = [sum(1 << b for b, s in enumerate(status) if s == player + 1) for player in (0, 1)]
        pos.drawn = sum(1 << b for b, s in enumerate(status) if s == DRAWN)
    except TypeError:
        pass  # a value of the wrong type: Position.check stops there, before it looks at these
    return pos
