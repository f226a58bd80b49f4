"""``uttt-tournament --check``: each bot of an event in one game against the built-in random bot,
at the event's time limit and with its ``--isolate``, before the event is played.  One line a bot:
it starts, answers to its name, moves in time (its slowest move against the limit), exits at the
end; or the first of these it fails, why, and the line of its log that says so.

A bot that never moved within the limit is given one more look, at :func:`second_look_limit`,
stopped at its first move: a slow first move and a bot waiting for another name's ``.go`` look
the same to the referee.  The instructor's guide: docs/tournament.md.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from ref_sim import stops
from ref_sim.referees.file_referee import INVALID_MOVE, OUT_OF_ORDER, TIME_OUT
from ref_sim.series import event, file_games
from ref_sim.series.process import sandbox
from ref_sim.series.output import telemetry
from ref_sim.series.output.event_record import Bot, EventSettings
from ref_sim.series.output.game_line import GameLine
from ref_sim.series.process.launch import AgentCannotStart
from ref_sim.series.loop import capped_concurrency, game_logs, keep_logs, play_games
from ref_sim.series.run.scheduler import LocalRunner
from ref_sim.series.settings import RunSettings
from ref_sim.series.specs import agent_spec, stdio_spec

#: Every bot meets this built-in: quick, legal, and always there.
OPPONENT = "random"
#: The second look gives a bot that never moved this many time limits, within these bounds.
SECOND_LOOK_FACTOR, SECOND_LOOK_MIN, SECOND_LOOK_MAX = 5.0, 2.0, 60.0
PASSED, FAILED = "ok  ", "FAIL"


def second_look_limit(limit: float) -> float:
    """The time limit of the second look at a bot that never moved.

    >>> second_look_limit(0.3), second_look_limit(2), second_look_limit(30)
    (2.0, 10.0, 60.0)
    """
    return min(SECOND_LOOK_MAX, max(SECOND_LOOK_MIN, SECOND_LOOK_FACTOR * limit))


@dataclass
class Verdict:
    """What the check found of one bot: the checks it passed, the one it failed (None: all
    passed) and the lines that say why (its log's, or the runner's)."""
    name: str
    number: int                     # its game's number: logs/game-NNNN-NAME.log
    passed: list[str]
    failed: str | None = None
    said: list[str] = field(default_factory=list)
    hint: str = ""                  # the runner's guess at why it never moved
    again: bool = False             # never moved within the limit: the second look decides

    def line(self, width: int) -> str:
        checks = ", ".join(self.passed)
        if self.failed is None:
            return f"{PASSED} {self.name:<{width}}  {checks}"
        return f"{FAILED} {self.name:<{width}}  {checks + '; ' if checks else ''}{self.failed}"


class _Stops:
    """The stop of every game of the check (Ctrl-C: :func:`ref_sim.series.loop.play_games` sets it),
    each game's own event besides, which its second look sets once the bot moved."""

    def __init__(self) -> None:
        self.games: list[threading.Event] = []
        self.stopped = False

    def new(self) -> threading.Event:
        own = threading.Event()
        if self.stopped:
            own.set()
        self.games.append(own)
        return own

    def set(self) -> None:
        self.stopped = True
        for own in self.games:
            own.set()

    def is_set(self) -> bool:
        return self.stopped


def shown(seconds: float) -> str:
    """A move's time as the lines give it.

    >>> shown(0.0612), shown(1.5), shown(2), shown(1.234)
    ('61 ms', '1.5 s', '2 s', '1.23 s')
    """
    if seconds < 1:
        return f"{1000 * seconds:.0f} ms"
    return f"{seconds:.2f}".rstrip("0").rstrip(".") + " s"


def log_of(logs: Path, number: int, name: str) -> Path:
    return logs / f"game-{number:04d}-{name}.log"


def cannot_start(name: str, number: int, error: AgentCannotStart) -> Verdict:
    why = error.why.removesuffix(f": {error.said}") if error.said else error.why
    return Verdict(name, number, [], f"does not start: {why}", [error.said] if error.said else [])


def judge(name: str, number: int, game: GameLine, limit: float, logs: Path, file: bool) -> Verdict:
    """The verdict on ``name`` from its game's games.jsonl line (``limit``: seconds per move)."""
    mine = [m for m in game.moves if m["player"] == name]
    # CodinGame's first turn has a limit of its own: the others are held to the turn's.
    seconds = [m["seconds"] for m in mine] if file else [m["ms"] / 1000 for m in mine[1:]]
    note = game.notes.get(name, "")
    hint = (game.hints or {}).get(name, "")
    verdict = Verdict(name, number, ["starts"])
    named = ["answers to its name"] if file else []         # CodinGame's protocol has no names
    lost = game.result == "win" and game.loser == name
    if "move_file had lines from" in hint:
        verdict.failed = f"does not answer to its name: {hint}"
    elif note.startswith("crashed"):
        verdict.passed += named if mine else []
        verdict.failed = f"crashed at its move {len(mine) + 1}: {note[len('crashed ('):-1]}"
        said = telemetry.error_line(log_of(logs, number, name))
        verdict.said = [said] if said else []
    elif lost and game.reason == TIME_OUT and not mine and file:
        verdict.again, verdict.hint = True, hint
    elif lost and game.reason == TIME_OUT:
        verdict.passed += named if mine else []
        verdict.failed = (f"moves too slowly: lost on time at its move {len(mine) + 1} (no move "
                          f"within {shown(limit)}" + (f"; its slowest before: {shown(max(seconds))})"
                                                  if seconds else ")"))
    elif lost and game.reason in (INVALID_MOVE, OUT_OF_ORDER):
        verdict.passed += named
        verdict.failed = f"lost by {game.reason} {game.bad_line!r}" + (
            f": {hint}" if hint else "")
    elif game.result == "aborted" or not mine:     # the random bot's fault, or a stop
        verdict.failed = (f"not checked: the game ended before it could show "
                          f"({event.describe('file' if file else 'stdio', game)})")
    else:
        verdict.passed += named + [f"moves in time (slowest {shown(max(seconds, default=0))} of {shown(limit)})"]
        if note:
            verdict.failed = f"does not exit at the end: {note}"
        else:
            verdict.passed.append("exits at the end")
    return verdict


def second_verdict(verdict: Verdict, record, notes: dict, limit: float, again: float) -> None:
    """``verdict`` completed from the second look (``record``, ``notes``: its game at ``again``
    seconds a move, stopped at the bot's first move)."""
    name = verdict.name
    moved = [move.seconds for move in record.moves if move.player == name]
    if moved:
        verdict.passed.append("answers to its name")
        verdict.failed = (f"moves too slowly: no move within {shown(limit)}; given {shown(again)} "
                          f"its first took {shown(moved[0])}")
        verdict.hint = ""           # it answers: the guess at a wrong name was wrong
    elif str(notes.get(name, "")).startswith("crashed"):
        verdict.failed = f"crashed before its first move: {notes[name][len('crashed ('):-1]}"
    else:
        verdict.failed = (f"never moved: no move within {shown(limit)}, nor within {shown(again)} in "
                          "a second game; does it answer to the name it is given?")


def run(settings: EventSettings, specs: list, run_as: RunSettings, say=print) -> int:
    """Check each bot of the event ``settings`` (named, with their ``specs``) as the module
    docstring says; ``run_as``: the run's isolation, waits and concurrency.  Returns the
    exit code: 0 when every bot passed, 1 when one did not, 128 + N when a signal stopped it.
    ValueError (one line): a --isolate-share folder that holds a bot's program."""
    file = settings.protocol == "file"
    names = settings.names
    opponent = (agent_spec if file else stdio_spec)(OPPONENT)
    limit = settings.time_limit if file else settings.turn_ms / 1000
    concurrency = capped_concurrency(run_as.concurrency)
    out = Path(tempfile.mkdtemp(prefix="uttt-check-"))
    logs = out / "logs"
    logs.mkdir()
    stop = _Stops()
    try:
        isolate = sandbox.for_event(run_as.isolate, [spec.template for spec in [*specs, opponent]], out)
        series, first = {}, stop.new()
        for name, spec in zip(names, specs):
            rival = "Random" if name != "Random" else "Random0"
            pair = replace(settings, bots=(Bot(spec.spec, name), Bot(OPPONENT, rival)), pairings=((0, 1),))
            series[name] = event.pairing_games(pair, [spec, opponent], out, first,
                                               isolate, dict(run_as.waits))[0]
        timing = (f"{shown(limit)} per move" if file else
                  f"{settings.turn_ms:g} ms per turn (first {settings.first_turn_ms:g} ms)")
        say(f"Checking {len(names)} bot{'s' * (len(names) != 1)}: each plays one game against the "
            f"built-in {OPPONENT} bot at {timing}"
            + (", isolated" if isolate is not None else "") + f", {concurrency} at once")
        verdicts: dict[str, Verdict] = {}
        with LocalRunner(concurrency) as runner:
            def submit(item):
                number, name = item
                return series[name].submit(runner, 1, must_start=True, number=number)

            def finished(item, ticket) -> None:
                number, name = item
                try:
                    game = series[name].line(runner, ticket, 1, number)
                except AgentCannotStart as error:
                    if not stop.is_set():
                        verdicts[name] = cannot_start(name, number, error)
                    return
                if game is not None:
                    verdicts[name] = judge(name, number, game, limit, logs, file)

            stopped = play_games(runner, list(enumerate(names, 1)), submit, finished, stop)
            again = [v for v in verdicts.values() if v.again]
            if again and not stopped:
                stopped = _second_looks(runner, again, series, specs, names, logs, limit, stop)
        if stopped.broken_pipe:
            return stops.EXIT_BROKEN_PIPE
        if stopped:
            interrupt = stopped.interrupt
            said = stops.said(interrupt)
            print(f"{said[0].upper()}{said[1:]}: the check stopped", file=sys.stderr)
            return stops.exit_code(interrupt)
        width = max(len(name) for name in names)
        failed = [verdicts[name] for name in names if verdicts[name].failed is not None]
        for name in names:
            verdict = verdicts[name]
            say(verdict.line(width))
            for said in verdict.said:
                say(f"{'':4} {'':<{width}}  {said}  ({log_of(logs, verdict.number, name).name})")
            if verdict.hint:
                say(f"{'':4} {'':<{width}}  hint: {verdict.hint}")
        if not failed:
            say(f"All {len(names)} bots passed: they start, move in time and exit.")
            return 0
        kept = keep_logs(game_logs(logs, [v.number for v in failed]
                                   + [v.number + len(names) for v in failed if v.again]))
        them = "them" if len(failed) > 1 else "it"
        say(f"{len(failed)} of {len(names)} bots failed: fix {them}, or leave {them} out of the "
            "list (in the event a bot that cannot start loses each of its games, and one that is "
            "too slow loses on time)" + (f"; the logs: {kept}" if kept else ""))
        return 1
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _second_looks(runner, verdicts: list[Verdict], series: dict, specs: list, names: list[str],
                  logs: Path, limit: float, stop: _Stops) -> dict:
    """The second look at each bot of ``verdicts`` (it never moved within ``limit``): a game at
    :func:`second_look_limit` in which it moves first, stopped at its first move."""
    again = second_look_limit(limit)
    spec_of = dict(zip(names, specs))

    def submit(verdict: Verdict):
        own = series[verdict.name]
        name, rival = own.names
        number = verdict.number + len(names)      # its logs beside the first game's
        mine = stop.new()

        def watch(happened) -> None:
            if happened.kind == "move" and happened.player == name:
                mine.set()                         # it moved: that is all this game is for

        return runner.submit(f"game-{number}", file_games.play_game, number,
                             {name: spec_of[name], rival: own.specs[1]}, [name, rival],
                             own.out / f"game-{number:04d}", logs,
                             replace(own.settings, time_limit=again), seed=own.seed,
                             first=name, stop=mine, observe=watch)

    def finished(verdict: Verdict, ticket) -> None:
        played = ticket.result()
        if not stop.is_set():
            second_verdict(verdict, played.record, played.notes, limit, again)

    return play_games(runner, verdicts, submit, finished, stop)

