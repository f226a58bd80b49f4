"""A line of a series' ``games.jsonl`` as a value: :class:`GameLine` (the keys: docs/formats.md).

The series' games make one (:mod:`ref_sim.series.file_games`, :mod:`ref_sim.series.codingame_games`)
and write :meth:`GameLine.to_json`; every runner and view reads one with
:meth:`GameLine.from_json`, which checks the keys the summary reads, once, and refuses a bad line
with a :class:`RecordError` naming the line and the key.  One class serves both protocols: most
keys are shared and mean the same, every reader of lines reads both kinds alike (the summary, the
tournament, the views), and the few keys of one protocol are None in the other's lines (the
file protocol's ``seed``, ``time_limit``, ``encoding``, ``opening``, ``end_text``, ``hints``;
CodinGame's ``rules``, ``turn_ms``, ``first_turn_ms``, ``grace_ms``, ``late_ms``, ``boards``,
``slowest_ms``): two classes would make each of those readers ask which it holds.

A line reads back as it was written: keys this version does not know are kept (``extra``), and
so are the keys a line was read with, in their order (an old line lacking a key writes none),
so that ``GameLine.from_json(obj).to_json() == obj`` with the same key order.  The nested parts
(agents, moves, notes, usage...) stay the JSON values they are: they are read as they are, and a
type for each would only copy them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from ref_sim.rules import CODINGAME
from ref_sim.series.output.strict_json import RecordError, wrong_value

#: The ``format`` of the lines written now.
FORMAT = 1

#: A game's ``result``.
RESULTS = ("win", "tie", "aborted")

#: The keys of a file-protocol line in the order written (``file_games``); of CodinGame's line.
FILE_KEYS = ("format", "game", "pair", "series_seed", "seed", "time_limit", "encoding", "agents",
             "names", "p1", "p2", "opening", "moves", "result", "winner", "loser", "reason",
             "end_text", "bad_line", "score", "notes", "hints", "started", "duration", "usage",
             "timeout_share", "machine_timeout", "search_log_skipped", "cannot_start", "worker",
             "attempts", "pairing", "pairing_game")
CODINGAME_KEYS = ("format", "game", "pair", "series_seed", "agents", "rules", "turn_ms",
                  "first_turn_ms", "grace_ms", "names", "p1", "p2", "moves", "result", "winner",
                  "loser", "reason", "bad_line", "late_ms", "boards", "notes", "slowest_ms",
                  "started", "duration", "timeout_share", "machine_timeout", "usage", "score",
                  "search_log_skipped", "cannot_start", "worker", "attempts", "pairing",
                  "pairing_game")
#: The keys only some lines have, left out when None: what was measured, a forfeit, a cluster's
#: game, a tournament's.
SOMETIMES = ("usage", "timeout_share", "machine_timeout", "search_log_skipped", "cannot_start",
             "worker", "attempts", "pairing", "pairing_game")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _problem(game) -> str | None:
    """Why ``game`` (a JSON value) cannot be a games.jsonl line the runners' summary reads (the
    keys it uses, with their types), or None.  Keys it does not read are left as they are."""
    if not isinstance(game, dict):
        return f"not a game (a JSON {type(game).__name__}, not an object)"
    checks = (
        ("game", _is_int(game.get("game")) and game.get("game") >= 1, "a positive integer"),
        ("result", game.get("result") in RESULTS, "win, tie or aborted"),
        ("reason", isinstance(game.get("reason"), (str, type(None))), "text or null"),
        ("winner", isinstance(game.get("winner"), (str, type(None))), "a name or null"),
        ("names", isinstance(game.get("names"), list)
         and all(isinstance(name, str) for name in game["names"]), "a list of names"),
        ("notes", isinstance(game.get("notes"), dict)
         and all(isinstance(note, str) for note in game["notes"].values()), "{name: text}"),
        ("pair", game.get("pair") is None or _is_int(game.get("pair")), "an integer or null"),
        ("score", game.get("score") in (None, 0, 0.5, 1) and not isinstance(game.get("score"), bool),
         "1, 0.5, 0 or null"),
        ("moves", isinstance(game.get("moves"), list)
         and all(isinstance(move, dict) and _is_int(move.get("board")) and _is_int(move.get("spot"))
                 for move in game["moves"]), "a list of moves with their board and spot"),
        ("opening", isinstance(game.get("opening", []), list)
         and all(isinstance(move, list) and len(move) == 3 and _is_int(move[1]) and _is_int(move[2])
                 for move in game.get("opening", [])), "a list of [name, board, spot]"),
        ("agents", isinstance(game.get("agents", []), list)
         and all(isinstance(agent, dict) and isinstance(agent.get("name"), str)
                 for agent in game.get("agents", [])), "a list of agents with their names"),
        ("duration", isinstance(game.get("duration", 0), (int, float))
         and not isinstance(game.get("duration", 0), bool), "seconds"),
    )
    for key, good, wanted in checks:
        if not good:
            return wrong_value(game, key, wanted)
    return None


def score_of(result: str, winner: str | None, first: str) -> float | None:
    """A line's ``score``: what the series' first agent (``first``) made of the game, 1, 0.5 or
    0; None for an aborted one.

    >>> score_of("win", "A", "A"), score_of("win", "B", "A"), score_of("tie", None, "A"), score_of("aborted", None, "A")
    (1.0, 0.0, 0.5, None)
    """
    if result == "tie":
        return 0.5
    return float(winner == first) if result == "win" else None


@dataclass(frozen=True)
class GameLine:
    """One finished game as ``games.jsonl`` holds it; each attribute is the key of that name
    (docs/formats.md), None where the line has none (the other protocol's keys, the keys only
    some lines have, a key an old line lacks).  ``extra``: the keys this version does not know;
    ``order``: the keys the line was read with, in their order (empty for a line made here,
    written in its protocol's order: :data:`FILE_KEYS`, :data:`CODINGAME_KEYS`)."""
    game: int
    result: str
    names: list
    notes: dict
    moves: list
    format: int = FORMAT
    pair: int | None = None
    series_seed: int | None = None
    agents: list = field(default_factory=list)
    p1: str | None = None
    p2: str | None = None
    winner: str | None = None
    loser: str | None = None
    reason: str | None = None
    bad_line: str | None = None
    score: float | None = None
    started: float | None = None
    duration: float = 0.0
    # the file protocol's
    seed: int | None = None
    time_limit: float | None = None
    encoding: str | None = None
    opening: list = field(default_factory=list)
    end_text: str | None = None
    hints: dict | None = None
    # CodinGame's
    rules: str | None = None
    turn_ms: float | None = None
    first_turn_ms: float | None = None
    grace_ms: float | None = None
    late_ms: float | None = None
    boards: dict | None = None
    slowest_ms: dict | None = None
    # only some lines
    usage: dict | None = None
    timeout_share: dict | None = None
    machine_timeout: dict | None = None
    search_log_skipped: dict | None = None
    cannot_start: dict | None = None
    worker: str | None = None
    attempts: int | None = None
    pairing: list | None = None
    pairing_game: int | None = None
    # the line as it was read
    extra: dict = field(default_factory=dict, repr=False)
    order: tuple = field(default=(), repr=False, compare=False)

    @property
    def codingame(self) -> bool:
        """Whether CodinGame's protocol played it (else the referee's files)."""
        return self.rules == CODINGAME

    @classmethod
    def from_json(cls, obj, where: str | None = None) -> GameLine:
        """The line ``obj`` (a JSON value) holds; RecordError ``"WHERE: 'key' must be ..., not
        ..."`` (``where``: the file and line, e.g. ``games.jsonl line 3``) if it is no game."""
        problem = _problem(obj)
        if problem:
            raise RecordError(f"{where}: {problem}" if where else problem)
        known = {key: value for key, value in obj.items() if key in KEYS}
        return cls(**known, extra={key: value for key, value in obj.items() if key not in KEYS},
                   order=tuple(obj))

    def to_json(self) -> dict:
        """The JSON object written to games.jsonl: the keys read, in their order, or for a line
        made here its protocol's; then those only some lines have, set since; then ``extra``."""
        data = {}
        for key in self.order or (CODINGAME_KEYS if self.codingame else FILE_KEYS):
            value = self.extra[key] if key in self.extra else getattr(self, key)
            if value is not None or key not in SOMETIMES or key in self.order:
                data[key] = value
        for key in SOMETIMES:
            if key not in data and getattr(self, key) is not None:
                data[key] = getattr(self, key)
        for key, value in self.extra.items():
            data.setdefault(key, value)
        return data


@dataclass(frozen=True)
class Played:
    """A game as a series' game function (``play_game`` of either protocol) returns it: the
    referee's ``record`` (the file referee's :class:`ref_sim.referees.file_referee.GameRecord`,
    or CodinGame's record, a dict of line keys) and what the bench saw of the bots beside it,
    which the line keeps: ``notes`` (the file protocol's ``{name: "crashed (...)" | "did not exit
    (killed)"}``; CodinGame's referee notes them in its record), ``usage`` (what each bot used,
    None where not known), ``timeout_share`` and ``machine_timeout`` (after a time-out:
    :meth:`ref_sim.series.process.turn_share.TurnMeter.keys`) and ``late_start`` (``{name:
    seconds}``, who was not up when it began: the file protocol's hints)."""
    record: object
    notes: dict = field(default_factory=dict)
    usage: dict | None = None
    timeout_share: dict | None = None
    machine_timeout: dict | None = None
    late_start: dict | None = None


#: The keys that are attributes of :class:`GameLine`.
KEYS = frozenset(f.name for f in fields(GameLine)) - {"extra", "order"}
