"""Bots that attack the runner rather than play (issue 29): each is one hostile case, run as
``python tests/bots/hostile_files.py CASE NAME DIR [ARGS...]`` in a file-protocol series, or
``python tests/bots/hostile_files.py daemons-stdio - - MARK`` in a stdin/stdout one.

* ``plant NAME DIR OUTSIDE``: plants ``first_four_moves``, ``end_game`` and ``NAME.go`` as
  symbolic links to files of the same names in the folder ``OUTSIDE``, again whenever one is
  replaced, so that a referee that follows them writes outside its directory. Never moves.
* ``fifo NAME DIR``, ``directory NAME DIR``, ``devzero NAME DIR``: at its first turn, puts a FIFO,
  a directory or a symbolic link to ``/dev/zero`` where ``move_file`` was. Never opens the FIFO.
* ``sparse NAME DIR SIZE [LINE]``: at its first turn, puts a sparse file of ``SIZE`` bytes (no
  disk used) where ``move_file`` was; with ``LINE``, it starts with ``LINE`` and a blank line,
  and its last byte is ``0xff``, which no UTF-8 decoder takes: a referee that reads the whole
  file crashes on it, one that stops at the blank line never sees it.
* ``daemons NAME DIR MARK``: starts a ``setsid`` child and a double-forked grandchild (each
  sleeps, for two minutes at most, with ``MARK`` in its command line), then becomes the reference
  random player; ``daemons-stdio - - MARK``: the same, then the stdin/stdout one.

Each says what it did on stderr (its log): ``planted: WHAT at TIME``, ``TIME`` from
``time.time()``, so that a script can time the verdict from it."""

from __future__ import annotations

import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: A daemon ends by itself after this long, so that one a broken runner leaves behind is bounded.
DAEMON_LIFE = 120.0
#: How long a bot that never moves stays (the runner kills it at the end of its game).
STAY = 60.0


def say(text: str) -> None:
    """On stderr: the log, whatever the protocol (stdout is the moves' pipe under stdio)."""
    print(f"{text} at {time.time():.6f}", file=sys.stderr, flush=True)


def replace_with_symlink(path: str, target: str) -> None:
    temporary = f"{path}.~link"
    try:
        os.symlink(target, temporary)
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass


def plant(name: str, directory: str, outside: str) -> None:
    """Keep each protocol file the referee writes a symbolic link to a file outside."""
    print("ready", file=sys.stderr, flush=True)     # up: the game may begin
    names = ("first_four_moves", "end_game", f"{name}.go")
    said = False
    deadline = time.monotonic() + STAY
    while time.monotonic() < deadline:
        if os.path.exists(os.path.join(directory, "move_file")):    # after the referee's clean-up
            for entry in names:
                path = os.path.join(directory, entry)
                if not os.path.islink(path):
                    replace_with_symlink(path, os.path.join(outside, entry))
            if not said:
                say("planted: symbolic links " + ", ".join(names))
                said = True
        time.sleep(0.002)


def wait_for_turn(name: str, directory: str) -> None:
    """Until this bot's first ``.go`` (after the opening)."""
    go = os.path.join(directory, f"{name}.go")
    opening = os.path.join(directory, "first_four_moves")
    while not (os.path.exists(go) and os.path.exists(opening)):
        time.sleep(0.005)


def take_move_file(name: str, directory: str, case: str, size: int = 0, line: str = "") -> None:
    print("ready", file=sys.stderr, flush=True)
    wait_for_turn(name, directory)
    move_file = os.path.join(directory, "move_file")
    temporary = os.path.join(directory, "~hostile.tmp")
    if case == "fifo":
        os.mkfifo(temporary)
        os.replace(temporary, move_file)
    elif case == "directory":
        os.unlink(move_file)
        os.mkdir(move_file)
    elif case == "devzero":
        replace_with_symlink(move_file, "/dev/zero")
    elif case == "sparse":
        with open(temporary, "wb") as handle:
            if line:
                handle.write(line.encode() + b"\n\n")
                handle.truncate(size - 1)
                handle.seek(size - 1)
                handle.write(b"\xff")
            else:
                handle.truncate(size)
        os.replace(temporary, move_file)
    say(f"planted: {case} move_file")
    time.sleep(STAY)


def daemon(mark: str) -> None:
    """Become a sleeper whose command line holds ``mark`` (seen in /proc from outside a sandbox's
    pid namespace too), for :data:`DAEMON_LIFE` at most."""
    os.execv(sys.executable, [sys.executable, "-c", f"import time; time.sleep({DAEMON_LIFE})",
                              mark])


def start_daemons(mark: str) -> None:
    """A ``setsid`` child and a double-forked grandchild (its parent exits at once), both
    sleeping with ``mark`` in their command lines; returns once both run."""
    read, write = os.pipe()
    if os.fork() == 0:                          # the setsid child
        os.close(read)
        os.setsid()
        os.close(write)                         # (its end closed: it runs)
        daemon(mark)
    middle = os.fork()
    if middle == 0:                             # exits at once: its child is orphaned
        if os.fork() == 0:
            os.close(read)
            os.setsid()
            os.close(write)
            daemon(mark)
        os._exit(0)
    os.close(write)
    os.waitpid(middle, 0)
    os.read(read, 1)                            # end of file: both closed their ends
    os.close(read)
    say(f"planted: two daemons marked {mark}")


def main(argv: list[str]) -> int:
    case, name, directory, *rest = argv
    sys.path.insert(0, ROOT)
    if case == "plant":
        plant(name, directory, rest[0])
    elif case in ("fifo", "directory", "devzero"):
        take_move_file(name, directory, case)
    elif case == "sparse":
        take_move_file(name, directory, case, int(rest[0]), rest[1] if len(rest) > 1 else "")
    elif case == "daemons":
        start_daemons(rest[0])
        os.execv(sys.executable, [sys.executable, "-m", "ref_sim.bots.random_agent", name,
                                  "--dir", directory])
    elif case == "daemons-stdio":
        start_daemons(rest[0])
        os.execv(sys.executable, [sys.executable, "-m", "ref_sim.bots.stdio_random"])
    else:
        print(f"hostile_files: unknown case {case!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
