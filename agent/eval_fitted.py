"""The fitted evaluation: each board's chance to be won by each side, compounded along global lines.

This module is the one definition of what the evaluation computes (the compiled core mirrors it
in the same integer arithmetic); ``scripts/train_eval.py`` only chooses the numbers in the data
file it reads. The formula and what each fit found: docs/engine.md ("The evaluation, fitted to
games"); the data file: docs/formats.md.
"""

from __future__ import annotations

import gc
import hashlib
import json
from pathlib import Path

from .evaluation import TacticalOrdering, pattern_keys
from .rules import FULL, LINE_MASKS, WINS, Position, board_patterns

DATA_DIR = Path(__file__).resolve().parent / "data"
#: v2; v1 stays beside it: v2's self-play games were played with it (scripts/train_eval.py).
DEFAULT_DATA = DATA_DIR / "eval-v2.json"
FORMAT = "uttt-eval"
VERSION = 1
PATTERNS = 3 ** 9
#: Scores must stay well inside the search's forced-result range (PROVEN_SCORE is 999,000).
MAX_SCORE = 100_000
#: The largest scale: a line's product of three chances, Q^3, must fit in 31 bits (the compiled
#: core's int32 tables and 64-bit sums; docs/engine.md, "What it computes").
MAX_SCALE = 1290
#: The global grid's lines, as board triples.
GLOBAL_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def _ternary() -> tuple[int, ...]:
    """Each mask's sum of 3**s over its spots s, a spot at a time (made at every start: a
    twelfth of the time of the sum per mask)."""
    sums = [0]
    for spot in range(9):  # the masks holding this spot, the highest so far, follow those without
        sums += [value + 3 ** spot for value in sums]
    return tuple(sums)


#: TERNARY[mask]: the pattern-order digits of a mask's spots, 3**s per spot s (first player's marks).
TERNARY = _ternary()


def pattern_index(a: int, b: int) -> int:
    """Pattern order: spot s counts 3**s if ``a`` holds it, 2 * 3**s if ``b`` does."""
    return TERNARY[a] + 2 * TERNARY[b]


_swapped: list[int] | None = None


def swapped_indexes() -> list[int]:
    """``pattern_index(b, a)`` for each pattern ``i = pattern_index(a, b)`` in pattern order: the same
    board seen from the other side (every digit 1 made 2 and 2 made 1). Built once per process as
    evaluation.pattern_keys is, a digit at a time."""
    global _swapped
    if _swapped is None:
        swapped = [0]
        for spot in range(9):
            swapped = swapped + [j + 2 * 3 ** spot for j in swapped] + [j + 3 ** spot for j in swapped]
        _swapped = swapped
    return _swapped


class EvalDataError(ValueError):
    """A data file that is not a valid fitted-evaluation file."""


#: SHA-256 of each packaged data file, which tests/test_evaluation_fitted.py checks in full with
#: check_data and holds to the files in agent/data. A file with one of these digests holds those
#: very bytes, so load_data skips the full check (tens of milliseconds at every start): any other
#: file, an edited packaged one too, is checked in full. After changing a data file, the test
#: prints the line to put here.
PACKAGED_DIGESTS = {
    "eval-v1.json": "2230c63487274cacdccfcc0405f414735776b2f0fd2cfef487184da63322e3b2",
    "eval-v2.json": "ac9c798b2726de4bf8ed6c747805c67ca9c28f284d9236f501f67bdc37193c45",
}


def load_data(path: Path | str = DEFAULT_DATA, *, check=None) -> dict:
    """Read and check a data file; EvalDataError with one line saying what is wrong. A file whose
    bytes are a packaged file's (:data:`PACKAGED_DIGESTS`) passed the check already; any other is
    checked in full by ``check(data, where)`` (:func:`check_data`)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError) as error:
        raise EvalDataError(f"cannot read evaluation data {path}: {error}") from None
    if file_digest(raw) not in PACKAGED_DIGESTS.values():
        (check_data if check is None else check)(data, str(path))
    return data


def file_digest(raw: bytes) -> str:
    """The SHA-256 of a data file's bytes, as :data:`PACKAGED_DIGESTS` records them."""
    return hashlib.sha256(raw).hexdigest()


def check_data(data: dict, where: str = "evaluation data") -> None:
    """EvalDataError (one line) unless ``data`` is a data file the evaluation can use: the format,
    integers only (no floats, booleans, NaN), weights whose scores stay below ``MAX_SCORE``, three
    tables of ``PATTERNS`` chances in ``0..Q``, and on every pattern the value the model fixes
    (:func:`decided_chance`): a corrupt but well-formed file plays badly without a word otherwise."""
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise EvalDataError(f"{where}: not a {FORMAT} version {VERSION} file")
    q = data.get("scale")
    if not _is_int(q) or not 1 <= q <= MAX_SCALE:
        raise EvalDataError(f"{where}: scale must be an integer from 1 to {MAX_SCALE}")
    weights = data.get("weights")
    if not isinstance(weights, dict):
        raise EvalDataError(f"{where}: weights must be an object")
    for name in ("line", "board", "tempo", "free_move"):
        if not _is_int(weights.get(name)):
            raise EvalDataError(f"{where}: weights.{name} must be an integer")
    if weights["line"] < 0 or weights["board"] < 0:
        raise EvalDataError(f"{where}: weights.line and weights.board must be non-negative")
    bound = 8 * weights["line"] + 9 * weights["board"] + abs(weights["tempo"]) + abs(weights["free_move"])
    if bound >= MAX_SCORE:
        raise EvalDataError(f"{where}: scores could reach {bound}, not below {MAX_SCORE}")
    for name in ("chance", "mover", "waiter"):
        table = data.get(name)
        if not isinstance(table, list) or len(table) != PATTERNS or \
                not all(_is_int(v) and 0 <= v <= q for v in table):
            raise EvalDataError(f"{where}: {name} must be {PATTERNS} integers in 0..{q}")
    chance, mover, waiter = data["chance"], data["mover"], data["waiter"]
    for a, b in board_patterns():
        mine, theirs = decided_chance(a, b, q), decided_chance(b, a, q)
        if mine is None and theirs is None:
            continue
        i = pattern_index(a, b)
        for name, value, want in (("chance", chance[i], mine), ("mover", mover[i], mine),
                                  ("waiter", waiter[i], theirs)):
            if want is not None and value != want:
                side = "B" if name == "waiter" else "A"
                raise EvalDataError(f"{where}: {name}[{i}] is {value}, not {want}: on board {_board_text(a, b)} "
                                    f"{side} {'has won' if want == q else 'cannot win'} "
                                    "(an inverted or corrupt table?)")


def _is_int(value) -> bool:
    return type(value) is int  # not bool, which JSON's true would be


def _board_text(a: int, b: int) -> str:
    """A pattern in pattern order's terms, ``a``'s marks as A and ``b``'s as B: ``AB./.A./..A``."""
    cells = "".join("A" if a >> s & 1 else "B" if b >> s & 1 else "." for s in range(9))
    return "/".join((cells[0:3], cells[3:6], cells[6:9]))


def pair_tables(data: dict) -> tuple[list, list]:
    """``(idle, sent)``: the (m, t) pairs of the data's tables by ``a << 9 | b``, ``a`` the mover's
    marks, for a board nobody is sent to and for the board the mover is sent to (the lookups of
    docs/engine.md, "What it computes", done once). Entry ``i`` of pattern_keys() is pattern ``i``, so the data's
    tables are read in their own order and only stored per pattern, with no index arithmetic (at
    every start of the agent); a test holds the result to the plain loop over board_patterns."""
    chance, mover, waiter = data["chance"], data["mover"], data["waiter"]
    keys = pattern_keys()
    # 39,366 new tuples of ints, none in a cycle: the collections they would set off walk both
    # 2^18-entry lists again and again, a third of the time of building them.
    collecting = gc.isenabled()
    gc.disable()
    try:
        idle: list = [None] * (1 << 18)
        sent: list = [None] * (1 << 18)
        for key, pair in zip(keys, zip(chance, map(chance.__getitem__, swapped_indexes()))):
            idle[key] = pair
        for key, pair in zip(keys, zip(mover, waiter)):
            sent[key] = pair
    finally:
        if collecting:
            gc.enable()
    return idle, sent


class FittedEvaluator(TacticalOrdering):
    """``evaluate(position)`` (the formula: docs/engine.md, "What it computes") and the shared
    ``move_priority``. ``data`` is a loaded data file (default: the packaged one)."""

    name = "fitted"

    def __init__(self, data: dict | None = None) -> None:
        super().__init__()
        if data is not None:
            check_data(data)  # the packaged file's was checked when read (or recorded: PACKAGED_DIGESTS)
        self.data = data if data is not None else _default_data()
        self._idle, self._sent = pair_tables(self.data)
        self.evaluate = self._make_evaluate(self.data["scale"], self.data["weights"])

    def _make_evaluate(self, q: int, weights: dict):
        # A closure with the tables as locals: the hot path of the search.
        idle, sent = self._idle, self._sent
        line, board, tempo, free_move = weights["line"], weights["board"], weights["tempo"], weights["free_move"]
        q3 = q * q * q

        def evaluate(pos: Position) -> int:
            me = pos.masks[pos.turn]
            them = pos.masks[1 - pos.turn]
            a0, a1, a2, a3, a4, a5, a6, a7, a8 = me
            b0, b1, b2, b3, b4, b5, b6, b7, b8 = them
            pairs = [idle[a0 << 9 | b0], idle[a1 << 9 | b1], idle[a2 << 9 | b2], idle[a3 << 9 | b3],
                     idle[a4 << 9 | b4], idle[a5 << 9 | b5], idle[a6 << 9 | b6], idle[a7 << 9 | b7],
                     idle[a8 << 9 | b8]]
            forced = pos.forced
            if forced >= 0:
                pairs[forced] = sent[me[forced] << 9 | them[forced]]
                score = tempo
            else:
                score = tempo + free_move
            (m0, t0), (m1, t1), (m2, t2), (m3, t3), (m4, t4), (m5, t5), (m6, t6), (m7, t7), (m8, t8) = pairs
            mine = (m0 * m1 * m2 + m3 * m4 * m5 + m6 * m7 * m8 + m0 * m3 * m6 + m1 * m4 * m7 + m2 * m5 * m8
                    + m0 * m4 * m8 + m2 * m4 * m6)
            theirs = (t0 * t1 * t2 + t3 * t4 * t5 + t6 * t7 * t8 + t0 * t3 * t6 + t1 * t4 * t7 + t2 * t5 * t8
                      + t0 * t4 * t8 + t2 * t4 * t6)
            return (score + line * mine // q3 - line * theirs // q3
                    + board * (m0 + m1 + m2 + m3 + m4 + m5 + m6 + m7 + m8) // q
                    - board * (t0 + t1 + t2 + t3 + t4 + t5 + t6 + t7 + t8) // q)

        return evaluate

    def chances(self, pos: Position) -> list[tuple[int, int]]:
        """Each board's (mover's chance, other side's chance) in 0..Q, as ``evaluate`` uses them."""
        me, them = pos.masks[pos.turn], pos.masks[1 - pos.turn]
        pairs = [self._idle[a << 9 | b] for a, b in zip(me, them)]
        if pos.forced >= 0:
            pairs[pos.forced] = self._sent[me[pos.forced] << 9 | them[pos.forced]]
        return pairs


#: Data files read so far, by path: the default one is read once per process.
_read: dict[Path, dict] = {}
_packaged: dict = {}


def packaged_evaluator(name: str) -> FittedEvaluator:
    """The evaluator of ``agent/data/NAME.json`` (``eval-v1``), made once per process: self-play
    makes two engines a game, and building the tables costs more than a short game's search."""
    if name not in _packaged:
        _packaged[name] = FittedEvaluator(load_data(DATA_DIR / f"{name}.json"))
    return _packaged[name]



def _default_data() -> dict:
    """The packaged data file (:data:`DEFAULT_DATA`), read once per process."""
    if DEFAULT_DATA not in _read:
        _read[DEFAULT_DATA] = load_data(DEFAULT_DATA)
    return _read[DEFAULT_DATA]


def decided_chance(a: int, b: int, q: int) -> int | None:
    """The chance the model fixes for the side holding ``a`` against ``b``, which every table must
    hold: ``q`` when it has won the board, 0 when it cannot win it any more (``b`` won it, the board
    is full, or every line holds a mark of ``b``); None while the board is open to it (the fit's)."""
    if WINS[a]:
        return q
    if WINS[b] or (a | b) == FULL or all(line & b for line in LINE_MASKS):
        return 0
    return None



