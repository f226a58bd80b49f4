"""``python -m ref_sim NAME1 NAME2 ...``: see :mod:`ref_sim.ref`."""

import sys

from ref_sim.ref import main

sys.exit(main())
