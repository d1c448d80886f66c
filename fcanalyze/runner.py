"""Running a pipeline over a range of deals: shards of fixed blocks, resume, progress, tables.

A run is a job (``analyze`` or ``verify``) with a configuration over a range. The range is cut into
fixed blocks of deal numbers (``shard_size`` deals, aligned: 1-1000, 1001-2000, ...), the same whatever
the engine or the number of workers. Blocks are computed on the fly (`Plan`), never listed whole: a run
over every deal starts at once, in the memory of a few blocks. An engine with several workers gets each
block in pieces of a few deals (`piece_size`), so that every worker has work even in a range of one
block; the pieces of a block come back to the parent, which puts them in deal order, writes the block's
tables atomically and records them in the run file (``run.json``, with checksums). The tables do not
depend on the pieces. Re-running the same command skips the blocks whose files verify and computes only
the rest; a different configuration in the same directory is refused once the directory holds work.

The run file is written only when the first task is about to run, after the configuration has been
checked: a command that fails before (a bad option, a full disk) leaves the directory as it was. A run
file with no work saved yet (no shard, no journaled deal, no layered proof's files: a first invocation
that crashed or was stopped at once) binds nothing: another configuration takes the directory over.

Within a block, ``analyze`` sends a record per finished deal; the parent appends it to the block's journal
(``OUT/journal/BLOCK.jsonl``), and a block interrupted half way starts again from its journal, recomputing
only the deals it lacks (one deal of 1,000 can take hours). The journal goes once the block's files are
written. ``--redo-undecided`` seeds it with the finished block's decided deals when the block's first
task is handed out, so only the deals a budget left open are searched again; with nothing left open it
changes nothing. Such a pass is numbered in the run file (``redo_pass``), and so is each shard it writes:
resumed after a stop, the pass goes on with the blocks it has not written, and a stop leaves journals
only for the blocks in progress (the others stay shards, small enough to commit).

A full disk ends the run with `DiskFull` (one line naming the disk): what was finished stays, and the
same command resumes once there is space.

A `Watch` hears what a progress display needs besides the deals done: what a resumed run kept, the search
time of the deals computed, each shard written, and the searches running now (`Running`).
"""

from __future__ import annotations

import errno
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from fcanalyze import atomic, journal, runfile, shards
from fcanalyze.deals import format_range, in_spans, range_size, within_spans
from fcanalyze.engines import Engine, Progress, Task
from fcanalyze.jobs import Job, analyze, task_deals, verify

JOBS: dict[str, Job] = {job.name: job for job in (analyze.JOB, verify.JOB)}
#: The most deals in a piece: small enough that a worker's last piece does not hold up the run.
MAX_PIECE = 50
#: Pieces per worker over a small range: enough to even out deals of different lengths.
PIECES_PER_WORKER = 8


@dataclass(frozen=True)
class Running:
    """A search in progress, as the parent sees it: its deal (None when the task reports a chunk of
    deals at a time: then `deals`, the chunk), how long since its task last reported (the time of this
    search so far), and the directory where its layered proof keeps its checkpoint (when it has one)."""

    deal: int | None
    deals: tuple[int, int]
    seconds: float
    scratch: Path | None = None


class Watch:
    """What a run tells its progress display besides the deals done (`on_progress`); does nothing here."""

    def resuming(self, done: int, total: int, shards: int, journaled: int) -> None:
        """The run starts with `done` of its `total` deals already done: those of `shards` complete shards
        and `journaled` deals of shards it goes on with (counted done again as those shards go on)."""

    def finished(self, deals: int, cpu_ms: float) -> None:
        """`deals` deals computed in this run, whose searches took `cpu_ms` milliseconds."""

    def shard_written(self) -> None:
        """A shard's files are written."""

    def files_removed(self, deals: list[int], size: int, free: int) -> None:
        """The kept files of the proofs of `deals` went to leave room on a disk of `size` bytes (`free`
        free now): `journal.make_room`."""

    def attach(self, running: Callable[[], list[Running]], workers: int, shards_total: int) -> None:
        """The run is about to compute its `shards_total` shards (those complete included) on `workers`
        workers; `running()` lists the searches in progress (callable from another thread)."""


#: The order in which a job's task searches its deals, when it is not deal order.
_ORDERS: dict[str, Callable[[Task, dict[int, Any]], list[int]]] = {"analyze": analyze.order}
#: Deals a job's task reports at a time, when more than one.
_CHUNKS: dict[str, int] = {"verify": verify.CHUNK}


class _Searches:
    """The tasks of a run (`tasks`: iterated as an engine takes them, as often as it does) and the
    searches in progress: which deal each running task searches, from the order in which it searches
    them (noted when an engine takes the task) and the deals it has reported."""

    def __init__(self, job: Job, engine: Engine, scratch: Path | None, tasks: Iterable[Task]):
        self.job, self.engine, self.scratch, self.tasks = job, engine, scratch, tasks
        #: By task: its deals in the order it searches them, and how many it resumes (they come first).
        self.orders: dict[int, tuple[list[int], int]] = {}

    def __iter__(self) -> Iterator[Task]:
        order = _ORDERS.get(self.job.name)
        for task in self.tasks:
            resumed = {r["deal"]: r for r in task.resume}
            self.orders[id(task)] = (order(task, resumed) if order else task_deals(task), len(resumed))
            yield task

    def done(self, task: Task) -> None:
        self.orders.pop(id(task), None)

    def running(self) -> list[Running]:
        now = time.monotonic()
        chunk = _CHUNKS.get(self.job.name, 1)
        found = []
        for f in self.engine.in_flight():
            noted = self.orders.get(id(f.task))
            if noted is None:
                continue
            order, resumed = noted
            # A worker may hold back its count of resumed deals until it sends the next record.
            k = max(f.deals, resumed)
            if k >= len(order):
                continue
            part = order[k : k + chunk]
            deal = part[0] if chunk == 1 else None
            where = self.scratch / str(deal) if self.scratch and deal is not None else None
            found.append(Running(deal, (min(part), max(part)), now - f.last, where))
        return found


def shard_count(spans: list[tuple[int, int]], shard_size: int) -> int:
    """How many blocks of `shard_size` deals the merged, sorted `spans` touch."""
    count, last_block = 0, None
    for a, b in spans:
        first, last = (a - 1) // shard_size, (b - 1) // shard_size
        count += last - first + 1 - (first == last_block)
        last_block = last
    return count


class DiskFull(ValueError):
    """The disk of the output directory is full: one line naming it; the run resumes once there is space."""


def blocks(
    spans: list[tuple[int, int]], shard_size: int
) -> Iterator[tuple[str, tuple[tuple[int, int], ...]]]:
    """Cut merged, sorted spans into fixed, aligned blocks, lazily: ``(block name, spans inside it)``."""
    current: int | None = None
    inside: list[tuple[int, int]] = []
    for first, last in spans:
        a = first
        while a <= last:
            b = (a - 1) // shard_size
            end = min(last, (b + 1) * shard_size)
            if b != current and current is not None:
                yield shards.block_of(current * shard_size + 1, shard_size), tuple(inside)
                inside = []
            current = b
            inside.append((a, end))
            a = end + 1
    if current is not None:
        yield shards.block_of(current * shard_size + 1, shard_size), tuple(inside)


def piece_size(deals: int, workers: int, shard_size: int) -> int:
    """Deals per task: a whole block for one worker, else pieces small enough that every worker gets
    several pieces of a range of `deals` deals (`PIECES_PER_WORKER`), at most `MAX_PIECE`."""
    if workers <= 1:
        return shard_size
    return max(1, min(MAX_PIECE, shard_size, -(-deals // (workers * PIECES_PER_WORKER))))


def split(spans: tuple[tuple[int, int], ...], size: int) -> list[tuple[tuple[int, int], ...]]:
    """Cut a block's spans into pieces of `size` deals (the last may be smaller), in deal order."""
    pieces: list[tuple[tuple[int, int], ...]] = []
    piece: list[tuple[int, int]] = []
    room = size
    for first, last in spans:
        a = first
        while a <= last:
            b = min(last, a + room - 1)
            piece.append((a, b))
            room -= b - a + 1
            a = b + 1
            if room == 0:
                pieces.append(tuple(piece))
                piece, room = [], size
    if piece:
        pieces.append(tuple(piece))
    return pieces


@dataclass
class RunResult:
    """What a finished run did."""

    out: Path
    run: dict[str, Any]
    computed: int = 0
    skipped: int = 0
    counts: Counter[str] = field(default_factory=Counter)


@dataclass
class _State:
    """What a run found in its directory, before it writes anything."""

    run_file: dict[str, Any]
    #: Larger budgets `--redo-undecided` asked for (recorded once a task runs).
    raised: dict[str, Any]
    #: The blocks complete on disk, which stay as they are.
    skip: set[str] = field(default_factory=set)
    #: The blocks to compute that start from records (journaled deals, or decided deals of a finished
    #: block searched again), with those records.
    resume: dict[str, list[Any]] = field(default_factory=dict)
    #: The finished blocks searched again (`--redo-undecided`): their decided deals go to their journals.
    redo: dict[str, list[Any]] = field(default_factory=dict)
    #: Journals of blocks outside the range, left by an unfinished run over another range.
    stale: list[Path] = field(default_factory=list)
    #: With `--redo-undecided`: the number of this pass over the deals left open (a new one when the run
    #: was complete or a budget is raised; otherwise the pass a stop cut short, whose shards are kept).
    redo_pass: int | None = None
    #: Whether the run file was complete, and nothing had to change.
    was_complete: bool = False


class Plan:
    """The tasks of a run, made on the fly in a fixed order: the blocks that start from scratch in block
    order, then those that resume (a run is most often stopped in a long search, which would otherwise
    hold back the blocks not started yet; the tables do not depend on the order). The blocks that hold
    a deal of `first` go before all the others, in that order too, and those that hold one of `last`
    (and none of `first`) after them. Each iteration makes the same tasks. `on_start` is called once,
    just before the first task is handed out, and `on_block` with each block just before its first
    task."""

    def __init__(
        self,
        job: Job,
        spans: list[tuple[int, int]],
        config: dict[str, Any],
        state: _State,
        scratch: str | None,
        threads: int,
        piece: int,
        on_start: Callable[[], None],
        on_block: Callable[[str], None],
        first: tuple[tuple[int, int], ...] = (),
        last: tuple[tuple[int, int], ...] = (),
    ):
        self.job, self.spans, self.config, self.state = job, spans, config, state
        self.scratch, self.threads, self.piece = scratch, threads, piece
        self.on_start, self.on_block = on_start, on_block
        self.first, self.last = first, last
        self.started = False
        self.begun: set[str] = set()

    def __iter__(self) -> Iterator[Task]:
        for task in self._tasks():
            if not self.started:
                self.started = True
                self.on_start()
            if task.block not in self.begun:
                self.begun.add(task.block)
                self.on_block(task.block)
            yield task

    def _tasks(self) -> Iterator[Task]:
        size = self.config["shard_size"]
        first = {b for b, _ in blocks(list(self.first), size)}
        last = {b for b, _ in blocks(list(self.last), size)} - first
        if first:
            yield from self._in_order(lambda b: b in first)
        yield from self._in_order(lambda b: b not in first and b not in last)
        if last:
            yield from self._in_order(lambda b: b in last)

    def _in_order(self, chosen: Callable[[str], bool]) -> Iterator[Task]:
        """The tasks of the `chosen` blocks: those that start from scratch, then those that resume."""
        later = []
        for block, block_spans in blocks(self.spans, self.config["shard_size"]):
            if block in self.state.skip or not chosen(block):
                continue
            resume = self.state.resume.get(block, [])
            if resume:
                later.append((block, block_spans, resume))
            else:
                yield from self._pieces(block, block_spans, [])
        for block, block_spans, resume in later:
            yield from self._pieces(block, block_spans, resume)

    def _pieces(
        self, block: str, block_spans: tuple[tuple[int, int], ...], resume: list[Any]
    ) -> Iterator[Task]:
        pieces = split(block_spans, self.piece)
        for part, piece_spans in enumerate(pieces):
            inside = [r for r in resume if in_spans(r["deal"], piece_spans)] if len(pieces) > 1 else resume
            yield Task(
                job=self.job.name,
                config=self.config,
                block=block,
                spans=piece_spans,
                resume=tuple(inside),
                scratch=self.scratch,
                threads=self.threads,
                part=part,
                parts=len(pieces),
                first=self.first,
                last=self.last,
            )


def run(
    job_name: str,
    spans: list[tuple[int, int]],
    out: Path,
    engine: Engine,
    config: dict[str, Any],
    on_progress: Progress | None = None,
    on_skip: Progress | None = None,
    redo_undecided: bool = False,
    watch: Watch | None = None,
    first: list[tuple[int, int]] | None = None,
    last: list[tuple[int, int]] | None = None,
) -> RunResult:
    """Run `job_name` over `spans` into `out` with `engine`, resuming what is already there (whole shards,
    and the journaled deals of unfinished ones). With `redo_undecided`, the deals a budget left open in
    finished shards are searched again (with this version's searches, and with larger budgets if given:
    the run file records each raise in ``budgets_raised``), and each such shard is replaced atomically once
    recomputed. The deals of `first` (spans) are searched before the others, those of `last` after them:
    their blocks first and last (`Plan`), and them first and last within their blocks (the job's
    order); no row depends on it. Raises `ValueError` (one line) for a directory it cannot use or whose
    files are damaged, or an order outside `spans`; `DiskFull` when the disk fills up. `watch` hears
    what a progress display needs (`Watch`)."""
    job = JOBS[job_name]
    out = Path(out)
    order = (_within("first", first or [], spans), _within("last", last or [], spans))
    try:
        return _run(
            job, spans, out, engine, config, on_progress, on_skip, redo_undecided, watch or Watch(), order
        )
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise DiskFull(_disk_full_message(out, e)) from None
        if e.filename is not None:  # the directory cannot be made, written or read (under a file, in /proc)
            why = atomic.why_not_writable(Path(e.filename), e)
            raise ValueError(f"cannot use {out} as the output directory: {why}") from None
        raise


def _run(
    job: Job,
    spans: list[tuple[int, int]],
    out: Path,
    engine: Engine,
    config: dict[str, Any],
    on_progress: Progress | None,
    on_skip: Progress | None,
    redo_undecided: bool,
    watch: Watch,
    order: tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]],
) -> RunResult:
    identity = runfile.identity(job.name, format_range(spans), config)
    state = _open(job, out, identity, config, spans, redo_undecided)
    result = RunResult(out=out, run=state.run_file)
    journals = journal.Journals(out)
    # Resumable files of the layered proofs in progress (a directory per deal).
    scratch = journal.scratch(out) if job.decided_records else None
    whole = sum(state.run_file["shards"][b]["deals"] for b in state.skip)
    journaled = sum(len(records) for records in state.resume.values())
    if 0 < whole + journaled < range_size(spans):  # a run with nothing left to compute resumes nothing
        watch.resuming(whole + journaled, range_size(spans), len(state.skip), journaled)
    for block in sorted(state.skip):
        _skip(state.run_file["shards"][block], block, journals, result, on_skip)

    def start() -> None:
        _start(out, state, config, scratch)

    def begin(block: str) -> None:
        _begin(out, state, block, journals)

    size = piece_size(range_size(spans), engine.parallelism(), config["shard_size"])
    tasks = Plan(
        job,
        spans,
        config,
        state,
        str(scratch) if scratch else None,
        engine.threads_per_task,
        size,
        start,
        begin,
        *order,
    )
    searches = _Searches(job, engine, scratch, tasks)
    watch.attach(searches.running, engine.parallelism(), shard_count(spans, config["shard_size"]))
    try:
        _compute(job, out, engine, searches, state, journals, result, on_progress, watch)
    finally:
        journals.close()
    if tasks.started or not state.was_complete or _derived_missing(out, state.run_file):
        if not tasks.started:
            start()
        _finish(job, out, state.run_file, result)
    return result


def _within(
    name: str, order: list[tuple[int, int]], spans: list[tuple[int, int]]
) -> tuple[tuple[int, int], ...]:
    """The spans of an order (`run`'s `first` or `last`), checked to lie within the run's `spans`."""
    for a, b in order:
        if not within_spans(a, b, spans):
            where = f"the range {format_range(spans)}"
            raise ValueError(f"--{name} {format_range([(a, b)])} is not within {where}")
    return tuple(order)


def _open(
    job: Job,
    out: Path,
    identity: dict[str, Any],
    config: dict[str, Any],
    spans: list[tuple[int, int]],
    redo_undecided: bool,
) -> _State:
    """What the run goes on from, and which blocks are complete, resumed or searched again; writes nothing.

    The run file of `out` when it has the same identity (or, with `redo_undecided`, the same but for
    raised budgets). A run that has finished no shard binds only its configuration: another range takes
    it over, keeping the deals journaled in that range; and a run that saved nothing at all (a first
    invocation that crashed or was stopped at once) binds nothing. Otherwise a new run in an empty `out`.
    """
    existing = runfile.read(out)
    if existing is not None and {k: existing.get(k) for k in identity} != identity:
        unfinished = not existing.get("shards") and not existing.get("budgets_raised")
        same_config = all(existing.get(k) == v for k, v in identity.items() if k != "range")
        if unfinished and (same_config or not _holds_work(out)):
            atomic.remove_stale_temporaries(out)
            state = _State(run_file=runfile.new(identity, range_size(spans)), raised={})
            _find_resume(job, out, state, spans, redo_undecided)
            return state
    if existing is None:
        if out.exists() and not _only_leftovers(out):
            raise ValueError(
                f"{out} is not empty and holds no fcanalyze run; use an empty or new --out directory"
            )
        return _State(run_file=runfile.new(identity, range_size(spans)), raised={})
    raised = runfile.raised_budgets(existing.get("config") or {}, config) if redo_undecided else {}
    if raised:
        # Larger budgets for the deals left open: the rows of the decided ones stand as they are.
        runfile.check_compatible(out, existing, {**identity, "config": existing["config"]})
    else:
        runfile.check_compatible(out, existing, identity)
    runfile.check_derived_tables(out, existing)
    atomic.remove_stale_temporaries(out)
    state = _State(run_file=existing, raised=raised, was_complete=bool(existing.get("complete")))
    _find_resume(job, out, state, spans, redo_undecided)
    return state


def _holds_work(out: Path) -> bool:
    """Whether an unfinished run saved any deal: a journaled one, or a layered proof's files."""
    if any(journal.read(p) for p in (out / journal.DIR).glob("*.jsonl")):
        return True
    scratch = journal.scratch(out)
    return scratch.is_dir() and any(scratch.iterdir())


def _only_leftovers(out: Path) -> bool:
    """Whether `out` holds nothing but what a run that saved nothing leaves: empty directories and
    temporary files."""
    return all(p.is_dir() or (p.name.startswith(".") and p.name.endswith(".tmp")) for p in out.rglob("*"))


def _find_resume(
    job: Job, out: Path, state: _State, spans: list[tuple[int, int]], redo_undecided: bool
) -> None:
    """Sort the blocks the run file and the journals know into complete ones (`skip`), finished ones
    searched again (`redo`) and those that start from records (`resume`); the journals of blocks outside
    `spans` (left by a run over another range) are `stale`."""
    run_file = state.run_file
    fresh = False  # a new pass over the deals left open: the left-open deals of journals are searched again
    if redo_undecided:
        last = run_file.get("redo_pass", 0)
        fresh = bool(state.raised) or bool(run_file.get("complete")) or last == 0
        state.redo_pass = last + 1 if fresh else last
    for block, entry in run_file["shards"].items():
        if not runfile.shard_is_complete(out, block, entry, job.name):
            continue
        if redo_undecided and not fresh and entry.get("pass") == state.redo_pass:
            state.skip.add(block)  # written by this pass before a stop: its open deals were searched again
            continue
        decided = job.decided_records(out, block) if redo_undecided and job.decided_records else None
        if decided is not None:  # a deal may have its class but not its exact min_cells
            redo = len(decided) < entry["deals"]
        else:
            redo = redo_undecided and entry["counts"].get("undecided", 0) > 0
        if not redo:
            state.skip.add(block)
        elif decided is not None:
            state.redo[block] = decided
        else:
            state.redo[block] = []
    if not job.decided_records:
        return  # the job journals nothing
    for p in sorted((out / journal.DIR).glob("*.jsonl")):
        block = p.stem
        if block in state.skip:
            continue
        if not _overlaps(block, spans):
            state.stale.append(p)
            continue
        resume = [r for r in journal.read(p) if in_spans(r["deal"], spans)]
        if fresh and job.left_open:
            resume = [r for r in resume if not job.left_open(r)]
        if resume:
            state.resume[block] = resume
    for block, decided in state.redo.items():
        have = {r["deal"] for r in state.resume.get(block, [])}
        extra = [r for r in decided if r["deal"] not in have]
        if extra:
            state.resume[block] = [*state.resume.get(block, []), *extra]


def _overlaps(block: str, spans: list[tuple[int, int]]) -> bool:
    """Whether the block named `block` (``FIRST-LAST``) holds a deal of `spans`."""
    try:
        first, last = (int(x) for x in block.split("-"))
    except ValueError:
        return False
    return any(a <= last and first <= b for a, b in spans)


def _start(out: Path, state: _State, config: dict[str, Any], scratch: Path | None) -> None:
    """The first task is about to run: record the budget raise and the pass over the deals left open,
    and write the run file."""
    run_file = state.run_file
    for p in state.stale:
        p.unlink(missing_ok=True)
    if state.raised:
        runfile.raise_budgets(run_file, config, state.raised)
    if state.redo_pass is not None:
        run_file["redo_pass"] = state.redo_pass
    if scratch is not None:
        scratch.mkdir(parents=True, exist_ok=True)
    run_file["complete"] = False
    runfile.write(out, run_file)


def _begin(out: Path, state: _State, block: str, journals: journal.Journals) -> None:
    """The first task of `block` is about to run. A finished block searched again has its decided deals
    journaled and leaves the run file (once the run file forgets a block, they live there): block by
    block, so that a stopped run holds in journals only the blocks it was working on, and the others
    stay shards."""
    decided = state.redo.get(block)
    if decided is None:
        return
    have = {r["deal"] for r in journal.read(journal.path(out, block))}
    for record in decided:
        if record["deal"] not in have:
            journals.append(block, record)
    journals.sync()
    state.run_file["shards"].pop(block, None)
    runfile.write(out, state.run_file)


def _skip(
    entry: dict[str, Any], block: str, journals: journal.Journals, result: RunResult, on_skip: Progress | None
) -> None:
    """Count a complete shard that stays as it is."""
    journals.remove(block)  # left over when a run stopped right after writing the block
    result.skipped += 1
    result.counts.update(entry["counts"])
    if on_skip:
        on_skip(entry["deals"], entry["counts"])


class _Assembly:
    """The pieces of the blocks in progress, in the parent: a block is whole when all its parts are in."""

    def __init__(self, job: Job):
        self.job = job
        self.parts: dict[str, dict[int, tuple[Task, Any]]] = {}

    def add(self, task: Task, output: Any) -> tuple[int, dict[str, Any]] | None:
        """Keep a piece; when it completes its block, return the block's deals and output (tables in deal
        order, counts summed), the same as one task over the whole block would have given."""
        got = self.parts.setdefault(task.block, {})
        got[task.part] = (task, output)
        if len(got) < task.parts:
            return None
        del self.parts[task.block]
        pieces = [got[i] for i in range(task.parts)]
        deals = sum(t.deals for t, _ in pieces)
        if len(pieces) == 1:
            return deals, pieces[0][1]
        counts: Counter[str] = Counter()
        for _, o in pieces:
            counts.update(o["counts"])
        tables = {
            name: pa.concat_tables([o["tables"][name] for _, o in pieces])
            .sort_by([("deal", "ascending")])  # a stable sort: each deal's rows keep their order
            .combine_chunks()
            for name in self.job.shard_tables
        }
        return deals, {"tables": tables, "counts": dict(counts)}


def _compute(
    job: Job,
    out: Path,
    engine: Engine,
    tasks: _Searches,
    state: _State,
    journals: journal.Journals,
    result: RunResult,
    on_progress: Progress | None,
    watch: Watch,
) -> None:
    """Run `tasks` on `engine`, journaling the records they send, and write each shard, then the run file,
    as its last piece completes (a shard written by a pass over the deals left open says which)."""
    assembly = _Assembly(job)
    run_file = state.run_file

    recorded: Counter[int] = Counter()  # records received, by task
    settled = _Settled(state)

    def on_record(task: Task, record: Any) -> None:
        journals.append(task.block, record)
        recorded[id(task)] += 1
        watch.finished(1, sum(s["elapsed_ms"] for s in record["searches"]))
        settled.reported.add(record["deal"])
        if tasks.scratch is not None and (tasks.scratch / str(record["deal"])).is_dir():
            # A proof left its files for the next pass: they may not take the disk the next proofs need.
            gone = journal.make_room(tasks.scratch, settled)
            if gone:
                watch.files_removed(gone, *journal.disk(tasks.scratch))

    for task, output in engine.run(
        job.run_task,
        tasks,
        on_progress or (lambda n, c: None),
        on_record,
    ):
        tasks.done(task)
        if not recorded.pop(id(task), 0):
            _finished_from_tables(task, output, watch)
        whole = assembly.add(task, output)
        if whole is None:
            continue
        deals, output = whole
        files = {
            name: shards.write(shards.path(out, name, task.block), output["tables"][name])
            for name in job.shard_tables
        }
        run_file["shards"][task.block] = {"deals": deals, "files": files, "counts": output["counts"]}
        if state.redo_pass is not None:
            run_file["shards"][task.block]["pass"] = state.redo_pass
        runfile.write(out, run_file)
        journals.remove(task.block)
        result.computed += 1
        result.counts.update(output["counts"])
        watch.shard_written()


class _Settled:
    """Whether a deal is settled in this run: no search of it goes on here (its record came in this
    invocation or a journal holds it, or its shard was complete at the start), so the files its proof
    kept may go when room is short."""

    def __init__(self, state: _State):
        self.reported: set[int] = set()
        self.resumed = {r["deal"] for records in state.resume.values() for r in records}
        self.skip, self.size = state.skip, state.run_file["config"]["shard_size"]

    def __call__(self, deal: int) -> bool:
        return deal in self.reported or deal in self.resumed or shards.block_of(deal, self.size) in self.skip


def _finished_from_tables(task: Task, output: dict[str, Any], watch: Watch) -> None:
    """Tell `watch` the search time of a task that sent no record per deal (a job that sends none, or an
    engine that drops them): from its searches table, without the deals it resumed."""
    searches = output["tables"].get("searches")
    if searches is None:
        return
    resumed = [r["deal"] for r in task.resume]
    if resumed:
        searches = searches.filter(pc.invert(pc.is_in(searches["deal"], pa.array(resumed, pa.int64()))))
    watch.finished(task.deals - len(resumed), pc.sum(searches["elapsed_ms"]).as_py() or 0.0)


def _derived_missing(out: Path, run_file: dict[str, Any]) -> bool:
    return any(
        not shards.derived_path(out, name).exists() for name in run_file.get("tables", {})
    ) or not run_file.get("tables")


def _finish(job: Job, out: Path, run_file: dict[str, Any], result: RunResult) -> None:
    """Write the derived tables and the complete run file."""
    run_file["shards"] = dict(sorted(run_file["shards"].items()))
    run_file["counts"] = {k: result.counts.get(k, 0) for k in job.counters}
    write_derived_tables(job, out, run_file)
    run_file["complete"] = True
    runfile.write(out, run_file)


def write_derived_tables(job: Job, out: Path, run_file: dict[str, Any]) -> None:
    """Write the tables `job` derives from the shards at the end of a run (``unsolvable``), with the
    configuration of `run_file`, and list them in it (the caller writes the run file)."""
    run_file["tables"] = {
        name: shards.write(shards.derived_path(out, name), table)
        for name, table in job.finish(out, run_file).items()
    }


def _disk_full_message(out: Path, e: OSError) -> str:
    """One line naming the full disk: the mount point and device of `out`, and its free space."""
    where = out if out.exists() else out.parent
    mount = where.resolve()
    while not os.path.ismount(mount):
        mount = mount.parent
    device = "?"
    try:
        with open("/proc/self/mounts", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[1] == str(mount):
                    device = parts[0]
    except OSError:
        pass
    free = shutil.disk_usage(mount).free
    what = f" writing {e.filename}" if e.filename else ""
    return (
        f"no space left on the disk of {out} ({device} on {mount}, {free:,} bytes free){what}; "
        "what was finished is kept: free some space and run the same command again to resume"
    )
