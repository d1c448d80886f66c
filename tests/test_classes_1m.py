"""The passes of the 1-1,000,000 classification (`pipelines/classes_1m.py`, `make results-1m-classes`):
the pass to run is read from the results directory, so one command goes on from any stop; after the last
pass it does nothing; a directory of another plan gets one line and exit 2."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import load_file

from fcanalyze import runfile

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "pipelines" / "classes_1m.py"

plan = load_file("classes_1m", SCRIPT)


def run_file(i: int, complete: bool) -> dict:
    p = plan.PASSES[i]
    return {
        "format": runfile.FORMAT,
        "config": {"max_positions": p["max_positions"], "max_memory_mb": p["max_memory_mb"]},
        "complete": complete,
    }


def script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_the_pass_to_run_is_read_from_the_run_file():
    assert plan.next_pass(None) == 0
    last = len(plan.PASSES) - 1
    for i in range(last + 1):
        # A stopped pass goes on, except one the plan cut short: it goes on as the next.
        cut = plan.PASSES[i].get("cut", False)
        assert plan.next_pass(run_file(i, complete=False)) == (i + 1 if cut else i)
        assert plan.next_pass(run_file(i, complete=True)) == (i + 1 if i < last else None)
    assert [i for i, p in enumerate(plan.PASSES) if p.get("cut")] == [4]
    assert not plan.PASSES[last].get("cut")
    # Budgets only grow from pass to pass (one at least), and every later pass searches again what was
    # left open.
    for a, b in zip(plan.PASSES, plan.PASSES[1:], strict=False):
        budgets = ("max_positions", "max_memory_mb")
        assert all(b[k] >= a[k] for k in budgets) and any(b[k] > a[k] for k in budgets)
    assert "--redo-undecided" not in plan.command(Path("x"), 0, [])
    assert all("--redo-undecided" in plan.command(Path("x"), i, []) for i in range(1, last + 1))
    # The passes after the fourth take up known giants: all three wide beams before their proofs.
    wide = [shlex.join(plan.command(Path("x"), i, [])) for i in range(last + 1)]
    assert ["--wide-beam-positions 92000000" in c for c in wide] == [i > 3 for i in range(last + 1)]
    with pytest.raises(ValueError, match="no pass of this plan"):
        plan.next_pass({"config": {"max_positions": 12345, "max_memory_mb": 1024}, "complete": True})


def test_the_committed_run_goes_on_with_its_own_pass():
    """`make results-1m-classes` on the committed directory runs the pass its run file names (or the next
    one, when that pass is finished), with the budgets of that pass."""
    out = ROOT / "results" / "1m-classes"
    run = json.loads((out / "run.json").read_text())
    r = script(str(out), "--dry-run")
    assert r.returncode == 0, r.stderr
    i = plan.next_pass(run)
    if i is None:
        assert "every pass of the plan is done" in r.stdout
        return
    assert f"pass {i + 1} of {len(plan.PASSES)}:" in r.stdout
    assert f"--max-positions {plan.PASSES[i]['max_positions']} " in r.stdout
    if not run["complete"] and run["config"]["max_positions"] == plan.PASSES[i]["max_positions"]:
        assert f"--max-positions {run['config']['max_positions']} " in r.stdout
    # The passes with no budget but the disk go in their order: the cheapest deals first (in the sixth,
    # the wide beams' wins; in the seventh, the win that came without a line), the giant that may
    # outgrow the disk last.
    first = {5: "--first 204545,", 6: "--first 155219 "}
    if i in first:
        assert first[i] in r.stdout and "--last 384243" in r.stdout


def test_after_the_last_pass_nothing_runs_and_another_plan_is_refused(tmp_path):
    done = tmp_path / "done"
    done.mkdir()
    (done / "run.json").write_text(json.dumps(run_file(len(plan.PASSES) - 1, complete=True)))
    r = script(str(done))
    assert r.returncode == 0 and "every pass of the plan is done" in r.stdout, r.stderr
    other = tmp_path / "other"
    other.mkdir()
    foreign = {"format": runfile.FORMAT, "config": {"max_positions": 7, "max_memory_mb": 64}}
    (other / "run.json").write_text(json.dumps(foreign))
    before = (other / "run.json").read_text()
    r = script(str(other))
    assert (
        r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "no pass of this plan" in r.stderr
    )
    assert (other / "run.json").read_text() == before and [p.name for p in other.iterdir()] == ["run.json"]
