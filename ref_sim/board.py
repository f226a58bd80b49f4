"""uttt-board (``python -m ref_sim.board``): the analysis board, our engine in a web page.  The command
only: the page itself is :mod:`ref_sim.views.board_page`."""

import sys

from ref_sim.views.board_page import main

if __name__ == "__main__":
    sys.exit(main())
