"""The ``verify`` job: every deal searched with 4 free cells to the end (solved, or proven unsolvable,
unless a budget runs out) in the ``searches`` table, and the ``unsolvable`` table of the deals proven
unsolvable. A shard resumes whole (the job journals nothing).

Each block of deals is one call into the core, which returns columns, and its rows go into the table
as columns: no Python object per deal. With ``--shorten-positions N``, each solver's line is shortened
in the core (``shorten.rs``: narrow beams around the line, storing at most N positions a line, recorded
in the configuration so that a resumed run shortens alike) and the table's ``moves`` are the short
line's; ``positions`` and ``elapsed_ms`` stay the search's. Every line is replayed by the core's
independent replay (``replay.rs``, which shares nothing with the search's move generator) before it is
counted; this job keeps no line, so it has no line to replay again in Python.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa

from fcanalyze import _core, records, shards
from fcanalyze.engines import Report, Task
from fcanalyze.jobs import CORE_MAX, MAX_SHARD_SIZE, Job, check_bound, task_deals

COUNTERS = ("solved", "unsolvable", "undecided")
CHUNK = 100  # deals per core call: small enough for a lively progress bar
CELLS = 4


def config(
    max_positions: int = 2**32 - 2,
    time_limit_ms: int | None = None,
    shard_size: int = shards.DEFAULT_SIZE,
    autoplay: str = "safe",
    shorten_width: int = _core.SHORTEN_WIDTH,
    shorten_positions: int = 0,
) -> dict[str, Any]:
    """The configuration of a ``verify`` run: the budgets of each deal's search, its rules of automatic
    moves (``"safe"`` or ``"max"``) and the budget of the shortening of each line (the beams' width
    and the positions they store a line; 0, the default, keeps the lines as the solver found them)."""
    if autoplay not in ("safe", "max"):
        raise ValueError(f"--autoplay {autoplay!r} is not one of 'safe', 'max'")
    check_bound("--max-positions", max_positions, 1, CORE_MAX)
    check_bound("--time-limit", time_limit_ms, 1, CORE_MAX)
    check_bound("--shard-size", shard_size, 1, MAX_SHARD_SIZE)
    check_bound("shorten_width", shorten_width, 1, CORE_MAX)
    check_bound("--shorten-positions", shorten_positions, 0, CORE_MAX)
    return {
        "max_positions": max_positions,
        "time_limit_ms": time_limit_ms,
        "shard_size": shard_size,
        "autoplay": autoplay,
        "shorten_width": shorten_width,
        "shorten_positions": shorten_positions,
    }


def _search_chunk(deals: list[int], cfg: dict[str, Any]) -> dict[str, list[Any]]:
    """The core's columns of the 4-cell searches of `deals`: the solver's complete best-first search,
    which ends in a solution (shortened when the configuration gives the shortening positions) or,
    having stored every reachable position, in a proof."""
    shorten = cfg["shorten_positions"] > 0
    return _core.solve_deals(
        deals,
        CELLS,
        max_positions=cfg["max_positions"],
        time_limit_ms=cfg["time_limit_ms"],
        solutions=False,
        autoplay=cfg.get("autoplay", "safe"),
        shorten_width=cfg["shorten_width"] if shorten else None,
        shorten_positions=cfg["shorten_positions"] if shorten else None,
    )


def run_task(task: Task, report: Report) -> dict[str, Any]:
    """Search every deal of one shard with 4 cells to the end."""
    cfg = task.config
    tables: list[pa.Table] = []
    counts: Counter[str] = Counter()
    deals = task_deals(task)
    for i in range(0, len(deals), CHUNK):
        cols = _search_chunk(deals[i : i + CHUNK], cfg)
        chunk_counts = Counter(cols["outcome"])
        tables.append(records.searches_table(CELLS, cols, cfg))
        counts.update(chunk_counts)
        report(len(cols["deal"]), dict(chunk_counts))
    searches = pa.concat_tables(tables) if tables else records.to_table("searches", [], cfg)
    return {"tables": {"searches": searches}, "counts": dict(counts)}


def finish(out: Path, run: dict[str, Any]) -> dict[str, pa.Table]:
    """The ``unsolvable`` table: the deals proven unsolvable, with the size of each proof."""
    searches = shards.read_table(out, "searches")
    rows = [
        records.unsolvable_row(deal, positions, None)
        for deal, positions in records.deals_with(searches, "unsolvable")
    ]
    return {"unsolvable": records.to_table("unsolvable", rows, run["config"])}


JOB = Job(
    name="verify",
    shard_tables=("searches",),
    counters=COUNTERS,
    run_task=run_task,
    finish=finish,
)
