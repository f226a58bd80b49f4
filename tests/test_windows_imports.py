"""Every test module, and what the tests import from scripts/, imports on Windows too: what runs
at import (top-level statements, decorators, default values) names no POSIX-only module or signal
outside a ``try``. A module that does not import is an error of the whole Windows run, not a test
that skips with its reason; the Windows lane (scripts/windows_lane.py, under Wine) finds it
minutes later, this in milliseconds on Linux."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Modules Windows' Python does not have.
POSIX_MODULES = {"fcntl", "resource", "pwd", "grp", "termios", "tty", "pty", "posix", "syslog", "crypt",
                 "spwd", "nis", "posix_ipc"}
#: Signals Windows' signal module does not define (it has SIGINT, SIGTERM, SIGABRT, SIGFPE,
#: SIGILL, SIGSEGV, SIGBREAK and the CTRL_* events).
POSIX_SIGNALS = {"SIGHUP", "SIGKILL", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGCHLD", "SIGALRM", "SIGPIPE",
                 "SIGSTOP", "SIGCONT", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGWINCH", "SIGXCPU"}


class AtImport(ast.NodeVisitor):
    """What a module's import runs: function and lambda bodies are skipped (their decorators and
    default values are not), and so are ``try`` blocks (a guarded import)."""

    def __init__(self):
        self.found: list[str] = []

    def visit_FunctionDef(self, node):
        for part in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
            if part is not None:
                self.visit(part)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        pass

    def visit_Try(self, node):
        pass

    def visit_Import(self, node):
        self.found += [f"line {node.lineno}: import {a.name}" for a in node.names
                       if a.name.partition(".")[0] in POSIX_MODULES]

    def visit_ImportFrom(self, node):
        if not node.level and (node.module or "").partition(".")[0] in POSIX_MODULES:
            self.found.append(f"line {node.lineno}: from {node.module} import ...")

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id == "signal" and node.attr in POSIX_SIGNALS:
            self.found.append(f"line {node.lineno}: signal.{node.attr}")
        self.generic_visit(node)


def at_import(path: Path) -> list[str]:
    visitor = AtImport()
    visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
    return visitor.found


def modules() -> list[Path]:
    tests = sorted((ROOT / "tests").rglob("*.py"))
    # The scripts a test module imports at its top (scripts.headless_chromium, say).
    names = {node.module for path in tests for node in ast.parse(path.read_text(encoding="utf-8")).body
             if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("scripts.")}
    found = [ROOT / f"{base}.py" if (ROOT / f"{base}.py").exists() else ROOT / base / "__init__.py"
             for base in (name.replace(".", "/") for name in names)]
    return tests + sorted(found)


def test_the_check_sees_what_runs_at_import():
    code = ("import fcntl\ntry:\n    import resource\nexcept ImportError:\n    resource = None\n"
            "SIGNALS = [signal.SIGHUP]\n@pytest.mark.parametrize('s', [signal.SIGKILL])\n"
            "def test(s=signal.SIGUSR1):\n    import pwd\n    os.kill(0, signal.SIGQUIT)\n")
    visitor = AtImport()
    visitor.visit(ast.parse(code))
    assert visitor.found == ["line 1: import fcntl", "line 6: signal.SIGHUP", "line 7: signal.SIGKILL",
                             "line 8: signal.SIGUSR1"]


@pytest.mark.parametrize("path", modules(), ids=lambda path: str(path.relative_to(ROOT)))
def test_imports_on_windows(path):
    assert at_import(path) == [], "guard it (try/except ImportError, getattr(signal, NAME, None)) and skip its tests with a reason"
