"""Output directories that cannot be poisoned: what a run writes, when, and what it trusts on resume.

Each case runs the installed command as a user would and asserts its exit code and its one line on stderr.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import run_cli
from test_pipeline import assert_same_tables, frames

from fcanalyze import _core, journal, runfile, shards

#: Quick, deterministic runs: two shards of two deals.
SMALL = ["--max-positions", "500000", "--shard-size", "2", "--workers", "1", "--quiet"]
BIG_SHARDS = ["--max-positions", "500000", "--workers", "1", "--quiet"]


def analyze(out: Path, *extra: str, range_text: str = "1-4"):
    return run_cli("analyze", range_text, "--out", str(out), *SMALL, *extra)


def assert_same_rows(a: Path, b: Path) -> None:
    """The same rows (but for measured times), whatever the shards."""
    fa, fb = frames(a), frames(b)
    for name in fa:
        pd.testing.assert_frame_equal(fa[name], fb[name], check_exact=True)


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("small") / "run"
    r = analyze(out)
    assert r.returncode == 0, r.stderr
    return out


def test_a_torn_journal_tail_is_cut_before_appending(tmp_path):
    """A record half written when the disk filled (or the writer was killed) would hide every record
    appended after it; the journal drops it when it is opened again."""
    out = tmp_path / "o"
    p = journal.path(out, "b")
    p.parent.mkdir(parents=True)
    p.write_text('{"deal":1}\n{"deal":2,"x"')
    journals = journal.Journals(out)
    journals.append("b", {"deal": 3})
    journals.close()
    assert p.read_text() == '{"deal":1}\n{"deal":3}\n'
    assert [r["deal"] for r in journal.read(p)] == [1, 3]
    p.write_text('{"deal":1,"x"')  # no whole line at all
    journals = journal.Journals(out)
    journals.append("b", {"deal": 4})
    journals.close()
    assert journal.read(p) == [{"deal": 4}]


@pytest.mark.parametrize("table", ["searches", "deals", "unsolvable"])
@pytest.mark.parametrize("damage", ["empty", "flipped"])
def test_summary_manifest_and_resume_name_a_damaged_file(small_run, tmp_path, table, damage):
    out = tmp_path / "run"
    out.mkdir()
    for p in small_run.rglob("*"):
        if p.is_file():
            (out / p.relative_to(small_run)).parent.mkdir(parents=True, exist_ok=True)
            (out / p.relative_to(small_run)).write_bytes(p.read_bytes())
    victim = next(shards.paths(out, table)) if table != "unsolvable" else shards.derived_path(out, table)
    data = victim.read_bytes()
    victim.write_bytes(b"" if damage == "empty" else data[:-5] + bytes([data[-5] ^ 1]) + data[-4:])
    run_json = (out / "run.json").read_bytes()
    for args in (
        ["summary", str(out)],
        ["manifest", str(out)],
        ["analyze", "1-4", "--out", str(out), *SMALL],
    ):
        r = run_cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        line = one_line(r.stderr)
        assert f"{victim} is damaged" in line, line
        assert ("0 bytes where run.json records" in line) == (damage == "empty"), line
    assert (out / "run.json").read_bytes() == run_json  # nothing was written
    # Deleted, it is computed again by the same command: the tables are those of the undamaged run.
    victim.unlink()
    r = run_cli("summary", str(out))
    assert r.returncode == 2 and f"{victim} is missing" in one_line(r.stderr)
    r = analyze(out)
    assert r.returncode == 0, r.stderr
    assert_same_tables(small_run, out)
    assert run_cli("manifest", str(out)).returncode == 0


def test_a_run_file_lists_what_verifies(small_run):
    run = runfile.read(small_run)
    runfile.verify(small_run, run)
    assert json.loads((small_run / "run.json").read_text())["complete"]


def copy_run(src: Path, dst: Path) -> Path:
    for p in src.rglob("*"):
        if p.is_file():
            (dst / p.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
            (dst / p.relative_to(src)).write_bytes(p.read_bytes())
    return dst


def snapshot(out: Path) -> dict[str, tuple[int, bytes]]:
    return {
        str(p.relative_to(out)): (p.stat().st_mtime_ns, p.read_bytes()) for p in out.rglob("*") if p.is_file()
    }


@pytest.mark.parametrize(
    "option, value",
    [
        ("--max-positions", "99999999999999999999999"),
        ("--max-positions", str(2**64)),
        ("--time-limit", str(2**64)),
        ("--max-memory", str(2**44)),
    ],
)
def test_a_bad_budget_writes_nothing(tmp_path, small_run, option, value):
    """A budget past the core's 64-bit limits is refused before anything is written, and the directory
    serves the corrected command."""
    out = tmp_path / "d"
    r = run_cli("analyze", "1-4", "--out", str(out), *SMALL, option, value)
    assert r.returncode == 2, r.stderr
    assert option in one_line(r.stderr)
    assert not (out / "run.json").exists()
    r = analyze(out)
    assert r.returncode == 0, r.stderr
    assert_same_tables(small_run, out)


class _Crash(Exception):
    pass


def test_a_crashed_first_invocation_does_not_lock_the_directory(tmp_path, small_run):
    """The first task crashes once the run file is written (as a core error in a worker would): the
    directory holds no work, so the original command and a corrected one can both use it."""
    from fcanalyze import runner
    from fcanalyze.engines import SerialEngine
    from fcanalyze.jobs import analyze as analyze_job

    class Crashing(SerialEngine):
        def run(self, fn, tasks, on_progress, on_record=None):
            for _task in tasks:
                raise _Crash
            yield from ()

    for i, config in enumerate(
        [
            analyze_job.config(max_positions=123, shard_size=2),
            analyze_job.config(max_positions=500000, shard_size=2),
        ]
    ):
        out = tmp_path / f"d{i}"
        with pytest.raises(_Crash):
            runner.run("analyze", [(1, 4)], out, Crashing(), config)
        assert runfile.read(out)["shards"] == {} and not runfile.read(out)["complete"]
        (out / ".run.json.x.tmp").write_text("")  # a killed writer's temporary file
        r = analyze(out)  # the config of the second crash is the command's own, that of the first is not
        assert r.returncode == 0, r.stderr
        assert_same_tables(small_run, out)


def test_a_stopped_run_over_every_deal_starts_at_once_and_leaves_the_directory_usable(tmp_path, small_run):
    """`analyze 1-8589934591` plans lazily: its first deals are done within seconds, in little memory.
    Stopped before its first shard of 1,000 deals is finished, its directory serves the corrected range,
    which keeps the deals already journaled there."""
    import os
    import signal
    import subprocess
    import time

    import psutil
    from conftest import fcanalyze_command, sigint_as_in_a_terminal

    out = tmp_path / "d"
    proc = subprocess.Popen(
        [*fcanalyze_command(), "analyze", "1-8589934591", "--out", str(out), *BIG_SHARDS],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=sigint_as_in_a_terminal,
    )
    deadline = time.monotonic() + 60
    rss = 0
    while time.monotonic() < deadline and not (out / "run.json").exists():
        rss = max(rss, psutil.Process(proc.pid).memory_info().rss)
        time.sleep(0.05)
    assert (out / "run.json").exists(), "no task started within a minute"
    time.sleep(2)
    rss = max(rss, psutil.Process(proc.pid).memory_info().rss)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and one_line(stderr) == "fcanalyze: interrupted", stderr
    assert rss < 400 * 2**20, rss
    assert runfile.read(out)["deals"] == 8589934591
    journaled = journal.read(journal.path(out, "0000000001-0000001000"))
    r = run_cli("analyze", "1-4", "--out", str(out), *BIG_SHARDS)  # the same options
    assert r.returncode == 0, r.stderr
    assert_same_rows(small_run, out)
    assert not (out / journal.DIR).exists()
    if journaled:  # the deals journaled by the stopped run were kept: their measured times stay
        times = pd.read_parquet(out / "searches").set_index(["deal", "cells"])["elapsed_ms"]
        for record in journaled:
            if record["deal"] <= 4:
                for s in record["searches"]:
                    assert times[(s["deal"], s["cells"])] == s["elapsed_ms"]


def test_redo_undecided_with_nothing_to_redo_changes_nothing(tmp_path, small_run):
    out = copy_run(small_run, tmp_path / "d")
    assert runfile.read(out)["counts"]["undecided"] == 0
    before = snapshot(out)
    args = ["analyze", "1-4", "--out", str(out), *SMALL[:-1]]
    r = run_cli(*args[:5], "600000", *args[6:], "--redo-undecided")
    assert r.returncode == 0, r.stderr
    assert "(0 shards computed, 2 already done)" in r.stdout
    assert snapshot(out) == before  # no budget raise recorded, no file rewritten
    r = run_cli(*args)
    assert r.returncode == 0 and "(0 shards computed, 2 already done)" in r.stdout, r.stderr
    assert snapshot(out) == before


def test_redo_undecided_may_raise_the_memory_never_lower_it(tmp_path):
    """A later pass may give the deals left open more memory as well as more positions (the 1,000,000
    deals' passes do); a smaller memory is refused, and a raise is recorded."""
    out = tmp_path / "m"
    base = ["analyze", "1-8,164", "--out", str(out), "--shard-size", "8", "--workers", "1", "--quiet"]
    assert run_cli(*base, "--max-positions", "3000", "--max-memory", "256").returncode == 0
    assert runfile.read(out)["counts"]["undecided"] > 0
    r = run_cli(*base, "--max-positions", "3000", "--max-memory", "128", "--redo-undecided")
    assert r.returncode == 2 and "max_memory_mb 256 -> 128" in r.stderr
    r = run_cli(*base, "--max-positions", "30000", "--max-memory", "512")
    assert r.returncode == 2 and "max_memory_mb 256 -> 512" in r.stderr  # only with --redo-undecided
    r = run_cli(*base, "--max-positions", "30000", "--max-memory", "512", "--redo-undecided")
    assert r.returncode == 0, r.stderr
    run = runfile.read(out)
    assert (run["config"]["max_positions"], run["config"]["max_memory_mb"]) == (30000, 512)
    assert [(b["from"], b["to"]) for b in run["budgets_raised"]] == [
        ({"max_positions": 3000, "max_memory_mb": 256}, {"max_positions": 30000, "max_memory_mb": 512})
    ]


def test_redo_undecided_may_raise_the_wide_beams_never_lower_them(tmp_path):
    """The budget of wide beams before a giant proof is recorded with the run, read as its default in a
    run file made before it was (so such a run goes on), raised by a later pass with --redo-undecided
    like the other budgets, and never lowered; a bad value is one line and exit 2."""
    out = tmp_path / "w"
    base = ["analyze", "1-8,164", "--out", str(out), "--shard-size", "8", "--workers", "1", "--quiet"]
    budget = ["--max-positions", "3000", "--max-memory", "256"]
    assert run_cli(*base, *budget).returncode == 0
    run = runfile.read(out)
    assert run["config"]["wide_beam_positions"] == _core.WIDE_BEAM_POSITIONS
    # A run file written before the budget was configurable: read as having the default.
    del run["config"]["wide_beam_positions"]
    runfile.write(out, run)
    assert runfile.read(out)["config"]["wide_beam_positions"] == _core.WIDE_BEAM_POSITIONS
    r = run_cli(*base, *budget, "--redo-undecided", "--wide-beam-positions", "20000000")
    assert r.returncode == 2 and "wide_beam_positions 52000000 -> 20000000" in r.stderr, r.stderr
    for bad in ("-1", "many"):
        r = run_cli(*base, *budget, "--wide-beam-positions", bad)
        assert r.returncode == 2 and one_line(r.stderr), r.stderr
        assert "--wide-beam-positions" in r.stderr
    r = run_cli(*base, *budget, "--redo-undecided", "--wide-beam-positions", "92000000")
    assert r.returncode == 0, r.stderr
    run = runfile.read(out)
    assert run["config"]["wide_beam_positions"] == 92_000_000
    assert [(b["from"], b["to"]) for b in run["budgets_raised"]] == [
        ({"wide_beam_positions": 52_000_000}, {"wide_beam_positions": 92_000_000})
    ]


def test_blocks_and_pieces_are_made_on_the_fly():
    """Every deal's range gives its first block at once; pieces cover a block's deals in order."""
    from fcanalyze import runner
    from fcanalyze.deals import MAX_DEAL

    first = next(runner.blocks([(1, MAX_DEAL)], 1000))
    assert first == ("0000000001-0000001000", ((1, 1000),))
    assert list(runner.blocks([(1, 3), (5, 12), (20, 20)], 4)) == [
        ("0000000001-0000000004", ((1, 3),)),
        ("0000000005-0000000008", ((5, 8),)),
        ("0000000009-0000000012", ((9, 12),)),
        ("0000000017-0000000020", ((20, 20),)),
    ]
    assert runner.split(((1, 3), (5, 12)), 5) == [((1, 3), (5, 6)), ((7, 11),), ((12, 12),)]
    assert runner.piece_size(200, 2, 1000) == 13  # 16 pieces for 2 workers
    assert runner.piece_size(10**9, 2, 1000) == runner.MAX_PIECE
    assert runner.piece_size(200, 1, 1000) == 1000  # one worker: whole blocks


def test_an_output_that_cannot_be_written_is_one_line(tmp_path, small_run):
    a_file = tmp_path / "a-file"
    a_file.write_text("mine")
    for args in (
        ["analyze", "1-2", "--out", str(a_file / "out"), *SMALL],
        ["analyze", "1-2", "--out", "/proc/fcanalyze-out", *SMALL],
        ["verify-unsolvable", "1-2", "--out", str(a_file / "out"), "--workers", "1", "--quiet"],
        ["manifest", str(small_run), "-o", str(a_file / "m.json")],
    ):
        r = run_cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        line = one_line(r.stderr)
        assert str(a_file) in line or "/proc/fcanalyze-out" in line, line
    assert a_file.read_text() == "mine"
