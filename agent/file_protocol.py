"""The file protocol of the CS 4341 referee (docs/protocol.md), played by :class:`FileProtocolAgent`.

One agent object plays one game in one referee directory and returns a :class:`GameSummary`.
What is on disk decides everything: :class:`agent.file_turns.TurnDecider` makes every decision
(no I/O), and this module does the looking, the waiting, the thinking and the writing around it,
reading with :class:`agent.referee_files.FileReader`, writing with
:class:`agent.referee_files.MoveWriter` and timing with :mod:`agent.clock` and :mod:`agent.pauses`.
What it survives and how: docs/protocol.md, "What a bot must survive".
"""

from __future__ import annotations

import codecs
import locale
import logging
import os
import random
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from .clock import (
    VANISH_GRACE,
    cutoff_for,
    default_margin,
    default_silence,
    file_deadlines,
    file_thinking_time,
    first_turn_keep_back,
    implausible_go_age,
    rename_retry_end,
)
from .engines import choose_legal, core_status
from .exits import (  # noqa: F401  (GameSummary.exit_code picks one; re-exported, as always)
    EXIT_ABORTED,
    EXIT_FINISHED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_PROTOCOL_ERROR,
    EXIT_USAGE,
)
from .lifeline import Lifeline, ReadyFile
from .limits import SearchLimit
from .pauses import RecentPauses, StallWatch, TurnTrace, tracing
from .referee_files import SYSTEM, FileLines, FileReader, Files, MoveWriter, stat_or_none
from .rules import Move, check_player_name, format_move_line
from .search_log import SearchLog
from .file_turns import (  # noqa: F401  (re-exported: the protocol's helpers have always lived here)
    END_FILE,
    MOVE_FILE,
    OPENING_FILE,
    Abort,
    Finish,
    Look,
    Play,
    ProtocolError,
    Seen,
    TurnDecider,
    Wait,
    first_word,
    judge_end_text,
    referee_last_line,
    referee_lines,
)
from .text import printable
from .watcher import POLL_INTERVAL, DirectoryWatcher

log = logging.getLogger(__name__)

#: The referee's clean-up (docs/protocol.md, "Clean-up: files the referee deletes") deletes every
#: name matching one of these.
CLEANUP_PATTERNS = (
    re.compile(r"move_file"),
    re.compile(r"end_game"),
    re.compile(r"first_four_moves"),
    re.compile(r"(:?.*).go"),
)


#: Longest time a quiet watchdog-backed loop trusts unchanged file identities without reading
#: the files (a backstop for filesystems whose events or timestamps miss a change).
FULL_LOOK_INTERVAL = 0.25
#: Looks at a directory whose files keep changing while they are read, before deciding anyway.
LOOK_ATTEMPTS = 3

def matches_cleanup(filename: str) -> bool:
    """True when the referee's start/exit clean-up would delete a file of this name."""
    return any(pattern.match(filename) for pattern in CLEANUP_PATTERNS)


def referee_encoding() -> str:
    """The encoding the referee's Python reads the protocol files with on this machine: ``open()``'s
    default, the locale's preferred encoding (UTF-8 on most Linux and macOS, cp1252 on Windows,
    Latin-1 under some locales; UTF-8 in Python's UTF-8 mode)."""
    return locale.getpreferredencoding(False)


def check_encoding(encoding: str) -> str:
    """The codec's canonical name; ValueError for an encoding Python does not know, or one that
    cannot read the referee's files: our ASCII move line must read as itself, as the referee must
    read it, and bytes it cannot decode are replaced, as the agent reads them. So rot13 or hex
    (not text codecs), utf-16 (not ASCII) and idna (no replacing) are refused before a game, not
    in the middle of one."""
    try:
        name = codecs.lookup(encoding).name
    except (LookupError, TypeError, ValueError):
        raise ValueError(f"unknown encoding {printable(str(encoding), 60)!r}") from None
    line = b"Walrus 4 5\n"
    try:
        fits = line.decode(name) == line.decode("ascii")
        b"\xff\x80".decode(name, errors="replace")
    except (LookupError, ValueError):  # UnicodeError is a ValueError
        fits = False
    if not fits:
        raise ValueError(f"encoding {printable(str(encoding), 60)!r} cannot read the referee's files "
                         "(an ASCII move line must read as itself)")
    return name


@dataclass
class GameSummary:
    """How the agent's game went. ``status`` is "finished", "aborted" or "protocol_error"."""

    name: str
    status: str
    end_text: str | None = None
    result: str | None = None  # "won", "lost", "tied" or None (unknown / no end_game)
    moves: int = 0  # moves this agent wrote
    message: str = ""

    @property
    def exit_code(self) -> int:
        return {"finished": EXIT_FINISHED, "aborted": EXIT_ABORTED}.get(self.status, EXIT_PROTOCOL_ERROR)

    def result_line(self) -> str:
        """The line printed on stdout, e.g. ``Walrus won: END: Walrus WINS! Otter LOSES! ...``."""
        if self.end_text is None:
            return f"{self.name}: no result ({self.message})"
        if self.result is None:
            return f"{self.name}: {printable(self.end_text)}"
        return f"{self.name} {self.result}: {printable(self.end_text)}"


def _identity(st) -> tuple:
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)




def _seen(st, lines: FileLines | None = None) -> Seen | None:
    if st is None:
        return None
    return Seen(_identity(st), st.st_mtime_ns, undecodable=lines is not None and lines.undecodable, lines=lines)


def _directory_gone(directory: Path) -> bool:
    """True when ``directory`` was deleted (or replaced by something else). A deleted working
    directory still stats as ``.``, with no links left."""
    try:
        st = os.stat(directory)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:  # we may not look (permissions): that is not "gone"
        return False
    return not stat.S_ISDIR(st.st_mode) or st.st_nlink == 0


class FileProtocolAgent:
    """Plays one game through the referee's files in ``directory`` (see the module docstring).

    ``engine`` is anything with ``choose(position, limit) -> SearchResult``; it is built by the
    caller before ``run()`` so the agent is ready before the first ``.go``. ``time_limit`` is the
    referee's limit in seconds; the engine gets ``cutoff_for(time_limit, margin)`` seconds counted
    from the ``.go`` file's mtime. ``depth`` and ``nodes`` go into every SearchLimit. ``grace``:
    seconds the files may be missing in a joined game; ``silence``: seconds without any change
    in them (default :func:`default_silence`, 0 for never) before the game counts as aborted.
    ``encoding``: how the referee decodes the files (default: the locale's, :func:`referee_encoding`).
    ``search_log``: where each move's figures go as a JSON line (:mod:`agent.search_log`).
    ``ready_file``: written once the agent watches the directory, removed when it ends
    (:class:`~agent.lifeline.ReadyFile`). ``files``: how the referee's files are reached
    (:class:`agent.referee_files.Files`: this machine's system calls and rule for refusals).
    """

    def __init__(
        self,
        name: str,
        directory,
        engine,
        *,
        time_limit: float = 10.0,
        margin: float | None = None,
        depth: int | None = None,
        nodes: int | None = None,
        use_watchdog: bool = True,
        poll_interval: float = POLL_INTERVAL,
        grace: float = VANISH_GRACE,
        silence: float | None = None,
        encoding: str | None = None,
        search_log: SearchLog | None = None,
        ready_file=None,
        files: Files = SYSTEM,
    ) -> None:
        self.name = check_player_name(name)
        self.ready_file = None if ready_file is None else ReadyFile(ready_file)
        self.search_log = search_log if search_log is not None else SearchLog(None, "file")
        self.encoding = check_encoding(referee_encoding() if encoding is None else encoding)
        self.directory = Path(directory)
        try:  # for the ready line, while the directory is surely there (``.`` cannot resolve once deleted)
            self._shown_directory = self.directory.resolve()
        except OSError:
            self._shown_directory = self.directory
        self.engine = engine
        self.time_limit = float(time_limit)
        self.margin = default_margin(self.time_limit) if margin is None else float(margin)
        self.cutoff = cutoff_for(self.time_limit, self.margin)
        #: Pauses of the recent turns, kept back from the cutoff: see :meth:`thinking_cutoff`.
        self.pauses = RecentPauses(unmeasured=first_turn_keep_back(self.time_limit))
        self.depth = depth
        self.nodes = nodes
        self.grace = grace
        self.silence = default_silence(self.time_limit) if silence is None else float(silence)
        self.decider = TurnDecider(self.name, time_limit=self.time_limit, grace=grace, silence=self.silence,
                                   encoding=self.encoding)
        self.move_path = self.directory / MOVE_FILE
        self.opening_path = self.directory / OPENING_FILE
        self.end_path = self.directory / END_FILE
        self.go_path = self.directory / f"{self.name}.go"
        self.files = files
        self.writer = MoveWriter(self.move_path, say_once=self._say_once, on_coarse=self._say_coarse,
                                 too_late=self._rewrite_too_late, files=files)
        #: Reads the protocol files as the referee does, each version once (agent.referee_files).
        self.reader = FileReader(self.encoding, files=files)
        self.watcher = DirectoryWatcher(self.directory, use_watchdog=use_watchdog, interval=poll_interval,
                                        names=(MOVE_FILE, OPENING_FILE, END_FILE, self.go_path.name))
        self._rng = random.Random()
        #: The series runner that started me, if one did: without it no referee will come.
        self.lifeline = Lifeline()
        self._settled: tuple | None = None  # identities at the last full look
        self._settled_at = 0.0
        self._said: set[str] = set()  # one-time log messages already given
        self._tracing = tracing()  # UTTT_TRACE_TURNS: log each turn's phases (agent.pauses.TurnTrace)
        self._woke = 0.0  # when the loop's last look began (the trace's first moment)

    @property
    def _game(self):
        """The game joined (the decider's), or None."""
        return self.decider.game

    @property
    def _error(self) -> str | None:
        return self.decider.error

    # -- the loop --------------------------------------------------------------------------------

    def run(self) -> GameSummary:
        """Play the game to its end (or abort) and return the summary. Never raises for game events."""
        self.watcher.start()
        try:
            # What an earlier game left is noted before the agent says it is ready: files that a referee
            # started on that word writes are then never mistaken for leftovers (a game ended before the
            # first look would be waited out for ever).
            self.decider.start(self._look(read=False))
            # The first line the agent prints only once it is watching: a runner that starts the
            # referee when an agent speaks (as ref_sim.match does) then cannot start it too early.
            core = core_status(self.engine)
            log.info("%s ready in %s: engine %s, limit %g s, thinking until %.3f s after each .go (margin %.2f s), "
                     "reading the files as %s%s", self.name, self._shown_directory,
                     getattr(self.engine, "name", type(self.engine).__name__), self.time_limit, self.cutoff, self.margin,
                     self.encoding, f"; {core}" if core else "")
            self._announce_ready()
            self._log_notes()
            full = True
            while True:
                if self.lifeline.lost():
                    return self._summary("aborted", message=f"the series runner that started me (pid "
                                         f"{self.lifeline.pid}) is gone: no referee will come")
                if self._tracing:
                    self._woke = time.time()
                action = self._step(full)
                if isinstance(action, Finish):
                    return self._finish(action.end_text)
                if isinstance(action, Abort):
                    return self._summary("aborted", message=action.message)
                if isinstance(action, Play):
                    self._play(action.go)
                    full = True
                elif action.again_in is not None:
                    self.watcher.wait(action.again_in)
                    full = True
                else:
                    # A watchdog event (or polling, which has none) calls for a full look; a quiet
                    # time-out only for the cheap check of the files' identities.
                    full = self.watcher.wait() or self.watcher.backend != "watchdog"
        finally:
            self.watcher.stop()
            self.writer.remove_temp()
            if self.ready_file is not None:
                self.ready_file.withdraw()

    def _announce_ready(self) -> None:
        """Write the ready file, if asked for one; a failure is said, and the game goes on."""
        if self.ready_file is None:
            return
        try:
            self.ready_file.announce()
        except OSError as error:
            log.warning("cannot write the ready file %s (%s): whoever waits for it will wait on",
                        self.ready_file.path, error.strerror or error)

    def _step(self, full: bool = True):
        """Look at the directory once and decide. ``full=False`` (a quiet watchdog time-out) skips
        reading the files when their identities are those of the last full look, less than
        ``FULL_LOOK_INTERVAL`` ago: reading move_file every 15 ms is most of what waiting costs."""
        now = time.monotonic()
        if not full and now - self._settled_at < FULL_LOOK_INTERVAL and self._identities() == self._settled:
            return Wait()
        look = self._look()
        self._settled, self._settled_at = look.identities(), now
        action = self.decider.decide(look)
        self._log_notes()
        return action

    def _identities(self) -> tuple:
        return tuple(self._identity_or_none(path) for path in (self.opening_path, self.move_path, self.end_path,
                                                          self.go_path))

    def _stat(self, path: Path):
        return stat_or_none(path, self.files)

    def _identity_or_none(self, path: Path):
        st = self._stat(path)
        return None if st is None else _identity(st)

    def _look(self, read: bool = True) -> Look:
        """What the directory shows now. ``NAME.go`` is looked at before ``end_game``: the referee
        writes ``end_game`` first and then touches both ``.go`` files, so a ``.go`` changed by the end
        never shows without its ``end_game``. Each file is decoded as the referee's Python decodes
        it (the locale's encoding or ``--encoding``, universal newlines). ``move_file`` and the
        opening are read while my ``.go`` exists, ``end_game`` whenever it does; a file that changes
        while it is read is looked at again."""
        for _ in range(LOOK_ATTEMPTS):
            opening, move = self._stat(self.opening_path), self._stat(self.move_path)
            go, end = self._stat(self.go_path), self._stat(self.end_path)
            texts = {}
            if read:
                if end is not None:
                    texts["end"] = self.reader.read(self.end_path)
                if go is not None:
                    texts["move"] = self.reader.read(self.move_path)
                    texts["opening"] = self.reader.read(self.opening_path)
            stable = not read or ((self._identity_or_none(self.go_path) == (go and _identity(go)))
                                  and self._identity_or_none(self.opening_path) == (opening and _identity(opening))
                                  and self._identity_or_none(self.move_path) == (move and _identity(move)))
            if stable:
                break
        return Look(opening=_seen(opening, texts.get("opening")), move=_seen(move, texts.get("move")),
                    end=_seen(end, texts.get("end")), go=_seen(go), now=time.monotonic(), wall=time.time(),
                    go_removed=self.go_path.name in self.watcher.take_removed(),
                    directory_gone=opening is None and _directory_gone(self.directory))

    def _log_notes(self) -> None:
        for note in self.decider.take_notes():
            if note.key is not None:
                if note.key in self._said:
                    continue
                self._said.add(note.key)
            log.log(note.level, "%s", note.message)

    # -- end of game -----------------------------------------------------------------------------

    def _finish(self, end_text: str) -> GameSummary:
        result = judge_end_text(self.name, end_text)
        if self.decider.error is not None:
            return self._summary("protocol_error", end_text=end_text, result=result, message=self.decider.error)
        message = "the game ended before my first turn" if self._game is None else "game over"
        return self._summary("finished", end_text=end_text, result=result, message=message)

    def _summary(self, status: str, **fields) -> GameSummary:
        moves = self._game.moves if self._game is not None else 0
        return GameSummary(name=self.name, status=status, moves=moves, **fields)

    # -- thinking and writing --------------------------------------------------------------------

    def thinking_cutoff(self) -> float:
        """Seconds after the .go the engine thinks this turn: the cutoff less the largest pause of
        the recent turns (time off the CPU while thinking, or a move landing late; the first turn,
        none measured yet, keeps back :func:`agent.clock.first_turn_keep_back`), never under
        ``PAUSE_FLOOR_SHARE`` of the time to the referee's last tick. On a quiet machine nothing
        is kept back after the first turn (9.0 s at 10 s); on a loaded one a pause near the
        deadline no longer pushes the move past the referee's last look."""
        return file_thinking_time(self.time_limit, self.cutoff, self.pauses.largest())

    def _deadlines(self, go: Seen) -> tuple[float, float]:
        """(cutoff, latest useful write) on the perf_counter clock, counted from the .go's mtime.

        On whole-second timestamps the .go was really created up to a granule after its mtime
        (but before now): thinking still counts from the mtime, the safe side, while writes go on
        until the latest moment the referee's limit can end."""
        now_wall, now_perf = time.time(), time.perf_counter()
        elapsed = now_wall - go.mtime
        if implausible_go_age(elapsed, self.time_limit, go.whole_seconds):
            log.warning("%s mtime is %.2f s %s; counting my time from now", self.go_path.name, abs(elapsed),
                        "in the future" if elapsed < 0 else "old")
            elapsed = 0.0
        think, write = file_deadlines(self.time_limit, self.thinking_cutoff(), elapsed, go.whole_seconds)
        return now_perf + think, now_perf + write

    def _rename_retry_end(self, go: Seen) -> float:
        """When (perf_counter) a refused rename stops being retried: :func:`agent.clock.rename_retry_end`
        after the .go's mtime (from now where that mtime is implausible, as :meth:`_deadlines`)."""
        elapsed = time.time() - go.mtime
        if implausible_go_age(elapsed, self.time_limit, go.whole_seconds):
            elapsed = 0.0
        return time.perf_counter() + rename_retry_end(self.time_limit) - max(elapsed, 0.0)

    def _turn_is_over(self, go_id: tuple) -> bool:
        """True once thinking is pointless: the runner that started me is gone, or the files say the
        turn of the .go ``go_id`` is over (the decider judges: end_game came, a new game began, that
        .go vanished or changed)."""
        if self.lifeline.lost():
            return True
        return self.decider.turn_is_over(self._stat_look(), go_id)

    def _stat_look(self) -> Look:
        """The files' identities now, for the checks while I think and write: nothing read, and the
        watcher's removals left for the next full look (they tell a new .go after my write)."""
        opening, end, go, move = (self._stat(path) for path in (self.opening_path, self.end_path, self.go_path,
                                                            self.move_path))
        return Look(opening=_seen(opening), move=_seen(move), end=_seen(end), go=_seen(go), now=time.monotonic(),
                    wall=time.time())

    def _play(self, go: Seen) -> None:
        """Think on the decider's position and write one move for ``go``, unless the turn ended meanwhile."""
        trace = TurnTrace(self._woke) if self._tracing else None
        if trace:
            trace.mark("noticed")
        game = self._game
        stalls = StallWatch()
        kept = self.pauses.largest()  # what this turn's deadline keeps back
        target = self.thinking_cutoff()  # seconds after the .go's mtime
        deadline, hard_deadline = self._deadlines(go)
        go_id = go.identity
        limit = SearchLimit(deadline=deadline, depth=self.depth, nodes=self.nodes,
                            should_stop=stalls.watching(lambda: self._turn_is_over(go_id)))
        result = choose_legal(self.engine, game.position, limit, self._rng)
        if trace:
            trace.mark_at("first-poll", stalls.first_poll)
            trace.mark_at("last-poll", stalls.last if stalls.polls else None)
            trace.mark("chosen")
        stalls.returned()
        if trace:
            trace.mark_at("stall-end", stalls.longest_ended)
        move = Move.from_index(result.move)
        # Last look before writing: only ever write during my own turn (docs/protocol.md,
        # "What a bot must survive", row "A move written outside your turn").
        self.watcher.take_removed()  # removals from before my write say nothing about the next turn
        if self._turn_is_over(go_id):
            self.pauses.record(late=0.0, stall=stalls.stall())
            self._explain_unwritten(move)
            return
        line = format_move_line(self.name, move)
        # A refused rename (Windows) is retried only while the write in place after it still lands in time.
        landed = self.writer.write(line, hard_deadline, retry_until=self._rename_retry_end(go))
        # Late: the first write after the planned deadline (later rewrites on coarse timestamps
        # are waits, not pauses).
        self.pauses.record(late=(landed or time.perf_counter()) - deadline, stall=stalls.stall())
        written_at = time.time()
        self.decider.wrote(line.strip(), go, move, written_at)
        took = written_at - go.mtime
        note = "  (proven)" if result.proven else ""
        if kept >= 0.001:
            note += f"  (kept back {kept * 1000:.0f} ms for pauses)"
        log.info("move %s  depth %d  score %+d  nodes %d  nps %.0f  %.3f s since .go%s",
                 move, result.depth, result.score, result.nodes, result.nodes_per_second, took, note)
        self.search_log.move(move.board, move.spot, took, result)
        if trace:
            trace.mark_at("written", landed)
            log.info("%s", trace.line(go.mtime, target, stalls.stall()))
        self._log_notes()

    def _explain_unwritten(self, move: Move) -> None:
        """The turn ended while I thought. Where my .go went away or changed without an end_game,
        say what the files show probably happened (docs/protocol.md, "What a bot must survive",
        row "Two bots started with the same name")."""
        if self.decider.game_moved_on(self._stat_look()):
            return
        lines = self.reader.read(self.move_path)
        self.decider.unwritten(move, lines.last if lines is not None else None)
        self._log_notes()

    def _rewrite_too_late(self) -> bool:
        """The game is over or my .go gone: a rewrite now could only land outside my turn."""
        go_id = self._identity_or_none(self.go_path)
        return go_id is None or self._turn_is_over(go_id)

    def _say_coarse(self) -> None:
        self.decider.note_coarse()
        self._log_notes()

    def _say_once(self, key: str, level: int, message: str) -> None:
        if key not in self._said:
            self._said.add(key)
            log.log(level, message)
