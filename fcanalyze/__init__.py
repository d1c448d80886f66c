"""fcanalyze: FreeCell deal analysis.

Microsoft deals (1 to 8,589,934,591), the exact rules of play, a fast solver and an exhaustive prover in
Rust (``fcanalyze._core``), and an independent checker that replays every solution.
"""

from fcanalyze._core import InternalError, __version__
from fcanalyze.board import format_board, layout_from_json, parse_board
from fcanalyze.checker import Replay, replay
from fcanalyze.deals import MAX_DEAL, deal_layout, parse_deal_number, parse_range
from fcanalyze.play import Answer, Budget, IllegalMove, LastWinnable, Position, hint, last_winnable, winnable
from fcanalyze.solve import Result, solve

__all__ = [
    "MAX_DEAL",
    "Answer",
    "Budget",
    "IllegalMove",
    "InternalError",
    "LastWinnable",
    "Position",
    "Replay",
    "Result",
    "__version__",
    "deal_layout",
    "format_board",
    "hint",
    "last_winnable",
    "layout_from_json",
    "parse_board",
    "parse_deal_number",
    "parse_range",
    "replay",
    "solve",
    "winnable",
]
