"""What a hostile bot costs the file-protocol runner: one ``uttt-match`` game of the
random player against a bot of ``tests/bots/hostile_files.py``, for each case asked.

    python -m scripts.bench_hostile_bots sparse fifo daemons keeper --size-mb 1024
    python -m scripts.bench_hostile_bots --root /tmp/before sparse --size-mb 100

How it measures and what it prints: docs/measurements.md, "scripts.bench_hostile_bots".
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from ref_sim.series.output.game_line import GameLine
from scripts.processes import carrying, kill

ROOT = Path(__file__).resolve().parent.parent

BOT = ROOT / "tests" / "bots" / "hostile_files.py"
#: Runs the runner in this process and prints its own peak memory (KB) on stderr at its end.
MEASURED = ("import resource, sys\n"
            "from ref_sim import match\n"
            "code = match.main(sys.argv[1:])\n"
            "print('peak_kb', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
            "sys.exit(code)\n")
#: The variable every process of a case carries, so that what outlives the runner is found.
PROBE_ENV = "UTTT_BENCH_PROBE"


def run_case(case: str, args, work: Path) -> dict:
    """One game of ``case``; its figures."""
    out = work / case
    bot = f"{sys.executable} {BOT} {case} {{name}} {{dir}}"
    if case == "sparse":
        bot += f" {int(args.size_mb * (1 << 20))}"
    elif case == "daemons":
        bot += " uttt-bench-daemon"
    token = uuid.uuid4().hex
    env = {**os.environ, PROBE_ENV: token,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(args.root), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-c", MEASURED, "random", bot, "--games", "1", "--time-limit",
               str(args.time_limit), "--seed", "1", "--out", str(out), "-q",
               "--startup-wait", "1", "--exit-wait", "1"]
    begun = time.time()
    runner = subprocess.Popen(command, cwd=args.root, env=env, start_new_session=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _, err = runner.communicate(timeout=args.give_up)
        hung = False
    except subprocess.TimeoutExpired:
        os.killpg(runner.pid, signal.SIGINT)         # Ctrl-C, as a user would
        try:
            _, err = runner.communicate(timeout=5)
            hung = False
        except subprocess.TimeoutExpired:
            os.killpg(runner.pid, signal.SIGKILL)
            _, err = runner.communicate()
            hung = True
    left = carrying(PROBE_ENV, token)
    kill(left)
    figures = {"case": case, "exit": runner.returncode, "seconds": round(time.time() - begun, 2),
               "hung": hung, "left_running": len(left)}
    peak = re.search(r"peak_kb (\d+)", err)
    figures["runner_peak_mb"] = round(int(peak.group(1)) / 1024, 1) if peak else None
    games = out / "games.jsonl"
    game = (GameLine.from_json(json.loads(games.read_text().splitlines()[0]), f"{games} line 1")
            if games.is_file() and games.stat().st_size else None)
    if game:
        figures["verdict"] = f"{game.result}: {game.reason}"
        figures["hints"] = game.hints
        logs = sorted((out / "logs").glob("game-0001-*.log"))
        planted = [float(m.group(1)) for log in logs
                   for m in re.finditer(r"planted: .* at (\d+\.\d+)", log.read_text(errors="replace"))]
        if planted:
            figures["plant_to_verdict_s"] = round(game.started + game.duration - planted[0], 3)
    else:
        figures["verdict"] = "none"
        figures["stderr"] = err.strip().splitlines()[-3:]
    return figures


def keeper_start(args) -> dict:
    """Milliseconds from Popen to the bot running, plain and under a keeper (medians)."""
    from ref_sim.series.process import keeper
    figures = {"case": "keeper"}
    for label, wrap in (("plain_ms", list), ("keeper_ms", keeper.wrapped)):
        delays = []
        for _ in range(args.repeat):
            begun = time.time()
            said = subprocess.run(wrap(["date", "+%s.%N"]), capture_output=True, text=True).stdout
            delays.append(float(said) - begun)
        figures[label] = round(statistics.median(delays) * 1000, 1)
    figures["keeper_available"] = keeper.AVAILABLE
    return figures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.strip().splitlines()[-1])
    parser.add_argument("cases", nargs="+", choices=["sparse", "fifo", "daemons", "keeper"])
    parser.add_argument("--size-mb", type=float, default=1024.0, help="the sparse move_file's size")
    parser.add_argument("--time-limit", type=float, default=1.0)
    parser.add_argument("--give-up", type=float, default=30.0,
                        help="seconds after which a runner that has not finished gets Ctrl-C")
    parser.add_argument("--repeat", type=int, default=20, help="keeper: starts measured")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose runner runs")
    args = parser.parse_args(argv)
    args.root = args.root.resolve()
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as temp:
        for case in args.cases:
            figures = keeper_start(args) if case == "keeper" else run_case(case, args, Path(temp))
            print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
