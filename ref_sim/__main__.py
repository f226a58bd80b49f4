"""``python -m ref_sim NAME1 NAME2 ...``: see :mod:`ref_sim.cli`."""

import sys

from ref_sim.cli import main

sys.exit(main())
