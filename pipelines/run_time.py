"""The wall and CPU time of a run made in many invocations, pass by pass, from its PROVENANCE.md and
run.json.

    python pipelines/run_time.py results/1m-classes

Each invocation `pipelines/regenerate.py` recorded (``- started DATE TIME UTC, commit C: ended ..., wall
time N s ...``; lines written by hand say ``wall time about N s``) counts in the pass it started in: the
first pass until the run file's first raise of budgets (``budgets_raised``, one per later pass), each
later pass from its raise. An invocation whose line says it did not finish (stopped with its session or
still running) has no wall time: it is counted apart. Pauses within invocations are in the wall times
(docs/classes-1m.md lists them). The CPU time (the run's processes, workers included) is in the lines
regenerate.py has written since it records it: it is summed over those, and their number said.
Bad input: one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

#: An invocation's line: its start, then what its end says.
LINE = re.compile(r"^- started (\d{4}-\d\d-\d\d \d\d:\d\d) UTC, commit \w+: (.*)$")
#: Its wall time, as regenerate.py writes it or as a line written by hand does ("about"); its CPU time.
WALL = re.compile(r"wall time (?:about )?([\d,]+) s")
CPU = re.compile(r"CPU time ([\d,]+) s")


@dataclass
class Pass:
    """The invocations of one pass: how many, their wall times summed, those without one, and the CPU
    time of those that record it."""

    number: int
    invocations: int = 0
    wall_s: float = 0.0
    unfinished: list[str] = field(default_factory=list)
    cpu_s: float = 0.0
    with_cpu: int = 0


def tally(provenance: str, raises: list[str]) -> list[Pass]:
    """The passes of a run whose PROVENANCE.md is `provenance` and whose budgets were raised at the ISO
    times `raises` (the run file's ``budgets_raised``, in order)."""
    bounds = [dt.datetime.fromisoformat(r).replace(second=0, microsecond=0, tzinfo=None) for r in raises]
    passes = [Pass(i + 1) for i in range(len(bounds) + 1)]
    for line in provenance.splitlines():
        m = LINE.match(line)
        if m is None:
            continue
        start = dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M")
        p = passes[sum(1 for b in bounds if start >= b)]
        p.invocations += 1
        wall = WALL.search(m.group(2))
        if wall is None:
            p.unfinished.append(m.group(1))
        else:
            p.wall_s += float(wall.group(1).replace(",", ""))
        cpu = CPU.search(m.group(2))
        if cpu is not None:
            p.cpu_s += float(cpu.group(1).replace(",", ""))
            p.with_cpu += 1
    return passes


def render(passes: list[Pass]) -> str:
    rows = [
        "| pass | invocations | wall time | without a wall time (started, UTC) | CPU time (lines with it) |",
        "| ---: | ---: | ---: | --- | ---: |",
    ]

    def cpu(s: float, n: int) -> str:
        return f"{s:,.0f} s ({n})" if n else "-"

    for p in passes:
        rows.append(
            f"| {p.number} | {p.invocations} | {p.wall_s:,.0f} s ({p.wall_s / 3600:.1f} h) | "
            f"{', '.join(p.unfinished) or '-'} | {cpu(p.cpu_s, p.with_cpu)} |"
        )
    total = sum(p.wall_s for p in passes)
    n = sum(p.invocations for p in passes)
    all_cpu = cpu(sum(p.cpu_s for p in passes), sum(p.with_cpu for p in passes))
    rows.append(f"| all | {n} | {total:,.0f} s ({total / 3600:.1f} h) | | {all_cpu} |")
    return "\n".join(rows) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the directory of a run made through regenerate.py")
    args = parser.parse_args()
    try:
        provenance = (args.out / "PROVENANCE.md").read_text()
        run = json.loads((args.out / "run.json").read_text())
        raises = [r["at"] for r in run.get("budgets_raised", [])]
        passes = tally(provenance, raises)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"error: {args.out}: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(render(passes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
