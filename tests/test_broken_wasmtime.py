"""A wasmtime that is installed but whose library does not load (Windows: a DLL missing one of its
dependencies, seen under Wine 8) never ends the agent: ``--core auto`` plays on the next core and
says so in one warning line; ``--core wasm`` is the one-line refusal of a core asked for.

The broken wasmtime is a package of that name first on the path whose import raises as the
real one's ctypes load does; the compiled core is taken away through the ``fake_machine`` fixture.
"""

from __future__ import annotations

import logging
import sys

import pytest

from agent import core, core_wasm, engines
from agent.rules import Position
from agent.limits import SearchLimit

DLL = r"C:\venv\Lib\site-packages\wasmtime\win32-x86_64\_wasmtime.dll"
NOT_FOUND = f"Could not find module '{DLL}' (or one of its dependencies). Try using the full path with constructor syntax."
#: How a wasmtime library fails to load, as its import raises it.
FAILURES = {
    "dll-not-found": f"raise FileNotFoundError({NOT_FOUND!r})",
    "oserror": "raise OSError(193, '%1 is not a valid Win32 application')",
    "importerror": "raise ImportError('DLL load failed while importing _ffi: The specified procedure could not be found.')",
    "missing-symbol": "raise AttributeError('function ProcessPrng not found')",
}


@pytest.fixture(params=sorted(FAILURES))
def broken_wasmtime(request, tmp_path, monkeypatch, fake_machine):
    """This process with a wasmtime that fails to load as ``request.param`` says and no compiled core."""
    package = tmp_path / "wasmtime"
    package.mkdir()
    (package / "__init__.py").write_text(FAILURES[request.param] + "\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "wasmtime", raising=False)
    monkeypatch.setattr(core_wasm, "_loaded", None)      # a module loaded before would hide it
    fake_machine(compiled=core.NOT_BUILT)
    monkeypatch.delenv(core.CORE_ENV, raising=False)
    if not core_wasm.WASM_PATH.is_file():
        pytest.skip(core_wasm.unavailable_reason())
    assert core.wasm_available()                         # installed, as far as a look can tell
    return request.param


def test_auto_falls_back_to_python_with_one_warning(broken_wasmtime, caplog):
    caplog.set_level(logging.INFO, logger="agent")
    engine = engines.AlphaBetaEngine(depth=1, announce=core.Announcements().announce)  # as a fresh process's
    assert engine.core == "python"
    result = engine.choose(Position(), SearchLimit(depth=1))
    assert Position().is_legal(result.move)
    warnings = [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("search core: pure Python (")
    assert "wasmtime is installed but does not load (" in warnings[0] and "\n" not in warnings[0]
    assert "core: python (" in engine.core_status


def test_asked_for_wasm_is_one_line(broken_wasmtime):
    with pytest.raises(core.CoreUnavailable) as raised:
        core.make_searcher(engines.make_evaluator(engines.DEFAULT_EVALUATION), 1, "wasm", prefault=False)
    message = str(raised.value)
    assert message.startswith("--core wasm: the WebAssembly core cannot run: wasmtime is installed but does not load (")
    assert "\n" not in message
