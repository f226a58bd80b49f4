"""uttt-render (``python -m ref_sim.render``): a position as an SVG or PNG picture.  The command only: the view
itself is :mod:`ref_sim.views.render`."""

import sys

from ref_sim.views.render import main

if __name__ == "__main__":
    sys.exit(main())
