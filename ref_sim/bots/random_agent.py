"""A random player that follows the referee's file protocol completely.

    python -m ref_sim.bots.random_agent NAME [--dir DIR] [--seed N] [--encoding ENC]
                                   [--eager] [--flood RATE] [--nbsp]

The reference implementation of the protocol side of a player and the first opponent of every
test; it uses only :mod:`ref_sim.rules`. Its loop and exit codes: docs/protocol.md, "The
simulator, where the real referee leaves room"; its hostile variants (``--eager``, ``--flood``,
``--nbsp``: plausible students' bots) are the series runners' built-ins (docs/bench.md).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import threading
import time

from agent.exits import EXIT_ABORTED
from agent.platform_io import transient
from agent.lifeline import Lifeline
# The referee's text and checks, not the referee: this agent starts for every game of a series.
from ref_sim.referees.file_text import (check_encoding, encoding_problem, last_line, locale_encoding, one_line,
                                        prepare_directory, referee_lines)
from ref_sim.rules import Game

POLL = 0.01             # seconds between looks at the files: quick, but no busy loop
ABORT_GRACE = 2.0       # protocol files gone this long without an end_game: game aborted
REPLACE_RETRIES = 100   # os.replace fails on Windows while another process reads the file
MTIME_RETRY_PAUSE = 0.05    # coarse-mtime filesystems need up to 2 s: we retry a few times
MTIME_RETRIES = 40
EAGER_POLL = 0.002      # --eager answers "the instant" the opponent's line appears
#: --flood's file in the referee's directory: no protocol prefix and no "go" after its first
#: character, so the referee's clean-up keeps it (a name with {name} is also one per player).
FLOOD_FILE = "{name}-flood.log"
#: --flood catches up after a stall, but never by more than this (a burst, not a backlog).
FLOOD_MAX_LAG = 0.05
NBSP = "\xa0"


def missing(error: OSError) -> None:
    """None for a file that is not there, or that Windows refuses this instant because the referee
    is replacing or deleting it (agent.platform_io.transient: the agent's rule): the next poll
    looks again. Any other error is raised."""
    if isinstance(error, FileNotFoundError) or transient(error):
        return None
    raise error


class RandomAgent:
    def __init__(self, name: str, directory: str = ".", seed: int | None = None, *,
                 encoding: str | None = None, eager: bool = False, flood: float = 0.0,
                 nbsp: bool = False) -> None:
        self.name = name
        self.dir = directory
        self.rng = random.Random(seed)
        self.encoding = check_encoding(encoding or locale_encoding())
        self.eager, self.flood_rate, self.nbsp = eager, flood, nbsp
        self.flooded = 0                # lines written by --flood
        # The temp name matches none of the referee's clean-up patterns: it does not start
        # with move_file/end_game/first_four_moves and has no "go" (hex digits have no g).
        self.temp = os.path.join(directory, f".uttt-tmp-{os.getpid():x}")
        # Files already there when I start belong to an earlier game (or to one that began
        # without me): never trust those exact files, whatever their timestamps say.
        self.stale = {name: self.identity(name) for name in ("first_four_moves", "end_game")}
        self.warned_stale = False
        self.refused_opening = None     # identity of a first_four_moves already refused
        self.lifeline = Lifeline()      # the series runner that started me, if one did
        self.reset()

    def reset(self) -> None:
        self.opening_id = None      # identity of the first_four_moves we play
        self.game: Game | None = None
        self.me = None              # 0 if I am p1 (X), 1 if p2 (O)
        self.last_seen = None       # the last line of move_file already accounted for
        self.stuck = False          # the position is unknown: only wait for end_game

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def say(self, message: str) -> None:
        print(f"[{self.name}] {message}", flush=True)

    # -- reading files, all tolerant of files vanishing --------------------------------

    def mtime(self, name: str) -> float | None:
        try:
            return os.stat(self.path(name)).st_mtime
        except OSError as error:
            return missing(error)

    def read(self, name: str) -> str | None:
        try:
            with open(self.path(name), "rb") as handle:
                return self.decode(handle.read())
        except OSError as error:
            return missing(error)

    def decode(self, data: bytes) -> str:
        # The referee's codec: the same text wherever the referee can read the file at all;
        # where it cannot, it crashes on move_file, and a player must not crash with it.
        return data.decode(self.encoding, errors="replace")

    def fresh(self, name: str) -> bool:
        """The file exists and is at least as new as the current first_four_moves."""
        opening, mtime = self.mtime("first_four_moves"), self.mtime(name)
        return opening is not None and mtime is not None and mtime >= opening

    # -- the main loop -------------------------------------------------------------------

    def run(self) -> int:
        self.say(f"waiting in {os.path.abspath(self.dir)}")
        if self.flood_rate:
            stop = threading.Event()
            flood = threading.Thread(target=self.flood, args=(stop,), daemon=True)
            flood.start()
            begin = time.monotonic()
            try:
                return self.loop()
            finally:
                stop.set()
                flood.join(1)
                seconds = time.monotonic() - begin
                self.say(f"flooded {self.flooded} lines in {seconds:.1f} s "
                         f"({self.flooded / max(seconds, 1e-9):.0f} a second, asked "
                         f"{self.flood_rate:g})")
        return self.loop()

    def flood(self, stop: threading.Event) -> None:
        """``flood_rate`` lines a second into :data:`FLOOD_FILE`, one write each, until
        ``stop``: line k is due at k / rate seconds after the start."""
        path = self.path(FLOOD_FILE.format(name=self.name))
        start = time.perf_counter()
        with open(path, "w", encoding="ascii") as handle:
            while not stop.is_set():
                now = time.perf_counter()
                due = start + self.flooded / self.flood_rate
                if now < due:
                    time.sleep(due - now)
                    continue
                start += max(0.0, now - due - FLOOD_MAX_LAG)      # a stall is not made up
                handle.write(f"{self.name} flood {self.flooded}\n")
                handle.flush()
                self.flooded += 1

    def loop(self) -> int:
        seen_files = False          # have we seen a game's files at all?
        missing_since = None
        while True:
            if self.lifeline.lost():
                self.say(f"the series runner that started me (pid {self.lifeline.pid}) is gone: "
                         "no referee will come; stopping")
                return EXIT_ABORTED
            if self.game_over():
                text = self.read("end_game")
                if text is not None and text.strip():
                    self.say(f"game over: {one_line(text)}")
                    return 0
                # Created but not written yet (the referee writes it in two steps): look again.
                time.sleep(POLL)
                continue
            opening = self.opening_key()
            # Once in a game, first_four_moves alone says it goes on: a move_file without it may be
            # our own move, renamed into place just after the stopped referee cleaned up.
            if opening is None and (seen_files or self.mtime("move_file") is None):
                if seen_files:      # a new game re-creates them at once; an abort does not
                    missing_since = missing_since or time.monotonic()
                    if time.monotonic() - missing_since > ABORT_GRACE:
                        self.say("game aborted: the referee's files vanished without end_game")
                        return 1
                time.sleep(POLL)
                continue
            missing_since = None
            seen_files = seen_files or opening is not None
            if self.game is not None and opening is not None and opening != self.opening_id:
                self.say("a new game started: forgetting the old one")
                self.reset()
            if self.game is None:
                self.load_opening()
            elif not self.stuck and self.my_turn():
                self.play()
            time.sleep(EAGER_POLL if self.eager else POLL)

    def identity(self, name: str):
        """Which version of a file this is: None if absent."""
        try:
            stat = os.stat(self.path(name))
        except OSError as error:
            return missing(error)
        return (stat.st_ino, stat.st_mtime_ns, stat.st_size)

    def opening_key(self):
        return self.identity("first_four_moves")

    def game_over(self) -> bool:
        """A fresh end_game that was not already there when I started."""
        end = self.identity("end_game")
        return end is not None and end != self.stale["end_game"] and self.fresh("end_game")

    def load_opening(self) -> None:
        """Read first_four_moves once my .go has appeared (it may be half-written before)."""
        if not self.fresh(f"{self.name}.go"):
            return
        key, text = self.opening_key(), self.read("first_four_moves")
        if key is not None and key == self.stale["first_four_moves"]:
            if not self.warned_stale:
                self.say("first_four_moves was there before I started: a stale file or a "
                         "game that began without me; waiting for a new game")
                self.warned_stale = True
            return
        if text is None or key == self.refused_opening:
            return
        # Lines as the referee's Python cuts them (only \n, \r, \r\n end one).
        lines = [line.split() for line in referee_lines(text) if not line.isspace()]
        game = Game()
        try:
            names = [line[0] for line in lines]
            for _, board, spot in (line[:3] for line in lines):
                game.play(int(board), int(spot))
            problem = None if len(lines) == 4 else f"{len(lines)} lines, not 4"
            if not problem and (names[2], names[3]) != (names[0], names[1]):
                problem = (f"lines 3-4 name {names[2]} and {names[3]}, lines 1-2 "
                           f"{names[0]} and {names[1]}")
            if not problem and names[0] == names[1]:
                problem = f"both players are called {names[0]}"
        except (ValueError, IndexError) as error:
            problem = str(error) or "a line is not NAME BOARD SPOT"
        if problem:
            self.say(f"first_four_moves is not an opening ({problem}): "
                     f"{one_line(repr(text))}; waiting for end_game")
            self.refused_opening = key
            return
        move_file = self.read("move_file")
        if self.name in names[:2]:
            self.me = names.index(self.name)
        else:      # old referees wrote X/O: p1 is whoever is called while move_file is empty
            self.me = 0 if move_file == "" else 1
        self.game, self.opening_id = game, key
        self.say(f"opening {' '.join(f'{b}{s}' for b, s in game.moves)}: "
                 f"I am {'XO'[self.me]} ({'first' if self.me == 0 else 'second'})")
        if self.me == 0 and move_file != "" or self.me == 1 and move_file.count("\n") > 1:
            self.say("I was started after the game began: I cannot know the position, "
                     "waiting for end_game")
            self.stuck = True

    def my_turn(self) -> bool:
        """Read move_file first, then check my .go: never the .go alone, which lingers after I moved
        (docs/protocol.md, "What a bot must survive", row "Your own .go is still there")."""
        text = self.read("move_file")
        if text is None:
            return False
        last = last_line(referee_lines(text)).rstrip("\n")     # what the referee reads
        if last == self.last_seen:
            return False
        tokens = last.split()
        if not last:
            fresh_start = self.me == 0 and len(self.game.moves) == 4 and text == ""
            return fresh_start and self.fresh(f"{self.name}.go") and not self.fresh("end_game")
        if tokens[0] == self.name or self.game.turn == self.me:
            return False
        if not self.eager and not self.fresh(f"{self.name}.go"):     # --eager: the bug
            return False
        self.last_seen = last
        try:
            self.game.play(int(tokens[1]), int(tokens[2]))
        except (ValueError, IndexError) as error:
            self.say(f"opponent's move {last!r} is not legal here ({error}); "
                     "waiting for end_game")
            self.stuck = True
            return False
        # The move ended the game: the .go files are the referee's end signal, not a turn.
        return self.game.result is None and not self.fresh("end_game")

    def play(self) -> None:
        board, spot = self.rng.choice(self.game.legal_moves())
        before = self.mtime_ns("move_file")
        if self.nbsp:
            data = f"{self.name}{NBSP}{board}{NBSP}{spot}\n".encode("latin-1")
        else:
            data = f"{self.name} {board} {spot}\n".encode(self.encoding)
        for _ in range(MTIME_RETRIES):
            self.write(data)
            after = self.mtime_ns("move_file")
            if before is None or after is None or after > before or self.stamp(before):
                break
            time.sleep(MTIME_RETRY_PAUSE)     # same timestamp as before: write again later
        self.game.play(board, spot)
        self.last_seen = last_line(referee_lines(self.decode(data))).rstrip("\n")  # as read back
        self.say(f"played {board} {spot}")

    def mtime_ns(self, name: str) -> int | None:
        try:
            return os.stat(self.path(name)).st_mtime_ns
        except FileNotFoundError:
            return None

    def stamp(self, before: int) -> bool:
        """My write left move_file's mtime at ``before`` (whole-second timestamps, or an mtime in
        the future): give it the next whole second (FAT: the next even one), the stamp a write
        just after that second would carry; waiting for the clock can outlast a 1 s limit."""
        path = self.path("move_file")
        for step in (1_000_000_000, 2_000_000_000):
            try:
                os.utime(path, ns=(os.stat(path).st_atime_ns, (before // step + 1) * step))
                if os.stat(path).st_mtime_ns > before:
                    return True
            except OSError:             # not my file, or gone: rewrite later instead
                return False
        return False

    def write(self, data: bytes) -> None:
        """The whole line at once: temp file in the same directory, then an atomic rename."""
        with open(self.temp, "wb") as handle:
            handle.write(data)
        for _ in range(REPLACE_RETRIES):
            try:
                os.replace(self.temp, self.path("move_file"))
                return
            except PermissionError:           # Windows: someone has move_file open
                time.sleep(POLL)
        self.say("could not replace move_file: giving up this write")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ref_sim.bots.random_agent",
                                     description="Play random legal moves through the files.")
    parser.add_argument("name", help="my name, exactly as given to the referee")
    parser.add_argument("--dir", default=".",
                        help="the referee's directory, created if missing (default: current)")
    parser.add_argument("--seed", type=int, help="seed for the random moves")
    parser.add_argument("--encoding", metavar="ENC",
                        help="the referee's encoding (default: this machine's, "
                             f"{locale_encoding()}, as the referee's own Python)")
    hostile = parser.add_argument_group("hostile variants (docs/bench.md: the built-ins eager, flood, nbsp)")
    hostile.add_argument("--eager", action="store_true",
                         help="answer the opponent's line at once, before my .go: out of turn")
    hostile.add_argument("--flood", type=float, default=0.0, metavar="RATE",
                         help=f"write RATE lines a second into {FLOOD_FILE.format(name='NAME')} "
                              "in --dir")
    hostile.add_argument("--nbsp", action="store_true",
                         help="separate my move's tokens with byte 0xA0, written as Latin-1")
    args = parser.parse_args(argv)
    problem = prepare_directory(args.dir)       # created if missing, as python -m ref_sim does
    if problem:
        parser.error(problem)
    if not 0 <= args.flood < float("inf"):
        parser.error(f"--flood {args.flood:g}: a rate is lines a second, 0 or more")
    encoding, problem = encoding_problem(args.encoding, [args.name])
    if problem:
        parser.error(problem)
    try:
        return RandomAgent(args.name, args.dir, args.seed, encoding=encoding, eager=args.eager,
                           flood=args.flood, nbsp=args.nbsp).run()
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
