"""Where a bot's ``choose()`` runs (agent/bot.py): a child process that the protocol loop outlives.

A student's ``choose()`` may exit, raise anything, hold the GIL for ever, print (under CodinGame
stdout *is* the protocol), read stdin or fork; none of that may lose the game. So the bot forks a
**starter** before the first turn (a copy of itself while it has one thread, so ``choose`` is the
very function given to ``run()``), which forks **workers** that answer turn after turn over a
socket; one that overruns or dies is killed with its process group and replaced for the next
turn, and the turn gets a random legal move. Windows (no ``fork``) runs ``choose()`` in a thread.
What a bot sees of this and what it costs: docs/your-bot.md, "Where choose() runs".
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import socket
import sys
import time
import traceback

from .limits import STOP_POLL_SECONDS  # between two looks at should_stop while a worker thinks: as
#                                        our searches, so that agent.pauses sees a gap as a stall

#: Longest reply line a worker may send (a move or an error text): anything longer is a broken worker.
MAX_REPLY_BYTES = 64 * 1024
#: Characters of an error's text (the end of its traceback) a worker sends back.
MAX_ERROR_CHARS = 4000
#: Seconds the bot's start waits for its first worker to say it is ready (not the first turn's time).
FIRST_WORKER_WAIT = 10.0

#: True where choose() can run in a worker process (fork and passing a socket to the starter).
CAN_FORK = hasattr(os, "fork") and hasattr(socket, "send_fds") and hasattr(socket, "AF_UNIX")


class ChooseFailed(RuntimeError):
    """choose() raised, ended its process or answered something that is not a move."""


class _Gone(Exception):
    """The worker's socket ended, or it sent something no worker sends."""


class Workers:
    """The starter and the current worker of one ``choose`` function (see the module docstring).
    :meth:`ask` is one turn; :meth:`close` ends them all."""

    def __init__(self, function, answer_to_index, name: str = "choose") -> None:
        self.name = name
        self._seq = 0
        self._worker: socket.socket | None = None  # the current worker's socket
        self._worker_pid: int | None = None  # None until it said hello
        self._buffer = b""
        for stream in (sys.stdout, sys.stderr):  # what is buffered now must not be written twice
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        state = random.getstate()  # the child's random is reseeded at fork: keep --seed's sequence
        ours, theirs = socket.socketpair()
        try:
            pid = os.fork()
        except OSError:
            ours.close()
            theirs.close()
            raise
        if pid == 0:  # the starter
            try:
                ours.close()
                _starter(theirs, function, answer_to_index, state)
            finally:
                os._exit(0)
        theirs.close()
        self._starter_pid = pid
        self._control = ours
        self._start_worker()
        self._wait_hello(time.perf_counter() + FIRST_WORKER_WAIT)

    # -- one turn ----------------------------------------------------------------------------

    def ask(self, moves: list[int], variant: str, deadline: float, should_stop=None) -> int:
        """The move index the worker's ``choose`` answers for the position after ``moves``, by
        ``deadline`` (perf_counter). Raises TimeoutError (still thinking at the deadline, or
        ``should_stop()``: the worker is killed) or ChooseFailed; the next turn starts a new
        worker where this one is gone."""
        if self._worker is None:
            self._start_worker()
        if self._worker_pid is None and not self._wait_hello(deadline, should_stop):
            if self._control is None or not self._starter_alive():
                raise ChooseFailed(f"the process that starts {self.name}()'s processes is gone: no move from "
                                   f"{self.name}() this game")
            if self._worker is None:  # it failed to start: try again next turn
                raise ChooseFailed(f"{self.name}()'s new process failed to start")
            raise TimeoutError(f"{self.name}()'s new process was not ready within the turn")
        self._seq += 1
        seconds = max(deadline - time.perf_counter(), 0.0)
        request = json.dumps({"seq": self._seq, "moves": list(moves), "variant": variant, "seconds": seconds})
        try:
            self._worker.sendall(request.encode() + b"\n")
        except OSError:
            self._replace()
            raise ChooseFailed(f"{self.name}()'s process ended before its turn (it was killed, or a thread "
                               "it left running ended it)") from None
        while True:
            try:
                reply = self._read_line(deadline, should_stop)
            except _Gone as gone:
                self._replace()
                raise ChooseFailed(f"{self.name}()'s process {gone}; a new one starts next turn") from None
            if reply is None:  # the deadline, or the turn is over
                self._replace()
                if should_stop is not None and time.perf_counter() < deadline:
                    raise TimeoutError(f"the turn ended while {self.name}() was thinking; its process was stopped")
                raise TimeoutError(f"{self.name}() was still thinking after the {seconds:.3f} s it had; its "
                                   "process was stopped (a new one starts next turn)")
            try:
                answer = json.loads(reply)
            except ValueError:
                answer = None
            if not isinstance(answer, dict):
                self._replace()
                raise ChooseFailed(f"{self.name}()'s process sent something that is not an answer")
            if answer.get("seq") != self._seq:
                continue  # a stale line (say, from a process it forked): not this turn's answer
            move = answer.get("move")
            if isinstance(move, int) and not isinstance(move, bool):
                return move
            raise ChooseFailed(str(answer.get("error", "no move")))

    def close(self) -> None:
        """Kill the current worker and end the starter (which kills any other worker it has)."""
        self._kill_worker()
        if self._control is not None:
            self._control.close()
            self._control = None
            try:  # it exits at once on the closed socket; reap it so no zombie stays
                for _ in range(100):
                    if os.waitpid(self._starter_pid, os.WNOHANG) != (0, 0):
                        break
                    time.sleep(0.01)
                else:
                    os.kill(self._starter_pid, signal.SIGKILL)
                    os.waitpid(self._starter_pid, 0)
            except (ChildProcessError, ProcessLookupError, OSError):
                pass

    # -- workers -----------------------------------------------------------------------------

    def _start_worker(self) -> None:
        """Ask the starter for a new worker; it says hello on its socket when ready."""
        self._worker, self._worker_pid, self._buffer = None, None, b""
        if self._control is None:
            return
        ours, theirs = socket.socketpair()
        try:
            socket.send_fds(self._control, [b"w"], [theirs.fileno()])
        except OSError:  # the starter is gone
            ours.close()
            return
        finally:
            theirs.close()
        self._worker = ours

    def _wait_hello(self, deadline: float, should_stop=None) -> bool:
        if self._worker is None:
            return False
        try:
            line = self._read_line(deadline, should_stop)
        except _Gone:
            line = ""
        if line is None:  # not ready yet (a loaded machine): it may be by the next turn
            return False
        try:
            pid = json.loads(line)["pid"]
        except (ValueError, KeyError, TypeError):
            pid = None
        if not isinstance(pid, int) or pid <= 0:
            self._kill_worker()
            return False
        self._worker_pid = pid
        return True

    def _replace(self) -> None:
        """Kill the current worker (if it lives); the next turn starts a new one. Not now: this
        turn's fallback move is due, and a fork this instant would compete with it for a CPU."""
        self._kill_worker()

    def _kill_worker(self) -> None:
        if self._worker_pid is not None:
            for kill in (os.killpg, os.kill):  # its group: what it forked too
                try:
                    kill(self._worker_pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        if self._worker is not None:
            self._worker.close()
        self._worker, self._worker_pid, self._buffer = None, None, b""

    def _starter_alive(self) -> bool:
        try:
            return os.waitpid(self._starter_pid, os.WNOHANG) == (0, 0)
        except ChildProcessError:
            return False

    def _read_line(self, deadline: float, should_stop=None) -> str | None:
        """The worker's next line, or None at the deadline or when ``should_stop()`` says so; _Gone
        when the worker is gone (the end of its socket) or broken (an endless line)."""
        worker = self._worker
        while b"\n" not in self._buffer:
            left = deadline - time.perf_counter()
            if left <= 0 or (should_stop is not None and should_stop()):
                return None
            ready, _, _ = select.select([worker], [], [], min(left, STOP_POLL_SECONDS if should_stop else left))
            if not ready:
                continue
            try:
                data = worker.recv(65536)
            except OSError:
                data = b""
            if not data:
                raise _Gone("ended without an answer (os._exit, a signal, a crash)")
            self._buffer += data
            if len(self._buffer) > MAX_REPLY_BYTES and b"\n" not in self._buffer:
                raise _Gone(f"sent an answer over {MAX_REPLY_BYTES} bytes long")
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode("utf-8", errors="replace")


# -- the child processes ---------------------------------------------------------------------------


def _away_from_the_protocol() -> None:
    """stdin from /dev/null, stdout to our stderr (the log), for Python's objects and the descriptors."""
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    try:
        os.dup2(2, 1)
    except OSError:  # no stderr (closed before we started): what it prints goes nowhere
        os.dup2(devnull, 1)
    os.close(devnull)
    sys.stdin = sys.__stdin__ = open(os.devnull, encoding="utf-8")
    sys.stdout = sys.__stdout__ = sys.stderr


def _die_with_parent() -> None:
    """On Linux, be killed when the process that forked us ends (best effort elsewhere)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _starter(control: socket.socket, function, answer_to_index, state) -> None:
    """Fork a worker for every socket the bot's process sends; kill them all when it goes."""
    os.setpgid(0, 0)  # a Ctrl-C for the bot's process group is the bot's to handle, not ours
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _away_from_the_protocol()
    workers: set[int] = set()
    while True:
        while workers:  # reap the dead ones: no zombies
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                workers.clear()
                break
            if pid == 0:
                break
            workers.discard(pid)
        ready, _, _ = select.select([control], [], [], 1.0)
        if not ready:
            continue
        try:
            message, fds, _, _ = socket.recv_fds(control, 1, 1)
        except OSError:
            message, fds = b"", []
        if not message:
            break
        for fd in fds:
            try:
                pid = os.fork()
            except OSError:  # a process cap: the bot's process sees the socket end and tries next turn
                os.close(fd)
                continue
            if pid == 0:
                try:
                    control.close()
                    os.setpgid(0, 0)
                    _worker(socket.socket(fileno=fd), function, answer_to_index, state)
                finally:
                    os._exit(0)
            os.close(fd)
            try:
                os.setpgid(pid, pid)  # here too, so that a kill right away finds the group
            except OSError:
                pass
            workers.add(pid)
    for pid in workers:
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _worker(channel: socket.socket, function, answer_to_index, state) -> None:
    """Answer turns until the bot's process closes the socket (see the module docstring)."""
    from .rules import Position

    _die_with_parent()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    random.setstate(state)
    me = os.getpid()
    name = getattr(function, "__name__", "choose")
    channel.sendall(json.dumps({"pid": me}).encode() + b"\n")
    reader = channel.makefile("rb")
    while True:
        line = reader.readline()
        if not line:
            return
        request = json.loads(line)
        reply: dict = {"seq": request["seq"]}
        try:
            position = Position.from_moves(request["moves"], request["variant"])
            reply["move"] = answer_to_index(function(position, request["seconds"]))
        except SystemExit as error:
            reply["error"] = f"{name}() called sys.exit({error.code!r})"
        except KeyboardInterrupt:
            reply["error"] = f"{name}() raised KeyboardInterrupt"
        except BaseException as error:
            reply["error"] = f"{name}() raised {_described(error)}"
        if os.getpid() != me:  # a process choose() forked came back here: it is not the worker
            os._exit(0)
        try:
            channel.sendall(json.dumps(reply).encode() + b"\n")
        except OSError:
            return


def _described(error: BaseException) -> str:
    """The error's type and the end of its traceback (the last lines say what went wrong)."""
    try:
        text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    except BaseException:  # an exception whose text cannot be made
        text = "(no traceback)"
    return f"{type(error).__name__}:\n{_tail(text)}"


def _tail(text: str) -> str:
    """The end of a long text (a traceback's last lines say what went wrong)."""
    text = text.rstrip()
    return text if len(text) <= MAX_ERROR_CHARS else "..." + text[-MAX_ERROR_CHARS:]
