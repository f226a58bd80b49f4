"""The series engine: what every runner of a series of games shares, whatever the protocol.

:func:`play_games` plays a :class:`SeriesGames` a few at once (here or on a cluster, or in this
thread for the arena, self-play and training) and says how a stop ended it; :func:`append_game`
writes a game's line; :func:`prepare_out` makes ``--out``; :func:`conclude` ends a run (the logs
kept, the summary, the command that continues it).  The settings ``--resume`` continues with:
:mod:`ref_sim.series.settings`.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
from dataclasses import dataclass, replace
from pathlib import Path

from agent.cli_common import say_error, silence_output
from ref_sim.series.run import cluster, cluster_address, shipping, scheduler
from ref_sim.series.output import records
from ref_sim.series.output.game_line import GameLine
from ref_sim import stops
from ref_sim.referees.file_referee import TIME_OUT
from ref_sim.series.process.launch import AgentCannotStart
from ref_sim.series.output.report import SHORT

class SeriesGames:
    """The games of one series for a runner: :meth:`submit` starts game ``k`` on a runner (here or
    on a cluster worker), :meth:`line` turns it into its games.jsonl line once it has finished.
    ``number``: the game's number in the files when it is not ``k`` (a tournament numbers its
    games through the event; game ``k`` of a pairing is game ``k`` of the head-to-head series).
    :class:`FileGames` plays through the referee's files, ``ref_sim.series.codingame_games.StdioGames`` through
    stdin/stdout; ``stop`` (a threading.Event, set by :func:`play_games`) aborts the local ones."""

    logs: Path
    stop: threading.Event

    def submit(self, runner, k: int, must_start: bool, number: int | None = None):
        raise NotImplementedError

    def game_line(self, *result, k: int, number: int) -> GameLine:
        """The line of a game from what its game function returned (without the logs)."""
        raise NotImplementedError

    def forfeit_line(self, error: AgentCannotStart, *, k: int, number: int) -> GameLine:
        """The line of a game that never began because a side could not start (``error``): that
        side loses it, reason :data:`ref_sim.series.output.records.CANNOT_START`, and ``cannot_start``
        holds ``{name: why}`` of each side that could not (a tournament goes on)."""
        raise NotImplementedError

    def line(self, runner, ticket, k: int, number: int | None = None) -> GameLine | None:
        """The games.jsonl line of a finished game, its logs saved first when a worker sent
        them; None for a game the stop cut short: not a game, ``--resume`` plays it again."""
        try:
            result = ticket.result()    # a Played, or a tuple of it and the rest of the line's makings
            result = list(result) if isinstance(result, tuple) else [result]
            if runner.remote:
                *result, files = result
                shipping.save_files(self.logs, files)
        except OSError as error:        # its logs or record could not be written (disk full)
            raise records.WriteError(records.write_failed(
                error.filename or f"the files of game {number or k}", error)) from None
        game = self.game_line(*result, k=k, number=number or k)
        if self.stop.is_set() and game.result == "aborted":
            return None
        if runner.remote:
            game = replace(game, worker=ticket.worker, attempts=runner.attempts(ticket))
        return game


@dataclass(frozen=True)
class Stopped:
    """How :func:`play_games` ended early, if it did (else it is false): ``interrupt`` (Ctrl-C,
    or SIGTERM/SIGHUP through :mod:`ref_sim.stops`; a
    :class:`ref_sim.series.run.cluster_address.ClusterError`: a game lost every worker, or the
    scheduler went away; a :class:`ref_sim.series.output.records.WriteError`: the records cannot
    be written), ``cannot_start`` (:class:`AgentCannotStart`) or ``broken_pipe`` (the output
    closed)."""
    interrupt: BaseException | None = None
    cannot_start: AgentCannotStart | None = None
    broken_pipe: BrokenPipeError | None = None

    @property
    def error(self) -> BaseException | None:
        """The error that stopped the games, whichever it was; None when none did."""
        return self.interrupt or self.cannot_start or self.broken_pipe

    def __bool__(self) -> bool:
        return self.error is not None

    def raise_error(self) -> None:
        """Raise the error that stopped the games, if one did (a series played in-process)."""
        if self.error is not None:
            raise self.error


def play_games(runner, todo, submit, finished, stop: threading.Event, wanted=None,
               ordered: bool = False) -> Stopped:
    """Play ``todo`` through ``runner``, ``runner.capacity()`` games at once: ``submit(item)``
    starts one and returns its ticket, ``finished(item, ticket)`` takes each as it ends (games
    that end together in the order they were submitted; with ``ordered``, all in the order of
    ``todo``, and none after ``wanted()`` turned false: those in flight then are cancelled);
    ``wanted()`` false submits no more (an SPRT decided).  The loop of every series runner
    (:func:`ref_sim.series.run.scheduler.stream`): ref_sim.match, ref_sim.stdio, the tournament, the
    in-process series of ref_sim.arena and ref_sim.selfplay (on a
    :class:`ref_sim.series.run.scheduler.InlineRunner`), and scripts/train_eval.py's self-play.

    Returns how the games stopped early, a :class:`Stopped` (false when they did not).  Then,
    and on any other error, which goes on, the games in flight end
    first: a cluster's are cancelled (``--resume`` plays them again), local ones are told
    through ``stop`` (they abort, their agents killed) and each is handed to ``finished``, so
    that one that ended in time is kept."""
    window: list = []               # (ticket, item) submitted, not yet handed to finished
    stopped = Stopped()
    ended = False
    try:
        for item, ticket in scheduler.stream(runner, todo, submit, window, ordered=ordered,
                                           wanted=wanted):
            finished(item, ticket)
        ended = True
    except KeyboardInterrupt as error:
        stopped = Stopped(interrupt=error)
    except cluster_address.ClusterError as error:   # a game lost every worker, or the scheduler went away
        stopped = Stopped(interrupt=error)
    except records.WriteError as error:     # the records cannot be written: a full disk
        stopped = Stopped(interrupt=error)
    except AgentCannotStart as error:
        stopped = Stopped(cannot_start=error)
    except BrokenPipeError as error:
        stopped = Stopped(broken_pipe=error)
        silence_output(sys.stdout)
    finally:
        if window and (runner.remote or ended):     # ended: an ordered series was decided
            runner.cancel([ticket for ticket, _ in window])
        elif window:
            stop.set()
            for ticket, item in window:
                try:
                    finished(item, ticket)
                except (KeyboardInterrupt, AgentCannotStart, records.WriteError):
                    pass
                except BrokenPipeError:
                    silence_output(sys.stdout)
    return stopped


def append_game(path: Path, game: GameLine) -> None:
    """Add a finished game's line to games.jsonl, whole or not at all (:func:`ref_sim.series.output.records.append_line`)."""
    records.append_line(path, game.to_json())


# -- --out ------------------------------------------------------------------------------

def prepare_out(path: str, option: str = "--out") -> str | None:
    """Make ``--out`` (``option``: the option that names it) a directory, created with its
    parents if missing; None when it is ready, else why it cannot be used."""
    if os.path.exists(path) and not os.path.isdir(path):
        return f"{option} {path}: not a directory (it is a file)"
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as error:
        return f"{option} {path}: cannot create it ({error.strerror or error})"
    return None


# -- the end of a series ---------------------------------------------------------------

def went_wrong(game: GameLine) -> bool:
    """A game whose logs say why: a time-out, a bad move, a crash, a hang, an abort."""
    return (bool(game.notes) or game.reason in SHORT or game.result == "aborted"
            or bool(game.cannot_start))


def keep_logs(files) -> Path | None:
    """Move ``files`` (logs in a temporary series folder about to be deleted) into a new
    ``uttt-logs-*`` folder of the system's temporary directory, which is kept; returns it
    (None when there is nothing to keep)."""
    files = [path for path in files if path.exists()]
    if not files:
        return None
    kept = Path(tempfile.mkdtemp(prefix="uttt-logs-"))
    for path in files:
        shutil.move(str(path), str(kept / path.name))
    return kept


def game_logs(logs: Path, numbers) -> list[Path]:
    """Every file of ``logs`` that belongs to the games ``numbers``."""
    return [path for number in sorted(set(numbers))
            for path in sorted(logs.glob(f"game-{number:04d}[-.]*"))]


def stopped_line(module: str, interrupt: BaseException, games: int, out: str | None,
                 what: str = "series", resume_options: tuple[str, ...] = ()) -> str:
    """The stderr line of a series (``what``: or a tournament) stopped by Ctrl-C, a signal or a
    lost cluster: how many games were kept, and the command that continues it (runs as printed;
    ``resume_options``: what it repeats, e.g. --isolate, which --resume keeps anyway)."""
    if isinstance(interrupt, (cluster_address.ClusterError, records.WriteError)):
        text = f"Stopped: {interrupt}; the {what} stopped"
    else:
        said = stops.said(interrupt)
        text = f"{said[0].upper()}{said[1:]}"
    text += f" after {games} game{'' if games == 1 else 's'}"
    if out:
        return text + f"; continue the {what} with: " + stops.command_line(
            module, "--resume", "--out", out, *resume_options)
    return text + f" (the {what} was in a temporary directory, now deleted: with --out DIR " \
                  "it can be continued)"


def conclude(module: str, games: list[GameLine], report, *, out_arg: str | None, out: Path, say,
             progress=None, figures=None, stopped: Stopped = Stopped(), decided=None,
             what: str = "series", resume_options=(), more_lines=()) -> int:
    """The end of a run of games, however it ended (match, stdio, the tournament; ``stopped``:
    how :func:`play_games` ended): without ``--out`` (``out_arg``) the logs of the games that
    went wrong are moved out of the temporary folder ``out``; then the error, or the summary
    (``report(games)``, its lines) and where the files are, and after a stop the line that
    continues the ``what`` (series, tournament).  ``progress``: what showed the games, closed here; ``figures(games)``: its
    :class:`ref_sim.series.output.progress.Summary`, shown once more after a stop; ``more_lines``: printed
    after where the files are (read then: ``report`` may fill it), before the line that continues
    a stopped run, which is the last (``resume_options``: in its command).  Returns the exit code."""
    games.sort(key=lambda g: g.game)
    interrupt, cannot_start, broken_pipe = stopped.interrupt, stopped.cannot_start, stopped.broken_pipe
    logs = out / "logs"
    kept = None
    if not out_arg:         # the temporary folder goes: the logs that say what went wrong stay
        try:
            kept = keep_logs(game_logs(logs, [g.game for g in games if went_wrong(g)])
                             + ([cannot_start.log] if cannot_start else []))
        except OSError as error:    # a full disk: the summary still comes
            print(f"warning: the logs of the games that went wrong were not kept ({error})",
                  file=sys.stderr)
    if broken_pipe:
        say_error(stops.invoked_as(module), f"output closed (broken pipe) after "
                  f"{len(games)} games; the {what} stopped")
        return stops.EXIT_BROKEN_PIPE
    if progress is not None:
        if interrupt and games and figures is not None:
            progress.update(len(games), figures(games), stopped=True)
        progress.close()
    if cannot_start:
        log = kept / cannot_start.log.name if kept else cannot_start.log
        print(f"error: {cannot_start.name} could not start ({cannot_start.why}); its output: "
              f"{log}; the {what} stopped (a command that cannot start would lose every game)",
              file=sys.stderr)
        return 1
    if decided and not interrupt:
        say(f"SPRT decided ({decided} accepted) after {len(games)} games.")
    for line in report(games):
        print(line)
    for line in cluster.worker_lines([(g.worker, g.attempts, g.reason) for g in games], TIME_OUT):
        print(line)
    if out_arg:
        print(f"Games: {out / 'games.jsonl'}  logs: {logs}")
    elif kept:
        print(f"Logs of the games that went wrong: {kept} (kept; the rest were in the "
              "temporary directory, deleted: --out DIR keeps everything)")
    for line in more_lines:
        print(line)
    if interrupt:
        sys.stdout.flush()          # before the last line, on stderr
        print(stopped_line(module, interrupt, len(games), out_arg, what, tuple(resume_options)), file=sys.stderr)
        return (1 if isinstance(interrupt, (cluster_address.ClusterError, records.WriteError))
                else stops.exit_code(interrupt))
    return 0


# -- where a run plays: here or on a cluster ----------------------------------------------------

def concurrency_cap() -> int:
    """At most one game per core but one: each referee polls, each agent thinks."""
    return max(1, (os.cpu_count() or 2) - 1)


def capped_concurrency(wanted: int) -> int:
    """``--concurrency``, at most :func:`concurrency_cap` (said on stderr when it is less)."""
    if wanted <= concurrency_cap():
        return wanted
    print(f"warning: --concurrency {wanted} capped to {concurrency_cap()} ({os.cpu_count()} "
          "cores; each game needs a core for its referee and its players)", file=sys.stderr)
    return concurrency_cap()


def run_in(parser, address: cluster_address.ClusterTarget | None, out_arg: str | None, prefix: str, run,
           concurrency: int = 1, connect=cluster.connect) -> int:
    """``run(runner, out)``, its exit code: ``runner`` plays the games on the cluster at
    ``address`` (unreachable: a usage error), else ``concurrency`` at once here; ``out`` is
    ``--out`` (``out_arg``), or else a temporary folder (``prefix``) deleted at the end, once
    the runner is closed (after a stop the games in flight have ended already).  ``connect``:
    how the cluster is reached (:func:`ref_sim.series.run.cluster.connect`)."""
    try:
        runner = connect(address) if address else scheduler.LocalRunner(concurrency)
    except cluster_address.ClusterError as error:
        parser.error(str(error))
    out = Path(out_arg) if out_arg else Path(tempfile.mkdtemp(prefix=prefix))
    try:
        return run(runner, out)
    finally:
        try:
            runner.close()
        finally:
            if not out_arg:
                shutil.rmtree(out, ignore_errors=True)
