"""Play a game of the tic-tac-toe family against the engine in the terminal.

    python -m ref_sim.play ttt                      # you are X and move first
    python -m ref_sim.play qubic --first engine --seconds 5
    python -m ref_sim.play nineboard
    python -m ref_sim.play uttt --seconds 3

Type a move as the prompt shows (``moves`` lists the legal ones, ``quit`` or end of input stops).
A bad or illegal entry is explained and asked again. After each engine move one line says what
the search found: depth, score (from the engine's view; 'win in N' once proven), nodes, time.

Exit codes: 0 the game ended or was abandoned, 2 bad command line, 130 interrupted (Ctrl-C, at
the prompt or while the engine thinks), 141 output closed (``| head``). Each of the last two
prints one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import sys

from agent.commandline import say_error, silence_output
from agent.games import GAMES, get_game, result_text, search_engine
from agent.limits import SearchLimit, SearchResult
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


def thinking_line(game, state_before, result: SearchResult) -> str:
    if result.depth == 0 and len(state_before.legal_moves()) == 1:
        return f"Engine plays {game.format_move(state_before, result.move)}   (the only legal move)"
    return (f"Engine plays {game.format_move(state_before, result.move)}   "
            f"(depth {result.depth}, score {describe_score(result.score)}, nodes {result.nodes}, "
            f"{result.elapsed:.2f} s)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("game", choices=list(GAMES), help="ttt, nineboard, qubic or uttt")
    parser.add_argument("--first", choices=("human", "engine"), default="human",
                        help="who moves first and plays X (default: human)")
    parser.add_argument("--seconds", type=float, default=None,
                        help="engine's thinking time per move (default: per game: ttt 1, nineboard 2, qubic 5, uttt 2)")
    parser.add_argument("--depth", type=int, default=None, help="a fixed search depth instead (weaker, instant)")
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
        f" ({seconds:g} s per move). Type 'moves' for the legal moves, 'quit' to stop.")
    while state.winner is None:
        say()
        say(game.render(state))
        if state.turn == human:
            move = ask_move(game, state, stdin, out)
            if move is None:
                say("\nGame abandoned.")
                return 0
            state.push(move)
        else:
            limit = SearchLimit(depth=args.depth) if args.depth else SearchLimit.seconds(seconds)
            result = engine.choose(state, limit)
            say(thinking_line(game, state, result))
            state.push(result.move)
    say()
    say(game.render(state))
    verdict = result_text(state)
    if state.winner == human:
        verdict += ": you win!"
    elif state.winner == 1 - human:
        verdict += ": the engine wins."
    say(f"Game over, {verdict}")
    return 0


def ask_move(game, state, stdin, out):
    """Read lines until one is a legal move; None on 'quit' or end of input."""
    legal = set(state.legal_moves())
    while True:
        print(f"Your move ({SYMBOLS[state.turn]}), e.g. {game.move_example}: ", end="", file=out, flush=True)
        line = stdin.readline()
        if not line:
            return None
        text = line.strip()
        if text.lower() in ("quit", "exit", "q"):
            return None
        if not text:
            continue
        if text.lower() in ("moves", "help", "?"):
            print("Legal moves: " + ", ".join(sorted(game.format_move(state, m) for m in legal)), file=out)
            continue
        try:
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
