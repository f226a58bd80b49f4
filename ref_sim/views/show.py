"""Look at saved games: move by move in the terminal, or one position as SVG/PNG.

    python -m ref_sim.show GAME [--game N] [--ply K] [--svg OUT.svg | --png OUT.png]
                           [--no-color]

GAME is a game record saved by ``python -m ref_sim ... --record FILE`` or by the match
runner (``<out>/logs/game-NNNN.json``), or a JSON-lines file with one game per line
(``<out>/games.jsonl``); for the latter ``--game N`` picks a game, and without it the games
are listed one line each.  Moves are numbered from 1, and the referee's four opening moves
are moves 1-4.

The file is shown as it is or not at all: a bad record or line (not JSON, NaN, ``1e999``,
absurd nesting, invalid UTF-8, a key shown of the wrong type: :mod:`ref_sim.series.output.records`) is one
line naming the file and the line, and exit code 2.  ``ref_sim.plot`` reads files so too.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import dataclass
from typing import TextIO

from agent.cli_common import OneLineParser
from ref_sim.series.output import records, strict_json
from ref_sim.series.output.strict_json import RecordError
from ref_sim.series.output.game_line import GameLine
from ref_sim.views import render
from ref_sim.rules import CODINGAME
from ref_sim.entry_point import entry_point, prog
from ref_sim.rules import DRAW, O, SYMBOLS, TIE, X, Game, IllegalMoveError

MODULE = "ref_sim.show"
#: The referee's opening: four moves it plays itself before the first .go.
OPENING_MOVES = 4
#: The keys of a record shown as text.
TEXT_KEYS = ("p1", "p2", "result", "winner", "loser", "reason", "bad_line")


# -- reading -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Games:
    """The games of one file, sorted by number: ``series`` is True for a JSON-lines file.

    The match runner writes games.jsonl in the order games finish, each with its number in
    ``"game"``; when every game has one, ``--game N`` means that number.  Otherwise the games
    are numbered by line, from 1 (:func:`load_games`).
    """
    path: str
    games: list[GameLine]
    series: bool

    def numbers(self) -> list[int]:
        """The number of each game, as ``--game`` takes it."""
        return [game.game for game in self.games]


def record_line(record: dict) -> dict:
    """One game's record (the referee's keys: ``logs/game-NNNN.json``, one saved by ``python -m
    ref_sim --record``) as a series' line for :meth:`GameLine.from_json`: game 1 and no notes
    unless it says, agent 1's score, its agents by name.  A series' line stays as it is."""
    names = record.get("names") if isinstance(record.get("names"), list) else []
    result = record.get("result")
    score = (0.5 if result == "tie" else float(record.get("winner") == names[0])
             if result == "win" and names else None)      # agent 1's, as a series line has it
    return {"game": 1, "score": score, "notes": {}, **record,
            "agents": record.get("agents") or [{"name": name} for name in names]}


def _game_line(record: dict, where: str, number: int | None = None) -> GameLine:
    """A checked record (:func:`_check_record`) as a line, numbered ``number`` if given."""
    line = record_line(record) if number is None else {**record_line(record), "game": number}
    return GameLine.from_json(line, where)


def load_games(path) -> Games:
    """Read a GameRecord JSON file or a JSON-lines file of records (or a series' folder: its
    games.jsonl, :func:`ref_sim.series.output.records.games_source`); RecordError if neither.
    Every line is read by :mod:`ref_sim.series.output.records` (no NaN, no ``1e999``, no absurd nesting, no
    huge line); a bad one is an error naming the file and the line: the file is shown exactly."""
    path = str(records.games_source(path))
    lines_only = path.endswith((".jsonl", ".ndjson"))
    whole, whole_error = None, None
    if not lines_only:
        try:
            whole = strict_json.read_json(path, "game file")
        except RecordError as error:
            if not os.path.isfile(path):
                raise
            whole_error = error
    if isinstance(whole, dict):
        return Games(path, [_game_line(_check_record(whole, path), path)], False)
    if whole is not None:
        raise RecordError(f"{path}: expected a game record (a JSON object) or JSON lines, "
                          f"got a JSON {type(whole).__name__}")
    values, problems = strict_json.read_lines(path)
    if problems:
        if whole_error is not None and (not values or problems[0][0] < values[0][0]):
            # neither one record nor JSON lines: the whole file's error says where it breaks
            raise RecordError(f"{whole_error} (neither a game record nor JSON lines)") from None
        raise RecordError(problems[0][1])
    if not values:
        raise RecordError(f"{path}: the file is empty")
    checked = [(f"{path} line {number}", _check_record(data, f"{path} line {number}"))
               for number, data in values]
    numbered = all(isinstance(data.get("game"), int) and not isinstance(data["game"], bool)
                   for _, data in checked)
    games = [_game_line(data, where, None if numbered else index)
             for index, (where, data) in enumerate(checked, 1)]
    return Games(path, sorted(games, key=lambda game: game.game), True)


def _check_record(data, where: str) -> dict:
    if not isinstance(data, dict):
        raise RecordError(f"{where}: expected a game record (a JSON object), "
                          f"got {type(data).__name__}")
    if data.get("rules") == CODINGAME and "opening" not in data:
        data = {**data, "opening": []}      # a uttt-stdio game: CodinGame's referee plays no opening
    for key in ("opening", "moves"):
        if not isinstance(data.get(key), list):
            raise RecordError(f"{where}: not a game record (no {key!r} list)")
    # The other keys shown, which a record edited by hand (or not ours) may get wrong.
    for key in TEXT_KEYS:
        if not isinstance(data.get(key), (str, type(None))):
            raise RecordError(f"{where}: {key!r} must be text or null, not "
                              f"{type(data[key]).__name__}")
    if not isinstance(data.get("names", []), list):
        raise RecordError(f"{where}: 'names' must be a list, not {type(data['names']).__name__}")
    return data


def select(games: Games, number: int | None) -> GameLine:
    """Game ``number`` (see :meth:`Games.numbers`) of ``games``; RecordError if there is none."""
    count = len(games.games)
    if number is None:
        if count == 1:
            return games.games[0]
        raise RecordError(f"{games.path} holds {count} games: choose one with --game N")
    numbers = games.numbers()
    if number not in numbers:
        held = (f"{count} games" if count > 1 else "1 game") + \
            (f" ({min(numbers)}-{max(numbers)})" if count > 1 else f" (game {numbers[0]})")
        raise RecordError(f"--game {number} is out of range: {games.path} holds {held}")
    return games.games[numbers.index(number)]


# -- replaying ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Ply:
    """One move of a game, numbered from 1 (the opening moves are 1-4)."""
    number: int
    player: str
    mark: int               # X (0) or O (1)
    board: int
    spot: int
    opening: bool = False
    seconds: float | None = None
    depth: int | None = None
    score: float | None = None


def _int(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(f"{where}: board and spot must be integers, got {value!r}")
    return value


def plies(record: GameLine) -> list[Ply]:
    """Every move of ``record``, opening included, checked against the rules.

    RecordError if a move is malformed or illegal (a record edited by hand, or not ours).
    """
    names = player_names(record)
    game = Game()
    out = []
    entries = [(True, item) for item in record.opening]
    entries += [(False, item) for item in record.moves]
    for number, (opening, item) in enumerate(entries, 1):
        where = f"move {number}"
        try:
            if opening:
                player, board, spot = item
                extra = {}
            else:
                player, board, spot = item["player"], item["board"], item["spot"]
                extra = {key: item.get(key) for key in ("seconds", "depth", "score")}
        except (TypeError, ValueError, KeyError):
            raise RecordError(f"{where}: expected a player, a board and a spot, "
                              f"got {item!r}") from None
        board, spot = _int(board, where), _int(spot, where)
        mark = game.turn
        try:
            game.play(board, spot)
        except IllegalMoveError as error:
            raise RecordError(f"{where} ({player} {board} {spot}) is illegal: {error}") from None
        out.append(Ply(number, str(player if player is not None else names[mark]), mark,
                       board, spot, opening, **extra))
    return out


def player_names(record: GameLine) -> tuple[str, str]:
    """(X's name, O's name): p1 and p2, or from the opening, else "X" and "O"."""
    p1, p2 = record.p1, record.p2
    if not (p1 and p2):
        opening = record.opening or []
        try:
            p1, p2 = opening[0][0], opening[1][0]
        except (IndexError, TypeError):
            p1, p2 = "X", "O"
    return str(p1), str(p2)


def position(record: GameLine, ply: int | None = None) -> Game:
    """The game after ``ply`` moves (default: all); RecordError if ``ply`` is out of range."""
    moves = plies(record)
    if ply is None:
        ply = len(moves)
    if not 0 <= ply <= len(moves):
        raise RecordError(f"--ply {ply} is out of range: this game has {len(moves)} moves "
                          f"(0-{len(moves)}, the 4 opening moves included)")
    game = Game()
    for move in moves[:ply]:
        game.play(move.board, move.spot)
    return game


# -- words -------------------------------------------------------------------------------

def result_text(record: GameLine) -> str:
    """The result in one line: who won and why, a draw, or why there is none."""
    result = record.result
    names = player_names(record)
    marks = {names[X]: "X", names[O]: "O"}

    def who(name):
        return f"{name} ({marks[name]})" if name in marks else str(name)
    if result == "tie":             # the records' word; every tool prints "draw"
        return "Result: draw"
    if result == "win":
        text = f"Result: {who(record.winner)} wins"
        if record.reason:
            text += f": {record.reason}"
        if record.bad_line:
            text += f" (the line read: {record.bad_line.strip()!r})"
        return text
    if result == "aborted":
        return f"Result: aborted ({record.reason or 'no reason given'})"
    return "Result: none recorded"


def summary(number: int, record: GameLine) -> str:
    """One line about a game, for the list of a series."""
    names = player_names(record)
    result = record.result
    if result == "win":
        outcome = f"{record.winner} wins"
        reason = record.reason or ""
        if reason and "3 local boards in a row" not in reason:
            outcome += f" ({reason.rstrip('!').lower()})"
    elif result == "tie":
        outcome = "draw"
    else:
        outcome = result or "no result"
    count = len(record.opening or []) + len(record.moves)
    text = f"{number:4d}  {names[X]} (X) vs {names[O]} (O): {outcome}, {count} moves"
    if record.pair is not None:
        text += f", pair {record.pair}"
    return text


def _number(value) -> str:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:+.2f}"
    return f"{value:+d}" if isinstance(value, int) else f"{value:+g}"


def move_line(move: Ply, before: Game, after: Game) -> str:
    """``Move 23: Otter (O) 4 5  0.52 s  depth 7  score +12 -- wins board 4``."""
    text = f"Move {move.number}: {move.player} ({SYMBOLS[move.mark]}) {move.board} {move.spot}"
    if move.opening:
        text += "  (opening)"
    details = []
    if isinstance(move.seconds, (int, float)):
        details.append(f"{move.seconds:.2f} s")
    if move.depth is not None:
        details.append(f"depth {move.depth}")
    if isinstance(move.score, (int, float)) and math.isfinite(move.score):
        details.append(f"score {_number(move.score)}")
    if details:
        text += "  " + ", ".join(details)
    notes = []
    was, now = before.local_result(move.board), after.local_result(move.board)
    if was is None and now is not None:
        notes.append("draws board" if now == DRAW else "wins board")
        notes[-1] += f" {move.board}"
    if after.result == TIE:
        notes.append("the game is a draw")
    elif after.result is not None:
        notes.append("wins the game")
    if notes:
        text += " -- " + ", ".join(notes)
    return text


def next_line(game: Game, names: tuple[str, str]) -> str:
    """Who moves next and where (nothing once the game is over)."""
    if game.is_over():
        return ""
    boards = render.boards_to_play(game)
    where = f"board {boards[0]}" if len(boards) == 1 else "any open board"
    return f"Next: {names[game.turn]} ({SYMBOLS[game.turn]}) plays in {where}"


# -- the terminal board ------------------------------------------------------------------

#: Three text rows that stand for a whole decided local board (9 characters each).
ART = {
    X: ("  \\   /  ", "    X    ", "  /   \\  "),
    O: ("  .---.  ", "  | O |  ", "  '---'  "),
    DRAW: (" - - - - ", "  drawn  ", " - - - - "),
}
RESET = "\x1b[0m"
STYLE = {X: "\x1b[1;31m", O: "\x1b[1;34m", "last": "\x1b[7m", "play": "\x1b[33m",
         DRAW: "\x1b[2m", "border": "\x1b[2m"}
LEGEND = ("[X] last move, * cells the next move may take, big X/O won boards, "
          "'drawn' drawn boards; right: the global board")
LEGEND_COLOR = ("reverse video: last move, * cells the next move may take, big X/O won "
                "boards; right: the global board")


def board_lines(game: Game, color: bool = False, last_move: tuple[int, int] | None = None,
                ) -> list[str]:
    """The 9x9 board as text lines, the global board on the right of the first rows.

    Boards decided before the last move are drawn as big marks (:data:`ART`); the board the
    last move decided still shows its cells, so the move can be seen.  The last move is
    ``[X]`` (reverse video with ``color``) and the empty cells the next move may take are
    ``*``.
    """
    if last_move is None and game.moves:
        last_move = game.moves[-1]
    results = game.local_results()
    legal = set(game.legal_moves())

    def paint(style, text):
        return f"{STYLE[style]}{text}{RESET}" if color else text

    def border(row):
        labels = [f"----{3 * row + col}----" if row < 3 else "-" * 9 for col in range(3)]
        return paint("border", "+" + "+".join(labels) + "+")

    def cell(board, spot):
        mark = game.cells[board][spot]
        if (board, spot) == last_move:
            if color:
                return f"{STYLE['last']}{STYLE[mark]} {SYMBOLS[mark]} {RESET}"
            return f"[{SYMBOLS[mark]}]"
        if mark is not None:
            return f" {paint(mark, SYMBOLS[mark])} "
        if (board, spot) in legal:
            return f" {paint('play', '*')} "
        return " . "

    glyph = {X: "X", O: "O", DRAW: "=", None: "."}
    to_play = set(render.boards_to_play(game))
    overview = []
    for row in range(3):
        marks = []
        for col in range(3):
            board = 3 * row + col
            text = "*" if board in to_play else glyph[results[board]]
            style = results[board] if results[board] is not None else "play"
            marks.append(paint(style, text) if text != "." else text)
        overview.append(" ".join(marks))

    lines = []
    for grid_row in range(9):
        if grid_row % 3 == 0:
            lines.append(border(grid_row // 3))
        parts = []
        for col in range(3):
            board = 3 * (grid_row // 3) + col
            decided = results[board] is not None and not (last_move and last_move[0] == board)
            if decided:
                parts.append(paint(results[board], ART[results[board]][grid_row % 3]))
            else:
                parts.append("".join(cell(board, 3 * (grid_row % 3) + c) for c in range(3)))
        bar = paint("border", "|")
        line = bar + bar.join(parts) + bar
        if grid_row < 3:
            line += "    " + overview[grid_row]
        lines.append(line)
    lines.append(border(3))
    return lines


def print_game(record: GameLine, stream: TextIO, color: bool = False, ply: int | None = None,
               number: int | None = None) -> None:
    """Print ``record``: the opening, then each move and the board after it, then the result.

    With ``ply`` print only the position after that many moves.
    """
    moves = plies(record)
    names = player_names(record)
    total = len(moves)
    if ply is not None and not 0 <= ply <= total:
        raise RecordError(f"--ply {ply} is out of range: this game has {total} moves "
                          f"(0-{total}, the 4 opening moves included)")

    def say(text=""):
        print(text, file=stream)
    head = f"{names[X]} (X) vs {names[O]} (O)"
    if number is not None:
        head = f"Game {number}: " + head
    if isinstance(record.time_limit, (int, float)):
        head += f", {record.time_limit:g} s per move"
    head += f", {total} moves"
    if record.pair is not None:
        head += f", pair {record.pair}"
    say(head)
    say(LEGEND_COLOR if color else LEGEND)
    say()

    game = Game()
    if ply is not None:
        for move in moves[:max(ply - 1, 0)]:
            game.play(move.board, move.spot)
        if ply == 0:
            say("Position after move 0: the empty board")
        else:
            before = game.copy()
            game.play(moves[ply - 1].board, moves[ply - 1].spot)
            say(f"Position after move {ply} of {total}")
            say(move_line(moves[ply - 1], before, game))
        for line in board_lines(game, color):
            say(line)
        if ply < total:
            say(next_line(game, names))
        else:
            say(result_text(record))
        return

    opening = [move for move in moves if move.opening]
    for index, move in enumerate(moves):
        before = game.copy()
        game.play(move.board, move.spot)
        if move.opening and index < len(opening) - 1:
            say(move_line(move, before, game))
            continue
        say(move_line(move, before, game))
        for line in board_lines(game, color):
            say(line)
        if not game.is_over():
            say(next_line(game, names))
        say()
    say(result_text(record))


# -- command line ------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m ref_sim.show``."""
    parser = OneLineParser(
        prog=prog(MODULE),
        description="Show a saved Ultimate Tic-Tac-Toe game move by move in the terminal, "
                    "or draw one position as SVG or PNG.",
        epilog="GAME is a series' --out folder or its games.jsonl (without --game its games are "
               "listed), or one game's record, saved by 'python -m ref_sim --record FILE' or a "
               "series (<out>/logs/game-NNNN.json).  "
               "Exit codes: 0 done, 2 bad input (or matplotlib missing for --png).")
    parser.add_argument("game", metavar="GAME", help=records.GAMES_ARGUMENT)
    parser.add_argument("--game", type=int, metavar="N", dest="number",
                        help="the game to show from a series: its number ('game' in "
                             "games.jsonl), else its line, from 1")
    parser.add_argument("--ply", type=int, metavar="K",
                        help="only the position after K moves; the referee's 4 opening moves "
                             "count (moves 1-4), 0 is the empty board (default: every move; "
                             "for --svg/--png the final position)")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--svg", metavar="OUT.svg", help="draw the position to an SVG file")
    out.add_argument("--png", metavar="OUT.png",
                     help="draw the position to a PNG file (needs matplotlib)")
    parser.add_argument("--no-color", action="store_true",
                        help="plain text markers even on a terminal (colour is only used when "
                             "stdout is a terminal anyway)")
    return parser


def use_color(stream, no_color: bool) -> bool:
    """Colour only on a terminal, and not with --no-color or the NO_COLOR convention."""
    if no_color or os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def draw(record: GameLine, path, ply: int | None = None) -> None:
    """Write the position after ``ply`` moves (default: the end) of ``record`` to SVG or PNG."""
    game = position(record, ply)
    names = player_names(record)
    title = f"{names[X]} (X) vs {names[O]} (O)"
    subtitle = render.describe(game, names)
    total = len(plies(record))
    if len(game.moves) == total and not game.is_over() and record.result == "win":
        subtitle += f" · {record.winner} wins: {record.reason}"
    render.save(render.scene(game, title=title, subtitle=subtitle), path)


@entry_point(MODULE)
def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m ref_sim.show``; returns the exit code."""
    args = build_parser().parse_args(argv)
    stream = sys.stdout
    try:
        games = load_games(args.game)
        if games.series and args.number is None and len(games.games) > 1 \
                and not (args.svg or args.png or args.ply is not None):
            print(f"{games.path}: {len(games.games)} games (show one with --game N)",
                  file=stream)
            for number, record in zip(games.numbers(), games.games):
                print(summary(number, record), file=stream)
            return 0
        record = select(games, args.number)
        number = args.number if games.series else None
        if args.svg or args.png:
            path = args.svg or args.png
            if args.png and not path.lower().endswith(".png"):
                raise RecordError(f"--png {path!r}: the file name must end in .png")
            if args.svg and not path.lower().endswith(".svg"):
                raise RecordError(f"--svg {path!r}: the file name must end in .svg")
            draw(record, path, args.ply)
            print(path, file=stream)
        else:
            print_game(record, stream, use_color(stream, args.no_color), args.ply, number)
    except (RecordError, render.MissingDependency) as error:
        print(f"{prog(MODULE)}: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:                 # python -m ref_sim.show game.json | head
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as error:                # e.g. the output directory does not exist
        print(f"{prog(MODULE)}: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
