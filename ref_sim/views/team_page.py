"""A tournament's page for one team (``team-NAME.html`` beside the crosstable): what an instructor
sends a team about its bot.

Its games with their results, each linked to its replay and its log; every fault (a time-out, a
bad move, a crash or a kill) with the words of :func:`ref_sim.views.replay.verdict` (who ran out
of time and how late, the bad line read, the runner's hints) and the end of the bot's log in
that game; the CPU time and peak memory each game's record holds (``usage``); its move times
against the limit.  Static HTML in the replay page's styles, every text from a game escaped.
:mod:`ref_sim.views.crosstable` writes these pages and links them; docs/tournament.md says what
they show.
"""

from __future__ import annotations

import os
import re
import stat
from html import escape
from pathlib import Path
from urllib.parse import quote

from ref_sim.referees import codingame_referee
from ref_sim.referees.file_referee import INVALID_MOVE, OUT_OF_ORDER, TIME_OUT
from ref_sim.series.output import machine_load
from ref_sim.series.output.event_record import EventSettings, read_event
from ref_sim.series.output.game_line import GameLine
from ref_sim.views import replay
from ref_sim.views.replay_page import STYLE, coloured

#: The verdicts that are a team's fault when it lost by them.
FAULTS = (TIME_OUT, INVALID_MOVE, OUT_OF_ORDER, codingame_referee.CRASHED)
#: A log's end shown under a fault: this many lines of at most this many characters, read from
#: at most the last TAIL_BYTES of the file (a bot's log is trimmed, but read bounded anyway).
TAIL_LINES, TAIL_WIDTH, TAIL_BYTES = 15, 200, 8192


def team_file(settings: EventSettings, name: str) -> str:
    """The page's file name: ``team-Otter.html``; a name that is no safe file name, or whose
    safe form another bot shares, also gets its number in the list (``team-03-Team_7.html``)."""
    def slug(text):
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("._")[:40] or "bot"
    names = settings.names
    own = slug(name)
    if own == name and [slug(other) for other in names].count(own) == 1:
        return f"team-{own}.html"
    width = max(2, len(str(len(names))))
    return f"team-{names.index(name) + 1:0{width}d}-{own}.html"


def log_name(game: GameLine, name: str) -> str:
    """The bot's log of ``game`` in the tournament's folder (the runners' name for it)."""
    return f"logs/game-{game.game:04d}-{name}.log"


def log_tail(path: Path) -> str | None:
    """The last lines of a log, bounded; None if it is no regular file (gone, or not a file)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - TAIL_BYTES))
            data = handle.read(TAIL_BYTES)
    except OSError:
        return None
    lines = data.decode("utf-8", "replace").splitlines()
    if size > TAIL_BYTES and lines:
        lines = lines[1:]                       # the first may be cut: not shown half
    lines = [line if len(line) <= TAIL_WIDTH else line[:TAIL_WIDTH] + "..." for line in lines]
    return "\n".join(lines[-TAIL_LINES:])


def is_fault(game: GameLine, name: str) -> bool:
    """Whether ``game`` went wrong for ``name``: lost on time, to a bad move or a crash, or its
    program crashed or had to be killed, it could not start (a forfeit, ``cannot_start``), or
    the runner had a hint about it."""
    lost = game.result == "win" and game.winner != name \
        and game.reason in FAULTS           # as the crosstable's tally counts it
    return lost or any(name in (said or {}) for said in (game.notes, game.hints, game.cannot_start))


def _seconds(value: float | None) -> str:
    return "" if value is None else replay.seconds_text(value)


def _usage(game: GameLine, name: str) -> tuple[float | None, float | None]:
    usage = game.usage.get(name) if isinstance(game.usage, dict) else None
    if not isinstance(usage, dict):
        return None, None
    return replay._number(usage.get("cpu_seconds")), replay._number(usage.get("peak_mb"))


def _result(game: GameLine, name: str) -> tuple[str, str]:
    """(text, class) of the game's result for ``name``."""
    if game.result == "tie":
        return "drawn", "draw"
    if game.result != "win":
        return str(game.result or "no result"), "draw"
    won = game.winner == name
    reason = str(game.reason or "")
    if not won and machine_load.marked(game, name):     # the Faults below say why
        reason += " (load: the machine's more than the bot's)"
    return ("won" if won else "lost") + (f": {reason}" if reason else ""), "win" if won else "loss"


def _opponent(game: GameLine, name: str) -> str:
    return next((str(n) for n in game.names if n != name), "?")


def _link(href: str | None, text: str) -> str:
    return f'<a href="{escape(href)}">{escape(text)}</a>' if href else ""


def replay_href(game: GameLine, links: dict) -> str | None:
    """The game's place on its pairing's replay page, if the page exists."""
    link = links.get(tuple(game.pairing)) if isinstance(game.pairing, list) else None
    return f"{quote(link)}#game={game.game}" if link else None


def page(out: Path, settings: EventSettings, games: list[GameLine], name: str, links: dict) -> str:
    """The HTML of ``name``'s page; ``out``: the tournament's folder (its logs are read there),
    ``links``: the replay pages by pairing (:func:`ref_sim.views.crosstable.write_replays`)."""
    # by number, however they came: the running tournament's list holds them as they ended
    own = sorted((g for g in games if name in g.names), key=lambda g: g.game)
    won = sum(g.result == "win" and g.winner == name for g in own)
    lost = sum(g.result == "win" and g.winner != name for g in own)
    drawn = sum(g.result == "tie" for g in own)
    kind = "gauntlet" if settings.gauntlet else "round-robin"
    event = f"a {kind} of {len(settings.bots)} bots"

    rows, faults, all_times, cpu_total, peak = [], [], [], 0.0, None
    for game in own:
        number = game.game
        result, cls = _result(game, name)
        mark = "X" if game.p1 == name else "O" if game.p2 == name else ""
        times = replay.move_times(game, name)
        all_times += times
        slowest = max(times, default=None)
        cpu, mb = _usage(game, name)
        cpu_total += cpu or 0.0
        peak = mb if mb is not None and (peak is None or mb > peak) else peak
        href = replay_href(game, links)
        log = log_name(game, name)
        has_log = (out / log).is_file()
        fault = is_fault(game, name)
        rows.append(
            f'<tr data-game="{number}"{" class=fault" if fault else ""}>'
            f"<td>{_link(href, str(number)) or number}</td>"
            f"<td>{escape(_opponent(game, name))}</td><td>{mark}</td>"
            f'<td><span class="outcome {cls}">{escape(result)}</span></td>'
            f"<td>{len(times)}</td>"
            f"<td>{escape(_seconds(slowest[0]) if slowest else '')}"
            f"{escape(' of ' + _seconds(slowest[1])) if slowest and slowest[1] else ''}</td>"
            f"<td>{'' if cpu is None else f'{cpu:.2f} s'}</td>"
            f"<td>{'' if mb is None else f'{mb:.0f} MB'}</td>"
            f"<td>{_link(quote(log), 'log') if has_log else ''}</td></tr>")
        if fault:
            lines = "".join(f"<li>{escape(text)}</li>" for text in replay.verdict(game))
            tail = log_tail(out / log)
            excerpt = (f'<details open><summary>the end of {escape(name)}\'s log '
                       f"({_link(quote(log), log)})</summary><pre>{escape(tail)}</pre></details>"
                       if tail else "")
            faults.append(
                f'<li data-game="{number}"><b>Game {number}</b> against '
                f"{escape(_opponent(game, name))}: {escape(result)} "
                f"{_link(href, 'replay')}<ul>{lines}</ul>{excerpt}</li>")

    timed = [(s, limit) for s, limit in all_times if limit]
    if all_times:
        worst = max(all_times)
        share = max((s / limit for s, limit in timed), default=None)
        near = sum(s > 0.8 * limit for s, limit in timed)
        times_text = (f"{len(all_times)} moves timed; the slowest {_seconds(worst[0])}"
                      + (f" of {_seconds(worst[1])}" if worst[1] else "")
                      + (f"; at most {100 * share:.0f} % of a move's limit; {near} over 80 % of it"
                         if share is not None else "") + ".")
    else:
        times_text = "No timed moves."
    usage_text = (f"CPU {cpu_total:.1f} s over its games; peak memory {peak:.0f} MB."
                  if peak is not None or cpu_total else
                  "CPU and memory: not recorded for these games.")
    fault_section = (f'<ul class="faults">{"".join(faults)}</ul>' if faults else
                     "<p>No faults: no time-out, bad move, crash or hang.</p>")
    title = f"{name} in {event}"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(name)} &middot; team page</title>
<style>{coloured(STYLE)}
main.team {{ display: block; max-width: 1000px; }}
main.team section {{ margin-bottom: 12px; }}
ul.faults > li {{ margin-bottom: 8px; }}
ul.faults pre {{ background: #f5f6f8; padding: 6px; font-size: 12px; white-space: pre-wrap;
                 overflow-wrap: anywhere; margin: 4px 0; }}
tr.fault {{ background: #fff6e0; }}
#games-table tbody tr {{ cursor: default; }}
</style>
</head>
<body>
<header><nav style="font-size: 12px; margin-bottom: 2px"><a href="crosstable.html"
id="crosstable-link">&larr; the crosstable</a></nav>
<h1 id="title">{escape(title)}</h1>
<div class="source">{len(own)} games: {won} won, {lost} lost, {drawn} drawn</div></header>
<main class="team">
<section id="faults"><h2>Faults</h2>{fault_section}
<p class="small">Each game that went wrong for {escape(name)}: why, in the referee's and the
runner's words, and the end of its log in that game (its whole log is linked).</p></section>
<section id="resources"><h2>Time and memory</h2>
<p id="times">{escape(times_text)}</p><p id="usage">{escape(usage_text)}</p>
<p class="small">Move times are the referee's measure, from the bot's turn to the move seen;
CPU and memory are its program's (and its children's) in each game.</p></section>
<section id="games"><h2>Games</h2>
<table id="games-table"><thead><tr><th>#</th><th>against</th><th>as</th><th>result</th>
<th>moves</th><th>slowest move</th><th>CPU</th><th>memory</th><th>log</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table></section>
</main>
</body>
</html>
"""


def write_one(out, name: str) -> Path:
    """``uttt-replay TOURNAMENT --team NAME``: write bot ``name``'s page into the tournament's
    folder ``out`` from its tournament.json and games.jsonl, linking the replay pages there;
    its path.  ValueError (one line) when ``out`` is no tournament or no bot is so named."""
    from ref_sim.series.output import records, strict_json
    out = Path(out)
    if out.name in ("games.jsonl", "tournament.json"):
        out = out.parent
    try:
        settings = read_event(out / "tournament.json")
        games, _ = records.read_games(records.games_source(out))
    except strict_json.RecordError as error:
        raise ValueError(f"--team needs a tournament's folder: {error}") from None
    names = settings.names
    if name not in names:
        raise ValueError(f"--team {name!r}: no such bot in {out / 'tournament.json'} "
                         f"(its bots: {', '.join(names)})")
    links = {}
    for pairing in map(tuple, settings.pairings):
        link = f"{replay.REPLAYS}/{replay.replay_file(settings, pairing)}"
        if (out / link).is_file():
            links[pairing] = link
    return out / write_pages(out, settings, games, links, [name])[name]


def write_pages(out: Path, settings: EventSettings, games: list[GameLine], links: dict, names=None,
                write=None) -> dict[str, str]:
    """Write the team pages of ``names`` (default: every bot) into ``out`` with ``write(path,
    text)``; returns ``{name: file name}`` of every bot (the crosstable links them all)."""
    files = {bot.name: team_file(settings, bot.name) for bot in settings.bots}
    for name in files if names is None else names:
        text = page(out, settings, games, name, links)
        if write is None:
            (out / files[name]).write_text(text, encoding="utf-8")
        else:
            write(out / files[name], text)
    return files

