"""Play a series of games between two agents through the simulated referee.

    python -m ref_sim.match AGENT1 AGENT2 [--games N] [--time-limit S] [--seed N]
                            [--out DIR] [--show] [--paired] [-q]

AGENT is a built-in name (see :data:`BUILTINS`) or a shell-style command with the
placeholders ``{name}``, ``{dir}`` and ``{time_limit}``, e.g.
``"python my_player.py {name} --dir {dir}"``.  Agent 1 is called ``<Label>1`` and agent 2
``<Label>2`` in every game (``Random1``, ``Agent2``...).

Each game runs as in the tournament: the agents are started first, then the referee, in a
fresh directory ``<out>/game-0001/``; the agents' output goes to ``<out>/logs/`` (outside
the game directory, which the referee cleans), with the JSON record of each game.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ref_sim.referee import INVALID_MOVE, OUT_OF_ORDER, TIME_OUT, Printer, run_game

#: Built-in agents: label -> command template.  {python} is this interpreter.
BUILTINS = {
    "random": "{python} -m ref_sim.random_agent {name} --dir {dir}",
    "agent": "{python} -m agent {name} --dir {dir} --time-limit {time_limit}",
    # A typical student bot: depth-3 minimax with the seed code's line-count evaluation.
    "seed": "{python} -m agent {name} --dir {dir} --time-limit {time_limit} --engine seed",
}
#: After end_game, how long an agent may take to exit before it is killed.
EXIT_WAIT = 3.0
PROJECT_ROOT = str(Path(__file__).resolve().parent.parent)


@dataclass
class AgentSpec:
    label: str          # e.g. "Random"; the name in a game is label + "1" or "2"
    template: str       # command with {name}, {dir}, {time_limit}

    def command(self, name: str, directory: Path, time_limit: float) -> list[str]:
        values = {"name": name, "dir": str(directory), "time_limit": f"{time_limit:g}",
                  "python": sys.executable}
        return [token.format(**values) for token in shlex.split(self.template)]


def agent_spec(text: str) -> AgentSpec:
    """A built-in name or a command; the label is derived from the program's name."""
    if text in BUILTINS:
        return AgentSpec(text.capitalize(), BUILTINS[text])
    tokens = shlex.split(text)
    if not tokens:
        raise ValueError("empty agent command")
    program = tokens[0]
    if Path(program).name.startswith("python") and len(tokens) > 1:
        rest = tokens[1:]
        if rest[0] == "-m" and len(rest) > 1:
            program = rest[1].split(".")[-1] if rest[1].split(".")[-1] != "__main__" else rest[1]
        elif not rest[0].startswith("-"):
            program = rest[0]
        else:
            program = "Python"
    label = re.sub(r"[^A-Za-z0-9]", "", Path(program).stem).capitalize() or "Player"
    return AgentSpec(label, text)


@dataclass
class Side:
    """One agent's results over the series."""
    name: str
    wins: int = 0
    losses: int = 0
    draws: int = 0
    reasons: Counter = field(default_factory=Counter)   # e.g. "lost: Time out!"

    def line(self) -> str:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(self.reasons.items()))
        return (f"{self.name}: {self.wins} wins, {self.losses} losses, {self.draws} draws"
                + (f" ({reasons})" if reasons else ""))


def start_agent(spec: AgentSpec, name: str, directory: Path, time_limit: float, log: Path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PROJECT_ROOT, env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    handle = open(log, "w", encoding="utf-8")
    try:
        command = spec.command(name, directory, time_limit)
        handle.write(f"$ {shlex.join(command)}\n")
        handle.flush()
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, env=env)
    except OSError as error:
        handle.write(f"could not start: {error}\n")
        process = None
    handle.close()
    return process


def play_game(number: int, specs: dict, names, directory: Path, logs: Path, time_limit: float,
              seed: int | None, first=None, opening=None, show=False):
    """One game: start both agents, referee, then collect them.  Returns (record, notes).

    specs maps each name to its AgentSpec; names is the order given to the referee.
    """
    directory.mkdir(parents=True, exist_ok=True)
    processes = {}
    for name in names:
        processes[name] = start_agent(specs[name], name, directory, time_limit,
                                      logs / f"game-{number:04d}-{name}.log")
    exited_early = {}
    finished = threading.Event()

    def watch():                    # notes which agents exit before the game ends
        while not finished.wait(0.02):
            for name, process in processes.items():
                if process is None:
                    exited_early.setdefault(name, "could not start")
                elif name not in exited_early and process.poll() is not None:
                    exited_early[name] = f"exited with code {process.returncode}"

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    printer = Printer(boards=True) if show else None

    def on_event(event):
        if event.kind in ("end", "abort"):
            finished.set()
        if printer is not None and event.kind != "end":
            printer(event)
    record = run_game(directory, names[0], names[1], time_limit=time_limit, seed=seed,
                      on_event=on_event, first=first, opening=opening)
    finished.set()
    watcher.join()
    notes = {name: f"crashed ({why})" for name, why in exited_early.items()}
    deadline = time.monotonic() + max(0.0, EXIT_WAIT - 1.0)   # run_game waited 1 s already
    for name, process in processes.items():
        if process is None or name in notes:
            continue
        try:
            process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            notes[name] = "did not exit"
    record.save(logs / f"game-{number:04d}.json")
    return record, notes


def describe(record, notes) -> str:
    if record.result == "tie":
        text = "draw"
    elif record.result == "win":
        text = f"{record.winner} wins: {record.reason}"
    else:
        text = f"aborted: {record.reason}"
    extra = "; ".join(f"{name} {note}" for name, note in notes.items())
    return (f"{record.p1} (X) vs {record.p2} (O): {text} "
            f"[{len(record.moves) + 4} moves, {record.duration:.1f} s]"
            + (f" -- {extra}" if extra else ""))


def tally(sides: dict, record, notes) -> None:
    short = {TIME_OUT: "time-outs", INVALID_MOVE: "invalid moves",
             OUT_OF_ORDER: "out-of-order"}
    for name, side in sides.items():
        if record.result == "tie":
            side.draws += 1
        elif record.result == "win":
            if record.winner == name:
                side.wins += 1
            else:
                side.losses += 1
                if record.reason in short:
                    side.reasons[short[record.reason]] += 1
        else:
            side.reasons["aborted"] += 1
        note = notes.get(name)
        if note:
            side.reasons["crashes" if note.startswith("crashed") else note] += 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ref_sim.match",
        description="Play a series of games between two agents through the referee files.",
        epilog=f"Built-in agents: {', '.join(BUILTINS)}.  Otherwise AGENT is a command with "
               "{name}, {dir} and {time_limit} placeholders.")
    parser.add_argument("agent1")
    parser.add_argument("agent2")
    parser.add_argument("--games", type=int, default=2, help="number of games (default 2)")
    parser.add_argument("--time-limit", type=float, default=10.0, metavar="S",
                        help="seconds per move (default 10)")
    parser.add_argument("--seed", type=int, help="seed of the series (coin flips, openings)")
    parser.add_argument("--out", help="directory for the games, logs and records "
                                      "(default: a new temporary directory)")
    parser.add_argument("--paired", action="store_true",
                        help="games in pairs: same opening, the other agent moves first")
    parser.add_argument("--show", action="store_true", help="print the boards as games go")
    parser.add_argument("-q", "--quiet", action="store_true", help="only the final summary")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    if not args.time_limit > 0:
        parser.error("--time-limit must be positive")
    try:
        specs = [agent_spec(args.agent1), agent_spec(args.agent2)]
    except ValueError as error:
        parser.error(str(error))
    names = [specs[0].label + "1", specs[1].label + "2"]
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="uttt-match-"))
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    sides = {name: Side(name) for name in names}
    say = (lambda *a, **k: None) if args.quiet else print
    say(f"{names[0]}: {specs[0].template}\n{names[1]}: {specs[1].template}\n"
        f"games, logs and records in {out}")

    pair = None
    try:
        for number in range(1, args.games + 1):
            seed = rng.randrange(2 ** 32)
            order = names if number % 2 else names[::-1]      # alternate the name order
            first = opening = None
            if args.paired and pair is not None:
                previous = pair
                first = previous.p2                        # the other agent moves first
                opening = [(b, s) for _, b, s in previous.opening]
                pair = None
            record, notes = play_game(number, dict(zip(names, specs)), order, out / f"game-{number:04d}", logs,
                                      args.time_limit, seed, first, opening, args.show)
            if args.paired and first is None:
                pair = record
            tally(sides, record, notes)
            say(f"Game {number}/{args.games}: {describe(record, notes)}", flush=True)
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
    a, b = sides[names[0]], sides[names[1]]
    played = a.wins + a.losses + a.draws
    score = (a.wins + a.draws / 2) / played if played else 0.0
    print(f"Score of {a.name} vs {b.name}: {a.wins} - {a.losses} - {a.draws} "
          f"[{score:.2f}] {played}")
    print(a.line())
    print(b.line())
    print(f"Logs and records: {logs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
