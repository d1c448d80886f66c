"""Published reference figures (SPEC §6, Microsoft numbering, 4 free cells unless stated)."""

from __future__ import annotations

from dataclasses import dataclass

from fcanalyze.deals import in_spans

#: Deals proven unsolvable with 4 cells in 1..1,000,000 (Pringle & Fish; macroxue/freecell).
KNOWN_UNSOLVABLE_1M: tuple[int, ...] = (11982, 146692, 186216, 455889, 495505, 512118, 517776, 781948)

#: Minimum free cells over deals 1..32,000 (T. Pringle's per-deal table); 11982 needs 5.
MIN_CELLS_32K: dict[int, int] = {0: 69, 1: 6220, 2: 19092, 3: 6420, 4: 198, 5: 1}

#: Classes over deals 1..32,000, from the line above.
CLASSES_32K: dict[str, int] = {"easy": 6289, "normal": 19092, "hard": 6618, "unsolvable": 1}

#: Mean near-optimal solution length over 1..1,000,000 (macroxue/freecell): supermoves count once,
#: automatic moves are not counted.
NEAR_OPTIMAL_MEAN_MOVES = 25.5

#: Open cases under other cell counts (S. Fish): deal -> cells.
OPEN_CASES: dict[int, int] = {384243: 2, 138026: 3, 798194: 0}


@dataclass(frozen=True)
class CellCount:
    """A published count of the deals of ``first..last`` that are solvable, or unsolvable, with ``cells``
    free cells, and the deals it left open; the other count is what remains of the range."""

    first: int
    last: int
    cells: int
    solvable: int | None
    unsolvable: int | None
    open: tuple[int, ...]
    source: str

    def counts(self) -> dict[str, int]:
        """Solvable, unsolvable and open, each given or derived from the range's size."""
        total = self.last - self.first + 1 - len(self.open)
        solvable = self.solvable if self.solvable is not None else total - (self.unsolvable or 0)
        unsolvable = self.unsolvable if self.unsolvable is not None else total - solvable
        return {"solvable": solvable, "unsolvable": unsolvable, "open": len(self.open)}


#: S. Fish's exhaustive runs with fewer than 4 cells (SPEC §6), each with the deal it left undecided.
CELL_COUNTS: tuple[CellCount, ...] = (
    CellCount(1, 1_000_000, 0, 2_174, None, (798194,), "S. Fish, 0-cell lists"),
    CellCount(1, 400_000, 2, 317_873, 82_126, (384243,), "S. Fish (2012)"),
    CellCount(1, 1_000_000, 3, None, 6_398, (138026,), "S. Fish, 3-cell lists"),
)


def known_unsolvable_in(spans: list[tuple[int, int]]) -> list[int]:
    """The known 4-cell unsolvable deals (within 1..1,000,000) that fall in `spans`."""
    return [d for d in KNOWN_UNSOLVABLE_1M if in_spans(d, spans)]


def covers(spans: list[tuple[int, int]], first: int, last: int) -> bool:
    """True when the spans are exactly ``first..last``."""
    return spans == [(first, last)]
