"""``python -m agent.arena`` is now ``python -m ref_sim.arena`` (console script ``uttt-arena``).

The bench (series, arena, self-play, statistics, clusters, terminal play) lives beside the referee
simulator in ``ref_sim/``; ``agent/`` holds what the bot plays with. The old name still works,
with a one-line notice; nothing in the bot imports the bench.
"""

import runpy
import sys

if __name__ == "__main__":
    print("note: python -m agent.arena is now python -m ref_sim.arena (or uttt-arena)", file=sys.stderr)
    runpy.run_module("ref_sim.arena", run_name="__main__", alter_sys=True)
