"""The analysis board's engine in headless Chromium: how soon its first line shows, and its speed.

Usage:
  python -m scripts.bench_board_page [--runs 5] [--seconds 3]

Writes the page (ref_sim/views/board_page.py) to a temporary folder and opens it --runs times
from disk in headless Chromium (scripts/headless_chromium.py), each time on the empty board with
the analysis on. Printed per run and as min / median: the first search's latency (from the
navigation's start until the engine's first line, depth 1, is on the page: the page's parsing,
both instances of the module compiled and set up, the worker started, the search), and after
--seconds of analysis the deepest depth and the engine's nodes/s in the browser.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agent.options import real, whole
from scripts.bench_speed import load_text
from scripts.headless_chromium import NO_CHROMIUM, Browser, find_chromium
from ref_sim.views import board_page

ROOT = Path(__file__).resolve().parent.parent


def wait_for(browser: Browser, expression: str, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while not (value := browser.js(expression)):
        if time.monotonic() > deadline:
            raise SystemExit(f"bench_board_page: the page never showed {expression} ({browser.errors()})")
        time.sleep(0.01)
    return value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=whole(1, 100), default=5)
    parser.add_argument("--seconds", type=real(0.1, 600), default=3.0, help="of analysis before the speed is read")
    args = parser.parse_args(argv)
    chromium = find_chromium()
    if chromium is None:
        print(f"bench_board_page: {NO_CHROMIUM}", file=sys.stderr)
        return 2
    firsts, depths, speeds = [], [], []
    with tempfile.TemporaryDirectory(prefix="uttt_board_") as tmp:
        page = board_page.write_page(Path(tmp) / "board.html")
        print(f"{page.name}: {page.stat().st_size:,} bytes; {args.runs} runs in {Path(chromium).name}, "
              f"{load_text()}")
        browser = Browser(chromium, Path(tmp) / "profile")
        try:
            for run in range(1, args.runs + 1):
                browser.open("about:blank")      # a new document each run, not a jump within the last one
                browser.open(f"{page.as_uri()}#analyse=1")
                first = wait_for(browser, "window.firstResultMs")
                time.sleep(args.seconds)
                best = browser.js("lines.length ? {depth: lines[0].depth, nodes: lines[0].nodes, "
                                  "elapsed: lines[0].elapsed} : null")
                firsts.append(first)
                depths.append(best["depth"])
                speeds.append(best["nodes"] / best["elapsed"])
                print(f"  run {run}: first line after {first:.0f} ms; after {args.seconds:g} s depth {best['depth']}, "
                      f"{speeds[-1]:,.0f} nodes/s", flush=True)
            if browser.errors():
                print(f"bench_board_page: the page reported errors: {browser.errors()}", file=sys.stderr)
                return 1
        finally:
            browser.close()
    print(f"first line, ms: min {min(firsts):.0f}, median {statistics.median(firsts):.0f}")
    print(f"after {args.seconds:g} s: depth median {statistics.median(depths):g}; nodes/s min {min(speeds):,.0f}, "
          f"median {statistics.median(speeds):,.0f}")
    print(load_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
