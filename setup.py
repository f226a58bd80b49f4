"""Build of the optional compiled search core, ``agent._core`` (agent/_core.c and agent/core_search.c),
and the dependencies that follow from it; everything else about the package is in pyproject.toml.

The core is optional: where it cannot be compiled (no C compiler, e.g. many Windows laptops)
installation still succeeds (with the warning below, which pip shows only with -v). There the
package depends on ``wasmtime`` too, which runs the same search compiled to WebAssembly
(agent/data/core.wasm, shipped): slower than the compiled core, many times faster than the
pure-Python search (the measured ratios: docs/measurements.md, "The cores' speed"). Where a
compiler works it does not, and those users do not download the 30 MB runtime they would never
use (agent/core.py says which core runs; the agent's ready line names it).
"""

import contextlib
import os
import sys
import tempfile
from pathlib import Path

from setuptools import Distribution, Extension, setup
from setuptools.command.build_ext import build_ext

#: Always needed (pyproject.toml declares the dependencies dynamic: this list is them). watchdog 4 is the
#: first whose schedule() takes the event filter the watcher narrows inotify's mask with.
REQUIRES = ["watchdog>=4"]
#: Where no C compiler works: the WebAssembly core's runtime (also the ``wasm`` extra).
WASM_RUNTIME = "wasmtime>=50.0.1"


class OptionalBuildExt(build_ext):
    """build_ext that reports a failed compilation and carries on without the extension."""

    def run(self):
        try:
            super().run()
        except Exception as error:  # no compiler at all, a broken toolchain...
            self._skip(error)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as error:
            self._skip(error)

    @staticmethod
    def _skip(error):
        message = (f"WARNING: the compiled search core (agent/_core.c) could not be built ({error}); "
                   "installing without it: the agent will run the same search as WebAssembly where wasmtime "
                   f"is installed (python -m pip install wasmtime), else the pure-Python search.")
        print("\n" + "*" * 78 + "\n" + message + "\n" + "*" * 78 + "\n", file=sys.stderr)


@contextlib.contextmanager
def _silenced():
    """stdout and stderr, the compiler's included, to nowhere: a failed probe is no error."""
    saved = [os.dup(1), os.dup(2)]
    sys.stdout.flush()
    sys.stderr.flush()
    with open(os.devnull, "w") as nowhere:
        os.dup2(nowhere.fileno(), 1)
        os.dup2(nowhere.fileno(), 2)
        try:
            yield
        finally:
            for fd, copy in zip((1, 2), saved):
                os.dup2(copy, fd)
                os.close(copy)


def compiler_builds_extensions() -> bool:
    """Does this machine build a C extension, as it would agent._core? A tiny one is compiled and
    linked in a temporary folder by setuptools' own build_ext: the compiler, CC, the Python headers
    and the linker that the real build would use, MSVC on Windows."""
    probe = ('#include <Python.h>\nstatic struct PyModuleDef probe = {PyModuleDef_HEAD_INIT, "probe"};\n'
             "PyMODINIT_FUNC PyInit_probe(void) { return PyModule_Create(&probe); }\n")
    with tempfile.TemporaryDirectory(prefix="uttt_cc_probe_") as folder:
        source = Path(folder, "probe.c")
        source.write_text(probe)
        command = build_ext(Distribution({"name": "probe", "ext_modules": [Extension("probe", [str(source)])]}))
        command.build_lib = command.build_temp = folder
        try:
            with _silenced():
                command.ensure_finalized()
                command.run()
        except Exception:  # CompileError, LinkError, a compiler that is not there...
            return False
    return True


compile_args = [] if sys.platform == "win32" else ["-O3", "-std=c99"]
if os.environ.get("UTTT_CORE_DEBUG"):
    compile_args = ["-O0", "-g"]

setup(
    ext_modules=[Extension("agent._core", ["agent/_core.c", "agent/core_search.c"], depends=["agent/core_search.h"],
                           extra_compile_args=compile_args, optional=True)],
    cmdclass={"build_ext": OptionalBuildExt},
    install_requires=REQUIRES + ([] if compiler_builds_extensions() else [WASM_RUNTIME]),
)
