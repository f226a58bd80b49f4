"""Shared helpers: run a referee game against scripted players that drive the files."""

import os
import queue
import random
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

import pytest


@dataclass
class Turn:
    """What a scripted player sees when its .go appears."""
    directory: str
    player: str
    opponent: str
    game: object          # ref_sim.rules.Game, a copy at the start of the turn
    ply: int              # moves played after the opening before this one
    rng: random.Random

    @property
    def move_file(self):
        return os.path.join(self.directory, "move_file")

    def legal_move(self):
        return self.rng.choice(self.game.legal_moves())

    def write(self, text, name="move_file"):
        """Write ``text`` to a file of the game directory at once (temp file + rename)."""
        time.sleep(0.015)       # let the clock move past the referee's recorded mtime
        temp = os.path.join(self.directory, ".scripted-tmp")
        with open(temp, "w") as handle:
            handle.write(text)
        os.replace(temp, os.path.join(self.directory, name))

    def play_legal(self):
        board, spot = self.legal_move()
        self.write(f"{self.player} {board} {spot}\n")


def run_scripted(directory, act, observe=None, **kwargs):
    """Referee a game between 'Walrus' and 'Otter'; ``act(turn)`` plays every turn.

    ``act`` runs in a helper thread, like another process would; ``observe(event)`` runs in
    the referee's thread at each event (to look at the files at exact moments).
    Returns (record, events) where events is the list of (kind, player).
    """
    from ref_sim.referees.file_protocol import run_game

    kwargs.setdefault("time_limit", 0.5)
    kwargs.setdefault("seed", 1)
    kwargs.setdefault("exit_delay", 0.0)
    kwargs.setdefault("start_delay", 0.0)
    turns = queue.Queue()
    events = []
    errors = []
    rng = random.Random(kwargs["seed"])

    def on_event(event):
        events.append((event.kind, event.player))
        if observe is not None:
            observe(event)
        if event.kind == "turn":
            ply = len(event.record.moves)
            opponent = [n for n in event.record.names if n != event.player][0]
            turns.put(Turn(str(directory), event.player, opponent, event.game.copy(), ply, rng))

    def worker():
        while True:
            turn = turns.get()
            if turn is None:
                return
            try:
                act(turn)
            except Exception as error:     # reported by the test, not lost in a thread
                errors.append(error)

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    try:
        record = run_game(directory, "Walrus", "Otter", on_event=on_event, **kwargs)
    finally:
        turns.put(None)
        thread.join(5)
    assert not errors, errors
    return record, events


@pytest.fixture
def scripted(tmp_path):
    """``scripted(act, observe=None, **run_game_kwargs)`` -> (record, events) in tmp_path."""
    def run(act, observe=None, **kwargs):
        return run_scripted(tmp_path, act, observe, **kwargs)
    return run


#: How ``sh`` starts a command with one of its standard descriptors closed.
CLOSED_BY_SH = {"stdin": "<&-", "stdout": ">&-", "stderr": "2>&-"}


@pytest.fixture
def start_agent():
    """``start_agent(args, closed=None, **popen)``: ``python -m agent ARGS`` as a Popen (text mode,
    run from the repository), with ``closed`` ("stdin", "stdout" or "stderr") closed as a shell's
    ``>&-`` leaves it (POSIX only). Processes still running at the end are killed."""
    started = []

    def start(args, closed=None, **popen):
        command = [sys.executable, "-m", "agent", *args]
        if closed is not None:
            command = ["sh", "-c", f'exec "$@" {CLOSED_BY_SH[closed]}', "sh", *command]
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        started.append(subprocess.Popen(command, cwd=root, text=True, **popen))
        return started[-1]

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()
