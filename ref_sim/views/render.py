"""Pictures of an Ultimate Tic-Tac-Toe position: hand-written SVG, or PNG through matplotlib.

    python -m ref_sim.render MOVES --out FILE.svg|FILE.png [--title TEXT]

MOVES is a move list from the empty board, one ``board spot`` pair per move, written in
any way that keeps the digits: ``"4 0 0 3 3 8"``, ``"40 03 38"``, ``"(4,0) (0,3) (3,8)"``, in
one word or several (``40 03 38`` unquoted is the same list; none is the empty board).
To draw a position of a saved game, use ``python -m ref_sim.show GAME --ply K --svg FILE``.

The picture is computed once as a list of plain shapes (:func:`scene`), then written by two
small back-ends: :func:`to_svg` (no dependency) and :func:`write_png` (matplotlib, the
optional ``plot`` extra).  Both draw exactly the same thing.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from agent.cli_common import OneLineParser, write_output
from ref_sim.entry_point import entry_point, prog
from ref_sim.rules import DRAW, O, SYMBOLS, TIE, X, Game, IllegalMoveError

MODULE = "ref_sim.render"

#: Side of one cell in SVG user units (pixels at 100 %); marks are drawn inside it.
CELL = 44
#: Room for the spot coordinates on the top and left edges.
EDGE = 30
#: Room above the grid for the title and the line that says what happened.
HEAD = 58
#: Room below the grid for the legend.
FOOT = 30
PAD = 14

INK = "#1f2937"                 # thick lines, text
GRID = "#c4c9d1"                # thin lines inside a local board
FAINT = "#8a93a0"               # coordinates, board numbers
COLOURS = {X: "#d62839", O: "#1d5fd1"}
TO_PLAY = "#ffe27a"             # background of the boards the next move may go to
LAST_MOVE = "#9be7b4"           # background of the cell of the last move
DRAWN = "#9aa3ad"

#: The message for PNG requests when matplotlib is missing (one line, no traceback).
MATPLOTLIB_MISSING = ("PNG output needs matplotlib, which is not installed: "
                      "pip install -e '.[plot]' in the project")


class MissingDependency(RuntimeError):
    """An optional dependency (matplotlib) is needed for what was asked."""


# -- shapes ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rect:
    """A filled rectangle."""
    x: float
    y: float
    w: float
    h: float
    fill: str
    opacity: float = 1.0
    cls: str = ""


@dataclass(frozen=True)
class Line:
    """A straight stroke."""
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str
    width: float
    cls: str = ""


@dataclass(frozen=True)
class Cross:
    """An X: two diagonal strokes in the square (x, y, size); one element in SVG."""
    x: float
    y: float
    size: float
    stroke: str
    width: float
    opacity: float = 1.0
    cls: str = ""


@dataclass(frozen=True)
class Ring:
    """An O: a circle outline."""
    cx: float
    cy: float
    r: float
    stroke: str
    width: float
    opacity: float = 1.0
    cls: str = ""


@dataclass(frozen=True)
class Text:
    """A line of text; y is the baseline, anchor is "start", "middle" or "end"."""
    x: float
    y: float
    text: str
    size: float
    fill: str = INK
    anchor: str = "middle"
    bold: bool = False
    cls: str = ""


# -- the picture -------------------------------------------------------------------------

def cell_origin(board: int, spot: int) -> tuple[float, float]:
    """Top-left corner of the cell ``(board, spot)`` in the picture.

    >>> cell_origin(0, 0) == (PAD + EDGE, HEAD + EDGE)
    True
    """
    column = 3 * (board % 3) + spot % 3
    row = 3 * (board // 3) + spot // 3
    return PAD + EDGE + column * CELL, HEAD + EDGE + row * CELL


def board_origin(board: int) -> tuple[float, float]:
    """Top-left corner of the local board ``board``."""
    return cell_origin(board, 0)


def size() -> tuple[float, float]:
    """Width and height of the picture."""
    return 2 * PAD + EDGE + 9 * CELL, HEAD + EDGE + 9 * CELL + FOOT


def boards_to_play(game: Game) -> list[int]:
    """The local boards the next move may go to (empty once the game is over)."""
    return sorted({board for board, _ in game.legal_moves()})


def describe(game: Game, names: tuple[str, str] | None = None) -> str:
    """One line: the last move and what comes next, e.g. ``"O 4 5 · X to play in board 5"``."""
    def who(mark: int) -> str:
        return f"{names[mark]} ({SYMBOLS[mark]})" if names else SYMBOLS[mark]
    parts = []
    if game.moves:
        board, spot = game.moves[-1]
        parts.append(f"move {len(game.moves)}: {who(1 - game.turn)} {board} {spot}")
    else:
        parts.append("empty board")
    if game.result == TIE:
        parts.append("draw")
    elif game.result is not None:
        parts.append(f"{who(game.result)} wins")
    else:
        boards = boards_to_play(game)
        where = f"board {boards[0]}" if len(boards) == 1 else "any open board"
        parts.append(f"{who(game.turn)} to play in {where}")
    return " · ".join(parts)


def scene(game: Game, last_move: tuple[int, int] | None = None, title: str | None = None,
          subtitle: str | None = None, to_play: list[int] | None = None) -> list:
    """The shapes that draw ``game``, back to front.

    last_move: the cell to highlight (default: the last move played; ``None`` on an empty
    board).  title / subtitle: two lines above the grid (default: none / :func:`describe`).
    to_play: the boards to highlight as the next move's (default: from the rules).
    """
    if last_move is None and game.moves:
        last_move = game.moves[-1]
    if to_play is None:
        to_play = boards_to_play(game)
    if subtitle is None:
        subtitle = describe(game)
    results = game.local_results()
    width, height = size()
    left, top = PAD + EDGE, HEAD + EDGE
    span = 9 * CELL
    shapes: list = [Rect(0, 0, width, height, "#ffffff", cls="background")]

    for board in to_play:
        x, y = board_origin(board)
        shapes.append(Rect(x, y, 3 * CELL, 3 * CELL, TO_PLAY, 0.55, "to-play"))
    if last_move is not None:
        x, y = cell_origin(*last_move)
        shapes.append(Rect(x + 2, y + 2, CELL - 4, CELL - 4, LAST_MOVE, cls="last-move"))
    for board, result in enumerate(results):
        x, y = board_origin(board)
        if result == DRAW:
            shapes.append(Rect(x, y, 3 * CELL, 3 * CELL, DRAWN, 0.30, "drawn"))
        elif result is not None:
            shapes.append(Rect(x, y, 3 * CELL, 3 * CELL, COLOURS[result], 0.07, "won-wash"))

    # Thin lines inside the local boards, then thick ones between them.
    for k in range(1, 9):
        if k % 3:
            shapes.append(Line(left + k * CELL, top, left + k * CELL, top + span, GRID, 1.2))
            shapes.append(Line(left, top + k * CELL, left + span, top + k * CELL, GRID, 1.2))
    for k in range(0, 10, 3):
        shapes.append(Line(left + k * CELL, top - 1.5, left + k * CELL, top + span + 1.5,
                           INK, 3, "thick"))
        shapes.append(Line(left - 1.5, top + k * CELL, left + span + 1.5, top + k * CELL,
                           INK, 3, "thick"))

    inset = 0.25 * CELL
    for board in range(9):
        # Marks of a won board step back so that the big mark reads first.
        faded = 0.45 if results[board] in (X, O) else 1.0
        for spot in range(9):
            mark = game.cells[board][spot]
            if mark is None:
                continue
            opacity = 1.0 if (board, spot) == last_move else faded
            x, y = cell_origin(board, spot)
            if mark == X:
                shapes.append(Cross(x + inset, y + inset, CELL - 2 * inset, COLOURS[X], 4,
                                    opacity, "mark x"))
            else:
                shapes.append(Ring(x + CELL / 2, y + CELL / 2, CELL / 2 - inset, COLOURS[O], 4,
                                   opacity, "mark o"))

    for board, result in enumerate(results):
        x, y = board_origin(board)
        if result in (X, O):
            inner = 0.16 * 3 * CELL
            if result == X:
                shapes.append(Cross(x + inner, y + inner, 3 * CELL - 2 * inner, COLOURS[X], 16,
                                    0.5, "won x"))
            else:
                shapes.append(Ring(x + 1.5 * CELL, y + 1.5 * CELL, 1.5 * CELL - inner,
                                   COLOURS[O], 16, 0.5, "won o"))
        # The board number, small, in the top-left corner of each local board.
        shapes.append(Text(x + 4, y + 11, str(board), 10, FAINT, "start", cls="board-number"))

    # Spot coordinates: spot = row label (0, 3, 6) + column label (0, 1, 2).
    for k in range(9):
        shapes.append(Text(left + (k + 0.5) * CELL, top - 9, str(k % 3), 12, FAINT,
                           cls="coordinate"))
        shapes.append(Text(left - 9, top + (k + 0.5) * CELL + 4, str(3 * (k % 3)), 12, FAINT,
                           "end", cls="coordinate"))

    if title:
        shapes.append(Text(PAD, 24, title, 17, INK, "start", True, "title"))
    if subtitle:
        shapes.append(Text(PAD, 46 if title else 30, subtitle, 13, INK, "start",
                           cls="subtitle"))
    shapes.append(Text(PAD, height - 11,
                       "spot = row label + column label; board number in each corner",
                       10.5, FAINT, "start", cls="legend"))
    return shapes


# -- back-ends ---------------------------------------------------------------------------

def _attrs(**values) -> str:
    return " ".join(f"{key.rstrip('_').replace('_', '-')}={quoteattr(str(value))}"
                    for key, value in values.items() if value is not None)


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def to_svg(shapes: list) -> str:
    """An SVG document for ``shapes`` (the first must be the background rectangle)."""
    width, height = shapes[0].w, shapes[0].h
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" '
           f'height="{_num(height)}" viewBox="0 0 {_num(width)} {_num(height)}" '
           f'font-family="DejaVu Sans, Helvetica, Arial, sans-serif">']
    for shape in shapes:
        cls = shape.cls or None
        if isinstance(shape, Rect):
            out.append(f"<rect {_attrs(class_=cls, x=_num(shape.x), y=_num(shape.y), width=_num(shape.w), height=_num(shape.h), fill=shape.fill, fill_opacity=None if shape.opacity == 1 else _num(shape.opacity))}/>")
        elif isinstance(shape, Line):
            out.append(f"<line {_attrs(class_=cls, x1=_num(shape.x1), y1=_num(shape.y1), x2=_num(shape.x2), y2=_num(shape.y2), stroke=shape.stroke, stroke_width=_num(shape.width))}/>")
        elif isinstance(shape, Cross):
            x, y, s = shape.x, shape.y, shape.size
            d = (f"M{_num(x)} {_num(y)}L{_num(x + s)} {_num(y + s)}"
                 f"M{_num(x + s)} {_num(y)}L{_num(x)} {_num(y + s)}")
            out.append(f"<path {_attrs(class_=cls, d=d, stroke=shape.stroke, stroke_width=_num(shape.width), stroke_linecap='round', fill='none', opacity=None if shape.opacity == 1 else _num(shape.opacity))}/>")
        elif isinstance(shape, Ring):
            out.append(f"<circle {_attrs(class_=cls, cx=_num(shape.cx), cy=_num(shape.cy), r=_num(shape.r), stroke=shape.stroke, stroke_width=_num(shape.width), fill='none', opacity=None if shape.opacity == 1 else _num(shape.opacity))}/>")
        elif isinstance(shape, Text):
            out.append(f"<text {_attrs(class_=cls, x=_num(shape.x), y=_num(shape.y), font_size=_num(shape.size), fill=shape.fill, text_anchor=shape.anchor, font_weight='bold' if shape.bold else None)}>{escape(shape.text)}</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def require_matplotlib():
    """Import matplotlib's object API (no pyplot, no backend change) or raise MissingDependency."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependency(MATPLOTLIB_MISSING) from None
    return Figure, FigureCanvasAgg


def write_png(shapes: list, path, scale: float = 2.0) -> None:
    """Paint ``shapes`` with matplotlib into a PNG at ``scale`` pixels per SVG unit."""
    Figure, FigureCanvasAgg = require_matplotlib()
    from matplotlib.patches import Circle, Rectangle

    width, height = shapes[0].w, shapes[0].h
    dpi = 100
    figure = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    FigureCanvasAgg(figure)
    axes = figure.add_axes((0, 0, 1, 1))
    axes.set_xlim(0, width)
    axes.set_ylim(height, 0)
    axes.axis("off")
    points = 72 / dpi                   # one SVG unit in points at this figure size
    for z, shape in enumerate(shapes):
        if isinstance(shape, Rect):
            axes.add_patch(Rectangle((shape.x, shape.y), shape.w, shape.h, facecolor=shape.fill,
                                     alpha=shape.opacity, linewidth=0, zorder=z))
        elif isinstance(shape, Line):
            axes.plot([shape.x1, shape.x2], [shape.y1, shape.y2], color=shape.stroke,
                      linewidth=shape.width * points, solid_capstyle="butt", zorder=z)
        elif isinstance(shape, Cross):
            x, y, s = shape.x, shape.y, shape.size
            for xs, ys in (([x, x + s], [y, y + s]), ([x + s, x], [y, y + s])):
                axes.plot(xs, ys, color=shape.stroke, linewidth=shape.width * points,
                          alpha=shape.opacity, solid_capstyle="round", zorder=z)
        elif isinstance(shape, Ring):
            axes.add_patch(Circle((shape.cx, shape.cy), shape.r, fill=False,
                                  edgecolor=shape.stroke, linewidth=shape.width * points,
                                  alpha=shape.opacity, zorder=z))
        elif isinstance(shape, Text):
            axes.text(shape.x, shape.y, shape.text, fontsize=shape.size * points,
                      color=shape.fill, ha={"start": "left", "end": "right"}.get(
                          shape.anchor, "center"),
                      va="baseline", fontweight="bold" if shape.bold else "normal", zorder=z)
    save_figure(figure, path, dpi=dpi * scale)


def save_figure(figure, path, **options) -> None:
    """A matplotlib ``figure`` in the format of ``path``'s suffix, written as every output is
    (agent.cli_common.write_output: never into a FIFO nor through a symbolic link)."""
    image = io.BytesIO()
    figure.savefig(image, format=Path(path).suffix.lower().lstrip("."), **options)
    write_output(path, image.getvalue())


def save(shapes: list, path) -> None:
    """Write ``shapes`` to ``path``: PNG if it ends in ``.png``, else SVG."""
    path = Path(path)
    if path.suffix.lower() == ".png":
        write_png(shapes, path)
    else:
        write_output(path, to_svg(shapes))


# -- move lists --------------------------------------------------------------------------

#: What a move list may hold besides its digits: spaces and the usual separators.
MOVE_LIST_PUNCTUATION = " \t\n,;:()[]{}/|-"


def parse_moves(text: str) -> list[tuple[int, int]]:
    """The ``(board, spot)`` pairs of a move list: every digit counts, the spaces and
    separators of :data:`MOVE_LIST_PUNCTUATION` do not, anything else (a letter: ``"hello"``
    is not an empty move list) is an error.  An empty string is the empty board.

    >>> parse_moves("40 03, (3,8)")
    [(4, 0), (0, 3), (3, 8)]
    """
    stray = sorted({c for c in text if not c.isdigit() and c not in MOVE_LIST_PUNCTUATION})
    if stray or any(c.isdigit() and not "0" <= c <= "9" for c in text):
        raise ValueError(f"move list {text!r} is not a move list: only digits 0-8 as "
                         "board-spot pairs, such as \"4 0 0 3\" or \"40 03\"")
    digits = [int(d) for d in re.findall(r"[0-9]", text)]
    if re.search(r"\d\d\d", text):
        raise ValueError(f"move list {text!r}: write each move as board and spot, 0-8 each")
    if len(digits) % 2:
        raise ValueError(f"move list {text!r}: an odd number of digits "
                         f"({len(digits)}); each move is a board and a spot")
    if any(d > 8 for d in digits):
        raise ValueError(f"move list {text!r}: boards and spots are 0-8")
    return list(zip(digits[::2], digits[1::2]))


def position_from_moves(moves) -> Game:
    """The game after playing ``moves`` from the empty board; ValueError if one is illegal."""
    game = Game()
    for number, (board, spot) in enumerate(moves, 1):
        try:
            game.play(board, spot)
        except IllegalMoveError as error:
            raise ValueError(f"move {number} of the list is illegal: {error}") from None
    return game


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m ref_sim.render``."""
    parser = OneLineParser(
        prog=prog(MODULE),
        description="Draw the position after a move list as SVG (no dependency) or PNG "
                    "(needs matplotlib: pip install -e '.[plot]' in the project).",
        epilog="Saved games: python -m ref_sim.show GAME --ply K --svg FILE.  "
               "Exit codes: 0 done, 2 bad input or matplotlib missing.")
    # Several words are one list: 40 03 38 unquoted is "40 03 38"; none is the empty board.
    parser.add_argument("moves", metavar="MOVES", nargs="*",
                        help="moves from the empty board as 'board spot' pairs: "
                             "4 0 0 3, 40 03 or \"40 03\" (none, or \"\", for the empty board)")
    parser.add_argument("--out", required=True, metavar="FILE",
                        help="output file, .svg or .png")
    parser.add_argument("--title", help="a title above the board")
    return parser


@entry_point(MODULE)
def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m ref_sim.render``; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        suffix = Path(args.out).suffix.lower()
        if suffix not in (".svg", ".png"):
            raise ValueError(f"--out {args.out!r}: the file must end in .svg or .png")
        game = position_from_moves(parse_moves(" ".join(args.moves)))
        save(scene(game, title=args.title), args.out)
    except (ValueError, MissingDependency, OSError) as error:
        print(f"{prog(MODULE)}: error: {error}", file=sys.stderr)
        return 2
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
