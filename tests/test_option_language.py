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


@pytest.mark.parametrize("argv, message", [
    (["--protocol", "codingame", "--dir", "x", "--polling"],
     "--dir and --polling are for the file protocol (the default), not this game: leave them out"),
    (["--protocol", "codingame", "--margin", "0.5"], "--margin is for the file protocol (the default), not this game: leave it out"),
    (["Walrus", "--turn-ms", "50"], "--turn-ms is for --protocol codingame, not this game: leave it out"),
    (["--protocol", "codingame", "--time-limit", "1", "--turn-ms", "40"],
     "--time-limit and --turn-ms are the same setting: give one"),
])
def test_the_agent_refuses_the_other_protocols_options(argv, message, capsys):
    from agent import cli
    assert cli.main(argv) == 2
    assert capsys.readouterr().err.strip() == f"uttt-agent: error: {message}"


def test_the_agents_time_limit_is_the_turn_under_codingame():
    from agent import cli
    args = cli.build_parser().parse_args(["--protocol", "codingame", "--time-limit", "0.25"])
    cli.settle_protocol_options(args)
    assert (args.turn_ms, args.first_turn_ms, args.time_limit) == (250, cli.DEFAULT_FIRST_TURN_MS, None)
    args = cli.build_parser().parse_args(["Walrus"])
    cli.settle_protocol_options(args)
    assert (args.time_limit, args.dir, args.polling, args.turn_ms) == (10.0, ".", False, None)
