"""The games' file, ``manifest.json``: the Easy / Normal / Hard deal lists the games consume, and the
daily deal pick.

Schema ``fcanalyze-manifest/1`` (JSON object)::

    format       "fcanalyze-manifest/1"
    range        the deals analysed, e.g. "1-32000"
    classes      {"easy": [deal, ...], "normal": [...], "hard": [...]}: sorted, solvable deals only
    counts       {"easy": n, "normal": n, "hard": n, "unsolvable": n, "undecided": n}
    unsolvable   sorted deals proven unsolvable with 4 free cells (never in a class list)
    undecided    sorted deals whose class is not proven (never in a class list)
    rules        {"free_cells": 4, "description": ..., "classes": {class: rule}}
    daily        {"method": ..., "timezone": "UTC+09:00"}: how `daily` picks the day's deal
    provenance   {"tool", "version", "generated" (UTC date), "range", "config", "run": sha256 of run.json,
                  "tables": {table: {"files": n, "rows": n, "sha256": digest of its files' sha256}}}
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from fcanalyze import _core, atomic, records, runfile, shards

FORMAT = "fcanalyze-manifest/1"
SOLVABLE_CLASSES = ("easy", "normal", "hard")
JAPAN = dt.timezone(dt.timedelta(hours=9), "UTC+09:00")
DAILY_METHOD = (
    "pool = classes[class] (or all three lists merged and sorted for 'any'); "
    "i = int.from_bytes(sha256(f'fcanalyze-daily/1 {date} {class}').digest()[:8], 'big') % len(pool); "
    "deal = pool[i]; date is YYYY-MM-DD in Japan (UTC+9)"
)
CLASS_RULES = {
    "easy": "solvable with at most 1 free cell",
    "normal": "needs exactly 2 free cells",
    "hard": "needs 3 or 4 free cells",
    "unsolvable": "proven unsolvable with 4 free cells",
    "undecided": "class not proven (a search ran out of budget)",
}


def _digest(shas: list[str]) -> str:
    return hashlib.sha256("\n".join(shas).encode()).hexdigest()


def build(out: Path, generated: dt.date | None = None) -> dict[str, Any]:
    """The manifest of a complete ``analyze`` run in `out`, or of one whose every deal has its row while
    a later pass over the deals left open is under way: the classes as the tables stand, the deals
    still open undecided, and ``provenance.complete`` false. (``--redo-undecided`` takes a shard out
    of the run file when it starts searching it again, its decided deals journaled, and replaces its
    files once done; until then they are the previous pass's rows, as the summary counts them.)"""
    out = Path(out)
    run = runfile.read(out)
    if run is None or run.get("job") != "analyze":
        raise ValueError(f"{out} holds no analyze run (run `fcanalyze analyze RANGE --out {out}` first)")
    if not run.get("shards"):
        raise ValueError(f"the run in {out} has no finished shard yet; re-run the same analyze command")
    runfile.verify(out, run)
    if run["config"]["max_cells"] < 4:
        raise ValueError(
            f"the run in {out} searched only up to {run['config']['max_cells']} cells; classes need 4"
        )
    deals = shards.read_table(out, "deals")
    rows = len(pc.unique(deals["deal"]))
    if not run.get("complete") and rows < run["deals"]:
        raise ValueError(
            f"the run in {out} is not complete ({rows:,} of {run['deals']:,} deals done); "
            "re-run the same analyze command to finish it"
        )
    lists: dict[str, list[int]] = {}
    for cls in records.CLASSES:
        lists[cls] = deals.filter(pc.equal(deals["difficulty"], cls))["deal"].to_pylist()
    table_info = {name: _files_read(out, run, name) for name in ("deals", "searches")}
    for name, f in run.get("tables", {}).items():
        table_info[name] = {"files": 1, "rows": f["rows"], "sha256": _digest([f["sha256"]])}
    return {
        "format": FORMAT,
        "range": run["range"],
        "classes": {cls: lists[cls] for cls in SOLVABLE_CLASSES},
        "counts": {cls: len(lists[cls]) for cls in records.CLASSES},
        "unsolvable": lists["unsolvable"],
        "undecided": lists["undecided"],
        "rules": {"free_cells": 4, "description": records.RULES, "classes": CLASS_RULES},
        "daily": {"method": DAILY_METHOD, "timezone": "UTC+09:00"},
        "provenance": {
            "tool": "fcanalyze",
            "version": _core.__version__,
            "generated": (generated or dt.datetime.now(dt.UTC).date()).isoformat(),
            "range": run["range"],
            "config": run["config"],
            "complete": bool(run.get("complete")),
            "run": atomic.sha256_file(runfile.path(out)),
            "tables": table_info,
        },
    }


def _files_read(out: Path, run: dict[str, Any], table: str) -> dict[str, Any]:
    """The files of `table` the manifest was made from, their rows and a digest of their checksums: those
    of the run file (verified), and of a shard a later pass is searching again, its file as it stands."""
    entries = {shards.path(out, table, block): s["files"][table] for block, s in run["shards"].items()}
    files = [
        entries.get(p) or {"rows": pq.ParquetFile(p).metadata.num_rows, "sha256": atomic.sha256_file(p)}
        for p in shards.paths(out, table)
    ]
    return {
        "files": len(files),
        "rows": sum(f["rows"] for f in files),
        "sha256": _digest([f["sha256"] for f in files]),
    }


def validate(doc: Any) -> None:
    """Raise `ValueError` unless `doc` is a well-formed ``fcanalyze-manifest/1``."""

    def need(cond: bool, what: str) -> None:
        if not cond:
            raise ValueError(f"invalid manifest: {what}")

    need(isinstance(doc, dict) and doc.get("format") == FORMAT, f"format is not {FORMAT}")
    for key in ("range", "classes", "counts", "unsolvable", "undecided", "rules", "daily", "provenance"):
        need(key in doc, f"missing {key!r}")
    need(set(doc["classes"]) == set(SOLVABLE_CLASSES), "classes must be exactly easy, normal, hard")
    need(set(doc["counts"]) == set(records.CLASSES), "counts must cover every class")
    lists = {**doc["classes"], "unsolvable": doc["unsolvable"], "undecided": doc["undecided"]}
    seen: set[int] = set()
    for cls, deals in lists.items():
        need(
            isinstance(deals, list) and all(isinstance(d, int) and d >= 1 for d in deals),
            f"{cls} must list deals",
        )
        need(deals == sorted(set(deals)), f"{cls} must be sorted without repeats")
        need(doc["counts"][cls] == len(deals), f"counts[{cls!r}] disagrees with its list")
        need(seen.isdisjoint(deals), f"{cls} shares deals with another list")
        seen.update(deals)
    for key in ("tool", "version", "generated", "range", "tables"):
        need(key in doc["provenance"], f"provenance lacks {key!r}")
    dt.date.fromisoformat(doc["provenance"]["generated"])


def dumps(doc: dict[str, Any]) -> str:
    """The manifest as JSON text, each deal list on one line (readable and small)."""
    compact = {"separators": (",", ":")}
    parts = []
    for key, value in doc.items():
        if key == "classes":
            inner = ",\n".join(f"  {json.dumps(c)}: {json.dumps(v, **compact)}" for c, v in value.items())
            parts.append(f' "classes": {{\n{inner}\n }}')
        elif key in ("unsolvable", "undecided"):
            parts.append(f" {json.dumps(key)}: {json.dumps(value, **compact)}")
        else:
            parts.append(f" {json.dumps(key)}: " + json.dumps(value, indent=1).replace("\n", "\n "))
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write(
    out: Path, path: Path | None = None, generated: dt.date | None = None
) -> tuple[Path, dict[str, Any]]:
    """Build, validate and atomically write the manifest (default ``OUT/manifest.json``)."""
    doc = build(out, generated)
    validate(doc)
    path = Path(path) if path else Path(out) / "manifest.json"
    try:
        atomic.write_text(path, dumps(doc))
    except OSError as e:  # -o under a file, a full disk: one line, not a traceback
        raise ValueError(f"cannot write the manifest to {path}: {atomic.why_not_writable(path, e)}") from None
    return path, doc


def load(path: Path) -> dict[str, Any]:
    """Read and validate a manifest file."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"cannot read manifest {path}: {e}") from None
    validate(doc)
    return doc


def today_in_japan() -> dt.date:
    """Today's date in Japan (UTC+9), the games' day boundary."""
    return dt.datetime.now(JAPAN).date()


def daily(doc: dict[str, Any], date: dt.date, cls: str = "any") -> int:
    """The day's deal: the same for everyone on that date, always a solvable deal of the class."""
    if cls == "any":
        pool = sorted(d for c in SOLVABLE_CLASSES for d in doc["classes"][c])
    elif cls in SOLVABLE_CLASSES:
        pool = doc["classes"][cls]
    else:
        raise ValueError(f"unknown class {cls!r} (expected easy, normal, hard or any)")
    if not pool:
        raise ValueError(f"the manifest has no {cls} deals")
    h = hashlib.sha256(f"fcanalyze-daily/1 {date.isoformat()} {cls}".encode()).digest()
    return pool[int.from_bytes(h[:8], "big") % len(pool)]
