"""Series on several machines through Dask's distributed scheduler (the ``cluster`` extra): each
game is one task, on workers admitted only while they run the client's code, over TLS when the
cluster's certificates are given. Without a cluster address the runners play locally and nothing
imports Dask. Setting a cluster up, and what a series on one does (the address, TLS, admission,
lost workers, in-process games): docs/cluster.md.

:func:`connect` reaches and checks the scheduler, :func:`admission_plugin` admits the workers,
and :class:`ClusterRunner` has the local runners' API (:mod:`ref_sim.series.scheduler`), so a
series runs on the same loop here or there.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
import socket
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from ref_sim.series import cluster_tls, telemetry
from ref_sim.series.scheduler import Ticket
from agent.cli_common import only_with

#: The environment variable that stands for ``--cluster ADDRESS``.
ENV = "UTTT_CLUSTER"
#: The Dask worker resource that counts game slots; admission grants it.
RESOURCE = "uttt-games"
#: Event topic of admissions and refusals (workers log, the client prints).
ADMISSION_TOPIC = "uttt-admission"
#: The admission plugin's name on the scheduler: one at a time, the last client's.
PLUGIN_NAME = "uttt-admission"
INSTALL_HINT = "pip install 'uttt-agent[cluster]'"
#: Seconds :func:`connect` waits for a first admitted worker before giving up.
CONNECT_WAIT = 30.0
#: The port of an address given without one: ``dask scheduler``'s own default
#: (``distributed.Scheduler.default_port``), so ``--cluster head`` means what it started.
DEFAULT_PORT = 8786
#: Seconds :func:`connect` tries to reach the scheduler: a closed port (retried all that time, as
#: a scheduler may still be starting) or an address that never answers fails then, not after
#: Dask's 30 s; a peer that connects but says nothing gets two seconds more at most.
REACH_TIMEOUT = 5.0
#: Dask's transports over TCP, whose addresses are HOST:PORT.
SCHEMES = ("tcp", "tls", "ws", "wss")
#: Those of them that are encrypted: they need a certificate folder (--tls DIR).
ENCRYPTED_SCHEMES = ("tls", "wss")
#: The sources whose digest is part of the version: what a game's outcome depends on.
SOURCE_SUFFIXES = (".py", ".c", ".json")


class ClusterError(RuntimeError):
    """The cluster cannot be used: no engine installed, no scheduler, no admitted worker."""


def cluster_address(given: str | None = None) -> str | None:
    """``--cluster``'s value, else ``UTTT_CLUSTER``, else None (play locally).

    >>> cluster_address("tcp://head:8786")
    'tcp://head:8786'
    """
    return given or os.environ.get(ENV) or None


_HOST_NAME = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?\.?")     # an IPv4 too


def scheduler_address(text: str, default_scheme: str = "tcp") -> str:
    """``text`` (``--cluster`` or ``UTTT_CLUSTER``) as ``SCHEME://HOST:PORT``: the scheme
    ``default_scheme`` (``tls`` with certificates) and the port :data:`DEFAULT_PORT` where none
    is given.  Raises :class:`ClusterError` with one line for what is no such address.

    >>> scheduler_address("head"), scheduler_address("tls://[::1]:9000")
    ('tcp://head:8786', 'tls://[::1]:9000')
    """
    def bad(why: str) -> ClusterError:
        where = " (from $" + ENV + ")" if os.environ.get(ENV) == text else ""
        return ClusterError(f"bad cluster address {text!r}{where}: {why} (expected "
                            "tcp://HOST:PORT, as `dask scheduler` prints it)")

    scheme, sep, rest = text.strip().partition("://")
    if not sep:
        scheme, rest = default_scheme, scheme
    if scheme not in SCHEMES:
        raise bad(f"unknown scheme {scheme + '://'!r} (Dask's are {', '.join(SCHEMES)})")
    if "://" in rest:
        raise bad("two schemes")
    if rest.startswith("["):                    # [IPv6]:port
        host, sep, port = rest[1:].partition("]")
        if not sep:
            raise bad("no ']' after the IPv6 address")
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise bad(f"{host!r} is not an IPv6 address") from None
        if port and not port.startswith(":"):
            raise bad(f"{port!r} after the IPv6 address is no ':PORT'")
        shown, port = f"[{host}]", port[1:] if port else None
    else:
        host, sep, port = rest.rpartition(":")
        if not sep:
            host, port = rest, None
        if ":" in host:
            # "::1:8786" is itself an IPv6 address, but a port after "::1" is what was meant.
            if _is_ipv6(host) and port.isdigit():
                raise bad(f"an IPv6 address needs brackets: {scheme}://[{host}]:{port}")
            if _is_ipv6(rest):
                raise bad(f"an IPv6 address needs brackets: {scheme}://[{rest}]:{DEFAULT_PORT}")
            raise bad("too many ':'; an IPv6 address goes in brackets: [::1]:PORT")
        if not host:
            raise bad("no host")
        if host.isdigit():
            raise bad(f"{host!r} is a port, not a host")
        if not _HOST_NAME.fullmatch(host):
            raise bad(f"{host!r} is no host name or IP address")
        shown = host
    if port is None:
        port = str(DEFAULT_PORT)
    if not port:
        raise bad("no port after ':'")
    if not (port.isascii() and port.isdigit()):
        raise bad(f"the port {port!r} is not a number")
    if not 1 <= int(port) <= 65535:
        raise bad(f"the port {port} is not between 1 and 65535")
    return f"{scheme}://{shown}:{int(port)}"


@dataclass(frozen=True)
class ClusterTarget:
    """Where a runner plays: the scheduler's address as given, and the certificate folder
    (``--tls DIR``; None: none given, ``UTTT_CLUSTER_TLS`` is read when connecting)."""
    address: str
    tls: str | None = None

    def __str__(self) -> str:
        return self.address


def add_cluster_options(parser, action: str = "play the games", note: str = "") -> None:
    """``--cluster ADDRESS`` and ``--tls DIR`` on ``parser`` (or an argument group): every
    runner's, read back by :func:`cluster_target`.  ``action`` and ``note`` word the help."""
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help=f"{action} on a Dask cluster, e.g. tls://head:8786 (default: "
                             f"${ENV}; needs {INSTALL_HINT})" + (f"; {note}" if note else ""))
    parser.add_argument("--tls", metavar="DIR",
                        help="the cluster's certificate folder (made by uttt-cluster certs DIR): "
                             "encrypted and authenticated connections to a tls:// scheduler, "
                             f"the scheme of an address without one (default: ${cluster_tls.ENV})")


def check_options(parser, args) -> None:
    """``--tls`` with no cluster to play on (no ``--cluster``, no ``$UTTT_CLUSTER``) is a usage
    error: it would be ignored."""
    only_with(parser, args, f"--cluster (or ${ENV})",
                      cluster_address(getattr(args, "cluster", None)) is not None, {"--tls": "tls"})


def cluster_target(args) -> ClusterTarget | None:
    """The cluster that :func:`add_cluster_options`' options name (``--cluster`` or
    ``UTTT_CLUSTER``), for :func:`connect`; None: play here."""
    address = cluster_address(getattr(args, "cluster", None))
    return ClusterTarget(address, getattr(args, "tls", None)) if address else None


def secured_address(text: str, tls: str | None = None):
    """``(address, files)``: the scheduler's address read as :func:`scheduler_address` does (a
    ``tls://`` one when a certificate folder is given) and the checked certificate folder
    (:class:`ref_sim.series.cluster_tls.TLSFiles`; None without TLS).  ``tls``: ``--tls``, else
    ``UTTT_CLUSTER_TLS``.  An encrypted scheme without certificates, certificates with a plain
    scheme, or a folder that cannot be used: :class:`ClusterError`, one line."""
    folder = cluster_tls.folder_from(tls)
    address = scheduler_address(text, default_scheme="tls" if folder else "tcp")
    scheme = address.partition("://")[0]
    if scheme in ENCRYPTED_SCHEMES and not folder:
        raise ClusterError(f"{address} needs the cluster's certificates: --tls DIR or "
                           f"${cluster_tls.ENV} (the folder the scheduler was started with; "
                           f"{cluster_tls.MAKE_HINT})")
    if folder and scheme not in ENCRYPTED_SCHEMES:
        raise ClusterError(f"{address} with certificates (--tls {folder}): {scheme}:// is not "
                           "encrypted; a scheduler started with --tls is at tls://HOST:PORT")
    if not folder:
        return address, None
    try:
        return address, cluster_tls.read_folder(folder)
    except cluster_tls.TLSFolderError as error:
        raise ClusterError(str(error)) from None


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


# -- what a worker must have ------------------------------------------------------------

def _package_dir(name: str) -> Path | None:
    import importlib.util
    spec = importlib.util.find_spec(name)        # finds, does not import, a top-level package
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def project_version() -> str:
    """``"uttt-agent 0.1.0, sources 1a2b3c4d5e6f"``: the installed version and a digest of the
    sources of ``agent/`` and ``ref_sim/`` (two checkouts of one version can differ; a
    compiled core built on each machine does not count, its C source does).  Read afresh at
    each call: agents are started from the files as they are now."""
    from importlib import metadata
    try:
        version = metadata.version("uttt-agent")
    except metadata.PackageNotFoundError:
        version = "not installed"
    digest = hashlib.sha256()
    for package in ("agent", "ref_sim"):
        root = _package_dir(package)
        if root is None:
            digest.update(f"{package}: missing".encode())
            continue
        for path in sorted(root.rglob("*")):
            if path.suffix in SOURCE_SUFFIXES and "__pycache__" not in path.parts:
                digest.update(f"{package}/{path.relative_to(root).as_posix()}\0".encode())
                digest.update(path.read_bytes())
    return f"uttt-agent {version}, sources {digest.hexdigest()[:12]}"


def _what_is_installed():
    """A function that says what the machine it runs on has: ``{"found": its
    project_version()}``, or ``{"missing": why the project cannot be imported}``.  Built here
    so that it travels by value, to a worker without the project too (``Client.run``, the
    admission plugin)."""
    def installed() -> dict:
        import importlib
        try:
            return {"found": importlib.import_module("ref_sim.series.cluster").project_version()}
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
                cluster = importlib.import_module("ref_sim.series.cluster")
                event["slots"] = cluster.game_slots(worker.state.nthreads)
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

    return UtttAdmission(expected, token, RESOURCE, ADMISSION_TOPIC, _what_is_installed())


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


# -- running games: locally or on the cluster -------------------------------------------

class RemoteTicket(Ticket):
    """A game submitted to the cluster: its ``worker`` is known once it finished."""

    def __init__(self, label: str, future) -> None:
        super().__init__(label, future)
        self.worker = None

    remote = True

    def result(self):
        """The game function's value; raises what it raised (:class:`ClusterError` for a game
        that lost every worker that tried it)."""
        from distributed import KilledWorker
        try:
            value, self.worker = self.future.result()
        except KilledWorker as error:
            raise ClusterError(f"{self.label}: every worker that played it died ({error}); "
                               "see the workers' logs") from error
        return value


def _announce_and_run(topic: str, label: str, fn, args, kwargs):
    """Runs on a worker: say that ``label`` starts here, play it, return (value, worker)."""
    from distributed import get_worker
    worker = get_worker()
    worker.log_event(topic, {"label": label, "worker": worker.address})
    return fn(*args, **kwargs), worker.address


class ClusterRunner:
    """Games as tasks on a Dask cluster: one slot of :data:`RESOURCE` each.

    ``say`` prints the cluster's news as it happens, a line each: a worker refused (once,
    whether it was there before or joined later), a worker that joins during the series, and
    that no admitted worker is left (the games then wait for one, without limit).
    """

    remote = True

    def __init__(self, client, say=None, connect_wait: float | None = None) -> None:
        self.client = client
        self.say = say or (lambda text: print(text, file=sys.stderr, flush=True))
        self.token = uuid.uuid4().hex[:8]
        self.started_topic = f"uttt-started-{self.token}"
        self._lock = threading.Lock()
        self._starts: dict[str, list[str]] = {}
        self._seen: set = set()                     # admission events handled: (time, worker)
        self.admitted: dict[str, int] = {}          # worker -> slots
        self.refused: dict[str, str] = {}           # worker -> the line that named it
        self._connected = False                     # joiners are news only after connect
        self._alone_since: float | None = None      # when the series was told no worker is left
        self._joins = 0                             # workers joined during the series
        self.version = project_version()
        found = self._check_versions()
        client.subscribe_topic(ADMISSION_TOPIC, self._admission)
        client.subscribe_topic(self.started_topic, self._started)
        # Workers already there with other code: named now, from what they said, rather than
        # from their refusal events, which may come before this client listens (admission
        # refuses them again: each is named once).
        for worker, (theirs, missing) in sorted(found.items()):
            if theirs != self.version:
                self._refuse(worker, theirs, missing)
        client.register_plugin(admission_plugin(self.version, self.token))
        try:
            # This registration's events that reached the scheduler before the subscription.
            for event in client.get_events(ADMISSION_TOPIC):
                if event[1].get("token") == self.token:
                    self._admission(event)
            self._wait_for_slots(CONNECT_WAIT if connect_wait is None else connect_wait)
        except BaseException:
            self._release_admission()
            raise
        # Their admission events may come later: they did not join.  (slots() waits for the
        # client's event loop, which runs _admission: not under the lock.)
        there = self.slots()
        with self._lock:
            for worker, slots in there.items():
                self.admitted.setdefault(worker, slots)
            self._connected = True

    def _check_versions(self) -> dict[str, tuple[str | None, str]]:
        """Each worker's (version, or None and why the project is missing there).  Refuse a
        cluster whose workers all run other code: registering our admission there would close
        every one of them (another client's series may be using them)."""
        answers = self.client.run(_what_is_installed(), on_error="return")
        found = {worker: (answer.get("found"), answer.get("missing", ""))
                 if isinstance(answer, dict) else (None, f"{type(answer).__name__}: {answer}")
                 for worker, answer in answers.items()}
        if found and all(theirs != self.version for theirs, _ in found.values()):
            theirs = sorted({text or "no uttt-agent" for text, _ in found.values()})
            raise ClusterError(f"the cluster's {len(found)} worker(s) run {', '.join(theirs)}; "
                               f"this client has {self.version}: use the version the workers "
                               "run, or start workers with this one")
        return found

    def _refuse(self, worker: str, found: str | None, missing: str = "") -> None:
        line = refusal(worker, self.version, found, missing)
        with self._lock:
            if worker in self.refused:
                return
            self.refused[worker] = line
        self.say(f"cluster: {line}")

    # events, called in the client's event loop
    def _admission(self, event) -> None:
        stamp, message = event
        worker = message.get("worker")
        with self._lock:
            if (stamp, worker) in self._seen:
                return
            self._seen.add((stamp, worker))
            joined = "slots" in message and worker not in self.admitted
            if "slots" in message:
                self.admitted[worker] = message["slots"]
            alone_since = self._alone_since if joined else None
            if joined:
                self._alone_since = None
                self._joins += 1
        if "slots" not in message:
            self._refuse(worker, message.get("found"), message.get("missing", ""))
        elif joined and self._connected:
            waited = None if alone_since is None else _duration(time.time() - alone_since)
            after = f"; the games go on after {waited} without a worker" if waited else ""
            self.say(f"cluster: worker {worker} joined: {message['slots']} game slot(s){after}")

    def _started(self, event) -> None:
        message = event[1]
        with self._lock:
            self._starts.setdefault(message["label"], []).append(message["worker"])

    def slots(self) -> dict[str, int]:
        """Game slots of each worker now in the cluster."""
        workers = self.client.scheduler_info()["workers"]
        return {address: int(info.get("resources", {}).get(RESOURCE, 0))
                for address, info in workers.items()
                if info.get("resources", {}).get(RESOURCE)}

    def _wait_for_slots(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.slots():
            if time.monotonic() > deadline:
                workers = len(self.client.scheduler_info()["workers"])
                why = (f"{len(self.refused)} worker(s) refused (named above)" if self.refused
                       else f"{workers} worker(s) connected, none admitted yet" if workers
                       else "no worker has joined the scheduler")
                raise ClusterError(f"no worker can play games after {timeout:g} s: {why}")
            time.sleep(0.2)

    def capacity(self) -> int:
        """Games to keep in flight: every slot of the cluster now (at least one, which waits
        at the scheduler for a worker while the cluster has none)."""
        return max(1, sum(self.slots().values()))

    def submit(self, label: str, fn, *args, **kwargs) -> Ticket:
        """Play ``fn(*args, **kwargs)`` on a worker with a free slot.  ``fn`` must be importable
        there (a module-level function of this project)."""
        future = self.client.submit(_announce_and_run, self.started_topic, label, fn, args, kwargs,
                                    key=f"uttt-{label}-{self.token}", resources={RESOURCE: 1},
                                    pure=False)
        return RemoteTicket(label, future)

    def wait(self, tickets, patience: float = 30.0) -> tuple[set, set]:
        """Block until at least one of ``tickets`` is done: (done, still running).

        While no admitted worker is left the games wait for one without limit: a series left
        overnight goes on when a worker comes back (a worker restarted, a machine rebooted),
        and Ctrl-C stops it (``--resume`` where the runner has it).  Said once, after
        ``patience`` s without a result, with the time; the worker that joins says when."""
        from distributed import TimeoutError as StillRunning     # asyncio's on Python 3.10
        from distributed import wait
        by_future = {ticket.future: ticket for ticket in tickets}
        while True:
            try:
                done, pending = wait(list(by_future), timeout=patience,
                                     return_when="FIRST_COMPLETED")
            except StillRunning:
                with self._lock:
                    joins = self._joins
                if not self.slots():
                    with self._lock:
                        # A worker may join while the scheduler answers: then one is there.
                        tell = self._alone_since is None and self._joins == joins
                        if tell:
                            self._alone_since = time.time()
                    if tell:
                        self.say(f"cluster: {time.strftime('%H:%M')}: no admitted worker is left; "
                                 "the games wait for one to join, without limit (Ctrl-C stops "
                                 "the series)")
                continue
            return {by_future[f] for f in done}, {by_future[f] for f in pending}

    def cancel(self, tickets) -> None:
        """Forget ``tickets``: queued games do not start; a game already playing finishes on its
        worker and its result is dropped."""
        futures = [ticket.future for ticket in tickets]
        if futures:
            self.client.cancel(futures)

    def attempts(self, ticket: Ticket) -> int:
        """How many times the game was started (more than one: its worker was lost).

        The announcements alone can miss a start: a game searching inside its worker may hold
        the GIL (the pure-Python search does), so the worker may die before its announcement
        leaves.  The scheduler counts
        the workers lost while a task was on them (``suspicious``, what ``allowed-failures``
        checks), so that count, plus one, is taken when larger."""
        with self._lock:
            announced = len(self._starts.get(ticket.label, ()))
        return max(1, announced, self._workers_lost(ticket) + 1)

    def _workers_lost(self, ticket: Ticket) -> int:
        key = ticket.future.key

        def count(dask_scheduler=None):      # a local function: it travels by value
            task = dask_scheduler.tasks.get(key)
            return 0 if task is None else task.suspicious

        try:
            return int(self.client.run_on_scheduler(count))
        except Exception:                    # a scheduler that refuses to run code: events only
            return 0

    def retried(self) -> dict[str, list[str]]:
        """The games announced more than once, each with the workers that started it in turn
        (all but the last were lost while playing it).  A worker killed before its announcement
        left is missing here; :meth:`attempts` counts it."""
        with self._lock:
            return {label: list(workers) for label, workers in self._starts.items()
                    if len(workers) > 1}

    def _release_admission(self) -> None:
        """Unregister the admission plugin unless another client is connected (its series may
        need it).  Admission serves a running series: left behind, it would close a worker with
        other code that joins between two series unseen, where the next series names it."""
        me = self.client.id

        def others(dask_scheduler=None):         # a local function: it travels by value
            return [c for c in dask_scheduler.clients if c not in (me, "fire-and-forget")]

        try:
            if not self.client.run_on_scheduler(others):
                self.client.unregister_worker_plugin(PLUGIN_NAME)
        except Exception:           # a scheduler that refuses to run code, or gone: it stays
            pass

    def close(self) -> None:
        try:
            self._release_admission()
            self.client.unsubscribe_topic(ADMISSION_TOPIC)
            self.client.unsubscribe_topic(self.started_topic)
        finally:
            self.client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _duration(seconds: float) -> str:
    """Seconds as a person reads them.

    >>> _duration(42), _duration(3 * 3600 + 125)
    ('42 s', '3 h 02 min')
    """
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes = int(seconds // 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def connect(address: str | ClusterTarget, say=None, connect_wait: float | None = None,
            tls: str | None = None) -> ClusterRunner:
    """A :class:`ClusterRunner` on the scheduler at ``address`` (:func:`scheduler_address`
    reads it; a :class:`ClusterTarget` brings its certificate folder, else ``tls``, else
    ``UTTT_CLUSTER_TLS``), once at least one worker has been admitted (waiting up to
    ``connect_wait`` s, default :data:`CONNECT_WAIT`).  Raises :class:`ClusterError` with a
    one-line reason: a bad address or certificate folder, no scheduler answering within
    :data:`REACH_TIMEOUT` s, certificates it refuses, no worker to play."""
    if isinstance(address, ClusterTarget):
        address, tls = address.address, tls or address.tls
    connect_wait = CONNECT_WAIT if connect_wait is None else connect_wait
    try:
        import distributed
    except ImportError:
        raise ClusterError(f"--cluster needs Dask's distributed scheduler: {INSTALL_HINT} "
                           "(or pip install -e '.[cluster]' in a checkout)") from None
    address, files = secured_address(address, tls)
    _reach(address, files)
    try:
        client = distributed.Client(address, timeout=REACH_TIMEOUT,
                                    security=files.security() if files else None)
    except Exception as error:          # gone since _reach asked
        raise ClusterError(f"cannot reach the scheduler at {address}: {type(error).__name__}: "
                           f"{str(error).splitlines()[0] if str(error) else ''}") from None
    try:
        return ClusterRunner(client, say=say, connect_wait=connect_wait)
    except BaseException:
        client.close()
        raise


def _reach(address: str, files=None) -> None:
    """Make sure a Dask scheduler answers at ``address`` within :data:`REACH_TIMEOUT` s (two
    more at most for a peer that connects and then says nothing), over TLS with ``files`` (a
    :class:`ref_sim.series.cluster_tls.TLSFiles`); :class:`ClusterError` with one line if not.  Dask's
    ``Client`` would retry for 30 s, wait forever for a silent peer and fail with any error at
    all on a peer that answers something else (or refuses our certificate)."""
    outcome: dict = {}
    # A thread of its own: a name lookup that hangs cannot hold the caller longer.
    asker = threading.Thread(target=_ask_identity, args=(address, outcome, files),
                             name="uttt-reach", daemon=True)
    asker.start()
    asker.join(REACH_TIMEOUT + 3)
    if "identity" not in outcome:
        why = outcome.get("why", f"no answer within {REACH_TIMEOUT:g} s (a wrong address, a "
                                 "machine that is down, or a firewall?)")
        raise ClusterError(f"cannot reach the scheduler at {address}: {why}")
    identity = outcome["identity"]
    kind = identity.get("type") if isinstance(identity, dict) else None
    if kind in ("Worker", "Nanny"):
        raise ClusterError(f"{address} is a Dask {kind.lower()}, not the scheduler: give the "
                           "scheduler's address (the one `dask worker` was given)")
    if not (isinstance(kind, str) and "Scheduler" in kind):
        raise ClusterError(f"{address} answers, but as a Dask {kind!r}, not the scheduler")


ANOTHER_SERVICE = (f"another service on that port? the scheduler's is {DEFAULT_PORT} unless "
                   "told, its dashboard's 8787")


def _ask_identity(address: str, outcome: dict, files=None) -> None:
    """:func:`_reach`'s work: a TCP connection first (so that a refusal or a timeout is told
    apart, which Dask's error does not always do), with ``files`` a TLS handshake (so that
    certificates refused either way are said so: Dask retries them until its timeout), then
    Dask's handshake and the scheduler's identity.  Puts ``identity``, or ``why`` not, into
    ``outcome``."""
    from distributed import Security
    from distributed.core import rpc

    host, port = address.partition("://")[2].rsplit(":", 1)
    deadline = time.monotonic() + REACH_TIMEOUT
    while True:
        try:
            socket.create_connection((host.strip("[]"), int(port)),
                                     timeout=max(0.1, deadline - time.monotonic())).close()
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                outcome["why"] = ("connection refused: no scheduler listens on that port (not "
                                  "started? another port?)")
                return
            time.sleep(0.1)                     # the scheduler may be starting
        except socket.gaierror as error:
            outcome["why"] = f"unknown host ({error.strerror})"
            return
        except TimeoutError:                    # socket.timeout too, on Python 3.10
            return                              # no answer: _reach says so
        except OSError as error:                # no route to host...
            text = error.strerror or str(error)
            outcome["why"] = text[:1].lower() + text[1:]
            return

    security = files.security() if files else Security()
    if files:
        why = tls_refusal(host.strip("[]"), int(port), security, files.folder, deadline)
        if why:
            outcome["why"] = why
            return

    import asyncio  # here, not at the top: a local series imports this module for its options

    async def identity():
        scheduler = rpc(address, timeout=REACH_TIMEOUT,
                        connection_args=security.get_connection_args("client"))
        try:
            return await asyncio.wait_for(scheduler.identity(),
                                          max(2.0, deadline - time.monotonic()))
        finally:
            await scheduler.close_rpc()

    try:
        outcome["identity"] = asyncio.run(identity())
    except asyncio.TimeoutError:
        outcome["why"] = f"something accepts connections there but says nothing ({ANOTHER_SERVICE})"
    except Exception:                           # the answer is no Dask message
        outcome["why"] = f"something answers there, but not as a Dask scheduler ({ANOTHER_SERVICE})"
    if "why" in outcome and not files and _speaks_tls(host.strip("[]"), int(port)):
        outcome["why"] = ("the scheduler there speaks TLS: connect with "
                          f"tls://{address.partition('://')[2]} and its certificate folder "
                          f"(--tls DIR or ${cluster_tls.ENV})")


def tls_refusal(host: str, port: int, security, folder: Path, deadline: float) -> str | None:
    """Why a TLS connection to ``host:port`` with ``security``'s certificates fails (one line
    naming ``folder``), or None when the scheduler accepts them.  Its TLS handshake, then its
    first bytes: Dask's server speaks first, so a refused client certificate (an alert that
    comes after the handshake in TLS 1.3) shows before anything waits."""
    import ssl

    def closed(how: str) -> str:
        return (f"the scheduler ended the TLS connection ({how}): did it refuse this client's "
                f"certificate? (was it started with another certificate folder than {folder}?)")

    context = security.get_connection_args("client")["ssl_context"]
    try:
        with socket.create_connection((host, port),
                                      timeout=max(0.5, deadline - time.monotonic())) as raw:
            with context.wrap_socket(raw) as tls:
                tls.settimeout(max(1.0, deadline - time.monotonic()))
                first = tls.recv(1)
    except ssl.SSLCertVerificationError as error:
        return (f"the scheduler's certificate is not this cluster's ({error.verify_message}): "
                f"it was started with another certificate folder than {folder}; use that one")
    except (ssl.SSLEOFError, ssl.SSLZeroReturnError, ConnectionResetError) as error:
        return closed(getattr(error, "strerror", None) or "closed")
    except ssl.SSLError as error:
        reason = (error.reason or str(error)).lower().replace("_", " ")
        if "alert" in reason:
            return (f"the scheduler refused this client's certificate ({reason}): it was started "
                    f"with another certificate folder than {folder}; use that one")
        return (f"no TLS there ({reason}): a scheduler started without certificates? "
                "(uttt-cluster scheduler --tls DIR starts one with them)")
    except TimeoutError:
        return (f"no TLS handshake within {REACH_TIMEOUT:g} s: a scheduler started without "
                "certificates? (uttt-cluster scheduler --tls DIR starts one with them)")
    except OSError as error:
        return f"the TLS connection failed: {error.strerror or error}"
    return None if first else closed("no data")


def _speaks_tls(host: str, port: int) -> bool:
    """Whether ``host:port`` answers a TLS handshake (certificates unchecked: only to say that
    a plain tcp:// client is knocking at a TLS scheduler)."""
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=2.0) as raw:
            with context.wrap_socket(raw) as tls:
                tls.settimeout(2.0)
        return True
    except ssl.SSLError as error:       # an alert is a TLS answer (our missing certificate)
        return "alert" in str(error).lower()
    except OSError:
        return False


# -- a game's files, sent back from a worker ---------------------------------------------

#: What a worker sends back of a game's files (its bots can write there): at most this many
#: files, of the first :data:`MAX_LISTED` names, and this many bytes in all.
MAX_SENT_FILES = 64
MAX_SENT_BYTES = 64 << 20
MAX_LISTED = 1024


def read_files(directory: Path) -> dict[str, bytes]:
    """The files of ``directory`` (a game's logs on a worker), to send back with its result,
    bounded whatever a bot put there: each read as a log is kept
    (:func:`ref_sim.series.telemetry.read_bounded`: a big or sparse one by its first and last
    halves, with a line saying so), no symlink, FIFO or device read, and within
    :data:`MAX_SENT_FILES` and :data:`MAX_SENT_BYTES` (the rest is not sent)."""
    with os.scandir(directory) as entries:
        names = sorted(entry.name for _, entry in zip(range(MAX_LISTED), entries))
    files, left = {}, MAX_SENT_BYTES
    for name in names:
        if len(files) >= MAX_SENT_FILES or left <= 0:
            break
        try:
            files[name] = telemetry.read_bounded(directory / name, min(telemetry.LOG_CAP_BYTES, left))
        except OSError:                     # not a regular file, or gone
            continue
        left -= len(files[name])
    return files


def save_files(directory: Path, files: dict[str, bytes]) -> None:
    """Write the files a worker sent back (:func:`read_files`) into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (directory / Path(name).name).write_bytes(data)        # a bare name: stays inside


# -- the summary ------------------------------------------------------------------------

def worker_lines(games: list[dict], timeout_reason: str, retried: int | None = None) -> list[str]:
    """Per-worker lines for a series summary: games and time-outs of each worker that played
    (games with a ``"worker"`` key), then how many games were started again elsewhere.

    >>> games = [{"worker": "tcp://a:1", "reason": "Time out!", "attempts": 2},
    ...          {"worker": "tcp://b:1", "reason": "tie", "attempts": 1}]
    >>> for line in worker_lines(games, "Time out!"): print(line)
    Worker tcp://a:1: 1 games, 1 time-outs
    Worker tcp://b:1: 1 games, 0 time-outs
    Retried: 1 game started again after its worker was lost
    """
    per_worker: dict[str, list[int]] = {}
    for game in games:
        worker = game.get("worker")
        if worker:
            counts = per_worker.setdefault(worker, [0, 0])
            counts[0] += 1
            counts[1] += game.get("reason") == timeout_reason
    if not per_worker:
        return []
    lines = [f"Worker {worker}: {played} games, {timeouts} time-outs"
             for worker, (played, timeouts) in sorted(per_worker.items())]
    if retried is None:
        retried = sum(game.get("attempts", 1) > 1 for game in games)
    lines.append(f"Retried: {retried} game{'' if retried == 1 else 's'} started again after "
                 f"{'its' if retried == 1 else 'their'} worker was lost")
    return lines
