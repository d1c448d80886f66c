"""``fcanalyze manifest DIR`` and ``fcanalyze daily``: the games' manifest and the day's deal."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import click

from fcanalyze import games
from fcanalyze.cli.errors import BadInput
from fcanalyze.cli.guard import Command
from fcanalyze.cli.inputs import output_file
from fcanalyze.cli.options import echo_json, format_option


@click.command(cls=Command)
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the manifest (default DIRECTORY/manifest.json).",
)
def manifest(directory: Path, output: Path | None) -> None:
    """Write the JSON manifest the games consume from a complete ``analyze`` run in DIRECTORY (or one
    whose every deal has its row, a --redo-undecided pass under way: the classes as the tables stand).

    It lists, for easy, normal and hard, the sorted solvable deals of that class, the counts, the
    unsolvable and undecided deals (never in a class list), the rules, how the daily deal is picked and
    the provenance (range, tool version, date, table checksums). Schema: README, "The manifest"."""
    if output is not None:
        output_file(output, "--output")
    try:
        path, doc = games.write(directory, output)
    except ValueError as e:
        raise BadInput(str(e)) from None
    counts = ", ".join(f"{k} {v:,}" for k, v in doc["counts"].items())
    click.echo(f"{path}: deals {doc['range']}: {counts}")


def _date(ctx: click.Context, param: click.Parameter, value: str | None) -> dt.date:
    if value is None:
        return games.today_in_japan()
    try:
        if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
            raise ValueError
        return dt.date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date (expected YYYY-MM-DD)") from None


#: Where the committed manifest sits in the repository.
DEFAULT_MANIFEST = Path("results", "32k", "manifest.json")


def default_manifest() -> Path:
    """The committed manifest of the fcanalyze repository: the one this package runs from, else the
    one the current directory is in (found upward, as git finds its repository)."""
    package_root = Path(__file__).resolve().parents[2]
    here = Path.cwd().resolve()
    for root in (package_root, here, *here.parents):
        if (root / DEFAULT_MANIFEST).is_file():
            return root / DEFAULT_MANIFEST
    raise BadInput(
        f"no {DEFAULT_MANIFEST} in the fcanalyze repository (this installation is not in one, nor is "
        "the current directory); give --manifest FILE"
    )


@click.command(cls=Command)
@click.option(
    "--manifest",
    "manifest_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The manifest to pick from (default: results/32k/manifest.json of the fcanalyze repository: "
    "the checkout this command runs from, else the one holding the current directory).",
)
@click.option(
    "--date",
    callback=_date,
    default=None,
    metavar="YYYY-MM-DD",
    help="The day (default: today in Japan, UTC+9, as the games count days).",
)
@click.option(
    "--class",
    "cls",
    type=click.Choice(["any", "easy", "normal", "hard"]),
    default="any",
    show_default=True,
    help="Pick among the deals of this class.",
)
@format_option
def daily(manifest_path: Path | None, date: dt.date, cls: str, fmt: str) -> None:
    """Print the day's deal: a deterministic pick from a manifest, the same for everyone on that date
    and never an unsolvable or undecided deal.

    The pick: i = first 8 bytes (big-endian) of sha256("fcanalyze-daily/1 DATE CLASS") modulo the number
    of deals of the class (all three classes merged for "any"); the deal is the i-th of the sorted list."""
    manifest_path = manifest_path or default_manifest()
    try:
        doc = games.load(manifest_path)
        deal = games.daily(doc, date, cls)
    except ValueError as e:
        raise BadInput(str(e)) from None
    if fmt == "json":
        echo_json({"date": date.isoformat(), "class": cls, "deal": deal, "range": doc["range"]})
    else:
        click.echo(deal)
