"""A tournament's pages: a crosstable beside the rating table, and a replay page per pairing.

:func:`write_pages` writes ``crosstable.html`` and ``replays/NN-A-vs-MM-B.html`` into the
tournament's ``--out`` at the end of every run, a resumed or stopped one too. One replay page per
pairing, not one for the event: a pairing is the head-to-head series a student asks about, and
its page stays small however many teams there are. The crosstable is static HTML, every name and
spec escaped. What the pages show: docs/tournament.md.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from html import escape
from pathlib import Path
from urllib.parse import quote

from ref_sim.series.stats import match_stats, ratings

from ref_sim.series.output import machine_load
from ref_sim.series.output.event_record import EventSettings
from ref_sim.series.output.game_line import GameLine
from ref_sim.views import board_page, replay, team_page
from ref_sim.views.replay_page import asset
from ref_sim.series.output.report import tally

PAGE = "crosstable.html"
BOARD = "board.html"


@dataclass(frozen=True)
class Row:
    """One bot's line of the rating table."""
    rank: int | None            # None: no rated game yet
    name: str
    spec: str
    elo: float
    error: float                # nan for the anchor (fixed) or a bot without games
    record: ratings.Record
    timeouts: int
    crashes: int
    bad_moves: int              # invalid and out-of-order moves
    load_timeouts: int = 0      # of its time-outs, those marked the machine's (machine_load)


def table_rows(settings: EventSettings, games: list[GameLine], anchor: str | None = None):
    """The rating table's rows (best first), the fit, and each pairing's record keyed
    ``(agent 1, agent 2)`` by name, as :func:`ref_sim.series.event.report_lines` computes them."""
    names = settings.names
    specs = {bot.name: bot.spec for bot in settings.bots}
    rated = [(g.agents[0]["name"], g.agents[1]["name"], g.score) for g in games if g.score is not None]
    pairs = ratings.pairwise(rated)
    fit = ratings.fit(names, pairs, anchor=anchor)
    totals = ratings.standings(names, pairs)
    rows = []
    for rank, name in enumerate(fit.ranked(), 1):
        side = tally([g for g in games if name in g.names], [name])[name]
        rows.append(Row(rank if not math.isnan(fit.elo[name]) else None, name, specs[name],
                        fit.elo[name], math.nan if name == fit.anchor else fit.error[name],
                        totals[name], side.reasons["time-outs"], side.reasons["crashes"],
                        side.reasons["invalid moves"] + side.reasons["out-of-order"],
                        sum(bot == name for _, bot, _ in machine_load.machine_games(games))))
    return rows, fit, pairs


def rounds_played(settings: EventSettings, games: list[GameLine]) -> float:
    """The rated games in rounds (each pairing plays two games a round): what the error bars
    stand on."""
    per_round = 2 * len(settings.pairings)
    return sum(g.score is not None for g in games) / per_round if per_round else 0.0


def separation(settings: EventSettings, fit: ratings.Ratings, games: list[GameLine]) -> str:
    """Whether the ranking separates the bots: each pair of neighbours, and the rounds that
    might separate those whose bars overlap (:func:`ref_sim.series.stats.ratings.separation_lines`)."""
    lines = ratings.separation_lines(fit, rounds_played(settings, games))
    if not lines:
        return ""
    items = "".join(f"<li>{escape(line.strip())}</li>" for line in lines[1:])
    warn = " warning" if any("overlap" in line for line in lines[1:]) else ""
    return f'<div class="note{warn}" id="separation"><p>{escape(lines[0])}</p><ul>{items}</ul></div>'


def load_section(games: list[GameLine], links: dict) -> str:
    """Which results the machine's load may have decided, each game linked to its replay."""
    lines = machine_load.load_lines(games)
    if not lines:
        return ""
    items = []
    for game, name, measured in machine_load.machine_games(games):
        href = team_page.replay_href(game, links)
        items.append(f'<li data-game="{game.game}">game {game.game}: '
                     f"{escape(machine_load.describe(name, measured))}"
                     + (f' <a href="{escape(href)}">replay</a>' if href else "") + "</li>")
    rest = "".join(f"<p>{escape(line.strip())}</p>" for line in lines[1:]
                   if not line.strip().startswith("game "))
    return (f'<section id="load"><h2>Load</h2><p>{escape(lines[0].removeprefix("Load: "))}</p><ul>{"".join(items)}</ul>'
            f'{rest}<p class="note">A time-out is the machine\'s when the bot, over the turn it '
            "lost, had less than half a core and waited, ready to run, on a run queue for more "
            "than half of it (Linux's /proc/PID/schedstat; docs/tournament.md). A bot that sleeps "
            "or blocks waits for no core: its time-outs stay its own.</p></section>")


def record_of(pairs: dict, row: str, column: str) -> ratings.Record | None:
    """The row's record against the column, or None if they never finished a game."""
    if (row, column) in pairs:
        return pairs[row, column]
    if (column, row) in pairs:
        return pairs[column, row].reversed()
    return None


def _write(path: Path, text: str) -> None:
    """Write through a temporary file: a page open in a browser is never half written."""
    part = path.with_name(path.name + ".part")
    try:
        part.write_text(text, encoding="utf-8")
        os.replace(part, path)
    except OSError:
        part.unlink(missing_ok=True)        # a full disk keeps no half page
        raise


def write_replays(out: Path, settings: EventSettings, games: list[GameLine], only=None) -> dict[tuple, str]:
    """Each pairing's replay page in ``out/replays`` (``only``: just these pairings', the
    others' pages kept as they are); returns ``{(i, j): relative path}`` of the pairings that
    have one.  Raises :class:`ref_sim.views.replay.ReplayError` or OSError."""
    pairing_of = {g.game: tuple(g.pairing) for g in games if isinstance(g.pairing, list)}
    if not pairing_of:
        return {}
    data = replay.read_run(out)      # the run's games as the page reads them, logs included
    folder = out / replay.REPLAYS
    folder.mkdir(exist_ok=True)
    # Each position links to the analysis board beside the pages, as a series' replay does.
    board_page.write_page(folder / BOARD)
    links = {}
    names = settings.names
    for pairing in map(tuple, settings.pairings):
        name = replay.replay_file(settings, pairing)
        if only is not None and pairing not in only:
            if (folder / name).is_file():
                links[pairing] = f"{replay.REPLAYS}/{name}"
            continue
        own = [g for g in data["games"] if pairing_of.get(g["game"]) == pairing]
        if not own:
            continue
        page = {**data, "agents": [names[pairing[0]], names[pairing[1]]], "games": own,
                "tournament": None, "board_page": BOARD,
                "source": f"{data['source']} ({len(own)} of the tournament's games)"}
        _write(folder / name, replay_page_text(page))
        links[pairing] = f"{replay.REPLAYS}/{name}"
    return links


#: The way back from a pairing's replay page, put at the top of the page's header.
BACK_LINK = ('<nav style="font-size: 12px; margin-bottom: 2px"><a href="../crosstable.html" '
             'id="crosstable-link">&larr; the crosstable</a></nav>')


def replay_page_text(data: dict) -> str:
    """The replay page of :mod:`ref_sim.views.replay` for ``data``, with a link back to the
    crosstable (none if its header ever changes shape: the page works without it)."""
    from ref_sim.views.replay_page import page
    return page(replay.embedded_json(data)).replace("<header>", "<header>" + BACK_LINK, 1)


def write_pages(out: Path, settings: EventSettings, games: list[GameLine], anchor: str | None = None,
                report: list[str] | None = None, only=None) -> list[str]:
    """Write the replay pages and the crosstable into ``out``; returns the line that says where
    (or why not: a page that cannot be written never stops the tournament's report).  During
    a run, ``only`` names the pairings whose replay pages are (re)written: those just finished."""
    try:
        links = write_replays(out, settings, games, only)
    except (replay.ReplayError, OSError) as error:
        links, problem = {}, f"replay pages not written: {error}"
    else:
        problem = None
    # Each team's page, beside the crosstable: during a run only the teams that just played.
    names = settings.names
    teams = None if only is None else {names[i] for pairing in only for i in pairing}
    try:
        team_files = team_page.write_pages(out, settings, games, links, teams, write=_write)
    except OSError as error:
        team_files, problem = {}, problem or f"team pages not written: {error.strerror or error}"
    except (ValueError, TypeError, KeyError, AttributeError) as error:   # a line not the runner's
        team_files, problem = {}, problem or f"team pages not written: {type(error).__name__}: {error}"
    try:
        _write(out / PAGE, page(settings, games, links, anchor, report, team_files))
    except OSError as error:
        return [f"Crosstable not written: {out / PAGE}: {error.strerror or error}"]
    where = f"Crosstable: {out / PAGE}"
    if problem:
        return [where, problem]
    return [where + (f"  replays: {out / replay.REPLAYS} ({len(links)} page{'s' * (len(links) != 1)}, "
                     "one per pairing)" if links else "")]


# -- the page ---------------------------------------------------------------------------

STYLE = "\n" + asset("crosstable.css")


def _elo(value: float) -> str:
    return "-" if math.isnan(value) else match_stats.format_elo(value)


def _name(name: str) -> str:
    """A bot's name in a table: cut short with an ellipsis past 15 characters, whole in its
    tooltip."""
    return f'<span class=name title="{escape(name)}">{escape(name)}</span>'


def _team_link(name: str, page: str | None) -> str:
    """A bot's name linked to its team page, where it has one."""
    if not page:
        return _name(name)
    return (f'<a class=team href="{escape(quote(page))}" title="{escape(name)}: its games, '
            f'faults, time and memory">{_name(name)}</a>')


def _count_cell(count: int, load: int = 0) -> str:
    if load:        # some of them the machine's: said in the cell, explained in its title
        return (f'<td class="fault" title="{load} of them when the machine kept the bot waiting '
                f'for a core (see Load)">{count} <small>({load} load)</small></td>')
    return f'<td class="{"fault" if count else "zero"}">{count}</td>'


def _shade(points: float, played: int) -> str:
    """A cell's background: green as the row scored more, red as it scored less."""
    if not played:
        return ""
    share = points / played - 0.5
    colour = "23, 140, 70" if share > 0 else "200, 40, 40"
    return f' style="background: rgba({colour}, {0.06 + 0.5 * abs(share):.2f})"'


def _points(value: float) -> str:
    return f"{value:g}"


def rating_table(rows: list[Row], fit: ratings.Ratings, teams: dict | None = None) -> str:
    head = ("<tr><th>Rank</th><th class=bot>Bot</th><th>Elo</th><th>&plusmn;</th>"
            "<th>Games</th><th>Score</th><th>Draws</th><th>Time-outs</th><th>Crashes</th>"
            "<th title='invalid and out-of-order moves'>Invalid</th></tr>")
    body = []
    for row in rows:
        games = row.record.games
        error = ("anchor" if row.name == fit.anchor else
                 "-" if math.isnan(row.error) else match_stats.format_elo(row.error, sign=False))
        body.append(
            f'<tr data-bot="{escape(row.name)}"><td>{row.rank or "-"}</td>'
            f'<td class=bot>{_team_link(row.name, (teams or {}).get(row.name))}</td>'
            f'<td>{_elo(row.elo)}</td><td>{error}</td>'
            f"<td>{games}</td>"
            f"<td>{f'{100 * row.record.score:.1f}%' if games else '-'}</td>"
            f"<td>{f'{100 * row.record.draws / games:.1f}%' if games else '-'}</td>"
            f"{_count_cell(row.timeouts, row.load_timeouts)}{_count_cell(row.crashes)}"
            f"{_count_cell(row.bad_moves)}</tr>")
    return (f"<table><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>")


def bot_table(settings: EventSettings) -> str:
    rows = "".join(f"<tr><td>{number}</td><td class=bot>{escape(bot.name)}</td>"
                   f"<td class=spec>{escape(bot.spec)}</td></tr>"
                   for number, bot in enumerate(settings.bots, 1))
    return ("<table><thead><tr><th title='its place in the list, the number in its name'>#</th>"
            "<th class=bot>Bot</th><th class=bot>Spec</th></tr>"
            f"</thead><tbody>{rows}</tbody></table>")


def cross_table(settings: EventSettings, rows: list[Row], pairs: dict, links: dict) -> str:
    names = settings.names
    index = {name: i for i, name in enumerate(names)}
    pairings = {tuple(p) for p in settings.pairings}
    # Bots are numbered one way on the page: their place in the list, which their names carry
    # (Walrus2) and the bot table shows; the rows are in the order of the rating table's Rank.
    head = ['<tr><th class=bot>Bot</th>']
    for row in rows:
        head.append(f'<th class=col title="{escape(row.name)}">'
                    f"<span>{escape(row.name)}</span></th>")
    head.append("<th>Points</th></tr>")
    body = []
    for row in rows:
        cells = [f'<tr data-bot="{escape(row.name)}"><th class=bot>{_name(row.name)}</th>']
        for column in rows:
            i, j = index[row.name], index[column.name]
            pairing = (i, j) if (i, j) in pairings else (j, i) if (j, i) in pairings else None
            if i == j:
                cells.append('<td class="self"></td>')
                continue
            if pairing is None:
                cells.append('<td class="none" title="not paired"></td>')
                continue
            record = record_of(pairs, row.name, column.name)
            link = links.get(pairing)
            if record is None or not record.games:
                cells.append(f'<td class="unplayed" data-pairing="{pairing[0]}-{pairing[1]}">'
                             '<span class=unplayed title="not played yet">&ndash;</span></td>')
                continue
            title = (f"{row.name} against {column.name}: {record.wins} won, {record.losses} "
                     f"lost, {record.draws} drawn ({_points(record.points)} of "
                     f"{record.games})" + ("; click for the games" if link else ""))
            inner = (f"<b>{_points(record.points)}/{record.games}</b>"
                     f"<small>{record.wins}-{record.losses}-{record.draws}</small>")
            if link:
                inner = f'<a href="{escape(quote(link))}">{inner}</a>'
            cells.append(f'<td class="played" data-pairing="{pairing[0]}-{pairing[1]}" '
                         f'title="{escape(title)}"{_shade(record.points, record.games)}>'
                         f"{inner}</td>")
        total = row.record
        cells.append(f'<td class="total">{_points(total.points)}/{total.games}</td></tr>')
        body.append("".join(cells))
    return (f'<div class="scroll"><table><thead>{"".join(head)}</thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def _settings_line(settings: EventSettings, played: int) -> str:
    total = 2 * len(settings.pairings) * settings.rounds
    if settings.protocol == "stdio":
        timing = f"CodinGame stdin/stdout, {settings.turn_ms:g} ms per turn"
        pairing = "each program first once"
    else:
        timing = f"the referee's files, {settings.time_limit:g} s per move"
        pairing = "one opening twice, colours swapped"
    rounds = settings.rounds
    state = ("complete" if played >= total else
             "stopped early or under way: --resume --out continues it")
    return (f"{played} of {total} games played ({state}) &middot; {rounds} "
            f"round{'s' * (rounds != 1)} (each pairing {pairing}) &middot; "
            f"{escape(timing)} &middot; seed {settings.seed} &middot; written "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


def fault_games(games: list[GameLine], name: str, links: dict) -> str:
    """The games that went wrong for ``name``, each with its cause and links to its replay and
    its log (``<ul>``; empty if none)."""
    items = []
    for game in games:
        if name not in game.names or not team_page.is_fault(game, name):
            continue
        number = game.game
        lines = replay.verdict(game)
        cause = lines[0] if lines else str(game.reason or "")
        if machine_load.marked(game, name):
            cause += " [load: the machine's time-out more than the bot's]"
        href = team_page.replay_href(game, links)
        log = team_page.log_name(game, name)
        items.append(f'<li data-game="{number}">game {number}: {escape(cause)}'
                     + (f' <a href="{escape(href)}">replay</a>' if href else "")
                     + f' <a href="{escape(quote(log))}">log</a></li>')
    return f'<ul class="games">{"".join(items)}</ul>' if items else ""


def page(settings: EventSettings, games: list[GameLine], links: dict, anchor: str | None = None,
         report: list[str] | None = None, teams: dict | None = None) -> str:
    """The crosstable page's HTML (see the module docstring); ``teams``: each bot's team page
    (:mod:`ref_sim.views.team_page`) by name, linked from its row and its faults."""
    teams = teams or {}
    rows, fit, pairs = table_rows(settings, games, anchor)
    kind = "Gauntlet" if settings.gauntlet else "Round-robin"
    title = f"{kind} of {len(settings.bots)} bots"
    where = (f"{fit.anchor} at 0" if fit.anchor else "the mean at 0")
    played = {row.name for row in rows if row.record.games}
    groups = [group for group in fit.groups if played & set(group)]
    split = ""
    if len(groups) > 1:
        split = ('<p class="note warning">These bots fall into groups that never met, even '
                 "through others; Elo compares within a group only: "
                 + "; ".join(escape(", ".join(group)) for group in groups) + ".</p>")
    faults = []
    for row in rows:
        side = tally([g for g in games if row.name in g.names], [row.name])[row.name]
        if side.reasons:
            own = teams.get(row.name)
            faults.append(f"<li>{escape(side.line())}"
                          + (f' (<a href="{escape(quote(own))}">its page</a>)' if own else "")
                          + f"{fault_games(games, row.name, links)}</li>")
    fault_section = (f'<section id="faults"><h2>Faults</h2><ul>{"".join(faults)}</ul>'
                     '<p class="note">Each bot\'s games lost to time-outs, invalid or '
                     "out-of-order moves, and its crashes and hangs, each game with why, its "
                     "replay and the bot's log in it (logs/game-NNNN-BOT.log).</p></section>"
                     if faults else "")
    text = ""
    if report:
        text = (f'<details id="report"><summary>The text report (as the tournament printed '
                f'it)</summary><pre>{escape(chr(10).join(report))}</pre></details>')
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} &middot; crosstable</title>
<style>{STYLE}</style>
</head>
<body>
<header><h1>{escape(title)}: ratings and crosstable</h1>
<div class="meta" id="settings">{_settings_line(settings, len(games))}</div></header>
<main>
<section id="ratings"><h2>Ratings</h2>
{rating_table(rows, fit, teams)}
<p class="note">Elo: maximum likelihood over all games (draws half a win), {escape(where)};
&plusmn;: its 95&nbsp;% error bar. Score and draws: shares of the bot's games. Time-outs,
invalid moves: games lost that way; crashes: games in which the bot's program crashed.</p>
{split}
{separation(settings, fit, games)}
</section>
<section id="crosstable"><h2>Crosstable</h2>
{cross_table(settings, rows, pairs, links)}
<p class="note">Each cell is the row's score against the column: points of games played
(a draw is half a point), then wins-losses-draws; green where the row scored more, red where
it scored less. Click a cell for the replay page of those games (one page per pairing, in
replays/). Bots in the order of their ratings; &ndash;: not played yet.</p>
</section>
{fault_section}
{load_section(games, links)}
<section id="bots"><h2>Bots</h2>{bot_table(settings)}
<p class="note">Each bot's spec as the tournament was given it, in the order given: bot N is
agent 1 of its pairings with the bots after it.</p></section>
</main>
{text}
</body>
</html>
"""
