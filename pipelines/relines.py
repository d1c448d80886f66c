"""Make the stored lines of a finished analyze run short, in place, without searching again; then its
manifest, summary.md and report.html again, and the invocation in its PROVENANCE.md.

    python pipelines/relines.py results/32k [--shorten-positions N] [--workers N]

The directory must hold a complete ``fcanalyze analyze`` run made with its lines as found
(``--shorten-positions 0``, as every run made before lines were shortened): it becomes, row for row, the
run made with ``--shorten-positions N`` (default: analyze's), see `fcanalyze.relines`. A run made with
``--no-solutions`` has its lines found again, and only their lengths change. Stopped, it goes
on from the shards already done when run again. Bad input: one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path

from regenerate import FCANALYZE, commit, run
from tqdm import tqdm

from fcanalyze import _core, atomic, relines, runfile


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the directory of a finished analyze run")
    parser.add_argument(
        "--shorten-positions", type=int, default=_core.CLASSIFY_SHORTEN_POSITIONS, metavar="N"
    )
    parser.add_argument("--workers", type=int, default=None, metavar="N")
    args = parser.parse_args()
    out: Path = args.out
    started, stamp, code = time.monotonic(), dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), commit()
    try:
        have = runfile.read(out)
        total = have["deals"] if have else 0
        with tqdm(total=total, unit="deal", desc="shortening lines", disable=None) as bar:
            count = relines.shorten_run(
                out, args.shorten_positions, workers=args.workers, on_progress=bar.update
            )
    except ValueError as e:  # runfile.DamagedFile too
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"interrupted: the shards done are kept; run the same command again to go on in {out}",
            file=sys.stderr,
        )
        return 130
    wall = time.monotonic() - started
    prov = out / "PROVENANCE.md"
    if prov.exists():
        stored = have is not None and have["config"].get("solutions", True)
        how = "" if stored else "found again (the run stored none) and "
        line = (
            f"- started {stamp}, commit {code}: lines {how}shortened within "
            f"{args.shorten_positions:,} positions "
            f"(`python {' '.join(sys.argv)}`), {count:,} lines, wall time {wall:,.0f} s "
            f"({wall / 60:.1f} min)\n"
        )
        atomic.write_text(prov, prov.read_text().rstrip("\n") + "\n" + line)
    steps = [["manifest", str(out)]] + ([["report", str(out)]] if (out / "report.html").exists() else [])
    for step in steps:
        if run([*FCANALYZE, *step]).returncode != 0:
            return 4
    summary = run([*FCANALYZE, "summary", str(out)], capture_output=True, text=True, check=True).stdout
    (out / "summary.md").write_text(summary)
    print(f"{count:,} lines shortened in {out} ({wall:,.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
