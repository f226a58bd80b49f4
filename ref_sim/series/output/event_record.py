"""A tournament's settings as its ``tournament.json`` records them: :class:`EventSettings`.

``uttt-tournament`` makes one (:func:`ref_sim.series.event.event_settings`, its bots named by
:func:`ref_sim.series.event.check_settings`) and writes :meth:`EventSettings.to_json`; the event,
its pages and the views read its attributes.  :meth:`EventSettings.from_json` reads a file's,
checked once: a RecordError naming the file and the key.  A resumed tournament is written anew
from its settings (a key an older file lacked is written, one it does not know is dropped), so
the value keeps no unknown keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ref_sim.series.output.records import settings_problem
from ref_sim.series.output.strict_json import RecordError, read_json, wrong_value

#: The ``format`` of the tournament.json written now.
FORMAT = 1

#: How a tournament's pairings draw their openings ("openings"): each from its own seed, so that
#: the event is not one opening played by every pairing.  A tournament.json without the key is
#: from before: all its pairings play the event's seed, and go on doing so.
OWN_OPENINGS, SHARED_OPENINGS = "per-pairing", "shared"

#: The settings of each protocol's games, in the order written.
FILE_SETTINGS = ("time_limit", "encoding")
STDIO_SETTINGS = ("turn_ms", "first_turn_ms", "grace_ms")


@dataclass(frozen=True)
class Bot:
    """A bot of the event: its ``spec`` as given, its ``name`` (None until the event names its
    bots; an older tournament.json recorded none).  A value rather than the JSON object, so that
    the tables, pages and views read ``bot.name``, as everywhere else."""
    spec: str
    name: str | None = None

    def to_json(self) -> dict:
        return {"spec": self.spec} if self.name is None else {"name": self.name, "spec": self.spec}


@dataclass(frozen=True)
class EventSettings:
    """tournament.json: each attribute the key of that name (docs/tournament.md); the keys of
    the other protocol (:data:`FILE_SETTINGS`, :data:`STDIO_SETTINGS`) are None and not
    written.  ``recorded_names``: the names a resumed file gave its bots, until the event names
    them (never written)."""
    bots: tuple[Bot, ...]
    pairings: tuple[tuple[int, int], ...] = ()
    kind: str | None = "round-robin"
    protocol: str = "file"
    seed: int | None = None
    rounds: int = 1
    isolate: dict | None = None
    openings: str = SHARED_OPENINGS
    time_limit: float | None = None
    encoding: str | None = None
    turn_ms: float | None = None
    first_turn_ms: float | None = None
    grace_ms: float | None = None
    format: int = FORMAT
    recorded_names: list | None = field(default=None, repr=False, compare=False)

    @property
    def names(self) -> list:
        """The bots' names, in their order."""
        return [bot.name for bot in self.bots]

    @property
    def gauntlet(self) -> bool:
        return self.kind == "gauntlet"

    def own_settings(self) -> tuple[str, ...]:
        """The keys of this event's protocol's games."""
        return FILE_SETTINGS if self.protocol == "file" else STDIO_SETTINGS

    def to_json(self) -> dict:
        """The JSON object written to tournament.json."""
        return {"format": self.format, "kind": self.kind, "protocol": self.protocol,
                "seed": self.seed, "rounds": self.rounds, "isolate": self.isolate,
                "openings": self.openings,
                **{key: getattr(self, key) for key in self.own_settings()},
                "bots": [bot.to_json() for bot in self.bots],
                "pairings": [list(pair) for pair in self.pairings]}

    @classmethod
    def from_json(cls, obj, where=None) -> EventSettings:
        """The settings ``obj`` (tournament.json's JSON value) holds; RecordError ``"WHERE:
        'key' must be ..., not ..."`` (``where``: the file) if it holds no tournament's.  A key
        an older file lacks is as it was then ("openings": shared); a bot's name that is not
        text is none; "kind" is as the file has it (None: none)."""
        def refused(key: str, wanted: str) -> RecordError:
            return RecordError(f"{where}: {wrong_value(obj, key, wanted)}")

        if not isinstance(obj, dict):
            raise RecordError(f"{where}: not a tournament's settings (a JSON "
                              f"{type(obj).__name__}, not an object)")
        problem = settings_problem(obj)
        if problem:
            raise RecordError(f"{where}: {problem[1]}")
        bots = obj.get("bots")
        if not (isinstance(bots, list) and all(isinstance(bot, dict) and isinstance(bot.get("spec"), str)
                                               for bot in bots)):
            raise refused("bots", "a list of bots with their specs")
        pairings = obj.get("pairings", [])
        if not (isinstance(pairings, list) and all(
                isinstance(pair, list) and len(pair) == 2 and all(
                    isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(bots) for i in pair)
                for pair in pairings)):
            raise refused("pairings", "a list of pairs of bots")
        return cls(kind=obj.get("kind"), bots=tuple(Bot(bot["spec"], bot["name"] if isinstance(bot.get("name"), str) else None)
                              for bot in bots),
                   pairings=tuple(tuple(pair) for pair in pairings),
                   **{key: obj[key] for key in ("protocol", "seed", "rounds", "isolate",
                                                "openings", *FILE_SETTINGS, *STDIO_SETTINGS,
                                                "format") if key in obj})


def read_event(path) -> EventSettings:
    """The settings of the tournament.json at ``path``; RecordError (one line naming it) if it
    cannot be read or holds no tournament's."""
    return EventSettings.from_json(read_json(path, "tournament settings"), where=path)
