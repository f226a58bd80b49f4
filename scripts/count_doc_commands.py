#!/usr/bin/env python3
"""Count the commands that README.md and docs/ show: how many the test suite runs
(tests/test_doc_commands.py) and how many it does not, with the reason each page gives.

    python -m scripts.count_doc_commands

A block of commands is a fenced block tagged ``sh``; one that cannot run in the suite is preceded
by ``<!-- not run: REASON -->``. A command is a line of such a block that is not blank, not a
comment and not the continuation of the line before."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BLOCK = re.compile(r"(?:<!-- not run: (?P<reason>.*?) -->\n)?^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```",
                   re.S | re.M)
#: What starts a command line in these pages.
COMMAND_START = re.compile(r"^(?:uttt-[\w-]+|python3?|py|scripts/|mkdir|cd|UTTT_\w+=|dist/)\b")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    info: str
    body: str
    not_run: str | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"

    @staticmethod
    def looks_like_a_command(line: str) -> bool:
        return bool(COMMAND_START.match(line.strip()))

    def commands(self) -> list[str]:
        found, continued = [], False
        for line in self.body.splitlines():
            text = line.strip()
            if text and not text.startswith("#") and not continued:
                found.append(text)
            continued = text.endswith("\\")
        return found


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def doc_blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    return [Block(page, text.count("\n", 0, match.start("info")) + 1, match.group("info").strip(),
                  match.group("body"), match.group("reason"))
            for match in BLOCK.finditer(text)]


def main() -> int:
    run = not_run = 0
    for page in doc_files():
        for block in doc_blocks(page):
            if block.info != "sh":
                continue
            count = len(block.commands())
            if block.not_run is None:
                run += count
            else:
                not_run += count
                print(f"not run: {block.where}: {count} command(s): {block.not_run}")
    print(f"{run} documented commands run in the test suite, {not_run} do not (reasons above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
