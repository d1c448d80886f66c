"""``fcanalyze solve``: solve or prove one deal or position."""

from __future__ import annotations

import click

from fcanalyze.cli.errors import EXIT_OK, EXIT_UNDECIDED, EXIT_UNSOLVABLE, BadInput
from fcanalyze.cli.guard import Command
from fcanalyze.cli.inputs import load_source
from fcanalyze.cli.options import (
    MEMORY_MB,
    PARALLEL,
    autoplay_option,
    budget_options,
    cells_option,
    echo_json,
    echo_notation,
    format_option,
    plural,
)
from fcanalyze.solve import DEFAULT_MAX_MEMORY_MB, Autoplay, Result
from fcanalyze.solve import solve as solve_deal


def describe(r: Result, what: str) -> str:
    """One summary line for a result (the rules named when they are not the default)."""
    rules = "" if r.autoplay == "safe" else f", {r.autoplay} autoplay"
    head = f"{what}, {r.cells} free cell{'s' if r.cells != 1 else ''}{rules}"
    stats = f"{plural(r.positions, 'position')} examined, {r.elapsed_ms:,.1f} ms"
    if r.outcome == "solved" and r.lower_bound is not None:
        if r.shortest:
            return f"{head}: solved in {plural(r.move_count, 'move')}, a shortest line, proven ({stats})"
        return (
            f"{head}: solved in {plural(r.move_count, 'move')}; every line takes at least"
            f" {plural(r.lower_bound, 'move')}, all the budget proved ({stats})"
        )
    if r.outcome == "solved":
        return f"{head}: solved in {plural(r.move_count, 'move')} ({stats})"
    if r.outcome == "unsolvable":
        return f"{head}: unsolvable, proven ({stats}: every reachable position, none won)"
    return f"{head}: undecided, the {r.exhausted} budget ran out ({stats})"


@click.command("solve", cls=Command)
@click.argument("source")
@cells_option()
@budget_options
@click.option(
    "--prove",
    is_flag=True,
    help="Search to the end: no position budget unless --max-positions is given (a proof or a solution).",
)
@click.option(
    "--max-memory",
    "max_memory_mb",
    type=MEMORY_MB,
    default=DEFAULT_MAX_MEMORY_MB,
    show_default=True,
    metavar="MB",
    help="Memory of a --prove search; past it the layered proof takes over (undecided if it runs out too).",
)
@click.option(
    "--threads",
    type=PARALLEL,
    default=None,
    help="Threads of a --prove search (default: one per core; a proof's count does not depend on them).",
)
@click.option(
    "--short",
    is_flag=True,
    help="Look for a short winning line (moves as players count them) instead; with --prove, a shortest one.",
)
@autoplay_option
@format_option
def solve_command(
    source: str,
    cells: int,
    max_positions: int | None,
    time_limit_ms: int | None,
    prove: bool,
    max_memory_mb: int,
    threads: int | None,
    short: bool,
    autoplay: Autoplay,  # click.Choice made sure
    fmt: str,
) -> int:
    """Solve SOURCE: a deal number, or a board file in Freecell Solver's format (``-`` reads stdin; a
    file starting with ``{`` is read as a JSON position).

    Prints the outcome (solved, unsolvable or undecided), the positions examined and the solution in
    standard notation (columns 1-8, free cells a-g, foundations h; automatic moves not written). The
    JSON form lists every move, automatic ones marked. Every solution printed has been replayed by the
    independent checker. --autoplay max plays under macroxue's rules: every card that fits its
    foundation goes home at once and no foundation move is written. --short looks for a short line
    within the budget; its "unsolvable" is a finished search too. --short --prove goes on until no
    shorter line can exist (within --max-positions, by default what --max-memory holds) and says whether
    the line is proven a shortest one, or how many moves every line takes at least. Exit code: 0
    solved, 1 unsolvable (a finished proof), 3 undecided (a budget ran out), 2 bad input.
    """
    src, what = load_source(source)
    try:
        r = solve_deal(
            src,
            cells,
            max_positions=max_positions,
            time_limit_ms=time_limit_ms,
            prove=prove,
            max_memory_mb=max_memory_mb,
            threads=threads,
            autoplay=autoplay,
            short=short,
        )
    except ValueError as e:
        raise BadInput(f"{what}: {e}" if isinstance(src, dict) else str(e)) from None
    if fmt == "json":
        doc = r.to_json()
        if isinstance(src, dict):
            doc["position"] = what
        echo_json(doc)
    else:
        click.echo(describe(r, what))
        if r.outcome == "solved" and r.notation:
            echo_notation(r.notation)
    return {"solved": EXIT_OK, "unsolvable": EXIT_UNSOLVABLE}.get(r.outcome, EXIT_UNDECIDED)
