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
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import multiprocess
import pyarrow.parquet as pq

from fcanalyze import _core, records, runfile, runner, shards
from fcanalyze.checker import expand_autos, replay
from fcanalyze.deals import deal_layout
from fcanalyze.jobs import analyze

#: One unit of a shard's work: (deal, cells, line in standard notation, width, positions).
Line = tuple[int, int, str, int, int]


def shorten_line(item: Line) -> tuple[str, int]:
    """A stored line made short as the classification would have made it (in a worker): its notation and
    its player moves, replayed by the independent checker."""
    deal, cells, notation, width, positions = item
    layout = deal_layout(deal)
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
    if not cfg["solutions"]:
        raise ValueError(f"{out} was made with --no-solutions: its deals table keeps no lines to shorten")
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
) -> int:
    """Shorten the stored lines of the finished analyze run in `out` within `positions` positions a line
    (beams of `width`), on `workers` processes (default: one per core); returns how many lines it
    shortened (0 when they were already). `on_progress` hears the deals of each shard done."""
    out = Path(out)
    run = _check(out, runfile.read(out), width, positions)
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
                todo = [d for d in deals if d["solution"] is not None]
                if states[block] == "written":
                    entry["files"]["deals"] = shards.entry(deals_path, len(deals))
                else:
                    items: list[Line] = [
                        (d["deal"], d["min_cells_upper"], d["solution"], width, positions) for d in todo
                    ]
                    for row, (notation, moves) in zip(
                        todo, pool.imap(shorten_line, items, chunksize=8), strict=True
                    ):
                        row["solution"], row["moves"] = notation, moves
                    entry["files"]["deals"] = shards.write(
                        deals_path, records.to_table("deals", deals, config)
                    )
                    count += len(todo)
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
    runner.write_derived_tables(analyze.JOB, out, run)
    runfile.write(out, run)
    return count
