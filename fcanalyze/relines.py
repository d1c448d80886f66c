"""The lines of a finished ``analyze`` run made short in place, without searching again.

A run made with ``--shorten-positions 0`` (every run made before lines were shortened) keeps each deal's
line as its search found it: hundreds, sometimes thousands of moves for the deals of few cells. The
classification shortens the line with the least cells after its search (``_core.classify``), so shortening
the stored line the same way (``_core.shorten(like="classify")``) gives the very row the run would have
written with ``--shorten-positions N``: `shorten_run` turns the directory into that run, row for row,
and its configuration says so (``shorten_width``, ``shorten_positions``), so that a later ``analyze``
with the same options resumes it. Every new line is replayed by the independent checker before it is
stored; the ``searches`` row of that line's search gets its new length too.

Shard by shard, each written atomically and the run file after it: a stopped run goes on from the shards
whose files already hold the new lines (their metadata names the new budget). The derived ``unsolvable``
table is written again at the end with the new configuration. The summary and the report count moves:
make them again after (``pipelines/relines.py`` does).

A run made with ``--no-solutions`` keeps no line to shorten, only each line's length: its lines are found
again (`find_again`: the fast solver at the row's least cells, then the short search, then the prover),
shortened the same way, replayed, and only their lengths stored. Such rows are not the very rows the run
would have written (the search that found the first line is not run again), so the run file records it
(``relined``); every class, bound and position count stays as it was.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import multiprocess
import pyarrow.parquet as pq

from fcanalyze import _core, records, runfile, runner, shards
from fcanalyze.checker import expand_autos, replay
from fcanalyze.deals import deal_layout
from fcanalyze.jobs import CORE_MAX, analyze

#: One unit of a shard's work: (deal, cells, line in standard notation or None to find one again, width,
#: positions).
Line = tuple[int, int, str | None, int, int]

#: The searches that find a line again at a row's cells, tried in turn: (strategy, positions). On a sample
#: of 1,000 deals of 1-1,000,000 at their least cells, the fast solver wins 998 within a million positions
#: (16 ms a deal on average, fallbacks included). Of the 12 deals it left in two samples (3,000 deals),
#: the short search won 11 (the 10 timed within 1.6 million positions, at most 1.4 s); the prover is
#: exhaustive, so it wins wherever a win exists (the row's line was one), and won the last (570180 with
#: 1 cell) within 86,000.
FIND_AGAIN: tuple[tuple[Literal["solve", "short", "prove"], int], ...] = (
    ("solve", 1_000_000),
    ("short", 10_000_000),
    ("prove", CORE_MAX),
)
FIND_AGAIN_MEMORY_MB = 2048


def find_again(deal: int, cells: int) -> list[dict[str, Any]]:
    """A winning line of `deal` with `cells` free cells (automatic moves included), from the searches of
    `FIND_AGAIN` in turn. `_core.InternalError` if none wins: the deal was solved with these cells."""
    for strategy, positions in FIND_AGAIN:
        found = _core.solve(
            deal, cells, max_positions=positions, strategy=strategy, max_memory_mb=FIND_AGAIN_MEMORY_MB
        )
        if found["outcome"] == "solved":
            moves: list[dict[str, Any]] = found["moves"]
            return moves
    raise _core.InternalError(f"deal {deal}, {cells} cells: no line found again ({found['outcome']})")


def shorten_line(item: Line) -> tuple[str, int]:
    """A line made short as the classification would have made it (in a worker): its notation and its
    player moves, replayed by the independent checker. The stored line, or (notation None) one found
    again."""
    deal, cells, notation, width, positions = item
    layout = deal_layout(deal)
    if notation is None:
        found = find_again(deal, cells)
    else:
        found = expand_autos(layout, cells, _core.parse_notation(notation))
    short = _core.shorten(deal, cells, found, width=width, max_positions=positions, like="classify")
    check = replay(layout, cells, short)
    if not check.ok:
        raise _core.InternalError(
            f"deal {deal}, {cells} cells: a shortened line failed the replay: {check.reason}"
        )
    return _core.format_notation(short), sum(1 for m in short if not m["auto"])


def _check(out: Path, run: dict[str, Any] | None, width: int, positions: int) -> dict[str, Any]:
    """The run of `out`, if its lines can be made short with this budget; ValueError (bad input) if not."""
    if run is None:
        raise ValueError(f"{out} holds no fcanalyze run (no {runfile.NAME})")
    if run.get("job") != "analyze":
        raise ValueError(f"{out} holds a {run.get('job')} run: only an analyze run's deals table keeps lines")
    if not run.get("complete"):
        raise ValueError(
            f"{out} holds a run not finished: finish it with the same fcanalyze analyze command first"
        )
    cfg = run["config"]
    if positions < 1 or width < 1:
        raise ValueError("the shortening needs a width and a number of positions of at least 1")
    if cfg["shorten_positions"] not in (0, positions) or (
        cfg["shorten_positions"] == positions and cfg["shorten_width"] != width
    ):
        raise ValueError(
            f"{out}'s lines were shortened already (width {cfg['shorten_width']}, "
            f"{cfg['shorten_positions']:,} positions): only lines as found become those of another budget"
        )
    return run


def _has_budget(path: Path, positions: int) -> bool:
    """Whether table file `path` was written with lines shortened within `positions` (its metadata's
    configuration says so); False for a file that cannot be read."""
    try:
        meta = pq.read_metadata(path).metadata or {}
        return bool(json.loads(meta.get(b"fcanalyze.config", b"{}")).get("shorten_positions") == positions)
    except (OSError, ValueError):  # pyarrow's errors of a damaged file are ValueErrors
        return False


def _shard_state(out: Path, block: str, entry: dict[str, Any], positions: int) -> str:
    """Where the shard `block` stands: ``"todo"`` (its lines as found), ``"written"`` (its new deals file
    written before a stop, its run file entry not yet) or ``"done"``. `runfile.DamagedFile` if one of its
    files is neither the file the run file records nor one this shortening wrote before a stop (the
    deals file first, then the searches file, then the run file: a file with the new budget in its
    metadata was written whole, atomically, by an earlier invocation)."""
    new, stale = {}, False
    for table in ("deals", "searches"):
        path = shards.path(out, table, block)
        problem = runfile.file_problem(path, entry["files"][table])
        new[table] = problem != "missing" and _has_budget(path, positions)
        if problem is not None and not (new[table] and (table == "deals" or new["deals"])):
            raise runfile.DamagedFile(
                f"{path} is {'missing' if problem == 'missing' else 'damaged'} ({problem}); "
                "the run it belongs to must be made again"
            )
        stale = stale or problem is not None
    if not new["deals"]:
        return "todo"
    return "written" if stale else "done"


def shorten_run(
    out: Path,
    positions: int = _core.CLASSIFY_SHORTEN_POSITIONS,
    width: int = _core.CLASSIFY_SHORTEN_WIDTH,
    workers: int | None = None,
    on_progress: Callable[[int], None] | None = None,
    again: bool = False,
) -> int:
    """Shorten the stored lines of the finished analyze run in `out` within `positions` positions a line
    (beams of `width`), on `workers` processes (default: one per core); returns how many lines it
    shortened (0 when they were already). A run made with ``--no-solutions`` gets lines found again
    (`find_again`; only their lengths are stored), and so do all rows with `again`. `on_progress` hears
    the deals of each shard done."""
    out = Path(out)
    run = _check(out, runfile.read(out), width, positions)
    again = again or not run["config"]["solutions"]
    runfile.check_derived_tables(out, run, accept=lambda path: _has_budget(path, positions))
    states = {
        block: _shard_state(out, block, entry, positions) for block, entry in sorted(run["shards"].items())
    }
    config = {**run["config"], "shorten_width": width, "shorten_positions": positions}
    count = 0
    with multiprocess.get_context("spawn").Pool(workers or multiprocess.cpu_count()) as pool:
        for block, entry in sorted(run["shards"].items()):
            if states[block] != "done":
                deals_path, searches_path = (
                    shards.path(out, "deals", block),
                    shards.path(out, "searches", block),
                )
                deals = pq.read_table(deals_path).to_pylist()
                todo = [d for d in deals if d["moves"] is not None]
                if states[block] == "written":
                    entry["files"]["deals"] = shards.entry(deals_path, len(deals))
                else:
                    items: list[Line] = [
                        (d["deal"], d["min_cells_upper"], None if again else d["solution"], width, positions)
                        for d in todo
                    ]
                    for row, (notation, moves) in zip(
                        todo, pool.imap(shorten_line, items, chunksize=8), strict=True
                    ):
                        row["moves"] = moves
                        if run["config"]["solutions"]:
                            row["solution"] = notation
                    count += len(todo)
                    entry["files"]["deals"] = shards.write(
                        deals_path, records.to_table("deals", deals, config)
                    )
                # The search that found each stored line: its row gets the line's new length.
                lengths = {(d["deal"], d["min_cells_upper"]): d["moves"] for d in todo}
                searches = pq.read_table(searches_path).to_pylist()
                for s in searches:
                    s["moves"] = lengths.get((s["deal"], s["cells"]), s["moves"])
                entry["files"]["searches"] = shards.write(
                    searches_path, records.to_table("searches", searches, config)
                )
                runfile.write(out, run)
            if on_progress:
                on_progress(entry["deals"])
    run["config"] = config
    if again:
        # The rows' lengths are those of lines found again, not of the lines the run's searches found.
        run.setdefault("relined", []).append(
            {"at": datetime.now(UTC).isoformat(timespec="seconds"), "lines": "found again"}
        )
    runner.write_derived_tables(analyze.JOB, out, run)
    runfile.write(out, run)
    return count
