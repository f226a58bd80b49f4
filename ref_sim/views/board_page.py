"""The analysis board: our engine live in a web page, one self-contained HTML file.

    python -m ref_sim.board [-o board.html] [--moves "4 4, 4 0"] [--rules wpi|codingame]

The page carries the WebAssembly core (agent/data/core.wasm), the fitted evaluation's tables and
the Zobrist keys, and runs the core in a Web Worker made from its own text; its scripts are
ref_sim/views/assets/board*.js. The worker mirrors agent.search.AlphaBeta.iterate with a fresh
table per position, so at a fixed depth it gives the Python search's answers. What the page does:
docs/wasm.md.
"""

from __future__ import annotations

import argparse
import base64
import json
import struct
import sys
from pathlib import Path

from agent import core_wasm
from agent.eval_fitted import DEFAULT_DATA, load_data
from agent.rules import WPI, ZOBRIST_CELL, ZOBRIST_FORCED
from agent.search import ASPIRATION_GROWTH, MAX_PLY, PROVEN_SCORE, WIN_SCORE, Features
from agent.rules import IllegalMoveError, InvalidMoveError, Move, Position
from agent.cli_common import OneLineParser, write_output
from ref_sim.entry_point import entry_point, prog
from ref_sim.views.replay_page import SHARED_SCRIPT, asset, filled

MODULE = "ref_sim.board"

#: The page's table: 2^20 slots of 16 bytes, 16 MiB of the browser's memory.
TT_SLOTS = 1 << 20
#: Seconds per move when the engine plays, until the user says otherwise.
DEFAULT_SECONDS = 1.0


def page_data() -> dict:
    """What the page's script needs, as JSON: the module, the evaluation, the keys, the constants."""
    fitted = load_data(DEFAULT_DATA)
    tables = struct.pack(f"<{3 * core_wasm.PATTERNS}i", *fitted["chance"], *fitted["mover"], *fitted["waiter"])
    w = fitted["weights"]
    return {
        "wasm": base64.b64encode(core_wasm.WASM_PATH.read_bytes()).decode("ascii"),
        "wasm_version": core_wasm.WASM_VERSION,
        "fitted": base64.b64encode(tables).decode("ascii"),
        "weights": [fitted["scale"], w["line"], w["board"], w["tempo"], w["free_move"]],
        "evaluation": Path(DEFAULT_DATA).name,
        "zobrist": [str(key) for key in (*ZOBRIST_CELL[0], *ZOBRIST_CELL[1], *ZOBRIST_FORCED)],
        "features": {name: getattr(Features(), name) for name in Features.names()},
        "aspiration_growth": ASPIRATION_GROWTH, "max_ply": MAX_PLY, "tt_slots": TT_SLOTS,
        "win_score": WIN_SCORE, "proven_score": PROVEN_SCORE, "score_per_logit": fitted["score_per_logit"],
        "default_seconds": DEFAULT_SECONDS,
    }


def position_link(page: str, rules: str, moves) -> str:
    """``page`` opened on the position after ``moves`` (cells 0-80, board * 9 + spot) under
    ``rules``: ``board.html#rules=wpi&moves=4440`` (each move its board and spot digits)."""
    return f"{page}#rules={rules}&moves={''.join(f'{m // 9}{m % 9}' for m in moves)}"


# The core as the page drives it (agent/core_wasm.c's calls), shared by the page and the worker.
CORE_SCRIPT = "\n" + asset("board_core.js")

# The engine: agent.search.AlphaBeta.iterate around the core's root search, in a Web Worker.
WORKER_SCRIPT = "\n" + asset("board_worker.js")

# The page: the board, the moves, the engine's lines and the controls.
SCRIPT = SHARED_SCRIPT + "\n" + asset("board.js")

STYLE = "\n" + asset("board.css")

PAGE = asset("board.html")


def page() -> str:
    """The whole page."""
    text = filled(PAGE, STYLE, SCRIPT).replace("@CORE@", CORE_SCRIPT).replace("@WORKER@", WORKER_SCRIPT)
    return text.replace("@DATA@", json.dumps(page_data()))    # last: the data is not searched again


def write_page(out) -> Path:
    """Write the analysis board to ``out``; its path."""
    out = Path(out)
    write_output(out, page())
    return out


#: The rules' names in links, as ref_sim.views.replay's games name them.
RULES = (WPI, "codingame")


def parse_moves(text: str, rules: str) -> list[int]:
    """``--moves``: moves from the empty board as the referee writes them (``4 4, 4 0``), checked
    under ``rules``; ValueError saying which move is wrong."""
    pos = Position(rules)
    moves = []
    for i, part in enumerate(filter(None, (p.strip() for p in text.split(","))), 1):
        try:
            pos.play(Move.parse(part))
        except (InvalidMoveError, IllegalMoveError) as error:
            raise ValueError(f"--moves: move {i} ({part!r}): {error}") from None
        moves.append(pos.moves_played()[-1])
    return moves


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=prog(MODULE),
        description="Write the analysis board: our engine in one HTML page (the search core as WebAssembly, in a "
                    "Web Worker). Set up or paste a position, watch the engine think, play against it.",
        epilog="The page opens from disk in any browser with WebAssembly (no server, no network); uttt-replay "
               "writes one beside each replay and links every position to it. Exit codes: 0 written, 2 bad input.")
    parser.add_argument("-o", "--out", metavar="OUT.html", default="board.html", help="the page to write "
                        "(default: board.html)")
    parser.add_argument("--moves", default="", metavar="MOVES",
                        help="open on the position after these moves from the empty board, e.g. '4 4, 4 0'")
    parser.add_argument("--rules", choices=RULES, default=WPI, help="the rules (default: wpi, the CS 4341 referee's)")
    return parser


@entry_point(MODULE)
def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m ref_sim.board``; prints the page's address with the position."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        moves = parse_moves(args.moves, args.rules)
        out = write_page(args.out)
    except (ValueError, OSError) as error:
        parser.exit(2, f"{prog(MODULE)}: error: {error}\n")
    print(position_link(out.resolve().as_uri(), args.rules, moves) if moves else out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
