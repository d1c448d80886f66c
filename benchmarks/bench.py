"""Side-by-side benchmarks: fcanalyze against Freecell Solver (the anchor), engines, hints.

    python benchmarks/bench.py [solve] [verify] [classify] [engines] [hints] [--write BENCHMARKS.md]
        [--rounds N] [--cpu CORE] [--verify-last N]

Each comparison runs both programs in the same run, alternately, as whole processes pinned to one core
each where the comparison is per core, and reports medians and the ratio of throughputs. Absolute times on
shared machines are noise; the ratios are the figures. With --write, each section of BENCHMARKS.md between
``<!-- bench:NAME -->`` markers is replaced by the new figures.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
FCANALYZE = str(Path(PY).with_name("fcanalyze")) if Path(PY).with_name("fcanalyze").exists() else None
FCS_RANGE = shutil.which("freecell-solver-range-parallel-solve")
FC_SOLVE = shutil.which("fc-solve")
TASKSET = shutil.which("taskset")


def machine() -> str:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "unknown CPU",
    )
    return f"{os.cpu_count()} cores, {cpu}, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def timed(cmd: list[str], cpu: int | None = None, **kw) -> tuple[float, subprocess.CompletedProcess]:
    t, _, r = timed_cpu(cmd, cpu, **kw)
    return t, r


def timed_cpu(
    cmd: list[str], cpu: int | None = None, **kw
) -> tuple[float, float, subprocess.CompletedProcess]:
    """Run `cmd` (pinned to core `cpu` if given): its wall time, its CPU time (user + system of the
    process and the children it waited for, as the kernel accounts them) and its result."""
    if cpu is not None and TASKSET:
        cmd = [TASKSET, "-c", str(cpu), *cmd]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, **kw)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        r = subprocess.CompletedProcess(
            cmd, proc.returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace")
        )
    return wall, usage.ru_utime + usage.ru_stime, r


def alternate(a: list[str], b: list[str], rounds: int) -> tuple[list[float], list[float], str, str]:
    """Run A and B in turn (A B A B ...), each pinned to its own core; returns their wall times."""
    ta, tb, out_a, out_b = [], [], "", ""
    for _ in range(rounds):
        t, r = timed(a, cpu=0)
        if r.returncode != 0:
            raise SystemExit(f"{a} failed: {r.stderr[-2000:]}")
        ta.append(t)
        out_a = r.stdout + r.stderr
        t, r = timed(b, cpu=1)
        tb.append(t)
        out_b = r.stdout + r.stderr
    return ta, tb, out_a, out_b


def fmt_times(ts: list[float]) -> str:
    return f"median {statistics.median(ts):.2f} s (min {min(ts):.2f}, max {max(ts):.2f}, {len(ts)} runs)"


# -- 4-cell solving, deals 1-32,000 --------------------------------------------------------------------


def bench_solve(rounds: int) -> str:
    if not FCS_RANGE:
        return "Freecell Solver is not installed (apt-get install freecell-solver-bin): skipped.\n"
    ours = [PY, str(ROOT / "benchmarks" / "solve_range.py"), "1", "32000", "4"]
    theirs = [FCS_RANGE, "1", "32000", "1", "-l", "lg"]
    ta, tb, out_a, _ = alternate(ours, theirs, rounds)
    ratio = statistics.median(tb) / statistics.median(ta)
    pairs = [b / a for a, b in zip(ta, tb, strict=True)]
    return (
        f"Deals 1-32,000, 4 free cells, one core each (taskset), alternating, whole processes "
        f"(start-up, imports and our replay of every solution included). Run on {dt.date.today()}, {machine()}.\n\n"
        f"| | command | wall time |\n| --- | --- | --- |\n"
        f"| fcanalyze | `python benchmarks/solve_range.py 1 32000 4` | {fmt_times(ta)} |\n"
        f"| Freecell Solver 5.0.0 | `freecell-solver-range-parallel-solve 1 32000 1 -l lg` | {fmt_times(tb)} |\n\n"
        f"**Throughput ratio (ours / Freecell Solver's): {ratio:.2f}** (per round: "
        f"{', '.join(f'{p:.2f}' for p in pairs)}). Ours: {out_a.strip()}\n"
    )


# -- the whole 4-cell command, deals 1-32,000 -------------------------------------------------------------


def bench_verify(rounds: int, cpu: int, last: int = 32000) -> str:
    """`fcanalyze verify-unsolvable 1-LAST --workers 1` (the whole command: start-up, searches, Parquet
    shards, the check against the known list) against Freecell Solver's range solver, both on the same
    core, alternating, each round in a fresh output directory. The figure is the median of the per-round
    ratios of wall times (theirs / ours); the ratio of CPU times (user + system) is printed beside it, less
    noisy on a loaded machine but not the figure."""
    if not FCS_RANGE or not FCANALYZE:
        return "Freecell Solver or the fcanalyze command is not installed: skipped.\n"
    theirs = [FCS_RANGE, "1", str(last), "1", "-l", "lg"]
    wall_a, cpu_a, wall_b, cpu_b = [], [], [], []
    summary = ""
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(rounds):
            ours = [FCANALYZE, "verify-unsolvable", f"1-{last}", "--workers", "1", "--quiet"]
            w, c, r = timed_cpu([*ours, "--out", f"{tmp}/{i}"], cpu=cpu)
            if r.returncode != 0:
                raise SystemExit(f"{ours} failed: {r.stdout[-1000:]} {r.stderr[-2000:]}")
            wall_a.append(w)
            cpu_a.append(c)
            summary = r.stdout.strip().splitlines()[0]
            w, c, r = timed_cpu(theirs, cpu=cpu)
            if r.returncode != 0:
                raise SystemExit(f"{theirs} failed: {r.stderr[-2000:]}")
            wall_b.append(w)
            cpu_b.append(c)
            shutil.rmtree(f"{tmp}/{i}")
    wall_ratios = [b / a for a, b in zip(wall_a, wall_b, strict=True)]
    cpu_ratios = [b / a for a, b in zip(cpu_a, cpu_b, strict=True)]
    return (
        f"Deals 1-{last:,}, 4 free cells, whole commands on one core (taskset -c {cpu}, the same for both), "
        f"alternating, {rounds} rounds. Run on {dt.date.today()}, {machine()}.\n\n"
        f"| | command | wall time | CPU time (user + sys) |\n| --- | --- | --- | --- |\n"
        f"| fcanalyze | `fcanalyze verify-unsolvable 1-{last} --workers 1 --out DIR --quiet` | {fmt_times(wall_a)} "
        f"| {fmt_times(cpu_a)} |\n"
        f"| Freecell Solver | `freecell-solver-range-parallel-solve 1 {last} 1 -l lg` | {fmt_times(wall_b)} "
        f"| {fmt_times(cpu_b)} |\n\n"
        f"**Throughput ratio (theirs / ours, wall, median of rounds): {statistics.median(wall_ratios):.2f}** "
        f"(per round: {', '.join(f'{x:.2f}' for x in wall_ratios)}); CPU-time ratio "
        f"{statistics.median(cpu_ratios):.2f}. Ours: {summary}\n"
    )


# -- exact classification sample against a Freecell Solver pipeline -----------------------------------


#: Limits of one fc-solve run in the classification pipeline: its complete search keeps about 800 bytes
#: per state and may need far more memory or time than the machine has on the few large proofs.
FCS_RUN_SECONDS = 300
FCS_RUN_BYTES = 8 << 30


def _fcs(args: list[str], board: str) -> str | None:
    """One fc-solve run; None when it exceeds FCS_RUN_SECONDS or FCS_RUN_BYTES (the deal is undecided)."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (FCS_RUN_BYTES, FCS_RUN_BYTES))

    try:
        r = subprocess.run(
            [FC_SOLVE, *args],
            input=board,
            capture_output=True,
            text=True,
            timeout=FCS_RUN_SECONDS,
            preexec_fn=limit,
        )
    except subprocess.TimeoutExpired:
        return None
    if r.returncode < 0 or ("solveable" not in r.stdout and "I could not solve" not in r.stdout):
        return None  # killed, out of memory, or an answer of neither kind
    return r.stdout


def fcs_classify(deals: range) -> tuple[dict[int, int | None], int, list[int]]:
    """Freecell Solver doing the classification job: for k = 0..4, the fast `-l lg` attempt, then the
    complete single-card search (`-to 01ABCDE -sp r:tf -sel`) when it fails; the first k solved is the
    minimum. Returns {deal: min cells or None}, the number of fc-solve runs and the deals a run left
    undecided (over its time or memory limit)."""
    out: dict[int, int | None] = {}
    undecided: list[int] = []
    runs = 0
    from fcanalyze import _core
    from fcanalyze.board import format_board

    for d in deals:
        board = format_board({"columns": _core.deal(d), "cells": [], "foundations": {}})
        out[d] = None
        for k in range(5):
            fast = _fcs(["--freecells-num", str(k), "-l", "lg"], board)
            runs += 1
            if fast and "This game is solveable." in fast:
                out[d] = k
                break
            full = _fcs(["--freecells-num", str(k), "-to", "01ABCDE", "-sp", "r:tf", "-sel"], board)
            runs += 1
            if full is None:
                undecided.append(d)
                break
            if "This game is solveable." in full:
                out[d] = k
                break
    return out, runs, undecided


def bench_classify(last: int) -> str:
    if not FC_SOLVE or not FCANALYZE:
        return "Freecell Solver or the fcanalyze command is not installed: skipped.\n"
    deals = range(1, last + 1)
    with tempfile.TemporaryDirectory() as tmp:
        t_ours, r = timed(
            [
                FCANALYZE,
                "analyze",
                f"1-{last}",
                "--out",
                f"{tmp}/a",
                "--workers",
                "1",
                "--max-cells",
                "4",
                "--quiet",
            ],
            cpu=0,
        )
        if r.returncode != 0:
            raise SystemExit(r.stderr)
        import pandas as pd

        ours = pd.read_parquet(f"{tmp}/a/deals").set_index("deal")
    t = time.perf_counter()
    theirs, runs, fcs_open = fcs_classify(deals)
    t_theirs = time.perf_counter() - t
    undecided_note = (
        f"; Freecell Solver left {len(fcs_open)} undecided (a run over {FCS_RUN_SECONDS} s or "
        f"{FCS_RUN_BYTES >> 30} GiB: {', '.join(map(str, fcs_open))}), counted in its time as spent"
        if fcs_open
        else ""
    )
    agree = sum(
        1
        for d in deals
        if (None if pd.isna(ours.loc[d, "min_cells"]) else int(ours.loc[d, "min_cells"])) == theirs[d]
    )
    return (
        f"Exact minimum free cells (0-4) of deals 1-{last}, one core each, run on {dt.date.today()}, {machine()}.\n\n"
        f"| | how | wall time |\n| --- | --- | --- |\n"
        f"| fcanalyze | `fcanalyze analyze 1-{last} --workers 1 --max-cells 4` (tables written) | {t_ours:.1f} s |\n"
        f"| Freecell Solver pipeline | per deal, k = 0..4: `fc-solve -l lg`, then `fc-solve -to 01ABCDE -sp r:tf -sel`"
        f" when it fails ({runs:,} runs) | {t_theirs:.1f} s |\n\n"
        f"**Ratio (theirs / ours): {t_theirs / t_ours:.1f}x.** Minimum cells agree on {agree} of {len(deals)} deals"
        f"{undecided_note}.\n"
    )


# -- engines: local processes against Dask ---------------------------------------------------------------


def bench_engines(rng: str) -> str:
    if not FCANALYZE:
        return "the fcanalyze command is not installed: skipped.\n"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, extra in [
            ("local, 2 worker processes", ["--workers", "2"]),
            ("dask, local cluster of 2 workers", ["--engine", "dask", "--workers", "2"]),
        ]:
            t, r = timed(
                [FCANALYZE, "verify-unsolvable", rng, "--out", f"{tmp}/{len(rows)}", "--quiet", *extra]
            )
            if r.returncode not in (0, 1):
                raise SystemExit(r.stderr)
            rows.append((name, t))
    base = rows[0][1]
    lines = "".join(f"| {n} | {t:.1f} s | {base / t:.2f} |\n" for n, t in rows)
    return (
        f"`fcanalyze verify-unsolvable {rng}` (4 cells, shards of 1,000 deals), run on {dt.date.today()}, "
        f"{machine()}.\n\n| engine | wall time | throughput vs local |\n| --- | --- | --- |\n{lines}"
    )


# -- hints -----------------------------------------------------------------------------------------------


def bench_hints(last: int, seed: int = 1) -> str:
    from fcanalyze import Budget, Position, hint

    rng = random.Random(seed)
    budget = Budget()
    dealt, mid = [], []
    from fcanalyze import _core

    for d in range(1, last + 1):
        p = Position.from_deal(d)
        t = time.perf_counter()
        hint(p, budget)
        dealt.append((time.perf_counter() - t) * 1e3)
        # a random mid-game position: up to 25 random legal moves (the search's generator) from the deal
        layout = p.layout
        for _ in range(rng.randrange(5, 26)):
            _, _, succ = _core.successors(layout, 4)
            if not succ:
                break
            layout = rng.choice(succ)[2]
        q = Position.from_layout(layout, 4)
        t = time.perf_counter()
        hint(q, budget)
        mid.append((time.perf_counter() - t) * 1e3)

    def q(xs: list[float], p: float) -> float:
        return statistics.quantiles(xs, n=100)[int(p) - 1] if p < 100 else max(xs)

    return (
        f"`fcanalyze.hint` in-process (default budget), deals 1-{last}, run on {dt.date.today()}, {machine()}.\n\n"
        f"| from | median | p99 | max |\n| --- | --- | --- | --- |\n"
        f"| the dealt position | {statistics.median(dealt):.2f} ms | {q(dealt, 99):.1f} ms | {max(dealt):.1f} ms |\n"
        f"| a random mid-game position (5-25 random moves in) | {statistics.median(mid):.2f} ms | "
        f"{q(mid, 99):.1f} ms | {max(mid):.1f} ms |\n\n"
        "Short lines under both rules, next to macroxue/freecell's: the section below.\n"
    )


def write_section(path: Path, name: str, body: str) -> None:
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text:
        text = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip() + f"\n\n{block}\n"
    path.write_text(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("which", nargs="*", default=["solve", "verify", "classify", "engines", "hints"])
    ap.add_argument("--write", type=Path, default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--classify-last", type=int, default=500)
    ap.add_argument("--hints-last", type=int, default=1000)
    ap.add_argument("--engines-range", default="1-20000")
    ap.add_argument("--cpu", type=int, default=0, help="the core of both commands of the verify comparison")
    ap.add_argument("--verify-last", type=int, default=32000)
    args = ap.parse_args()
    runs = {
        "solve": lambda: bench_solve(args.rounds),
        "verify": lambda: bench_verify(args.rounds, args.cpu, args.verify_last),
        "classify": lambda: bench_classify(args.classify_last),
        "engines": lambda: bench_engines(args.engines_range),
        "hints": lambda: bench_hints(args.hints_last),
    }
    for name in args.which:
        body = runs[name]()
        print(f"## {name}\n\n{body}", flush=True)
        if args.write:
            write_section(args.write, name, body)


if __name__ == "__main__":
    main()
