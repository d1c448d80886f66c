"""Board text and JSON positions: parsing, formatting, and every malformed fixture's one-line error."""

from __future__ import annotations

import json

import pytest
from conftest import DATA

from fcanalyze import _core, deal_layout, format_board, layout_from_json, parse_board

BOARDS = DATA / "boards"


def test_deal_text_round_trip():
    for n in (1, 617, 11982, 6_000_000_000):
        layout = deal_layout(n)
        text = format_board(layout)
        assert len(text.splitlines()) == 8
        assert parse_board(text, cells=4)["columns"] == layout["columns"]


def test_fixture_is_deal_1():
    assert parse_board((BOARDS / "deal-1.txt").read_text(), cells=4)["columns"] == _core.deal(1)


def test_mid_game_board_round_trip():
    layout = {
        "columns": [["KS", "QH"], [], ["KC"], [], [], [], [], []],
        "cells": ["KH", None, "QS"],
        "foundations": {"C": 12, "D": 13, "H": 11, "S": 11},
    }
    text = format_board(layout)
    assert text.startswith("Foundations: H-J C-Q D-K S-J\nFreecells: KH - QS\n: KS QH\n:\n")
    back = parse_board(text, cells=4)
    assert back["columns"] == layout["columns"]
    assert back["cells"] == layout["cells"]
    assert back["foundations"] == layout["foundations"]


def test_board_forms_accepted():
    text = "Foundations: H-0 C-0 D-0 S-0\nFreecells:\n" + "".join(
        f": {' '.join(c.replace('T', '10') for c in col)}\n" for col in _core.deal(5)
    )
    assert parse_board(text, cells=4)["columns"] == _core.deal(5)
    assert parse_board(text.lower(), cells=4)["columns"] == _core.deal(5)


def test_json_position():
    doc = {"cells": ["KH"], "foundations": {"C": 13, "D": 13, "H": 12, "S": 13}, "columns": []}
    layout = layout_from_json(json.dumps(doc))
    assert layout["columns"] == [[]] * 8
    _core.validate(layout, 1)
    with pytest.raises(ValueError, match="free cells"):
        _core.validate(layout, 0)
    with pytest.raises(ValueError, match="columns"):
        layout_from_json("[1, 2]")


@pytest.mark.parametrize(
    ("fixture", "cells", "message"),
    [
        ("col-with-duplicate-card.txt", 4, "duplicate card TC"),
        ("missing-card.txt", 4, "missing card TC"),
        ("bad-card-token.txt", 4, "line 3: bad card token '9X'"),
        ("too-many-columns.txt", 4, "9 columns"),
        ("more-freecell-cards-than-cells.txt", 4, "5 cards in free cells but only 4"),
        ("foundation-duplicates-a-column-card.txt", 4, "duplicate card AC"),
        ("bad-foundation-value.txt", 4, "bad foundation value 'X'"),
        ("deal-1.txt", 9, "9 free cells requested"),
    ],
)
def test_malformed_boards(fixture, cells, message):
    with pytest.raises(ValueError) as e:
        parse_board((BOARDS / fixture).read_text(), cells=cells)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_more_cells_accept_the_crowded_board():
    parse_board((BOARDS / "more-freecell-cards-than-cells.txt").read_text(), cells=5)
