"""uttt-show (``python -m ref_sim.show``): a game or a series as text boards.  The command only: the view
itself is :mod:`ref_sim.views.show`."""

import sys

from ref_sim.views.show import main

if __name__ == "__main__":
    sys.exit(main())
