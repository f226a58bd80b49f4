"""The cores' speed ratios are written once: docs/measurements.md's table is what
scripts/bench_speed.py recorded (docs/figures/speed.json), and no other page, docstring or help
text states a ratio of two cores. Nothing here times anything: it checks the record against the
docs, so a new measurement means rerunning the script and pasting its table."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

from scripts import bench_speed

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "docs" / "figures" / "speed.json"
HOME = ROOT / "docs" / "measurements.md"
ANCHOR = "measurements.md#the-cores-speed"
TABLE = re.compile(r"<!-- speed table: [^\n]*-->\n(.*?)<!-- end of speed table -->", re.DOTALL)

#: A figure of a ratio: "36.6x", "about 45 times", "0.39 times", "2-3 times", "half the", "twice".
RATIO = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:\s*(?:-|to)\s*\d+(?:\.\d+)?)?\s*(?:times\b|x\b|×)"
                   r"|\b(?:half|twice|a third|a quarter)\b(?= (?:the|as)\b)", re.IGNORECASE)
#: The cores, as the pages name them. A ratio is the cores' when a sentence names two of them.
CORES = {"compiled": re.compile(r"\bcompiled\b|\bC core\b", re.IGNORECASE),
         "wasm": re.compile(r"\bwasm\b|WebAssembly|wasmtime|browser|Chromium", re.IGNORECASE),
         "python": re.compile(r"pure[- ]Python|Python search|python core|\bPython\b(?= (?:one|core)\b)",
                              re.IGNORECASE)}
#: A ratio followed by the core it is taken of: "0.4 times the compiled core's", "45 times slower
#: than the compiled core", "half the compiled core's speed", "24.6 times Python".
OF_A_CORE = re.compile(rf"(?:{RATIO.pattern})\s+(?:(?:slower|faster)\s+)?(?:than\s+|as\s+)?(?:the\s+)?"
                       r"(?:compiled\b|C core|pure[- ]Python|Python\b|WebAssembly|wasm\b)", re.IGNORECASE)
#: Not statements: commands (they name all three cores) and file names (wasm.md, core_wasm.py).
CODE = re.compile(r"`[^`\n]*`|\]\([^)\s]*\)|[\w/.-]+\.(?:md|py|wasm|json)\b")
#: Sentences, paragraphs, and each table row whole (its first cell names what the others measure).
SENTENCE = re.compile(r"(?<=[.;:!?])\s+(?=[A-Z(])|\n\s*\n|\n(?=\s*\|)")


def restated_ratios(text: str) -> list[str]:
    """Each sentence (or table row) of ``text`` that gives a figure for how the cores' speeds
    compare: a ratio in a sentence naming two cores, or a ratio of a named core."""
    found = []
    for sentence in SENTENCE.split(CODE.sub("", text)):
        cores = {name for name, pattern in CORES.items() if pattern.search(sentence)}
        if (len(cores) >= 2 and RATIO.search(sentence)) or OF_A_CORE.search(sentence):
            found.append(" ".join(sentence.split()))
    return found


def pages() -> list[Path]:
    """Every page, docstring and help text a reader meets, bar this test and the record's home."""
    found = [ROOT / "README.md", ROOT / "setup.py", ROOT / "pyproject.toml", ROOT / "scripts" / "build-exe",
             *sorted((ROOT / "docs").rglob("*.md"))]
    for folder in ("agent", "ref_sim", "scripts"):
        found += sorted((ROOT / folder).rglob("*.py"))
    found += sorted((ROOT / "ref_sim" / "views" / "assets").iterdir())
    return [path for path in found if path.is_file() and ".venv" not in path.parts]


def outside_the_table(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return TABLE.sub("", text) if path == HOME else text


def test_the_measurements_table_is_the_recorded_run():
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    table = TABLE.search(HOME.read_text(encoding="utf-8"))
    assert table, f"{HOME.name} has lost its speed table's markers"
    assert table.group(1) == bench_speed.speed_table(record), \
        "docs/measurements.md's table is not the record's: python -m scripts.bench_speed --table docs/figures/speed.json"


def test_the_record_is_whole_and_its_summaries_are_its_rounds():
    # A hand-edited figure would not be what the rounds give.
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    rounds = record["rounds"]
    means = record["mean_nodes_per_second"]
    assert set(means) == {"python", "compiled", "wasm"} and all(len(m) == rounds for m in means.values())
    assert set(record["ratios"]) == {f"{top}/{bottom}" for top, bottom in bench_speed.RATIOS}
    for key, ratio in record["ratios"].items():
        top, bottom = key.split("/")
        # per_round is of the unrounded means; the means are kept to the node/s.
        assert all(abs(r - a / b) < 0.002 * r for r, a, b in zip(ratio["per_round"], means[top], means[bottom])), key
        assert (ratio["min"], ratio["max"]) == (min(ratio["per_round"]), max(ratio["per_round"]))
        assert abs(ratio["median"] - statistics.median(ratio["per_round"])) < 0.001
    # The script's command as it was run: by path until the scripts became python -m's.
    assert record["command"].startswith(("python -m scripts.bench_speed ", "python scripts/bench_speed.py "))
    assert "--record" in record["command"]


def test_no_other_page_states_a_ratio_of_the_cores():
    found = [f"{path.relative_to(ROOT)}: {sentence}" for path in pages()
             for sentence in restated_ratios(outside_the_table(path))]
    assert found == [], f"link to docs/{ANCHOR} instead"


def test_the_pages_about_the_cores_link_to_their_figures():
    assert "## The cores' speed" in HOME.read_text(encoding="utf-8")   # the anchor's heading
    for name in ("README.md", "docs/wasm.md", "docs/engine.md", "docs/agent.md", "docs/core_speed.md"):
        assert ANCHOR in (ROOT / name).read_text(encoding="utf-8"), name


def test_the_check_finds_the_ratios_these_pages_used_to_state():
    # Lines this repository once had, and lines about other speeds that must stay allowed.
    stated = [
        "at about 0.4 times the compiled core's speed but 25 times the pure-Python search's",
        "There the agent used to search in pure Python, about 45 times slower than the compiled core.",
        "runs the same search compiled to WebAssembly (agent/data/core.wasm, shipped): half the compiled core's speed",
        "| python 0.105 M, compiled 6.22 M, wasm 2.57 M: wasm 24.6 times Python (per position median 26.3) and 0.41 times compiled |",
        "The compiled core is 36.6x the pure-Python search.",
        "- **Speed.** About 0.4 times the compiled core's nodes/s here (no huge pages), worth 64 Elo.",
        "drives it as agent._core's Searcher is driven, method for method: about half the compiled core's speed.",
        "| the WebAssembly core against the compiled one, fixed depth 13 | 0.39 times (3.16 M against 8.10 M) |",
    ]
    allowed = [
        "measured the split core at 0.998 times main's nodes/s (18,914,817 nodes, the same in both).",
        "| the compiled core against the one before its speed work | 13.6 M against 5.0 M (2.53-2.74 times) |",
        "| 2 threads against 1, idle machine | 8.1 M against 4.0 M nodes/s; each depth 1.18 times sooner |",
        "`python -m scripts.bench_speed --cores python compiled wasm --seconds 1` prints 0.5x lines.",
        "a wider bar (about sqrt(2) times theirs when alike)",
        "the 9x9 grid of the compiled core and the pure-Python search",
        "| the compiled core split from its glue, fixed depth 13 | 0.998 times, same trees | [wasm.md](wasm.md) |",
    ]
    assert [len(restated_ratios(text)) for text in stated] == [1] * len(stated)
    assert [restated_ratios(text) for text in allowed] == [[]] * len(allowed)


def test_the_table_is_made_from_a_record_as_the_script_writes_it():
    rounds = [{"python": 100.0, "compiled": 4000.0, "wasm": 2000.0},
              {"python": 100.0, "compiled": 3000.0, "wasm": 1800.0}]
    record = bench_speed.make_record(rounds, "python -m scripts.bench_speed --record x.json", 1.0, 35, [1.0, 2.0])
    assert record["ratios"]["compiled/python"] == {"per_round": [40.0, 30.0], "min": 30.0, "median": 35.0, "max": 40.0}
    assert record["ratios"]["wasm/compiled"]["per_round"] == [0.5, 0.6]
    table = bench_speed.speed_table(json.loads(json.dumps(record)))
    assert "| compiled / pure Python | 30.0 | 35.0 | 2 |" in table
    assert "| WebAssembly (wasmtime) / compiled | 0.50 | 0.55 | 2 |" in table
    assert "load average (1 min) 1.00 to 2.00" in table and "`python -m scripts.bench_speed --record x.json`" in table
