"""Every command bounds what it reads and answers in one line — bot templates
substitute only their documented fields, files given to a command are refused when they are not
regular files (a FIFO would block for ever, /dev/zero never ends) or are too big, the --out lock
is not followed through a symlink, a core build lacking a symbol is one line; usage errors are
one line (item 6)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

from agent import cli as agent_cli
from agent.cli_common import UsageError
from ref_sim import ref as ref_cli
from ref_sim import match, stdio, tournament
from ref_sim.series import bot_list
from ref_sim.series.output import out_lock, records, strict_json
from ref_sim.series.specs import FILE_FIELDS, agent_spec, stdio_spec
from ref_sim.views import plot, replay, show

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def one_line_error(capsys, run) -> str:
    """The error ``run()`` prints, checked to be one line on stderr and a usage exit (2)."""
    try:
        code = run()
    except SystemExit as exit_:
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("bad", ["{nosuch}", "{0}", "{}", "{dir.__class__}", "{name[0]}", "{name!r}",
                                 "{time_limit:>9}", "{", "}", "x}y"])
def test_a_template_takes_only_its_fields(bad):
    with pytest.raises(ValueError) as refused:
        agent_spec(f"python3 bot.py {bad} --dir {{dir}}")
    message = str(refused.value)
    assert "\n" not in message and all("{" + field + "}" in message for field in FILE_FIELDS)
    with pytest.raises(ValueError, match="the fields are {python} {seed} {turn_ms} {first_turn_ms}"):
        stdio_spec(f"python3 bot.py {bad}")


def test_a_template_fills_its_fields_and_keeps_doubled_braces(tmp_path):
    spec = agent_spec("python3 bot.py {name} --dir {dir} --t {time_limit} --s {seed} {{literal}}")
    assert spec.command("Bot1", tmp_path, 1.5, seed=7)[2:] == ["Bot1", "--dir", str(tmp_path), "--t", "1.5",
                                                              "--s", "7", "{literal}"]
    with pytest.raises(ValueError, match="'{name}' in the command is not a field"):
        stdio_spec("python3 bot.py {name}")       # CodinGame's bots have no name to be told
    assert stdio_spec("python3 bot.py --seed {seed}").command(3, 100, 1000)[-1] == "3"


@pytest.mark.parametrize("runner", [match, stdio])
def test_the_runners_refuse_a_bad_template_in_one_line(capsys, runner):
    err = one_line_error(capsys, lambda: runner.main(["python3 bot.py {dir.__class__}", "random"]))
    assert "'{dir.__class__}' in the command is not a field" in err


@pytest.mark.parametrize("runner, argv", [(match, ["--games", "x"]), (stdio, ["--bogus"]),
                                          (tournament, ["--rounds", "0"]), (tournament, [])])
def test_usage_errors_are_one_line(capsys, runner, argv):
    err = one_line_error(capsys, lambda: runner.main(argv))
    assert ": error: " in err and "usage:" not in err


@needs_fifo
def test_a_bot_list_that_is_not_a_regular_file_is_refused_unread(tmp_path, capsys):
    fifo = tmp_path / "bots.txt"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero"):
        with pytest.raises(bot_list.BotListError, match="not a regular file"):
            bot_list.read([path])
    err = one_line_error(capsys, lambda: tournament.main(["--bots", str(fifo), "--out", str(tmp_path / "t")]))
    assert "not a regular file (a FIFO)" in err
    big = tmp_path / "big.txt"
    with open(big, "wb") as handle:             # sparse: no disk used
        handle.truncate(bot_list.MAX_LIST_BYTES + 1)
    with pytest.raises(bot_list.BotListError, match="more than the 1,048,576"):
        bot_list.read([big])


@needs_fifo
@pytest.mark.parametrize("view", [show, plot, replay])
def test_the_views_refuse_a_fifo_and_a_device_in_one_line(tmp_path, capsys, view):
    fifo = tmp_path / "games.jsonl"
    os.mkfifo(fifo)
    for given in (str(fifo), "/dev/zero"):
        err = one_line_error(capsys, lambda: view.main([given]))
        assert "not a regular file" in err


def test_a_records_file_beyond_its_size_is_refused_unread(tmp_path):
    big = tmp_path / "games.jsonl"
    with open(big, "wb") as handle:
        handle.truncate(strict_json.MAX_LINES_FILE_BYTES + 1)
    with pytest.raises(strict_json.RecordError, match="more than the"):
        strict_json.read_lines(big)


@needs_fifo
def test_the_agents_log_file_must_be_a_regular_file(tmp_path):
    fifo = tmp_path / "log"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="not a regular file"):
        agent_cli.check_log_file(str(fifo))
    assert agent_cli.check_log_file(os.devnull) is not None      # nothing to block: kept
    assert agent_cli.check_log_file(str(tmp_path / "new.log")).is_file()


@needs_fifo
def test_the_agents_search_log_never_waits_on_a_fifo(tmp_path, caplog):
    from agent.search_log import SearchLog
    fifo = tmp_path / "search.jsonl"
    os.mkfifo(fifo)
    log = SearchLog(str(fifo), "file")
    log.move(4, 4, 0.1)                                   # blocked for ever before (pytest's timeout)
    assert log.path is None and "not a regular file (a FIFO" in caplog.text   # said once, played on


@needs_fifo
def test_the_referees_record_must_be_a_regular_file(tmp_path, capsys):
    fifo = tmp_path / "record.json"
    os.mkfifo(fifo)
    err = one_line_error(capsys, lambda: ref_cli.main(["A", "B", "--dir", str(tmp_path / "g"), "--record", str(fifo)]))
    assert "--record" in err and "not a regular file" in err

    class Record:
        def to_dict(self):
            return {"result": "win"}

    assert not ref_cli.save_record(Record(), str(fifo))          # planted during the game: one line
    assert "not a regular file" in capsys.readouterr().err
    assert ref_cli.save_record(Record(), str(tmp_path / "saved.json"))
    assert strict_json.read_json(tmp_path / "saved.json") == {"result": "win"}


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="no O_NOFOLLOW on this platform")
def test_the_out_lock_is_not_followed_through_a_symlink(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / out_lock.LOCK_NAME).symlink_to(target)
    with pytest.raises(records.WriteError, match="symbolic link") as refused:
        with out_lock.OutLock(out, "test"):
            pass
    assert "\n" not in str(refused.value)
    assert target.read_text() == "keep me\n"


def _compiler() -> str | None:
    include = sysconfig.get_paths().get("include")
    if include is None or not os.path.exists(os.path.join(include, "Python.h")):
        return None
    return shutil.which("cc") or shutil.which("gcc")


@pytest.mark.skipif(sys.platform == "win32" or _compiler() is None, reason="needs a C compiler and Python's headers")
def test_a_core_build_lacking_a_symbol_is_one_line(tmp_path):
    from agent import core
    from ref_sim.games.core_builds import load_core_build

    source = tmp_path / "fake.c"
    source.write_text('#include <Python.h>\n'
                      'static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "_core", NULL, -1, NULL};\n'
                      'PyMODINIT_FUNC PyInit__core(void) {\n'
                      '    PyObject *m = PyModule_Create(&def);\n'
                      f'    if (m) PyModule_AddIntConstant(m, "CORE_VERSION", {core.CORE_VERSION});\n'
                      '    return m;\n}\n')
    library = tmp_path / "fake_core.so"
    subprocess.run([_compiler(), "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}", str(source),
                    "-o", str(library)], check=True, capture_output=True, timeout=120)
    with pytest.raises(ValueError, match="it lacks Searcher, set_zobrist") as refused:
        load_core_build(str(library))
    assert "\n" not in str(refused.value)
