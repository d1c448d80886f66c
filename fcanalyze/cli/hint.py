"""``fcanalyze hint`` and ``fcanalyze last-winnable``: what the games' hint and undo buttons ask."""

from __future__ import annotations

import json
from pathlib import Path

import click

from fcanalyze import play
from fcanalyze.cli.errors import EXIT_OK, EXIT_UNDECIDED, EXIT_UNSOLVABLE, BadInput
from fcanalyze.cli.guard import Command
from fcanalyze.cli.inputs import load_source, read_text
from fcanalyze.cli.options import (
    autoplay_option,
    budget_options,
    cells_option,
    echo_json,
    echo_notation,
    format_option,
    plural,
)
from fcanalyze.solve import Autoplay

PLACE = {
    **{f"col{i}": f"column {i}" for i in range(1, 9)},
    **{f"cell{i}": f"free cell {'abcdefgi'[i - 1]}" for i in range(1, 9)},
    "foundation": "the foundation",
}


def moves_option(f):
    f = click.option(
        "--moves-file",
        type=click.Path(dir_okay=False, exists=True, path_type=Path),
        default=None,
        help="Read the moves played from a file (notation or one JSON list of move dicts).",
    )(f)
    return click.option(
        "--moves",
        "moves_text",
        default=None,
        metavar="MOVES",
        help='Moves played so far, in standard notation: "3a 36 a8 2h 36(3)".',
    )(f)


def read_moves(moves_text: str | None, moves_file: Path | None) -> list:
    """The moves played: --moves, or --moves-file (notation, or one JSON list of moves); not both."""
    if moves_file is not None and moves_text is not None:
        raise BadInput("--moves and --moves-file both give the moves played; give one of them")
    if moves_file is None:
        return play.parse_moves(moves_text or "")
    text = read_text(moves_file)
    if not text.lstrip().startswith("["):
        return play.parse_moves(text)
    try:
        moves = json.loads(text)
    except RecursionError:
        raise BadInput(f"{moves_file}: bad JSON: nested too deeply") from None
    except ValueError as e:
        raise BadInput(f"{moves_file}: bad JSON ({e})") from None
    if not isinstance(moves, list):
        raise BadInput(f"{moves_file}: expected one JSON list of moves")
    return moves


def start_position(source: str, cells: int, autoplay: Autoplay) -> play.Position:
    """The settled start of SOURCE under the rules `autoplay` (``"safe"`` or ``"max"``)."""
    src, what = load_source(source)
    try:
        if isinstance(src, dict):
            return play.Position.from_layout(src, cells, autoplay=autoplay)
        return play.Position.from_deal(src, cells, autoplay)
    except ValueError as e:
        raise BadInput(f"{what}: {e}" if isinstance(src, dict) else str(e)) from None


def describe_move(position: play.Position, move: dict) -> str:
    cols, cells = position.layout["columns"], position.layout["cells"]
    src = move["from"]
    card = cols[int(src[3:]) - 1][-move["count"]] if src.startswith("col") else cells[int(src[4:]) - 1]
    what = card if move["count"] == 1 else f"{move['count']} cards from {card}"
    return f"{what} from {PLACE[src]} to {PLACE[move['to']]}"


def budget(max_positions: int | None, time_limit_ms: int | None) -> play.Budget:
    d = play.Budget()
    return play.Budget(max_positions or d.max_positions, time_limit_ms if time_limit_ms else d.time_limit_ms)


@click.command(cls=Command)
@click.argument("source")
@moves_option
@cells_option()
@budget_options
@click.option("--short", is_flag=True, help="Look for a short winning line (slower).")
@autoplay_option
@format_option
def hint(
    source: str,
    moves_text: str | None,
    moves_file: Path | None,
    cells: int,
    max_positions: int | None,
    time_limit_ms: int | None,
    short: bool,
    autoplay: Autoplay,  # click.Choice made sure
    fmt: str,
) -> int:
    """Is the game still winnable, and what is a good next move? SOURCE is a deal number or a position
    file (Freecell Solver's board text, or JSON; ``-`` reads stdin); --moves are the moves played since.

    Prints the next move of a winning line and the whole line. Within the budget (default 2,000,000
    positions and 2,000 ms) the answer is winnable, not winnable (proven) or undecided. --autoplay max
    plays under macroxue's rules (every card that fits goes home at once; a move to the foundations by
    hand is illegal). Exit code: 0 winnable, 1 not winnable, 3 undecided, 2 bad input or an illegal
    move."""
    try:
        position = start_position(source, cells, autoplay).play(read_moves(moves_text, moves_file))
    except ValueError as e:
        raise BadInput(str(e)) from None
    answer = play.hint(position, budget(max_positions, time_limit_ms), short=short)
    if fmt == "json":
        echo_json(answer.to_json())
    elif position.won:
        click.echo("the game is won")
    elif answer.winnable:
        first = answer.notation.split()[0]
        click.echo(
            f"winnable: next move {first} ({describe_move(position, answer.move)}); "
            f"a winning line of {plural(answer.move_count, 'move')}:"
        )
        echo_notation(answer.notation)
    elif answer.winnable is False:
        click.echo(f"not winnable: proven ({plural(answer.positions, 'position')}, every one reachable)")
    else:
        click.echo(f"undecided: the budget ran out after {plural(answer.positions, 'position')}")
    return {True: EXIT_OK, False: EXIT_UNSOLVABLE}.get(answer.winnable, EXIT_UNDECIDED)


@click.command("last-winnable", cls=Command)
@click.argument("source")
@moves_option
@cells_option()
@budget_options
@autoplay_option
@format_option
def last_winnable(
    source: str,
    moves_text: str | None,
    moves_file: Path | None,
    cells: int,
    max_positions: int | None,
    time_limit_ms: int | None,
    autoplay: Autoplay,  # click.Choice made sure
    fmt: str,
) -> int:
    """The way back: the last position of a played game from which a win is still possible, how many
    moves to undo to reach it, and a winning line from there. SOURCE is a deal number or a position file;
    --moves are the moves played.

    Exit code: 0 exact answer, 3 undecided (a search ran out of budget: the answer is the last position
    proven winnable), 2 bad input or an illegal move. --autoplay as for hint."""
    try:
        start = start_position(source, cells, autoplay)
        result = play.last_winnable(
            start, read_moves(moves_text, moves_file), budget(max_positions, time_limit_ms)
        )
    except ValueError as e:
        raise BadInput(str(e)) from None
    if fmt == "json":
        echo_json(result.to_json())
    elif result.index is None:
        click.echo(
            "no position of this game is " + ("winnable (proven)" if result.exact else "proven winnable")
        )
    else:
        undo = result.moves_played - result.index
        played = plural(result.moves_played, "move")
        state = "still winnable" if undo == 0 else f"winnable after undoing {undo} of {played}"
        click.echo(
            f"{state}{'' if result.exact else ' (undecided beyond it: a search ran out of budget)'}; "
            f"a winning line of {plural(result.answer.move_count, 'move')} from there:"
        )
        echo_notation(result.answer.notation)
    return EXIT_OK if result.exact else EXIT_UNDECIDED
