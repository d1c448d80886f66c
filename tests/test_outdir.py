"""Output directories that cannot be poisoned: what a run writes, when, and what it trusts on resume.

Each case runs the installed command as a user would and asserts its exit code and its one line on stderr.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

from fcanalyze import journal

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
