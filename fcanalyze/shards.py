"""Tables on disk: one Parquet shard per fixed block of deal numbers, written atomically, and the whole
tables read back from them.

Layout of an output directory::

    OUT/run.json                                   # the run file (runfile.py): config, shards, counts
    OUT/deals/deals-0000000001-0000001000.parquet  # one logical table per directory
    OUT/searches/searches-0000000001-0000001000.parquet
    OUT/unsolvable/unsolvable.parquet              # derived by the parent at the end
    OUT/journal/0000001001-0000002000.jsonl        # deals finished in a block not yet written (journal.py)
    OUT/journal/layered/DEAL/cells-K/              # a layered proof in progress: spill files, checkpoint

``pandas.read_parquet(OUT / "deals")`` reads a whole table.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from fcanalyze import atomic

COMPRESSION = "zstd"
#: Deals per shard unless a run says otherwise.
DEFAULT_SIZE = 1000


def block_name(first: int, last: int) -> str:
    """The zero-padded name of a block of deal numbers, e.g. ``0000000001-0000001000``."""
    return f"{first:010d}-{last:010d}"


def block_of(deal: int, shard_size: int) -> str:
    """The name of the aligned block of `shard_size` deals that holds `deal`."""
    first = (deal - 1) // shard_size * shard_size + 1
    return block_name(first, first + shard_size - 1)


def path(out: Path, table: str, block: str) -> Path:
    """The shard of `table` for `block`."""
    return out / table / f"{table}-{block}.parquet"


def derived_path(out: Path, table: str) -> Path:
    """The one file of a table derived from the others at the end of a run (``unsolvable``)."""
    return out / table / f"{table}.parquet"


def write(path: Path, table: pa.Table) -> dict[str, Any]:
    """Write `table` to `path` atomically; returns its entry for the run file (rows, bytes, sha256)."""
    atomic.write(path, lambda tmp: pq.write_table(table, tmp, compression=COMPRESSION, write_statistics=True))
    return entry(path, table.num_rows)


def entry(path: Path, rows: int) -> dict[str, Any]:
    """The run file's entry of the table file `path` of `rows` rows, as written: rows, bytes, sha256."""
    return {"rows": rows, "bytes": path.stat().st_size, "sha256": atomic.sha256_file(path)}


def paths(out: Path, table: str) -> Iterator[Path]:
    """The shards of `table`, in block order."""
    yield from sorted((Path(out) / table).glob(f"{table}-*.parquet"))


def read_table(out: Path, table: str) -> pa.Table:
    """A whole logical table (all its shards) sorted by deal (and cells)."""
    directory = Path(out) / table
    files = sorted(directory.glob(f"{table}-*.parquet")) or sorted(directory.glob("*.parquet"))
    if not files:
        raise ValueError(f"no {table} table in {out}")
    # ParquetFile, not read_table: read_table imports pandas (a quarter of a second) for its metadata.
    t = pa.concat_tables(pq.ParquetFile(f).read() for f in files)
    keys = [("deal", "ascending")] + ([("cells", "ascending")] if "cells" in t.column_names else [])
    return t.sort_by(keys)
