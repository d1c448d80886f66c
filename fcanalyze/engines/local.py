"""The local engine: worker processes (``multiprocess``, spawned) fed one task at a time by the parent.

The parent takes tasks from the run's iterable only as workers need them and hands them out dynamically
(solve times are heavy-tailed) over one pipe per worker, so it always knows which worker holds which
task: when a worker dies (killed, out of memory, a crash in the core) its task goes back to the queue
and a new worker replaces it; a task that kills three workers stops the run. Workers ignore Ctrl-C;
the parent stops them.

Each task's layered proofs run on the cores its worker has to itself (`threads_per_task`). Once every
task is handed out, a worker left without one exits, and its cores go to the proofs still running: the
parent keeps the cores per busy worker in a shared value, and each worker lends them to its core
(`fcanalyze._core.lend_threads`), which takes them at the proof's next layer. So the last giant proof of
a run is not searched on one core while the others idle.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import traceback
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from typing import Any

import multiprocess
from multiprocess.connection import wait

from fcanalyze import _core
from fcanalyze.engines.base import Engine, EngineError, InFlight, OnRecord, Progress, Task, TaskFn

MAX_ATTEMPTS = 3
REPORT_EVERY = 0.25  # seconds between progress messages from a worker
PARENT_CHECK = 1.0  # seconds between a worker's checks that its parent is alive


class _Reporter:
    """A task's progress, sent to the parent at most every `REPORT_EVERY` seconds."""

    def __init__(self, conn: Any, tid: int):
        self.conn, self.tid = conn, tid
        self.deals, self.counts = 0, Counter()
        self.last = time.monotonic()

    def __call__(self, n: int, counts: dict[str, int], record: Any = None) -> None:
        self.deals += n
        self.counts.update(counts)
        if record is not None:
            # Progress first, so that the parent's counts never lag behind what it has saved.
            self.flush()
            self.conn.send(("record", self.tid, record))
        elif time.monotonic() - self.last >= REPORT_EVERY:
            self.flush()

    def flush(self) -> None:
        if self.deals or self.counts:
            self.conn.send(("progress", self.tid, (self.deals, dict(self.counts))))
        self.deals, self.counts = 0, Counter()
        self.last = time.monotonic()


def _watch_parent(parent: int, lent: Any) -> None:
    """Exit as soon as the parent is gone (killed with SIGKILL, say): a worker in the middle of a long
    proof would otherwise go on alone, holding a core and its memory, for a result nobody will read.
    Meanwhile, lend the core the threads the parent says (`lent`, 0: none)."""
    seen = 0
    while True:
        time.sleep(PARENT_CHECK)
        if os.getppid() != parent:
            os._exit(1)
        if lent.value != seen:
            seen = lent.value
            _core.lend_threads(seen)


def _worker_main(conn: Any, fn: TaskFn, parent: int, lent: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The core releases the GIL while it searches, so this thread runs during a proof too.
    threading.Thread(target=_watch_parent, args=(parent, lent), daemon=True).start()
    try:
        _serve(conn, fn)
    except (EOFError, OSError):
        # The pipe to the parent broke (a BrokenPipeError, an EOF): the parent is gone, killed, and
        # nobody reads what this worker would say. Exit without a traceback on the terminal it shared.
        os._exit(1)


def _serve(conn: Any, fn: TaskFn) -> None:
    """Run the tasks the parent sends until it sends None. A task's error goes to the parent; a broken
    pipe (the parent gone, even mid-task, when `report` sends) raises out of here."""
    while True:
        msg = conn.recv()
        if msg is None:
            return
        tid, task = msg
        report = _Reporter(conn, tid)
        try:
            out = fn(task, report)
        except BaseException:
            conn.send(("error", tid, traceback.format_exc()))
            return
        report.flush()
        conn.send(("done", tid, out))


class _Pool:
    """The worker processes of one run: the task each holds, the tasks to hand out (taken from the
    run's iterable as workers need them, and those to run again), and the attempts of each task in
    flight (a task whose worker died goes back to the queue)."""

    def __init__(self, fn: TaskFn, tasks: Iterable[Task], cores: int):
        self.ctx = multiprocess.get_context("spawn")
        #: The cores to share out between the workers' tasks, once no task is left to hand out.
        self.cores = cores
        #: The threads lent to the tasks' proofs, read by the workers (0: none, each its own).
        self.lent = self.ctx.Value("i", 0, lock=False)
        self.fn = fn
        self.source = iter(tasks)
        self.exhausted = False
        self.count = 0  # tasks taken from the source so far: the next one's id
        self.pending: dict[int, Task] = {}  # tasks taken and not done, by id
        self.attempts: dict[int, int] = {}
        self.retry: deque[int] = deque()  # tasks whose worker died, to hand out again first
        self.workers: dict[Any, dict[str, Any]] = {}  # parent connection -> {"proc", "task", "eof"}
        #: The tasks handed out and not done, by id: read by the progress display from another thread,
        #: so each entry is replaced whole, never changed in place.
        self.flight: dict[int, InFlight] = {}

    def finished(self) -> bool:
        return self.exhausted and not self.pending

    def next_task(self) -> int | None:
        """The id of the next task to hand out (a task to run again first), or None when none is left."""
        while self.retry:
            tid = self.retry.popleft()
            if tid in self.pending:
                return tid
        if self.exhausted:
            return None
        task = next(self.source, None)
        if task is None:
            self.exhausted = True
            return None
        tid, self.count = self.count, self.count + 1
        self.pending[tid] = task
        self.attempts[tid] = 0
        return tid

    def start_worker(self) -> Any:
        """Start a worker process; returns its connection."""
        for _ in range(MAX_ATTEMPTS):
            parent, child = self.ctx.Pipe()
            proc = self.ctx.Process(
                target=_worker_main, args=(child, self.fn, os.getpid(), self.lent), daemon=True
            )
            try:
                proc.start()
            except OSError:
                # The new process died before it read its start-up data (killed from outside):
                # start another. Uncaught, the broken pipe would end the whole run.
                parent.close()
                child.close()
                continue
            child.close()
            self.workers[parent] = {"proc": proc, "task": None, "eof": False}
            return parent
        raise EngineError(f"worker processes died {MAX_ATTEMPTS} times while starting; giving up")

    def feed(self, conn: Any, tid: int | None = None) -> None:
        """Send the worker on `conn` task `tid` (default: the next one), or None (nothing left: it exits)."""
        w = self.workers[conn]
        if tid is None:
            tid = self.next_task()
        if tid is not None:
            self.attempts[tid] += 1
            if self.attempts[tid] > MAX_ATTEMPTS:
                raise EngineError(
                    f"shard {self.pending[tid].block} killed {MAX_ATTEMPTS} worker processes; giving up"
                )
        w["task"] = tid
        if tid is not None:
            now = time.monotonic()
            self.flight[tid] = InFlight(self.pending[tid], now, now)
        try:
            conn.send(None if tid is None else (tid, self.pending[tid]))
        except OSError:
            # The worker is gone: the main loop sees its end and gives its task to another.
            w["eof"] = True

    def ready(self) -> list[Any]:
        """The connections with messages, or whose worker ended (waits at most a second)."""
        sentinels = {w["proc"].sentinel: c for c, w in self.workers.items()}
        live = [c for c, w in self.workers.items() if not w["eof"]]
        return [sentinels.get(r, r) for r in wait(live + list(sentinels), timeout=1.0)]

    def receive(
        self, conn: Any, on_progress: Progress, on_record: OnRecord | None
    ) -> Iterator[tuple[Task, Any]]:
        """Handle the messages waiting on `conn`, yielding each task it completes."""
        while conn in self.workers and not self.workers[conn]["eof"] and conn.poll():
            try:
                kind, tid, payload = conn.recv()
            except (EOFError, OSError):
                self.workers[conn]["eof"] = True
                break
            if kind in ("progress", "record"):
                self._heard(tid, payload[0] if kind == "progress" else 0)
            if kind == "progress":
                on_progress(*payload)
            elif kind == "record":
                if on_record is not None and tid in self.pending:
                    on_record(self.pending[tid], payload)
            elif kind == "error":
                raise EngineError(f"shard {self.pending[tid].block} failed in a worker:\n{payload}")
            elif kind == "done":
                self.workers[conn]["task"] = None
                self.flight.pop(tid, None)
                task = self.pending.pop(tid, None)
                self.attempts.pop(tid, None)
                if task is not None:
                    yield task, payload
                self.feed(conn)

    def _heard(self, tid: int, deals: int) -> None:
        """Task `tid` reported: `deals` more done (a record comes after the progress that counts it)."""
        f = self.flight.get(tid)
        if f is not None:
            self.flight[tid] = InFlight(f.task, f.started, time.monotonic(), f.deals + deals)

    def replace_if_dead(self, conn: Any) -> None:
        """When the worker on `conn` has ended, put its task back and start another worker if there is
        work left."""
        if conn not in self.workers or self.workers[conn]["proc"].is_alive():
            return
        w = self.workers.pop(conn)
        tid = w["task"]
        if tid is not None:
            self.flight.pop(tid, None)
        if tid is not None and tid in self.pending:
            self.retry.appendleft(tid)
        conn.close()
        w["proc"].join(timeout=1)
        if self.finished():
            return
        tid = self.next_task()
        if tid is not None:
            self.feed(self.start_worker(), tid)

    def lend(self) -> None:
        """Once every task is handed out, share the cores out between the workers still busy (their
        proofs take them at their next layer); before, lend none."""
        busy = sum(w["task"] is not None for w in self.workers.values())
        share = self.cores // busy if busy and self.exhausted and not self.retry else 0
        if self.lent.value != share:
            self.lent.value = share

    def close(self) -> None:
        """Stop the workers still busy, and wait for every worker to end."""
        for conn, w in self.workers.items():
            if w["task"] is not None or w["proc"].is_alive():
                w["proc"].terminate()
            w["proc"].join(timeout=5)
            if w["proc"].is_alive():
                w["proc"].kill()
            conn.close()


class ProcessEngine(Engine):
    """Tasks on `workers` local processes (default: all cores)."""

    name = "local"

    def __init__(self, workers: int | None = None):
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.threads_per_task = max(1, (os.cpu_count() or 1) // self.workers)
        self._pool: _Pool | None = None

    def describe(self) -> str:
        return f"local, {self.workers} worker processes"

    def parallelism(self) -> int:
        return self.workers

    def in_flight(self) -> list[InFlight]:
        pool = self._pool
        return list(pool.flight.values()) if pool is not None else []

    def run(
        self, fn: TaskFn, tasks: Iterable[Task], on_progress: Progress, on_record: OnRecord | None = None
    ) -> Iterator[tuple[Task, Any]]:
        cores = (os.cpu_count() or 1) if self.lend_cores else 0
        pool = self._pool = _Pool(fn, tasks, cores)
        try:
            for _ in range(self.workers):  # no more workers than tasks
                tid = pool.next_task()
                if tid is None:
                    break
                pool.feed(pool.start_worker(), tid)
            while not pool.finished():
                for conn in pool.ready():
                    yield from pool.receive(conn, on_progress, on_record)
                    pool.replace_if_dead(conn)
                pool.lend()
        finally:
            self._pool = None
            pool.close()
