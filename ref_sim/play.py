"""Play a game of the tic-tac-toe family against the engine in the terminal.

    python -m ref_sim.play ttt                      # you are X and move first
    python -m ref_sim.play qubic --first engine --seconds 5
    python -m ref_sim.play uttt --seconds 3

How moves are typed (``moves``, ``undo``, ``quit``; Ultimate Tic-Tac-Toe's two forms) and what
each engine move's line says: docs/engine.md, "The other games of the family". Exit codes: 0 the
game ended or was abandoned, 2 bad command line, 130 interrupted, 141 output closed.
"""

from __future__ import annotations

import argparse
import re
import sys

from agent.cli_common import OneLineParser, say_error, silence_output
from agent.options import search_depth, seconds_per_move
from ref_sim.games import GAMES, get_game, result_text, search_engine
from agent.limits import SearchLimit, SearchResult
from agent.rules import DRAWN, OPEN, WON_O, WON_X, IllegalMoveError, InvalidMoveError
from agent.search import PROVEN_SCORE, WIN_SCORE
from .stops import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, invoked_as

SYMBOLS = "XO"
PROG = invoked_as("ref_sim.play")  # uttt-play when run as that console script


def describe_score(score: int) -> str:
    """'+12', '-3', or 'win in 3' / 'loss in 4' (plies) for proven results."""
    if score >= PROVEN_SCORE:
        return f"win in {WIN_SCORE - score}"
    if score <= -PROVEN_SCORE:
        return f"loss in {WIN_SCORE + score}"
    return f"{score:+d}"


def move_text(game, state, move: int) -> str:
    """A move as the player types it: ``b4 s0`` in Ultimate Tic-Tac-Toe (two bare numbers
    may read as a row and a column too), else the game's own text."""
    return "b{} s{}".format(*divmod(move, 9)) if game.name == "uttt" else game.format_move(state, move)


def thinking_line(game, state_before, result: SearchResult) -> str:
    if result.depth == 0 and len(state_before.legal_moves()) == 1:
        return f"Engine plays {move_text(game, state_before, result.move)}   (the only legal move)"
    return (f"Engine plays {move_text(game, state_before, result.move)}   "
            f"(depth {result.depth}, score {describe_score(result.score)}, nodes {result.nodes}, "
            f"{result.elapsed:.2f} s)")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0],
                           epilog="Moves, undo and the engine's lines: docs/engine.md, \"The other games of the family\".")
    parser.add_argument("game", choices=list(GAMES), help="ttt, nineboard, qubic or uttt")
    parser.add_argument("--first", choices=("human", "engine"), default="human",
                        help="who moves first and plays X (default: human)")
    parser.add_argument("--time-limit", "--seconds", dest="seconds", type=seconds_per_move, default=None, metavar="SECONDS",
                        help="engine's thinking time per move (default: per game: ttt 1, nineboard 2, qubic 5, uttt 2)")
    parser.add_argument("--depth", type=search_depth, default=None, help="a fixed search depth instead (weaker, instant)")
    return parser


def main(argv=None, stdin=None, stdout=None) -> int:
    stdin = stdin if stdin is not None else sys.stdin
    out = stdout if stdout is not None else sys.stdout
    args = build_parser().parse_args(argv)
    try:
        return play(args, stdin, out)
    except KeyboardInterrupt:
        # At the prompt the cursor sits after "Your move ...: ": start a line of our own.
        say_error(PROG, "interrupted", start="\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        silence_output(out)
        say_error(PROG, "output closed (broken pipe)")
        return EXIT_BROKEN_PIPE




#: What ask_move returns for ``undo``.
UNDO = "undo"


def play(args, stdin, out) -> int:
    """One game on the terminal for parsed arguments; returns the exit code."""
    game = get_game(args.game)
    seconds = args.seconds if args.seconds is not None else game.seconds
    state = game.new_state()
    engine = search_engine(game, depth=args.depth)
    human = 0 if args.first == "human" else 1

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    say(f"{game.title}: you are {SYMBOLS[human]}, the engine is {SYMBOLS[1 - human]}"
        f" ({seconds:g} s per move). Type 'moves' for the legal moves, 'undo' to take back "
        "your last move, 'quit' to stop.")
    while state.winner is None:
        say()
        say(draw(game, state))
        if state.turn == human:
            move = ask_move(game, state, stdin, out)
            if move is None:
                say("\nGame abandoned.")
                return 0
            if move == UNDO:
                say(undo(state, human))
                continue
            state.push(move)
        else:
            limit = SearchLimit(depth=args.depth) if args.depth else SearchLimit.seconds(seconds)
            result = engine.choose(state, limit)
            say(thinking_line(game, state, result))
            state.push(result.move)
    say()
    say(draw(game, state))
    verdict = result_text(state)
    if state.winner == human:
        verdict += ": you win!"
    elif state.winner == 1 - human:
        verdict += ": the engine wins."
    say(f"Game over, {verdict}")
    return 0


def undo(state, human: int) -> str:
    """Take back the human's last move and the engine's reply to it; what was done, in words."""
    # At the human's turn the last move is the engine's; X moves at even plies.
    if len(state.moves_played()) - human < 2:
        return "Nothing to undo: you have not moved yet."
    state.pop()
    state.pop()
    return "Took back your last move and the engine's reply."


# -- the board -----------------------------------------------------------------------------

def draw(game, state) -> str:
    """The board, the last move in parentheses: ``(O)``."""
    text = picture(game, state)
    moves = state.moves_played()
    if not moves:
        return text
    state.pop()
    before = picture(game, state)
    state.push(moves[-1])
    return mark_new_cell(before.splitlines(), text)


def picture(game, state) -> str:
    """The board.  The nine-board games get a grid of our own (headers of one width whatever
    a board's state; rows and columns numbered for Ultimate Tic-Tac-Toe's ``row col``), the
    others their game's drawing."""
    if game.name == "uttt":
        text = nine_boards(state, first=0, note=lambda b: UTTT_NOTES[state.status[b]],
                           coordinates=True)
        if state.winner is None:
            where = "any open board" if state.forced < 0 else f"board {state.forced}"
            text += (f"\n  [b] board b, * to play in, X/O won, = drawn; "
                     f"{SYMBOLS[state.turn]} to play in {where}")
    elif game.name == "nineboard":
        text = nine_boards(state, first=1, note=lambda b: "", coordinates=False)
        if state.winner is None:
            where = "any board" if state.forced < 0 else f"board {state.forced + 1}"
            text += (f"\n  cells are numbered 1-9 like the boards; {SYMBOLS[state.turn]} to play "
                     f"in {where}")
    else:
        text = game.render(state)
    return text


#: A local board's note in the header: won by X or O, drawn.
UTTT_NOTES = {OPEN: "", WON_X: " X", WON_O: " O", DRAWN: " ="}


def nine_boards(state, first: int, note, coordinates: bool) -> str:
    """Nine 3x3 boards: each headed by ``[number]`` (from ``first``), ``*`` for the board to
    play in, then ``note(board)`` (at most 2 characters: every header has the same width).
    ``coordinates``: rows and columns of the 9x9 grid numbered from 0 around it."""
    forced = state.forced if state.winner is None else -1
    margin = "  row   " if coordinates else "  "
    lines = ["  col   " + "".join(f" {c} {c + 1} {c + 2}  " for c in (0, 3, 6)).rstrip()] \
        if coordinates else []
    for big_row in range(3):
        labels = []
        for b in range(big_row * 3, big_row * 3 + 3):
            label = f"[{b + first}]" + ("*" if b == forced else "") + note(b)
            labels.append(f"{label:<8}")
        lines.append((margin if big_row == 0 else " " * len(margin)) + "".join(labels).rstrip())
        for small_row in range(3):
            row = big_row * 3 + small_row
            blocks = []
            for b in range(big_row * 3, big_row * 3 + 3):
                cells = (state.cell(b * 9 + small_row * 3 + c) for c in range(3))
                blocks.append(" " + " ".join("." if w is None else SYMBOLS[w] for w in cells) + " ")
            start = f"    {row}   " if coordinates else "  "
            lines.append(start + "|".join(blocks).rstrip())
        if big_row < 2:
            lines.append(" " * len(margin) + "-------+-------+-------")
    return "\n".join(lines)


def mark_new_cell(before: list[str], after: str) -> str:
    """``after`` with the one cell that was empty (``.``) in ``before`` and holds a mark now
    drawn as ``(X)``: the parentheses take the blanks either side of it."""
    lines = after.splitlines()
    new = [(i, j) for i, (old, line) in enumerate(zip(before, lines))
           for j, (a, b) in enumerate(zip(old, line)) if a == "." and b in SYMBOLS]
    if len(new) != 1:
        return after
    i, j = new[0]
    line = lines[i] + " "
    if j > 0 and line[j - 1] == " " and line[j + 1] == " ":
        lines[i] = (line[:j - 1] + f"({line[j]})" + line[j + 2:]).rstrip()
    return "\n".join(lines)


# -- reading a move ------------------------------------------------------------------------

#: Ultimate Tic-Tac-Toe's two move forms, tagged (b4 s0, board 4 spot 0; r4 c0, row 4 col 0)
#: or bare (4 0, 4,0, 40).
_TAGGED = re.compile(r"(b|board|r|row)\s*([0-8])\s*[, ]?\s*(?:s|spot|c|col|column)?\s*([0-8])")
_BARE = re.compile(r"([0-8])\s*[, ]?\s*([0-8])")


def from_row_col(row: int, col: int) -> int:
    """The cell index (board * 9 + spot) of ``row``, ``col`` on the 9x9 grid.

    >>> from_row_col(4, 0), divmod(from_row_col(4, 0), 9)
    (30, (3, 3))
    """
    return (row // 3 * 3 + col // 3) * 9 + row % 3 * 3 + col % 3


def _as_board(move: int) -> str:
    return "board {} spot {}".format(*divmod(move, 9))


def _as_row_col(move: int) -> str:
    board, spot = divmod(move, 9)
    return f"row {board // 3 * 3 + spot // 3} col {board % 3 * 3 + spot % 3}"


def parse_uttt(state, text: str) -> tuple[int, str]:
    """(move, how it was read) for Ultimate Tic-Tac-Toe: ``b4 s0`` / ``board 4 spot 0`` or
    ``r4 c0`` / ``row 4 col 0``, or two bare numbers read the way that is legal here.
    InvalidMoveError (a typo, or two readings both legal) or IllegalMoveError (the rules), each
    one line."""
    t = text.strip().lower()
    tagged, bare = _TAGGED.fullmatch(t), _BARE.fullmatch(t)
    if tagged:
        a, b = int(tagged.group(2)), int(tagged.group(3))
        by_row = tagged.group(1).startswith("r")
        move = from_row_col(a, b) if by_row else a * 9 + b
        reason = state.why_illegal(move)
        if reason:
            raise IllegalMoveError(f"{_as_row_col(move) if by_row else _as_board(move)}: {reason}")
        return move, (f"{_as_row_col(move)} (= {_as_board(move)})" if by_row
                      else f"{_as_board(move)} (= {_as_row_col(move)})")
    if not bare:
        raise InvalidMoveError(f"expected 'board spot' like b4 s0 or 'row col' like r4 c0 "
                               f"(each 0-8), got {text.strip()!r}")
    a, b = int(bare.group(1)), int(bare.group(2))
    as_board, as_row = a * 9 + b, from_row_col(a, b)
    legal_board, legal_row = not state.why_illegal(as_board), not state.why_illegal(as_row)
    if as_board == as_row or (legal_board and not legal_row):
        if not legal_board:
            raise IllegalMoveError(f"{_as_board(as_board)}: {state.why_illegal(as_board)}")
        return as_board, f"{_as_board(as_board)} (= {_as_row_col(as_board)})"
    if legal_row and not legal_board:
        return as_row, f"{_as_row_col(as_row)} (= {_as_board(as_row)})"
    if legal_board and legal_row:
        raise InvalidMoveError(f"'{a} {b}' is {_as_board(as_board)} or {a} {b} on the grid "
                               f"({_as_board(as_row)}): type b{a} s{b} or r{a} c{b}")
    reasons = dict.fromkeys((state.why_illegal(as_board), state.why_illegal(as_row)))
    raise IllegalMoveError(f"'{a} {b}' ({_as_board(as_board)}, or row {a} col {b}): "
                           + "; ".join(reasons))


def prompt(game, state) -> str:
    if game.name == "uttt":
        return f"Your move ({SYMBOLS[state.turn]}), board spot (b4 s0) or row col (r4 c0): "
    return f"Your move ({SYMBOLS[state.turn]}), e.g. {game.move_example}: "


def ask_move(game, state, stdin, out):
    """Read lines until one is a legal move; None on 'quit' or end of input, UNDO on 'undo'."""
    legal = set(state.legal_moves())
    while True:
        print(prompt(game, state), end="", file=out, flush=True)
        line = stdin.readline()
        if not line:
            return None
        text = line.strip()
        if text.lower() in ("quit", "exit", "q"):
            return None
        if not text:
            continue
        if text.lower() in ("undo", "u", "takeback"):
            return UNDO
        if text.lower() in ("moves", "help", "?"):
            print("Legal moves: " + ", ".join(move_text(game, state, m) for m in sorted(legal)), file=out)
            continue
        try:
            if game.name == "uttt":
                move, read = parse_uttt(state, text)
                print(f"Read as {read}.", file=out)
            else:
                move = game.parse_move(state, text)
        except ValueError as error:  # InvalidMoveError (typo) or IllegalMoveError (rules)
            print(f"Not a move here: {error}. Try again.", file=out)
            continue
        if move not in legal:  # parsers check legality; this guards against any gap
            print(f"Not a legal move here: {text}. Try again.", file=out)
            continue
        return move


if __name__ == "__main__":
    sys.exit(main())
