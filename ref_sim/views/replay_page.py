"""The replay page's HTML, styles and script (:mod:`ref_sim.views.replay` fills in the data).

The files themselves are in ``ref_sim/views/assets/`` (package data, as agent/data is).
The script only draws: the rules (which boards are won, where the next move goes) and the
verdicts come computed in the data, so the page holds no second copy of them.  Every text from
the data goes into the page as text (``textContent``), never as markup.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from ref_sim.views import render

#: The picture's colours (ref_sim.render's), given to the script and the styles.
COLOURS = {"x": render.COLOURS[0], "o": render.COLOURS[1], "toPlay": render.TO_PLAY,
           "lastMove": render.LAST_MOVE, "drawn": render.DRAWN, "ink": render.INK,
           "grid": render.GRID, "faint": render.FAINT, "forced": "#e08a00",
           "opening": "#e6e9ee", "best": "#1a9e4b", "suggestion": "#7b3fd0", "inaccuracy": "#d4a900",
           "mistake": "#e07000", "blunder": "#cc2020"}

#: The page's files (package data beside this module): its styles, the script both pages share
#: (this one and the analysis board, ref_sim/views/board_page.py: DOM and SVG helpers, scores as
#: text, the board's cells, marks and lines, reading DATA and C, which each page defines first),
#: the replay's own script, and the HTML around them.
ASSETS = Path(__file__).resolve().parent / "assets"


def asset(name: str) -> str:
    """The text of one of the pages' files (``ref_sim/views/assets/``)."""
    return (ASSETS / name).read_text(encoding="utf-8")


STYLE = "\n" + asset("replay.css")
SHARED_SCRIPT = "\n" + asset("shared.js")
SCRIPT = SHARED_SCRIPT + "\n" + asset("replay.js")

#: Both pages' first script: any script error is shown on the page (and read by the browser tests).
ERRORS_SCRIPT = """<script>
window.addEventListener("error", function (event) {
  var box = document.getElementById("errors");
  if (!box) return;
  box.hidden = false;
  box.textContent += "Script error: " + event.message + " (line " + event.lineno + ")\\n";
});
</script>"""

PAGE = asset("replay.html")


def page(data_json: str) -> str:
    """The whole page around ``data_json`` (JSON already safe inside a script element)."""
    import json
    style = STYLE
    for key, value in COLOURS.items():
        style = style.replace(f"@{key}@", escape(value))
    text = PAGE.replace("@STYLE@", style).replace("@ERRORS@", ERRORS_SCRIPT).replace("@SCRIPT@", SCRIPT)
    text = text.replace("@COLOURS@", json.dumps(COLOURS))
    return text.replace("@DATA@", data_json)        # last: the data is not searched again
