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


# -- the table of docs/options.md -------------------------------------------------------------

import re  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def tools() -> dict:
    """Every command's parser, by the name users type."""
    from agent import cli as agent_cli
    from ref_sim import arena, ref, play
    from ref_sim.views import board_page, plot, render, replay, show
    return {"uttt-agent": agent_cli.build_parser(), "uttt-ref": ref.build_parser(),
            "uttt-match": match.build_parser(), "uttt-stdio": stdio.build_parser(),
            "uttt-tournament": tournament.build_parser(), "uttt-arena": arena.build_parser(),
            "uttt-play": play.build_parser(), "uttt-replay": replay.build_parser(),
            "uttt-show": show.build_parser(), "uttt-plot": plot.build_parser(),
            "uttt-render": render.build_parser(), "uttt-board": board_page.build_parser()}


def table() -> list[tuple[str, str, dict[str, list[str]], bool]]:
    """The rows of docs/options.md's first table: (idea, option, {old name: [tools]}, whether the
    old names count in another unit)."""
    text = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    rows = []
    for line in text.split("## ", 2)[0].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[1].startswith("`--"):
            continue
        option = re.match(r"`(--[\w-]+)", cells[1]).group(1)
        old = {name: re.findall(r"uttt-[\w-]+", tools_text) for name, tools_text
               in re.findall(r"`(--[\w-]+)[^`]*` \(([^)]*)\)", cells[2])}
        rows.append((cells[0], option, old, "milliseconds" in cells[2]))
    return rows


def options_of(parser) -> dict:
    """{option string: its argparse action}."""
    return {string: action for action in parser._actions for string in action.option_strings}


def test_the_table_is_read():
    rows = {idea: (option, old) for idea, option, old, _ in table()}
    assert rows["time per move"][0] == "--time-limit"
    assert rows["time per move"][1]["--seconds"] == ["uttt-arena", "uttt-play"]
    assert rows["which games to look at"] == ("--select", {"--games": ["uttt-replay"]})


def test_every_command_names_each_idea_as_the_table_does():
    parsers = tools()
    problems = []
    for idea, option, old, other_unit in table():
        for name, users in old.items():
            for tool in users:
                have = options_of(parsers[tool])
                if name not in have or option not in have:
                    problems.append(f"{tool}: {idea}: takes {option} and its old name {name}? "
                                    f"({option in have}, {name in have})")
                elif have[name].dest != have[option].dest and not other_unit:
                    problems.append(f"{tool}: {name} and {option} set different things")
        canonical = {row[1] for row in table()}
        for tool, parser in parsers.items():
            for name in options_of(parser):
                if name in old and name not in canonical and tool not in old[name]:
                    problems.append(f"{tool}: {name} is the old name of {option} ({idea})")
    assert problems == []


def test_every_view_takes_a_series_its_games_jsonl_or_one_game(tmp_path):
    """uttt-show, uttt-plot and uttt-replay read games the same way (records.games_source); the
    series is uttt-match's, its games played on the referee's machine and a virtual clock."""
    import virtual_games
    from ref_sim.views import plot, replay, show
    out = tmp_path / "run"
    assert match.main(["random", "random", "--games", "2", "--time-limit", "0.2", "--seed", "4", "--out", str(out),
                       "-q"], play=virtual_games.play_game) == 0
    one = out / "logs" / "game-0002.json"
    for given in (out, out / "games.jsonl"):
        assert len(show.load_games(given).games) == len(plot.load_series(given)) == 2
        assert len(replay.read_run(given)["games"]) == 2
    series = replay.read_run(out)["games"][1]
    single = replay.read_run(one)["games"]
    assert len(single) == 1 and single[0]["moves"] == series["moves"]
    record = __import__("json").loads(one.read_text())  # agent 1 of a lone game: the first it names
    points = 0.5 if record["result"] == "tie" else float(record["winner"] == record["names"][0])
    assert single[0]["score"] == points
    assert len(show.load_games(one).games) == len(plot.load_series(one)) == 1
