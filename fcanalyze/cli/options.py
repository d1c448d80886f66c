"""Options and helpers shared by several commands."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from typing import Any, TypeVar

import click

from fcanalyze.cli.errors import BadInput

F = TypeVar("F", bound=Callable[..., Any])


def format_option(f: F) -> F:
    """``--format text|json``."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", "json"]),
        default="text",
        show_default=True,
        help="Human-readable text or machine-readable JSON.",
    )(f)


def cells_option(default: int = 4, help: str = "Number of free cells (0-8).") -> Callable[[F], F]:
    """``--cells K``, checked to be 0..8."""
    return click.option("--cells", type=click.IntRange(0, 8), default=default, show_default=True, help=help)


def budget_options(f: F) -> F:
    """``--max-positions`` and ``--time-limit``."""
    f = click.option(
        "--time-limit",
        "time_limit_ms",
        type=click.IntRange(min=1),
        default=None,
        metavar="MS",
        help="Stop after this many milliseconds (the answer is then undecided).",
    )(f)
    return click.option(
        "--max-positions",
        type=click.IntRange(min=1),
        default=None,
        metavar="N",
        help="Stop after storing this many positions (the answer is then undecided).",
    )(f)


def echo_notation(notation: str) -> None:
    """Print a line of moves in standard notation, wrapped at 78 columns."""
    click.echo(textwrap.fill(notation, width=78, break_on_hyphens=False))


def echo_json(obj: Any) -> None:
    """Print one JSON document."""
    click.echo(json.dumps(obj, indent=None, separators=(",", ":")))


def engine_options(f: F) -> F:
    """``--engine``, ``--workers`` and ``--scheduler``."""
    f = click.option(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="Dask scheduler address (tcp://HOST:PORT); without it --engine dask starts a local cluster.",
    )(f)
    f = click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=None,
        help="Worker processes (default: all cores).",
    )(f)
    return click.option(
        "--engine",
        type=click.Choice(["local", "dask"]),
        default="local",
        show_default=True,
        help="Where shards are computed: local worker processes, or a Dask cluster.",
    )(f)


def open_engine(name: str, workers: int | None, scheduler: str | None):
    """The engine for the command line's options; a missing optional dependency is a one-line error."""
    from fcanalyze.engines import get_engine

    try:
        return get_engine(name, workers=workers, scheduler=scheduler)
    except (ImportError, ValueError) as e:
        raise BadInput(str(e)) from None
