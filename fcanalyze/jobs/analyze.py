"""The ``analyze`` job: the exact minimum number of free cells (or proven bounds) and the class of every
deal, in the ``deals`` and ``searches`` tables, and the ``unsolvable`` table at the end.

Each finished deal is sent to the parent as a resume record (`Record`), which journals it: a shard
stopped half way starts again from its last finished deal.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any, TypedDict

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fcanalyze import _core, records, shards
from fcanalyze.deals import in_spans
from fcanalyze.engines import Report, Task
from fcanalyze.jobs import CORE_MAX, MAX_MEMORY_MB, MAX_SHARD_SIZE, Job, check_bound, task_deals
from fcanalyze.solve import DEFAULT_MAX_MEMORY_MB, DEFAULT_MAX_POSITIONS, classify


class Record(TypedDict):
    """One deal's rows in both tables: what the journal keeps of a finished deal."""

    deal: int
    deals: records.DealRow
    searches: list[records.SearchRow]


def config(
    max_cells: int = 4,
    max_positions: int = DEFAULT_MAX_POSITIONS,
    time_limit_ms: int | None = None,
    shard_size: int = shards.DEFAULT_SIZE,
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB,
    solutions: bool = True,
    shorten_width: int = _core.CLASSIFY_SHORTEN_WIDTH,
    shorten_positions: int = _core.CLASSIFY_SHORTEN_POSITIONS,
    wide_beam_positions: int = _core.WIDE_BEAM_POSITIONS,
) -> dict[str, Any]:
    """The configuration of an ``analyze`` run (everything that changes its tables). Without
    `solutions` the deals table keeps each solution's length but not its moves (every solution is still
    replayed before its length is stored). The line with the least cells is shortened within
    `shorten_width` and `shorten_positions` (positions 0: the line as found). Before a giant proof the
    wide beams that look for a line spend at most `wide_beam_positions` in all (`_core.classify`)."""
    if not 0 <= max_cells <= 8:
        raise ValueError(f"--max-cells {max_cells} is out of range (0 to 8)")
    check_bound("--max-positions", max_positions, 1, CORE_MAX)
    check_bound("--time-limit", time_limit_ms, 1, CORE_MAX)
    check_bound("--shard-size", shard_size, 1, MAX_SHARD_SIZE)
    check_bound("--max-memory", max_memory_mb, 64, MAX_MEMORY_MB)
    check_bound("shorten_width", shorten_width, 1, CORE_MAX)
    check_bound("shorten_positions", shorten_positions, 0, CORE_MAX)
    check_bound("--wide-beam-positions", wide_beam_positions, 0, CORE_MAX)
    return {
        "max_cells": max_cells,
        "max_positions": max_positions,
        "time_limit_ms": time_limit_ms,
        "shard_size": shard_size,
        "max_memory_mb": max_memory_mb,
        "solutions": solutions,
        # The rules of automatic moves: classification is under SPEC §2's (recorded with the tables).
        "autoplay": "safe",
        "shorten_width": shorten_width,
        "shorten_positions": shorten_positions,
        "wide_beam_positions": wide_beam_positions,
    }


def _layered_checkpoint(deal_dir: Path) -> bool:
    """Whether a layered proof of the deal left its checkpoint in `deal_dir` (SCRATCH/DEAL/cells-K/checkpoint,
    the file it saves at each layer), or the position it won at without a line (cells-K/won-at: the
    search for the line goes on from cells-K/line; layered/search.rs)."""
    return any(deal_dir.glob("cells-*/checkpoint")) or any(deal_dir.glob("cells-*/won-at"))


def classify_record(deal: int, cfg: dict[str, Any], scratch: str | None, threads: int = 1) -> Record:
    """Classify `deal`: its rows in both tables, as a resume record. A layered proof of the deal keeps its
    resumable files in ``SCRATCH/DEAL`` (when `scratch` exists; they stay there when it runs out of
    positions or time: `keeps_files`), and runs on `threads` threads."""
    checkpoint = Path(scratch) / str(deal) if scratch and Path(scratch).is_dir() else None
    c = classify(
        deal,
        cfg["max_cells"],
        max_positions=cfg["max_positions"],
        time_limit_ms=cfg["time_limit_ms"],
        max_memory_mb=cfg["max_memory_mb"],
        checkpoint_dir=checkpoint,
        threads=threads,
        shorten_width=cfg["shorten_width"],
        shorten_positions=cfg["shorten_positions"],
        wide_beam_positions=cfg["wide_beam_positions"],
    )
    searches = records.search_rows(c)
    if checkpoint is not None and not keeps_files(checkpoint, searches):
        shutil.rmtree(checkpoint, ignore_errors=True)
    row = records.deal_row(c)
    if not cfg.get("solutions", True):
        row["solution"] = None
    return {"deal": deal, "deals": row, "searches": searches}


def keeps_files(deal_dir: Path, searches: list[records.SearchRow]) -> bool:
    """Whether a deal's layered proof files in `deal_dir` stay after its classification (`searches`, its
    rows): those of a proof that ran out of positions or time, for --redo-undecided to go on from its
    checkpoint. A proof that decided removed its own; one that filled the disk leaves none either, or
    the next deals' proofs would find no disk (deal 194004 of 1-1,000,000 ended undecided for want of
    disk behind the 74 GB of 180949's), and going on from them would need a larger disk anyway."""
    return _layered_checkpoint(deal_dir) and not any(s["exhausted"] == "disk" for s in searches)


def order(task: Task, resumed: dict[int, Any]) -> list[int]:
    """The shard's deals in the order to search them: the resumed ones first (nothing to do), then the rest
    in increasing order, except that the deals whose search a stop most likely cut short go last: the
    first deal past the journaled ones of a resumed shard, and those with a layered proof's checkpoint in
    the scratch directory. Their searches take the longest, and the deals after them in the shard then do
    not wait for them (the rows do not depend on the order). Before all that, the order asked for: the
    deals of ``task.first`` go before the others, those of ``task.last`` after them."""
    deals = task_deals(task)
    pending = [d for d in deals if d not in resumed]
    cut = {pending[0]} if resumed and pending else set()
    if task.scratch:
        cut |= {d for d in pending if _layered_checkpoint(Path(task.scratch) / str(d))}

    def asked(d: int) -> int:
        return 0 if in_spans(d, task.first) else 2 if in_spans(d, task.last) else 1

    return [d for d in deals if d in resumed] + sorted(pending, key=lambda d: (asked(d), d in cut, d))


def run_task(task: Task, report: Report) -> dict[str, Any]:
    """Classify every deal of one shard (runs in a worker), taking the deals of ``task.resume`` as done."""
    cfg = task.config
    resumed: dict[int, Record] = {r["deal"]: r for r in task.resume}
    done: dict[int, Record] = {}
    for deal in order(task, resumed):
        record = done[deal] = resumed.get(deal) or classify_record(deal, cfg, task.scratch, task.threads)
        report(1, {record["deals"]["difficulty"]: 1}, None if deal in resumed else record)
    finished = [done[deal] for deal in task_deals(task)]
    counts = Counter(record["deals"]["difficulty"] for record in finished)
    return {
        "tables": {
            "deals": records.to_table("deals", [r["deals"] for r in finished], cfg),
            "searches": records.to_table("searches", [s for r in finished for s in r["searches"]], cfg),
        },
        "counts": dict(counts),
    }


def left_open(record: Record) -> bool:
    """Whether a budget left something of a deal open: its class, or any of its searches, undecided."""
    return record["deals"]["difficulty"] == "undecided" or any(
        s["outcome"] == "undecided" for s in record["searches"]
    )


def decided_records(out: Path, block: str) -> list[Record]:
    """Resume records of a finished block's deals that no budget left open."""
    deals = pq.read_table(shards.path(out, "deals", block)).to_pylist()
    rows: dict[int, list[Any]] = {}
    for row in pq.read_table(shards.path(out, "searches", block)).to_pylist():
        rows.setdefault(row["deal"], []).append(row)
    found: list[Record] = [
        {"deal": d["deal"], "deals": d, "searches": rows.get(d["deal"], [])} for d in deals
    ]
    return [r for r in found if not left_open(r)]


def finish(out: Path, run: dict[str, Any]) -> dict[str, pa.Table]:
    """The ``unsolvable`` table: deals proven unsolvable with 4 cells, with their 4-cell proof's size."""
    deals = shards.read_table(out, "deals")
    searches = shards.read_table(out, "searches")
    bad = deals.filter(pc.equal(deals["difficulty"], "unsolvable"))
    proofs = searches.filter(
        pc.and_(pc.equal(searches["cells"], 4), pc.equal(searches["outcome"], "unsolvable"))
    )
    positions = dict(zip(proofs["deal"].to_pylist(), proofs["positions"].to_pylist(), strict=True))
    rows = [
        records.unsolvable_row(deal, positions[deal], min_cells)
        for deal, min_cells in zip(bad["deal"].to_pylist(), bad["min_cells"].to_pylist(), strict=True)
    ]
    return {"unsolvable": records.to_table("unsolvable", rows, run["config"])}


JOB = Job(
    name="analyze",
    shard_tables=("deals", "searches"),
    counters=records.CLASSES,
    run_task=run_task,
    finish=finish,
    decided_records=decided_records,
    left_open=left_open,
)
