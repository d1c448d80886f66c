"""The records fcanalyze writes, with their explicit Arrow schemas (never inferred).

- ``deals``: one row per deal, the exact minimum number of free cells (or proven bounds) and the class;
- ``searches``: one row per deal and cell count searched;
- ``unsolvable``: the deals proven unsolvable with 4 free cells.

Every file carries the schema version, the rules and the run configuration in its metadata, and no
timestamp, so that the same run gives the same bytes.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import pyarrow as pa

from fcanalyze import _core

SCHEMA_VERSION = 1
RULES = (
    "standard FreeCell (SPEC §2): 8 columns, k free cells, supermoves up to (free cells + 1) * "
    "2^(empty columns), safe automatic moves; canonical positions ignore column and cell order"
)

Difficulty = Literal["easy", "normal", "hard", "unsolvable", "undecided"]
CLASSES: tuple[Difficulty, ...] = ("easy", "normal", "hard", "unsolvable", "undecided")

DEALS = pa.schema(
    [
        pa.field("deal", pa.int64(), nullable=False),
        pa.field(
            "min_cells", pa.int8()
        ),  # null unless exact: solved with it, proven unsolvable with one fewer
        pa.field("min_cells_lower", pa.int8(), nullable=False),  # proven: unsolvable with fewer cells
        pa.field("min_cells_upper", pa.int8()),  # solved with this many cells; null when no solution found
        pa.field("difficulty", pa.string(), nullable=False),
        pa.field("moves", pa.int32()),  # player moves of the solution at min_cells_upper (no automatic moves)
        pa.field("solution", pa.string()),  # that solution in standard notation
        pa.field("positions", pa.int64(), nullable=False),  # examined positions, all searches of the deal
    ]
)

SEARCHES = pa.schema(
    [
        pa.field("deal", pa.int64(), nullable=False),
        pa.field("cells", pa.int8(), nullable=False),
        pa.field("outcome", pa.string(), nullable=False),  # solved | unsolvable | undecided
        pa.field("positions", pa.int64(), nullable=False),  # distinct canonical positions stored
        pa.field("moves", pa.int32()),  # player moves of the solution; null unless solved
        pa.field("elapsed_ms", pa.float64(), nullable=False),
        pa.field("exhausted", pa.string()),  # the budget that ran out (positions, time, disk); undecided only
    ]
)

UNSOLVABLE = pa.schema(
    [
        pa.field("deal", pa.int64(), nullable=False),
        pa.field("positions", pa.int64(), nullable=False),  # reachable positions examined by the 4-cell proof
        pa.field("min_cells", pa.int8()),  # when searched beyond 4 cells
    ]
)

SCHEMAS: dict[str, pa.Schema] = {"deals": DEALS, "searches": SEARCHES, "unsolvable": UNSOLVABLE}


def class_of(min_cells: int) -> Difficulty:
    """The class the games show for a deal needing `min_cells` free cells (SPEC §4)."""
    if min_cells <= 1:
        return "easy"
    if min_cells == 2:
        return "normal"
    if min_cells <= 4:
        return "hard"
    return "unsolvable"


def difficulty(lower: int, upper: int | None) -> Difficulty:
    """The class from proven bounds: undecided when they straddle two classes (never guessed)."""
    if lower >= 5:
        return "unsolvable"
    if upper is None:
        return "undecided"
    a, b = class_of(lower), class_of(upper)
    return a if a == b else "undecided"


def metadata(config: dict[str, Any]) -> dict[bytes, bytes]:
    """File metadata: schema version, tool version, rules and the run configuration."""
    return {
        b"fcanalyze.schema_version": str(SCHEMA_VERSION).encode(),
        b"fcanalyze.version": _core.__version__.encode(),
        b"fcanalyze.rules": RULES.encode(),
        b"fcanalyze.config": json.dumps(config, sort_keys=True).encode(),
    }


def to_table(name: str, rows: dict[str, list], config: dict[str, Any]) -> pa.Table:
    """A table of `name`'s schema from columns, with fcanalyze's metadata."""
    schema = SCHEMAS[name].with_metadata(metadata(config))
    return pa.Table.from_pydict(rows, schema=schema)
