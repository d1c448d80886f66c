"""The progress of a run, drawn by the parent only (stderr), silent with --quiet: a bar on a terminal; a
plain line every `LOG_EVERY` seconds and at each shard written when stderr is a file or a pipe (a log, CI).
Both carry an estimate of the time left from the search time of the deals (`estimate`), and a line names
a search that has run for minutes (`search_line`), with its layered proof's layer and positions when its
checkpoint is there (`read_checkpoint`)."""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from tqdm import tqdm

from fcanalyze.runner import Running, Watch

#: Seconds between plain lines when stderr is not a terminal.
LOG_EVERY = 10.0
#: Seconds between updates of the bar's estimate on a terminal (the running searches age).
BAR_EVERY = 2.0
#: A search running this long gets a line naming it, ...
LONG_SEARCH = 120.0
#: ... at most once a `SEARCH_EVERY` seconds.
SEARCH_EVERY = 60.0
#: A running search past this many times the mean of the finished deals (and past `TAIL_MIN` seconds)
#: is in the heavy tail: the estimate is then only a lower bound.
TAIL_FACTOR = 10.0
TAIL_MIN = 30.0
#: The first line of a layered proof's checkpoint (crates/fcanalyze-core/src/layered/checkpoint.rs).
CHECKPOINT_FORMAT = "fcanalyze-layered-checkpoint/4"

#: The first line of the file a proof that won without a line leaves for the search for it (``WonAt`` in
#: crates/fcanalyze-core/src/layered/search.rs).
WON_AT_FORMAT = "fcanalyze-layered-won-at/1"


def duration(seconds: float) -> str:
    """`seconds` for people: 45 s, 12 min, 3 h 05 min, 2 d 04 h."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    m = s // 60
    if m < 60:
        return f"{m} min"
    h, m = divmod(m, 60)
    if h < 48:
        return f"{h} h {m:02d} min"
    d, h = divmod(h, 24)
    return f"{d} d {h:02d} h"


@dataclass(frozen=True)
class Estimate:
    """The time left: `seconds`, and whether it is only a lower bound (a search in the heavy tail is
    counted as if it ended now; `tail` is the index of the longest such search)."""

    seconds: float
    lower_bound: bool = False
    tail: int | None = None


def estimate(left: int, workers: int, done: int, done_cpu: float, running: list[float]) -> Estimate | None:
    """The time left of a run with `left` deals still to compute (those running included), on `workers`
    workers, from the `done` deals computed so far, which took `done_cpu` seconds of search in all, and
    the searches `running` now (seconds each has run so far). None (unknown) before a deal is computed.

    The mean search time per deal counts each running search at its time so far (a lower bound of its
    cost), so a hard deal weighs as soon as it starts, not only when it ends: the work left is that mean
    for each deal not started, and what a running search lacks of it, shared by the workers (no more of
    them than deals left). Search times are heavy-tailed: while a search has run more than `TAIL_FACTOR`
    times the mean of the finished deals (and more than `TAIL_MIN` seconds), its end cannot be told (it
    is counted as if it ended now), and the estimate is only a lower bound."""
    if left <= 0:
        return Estimate(0.0)
    if done <= 0:
        return None
    spent = sum(running)
    mean = (done_cpu + spent) / (done + len(running))
    work = (left - len(running)) * mean + sum(max(mean - e, 0.0) for e in running)
    seconds = max(work, 0.0) / max(1, min(workers, left))
    typical = max(TAIL_MIN, TAIL_FACTOR * done_cpu / done)
    tail = [i for i, e in enumerate(running) if e > typical]
    if not tail:
        return Estimate(seconds)
    return Estimate(seconds, True, max(tail, key=lambda i: running[i]))


@dataclass(frozen=True)
class Checkpoint:
    """What a layered proof's checkpoint tells of it: the cells, the layer it is in (0-104), and the
    positions counted when it was saved; `line`: the checkpoint of the search for the line of a win the
    proof found without one (``cells-K/line/checkpoint``), whose positions then count the proof's too;
    `back`: the line of a win is being traced back through a group on disk (its levels in
    `ON_DISK` beside the checkpoint: minutes to hours for a giant group, the checkpoint unchanged)."""

    cells: int
    layer: int
    positions: int
    line: bool = False
    back: bool = False


#: The directory beside a checkpoint where the way back to a win searches a group by levels
#: (crates/fcanalyze-core/src/layered/chain.rs, ``ON_DISK``).
ON_DISK = "way-back-levels"


def parse_checkpoint(text: str, cells: int, of_line: bool = False) -> Checkpoint | None:
    """The checkpoint saved as `text` (``name value...`` a line, ending with ``end``); None unless it is
    whole. Its positions: those of the layers finished (``done``) and of the groups of its layer finished
    or searched by levels so far (``finished``, ``levels``)."""
    lines = text.splitlines()
    if not lines or lines[0] != CHECKPOINT_FORMAT or lines[-1] != "end":
        return None
    layer, positions = None, 0
    try:
        for line in lines[1:]:
            w = line.split(" ")
            if w[0] == "layer":
                layer = int(w[1])
            elif w[0] == "done":
                positions += int(w[1])
            elif w[0] in ("finished", "levels"):  # finished|levels GROUP SIGNATURE POSITIONS ...
                positions += int(w[3])
    except (IndexError, ValueError):
        return None
    return None if layer is None else Checkpoint(cells, layer, positions, of_line)


def read_checkpoint(deal_dir: Path) -> Checkpoint | None:
    """The latest checkpoint of the layered proofs of a deal (``DEAL/cells-K/checkpoint``), or of the
    searches for their lines (``DEAL/cells-K/line/checkpoint``, its positions counted with the proof's
    from ``DEAL/cells-K/won-at``), if any."""
    found = []
    for path in [*deal_dir.glob("cells-*/checkpoint"), *deal_dir.glob("cells-*/line/checkpoint")]:
        of_line = path.parent.name == "line"
        cells_dir = path.parent.parent if of_line else path.parent
        try:
            cells = int(cells_dir.name[len("cells-") :])
            found.append((path.stat().st_mtime, cells, of_line, path.read_text(), path.parent))
        except (OSError, ValueError, UnicodeDecodeError):
            continue  # renamed over, or gone, while we looked
    for _, cells, of_line, text, beside in sorted(found, reverse=True):
        c = parse_checkpoint(text, cells, of_line)
        if c is not None and of_line:
            # Its positions follow the proof's: the budget is spent on both.
            proof = _won_at_positions(deal_dir / f"cells-{cells}" / "won-at")
            c = None if proof is None else replace(c, positions=proof + c.positions)
        if c is not None:
            return replace(c, back=(beside / ON_DISK).is_dir())
    return None


def _won_at_positions(path: Path) -> int | None:
    """The positions of the proof that won without a line, from its ``won-at`` file
    (crates/fcanalyze-core/src/layered/search.rs, ``WonAt``); None unless it is whole."""
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    if not lines or lines[0] != WON_AT_FORMAT:
        return None
    for line in lines[1:]:
        w = line.split(" ")
        if w[0] == "positions" and len(w) == 2 and w[1].isdigit():
            return int(w[1])
    return None


def _cells(n: int) -> str:
    return f"{n} cell" if n == 1 else f"{n} cells"


def _name(r: Running) -> str:
    return f"deal {r.deal}" if r.deal is not None else f"a deal of {r.deals[0]}-{r.deals[1]}"


def search_line(r: Running, max_cells: int | None) -> str:
    """A line naming the search `r`: its deal and, from its layered proof's checkpoint, the cells, layer
    and positions; else its deal (or chunk of deals) and how long it has run."""
    what = _name(r)
    c = read_checkpoint(r.scratch) if r.scratch is not None else None
    if c is not None:
        search, count = (
            ("search for the line of its win", " (the proof's too)") if c.line else ("layered proof", "")
        )
        back = ", now tracing its line back through a group on disk" if c.back else ""
        return (
            f"{what}, {_cells(c.cells)}: {search} at layer {c.layer} (of 0-104), "
            f"{c.positions:,} positions{count} at its last checkpoint{back}; searching for "
            f"{duration(r.seconds)}"
        )
    cells = f", up to {_cells(max_cells)}" if max_cells is not None else ""
    return f"{what}{cells}: searching for {duration(r.seconds)}"


class Progress(Watch):
    """Deals done, shards, outcome counts so far, search time and the estimate of the time left."""

    def __init__(
        self,
        total: int,
        counters: tuple[str, ...],
        quiet: bool,
        desc: str,
        max_cells: int | None = None,
        stream: TextIO | None = None,
    ):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.terminal = not quiet and self.stream.isatty()
        self.total, self.counters, self.desc, self.max_cells = total, counters, desc, max_cells
        self.counts: Counter[str] = Counter()
        self.n = 0  # deals done (this run, and those it resumed)
        self.kept = 0  # deals already done when the run started
        self.shards = self.shards_total = 0
        self.computed, self.cpu = 0, 0.0  # deals computed in this run, and their search time (s)
        self.workers = 1
        self.running: Callable[[], list[Running]] = list
        self.last_search_line = 0.0
        self.eta_text = ""  # the bar's estimate, as of the display's last tick
        self.lock = threading.RLock()
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        self.bar = tqdm(
            total=total,
            unit=" deals",
            desc=desc,
            disable=not self.terminal,
            dynamic_ncols=True,
            smoothing=0.05,
            mininterval=0.5,
            file=self.stream,
            # The rate stays; the time left is this module's estimate, in the postfix.
            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}, {rate_fmt}{postfix}]",
        )

    # The run's callbacks (runner.Watch, and on_progress / on_skip).

    def __call__(self, n: int, counts: dict[str, int]) -> None:
        with self.lock:
            self.n += n
            self.counts.update(counts)
            self.bar.set_postfix_str(self._postfix(), refresh=False)
            self.bar.update(n)

    def skipped(self, n: int, counts: dict[str, int]) -> None:
        """Deals already done in an earlier run: counted, without moving the rate."""
        with self.lock:
            self.n += n
            self.counts.update(counts)
            self.bar.total -= n
            self.bar.refresh()

    def resuming(self, done: int, total: int, shards: int, journaled: int) -> None:
        self.kept, self.shards = done, shards
        what = f"{shards:,} shard{'' if shards == 1 else 's'} complete"
        if journaled:
            # The progress counts these when their shards go on: say so, or its count looks too low.
            deals = f"{journaled:,} deal{'' if journaled == 1 else 's'}"
            what += f", {deals} of started shards, counted as those go on"
        self._say(f"resuming: {done:,} of {total:,} deals already done ({what})")

    def finished(self, deals: int, cpu_ms: float) -> None:
        with self.lock:
            self.computed += deals
            self.cpu += cpu_ms / 1e3

    def shard_written(self) -> None:
        with self.lock:
            self.shards += 1
        if not self.terminal and not self.quiet:
            self._log()

    def files_removed(self, deals: list[int], size: int, free: int) -> None:
        names = ", ".join(map(str, deals))
        self._say(
            f"removed the files kept by the proofs of deal{'' if len(deals) == 1 else 's'} {names} "
            f"(their next pass starts them afresh): {free / 1e9:,.1f} GB free of {size / 1e9:,.1f} GB"
        )

    def attach(self, running: Callable[[], list[Running]], workers: int, shards_total: int) -> None:
        self.running, self.workers, self.shards_total = running, workers, shards_total
        if not self.quiet and self.thread is None:
            self.thread = threading.Thread(target=self._tick, name="fcanalyze-progress", daemon=True)
            self.thread.start()

    def close(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
        self.bar.close()

    # What is shown.

    def _say(self, line: str) -> None:
        if self.quiet:
            return
        with self.lock:
            try:
                if self.terminal:
                    self.bar.write(line, file=self.stream)
                else:
                    print(line, file=self.stream, flush=True)
            except (OSError, ValueError):
                # stderr is gone (a closed pipe, a full disk): the run goes on without its display.
                self.quiet = True

    def eta(self, running: list[Running] | None = None) -> str:
        """The estimate of the time left, as shown."""
        running = self.running() if running is None else running
        with self.lock:
            left = self.total - self.kept - self.computed
            if left <= 0:
                return "all deals computed"
            e = estimate(left, self.workers, self.computed, self.cpu, [r.seconds for r in running])
        if e is None:
            return "ETA unknown"
        when = "under a minute" if e.seconds < 60 else duration(e.seconds)
        if not e.lower_bound:
            return f"ETA {when}"
        r = running[e.tail] if e.tail is not None else None
        why = f" (heavy tail: {_name(r)} running {duration(r.seconds)})" if r is not None else ""
        return f"ETA unknown{why}" if e.seconds < 60 else f"ETA at least {when}{why}"

    def _postfix(self) -> str:
        counts = " ".join(f"{k}={self.counts[k]}" for k in self.counters if self.counts[k])
        return ", ".join(x for x in (counts, self.eta_text) if x)

    def _log(self, running: list[Running] | None = None) -> None:
        """The plain line: time, deals done of total, shards, outcomes so far, search time, estimate."""
        running = self.running() if running is None else running
        eta = self.eta(running)
        with self.lock:
            shards = f"{self.shards:,} of {self.shards_total:,} shards"
            counts = ", ".join(f"{k} {self.counts[k]:,}" for k in self.counters if self.counts[k])
            cpu = self.cpu + sum(r.seconds for r in running)
            line = (
                f"{time.strftime('%H:%M:%S')} {self.desc}: {self.n:,} of {self.total:,} deals, {shards}"
                f"{', ' + counts if counts else ''}, search time {duration(cpu)}, {eta}"
            )
        self._say(line)

    def _tick(self) -> None:
        """The display's own clock: it runs while a long search holds every worker."""
        every = BAR_EVERY if self.terminal else LOG_EVERY
        while not self.stop.wait(every) and not self.quiet:
            try:
                self._show()
            except Exception:  # a display never stops a run, nor prints a traceback in it
                continue

    def _show(self) -> None:
        """One tick: the bar's estimate or the plain line, and the lines of the long searches."""
        running = self.running()
        if self.terminal:
            eta = self.eta(running)
            with self.lock:
                self.eta_text = eta
                self.bar.set_postfix_str(self._postfix(), refresh=True)
        else:
            self._log(running)
        now = time.monotonic()
        long = [r for r in running if r.seconds >= LONG_SEARCH]
        if long and now - self.last_search_line >= SEARCH_EVERY:
            self.last_search_line = now
            for r in sorted(long, key=lambda r: -r.seconds):
                self._say(f"{time.strftime('%H:%M:%S')} {self.desc}: {search_line(r, self.max_cells)}")
