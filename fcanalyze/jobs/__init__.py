"""Jobs: what a run computes per shard, and the tables it writes. The scheduler (`fcanalyze.runner`)
plans the shards, resumes and writes; a job says what happens to the deals of one shard in a worker
(`Job.run_task`), which tables come back, and the table derived from them all at the end.

- `fcanalyze.jobs.analyze`: the exact minimum number of free cells and the class of every deal;
- `fcanalyze.jobs.verify`: every deal solved with 4 cells, or proven unsolvable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from fcanalyze.engines import Report, Task


@dataclass(frozen=True)
class Job:
    """What a run computes per shard, and the tables it writes."""

    name: str
    #: The tables of each shard, in the output of `run_task`: ``{"tables": {name: table}, "counts"}``.
    shard_tables: tuple[str, ...]
    #: The keys of the counts, in the order the run file lists them.
    counters: tuple[str, ...]
    #: Computes one shard in a worker; must be importable by name.
    run_task: Callable[[Task, Report], dict[str, Any]]
    #: The tables derived from the whole run's shards at its end: ``finish(out, run file)``.
    finish: Callable[[Path, dict[str, Any]], dict[str, pa.Table]]
    #: The resume records of a finished block's decided deals (None: the job journals nothing).
    decided_records: Callable[[Path, str], list[Any]] | None = None
    #: Whether a budget left a journaled deal's record open (searched again by ``--redo-undecided``).
    left_open: Callable[[Any], bool] | None = None


#: The largest count the core takes (positions, milliseconds): an unsigned 64-bit integer.
CORE_MAX = 2**64 - 1
#: The largest memory budget in MiB whose bytes fit in 64 bits.
MAX_MEMORY_MB = 2**44 - 1
#: The most deals in a shard (a shard's tables are built in memory).
MAX_SHARD_SIZE = 10**7


def check_bound(option: str, value: int | None, low: int, high: int) -> None:
    """Raise `ValueError` (one line, naming the option) unless `value` is None or a whole number in
    ``low..high``: checked before a run writes anything, so that a bad budget never reaches a worker."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{option} {value} is out of range ({low:,} to {high:,})")


def task_deals(task: Task) -> list[int]:
    """The deals of a task, in increasing order."""
    return [d for a, b in task.spans for d in range(a, b + 1)]
