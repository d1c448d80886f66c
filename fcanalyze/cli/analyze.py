"""``fcanalyze analyze RANGE``: exact minimum free cells and class for every deal of a range."""

from __future__ import annotations

import os
from pathlib import Path

import click

from fcanalyze import _core, runner
from fcanalyze.cli.errors import BadInput
from fcanalyze.cli.guard import Command
from fcanalyze.cli.inputs import output_directory
from fcanalyze.cli.options import (
    CELLS,
    MEMORY_MB,
    PARALLEL,
    U64_MAX,
    Bounded,
    budget_options,
    engine_options,
    open_engine,
    output_options,
    plural,
    shorten_option,
)
from fcanalyze.cli.progress import Progress
from fcanalyze.deals import parse_range, range_size
from fcanalyze.jobs import analyze as analyze_job
from fcanalyze.records import CLASSES
from fcanalyze.solve import DEFAULT_MAX_MEMORY_MB, DEFAULT_MAX_POSITIONS


def workers_for_memory(max_memory_mb: int, cores: int | None = None, total_mb: int | None = None) -> int:
    """The default number of workers: every core, but no more than the machine's memory holds at one
    `--max-memory` proof (plus 1 GiB) each, so that simultaneous large proofs do not run it out. `cores`
    and `total_mb` default to this machine's."""
    cores = cores or os.cpu_count() or 1
    if total_mb is None:
        try:
            total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
        except (ValueError, OSError, AttributeError):
            return cores
    return max(1, min(cores, total_mb // (max_memory_mb + 1024)))


@click.command(cls=Command)
@click.argument("range_text", metavar="RANGE")
@click.option(
    "--max-cells",
    type=CELLS,
    default=4,
    show_default=True,
    help="Search up to this many free cells (5 or more classifies deals such as 11982).",
)
@budget_options
@engine_options
@output_options
@click.option(
    "--max-memory",
    "max_memory_mb",
    type=MEMORY_MB,
    default=DEFAULT_MAX_MEMORY_MB,
    show_default=True,
    metavar="MB",
    help="Memory of one proof, per worker; past it a longer heuristic search, then the layered proof "
    "(its files in OUT/journal/layered, resumable; in TMPDIR on a worker that cannot see OUT) take "
    "over; undecided only if that runs out too.",
)
@click.option(
    "--redo-undecided",
    is_flag=True,
    help="Search again the deals a budget left undecided in finished shards (e.g. after an upgrade), "
    "with the same options or a larger --max-positions / --time-limit / --max-memory / "
    "--wide-beam-positions; the other deals are kept.",
)
@click.option(
    "--wide-beam-positions",
    type=Bounded(0, U64_MAX),
    default=_core.WIDE_BEAM_POSITIONS,
    show_default=True,
    metavar="N",
    help="Before a proof past the lean prover's cap, beams 100,000, 1,000,000 and 3,000,000 wide look "
    "for a line within 20, 32 and 40 million positions: those that fit within N in all, in order "
    "(92000000 for all three, for deals already known to be giants: then none waits for a resumable "
    "proof's first billion positions).",
)
@click.option(
    "--threads",
    type=PARALLEL,
    default=None,
    help="Threads of each layered proof, sharing its --max-memory (default: the cores each worker has "
    "to itself, and once no shard is left to start, those of the workers done; no result depends on "
    "them).",
)
@click.option(
    "--solutions/--no-solutions",
    default=True,
    show_default=True,
    help="Store each deal's solution in the deals table; without, only its length (each is replayed all "
    "the same; `fcanalyze solve DEAL --cells N` prints one). For tables too large to keep the moves.",
)
@click.option(
    "--first",
    "first_text",
    metavar="DEALS",
    help="Search these deals of RANGE (e.g. 204545,266829) before the others, e.g. those a larger "
    "budget will most likely decide soon; no row depends on the order.",
)
@click.option(
    "--last",
    "last_text",
    metavar="DEALS",
    help="Search these deals of RANGE after all the others, e.g. a giant proof that would hold them back.",
)
@shorten_option(_core.CLASSIFY_SHORTEN_POSITIONS)
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary line.")
def analyze(
    range_text: str,
    max_cells: int,
    max_positions: int | None,
    time_limit_ms: int | None,
    engine: str,
    workers: int | None,
    scheduler: str | None,
    out: Path,
    shard_size: int,
    max_memory_mb: int,
    redo_undecided: bool,
    wide_beam_positions: int,
    threads: int | None,
    solutions: bool,
    shorten_positions: int,
    first_text: str | None,
    last_text: str | None,
    quiet: bool,
) -> None:
    """Find the exact minimum number of free cells of every deal in RANGE (e.g. 1-32000, 617,
    1-100,200-300) and its class: easy (0-1 cells), normal (2), hard (3-4), unsolvable (with 4).

    Short solves find the fewest cells they win with, then an exhaustive proof decides one cell fewer,
    so each deal ends with a solution at its minimum and a proof that one cell fewer is unsolvable; a
    search that exhausts its budget leaves honest bounds (class undecided when they straddle two
    classes). Writes the deals, searches and unsolvable Parquet
    tables and run.json to --out, shard by shard; re-running the same command resumes (an unfinished
    shard from its last finished deal). Without
    --workers, every core works, as far as the memory holds one --max-memory proof (plus 1 GiB) per worker.
    """
    try:
        spans = parse_range(range_text)
        first = _deals("--first", first_text)
        last = _deals("--last", last_text)
        config = analyze_job.config(
            max_cells,
            max_positions or DEFAULT_MAX_POSITIONS,
            time_limit_ms,
            shard_size,
            max_memory_mb,
            solutions,
            shorten_positions=shorten_positions,
            wide_beam_positions=wide_beam_positions,
        )
    except ValueError as e:
        raise BadInput(str(e)) from None
    output_directory(out)
    if workers is None and scheduler is None:
        workers = workers_for_memory(max_memory_mb)
    progress = Progress(range_size(spans), CLASSES, quiet, "analyze", max_cells=max_cells)
    try:
        with open_engine(engine, workers, scheduler) as eng:
            if threads:
                eng.threads_per_task, eng.lend_cores = threads, False
            result = runner.run(
                "analyze",
                spans,
                out,
                eng,
                config,
                on_progress=progress,
                on_skip=progress.skipped,
                redo_undecided=redo_undecided,
                watch=progress,
                first=first,
                last=last,
            )
    except ValueError as e:
        raise BadInput(str(e)) from None
    finally:
        progress.close()
    if not quiet:
        counts = ", ".join(f"{k} {result.counts.get(k, 0):,}" for k in CLASSES)
        click.echo(
            f"{plural(range_size(spans), 'deal')} -> {out}: {counts} "
            f"({plural(result.computed, 'shard')} computed, {result.skipped} already done)"
        )


def _deals(option: str, text: str | None) -> list[tuple[int, int]]:
    """The deals of an ordering option (`--first`, `--last`), as spans; none without the option."""
    if text is None:
        return []
    try:
        return parse_range(text)
    except ValueError as e:
        raise ValueError(f"{option}: {e}") from None
