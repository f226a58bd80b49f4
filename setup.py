"""Build of the optional compiled search core, ``agent._core`` (agent/_core.c); everything else
about the package is in pyproject.toml.

The core is optional: where it cannot be compiled (no C compiler, e.g. many Windows laptops)
installation still succeeds with a warning, and the agent runs the pure-Python search
(agent/core.py says which core runs).
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


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
                   "installing without it: the agent will run the pure-Python search.")
        print("\n" + "*" * 78 + "\n" + message + "\n" + "*" * 78 + "\n", file=sys.stderr)


compile_args = [] if sys.platform == "win32" else ["-O3", "-std=c99"]
if os.environ.get("UTTT_CORE_DEBUG"):
    compile_args = ["-O0", "-g"]

setup(
    ext_modules=[Extension("agent._core", ["agent/_core.c", "agent/core_search.c"], depends=["agent/core_search.h"],
                           extra_compile_args=compile_args, optional=True)],
    cmdclass={"build_ext": OptionalBuildExt},
)
