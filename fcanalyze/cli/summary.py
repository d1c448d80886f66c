"""``fcanalyze summary DIR``: counts, distributions and the published figures for a run."""

from __future__ import annotations

from pathlib import Path

import click

from fcanalyze import summary as summary_mod
from fcanalyze.cli.errors import BadInput
from fcanalyze.cli.guard import Command
from fcanalyze.cli.options import echo_json, format_option


@click.command(cls=Command)
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@format_option
def summary(directory: Path, fmt: str) -> None:
    """Summarise the run in DIRECTORY (from analyze or verify-unsolvable): counts per class and per cell
    count, positions and time distributions, and the comparison with the published figures (SPEC §6)
    for the range analysed. Text is Markdown."""
    try:
        stats = summary_mod.summarize(directory)
    except ValueError as e:
        raise BadInput(str(e)) from None
    if fmt == "json":
        echo_json(stats)
    else:
        click.echo(summary_mod.render(stats), nl=False)
