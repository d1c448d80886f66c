"""Options and helpers shared by several commands."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from fcanalyze import shards
from fcanalyze.cli.errors import BadInput

F = TypeVar("F", bound=Callable[..., Any])

#: The core counts positions and milliseconds in 64 bits.
U64_MAX = 2**64 - 1
#: The core counts a proof's memory in bytes, in 64 bits: MiB << 20 must fit.
MEMORY_MB_MAX = 2**44 - 1
#: Workers and threads: more than any machine has cores (each is a process or a thread).
PARALLEL_MAX = 1024


class Bounded(click.IntRange):
    """A whole number from `lo` to `hi`, for every number option: plain digits (``_`` may group them),
    and one message for anything else, however long or odd the text (a value past 64 bits is refused
    here, before a command writes anything, not by the core as an OverflowError)."""

    def __init__(self, lo: int, hi: int):
        super().__init__(lo, hi)
        self.lo, self.hi = lo, hi

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        expected = f"a whole number from {self.lo:,} to {self.hi:,}"
        if isinstance(value, int) and not isinstance(value, bool):
            n: int | None = value
        else:
            text = str(value).strip()
            digits = text.replace("_", "")
            if not re.fullmatch(r"[+-]?[0-9]+", digits):
                self.fail(f"{text!r} is not a whole number (expected {expected})", param, ctx)
            # Past 40 digits the number is out of every range: no need to convert it (or show it whole).
            n = int(digits) if len(digits.lstrip("+-").lstrip("0")) <= 40 else None
            value = text
        if n is None or not self.lo <= n <= self.hi:
            self.fail(f"{value} is out of range (expected {expected})", param, ctx)
        return n


#: --cells and --max-cells.
CELLS = Bounded(0, 8)
#: --max-memory, in MiB.
MEMORY_MB = Bounded(64, MEMORY_MB_MAX)
#: --workers and --threads.
PARALLEL = Bounded(1, PARALLEL_MAX)
#: --shard-size.
SHARD_SIZE = Bounded(1, 10**7)


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
    return click.option("--cells", type=CELLS, default=default, show_default=True, help=help)


def autoplay_option(f: F) -> F:
    """``--autoplay safe|max``: the rules of automatic moves (SPEC §2's safe rule, or macroxue's)."""
    return click.option(
        "--autoplay",
        type=click.Choice(["safe", "max"]),
        default="safe",
        show_default=True,
        help="Automatic moves: safe (SPEC §2; cards may also go home by hand) or max (every card that fits "
        "goes home at once, none by hand).",
    )(f)


def shorten_option(default: int) -> Callable[[F], F]:
    """``--shorten-positions N``: the positions the shortening of each stored line may store (0: the
    lines as the searches found them)."""
    return click.option(
        "--shorten-positions",
        type=click.IntRange(0),
        default=default,
        show_default=True,
        metavar="N",
        help="Shorten each stored line with narrow beams along it, storing at most N positions a line "
        "(0: the lines as the searches found them, as in runs made before lines were shortened).",
    )


def budget_options(f: F) -> F:
    """``--max-positions`` and ``--time-limit``."""
    f = click.option(
        "--time-limit",
        "time_limit_ms",
        type=Bounded(1, U64_MAX),
        default=None,
        metavar="MS",
        help="Stop after this many milliseconds (the answer is then undecided).",
    )(f)
    return click.option(
        "--max-positions",
        type=Bounded(1, U64_MAX),
        default=None,
        metavar="N",
        help="Stop after storing this many positions (the answer is then undecided).",
    )(f)


def output_options(f: F) -> F:
    """``--out`` and ``--shard-size``: where a range's run writes its shards, and their size."""
    f = click.option(
        "--shard-size",
        type=SHARD_SIZE,
        default=shards.DEFAULT_SIZE,
        show_default=True,
        help="Deals per shard file (fixed, aligned blocks of deal numbers).",
    )(f)
    return click.option(
        "--out",
        type=click.Path(file_okay=False, path_type=Path),
        required=True,
        help="Output directory (created; an interrupted run in it is resumed).",
    )(f)


def plural(n: int, word: str) -> str:
    """``1 position``, ``2 positions``, ``11,982 deals``."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


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
        type=PARALLEL,
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
