"""Per-shard journals, for resume: the records of the deals finished in a block whose shard is not
written yet (``OUT/journal/BLOCK.jsonl``, one JSON record per line), and beside them the resumable files
of the layered proofs in progress (``OUT/journal/layered/DEAL``).

A record is flushed as soon as it is appended (a killed process loses nothing) and fsynced within
`SYNC` seconds (a crash of the machine loses at most that much work). A block's journal goes once its
shard is written. A journal reopened for appending first loses its torn tail (the half line a killed
writer or a full disk left), so that the records appended after it can be read.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

DIR = "journal"
#: Seconds between fsyncs of a journal: a record is flushed at once (a killed process loses nothing), and
#: on disk within this time (a crash of the machine loses at most this much work).
SYNC = 5.0


def path(out: Path, block: str) -> Path:
    """The journal of `block`."""
    return out / DIR / f"{block}.jsonl"


def scratch(out: Path) -> Path:
    """The directory of the layered proofs' resumable files (a directory per deal)."""
    return out / DIR / "layered"


#: The part of its disk the layered proofs' kept files leave free for the proofs still to come: a proof
#: left at its budget keeps its files for the next pass (some GB each on a compressing disk: deal 295997
#: with 2 cells, at 7.6 billion positions, 95 GB as written, about 6 GB on the btrfs image of
#: docs/capacity.md), and a pass leaves some tens of them.
KEEP_FREE = 0.5


def disk(path: Path) -> tuple[int, int]:
    """The size of the disk of `path` and its bytes free to this user."""
    st = os.statvfs(path)
    return st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize


def make_room(
    root: Path, settled: Callable[[int], bool], measure: Callable[[Path], tuple[int, int]] | None = None
) -> list[int]:
    """While the disk of `root` (the layered proofs' files, a directory per deal; `measure`: `disk`)
    has less than `KEEP_FREE` of its size free, the files kept by the proof of a settled deal go, the
    oldest first: deals no search of this run goes on from (`settled`), whose next pass then starts them
    afresh. The newest kept files stay (a disk that holds one proof's files holds those). The deals
    whose files went, in that order. So kept files do not leave the proofs after them short of disk:
    those would end undecided for want of it (deal 194004 of 1-1,000,000 did, behind the 74 GB
    another proof had left)."""
    measure = measure or disk
    size, free = measure(root)
    if free >= size * KEEP_FREE:
        return []
    kept = []
    for d in root.iterdir():
        if d.is_dir() and d.name.isdigit() and settled(int(d.name)):
            saved = [c.stat().st_mtime for c in d.glob("cells-*/checkpoint")]
            kept.append((max(saved, default=0.0), int(d.name), d))
    gone = []
    for _, deal, d in sorted(kept)[:-1]:
        shutil.rmtree(d, ignore_errors=True)
        gone.append(deal)
        # Some file systems (btrfs) count the space freed only once it is committed.
        os.sync()
        size, free = measure(root)
        if free >= size * KEEP_FREE:
            break
    return gone


def read(path: Path) -> list[dict[str, Any]]:
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


def _cut_torn_tail(path: Path) -> None:
    """Truncate `path` after its last newline: the half record a killed writer or a full disk left would
    otherwise hide every record appended after it (`read` stops there)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        return
    with open(path, "rb+") as f:
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return
        keep, block = 0, 1 << 16
        end = size
        while end > 0:
            start = max(0, end - block)
            f.seek(start)
            i = f.read(end - start).rfind(b"\n")
            if i >= 0:
                keep = start + i + 1
                break
            end = start
        f.truncate(keep)


class Journals:
    """Append-only journals of records, one file per block, opened on first use."""

    def __init__(self, out: Path):
        self.out = out
        self.files: dict[str, Any] = {}
        self.synced = time.monotonic()

    def append(self, block: str, record: dict[str, Any]) -> None:
        f = self.files.get(block)
        if f is None:
            p = path(self.out, block)
            p.parent.mkdir(parents=True, exist_ok=True)
            _cut_torn_tail(p)
            f = self.files[block] = open(p, "a", encoding="utf-8")  # noqa: SIM115 - kept open
        f.write(json.dumps(record, separators=(",", ":")) + "\n")
        f.flush()
        if time.monotonic() - self.synced >= SYNC:
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
        path(self.out, block).unlink(missing_ok=True)

    def close(self) -> None:
        """Flush, sync and close every journal. On a full disk a record may stay half written (the next
        run cuts it off); every file is closed all the same, and the first error is raised."""
        error: OSError | None = None
        for f in self.files.values():
            try:
                f.flush()
                os.fsync(f.fileno())
            except OSError as e:
                error = error or e
            try:
                f.close()
            except OSError as e:  # the buffer it could not flush
                error = error or e
        self.files.clear()
        for d in (scratch(self.out), self.out / DIR):
            # a link in their place (the layered proofs' files sent to another disk) is the user's: kept
            if d.is_dir() and not d.is_symlink() and not any(d.iterdir()):
                d.rmdir()
        if error is not None:
            raise error
