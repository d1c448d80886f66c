"""Found lines made short through the binding (``_core.shorten``, ``solve_deals``, ``classify``): every
line the pure-Python checker replays, never longer than the line given; bad lines are refused."""

from __future__ import annotations

import pytest

from fcanalyze import _core
from fcanalyze.checker import replay
from fcanalyze.deals import deal_layout


def player_moves(moves: list[dict]) -> int:
    return sum(not m["auto"] for m in moves)


@pytest.mark.parametrize(("deal", "cells"), [(1, 4), (617, 4), (3, 2), (164, 0)])
def test_a_found_line_gets_shorter_and_replays(deal: int, cells: int) -> None:
    found = _core.solve(deal, cells)["moves"]
    short = _core.shorten(deal, cells, found)
    assert replay(deal_layout(deal), cells, short).won
    assert player_moves(short) < player_moves(found)
    unsearched = _core.shorten(deal, cells, found, max_positions=0)  # loops cut only
    assert replay(deal_layout(deal), cells, unsearched).won
    assert player_moves(short) <= player_moves(unsearched) <= player_moves(found)


def test_solve_deals_counts_the_short_lines_and_keeps_the_searches() -> None:
    deals = list(range(1, 11))
    plain = _core.solve_deals(deals)
    short = _core.solve_deals(deals, shorten_positions=_core.SHORTEN_POSITIONS)
    assert plain["positions"] == short["positions"] and plain["outcome"] == short["outcome"]
    assert all(s <= p for s, p in zip(short["moves"], plain["moves"], strict=True))
    for deal, notation in zip(deals, short["solution"], strict=True):
        moves = _core.parse_notation(notation)
        assert replay(deal_layout(deal), 4, moves, autos="implied").won


def test_bad_lines_and_budgets_are_refused() -> None:
    found = _core.solve(1, 4)["moves"]
    with pytest.raises(ValueError, match="fails at move"):
        _core.shorten(1, 4, found[: len(found) // 2])
    with pytest.raises(ValueError, match="fails at move"):
        _core.shorten(2, 4, found)
    with pytest.raises(ValueError, match="width"):
        _core.shorten(1, 4, found, width=0)
    with pytest.raises(ValueError, match="width"):
        _core.solve_deals([1], shorten_width=0)


def test_an_analyze_run_made_before_shortening_resumes_only_unshortened(tmp_path) -> None:
    """A run file without the shortening's keys was made with the lines as found: it reads so, which
    `analyze --shorten-positions 0` matches and the default does not."""
    import json

    from fcanalyze import runfile
    from fcanalyze.jobs import analyze as analyze_job

    old = {k: v for k, v in analyze_job.config().items() if not k.startswith("shorten")}
    run = {"format": runfile.FORMAT, "job": "analyze", "config": old}
    (tmp_path / "run.json").write_text(json.dumps(run))
    config = runfile.read(tmp_path)["config"]
    assert config == analyze_job.config(shorten_positions=0)
    assert config != analyze_job.config()
