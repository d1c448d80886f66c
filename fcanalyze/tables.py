"""Tables on disk: Parquet shards per fixed block of deal numbers, written atomically, and the run
manifest (``run.json``) that says which shards are complete and what they hold.

Layout of an output directory::

    OUT/run.json                                   # config, versions, shards (rows, sha256), counts
    OUT/deals/deals-0000000001-0000001000.parquet  # one logical table per directory
    OUT/searches/searches-0000000001-0000001000.parquet
    OUT/unsolvable/unsolvable.parquet              # derived by the parent at the end
    OUT/journal/0000001001-0000002000.jsonl        # deals finished in a block not yet written
    OUT/journal/layered/DEAL/cells-K/              # a layered proof in progress: spill files, checkpoint

``pandas.read_parquet(OUT / "deals")`` reads a whole table.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

RUN_FILE = "run.json"
JOURNAL_DIR = "journal"
#: Seconds between fsyncs of a journal: a record is flushed at once (a killed process loses nothing), and
#: on disk within this time (a crash of the machine loses at most this much work).
JOURNAL_SYNC = 5.0
RUN_FORMAT = "fcanalyze-run/1"
COMPRESSION = "zstd"


def block_name(first: int, last: int) -> str:
    """The zero-padded name of a block of deal numbers, e.g. ``0000000001-0000001000``."""
    return f"{first:010d}-{last:010d}"


def shard_path(out: Path, table: str, block: str) -> Path:
    return out / table / f"{table}-{block}.parquet"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: The process's umask, read once at import (reading it means setting it).
_UMASK = _umask()


def _atomic(path: Path, write) -> None:
    """Call ``write(tmp_path)`` then rename the temporary file over `path` (same directory, fsynced)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp's 0600 would make shared output unreadable to others
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_table(path: Path, table: pa.Table) -> dict[str, Any]:
    """Write `table` to `path` atomically; returns its entry for the run manifest (rows, bytes, sha256)."""
    _atomic(path, lambda tmp: pq.write_table(table, tmp, compression=COMPRESSION, write_statistics=True))
    return {"rows": table.num_rows, "bytes": path.stat().st_size, "sha256": sha256_file(path)}


def write_text(path: Path, text: str) -> None:
    """Write a text file atomically."""
    _atomic(path, lambda tmp: Path(tmp).write_text(text))


def write_json(path: Path, obj: Any) -> None:
    """Write JSON atomically (indented, newline-terminated)."""
    write_text(path, json.dumps(obj, indent=1) + "\n")


def remove_stale_temporaries(out: Path) -> int:
    """Remove the temporary files a killed run left behind (``.NAME.XXXX.tmp`` beside the files it was
    writing: never read, since a file only takes its name once complete). Returns how many."""
    stale = [*out.glob(".*.tmp"), *out.glob("*/.*.tmp")]
    for p in stale:
        p.unlink(missing_ok=True)
    return len(stale)


def journal_path(out: Path, block: str) -> Path:
    return out / JOURNAL_DIR / f"{block}.jsonl"


def read_journal(path: Path) -> list[dict[str, Any]]:
    """The records of a journal, one per deal (a deal's last record wins: it is the newest). Reading
    stops at the first line that is not a whole record: the tail a killed writer left half written."""
    if not path.exists():
        return []
    found: dict[Any, dict[str, Any]] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                break
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                break
            if not isinstance(record, dict) or "deal" not in record:
                break
            found[record["deal"]] = record
    return list(found.values())


class Journal:
    """Append-only journals of records, one file per block, opened on first use."""

    def __init__(self, out: Path):
        self.out = out
        self.files: dict[str, Any] = {}
        self.synced = time.monotonic()

    def append(self, block: str, record: dict[str, Any]) -> None:
        f = self.files.get(block)
        if f is None:
            path = journal_path(self.out, block)
            path.parent.mkdir(parents=True, exist_ok=True)
            f = self.files[block] = open(path, "a", encoding="utf-8")  # noqa: SIM115 - kept open
        f.write(json.dumps(record, separators=(",", ":")) + "\n")
        f.flush()
        if time.monotonic() - self.synced >= JOURNAL_SYNC:
            self.sync()

    def sync(self) -> None:
        for f in self.files.values():
            os.fsync(f.fileno())
        self.synced = time.monotonic()

    def remove(self, block: str) -> None:
        """Drop a block's journal (its files are written)."""
        f = self.files.pop(block, None)
        if f is not None:
            f.close()
        journal_path(self.out, block).unlink(missing_ok=True)

    def close(self) -> None:
        for f in self.files.values():
            f.flush()
            os.fsync(f.fileno())
            f.close()
        self.files.clear()
        directory = self.out / JOURNAL_DIR
        for d in (directory / "layered", directory):
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()


def read_run(out: Path) -> dict[str, Any] | None:
    """The run manifest of `out`, or None when there is none."""
    path = out / RUN_FILE
    if not path.exists():
        return None
    try:
        run = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(
            f"{path} is not a readable run manifest ({e}); use another --out directory"
        ) from None
    if not isinstance(run, dict) or run.get("format") != RUN_FORMAT:
        raise ValueError(f"{path} is not an fcanalyze run manifest; use another --out directory")
    return run


def shard_is_complete(out: Path, block: str, entry: dict[str, Any]) -> bool:
    """True when every file the manifest lists for a shard exists with its recorded checksum."""
    files = entry.get("files", {})
    return bool(files) and all(
        shard_path(out, table, block).exists() and sha256_file(shard_path(out, table, block)) == f["sha256"]
        for table, f in files.items()
    )


def read_table(out: Path, table: str) -> pa.Table:
    """A whole logical table (all its shards) sorted by deal (and cells)."""
    directory = Path(out) / table
    files = sorted(directory.glob(f"{table}-*.parquet")) or sorted(directory.glob("*.parquet"))
    if not files:
        raise ValueError(f"no {table} table in {out}")
    t = pa.concat_tables(pq.read_table(f) for f in files)
    keys = [("deal", "ascending")] + ([("cells", "ascending")] if "cells" in t.column_names else [])
    return t.sort_by(keys)


def iter_shards(out: Path, table: str) -> Iterator[Path]:
    yield from sorted((Path(out) / table).glob(f"{table}-*.parquet"))
