"""``fcanalyze report DIR``: the run in DIR as one self-contained HTML page with charts."""

from __future__ import annotations

from pathlib import Path

import click

from fcanalyze.cli.errors import BadInput


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the page.  [default: DIRECTORY/report.html]",
)
@click.option(
    "--png",
    "png_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also write each chart as a PNG file in this directory.",
)
def report(directory: Path, output: Path | None, png_dir: Path | None) -> None:
    """Write a report of the run in DIRECTORY (from analyze or verify-unsolvable): one HTML file that
    opens without a network, with the classes and minimum cells (or outcomes) beside the published
    figures, proof sizes, search time per deal and the share of the heaviest deals, solution lengths, the
    heaviest deals, the unsolvable list and the run's configuration and provenance."""
    from fcanalyze import report as report_mod  # matplotlib is imported only by this command

    try:
        done = report_mod.build(directory, output, png_dir)
    except ValueError as e:
        raise BadInput(str(e)) from None
    click.echo(f"{done.path}: {len(done.charts)} charts, {done.bytes / 1024:,.0f} KB")
    if done.pngs:
        click.echo(f"{png_dir}: {', '.join(p.name for p in done.pngs)}")
