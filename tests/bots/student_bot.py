"""A mimic, for tests, of the bots course teams write (docs/protocol.md, "What the course's own bots do").

    python student_bot.py NAME [--spin] [--no-newline] [--eager-opening] [--linger S]
                               [--write-as NAME]

It plays random legal moves with rules of its own (it imports nothing from this project, as a
team's bot would not) and works in its current directory only: relative ``move_file``,
``first_four_moves``, ``end_game`` and ``NAME.go``, as real bots do.  By default it is a
well-behaved bot (it sleeps 5 ms between looks, writes ``NAME BOARD SPOT\\n`` at once, exits
after ``end_game``); each option adds one habit of real bots:

``--spin``           busy-waits: looks at the directory again at once, never sleeping
``--no-newline``     writes its move without the newline at the end
``--eager-opening``  reads ``first_four_moves`` as soon as it exists, before its ``.go``,
                     while the referee may still be writing it: a partial file (fewer than 4
                     whole lines) is read again until it is whole
``--linger S``       stays alive S seconds after reading ``end_game`` (a search or a timer
                     thread that goes on)
``--write-as NAME``  waits for its own ``.go`` but writes this name in its moves (a name
                     hard-coded in the write only)

``otter.py`` beside it is the same bot with its name hard-coded (``Otter``) and no arguments.
A safety net of the mimic's own, not of real bots: it exits once the process that started it
is gone, so that a test killed midway leaves no spinning bot behind.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
#: How often, in looks, the bot checks that its parent still runs (the safety net).
PARENT_CHECK = 2000


class Board:
    """Ultimate tic-tac-toe, small, as in docs/protocol.md, "The rules, as the referee codes them"."""

    def __init__(self) -> None:
        self.cells = [[None] * 9 for _ in range(9)]
        self.won = [None] * 9
        self.last_spot = None
        self.ply = 0

    def closed(self, board: int) -> bool:
        return self.won[board] is not None or None not in self.cells[board]

    def legal(self) -> list[tuple[int, int]]:
        if self.last_spot is not None and not self.closed(self.last_spot):
            boards = [self.last_spot]
        else:
            boards = [b for b in range(9) if self.won[b] is None]
        return [(b, s) for b in boards for s in range(9) if self.cells[b][s] is None]

    def play(self, board: int, spot: int) -> None:
        mark = self.ply % 2
        self.cells[board][spot] = mark
        if self.won[board] is None and any(all(self.cells[board][i] == mark for i in line)
                                           for line in LINES):
            self.won[board] = mark
        self.last_spot, self.ply = spot, self.ply + 1


def read(path: str) -> str | None:
    """The file's text, or None while it does not exist."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def read_opening(wait, path: str = "first_four_moves") -> list[tuple[int, int]]:
    """The four opening cells, read again (calling ``wait`` between looks) while the file is
    missing or partial: fewer than 4 whole lines ending in a newline."""
    while True:
        text = read(path)
        lines = (text or "").split("\n")[:-1]           # only lines with their newline
        if len(lines) >= 4:
            try:
                return [(int(line.split()[1]), int(line.split()[2])) for line in lines[:4]]
            except (IndexError, ValueError):
                pass                                     # a line cut short: read it again
        wait()


def write_move(line: str) -> None:
    """The whole line at once (temp file + rename): the referee never reads half of it."""
    temp = f"tmp-move-{os.getpid()}"
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(line)
    os.replace(temp, "move_file")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name")
    parser.add_argument("--spin", action="store_true")
    parser.add_argument("--no-newline", action="store_true")
    parser.add_argument("--eager-opening", action="store_true")
    parser.add_argument("--linger", type=float, default=0.0)
    parser.add_argument("--write-as", default=None)
    args = parser.parse_args(argv)
    parent = os.getppid()
    looks = 0

    def wait() -> None:
        nonlocal looks
        looks += 1
        if looks % PARENT_CHECK == 0 and os.getppid() != parent:
            sys.exit(3)                                  # the runner is gone: so are we
        if not args.spin:
            time.sleep(0.005)

    board = None
    if args.eager_opening:
        opening = read_opening(wait)
    written = None                                       # what we last wrote to move_file
    while True:
        end = read("end_game")
        if end is not None:
            print(end, flush=True)
            until = time.monotonic() + args.linger       # alive after the end, as some are
            while time.monotonic() < until:
                wait()
            return 0
        # The content first, then the .go: our .go lingers after our move, and an opponent
        # line read after seeing that old .go could be one the referee has not read yet.
        content = read("move_file")
        if content is None or content == written or not os.path.exists(f"{args.name}.go"):
            wait()
            continue
        if board is None:
            if not args.eager_opening:
                opening = read_opening(wait)
            board = Board()
            for cell in opening:
                board.play(*cell)
        tokens = content.split()
        if len(tokens) >= 3:                             # the opponent's move (none for p1's first)
            board.play(int(tokens[1]), int(tokens[2]))
        cell = board.legal()[hash((os.getpid(), board.ply)) % len(board.legal())]
        board.play(*cell)
        written = f"{args.write_as or args.name} {cell[0]} {cell[1]}" + (
            "" if args.no_newline else "\n")
        write_move(written)
        print(f"move {cell[0]} {cell[1]} answering {content!r}", flush=True)   # for a failure's story


if __name__ == "__main__":
    sys.exit(main())
