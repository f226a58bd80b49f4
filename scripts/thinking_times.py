"""Thinking time and lateness per side of a series' games.jsonl: how much of each move our agent
thought (its own figure, from the .go) and how many moves the referee saw late.

    python scripts/thinking_times.py RUN_DIR_OR_GAMES_JSONL

Used to measure what the keep-back for pauses costs (agent/pauses.py): two builds of the agent
against each other on a loaded machine see the same load.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    path = Path(argv[0])
    path = path / "games.jsonl" if path.is_dir() else path
    thought, took, timeouts, first = defaultdict(list), defaultdict(list), defaultdict(int), defaultdict(list)
    limit = None
    for line in path.read_text(encoding="utf-8").splitlines():
        game = json.loads(line)
        limit = game["time_limit"]
        seen = set()
        for move in game["moves"]:
            side = move["player"][:-1] + ("(1)" if move["player"] == game["agents"][0]["name"] else "(2)")
            if "agent_seconds" in move:
                thought[side].append(move["agent_seconds"])
                if side not in seen:
                    first[side].append(move["agent_seconds"])
            seen.add(side)
            took[side].append(move["seconds"])
        if game["reason"] == "Time out!":
            timeouts[game["loser"]] += 1
    print(f"limit {limit:g} s; agent seconds = its move's time since the .go (its log), seconds = the referee's")
    for side in sorted(took):
        t = thought[side]
        print(f"{side}: {len(took[side])} moves, agent seconds median {statistics.median(t):.3f} "
              f"mean {statistics.fmean(t):.3f} max {max(t):.3f}; first moves median "
              f"{statistics.median(first[side]):.3f} max {max(first[side]):.3f}; referee seconds max "
              f"{max(took[side]):.3f}" if t else f"{side}: {len(took[side])} moves (no agent figures)")
    print("time-outs:", dict(timeouts) or 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
