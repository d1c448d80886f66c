"""Engines run a pipeline's shard tasks: in-process (serial), on local worker processes, or on a Dask
cluster. They share one interface, so every engine produces the same tables: a worker computes a
shard and sends its tables back; only the parent writes files and the run file (run.json).

A task may also send a *record* per finished deal (``report(1, counts, record)``). The local engines pass
records to the parent as they come (``on_record``), which journals them so that a shard interrupted half
way resumes from its last finished deal; the Dask engine drops them (its shards resume whole).
"""

from __future__ import annotations

from fcanalyze.engines.base import (
    Engine,
    EngineError,
    InFlight,
    OnRecord,
    Progress,
    Report,
    Task,
    TaskFn,
)
from fcanalyze.engines.serial import SerialEngine

__all__ = [
    "Engine",
    "EngineError",
    "InFlight",
    "OnRecord",
    "Progress",
    "Report",
    "SerialEngine",
    "Task",
    "TaskFn",
    "get_engine",
]


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
