"""``fcanalyze verify-unsolvable``: the proven set against the known list, as a user runs it."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import run_cli

from fcanalyze import _core

RANGE = "11975-11990"


def verify(out, *extra):
    return run_cli(
        "verify-unsolvable", RANGE, "--out", str(out), "--shard-size", "8", "--workers", "2", *extra
    )


@pytest.mark.slow
def test_agrees_with_the_published_list(tmp_path):
    r = verify(tmp_path / "v", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["agree"] and doc["proven_unsolvable"] == [11982] and doc["expected"] == [11982]
    assert doc["counts"] == {"solved": 15, "unsolvable": 1, "undecided": 0}
    proofs = pd.read_parquet(tmp_path / "v" / "unsolvable")
    assert list(proofs["deal"]) == [11982] and list(proofs["positions"]) == [61643]
    searches = pd.read_parquet(tmp_path / "v" / "searches")
    assert len(searches) == 16 and (searches["cells"] == 4).all()
    assert searches.loc[searches["outcome"] == "solved", "moves"].gt(0).all()
    text = run_cli("verify-unsolvable", RANGE, "--out", str(tmp_path / "v"), "--shard-size", "8")
    assert text.returncode == 0 and "agreement: the proven set is exactly the 1 listed deal(s)" in text.stdout
    assert "16 deals" not in text.stderr  # resumed: nothing recomputed, nothing printed on stderr


@pytest.mark.slow
def test_disagreements_exit_1(tmp_path):
    expected = tmp_path / "expected.txt"
    expected.write_text("# my list\n11976\n")
    r = verify(tmp_path / "v", "--expected", str(expected))
    assert r.returncode == 1
    assert "solved although listed: 11976" in r.stdout
    assert "unsolvable although not listed: 11982" in r.stdout


@pytest.mark.slow
def test_undecided_is_never_reported_unsolvable(tmp_path):
    r = verify(tmp_path / "v", "--max-positions", "1000", "--format", "json")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert 11982 in doc["undecided"] and 11982 not in doc["proven_unsolvable"]
    assert not doc["agree"]


def test_bad_expected_file(tmp_path):
    expected = tmp_path / "expected.txt"
    expected.write_text("11982\nnot-a-deal\n")
    r = verify(tmp_path / "v", "--expected", str(expected))
    assert r.returncode == 2
    assert "line 2" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_lines_are_shortened_within_the_recorded_budget(tmp_path):
    """With a shortening budget the verify job's moves are those of the shortened lines (by default,
    the lines as found); run.json and the table's metadata record the shortening, and a directory made
    with one setting refuses another."""
    from fcanalyze import runfile, runner
    from fcanalyze.engines import SerialEngine
    from fcanalyze.jobs import verify as verify_job

    def run(out, **budget):
        return runner.run("verify", [(1, 12)], out, SerialEngine(), verify_job.config(shard_size=6, **budget))

    short, long, found = tmp_path / "short", tmp_path / "long", tmp_path / "found"
    run(short, shorten_positions=_core.SHORTEN_POSITIONS)
    run(long, shorten_positions=1)
    run(found)
    assert runfile.read(found)["config"]["shorten_positions"] == 0
    cfg = runfile.read(short)["config"]
    assert (cfg["shorten_width"], cfg["shorten_positions"]) == (
        _core.SHORTEN_WIDTH,
        _core.SHORTEN_POSITIONS,
    )
    a, b = pd.read_parquet(short / "searches"), pd.read_parquet(long / "searches")
    assert (a["outcome"] == "solved").all() and (a["positions"] == b["positions"]).all()
    assert (a["moves"] <= b["moves"]).all() and a["moves"].sum() < b["moves"].sum()
    c = pd.read_parquet(found / "searches")
    assert (c["positions"] == a["positions"]).all() and (b["moves"] <= c["moves"]).all()
    # A budget of one position still merges a card's two moves into one; the beams do the rest.
    assert b["moves"].sum() < c["moves"].sum() and a["moves"].sum() * 3 < c["moves"].sum() * 2
    with pytest.raises(ValueError):
        run(short, shorten_width=3)
