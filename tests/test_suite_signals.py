"""The suite's own precondition: a process a test starts gets Ctrl-C and the stop signals at their
defaults, however the suite itself was started (``nohup python3 -m pytest &`` ignores SIGINT and
SIGHUP, and what is ignored at start stays ignored in every child: tests/conftest.py,
``_children_start_at_the_default``). Else the tests that send those signals fail for the harness's
sake, not the product's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="SIGHUP and inherited SIG_IGN are POSIX")

#: A child Python that says which of the signals it got ignored.
REPORT = ("import signal\n"
          "names = ('SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT')\n"
          "print(' '.join(n for n in names if signal.getsignal(getattr(signal, n)) is signal.SIG_IGN) or 'none')\n")


@posix_only
def test_a_child_of_a_test_starts_with_the_signals_at_their_defaults():
    done = subprocess.run([sys.executable, "-c", REPORT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["none"], f"ignored in a test's child: {done.stdout.strip()}"
    # This process may catch them (a caller's SIG_IGN is a handler here): never SIG_IGN, which
    # would keep the runners' own handlers out (ref_sim/stops.py) in the tests that run here.
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN


def _as_a_background_job(close_stdin: bool):
    def start():
        for name in ("SIGINT", "SIGQUIT", "SIGHUP"):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
        if close_stdin:
            os.close(0)
    return start


@pytest.mark.e2e
@posix_only
@pytest.mark.parametrize("workers, stdin", [("0", "closed"), ("1", "devnull")],
                         ids=["no-workers-stdin-closed", "a-worker-stdin-devnull"])
def test_the_suite_started_ignoring_them_still_gives_its_tests_the_defaults(workers, stdin, tmp_path):
    """The test above, in a pytest started as ``nohup ... &`` in a script starts it (SIGINT,
    SIGQUIT, SIGHUP ignored; stdin /dev/null or closed, ``0<&-``), with and without xdist's
    workers between."""
    test = "tests/test_suite_signals.py::test_a_child_of_a_test_starts_with_the_signals_at_their_defaults"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", workers,
                           "-m", "", "--basetemp", str(tmp_path / "base"), test], cwd=ROOT, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=300,
                          preexec_fn=_as_a_background_job(close_stdin=stdin == "closed"),
                          env=dict(os.environ, PYTEST_ADDOPTS=""))
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
