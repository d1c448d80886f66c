"""The Dask engine: one ``dask.distributed`` task per shard (or piece of one), on an existing cluster
(``--scheduler tcp://HOST:PORT``) or on a local cluster started for the run.

Workers need only the installed package: each task computes its shard and returns the tables to the
parent, which writes every file itself (workers never touch ``--out``, so no shared filesystem is
needed, and a shard resumes whole, not from the deals a worker had finished). If a worker dies, the
scheduler runs its task again elsewhere; the parent keeps the first result of each task, so rows are
never lost or duplicated. Tasks are submitted a few per worker at a time, as results come back.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

from fcanalyze.engines.base import Engine, EngineError, OnRecord, Progress, Task, TaskFn

INSTALL_HINT = "--engine dask needs Dask: pip install 'fcanalyze[dask]'"


def _ignore(n: int, counts: dict[str, int], record: Any = None) -> None:
    """Progress and records stay on the worker: the parent hears of a shard when it is complete."""


def _run_remote(fn: TaskFn, task: Task) -> Any:
    return fn(task, _ignore)


class DaskEngine(Engine):
    """Shards as Dask tasks; progress is reported per shard as results arrive."""

    name = "dask"

    def __init__(self, scheduler: str | None = None, workers: int | None = None):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ImportError(INSTALL_HINT) from None
        self.cluster = None
        try:
            if scheduler:
                self.client = Client(scheduler, timeout="20s")
            else:
                self.cluster = LocalCluster(
                    n_workers=workers or os.cpu_count() or 1,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                )
                self.client = Client(self.cluster)
        except OSError as e:
            raise ValueError(f"cannot reach the Dask scheduler {scheduler}: {e}") from None

    def describe(self) -> str:
        n = len(self.client.scheduler_info().get("workers", {}))
        where = "local cluster" if self.cluster else self.client.scheduler.address
        return f"dask ({where}, {n} workers)"

    def parallelism(self) -> int:
        return max(1, len(self.client.scheduler_info().get("workers", {})))

    def run(
        self, fn: TaskFn, tasks: Iterable[Task], on_progress: Progress, on_record: OnRecord | None = None
    ) -> Iterator[tuple[Task, Any]]:
        from dask.distributed import as_completed

        run_id = uuid.uuid4().hex[:8]
        source = iter(tasks)
        futures: dict[Any, Task] = {}

        def submit() -> bool:
            """Submit the next task, if there is one (the cluster holds a few per worker, not all)."""
            t = next(source, None)
            if t is None:
                return False
            key = f"fcanalyze-{t.job}-{t.block}-{t.part}-{run_id}"
            fut = self.client.submit(_run_remote, fn, t, key=key, pure=False)
            futures[fut] = t
            queue.add(fut)
            return True

        queue = as_completed()
        try:
            for _ in range(2 * self.parallelism() + 2):
                if not submit():
                    break
            for fut in queue:
                task = futures.pop(fut)
                try:
                    out = fut.result()
                except Exception as e:
                    raise EngineError(f"shard {task.block} failed on the Dask cluster: {e!r}") from e
                submit()
                on_progress(task.deals, out["counts"])
                yield task, out
        finally:
            for fut in futures:
                fut.cancel()

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()
