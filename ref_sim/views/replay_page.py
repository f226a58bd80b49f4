"""The pages' files, ``ref_sim/views/assets/`` (package data, as agent/data is), and the replay
page made of them (:mod:`ref_sim.views.replay` fills in the data); the analysis board
(:mod:`ref_sim.views.board_page`) and the crosstable take theirs from here too.

The replay's script only draws: the rules (which boards are won, where the next move goes) and
the verdicts come computed in the data, so the page holds no second copy of them.  Every text
from the data goes into the page as text (``textContent``), never as markup.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from ref_sim.views import render

#: The picture's colours (ref_sim.render's), given to the script and the styles.
COLOURS = {"x": render.COLOURS[0], "o": render.COLOURS[1], "toPlay": render.TO_PLAY,
           "lastMove": render.LAST_MOVE, "drawn": render.DRAWN, "ink": render.INK,
           "grid": render.GRID, "faint": render.FAINT, "forced": "#e08a00",
           "opening": "#e6e9ee", "best": "#1a9e4b", "suggestion": "#7b3fd0", "inaccuracy": "#d4a900",
           "mistake": "#e07000", "blunder": "#cc2020"}

#: The pages' files (package data beside this module): for each page (replay, the analysis board
#: of ref_sim/views/board_page.py, the crosstable of ref_sim/views/crosstable.py) its styles, its
#: own script and the HTML around them; the script the two boards share (DOM and SVG helpers,
#: scores as text, the board's cells, marks and lines, reading DATA and C, which each page defines
#: first), and their first script, which shows any script error on the page.
ASSETS = Path(__file__).resolve().parent / "assets"


def asset(name: str) -> str:
    """The text of one of the pages' files (``ref_sim/views/assets/``)."""
    return (ASSETS / name).read_text(encoding="utf-8")


STYLE = "\n" + asset("replay.css")
SHARED_SCRIPT = "\n" + asset("shared.js")
SCRIPT = SHARED_SCRIPT + "\n" + asset("replay.js")

#: Both pages' first script: any script error is shown on the page (and read by the browser tests).
ERRORS_SCRIPT = "<script>\n" + asset("errors.js") + "</script>"

PAGE = asset("replay.html")


def coloured(style: str) -> str:
    """A page's styles with the picture's colours filled in (``@x@``, ``@ink@``...)."""
    for key, value in COLOURS.items():
        style = style.replace(f"@{key}@", escape(value))
    return style


def filled(html: str, style: str, script: str) -> str:
    """A page's HTML with its styles (:func:`coloured`), the first script (:data:`ERRORS_SCRIPT`),
    its own script and the colours for the script in place; the page's data is left to the caller."""
    text = html.replace("@STYLE@", coloured(style)).replace("@ERRORS@", ERRORS_SCRIPT).replace("@SCRIPT@", script)
    return text.replace("@COLOURS@", json.dumps(COLOURS))


def page(data_json: str) -> str:
    """The whole page around ``data_json`` (JSON already safe inside a script element)."""
    return filled(PAGE, STYLE, SCRIPT).replace("@DATA@", data_json)        # last: the data is not searched again
