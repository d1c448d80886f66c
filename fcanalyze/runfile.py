"""The run file, ``OUT/run.json``: what a run is (job, range, configuration, versions), the shards it
has written (rows, bytes and sha256 of each file), its counts, and whether it is complete.

Only the parent writes it, atomically, after each shard; a shard counts as done only when the run file
lists it and its files verify against their checksums. A listed file that is there but does not match
its checksum is damaged: resuming, ``summary`` and ``manifest`` refuse it by name (`verify`,
`DamagedFile`), never reading or overwriting it silently; a listed file that is gone is computed again
by a resumed run. A run resumed in the same directory must have the same job, range and configuration
(``--redo-undecided`` may raise the budgets, see `raised_budgets`); the configuration names the rules of
automatic moves (``autoplay``), and a run file written before it did was made under the safe rules
(`ADDED_CONFIG`), so such a run resumes under them and under no other.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from fcanalyze import _core, atomic, records, shards

NAME = "run.json"
FORMAT = "fcanalyze-run/1"
#: Budgets ``--redo-undecided`` may raise. The positions and the time only cut a search short, so a deal
#: that finishes within the smaller budget has the rows it would have had with the larger one from the
#: start. The memory also chooses where a proof goes on (in memory or on disk, and which search finds a
#: line first), so a deal decided within less memory keeps its rows, whose answer is exact either way,
#: though its line or its search's time may differ from those a larger memory would have given. So do
#: the positions of the wide beams that look for a line before a giant proof: more of them may find a
#: line the layered proof would have found later, or not at all within the budget.
RAISABLE_BUDGETS = ("max_positions", "time_limit_ms", "max_memory_mb", "wide_beam_positions")
#: Configuration keys added after runs were made, per job, with the value those runs had: a run file
#: without one is read as having it (so that it resumes and compares as before).
ADDED_CONFIG: dict[str, dict[str, Any]] = {
    # Runs made before the lines were shortened: their lines as found (shorten_positions 0). Runs made
    # before the budget of wide beams was configurable are read as having its default, so that they go on
    # with it (those made before 08701d5 tried the beam of 100,000 alone: PROVENANCE.md names the commits).
    "analyze": {
        "solutions": True,
        "autoplay": "safe",
        "shorten_width": 10,
        "shorten_positions": 0,
        "wide_beam_positions": 52_000_000,
    },
    "verify": {"autoplay": "safe", "shorten_width": 10, "shorten_positions": 0},
}


def path(out: Path) -> Path:
    return out / NAME


def read(out: Path) -> dict[str, Any] | None:
    """The run file of `out`, or None when there is none."""
    p = path(out)
    if not p.exists():
        return None
    try:
        run = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{p} is not a readable run manifest ({e}); use another --out directory") from None
    if not isinstance(run, dict) or run.get("format") != FORMAT:
        raise ValueError(f"{p} is not an fcanalyze run manifest; use another --out directory")
    if isinstance(run.get("config"), dict):
        for key, value in ADDED_CONFIG.get(str(run.get("job")), {}).items():
            run["config"].setdefault(key, value)
    return run


def write(out: Path, run: dict[str, Any]) -> None:
    """Write the run file atomically."""
    atomic.write_json(path(out), run)


def identity(job: str, range_text: str, config: dict[str, Any]) -> dict[str, Any]:
    """What a resumed run must share with the run already in its directory."""
    return {
        "job": job,
        "range": range_text,
        "config": config,
        "fcanalyze": _core.__version__,
        "schema": records.SCHEMA_VERSION,
    }


def _versions() -> dict[str, str]:
    return {
        "fcanalyze": _core.__version__,
        "schema": str(records.SCHEMA_VERSION),
        "python": platform.python_version(),
        "pyarrow": pa.__version__,
    }


def new(identity: dict[str, Any], deals: int) -> dict[str, Any]:
    """The run file of a new run over `deals` deals, with no shard yet."""
    return {
        "format": FORMAT,
        **identity,
        "versions": _versions(),
        "rules": records.rules_text(identity["config"].get("autoplay", "safe")),
        "deals": deals,
        "shards": {},
        "complete": False,
    }


class DamagedFile(ValueError):
    """A table file that the run file lists is not the file it recorded (bad input: exit 2)."""


def file_problem(p: Path, entry: dict[str, Any]) -> str | None:
    """What is wrong with table file `p` against its run file `entry` (rows, bytes, sha256): None when
    it matches, else a few words (``missing``, or how it differs)."""
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        return "missing"
    if "bytes" in entry and size != entry["bytes"]:
        return f"{size:,} bytes where {NAME} records {entry['bytes']:,}"
    if atomic.sha256_file(p) != entry.get("sha256"):
        return f"its sha256 is not the one {NAME} records"
    return None


def _damaged(p: Path, problem: str, job: str) -> DamagedFile:
    return DamagedFile(
        f"{p} is damaged ({problem}); delete it and run the same fcanalyze {job} command again "
        "to compute it again"
    )


def shard_is_complete(out: Path, block: str, entry: dict[str, Any], job: str = "analyze") -> bool:
    """True when every file the run file lists for a shard exists with its recorded checksum; False when
    one is missing (the shard is computed again). Raises `DamagedFile` for a file that is there but
    differs."""
    files = entry.get("files", {})
    complete = bool(files)
    for table, f in files.items():
        p = shards.path(out, table, block)
        problem = file_problem(p, f)
        if problem == "missing":
            complete = False
        elif problem is not None:
            raise _damaged(p, problem, job)
    return complete


def check_derived_tables(
    out: Path, run: dict[str, Any], accept: Callable[[Path], bool] | None = None
) -> None:
    """Raise `DamagedFile` for a derived table the run file lists that is there but differs (one that is
    missing is written again at the end of the run), unless `accept` takes it (a file a stopped rewrite
    left whole)."""
    for name, f in sorted(run.get("tables", {}).items()):
        p = shards.derived_path(out, name)
        problem = file_problem(p, f)
        if problem not in (None, "missing") and not (accept and accept(p)):
            raise _damaged(p, problem, str(run.get("job")))


def verify(out: Path, run: dict[str, Any]) -> None:
    """Check every table file the run file lists (shards, and the derived tables of a complete run)
    against its checksum; raise `DamagedFile` naming the first that is missing or differs."""
    listed = [
        (shards.path(out, table, block), f)
        for block, entry in sorted(run.get("shards", {}).items())
        for table, f in sorted(entry.get("files", {}).items())
    ]
    listed += [(shards.derived_path(out, name), f) for name, f in sorted(run.get("tables", {}).items())]
    for p, f in listed:
        problem = file_problem(p, f)
        if problem == "missing":
            raise DamagedFile(
                f"{p} is missing; run the same fcanalyze {run.get('job')} command again to compute it again"
            )
        if problem is not None:
            raise _damaged(p, problem, str(run.get("job")))


def raised_budgets(have: dict[str, Any], want: dict[str, Any]) -> dict[str, Any]:
    """The budgets of configuration `want` that are larger than those of the run's `have` (None, no time
    limit, is the largest), or {} when `want` changes anything else or lowers a budget."""
    raised = {}
    for key in RAISABLE_BUDGETS:
        old, new = have.get(key), want.get(key)
        if old == new:
            continue
        if old is None or (new is not None and new < old):
            return {}
        raised[key] = new
    others_equal = all(have.get(k) == v for k, v in want.items() if k not in RAISABLE_BUDGETS)
    return raised if others_equal else {}


def raise_budgets(run: dict[str, Any], config: dict[str, Any], raised: dict[str, Any]) -> None:
    """Give `run` the configuration `config`, whose budgets `raised` are larger, recording the raise in
    ``budgets_raised``."""
    run.setdefault("budgets_raised", []).append(
        {
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            "from": {k: run["config"][k] for k in raised},
            "to": raised,
        }
    )
    run["config"] = config


def check_compatible(out: Path, run: dict[str, Any], want: dict[str, Any]) -> None:
    """Raise `ValueError`, naming the differences, unless `run` has the `want` identity."""
    have = {k: run.get(k) for k in want}
    if have == want:
        return
    diffs = []
    for k in want:
        if k == "config":
            diffs += [
                f"{c} {have['config'].get(c)!r} -> {v!r}"
                for c, v in want["config"].items()
                if (have.get("config") or {}).get(c) != v
            ]
        elif have[k] != want[k]:
            diffs.append(f"{k} {have[k]!r} -> {want[k]!r}")
    raise ValueError(
        f"{path(out)} holds a run with a different configuration ({'; '.join(diffs)}); "
        "re-run with the same options or use a new --out directory"
    )
