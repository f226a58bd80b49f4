"""``--isolate-disk``: what a bot writes (its log, its game folder) is capped; a bot past the cap
loses its game with a note saying so, the files left are within the cap, and the series (and
``--resume``) goes on.  docs/isolation.md, "a disk cap"."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from ref_sim import match
from ref_sim.series.process import contain, disk_cap, isolation, keeper, metering
pytestmark = pytest.mark.skipif(not isolation.SUPPORTED or not keeper.AVAILABLE,
                                reason="--isolate and the keeper are Linux's")

CAP_MB = 10

#: Each waits for its first .go (a bot that filled the disk before its first game would be one
#: that cannot start, which stops a match), then writes 50 MB whatever fails, then waits.
FILLERS = {
    "stderr": """\
        import os, sys, time
        print("up", flush=True)
        while not os.path.exists(sys.argv[1] + ".go"):
            time.sleep(0.02)
        chunk = "e" * (1 << 20)
        for _ in range(50):
            try:
                sys.stderr.write(chunk)
                sys.stderr.flush()
            except OSError:
                pass
        time.sleep(60)
        """,
    # 5 MB a file: each file is under the cap, only their sum is past it.
    "folder": """\
        import os, sys, time
        print("up", flush=True)
        while not os.path.exists(sys.argv[1] + ".go"):
            time.sleep(0.02)
        for n in range(10):
            try:
                with open("fill-%d.bin" % n, "wb") as handle:
                    handle.write(b"d" * (5 << 20))
            except OSError:
                pass
        time.sleep(60)
        """,
}


def filler(tmp_path, kind: str):
    folder = tmp_path / f"filler_{kind}"
    folder.mkdir()
    script = folder / "bot.py"
    script.write_text(textwrap.dedent(FILLERS[kind]))
    return f"name=Filler:{sys.executable} {script} {{name}}"


def files_under(folder):
    return [os.path.join(root, name) for root, _, names in os.walk(folder) for name in names]


@pytest.mark.e2e
@pytest.mark.parametrize("kind", sorted(FILLERS))
def test_a_bot_past_its_disk_cap_loses_and_the_series_goes_on(tmp_path, capsys, kind):
    out = tmp_path / "out"
    options = ["--time-limit", "0.5", "--out", str(out)]
    assert match.main([filler(tmp_path, kind), "random", "--games", "2", "--isolate",
                       "--isolate-disk", str(CAP_MB), *options]) == 0
    said = capsys.readouterr().out
    assert f"disk cap {CAP_MB} MB per bot" in said
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 2
    for game in games:
        assert game["winner"] == "Random2"
        assert f"wrote past its {CAP_MB} MB disk cap" in game["notes"]["Filler"]
    assert all(os.path.getsize(path) <= CAP_MB << 20 for path in files_under(out))
    assert not any(name.startswith("fill-") for path in files_under(out)
                   for name in [os.path.basename(path)])
    assert "[runner] ended: it wrote past its 10 MB disk cap" in (
        out / "logs" / "game-0001-Filler.log").read_text(errors="replace")
    assert match.main(["--resume", "--out", str(out), "--games", "4"]) == 0
    capsys.readouterr()
    assert len((out / "games.jsonl").read_text().splitlines()) == 4


def test_the_cap_is_recorded_and_kept_by_resume(tmp_path):
    isolate = isolation.Isolation(disk_mb=7)
    recorded = isolation.recorded_setting(isolate)
    assert recorded["disk_mb"] == 7
    assert "--isolate-disk" in isolation.command_options(isolate)
    assert isolation.from_record(recorded).disk_mb == 7
    older = {key: value for key, value in recorded.items() if key != "disk_mb"}
    # a series begun before the option
    assert isolation.from_record(older).disk_mb == isolation.DEFAULT_DISK_MB
    with pytest.raises(ValueError, match="disk_mb"):
        isolation.from_record({**recorded, "disk_mb": -1})


@pytest.mark.e2e
def test_each_file_a_bot_writes_is_capped_by_the_kernel(tmp_path):
    # RLIMIT_FSIZE, set by the shim (run here alone: no guard to end the bot first), hard: a
    # Python bot, which ignores SIGXFSZ, is refused past it and cannot raise it.
    probe = textwrap.dedent("""\
        import os, resource
        try:
            resource.setrlimit(resource.RLIMIT_FSIZE, (-1, -1))
            print("raised")
        except (ValueError, OSError):
            print("kept", *resource.getrlimit(resource.RLIMIT_FSIZE))
        try:
            with open("big.bin", "wb") as handle:
                handle.write(b"x" * (3 << 20))
            print("wrote it all")
        except OSError as error:
            print("refused:", error.strerror, os.path.getsize("big.bin"))
        """)
    done = subprocess.run([sys.executable, "-I", "-S", contain.SHIM, "-", "-", "-", "-",
                           str(1 << 20), sys.executable, "-c", probe], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60)
    assert done.stdout.split("\n")[:2] == [f"kept {1 << 20} {1 << 20}",
                                            f"refused: File too large {1 << 20}"], done.stderr


def test_what_a_bot_wrote_is_counted_in_all_its_files(tmp_path):
    (tmp_path / "view" / "sub").mkdir(parents=True)
    (tmp_path / "view" / "a").write_bytes(b"a" * 100)
    (tmp_path / "view" / "sub" / "b").write_bytes(b"b" * 50)
    (tmp_path / "log").write_bytes(b"c" * 7)
    os.symlink("/usr", tmp_path / "view" / "link")      # a link is not followed
    total, entries = metering.written([str(tmp_path / "view"), str(tmp_path / "log")])
    assert (total, entries) == (157, 4)


def test_a_bot_that_fills_the_disk_is_told_apart_from_one_past_its_cap(tmp_path, monkeypatch):
    log = tmp_path / "bot.log"
    log.write_bytes(b"x" * (2 << 20))

    class Bot:              # what DiskGuard reads of a MeteredPopen
        disk_paths, disk_cap, disk_why = (str(log),), 100 << 20, ""
    monkeypatch.setattr(disk_cap, "free_bytes", lambda path: 1 << 30)
    assert disk_cap.DiskGuard.over(Bot()) is None          # 2 MB of 100, room left
    monkeypatch.setattr(disk_cap, "free_bytes", lambda path: 0)
    bot = Bot()
    assert disk_cap.DiskGuard.over(bot) == "filled the disk (2 MB written)"
    assert "NOT enough" in contain.status_line(isolation.Isolation(out=str(tmp_path)))
