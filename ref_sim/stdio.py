"""``uttt-stdio``: a series between two stdin/stdout programs under CodinGame's protocol and rules
(its referee: :mod:`ref_sim.referees.codingame_shell`; the user's guide: docs/bench.md, the protocol
and timing: docs/protocol.md).

A front-end of :class:`ref_sim.series.command.SeriesCommand`: its options, series.json and games.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ref_sim import entry_point
from ref_sim.referees.codingame_shell import (DEFAULT_FIRST_TURN_MS, DEFAULT_GRACE_MS, DEFAULT_TURN_MS, EXIT_WAIT,
                                       describe)
from ref_sim.rules import CODINGAME
from ref_sim.series import command, command_line
from ref_sim.series.output.game_line import GameLine
from ref_sim.series.codingame_games import FORMAT, REPEAT_HINT, STARTUP_WAIT, StdioGames, StdioGameSettings
from ref_sim.series.command_line import MAX_TURN_MS, add_timing, seconds_in_ms
from ref_sim.series.output.report import report_lines, summarize
from ref_sim.series.settings import StdioSettings, whole_pairs
from ref_sim.series.specs import stdio_spec

__all__ = ["main", "build_parser", "add_timing", "seconds_in_ms", "MAX_TURN_MS",
           "DEFAULT_TURN_MS", "DEFAULT_FIRST_TURN_MS", "DEFAULT_GRACE_MS"]

MODULE = "ref_sim.stdio"
#: The settings series.json keeps, besides the agents, the seed, the games and the isolation.
TIMING = ("turn_ms", "first_turn_ms", "grace_ms")

EPILOG = """\
agents:
  agent, agent:depth=N, agent:nodes=N   our agent (python -m agent --protocol codingame
                          --seed N: each game its own seed)
  random                  a random player (python -m ref_sim.bots.stdio_random --seed N)
  "COMMAND"               any command; placeholders {python} {seed} {turn_ms} {first_turn_ms}

pairs: agent 1 moves first in odd games, agent 2 in even games, every game from the empty
board as on CodinGame; the games differ only if the programs use their {seed}.  Verdicts:
Time out! (no answer within the turn's time + grace), Invalid move!, Crashed!.

output (agent 1's view; error bars at 95 %, pentanomial over pairs):
  Score of A vs B: W - L - D  [score] games
  Elo difference: E +/- err, LOS: x %, DrawRatio: y %
  Ptnml(0-2): [pairs scoring 0, 1/2, 1, 3/2, 2 points]
  Distinct games: D of N

""" + command_line.files_and_exits("program") + """

examples:
  python -m ref_sim.stdio agent random --games 2
  python -m ref_sim.stdio agent agent:depth=4 --games 20 --seed 1 --out runs/cg
  python -m ref_sim.stdio --resume --out runs/cg

More in docs/bench.md (series, stops, --resume) and docs/protocol.md (CodinGame's protocol)."""


def build_parser():
    parser = command_line.parser_for(
        MODULE, "Referee games between two stdin/stdout programs with CodinGame's Ultimate "
                "Tic-Tac-Toe protocol and rules, in pairs, with cutechess-style statistics.", EPILOG)
    command_line.add_agents(parser, "program")
    # Settings a series keeps (series.json) default to None: given or not, --resume knows.
    command_line.add_games(parser)
    add_timing(parser)
    command_line.add_run_options(parser, seeds="the programs' {seed}", concurrency=False)
    command_line.add_bot_options(parser, STARTUP_WAIT, EXIT_WAIT, "")
    return parser


class Stdio(command.HeadToHead):
    """A series through stdin/stdout."""

    module, prefix, noun = MODULE, "uttt-stdio-", "program"
    flags = {"turn_ms": "--turn-ms", "first_turn_ms": "--first-turn-ms", "grace_ms": "--grace-ms"}

    def build_parser(self):
        return build_parser()

    def spec(self, text: str):
        return stdio_spec(text)

    def given(self, args) -> dict:
        return {key: getattr(args, key) for key in TIMING}

    def defaults(self) -> dict:
        return {"turn_ms": DEFAULT_TURN_MS, "first_turn_ms": DEFAULT_FIRST_TURN_MS,
                "grace_ms": DEFAULT_GRACE_MS, "games": 2}

    def value(self, settings: dict, run, say) -> StdioSettings:
        games = whole_pairs(settings["games"], True, self.before, say,
                            "games are played in pairs, sides swapped")
        return StdioSettings(run=run, agents=tuple(settings["agents"]), seed=settings["seed"],
                             games=games, **{key: settings[key] for key in TIMING})

    def record(self) -> dict:
        return self.settings.record(FORMAT, CODINGAME, self.names)

    def header(self, runner, out: Path, kept: bool) -> str:
        games = self.settings.games
        turn_ms, first_turn_ms, grace_ms = self.settings.timing()
        return (f"{self.bots_lines()}\n"
                f"series seed {self.settings.seed}; {games} game{'s' if games > 1 else ''} at "
                f"{turn_ms:g} ms per turn (first {first_turn_ms:g} ms, grace {grace_ms:g} ms); "
                + (f"on {len(runner.slots())} cluster worker(s), {runner.capacity()} at once; "
                   if runner.remote else "")
                + (f"files in {out}" if kept else "files in a temporary directory, deleted at the end "
                   "(--out DIR keeps them), but for the logs of games that go wrong"))

    def series(self, out: Path, isolate, stop, done: list[GameLine]) -> list[StdioGames]:
        settings = StdioGameSettings(*self.settings.timing(), isolate, **dict(self.settings.run.waits))
        show = (lambda text: print(text, flush=True)) if self.settings.run.show else None
        return [StdioGames(self.specs, self.names, self.settings.seed, settings, out, show=show,
                           stop=stop)]

    def describe(self, game: GameLine) -> str:
        return describe(game)

    def figures(self, games: list[GameLine]):
        return summarize(games, self.names, self.settings.games > 1)

    def report(self, games: list[GameLine]) -> list[str]:
        return report_lines(games, self.names, self.settings.games > 1, repeat_hint=REPEAT_HINT)


@entry_point.entry_point(MODULE)
def main(argv: list[str] | None = None) -> int:
    return Stdio().main(argv)


if __name__ == "__main__":
    sys.exit(main())
