"""Lines of a finished analyze run made short in place (``fcanalyze.relines``, ``pipelines/relines.py``):
the directory becomes, row for row, the run made with that shortening budget; a stopped shortening goes
on; bad input gets one line and exit 2, and nothing written is lost."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from fcanalyze import relines, runfile, runner, shards
from fcanalyze._core import parse_notation
from fcanalyze.checker import expand_autos, replay
from fcanalyze.deals import deal_layout
from fcanalyze.engines import SerialEngine
from fcanalyze.jobs import analyze as analyze_job
from fcanalyze.jobs import verify as verify_job

ROOT = Path(__file__).resolve().parents[1]
DEALS = [(1, 12)]
POSITIONS = 2_000  # cheaper than analyze's default, the same code


def analyze(out: Path, **config) -> Path:
    runner.run("analyze", DEALS, out, SerialEngine(), analyze_job.config(shard_size=6, **config))
    return out


def tables(out: Path) -> dict[str, list[dict]]:
    """Every table of a run, without the searches' times (a run made twice differs only in those)."""
    found = {name: shards.read_table(out, name).to_pylist() for name in ("deals", "searches", "unsolvable")}
    for row in found["searches"]:
        row.pop("elapsed_ms")
    return found


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One run with its lines as found, and the same run made with the shortening from the start."""
    base = tmp_path_factory.mktemp("relines")
    return {
        "found": analyze(base / "found", shorten_positions=0),
        "short": analyze(base / "short", shorten_positions=POSITIONS),
        "bare": analyze(base / "bare", shorten_positions=0, solutions=False),
    }


def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def test_a_run_becomes_the_run_made_with_the_shortening(runs, tmp_path):
    out = copy(runs["found"], tmp_path / "run")
    count = relines.shorten_run(out, POSITIONS, workers=1)
    assert count == len([d for d in tables(runs["found"])["deals"] if d["solution"]]) == 12
    assert tables(out) == tables(runs["short"])
    assert runfile.read(out)["config"] == runfile.read(runs["short"])["config"]
    runfile.verify(out, runfile.read(out))
    before = tables(runs["found"])["deals"]
    after = tables(out)["deals"]
    assert sum(d["moves"] for d in after) < sum(d["moves"] for d in before)
    # The file metadata says the new budget, so that a resumed analyze with it matches.
    meta = pq.read_metadata(next(shards.paths(out, "deals"))).metadata
    assert json.loads(meta[b"fcanalyze.config"])["shorten_positions"] == POSITIONS
    assert relines.shorten_run(out, POSITIONS, workers=1) == 0  # nothing left to do


def without(rows: list[dict], *keys: str) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in keys} for row in rows]


def test_a_run_without_lines_gets_lines_found_again(runs, tmp_path):
    bare = copy(runs["bare"], tmp_path / "bare")
    assert relines.shorten_run(bare, POSITIONS, workers=1) == 12
    run = runfile.read(bare)
    assert run["config"]["shorten_positions"] == POSITIONS and run["relined"][0]["lines"] == "found again"
    runfile.verify(bare, run)
    before, after = tables(runs["bare"]), tables(bare)
    # Classes, bounds and counts stand; only the lengths change, and the table still keeps no line.
    assert without(after["deals"], "moves") == without(before["deals"], "moves")
    assert without(after["searches"], "moves") == without(before["searches"], "moves")
    assert all(d["solution"] is None for d in after["deals"])
    assert sum(d["moves"] for d in after["deals"]) < sum(d["moves"] for d in before["deals"])
    # The same lines found again in a run that keeps them: the lengths are theirs, and they replay.
    kept = copy(runs["found"], tmp_path / "kept")
    assert relines.shorten_run(kept, POSITIONS, workers=1, again=True) == 12
    lines = tables(kept)["deals"]
    assert [d["moves"] for d in lines] == [d["moves"] for d in after["deals"]]
    for d in lines:
        moves = parse_notation(d["solution"])
        check = replay(
            deal_layout(d["deal"]),
            d["min_cells_upper"],
            expand_autos(deal_layout(d["deal"]), d["min_cells_upper"], moves),
        )
        assert check.ok and len(moves) == d["moves"], (d["deal"], check.reason)
    lengths = {(d["deal"], d["min_cells_upper"]): d["moves"] for d in lines}
    assert all(lengths.get((s["deal"], s["cells"]), s["moves"]) == s["moves"] for s in after["searches"])


@pytest.mark.parametrize("stop", ["after the deals file", "after both files"])
def test_a_stopped_shortening_goes_on(runs, tmp_path, stop):
    out = copy(runs["found"], tmp_path / "run")
    run_file = runfile.path(out).read_text()
    block = sorted(runfile.read(out)["shards"])[0]
    searches = shards.path(out, "searches", block).read_bytes()
    relines.shorten_run(out, POSITIONS, workers=1)
    # As if stopped before the run file was written (and before the searches file too).
    runfile.path(out).write_text(run_file)
    if stop == "after the deals file":
        shards.path(out, "searches", block).write_bytes(searches)
    assert relines.shorten_run(out, POSITIONS, workers=1) < 12  # the first shard's lines are not redone
    assert tables(out) == tables(runs["short"])
    runfile.verify(out, runfile.read(out))


def pipeline(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "pipelines" / "relines.py"), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_pipeline_records_itself_and_remakes_the_summary(runs, tmp_path):
    out = copy(runs["found"], tmp_path / "run")
    (out / "PROVENANCE.md").write_text("# How it was made\n\n## Invocations\n\n- started earlier\n")
    done = pipeline(str(out), "--shorten-positions", str(POSITIONS), "--workers", "1")
    assert done.returncode == 0, done.stderr
    assert "12 lines shortened" in done.stdout
    assert "lines shortened within 2,000 positions" in (out / "PROVENANCE.md").read_text()
    assert (out / "summary.md").exists() and (out / "manifest.json").exists()
    assert tables(out) == tables(runs["short"])


def test_bad_input_gets_one_line_and_exit_2(runs, tmp_path):
    verified = tmp_path / "verified"
    runner.run("verify", [(1, 4)], verified, SerialEngine(), verify_job.config(shard_size=4))
    other = copy(runs["short"], tmp_path / "other")
    damaged = copy(runs["found"], tmp_path / "damaged")
    victim = sorted(shards.paths(damaged, "deals"))[-1]
    victim.write_bytes(victim.read_bytes()[:-8] + b"\0" * 8)
    untouched = {p: p.read_bytes() for p in damaged.rglob("*") if p.is_file()}
    cases = {
        tmp_path / "nothing": "holds no fcanalyze run",
        verified: "holds a verify run",
        other: "were shortened already",
        damaged: "is damaged",
    }
    for out, words in cases.items():
        done = pipeline(str(out), "--shorten-positions", "3000", "--workers", "1")
        assert done.returncode == 2, (out, done.stderr)
        assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    # The damaged file is found before anything is written.
    assert {p: p.read_bytes() for p in damaged.rglob("*") if p.is_file()} == untouched
