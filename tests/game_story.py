"""What a test says about a game that did not end as it should: its records line (games.jsonl)
told as one message, since pytest cuts a long repr before the reason and the moves' times."""

from __future__ import annotations

from pathlib import Path

#: Lines of each agent's log a story ends with.
LOG_TAIL = 12


def story(game: dict, logs: Path | None = None) -> str:
    """The game's end (reason, winner, loser, notes, the line judged bad), its last moves (player,
    cell, seconds on the referee's clock, the agent's own seconds) and, given the series' ``logs``
    folder, the tail of each agent's log."""
    last = [(move["player"], move.get("board"), move.get("spot"), move.get("seconds"), move.get("agent_seconds"))
            for move in game["moves"][-4:]]
    lines = [f"game {game['game']}: {game['reason']!r}, winner {game.get('winner')}, loser {game.get('loser')}, "
             f"notes {game.get('notes')}, bad line {game.get('bad_line')!r}; {len(game['moves'])} moves, the last "
             f"(player, board, spot, seconds, agent's seconds): {last}"]
    for agent in game["agents"] if logs is not None else ():
        log = logs / f"game-{game['game']:04d}-{agent['name']}.log"
        tail = log.read_text(errors="replace").splitlines()[-LOG_TAIL:] if log.exists() else ["(no log)"]
        lines += [f"-- {log.name}:", *tail]
    return "\n".join(lines)
