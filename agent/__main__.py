"""``python -m agent NAME ...``: see :mod:`agent.cli`."""

import sys

from .cli import main

sys.exit(main())
