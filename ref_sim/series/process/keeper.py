"""Nothing a bot starts outlives its game: each bot runs under a keeper (Linux), a small Python
process that is its parent and a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``), so an orphan
of the bot's tree (a ``setsid`` child, a double-forked grandchild) is handed to it, not to init.
Once the bot exits, the keeper is asked to stop (SIGTERM) or its runner dies
(``PR_SET_PDEATHSIG``), it ends every process of the tree, found through ``/proc``, again until
none is left. The keeper itself is ``keeper_program.py`` beside this module; what it holds
against and what it cannot: docs/isolation.md.
"""

from __future__ import annotations

import os
import sys

#: Child subreapers are Linux's (3.4 and later).
AVAILABLE = sys.platform.startswith("linux")

#: Run as ``python -I -S KEEPER RUNNER_PID COMMAND...``.  Standard library only, no site: the
#: bot runs some 60 ms after Popen at load 6 on 2 cores (a bare Python start; 2 ms without a
#: keeper), and the keeper sits in ``sigwaitinfo`` (no CPU) while the bot plays.
KEEPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keeper_program.py")


def wrapped(command: list[str]) -> list[str]:
    """``command`` run under a keeper of this process (the runner), where keepers exist."""
    if not AVAILABLE:
        return list(command)
    return [sys.executable, "-I", "-S", KEEPER, str(os.getpid()), *command]
