"""Wake-ups for the protocol loop: watchdog events when available, plain sleeps otherwise.

The watcher never decides anything: ``wait()`` returns as soon as something that can change the
caller's decision happened in the directory, or after ``interval`` seconds, and the caller reads
the files again (polling alone is still correct, one ``interval`` slower). On inotify the kernel
is asked only for those kinds of event (:data:`INOTIFY_EVENTS`), since even an ignored event costs
its delivery; a flood no mask can filter switches to polling for a while (:data:`NOISE_EVENTS`).
The cases and their costs: docs/protocol.md, "What a bot must survive", rows "A process writes
into the referee directory" and "The referee keeps one core busy".
"""

from __future__ import annotations

import logging
import os
import threading
import time

log = logging.getLogger(__name__)

#: Default polling interval: 15 ms is well under the referee's 50 ms tick, and a few stat calls
#: every 15 ms cost nothing measurable.
POLL_INTERVAL = 0.015


#: Ignored events that pause the watch when ``NOISE_EVENTS`` come within ``NOISE_WINDOW`` seconds:
#: 400 a second cost about 0.01 CPU-s/s (25 us each), as much as a waiting agent costs in all,
#: and a real game sends a few a move (the players' temp files). Polling meanwhile costs no more
#: than watching and notices a change within one ``interval``; a retry costs ~0.03 CPU-s.
NOISE_EVENTS = 100
NOISE_WINDOW = 0.25
NOISE_PAUSE = 10.0


def _not_shutdown_noise(record: logging.LogRecord) -> bool:
    # watchdog's inotify emitter logs this ERROR when stop() races with a pending read; it is
    # harmless (we are stopping anyway) and would look like a failure in the game log.
    return "called when the thread is inactive" not in record.getMessage()


logging.getLogger("watchdog.observers.inotify").addFilter(_not_shutdown_noise)

#: watchdog event types that only say a file was looked at: reading a file raises them.
READ_ONLY_EVENTS = frozenset({"opened", "closed_no_write"})


#: The inotify events that can change what the caller decides: a file created (or moved in from
#: elsewhere), deleted (or moved out), renamed, or closed after a write. Given to watchdog as its
#: ``event_filter``, which narrows the inotify mask: IN_MODIFY, IN_ATTRIB, IN_OPEN and
#: IN_CLOSE_NOWRITE are not delivered. Names only: watchdog may not be importable.
INOTIFY_EVENTS = ("FileCreatedEvent", "FileDeletedEvent", "FileMovedEvent", "FileClosedEvent")


def _name(path) -> str:
    return os.path.basename(os.fsdecode(path)) if path else ""


def is_change(event, names=None) -> bool:
    """True when a watchdog ``event`` may have changed what is on disk (for one of ``names``, if given)."""
    if event.event_type in READ_ONLY_EVENTS:
        return False
    if names is None:
        return True
    if event.is_directory:
        return False
    return _name(event.src_path) in names or _name(getattr(event, "dest_path", "")) in names


def _filters_in_the_kernel(observer) -> bool:
    """Is ``observer`` watchdog's inotify observer, which turns ``event_filter`` into its mask?"""
    try:
        from watchdog.observers.inotify import InotifyObserver
    except Exception:  # not Linux, or no watchdog
        return False
    return isinstance(observer, InotifyObserver)


class DirectoryWatcher:
    """Sleeps until ``directory`` changes or ``interval`` passes; see the module docstring.

    ``use_watchdog=False`` (the ``--polling`` switch) never starts an observer. If the observer
    cannot start, or dies later, the watcher logs a warning and keeps going by polling. ``names``
    (file names in ``directory``) limits the wake-ups to changes of those files. ``noise_pause``:
    seconds a flood of unrelated events pauses the watch (:data:`NOISE_PAUSE`).
    """

    def __init__(self, directory, *, use_watchdog: bool = True, interval: float = POLL_INTERVAL,
                 names=None, noise_pause: float = NOISE_PAUSE) -> None:
        self.directory = str(directory)
        self.interval = interval
        self.noise_pause = noise_pause
        self.names = None if names is None else frozenset(names)
        self._use_watchdog = use_watchdog
        self._event = threading.Event()
        self._observer = None
        self._watch = None  # the observer's ObservedWatch while events are on
        self._resume_at = None  # while paused by noise: when to try events again (monotonic)
        self._noise_since = 0.0  # when the last NOISE_EVENTS ignored events began
        self._said_noise = False
        self._lock = threading.Lock()  # guards _removed: the observer's thread adds, the caller takes
        self._removed: set[str] = set()
        #: Events watchdog delivered that could not matter (reads, other files): what the
        #: directory's unrelated traffic costs us, one Python call each.
        self.ignored = 0
        self.backend = "stopped"

    def start(self) -> str:
        """Start watching; return the backend in use, ``"watchdog"`` or ``"polling"``."""
        if self._use_watchdog:
            try:
                self._observer = self._start_observer()
                self.backend = "watchdog"
            except Exception as error:  # ImportError, inotify limits, unsupported filesystem...
                log.warning("cannot watch %s with watchdog (%s); falling back to polling every %.0f ms",
                            self.directory, error, self.interval * 1000)
                self._observer = None
                self.backend = "polling"
        else:
            self.backend = "polling"
        if self.backend == "polling":
            log.info("watching %s by polling every %.0f ms", self.directory, self.interval * 1000)
        else:
            log.info("watching %s with watchdog (%s), polling every %.0f ms as a fallback",
                     self.directory, type(self._observer).__name__, self.interval * 1000)
        return self.backend

    def _start_observer(self):
        from watchdog.observers import Observer

        observer = Observer()
        observer.daemon = True
        self._schedule(observer)
        observer.start()
        return observer

    def _schedule(self, observer) -> None:
        import watchdog.events

        on_event = self._on_event

        class _Forward(watchdog.events.FileSystemEventHandler):
            def on_any_event(self, change) -> None:
                on_event(change)

        self._noise_since = time.monotonic()
        # Only inotify takes the filter into its kernel mask (the module docstring says why);
        # elsewhere no filter is asked for (FSEvents takes one only from watchdog 4.0.2).
        narrowed = {}
        if _filters_in_the_kernel(observer):
            narrowed["event_filter"] = [getattr(watchdog.events, name) for name in INOTIFY_EVENTS]
        self._watch = observer.schedule(_Forward(), self.directory, recursive=False, **narrowed)

    def _on_event(self, change) -> None:
        """Called in the observer's thread for every event watchdog delivers."""
        if not is_change(change, self.names):
            self.ignored += 1
            if self.ignored % NOISE_EVENTS == 0:
                now = time.monotonic()
                if now - self._noise_since < NOISE_WINDOW:
                    self._pause(now)
                self._noise_since = now
            return
        if change.event_type in ("deleted", "moved") and not change.is_directory:
            name = _name(change.src_path)
            if self.names is None or name in self.names:
                with self._lock:
                    self._removed.add(name)
        self._event.set()  # after the removal is recorded: the woken caller sees it

    def _pause(self, now: float) -> None:
        """Stop watching for ``noise_pause`` seconds (in the observer's thread). The caller's resume cannot
        overtake the unschedule: watchdog holds its observer's lock while it calls the handler."""
        observer = self._observer
        if observer is None or self._resume_at is not None:
            return  # stopping, or an event that was already on its way
        self._resume_at = now + self.noise_pause
        self.backend = "polling"
        observer.unschedule(self._watch)  # within watchdog's dispatch: its lock is re-entrant
        log.log(logging.DEBUG if self._said_noise else logging.INFO,
                "over %.0f events a second about other files in %s (a process writing there?): polling "
                "every %.0f ms instead of watching, trying again every %g s", NOISE_EVENTS / NOISE_WINDOW,
                self.directory, self.interval * 1000, self.noise_pause)
        self._said_noise = True

    def _resume(self) -> None:
        try:
            self._schedule(self._observer)
        except Exception as error:  # the directory is gone, inotify limits...
            log.warning("cannot watch %s again (%s); polling from now on", self.directory, error)
            self._drop_observer()
            return
        self.backend = "watchdog"
        self._resume_at = None

    def wait(self, timeout: float | None = None) -> bool:
        """Sleep until a change is signalled or ``timeout`` (default ``interval``) passes.

        Returns True when woken by an event. The flag is cleared on return, so a change that
        happens while the caller reads the files wakes the next ``wait()`` at once.
        """
        if self._observer is not None:
            if not self._observer.is_alive():
                log.warning("the watchdog observer stopped; falling back to polling every %.0f ms",
                            self.interval * 1000)
                self._observer, self._resume_at = None, None
                self.backend = "polling"
            elif self._resume_at is not None and time.monotonic() >= self._resume_at:
                self._resume()
        woken = self._event.wait(self.interval if timeout is None else timeout)
        self._event.clear()
        return woken

    def take_removed(self) -> frozenset[str]:
        """The ``names`` deleted or moved away (renamed) since the previous call, which forgets them.

        Evidence that a file was removed and re-created between two looks, which its identity may
        not show (inode numbers are reused at once). Always empty by polling; a removal is seen up
        to 0.5 s late when the file was moved out of the directory (watchdog waits that long for
        the other half of a rename)."""
        with self._lock:
            removed, self._removed = frozenset(self._removed), set()
        return removed

    def stop(self) -> None:
        self._drop_observer()
        self.backend = "stopped"

    def _drop_observer(self) -> None:
        observer, self._observer, self._resume_at = self._observer, None, None
        if observer is not None:
            try:
                observer.stop()
                observer.join(timeout=1.0)
            except Exception as error:  # stopping must never turn a finished game into a crash
                log.debug("stopping the watchdog observer: %s", error)

    def __enter__(self) -> DirectoryWatcher:
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()
