"""Engines run a pipeline's shard tasks: in-process (serial), on local worker processes, or on a Dask
cluster. They share one interface, so every engine produces the same tables: a worker computes a
shard and sends its tables back; only the parent writes files and the run manifest.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

#: ``report(deals_done, counts)`` is called by a task as it goes, for the progress bar.
Report = Callable[[int, dict[str, int]], None]
#: A task function: ``fn(task, report) -> output``; must be importable by name (it runs in workers).
TaskFn = Callable[["Task", Report], Any]


@dataclass(frozen=True)
class Task:
    """One shard of a run: the job, its configuration and the deals of one fixed block."""

    job: str
    config: dict[str, Any]
    block: str
    spans: tuple[tuple[int, int], ...]

    @property
    def deals(self) -> int:
        return sum(b - a + 1 for a, b in self.spans)


class EngineError(RuntimeError):
    """A task failed in a worker (the message carries the worker's traceback), or workers kept dying."""


class Engine(ABC):
    """Runs tasks and yields ``(task, output)`` pairs in completion order."""

    name: str = "engine"

    @abstractmethod
    def run(self, fn: TaskFn, tasks: list[Task], on_progress: Report) -> Iterator[tuple[Task, Any]]:
        """Run ``fn(task, report)`` for every task, yielding each result as soon as it is complete."""

    def describe(self) -> str:
        return self.name

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the engine's resources."""

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SerialEngine(Engine):
    """Everything in the calling process, in order."""

    name = "serial"

    def run(self, fn: TaskFn, tasks: list[Task], on_progress: Report) -> Iterator[tuple[Task, Any]]:
        for task in tasks:
            yield task, fn(task, on_progress)


def get_engine(name: str, workers: int | None = None, scheduler: str | None = None) -> Engine:
    """The engine called `name` (``local`` or ``dask``); optional engines are imported lazily."""
    if name == "local":
        if scheduler:
            raise ValueError("--scheduler is for --engine dask")
        from fcanalyze.engines.local import ProcessEngine

        return SerialEngine() if workers == 1 else ProcessEngine(workers)
    if name == "dask":
        from fcanalyze.engines.dask import DaskEngine

        return DaskEngine(scheduler=scheduler, workers=workers)
    raise ValueError(f"unknown engine {name!r} (expected local or dask)")
