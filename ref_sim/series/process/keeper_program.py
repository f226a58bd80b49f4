"""A bot's keeper, a program of its own that the project never imports (Linux): run as
``python -I -S keeper_program.py RUNNER_PID COMMAND...`` (standard library only, no site, nothing
of the project on its path).  It forks the command, is its parent and a child subreaper, and
once the bot exits, the keeper is asked to stop (SIGTERM) or its runner dies, ends every process
of the bot's tree; it then exits as the bot did.  Started by
:func:`ref_sim.series.process.keeper.wrapped`; what it holds against: docs/isolation.md.
"""

import os
import signal
import sys
import time

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
#: SIGTERM and SIGINT: end the tree now; SIGHUP: the runner is gone (the death signal asked for).
#: None off POSIX, where the module need only load (pytest's doctests import it on Windows).
STOPS = {signal.SIGTERM, signal.SIGHUP, signal.SIGINT} if os.name == "posix" else set()
#: Seconds a bot has, once the runner is gone, to end by itself before its tree is ended.
GRACE = 3.0
#: Blocked for good and taken with sigwaitinfo: no handler ever interrupts the keeper.
WATCHED = STOPS | {signal.SIGCHLD} if os.name == "posix" else set()


def say(text):
    try:
        os.write(2, text.encode(errors="replace"))
    except OSError:
        pass


def tree(root):
    # Every process below root, by parent links (/proc/PID/stat's 4th field).
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    parent = int(handle.read().rpartition(b")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(parent, []).append(int(name))
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found


def reap():
    # Collect the children that have exited (the bot's status kept); False once none is left.
    global status
    while True:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True
        if pid == bot:
            status = code


def end_tree():
    # SIGKILL to every process of the tree, again until none is left (what forks meanwhile is
    # handed to the keeper when its parent dies, and found by the next look).
    for _ in range(2000):
        found = tree(me)
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if not reap():
            break
        time.sleep(0.001)

def main():
    global me, runner, command, bot, status
    me, runner, command = os.getpid(), int(sys.argv[1]), sys.argv[2:]
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)   # never discarded, even blocked
    signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGHUP, 0, 0, 0)
    except (ImportError, OSError, AttributeError):
        say("keeper: no prctl here: what the bot detaches may outlive its game\n")
    bot, status = os.fork(), None
    if bot == 0:
        try:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, WATCHED)
            os.execvp(command[0], command)
        except BaseException as error:
            say(f"could not start: {error}\n")
        os._exit(127)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    # The runner gone (its death signal, or before it was asked for): the bot has a grace to see it
    # and end by itself, as ours do (agent.lifeline), then its tree is ended.
    gone_at = time.monotonic() if os.getppid() != runner else None
    while reap() and status is None:
        if gone_at is None:
            signum = signal.sigwaitinfo(WATCHED).si_signo
        else:
            left = gone_at + GRACE - time.monotonic()
            if left <= 0:
                break
            info = signal.sigtimedwait(WATCHED, left)
            signum = info.si_signo if info is not None else None
        if signum == signal.SIGHUP:
            # Also sent when only the runner's thread that started the keeper ends (a game's
            # thread): the runner is gone only once the keeper has another parent.
            if os.getppid() != runner:
                gone_at = gone_at or time.monotonic()
        elif signum in STOPS:
            break
    end_tree()                              # what the bot left running goes with it
    code = os.waitstatus_to_exitcode(status) if status is not None else -signal.SIGKILL
    if code < 0:                            # ended by a signal: the keeper too, by the same one
        try:
            signal.signal(-code, signal.SIG_DFL)    # (SIGKILL has no handler to reset)
        except (OSError, ValueError):
            pass
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {-code})
        os.kill(me, -code)
    os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
