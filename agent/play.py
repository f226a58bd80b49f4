"""``python -m agent.play`` is now ``python -m ref_sim.play`` (console script ``uttt-play``).

The bench (series, arena, self-play, statistics, clusters, terminal play) lives beside the referee
simulator in ``ref_sim/``; ``agent/`` holds what the bot plays with. The old name still works,
with a one-line notice; nothing in the bot imports the bench.
"""

import runpy
import sys

if __name__ == "__main__":
    print("note: python -m agent.play is now python -m ref_sim.play (or uttt-play)", file=sys.stderr)
    runpy.run_module("ref_sim.play", run_name="__main__", alter_sys=True)
