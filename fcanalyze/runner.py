"""Running a pipeline over a range of deals: shards of fixed blocks, resume, progress, tables.

A run is a job (``analyze`` or ``verify``) with a configuration over a range. The range is cut into
fixed blocks of deal numbers (``shard_size`` deals, aligned: 1-1000, 1001-2000, ...), the same whatever
the engine or the number of workers. Each block is one task; its tables come back to the parent, which
writes them atomically and records them in the run file (``run.json``, with checksums) before taking the
next result. Re-running the same command skips the blocks whose files verify and computes only the rest;
a different configuration in the same directory is refused.

Within a block, ``analyze`` sends a record per finished deal; the parent appends it to the block's journal
(``OUT/journal/BLOCK.jsonl``), and a block interrupted half way starts again from its journal, recomputing
only the deals it lacks (one deal of 1,000 can take hours). The journal goes once the block's files are
written. ``--redo-undecided`` seeds it with the finished block's decided deals, so only the deals a budget
left open are searched again.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fcanalyze import _core, atomic, journal, records, runfile, shards
from fcanalyze.deals import format_range, range_size
from fcanalyze.engines import Engine, Progress, Report, Task
from fcanalyze.solve import DEFAULT_MAX_MEMORY_MB, DEFAULT_MAX_POSITIONS, classify

DEFAULT_SHARD_SIZE = 1000


@dataclass(frozen=True)
class Job:
    """What a run computes per shard, and the tables it writes."""

    name: str
    shard_tables: tuple[str, ...]
    counters: tuple[str, ...]
    run_task: Callable[[Task, Report], dict[str, Any]]
    finish: Callable[[Path, dict[str, Any]], dict[str, pa.Table]]
    #: The resume records of a finished block's decided deals (None: the job journals nothing).
    decided_records: Callable[[Path, str], list[dict[str, Any]]] | None = None


def plan(spans: list[tuple[int, int]], shard_size: int) -> list[tuple[str, tuple[tuple[int, int], ...]]]:
    """Cut merged spans into fixed, aligned blocks: ``[(block name, spans inside the block), ...]``."""
    blocks: dict[int, list[tuple[int, int]]] = {}
    for first, last in spans:
        a = first
        while a <= last:
            b = (a - 1) // shard_size
            end = min(last, (b + 1) * shard_size)
            blocks.setdefault(b, []).append((a, end))
            a = end + 1
    return [
        (shards.block_name(b * shard_size + 1, (b + 1) * shard_size), tuple(s))
        for b, s in sorted(blocks.items())
    ]


def _deals(task: Task) -> list[int]:
    return [d for a, b in task.spans for d in range(a, b + 1)]


# -- analyze: exact minimum cells per deal ------------------------------------------------------------


def _layered_checkpoint(deal_dir: Path) -> bool:
    """Whether a layered proof of the deal left its checkpoint in `deal_dir` (SCRATCH/DEAL/cells-K/checkpoint,
    the file it saves at each layer: layered.rs)."""
    return any(deal_dir.glob("cells-*/checkpoint"))


def _classify_record(deal: int, cfg: dict[str, Any], scratch: str | None, threads: int = 1) -> dict[str, Any]:
    """One deal's rows in both tables, as a resume record: ``{"deal", "deals": row, "searches": [row]}``.
    A layered proof of the deal keeps its resumable files in ``SCRATCH/DEAL`` (when `scratch` exists; they
    stay there when it runs out of a budget), and runs on `threads` threads."""
    checkpoint = Path(scratch) / str(deal) if scratch and Path(scratch).is_dir() else None
    c = classify(
        deal,
        cfg["max_cells"],
        max_positions=cfg["max_positions"],
        time_limit_ms=cfg["time_limit_ms"],
        max_memory_mb=cfg["max_memory_mb"],
        checkpoint_dir=checkpoint,
        threads=threads,
    )
    if checkpoint is not None and not _layered_checkpoint(checkpoint):
        # Each layered proof that decided removed its files; one that ran out of a budget (disk, positions,
        # time) left them, for --redo-undecided to go on from its checkpoint.
        shutil.rmtree(checkpoint, ignore_errors=True)
    return {"deal": deal, "deals": records.deal_row(c), "searches": records.search_rows(c)}


def _order(task: Task, resumed: dict[int, dict[str, Any]]) -> list[int]:
    """The shard's deals in the order to search them: the resumed ones first (nothing to do), then the rest
    in increasing order, except that the deals whose search a stop most likely cut short go last: the
    first deal past the journaled ones of a resumed shard, and those with a layered proof's checkpoint in
    the scratch directory. Their searches take the longest, and the deals after them in the shard then do
    not wait for them (the rows do not depend on the order)."""
    deals = _deals(task)
    pending = [d for d in deals if d not in resumed]
    cut = {pending[0]} if resumed and pending else set()
    if task.scratch:
        cut |= {d for d in pending if _layered_checkpoint(Path(task.scratch) / str(d))}
    return [d for d in deals if d in resumed] + sorted(pending, key=lambda d: (d in cut, d))


def analyze_task(task: Task, report: Report) -> dict[str, Any]:
    """Classify every deal of one shard (runs in a worker), taking the deals of ``task.resume`` as done."""
    cfg = task.config
    resumed = {r["deal"]: r for r in task.resume}
    counts: Counter[str] = Counter()
    done: dict[int, dict[str, Any]] = {}
    for deal in _order(task, resumed):
        record = done[deal] = resumed.get(deal) or _classify_record(deal, cfg, task.scratch, task.threads)
        report(1, {record["deals"]["difficulty"]: 1}, None if deal in resumed else record)
    finished = [done[deal] for deal in _deals(task)]
    counts.update(record["deals"]["difficulty"] for record in finished)
    return {
        "tables": {
            "deals": records.to_table("deals", [r["deals"] for r in finished], cfg),
            "searches": records.to_table("searches", [s for r in finished for s in r["searches"]], cfg),
        },
        "counts": dict(counts),
    }


def _left_open(record: dict[str, Any]) -> bool:
    """Whether a budget left something of a deal open: its class, or any of its searches, undecided."""
    return record["deals"]["difficulty"] == "undecided" or any(
        s["outcome"] == "undecided" for s in record["searches"]
    )


def analyze_decided(out: Path, block: str) -> list[dict[str, Any]]:
    """Resume records of a finished block's deals that no budget left open."""
    deals = pq.read_table(shards.path(out, "deals", block)).to_pylist()
    rows: dict[int, list[dict[str, Any]]] = {}
    for row in pq.read_table(shards.path(out, "searches", block)).to_pylist():
        rows.setdefault(row["deal"], []).append(row)
    records_ = [{"deal": d["deal"], "deals": d, "searches": rows.get(d["deal"], [])} for d in deals]
    return [r for r in records_ if not _left_open(r)]


def analyze_finish(out: Path, run: dict[str, Any]) -> dict[str, pa.Table]:
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


ANALYZE = Job(
    name="analyze",
    shard_tables=("deals", "searches"),
    counters=records.CLASSES,
    run_task=analyze_task,
    finish=analyze_finish,
    decided_records=analyze_decided,
)


# -- verify: solve every deal with 4 cells, prove the rest -------------------------------------------

VERIFY_COUNTERS = ("solved", "unsolvable", "undecided")
VERIFY_CHUNK = 100  # deals per core call: small enough for a lively progress bar


def verify_task(task: Task, report: Report) -> dict[str, Any]:
    """Solve every deal of one shard with 4 cells; search to the end each one the fast budget leaves open."""
    cfg = task.config
    rows: list[records.SearchRow] = []
    counts: Counter[str] = Counter()
    deals = _deals(task)
    for i in range(0, len(deals), VERIFY_CHUNK):
        chunk = deals[i : i + VERIFY_CHUNK]
        r = _core.solve_deals(chunk, 4, max_positions=cfg["solve_positions"])
        chunk_counts: Counter[str] = Counter()
        for j, deal in enumerate(chunk):
            outcome, positions, moves = r["outcome"][j], r["positions"][j], r["moves"][j]
            elapsed, exhausted = r["elapsed_ms"][j], None
            if outcome == "undecided":
                # The complete best-first search, to the end: a proof, or a solution of sensible length.
                p = _core.solve(
                    deal, 4, max_positions=cfg["max_positions"], time_limit_ms=cfg["time_limit_ms"]
                )
                outcome, positions, moves, exhausted = (
                    p["outcome"],
                    p["positions"],
                    p["move_count"],
                    p["exhausted"],
                )
                elapsed += p["elapsed_ms"]
            rows.append(records.search_row(deal, 4, outcome, positions, moves, elapsed, exhausted))
            chunk_counts[outcome] += 1
        counts.update(chunk_counts)
        report(len(chunk), dict(chunk_counts))
    return {"tables": {"searches": records.to_table("searches", rows, cfg)}, "counts": dict(counts)}


def verify_finish(out: Path, run: dict[str, Any]) -> dict[str, pa.Table]:
    """The ``unsolvable`` table: the deals proven unsolvable, with the size of each proof."""
    searches = shards.read_table(out, "searches")
    bad = searches.filter(pc.equal(searches["outcome"], "unsolvable"))
    rows = [
        records.unsolvable_row(deal, positions, None)
        for deal, positions in zip(bad["deal"].to_pylist(), bad["positions"].to_pylist(), strict=True)
    ]
    return {"unsolvable": records.to_table("unsolvable", rows, run["config"])}


VERIFY = Job(
    name="verify",
    shard_tables=("searches",),
    counters=VERIFY_COUNTERS,
    run_task=verify_task,
    finish=verify_finish,
)

JOBS: dict[str, Job] = {"analyze": ANALYZE, "verify": VERIFY}


# -- the parent -----------------------------------------------------------------------------------------


def analyze_config(
    max_cells: int = 4,
    max_positions: int = DEFAULT_MAX_POSITIONS,
    time_limit_ms: int | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB,
) -> dict[str, Any]:
    """The configuration of an ``analyze`` run (everything that changes its tables)."""
    if not 0 <= max_cells <= 8:
        raise ValueError(f"--max-cells {max_cells} is out of range (0 to 8)")
    return {
        "max_cells": max_cells,
        "max_positions": max_positions,
        "time_limit_ms": time_limit_ms,
        "shard_size": shard_size,
        "max_memory_mb": max_memory_mb,
    }


#: Positions budget of the fast 4-cell attempt in ``verify``; deals it leaves open go to the prover.
VERIFY_SOLVE_POSITIONS = 200_000


def verify_config(
    max_positions: int = 2**32 - 2,
    time_limit_ms: int | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    solve_positions: int = VERIFY_SOLVE_POSITIONS,
) -> dict[str, Any]:
    """The configuration of a ``verify`` run: the fast attempt's budget, then the prover's."""
    return {
        "solve_positions": min(solve_positions, max_positions),
        "max_positions": max_positions,
        "time_limit_ms": time_limit_ms,
        "shard_size": shard_size,
    }


@dataclass
class RunResult:
    """What a finished run did."""

    out: Path
    run: dict[str, Any]
    computed: int = 0
    skipped: int = 0
    counts: Counter[str] = field(default_factory=Counter)


def run(
    job_name: str,
    spans: list[tuple[int, int]],
    out: Path,
    engine: Engine,
    config: dict[str, Any],
    on_progress: Progress | None = None,
    on_skip: Progress | None = None,
    redo_undecided: bool = False,
) -> RunResult:
    """Run `job_name` over `spans` into `out` with `engine`, resuming what is already there (whole shards,
    and the journaled deals of unfinished ones). With `redo_undecided`, the deals a budget left open in
    finished shards are searched again (with this version's searches, and with larger budgets if given:
    the run file records each raise in ``budgets_raised``), and each such shard is replaced atomically once
    recomputed."""
    job = JOBS[job_name]
    out = Path(out)
    range_text = format_range(spans)
    identity = runfile.identity(job_name, range_text, config)
    existing = runfile.read(out)
    if existing is not None:
        raised = runfile.raised_budgets(existing.get("config") or {}, config) if redo_undecided else {}
        if raised:
            # Larger budgets for the deals left open: the rows of the decided ones stand as they are.
            runfile.check_compatible(out, existing, {**identity, "config": existing["config"]})
            runfile.raise_budgets(existing, config, raised)
        runfile.check_compatible(out, existing, identity)
        atomic.remove_stale_temporaries(out)
        run_file = existing
    else:
        if out.exists() and any(out.iterdir()):
            raise ValueError(
                f"{out} is not empty and holds no fcanalyze run; use an empty or new --out directory"
            )
        run_file = runfile.new(identity, range_size(spans))
    run_file["complete"] = False
    result = RunResult(out=out, run=run_file)
    journals = journal.Journals(out)
    # Resumable files of the layered proofs in progress (a directory per deal).
    scratch = journal.scratch(out)
    if job.decided_records:
        scratch.mkdir(parents=True, exist_ok=True)
    tasks = []
    for block, block_spans in plan(spans, config["shard_size"]):
        entry = run_file["shards"].get(block)
        complete = entry is not None and runfile.shard_is_complete(out, block, entry)
        decided = (
            job.decided_records(out, block) if complete and redo_undecided and job.decided_records else None
        )
        if decided is not None:  # a deal may have its class but not its exact min_cells
            redo = len(decided) < entry["deals"]
        else:
            redo = redo_undecided and entry is not None and entry["counts"].get("undecided", 0) > 0
        if complete and not redo:
            journals.remove(block)  # left over when a run stopped right after writing the block
            result.skipped += 1
            result.counts.update(entry["counts"])
            if on_skip:
                on_skip(entry["deals"], entry["counts"])
            continue
        resume = journal.read(journal.path(out, block)) if job.decided_records else []
        if redo_undecided:
            resume = [r for r in resume if not _left_open(r)]
        if complete and decided is not None:
            # Journal the decided deals first: once the run file forgets the block, they live there.
            have = {r["deal"] for r in resume}
            for record in decided:
                if record["deal"] not in have:
                    journals.append(block, record)
                    resume.append(record)
            journals.sync()
        run_file["shards"].pop(block, None)
        tasks.append(
            Task(
                job=job_name,
                config=config,
                block=block,
                spans=block_spans,
                resume=tuple(resume),
                scratch=str(scratch) if job.decided_records else None,
                threads=engine.threads_per_task,
            )
        )
    # Shards stopped part-way go last: a run is most often stopped in a long search, which would
    # otherwise hold back the shards not started yet (the tables do not depend on the order).
    tasks.sort(key=lambda task: bool(task.resume))
    runfile.write(out, run_file)
    try:
        for task, output in engine.run(
            job.run_task,
            tasks,
            on_progress or (lambda n, c: None),
            lambda task, record: journals.append(task.block, record),
        ):
            files = {
                name: shards.write(shards.path(out, name, task.block), output["tables"][name])
                for name in job.shard_tables
            }
            run_file["shards"][task.block] = {"deals": task.deals, "files": files, "counts": output["counts"]}
            runfile.write(out, run_file)
            journals.remove(task.block)
            result.computed += 1
            result.counts.update(output["counts"])
    finally:
        journals.close()
    run_file["shards"] = dict(sorted(run_file["shards"].items()))
    run_file["counts"] = {k: result.counts.get(k, 0) for k in job.counters}
    run_file["tables"] = {
        name: shards.write(shards.derived_path(out, name), table)
        for name, table in job.finish(out, run_file).items()
    }
    run_file["complete"] = True
    runfile.write(out, run_file)
    return result
