"""Solve deals A..B with K cells on one core through the core's block API, as the pipeline does.

python benchmarks/solve_range.py 1 32000 [K]
"""

from __future__ import annotations

import sys
import time
from collections import Counter

from fcanalyze import _core

BLOCK = 1000


def main() -> None:
    a, b = int(sys.argv[1]), int(sys.argv[2])
    cells = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    budget = int(sys.argv[4]) if len(sys.argv) > 4 else 10_000_000
    t = time.perf_counter()
    counts: Counter[str] = Counter()
    positions = 0
    for start in range(a, b + 1, BLOCK):
        r = _core.solve_deals(list(range(start, min(b, start + BLOCK - 1) + 1)), cells, max_positions=budget)
        counts.update(r["outcome"])
        positions += sum(r["positions"])
    elapsed = time.perf_counter() - t
    n = b - a + 1
    print(
        f"deals {a}-{b}, {cells} cells: {dict(counts)}, {positions / n:,.0f} positions per deal, "
        f"{elapsed:.2f} s in the core ({elapsed / n * 1e3:.3f} ms per deal)"
    )


if __name__ == "__main__":
    main()
