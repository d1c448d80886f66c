"""``fcanalyze verify-unsolvable [RANGE]``: prove the known unsolvable list over a range, 4 free cells."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from fcanalyze import published, records, runner, shards
from fcanalyze.cli.errors import EXIT_OK, BadInput
from fcanalyze.cli.guard import Command
from fcanalyze.cli.inputs import MAX_LIST_BYTES, output_directory, read_text
from fcanalyze.cli.options import (
    autoplay_option,
    budget_options,
    echo_json,
    engine_options,
    format_option,
    open_engine,
    output_options,
    shorten_option,
)
from fcanalyze.cli.progress import Progress
from fcanalyze.deals import in_spans, parse_deal_number, parse_range, range_size
from fcanalyze.jobs import verify as verify_job


def read_expected(path: Path) -> list[int]:
    """Deal numbers, one per line (``#`` starts a comment)."""
    text = read_text(path, MAX_LIST_BYTES)
    deals = []
    for number, line in enumerate(text.splitlines(), start=1):
        item = line.split("#", 1)[0].strip()
        if item:
            try:
                deals.append(parse_deal_number(item))
            except ValueError as e:
                raise BadInput(f"{path}, line {number}: {e}") from None
    return sorted(set(deals))


@click.command("verify-unsolvable", cls=Command)
@click.argument("range_text", metavar="[RANGE]", default="1-1000000")
@click.option(
    "--expected",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="File of deal numbers expected to be unsolvable (default: the published list, SPEC §6).",
)
@budget_options
@engine_options
@output_options
@shorten_option(0)
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@autoplay_option
@format_option
def verify_unsolvable(
    range_text: str,
    expected: Path | None,
    max_positions: int | None,
    time_limit_ms: int | None,
    engine: str,
    workers: int | None,
    scheduler: str | None,
    out: Path,
    shard_size: int,
    shorten_positions: int,
    quiet: bool,
    autoplay: str,
    fmt: str,
) -> int:
    """Solve every deal of RANGE (default 1-1000000) with 4 free cells, prove unsolvable every deal the
    solver cannot solve, and compare the proven set with the known list (SPEC §6: 11982, 146692, 186216,
    455889, 495505, 512118, 517776, 781948) or --expected.

    Prints the agreement and every deal solved although listed, unsolvable although not listed, or
    undecided. Exit code 0 on full agreement, 1 on any disagreement or undecided deal, 2 bad input.
    Tables (searches, unsolvable) and run.json go to --out, with the rules they were made with;
    re-running the same command resumes. --autoplay max searches under macroxue's rules (the known list
    is that of SPEC §2's rules: give --expected for another)."""
    try:
        spans = parse_range(range_text)
        config = verify_job.config(
            max_positions or verify_job.config()["max_positions"],
            time_limit_ms,
            shard_size,
            autoplay,
            shorten_positions=shorten_positions,
        )
    except ValueError as e:
        raise BadInput(str(e)) from None
    listed = read_expected(expected) if expected else published.known_unsolvable_in(spans)
    output_directory(out)
    listed = [d for d in listed if in_spans(d, spans)]
    progress = Progress(range_size(spans), verify_job.COUNTERS, quiet, "verify", max_cells=4)
    try:
        with open_engine(engine, workers, scheduler) as eng:
            result = runner.run(
                "verify",
                spans,
                out,
                eng,
                config,
                on_progress=progress,
                on_skip=progress.skipped,
                watch=progress,
            )
    except ValueError as e:
        raise BadInput(str(e)) from None
    finally:
        progress.close()
    report = compare(out, result, listed, range_size(spans))
    if fmt == "json":
        echo_json(report)
    else:
        echo_report(report)
    return EXIT_OK if report["agree"] else 1


def compare(out: Path, result: runner.RunResult, listed: list[int], deals: int) -> dict[str, Any]:
    """The report: the run's counts, and its proven set against the `listed` deals."""
    searches = shards.read_table(out, "searches")
    proven = sorted(deal for deal, _ in records.deals_with(searches, "unsolvable"))
    undecided = sorted(deal for deal, _ in records.deals_with(searches, "undecided"))
    solved_but_listed = sorted(set(listed) - set(proven) - set(undecided))
    unlisted = sorted(set(proven) - set(listed))
    return {
        "range": result.run["range"],
        "autoplay": result.run["config"].get("autoplay", "safe"),
        "deals": deals,
        "counts": {k: result.counts.get(k, 0) for k in verify_job.COUNTERS},
        "expected": listed,
        "proven_unsolvable": proven,
        "solved_although_listed": solved_but_listed,
        "unsolvable_although_not_listed": unlisted,
        "undecided": undecided,
        "agree": not (solved_but_listed or unlisted or undecided),
    }


def echo_report(report: dict[str, Any]) -> None:
    """Print the report as text: the counts, the proven deals, and the agreement or each disagreement."""
    c = report["counts"]
    rules = "" if report["autoplay"] == "safe" else f", {report['autoplay']} autoplay"
    click.echo(
        f"deals {report['range']}, 4 free cells{rules}: {c['solved']:,} solved, {c['unsolvable']:,} proven "
        f"unsolvable, {c['undecided']:,} undecided"
    )
    click.echo(f"proven unsolvable: {', '.join(map(str, report['proven_unsolvable'])) or 'none'}")
    if report["agree"]:
        click.echo(f"agreement: the proven set is exactly the {len(report['expected'])} listed deal(s)")
        return
    for label, key in (
        ("solved although listed", "solved_although_listed"),
        ("unsolvable although not listed", "unsolvable_although_not_listed"),
        ("undecided", "undecided"),
    ):
        if report[key]:
            click.echo(f"DISAGREEMENT: {label}: {', '.join(map(str, report[key]))}")
