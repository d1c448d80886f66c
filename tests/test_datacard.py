"""The data card, results/README.md, keeps up with the files it describes: its checksums are those of the
files (as `pipelines/datacard.py` computes them), its column tables are the files' schemas, and its
loading examples run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
CARD = RESULTS / "README.md"
SCRIPT = ROOT / "pipelines" / "datacard.py"


def test_card_checksums_match_the_files() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    listed = re.findall(r"^([0-9a-f]{64})  (\S+)$", CARD.read_text(), flags=re.M)
    files = sorted(p.relative_to(RESULTS).as_posix() for p in RESULTS.rglob("*") if p.is_file() and p != CARD)
    assert sorted(name for _, name in listed) == files


def test_check_finds_a_stale_card(tmp_path: Path) -> None:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import datacard
    finally:
        sys.path.remove(str(SCRIPT.parent))
    run = tmp_path / "r"
    (run / "t").mkdir(parents=True)
    (run / "run.json").write_text("{}")
    card = f"# card\n\n{datacard.BEGIN}\n{datacard.END}\n"
    fresh = datacard.replace_section(card, datacard.section(tmp_path))
    assert "r/run.json" in fresh and fresh != card
    (run / "run.json").write_text("{ }")
    assert datacard.replace_section(fresh, datacard.section(tmp_path)) != fresh


def card_columns() -> dict[str, list[tuple[str, str, bool]]]:
    """The column tables of the card: table -> [(column, type, nullable)]."""
    tables = {}
    for name, body in re.findall(r"^### `(\w+)`\n(.*?)(?=^#)", CARD.read_text(), flags=re.M | re.S):
        rows = re.findall(r"^\| `(\w+)` \| (\w+) \| (yes|no) \|", body, flags=re.M)
        if rows:
            tables[name] = [(c, t, n == "yes") for c, t, n in rows]
    return tables


@pytest.mark.parametrize("run", ["32k", "1m"])
def test_card_columns_are_the_files_schemas(run: str) -> None:
    described = card_columns()
    assert set(described) == {"deals", "searches", "unsolvable"}
    for table, columns in described.items():
        files = sorted((RESULTS / run / table).glob("*.parquet"))
        if not files:
            assert run == "1m" and table == "deals"
            continue
        for f in (files[0], files[-1]):
            schema = pq.read_schema(f)
            assert [(fld.name, str(fld.type), fld.nullable) for fld in schema] == columns, f


def test_card_examples_run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"^```python\n(.*?)^```", CARD.read_text(), flags=re.M | re.S)
    assert len(blocks) == 2
    for block in blocks:
        exec(compile(block, "results/README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "19092" in out and "781948" in out and "3095862346" in out
