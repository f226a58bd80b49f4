"""uttt-replay (``python -m ref_sim.replay``): a series as one HTML page to step through.  The command only: the view
itself is :mod:`ref_sim.views.replay`, a tournament team's page (``--team``) :mod:`ref_sim.views.team_page`."""

import sys

from ref_sim.views import replay, team_page


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``uttt-replay``; returns the exit code."""
    return replay.main(argv, write_team_page=team_page.write_one)


if __name__ == "__main__":
    sys.exit(main())
