"""Output directories that cannot be poisoned: what a run writes, when, and what it trusts on resume.

Each case runs the installed command as a user would and asserts its exit code and its one line on stderr.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from test_pipeline import assert_same_tables

from fcanalyze import journal, runfile, shards

#: Quick, deterministic runs: two shards of two deals.
SMALL = ["--max-positions", "500000", "--shard-size", "2", "--workers", "1", "--quiet"]


def analyze(out: Path, *extra: str, range_text: str = "1-4"):
    return run_cli("analyze", range_text, "--out", str(out), *SMALL, *extra)


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
