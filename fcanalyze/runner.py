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

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fcanalyze import atomic, journal, runfile, shards
from fcanalyze.deals import format_range, range_size
from fcanalyze.engines import Engine, Progress, Task
from fcanalyze.jobs import Job, analyze, verify

JOBS: dict[str, Job] = {job.name: job for job in (analyze.JOB, verify.JOB)}


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
    identity = runfile.identity(job_name, format_range(spans), config)
    run_file = _open_run_file(out, identity, config, range_size(spans), redo_undecided)
    result = RunResult(out=out, run=run_file)
    journals = journal.Journals(out)
    # Resumable files of the layered proofs in progress (a directory per deal).
    scratch = journal.scratch(out)
    if job.decided_records:
        scratch.mkdir(parents=True, exist_ok=True)
    tasks = []
    for block, block_spans in plan(spans, config["shard_size"]):
        resume = _resume(job, out, block, run_file, journals, redo_undecided)
        if resume is None:
            _skip(run_file["shards"][block], block, journals, result, on_skip)
            continue
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
        _compute(job, out, engine, tasks, run_file, journals, result, on_progress)
    finally:
        journals.close()
    _finish(job, out, run_file, result)
    return result


def _open_run_file(
    out: Path, identity: dict[str, Any], config: dict[str, Any], deals: int, redo_undecided: bool
) -> dict[str, Any]:
    """The run file to go on with: the one in `out` if it has the same identity (or, with
    `redo_undecided`, the same but for raised budgets), else a new one in an empty `out`."""
    existing = runfile.read(out)
    if existing is not None:
        raised = runfile.raised_budgets(existing.get("config") or {}, config) if redo_undecided else {}
        if raised:
            # Larger budgets for the deals left open: the rows of the decided ones stand as they are.
            runfile.check_compatible(out, existing, {**identity, "config": existing["config"]})
            runfile.raise_budgets(existing, config, raised)
        runfile.check_compatible(out, existing, identity)
        runfile.check_derived_tables(out, existing)
        atomic.remove_stale_temporaries(out)
        run_file = existing
    else:
        if out.exists() and any(out.iterdir()):
            raise ValueError(
                f"{out} is not empty and holds no fcanalyze run; use an empty or new --out directory"
            )
        run_file = runfile.new(identity, deals)
    run_file["complete"] = False
    return run_file


def _resume(
    job: Job,
    out: Path,
    block: str,
    run_file: dict[str, Any],
    journals: journal.Journals,
    redo_undecided: bool,
) -> list[Any] | None:
    """The records the task of `block` starts from, or None when its shard is complete and stays as it is
    (with `redo_undecided`, a complete shard is computed again if a budget left any of its deals open)."""
    entry = run_file["shards"].get(block)
    complete = entry is not None and runfile.shard_is_complete(out, block, entry, job.name)
    decided = job.decided_records(out, block) if complete and redo_undecided and job.decided_records else None
    if complete:
        if decided is not None:  # a deal may have its class but not its exact min_cells
            redo = len(decided) < entry["deals"]
        else:
            redo = redo_undecided and entry["counts"].get("undecided", 0) > 0
        if not redo:
            return None
    return _resume_records(job, out, block, journals, decided, redo_undecided)


def _resume_records(
    job: Job,
    out: Path,
    block: str,
    journals: journal.Journals,
    decided: list[Any] | None,
    redo_undecided: bool,
) -> list[Any]:
    """The records a block's task starts from: its journal (less the deals a budget left open, with
    `redo_undecided`), and the `decided` deals of a finished block searched again."""
    if not job.decided_records:
        return []  # the job journals nothing
    resume = journal.read(journal.path(out, block))
    if redo_undecided and job.left_open:
        resume = [r for r in resume if not job.left_open(r)]
    if decided is not None:
        # Journal the decided deals first: once the run file forgets the block, they live there.
        have = {r["deal"] for r in resume}
        for record in decided:
            if record["deal"] not in have:
                journals.append(block, record)
                resume.append(record)
        journals.sync()
    return resume


def _skip(
    entry: dict[str, Any], block: str, journals: journal.Journals, result: RunResult, on_skip: Progress | None
) -> None:
    """Count a complete shard that stays as it is."""
    journals.remove(block)  # left over when a run stopped right after writing the block
    result.skipped += 1
    result.counts.update(entry["counts"])
    if on_skip:
        on_skip(entry["deals"], entry["counts"])


def _compute(
    job: Job,
    out: Path,
    engine: Engine,
    tasks: list[Task],
    run_file: dict[str, Any],
    journals: journal.Journals,
    result: RunResult,
    on_progress: Progress | None,
) -> None:
    """Run `tasks` on `engine`, journaling the records they send, and write each shard, then the run file,
    as its task completes."""
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


def _finish(job: Job, out: Path, run_file: dict[str, Any], result: RunResult) -> None:
    """Write the derived tables and the complete run file."""
    run_file["shards"] = dict(sorted(run_file["shards"].items()))
    run_file["counts"] = {k: result.counts.get(k, 0) for k in job.counters}
    run_file["tables"] = {
        name: shards.write(shards.derived_path(out, name), table)
        for name, table in job.finish(out, run_file).items()
    }
    run_file["complete"] = True
    runfile.write(out, run_file)
