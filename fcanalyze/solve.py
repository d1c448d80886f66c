"""Solving one deal or position: the core's search, then the independent replay of every solution."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from fcanalyze import _core
from fcanalyze.checker import replay
from fcanalyze.deals import deal_layout, parse_deal_number

Outcome = Literal["solved", "unsolvable", "undecided"]
#: The rules of automatic moves (`fcanalyze.checker.AUTOPLAY`).
Autoplay = Literal["safe", "max"]

#: Default position budget of a search (about 35-47 bytes each: roughly 400 MB at most).
DEFAULT_MAX_POSITIONS = 10_000_000
#: Memory of a proof (``prove=True``, and per worker in ``analyze``), in MiB: past it the depth-first
#: prover hands over to the heuristic solver, then to the layered proof; a proof that needs more still is
#: undecided.
DEFAULT_MAX_MEMORY_MB = 8192
#: The heuristic search a ``prove=True`` search starts with: lines it finds within this budget come
#: quickly and short; past it the prover, whose own orders find the other lines, goes on alone (on every
#: thread: the heuristic search is one thread's, 10 s of a 28 s proof of deal 26063 with 1 cell when it
#: had `DEFAULT_MAX_POSITIONS`).
PROVE_FIRST_POSITIONS = 1_000_000
#: Budget of ``prove=True`` searches: as many positions as the core can index.
UNLIMITED_POSITIONS = 2**32 - 2
#: Memory of a shortest-line search (``short=True, prove=True``) per position stored, in bytes (rounded
#: up: deal 1 with 5 million positions peaked at 327 MB, Python included): its default budget is
#: `max_memory_mb` over this.
SHORTEST_BYTES_PER_POSITION = 80


@dataclass(frozen=True)
class Result:
    """The answer of one search (SPEC §3): exactly one outcome, with the positions it examined."""

    outcome: Outcome
    cells: int
    positions: int
    moves: list[dict] = field(repr=False)
    move_count: int
    notation: str = field(repr=False)
    elapsed_ms: float
    exhausted: str | None = None
    deal: int | None = None
    autoplay: Autoplay = "safe"
    #: A shortest-line search's proven least number of moves of any line (``move_count`` when the line
    #: is proven a shortest one); None for other searches.
    lower_bound: int | None = None

    @property
    def shortest(self) -> bool:
        """Whether the line is proven a shortest one."""
        return self.outcome == "solved" and self.lower_bound == self.move_count

    def to_json(self) -> dict:
        """The JSON object printed by ``fcanalyze solve --format json``."""
        return {
            "deal": self.deal,
            "cells": self.cells,
            "autoplay": self.autoplay,
            "outcome": self.outcome,
            "positions": self.positions,
            "move_count": self.move_count,
            "moves": self.moves,
            "notation": self.notation,
            "elapsed_ms": round(self.elapsed_ms, 3),
            "exhausted": self.exhausted,
            "lower_bound": self.lower_bound,
        }


def solve(
    source: int | dict,
    cells: int = 4,
    *,
    max_positions: int | None = None,
    time_limit_ms: int | None = None,
    prove: bool = False,
    max_memory_mb: int | None = DEFAULT_MAX_MEMORY_MB,
    threads: int | None = None,
    autoplay: Autoplay = "safe",
    short: bool = False,
) -> Result:
    """Search deal number `source` (or a layout dict) with `cells` free cells, under the automatic moves
    `autoplay` (``"safe"``, SPEC §2, or ``"max"``: every card that fits goes home at once, none by hand).

    The search is complete, so ``unsolvable`` is always a finished proof and a budget hit gives
    ``undecided``. The default budget is `DEFAULT_MAX_POSITIONS`. ``prove=True`` searches to the end (no
    position budget unless `max_positions` is given): the heuristic search within
    `PROVE_FIRST_POSITIONS` first, then, if it is still open, the lean prover, which decides it either way
    within `max_memory_mb` (past that, the layered proof; undecided if that runs out too), on `threads`
    threads (default: one per core; the count of a proof does not depend on them). The positions
    reported are those of the search that decided (for a proof, the exact reachable set). A solution is
    returned only after the independent Python checker has replayed it to a won game. ``short=True``
    looks for a short line (moves counted as players see them) instead, within the budget; with
    ``prove=True`` too, for a shortest one: the search goes on until no shorter line can exist (default
    budget: what `max_memory_mb` holds), and ``lower_bound`` is the least number of moves it proved
    every line takes.
    """
    deal = parse_deal_number(source) if not isinstance(source, dict) else None
    layout = deal_layout(deal) if deal is not None else source
    if short:
        if max_positions is None:
            memory = (max_memory_mb or DEFAULT_MAX_MEMORY_MB) << 20
            max_positions = (
                min(memory // SHORTEST_BYTES_PER_POSITION, UNLIMITED_POSITIONS)
                if prove
                else DEFAULT_MAX_POSITIONS
            )
        r = _core.solve(
            layout,
            cells,
            max_positions=max_positions,
            time_limit_ms=time_limit_ms,
            strategy="shortest" if prove else "short",
            autoplay=autoplay,
        )
        return _checked(layout, cells, deal, autoplay, r)
    if max_positions is None:
        max_positions = UNLIMITED_POSITIONS if prove else DEFAULT_MAX_POSITIONS
    first = min(max_positions, PROVE_FIRST_POSITIONS) if prove else max_positions
    r = _core.solve(
        layout,
        cells,
        max_positions=first,
        time_limit_ms=time_limit_ms,
        strategy="solve",
        autoplay=autoplay,
    )
    if r["outcome"] == "undecided" and r["exhausted"] == "positions" and max_positions > first:
        spent = r["elapsed_ms"]
        left = None if time_limit_ms is None else max(1, time_limit_ms - int(spent))
        r = _core.solve(
            layout,
            cells,
            max_positions=max_positions,
            time_limit_ms=left,
            strategy="prove",
            max_memory_mb=max_memory_mb,
            threads=threads or os.cpu_count() or 1,
            autoplay=autoplay,
        )
        r["elapsed_ms"] += spent
    return _checked(layout, cells, deal, autoplay, r)


def _checked(layout: dict, cells: int, deal: int | None, autoplay: Autoplay, r: dict) -> Result:
    """The core's answer `r` as a `Result`, once its line (if any) has won in the independent replay."""
    if r["outcome"] == "solved":
        check = replay(layout, cells, r["moves"], autoplay=autoplay)
        if not check.ok:
            raise _core.InternalError(f"the solver's line failed the independent replay: {check.reason}")
    return Result(cells=cells, deal=deal, autoplay=autoplay, **r)


@dataclass(frozen=True)
class Classification:
    """A deal's exact minimum number of free cells (SPEC §4), or the bounds that are proven.

    ``searches`` holds one `Result` per cell count searched, in order. ``min_cells`` is set only when the
    deal was solved with it and proven unsolvable with one cell fewer (or it is 0)."""

    deal: int
    lower: int
    upper: int | None
    searches: list[Result] = field(repr=False)

    @property
    def min_cells(self) -> int | None:
        return self.lower if self.upper is not None and self.lower == self.upper else None

    @property
    def solution(self) -> Result | None:
        """The search that solved the deal with `upper` cells."""
        return next((s for s in self.searches if s.outcome == "solved"), None)

    @property
    def positions(self) -> int:
        return sum(s.positions for s in self.searches)


def classify(
    deal: int,
    max_cells: int = 4,
    *,
    max_positions: int = DEFAULT_MAX_POSITIONS,
    time_limit_ms: int | None = None,
    max_memory_mb: int | None = None,
    checkpoint_dir: Path | None = None,
    threads: int = 1,
    shorten_width: int | None = None,
    shorten_positions: int | None = None,
    wide_beam_positions: int | None = None,
) -> Classification:
    """Find the least number of free cells (0..`max_cells`) that solves `deal`, proven (SPEC §4).

    The core's exact classification (`_core.classify`): short heuristic solves find the least cell count
    they win with, then a longer heuristic solve and the lean prover decide the count below it (a proof
    ends the search; a line found lowers the count and the search goes on below). Cell counts settled
    by monotonicity are not searched, so ``searches`` holds the searches that decided their cell count,
    and any undecided one (a search that ran out of `max_positions`, `time_limit_ms` or `max_memory_mb`
    leaves the bounds where the proofs put them; past `max_memory_mb` the heuristic solver and then the
    layered proof take over before giving up).
    Every solution is replayed by the independent checker. With `checkpoint_dir`, a layered proof
    keeps resumable files there (a killed classification goes on from its last checkpoint). `threads`
    share a layered proof's work and memory (the results do not depend on them). Every line is shortened
    in the core within `shorten_width` and `shorten_positions` (None: the core's defaults; positions 0:
    the lines as found). Before a giant proof, wide beams look for a line within `wide_beam_positions`
    in all (None: `_core.WIDE_BEAM_POSITIONS`)."""
    layout = deal_layout(deal)
    lower, upper = 0, None
    searches: list[Result] = []
    found = _core.classify(
        layout,
        max_cells,
        max_positions=max_positions,
        time_limit_ms=time_limit_ms,
        max_memory_mb=max_memory_mb,
        checkpoint_dir=checkpoint_dir,
        threads=threads,
        shorten_width=shorten_width,
        shorten_positions=shorten_positions,
        wide_beam_positions=wide_beam_positions,
    )
    for r in found:
        result = Result(deal=deal, **r)
        searches.append(result)
        if result.outcome == "unsolvable":
            lower = max(lower, result.cells + 1)
        elif result.outcome == "solved":
            check = replay(layout, result.cells, result.moves)
            if not check.ok:
                raise _core.InternalError(
                    f"deal {deal}, {result.cells} cells: the solver's line failed the replay: {check.reason}"
                )
            if upper is None:
                upper = result.cells
    return Classification(deal=deal, lower=lower, upper=upper, searches=searches)
