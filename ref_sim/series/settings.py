"""A series' settings as values, and the settings files ``--resume`` continues from.

A command reads its command line once (its ``settle``, with :mod:`ref_sim.series.command_line`)
into one frozen value: :class:`MatchSettings`, :class:`StdioSettings` or
:class:`TournamentSettings`, each holding the shared :class:`RunSettings` (how this run plays,
the :class:`ref_sim.series.process.isolation.Isolation` among them).  Resuming, the value is the
recorded file's (series.json, tournament.json: :func:`read_settings`, :func:`merge_settings`),
checked once; a problem in the file is :class:`ref_sim.series.output.records.CannotResume`,
naming the file and the field.  What runs the series reads the value, never the command line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent.cli_common import SHOWN_MESSAGE
from agent.text import printable
from ref_sim.series.output import records, strict_json
from ref_sim.series.output.event_record import EventSettings
from ref_sim.series.process import isolation
from ref_sim.series.run.cluster_address import ClusterTarget


@dataclass(frozen=True)
class RunSettings:
    """How this run plays, the command line's alone (not recorded, but ``isolate``): ``out``
    (``--out``; None: a temporary folder), ``waits`` (``--startup-wait``, ``--exit-wait`` as
    given: keyword arguments of a game's settings), ``cluster`` (None: here), ``isolate`` (the
    isolation the games are played under, given or recorded; ``isolated_as_recorded``: recorded,
    ``--isolate`` not given)."""
    out: str | None = None
    resume: bool = False
    quiet: bool = False
    show: bool = False
    concurrency: int = 1
    cluster: ClusterTarget | None = None
    waits: tuple[tuple[str, float], ...] = ()
    isolate: isolation.Isolation | None = None
    isolated_as_recorded: bool = False


@dataclass(frozen=True, kw_only=True)
class HeadToHeadSettings:
    """A series between two bots (series.json): ``games``, rounded up to whole pairs where
    they are paired."""
    run: RunSettings
    agents: tuple[str, str]
    seed: int
    games: int

    def isolate_record(self) -> dict | None:
        """series.json's "isolate"."""
        return isolation.recorded_setting(self.run.isolate)


@dataclass(frozen=True, kw_only=True)
class MatchSettings(HeadToHeadSettings):
    """``uttt-match``'s: through the referee's files."""
    time_limit: float
    paired: bool
    encoding: str | None
    sprt: tuple[float, float, float, float] | None

    def record(self, format_: int, names: list[str]) -> dict:
        """series.json."""
        return {"format": format_, "seed": self.seed, "agents": list(self.agents), "names": names,
                "time_limit": self.time_limit, "paired": self.paired, "encoding": self.encoding,
                "games": self.games, "sprt": None if self.sprt is None else list(self.sprt),
                "isolate": self.isolate_record()}


@dataclass(frozen=True, kw_only=True)
class StdioSettings(HeadToHeadSettings):
    """``uttt-stdio``'s: CodinGame's timing, in milliseconds."""
    turn_ms: float
    first_turn_ms: float
    grace_ms: float

    def timing(self) -> tuple[float, float, float]:
        return self.turn_ms, self.first_turn_ms, self.grace_ms

    def record(self, format_: int, rules: str, names: list[str]) -> dict:
        """series.json."""
        return {"format": format_, "rules": rules, "seed": self.seed, "agents": list(self.agents),
                "names": names, "games": self.games, "turn_ms": self.turn_ms,
                "first_turn_ms": self.first_turn_ms, "grace_ms": self.grace_ms,
                "isolate": self.isolate_record()}


@dataclass(frozen=True)
class TournamentSettings:
    """``uttt-tournament``'s: ``event``, tournament.json as :func:`ref_sim.series.event.event_settings`
    made it (:class:`ref_sim.series.output.event_record.EventSettings`, its bots named); ``check``: only ``--check`` the bots; ``anchor``: the bot rated
    at 0 (None: the mean)."""
    run: RunSettings
    event: EventSettings
    check: bool = False
    anchor: str | None = None


def whole_pairs(games: int, paired: bool, recorded: dict | None, say, why: str,
                single: str | None = None) -> int:
    """``games`` rounded up to whole pairs when ``paired`` (but one game), said with ``why``;
    and said when a resumed series (``recorded``: its settings) now has another number."""
    if paired and games > 1 and games % 2:
        say(f"--games {games} rounded up to {games + 1}: {why}")
        games += 1
    elif paired and games == 1 and single:
        say(single)
    if recorded is not None and recorded.get("games") not in (None, games):
        say(f"the series now has {games} games (it had {recorded['games']})")
    return games


def isolation_of(setting, path: Path | None) -> isolation.Isolation | None:
    """The :class:`ref_sim.series.process.isolation.Isolation` of the settings' "isolate"
    (given, or recorded in ``path``); CannotResume if the file's is not one."""
    try:
        return isolation.from_record(setting)
    except ValueError as error:
        raise refused(str(error), path, "isolate") from None


# -- the settings files --------------------------------------------------------------------

@dataclass(frozen=True)
class SettingsFile:
    """The file in ``--out`` where a runner records its settings, so that ``--resume --out DIR``
    alone continues as it was: series.json (match, stdio), tournament.json (the tournament)."""
    name: str = "series.json"
    what: str = "series"                    # what it records, in messages
    start: str = "AGENT1 AGENT2"            # what the command line gives to start one
    grows: str = "games"                    # the setting a resumed run may change
    required: tuple[str, ...] = ()          # keys without which it is no such file


SERIES_FILE = SettingsFile(required=("agents",))


def refused(message: str, path: Path | None, field: str | None = None) -> records.CannotResume:
    """The error of a settings file that cannot be resumed, as a usage line shows it."""
    return records.CannotResume(printable(message, SHOWN_MESSAGE), path, field)


def series_settings(out: Path | None, resume: bool, given: dict, defaults: dict,
                    flags: dict) -> tuple[dict, dict | None]:
    """The settings of this run and those ``out/series.json`` recorded (None: a new series).

    ``given``: the settings on the command line, None where left out; ``defaults``: those of
    a new series; ``flags``: each setting's option, for messages.  Resuming takes every
    setting from series.json, except ``games`` when given (a series may grow or shrink);
    a given setting that differs from the recorded one is refused (ValueError, one line).
    ``--resume`` where there is no series.json starts one, if the agents are given."""
    recorded = read_settings(out, resume, given.get("agents") is not None)
    return merge_settings(recorded, given, defaults, flags, out), recorded


def read_settings(out: Path | None, resume: bool, starts: bool,
                  record: SettingsFile = SERIES_FILE) -> dict | None:
    """What ``out`` recorded (``record``: which file) when resuming; None for a new one, which
    ``starts`` (the command line gives what starts one) or else is refused (ValueError).
    CannotResume: the file is no such file, or a setting has the wrong type."""
    path = out / record.name if out is not None else None
    if not (resume and path is not None and path.exists()):
        if resume and not starts:
            raise ValueError(f"--resume: {out} holds no {record.what} to continue (no "
                             f"{record.name}); give {record.start} to start one there")
        return None
    try:
        recorded = strict_json.read_json(path, record.name)
    except strict_json.RecordError as error:
        raise refused(f"cannot resume: {error}", path) from None
    if not isinstance(recorded, dict) or not set(record.required) <= set(recorded):
        raise refused(f"cannot resume: {path} is not a {record.what} file", path)
    problem = records.settings_problem(recorded)
    if problem:
        field, why = problem
        raise refused(f"cannot resume: {path}: {why}", path, field)
    return recorded


def merge_settings(recorded: dict | None, given: dict, defaults: dict, flags: dict,
                   out: Path | None, record: SettingsFile = SERIES_FILE) -> dict:
    """This run's settings: the command line's (``given``, None where left out) over
    ``defaults`` for a new one; else the ``recorded`` ones, a given setting that differs
    refused (ValueError, one line) but for ``record.grows``."""
    if recorded is None:
        return {key: defaults[key] if given.get(key) is None else given[key] for key in defaults}
    settings = {}
    for key, default in defaults.items():
        old, new = recorded.get(key, default), given.get(key)
        if new is not None and key in recorded and new != old and key != record.grows:
            raise ValueError(f"cannot resume: {flags[key]} was {_shown(old)} in {out}, not "
                             f"{_shown(new)} (leave {flags[key]} out to continue the "
                             f"{record.what} as it was, or choose another --out)")
        settings[key] = old if new is None else new
    return settings


def _shown(value) -> str:
    """A setting as a command line gives it.

    >>> _shown(["agent", "seed:depth=4"]), _shown(0.5), _shown(None), _shown(False)
    ('agent seed:depth=4', '0.5', 'none', 'no')
    """
    if isinstance(value, list):
        return " ".join(map(_shown, value))
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return ", ".join(f"{key} {_shown(item)}" for key, item in value.items())
    return "none" if value is None else str(value)
