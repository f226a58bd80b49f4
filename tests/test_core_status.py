"""Which search core runs and why, where the user looks: the agent's ready line (both protocols)
and ``uttt-agent --version``. A compiler-less install only warns inside pip's hidden output, so
these two must say it.

Each machine is faked (the ``fake_machine`` fixture) through the two questions everything in
agent/core.py asks: ``core.unavailable_reason`` (the compiled core) and
``core_wasm.unavailable_reason`` (wasmtime and the module), '' where the core can run.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os

import pytest

from agent import cli, core, core_wasm
from agent.codingame import CodinGameAgent
from agent.engines import AlphaBetaEngine, make_engine
from agent.file_protocol import FileProtocolAgent

NOT_BUILT = core.reason_for("No module named 'agent._core'")
OTHER_VERSION = core.reason_for("agent._core was built from another version of agent/_core.c")
NO_WASMTIME = f"wasmtime is not installed ({core_wasm.INSTALL_HINT})"
NO_MODULE = f"{core_wasm.WASM_PATH} is missing (scripts/build_wasm.py builds it)"
CHOSEN = "chosen with --core or UTTT_CORE"

# (compiled core's reason, WebAssembly core's reason, --core, what the user reads)
MACHINES = {
    "compiler": ("", "", None, "core: compiled"),
    "no-compiler": (NOT_BUILT, "", None, f"core: wasm ({NOT_BUILT})"),
    "core-of-another-version": (OTHER_VERSION, "", None, f"core: wasm ({OTHER_VERSION})"),
    "no-compiler-no-wasmtime": (NOT_BUILT, NO_WASMTIME, None,
                                f"core: python ({NOT_BUILT}; the WebAssembly core cannot run: {NO_WASMTIME})"),
    "no-compiler-no-module": (NOT_BUILT, NO_MODULE, None,
                              f"core: python ({NOT_BUILT}; the WebAssembly core cannot run: {NO_MODULE})"),
    "asked-for-python": ("", "", "python", f"core: python ({CHOSEN})"),
    "asked-for-wasm": ("", "", "wasm", f"core: wasm ({CHOSEN})"),
}


@pytest.fixture(params=list(MACHINES))
def machine(request, monkeypatch, fake_machine):
    """This machine as ``request.param`` says: (the --core option, the status the user reads)."""
    compiled_reason, wasm_reason, asked, status = MACHINES[request.param]
    if not compiled_reason and not core.compiled_available():
        pytest.skip(core.unavailable_reason())
    if not wasm_reason and (asked == "wasm" or compiled_reason) and not core.wasm_available():
        pytest.skip(core.wasm_unavailable_reason())
    fake_machine(compiled=compiled_reason or None, wasm=wasm_reason or None)
    monkeypatch.delenv(core.CORE_ENV, raising=False)  # --core sets it in-process: restored after
    return asked, status


def test_the_reasons_say_what_happened_and_what_to_do():
    assert NOT_BUILT == ("the compiled core is not built: no C compiler worked when the package was installed, "
                         "see docs/wasm.md")
    assert OTHER_VERSION.startswith("the compiled core cannot be loaded (agent._core was built from another version")
    assert "reinstall" in OTHER_VERSION
    assert core.unavailable_reason() == ("" if core.compiled_available() else core.reason_for(core.IMPORT_ERROR))


def test_version_says_which_core_runs_and_why(machine, capsys):
    asked, status = machine
    assert cli.main(["--version", *(["--core", asked] if asked else [])]) == 0
    out, err = capsys.readouterr()
    assert out == f"uttt-agent {importlib.metadata.version('uttt-agent')}; {status}\n" and err == ""


def _engine(asked):
    return AlphaBetaEngine(depth=1, hash_mb=1, core=asked)


def _ready_line(engine, tmp_path, caplog) -> str:
    """The file protocol's ready line: the referee's directory goes before the agent runs, so it
    says it is ready, then ends within --silence (no referee can come)."""
    directory = tmp_path / "game"
    directory.mkdir()
    agent = FileProtocolAgent("Probe", directory, engine, time_limit=1, silence=0.2, use_watchdog=False)
    directory.rmdir()
    with caplog.at_level(logging.INFO, logger="agent"):
        assert agent.run().status == "aborted"
    ready = [r.getMessage() for r in caplog.records if " ready in " in r.getMessage()]
    assert len(ready) == 1, caplog.text
    assert f"reading the files as {agent.encoding}" in ready[0]
    return ready[0]


def test_the_file_protocol_ready_line_says_which_core_runs_and_why(machine, tmp_path, caplog):
    asked, status = machine
    assert _ready_line(_engine(asked), tmp_path, caplog).endswith(f"; {status}")


def test_the_codingame_ready_line_says_which_core_runs_and_why(machine, caplog):
    asked, status = machine
    read_fd, write_fd = os.pipe()
    os.close(write_fd)  # no referee: the input ends at once, after the ready line
    with os.fdopen(read_fd, "rb") as stdin, caplog.at_level(logging.INFO, logger="agent"):
        agent = CodinGameAgent(_engine(asked), stdin=stdin, launched=None)
        agent.run()
    ready = [r.getMessage() for r in caplog.records if r.getMessage().startswith("ready: ")]
    assert len(ready) == 1 and ready[0].endswith(f"margin {agent.margin_ms:g} ms; {status}"), ready


def test_an_engine_without_a_core_says_nothing_of_one(tmp_path, caplog):
    assert "core:" not in _ready_line(make_engine("random"), tmp_path, caplog)


def test_version_when_the_core_asked_for_cannot_run(monkeypatch, fake_machine, capsys):
    fake_machine(compiled=NOT_BUILT)
    monkeypatch.delenv(core.CORE_ENV, raising=False)
    assert cli.main(["--version", "--core", "compiled"]) == 0
    assert capsys.readouterr().out.endswith(f"; core: none, --core compiled cannot run ({NOT_BUILT})\n")


def test_version_with_stdout_closed_goes_to_stderr(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdout", None)  # what Python gives a command started with >&-
    assert cli.main(["--version"]) == 0
    err = capsys.readouterr().err
    assert err == f"uttt-agent: stdout is closed; {cli.version_line()}\n"
