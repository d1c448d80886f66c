"""The serial engine: every task in the calling process, in order (one worker)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from fcanalyze.engines.base import Engine, OnRecord, Progress, Task, TaskFn


class SerialEngine(Engine):
    """Everything in the calling process, in order."""

    name = "serial"

    def __init__(self) -> None:
        self.threads_per_task = os.cpu_count() or 1

    def run(
        self, fn: TaskFn, tasks: Iterable[Task], on_progress: Progress, on_record: OnRecord | None = None
    ) -> Iterator[tuple[Task, Any]]:
        for task in tasks:

            def report(n: int, counts: dict[str, int], record: Any = None, task: Task = task) -> None:
                on_progress(n, counts)
                if record is not None and on_record is not None:
                    on_record(task, record)

            yield task, fn(task, report)
