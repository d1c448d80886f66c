"""What a report shows, read from a run's directory through the library's readers: the run file
(`runfile`), the tables (`shards`), the summary's figures and published comparisons (`summary`) and
``PROVENANCE.md`` when there is one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fcanalyze import runfile, shards, summary

PROVENANCE = "PROVENANCE.md"


@dataclass(frozen=True)
class RunData:
    """A run's figures and the columns the charts draw."""

    out: Path
    run: dict[str, Any]
    #: `summary.summarize` of the run: classes, outcomes, per-cell-count searches, published comparisons.
    stats: dict[str, Any]
    searches: pa.Table
    #: The ``deals`` table of an ``analyze`` run; None for ``verify-unsolvable``.
    deals: pa.Table | None
    #: The ``unsolvable`` table when the run wrote it (at its end).
    unsolvable: pa.Table | None
    provenance: str | None
    #: One entry per deal, heaviest first: deal number, CPU ms and positions summed over its searches.
    per_deal: pa.Table

    @property
    def is_analyze(self) -> bool:
        return self.run["job"] == "analyze"

    def moves(self) -> np.ndarray:
        """Solution lengths in player moves: at the minimum number of cells (``analyze``) or with 4 cells."""
        table = self.deals if self.deals is not None else self.searches
        return table["moves"].drop_null().to_numpy()

    def proofs(self) -> pa.Table:
        """The searches that ended unsolvable (finished proofs): deal, cells, positions."""
        bad = self.searches.filter(pc.equal(self.searches["outcome"], "unsolvable"))
        return bad.select(["deal", "cells", "positions"])


def load(out: Path) -> RunData:
    """Read the run in `out`; `ValueError` (one line) when it is not a run with a finished shard."""
    out = Path(out)
    if not out.is_dir():
        raise ValueError(f"{out} is not a directory")
    stats = summary.summarize(out)  # raises ValueError for a directory without a run or a shard
    run = runfile.read(out)
    assert run is not None  # summarize has read it
    searches = shards.read_table(out, "searches")
    deals = shards.read_table(out, "deals") if run["job"] == "analyze" else None
    unsolvable = _optional_table(out, "unsolvable")
    prov = out / PROVENANCE
    return RunData(
        out=out,
        run=run,
        stats=stats,
        searches=searches,
        deals=deals,
        unsolvable=unsolvable,
        provenance=prov.read_text() if prov.is_file() else None,
        per_deal=_per_deal(searches),
    )


def _optional_table(out: Path, table: str) -> pa.Table | None:
    try:
        return shards.read_table(out, table)
    except ValueError:
        return None


def _per_deal(searches: pa.Table) -> pa.Table:
    per = searches.group_by("deal").aggregate([("elapsed_ms", "sum"), ("positions", "sum")])
    per = per.select(["deal", "elapsed_ms_sum", "positions_sum"]).rename_columns(["deal", "ms", "positions"])
    return per.sort_by([("ms", "descending"), ("deal", "ascending")])
