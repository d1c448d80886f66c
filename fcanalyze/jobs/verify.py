"""The ``verify`` job: every deal solved with 4 free cells, or searched to the end when a fast attempt
leaves it open, in the ``searches`` table, and the ``unsolvable`` table of the deals proven unsolvable.
A shard resumes whole (the job journals nothing)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from fcanalyze import _core, records, shards
from fcanalyze.engines import Report, Task
from fcanalyze.jobs import CORE_MAX, MAX_SHARD_SIZE, Job, check_bound, task_deals

COUNTERS = ("solved", "unsolvable", "undecided")
CHUNK = 100  # deals per core call: small enough for a lively progress bar
#: Positions budget of the fast 4-cell attempt; deals it leaves open go to the prover.
SOLVE_POSITIONS = 200_000


def config(
    max_positions: int = 2**32 - 2,
    time_limit_ms: int | None = None,
    shard_size: int = shards.DEFAULT_SIZE,
    solve_positions: int = SOLVE_POSITIONS,
) -> dict[str, Any]:
    """The configuration of a ``verify`` run: the fast attempt's budget, then the prover's."""
    check_bound("--max-positions", max_positions, 1, CORE_MAX)
    check_bound("--time-limit", time_limit_ms, 1, CORE_MAX)
    check_bound("--shard-size", shard_size, 1, MAX_SHARD_SIZE)
    return {
        "solve_positions": min(solve_positions, max_positions),
        "max_positions": max_positions,
        "time_limit_ms": time_limit_ms,
        "shard_size": shard_size,
    }


def _search_chunk(deals: list[int], cfg: dict[str, Any]) -> list[records.SearchRow]:
    """The 4-cell search rows of `deals`: the fast attempt for all, then, for each deal it leaves open,
    the complete best-first search to the end (a proof, or a solution of sensible length)."""
    r = _core.solve_deals(deals, 4, max_positions=cfg["solve_positions"])
    rows = []
    for j, deal in enumerate(deals):
        outcome, positions, moves = r["outcome"][j], r["positions"][j], r["moves"][j]
        elapsed, exhausted = r["elapsed_ms"][j], None
        if outcome == "undecided":
            p = _core.solve(deal, 4, max_positions=cfg["max_positions"], time_limit_ms=cfg["time_limit_ms"])
            outcome, positions, moves, exhausted = (
                p["outcome"],
                p["positions"],
                p["move_count"],
                p["exhausted"],
            )
            elapsed += p["elapsed_ms"]
        rows.append(records.search_row(deal, 4, outcome, positions, moves, elapsed, exhausted))
    return rows


def run_task(task: Task, report: Report) -> dict[str, Any]:
    """Solve every deal of one shard with 4 cells; search to the end each one the fast budget leaves open."""
    cfg = task.config
    rows: list[records.SearchRow] = []
    counts: Counter[str] = Counter()
    deals = task_deals(task)
    for i in range(0, len(deals), CHUNK):
        chunk_rows = _search_chunk(deals[i : i + CHUNK], cfg)
        chunk_counts = Counter(row["outcome"] for row in chunk_rows)
        rows += chunk_rows
        counts.update(chunk_counts)
        report(len(chunk_rows), dict(chunk_counts))
    return {"tables": {"searches": records.to_table("searches", rows, cfg)}, "counts": dict(counts)}


def finish(out: Path, run: dict[str, Any]) -> dict[str, pa.Table]:
    """The ``unsolvable`` table: the deals proven unsolvable, with the size of each proof."""
    searches = shards.read_table(out, "searches")
    bad = searches.filter(pc.equal(searches["outcome"], "unsolvable"))
    rows = [
        records.unsolvable_row(deal, positions, None)
        for deal, positions in zip(bad["deal"].to_pylist(), bad["positions"].to_pylist(), strict=True)
    ]
    return {"unsolvable": records.to_table("unsolvable", rows, run["config"])}


JOB = Job(
    name="verify",
    shard_tables=("searches",),
    counters=COUNTERS,
    run_task=run_task,
    finish=finish,
)
