"""A replay page for a whole series: one self-contained HTML file (``uttt-replay RUN``).

:func:`read_run` turns a series' ``games.jsonl`` (and, for files written before the runners
recorded the search figures, the search logs in ``logs/``) into the plain data the page embeds;
the page itself is :mod:`ref_sim.views.replay_page`'s, ``--analyse`` is
:mod:`ref_sim.views.analysis`. What the page shows and the command's options: docs/viewing.md;
the data: docs/formats.md.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

from agent.cli_common import OneLineParser, write_output
from ref_sim.series.run import cluster, cluster_address
from agent.options import search_depth, search_nodes, seconds_per_move, whole
from agent.search import PROVEN_SCORE, WIN_SCORE
from ref_sim.views import analysis
from ref_sim.referees import codingame_referee
from ref_sim.series.output import machine_load, records, strict_json, telemetry
from ref_sim.series.output.event_record import EventSettings, read_event
from ref_sim.series.output.game_line import GameLine
from ref_sim.entry_point import entry_point, prog
from ref_sim.referees.file_referee import INVALID_MOVE, OUT_OF_ORDER, TIME_OUT
from ref_sim.views.render import boards_to_play
from ref_sim.views.show import record_line
from ref_sim.rules import DRAW, TIE, WPI, Game, IllegalMoveError

MODULE = "ref_sim.replay"
#: --jobs above this is a typo (each job is a process searching a core).
MAX_JOBS = 1024
FORMAT = 1
#: The search figures a move may carry (games.jsonl's keys), copied as they are.
SEARCH_KEYS = ("depth", "score", "nodes", "nps", "agent_seconds")
MARKS = "XO"
#: A local board or game result as one character of a state (see the module docstring).
RESULT_CHARS = {None: ".", 0: "X", 1: "O", DRAW: "=", TIE: "="}


#: The options that only mean something with --analyse: (option, its dest).
ANALYSIS_ONLY = (("--time-limit", "time"), ("--depth", "depth"), ("--nodes", "nodes"),
                 ("--select", "games"), ("--jobs", "jobs"), ("--cluster", "cluster"),
                 ("--tls", "tls"), ("--fresh", "fresh"))


class ReplayError(ValueError):
    """A run that cannot be shown; the message is one line for the user."""


# -- reading a run -----------------------------------------------------------------------

#: A tournament's replay pages, one per pairing, in this folder of its --out (the crosstable and
#: the team pages link them).
REPLAYS = "replays"


def replay_file(settings: EventSettings, pairing) -> str:
    """The replay page's file name of ``pairing`` ([i, j]), unique by the bot numbers and
    readable by the names: ``02-Seed2-vs-04-Team_7.html``."""
    width = max(2, len(str(len(settings.bots))))
    parts = []
    for index in pairing:
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", settings.bots[index].name).strip("._")
        parts.append(f"{index + 1:0{width}d}-{slug[:32] or 'bot'}")
    return "-vs-".join(parts) + ".html"


def games_file(run) -> Path:
    """The file ``run`` names as every view takes it (:func:`ref_sim.series.output.records.games_source`):
    a series' folder (its games.jsonl), a games.jsonl, or one game's record; ReplayError if none."""
    try:
        return records.games_source(run)
    except strict_json.RecordError as error:
        raise ReplayError(str(error)) from None


def _one_game(path: Path) -> tuple[list[GameLine], list[tuple[int, str]]] | None:
    """The game of ``path`` when it is one game's record (``logs/game-NNNN.json``, or one saved
    by ``python -m ref_sim --record``), game 1 of its own series (:func:`ref_sim.views.show.record_line`),
    as :func:`ref_sim.series.output.records.read_games` gives a series' games (none and why, if it
    is no line); None when it is not one (JSON lines, read as such)."""
    try:
        record = strict_json.read_json(path, "game record")
    except strict_json.RecordError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("moves"), list):
        return None
    try:
        return [GameLine.from_json(record_line(record), f"{path} line 1")], []
    except strict_json.RecordError as error:
        return [], [(1, str(error))]


def read_run(run, warn=None) -> dict:
    """The page's data for the series in ``run`` (docs/formats.md, "The replay page's data").  A line that is not
    a game (not JSON, NaN or ``1e999`` in it, absurd nesting, keys of the wrong type...) is left
    out with one warning line (``warn``, default stderr) naming the file and the line: the page
    shows the other games.  ReplayError when no game is left."""
    path = games_file(run)
    single = None if path.suffix == ".jsonl" else _one_game(path)
    try:
        lines, problems = single or records.read_games(path)
    except strict_json.RecordError as error:
        raise ReplayError(str(error)) from None
    games = []
    for line in lines:
        try:
            games.append(game_data(line, path.parent / "logs"))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError,
                ArithmeticError) as error:
            problems.append((0, f"{path} game {line.game}: not a game line "
                                f"({type(error).__name__}: {error})"))
    problems.sort()
    if not games:
        more = (f" ({len(problems)} unreadable lines; "
                f"{problems[0][1].removeprefix(str(path) + ' ')})" if problems else "")
        raise ReplayError(f"{path}: no games in it yet{more}")
    if problems:
        (warn or (lambda text: print(text, file=sys.stderr, flush=True)))(
            records.problems_line(path, problems, "left out of the page"))
    # A tournament's games are many pairings': the page is titled by the event, not by the
    # first game's two bots (crosstable.write_replays drops the key for a pairing's page).
    paired = any(isinstance(line.pairing, list) for line in lines)
    tournament = _tournament(path.parent, games) if paired else None
    return {"format": FORMAT, "source": str(path), "agents": games[0]["agents"],
            "tournament": tournament,
            "win_score": WIN_SCORE, "proven_score": PROVEN_SCORE,
            "score_per_logit": analysis.score_per_logit(),
            "thresholds": dict(analysis.THRESHOLDS),
            "unreadable_lines": len(problems), "games": games}


def _tournament(folder: Path, games: list[dict]) -> dict:
    """``{"bots": N, "kind": "round-robin" | "gauntlet" | None}``: the event's bots as its
    tournament.json lists them (those that never played too), else those in its games."""
    try:
        settings = read_event(folder / "tournament.json")
        bots, kind = len(settings.bots), settings.kind
    except strict_json.RecordError:
        bots, kind = len({name for game in games for name in game["agents"]}), None
    return {"bots": bots, "kind": _text(kind)}


def _names(line: GameLine) -> tuple[list[str], str, str]:
    """(agent 1 and 2, X, O) of a game line."""
    names = [str(name) for name in line.names]
    agents = [str(agent["name"]) for agent in line.agents] or names
    opening = line.opening or []
    x = line.p1 or (opening[0][0] if opening else None) or (names or ["X"])[0]
    o = line.p2 or (opening[1][0] if len(opening) > 1 else None) or \
        ([name for name in names if name != x] or ["O"])[0]
    return (agents if len(agents) == 2 else [x, o]), str(x), str(o)


def on_our_scale(agent) -> bool:
    """Whether an agent's logged scores are on our engine's scale (X's expected result is
    ``sigmoid(score / score_per_logit)``), as its record says: our agent (``-m agent``,
    ``uttt-agent``) with its own engine and evaluation, by the command the runner recorded, else
    by the spec (``agent``, ``agent:depth=6``).  The seed engine's line counts (+575 to +1160
    in games it loses), another evaluation's, another program's numbers are not; nor is an
    agent the record does not describe.

    >>> on_our_scale({"spec": "agent:depth=6"}), on_our_scale({"spec": "seed"})
    (True, False)
    >>> on_our_scale({"spec": "seed", "command": ["python", "-m", "agent", "Seed2", "--engine",
    ...                                           "seed"]})
    False
    """
    if not isinstance(agent, dict):
        return False
    command = agent.get("command")
    if isinstance(command, list) and command and all(isinstance(t, str) for t in command):
        ours = (Path(command[0]).name.startswith("uttt-agent")
                or any(a == "-m" and b == "agent" for a, b in zip(command, command[1:])))
        options = {}
        for word, after in zip(command, [*command[1:], ""]):
            key, equals, value = word.partition("=")
            if key in ("--engine", "--eval"):
                options[key] = value if equals else after
        return ours and options.get("--engine", "alphabeta").partition(":")[0] == "alphabeta" \
            and options.get("--eval", "fitted") == "fitted"
    spec = agent.get("spec")
    if not isinstance(spec, str):
        return False
    if spec.startswith("name="):
        spec = spec.partition(":")[2]
    return spec.partition(":")[0] == "agent"


def _scales(line: GameLine) -> dict[str, str]:
    """Each player's logged scores: "engine" (our engine's scale) or "own" (see on_our_scale)."""
    return {str(agent["name"]): "engine" if on_our_scale(agent) else "own" for agent in line.agents}


def _ending(line: GameLine) -> str:
    result, reason = line.result, line.reason
    if result == "aborted" or result is None:
        return "aborted"
    if result == "tie":
        return "draw"
    if reason == TIME_OUT:
        return "time-out"
    if reason in (INVALID_MOVE, OUT_OF_ORDER):
        return "bad-move"
    if reason == codingame_referee.CRASHED:
        return "crash"
    if reason == codingame_referee.COUNT_WIN:
        return "count"
    return "line"


def _timing(line: GameLine, moves: list[dict]) -> None:
    """Set each move's ``seconds`` and ``limit`` from the file protocol's or CodinGame's keys."""
    time_limit = _number(line.time_limit)
    turn_ms, first_ms = _number(line.turn_ms), _number(line.first_turn_ms)
    seen = set()
    for move in moves:
        if move["opening"]:
            move["seconds"] = move["limit"] = None
            continue
        if _number(move.get("ms")) is not None:
            move["seconds"] = move["ms"] / 1000
        move.setdefault("seconds", None)
        if turn_ms is not None:         # CodinGame: a longer first turn for each program
            ms = first_ms if move["player"] not in seen and first_ms is not None else turn_ms
            move["limit"] = ms / 1000
        else:
            move["limit"] = time_limit
        seen.add(move["player"])


def _search_from_logs(line: GameLine, moves: list[dict], logs: Path) -> None:
    """Read the search figures for players whose moves have none from their search logs
    (``logs/game-NNNN-NAME.search.jsonl``), with the runners' own strict reader
    (:mod:`ref_sim.series.output.telemetry`).  A program's text log is never parsed: anyone can print."""
    for name in {move["player"] for move in moves}:
        mine = [move for move in moves if move["player"] == name and not move["opening"]]
        if not mine or any("depth" in move for move in mine):
            continue
        telemetry.attach_search_log(mine, name, telemetry.search_log_path(logs, line.game, name))


def game_data(line: GameLine, logs: Path | None = None) -> dict:
    """One game of the page's data (docs/formats.md) from its games.jsonl line;
    ``logs``: the run's ``logs/`` folder, read only for search figures the line lacks."""
    rules = line.rules or WPI
    agents, x, o = _names(line)
    moves = [{"player": str(player), "board": board, "spot": spot, "opening": True}
             for player, board, spot in line.opening or []]
    for item in line.moves:
        move = {key: item[key] for key in ("player", "board", "spot", "seconds", "ms",
                                           "row", "col", *SEARCH_KEYS) if key in item}
        if "board" not in move:         # a CodinGame line with rows and columns only
            move["board"], move["spot"] = codingame_referee.from_cell(item["row"], item["col"])
        move["player"] = str(move["player"])
        move["opening"] = False
        moves.append(move)
    if logs is not None:
        _search_from_logs(line, moves, logs)
    _timing(line, moves)

    game = Game(rules)
    states = [_state(game)]
    problem = None
    for number, move in enumerate(moves, 1):
        move["mark"] = MARKS[game.turn]
        try:
            game.play(move["board"], move["spot"])
        except IllegalMoveError as error:
            problem = f"move {number} ({move['player']} {move['board']} {move['spot']}) " \
                      f"is illegal: {error}; the moves stop before it"
            del moves[number - 1:]
            break
        states.append(_state(game))
    for move in moves:
        for key in ("ms", "row", "col"):
            move.pop(key, None)
        for key in ("seconds", "limit", *SEARCH_KEYS):     # the page does arithmetic with these
            if key in move:
                move[key] = _number(move[key])
    return {"format": FORMAT, "game": line.game, "rules": rules, "agents": agents,
            "x": x, "o": o, "result": _text(line.result), "winner": _text(line.winner),
            "loser": _text(line.loser), "reason": _text(line.reason), "bad_line": line.bad_line,
            "notes": _texts(line.notes), "hints": _texts(line.hints), "verdict": verdict(line),
            "score": _number(line.score), "ending": _ending(line),
            "time_limit": _number(line.time_limit), "logged_scale": _scales(line),
            "moves": moves, "states": states,
            "problem": problem, "analysis": None}


def _texts(value) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def bad_line_text(line) -> str:
    """A bad line as a person reads it: quoted, and an empty one said so (no blank quotes).

    >>> bad_line_text(""), bad_line_text("Otter 9 9")
    ('an empty line', '"Otter 9 9"')
    """
    if not str(line).strip():
        return "an empty line" if line == "" else f"a line of only blanks ({json.dumps(line)})"
    return json.dumps(str(line), ensure_ascii=False)


def seconds_text(value: float) -> str:
    """``0.93 s``, ``1 s``, ``45.2 ms``: a time as the pages write it."""
    if abs(value) < 0.1:
        return f"{value * 1000:.1f} ms"
    return f"{value:.2f}".rstrip("0").rstrip(".") + " s"


def move_seconds(move: dict) -> float | None:
    """A move's time in a line: the file protocol's ``seconds`` or CodinGame's ``ms``."""
    if _number(move.get("seconds")) is not None:
        return move["seconds"]
    return move["ms"] / 1000 if _number(move.get("ms")) is not None else None


def turn_limit(line: GameLine, first: bool) -> float | None:
    """A move's limit in seconds: the file protocol's ``time_limit``, or CodinGame's turn (its
    longer first turn where ``first``, a program's first move)."""
    turn_ms = _number(line.turn_ms)
    if turn_ms is not None:
        first_ms = _number(line.first_turn_ms)
        return (first_ms if first and first_ms is not None else turn_ms) / 1000
    return _number(line.time_limit)


def move_times(line: GameLine, name: str) -> list[tuple[float, float | None]]:
    """``name``'s timed moves in a game line: (seconds, the limit of that move)."""
    own = [m for m in line.moves if str(m.get("player")) == name]
    return [(seconds, turn_limit(line, index == 0)) for index, seconds in
            enumerate(map(move_seconds, own)) if seconds is not None]


def time_out_text(line: GameLine) -> str | None:
    """Who ran out of time, on which move, and how late, from a game line (None if no one did):
    the limit of that move, what the loser's answer took where the referee waited for a late
    one (CodinGame's ``late_ms``), and its slowest move before it against its limit."""
    if line.result != "win" or line.reason != TIME_OUT or not line.loser:
        return None
    loser = str(line.loser)
    moves = line.moves
    own = [m for m in moves if str(m.get("player")) == loser]
    limit = turn_limit(line, not own)
    within = f"the {seconds_text(limit)} limit" if limit else "the limit"
    text = (f"{loser} ran out of time on move {len(line.opening or []) + len(moves) + 1} "
            f"(its move {len(own) + 1}): ")
    late_ms = _number(line.late_ms)
    if late_ms is not None:
        over = late_ms / 1000 - limit if limit else 0
        text += f"its answer came after {seconds_text(late_ms / 1000)}" + (
            f", {seconds_text(over)} over {within}" if over > 0 else f" ({within})")
    elif _number(line.turn_ms) is not None:
        text += f"no answer within {within}, nor in the {codingame_referee.LATE_WAIT:g} s after"
    else:
        text += f"no move seen within {within}"
    times = move_times(line, loser)
    if times:
        seconds, of = max(times)
        text += f"; its slowest move before: {seconds_text(seconds)}" + (
            f" of {seconds_text(of)}" if of else "")
    return text


def verdict(line: GameLine) -> list[str]:
    """Why the game ended as it did, in lines a person reads (the pages show them): who ran out
    of time and how late, the bad line read (an empty one said so), each bot's note (a crash,
    a kill), and the runner's hints on why a bot never moved (``hints``, ref_sim.series.realbots)."""
    # A game scored because a bot could not start was never played: that is its whole story.
    lines = [f"{name} could not start: {why}" for name, why in _texts(line.cannot_start).items()]
    timed_out = time_out_text(line)
    if timed_out:
        lines.append(timed_out)
        load = machine_load.verdict_line(line)     # the machine's fault, or the bot's own
        if load:
            lines.append(load)
    elif line.result == "win" and line.bad_line is not None:
        lines.append(f"{line.loser} lost to {line.reason}: the line read was "
                     f"{bad_line_text(line.bad_line)}")
    for name, note in _texts(line.notes).items():
        lines.append(f"{name}: {note}")
    for name, hint in _texts(line.hints).items():
        lines.append(f"Hint: {hint}" if hint.startswith(name) else f"Hint ({name}): {hint}")
    return lines


def _number(value) -> float | int | None:
    """``value`` when it is a finite number, else None: a record edited by hand, or not ours, may
    hold text or null where the page computes (a score of "x" would stop its script)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return value
    return None


def _text(value) -> str | None:
    return None if value is None else str(value)


def _state(game: Game) -> list[str]:
    """[local boards, boards to play, result] of a position (docs/formats.md, the key ``states``)."""
    local = "".join(RESULT_CHARS[result] for result in game.local_results())
    return [local, "".join(map(str, boards_to_play(game))), "" if game.result is None
            else RESULT_CHARS[game.result]]


# -- the page ----------------------------------------------------------------------------

def embedded_json(data) -> str:
    """``data`` as JSON that is safe inside a ``<script>`` element: no ``<``, ``>`` or ``&``
    (so no ``</script>`` or ``<!--``), and no U+2028/U+2029, whatever the names and logs hold.

    >>> embedded_json({"name": "</script>"})
    '{"name": "\\\\u003c/script\\\\u003e"}'
    """
    text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


def write_page(data: dict, out) -> Path:
    """Write the page for ``data`` to ``out``, and beside it the analysis board its positions link
    to (ref_sim.views.board_page: board.html); returns the replay page's path."""
    from ref_sim.views import board_page
    from ref_sim.views.replay_page import page
    out = Path(out)
    board = out.with_name("board.html" if out.name != "board.html" else "analysis-board.html")
    write_output(out, page(embedded_json({**data, "board_page": board.name})))
    board_page.write_page(board)
    return out


# -- command line ------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=prog(MODULE),
        description="Write one self-contained HTML page that replays a series' games move by "
                    "move, with each agent's logged scores and move times, and with --analyse "
                    "our engine's verdict on every move.",
        epilog="RUN is the --out folder of python -m ref_sim.match or ref_sim.stdio, or its "
               "games.jsonl.  The page opens from disk in any browser (no server, no network).  "
               "Exit codes: 0 written, 2 bad input.")
    parser.add_argument("run", metavar="RUN", help=records.GAMES_ARGUMENT)
    parser.add_argument("-o", "--out", metavar="OUT.html",
                        help="the page to write (default: replay.html next to games.jsonl)")
    parser.add_argument("--team", metavar="NAME",
                        help="a tournament's folder only: write bot NAME's page instead "
                             "(team-NAME.html beside the crosstable: its games, faults, time and "
                             "memory), as the tournament writes it")
    group = parser.add_argument_group("analysis")
    group.add_argument("--analyse", "--analyze", action="store_true",
                       help="have our engine evaluate every position and mark mistakes")
    group.add_argument("--time-limit", "--time", dest="time", type=seconds_per_move, metavar="S",
                       help="seconds per position (default 0.5; none with --depth or --nodes)")
    group.add_argument("--depth", type=search_depth, metavar="D", help="search each position to depth D")
    group.add_argument("--nodes", type=search_nodes, metavar="N", help="at most N nodes per position")
    group.add_argument("--select", "--games", dest="games", metavar="WHICH",
                       help="the games to analyse: numbers and ranges (1,4,7-9), or all, wins, "
                            "losses, draws (agent 1's); default all")
    group.add_argument("--jobs", type=whole(1, MAX_JOBS), metavar="N",
                       help="positions analysed at once (default: the cores)")
    cluster_address.add_cluster_options(group, action="analyse", note="start the workers with "
                                        "--nthreads 1 (a search holds a core)")
    group.add_argument("--fresh", action="store_true",
                       help="analyse again instead of using the results cached in the run's "
                            f"folder ({analysis.CACHE_NAME}); the new ones replace them")
    return parser


def _as_typed(parser, option: str, argv: list[str]) -> str:
    """``option`` under the name the user typed (an old name, ``--games``, is still taken)."""
    names = next(action.option_strings for action in parser._actions if option in action.option_strings)
    return next((name for name in names for word in argv if word == name or word.startswith(name + "=")),
                option)


def _analyse(args, data: dict, folder: Path, search, connect) -> None:
    """--analyse: the chosen games' positions searched here or on a cluster (``connect``), each
    by ``search``."""
    def say(text):
        print(text, file=sys.stderr, flush=True)
    settings = analysis.Settings.from_args(args.time, args.depth, args.nodes)
    chosen = analysis.select_games(data["games"], args.games or "all")
    data["analysis_selection"] = args.games or "all"   # the page tells a game left out from one never analysed
    cache = folder / analysis.CACHE_NAME
    address = cluster_address.cluster_target(args)
    runner = connect(address, say=say) if address else None
    try:
        analysis.analyse_run(data, chosen, settings, jobs=args.jobs, cache=cache, say=say,
                             runner=runner, fresh=args.fresh, search=search)
    finally:
        if runner is not None:
            runner.close()


@entry_point(MODULE)
def main(argv: list[str] | None = None, *, write_team_page=None,
         search=analysis.search_position, connect=cluster.connect) -> int:
    """Entry point of ``python -m ref_sim.replay``; returns the exit code. ``write_team_page(run,
    name)`` writes ``--team``'s page (:func:`ref_sim.views.team_page.write_one`, which the command
    passes: the team page draws on this module, so this one does not import it); ``search``:
    what searches a position for --analyse (:func:`ref_sim.views.analysis.search_positions`);
    ``connect(address, say=)``: the runner on --cluster's workers (:func:`ref_sim.series.run.cluster.connect`)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.analyse:
        # Without --analyse they would be silently ignored: the user meant an analysis.
        typed = sys.argv[1:] if argv is None else argv
        given = [_as_typed(parser, option, typed) for option, dest in ANALYSIS_ONLY
                 if getattr(args, dest) not in (None, False)]
        if given:
            parser.exit(2, f"{prog(MODULE)}: error: {given[0]} needs --analyse (without it "
                           "no position is searched)\n")
    if args.team is not None:
        if write_team_page is None:
            parser.exit(2, f"{prog(MODULE)}: error: --team is the command's (python -m ref_sim.replay)\n")
        if args.out or args.analyse:
            parser.exit(2, f"{prog(MODULE)}: error: --team writes the team's page beside the "
                           "crosstable: no --out, no --analyse\n")
        try:
            print(write_team_page(args.run, args.team))
        except (ValueError, OSError) as error:
            parser.exit(2, f"{prog(MODULE)}: error: {error}\n")
        except (KeyError, TypeError, AttributeError) as error:     # a tournament.json not ours
            parser.exit(2, f"{prog(MODULE)}: error: {args.run}: its tournament.json is no "
                           f"tournament's settings ({type(error).__name__}: {error})\n")
        return 0
    try:
        data = read_run(args.run)
        source = Path(data["source"])
        out = Path(args.out) if args.out else source.parent / "replay.html"
        if args.analyse:
            _analyse(args, data, source.parent, search, connect)
        write_page(data, out)
    except (ReplayError, analysis.AnalysisError, cluster_address.ClusterError, OSError) as error:
        parser.exit(2, f"{prog(MODULE)}: error: {error}\n")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
