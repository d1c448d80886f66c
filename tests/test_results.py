"""The committed tables agree with each other: results/1m-classes (the classification of 1-1,000,000,
complete or part-way) against results/32k (every deal of 1-32,000 decided exactly) and results/1m (every
deal of 1-1,000,000 with 4 cells). Each run searched on its own; a deal on which they disagree is a
finding to examine (SPEC §6), not a row to correct."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

RESULTS = Path(__file__).resolve().parent.parent / "results"
BOUNDS = ["deal", "min_cells", "min_cells_lower", "min_cells_upper", "difficulty"]


def deals(run: str) -> pd.DataFrame:
    path = RESULTS / run / "deals"
    if not path.is_dir():
        pytest.skip(f"results/{run} is not committed")
    return pd.read_parquet(path, columns=BOUNDS).set_index("deal")


def test_the_classification_of_1m_agrees_with_results_32k() -> None:
    classes, exact = deals("1m-classes"), deals("32k")
    both = classes.index[classes.index <= 32000]
    if both.empty:
        pytest.skip("results/1m-classes holds no deal of 1-32,000 yet")
    ours, theirs = classes.loc[both], exact.loc[both]
    decided = ours["min_cells"].notna()
    assert (ours.loc[decided, "min_cells"] == theirs.loc[decided, "min_cells"]).all()
    upper = ours["min_cells_upper"].fillna(99)
    inside = (ours["min_cells_lower"] <= theirs["min_cells"]) & (theirs["min_cells"] <= upper)
    assert inside.all(), list(both[~inside])
    classed = ours["difficulty"] != "undecided"
    assert (ours.loc[classed, "difficulty"] == theirs.loc[classed, "difficulty"]).all()


def test_the_classification_of_1m_agrees_with_the_4_cell_run() -> None:
    classes = deals("1m-classes")
    unsolvable = set(pd.read_parquet(RESULTS / "1m" / "unsolvable")["deal"])
    solved = ~classes.index.isin(list(unsolvable))
    # A deal results/1m solved with 4 cells was never proven unsolvable with 4 here, and the reverse.
    assert (classes.loc[solved, "min_cells_lower"] <= 4).all()
    assert (classes.loc[~solved, "min_cells_upper"].fillna(99) > 4).all()
    assert set(classes.index[classes["difficulty"] == "unsolvable"]) <= unsolvable
