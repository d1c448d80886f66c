"""Published reference figures (SPEC §6, Microsoft numbering, 4 free cells unless stated)."""

from __future__ import annotations

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


def known_unsolvable_in(spans: list[tuple[int, int]]) -> list[int]:
    """The known 4-cell unsolvable deals (within 1..1,000,000) that fall in `spans`."""
    return [d for d in KNOWN_UNSOLVABLE_1M if any(a <= d <= b for a, b in spans)]


def covers(spans: list[tuple[int, int]], first: int, last: int) -> bool:
    """True when the spans are exactly ``first..last``."""
    return spans == [(first, last)]
