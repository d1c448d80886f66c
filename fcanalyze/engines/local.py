"""The local engine: worker processes (``multiprocess``, spawned) fed one task at a time by the parent.

The parent hands out tasks dynamically (solve times are heavy-tailed) over one pipe per worker, so it
always knows which worker holds which task: when a worker dies (killed, out of memory, a crash in the
core) its task goes back to the queue and a new worker replaces it; a task that kills three workers
stops the run. Workers ignore Ctrl-C; the parent stops them.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import traceback
from collections import Counter, deque
from collections.abc import Iterator
from typing import Any

import multiprocess
from multiprocess.connection import wait

from fcanalyze.engines.base import Engine, EngineError, OnRecord, Progress, Task, TaskFn

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


def _exit_with_parent(parent: int) -> None:
    """Exit as soon as the parent is gone (killed with SIGKILL, say): a worker in the middle of a long
    proof would otherwise go on alone, holding a core and its memory, for a result nobody will read."""
    while True:
        time.sleep(PARENT_CHECK)
        if os.getppid() != parent:
            os._exit(1)


def _worker_main(conn: Any, fn: TaskFn, parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The core releases the GIL while it searches, so this thread runs during a proof too.
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
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


class ProcessEngine(Engine):
    """Tasks on `workers` local processes (default: all cores)."""

    name = "local"

    def __init__(self, workers: int | None = None):
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.threads_per_task = max(1, (os.cpu_count() or 1) // self.workers)

    def describe(self) -> str:
        return f"local, {self.workers} worker processes"

    def run(
        self, fn: TaskFn, tasks: list[Task], on_progress: Progress, on_record: OnRecord | None = None
    ) -> Iterator[tuple[Task, Any]]:
        ctx = multiprocess.get_context("spawn")
        todo = deque(range(len(tasks)))
        done: set[int] = set()
        attempts = [0] * len(tasks)
        workers: dict[Any, dict[str, Any]] = {}  # parent connection -> {"proc", "task"}

        def start_worker() -> None:
            for _ in range(MAX_ATTEMPTS):
                parent, child = ctx.Pipe()
                proc = ctx.Process(target=_worker_main, args=(child, fn, os.getpid()), daemon=True)
                try:
                    proc.start()
                except OSError:
                    # The new process died before it read its start-up data (killed from outside):
                    # start another. Uncaught, the broken pipe would end the whole run.
                    parent.close()
                    child.close()
                    continue
                child.close()
                workers[parent] = {"proc": proc, "task": None, "eof": False}
                return
            raise EngineError(f"worker processes died {MAX_ATTEMPTS} times while starting; giving up")

        def feed(conn: Any) -> None:
            w = workers[conn]
            while todo and todo[0] in done:
                todo.popleft()
            if todo:
                tid = todo.popleft()
                attempts[tid] += 1
                if attempts[tid] > MAX_ATTEMPTS:
                    raise EngineError(
                        f"shard {tasks[tid].block} killed {MAX_ATTEMPTS} worker processes; giving up"
                    )
                w["task"] = tid
            else:
                w["task"] = None
            try:
                conn.send(None if w["task"] is None else (w["task"], tasks[w["task"]]))
            except OSError:
                # The worker is gone: the main loop sees its end and gives its task to another.
                w["eof"] = True

        def retire(conn: Any) -> None:
            w = workers.pop(conn)
            tid = w["task"]
            if tid is not None and tid not in done:
                todo.appendleft(tid)
            conn.close()
            w["proc"].join(timeout=1)

        try:
            for _ in range(min(self.workers, len(tasks))):
                start_worker()
            for conn in list(workers):
                feed(conn)
            while len(done) < len(tasks):
                sentinels = {w["proc"].sentinel: c for c, w in workers.items()}
                live = [c for c, w in workers.items() if not w["eof"]]
                for r in wait(live + list(sentinels), timeout=1.0):
                    conn = sentinels.get(r, r)
                    while conn in workers and not workers[conn]["eof"] and conn.poll():
                        try:
                            kind, tid, payload = conn.recv()
                        except (EOFError, OSError):
                            workers[conn]["eof"] = True
                            break
                        if kind == "progress":
                            on_progress(*payload)
                        elif kind == "record":
                            if on_record is not None and tid not in done:
                                on_record(tasks[tid], payload)
                        elif kind == "error":
                            raise EngineError(f"shard {tasks[tid].block} failed in a worker:\n{payload}")
                        elif kind == "done":
                            workers[conn]["task"] = None
                            if tid not in done:
                                done.add(tid)
                                yield tasks[tid], payload
                            feed(conn)
                    if conn in workers and not workers[conn]["proc"].is_alive():
                        retire(conn)
                        if todo and len(done) < len(tasks):
                            start_worker()
                            feed(next(reversed(workers)))
        finally:
            for conn, w in workers.items():
                if w["task"] is not None or w["proc"].is_alive():
                    w["proc"].terminate()
                w["proc"].join(timeout=5)
                if w["proc"].is_alive():
                    w["proc"].kill()
                conn.close()
