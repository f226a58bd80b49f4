"""A game's bots from their start to their end, for both protocols' games
(:mod:`ref_sim.series.file_games`, :mod:`ref_sim.series.codingame_games`): each started with the
runner's environment, its search log and ready file, its log headed by its command, contained
by ``--isolate`` (:func:`ref_sim.series.process.contain.start`: cgroup, sandbox, disk cap); the game
waiting until they are up (the ready file read bounded: :func:`ref_sim.series.process.launch.said_ready`);
their early exits noted; then each ended whole (:func:`ref_sim.stops.kill_tree`), measured
(:func:`ref_sim.series.process.metering.usage_of`), its logs cut to size, its scratch files and ready
file removed.  What :class:`GameBots` starts, leaving its ``with`` ends, whatever happened."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

from ref_sim import command_words, stops
from ref_sim.series.process import isolation, contain, metering, launch, turn_share
from ref_sim.series.output import telemetry
#: How often the exit watch looks at the bots (seconds).
EXIT_POLL = 0.02


class BotProcess:
    """One bot of one game: ``process`` (None: it could not be launched; its log says why), its
    ``log``, ``search_log`` and ``ready`` file, and its ``scratch`` files, removed at its end."""

    def __init__(self, name: str, command: list[str], process, log: Path,
                 search_log: Path | None = None, ready: Path | None = None, scratch=()) -> None:
        self.name, self.command, self.process = name, command, process
        self.log, self.search_log, self.ready = log, search_log, ready
        self.scratch = tuple(scratch)
        self._kill = lambda: stops.kill_tree(process)
        self.ended = False

    @classmethod
    def start(cls, name: str, command: list[str], log: Path, *,
              isolate: isolation.Isolation | None = None, directory: Path | None = None,
              env: dict | None = None, search_log: Path | None = None, ready: Path | None = None,
              piped: bool = False, scratch=()) -> BotProcess:
        """Start ``command``, its output into ``log`` after its command line: the project's
        environment (:func:`ref_sim.series.process.launch.child_env`) and ``env``; ``search_log``, the
        file it may write its moves' figures to (``UTTT_SEARCH_LOG``), ``ready``, the one it writes
        once it is up (``UTTT_READY_FILE``); in ``directory`` (the only folder an isolated bot may
        write) or, ``piped``, talking through stdin and stdout (its stderr into ``log``)."""
        env = {**launch.child_env(), **(env or {})}
        directory = None if directory is None else Path(directory).absolute()
        writable = [] if directory is None else [directory]
        if search_log is not None:
            search_log = search_log.absolute()
            env = telemetry.search_log_env(search_log, env)
            if isolate is not None:     # a sandbox lets it write this one file of logs/, not the folder
                search_log.touch()
                writable.append(search_log)
        if ready is not None:
            ready = ready.absolute()
            env = launch.ready_env(ready, env)
            writable.append(ready)
        if piped:
            streams = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "bufsize": 0}
        else:       # its working directory, as the real referee's: every path it is given is absolute
            streams = {"stdin": subprocess.DEVNULL, "stderr": subprocess.STDOUT, "cwd": directory}
        with open(log, "w", encoding="utf-8") as handle:
            handle.write(f"$ {command_words.join(command)}\n")
            handle.flush()
            streams["stderr" if piped else "stdout"] = handle
            try:
                # A session of its own (stops.start): Ctrl-C in the terminal stops the runner,
                # which stops the bots; and a process group that stops.kill_tree ends whole.
                process = contain.start(command, isolate, writable=writable, env=env, **streams)
            except (OSError, ValueError) as error:
                handle.write(f"could not start: {error}\n")
                process = None
        return cls(name, command, process, log, search_log, ready, scratch)

    def ends_with(self, kill) -> None:
        """End it with ``kill()`` instead (it must end the process tree: the referee's program
        also closes its pipes and stops reading them)."""
        self._kill = kill

    def exited(self) -> bool:
        """True once it is not running (or never was)."""
        return self.process is None or self.process.poll() is not None

    def exit_note(self) -> str:
        """Why it is not running: "could not start", or "exited with code N" (and its disk cap's
        word: :meth:`ref_sim.series.process.metering.MeteredPopen.disk_note`)."""
        if self.process is None:
            return "could not start"
        said = self.process.disk_note() if hasattr(self.process, "disk_note") else ""
        return f"exited with code {self.process.returncode}" + (f": {said}" if said else "")

    def kill(self) -> None:
        """End it at once, with everything it started or left running (again: no harm)."""
        self._kill()

    def end(self) -> None:
        """Kill it whole, cut its logs to size and remove its scratch and ready files (nothing
        rewrites them once it is gone); once."""
        if self.ended:
            return
        self.ended = True
        self.kill()
        for path in filter(None, (self.log, self.search_log)):    # bounded, whatever it wrote
            telemetry.trim_log(path)
        for path in filter(None, (*self.scratch, self.ready)):
            path.unlink(missing_ok=True)


class GameBots:
    """The bots of game ``number``, their files in ``logs`` (``game-NNNN-NAME.log``, its search
    log and ready file), by name in the order started; ``meter`` measures their turns
    (:mod:`ref_sim.series.process.turn_share`).  Leaving its ``with`` ends them all (:meth:`end`)."""

    def __init__(self, logs: Path, number: int) -> None:
        self.logs, self.number = logs, number
        self.bots: dict[str, BotProcess] = {}
        self.processes: dict = {}           # by name, the meter's view (filled as they start)
        self.meter = turn_share.TurnMeter(self.processes)

    def __enter__(self) -> GameBots:
        return self

    def __exit__(self, *exc) -> None:
        self.end()

    def start(self, name: str, command: list[str], **how) -> BotProcess:
        """Start ``name``'s bot (:meth:`BotProcess.start`, with ``how``) with this game's files."""
        self.bots[name] = bot = BotProcess.start(
            name, command, self.logs / f"game-{self.number:04d}-{name}.log",
            search_log=telemetry.search_log_path(self.logs, self.number, name),
            ready=launch.ready_path(self.logs, self.number, name), **how)
        self.processes[name] = bot.process
        return bot

    def wait_until_started(self, timeout: float, stop=None, patient=()) -> dict[str, float]:
        """:func:`ref_sim.series.process.launch.wait_until_started` for these bots."""
        return launch.wait_until_started(self.processes, self._logs(), timeout, stop,
                                         ready={name: bot.ready for name, bot in self.bots.items()},
                                         patient=patient)

    def refuse_early_exit(self) -> None:
        """:func:`ref_sim.series.process.launch.refuse_early_exit` for these bots (a series' first game)."""
        launch.refuse_early_exit(self.processes, self._logs())

    def _logs(self) -> dict:
        return {name: bot.log for name, bot in self.bots.items()}

    def all_exited(self) -> bool:
        return all(bot.exited() for bot in self.bots.values())

    def exits_noted(self, decided) -> ExitWatch:
        """An :class:`ExitWatch` of these bots."""
        return ExitWatch(self.bots, decided)

    def kill_lingering(self, wait: float, skip=()) -> list[str]:
        """Kill each bot (but ``skip``) still running after ``wait`` more seconds; their names."""
        lingering = []
        for name, bot in self.bots.items():
            if bot.process is None or name in skip:
                continue
            try:
                bot.process.wait(wait)
            except subprocess.TimeoutExpired:
                bot.kill()
                lingering.append(name)
        return lingering

    def kill(self) -> None:
        """End every bot at once (the series is stopping); :meth:`end` still follows."""
        for bot in self.bots.values():
            bot.kill()

    def end(self) -> dict | None:
        """End every bot (:meth:`BotProcess.end`); what each used (games.jsonl's ``usage``, None
        when nothing is known), measured once it is reaped."""
        for bot in self.bots.values():
            bot.end()
        return metering.usage_of(self.processes)


class ExitWatch:
    """In its ``with``, notes in the dict it gives each bot (``{name: BotProcess}``) that exits
    before ``decided()`` (its game's end is known), ``{name: exit note}``: complete once left."""

    def __init__(self, bots: dict, decided) -> None:
        self.bots, self.decided = bots, decided
        self.notes: dict[str, str] = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> dict[str, str]:
        self.thread.start()
        return self.notes

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()

    def _watch(self) -> None:
        while not self.done.wait(EXIT_POLL):
            for name, bot in self.bots.items():
                if name not in self.notes and bot.exited() and not self.decided():
                    self.notes[name] = bot.exit_note()
