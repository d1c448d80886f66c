"""The engines' interface: the task of one shard, the callbacks, and the `Engine` base class."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

#: ``on_progress(deals_done, counts)`` is how the parent hears of a task's progress, for the progress bar.
Progress = Callable[[int, dict[str, int]], None]
#: ``on_record(task, record)``: a record a task sent about one finished deal, in the parent.
OnRecord = Callable[["Task", Any], None]


class Report(Protocol):
    """What a task calls as it goes: ``report(deals_done, counts)``, with ``record`` (anything picklable
    that the job can resume from) when the deals done can be saved before the whole shard is."""

    def __call__(self, deals: int, counts: dict[str, int], record: Any = None) -> None: ...


#: A task function: ``fn(task, report) -> output``; must be importable by name (it runs in workers).
TaskFn = Callable[["Task", Report], Any]


@dataclass(frozen=True)
class Task:
    """One shard of a run, or a piece of one: the job, its configuration and deals of one fixed block
    (``spans``: the whole block, or piece ``part`` of its ``parts``), with the records of the deals an
    earlier attempt already finished (``resume``), and a directory for the resumable files of long
    searches (``scratch``: used only where it exists, i.e. on the parent's machine), and the threads a
    long proof may use (``threads``: the engine's cores per worker; no result depends on it), and the
    order asked for (``first``, ``last``: `runner.run`)."""

    job: str
    config: dict[str, Any]
    block: str
    spans: tuple[tuple[int, int], ...]
    resume: tuple[Any, ...] = ()
    scratch: str | None = None
    threads: int = 1
    part: int = 0
    parts: int = 1
    #: Deals to search before the others of the task, and after them (spans; no row depends on them).
    first: tuple[tuple[int, int], ...] = ()
    last: tuple[tuple[int, int], ...] = ()

    @property
    def deals(self) -> int:
        return sum(b - a + 1 for a, b in self.spans)


@dataclass(frozen=True)
class InFlight:
    """A task a worker holds, as the parent sees it: when it was handed out and when it last reported
    (a finished deal, or progress), both on ``time.monotonic()``, and the deals it reported done."""

    task: Task
    started: float
    last: float
    deals: int = 0


class EngineError(RuntimeError):
    """A task failed in a worker (the message carries the worker's traceback), or workers kept dying."""


class Engine(ABC):
    """Runs tasks and yields ``(task, output)`` pairs in completion order. The tasks come from an iterable
    made on the fly (a run over every deal has millions): an engine takes them as it needs them."""

    name: str = "engine"
    #: Threads a task's layered proof may use: the cores each worker has to itself.
    threads_per_task: int = 1
    #: Whether the cores of workers left without a task go to the proofs still running (engines that
    #: can: the local one).
    lend_cores: bool = True

    @abstractmethod
    def run(
        self, fn: TaskFn, tasks: Iterable[Task], on_progress: Progress, on_record: OnRecord | None = None
    ) -> Iterator[tuple[Task, Any]]:
        """Run ``fn(task, report)`` for every task, yielding each result as soon as it is complete;
        records reach `on_record` (when given) before their task's result."""

    def parallelism(self) -> int:
        """How many tasks run at once: the scheduler cuts blocks into pieces when more than one does."""
        return 1

    def in_flight(self) -> list[InFlight]:
        """The tasks running now (the progress display names long searches from them); safe to call from
        another thread of the parent. Engines whose workers report only whole tasks return none."""
        return []

    def describe(self) -> str:
        return self.name

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the engine's resources."""

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
