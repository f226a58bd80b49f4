"""uttt-plot (``python -m ref_sim.plot``): a series' running score and move times.  The command only: the view
itself is :mod:`ref_sim.views.plot`."""

import sys

from ref_sim.views.plot import main

if __name__ == "__main__":
    sys.exit(main())
