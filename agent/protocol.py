"""The file protocol of the CS 4341 referee (PROTOCOL.md), played by :class:`FileProtocolAgent`.

One agent object plays one game in one referee directory and returns a :class:`GameSummary`.
What is on disk decides everything; the watcher only wakes the loop up early.

How the loop reads the directory (the numbers are PROTOCOL.md §8 cases):

* Every protocol file is read as the referee's Python reads ``move_file`` (:func:`referee_lines`):
  only ``\\n``, ``\\r`` and ``\\r\\n`` end a line, reading stops at the first blank line, and a line
  splits on whitespace (``\\x1c`` or ``\\x0b`` inside a line separate tokens; they end no line).
* The game is identified by ``first_four_moves``. Files older than it are stale (8); a game that
  had already ended when the agent started (``end_game`` at least as new as ``first_four_moves``)
  is ignored until a new ``first_four_moves`` appears, and so is a ``NAME.go`` that was already
  older than the referee's limit at start-up (a younger one is a live turn: answered at once).
  A ``first_four_moves`` replaced before any ``end_game`` is a new game (the old one was abandoned,
  its referee killed): the agent logs a warning and joins the new one.
* ``end_game`` is checked first on every look (11), and the agent returns once it has read it
  (13), whoever lingers. While the agent thinks, the search asks every 10 ms whether
  ``end_game`` appeared (or the ``.go`` vanished) and stops at once if so.
* It is my turn when ``NAME.go`` is current *and* the content of ``move_file`` says so: empty
  while I am p1 and have not moved, or its last line is the opponent's and is not a move I
  already answered (1). The ``.go`` alone means nothing: mine lingers ~50 ms after I move. I
  never wait for it to vanish (2).
* The opening is read only once my ``.go`` is current (10). The first ``.go`` must meet a fresh
  game (empty ``move_file`` for p1; for p2 one opponent line and a ``.go`` at most about one turn
  newer than ``first_four_moves``); otherwise the agent says it was started after the game began
  and waits for ``end_game`` (9).
* The opponent's move is checked against my own position; a malformed, misnamed or illegal
  move is reported and the agent waits for ``end_game`` (16). A move in my name that I did not
  write, or my ``.go`` vanishing while I think, means a second agent plays under my name; an
  ``end_game`` that times me out before my own limit means the referee's limit is shorter than
  mine: both are said plainly in the log.
* A move is one complete line written to a temp file in the same directory and renamed onto
  ``move_file`` (3, 4, 5, 15), only after checking it is still my turn (6), and rewritten until
  its mtime is seen to go up (7), on coarse timestamps until the referee's latest possible
  limit. Where the rename is refused (a sticky shared directory, ``move_file`` owned by another
  user) the line is written into ``move_file`` in place by one write. Every retry stops at the
  referee's limit.
* The thinking cutoff leaves room for the referee's 50 ms poll tick: only ticks before the limit
  count (:func:`last_tick`), so at 0.1 s the move must land before the 50 ms tick. On a loaded
  machine the OS may take the process off the CPU near that deadline: each turn measures its
  time off the CPU while thinking and how late the move landed, and the next turns' cutoff keeps
  back the largest of these over the last 20 turns (:mod:`agent.pauses`, shared with the
  CodinGame protocol), never under a quarter of the time to the last tick; ~0 on a quiet machine.
* Missing files are normal while waiting (12); once the game is joined, protocol files missing
  for longer than ``grace`` seconds mean the referee is gone, and so does a directory where nothing
  changes for ``silence`` seconds (a killed referee leaves its files): the game is reported aborted.
"""

from __future__ import annotations

import codecs
import errno
import locale
import logging
import math
import os
import random
import re
import time
from dataclasses import dataclass
from pathlib import Path

from .limits import SearchLimit, SearchResult
from .pauses import RecentPauses, ThinkingClock
from .rules import (
    O,
    X,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    Position,
    check_player_name,
    format_move_line,
    parse_move_line,
)
from .watcher import POLL_INTERVAL, DirectoryWatcher

log = logging.getLogger(__name__)

MOVE_FILE = "move_file"
OPENING_FILE = "first_four_moves"
END_FILE = "end_game"

#: The referee's clean-up (PROTOCOL.md §7) deletes every name matching one of these.
CLEANUP_PATTERNS = (
    re.compile(r"move_file"),
    re.compile(r"end_game"),
    re.compile(r"first_four_moves"),
    re.compile(r"(:?.*).go"),
)

#: Name of the brief temp file a move is written to before the rename. It holds neither the
#: player name (which may contain "go") nor any protocol prefix, so no clean-up pattern matches.
#: One writer at a time: only the player whose turn it is writes, and self-play uses two
#: processes whose turns never overlap; the pid keeps a crashed writer's leftover apart anyway.
TEMP_NAME_TEMPLATE = "~uttt-move-{pid}.tmp"

# Exit codes of the command line; GameSummary.exit_code picks one.
EXIT_FINISHED = 0  # end_game read: won, lost or tied
EXIT_INTERNAL = 1  # a bug in the agent itself
EXIT_USAGE = 2  # bad command line: name, directory, log file, engine
EXIT_ABORTED = 3  # no end_game will come: the protocol files vanished, or nothing changed for ``silence`` s
EXIT_PROTOCOL_ERROR = 4  # end_game read, but the game could not be followed (late start, bad move)
EXIT_INTERRUPTED = 130  # Ctrl-C

#: Default seconds the protocol files may be missing in a joined game before it counts as aborted.
VANISH_GRACE = 2.0

#: How many times a rename onto move_file is retried on PermissionError (Windows, §8.15), each
#: retry only while the referee's limit allows it; then the line is written in place.
REPLACE_ATTEMPTS = 20
REPLACE_RETRY_SLEEP = 0.01
#: Windows refuses a rename while another process has the target open: retrying helps. On POSIX
#: a refused rename stays refused (sticky directory, move_file owned by another user): write in
#: place at once.
RENAME_REFUSAL_IS_TRANSIENT = os.name == "nt"

#: Longest time a quiet watchdog-backed loop trusts unchanged file identities without reading
#: the files (a backstop for filesystems whose events or timestamps miss a change).
FULL_LOOK_INTERVAL = 0.25

#: The referee's poll period (PROTOCOL.md §4.2): it looks for a move at start + k * TICK only
#: while that is under the limit.
REFEREE_TICK = 0.05

#: Share of the time to the referee's last tick the agent thinks at short limits (:func:`cutoff_for`).
SHORT_LIMIT_SHARE = 0.3

#: However long the pauses kept back (:mod:`agent.pauses`), the engine still thinks this share of
#: the time to the referee's last tick.
PAUSE_FLOOR_SHARE = 0.25
#: Time off the CPU while thinking counts over at most this many seconds of thought: a long turn
#: holds several pauses a short one would not meet, and only the longest is a danger. Short
#: limits (0.5 s: 0.3 s of thought) count all of it.
OFF_CPU_SPAN = 0.5

#: The coarsest file timestamps an agent may meet (FAT: 2 s). On a filesystem whose timestamps are
#: whole seconds, a .go was really created up to this long after its mtime says.
COARSEST_TIMESTAMP = 2.0

#: At p2's first turn in a fresh game, its .go comes one p1 turn (at most the limit) after
#: first_four_moves, plus the referee's own delays: this much slack on top of the limit.
FIRST_TURN_SLACK = 1.0


def default_silence(time_limit: float) -> float:
    """Seconds without any change in a joined game's files before it counts as aborted: ``max(3 * limit, 30)``.

    Nothing legitimate keeps a live game silent for much longer than one limit: the referee calls
    a time-out at the limit. Three limits, and never under 30 s, leave room for an agent started
    with a shorter ``--time-limit`` than the referee's, and for a badly stalled machine.
    """
    return max(3.0 * time_limit, 30.0)

#: Pause between two writes when move_file's mtime did not go up (coarse timestamps, §4.8).
REWRITE_PAUSE = 0.05

_END_WIN = re.compile(r"END:\s*(\S+)\s+WINS!\s*(\S+)\s+LOSES!\s*(.*)")
_END_TIE = re.compile(r"END:\s*Match TIED!")


def default_margin(time_limit: float) -> float:
    """Seconds kept between the agent's cutoff and the referee's limit: ``max(0.1 * limit, 0.2)``.

    At the tournament's 10 s this is 1 s: the move lands at about 9 s, leaving room for the
    referee's last 50 ms tick (~9.95 s), the time to notice the ``.go``, a search that overruns
    its deadline, and a loaded machine. At short test limits the 0.2 s floor still leaves
    several referee ticks of slack.
    """
    return max(0.1 * time_limit, 0.2)


def last_tick(time_limit: float) -> float:
    """Seconds after the ``.go`` of the referee's last look for a move: the last multiple of its
    50 ms tick strictly under the limit (9.95 s at 10 s, 0.05 s at 0.1 s; 0 when none counts).

    >>> round(last_tick(10), 3), round(last_tick(0.1), 3), round(last_tick(0.12), 3)
    (9.95, 0.05, 0.1)
    """
    ticks = math.ceil(round(time_limit / REFEREE_TICK, 6)) - 1
    return max(ticks, 0) * REFEREE_TICK


def cutoff_for(time_limit: float, margin: float | None = None) -> float:
    """Thinking budget from the ``.go`` creation: ``limit - margin``, never past the referee's last
    tick, and never under ``SHORT_LIMIT_SHARE`` (30 %) of the time to that tick.

    The floor matters at rehearsal limits (under ~0.4 s), where ``limit - margin`` leaves nothing:
    at 0.1 s only the 50 ms tick sees a move, so the agent thinks 15 ms and keeps 35 ms for
    noticing the ``.go``, stopping the search and writing (about 7 ms on an idle machine, past
    20 ms on a loaded one).
    """
    if margin is None:
        margin = default_margin(time_limit)
    tick = last_tick(time_limit)
    return max(min(time_limit - margin, tick), SHORT_LIMIT_SHARE * tick)


def temp_name(pid: int | None = None) -> str:
    return TEMP_NAME_TEMPLATE.format(pid=os.getpid() if pid is None else pid)


def matches_cleanup(filename: str) -> bool:
    """True when the referee's start/exit clean-up would delete a file of this name."""
    return any(pattern.match(filename) for pattern in CLEANUP_PATTERNS)


def referee_lines(text: str) -> list[str]:
    """The lines of a protocol file as the referee's Python reads them, stripped.

    Text mode's universal newlines: only ``\\n``, ``\\r`` and ``\\r\\n`` end a line (not
    ``str.splitlines()``'s ``\\x0b \\x0c \\x1c-\\x1e \\x85 \\u2028 \\u2029``, which stay inside the
    line, where ``str.split()`` later treats them as spaces, as the referee's does). Reading stops
    at the first blank line (``str.isspace()``, the referee's test).

    >>> referee_lines("A 1 2\\r\\nB 2 3\\x1cjunk\\n\\nC 4 5\\n")
    ['A 1 2', 'B 2 3\\x1cjunk']
    """
    lines = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line.strip():  # blank (or the empty rest after a final newline): the referee stops
            break
        lines.append(line.strip())
    return lines


def referee_last_line(text: str) -> tuple[int, str] | None:
    """The line the referee would read from ``move_file``: the last one before the first blank line.

    Returns ``(line_number, line)`` (1-based, stripped) or None for an empty read.

    >>> referee_last_line("Otter 2 4\\n")
    (1, 'Otter 2 4')
    >>> referee_last_line("A 1 2\\nB 2 3\\n\\nC 4 5\\n")
    (2, 'B 2 3')
    >>> referee_last_line("\\nA 1 2\\n") is None
    True
    """
    lines = referee_lines(text)
    return (len(lines), lines[-1]) if lines else None


def printable(text: str, limit: int = 200) -> str:
    """``text`` made safe for one log or stdout line: unprintable characters as ``?``, cut at ``limit``."""
    shown = "".join(char if char.isprintable() else "?" for char in text[:limit])
    return shown + ("..." if len(text) > limit else "")


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


def judge_end_text(name: str, text: str) -> str | None:
    """'won', 'lost' or 'tied' for ``name`` from the end_game text, or None if it does not say."""
    if _END_TIE.match(text):
        return "tied"
    match = _END_WIN.match(text)
    if match:
        if match.group(1) == name:
            return "won"
        if match.group(2) == name:
            return "lost"
    return None


class ProtocolError(Exception):
    """The game on disk cannot be followed (reported, then the agent waits for end_game)."""


class GameAborted(Exception):
    """The referee's files are gone or went silent; there will be no end_game."""


@dataclass
class _Game:
    """What the agent knows about the game it joined."""

    opening_id: tuple
    opening_mtime_ns: int
    position: Position
    side: int  # X (p1) or O (p2)
    opponent: str | None  # None when the opening used X/O instead of names
    answered: str | None = None  # last opponent line already played on the position
    written: str | None = None  # last line this agent wrote (without newline)
    written_at: float | None = None  # wall time of that write
    turn_go_mtime: float | None = None  # mtime of the .go of my latest turn
    moves: int = 0


def _stat(path: Path):
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _identity(st) -> tuple:
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


def _identity_or_none(path: Path):
    st = _stat(path)
    return None if st is None else _identity(st)


def _whole_seconds(*stats) -> bool:
    """True when every timestamp is a whole second: a filesystem with coarse timestamps (§4.8).
    A fine-grained filesystem shows this by chance about once in 10^9 per file."""
    return all(st is not None and st.st_mtime_ns % 1_000_000_000 == 0 for st in stats)


def referee_encoding() -> str:
    """The encoding the referee's Python reads the protocol files with on this machine: ``open()``'s
    default, the locale's preferred encoding (UTF-8 on most Linux and macOS, cp1252 on Windows,
    Latin-1 under some locales; UTF-8 in Python's UTF-8 mode)."""
    return locale.getpreferredencoding(False)


def check_encoding(encoding: str) -> str:
    """The codec's canonical name, or ValueError for an encoding Python does not know."""
    try:
        return codecs.lookup(encoding).name
    except (LookupError, TypeError, ValueError):
        raise ValueError(f"unknown encoding {printable(str(encoding), 60)!r}") from None


def _read_text(path: Path, encoding: str = "utf-8") -> str | None:
    # Open, read, close at once: never hold a protocol file open (Windows renames, §8.15).
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except PermissionError:  # Windows: the file is being replaced right now; look again later
        return None
    return data.decode(encoding, errors="replace")


class FileProtocolAgent:
    """Plays one game through the referee's files in ``directory`` (see the module docstring).

    ``engine`` is anything with ``choose(position, limit) -> SearchResult``; it is built by the
    caller before ``run()`` so the agent is ready before the first ``.go``. ``time_limit`` is the
    referee's limit in seconds; the engine gets ``cutoff_for(time_limit, margin)`` seconds counted
    from the ``.go`` file's mtime. ``depth`` and ``nodes`` go into every SearchLimit. ``grace``:
    seconds the files may be missing in a joined game; ``silence``: seconds without any change
    in them (default :func:`default_silence`, 0 for never) before the game counts as aborted.
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
    ) -> None:
        self.name = check_player_name(name)
        #: How the referee decodes the files on this machine (None: the locale's, as its Python does).
        self.encoding = check_encoding(referee_encoding() if encoding is None else encoding)
        self.directory = Path(directory)
        self.engine = engine
        self.time_limit = float(time_limit)
        self.margin = default_margin(self.time_limit) if margin is None else float(margin)
        self.cutoff = cutoff_for(self.time_limit, self.margin)
        #: Pauses of the recent turns, kept back from the cutoff: see :meth:`thinking_cutoff`.
        self.pauses = RecentPauses()
        self.depth = depth
        self.nodes = nodes
        self.grace = grace
        self.silence = default_silence(self.time_limit) if silence is None else float(silence)
        self.move_path = self.directory / MOVE_FILE
        self.opening_path = self.directory / OPENING_FILE
        self.end_path = self.directory / END_FILE
        self.go_path = self.directory / f"{self.name}.go"
        self.temp_path = self.directory / temp_name()
        assert not matches_cleanup(self.temp_path.name), self.temp_path.name
        self.watcher = DirectoryWatcher(self.directory, use_watchdog=use_watchdog, interval=poll_interval,
                                        names=(MOVE_FILE, OPENING_FILE, END_FILE, self.go_path.name))
        self._rng = random.Random()
        self._game: _Game | None = None
        self._error: str | None = None  # set once the game cannot be followed
        self._error_opening_id: tuple | None = None  # the game that error belongs to
        self._finished_game_id: tuple | None = None  # a game that had ended before we started
        self._startup_game_id: tuple | None = None
        self._startup_go_id: tuple | None = None
        self._missing_since: float | None = None
        self._last_seen: tuple | None = None  # identities of the protocol files at the last look
        self._changed_at = time.monotonic()  # when they last changed
        self._settled: tuple | None = None  # identities at the last full look that changed nothing
        self._settled_at = 0.0
        self._said: set[str] = set()  # one-time log messages already given

    # -- the loop --------------------------------------------------------------------------------

    def run(self) -> GameSummary:
        """Play the game to its end (or abort) and return the summary. Never raises for game events."""
        self.watcher.start()
        # The first line the agent prints only once it is watching: a runner that starts the
        # referee when an agent speaks (as ref_sim.match does) then cannot start it too early.
        log.info("%s ready in %s: engine %s, limit %g s, thinking until %.3f s after each .go (margin %.2f s)",
                 self.name, self.directory.resolve(), getattr(self.engine, "name", type(self.engine).__name__),
                 self.time_limit, self.cutoff, self.margin)
        try:
            self._snapshot_startup()
            full = True
            while True:
                try:
                    summary = self._step(full)
                except GameAborted as aborted:
                    summary = self._summary("aborted", message=str(aborted))
                if summary is not None:
                    return summary
                # A watchdog event (or polling, which has none) calls for a full look; a quiet
                # time-out only for the cheap check of the files' identities.
                full = self.watcher.wait() or self.watcher.backend != "watchdog"
        finally:
            self.watcher.stop()
            self._remove_temp()

    def _snapshot_startup(self) -> None:
        """Remember what an earlier game left behind, so it is not mistaken for ours (§8.8)."""
        opening, end, go = _stat(self.opening_path), _stat(self.end_path), _stat(self.go_path)
        if opening is None:
            return
        if end is not None and end.st_mtime_ns >= opening.st_mtime_ns:
            self._finished_game_id = _identity(opening)
            log.info("%s holds a game that ended before I started; waiting for a new %s", self.directory, OPENING_FILE)
            return
        self._startup_game_id = _identity(opening)
        # A live turn's .go is younger than the limit: past it the referee has already called a
        # time-out. A younger one is my turn, started late (a loaded machine): answer at once
        # with the time left rather than lose on time. An older one is a killed referee's.
        if go is not None and time.time() - go.st_mtime > self.time_limit:
            self._startup_go_id = _identity(go)
        log.info("%s already holds a game (in progress, or left by a killed referee); "
                 "I only play it if my first turn there looks like a fresh start", self.directory)

    def _step(self, full: bool = True) -> GameSummary | None:
        """Look at the directory once and act. Returns the summary once the game is over.

        ``full=False`` (a quiet watchdog time-out) skips reading the files when their identities are
        those of the last full look, less than ``FULL_LOOK_INTERVAL`` ago: a look reads move_file,
        and a full look every 15 ms is most of what a waiting agent costs."""
        opening = _stat(self.opening_path)
        move = _stat(self.move_path)
        if opening is None or (self._game is not None and move is None):
            self._note_missing()
            return None
        opening_id = _identity(opening)
        if opening_id == self._finished_game_id:
            return None
        self._missing_since = None
        followed = self._game.opening_id if self._game is not None else self._error_opening_id
        if followed is not None and opening_id != followed:
            log.warning("%s was replaced before my game ended: that game was abandoned (its referee was "
                        "stopped or killed); joining the new one", OPENING_FILE)
            self._game, self._error, self._error_opening_id = None, None, None
        seen = self._check_silence(opening, move)
        now = time.monotonic()
        if not full and seen == self._settled and now - self._settled_at < FULL_LOOK_INTERVAL:
            return None
        self._settled, self._settled_at = seen, now

        end_text = self._read_end_game(opening)
        if end_text is not None:
            return self._finish(end_text)
        if self._error is not None:
            return None  # waiting for end_game

        go = _stat(self.go_path)
        if go is None or go.st_mtime_ns < opening.st_mtime_ns:
            return None  # not my turn, or a .go left from an earlier game
        if opening_id == self._startup_game_id and _identity(go) == self._startup_go_id:
            return None  # a .go that was already older than the limit when I started
        try:
            self._take_turn_if_mine(opening, go)
        except ProtocolError as error:
            self._error = str(error)
            self._error_opening_id = self._game.opening_id if self._game is not None else opening_id
            log.error("%s; waiting for end_game", error)
        return None

    def _note_missing(self) -> None:
        if self._game is None:
            return  # no game joined yet: nothing to lose, keep waiting
        now = time.monotonic()
        if self._missing_since is None:
            self._missing_since = now
            log.debug("protocol files missing; giving the referee %.1f s", self.grace)
        elif now - self._missing_since > self.grace:
            raise GameAborted(f"the referee's files ({OPENING_FILE}, {MOVE_FILE}) vanished from {self.directory} "
                              f"for more than {self.grace:g} s without an end_game: the referee was stopped")

    def _check_silence(self, opening, move) -> tuple:
        """A killed referee leaves its files as they were: a game where nothing changes for
        ``silence`` seconds is over. Counted only in a game that started after me, or that I joined
        and that is not a start-up leftover (that one may stay silent until the next referee)."""
        seen = (_identity(opening), _identity(move) if move is not None else None,
                _identity_or_none(self.end_path), _identity_or_none(self.go_path))
        now = time.monotonic()
        if seen != self._last_seen:
            self._last_seen, self._changed_at = seen, now
            return seen
        if self.silence <= 0 or seen[0] in (self._startup_game_id, self._finished_game_id):
            return seen
        if now - self._changed_at > self.silence:
            raise GameAborted(f"nothing changed in the referee's files in {self.directory} for {self.silence:g} s "
                              f"(more than any turn at my limit of {self.time_limit:g} s) and no end_game: "
                              "the referee was probably killed")
        return seen

    # -- end of game -----------------------------------------------------------------------------

    def _current_end_game(self, opening) -> bool:
        end = _stat(self.end_path)
        return end is not None and end.st_mtime_ns >= opening.st_mtime_ns

    def _read_end_game(self, opening) -> str | None:
        """The first line of a current end_game (at least as new as first_four_moves), else None."""
        end = _stat(self.end_path)
        if end is None:
            return None
        if end.st_mtime_ns < opening.st_mtime_ns:
            self._say_once("stale-end", logging.INFO, "ignoring an end_game older than first_four_moves "
                           "(left from an earlier game)")
            return None
        text = _read_text(self.end_path, self.encoding)
        # The referee may be between creating and writing it: give it a moment to fill in.
        for _ in range(20):
            if text:
                break
            time.sleep(0.01)
            text = _read_text(self.end_path, self.encoding)
        lines = referee_lines(text or "")
        self._explain_time_out(lines[0] if lines else "", end)
        return lines[0] if lines else ""

    def _explain_time_out(self, end_text: str, end) -> None:
        """A time-out of mine that came before my own limit: the referee's limit is shorter (§14)."""
        game = self._game
        match = _END_WIN.match(end_text)
        if game is None or game.turn_go_mtime is None or not match or match.group(2) != self.name:
            return
        if "Time out" not in match.group(3):
            return
        after = end.st_mtime - game.turn_go_mtime
        if 0 <= after < self.time_limit - REFEREE_TICK:
            log.warning("the referee timed me out %.2f s after my .go, before my --time-limit of %g s: its limit is "
                        "probably shorter than mine; start me with the referee's --time-limit", after, self.time_limit)

    def _finish(self, end_text: str) -> GameSummary:
        result = judge_end_text(self.name, end_text)
        if self._error is not None:
            return self._summary("protocol_error", end_text=end_text, result=result, message=self._error)
        if self._game is None:
            message = "the game ended before my first turn"
        else:
            message = "game over"
        return self._summary("finished", end_text=end_text, result=result, message=message)

    def _summary(self, status: str, **fields) -> GameSummary:
        moves = self._game.moves if self._game is not None else 0
        return GameSummary(name=self.name, status=status, moves=moves, **fields)

    # -- turns -----------------------------------------------------------------------------------

    def _take_turn_if_mine(self, opening, go) -> None:
        text = _read_text(self.move_path, self.encoding)
        if text is None or _identity_or_none(self.go_path) != _identity(go):
            self._settled = None  # it vanished or the turn moved on while reading: look again, fully
            return
        last = referee_last_line(text)
        if self._game is None:
            self._join(opening, go, last)
        game = self._game

        if last is None:
            if game.position.ply == 4 and game.side == X and game.written is None:
                self._play(go)  # move 5
            return
        number, line = last
        if line == game.written:
            return  # my own move: my .go is lingering (§8.1)
        if line != game.answered and not self._account_opponent(number, line, text):
            self._settled = None  # the text was still changing: look again, fully
            return
        if game.position.turn == game.side and game.position.winner is None:
            self._play(go)

    def _join(self, opening, go, last) -> None:
        """Read the opening (now that my .go is current, §8.10) and check the game is fresh (§8.9)."""
        opening_text = _read_text(self.opening_path, self.encoding) or ""
        lines = referee_lines(opening_text)
        if len(lines) < 4:
            # Not complete yet (it should be by now); look again before calling it broken.
            time.sleep(0.02)
            opening_text = _read_text(self.opening_path, self.encoding) or ""
            lines = referee_lines(opening_text)
        if len(lines) != 4:
            raise ProtocolError(f"{OPENING_FILE} has {len(lines)} lines before its first blank line, expected 4: "
                                f"{printable(opening_text)!r}")
        position = Position()
        names = []
        for number, line in enumerate(lines, start=1):
            try:
                player, move = parse_move_line(line)
                position.play(move)
            except (InvalidMoveError, IllegalMoveError) as error:
                raise ProtocolError(f"{OPENING_FILE} line {number}: {line!r}: {error}") from None
            names.append(player)
        p1, p2 = names[0], names[1]
        if names[2:] != [p1, p2] or p1 == p2:
            raise ProtocolError(f"{OPENING_FILE} names {' / '.join(names)}: lines 1 and 3 must be one player's, "
                                "2 and 4 the other's")
        if self.name == p1:
            side, opponent = X, p2
        elif self.name == p2:
            side, opponent = O, p1
        elif {p1, p2} <= {"X", "O"}:
            # Older referee versions write X/O: the state of move_file at my first .go tells.
            opponent = None
            side = X if last is None or last[1].split()[0] == self.name else O
        else:
            raise ProtocolError(f"{OPENING_FILE} names {p1!r} and {p2!r}, not me ({self.name!r})")
        # Identify the game by the file as it is now, complete: the stat taken before my .go
        # appeared may have caught the referee in the middle of writing it.
        opening = _stat(self.opening_path) or opening
        self._game = _Game(_identity(opening), opening.st_mtime_ns, position, side, opponent)
        log.info("game joined: I am %s (p%d) against %s; opening %s", self.name, side + 1, opponent or "?",
                 " / ".join(lines))
        if _whole_seconds(opening, go, _stat(self.move_path)):
            self._say_coarse()
        if side == X:
            fresh = last is None
        else:
            fresh = last is not None and last[1].split()[0] != self.name
        if not fresh:
            raise ProtocolError(self._late_message(last))
        if side == O:
            # p1's whole first turn lies between the opening and my first .go: at most one limit.
            # (On whole-second timestamps both are cut down, by at most one granule each.)
            gap = (go.st_mtime_ns - opening.st_mtime_ns) / 1e9
            allowed = self.time_limit + FIRST_TURN_SLACK + (COARSEST_TIMESTAMP if _whole_seconds(opening, go) else 0)
            if gap > allowed:
                raise ProtocolError(
                    f"started after the game began: my first .go came {gap:.1f} s after {OPENING_FILE}, more than "
                    f"one turn of p1 can take ({self.time_limit:g} s + {FIRST_TURN_SLACK:g} s), so {MOVE_FILE}'s "
                    f"{last[1]!r} is not p1's first move; I will not play from a position I did not see "
                    "(if the referee's --time-limit is longer than mine, start me with the referee's)")

    def _late_message(self, last) -> str:
        shown = "empty" if last is None else f"holds {last[1]!r} (line {last[0]})"
        hint = ""
        if last is not None and last[1].split()[0] == self.name:
            hint = (f"; a move in my name that I did not write: another agent named {self.name!r} is probably "
                    "playing in this directory")
        return (f"started after the game began: at my first turn {MOVE_FILE} is {shown}, which a fresh game "
                f"cannot show; I will not play from a position I did not see{hint}")

    def _account_opponent(self, number: int, line: str, text: str) -> bool:
        """Parse and check the opponent's move, then play it on my position (§8.16).

        Returns False (look again) when a bad-looking line turns out to be still changing."""
        try:
            move = self._check_opponent(number, line)
        except ProtocolError:
            # A non-atomic writer could still be busy: judge only text that stays the same.
            time.sleep(0.005)
            if _read_text(self.move_path, self.encoding) != text:
                return False
            raise
        game = self._game
        player = line.split()[0]
        game.position.play(move)
        if game.opponent is None:
            game.opponent = player
        game.answered = line
        self._note_opponent_time()
        log.debug("%s played %s", player, move)
        return True

    def _check_opponent(self, number: int, line: str) -> Move:
        """The opponent's move in ``line`` if the referee accepted it on my position, else ProtocolError."""
        game = self._game
        where = f"{MOVE_FILE} line {number}"
        try:
            player, move = parse_move_line(line)
        except InvalidMoveError as error:
            raise ProtocolError(f"{where}: {error}") from None
        if player == self.name:
            raise ProtocolError(f"{where}: {line!r} is in my name but is not the move I wrote ({game.written!r}): "
                                f"another agent named {self.name!r} is probably playing in this directory "
                                "(two agents started with one name)")
        if game.opponent is not None and player != game.opponent:
            raise ProtocolError(f"{where}: {line!r} is not from my opponent {game.opponent!r}")
        if game.position.turn == game.side:
            raise ProtocolError(f"{where}: {line!r} arrived while it was my move")
        if not game.position.is_legal(move.index):
            hint = " (or I was started after the game began)" if game.written is None else ""
            raise ProtocolError(f"{where}: {line!r} is not legal: {game.position.why_illegal(move.index)}{hint}")
        return move

    def _note_opponent_time(self) -> None:
        """An opponent that takes longer than my limit to answer: the referee's limit is longer (§14)."""
        game = self._game
        move = _stat(self.move_path)
        if game.written_at is None or move is None:
            return
        took = move.st_mtime - game.written_at
        if took > self.time_limit + FIRST_TURN_SLACK:
            self._say_once("longer-limit", logging.WARNING,
                           f"my opponent answered {took:.1f} s after my move, longer than my --time-limit of "
                           f"{self.time_limit:g} s: the referee's limit is probably longer than mine "
                           "(start me with the referee's --time-limit to use all of it)")

    # -- thinking and writing --------------------------------------------------------------------

    def thinking_cutoff(self) -> float:
        """Seconds after the .go the engine thinks this turn: the cutoff less the largest pause of
        the recent turns (time off the CPU while thinking, or a move landing late), never under
        ``PAUSE_FLOOR_SHARE`` of the time to the referee's last tick. On a quiet machine nothing
        is kept back (9.0 s at 10 s); on a loaded one a pause near the deadline no longer pushes
        the move past the referee's last look."""
        floor = min(self.cutoff, PAUSE_FLOOR_SHARE * last_tick(self.time_limit))
        return self.pauses.budget(self.cutoff, floor)

    def _deadlines(self, go) -> tuple[float, float]:
        """(cutoff, latest useful write) on the perf_counter clock, counted from the .go's mtime.

        On whole-second timestamps the .go was really created up to a granule after its mtime
        (but before now): thinking still counts from the mtime, the safe side, while writes go on
        until the latest moment the referee's limit can end."""
        now_wall, now_perf = time.time(), time.perf_counter()
        elapsed = now_wall - go.st_mtime
        coarse = _whole_seconds(go)
        if elapsed < -0.5 or elapsed > self.time_limit + (COARSEST_TIMESTAMP if coarse else 0):
            # A clock out of step with the filesystem's (network mounts) or a timestamp that
            # cannot be this turn's: count from now instead.
            log.warning("%s mtime is %.2f s %s; counting my time from now", self.go_path.name, abs(elapsed),
                        "in the future" if elapsed < 0 else "old")
            elapsed = 0.0
        elapsed = max(elapsed, 0.0)
        budget = max(self.thinking_cutoff() - elapsed, 0.0)
        if coarse:
            latest_start = min(elapsed, COARSEST_TIMESTAMP)  # seconds after the mtime it can have begun
            hard = self.time_limit - elapsed + latest_start
        else:
            hard = self.time_limit - elapsed
        return now_perf + budget, now_perf + max(hard, budget)

    def _turn_is_over(self, opening_id: tuple, go_id: tuple) -> bool:
        """True once thinking is pointless: end_game came, my .go vanished or changed, a new game began."""
        opening = _stat(self.opening_path)
        if opening is None or _identity(opening) != opening_id:
            return True
        return self._current_end_game(opening) or _identity_or_none(self.go_path) != go_id

    def _play(self, go) -> None:
        game = self._game
        game.turn_go_mtime = go.st_mtime
        clock = ThinkingClock()  # this thread runs the search (the C core too, without the GIL)
        kept = self.pauses.largest()  # what this turn's deadline keeps back
        deadline, hard_deadline = self._deadlines(go)
        opening_id, go_id = game.opening_id, _identity(go)
        limit = SearchLimit(deadline=deadline, depth=self.depth, nodes=self.nodes,
                            should_stop=lambda: self._turn_is_over(opening_id, go_id))
        result = self._choose(game.position, limit)
        move = Move.from_index(result.move)
        # Last look before writing: only ever write during my own turn (§8.6).
        opening = _stat(self.opening_path)
        off_cpu = clock.off_cpu()
        weight = min(1.0, OFF_CPU_SPAN / max(clock.wall(), 1e-9))
        if opening is None or self._current_end_game(opening):
            self.pauses.record(late=0.0, off_cpu=off_cpu, weight=weight)
            return
        if _stat(self.go_path) is None:
            self.pauses.record(late=0.0, off_cpu=off_cpu, weight=weight)
            self._explain_vanished_go(move)
            return
        line = format_move_line(self.name, move)
        landed = self._write_move(line, hard_deadline)
        # Late: the first write after the planned deadline (later rewrites on coarse timestamps
        # are waits, not pauses).
        self.pauses.record(late=(landed or time.perf_counter()) - deadline, off_cpu=off_cpu, weight=weight)
        game.position.play(move)
        game.written = line.strip()
        game.written_at = time.time()
        game.moves += 1
        took = game.written_at - go.st_mtime
        note = "  (proven)" if result.proven else ""
        if kept >= 0.001:
            note += f"  (kept back {kept * 1000:.0f} ms for pauses)"
        log.info("move %s  depth %d  score %+d  nodes %d  nps %.0f  %.3f s since .go%s",
                 move, result.depth, result.score, result.nodes, result.nodes_per_second, took, note)

    def _explain_vanished_go(self, move: Move) -> None:
        """My .go went away before I wrote: say what the files show probably happened (§14)."""
        last = referee_last_line(_read_text(self.move_path, self.encoding) or "")
        if last is not None and last[1].split()[0] == self.name:
            log.error("my .go vanished while I was thinking and %s now holds %r, a move in my name that I did not "
                      "write: another agent named %r is probably playing in this directory; not writing %s",
                      MOVE_FILE, last[1], self.name, move)
        else:
            log.warning("my .go vanished while I was thinking (the referee stopped, or moved on without me); "
                        "not writing %s", move)

    def _choose(self, position: Position, limit: SearchLimit) -> SearchResult:
        """Ask the engine; on any failure or an illegal answer, play a legal move anyway."""
        started = time.perf_counter()
        try:
            result = self.engine.choose(position.copy(), limit)
            if position.is_legal(result.move):
                return result
            log.error("engine returned an illegal move %r (%s); playing a random legal move",
                      result.move, position.why_illegal(result.move) if isinstance(result.move, int) else "not a cell")
        except Exception:
            log.exception("engine failed; playing a random legal move instead")
        move = self._rng.choice(list(position.legal_moves()))
        return SearchResult(move=move, elapsed=time.perf_counter() - started)

    def _write_move(self, line: str, hard_deadline: float) -> float | None:
        """Put ``line`` into move_file and make sure its mtime went up (§8.3, 8.7, 8.15). Returns
        when (perf_counter) the first write landed, None if none did.

        The referee recorded move_file's mtime just before it created my .go, and nobody writes
        move_file after that but me: the mtime seen now is the one to beat. Each rewrite waits for
        the next whole second where timestamps are whole seconds (else 50 ms), until the referee's
        latest possible limit."""
        before = _stat(self.move_path)
        before_ns = before.st_mtime_ns if before is not None else -1
        attempt = 0
        landed = None
        while True:
            attempt += 1
            try:
                self._write_once(line, hard_deadline)
                if landed is None:
                    landed = time.perf_counter()
            except OSError as error:  # disk full, a locked file, a read-only mount...
                if time.perf_counter() + REWRITE_PAUSE > hard_deadline:
                    log.error("could not write my move to %s: %s; the referee will not see it", self.move_path, error)
                    return landed
                log.warning("writing my move failed (%s); retrying", error)
                time.sleep(REWRITE_PAUSE)
                continue
            after = _stat(self.move_path)
            if after is not None and after.st_mtime_ns > before_ns:
                if attempt > 1:
                    log.info("move_file mtime went up after %d writes (coarse timestamps)", attempt)
                return landed
            pause = REWRITE_PAUSE
            if after is not None and _whole_seconds(after):
                self._say_coarse()
                # Land just past the next whole second: the first moment a write can register.
                # The filesystem's clock may lag time.time() by a scheduler tick, hence 15 ms.
                now = time.time()
                pause = max(min(math.floor(now - 0.015) + 1.015 - now, REWRITE_PAUSE), 0.001)
            if time.perf_counter() + pause > hard_deadline:
                log.error("move_file mtime did not go up after %d writes; the referee may not see my move", attempt)
                return landed
            log.debug("move_file mtime did not go up (coarse timestamps?); rewriting in %.0f ms", pause * 1000)
            time.sleep(pause)
            go_id = _identity_or_none(self.go_path)
            if go_id is None or self._turn_is_over(self._game.opening_id, go_id):
                return landed  # game over or the .go gone: a rewrite now could only land outside my turn

    def _say_coarse(self) -> None:
        self._say_once("coarse", logging.WARNING,
                       f"the filesystem of {self.directory} keeps whole-second timestamps: a move only counts once "
                       f"{MOVE_FILE}'s mtime reaches the next second, so I rewrite it until then")

    def _write_once(self, line: str, hard_deadline: float) -> None:
        """One write of ``line`` onto move_file: a temp file renamed over it, or in place if the rename is refused."""
        data = line.encode("ascii")
        with open(self.temp_path, "wb") as handle:
            handle.write(data)
        attempt = 0
        while True:
            try:
                self._replace(self.temp_path, self.move_path)
                return
            except PermissionError as error:
                refused = error
            attempt += 1
            # Windows: someone (the referee) has move_file open this instant; retry while time allows.
            if (not RENAME_REFUSAL_IS_TRANSIENT or attempt >= REPLACE_ATTEMPTS
                    or time.perf_counter() + REPLACE_RETRY_SLEEP > hard_deadline):
                break
            time.sleep(REPLACE_RETRY_SLEEP)
        self._say_once("in-place", logging.WARNING,
                       f"cannot rename onto {MOVE_FILE} ({refused.strerror or refused}; a sticky shared directory "
                       f"where another user owns it?): writing my moves into it in place instead")
        self._remove_temp()
        self._write_in_place(data)

    def _write_in_place(self, data: bytes) -> None:
        """Overwrite move_file without truncating it first: the line and a blank line in one write
        (the referee stops reading at the blank line, so older text behind it never counts), then
        cut the file after the line. Never creates move_file (the referee's, §4.7)."""
        fd = os.open(self.move_path, os.O_WRONLY | getattr(os, "O_BINARY", 0))
        try:
            written = os.write(fd, data + b"\n")
            if written != len(data) + 1:
                raise OSError(errno.ENOSPC, f"short write ({written} of {len(data) + 1} bytes)")
            os.ftruncate(fd, len(data))
        finally:
            os.close(fd)

    def _replace(self, source: Path, target: Path) -> None:
        """The atomic rename; a method so tests can stand in for odd filesystems."""
        os.replace(source, target)

    def _remove_temp(self) -> None:
        try:
            os.remove(self.temp_path)
        except OSError:
            pass

    def _say_once(self, key: str, level: int, message: str) -> None:
        if key not in self._said:
            self._said.add(key)
            log.log(level, message)
