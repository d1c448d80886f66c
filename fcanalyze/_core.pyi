"""Type stubs of the compiled core (crates/fcanalyze-py), checked against the built module by
``python -m mypy.stubtest fcanalyze._core``."""

import os
from typing import Any, Literal

__all__ = [
    "BYTES_PER_POSITION",
    "CLASSIFY_SHORTEN_POSITIONS",
    "CLASSIFY_SHORTEN_WIDTH",
    "MAX_CELLS",
    "MAX_DEAL",
    "SHORTEN_POSITIONS",
    "SHORTEN_WIDTH",
    "WIDE_BEAM_POSITIONS",
    "InternalError",
    "__version__",
    "classify",
    "deal",
    "format_notation",
    "lend_threads",
    "lent_threads",
    "parse_notation",
    "replay",
    "shorten",
    "solve",
    "solve_deals",
    "successors",
    "validate",
]

__version__: str
#: The largest deal number, 8,589,934,591 (FreeCell Pro's range).
MAX_DEAL: int
#: The largest number of free cells, 8.
MAX_CELLS: int
#: Bytes of memory per stored position (arena entry plus table slots at mean load).
BYTES_PER_POSITION: int
#: The shortening of lines in bulk (`solve_deals`): the beams' width and the positions stored a line.
SHORTEN_WIDTH: int
SHORTEN_POSITIONS: int
#: The shortening of a classification's lines (`classify`), wider: a classification costs far more.
CLASSIFY_SHORTEN_WIDTH: int
CLASSIFY_SHORTEN_POSITIONS: int
#: Most positions, in all, of the wide beams a classification tries for a line before a giant proof
#: (`classify`'s `wide_beam_positions` by default).
WIDE_BEAM_POSITIONS: int

class InternalError(RuntimeError):
    """A broken invariant in the core: a bug, never bad input."""

# Aliases of the stub only (private: the module has no such names).
_Layout = dict[str, Any]
_MoveDict = dict[str, Any]
_Strategy = Literal["solve", "prove"]
_SolveStrategy = Literal["solve", "prove", "short", "shortest"]
_Autoplay = Literal["safe", "max"]

def deal(n: int) -> list[list[str]]:
    """The 8 columns of Microsoft deal `n`, each from the buried card to the exposed card."""

def validate(layout: _Layout, cells: int) -> None:
    """Raise ValueError unless `layout` is a legal position for `cells` free cells."""

def solve(
    source: int | _Layout,
    cells: int = 4,
    max_positions: int = 10_000_000,
    time_limit_ms: int | None = None,
    strategy: _SolveStrategy = "solve",
    max_memory_mb: int | None = None,
    threads: int = 1,
    autoplay: _Autoplay = "safe",
) -> dict[str, Any]:
    """Search a deal or a layout under the automatic moves `autoplay` (``"safe"``, SPEC §2, or ``"max"``:
    every card that fits goes home at once, none by hand). Returns outcome, positions, moves (dicts with
    from/to/count/auto, automatic moves included), move_count, notation, elapsed_ms and exhausted (the
    budget that ran out).
    With ``strategy="prove"``, `max_memory_mb` bounds the prover (past it the layered proof takes over)
    and the proof runs on `threads` threads;
    ``strategy="short"`` looks for a short winning line as players count moves; ``"shortest"`` goes on
    until no shorter line can exist, or the budget, and adds lower_bound: the moves every line takes at
    least, proven (the line's own count when it is a shortest one; None unless solved)."""

def solve_deals(
    deals: list[int],
    cells: int = 4,
    max_positions: int = 10_000_000,
    time_limit_ms: int | None = None,
    strategy: _Strategy = "solve",
    solutions: bool = True,
    autoplay: _Autoplay = "safe",
    shorten_width: int | None = None,
    shorten_positions: int | None = None,
) -> dict[str, list[Any]]:
    """Search many deals in one call; columns deal, outcome, positions, moves, elapsed_ms, exhausted
    and, unless `solutions` is false, solution (every line is replayed by the core either way). With
    `shorten_width` or `shorten_positions` (the other from `SHORTEN_WIDTH` / `SHORTEN_POSITIONS`), each
    line is shortened before it is counted; positions and elapsed_ms stay the search's."""

def shorten(
    source: int | _Layout,
    cells: int,
    moves: list[_MoveDict],
    width: int | None = None,
    max_positions: int | None = None,
    autoplay: _Autoplay = "safe",
    like: Literal["bulk", "classify"] = "bulk",
) -> list[_MoveDict]:
    """A winning line (automatic moves included) made short by beams of `width` around it storing at
    most `max_positions` positions (defaults `SHORTEN_WIDTH`, `SHORTEN_POSITIONS`), replayed: never
    longer than the line given. ValueError if the line does not replay under `autoplay`. ``like=
    "classify"`` shortens as `classify` does (its beams' weights; defaults `CLASSIFY_SHORTEN_WIDTH`,
    `CLASSIFY_SHORTEN_POSITIONS`)."""

def replay(
    source: int | _Layout, cells: int, moves: list[_MoveDict], autoplay: _Autoplay = "safe"
) -> tuple[bool, int | None, str | None]:
    """The core's independent replay under `autoplay`: (ok, index of the first bad move, reason)."""

def format_notation(moves: list[_MoveDict]) -> str:
    """Standard notation of the player moves among `moves`."""

def parse_notation(text: str) -> list[_MoveDict]:
    """Player moves from standard notation."""

def lend_threads(threads: int) -> None:
    """Lend this process's layered proofs `threads` threads: each one running or to come searches its next
    layers on that many instead of its own `threads` (0: back to those). Counts do not depend on the
    threads; each proof keeps its memory budget."""

def lent_threads() -> int:
    """The threads lent to this process's layered proofs (0: none)."""

def successors(
    source: int | _Layout, cells: int, autoplay: _Autoplay = "safe"
) -> tuple[list[_MoveDict], _Layout, list[tuple[_MoveDict, list[_MoveDict], _Layout]]]:
    """The search's move generator, for cross-checks: (automatic moves settling the position, the settled
    layout, [(move, its automatic moves, resulting layout), ...])."""

def classify(
    source: int | _Layout,
    max_cells: int = 4,
    max_positions: int = 400_000_000,
    time_limit_ms: int | None = None,
    solve_positions: int | None = None,
    max_memory_mb: int | None = None,
    checkpoint_dir: str | os.PathLike[str] | None = None,
    threads: int = 1,
    autoplay: _Autoplay = "safe",
    shorten_width: int | None = None,
    shorten_positions: int | None = None,
    wide_beam_positions: int | None = None,
) -> list[dict[str, Any]]:
    """Exact classification (SPEC §4): one dict per cell count searched, by cell count, shaped like
    `solve`'s result plus ``cells``. Short heuristic solves, then the lean prover just below the least
    cell count they win with; counts settled by monotonicity are not searched. `max_positions` and
    `time_limit_ms` bound each search, `max_memory_mb` the prover's memory (past it the heuristic solver
    with what that memory holds, then the layered proof): a budget hit is ``undecided``, never
    ``unsolvable``. With `checkpoint_dir`, a layered proof keeps resumable files there: called again
    with the same directory after being killed, it goes on from its last checkpoint. `threads` share a
    layered proof's work and memory (the results do not depend on them). Every line is shortened by beams
    of `shorten_width` storing at most `shorten_positions` positions (None: `CLASSIFY_SHORTEN_WIDTH`,
    `CLASSIFY_SHORTEN_POSITIONS`; positions 0: the lines as found). Before a giant proof (past the
    lean prover's cap), wide beams of 100,000, 1,000,000 and 3,000,000 look for a line within 20, 32 and
    40 million positions, those that fit within `wide_beam_positions` in all, in order (None:
    `WIDE_BEAM_POSITIONS`, the first two)."""
