"""Other builds of the compiled core in one process, to play or time two builds against each
other: the arena's ``alphabeta:core_build=PATH`` (docs/core_speed.md) and
scripts/bench_core_ratio.py. The bot itself runs only the build it was installed with."""

from __future__ import annotations

import importlib.util
import os

from agent import core
from agent.cli_common import open_regular, reason
from agent.rules import ZOBRIST_CELL, ZOBRIST_FORCED

#: Builds loaded by load_core_build, by real path: a module is loaded once per process.
_builds: dict = {}


def load_core_build(path: str):
    """An ``agent._core`` built at ``path`` (a .so/.pyd from another version of agent/_core.c),
    ready for ``CompiledAlphaBeta(..., core_module=...)``; ValueError if it is not one
    agent/core.py drives. Loaded once per path; the file of ``agent._core`` itself gives that
    same library (the loader shares it), so a copy of a build to compare must be a file of its own."""
    path = os.path.realpath(path)
    if path in _builds:
        return _builds[path]
    try:        # the loader would wait for ever on a FIFO and read a device to its end
        os.close(open_regular(path))
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: cannot load it: {reason(error)}") from None
    # The name's last part must be _core: the loader calls PyInit__core.
    spec = importlib.util.spec_from_file_location(f"agent._core_builds.b{len(_builds)}._core", path)
    if spec is None:
        raise ValueError(f"{path}: not a loadable extension module")
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError as error:  # the loader's message names the file, mostly
        raise ValueError(str(error) if path in str(error) else f"{path}: {error}") from None
    except SystemError as error:  # PyInit__core broke the rules: returned no module, or failed silently
        raise ValueError(f"{path}: not a loadable extension module ({error})") from None
    if getattr(module, "CORE_VERSION", None) != core.CORE_VERSION:
        raise ValueError(f"{path}: built from a version of agent/_core.c with another interface "
                         f"(CORE_VERSION {getattr(module, 'CORE_VERSION', None)}, not {core.CORE_VERSION})")
    searcher = getattr(module, "Searcher", None)
    missing = [name for name in ("Searcher", "set_zobrist") if not hasattr(module, name)] + [
        f"Searcher.{name}" for name in dir(getattr(core._core, "Searcher", None) if searcher else None)
        if not name.startswith("_") and not hasattr(searcher, name)]
    if missing:
        raise ValueError(f"{path}: not a build of agent/_core.c that agent/core.py drives (it lacks "
                         f"{', '.join(missing[:5])})")
    module.set_zobrist(ZOBRIST_CELL[0], ZOBRIST_CELL[1], ZOBRIST_FORCED)
    _builds[path] = module
    return module


def build_searcher(evaluator, hash_mb: float, path: str, prefault: bool = True, features=None,
                   threads: int | str = 1):
    """A compiled searcher on the build at ``path`` (agent.core.CompiledAlphaBeta with that
    build's ``core_module``); ``threads="auto"`` is agent.core.auto_threads. ValueError if the
    build cannot be loaded, agent.core.UnsupportedEvaluation if it does not compute ``evaluator``'s."""
    return core.CompiledAlphaBeta(evaluator, hash_mb=hash_mb, prefault=prefault, features=features,
                                  threads=core.auto_threads() if threads == core.AUTO_THREADS else threads,
                                  core_module=load_core_build(path))
