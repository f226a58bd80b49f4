"""Series on several machines through Dask's distributed scheduler (the ``cluster`` extra): each
game is one task, on workers admitted only while they run the client's code, over TLS when the
cluster's certificates are given. Without a cluster address the runners play locally and nothing
imports Dask. Setting a cluster up, and what a series on one does (the address, TLS, admission,
lost workers, in-process games): docs/cluster.md.

:func:`connect` reaches and checks the scheduler (the address: :mod:`.cluster_address`; the
first look and TLS: :mod:`.cluster_reach`), workers are admitted by :mod:`.admission`, and
:class:`ClusterRunner` has the local runners' API (:mod:`ref_sim.series.run.scheduler`), so a
series runs on the same loop here or there; a game's files come back through :mod:`.shipping`.
"""

from __future__ import annotations

import sys
import threading
import time
import uuid

from ref_sim.series.run import admission, cluster_reach
from ref_sim.series.run.cluster_address import INSTALL_HINT, ClusterError, ClusterTarget, secured_address
from ref_sim.series.run.scheduler import Ticket

#: Seconds :func:`connect` waits for a first admitted worker before giving up.
CONNECT_WAIT = 30.0


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
        self.version = admission.project_version()
        found = self._check_versions()
        client.subscribe_topic(admission.ADMISSION_TOPIC, self._admission)
        client.subscribe_topic(self.started_topic, self._started)
        # Workers already there with other code: named now, from what they said, rather than
        # from their refusal events, which may come before this client listens (admission
        # refuses them again: each is named once).
        for worker, (theirs, missing) in sorted(found.items()):
            if theirs != self.version:
                self._refuse(worker, theirs, missing)
        client.register_plugin(admission.admission_plugin(self.version, self.token))
        try:
            # This registration's events that reached the scheduler before the subscription.
            for event in client.get_events(admission.ADMISSION_TOPIC):
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
        answers = self.client.run(admission.what_is_installed(), on_error="return")
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
        line = admission.refusal(worker, self.version, found, missing)
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
        return {address: int(info.get("resources", {}).get(admission.RESOURCE, 0))
                for address, info in workers.items()
                if info.get("resources", {}).get(admission.RESOURCE)}

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
                                    key=f"uttt-{label}-{self.token}", resources={admission.RESOURCE: 1},
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
                self.client.unregister_worker_plugin(admission.PLUGIN_NAME)
        except Exception:           # a scheduler that refuses to run code, or gone: it stays
            pass

    def close(self) -> None:
        try:
            self._release_admission()
            self.client.unsubscribe_topic(admission.ADMISSION_TOPIC)
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
            tls: str | None = None, *, reach_timeout: float = cluster_reach.REACH_TIMEOUT) -> ClusterRunner:
    """A :class:`ClusterRunner` on the scheduler at ``address`` (:func:`scheduler_address`
    reads it; a :class:`ClusterTarget` brings its certificate folder, else ``tls``, else
    ``UTTT_CLUSTER_TLS``), once at least one worker has been admitted (waiting up to
    ``connect_wait`` s, default :data:`CONNECT_WAIT`).  Raises :class:`ClusterError` with a
    one-line reason: a bad address or certificate folder, no scheduler answering within
    ``reach_timeout`` s (:data:`cluster_reach.REACH_TIMEOUT`), certificates it refuses, no worker to play."""
    if isinstance(address, ClusterTarget):
        address, tls = address.address, tls or address.tls
    connect_wait = CONNECT_WAIT if connect_wait is None else connect_wait
    try:
        import distributed
    except ImportError:
        raise ClusterError(f"--cluster needs Dask's distributed scheduler: {INSTALL_HINT} "
                           "(or pip install -e '.[cluster]' in a checkout)") from None
    address, files = secured_address(address, tls)
    cluster_reach.reach(address, files, timeout=reach_timeout)
    try:
        client = distributed.Client(address, timeout=reach_timeout,
                                    security=files.security() if files else None)
    except Exception as error:          # gone since _reach asked
        raise ClusterError(f"cannot reach the scheduler at {address}: {type(error).__name__}: "
                           f"{str(error).splitlines()[0] if str(error) else ''}") from None
    try:
        return ClusterRunner(client, say=say, connect_wait=connect_wait)
    except BaseException:
        client.close()
        raise


# -- the summary ------------------------------------------------------------------------

def worker_lines(games: list[tuple], timeout_reason: str, retried: int | None = None) -> list[str]:
    """Per-worker lines for a series summary: games and time-outs of each worker that played
    (``games``: each game's ``(worker, attempts, reason)``, the worker None for a game played
    here), then how many games were started again elsewhere.

    >>> games = [("tcp://a:1", 2, "Time out!"), ("tcp://b:1", 1, "tie")]
    >>> for line in worker_lines(games, "Time out!"): print(line)
    Worker tcp://a:1: 1 games, 1 time-outs
    Worker tcp://b:1: 1 games, 0 time-outs
    Retried: 1 game started again after its worker was lost
    """
    per_worker: dict[str, list[int]] = {}
    for worker, _, reason in games:
        if worker:
            counts = per_worker.setdefault(worker, [0, 0])
            counts[0] += 1
            counts[1] += reason == timeout_reason
    if not per_worker:
        return []
    lines = [f"Worker {worker}: {played} games, {timeouts} time-outs"
             for worker, (played, timeouts) in sorted(per_worker.items())]
    if retried is None:
        retried = sum((attempts or 1) > 1 for _, attempts, _ in games)
    lines.append(f"Retried: {retried} game{'' if retried == 1 else 's'} started again after "
                 f"{'its' if retried == 1 else 'their'} worker was lost")
    return lines
