"""uttt-replay (``python -m ref_sim.replay``): a series as one HTML page to step through.  The command only: the view
itself is :mod:`ref_sim.views.replay`."""

import sys

from ref_sim.views.replay import main

if __name__ == "__main__":
    sys.exit(main())
