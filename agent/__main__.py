"""``python -m agent NAME ...`` and the ``uttt-agent`` command (pyproject's entry point is
:func:`run`): see :mod:`agent.cli`.

Ctrl-C can come while the agent's modules are still loading (a few hundred milliseconds on a
busy machine). Those imports happen inside :func:`run`, not when this module loads, so an
interrupt there also ends in one line on stderr and exit code 130, as it does later on.
"""

import sys

#: agent.exits.EXIT_INTERRUPTED, written out: this module imports nothing of the agent's before
#: run() can catch an interrupt (tests/test_interrupts.py holds the two equal).
EXIT_INTERRUPTED = 130


def run(argv: list[str] | None = None) -> int:
    """Import the command line and run it; an interrupt at any point is one line, not a traceback."""
    try:
        from .cli import main

        return main(argv)
    except KeyboardInterrupt:
        try:
            print("uttt-agent: interrupted", file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(run())
