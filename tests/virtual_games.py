"""A referee game on a virtual directory and a virtual clock: :class:`Virtual` drives the file
referee's state machine (ref_sim/referees/file_referee.py) with scripted players and no files,
threads or sleeps; :func:`play_game` stands in for a series' real one
(ref_sim.series.file_games.play_game) with random legal players, so that series logic, records and
their readers can be tested with real games in milliseconds."""

from __future__ import annotations

import random
from pathlib import Path

from ref_sim.referees.file_shell import is_cleanup_name
from ref_sim.series.output.game_line import Played
from ref_sim.referees.file_text import last_line, referee_lines
from ref_sim.referees.file_referee import (
    Clean,
    Crash,
    Done,
    FileReferee,
    Notify,
    PeekMove,
    ReadMove,
    RefereeSettings,
    Remove,
    Stat,
    Unreadable,
    Wait,
    Write,
)

NAMES = ("Walrus", "Otter")
#: A fixed opening (each board is the previous spot): Walrus 4 0, Otter 0 4, Walrus 4 8, Otter 8 4;
#: so Walrus (p1) moves next in board 4.
OPENING = [(4, 0), (0, 4), (4, 8), (8, 4)]


class Virtual:
    """Runs one referee on a virtual directory and clock.

    ``answer(mover, ply, game)`` gives, at each ``.go``, ``(delay, text)``: the mover writes ``text``
    to move_file ``delay`` seconds after its ``.go`` (None: it writes nothing; a list: several
    writes; an :class:`Unreadable` for text: it puts there what no line can be read from).
    ``writes``: more writes ``(time, name, text)`` at absolute times. ``late``: ``{n: seconds}``,
    the n-th wait (counted from 1) wakes that much late (a loaded referee). ``gone_at``: the
    agents have all exited from then on. ``interrupt_at``: Ctrl-C then, waking a wait as the
    shell's does, or at the first action at or after that time. ``step``: seconds each file
    action takes (0: none)."""

    def __init__(self, answer=None, *, writes=(), late=None, gone_at=None, interrupt_at=None,
                 crash_read=None, step=0.0):
        self.answer = answer or (lambda mover, ply, game: None)
        self.pending = sorted(writes)
        self.late = dict(late or {})
        self.gone_at, self.interrupt_at, self.crash_read = gone_at, interrupt_at, crash_read
        self.files: dict[str, tuple[str, float]] = {}
        self.log: list[tuple[float, object]] = []
        self.now = 0.0
        self.waits = 0
        self.step = step

    def play(self, settings=RefereeSettings(time_limit=1.0), names=NAMES, **options):
        options.setdefault("opening", OPENING)
        options.setdefault("first", names[0])
        self.referee = referee = FileReferee(*names, settings, **options)
        action = referee.start(self.now)
        while not isinstance(action, Done):
            self.log.append((round(self.now, 6), action))
            if self.interrupt_at is not None and isinstance(action, Wait) \
                    and self.now < self.interrupt_at < action.until:
                self.now = self.interrupt_at        # as the shell's wait: it wakes at the stop
            if self.interrupt_at is not None and self.now >= self.interrupt_at:
                self.interrupt_at = None
                action = referee.interrupt(self.now)
                continue
            answer = self.perform(action)           # it may move the clock: then the time
            if not isinstance(action, (Wait, Notify)):
                self.now += self.step
            action = referee.send(self.now, answer)
        return referee.record

    def land(self) -> None:
        """The writes due by now."""
        while self.pending and self.pending[0][0] <= self.now:
            at, name, text = self.pending.pop(0)
            self.files[name] = (text, at)

    def perform(self, action):
        self.land()
        if isinstance(action, Wait):
            self.waits += 1
            if action.agents and self.gone_at is not None and self.now >= self.gone_at:
                return True
            until = action.until
            if action.agents and self.gone_at is not None:
                until = min(until, max(self.now, self.gone_at))
            self.now = max(self.now, until) + self.late.get(self.waits, 0.0)
            self.land()
            return True if action.agents and self.gone_at is not None and self.now >= self.gone_at \
                and until < action.until else None
        if isinstance(action, Write):
            self.files[action.name] = (action.text, self.now)
            mover = action.name[:-3]
            if action.name.endswith(".go") and self.referee.record.result is None \
                    and mover == self.referee.mover():
                said = self.answer(mover, len(self.referee.record.moves), self.referee.game)
                for delay, text in [] if said is None else said if isinstance(said, list) else [said]:
                    self.pending.append((self.now + delay, "move_file", text))
                self.pending.sort()
        elif isinstance(action, Remove):
            self.files.pop(action.name, None)
        elif isinstance(action, Clean):
            for name in [n for n in self.files if is_cleanup_name(n)]:
                del self.files[name]
        elif isinstance(action, Stat):
            return self.files["move_file"][1] if "move_file" in self.files else None
        elif isinstance(action, ReadMove):
            if self.crash_read is not None:
                return self.crash_read
            if "move_file" not in self.files:
                return Crash()
            text = self.files["move_file"][0]
            return text if isinstance(text, Unreadable) else last_line(referee_lines(text))
        elif isinstance(action, PeekMove):
            text = self.files.get("move_file", (None,))[0]
            return last_line(referee_lines(text)) if isinstance(text, str) else None
        return None

    def actions(self, kind) -> list[tuple[float, object]]:
        return [(at, action) for at, action in self.log if isinstance(action, kind)]

    def events(self) -> list[tuple[str, str | None]]:
        return [(a.event.kind, a.event.player) for _, a in self.actions(Notify)]


def legal(delay: float):
    """A player that writes its first legal move (in its own name) ``delay`` seconds after its .go."""
    def answer(mover, ply, game):
        board, spot = game.legal_moves()[0]
        return delay, f"{mover} {board} {spot}\n"
    return answer


def on_ply(ply: int, then, delay: float = 0.01):
    """Legal moves, but ``then(mover, game)`` gives the text written at ply ``ply`` (None: none)."""
    def answer(mover, at, game):
        if at == ply:
            text = then(mover, game)
            return None if text is None else (delay, text)
        return legal(delay)(mover, at, game)
    return answer


def play_game(number: int, specs: dict, names, directory: Path, logs: Path, settings, *, seed=None,
              first=None, opening=None, agent_seeds=None, must_start=False, stop=None):
    """A series' game (``ref_sim.series.file_games.play_game``'s arguments and results) played by
    two random legal players, each seeded by its agent seed, answering 10 ms after each ``.go``,
    refereed by the real state machine on a virtual clock. Writes the game's record and each
    bot's log (its command line) as the real one does; no process, no real time."""
    logs.mkdir(parents=True, exist_ok=True)
    players = {name: random.Random((agent_seeds or {}).get(name, 0)) for name in names}
    for name in names:
        command = specs[name].command(name, directory, settings.time_limit)
        (logs / f"game-{number:04d}-{name}.log").write_text("$ " + " ".join(command) + "\n")

    def answer(mover, ply, game):
        board, spot = players[mover].choice(game.legal_moves())
        return 0.01, f"{mover} {board} {spot}\n"
    run = Virtual(answer)
    record = run.play(settings.referee(), names=tuple(names), seed=seed, first=first,
                      opening=opening)
    record.save(logs / f"game-{number:04d}.json")
    return Played(record)


#: The class of the view tests' tournaments: a bot given its name, and two built-ins.
CLASS = ("name=Otter:python3 otter.py", "random", "random")


def tournament(play, out: Path, bots=CLASS, *options: str) -> Path:
    """A tournament's ``--out`` folder, each game played by ``play`` (a stand-in for
    ``ref_sim.series.file_games.play_game``, as :func:`play_game` is): no process, no real time."""
    from ref_sim import tournament as command
    assert command.main([*bots, "--seed", "3", "--time-limit", "1", "--out", str(out), "-q", *options],
                        play=play) == 0
    return out
