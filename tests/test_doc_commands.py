"""Every command the README and docs/ show runs here, with short limits, or says why it cannot.

A fenced block tagged ``sh`` is a list of commands. Each runs as a bash script in a scratch
folder of its own page (so a page's later blocks see what its earlier ones made, as a reader's
shell would), with the limits shortened by the visible table ``SHORTER`` below. A block that
cannot run here (it needs the course's referee, a cluster, a build that takes minutes) is preceded
by ``<!-- not run: REASON -->``, and the reason is checked to be there. Output and listings are
tagged ``text``; an untagged block that looks like commands is an error, so that nothing slips
through untested.

``python -m scripts.count_doc_commands`` prints how many commands run and how many do not."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
from scripts.count_doc_commands import Block, doc_blocks, doc_files  # noqa: E402

#: How a documented command is shortened to run in the suite: (pattern, replacement). Applied to
#: every line of a runnable block, in order. Commands keep their options and only run shorter.
SHORTER = [
    (re.compile(r"--games (?:[3-9]|\d\d+)\b"), "--games 2"),
    (re.compile(r"--rounds (?:[2-9]|\d\d+)\b"), "--rounds 1"),
    (re.compile(r"--time-limit (?:[1-9]\d*|0\.[3-9])\d*\b"), "--time-limit 0.2"),
    (re.compile(r"--seconds \d+(?:\.\d+)?"), "--seconds 0.05"),
    (re.compile(r"--time \d+(?:\.\d+)?"), "--time 0.05"),
    (re.compile(r"--nodes \d{4,}"), "--nodes 500"),
]
#: A resumed series or tournament grows by one short step beyond what the lines before it made.
RESUMED = [
    (re.compile(r"--games \d+"), "--games 4"),
    (re.compile(r"--rounds \d+"), "--rounds 2"),
]
#: Series that stop by SPRT alone would run for ever at short limits: two games are enough to
#: show that the command works.
UNBOUNDED = re.compile(r"--sprt\b")
SECONDS_PER_BLOCK = 240


def shortened(line: str) -> str:
    for pattern, replacement in RESUMED if "--resume" in line else SHORTER:
        line = pattern.sub(replacement, line)
    if UNBOUNDED.search(line) and "--games" not in line:
        line = line.rstrip() + " --games 2"
    return line


def runnable(block: Block) -> bool:
    return block.info == "sh" and block.not_run is None


ALL = [block for path in doc_files() for block in doc_blocks(path)]
RUNNABLE = [block for block in ALL if runnable(block)]


@pytest.fixture(scope="session")
def scratch(tmp_path_factory):
    """One folder per page, with what a reader of the README has beside them: the example bot
    (`my_bot.py`, the README's python block), the project's scripts and test bots, and `python`
    meaning this interpreter. The console scripts are this interpreter's. Each page's commands get
    a temporary folder of their own (TMPDIR): what they keep there on purpose (the logs of games
    that went wrong) stays with the page."""
    if not shutil.which("uttt-match", path=str(Path(sys.executable).parent)):
        pytest.skip("the console scripts are not installed beside this Python (pip install -e .)")
    folders: dict[Path, tuple[Path, dict]] = {}
    bin_dir = tmp_path_factory.mktemp("bin")
    for name in ("python", "python3"):
        (bin_dir / name).symlink_to(sys.executable)
    environment = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg",
                       PATH=os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent),
                                             os.environ.get("PATH", "")]))
    environment.pop("UTTT_CLUSTER", None)

    def folder(page: Path) -> tuple[Path, dict]:
        if page not in folders:
            work = tmp_path_factory.mktemp(page.stem)
            readme = (ROOT / "README.md").read_text(encoding="utf-8")
            (work / "my_bot.py").write_text(re.search(r"```python\n(.*?)```", readme, re.S).group(1),
                                            encoding="utf-8")
            for shared in ("scripts", "tests"):
                (work / shared).symlink_to(ROOT / shared)
            temp = tmp_path_factory.mktemp(f"{page.stem}-tmp")
            folders[page] = (work, dict(environment, TMPDIR=str(temp)))
        return folders[page]

    return folder


def run_block(script: str, cwd: Path, env: dict) -> tuple[int | None, str, str]:
    """Run ``script`` with bash in a process group of its own; whatever it started (agents put in
    the background with ``&``) is killed with the group when it ends or times out. Returns
    ``(exit code, stdout, stderr)``, the code None after :data:`SECONDS_PER_BLOCK`."""
    process = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, errors="replace", start_new_session=True)
    try:
        out, err = process.communicate(timeout=SECONDS_PER_BLOCK)
        code = process.returncode
    except subprocess.TimeoutExpired:
        code = None
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass                    # the group has ended already
    if code is None:
        out, err = process.communicate()
    return code, out, err


#: Each page's runnable blocks, in order: a later block may use what an earlier one made.
PAGES = {}
for _block in RUNNABLE:
    PAGES.setdefault(_block.page, []).append(_block)


@pytest.mark.docs
@pytest.mark.timeout(SECONDS_PER_BLOCK * max(map(len, PAGES.values())) + 60)
@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_documented_commands_run(page, scratch):
    """A page's blocks, each a bash script in the page's folder, in the page's order; a failure
    names its block (page:line)."""
    folder, environment = scratch(page)
    for block in PAGES[page]:
        script = "\n".join(shortened(line) for line in block.body.splitlines()) + "\nwait\n"
        code, out, err = run_block(script, folder, environment)
        said = f"{script}\n--- stdout\n{out[-3000:]}\n--- stderr\n{err[-3000:]}"
        assert code is not None, f"{block.where} did not end within {SECONDS_PER_BLOCK} s:\n{said}"
        assert code == 0, f"{block.where} failed (exit {code}):\n{said}"


@pytest.mark.parametrize("block", [b for b in ALL if b.not_run is not None], ids=lambda b: b.where)
def test_every_command_not_run_says_why(block):
    assert block.info == "sh", f"{block.where}: 'not run' marks a block of commands (```sh)"
    assert len(block.not_run.split()) >= 3, f"{block.where}: say why it cannot run here"


def test_untagged_blocks_hold_no_commands():
    untagged = [(b.where, line) for b in ALL if b.info == "" for line in b.body.splitlines()
                if b.looks_like_a_command(line)]
    assert untagged == [], "tag these blocks ```sh (and run them, or say why not) or ```text"
    assert Block.looks_like_a_command("uttt-match agent random") and not Block.looks_like_a_command("Walrus 6 2")


def test_the_shortening_keeps_commands_whole():
    assert shortened("uttt-match agent random --games 20 --time-limit 0.5 --out runs/demo") == \
        "uttt-match agent random --games 2 --time-limit 0.2 --out runs/demo"
    assert shortened("uttt-match --resume --out runs/demo --games 24") == "uttt-match --resume --out runs/demo --games 4"
    assert shortened("uttt-tournament a b --rounds 5 --time-limit 1") == "uttt-tournament a b --rounds 1 --time-limit 0.2"
    assert shortened("uttt-match agent agent:depth=6 --sprt 0 20 0.05 0.05 --time-limit 0.2") == \
        "uttt-match agent agent:depth=6 --sprt 0 20 0.05 0.05 --time-limit 0.2 --games 2"
    assert shortened("uttt-arena uttt alphabeta seed --nodes 20000 --games 2") == \
        "uttt-arena uttt alphabeta seed --nodes 500 --games 2"
    assert shortened("uttt-render \"40 03 38\" --out runs/pos.svg") == "uttt-render \"40 03 38\" --out runs/pos.svg"


def test_the_pages_are_read_as_a_reader_sees_them():
    # Guards the block reader itself: a pattern that silently matched nothing would pass above.
    readme = doc_blocks(ROOT / "README.md")
    assert readme[0].info == "sh" and "python" in [b.info for b in readme]
    assert readme[0].not_run and "CI" in readme[0].not_run
    assert any("uttt-match" in b.body and runnable(b) for b in readme)
    assert len(RUNNABLE) >= 20
