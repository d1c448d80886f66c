"""The batch pipeline end to end: analyze, shards and resume (with a real SIGKILL), identical tables
whatever the workers, the manifest and daily pick, the summary."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import fcanalyze_command, run_cli, sigint_as_in_a_terminal

from fcanalyze import _core, games, journal, published, records, replay, runfile, runner, shards, summary
from fcanalyze.deals import within_spans
from fcanalyze.engines import SerialEngine, Task
from fcanalyze.jobs import analyze as analyze_job
from fcanalyze.records import SCHEMA_VERSION

#: The pipeline script that regenerates a results directory and records its invocations.
REGENERATE = Path(__file__).resolve().parents[1] / "pipelines" / "regenerate.py"

# Small budgets keep these tests quick; positions budgets (unlike time) keep them deterministic.
RANGE = "1-24,164,617"
ARGS = ["--max-positions", "500000", "--shard-size", "8"]


def analyze(out: Path, *extra: str, range_text: str = RANGE):
    return run_cli("analyze", range_text, "--out", str(out), *ARGS, *extra)


def frames(out: Path) -> dict[str, pd.DataFrame]:
    """The tables, deterministic columns only (elapsed_ms is a measurement)."""
    return {
        "deals": pd.read_parquet(out / "deals"),
        "searches": pd.read_parquet(out / "searches").drop(columns=["elapsed_ms"]),
        "unsolvable": pd.read_parquet(out / "unsolvable"),
    }


def assert_same_tables(a: Path, b: Path) -> None:
    fa, fb = frames(a), frames(b)
    for name in fa:
        pd.testing.assert_frame_equal(
            fa[name].sort_values(list(fa[name].columns[:2])).reset_index(drop=True),
            fb[name].sort_values(list(fb[name].columns[:2])).reset_index(drop=True),
            check_exact=True,
        )
    # The deals shards hold no measurement: the files themselves are identical.
    for path in shards.paths(a, "deals"):
        assert path.read_bytes() == (b / "deals" / path.name).read_bytes(), path.name


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ref") / "run"
    r = analyze(out, "--workers", "1")
    assert r.returncode == 0, r.stderr
    return out


def test_tables_schema_and_classes(reference):
    deals = pd.read_parquet(reference / "deals")
    assert list(deals["deal"]) == [*range(1, 25), 164, 617]
    by_deal = deals.set_index("deal")
    # SPEC §6: deal 1 needs 3 cells, 2 needs 1, 3 needs 2, 164 needs 0, 617 needs 4.
    for deal, need, cls in [
        (1, 3, "hard"),
        (2, 1, "easy"),
        (3, 2, "normal"),
        (164, 0, "easy"),
        (617, 4, "hard"),
    ]:
        assert by_deal.loc[deal, "min_cells"] == need
        assert by_deal.loc[deal, "difficulty"] == cls
    assert set(deals["difficulty"]) <= {"easy", "normal", "hard", "unsolvable", "undecided"}
    meta = pq.read_schema(next(shards.paths(reference, "deals"))).metadata
    assert meta[b"fcanalyze.schema_version"] == str(SCHEMA_VERSION).encode()
    assert json.loads(meta[b"fcanalyze.config"])["max_positions"] == 500000
    assert b"FreeCell" in meta[b"fcanalyze.rules"]
    searches = pd.read_parquet(reference / "searches")
    # Bounds agree with the searches: the cell count just below the lower bound was proven unsolvable
    # (the ones below it follow by monotonicity), and nothing below the upper bound was solved.
    for row in deals.itertuples():
        s = searches[searches["deal"] == row.deal].set_index("cells")
        if row.min_cells_lower > 0:
            assert s.loc[row.min_cells_lower - 1, "outcome"] == "unsolvable"
        assert not (s["outcome"] == "unsolvable").loc[s.index >= row.min_cells_lower].any()
        if pd.notna(row.min_cells_upper):
            assert not (s["outcome"] == "solved").loc[s.index < row.min_cells_upper].any()
        if pd.notna(row.min_cells_upper):
            assert s.loc[row.min_cells_upper, "outcome"] == "solved"
            assert s.loc[row.min_cells_upper, "moves"] == row.moves


def test_every_solution_replays(reference):
    deals = pd.read_parquet(reference / "deals")
    for row in deals[deals["solution"].notna()].itertuples():
        layout = {"columns": _core.deal(row.deal)}
        r = replay(layout, int(row.min_cells_upper), _core.parse_notation(row.solution), autos="implied")
        assert r.ok, (row.deal, r.reason)
        assert r.moves == row.moves


def test_the_replay_script_checks_every_solution_of_a_results_directory(reference, tmp_path):
    script = [sys.executable, str(Path(__file__).parents[1] / "pipelines" / "replay.py")]
    r = subprocess.run([*script, str(reference)], capture_output=True, text=True, timeout=300)
    solved = pd.read_parquet(reference / "deals")["solution"].notna().sum()
    assert r.returncode == 0 and f"{solved:,} solutions of " in r.stdout, r.stderr
    # A line cut short does not win: the script names the deal and fails.
    deals = pq.read_table(reference / "deals").to_pandas()
    bad = deals.index[deals["solution"].notna()][3]
    deals.loc[bad, "solution"] = " ".join(deals.loc[bad, "solution"].split()[:-1])
    (tmp_path / "deals").mkdir()
    deals.to_parquet(tmp_path / "deals" / "deals.parquet")
    r = subprocess.run([*script, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and f"deal {deals.loc[bad, 'deal']} " in r.stderr, r.stderr
    r = subprocess.run([*script, str(tmp_path / "nothing")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "holds no deals table" in r.stderr


@pytest.mark.slow
def test_two_workers_give_the_same_tables(reference, tmp_path):
    r = analyze(tmp_path / "two", "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert_same_tables(reference, tmp_path / "two")


@pytest.mark.slow
def test_resume_after_sigkill(reference, tmp_path):
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [*fcanalyze_command(), "analyze", RANGE, "--out", str(out), *ARGS, "--workers", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        run = runfile.read(out) if (out / "run.json").exists() else None
        if run and run["shards"]:
            break
        time.sleep(0.05)
    else:
        pytest.fail("no shard finished in time")
    os.killpg(proc.pid, signal.SIGKILL)  # the parent and its workers, mid-run
    proc.wait()
    run = runfile.read(out)
    assert not run["complete"]
    done_before = set(run["shards"])
    assert 0 < len(done_before) < 5  # of the 5 shards (the one of 617 takes longest)
    mtimes = {b: shards.path(out, "deals", b).stat().st_mtime_ns for b in done_before}
    r = analyze(out, "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert f"{len(done_before)} already done" in r.stdout
    for b in done_before:  # finished shards were not redone
        assert shards.path(out, "deals", b).stat().st_mtime_ns == mtimes[b]
    assert runfile.read(out)["complete"]
    assert not list(out.rglob("*.tmp"))
    assert_same_tables(reference, out)


@pytest.mark.slow
def test_an_interrupted_shard_resumes_from_its_journal(tmp_path):
    """One shard of 13 deals: SIGKILL while deal 140 (seconds of search) is in progress, after 1-12 are
    journaled. The resumed run takes 1-12 from the journal (their measured times stay those of the first
    run) and searches only 140."""
    out = tmp_path / "journal"
    args = ["analyze", "1-12,140", "--out", str(out), "--max-positions", "2000000", "--workers", "2"]
    proc = subprocess.Popen(
        [*fcanalyze_command(), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    path = journal.path(out, "0000000001-0000001000")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(journal.read(path)) < 12:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    journaled = {r["deal"]: r for r in journal.read(path)}
    assert sorted(journaled) == list(range(1, 13))  # 140 was still being searched
    assert not runfile.read(out)["shards"]
    r = run_cli(*args)
    assert r.returncode == 0, r.stderr
    assert not (out / journal.DIR).exists()  # gone with the shard's files
    deals = pd.read_parquet(out / "deals").set_index("deal")
    searches = pd.read_parquet(out / "searches")
    assert sorted(deals.index) == [*range(1, 13), 140]
    for deal, record in journaled.items():
        for col, value in record["deals"].items():
            have = deal if col == "deal" else deals.loc[deal, col]
            assert (pd.isna(have) and value is None) or have == value, (deal, col)
        mine = searches[searches["deal"] == deal].to_dict("records")
        assert [s["elapsed_ms"] for s in mine] == [s["elapsed_ms"] for s in record["searches"]]
    assert deals.loc[140, "positions"] == searches[searches["deal"] == 140]["positions"].sum() > 0


def test_a_torn_journal_tail_is_ignored(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text('{"deal": 1, "x": 1}\n{"deal": 2, "x": 2}\n{"deal": 1, "x": 3}\n{"deal": 4, "x"')
    assert journal.read(path) == [{"deal": 1, "x": 3}, {"deal": 2, "x": 2}]
    path.write_text('{"deal": 1}\nnot json\n{"deal": 2}\n')
    assert journal.read(path) == [{"deal": 1}]
    assert journal.read(tmp_path / "none.jsonl") == []


@pytest.mark.slow
def test_workers_exit_when_the_parent_is_killed(tmp_path):
    """SIGKILL to the parent alone: its workers, in the middle of a proof, exit too (no orphan keeps a
    core and its memory busy)."""
    proc = subprocess.Popen(
        [
            *fcanalyze_command(),
            "analyze",
            "140,1467",
            "--out",
            str(tmp_path / "o"),
            "--workers",
            "2",
            "--shard-size",
            "1",
            "--quiet",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    parent = psutil.Process(proc.pid)
    deadline = time.monotonic() + 60
    while not parent.children(recursive=True) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # the workers are in the middle of deals 140 and 267 (seconds of proofs)
    children = parent.children(recursive=True)
    assert children and proc.poll() is None
    proc.kill()
    proc.wait()
    _, alive = psutil.wait_procs(children, timeout=5)
    assert not alive, alive


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_resumes(reference, tmp_path):
    out = tmp_path / "interrupted"
    proc = subprocess.Popen(
        [*fcanalyze_command(), "analyze", RANGE, "--out", str(out), *ARGS, "--workers", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=sigint_as_in_a_terminal,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not ((out / "run.json").exists() and runfile.read(out)["shards"]):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
    _, stderr = proc.communicate(timeout=60)
    if proc.returncode == 0:
        pytest.skip("the run finished before the interrupt")
    assert proc.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == "fcanalyze: interrupted"
    assert "Traceback" not in stderr
    assert not runfile.read(out)["complete"]
    r = analyze(out, "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert_same_tables(reference, out)


@pytest.mark.slow
def test_a_crashed_worker_is_replaced(reference, tmp_path):
    out = tmp_path / "crash"
    proc = subprocess.Popen(
        [*fcanalyze_command(), "analyze", RANGE, "--out", str(out), *ARGS, "--workers", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    parent = psutil.Process(proc.pid)
    deadline = time.monotonic() + 60
    killed = False
    while time.monotonic() < deadline and not killed:
        kids = [k for k in parent.children() if "spawn" in " ".join(k.cmdline())]
        if kids and (out / "run.json").exists():
            kids[0].kill()
            killed = True
        time.sleep(0.05)
    assert killed, "no worker process seen"
    _stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert_same_tables(reference, out)


def test_tables_without_solutions_keep_lengths_and_resume(tmp_path):
    """``--no-solutions`` stores each solution's length but not its moves, is part of the configuration
    (a resume with solutions is refused), and a run file made before the option resumes as a run with
    solutions."""
    out = tmp_path / "lean"
    assert analyze(out, "--no-solutions", "--workers", "1", range_text="1-8").returncode == 0
    deals = pd.read_parquet(out / "deals")
    assert deals["solution"].isna().all() and (deals["moves"] > 0).all()
    assert json.loads((out / "run.json").read_text())["config"]["solutions"] is False
    r = analyze(out, range_text="1-8")
    assert r.returncode == 2 and "solutions False -> True" in r.stderr
    full = tmp_path / "full"
    assert analyze(full, "--workers", "1", range_text="1-8").returncode == 0
    assert pd.read_parquet(full / "deals")["solution"].notna().all()
    run = json.loads((full / "run.json").read_text())
    del run["config"]["solutions"]  # as a run made before the option wrote it
    (full / "run.json").write_text(json.dumps(run))
    r = analyze(full, range_text="1-8")
    assert r.returncode == 0 and "1 already done" in r.stdout, r.stderr


@pytest.mark.slow
def test_changed_configuration_is_refused(reference, tmp_path):
    out = tmp_path / "cfg"
    assert analyze(out, "--workers", "1", range_text="1-8").returncode == 0
    before = (out / "run.json").read_text()
    for extra, what in [
        (["--max-cells", "3"], "max_cells 4 -> 3"),
        (["--max-positions", "5000"], "max_positions"),
    ]:
        r = run_cli("analyze", "1-8", "--out", str(out), "--shard-size", "8", *extra)
        assert r.returncode == 2
        assert "different configuration" in r.stderr and what in r.stderr
    r = analyze(out, range_text="1-9")
    assert r.returncode == 2 and "range '1-8' -> '1-9'" in r.stderr
    assert (out / "run.json").read_text() == before  # nothing already written is lost
    # The threads of the layered proofs are not configuration: no result depends on them.
    r = analyze(out, "--threads", "3", range_text="1-8")
    assert r.returncode == 0 and "(0 shards computed, 1 already done)" in r.stdout, r.stderr
    r = analyze(out, "--threads", "0", range_text="1-8")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.slow
def test_redo_undecided_computes_those_shards_again(tmp_path):
    # A budget of 3,000 positions leaves deals of 1-8 undecided, and 164's search with 0 cells (its
    # class, easy, is decided, but not its min_cells); 13-16 are decided.
    out, args = tmp_path / "redo", ["--max-positions", "3000", "--shard-size", "8", "--workers", "1"]
    deals = "1-8,13-16,164"
    assert run_cli("analyze", deals, "--out", str(out), *args).returncode == 0
    shards = json.loads((out / "run.json").read_text())["shards"]
    assert shards["0000000001-0000000008"]["counts"]["undecided"] > 0
    assert "undecided" not in shards["0000000161-0000000168"]["counts"]
    first = frames(out)
    times = pd.read_parquet(out / "searches").set_index(["deal", "cells"])["elapsed_ms"]
    r = run_cli("analyze", deals, "--out", str(out), *args)
    assert r.returncode == 0 and "(0 shards computed, 3 already done)" in r.stdout
    # In an order of its own (no row depends on it).
    order = ["--first", "164", "--last", "2-3"]
    r = run_cli("analyze", deals, "--out", str(out), *args, "--redo-undecided", *order)
    assert r.returncode == 0 and "(2 shards computed, 1 already done)" in r.stdout, r.stdout
    again = frames(out)
    for name in first:  # the same searches give the same rows
        pd.testing.assert_frame_equal(first[name], again[name], check_exact=True)
    # Only the deals a budget left open were searched again: the others kept their measured times.
    deals = first["deals"].set_index("deal")
    open_ = set(first["searches"].query("outcome == 'undecided'")["deal"])
    open_ |= set(deals.index[deals["difficulty"] == "undecided"])
    times_again = pd.read_parquet(out / "searches").set_index(["deal", "cells"])["elapsed_ms"]
    kept = [key for key in times.index if key[0] not in open_]
    assert open_ and kept
    assert (times_again[kept] == times[kept]).all()
    redone = [key for key in times.index if key[0] in open_]
    assert (times_again[redone] != times[redone]).any()
    assert not (out / journal.DIR).exists()


def test_the_summary_says_where_a_pass_over_the_deals_left_open_stands(tmp_path):
    """A pass of --redo-undecided stopped part-way leaves shards it wrote (numbered by it in the run
    file), one in progress (its journal, out of the run file) and shards still holding open deals of
    the pass before: the summary and the report count each, the shards with nothing left open as done."""
    out = tmp_path / "run"
    args = ["--max-positions", "3000", "--shard-size", "4", "--workers", "1"]
    assert run_cli("analyze", "1-24", "--out", str(out), *args).returncode == 0
    assert "pass " not in run_cli("summary", str(out)).stdout  # a first pass, complete
    run = json.loads((out / "run.json").read_text())
    # Left open as the pass takes them (analyze_job.left_open): the class undecided, or any search.
    open_ = set(pd.read_parquet(out / "deals").query("difficulty == 'undecided'")["deal"])
    open_ |= set(pd.read_parquet(out / "searches").query("outcome == 'undecided'")["deal"])
    blocks = sorted(run["shards"])
    left = [b for b in blocks if any(int(b[:10]) <= d <= int(b[11:]) for d in open_)]
    assert 3 <= len(left) < len(blocks), (open_, blocks)
    # The state of the run stopped in its second pass: one open shard written by it, one in progress.
    run["redo_pass"], run["complete"] = 1, False
    run["shards"][left[0]]["pass"] = 1
    del run["shards"][left[1]]
    journal.path(out, left[1]).parent.mkdir(exist_ok=True)
    journal.path(out, left[1]).write_text("")
    runfile.write(out, run)
    done = len(blocks) - len(left) + 1
    said = f"pass 2 over the deals left open: {done} of 6 shards done, 1 in progress, {len(left) - 2} to go"
    r = run_cli("summary", str(out))
    assert r.returncode == 0 and f"- {said}\n" in r.stdout, r.stdout
    # The shard in progress keeps its rows until the pass replaces them: every deal has one.
    assert "- deals with a row: 24 of 24 (run not complete)\n" in r.stdout
    r = run_cli("report", str(out), "-o", str(tmp_path / "report.html"))
    assert r.returncode == 0, r.stderr
    assert said in (tmp_path / "report.html").read_text()
    assert "24 of 24 deals with a row" in (tmp_path / "report.html").read_text()


@pytest.mark.slow
def test_redo_undecided_with_a_larger_budget_gives_the_rows_of_that_budget(tmp_path, reference):
    out, small = tmp_path / "raise", ["--shard-size", "8", "--workers", "1", "--max-positions", "3000"]
    assert run_cli("analyze", "1-8,164", "--out", str(out), *small).returncode == 0
    assert json.loads((out / "run.json").read_text())["counts"]["undecided"] > 0
    # The summary lists each undecided deal with the bounds proven on its minimum of cells.
    deals = pd.read_parquet(out / "deals").query("difficulty == 'undecided'")
    listed = run_cli("summary", str(out)).stdout
    for row in deals.itertuples():
        upper = "?" if pd.isna(row.min_cells_upper) else int(row.min_cells_upper)
        assert f"{row.deal} ({row.min_cells_lower}-{upper})" in listed
    larger = [*ARGS, "--workers", "1"]
    r = run_cli("analyze", "1-8,164", "--out", str(out), *larger)
    assert r.returncode == 2 and "max_positions 3000 -> 500000" in r.stderr  # only with --redo-undecided
    r = run_cli("analyze", "1-8,164", "--out", str(out), *larger, "--redo-undecided", "--max-cells", "5")
    assert r.returncode == 2 and "max_cells 4 -> 5" in r.stderr  # budgets only
    r = run_cli("analyze", "1-8,164", "--out", str(out), *larger, "--redo-undecided")
    assert r.returncode == 0, r.stderr
    run = json.loads((out / "run.json").read_text())
    assert run["config"]["max_positions"] == 500_000 and run["complete"]
    assert [(b["from"], b["to"]) for b in run["budgets_raised"]] == [
        ({"max_positions": 3000}, {"max_positions": 500_000})
    ]
    # The deals decided with 3,000 positions kept their rows, and they are the rows of the larger budget.
    wanted = {*range(1, 9), 164}
    for name, frame in frames(out).items():
        ref = frames(reference)[name]
        ref = ref[ref["deal"].isin(wanted)].reset_index(drop=True)
        pd.testing.assert_frame_equal(frame.reset_index(drop=True), ref, check_exact=True)
    r = run_cli("analyze", "1-8,164", "--out", str(out), *small, "--redo-undecided")
    assert r.returncode == 2 and "max_positions 500000 -> 3000" in r.stderr  # never lowered
    r = run_cli("summary", str(out))
    assert r.returncode == 0 and "budgets raised for the deals left undecided" in r.stdout
    assert "max_positions 3000 -> 500000" in r.stdout


def test_refuses_a_foreign_directory(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    r = analyze(tmp_path, range_text="1-2")
    assert r.returncode == 2 and "not empty" in r.stderr
    assert (tmp_path / "notes.txt").read_text() == "mine"


@pytest.mark.slow
def test_manifest_and_daily(reference, tmp_path):
    r = run_cli("manifest", str(reference), "-o", str(tmp_path / "m.json"))
    assert r.returncode == 0, r.stderr
    doc = games.load(tmp_path / "m.json")
    deals = pd.read_parquet(reference / "deals")
    for cls in ("easy", "normal", "hard"):
        assert doc["classes"][cls] == sorted(deals.loc[deals["difficulty"] == cls, "deal"])
    assert doc["counts"]["undecided"] == len(doc["undecided"])
    assert doc["provenance"]["version"] == _core.__version__
    assert doc["provenance"]["tables"]["deals"]["rows"] == len(deals)
    # The daily pick: deterministic, from the class asked, never unsolvable or undecided.
    m = str(tmp_path / "m.json")
    picks = set()
    for day in range(20):
        date = (dt.date(2026, 1, 1) + dt.timedelta(days=day)).isoformat()
        a = run_cli("daily", "--manifest", m, "--date", date, "--class", "normal", "--format", "json")
        b = run_cli("daily", "--manifest", m, "--date", date, "--class", "normal", "--format", "json")
        assert a.returncode == 0 and a.stdout == b.stdout
        deal = json.loads(a.stdout)["deal"]
        assert deal in doc["classes"]["normal"]
        picks.add(deal)
    assert len(picks) > 1
    # Any solvable class by default, today's date in Japan.
    deal = int(run_cli("daily", "--manifest", m).stdout)
    assert deal not in doc["unsolvable"] + doc["undecided"]
    assert games.daily(doc, games.today_in_japan(), "any") == deal


def test_manifest_validation_catches_defects(reference):
    doc = games.build(reference)
    games.validate(doc)
    bad = json.loads(json.dumps(doc))
    bad["classes"]["easy"] = sorted([*bad["classes"]["easy"], bad["classes"]["hard"][0]])
    bad["counts"]["easy"] += 1
    with pytest.raises(ValueError, match="shares deals"):
        games.validate(bad)
    bad = json.loads(json.dumps(doc))
    bad["counts"]["hard"] += 1
    with pytest.raises(ValueError, match="counts"):
        games.validate(bad)


@pytest.mark.slow
def test_manifest_refuses_a_run_without_every_row_but_not_a_later_pass(tmp_path):
    """A pass over the deals left open, stopped part-way (a shard it is searching again is out of the run
    file, its files those of the pass before), gives the classes as the tables stand and says the run
    is not complete; a run stopped before every deal has its row gives no manifest."""
    out = tmp_path / "inc"
    args = ["--max-positions", "3000", "--shard-size", "4", "--workers", "1"]
    assert run_cli("analyze", "1-8", "--out", str(out), *args).returncode == 0
    before = games.build(out)
    assert before["provenance"]["complete"] and before["counts"]["undecided"] > 0
    run = runfile.read(out)
    del run["shards"]["0000000005-0000000008"]
    run["complete"], run["redo_pass"] = False, 1
    runfile.write(out, run)
    r = run_cli("manifest", str(out))
    assert r.returncode == 0, r.stderr
    doc = games.load(out / "manifest.json")
    assert doc["provenance"]["complete"] is False
    for key in ("classes", "counts", "undecided"):
        assert doc[key] == before[key]
    assert doc["provenance"]["tables"] == before["provenance"]["tables"]
    # A first pass stopped part-way: shard 5-8 not written yet.
    for table in ("deals", "searches"):
        shards.path(out, table, "0000000005-0000000008").unlink()
    r = run_cli("manifest", str(out))
    assert r.returncode == 2 and "not complete (4 of 8 deals done)" in r.stderr, r.stderr


@pytest.mark.slow
def test_summary(reference):
    r = run_cli("summary", str(reference))
    assert r.returncode == 0, r.stderr
    assert "## Classes" in r.stdout and "## Searches per cell count" in r.stdout
    stats = json.loads(run_cli("summary", str(reference), "--format", "json").stdout)
    deals = pd.read_parquet(reference / "deals")
    assert stats["classes"]["hard"] == int((deals["difficulty"] == "hard").sum())
    assert sum(stats["classes"].values()) == len(deals)


def test_published_counts_within_the_open_deals_are_not_differences():
    """A budgeted run's counts fall short of the published ones by deals it left open: a row is
    ``within`` them when the published count lies between ours and ours plus the open deals whose
    bounds allow it, and a difference otherwise."""
    rows = summary._compare({1: 5, 2: 10, 3: 4}, {1: 7, 2: 14, 3: 4}, {1: 3, 2: 3})
    assert [summary.verdict(r) for r in rows] == ["within 3 open deals", "DIFFERS", "match"]
    assert summary._bounds_of("2-?") == (2, 8) and summary._bounds_of("1-2") == (1, 2)


def test_published_cell_counts_count_proven_bounds_and_report_the_open_deals():
    """S. Fish's counts with fewer cells compare with the deals proven solvable (a solution with at most
    that many cells) and proven unsolvable (a proof with at least that many), over the deals the
    publication decided; the deal it left open says what we proved of it, apart (deciding it is no
    difference: 798194 with 0 cells and 138026 with 3, proven unsolvable, leave their rows matching)."""
    two = next(c for c in published.CELL_COUNTS if c.cells == 2)
    assert two.counts() == {"solvable": 317_873, "unsolvable": 82_126, "open": 1}
    assert next(c for c in published.CELL_COUNTS if c.cells == 0).counts()["unsolvable"] == 997_825
    count = published.CellCount(1, 6, 2, 3, None, (4,), "a test")
    deals = pa.table(
        {
            "deal": [1, 2, 3, 4, 5, 6],
            # 1, 2 solvable with 2; 3 proven to need 3; 4 solved with 2 (was open); 5 bounds 1-3; 6 needs 4
            "min_cells_lower": pa.array([0, 2, 3, 1, 1, 4], pa.int8()),
            "min_cells_upper": pa.array([1, 2, 3, 2, 3, None], pa.int8()),
        }
    )
    block = summary._published_cells(count, deals)
    assert block["what"] == "2 free cells, deals 1-6 (a test; 4 apart)"
    rows = {r["key"]: r for r in block["rows"]}
    # deals 1 and 2 of the five the publication decided (4 apart), and 5 may be a third
    assert (rows["solvable"]["ours"], rows["solvable"]["published"]) == (2, 3)
    assert summary.verdict(rows["solvable"]) == "within 1 open deal"
    assert (rows["unsolvable"]["ours"], rows["unsolvable"]["published"]) == (2, 2)
    assert summary.verdict(rows["unsolvable"]) == "match"
    assert rows["deal 4"]["ours"] == "solvable" and rows["deal 4"]["published"] == "open"
    # The open deal proven unsolvable instead (as 798194 with 0 cells): the decided deals still match.
    count = published.CellCount(1, 6, 2, 2, None, (4,), "a test")
    hard = deals.set_column(1, "min_cells_lower", pa.array([0, 2, 3, 3, 3, 4], pa.int8()))
    hard = hard.set_column(2, "min_cells_upper", pa.array([1, 2, 3, 3, 3, None], pa.int8()))
    rows = {r["key"]: r for r in summary._published_cells(count, hard)["rows"]}
    assert [summary.verdict(rows[k]) for k in ("solvable", "unsolvable")] == ["match", "match"]
    assert (rows["unsolvable"]["ours"], rows["deal 4"]["ours"]) == (3, "unsolvable")
    wider = published.CellCount(1, 6, 2, 4, None, (), "a test")
    rows = {r["key"]: r for r in summary._published_cells(wider, deals)["rows"]}
    assert summary.verdict(rows["solvable"]) == "within 1 open deal"
    fewer = published.CellCount(1, 6, 2, None, 1, (), "a test")
    rows = {r["key"]: r for r in summary._published_cells(fewer, deals)["rows"]}
    assert summary.verdict(rows["unsolvable"]) == "DIFFERS"
    assert within_spans(1, 400_000, [(1, 1_000_000)]) and not within_spans(1, 5, [(2, 9)])


def test_published_figures_wait_for_every_deal_not_for_the_last_pass(tmp_path, monkeypatch):
    """A later pass over the deals left open keeps every deal's row, so the comparisons with the
    published figures stay in its summary and report while it runs; a first pass in progress has
    rows missing, and the report says the comparison waits for them rather than that none exists."""
    out = tmp_path / "p"
    assert analyze(out, range_text="1-20").returncode == 0
    deals = pd.read_parquet(out / "deals")
    easy = int((deals["min_cells_upper"] <= 1).sum())
    count = published.CellCount(1, 20, 1, easy, None, (), "a test")
    monkeypatch.setattr(published, "CELL_COUNTS", (count,))
    run = runfile.read(out)
    run["complete"] = False  # as while a pass with --redo-undecided runs
    (out / "run.json").write_text(json.dumps(run))
    cells, unsolvable = summary.summarize(out)["published"]
    assert cells["what"].startswith("1 free cell, deals 1-20")
    assert [summary.verdict(r) for r in [*cells["rows"], *unsolvable["rows"]]] == ["match"] * 3
    first = next(iter(run["shards"]))
    del run["shards"][first]  # a first pass that has not written this shard yet
    (out / "run.json").write_text(json.dumps(run))
    for table in ("deals", "searches"):
        (out / table / f"{table}-{first}.parquet").unlink()
    stats = summary.summarize(out)
    assert stats["published"] is None
    r = run_cli("report", str(out), "-o", str(tmp_path / "r.html"))
    assert r.returncode == 0, r.stderr
    assert "once every deal has been searched" in (tmp_path / "r.html").read_text()


def test_the_published_unsolvable_list_allows_for_deals_left_open():
    """A listed deal an analyze run left undecided with no 4-cell line yet is open, not a difference;
    one with a 4-cell line, or one missing altogether, is a difference."""
    spans = [(1, 200_000)]  # the list holds 11982, 146692 and 186216 there

    def row(unsolvable, bounds):
        stats = {"complete": False, "unsolvable_deals": unsolvable, "undecided_bounds": bounds}
        (block,) = summary._published_unsolvable(spans, stats, whole=True)
        return summary.verdict(block["rows"][0])

    assert row([11982, 146692, 186216], {}) == "match"
    assert row([11982], {146692: [4, None], 186216: [2, 5]}) == "within 2 open deals"
    assert row([11982], {146692: [4, None], 186216: [2, 4]}) == "DIFFERS"
    assert row([11982], {146692: [4, None]}) == "DIFFERS"
    assert summary._published_unsolvable(spans, {"complete": False, "unsolvable_deals": []}) == []


def test_a_larger_run_marks_its_1_32000_comparisons_as_a_part_of_it():
    """The figures of 1-32,000 compared within a larger run are those of that part, marked `whole`
    False, so that the report's chart of the run's classes does not draw them across its own bars."""
    from types import SimpleNamespace

    from fcanalyze.report import charts

    def blocks(n: int) -> list[dict]:
        deals = pa.table(
            {
                "deal": pa.array(range(1, n + 1), pa.int64()),
                "min_cells": pa.array([1] * n, pa.int8()),
                "min_cells_lower": pa.array([1] * n, pa.int8()),
                "min_cells_upper": pa.array([1] * n, pa.int8()),
                "difficulty": ["easy"] * n,
                "moves": pa.array([40] * n, pa.int32()),
            }
        )
        stats = {**summary._deal_figures(deals), "complete": True}
        run = {"deals": n, "config": {"max_cells": 5}}
        return summary._published_analyze([(1, n)], stats, run, deals)

    alone = [b for b in blocks(32_000) if "1-32,000" in b["what"]]
    larger = [b for b in blocks(32_010) if "1-32,000" in b["what"]]
    assert [b["whole"] for b in alone] == [True, True] and [b["whole"] for b in larger] == [False, False]
    assert next(r for r in larger[1]["rows"] if r["key"] == "easy")["ours"] == 32_000
    assert charts._published_rows(SimpleNamespace(stats={"published": larger}), "classes") is None
    rows = charts._published_rows(SimpleNamespace(stats={"published": alone}), "classes")
    assert rows is not None and rows["easy"] == (32_000, published.CLASSES_32K["easy"])


def test_bad_ranges_and_options(tmp_path):
    for args, msg in [
        (["analyze", "0-5", "--out", str(tmp_path / "x")], "out of range"),
        (["analyze", "5-1", "--out", str(tmp_path / "x")], "below"),
        (["analyze", "1-5", "--out", str(tmp_path / "x"), "--max-cells", "9"], "--max-cells"),
        (["manifest", str(tmp_path / "nothing")], "holds no analyze run"),
        (["analyze", "1-5", "--out", str(tmp_path / "x"), "--first", "4-6"], "--first 4-6 is not within"),
        (["analyze", "1-5,9", "--out", str(tmp_path / "x"), "--last", "5-9"], "--last 5-9 is not within"),
        (["analyze", "1-5", "--out", str(tmp_path / "x"), "--first", "x"], "--first: 'x' is not a deal"),
    ]:
        r = run_cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert msg in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_default_workers_fit_the_memory():
    """An 8-core machine with 16 GiB: 8 workers for small proofs, one for 8 GiB proofs."""
    from fcanalyze.cli.analyze import workers_for_memory

    machine = {"cores": 8, "total_mb": 16384}
    assert workers_for_memory(64, **machine) == 8
    assert workers_for_memory(3072, **machine) == 4
    assert workers_for_memory(8192, **machine) == 1
    assert workers_for_memory(10**9, **machine) == 1
    assert 1 <= workers_for_memory(8192) <= (os.cpu_count() or 1)


class _Stop(Exception):
    pass


class StopAfterOneDeal(SerialEngine):
    """Runs the first shard only, and stops as soon as it has journaled one deal."""

    def run(self, fn, tasks, on_progress, on_record=None):
        def stop(task, record):
            on_record(task, record)
            raise _Stop

        yield from super().run(fn, itertools.islice(tasks, 1), on_progress, stop)


class SearchedDeals(SerialEngine):
    """A serial engine that notes, in order, the deals its tasks searched (not those they resumed)."""

    def __init__(self):
        super().__init__()
        self.searched: list[int] = []

    def run(self, fn, tasks, on_progress, on_record=None):
        def record(task, rec):
            self.searched.append(rec["deal"])
            on_record(task, rec)

        yield from super().run(fn, tasks, on_progress, record)


def test_a_shard_stopped_part_way_runs_after_the_others(tmp_path):
    """A run stopped after journaling one deal of shard 1-4 goes on with shards 5-8 and 9-12 before
    finishing 1-4 from its journal (a run is most often stopped in a long search)."""
    out = tmp_path / "o"
    config = analyze_job.config(shard_size=4)

    with pytest.raises(_Stop):
        runner.run("analyze", [(1, 12)], out, StopAfterOneDeal(), config)
    assert len(journal.read(journal.path(out, "0000000001-0000000004"))) == 1
    order = []

    class Recording(SerialEngine):
        def run(self, fn, tasks, on_progress, on_record=None):
            order.extend(task.block for task in tasks)
            yield from super().run(fn, tasks, on_progress, on_record)

    runner.run("analyze", [(1, 12)], out, Recording(), config)
    assert order == ["0000000005-0000000008", "0000000009-0000000012", "0000000001-0000000004"]
    assert sorted(pd.read_parquet(out / "deals")["deal"]) == list(range(1, 13))


def _assert_rows_of_a_plain_run(tmp_path: Path, out: Path, spans, config) -> None:
    """`out` holds the tables of a run over `spans` in the usual order, with no stop."""
    fresh = tmp_path / "fresh"
    runner.run("analyze", spans, fresh, SerialEngine(), config)
    assert_same_tables(fresh, out)


def _scratch_with_a_checkpoint(tmp_path: Path, deal: int) -> Path:
    """A scratch directory where `deal`'s 1-cell layered proof left a checkpoint."""
    scratch = tmp_path / "scratch"
    (scratch / str(deal) / "cells-1").mkdir(parents=True)
    (scratch / str(deal) / "cells-1" / "checkpoint").write_text("")
    return scratch


def test_the_deal_a_stop_cut_short_is_searched_last(tmp_path):
    """Resuming shard 1-4 after deal 1 was journaled searches 3 and 4 before 2, the deal the stop most
    likely cut short (and a deal with a layered proof's checkpoint goes last too); the rows are the same
    as a run without a stop."""
    out = tmp_path / "o"
    config = analyze_job.config(shard_size=4)

    with pytest.raises(_Stop):
        runner.run("analyze", [(1, 4)], out, StopAfterOneDeal(), config)
    searching = SearchedDeals()
    searched = searching.searched

    runner.run("analyze", [(1, 4)], out, searching, config)
    assert searched == [3, 4, 2]
    _assert_rows_of_a_plain_run(tmp_path, out, [(1, 4)], config)

    scratch = _scratch_with_a_checkpoint(tmp_path, 6)
    task = Task(job="analyze", config=config, block="b", spans=((5, 8),), resume=(), scratch=str(scratch))
    assert analyze_job.order(task, {}) == [5, 7, 8, 6]
    resumed = {5: {}}
    assert analyze_job.order(task, resumed) == [5, 7, 8, 6]
    assert analyze_job.order(task, {5: {}, 6: {}}) == [5, 6, 8, 7]


def test_deals_asked_first_and_last_go_first_and_last(tmp_path):
    """`--first` and `--last`: their blocks go first and last, and they go first and last within their
    blocks, before the order of a resumed shard (`test_the_deal_a_stop_cut_short_is_searched_last`);
    the rows are those of a run in the usual order."""
    config = analyze_job.config(shard_size=4)
    searching = SearchedDeals()
    out = tmp_path / "o"
    runner.run("analyze", [(1, 12)], out, searching, config, first=[(10, 10)], last=[(2, 2), (6, 6)])
    assert searching.searched == [10, 9, 11, 12, 1, 3, 4, 2, 5, 7, 8, 6]
    _assert_rows_of_a_plain_run(tmp_path, out, [(1, 12)], config)

    scratch = _scratch_with_a_checkpoint(tmp_path, 6)
    task = Task(
        job="analyze", config=config, block="b", spans=((5, 8),), scratch=str(scratch), first=((6, 6),)
    )
    assert analyze_job.order(task, {}) == [6, 5, 7, 8]
    assert analyze_job.order(task, {5: {}}) == [5, 6, 7, 8]
    task = Task(job="analyze", config=config, block="b", spans=((5, 8),), last=((5, 5),))
    assert analyze_job.order(task, {}) == [6, 7, 8, 5]
    with pytest.raises(ValueError, match="--first 12-13 is not within the range 1-12"):
        runner.run("analyze", [(1, 12)], tmp_path / "x", SerialEngine(), config, first=[(12, 13)])


def test_a_proof_that_filled_the_disk_leaves_no_files(tmp_path):
    """A deal's layered proof files stay for --redo-undecided when a budget of positions or time ended
    it, not when it filled the disk (they would leave the next deals' proofs none), nor when none of
    its searches left a checkpoint."""
    deal_dir = tmp_path / "6"
    (deal_dir / "cells-1").mkdir(parents=True)

    def rows(*exhausted):
        return [records.search_row(6, 1, "undecided", 10**6, None, 1.0, e) for e in exhausted]

    assert not analyze_job.keeps_files(deal_dir, rows("positions"))
    (deal_dir / "cells-1" / "checkpoint").write_text("")
    assert analyze_job.keeps_files(deal_dir, rows("positions"))
    assert analyze_job.keeps_files(deal_dir, rows("time"))
    assert not analyze_job.keeps_files(deal_dir, rows("disk"))
    assert not analyze_job.keeps_files(deal_dir, rows(None, "disk"))


def _disk_of_files(size: int):
    """A disk of `size` bytes that holds the files under the directory measured, and nothing else."""

    def measure(root: Path) -> tuple[int, int]:
        used = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
        return size, size - used

    return measure


def test_kept_files_go_oldest_first_when_the_disk_runs_short(tmp_path):
    """`journal.make_room`: while the disk has less than half its size free, the files kept by the
    proofs of settled deals go, the oldest checkpoint first, until it has; the newest stay, and so do
    those of deals the run may still go on with."""
    root = tmp_path / "layered"
    for age, deal in enumerate([40, 10, 30, 20]):  # 40 oldest
        state = root / str(deal) / "cells-1" / "checkpoint"
        state.parent.mkdir(parents=True)
        state.write_text("x" * 100)
        os.utime(state, (1000 + age, 1000 + age))
    settled = {10, 20, 40}.__contains__
    # 400 bytes of 1,000: room enough, nothing goes.
    assert journal.make_room(root, settled, _disk_of_files(1000)) == []
    # 400 of 500: 40 goes (200 free: not yet half), then 10 (300 free); 30 is not settled.
    assert journal.make_room(root, settled, _disk_of_files(500)) == [40, 10]
    assert sorted(int(d.name) for d in root.iterdir()) == [20, 30]
    # Never the newest kept files, short as the disk may be.
    assert journal.make_room(root, settled, _disk_of_files(200)) == []
    assert sorted(int(d.name) for d in root.iterdir()) == [20, 30]


@pytest.mark.slow
def test_a_run_removes_older_kept_files_for_room(tmp_path, monkeypatch):
    """Two deals whose 1-cell proofs stop at the budget, each keeping its files for the next pass, on a
    disk twice the larger one's files: the second's are kept, and the first's go to leave the proofs
    after them half the disk."""

    def measure(root: Path) -> tuple[int, int]:
        by_deal = [sum(f.stat().st_size for f in d.rglob("*") if f.is_file()) for d in root.iterdir()]
        size = 2 * max(by_deal, default=0) + 1
        return size, size - sum(by_deal)

    monkeypatch.setattr(journal, "disk", measure)
    out = tmp_path / "o"
    config = analyze_job.config(max_cells=1, max_positions=2_000_000, shard_size=1, max_memory_mb=64)
    runner.run("analyze", [(10996, 10996), (26063, 26063)], out, SerialEngine(), config)
    rows = pd.read_parquet(out / "searches").query("cells == 1")
    assert rows["exhausted"].tolist() == ["positions", "positions"]
    assert [d.name for d in journal.scratch(out).iterdir()] == ["26063"]


@pytest.mark.slow
def test_regenerate_records_every_invocation_killed_ones_too(tmp_path):
    """pipelines/regenerate.py puts each invocation in PROVENANCE.md as soon as the run's directory
    exists: one killed with SIGKILL mid-run stays on record as not finished, and the invocation that
    resumes it adds its own line (wall time, exit code), then the manifest and the summary."""
    out = tmp_path / "r"
    cmd = [sys.executable, str(REGENERATE), "analyze", "1-12,140", str(out), "--max-positions", "2000000"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    prov = out / "PROVENANCE.md"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not prov.exists():
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    lines = [x for x in prov.read_text().splitlines() if x.startswith("- started")]
    assert len(lines) == 1 and "did not finish" in lines[0], lines
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = [x for x in prov.read_text().splitlines() if x.startswith("- started")]
    assert len(lines) == 2, lines
    assert "did not finish" in lines[0]
    assert "ended" in lines[1] and lines[1].endswith("exit code 0")
    cpu = re.search(r", CPU time ([\d,]+) s, ", lines[1])  # the run's processes, workers included
    assert cpu and int(cpu.group(1).replace(",", "")) >= 0, lines[1]
    assert "fcanalyze analyze 1-12,140 --out" in prov.read_text()
    assert (out / "manifest.json").exists() and (out / "summary.md").exists()


def test_regenerate_anew_starts_a_finished_run_over_and_goes_on_with_an_interrupted_one(tmp_path):
    """`regenerate.py --anew` (the Makefile's results targets) removes a directory that holds a finished
    run before running again from nothing, but goes on with an interrupted run (its run file says not
    complete) instead of throwing its work away; an unreadable run file is one line and exit 2."""
    out = tmp_path / "a"
    cmd = [
        sys.executable,
        str(REGENERATE),
        "--anew",
        "analyze",
        "1-20",
        str(out),
        "--max-positions",
        "200000",
    ]
    prov = out / "PROVENANCE.md"

    def invocations() -> list[str]:
        return [x for x in prov.read_text().splitlines() if x.startswith("- started")]

    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert len(invocations()) == 1 and "rm -rf" not in r.stdout
    tables = frames(out)
    (out / "left-over").write_text("from the finished run")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert f"rm -rf {out}" in r.stdout
    assert len(invocations()) == 1 and not (out / "left-over").exists()
    assert all(frames(out)[k].equals(v) for k, v in tables.items())
    run = json.loads((out / "run.json").read_text())
    run["complete"] = False  # as a run stopped part-way leaves it
    (out / "run.json").write_text(json.dumps(run))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "rm -rf" not in r.stdout and len(invocations()) == 2
    assert runfile.read(out)["complete"] is True
    (out / "run.json").write_text("{")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr
    assert (out / "run.json").read_text() == "{"


@pytest.mark.slow
def test_regenerate_records_an_invocation_stopped_with_sigterm(tmp_path):
    """A SIGTERM to pipelines/regenerate.py alone (a `kill`, or a scheduler's stop) goes on to the run, and
    the invocation's line in PROVENANCE.md gets its end and the run's exit code, as with Ctrl-C."""
    out = tmp_path / "t"
    cmd = [
        sys.executable,
        str(REGENERATE),
        "analyze",
        "1-2000",
        str(out),
        "--max-positions",
        "2000000",
        "--workers",
        "1",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    prov = out / "PROVENANCE.md"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not prov.exists():
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) != 0
    lines = [x for x in prov.read_text().splitlines() if x.startswith("- started")]
    assert len(lines) == 1 and "ended" in lines[0], lines
    assert "exit code 143" in lines[0], lines


def _wait_for_lent_cores(task, report):
    """A task of the lending tests: "quick" ends at once; "slow" waits (20 s at most) until its core is
    lent every core of the machine, or 3 s when `task` says none comes, and returns what it was lent."""
    if task == "quick":
        return 0
    cores = os.cpu_count() or 1
    deadline = time.monotonic() + (20 if task == "slow" else 3)
    while time.monotonic() < deadline and _core.lent_threads() != cores:
        time.sleep(0.05)
    return _core.lent_threads()


def test_the_cores_of_finished_workers_go_to_the_last_proofs():
    """Two workers: once the quick task is done and none is left, the slow task's worker lends its
    proofs every core; with lending off (--threads given), it lends none."""
    from fcanalyze.engines import get_engine

    for lend, slow in [(True, "slow"), (False, "slow, none lent")]:
        eng = get_engine("local", workers=2)
        eng.lend_cores = lend
        out = dict(eng.run(_wait_for_lent_cores, [slow, "quick"], lambda n, counts: None))
        assert out == {slow: (os.cpu_count() or 1) if lend else 0, "quick": 0}


def test_a_worker_s_layered_proofs_get_the_cores_it_has_to_itself(tmp_path):
    """One worker (the serial engine) gives a layered proof every core, N worker processes give each
    proof cores // N threads (at least one), and the tasks carry that to the classification."""
    from fcanalyze.engines import get_engine

    cores = os.cpu_count() or 1
    assert get_engine("local", workers=1).threads_per_task == cores
    assert get_engine("local", workers=2).threads_per_task == max(1, cores // 2)
    assert get_engine("local", workers=4 * cores).threads_per_task == 1
    seen = []

    class Recording(SerialEngine):
        def run(self, fn, tasks, on_progress, on_record=None):
            seen.extend(task.threads for task in tasks)
            yield from super().run(fn, tasks, on_progress, on_record)

    runner.run("analyze", [(1, 8)], tmp_path / "o", Recording(), analyze_job.config(shard_size=4))
    assert seen == [cores, cores]


@pytest.mark.slow
def test_a_layered_proof_out_of_budget_goes_on_with_redo_undecided(tmp_path):
    """Deal 10996 with 1 cell in 64 MB goes to the layered proof (15,320,573 positions). With a budget of
    5 million positions the proof ends undecided and leaves its files in OUT/journal/layered/10996; run
    again with --redo-undecided and a larger budget, it goes on from its checkpoint, the deal is decided,
    and the files go."""
    out = tmp_path / "o"
    args = ["10996", "--out", str(out), "--max-memory", "64", "--workers", "1", "--shard-size", "1"]
    r = run_cli("analyze", *args, "--max-positions", "5000000")
    assert r.returncode == 0, r.stderr
    row = pd.read_parquet(out / "searches").query("cells == 1").iloc[0]
    assert (row["outcome"], row["exhausted"]) == ("undecided", "positions")
    state = out / "journal" / "layered" / "10996" / "cells-1" / "checkpoint"
    assert state.exists()
    r = run_cli("analyze", *args, "--max-positions", "40000000", "--redo-undecided")
    assert r.returncode == 0, r.stderr
    row = pd.read_parquet(out / "searches").query("cells == 1").iloc[0]
    assert (row["outcome"], row["positions"]) == ("unsolvable", 15_320_573)
    assert pd.read_parquet(out / "deals")["min_cells"].tolist() == [2]
    assert not (out / "journal").exists()


def test_the_layered_files_sent_elsewhere_by_a_link_keep_the_link(tmp_path):
    """docs/capacity.md: OUT/journal/layered may be a link to a directory on another disk (one that
    compresses). A run that ends with that directory empty exits 0 and keeps the link and the directory
    (it used to try to remove the link as a directory: exit 2 after the tables were written)."""
    out, spill = tmp_path / "o", tmp_path / "spill"
    spill.mkdir()
    (out / "journal").mkdir(parents=True)
    (out / "journal" / "layered").symlink_to(spill, target_is_directory=True)
    r = run_cli("analyze", "1-4", "--out", str(out), "--max-cells", "1", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert len(pd.read_parquet(out / "deals")) == 4
    assert (out / "journal" / "layered").is_symlink() and spill.is_dir()


class StopAfterOneShard(SerialEngine):
    """Runs the first task (a whole shard: one worker) and stops once its shard is written."""

    def run(self, fn, tasks, on_progress, on_record=None):
        yield from super().run(fn, itertools.islice(tasks, 1), on_progress, on_record)
        raise _Stop


def test_a_stopped_pass_over_the_open_deals_goes_on_where_it_stopped(tmp_path):
    """A pass of --redo-undecided stopped after one shard: the shards it has not begun stay shards (no
    journal holds their decided deals: what a stop leaves to commit stays small), and the run resumed
    searches only the open deals of those shards, not again those of the shard this pass wrote. The
    tables are those of the pass made without a stop; once complete, a new pass searches again."""
    first = tmp_path / "first"
    runner.run(
        "analyze", [(1, 12)], first, SerialEngine(), analyze_job.config(shard_size=4, max_positions=2000)
    )
    open_ = {
        block: entry["counts"].get("undecided", 0) for block, entry in runfile.read(first)["shards"].items()
    }
    assert sum(n > 0 for n in open_.values()) >= 2, open_
    raised = analyze_job.config(shard_size=4, max_positions=6000)
    reference = tmp_path / "reference"
    shutil.copytree(first, reference)
    runner.run("analyze", [(1, 12)], reference, SerialEngine(), raised, redo_undecided=True)

    out = tmp_path / "out"
    shutil.copytree(first, out)
    with pytest.raises(_Stop):
        runner.run("analyze", [(1, 12)], out, StopAfterOneShard(), raised, redo_undecided=True)
    run = runfile.read(out)
    done = [b for b, e in run["shards"].items() if e.get("pass") == 1]
    assert len(done) == 1 and run["redo_pass"] == 1 and not run["complete"]
    assert sorted(run["shards"]) == sorted(open_)  # the others were not begun: still shards
    assert not list((out / journal.DIR).glob("*.jsonl"))
    searching = SearchedDeals()
    searched = searching.searched

    runner.run("analyze", [(1, 12)], out, searching, raised, redo_undecided=True)
    first_deals = frames(first)["deals"].set_index("deal")
    left = {d for d in first_deals.index if first_deals.loc[d, "difficulty"] == "undecided"}
    a, b = (int(x) for x in done[0].split("-"))
    assert searched and set(searched) <= left - set(range(a, b + 1))
    assert_same_tables(reference, out)
    run = runfile.read(out)
    assert run["complete"] and run["redo_pass"] == 1
    # A new pass (the run was complete): the open deals are searched again, in every shard.
    searched.clear()
    runner.run("analyze", [(1, 12)], out, searching, raised, redo_undecided=True)
    still = set(frames(out)["deals"].query("difficulty == 'undecided'")["deal"])
    assert still and still <= set(searched) and runfile.read(out)["redo_pass"] == 2


def test_the_markdown_summary_lists_at_most_so_many_deals():
    """A summary of 1,000,000 deals would list tens of thousands of undecided ones in one line: the
    Markdown lists the first `summary.LISTED` and says how many more the table has."""
    many = list(range(1, summary.LISTED + 43))
    line = summary._bounds({"undecided_deals": many, "undecided_bounds": {d: [1, 2] for d in many}})
    assert line.count("(1-2)") == summary.LISTED and line.endswith(
        ", and 42 more (the deals table has each: difficulty undecided, with its bounds)"
    )
    few = summary._bounds({"undecided_deals": [7, 9], "undecided_bounds": {7: [2, None], 9: [1, 2]}})
    assert few == "7 (2-?), 9 (1-2)"
