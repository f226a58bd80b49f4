"""Where a series' games run: the runners' interface and the loop every series runs on it.

A runner plays games and hands back a :class:`Ticket` for each: :class:`LocalRunner` in threads
of this process, :class:`InlineRunner` in the calling thread (an in-process search that Ctrl-C
must stop at once), and ``ref_sim.series.run.cluster.ClusterRunner`` on a Dask cluster, which only
a series given ``--cluster`` imports. :func:`stream` feeds any of them, as many games at once as
it has room for; :func:`in_order` gives the results in the order of the calls.
"""

from __future__ import annotations

import concurrent.futures


class Ticket:
    """A submitted game: ``label`` (e.g. ``"game-7"``), and once finished, ``result()`` and
    ``worker`` (``"local"`` on this machine, the worker's address on a cluster)."""

    remote = False

    def __init__(self, label: str, future) -> None:
        self.label, self.future = label, future
        self.worker = "local"

    def result(self):
        """The game function's value; raises what it raised."""
        return self.future.result()

    def __repr__(self) -> str:
        return f"Ticket({self.label!r}, worker={self.worker!r})"


class LocalRunner:
    """Games in threads of this process, ``concurrency`` at once (today's local runners)."""

    remote = False

    def __init__(self, concurrency: int = 1) -> None:
        self.concurrency = concurrency
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=concurrency)

    def capacity(self) -> int:
        return self.concurrency

    def submit(self, label: str, fn, *args, **kwargs) -> Ticket:
        return Ticket(label, self._executor.submit(fn, *args, **kwargs))

    def wait(self, tickets) -> tuple[set, set]:
        """Block until at least one of ``tickets`` is done: (done, still running)."""
        by_future = {ticket.future: ticket for ticket in tickets}
        done, pending = concurrent.futures.wait(by_future, return_when="FIRST_COMPLETED")
        return {by_future[f] for f in done}, {by_future[f] for f in pending}

    def cancel(self, tickets) -> None:
        for ticket in tickets:
            ticket.future.cancel()

    def attempts(self, ticket: Ticket) -> int:
        return 1

    def retried(self) -> dict[str, list[str]]:
        return {}

    def close(self) -> None:
        self._executor.shutdown(wait=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class InlineRunner(LocalRunner):
    """One game at a time, played in the calling thread as it is submitted: for games searched
    in this process (ref_sim.arena, in-process self-play), where Ctrl-C must stop the search at
    once, and engines need not be handed to another thread."""

    def __init__(self) -> None:
        self.concurrency = 1

    def submit(self, label: str, fn, *args, **kwargs) -> Ticket:
        future = concurrent.futures.Future()
        future.set_result(fn(*args, **kwargs))      # an error, Ctrl-C too, goes to the loop
        return Ticket(label, future)

    def wait(self, tickets) -> tuple[set, set]:
        return set(tickets), set()

    def close(self) -> None:
        pass


def stream(runner, todo, submit, window: list, *, ordered: bool = False, wanted=None):
    """The loop of every series, here or on a cluster (:class:`ref_sim.series.run.cluster.ClusterRunner`): play ``todo`` through ``runner`` and yield
    ``(item, ticket)`` for each finished game.  ``submit(item)`` starts one and returns its
    ticket; ``runner.capacity()`` games are in flight at once; ``wanted()`` false submits no more
    (an SPRT decided).  Games that end together come in the order they were submitted; with
    ``ordered``, every game comes in the order of ``todo`` (output in game order: a data file
    resumed by counting its lines, a series reported game by game), a game that finishes before
    those ahead of it waiting at most a second capacity's worth, and once ``wanted()`` is false
    none comes after it.  ``window`` (the caller's empty list) holds ``(ticket, item)`` for the
    games submitted and not yet yielded: those in flight when the caller stops, or when an
    ordered stream ends because ``wanted()`` turned false.
    :func:`ref_sim.series.loop.play_games` (every series runner) and :func:`in_order` run on it."""
    pending, running = iter(todo), set()
    wants = (lambda: True) if wanted is None else wanted
    while True:
        slots = runner.capacity()
        while wants() and len(running) < slots and not (ordered and len(window) >= 2 * slots):
            item = next(pending, _END)
            if item is _END:
                break
            ticket = submit(item)
            window.append((ticket, item))
            running.add(ticket)
        if not window or ordered and not wants():
            return
        first = window[:1] if ordered else list(window)    # what may be yielded now
        if all(ticket in running for ticket, _ in first):
            _, running = runner.wait(running)
        for ticket, item in first:      # those done, before any more is submitted
            if ticket not in running:
                window.remove((ticket, item))   # a stop while the caller handles it: the rest count
                yield item, ticket


_END = object()


def in_order(runner, calls):
    """Play ``calls`` -- ``(label, fn, args, kwargs)``, an iterable read as slots free up --
    through ``runner`` and yield ``(ticket, value)`` in the order of ``calls`` (:func:`stream`,
    ordered).  Closing the generator forgets the games not yet yielded."""
    window: list = []
    try:
        submit = lambda call: runner.submit(call[0], call[1], *call[2], **call[3])  # noqa: E731
        for _, ticket in stream(runner, calls, submit, window, ordered=True):
            yield ticket, ticket.result()
    finally:
        runner.cancel([ticket for ticket, _ in window])
