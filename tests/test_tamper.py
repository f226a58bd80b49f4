"""Under --isolate no bot can touch its opponent's turn: each plays in its own view of the
referee's directory (ref_sim.referees.file_shell._ViewsShell), so a bot that deletes the
opponent's .go, or forges a bad line in the opponent's name at its turn, changes only its own
view. Without --isolate the directory is shared, as under the real referee, and the tampering
works: that is the control that shows the tamperers do what they say."""

import json
import sys
import textwrap

import pytest

from ref_sim import match

pytestmark = pytest.mark.e2e

QUICK = ["--startup-wait", "0.5", "--exit-wait", "1.3"]

#: A random player (the built-in's code, in a thread) that tampers with the directory at each of
#: the opponent's turns, and logs each time it did.
TAMPERER = """\
    import os, sys, threading, time
    from ref_sim.bots.random_agent import RandomAgent

    how, name, directory = sys.argv[1:4]
    threading.Thread(target=RandomAgent(name, directory, 1).run, daemon=True).start()
    print("ready", flush=True)
    done = set()
    while not os.path.exists(os.path.join(directory, "end_game")):
        for entry in os.listdir(directory):
            if not entry.endswith(".go") or entry in (name + ".go", *done):
                continue
            path = os.path.join(directory, entry)
            try:
                if how == "delete":
                    os.unlink(path)
                else:
                    with open(os.path.join(directory, "move_file"), "w") as handle:
                        handle.write(entry[:-3] + " 9 9\\n")
                    done.add(entry)     # once a turn: the .go stays there all turn
                print("tampered with", entry, flush=True)
            except FileNotFoundError:
                pass
        if how != "delete" and not any(e.endswith(".go") and e != name + ".go" for e in os.listdir(directory)):
            done.clear()
        time.sleep(0.002)
    """


def games_of(out):
    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("how", ["delete", "forge"])
@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "shared"])
def test_a_tamperer_cannot_make_its_opponent_lose_under_isolate(tmp_path, how, isolate):
    bot = tmp_path / "tamper.py"
    bot.write_text(textwrap.dedent(TAMPERER))
    out = tmp_path / "out"
    code = match.main([*QUICK, f"name=Tamper:{sys.executable} {bot} {how} {{name}} {{dir}}", "random",
                       "--games", "2", "--time-limit", "0.5", "--seed", "3", "--out", str(out), "-q",
                       *(["--isolate"] if isolate else [])])
    assert code == 0
    games = games_of(out)
    assert len(games) == 2
    tampered = sum((out / "logs" / f"game-{game['game']:04d}-Tamper.log").read_text().count("tampered with")
                   for game in games)
    assert tampered > 0, "the tamperer never found its opponent's turn"
    victim_lost = [game["reason"] for game in games
                   if game["loser"] not in (None, "Tamper") and game["reason"] in ("Time out!", "Invalid move!")]
    if isolate:
        assert victim_lost == [], f"tampering decided a game under --isolate: {victim_lost}"
    else:       # the shared directory, as the real referee has it: the tampering works
        assert victim_lost, "the control: in a shared directory the tamperer wins by tampering"


def test_out_of_turn_lines_keep_the_real_referees_verdicts_in_views(tmp_path):
    """The eager built-in answers its opponent's line the moment it appears, out of turn: in the
    shared directory the referee reads that line at the opponent's tick (``Out-of-order move!``),
    and in the views too, since the mover's line is copied into the others' as it is written and
    a player's own line out of turn is seen. Were it not, the eager line would never be read and
    every game would end ``Time out!`` (as it may in either directory when the eager bot is slower
    than the referee's tick on a loaded machine)."""
    out = tmp_path / "out"
    assert match.main([*QUICK, "eager", "random", "--games", "2", "--time-limit", "0.5", "--seed", "3",
                       "--out", str(out), "-q", "--isolate"]) == 0
    ends = [(game["loser"], game["reason"]) for game in games_of(out)]
    assert {loser for loser, _ in ends} == {"Eager1"}, ends
    assert ("Eager1", "Out-of-order move!") in ends, ends
