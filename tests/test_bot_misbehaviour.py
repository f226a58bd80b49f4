"""Nothing a student's choose() does can lose the game (agent/bot.py, agent/bot_worker.py).

Through the real series runners, and every game still ends on the board (no time-out, crash or
invalid move on either side):

- under CodinGame's protocol (``ref_sim.stdio``), one short series per misbehaviour: the bot
  misbehaves on its first turns and on every third one after, and plays a random legal move
  otherwise;
- under the file protocol (``ref_sim.match``), one series in which the bot misbehaves on every
  turn, in each way in turn. What choose() does is met in its worker process whatever the protocol
  (agent/bot_worker.py); what the file protocol adds is that the agent's side of the files
  outlives it, every kind of it, one after another.

The bot's log shows that each misbehaviour did happen, so nothing passes by doing nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ref_sim.referees.file_referee import WIN_REASON
from ref_sim.referees.codingame_shell import COUNT_WIN, LINE_WIN

from game_story import story

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent

#: A bot on our API that defines misbehaviours (``{misbehaviours}``: MISBEHAVIOURS' bodies as
#: functions named after their case), calls one when ``{pick}`` says, and plays a random legal move.
BOT = '''\
import os, random, re, signal, sys, time

from agent.bot import run


{misbehaviours}

def choose(position, seconds):
{pick}
    return random.choice(position.moves())


if __name__ == "__main__":
    run(choose)
'''

#: CodinGame's series: its first turns (CodinGame's longer first one too) and every third one after.
NOW_AND_THEN = "    if position.ply < 6 or position.ply // 2 % 3 == 0:\n        {case}(position, seconds)"
#: The file protocol's series: on every turn the next one of the list, by the bot's own turn count,
#: which a restarted worker process does not reset.
EACH_IN_TURN = "    [{cases}][position.ply // 2 % {count}](position, seconds)"


def bot(cases: list[str], pick: str) -> str:
    """The source of :data:`BOT` with ``cases``' misbehaviours."""
    functions = "\n\n".join(f"def {case}(position, seconds):\n{MISBEHAVIOURS[case][0]}\n" for case in cases)
    return BOT.format(misbehaviours=functions, pick=pick)


#: name: (the body of its function, a text the bot's log shows when it misbehaved)
MISBEHAVIOURS = {
    "sys_exit": ("    sys.exit(3)", "called sys.exit(3)"),
    "keyboard_interrupt": ("    raise KeyboardInterrupt", "raised KeyboardInterrupt"),
    "system_exit_raised": ("    raise SystemExit('bye')", "called sys.exit('bye')"),
    "sigint_to_itself": ("    os.kill(os.getpid(), signal.SIGINT)\n    time.sleep(seconds)",
                         "raised KeyboardInterrupt"),
    "unprintable_error": ("    class Odd(Exception):\n        def __str__(self):\n            raise RuntimeError\n"
                          "    raise Odd()", "raised Odd"),
    "gil_power": ("    7 ** (4 * 10 ** 7)", "still thinking after"),
    "gil_regex": ("    re.match(r'(a+)+$', 'a' * 64 + 'b')", "still thinking after"),
    "never_returns": ("    while True:\n        time.sleep(1)", "still thinking after"),
    "prints": ("    print('4 4')\n    print('0 0', flush=True)\n    sys.stdout.write('8 8\\n')\n"
               "    os.write(1, b'1 1\\n')\n    print('printed by choose', flush=True)", "printed by choose"),
    "reads_stdin": ("    got = sys.stdin.read() + os.read(0, 4096).decode()\n"
                    "    print('stdin gave choose', repr(got), file=sys.stderr, flush=True)",
                    "stdin gave choose ''"),
    "forks": ("    print('forked', os.fork(), file=sys.stderr, flush=True)", "forked 0"),
    "forks_and_lingers": ("    if os.fork() == 0:\n        time.sleep(600)\n        os._exit(0)\n"
                          "    print('left a child', file=sys.stderr, flush=True)", "left a child"),
    "os_exit": ("    os._exit(0)", "ended without an answer"),
    "kills_itself": ("    os.kill(os.getpid(), signal.SIGKILL)", "ended without an answer"),
}

BOARD_ENDS = {"match": {WIN_REASON, "tie"}, "stdio": {LINE_WIN, COUNT_WIN, "tie"}}


def series(tmp_path: Path, runner: str, *argv: str) -> tuple[list[dict], str]:
    """The games of one series, and every log of it."""
    out = tmp_path / runner
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-m", f"ref_sim.{runner}", *argv, "--out", str(out), "-q"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:] + result.stdout[-3000:]
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    logs = "\n".join(path.read_text(encoding="utf-8", errors="replace")
                     for path in sorted((out / "logs").glob("*.log")))
    return games, logs


#: Left out of the file protocol's series: a C call holding the GIL is met as never_returns is (the
#: worker is killed at the cutoff, with no Python-level check), and each such turn would hold a core
#: for its whole second. The stdio cases show them.
HOLD_A_CORE = {"gil_power", "gil_regex"}


def assert_every_game_ends_on_the_board(games: list[dict], runner: str) -> None:
    assert len(games) == 2
    for game in games:
        assert game["result"] in ("win", "tie") and game["reason"] in BOARD_ENDS[runner], story(game)
        assert not game["notes"], game["notes"]  # no crash, no kill, no late exit


@pytest.mark.parametrize("case", sorted(MISBEHAVIOURS))
def test_no_misbehaviour_of_choose_loses_a_codingame_game(tmp_path, case):
    (tmp_path / "my_bot.py").write_text(bot([case], NOW_AND_THEN.format(case=case)), encoding="utf-8")
    # 300 ms turns rather than 100, the referee's grace for a process the machine did not run in
    # time, and the bot keeps half the turn back (--margin-ms 150): the margins, not choose(), would
    # decide a loaded machine's games. A GIL-holding choose() lost one on time beside the parallel
    # suite with 300 ms of grace and the default 30 ms margin: its worker is killed at the cutoff
    # and the fallback move must still reach the referee. Only a choose() that stalls waits its 150 ms.
    games, logs = series(tmp_path, "stdio", f"{sys.executable} my_bot.py --protocol codingame --seed {{seed}} "
                         "--turn-ms {turn_ms} --margin-ms 150", "random", "--games", "2", "--seed", "3",
                         "--turn-ms", "300", "--grace-ms", "300")
    assert_every_game_ends_on_the_board(games, "stdio")
    assert MISBEHAVIOURS[case][1] in logs


def test_no_misbehaviour_of_choose_one_after_another_loses_a_file_protocol_game(tmp_path):
    cases = [case for case in sorted(MISBEHAVIOURS) if case not in HOLD_A_CORE]
    pick = EACH_IN_TURN.format(cases=", ".join(cases), count=len(cases))
    (tmp_path / "my_bot.py").write_text(bot(cases, pick), encoding="utf-8")
    # Two seconds a move, of which the bot keeps one back: at 0.5 s and then at 1 s, each with
    # the default 0.2 s margin, the parallel suite on a loaded machine decided a game now and
    # then by Time out!, not by choose(). Only a choose() that stalls waits out its second.
    games, logs = series(tmp_path, "match", f"{sys.executable} my_bot.py {{name}} --dir {{dir}} --time-limit "
                         "{time_limit} --margin 1 --seed {seed}", "random", "--games", "2", "--time-limit", "2",
                         "--seed", "3")
    assert_every_game_ends_on_the_board(games, "match")
    assert [case for case in cases if MISBEHAVIOURS[case][1] not in logs] == []
