"""The serial engine: every task in the calling process, in order (one worker)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from typing import Any

from fcanalyze.engines.base import Engine, InFlight, OnRecord, Progress, Task, TaskFn


class SerialEngine(Engine):
    """Everything in the calling process, in order."""

    name = "serial"

    def __init__(self) -> None:
        self.threads_per_task = os.cpu_count() or 1
        self._current: InFlight | None = None

    def in_flight(self) -> list[InFlight]:
        current = self._current
        return [current] if current is not None else []

    def run(
        self, fn: TaskFn, tasks: Iterable[Task], on_progress: Progress, on_record: OnRecord | None = None
    ) -> Iterator[tuple[Task, Any]]:
        for task in tasks:

            def report(n: int, counts: dict[str, int], record: Any = None, task: Task = task) -> None:
                c = self._current
                if c is not None:
                    self._current = InFlight(c.task, c.started, time.monotonic(), c.deals + n)
                on_progress(n, counts)
                if record is not None and on_record is not None:
                    on_record(task, record)

            now = time.monotonic()
            self._current = InFlight(task, now, now)
            try:
                out = fn(task, report)
            finally:
                self._current = None
            yield task, out
