"""Replay every solution of an ``analyze`` results directory with the independent Python checker.

    python pipelines/replay.py results/32k

Each deal's solution (``deals`` table, column ``solution``, played with ``min_cells_upper`` free cells)
is replayed move by move from the deal's layout by ``fcanalyze.replay``, which shares no code with the
search's move generator, under the rules of automatic moves the table records (``fcanalyze.autoplay`` in
its metadata; a table from before that key was made under the safe rules); its length must equal the
``moves`` column. Prints the count and exits 1 on the
first line that does not win (with the deal and the reason), 2 on a directory without a deals table.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from fcanalyze import _core, records, replay


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(sys.argv[1])
    if not (out / "deals").is_dir():
        print(f"error: {out} holds no deals table (run fcanalyze analyze first)", file=sys.stderr)
        return 2
    started = time.monotonic()
    files = sorted((out / "deals").glob("*.parquet"))
    if not files:
        print(f"error: {out} holds no deals table (run fcanalyze analyze first)", file=sys.stderr)
        return 2
    # A run's files share its rules (a resume with other rules is refused): the first one says them.
    autoplay = records.autoplay_of(pq.read_schema(files[0]).metadata)
    deals = pd.read_parquet(out / "deals", columns=["deal", "min_cells_upper", "moves", "solution"])
    solved = deals[deals["solution"].notna()]
    for row in solved.itertuples():
        layout = {"columns": _core.deal(row.deal)}
        moves = _core.parse_notation(row.solution)
        r = replay(layout, int(row.min_cells_upper), moves, autos="implied", autoplay=autoplay)
        if not r.ok or r.moves != row.moves:
            why = r.reason if not r.ok else f"{r.moves} moves, the table says {row.moves}"
            print(f"error: deal {row.deal} ({row.min_cells_upper} cells): {why}", file=sys.stderr)
            return 1
    print(
        f"{len(solved):,} solutions of {len(deals):,} deals replayed to a won game under {autoplay} autoplay "
        f"({time.monotonic() - started:,.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
