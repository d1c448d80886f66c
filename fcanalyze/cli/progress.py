"""The progress bar: drawn by the parent only, quiet when stderr is not a terminal or with --quiet."""

from __future__ import annotations

import sys
from collections import Counter

from tqdm import tqdm


class Progress:
    """Deals done, rate, ETA and the outcome counts so far."""

    def __init__(self, total: int, counters: tuple[str, ...], quiet: bool, desc: str):
        self.counts: Counter[str] = Counter()
        self.counters = counters
        self.bar = tqdm(
            total=total,
            unit=" deals",
            desc=desc,
            disable=quiet or not sys.stderr.isatty(),
            dynamic_ncols=True,
            smoothing=0.05,
            mininterval=0.5,
        )

    def __call__(self, n: int, counts: dict[str, int]) -> None:
        self.counts.update(counts)
        self.bar.set_postfix_str(
            " ".join(f"{k}={self.counts[k]}" for k in self.counters if self.counts[k]), refresh=False
        )
        self.bar.update(n)

    def skipped(self, n: int, counts: dict[str, int]) -> None:
        """Deals already done in an earlier run: counted, without moving the rate."""
        self.counts.update(counts)
        self.bar.total -= n
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()
