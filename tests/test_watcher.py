"""agent.watcher.DirectoryWatcher: unrelated writes in the referee directory do
not wake the caller (and on inotify are not even delivered), every way a protocol file changes
does, and ``take_removed`` reports protocol files deleted or moved away.

Wake-ups are counted, never timed: the timeouts below only bound how long a test may wait."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading

import pytest

from agent.watcher import DirectoryWatcher

ME = "Gopher"
NAMES = ("move_file", "first_four_moves", "end_game", f"{ME}.go")
LINE = "node 123456 depth 7 score +12\n"
inotify = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify's narrowed mask: Linux only")


@pytest.fixture
def watcher(tmp_path):
    with watching(tmp_path) as watcher:
        yield watcher


@contextlib.contextmanager
def watching(directory, **options):
    """A DirectoryWatcher of ``directory`` (with ``options``) on watchdog, stopped at the end."""
    watcher = DirectoryWatcher(directory, names=NAMES, **options)
    assert watcher.start() == "watchdog"
    try:
        yield watcher
    finally:
        watcher.stop()


def settle(watcher: DirectoryWatcher) -> None:
    """Let the events of what came before arrive, and forget them."""
    while watcher.wait(timeout=0.2):
        pass
    watcher.take_removed()


def wakeups_during(watcher: DirectoryWatcher, action) -> int:
    """How many times ``wait()`` returns woken while ``action`` runs in another thread, and just after."""
    settle(watcher)
    done = threading.Event()
    worker = threading.Thread(target=lambda: (action(), done.set()))
    worker.start()
    woken = 0
    while not done.is_set():
        woken += watcher.wait(timeout=0.05)
    worker.join()
    while watcher.wait(timeout=0.2):  # events still on their way
        woken += 1
    return woken


# -- unrelated writes ----------------------------------------------------------------------------


def flush_lines(directory, count=3000, between=lambda: None):
    with open(directory / "opponent.log", "a") as handle:
        between()
        for _ in range(count):
            handle.write(LINE)
            handle.flush()
        between()


def open_write_close(directory, count=3000):
    for _ in range(count):
        with open(directory / "opponent.log", "a") as handle:
            handle.write(LINE)


def create_and_delete(directory, count=1000):
    for number in range(count):
        scratch = directory / f"node-{number}.tmp"
        scratch.write_text(LINE)
        scratch.unlink()


UNRELATED = {"flush": flush_lines, "open-close": open_write_close, "create-delete": create_and_delete}


@pytest.mark.e2e
@pytest.mark.parametrize("pattern", list(UNRELATED))
def test_unrelated_writes_do_not_wake_the_caller(watcher, tmp_path, pattern):
    (tmp_path / "move_file").write_text("")
    (tmp_path / f"{ME}.go").touch()
    assert wakeups_during(watcher, lambda: UNRELATED[pattern](tmp_path)) == 0
    assert watcher.take_removed() == frozenset()


@pytest.mark.e2e
@inotify
def test_writes_that_do_not_close_the_file_are_not_even_delivered(watcher, tmp_path):
    """The cost of an opponent logging into the directory was watchdog's thread building an event
    per write; with IN_MODIFY out of the inotify mask the kernel does not send them."""
    counts = []

    def count_after_settling():
        settle(watcher)
        counts.append(watcher.ignored)

    flush_lines(tmp_path, between=count_after_settling)  # the file's creation is an event, its writes are not
    assert counts[0] == counts[1]


@pytest.mark.e2e
def test_a_flood_of_unrelated_events_pauses_the_watch_until_the_next_try(tmp_path, caplog):
    """Creations and deletions (or closes) of other files cannot be masked out: past NOISE_EVENTS in
    NOISE_WINDOW the watch is dropped, the caller polls, and ``wait()`` tries events again after
    the pause (NOISE_PAUSE; here at once), saying so in the log only the first time."""
    caplog.set_level(logging.DEBUG, logger="agent.watcher")
    with watching(tmp_path, noise_pause=0.0) as watcher:
        for _ in range(2):
            settle(watcher)
            for _ in range(50):  # however slowly a loaded machine delivers them
                create_and_delete(tmp_path, count=200)
                if watcher.backend == "polling":
                    break
            assert watcher.backend == "polling"
            ignored = watcher.ignored
            create_and_delete(tmp_path, count=200)
            open_write_close(tmp_path, count=200)
            assert watcher.ignored == ignored, "paused, yet events were delivered"
            watcher.wait(timeout=0.01)
            assert watcher.backend == "watchdog"
            settle(watcher)
            (tmp_path / f"{ME}.go").touch()
            (tmp_path / f"{ME}.go").unlink()
            assert watcher.wait(timeout=5.0)
            assert removed_after(watcher, lambda: None) == {f"{ME}.go"}
    said = [record.levelno for record in caplog.records if "instead of watching" in record.getMessage()]
    assert said == [logging.INFO, logging.DEBUG]


# -- protocol-file changes -----------------------------------------------------------------------


def rename_onto(path, text):
    temp = path.with_name(f"~uttt-move-{os.getpid()}.tmp")
    temp.write_text(text)
    os.replace(temp, path)


def truncate(path):
    open(path, "w").close()  # the referee's _touch: creates, or empties at the game's end


CHANGES = {
    # move_file: a player renames its move onto it, or writes it in place; the referee creates it.
    "move_file renamed onto": (["move_file"], lambda d: rename_onto(d / "move_file", f"{ME} 1 2\n")),
    "move_file written in place": (["move_file"], lambda d: (d / "move_file").write_text(f"{ME} 1 2\n")),
    "move_file created empty": ([], lambda d: truncate(d / "move_file")),
    # first_four_moves and end_game: created and written by the referee with open/write/close.
    "first_four_moves written": ([], lambda d: (d / "first_four_moves").write_text("A 1 1\nB 2 2\n")),
    "end_game written": ([], lambda d: (d / "end_game").write_text(f"END: {ME} WINS!")),
    # NAME.go: created empty, deleted, emptied at the game's end.
    "go created": ([], lambda d: truncate(d / f"{ME}.go")),
    "go deleted": ([f"{ME}.go"], lambda d: (d / f"{ME}.go").unlink()),
    "go truncated": ([f"{ME}.go"], lambda d: truncate(d / f"{ME}.go")),
    "go renamed away": ([f"{ME}.go"], lambda d: os.replace(d / f"{ME}.go", d / "old-go")),
}


@pytest.mark.e2e
@pytest.mark.parametrize("change", list(CHANGES))
def test_every_change_of_a_protocol_file_wakes_the_caller(watcher, tmp_path, change):
    existing, act = CHANGES[change]
    for name in existing:
        (tmp_path / name).write_text("")
    settle(watcher)
    act(tmp_path)
    assert watcher.wait(timeout=5.0)


def test_other_backends_still_report_writes_as_modifications(tmp_path, monkeypatch):
    """Only inotify reports closes: elsewhere an in-place write is a "modified" event, which the
    narrowed filter must not drop (watchdog's PollingObserver stands in for FSEvents/Windows)."""
    from watchdog.observers.polling import PollingObserver

    monkeypatch.setattr("watchdog.observers.Observer", lambda: PollingObserver(timeout=0.05))
    (tmp_path / "move_file").write_text("")
    watcher = DirectoryWatcher(tmp_path, names=NAMES)
    assert watcher.start() == "watchdog"
    try:
        settle(watcher)
        with open(tmp_path / "move_file", "r+") as handle:
            handle.write(f"{ME} 1 2\n")
            handle.flush()
            assert watcher.wait(timeout=5.0), "an in-place write went unnoticed"
    finally:
        watcher.stop()


# -- take_removed --------------------------------------------------------------------------------


def removed_after(watcher, act, tries=50) -> frozenset:
    """What take_removed reports once ``act`` has been noticed (a move out of the directory is
    reported only after watchdog's 0.5 s wait for the other half of a rename)."""
    act()
    removed = frozenset()
    for _ in range(tries):
        watcher.wait(timeout=0.1)
        removed |= watcher.take_removed()
        if removed:
            break
    return removed


@pytest.mark.e2e
@pytest.mark.parametrize("how", ["deleted", "renamed", "moved out"])
def test_take_removed_reports_a_protocol_file_removed_once(watcher, tmp_path, how):
    go = tmp_path / f"{ME}.go"
    go.touch()
    (tmp_path / "elsewhere").mkdir()
    settle(watcher)
    act = {"deleted": go.unlink,
           "renamed": lambda: os.replace(go, tmp_path / "old-go"),
           "moved out": lambda: os.replace(go, tmp_path / "elsewhere" / go.name)}[how]
    assert removed_after(watcher, act) == {go.name}
    assert watcher.take_removed() == frozenset()


def test_take_removed_reports_a_deletion_though_the_file_is_back(watcher, tmp_path):
    """Deleted and re-created between two looks: the new .go may reuse the inode (and the mtime
    on a coarse filesystem), so only the watcher can tell."""
    go = tmp_path / f"{ME}.go"
    go.touch()
    settle(watcher)
    go.unlink()
    go.touch()
    assert removed_after(watcher, lambda: None) == {go.name}


@pytest.mark.e2e
def test_take_removed_ignores_other_files_and_other_changes(watcher, tmp_path):
    (tmp_path / "move_file").write_text("")
    settle(watcher)
    rename_onto(tmp_path / "move_file", f"{ME} 1 2\n")  # replaced, never missing
    (tmp_path / "end_game").write_text("END")
    create_and_delete(tmp_path, count=20)
    (tmp_path / "Otter.go").touch()
    (tmp_path / "Otter.go").unlink()  # not mine
    settle(watcher)
    assert watcher.take_removed() == frozenset()


def test_take_removed_is_empty_when_polling(tmp_path):
    go = tmp_path / f"{ME}.go"
    go.touch()
    watcher = DirectoryWatcher(tmp_path, names=NAMES, use_watchdog=False)
    assert watcher.start() == "polling"
    go.unlink()
    assert watcher.wait(timeout=0.05) is False
    assert watcher.take_removed() == frozenset()
    watcher.stop()
