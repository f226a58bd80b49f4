"""One language across the tools: the same option for the same idea in every command, and
options that mean nothing without another one say so instead of being ignored."""

from __future__ import annotations

import pytest

from ref_sim import match, stdio, tournament


@pytest.mark.parametrize("main", [match.main, stdio.main, tournament.main], ids=["match", "stdio", "tournament"])
@pytest.mark.parametrize("argv, message", [
    (["--isolate-memory", "100"], "--isolate-memory is for --isolate: add --isolate, or leave it out"),
    (["--isolate-cores", "1", "--isolate-processes", "9"],
     "--isolate-cores and --isolate-processes are for --isolate: add --isolate, or leave them out"),
    (["--tls", "certs"], "--tls is for --cluster (or $UTTT_CLUSTER): add --cluster (or $UTTT_CLUSTER), or leave it out"),
])
def test_an_option_without_the_one_it_needs_is_refused(main, argv, message, capsys, monkeypatch):
    monkeypatch.delenv("UTTT_CLUSTER", raising=False)
    with pytest.raises(SystemExit) as stop:
        main(["random", "random", *argv])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().endswith("error: " + message)
