"""``fcanalyze deal N``: print a deal's layout."""

from __future__ import annotations

import click

from fcanalyze.board import format_board
from fcanalyze.cli.errors import BadInput
from fcanalyze.cli.guard import Command
from fcanalyze.cli.options import echo_json, format_option
from fcanalyze.deals import deal_layout, parse_deal_number


@click.command(cls=Command)
@click.argument("number")
@format_option
def deal(number: str, fmt: str) -> None:
    """Print Microsoft deal NUMBER (1 to 8,589,934,591): 8 columns, buried card first.

    The text form is Freecell Solver's board format (``fcanalyze deal 1 | fc-solve``)."""
    try:
        n = parse_deal_number(number)
    except ValueError as e:
        raise BadInput(str(e)) from None
    layout = deal_layout(n)
    if fmt == "json":
        echo_json({"deal": n, "columns": layout["columns"]})
    else:
        click.echo(format_board(layout), nl=False)
