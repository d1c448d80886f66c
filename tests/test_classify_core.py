"""The core's exact classification and the lean prover through the binding (fcanalyze._core)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fcanalyze import _core
from fcanalyze.checker import replay
from fcanalyze.deals import deal_layout
from fcanalyze.solve import classify

KEYS = {"outcome", "positions", "moves", "move_count", "notation", "elapsed_ms", "exhausted", "cells"}


@pytest.mark.parametrize(("deal", "min_cells"), [(1, 3), (2, 1), (3, 2), (164, 0), (617, 4)])
def test_known_minimum_cells(deal: int, min_cells: int) -> None:
    searches = _core.classify(deal, 4)
    assert all(set(s) == KEYS for s in searches)
    assert [s["cells"] for s in searches] == sorted({s["cells"] for s in searches})
    solved = [s for s in searches if s["outcome"] == "solved"]
    assert solved[0]["cells"] == min_cells
    assert replay(deal_layout(deal), min_cells, solved[0]["moves"]).ok
    if min_cells > 0:
        proof = next(s for s in searches if s["cells"] == min_cells - 1)
        assert proof["outcome"] == "unsolvable"
        assert proof["moves"] == [] and proof["exhausted"] is None
    c = classify(deal)
    assert c.min_cells == min_cells


def test_11982_needs_5_cells() -> None:
    searches = _core.classify(11982, 4)
    proof = next(s for s in searches if s["cells"] == 4)
    assert (proof["outcome"], proof["positions"]) == ("unsolvable", 61_643)
    assert not any(s["outcome"] == "solved" for s in searches)
    c = classify(11982, 5)
    assert (c.lower, c.upper, c.min_cells) == (5, 5, 5)


def test_layout_and_budgets() -> None:
    searches = _core.classify(deal_layout(1), 4)
    assert [s["outcome"] for s in searches if s["cells"] == 3] == ["solved"]
    small = _core.classify(1, 4, max_positions=5000, solve_positions=1000)
    assert any(s["outcome"] == "undecided" and s["exhausted"] == "positions" for s in small)
    assert not any(s["outcome"] == "unsolvable" and s["cells"] >= 2 for s in small)
    timed = _core.classify(1, 4, time_limit_ms=0)
    assert not any(s["outcome"] == "unsolvable" and s["cells"] >= 2 for s in timed)
    with pytest.raises(ValueError):
        _core.classify(1, 9)
    with pytest.raises(ValueError):
        _core.classify(0)


def test_prove_strategy_uses_the_lean_prover() -> None:
    r = _core.solve(11982, 4, max_positions=1_000_000, strategy="prove")
    assert (r["outcome"], r["positions"]) == ("unsolvable", 61_643)
    r = _core.solve(11982, 4, max_positions=1000, strategy="prove")
    assert (r["outcome"], r["exhausted"]) == ("undecided", "positions")
    r = _core.solve(2, 1, strategy="prove")
    assert r["outcome"] == "solved"
    assert replay(deal_layout(2), 1, r["moves"]).ok
    cols = _core.solve_deals([1, 617, 11982], 1, strategy="prove")
    assert cols["outcome"] == ["unsolvable", "unsolvable", "unsolvable"]
    assert cols["positions"][0] == 63


@pytest.mark.slow
def test_the_layered_proof_takes_over_when_memory_runs_out() -> None:
    """Deal 883 with no free cell: 2,174,568 reachable positions, more than the depth-first prover holds in
    40, 20, 10 or 5 MB; the layered proof finishes in each (it holds one group at a time) with the same
    exact count. With 2 MB neither does, and the answer is undecided, never unsolvable."""
    (full,) = _core.classify(883, 0)
    assert (full["outcome"], full["positions"]) == ("unsolvable", 2_174_568)
    for mb in (40, 20, 10, 5):
        (lean,) = _core.classify(883, 0, max_memory_mb=mb)
        assert (lean["outcome"], lean["positions"]) == ("unsolvable", 2_174_568)
    # Two threads share the layers' groups (and the memory): the same count.
    (shared,) = _core.classify(883, 0, max_memory_mb=20, threads=2)
    assert (shared["outcome"], shared["positions"]) == ("unsolvable", 2_174_568)
    (short,) = _core.classify(883, 0, max_memory_mb=2)
    assert short["outcome"] == "undecided" and short["exhausted"] == "positions"


@pytest.mark.slow
def test_the_trace_names_each_step_of_the_cascade(tmp_path) -> None:
    """With FCANALYZE_TRACE=1 each search of a classification prints one line to stderr: deal 883 with
    no free cell in 10 MB goes through every step to the layered proof, which gives the exact count.
    Without it, nothing. (Run outside the checkout, so that the installed package is the one imported.)"""
    code = "from fcanalyze import _core; _core.classify(883, 0, max_memory_mb=10)"
    env = {k: v for k, v in os.environ.items() if k != "FCANALYZE_TRACE"}
    quiet = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert "fcanalyze trace" not in quiet.stderr
    r = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={**env, "FCANALYZE_TRACE": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    traced = [x.split() for x in r.stderr.splitlines() if x.startswith("fcanalyze trace: ")]
    lines = [x for x in traced if x[2].startswith("cells=")]
    # The layered proof also prints a line a layer searched through, before its step's line.
    layers = [dict(f.split("=") for f in x[2:]) for x in traced if x[2].startswith("layer=")]
    assert len(lines) + len(layers) == len(traced)
    assert [x[3] for x in lines] == [
        "step=short-solve",
        "step=middle-solve",
        "step=first-proof",
        "step=beam",
        "step=beam",
        "step=prover",
        "step=giant-beam",
        "step=giant-beam",
        "step=layer-beam",
        "step=giant-solver",
        "step=layered",
    ]
    assert all(x[2] == "cells=0" for x in lines)
    assert lines[-1][4:6] == ["outcome=unsolvable", "positions=2174568"]
    assert lines[2][4] == "outcome=undecided"
    assert lines[5][4] == "outcome=undecided" and lines[5][-1] == "exhausted=positions"
    numbers = [int(x["layer"]) for x in layers]
    assert len(numbers) > 10 and numbers == sorted(set(numbers))
    assert sum(int(x["positions"]) for x in layers) == int(layers[-1]["total"]) == 2_174_568
    assert all(0 < int(x["largest_group"]) <= int(x["positions"]) for x in layers)


def test_a_first_proof_that_is_the_whole_budget_is_not_made_twice(tmp_path) -> None:
    """Deal 1 needs 3 cells; its proof with 2 has 70,882 positions. Within a budget of 5,000 the first
    proof with 2 cells is the whole budget: when it runs out only the beams follow it (the prover's
    cascade would make the same search), and the count is left open at the positions it reached. Deal
    10238 with 1 cell (734,018 positions) is decided by the first proof within a larger budget."""
    code = (
        "import json; from fcanalyze import _core; "
        "print(json.dumps(_core.classify({}, {}, max_positions={})))"
    )

    def run(deal: int, max_cells: int, budget: int, cells: int) -> tuple[list[str], dict]:
        """The steps with `cells` cells, and the search kept for them."""
        env = {**{k: v for k, v in os.environ.items() if k != "FCANALYZE_TRACE"}, "FCANALYZE_TRACE": "1"}
        r = subprocess.run(
            [sys.executable, "-c", code.format(deal, max_cells, budget)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        steps = [x.split()[3] for x in r.stderr.splitlines() if f" cells={cells} " in x]
        (search,) = [s for s in json.loads(r.stdout) if s["cells"] == cells]
        return steps, search

    steps, two = run(1, 4, 5_000, 2)
    assert steps[-4:] == ["step=middle-solve", "step=first-proof", "step=beam", "step=beam"]
    assert (two["outcome"], two["positions"], two["exhausted"]) == ("undecided", 5_000, "positions")
    steps, one = run(10238, 3, 3_000_000, 1)
    assert steps[-1] == "step=first-proof" and "step=beam" not in steps
    assert (one["outcome"], one["positions"]) == ("unsolvable", 734_018)


@pytest.mark.slow
def test_the_wide_beams_are_those_their_budget_holds(tmp_path) -> None:
    """`wide_beam_positions` chooses the wide beams tried before a giant proof, in order while their most
    positions fit: none, the first, or all three (deal 883 with no free cell in 10 MB, which reaches the
    giant stage); the count is the same."""
    env = {**{k: v for k, v in os.environ.items() if k != "FCANALYZE_TRACE"}, "FCANALYZE_TRACE": "1"}
    for budget, beams in ((0, 0), (20_000_000, 1), (_core.WIDE_BEAM_POSITIONS, 2), (92_000_000, 3)):
        call = f"_core.classify(883, 0, max_memory_mb=10, wide_beam_positions={budget})"
        code = f"from fcanalyze import _core; print({call})"
        r = subprocess.run(
            [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
        )
        steps = [x.split()[3] for x in r.stderr.splitlines() if x.startswith("fcanalyze trace: cells=")]
        assert steps.count("step=giant-beam") == beams, (budget, steps)
        assert steps[-1] == "step=layered" and "'positions': 2174568" in r.stdout, r.stdout


@pytest.mark.slow
def test_a_line_the_prover_misses_within_its_memory_comes_from_the_solver() -> None:
    """Deal 1406 with 1 cell is solvable, but the depth-first prover wanders 7 M positions before its
    line: with 64 MB it runs out, and the heuristic solver (given what the memory holds) finds a line."""
    r = _core.solve(1406, 1, max_positions=2**32 - 2, strategy="prove", max_memory_mb=64)
    assert r["outcome"] == "solved"
    assert replay(deal_layout(1406), 1, r["moves"]).ok


def _classify_10996_in_a_process(ckpt: Path, memory_mb: int) -> tuple[subprocess.Popen, Path]:
    """`_core.classify(10996, 1, max_memory_mb=MEMORY_MB, checkpoint_dir=CKPT)` in a process of its own (to
    be killed), and the checkpoint file its layered proof with 1 cell saves. It runs from CKPT's parent,
    not the checkout, whose fcanalyze/ would shadow the installed package."""
    code = (
        "import sys; from fcanalyze import _core; "
        "_core.classify(10996, 1, max_memory_mb=int(sys.argv[2]), checkpoint_dir=sys.argv[1])"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(ckpt), str(memory_mb)], cwd=ckpt.parent)
    return proc, ckpt / "cells-1" / "checkpoint"


@pytest.mark.slow
def test_a_killed_layered_proof_goes_on_from_its_checkpoint(tmp_path) -> None:
    """Deal 10996 with 1 cell in 64 MB: the prover and the solver run out and the layered proof takes
    over (15,320,573 reachable positions). Killed with SIGKILL once it has saved a checkpoint, the same
    call with the same directory goes on from there (straight to the layered proof) and ends with the
    exact count, here with two threads (a checkpoint does not depend on them); its files are gone
    after."""
    ckpt = tmp_path / "ckpt"
    proc, state = _classify_10996_in_a_process(ckpt, 64)
    deadline = time.monotonic() + 300
    layer = 0
    while time.monotonic() < deadline and proc.poll() is None and layer < 36:
        time.sleep(0.05)
        text = state.read_text() if state.exists() else ""
        layer = int(text.split("\nlayer ")[1].split()[0]) if "\nlayer " in text else 0
    proc.kill()
    proc.wait()
    assert layer >= 36, "killed before a checkpoint"
    assert state.exists()  # the killed process left its files
    (r,) = _core.classify(10996, 1, max_memory_mb=64, checkpoint_dir=ckpt, threads=2)
    assert (r["cells"], r["outcome"], r["positions"]) == (1, "unsolvable", 15_320_573)
    assert not (ckpt / "cells-1").exists()


@pytest.mark.slow
def test_a_layered_proof_killed_within_a_layer_goes_on_from_its_last_level(tmp_path) -> None:
    """Deal 10996 with 1 cell in 16 MB: some groups of the layered proof outgrow the memory and are
    searched by levels, each level's end saving a checkpoint within its layer (the group, the positions of
    its levels so far and the two level files the next one starts from). Killed with SIGKILL once such a
    checkpoint is saved, the same call goes on from that level and ends with the exact count."""
    ckpt = tmp_path / "ckpt"
    proc, state = _classify_10996_in_a_process(ckpt, 16)
    deadline = time.monotonic() + 300
    levels: list[str] = []
    while time.monotonic() < deadline and proc.poll() is None and not levels:
        time.sleep(0.02)
        text = state.read_text() if state.exists() else ""
        levels = (
            [line for line in text.splitlines() if line.startswith("levels ")]
            if text.endswith("end\n")
            else []
        )
    proc.kill()
    proc.wait()
    assert levels, "killed before a checkpoint within a layer"

    # levels GROUP SIGNATURE TOTAL CUR_FILE CUR_CODES PREV_FILE PREV_CODES, then `twin` or `trades X.Y,...`
    # for a group searched with its follower or by orbits: the files the last checkpoint lists (the process
    # may have gone on a little before the kill) are there, whole: a file of codes ends with its number of
    # codes, of blocks and a mark (crates/fcanalyze-core/src/layered/packed.rs), 8 bytes each.
    def codes_in(name: str) -> int:
        tail = (ckpt / "cells-1" / name).read_bytes()[-24:]
        assert tail[16:] == b"fcafclv1", name
        return int.from_bytes(tail[:8], "little")

    for line in state.read_text().splitlines():
        if line.startswith("levels "):
            _, _, _, total, cur, cur_codes, prev, prev_codes = line.split()[:8]
            assert int(total) > 0
            assert codes_in(cur) == int(cur_codes)
            assert prev == "-" or codes_in(prev) == int(prev_codes)
    (r,) = _core.classify(10996, 1, max_memory_mb=16, checkpoint_dir=ckpt, threads=2)
    assert (r["cells"], r["outcome"], r["positions"]) == (1, "unsolvable", 15_320_573)
    assert not (ckpt / "cells-1").exists()
