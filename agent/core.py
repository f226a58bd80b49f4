"""The compiled search core (``agent._core``, from agent/_core.c and agent/core_search.c) behind
AlphaBeta's interface, the same search as WebAssembly (agent/core_wasm.py), and the choice
between them and the pure-Python search.

:class:`CompiledAlphaBeta` is :class:`agent.search.AlphaBeta` with only the steps its search
takes (``_start_search``, ``_search_root``, ``_probe``) in C: at a fixed depth both return the
same move, score and node count. :func:`make_searcher` picks the core: ``core="python"``,
``"compiled"`` or ``"wasm"`` (an error where it cannot run), or ``"auto"`` (compiled, else wasm,
else Python); ``None`` reads ``$UTTT_CORE``. ``threads`` above 1 is the compiled core's shared-table
search. The cores, their speed and the threads: docs/engine.md.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import random
import time
import weakref
from array import array

from . import core_wasm
from .limits import STOP_POLL_SECONDS, SearchLimit
from .rules import ZOBRIST_CELL, ZOBRIST_FORCED, Position
from .search import AlphaBeta, Features, features_for_table

log = logging.getLogger(__name__)

CORES = ("auto", "compiled", "wasm", "python")
CORE_ENV = "UTTT_CORE"

#: agent/_core.c's CORE_VERSION this module drives: raised with every change to the C interface.
CORE_VERSION = 9

try:
    from . import _core
except ImportError as error:  # not built: no compiler when it was installed
    _core = None
    # "cannot import name '_core'" both where no build exists and where one failed to load: tell them apart.
    IMPORT_ERROR = str(error) if importlib.util.find_spec(f"{__package__}._core") else f"No module named '{__package__}._core'"
else:
    IMPORT_ERROR = ""
    if getattr(_core, "CORE_VERSION", None) != CORE_VERSION:  # built from another version of _core.c
        _core, IMPORT_ERROR = None, "agent._core was built from another version of agent/_core.c"
    else:
        _core.set_zobrist(ZOBRIST_CELL[0], ZOBRIST_CELL[1], ZOBRIST_FORCED)

#: Most threads a compiled search takes (agent/_core.c's MAX_THREADS).
MAX_THREADS = _core.MAX_THREADS if _core is not None else 64
AUTO_THREADS = "auto"

#: Bytes of one table entry in C (the Python table's dict entry costs about 200).
TT_ENTRY_BYTES = _core.TT_ENTRY_BYTES if _core is not None else 16


class CoreUnavailable(ValueError):
    """The compiled core was asked for but cannot run here."""


class UnsupportedEvaluation(Exception):
    """The compiled core does not compute this evaluator's evaluation."""


#: Why the compiled core is missing when the package holds no build of it: setup.py skips the
#: build where no C compiler works, and pip shows its warning only with -v.
NOT_BUILT = "the compiled core is not built: no C compiler worked when the package was installed, see docs/wasm.md"


def compiled_available() -> bool:
    return not unavailable_reason()


def unavailable_reason() -> str:
    """Why the compiled core cannot run ('' when it can), with what to do about it. Everything
    here asks this (and core_wasm.unavailable_reason for the WebAssembly core): tests fake a
    machine without a core through it."""
    return "" if _core is not None else reason_for(IMPORT_ERROR)


def reason_for(import_error: str) -> str:
    """What :func:`unavailable_reason` says for the error that importing agent._core gave."""
    if import_error.startswith("No module named"):  # setup.py built none: no compiler worked
        return NOT_BUILT
    return (f"the compiled core cannot be loaded ({import_error}); reinstall the package to rebuild it "
            "(python -m pip install -e .)")


def wasm_available() -> bool:
    """Could the WebAssembly core run here? (Cheap: wasmtime is only looked for, not imported.)"""
    return not wasm_unavailable_reason()


def wasm_unavailable_reason() -> str:
    """Why the WebAssembly core cannot run here ('' when it can), with what to do about it."""
    reason = core_wasm.unavailable_reason()
    return f"the WebAssembly core cannot run: {reason}" if reason else ""


def requested_core(core: str | None = None) -> str:
    """``core`` or, when None, the ``UTTT_CORE`` environment variable, or ``auto``; checked."""
    choice = core if core is not None else os.environ.get(CORE_ENV, "").strip().lower() or "auto"
    if choice not in CORES:
        source = "core" if core is not None else f"{CORE_ENV}"
        raise ValueError(f"{source} must be one of {', '.join(CORES)}, got {choice!r}")
    return choice


def default_core_text() -> str:
    """For --help: what ``auto`` means on this installation."""
    if compiled_available():
        return "compiled (C) here"
    if wasm_available():
        return f"wasm here: {unavailable_reason()}"
    return f"pure Python here: {unavailable_reason()}; and {wasm_unavailable_reason()}"


def usable_cores() -> int:
    """Cores this process may run on (its affinity where the system says, else all of them)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS and Windows have no sched_getaffinity
        return os.cpu_count() or 1


def auto_threads() -> int:
    """``threads="auto"``: every core but one, which the referee (or the opponent) needs; at least 1."""
    return max(1, min(MAX_THREADS, usable_cores() - 1))


def threads_for_a_clock(asked: int | str) -> tuple[int | str, str | None]:
    """``--threads`` for a search against a clock: at most :func:`auto_threads`, with the line that
    says why when it had to be capped. A thread with no core of its own is descheduled in the middle
    of a search, and the move comes late (``--threads 64`` on 2 cores lost 2 of 12 games on time at
    100 ms a turn); in-process series with no clock may still ask for more."""
    free = auto_threads()
    if asked == AUTO_THREADS or asked <= free:
        return asked, None
    return free, (f"--threads {asked} capped to {free}: this process may run on {usable_cores()} "
                  f"core(s) and one is left to the referee and the opponent; a thread without a core "
                  f"of its own makes moves late")


def table_slots(hash_mb: float) -> int:
    """Entries of the flat table within ``hash_mb`` megabytes: the largest power of two that fits."""
    slots = 1024
    while slots * 2 * TT_ENTRY_BYTES <= hash_mb * 1024 * 1024:
        slots *= 2
    return slots


# -- evaluations the core computes ----------------------------------------------------------------

def _int32_bytes(values) -> bytes:
    table = array("i", values)
    if table.itemsize != 4:  # pragma: no cover - every platform CPython builds on has 4-byte ints
        raise UnsupportedEvaluation("array('i') is not 32-bit here")
    return table.tobytes()


def _classic_arguments(evaluator) -> tuple:
    from .evaluation import board_scales, global_value

    w = evaluator.weights

    def memo(won_x: int, won_o: int, drawn: int) -> tuple:  # as in Evaluator._make_evaluate
        return (global_value(won_x, won_o, drawn, w) * 5, *board_scales(won_x, won_o, drawn, w))

    return _int32_bytes(evaluator._local), memo, w.free_move * 5


def _fitted_arguments(evaluator) -> tuple:
    # The data file's own pattern-order tables: the C code re-indexes them as FittedEvaluator does.
    data = evaluator.data
    w = data["weights"]
    return (*(_int32_bytes(data[name]) for name in ("chance", "mover", "waiter")),
            data["scale"], w["line"], w["board"], w["tempo"], w["free_move"])


def _configure_classic(searcher, evaluator) -> None:
    searcher.set_classic(*_arguments(evaluator, _classic_arguments))


def _configure_fitted(searcher, evaluator) -> None:
    searcher.set_fitted(*_arguments(evaluator, _fitted_arguments))


#: The last move-ordering table given to a searcher, and its bytes: every evaluator shares the one
#: table of the process (agent.evaluation.can_win_table), 2^18 entries that take 3 ms to convert.
_last_table: tuple[object, bytes] = (None, b"")


def _as_bytes(table) -> bytes:
    global _last_table
    if _last_table[0] is not table:
        _last_table = (table, bytes(table))
    return _last_table[1]


#: The C tables of each evaluator, converted once (an engine per game reuses its evaluator's).
_arguments_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _arguments(evaluator, convert) -> tuple:
    arguments = _arguments_cache.get(evaluator)
    if arguments is None:
        arguments = _arguments_cache[evaluator] = convert(evaluator)
    return arguments


def _evaluation_kind(evaluator) -> str:
    from .evaluation import Evaluator

    if type(evaluator) is Evaluator:
        return "classic"
    try:
        from .eval_fitted import FittedEvaluator
    except ImportError:  # pragma: no cover - the fitted evaluation is not in this version
        FittedEvaluator = None
    if FittedEvaluator is not None and type(evaluator) is FittedEvaluator:
        return "fitted"
    raise UnsupportedEvaluation(f"the compiled core has no {type(evaluator).__name__} evaluation")


_CONFIGURE = {"classic": _configure_classic, "fitted": _configure_fitted}
#: Evaluators that passed the self-check, by what determines their tables.
_checked: set = set()


def _check_key(evaluator, kind: str, module):
    if kind == "classic":
        return kind, evaluator.weights, id(module)
    return kind, id(evaluator.data), id(module)


#: The games the self-check plays through, each (rule variant, seed of its random moves): three
#: games whose 182 positions reach every case of the evaluation and the move ordering between them
#: (tests/test_core_self_check.py names the cases and holds these games to them). They replaced
#: 24 games of 1,441 positions, which missed four cases and cost seven times as much at each start.
SELF_CHECK_GAMES = (("wpi", 242), ("codingame", 1455), ("wpi", 1365))


def self_check_positions(games=SELF_CHECK_GAMES):
    """Positions of seeded random games (``(variant, seed)`` each), every ply: for comparing the cores."""
    for variant, seed in games:
        rng = random.Random(seed)
        pos = Position(variant)
        while pos.winner is None:
            yield pos
            pos.push(rng.choice(list(pos.legal_moves())))


def _self_check(searcher, evaluator) -> None:
    """The compiled evaluation and move ordering agree with the Python evaluator's, or raise."""
    for pos in self_check_positions():
        load_position(searcher, pos)
        moves = list(pos.legal_moves())
        mine, theirs = searcher.evaluate(), evaluator.evaluate(pos)
        if mine != theirs:
            raise UnsupportedEvaluation(f"the compiled evaluation gives {mine}, Python {theirs}, at {pos!r}")
        if searcher.move_priority(moves) != evaluator.move_priority(pos, moves):
            raise UnsupportedEvaluation(f"the compiled move priorities differ from Python's at {pos!r}")


def load_position(searcher, pos: Position) -> None:
    """Copy a Position into the C searcher."""
    searcher.set_position(pos.masks[0], pos.masks[1], pos.status, pos.forced, pos.turn,
                          -1 if pos.winner is None else pos.winner, pos.key, pos.ply, pos.variant == "wpi")


# -- the searcher --------------------------------------------------------------------------------

class CompiledAlphaBeta(AlphaBeta):
    """AlphaBeta for Ultimate Tic-Tac-Toe with the tree search in C: keeps its table and history
    between moves of one game. AlphaBeta's ``search`` and ``iterate`` run as they are; the steps
    they take (start a search, search the root to a depth, probe the table) run in C. ``hash_mb``
    bounds the table (a flat array of 16-byte entries); ``tt_slots`` sets its size directly (a
    power of two). ``hash_mb=0`` means no table, as in AlphaBeta. The table's memory is touched
    when it is made (``prefault``) so that page faults do not slow the first searches. ``threads``
    (1 to MAX_THREADS) searches run at once, sharing the table (Lazy SMP: docs/engine.md, "Threads"); with
    more than one, ``nodes`` counts every thread's and a node limit the main thread's.
    ``core_module`` is another build of the core (the arena's, ref_sim/games/core_builds.py), default this one's.
    ``checked``: the evaluations that passed the self-check already (default: this process's)."""

    def __init__(self, evaluator, hash_mb: float = 192.0, tt_slots: int | None = None,
                 prefault: bool = True, features: Features | None = None, threads: int = 1,
                 core_module=None, checked: set | None = None) -> None:
        if core_module is None and unavailable_reason():
            raise CoreUnavailable(unavailable_reason())
        module = core_module or _core
        kind = _evaluation_kind(evaluator)
        # Not AlphaBeta.__init__: the table, history and killers it makes live in the C searcher.
        self.evaluator = evaluator
        self.evaluation = kind
        slots = tt_slots or (table_slots(hash_mb) if hash_mb > 0 else 0)
        self.features = features_for_table(features or Features(), slots > 0)
        self._core = module.Searcher(_as_bytes(evaluator._can_win_next), slots, prefault, threads)
        self._core.set_features(self.features.values())
        _CONFIGURE[kind](self._core, evaluator)
        key = _check_key(evaluator, kind, module)
        checked = _checked if checked is None else checked
        if key not in checked:
            _self_check(self._core, evaluator)
            checked.add(key)
        self._deadline = None

    @property
    def nodes(self) -> int:
        return self._core.nodes + self._core.helper_nodes

    @property
    def threads(self) -> int:
        return self._core.threads

    @property
    def tt_slots(self) -> int:
        return self._core.tt_slots

    @property
    def tt_count(self) -> int:
        return self._core.tt_count

    @property
    def tt_replaced(self) -> int:
        """Entries replaced by another position's so far: 0 means the table acted like a dict."""
        return self._core.tt_replaced

    # -- AlphaBeta.iterate's steps, in C -------------------------------------------------------

    def _start_search(self, state: Position, limit: SearchLimit) -> None:
        core = self._core
        load_position(core, state)
        self._deadline = limit.deadline
        core.new_search(None if limit.deadline is None else limit.deadline - time.perf_counter(), limit.nodes,
                        limit.should_stop, STOP_POLL_SECONDS)

    def _search_root(self, state: Position, moves, depth, alpha, beta, reduce):
        # The C searcher moves on its own copy of the position (load_position): ``state`` stays as it is.
        return self._core.root(moves, depth, alpha, beta, reduce)

    @property
    def _root_best(self):
        return self._core.root_best

    def _probe(self, key):
        return self._core.probe(key)


class WasmAlphaBeta(CompiledAlphaBeta):
    """CompiledAlphaBeta on the WebAssembly core (agent/core_wasm.py): the same C search, run by
    wasmtime, on one thread. CoreUnavailable where it cannot run, or when more threads are asked."""

    def __init__(self, evaluator, hash_mb: float = 192.0, tt_slots: int | None = None,
                 prefault: bool = True, features: Features | None = None, threads: int = 1) -> None:
        if threads != 1:
            raise CoreUnavailable(f"{threads} threads need the compiled core; the WebAssembly core searches on one")
        if wasm_unavailable_reason():  # asked first: a module loaded before cannot hide why it could not be now
            raise CoreUnavailable(wasm_unavailable_reason())
        try:
            module = core_wasm.load()
        except core_wasm.WasmUnavailable as error:
            raise CoreUnavailable(f"the WebAssembly core cannot run: {error}") from None
        super().__init__(evaluator, hash_mb=hash_mb, tt_slots=tt_slots, prefault=prefault, features=features,
                         core_module=module)


# -- the choice of core ------------------------------------------------------------------------

def core_status(used: str, why: str = "") -> str:
    """The words the agent's ready line and ``--version`` give for the core in use and why:
    ``core: compiled``, ``core: wasm (<why the compiled core is not in use>)``..."""
    return f"core: {used} ({why})" if why else f"core: {used}"


def _chosen(choice: str) -> str:
    return f"chosen with --core or {CORE_ENV}" if choice != "auto" else ""


def core_in_use(core: str | None = None) -> str:
    """:func:`core_status` for the core the agent would run (``core`` as make_searcher takes it)
    without making a searcher: for ``--version``. The WebAssembly module is loaded (half a second
    once) so that a module that cannot run is found here, not at the first game."""
    choice = requested_core(core)
    why_not = []
    if choice in ("auto", "compiled"):
        if compiled_available():
            return core_status("compiled", _chosen(choice))
        why_not.append(unavailable_reason())
    if choice in ("auto", "wasm"):
        reason = wasm_unavailable_reason()
        if not reason:
            try:
                core_wasm.load()
            except core_wasm.WasmUnavailable as error:
                reason = f"the WebAssembly core cannot run: {error}"
        if not reason:
            return core_status("wasm", "; ".join(why_not) or _chosen(choice))
        why_not.append(reason)
    if choice in ("compiled", "wasm"):  # asked for, and it cannot run: the agent would refuse to start
        return core_status(f"none, --core {choice} cannot run", "; ".join(why_not))
    return core_status("python", "; ".join(why_not) or _chosen(choice))


class Announcements:
    """Messages logged once (which core runs: see make_searcher). The process has one
    (:func:`announce`); an engine may be given its own (agent.engines.AlphaBetaEngine)."""

    def __init__(self) -> None:
        self.said: set[str] = set()

    def announce(self, level: int, message: str) -> None:
        """Log ``message`` unless it was said already."""
        if message not in self.said:
            self.said.add(message)
            log.log(level, "%s", message)


#: This process's.
ANNOUNCEMENTS = Announcements()


def announce(level: int, message: str) -> None:
    """Log ``message`` once per process (which core runs: see make_searcher)."""
    ANNOUNCEMENTS.announce(level, message)


def make_searcher(evaluator, hash_mb: float = 192.0, core: str | None = None, prefault: bool = True,
                  features: Features | None = None, threads: int | str = 1):
    """The searcher for ``core`` (``auto``, ``compiled``, ``wasm``, ``python``; None:
    ``$UTTT_CORE``), which core it is and what to say about it:
    ``(searcher, "compiled" | "wasm" | "python", (log level, message))``, the message for
    :func:`announce`; ``features`` switches the search's refinements (agent.search.Features).
    CoreUnavailable when the core asked for cannot run, or when ``threads`` above 1 are asked of
    the WebAssembly or pure-Python search (they have one); ``threads="auto"`` is
    :func:`auto_threads` with the compiled core and 1 with the others. ``prefault=False`` for
    searches that no clock limits: the table's pages are then only made when used (fast to make,
    for many short fixed-effort games)."""
    choice = requested_core(core)
    why_not = []  # why each faster core did not run, for the message of the one that does
    broken = False
    if choice in ("auto", "compiled"):
        try:
            searcher = CompiledAlphaBeta(evaluator, hash_mb=hash_mb, prefault=prefault, features=features,
                                         threads=auto_threads() if threads == AUTO_THREADS else threads)
        except (CoreUnavailable, UnsupportedEvaluation) as error:
            if choice == "compiled":
                raise CoreUnavailable(f"--core compiled: {error}") from None
            if isinstance(error, UnsupportedEvaluation):  # no build of the C search computes it
                return _python_searcher(evaluator, hash_mb, features, threads,
                                        (logging.WARNING, f"search core: pure Python ({error})"), str(error))
            why_not.append(str(error))
        else:
            on = f", {searcher.threads} threads" if searcher.threads > 1 else ""
            searcher.core_status = core_status("compiled", _chosen(choice))
            return searcher, "compiled", (logging.INFO, f"search core: compiled (C, agent._core), "
                                                        f"{searcher.evaluation} evaluation, table {searcher.tt_slots:,} entries{on}")
    if choice in ("auto", "wasm") and (threads in (1, AUTO_THREADS) or choice == "wasm"):
        try:
            searcher = WasmAlphaBeta(evaluator, hash_mb=hash_mb, prefault=prefault, features=features,
                                     threads=1 if threads == AUTO_THREADS else threads)
        except (CoreUnavailable, UnsupportedEvaluation) as error:
            if choice == "wasm":
                raise CoreUnavailable(f"--core wasm: {error}") from None
            why_not.append(str(error))
            # Installed and yet it did not load (a wasmtime whose library fails): a warning, not
            # the note of a machine without it.
            broken = not wasm_unavailable_reason()
        else:
            because = f" ({'; '.join(why_not)})" if why_not else ""
            searcher.core_status = core_status("wasm", "; ".join(why_not) or _chosen(choice))
            return searcher, "wasm", (logging.INFO, f"search core: wasm (the C search as WebAssembly, "
                                                    f"{core_wasm.WASM_PATH.name} in wasmtime), {searcher.evaluation} "
                                                    f"evaluation, table {searcher.tt_slots:,} entries{because}")
    if choice == "python":
        note = (logging.INFO, "search core: pure Python (--core python)" if core is not None
                else f"search core: pure Python ({CORE_ENV}=python)")
    else:
        note = (logging.WARNING if broken else logging.INFO, f"search core: pure Python ({'; '.join(why_not)})")
    return _python_searcher(evaluator, hash_mb, features, threads, note, "; ".join(why_not) or _chosen(choice))


def _python_searcher(evaluator, hash_mb, features, threads, note, why):
    if threads != AUTO_THREADS and threads > 1:
        raise CoreUnavailable(f"{threads} threads need the compiled core; the search here is "
                              f"{note[1].removeprefix('search core: ')}, on one thread")
    searcher = AlphaBeta(evaluator, move_space=81, hash_mb=hash_mb, features=features)
    searcher.core_status = core_status("python", why)
    return searcher, "python", note
