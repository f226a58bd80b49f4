"""Build the WebAssembly core, agent/data/core.wasm, from agent/core_search.c and agent/core_wasm.c.

Usage:
  python -m scripts.build_wasm            # rebuild agent/data/core.wasm
  python -m scripts.build_wasm --check    # exit 1 if the shipped file is not what the sources build to

The compiler is Zig's clang (``zig cc``) from the ``ziglang`` package at a pinned version
(ZIGLANG_VERSION): pip installs it on any platform, and one version of it builds the same bytes
everywhere, so the shipped file can be checked against its sources (tests/test_core_wasm.py does,
where that ziglang is installed). Zig's cache goes to a temporary folder, removed afterwards.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "agent" / "data" / "core.wasm"
SOURCES = [ROOT / "agent" / "core_search.c", ROOT / "agent" / "core_wasm.c"]
#: Another version may build other bytes: change it with the shipped file (and say so in the commit).
ZIGLANG_VERSION = "0.17.1"
FLAGS = [
    "-target", "wasm32-freestanding",  # no operating system, no C library: the hosts give the clock
    "-O3", "-std=c99", "-nostdlib", "-Wall", "-Werror",
    "-Wl,--no-entry",                  # a library of exports, no main
    "-Wl,-z,stack-size=1048576",       # the search's frames, 81 plies deep, in the module's own stack
    "-s",                              # no names or debug sections: smaller, and no paths in it
]


def installed_ziglang() -> str | None:
    """The installed ziglang's version, or None."""
    from importlib import metadata

    try:
        return metadata.version("ziglang")
    except metadata.PackageNotFoundError:
        return None


def why_not_buildable() -> str:
    """'' when the pinned ziglang is installed, else why not and what to do."""
    found = installed_ziglang()
    if found == ZIGLANG_VERSION:
        return ""
    have = "not installed" if found is None else f"{found} is installed"
    return f"needs ziglang {ZIGLANG_VERSION} (pip install ziglang=={ZIGLANG_VERSION}); {have}"


def build(out: Path) -> None:
    """Compile the sources into ``out`` with the pinned ziglang; RuntimeError with the compiler's words."""
    reason = why_not_buildable()
    if reason:
        raise RuntimeError(reason)
    with tempfile.TemporaryDirectory(prefix="uttt_zig_cache_") as cache:
        env = dict(os.environ, ZIG_GLOBAL_CACHE_DIR=cache, ZIG_LOCAL_CACHE_DIR=cache)
        done = subprocess.run([sys.executable, "-m", "ziglang", "cc", *FLAGS, *map(str, SOURCES), "-o", str(out)],
                              capture_output=True, text=True, env=env, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"zig cc failed:\n{done.stdout}{done.stderr}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare the shipped file with a fresh build")
    args = parser.parse_args(argv)
    try:
        if args.check:
            with tempfile.TemporaryDirectory(prefix="uttt_wasm_") as tmp:
                fresh = Path(tmp) / "core.wasm"
                build(fresh)
                same = OUT.is_file() and fresh.read_bytes() == OUT.read_bytes()
            print(f"{OUT.relative_to(ROOT)}: {'the same as' if same else 'NOT what'} the sources build to "
                  f"(ziglang {ZIGLANG_VERSION})" + ("" if same else ": run python -m scripts.build_wasm"))
            return 0 if same else 1
        build(OUT)
    except RuntimeError as error:
        print(f"build_wasm.py: {error}", file=sys.stderr)
        return 2
    size = OUT.stat().st_size
    print(f"wrote {OUT.relative_to(ROOT)}: {size:,} bytes (ziglang {ZIGLANG_VERSION})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
