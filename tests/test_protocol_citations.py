"""Every reference from the code to the protocol points at a real place in docs/protocol.md.

The code cites the protocol as ``docs/protocol.md, "HEADING"``: a heading of docs/protocol.md,
quoted without its number (so renumbering the sections breaks nothing) and with or without its
backticks, optionally followed by ``row "TEXT"`` (or ``rows "A", "B"``, each row optionally after a
label such as ``(12)``): the opening words of a row's first cell in a table of that section.
A bare ``docs/protocol.md`` means the whole document. The team's private contract, which a clone
does not have, must not be cited at all.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL_DOC = ROOT / "docs" / "protocol.md"
CODE_DIRS = ("agent", "ref_sim", "scripts", "tests")
CODE_SUFFIXES = {".py", ".c", ".h", ".js", ".sh", ""}
#: The checkers' own samples of broken references name them on purpose.
SAMPLES_OF_BROKEN_REFERENCES = {"tests/test_docs.py", "tests/test_protocol_citations.py"}
#: Built from pieces so that this file does not cite what it forbids.
PRIVATE_CONTRACT = "PROTOCOL" + ".md"
SECTION_SIGN = "\u00a7"

#: ``docs/protocol.md`` and the quoted items that follow it: headings, then rows of the last one.
CITATION = re.compile(r'docs/protocol\.md((?:,? (?:and |rows? )?(?:\(\d+\) )?"[^"]*")*)')
CITED_ITEM = re.compile(r'(rows? )?(?:\(\d+\) )?"([^"]*)"')
#: A line break inside a comment or docstring, with the next line's indentation and ``#``.
LINE_BREAK = re.compile(r"\s*\n\s*(?:#+\s*)?")
#: "section 9" in the docs, optionally followed by a quoted row or subheading of it.
SECTION_NUMBER = re.compile(r'\bsection (\d+)(?:, "([^"]+)")?')


def plain(text: str) -> str:
    """Heading or row text as cited: no backticks, single spaces."""
    return " ".join(text.replace("`", "").split())


def protocol_sections(markdown: str) -> dict[str, tuple[str | None, str]]:
    """Each heading of ``markdown`` (plain, without its number) -> (its number, its section's text
    up to the next heading of the same or a higher level). Code blocks are skipped."""
    lines = markdown.splitlines()
    headings = []  # (line index, level, number, title)
    in_code = False
    for index, line in enumerate(lines):
        if line.startswith("```"):
            in_code = not in_code
        match = None if in_code else re.match(r"(#+) (?:(\d+)\. )?(.*)", line)
        if match:
            headings.append((index, len(match.group(1)), match.group(2), plain(match.group(3))))
    sections = {}
    for position, (index, level, number, title) in enumerate(headings):
        end = next((i for i, lv, _, _ in headings[position + 1:] if lv <= level), len(lines))
        sections[title] = (number, "\n".join(lines[index + 1:end]))
    return sections


def table_rows(section_text: str) -> list[str]:
    """The first cell of every table row in a section (plain)."""
    rows = []
    for line in section_text.splitlines():
        if line.startswith("|") and not re.match(r"\|\s*-", line):
            rows.append(plain(line.strip("|").split("|")[0]))
    return rows


def citations(text: str) -> list[tuple[list[str], list[str]]]:
    """Every ``docs/protocol.md`` citation in ``text`` as (headings, rows of the last heading);
    a citation may run over several comment or docstring lines."""
    joined = LINE_BREAK.sub(" ", text)
    found = []
    for match in CITATION.finditer(joined):
        headings, rows = [], []
        for item in CITED_ITEM.finditer(match.group(1)):
            if item.group(1) or rows:
                rows.append(plain(item.group(2)))
            else:
                headings.append(plain(item.group(2)))
        found.append((headings, rows))
    return found


def citation_problems(text: str, sections: dict) -> list[str]:
    """What in ``text`` cites a place docs/protocol.md does not have, or the private contract."""
    problems = []
    for headings, rows in citations(text):
        for heading in headings:
            if heading not in sections:
                problems.append(f'no heading "{heading}" in docs/protocol.md')
        if rows and not headings:
            problems.append(f'rows {rows} cited without the heading of their table')
        elif rows and headings[-1] in sections:
            cells = table_rows(sections[headings[-1]][1])
            for row in rows:
                if not any(cell.startswith(row) for cell in cells):
                    problems.append(f'no row "{row}" under "{headings[-1]}" in docs/protocol.md')
    for line in text.splitlines():
        if PRIVATE_CONTRACT in line or SECTION_SIGN in line:
            problems.append(f"cites the private contract or a section sign: {line.strip()}")
    return problems


def code_files() -> list[Path]:
    files = [path for path in ROOT.glob("*.py")]
    for folder in CODE_DIRS:
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in CODE_SUFFIXES and "__pycache__" not in path.parts:
                files.append(path)
    return sorted(files)


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:  # a binary file without a suffix: cites nothing
        return None


def test_every_protocol_citation_in_the_code_names_a_real_place():
    sections = protocol_sections(PROTOCOL_DOC.read_text(encoding="utf-8"))
    problems = []
    for path in code_files():
        name = path.relative_to(ROOT).as_posix()
        text = read_text(path)
        if text is None or name in SAMPLES_OF_BROKEN_REFERENCES:
            continue
        problems += [f"{name}: {problem}" for problem in citation_problems(text, sections)]
    assert problems == []


def test_the_citations_are_all_seen():
    # Guards the patterns themselves: a regex that silently matched nothing would pass above.
    cited_headings = set()
    for path in code_files():
        text = read_text(path) or ""
        for headings, _ in citations(text):
            cited_headings.update(headings)
    assert {"What a bot must survive", "Writing a move safely", "One move per .go",
            "The rules, as the referee codes them", "What the course's own bots do"} <= cited_headings


def test_every_case_the_turn_decider_names_is_a_row_of_the_survival_table():
    # agent/file_turns.py names a case by the opening words of its row in docs/protocol.md, "What
    # a bot must survive", quoted in brackets: ("Files vanish"); no bare case numbers.
    turns = LINE_BREAK.sub(" ", (ROOT / "agent" / "file_turns.py").read_text(encoding="utf-8"))
    named = {plain(name) for name in re.findall(r'(?<= )\("([^"]+)"\)', turns)}
    cells = table_rows(protocol_sections(PROTOCOL_DOC.read_text(encoding="utf-8"))["What a bot must survive"][1])
    assert len(named) >= 5
    assert sorted(name for name in named if not any(cell.startswith(name) for cell in cells)) == []
    assert re.findall(r'(?<= )\(\d+(?:, \d+)*\)', turns) == []


def test_each_kind_of_broken_citation_is_reported():
    sections = protocol_sections(PROTOCOL_DOC.read_text(encoding="utf-8"))
    text = f'''"""Writes whole lines (docs/protocol.md, "Writing a move safely"), see {PRIVATE_CONTRACT}.
    Polls like the referee ({SECTION_SIGN}4.2; docs/protocol.md, "How the referee polls")."""
    # Never twice a turn (docs/protocol.md, "What a bot must survive", rows "A move written
    # outside your turn", (3) "A move written by a ghost").
    # Rows alone (docs/protocol.md, row "Coarse timestamps"); the whole of docs/protocol.md.
    # The opening (docs/protocol.md, "The opening: `first_four_moves`"), "not a heading".
'''
    assert citation_problems(text, sections) == [
        'no heading "How the referee polls" in docs/protocol.md',
        'no row "A move written by a ghost" under "What a bot must survive" in docs/protocol.md',
        "rows ['Coarse timestamps'] cited without the heading of their table",
        f'cites the private contract or a section sign: """Writes whole lines (docs/protocol.md, '
        f'"Writing a move safely"), see {PRIVATE_CONTRACT}.',
        f'cites the private contract or a section sign: Polls like the referee ({SECTION_SIGN}4.2; '
        f'docs/protocol.md, "How the referee polls")."""',
    ]


def test_section_numbers_in_the_docs_exist():
    protocol = PROTOCOL_DOC.read_text(encoding="utf-8")
    sections = protocol_sections(protocol)
    numbered = {number: title for title, (number, _) in sections.items() if number}
    problems = []
    for number, quoted in SECTION_NUMBER.findall(protocol):
        if number not in numbered:
            problems.append(f"docs/protocol.md: no section {number}")
        elif quoted:
            body = sections[numbered[number]][1]
            subheadings = [plain(title) for title in re.findall(r"^#+ (.*)$", body, re.MULTILINE)]
            if not any(cell.startswith(plain(quoted)) for cell in table_rows(body) + subheadings):
                problems.append(f'docs/protocol.md: no "{quoted}" in section {number}')
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = LINE_BREAK.sub(" ", path.read_text(encoding="utf-8"))
        for number in re.findall(r"protocol\.md\)?, section (\d+)", text):
            if number not in numbered:
                problems.append(f"{path.name}: docs/protocol.md has no section {number}")
    assert problems == []
