"""How long the agent takes from its ``.go`` to its write when the opponent left a huge move_file.

A hostile (or broken) opponent can fill ``move_file`` with hundreds of megabytes before its last
line. The referee reads all of it and so must the agent (the move is the last line before the
first blank one). This plays the referee by hand for one turn: the agent is p2, the opponent's
move 5 comes after ``--size-mb`` MB of filler lines, then the agent's ``.go`` appears. It prints
the time from the ``.go``'s mtime to the agent's write (move_file's new mtime) and the agent's peak
memory (ru_maxrss), for each size given.

    python -m scripts.bench_big_move_file --size-mb 0 400 --depth 2
    python -m scripts.bench_big_move_file --root /tmp/before --size-mb 400 --depth 2

``--root`` runs another checkout's agent (``python -m agent`` with that directory first on the
path), to compare before and after. With ``--depth`` the agent answers as soon as it has read the
file (the reading cost shows); without, it thinks to its cutoff (9 s at 10 s).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ME, OPP = "Gopher", "Otter"
OPENING = [f"{OPP} 6 2", f"{ME} 2 4", f"{OPP} 4 5", f"{ME} 5 8"]
OPPONENT_MOVE = f"{OPP} 8 0"  # p1's move 5, in board 8 (the spot of line 4)
FILLER = f"{OPP} 0 0\n".encode()


def write_move_file(directory: Path, size_mb: float) -> None:
    """move_file: ``size_mb`` MB of filler lines, then the opponent's move, put in place by a rename."""
    staged = directory / "staged"
    block = FILLER * (1_048_576 // len(FILLER))
    left = int(size_mb * 1_048_576) // len(FILLER) * len(FILLER)  # whole filler lines only
    with open(staged, "wb") as handle:
        while left > 0:
            handle.write(block[:left])
            left -= len(block)
        handle.write(f"{OPPONENT_MOVE}\n".encode())
    os.replace(staged, directory / "move_file")


def wait_for(predicate, timeout: float, pause: float = 0.002) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(pause)
    return predicate()


def one_turn(root: Path, size_mb: float, time_limit: float, depth: int | None) -> tuple[float | None, int, str]:
    """(seconds from .go to the write or None, the agent's ru_maxrss in KiB, its last log lines)."""
    with tempfile.TemporaryDirectory(prefix="uttt-big-") as name:
        directory = Path(name) / "game"
        directory.mkdir()
        log_path = Path(name) / "agent.log"
        command = [sys.executable, "-m", "agent", ME, "--dir", str(directory), "--time-limit", str(time_limit)]
        if depth is not None:
            command += ["--depth", str(depth)]
        env = dict(os.environ, PYTHONPATH=str(root))
        with open(log_path, "w") as log:
            agent = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            if not wait_for(lambda: "ready in" in log_path.read_text(), 60, 0.05):
                raise SystemExit(f"the agent did not start: {log_path.read_text()[-2000:]}")
            (directory / "move_file").write_bytes(b"")
            (directory / "first_four_moves").write_text("".join(line + "\n" for line in OPENING))
            time.sleep(0.05)
            write_move_file(directory, size_mb)
            before = os.stat(directory / "move_file").st_mtime_ns
            go = directory / f"{ME}.go"
            go.touch()
            go_mtime = os.stat(go).st_mtime_ns
            wrote = wait_for(lambda: os.stat(directory / "move_file").st_mtime_ns != before, time_limit + 20)
            took = (os.stat(directory / "move_file").st_mtime_ns - go_mtime) / 1e9 if wrote else None
            (directory / "end_game").write_text(f"END: {ME} WINS! {OPP} LOSES! Time out!")
            go.touch()
            (directory / f"{OPP}.go").touch()
            try:
                _, status, usage = os.wait4(agent.pid, 0)
            except ChildProcessError:
                usage = None
            agent.returncode = 0
            rss = usage.ru_maxrss if usage is not None else -1
        finally:
            if agent.returncode is None:
                agent.kill()
                agent.wait()
        tail = "\n".join(log_path.read_text().splitlines()[-6:])
        return took, rss, tail


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the checkout whose agent runs (default: this one)")
    parser.add_argument("--size-mb", type=float, nargs="+", default=[0, 50, 400])
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--depth", type=int, default=None)
    parser.add_argument("--show-log", action="store_true", help="print the agent's last log lines")
    args = parser.parse_args()
    print(f"agent from {args.root}, limit {args.time_limit:g} s, depth {args.depth or 'to the cutoff'}")
    for size in args.size_mb:
        took, rss, tail = one_turn(args.root.resolve(), size, args.time_limit, args.depth)
        shown = "no write" if took is None else f"{took:.3f} s"
        print(f"move_file {size:g} MB: .go to write {shown}, agent ru_maxrss {rss / 1024:.0f} MiB", flush=True)
        if args.show_log:
            print(tail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
