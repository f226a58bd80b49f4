"""What a worker must have to play a series' games: the same code as the client (its version and a
digest of its sources), checked by a Dask worker plugin that admits it with its game slots or
closes it, and the line that names a refused worker (docs/cluster.md).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ref_sim.series.run.cluster_address import INSTALL_HINT


#: The Dask worker resource that counts game slots; admission grants it.
RESOURCE = "uttt-games"
#: Event topic of admissions and refusals (workers log, the client prints).
ADMISSION_TOPIC = "uttt-admission"
#: The admission plugin's name on the scheduler: one at a time, the last client's.
PLUGIN_NAME = "uttt-admission"
#: The sources whose digest is part of the version: what a game's outcome depends on.
SOURCE_SUFFIXES = (".py", ".c", ".json")


# -- what a worker must have ------------------------------------------------------------

def package_dir(name: str) -> Path | None:
    """The folder of the top-level package ``name`` where Python would import it from (None: missing)."""
    import importlib.util
    spec = importlib.util.find_spec(name)        # finds, does not import, a top-level package
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def project_version(*, where=package_dir) -> str:
    """``"uttt-agent 0.1.0, sources 1a2b3c4d5e6f"``: the installed version and a digest of the
    sources of ``agent/`` and ``ref_sim/`` (two checkouts of one version can differ; a
    compiled core built on each machine does not count, its C source does).  Read afresh at
    each call: agents are started from the files as they are now.  ``where(package)``: the
    folder of a top-level package (:func:`package_dir`)."""
    from importlib import metadata
    try:
        version = metadata.version("uttt-agent")
    except metadata.PackageNotFoundError:
        version = "not installed"
    digest = hashlib.sha256()
    for package in ("agent", "ref_sim"):
        root = where(package)
        if root is None:
            digest.update(f"{package}: missing".encode())
            continue
        for path in sorted(root.rglob("*")):
            if path.suffix in SOURCE_SUFFIXES and "__pycache__" not in path.parts:
                digest.update(f"{package}/{path.relative_to(root).as_posix()}\0".encode())
                digest.update(path.read_bytes())
    return f"uttt-agent {version}, sources {digest.hexdigest()[:12]}"


def what_is_installed():
    """A function that says what the machine it runs on has: ``{"found": its
    project_version()}``, or ``{"missing": why the project cannot be imported}``.  Built here
    so that it travels by value, to a worker without the project too (``Client.run``, the
    admission plugin)."""
    def installed() -> dict:
        import importlib
        try:
            try:
                admission = importlib.import_module("ref_sim.series.run.admission")
            except ModuleNotFoundError:     # a checkout from before run/: still names its version
                admission = importlib.import_module("ref_sim.series.cluster")
            return {"found": admission.project_version()}
        except Exception as error:              # ImportError, or a broken install
            return {"missing": f"{type(error).__name__}: {error}"}
    return installed


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 2


def game_slots(nthreads: int, cores: int | None = None) -> int:
    """Games a worker plays at once: one per core but one (each referee busy-polls a core),
    no more than its threads (each game occupies one), at least one.

    >>> game_slots(8, cores=8), game_slots(2, cores=8), game_slots(1, cores=1)
    (7, 2, 1)
    """
    cores = available_cores() if cores is None else cores
    return max(1, min(cores - 1, nthreads))


def admission_plugin(expected: str, token: str = ""):
    """A Dask ``WorkerPlugin`` that admits a worker whose :func:`project_version` is
    ``expected`` (granting it :func:`game_slots` of :data:`RESOURCE`) and closes any other.
    Its events (:data:`ADMISSION_TOPIC`) carry ``token``, the registering client's, and the
    facts (``slots``, or ``found``: the worker's version, or ``missing``: why the project
    cannot be imported there); the client words them (:func:`refusal`).

    Defined here, not at module level, so that it is pickled by value: a worker without this
    project can load it (it needs only ``distributed``) and report what it lacks.
    """
    from distributed import WorkerPlugin

    class UtttAdmission(WorkerPlugin):
        name = PLUGIN_NAME

        # Every value comes in here: a name of this module used in a method would travel by
        # reference, and loading the plugin would import the module a bare worker lacks.
        def __init__(self, expected: str, token: str, resource: str, topic: str,
                     installed) -> None:
            self.expected, self.token, self.resource, self.topic = expected, token, resource, topic
            self.installed = installed

        async def setup(self, worker) -> None:
            import asyncio
            import importlib
            event = {"worker": worker.address, "token": self.token, **self.installed()}
            if event.get("found") == self.expected:
                admission = importlib.import_module("ref_sim.series.run.admission")
                event["slots"] = admission.game_slots(worker.state.nthreads)
                await worker.set_resources(**{self.resource: event["slots"]})
                self._rescan(worker)
                worker.log_event(self.topic, event)
                return
            # No slot from now on (it may hold some from an earlier admission): no game lands
            # here in the moment before it closes.
            await worker.set_resources(**{self.resource: 0})
            worker.log_event(self.topic, event)
            reason = (f"uttt-agent refused: this worker has {event.get('found') or 'no uttt-agent'}"
                      f"; the client has {self.expected}")
            # Closed a moment later, from its own loop: not from inside its registration.
            # nanny=True: its nanny stops too instead of starting it again.
            asyncio.get_running_loop().call_later(
                0.2, lambda: asyncio.ensure_future(worker.close(nanny=True, reason=reason)))

        @staticmethod
        def _rescan(worker) -> None:
            """Make the scheduler offer this worker the games that wait for one.  It does when
            a worker joins or starts running, not when a worker gains resources: without this,
            a worker admitted after every other one died would never get the waiting games.
            A pause and resume is a change to running that the scheduler acts on."""
            from distributed.core import Status
            if worker.status == Status.running:
                worker.status = Status.paused
                worker.status = Status.running

    return UtttAdmission(expected, token, RESOURCE, ADMISSION_TOPIC, what_is_installed())


def refusal(worker: str, expected: str, found: str | None = None, missing: str = "") -> str:
    """The line that names a refused worker: it has ``found``, other code than this client's
    ``expected``, or (``found`` None) the project cannot be imported there, ``missing`` says
    why."""
    if found is None:
        return (f"worker {worker} refused: uttt-agent is not installed there ({missing}); "
                f"install this client's {expected} there ({INSTALL_HINT})")
    same_release = found.split(",")[0] == expected.split(",")[0]
    return (f"worker {worker} refused: it has {found}; this client has {expected}"
            + (" (the same release, other sources: a file differs)" if same_release else "")
            + f"; install the same commit on both ({INSTALL_HINT})")
