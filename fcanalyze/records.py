"""The records fcanalyze writes, with their explicit Arrow schemas (never inferred), and the one place
where a search's result becomes a row.

- ``deals``: one row per deal, the exact minimum number of free cells (or proven bounds) and the class;
- ``searches``: one row per deal and cell count searched;
- ``unsolvable``: the deals proven unsolvable with 4 free cells.

A row is a typed dict (`DealRow`, `SearchRow`, `UnsolvableRow`): plain values, so that it pickles to and
from workers and goes into a journal as JSON unchanged.

Every file carries the schema version, the rules (with the rules of automatic moves under their own key,
``fcanalyze.autoplay``: ``safe`` or ``max``) and the run configuration in its metadata, and no
timestamp, so that the same run gives the same bytes. A file written before the key existed was made
under the safe rules (`autoplay_of`).
"""

from __future__ import annotations

import json
from array import array as array_module
from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Literal, TypedDict

import pyarrow as pa

from fcanalyze import _core

if TYPE_CHECKING:
    from fcanalyze.solve import Classification, Outcome

SCHEMA_VERSION = 1
RULES = (
    "standard FreeCell (SPEC §2): 8 columns, k free cells, supermoves up to (free cells + 1) * "
    "2^(empty columns), safe automatic moves; canonical positions ignore column and cell order"
)
#: `RULES` under max autoplay (macroxue's rules).
RULES_MAX = RULES.replace(
    "safe automatic moves", "max automatic moves (every card that fits goes home, none by hand)"
)


def rules_text(autoplay: str) -> str:
    """The rules a table or run was made under, for its metadata: `RULES`, or `RULES_MAX` under ``max``."""
    return RULES_MAX if autoplay == "max" else RULES


def autoplay_of(metadata: Mapping[bytes, bytes] | None) -> Literal["safe", "max"]:
    """The rules of automatic moves a table was made under, from its file metadata: ``safe`` when the
    file predates the key (or has no metadata); ValueError for a value that names no rules."""
    value = (metadata or {}).get(b"fcanalyze.autoplay", b"safe")
    if value == b"max":
        return "max"
    if value == b"safe":
        return "safe"
    raise ValueError(f"a table's metadata names unknown rules of automatic moves: {value!r}")


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


class DealRow(TypedDict):
    """A row of ``deals`` (`DEALS`)."""

    deal: int
    min_cells: int | None
    min_cells_lower: int
    min_cells_upper: int | None
    difficulty: Difficulty
    moves: int | None
    solution: str | None
    positions: int


class SearchRow(TypedDict):
    """A row of ``searches`` (`SEARCHES`)."""

    deal: int
    cells: int
    outcome: Outcome
    positions: int
    moves: int | None
    elapsed_ms: float
    exhausted: str | None


class UnsolvableRow(TypedDict):
    """A row of ``unsolvable`` (`UNSOLVABLE`)."""

    deal: int
    positions: int
    min_cells: int | None


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
    """File metadata: schema version, tool version, rules (the rules of automatic moves, the
    configuration's ``autoplay``, under their own key too) and the run configuration."""
    autoplay = config.get("autoplay", "safe")
    return {
        b"fcanalyze.schema_version": str(SCHEMA_VERSION).encode(),
        b"fcanalyze.version": _core.__version__.encode(),
        b"fcanalyze.rules": rules_text(autoplay).encode(),
        b"fcanalyze.autoplay": autoplay.encode(),
        b"fcanalyze.config": json.dumps(config, sort_keys=True).encode(),
    }


def to_table(name: str, rows: Sequence[Mapping[str, Any]], config: dict[str, Any]) -> pa.Table:
    """A table of `name`'s schema from its rows, with fcanalyze's metadata."""
    return columns_table(name, {f.name: [row[f.name] for row in rows] for f in SCHEMAS[name]}, config)


def columns_table(name: str, cols: Mapping[str, Sequence[Any]], config: dict[str, Any]) -> pa.Table:
    """A table of `name`'s schema from its columns (Python sequences, None for null), with fcanalyze's
    metadata."""
    schema = SCHEMAS[name].with_metadata(metadata(config))
    return pa.Table.from_arrays([array(cols[f.name], f.type) for f in schema], schema=schema)


#: The stdlib `array` type code of each numeric Arrow type of the schemas.
_TYPECODES = {pa.int8(): "b", pa.int32(): "i", pa.int64(): "q", pa.float64(): "d"}


def array(values: Sequence[Any], type: pa.DataType) -> pa.Array:
    """An Arrow array of `type` holding `values` (None for null), put together from its buffers.

    pyarrow's own conversion of Python values (``pa.array``, ``pa.scalar``, ``Table.from_pydict``, a
    compute function given a Python value) first imports pandas to probe for its types: a quarter of a
    second of CPU, more than the searches of a thousand deals. The buffers are built with the standard
    library instead: numbers in an `array.array`, strings as offsets and bytes."""
    values = list(values)
    n = len(values)
    nulls = values.count(None)
    bitmap = None
    if nulls:
        bits = bytearray((n + 7) // 8)
        for i, v in enumerate(values if nulls < n else ()):
            if v is not None:
                bits[i >> 3] |= 1 << (i & 7)
        bitmap = pa.py_buffer(bits)
    if pa.types.is_string(type):
        data = [b"" if v is None else v.encode() for v in values]
        offsets = array_module("i", [0])
        offsets.extend(accumulate(map(len, data)))
        buffers = [bitmap, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]
    elif type in _TYPECODES:
        numbers = array_module(_TYPECODES[type], [0 if v is None else v for v in values] if nulls else values)
        buffers = [bitmap, pa.py_buffer(numbers)]
    else:
        raise TypeError(f"no column of type {type} in fcanalyze's schemas")
    return pa.Array.from_buffers(type, n, buffers, null_count=nulls)


def deals_with(searches: pa.Table, outcome: str) -> list[tuple[int, int]]:
    """(deal, positions) of each row of a ``searches`` table whose outcome is `outcome`, in table order
    (read in Python: a compute kernel given the string would import pandas, see `array`)."""
    return [
        (deal, positions)
        for deal, o, positions in zip(
            searches["deal"].to_pylist(),
            searches["outcome"].to_pylist(),
            searches["positions"].to_pylist(),
            strict=True,
        )
        if o == outcome
    ]


def deal_row(c: Classification) -> DealRow:
    """The ``deals`` row of a deal's classification."""
    sol = c.solution
    return {
        "deal": c.deal,
        "min_cells": c.min_cells,
        "min_cells_lower": c.lower,
        "min_cells_upper": c.upper,
        "difficulty": difficulty(c.lower, c.upper),
        "moves": sol.move_count if sol else None,
        "solution": sol.notation if sol else None,
        "positions": c.positions,
    }


def search_row(
    deal: int,
    cells: int,
    outcome: Outcome,
    positions: int,
    move_count: int,
    elapsed_ms: float,
    exhausted: str | None,
) -> SearchRow:
    """The ``searches`` row of one search of `deal` with `cells` cells (moves only when solved)."""
    return {
        "deal": deal,
        "cells": cells,
        "outcome": outcome,
        "positions": positions,
        "moves": move_count if outcome == "solved" else None,
        "elapsed_ms": elapsed_ms,
        "exhausted": exhausted,
    }


def searches_table(cells: int, cols: Mapping[str, Sequence[Any]], config: dict[str, Any]) -> pa.Table:
    """The ``searches`` table of a block of searches with `cells` cells from the core's columns
    (``_core.solve_deals``): the rows `search_row` would give, without a dict per search (moves only
    when solved)."""
    outcome = cols["outcome"]
    moves = [m if o == "solved" else None for o, m in zip(outcome, cols["moves"], strict=True)]
    return columns_table(
        "searches",
        {**cols, "cells": [cells] * len(outcome), "moves": moves},
        config,
    )


def search_rows(c: Classification) -> list[SearchRow]:
    """The ``searches`` rows of a deal's classification, one per search."""
    return [
        search_row(c.deal, s.cells, s.outcome, s.positions, s.move_count, s.elapsed_ms, s.exhausted)
        for s in c.searches
    ]


def unsolvable_row(deal: int, positions: int, min_cells: int | None) -> UnsolvableRow:
    """The ``unsolvable`` row of a deal proven unsolvable with 4 cells by a proof of `positions`."""
    return {"deal": deal, "positions": positions, "min_cells": min_cells}
