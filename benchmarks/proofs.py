"""Exhaustive proofs side by side: `fcanalyze solve D --cells K --prove` against Freecell Solver's "dbm"
prover on the same deals, and fcanalyze's proof with one thread against two.

    python benchmarks/proofs.py [dbm] [threads] [--rounds N] [--deals 12038:2,26063:1] [--write BENCHMARKS.md]

`dbm` needs Freecell Solver's `dbm_fc_solver` built once per cell count (the count is fixed at build
time), as `dbm-fc-solver-Kcells` in the directory named by `FCS_DBM_DIR`; without it that section is
skipped. How to build them is in BENCHMARKS.md. The two programs run alternately (A B A B ...), each on
the whole machine (both use every core they are given); both must report the same number of positions,
which is checked. Run on quiet cores: a ratio measured while other work loads the machine is not a figure.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import FCANALYZE, fmt_times, machine, timed, write_section

DBM_DIR = os.environ.get("FCS_DBM_DIR")
BOARD = shutil.which("make-microsoft-freecell-board")


def ours(deal: int, cells: int, threads: int | None = None) -> tuple[float, int]:
    """Wall seconds and positions of `fcanalyze solve DEAL --cells K --prove` (a finished proof)."""
    cmd = [
        FCANALYZE,
        "solve",
        str(deal),
        "--cells",
        str(cells),
        "--prove",
        "--max-memory",
        "16384",
        "--format",
        "json",
    ]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    wall, r = timed(cmd)
    if r.returncode != 1 or '"unsolvable"' not in r.stdout:
        sys.exit(
            f"fcanalyze solve {deal} --cells {cells}: exit {r.returncode}, not a proof: {r.stderr.strip()}"
        )
    positions = int(re.search(r'"positions":\s*(\d+)', r.stdout).group(1))
    return wall, positions


def dbm(deal: int, cells: int) -> tuple[float, int]:
    """Wall seconds and states of Freecell Solver's dbm prover (one thread: faster than two on 2 cores)."""
    binary = Path(DBM_DIR or "") / f"dbm-fc-solver-{cells}cells"
    board = subprocess.run([BOARD, "-t", str(deal)], capture_output=True, text=True, check=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "board"
        path.write_text(board)
        offload = Path(tmp) / "off"
        offload.mkdir()
        wall, r = timed([str(binary), "--num-threads", "1", "--offload-dir-path", f"{offload}/", str(path)])
    if "Could not solve successfully." not in r.stdout:
        sys.exit(f"dbm {deal} with {cells} cells: no proof (exit {r.returncode})")
    states = [int(x) for x in re.findall(r">>>Queue Stats: inserted=(\d+)", r.stdout)]
    return wall, states[-1]


def bench_dbm(deals: list[tuple[int, int]], rounds: int) -> str:
    rows = []
    for deal, cells in deals:
        ta, tb, counts = [], [], set()
        for _ in range(rounds):
            t, n = ours(deal, cells)
            ta.append(t)
            counts.add(("ours", n))
            t, n = dbm(deal, cells)
            tb.append(t)
            counts.add(("dbm", n))
        values = {n for _, n in counts}
        if len(values) != 1:
            sys.exit(f"deal {deal} with {cells} cells: the counts differ: {sorted(counts)}")
        ratio = statistics.median(b / a for a, b in zip(ta, tb, strict=True))
        rows.append(
            f"| {deal} with {cells} cell{'s' * (cells != 1)} | {values.pop():,} | {fmt_times(ta)} | "
            f"{fmt_times(tb)} | **{ratio:.1f}x** |"
        )
    return (
        f"Exhaustive proofs, both programs on the whole machine, alternating, run on "
        f"{time.strftime('%Y-%m-%d')}, {machine()}. Ours: `fcanalyze solve D --cells K --prove`; "
        f"Freecell Solver's: `dbm-fc-solver-Kcells --num-threads 1 --offload-dir-path DIR BOARD` "
        f"(one thread is its faster setting on 2 cores).\n\n"
        "| deal | positions (both) | fcanalyze | dbm_fc_solver | dbm / ours |\n| --- | --- | --- | --- | --- |\n"
        + "\n".join(rows)
    )


def bench_threads(deal: int, cells: int, rounds: int) -> str:
    t1, t2 = [], []
    for _ in range(rounds):
        t1.append(ours(deal, cells, threads=1)[0])
        t2.append(ours(deal, cells, threads=2)[0])
    ratio = statistics.median(a / b for a, b in zip(t1, t2, strict=True))
    return (
        f"`fcanalyze solve {deal} --cells {cells} --prove --threads T`, alternating, run on "
        f"{time.strftime('%Y-%m-%d')}, {machine()}.\n\n"
        "| threads | wall time |\n| --- | --- |\n"
        f"| 1 | {fmt_times(t1)} |\n| 2 | {fmt_times(t2)} |\n\n"
        f"**Speed-up with two threads: {ratio:.2f}x** (median of the pairs' ratios)."
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sections", nargs="*", choices=["dbm", "threads"], default=[])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--deals", default="12038:2,26063:1")
    ap.add_argument("--threads-deal", default="26063:1")
    ap.add_argument("--write", type=Path)
    a = ap.parse_args()
    if FCANALYZE is None:
        sys.exit("fcanalyze is not installed beside this Python")
    for name in a.sections or ["dbm", "threads"]:
        if name == "dbm":
            if not DBM_DIR or not BOARD:
                print("skipping dbm: set FCS_DBM_DIR and install freecell-solver-bin", file=sys.stderr)
                continue
            deals = [tuple(int(x) for x in d.split(":")) for d in a.deals.split(",")]
            body = bench_dbm(deals, a.rounds)
        else:
            deal, cells = (int(x) for x in a.threads_deal.split(":"))
            body = bench_threads(deal, cells, a.rounds)
        print(body, "\n")
        if a.write:
            write_section(a.write, f"proofs-{name}", body)


if __name__ == "__main__":
    main()
