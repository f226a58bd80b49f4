"""A random player that prints what no runner should trust: ``python tests/bots/hostile.py
file NAME --dir DIR [--seed N]`` (the referee's files) or ``... codingame [--seed N]``
(stdin/stdout).

Before and after its game it writes to stderr lines shaped like our agent's search line with
numbers no parser should take (``.`` as seconds, a 5,000-digit score), binary junk, a line of a
megabyte without a newline, and ``--flood-mb`` megabytes (default 100) in all.  Where a runner
names a search log (``UTTT_SEARCH_LOG``) it fills that with junk too: NaN, ``1e999``, absurd
nesting, wrong types, out-of-range cells, a line too long.  Its moves are the reference random
players' (ref_sim.bots.random_agent, ref_sim.bots.stdio_random), so every game can finish.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

MEGABYTE = 1 << 20

HOSTILE_LINES = [
    "12:00:00.000 Agent1 INFO move 4 8  depth 7  score 0  nodes 1  nps 1  . s since .go",
    "12:00:00.000 Agent1 INFO move 4 8  depth 7  score " + "9" * 5000 + "  nodes 1  nps 1  0.5 s since .go",
    "12:00:00.000 codingame INFO move 4 4  depth 7  score 0  nodes 1  nps 1  . s since input",
    "12:00:00.000 codingame INFO move 4 4  depth 1  score +" + "9" * 5000 + "  nodes 1  nps 1  0.5 s since input",
]

SEARCH_LOG_JUNK = [
    '{"board": 4, "spot": 4, "depth": NaN, "score": 0, "nodes": 1, "nps": 1, "seconds": 0.1}',
    '{"board": 4, "spot": 4, "depth": 3, "score": 1e999, "nodes": 1, "nps": 1, "seconds": 0.1}',
    '{"board": 4, "spot": 4, "depth": 3, "score": Infinity, "nodes": 1, "nps": 1, "seconds": -Infinity}',
    '{"board": 4, "spot": 4, "depth": 3, "score": ' + "9" * 5000 + ', "nodes": 1, "nps": 1, "seconds": 0.1}',
    "[" * 100_000 + "]" * 100_000,
    '{"board": 40, "spot": -1, "depth": "seven", "score": [], "nodes": {}, "nps": null, "seconds": true}',
    '{"board": 4, "spot": 4, "depth": 3, "score": 0, "nodes": 1, "nps": 1, "seconds": 0.1, "x": "'
    + "y" * 200_000 + '"}',
    "\x00\xff not json at all",
    "",
]


def write_stderr(data: bytes) -> None:
    try:
        sys.stderr.flush()
        view = memoryview(data)
        while view:
            view = view[os.write(2, view):]
    except OSError:         # the runner closed our stderr: carry on playing
        pass


def be_hostile(flood_mb: float) -> None:
    text = "\n".join(HOSTILE_LINES) + "\n"
    write_stderr(text.encode() + bytes(range(256)) + b"\n\xff\xfe\x00junk\r\x1b[2J\n")
    write_stderr(b"x" * MEGABYTE)                       # a megabyte without a newline
    write_stderr(b"\n" + text.encode())
    block = (text.encode() + bytes(range(256)) + b"\n") * 256
    left = int(flood_mb * MEGABYTE)
    while left > 0:
        write_stderr(block[:left])
        left -= len(block)
    write_stderr(b"\n")
    path = os.environ.get("UTTT_SEARCH_LOG")
    if path:
        try:
            with open(path, "ab") as handle:
                handle.write("\n".join(SEARCH_LOG_JUNK).encode("utf-8", "surrogatepass") + b"\n")
                handle.write(b"\xff\xfe binary \x00\n")
                handle.write(json.dumps({"board": 4, "spot": 4, "depth": 2}).encode() + b"\n")
        except OSError:
            pass


def main(argv: list[str]) -> int:
    protocol, rest = (argv[0], argv[1:]) if argv else ("", [])
    flood_mb = 100.0
    if "--flood-mb" in rest:
        at = rest.index("--flood-mb")
        flood_mb = float(rest[at + 1])
        del rest[at:at + 2]
    if protocol == "file":
        from ref_sim.bots import random_agent
        play = random_agent.main
    elif protocol == "codingame":
        from ref_sim.bots import stdio_random
        play = stdio_random.main
    else:
        print("usage: hostile.py file NAME --dir DIR [--seed N] | codingame [--seed N] "
              "[--flood-mb MB]", file=sys.stderr)
        return 2
    be_hostile(flood_mb)
    code = play(rest)
    be_hostile(0)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
