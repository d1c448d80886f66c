"""The ``searches`` table built from the core's columns (the verify job's path) holds exactly the rows
that `records.search_row` gives for the same searches, solved, unsolvable and undecided alike."""

from __future__ import annotations

from fcanalyze import _core, records

CFG = {"max_positions": 70_000, "time_limit_ms": None, "shard_size": 8}


def test_columns_table_equals_the_rows_table():
    deals = [1, 2, 617, 11982, 13930]  # 11982: proven unsolvable; 13930 needs 268,079 positions
    cols = _core.solve_deals(deals, 4, max_positions=CFG["max_positions"], solutions=False)
    assert "solution" not in cols
    assert cols["outcome"] == ["solved", "solved", "solved", "unsolvable", "undecided"]
    assert cols["exhausted"] == [None, None, None, None, "positions"]
    rows = [
        records.search_row(d, 4, o, p, m, e, x)
        for d, o, p, m, e, x in zip(
            cols["deal"],
            cols["outcome"],
            cols["positions"],
            cols["moves"],
            cols["elapsed_ms"],
            cols["exhausted"],
            strict=True,
        )
    ]
    table = records.searches_table(4, cols, CFG)
    assert table.equals(records.to_table("searches", rows, CFG), check_metadata=True)
    assert table.column("moves").null_count == 2
    assert table.column("positions")[3].as_py() == 61_643


def test_solutions_come_back_unless_declined():
    cols = _core.solve_deals([1, 2], 4)
    assert all(cols["solution"]) and cols["exhausted"] == [None, None]


def test_arrays_from_buffers_equal_pyarrows_own():
    import pyarrow as pa

    cases = {
        pa.int8(): [0, -3, None, 4, 127, -128, None, 1, 2],
        pa.int32(): [None, 7, 2**31 - 1],
        pa.int64(): [1, 2**40, None, 3] * 5,
        pa.float64(): [0.25, None, 3.0],
        pa.string(): ["solved", None, "", "é 4b", None, "undecided"],
    }
    for t, values in cases.items():
        for vs in (values, [v for v in values if v is not None], [], [None] * 11):
            got = records.array(vs, t)
            got.validate(full=True)
            assert got.equals(pa.array(vs, t)), (t, vs)
