"""The wall time of a run made in many invocations, pass by pass (`pipelines/run_time.py`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import load_file

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "pipelines" / "run_time.py"

run_time = load_file("run_time", SCRIPT)

PROVENANCE = """# How results/x was made

## Invocations

- started 2026-12-02 14:08 UTC, commit 4c6fce0: ended 2026-12-02 15:40 UTC, wall time 5,565 s (92.7 min), x
- started 2026-12-03 01:49 UTC, commit 9c6be89: ended 2026-12-03 02:25 UTC, wall time 2,144 s (35.7 min), x
- started 2026-12-03 02:25 UTC, commit 2474076: did not finish (stopped or killed, or still running)
- started 2026-12-04 00:34 UTC, commit 4778a87: ended 2026-12-04 00:38 UTC, wall time about 245 s (4 min)
- started 2026-12-04 00:40 UTC, commit 1c66750: ended 00:50 UTC, wall time 600 s, CPU time 1,150 s, x
- started 2026-12-04 00:56 UTC, commit 2f48f18: ended with the session, wall time about 1,500 s
"""


def test_invocations_count_in_the_pass_they_started_in() -> None:
    """A raise of budgets at 01:49:49 starts the second pass with the invocation of 01:49 (the run file
    is written after the start); lines written by hand ("about") count; one that did not finish counts
    apart; the CPU time is summed over the lines that record it."""
    passes = run_time.tally(PROVENANCE, ["2026-12-03T01:49:49+00:00", "2026-12-04T00:34:08+00:00"])
    assert [(p.number, p.invocations, p.wall_s, p.unfinished, p.cpu_s) for p in passes] == [
        (1, 1, 5565.0, [], 0.0),
        (2, 2, 2144.0, ["2026-12-03 02:25"], 0.0),
        (3, 3, 2345.0, [], 1150.0),
    ]
    table = run_time.render(passes)
    assert "| 2 | 2 | 2,144 s (0.6 h) | 2026-12-03 02:25 | - |" in table
    assert "| 3 | 3 | 2,345 s (0.7 h) | - | 1,150 s (1) |" in table
    assert "| all | 6 | 10,054 s (2.8 h) | | 1,150 s (1) |" in table


def test_the_committed_run_and_bad_input(tmp_path) -> None:
    out = ROOT / "results" / "1m-classes"
    r = subprocess.run([sys.executable, str(SCRIPT), str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    raised = len(json.loads((out / "run.json").read_text()).get("budgets_raised", []))
    rows = [line for line in r.stdout.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == raised + 1  # a row a pass
    # The first pass is the one docs/classes-1m.md gives: six invocations, 34,101 s.
    assert rows[0].startswith("| 1 | 6 | 34,101 s (9.5 h) |")
    r = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""
