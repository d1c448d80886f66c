"""Tests of the independent solution checker (fcanalyze/checker.py) against SPEC §2 and §5."""

from __future__ import annotations

import dataclasses
import random
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import load_file
from hypothesis import given, settings
from hypothesis import strategies as st

try:  # the package may be missing its __init__ or its compiled core: then load the file itself
    from fcanalyze import checker as ck
except ImportError:
    ck = load_file("fcanalyze_checker", Path(__file__).parents[1] / "fcanalyze" / "checker.py")

RANKS = "A23456789TJQK"


def rank(card: str) -> int:
    """A = 1 .. K = 13."""
    return RANKS.index(card[0]) + 1


def position(*columns: str, cells: tuple[str | None, ...] = ()) -> dict[str, Any]:
    """A layout from column strings (buried card first); every card not listed is on the foundations."""
    cols = [column.split() for column in columns]
    listed = [card for column in cols for card in column] + [card for card in cells if card]
    foundations = {s: min((rank(c) for c in listed if c[1] == s), default=14) - 1 for s in "CDHS"}
    return {"columns": cols, "cells": list(cells), "foundations": foundations}


def mv(src: str, dst: str, count: int = 1, auto: bool = False) -> dict[str, Any]:
    """A move dict."""
    return {"from": src, "to": dst, "count": count, "auto": auto}


def up(src: str) -> dict[str, Any]:
    """An automatic move to the foundation."""
    return mv(src, "foundation", auto=True)


def assert_legal(layout: dict[str, Any], cells: int, moves: list[dict[str, Any]], **kw: Any) -> ck.Replay:
    """Every move is legal (the line need not win)."""
    result = ck.replay(layout, cells, moves, **kw)
    assert result.index is None or result.index == len(moves), result.reason
    assert result.ok or "not won" in (result.reason or ""), result.reason
    return result


def assert_illegal(
    layout: dict[str, Any], cells: int, moves: list[dict[str, Any]], words: str, **kw: Any
) -> None:
    """The last move is rejected with a reason naming the problem."""
    result = ck.replay(layout, cells, moves, **kw)
    assert not result.ok
    assert result.index == len(moves) - 1, result.reason
    assert result.reason is not None and result.reason.startswith(f"move {len(moves) - 1} (")
    assert words in result.reason, result.reason


# Two free cells of four taken (KH, KS), one empty column (col4): 6 cards may move onto a card, 3 into col4.
# Foundations: C 12, D 11, H 4, S 6; nothing is a safe automatic move.
SUPER = position(
    "QH JS TH 9S 8H 7S 6H",
    "KD QD",
    "KC",
    "",
    "5H 8S",
    "7H 9H",
    "JH TS",
    "QS",
    cells=("KH", "KS", None, None),
)
# All four queens exposed and safe: the whole game is automatic.
QUEENS_EXPOSED = position("KS QH", "KH QS", "KD QC", "KC QD")
# Kings cover the queens: two player moves win.
KINGS_ON_TOP = position("QH KS", "QS KH", "QC KD", "QD KC")
KINGS_LINE = [
    mv("col1", "cell1"),
    up("col1"),  # QH
    up("col2"),  # KH
    up("col2"),  # QS
    up("cell1"),  # KS
    mv("col3", "col1"),  # KD into the empty column
    up("col3"),  # QC
    up("col4"),  # KC
    up("col4"),  # QD
    up("col1"),  # KD
]

DEAL_1 = (
    "JD KD 2S 4C 3S 6D 6S | 2D KC KS 5C TD 8S 9C | 9H 9S 9D TS 4S 8D 2H | JC 5S QD QH TH QS 6H | "
    "5D AD JS 4H 8H 6C | 7H QC AS AC 2C 3D | 7C KH AH 4D JH 8C | 5H 3H 3C 7S 7D TC"
)


def test_positions_are_well_formed_and_settled() -> None:
    for layout, cells in ((SUPER, 4), (KINGS_ON_TOP, 4)):
        ck.validate_layout(layout, cells)
        assert "not won" in (ck.replay(layout, cells, []).reason or "")


# ---------------------------------------------------------------------------------------------------------
# Cards and small functions


def test_parse_card() -> None:
    assert ck.parse_card("10h") == "TH"
    assert ck.parse_card("ah") == "AH"
    assert ck.parse_card("Ts") == "TS"
    for bad in ("1H", "AX", "A", "10", "TEN", "", None, 7):
        with pytest.raises(ValueError, match="unknown card"):
            ck.parse_card(bad)


def test_max_movable() -> None:
    assert ck.max_movable(0, 0) == 1
    assert ck.max_movable(4, 0) == 5
    assert ck.max_movable(2, 1) == 6
    assert ck.max_movable(2, 0) == 3
    assert ck.max_movable(4, 2) == 20
    assert ck.max_movable(0, 3) == 8


def test_won() -> None:
    assert ck.won({"columns": [], "foundations": dict.fromkeys("CDHS", 13)})
    assert not ck.won(KINGS_ON_TOP)
    assert not ck.won({"columns": [], "foundations": {"C": 13, "D": 13, "H": 13}})


# ---------------------------------------------------------------------------------------------------------
# The safe automatic rule, clause by clause


@pytest.mark.parametrize(
    ("card", "foundations", "safe"),
    [
        # r <= 2 goes up whatever the other foundations hold
        ("AH", {}, True),
        ("AS", {"C": 0, "D": 0, "H": 0}, True),
        ("2H", {"H": 1}, True),
        ("2C", {"C": 1}, True),
        # ... but only onto its predecessor
        ("2H", {}, False),
        ("5H", {"H": 3, "C": 13, "S": 13, "D": 13}, False),
        ("5H", {"H": 5, "C": 13, "S": 13, "D": 13}, False),
        # both opposite-colour foundations hold at least r - 1
        ("5H", {"H": 4, "C": 4, "S": 4}, True),
        ("5H", {"H": 4, "C": 4, "S": 3}, False),
        ("5H", {"H": 4, "C": 3, "S": 4}, False),
        ("3C", {"C": 2, "D": 2, "H": 2}, True),
        ("KS", {"S": 12, "D": 12, "H": 12}, True),
        # both opposite-colour foundations hold at least r - 2 and the other own-colour one at least r - 3
        ("5H", {"H": 4, "C": 3, "S": 3, "D": 2}, True),
        ("5H", {"H": 4, "C": 3, "S": 3, "D": 1}, False),
        ("5H", {"H": 4, "C": 2, "S": 3, "D": 13}, False),
        ("5H", {"H": 4, "C": 3, "S": 2, "D": 13}, False),
        ("3C", {"C": 2, "D": 1, "H": 1}, True),
        ("3C", {"C": 2, "D": 1, "H": 0, "S": 13}, False),
        ("KD", {"D": 12, "C": 11, "S": 11, "H": 10}, True),
        ("KD", {"D": 12, "C": 11, "S": 11, "H": 9}, False),
        ("10d", {"D": 9, "C": 8, "S": 8, "H": 7}, True),
    ],
)
def test_is_safe_auto(card: str, foundations: dict[str, int], safe: bool) -> None:
    assert ck.is_safe_auto(card, foundations) is safe


@given(
    st.sampled_from([r + s for s in "CDHS" for r in RANKS]),
    st.fixed_dictionaries({s: st.integers(0, 13) for s in "CDHS"}),
    st.sampled_from("CDHS"),
)
def test_safe_auto_stays_safe_when_other_foundations_grow(
    card: str, foundations: dict[str, int], other: str
) -> None:
    if other == card[1] or not ck.is_safe_auto(card, foundations):
        return
    grown = dict(foundations, **{other: min(13, foundations[other] + 1)})
    assert ck.is_safe_auto(card, grown)


# ---------------------------------------------------------------------------------------------------------
# Legal moves of every kind


@pytest.mark.parametrize(
    "moves",
    [
        pytest.param([mv("col6", "col7")], id="column onto a card (9H on TS)"),
        pytest.param([mv("col1", "col2", 6)], id="run onto a card (JS..6H on QD)"),
        pytest.param([mv("col1", "col4", 2)], id="tail of a run into an empty column"),
        pytest.param([mv("col8", "col4")], id="column into an empty column"),
        pytest.param([mv("col8", "cell3")], id="column to a free cell"),
        pytest.param([mv("cell1", "col4")], id="free cell into an empty column"),
        pytest.param([mv("col6", "cell3"), mv("cell3", "col7")], id="free cell onto a card"),
        pytest.param([mv("cell1", "cell4")], id="free cell to another free cell"),
        pytest.param([mv("col2", "foundation")], id="column to the foundation by hand (QD)"),
        pytest.param([mv("col3", "cell3"), mv("cell3", "foundation")], id="free cell to the foundation (KC)"),
    ],
)
def test_legal_moves(moves: list[dict[str, Any]]) -> None:
    for autos in ("explicit", "implied"):
        result = assert_legal(SUPER, 4, moves, autos=autos)
        assert result.moves == len(moves)


def test_move_effects() -> None:
    final = ck.replay(SUPER, 4, [mv("col1", "col2", 6), mv("cell1", "col4"), mv("col3", "foundation")]).final
    assert final["columns"][0] == ["QH"]
    assert final["columns"][1] == ["KD", "QD", "JS", "TH", "9S", "8H", "7S", "6H"]
    assert final["columns"][2] == []
    assert final["columns"][3] == ["KH"]
    assert final["cells"] == [None, "KS", None, None]
    assert final["foundations"] == {"C": 13, "D": 11, "H": 4, "S": 6}


# ---------------------------------------------------------------------------------------------------------
# Illegal moves of every kind


@pytest.mark.parametrize(
    ("moves", "words"),
    [
        pytest.param([mv("col4", "col1")], "col4 is empty", id="empty source column"),
        pytest.param([mv("cell3", "col4")], "cell3 is empty", id="empty source cell"),
        pytest.param([mv("col8", "col4", 2)], "col8 holds only 1 card", id="more cards than the column has"),
        pytest.param([mv("col6", "col4", 2)], "not a run", id="run with a rank gap (7H 9H)"),
        pytest.param([mv("col2", "col4", 2)], "not a run", id="run of one colour (KD QD)"),
        pytest.param([mv("col5", "col4", 2)], "not a run", id="not a run (5H 8S)"),
        pytest.param([mv("col8", "col2")], "QS does not fit on QD", id="wrong rank"),
        pytest.param([mv("col8", "col3")], "QS does not fit on KC", id="wrong colour"),
        pytest.param([mv("col5", "col1")], "8S does not fit on 6H", id="wrong rank and colour"),
        pytest.param([mv("col1", "col1")], "same place", id="same column"),
        pytest.param([mv("cell1", "cell1")], "same place", id="same cell"),
        pytest.param([mv("col8", "cell1")], "cell1 is not empty", id="occupied free cell"),
        pytest.param([mv("col8", "cell5")], "no cell5", id="free cell beyond the cell count"),
        pytest.param([mv("cell6", "col4")], "no cell6", id="source cell beyond the cell count"),
        pytest.param([mv("col7", "cell3", 2)], "one card", id="two cards to a free cell"),
        pytest.param([mv("cell1", "col4", 2)], "one card", id="two cards from a free cell"),
        pytest.param([mv("col8", "foundation")], "7S must go first", id="foundation without predecessor"),
        pytest.param([mv("col7", "foundation", 2)], "one at a time", id="two cards to the foundation"),
        pytest.param([mv("foundation", "col4")], "never leave the foundations", id="from the foundation"),
        pytest.param([mv("col1", "col3", 7)], "supermove limit of 6", id="7 cards onto a card"),
        pytest.param([mv("col1", "col4", 4)], "supermove limit of 3", id="4 cards into the empty column"),
        pytest.param(
            [mv("col8", "cell3"), mv("col7", "col8", 1), mv("col1", "col2", 6)],
            "supermove limit of 4",
            id="limit shrinks as cells and columns fill",
        ),
        pytest.param(
            [mv("col6", "col7"), mv("col6", "col1")], "7H does not fit on 6H", id="after a legal move"
        ),
    ],
)
def test_illegal_moves(moves: list[dict[str, Any]], words: str) -> None:
    for autos in ("explicit", "implied"):
        assert_illegal(SUPER, 4, moves, words, autos=autos)


def test_supermove_limits_at_the_spec_example() -> None:
    """SPEC §2: with 2 empty cells and 1 empty column, 6 cards onto a card, 3 into the empty column."""
    assert ck.max_movable(2, 1) == 6 and ck.max_movable(2, 0) == 3
    assert_legal(SUPER, 4, [mv("col1", "col2", 6)])
    assert_illegal(SUPER, 4, [mv("col1", "col3", 7)], "7 cards exceed the supermove limit of 6")
    assert_legal(SUPER, 4, [mv("col1", "col4", 3)])
    assert_illegal(SUPER, 4, [mv("col1", "col4", 4)], "4 cards exceed the supermove limit of 3")
    # with 2 more cells empty (6 cells in all), the 7-card run fits on KC
    assert_legal(SUPER, 6, [mv("col1", "col3", 7)])


def test_cell_count_limits_the_cells() -> None:
    assert_legal(SUPER, 8, [mv("col8", "cell8")])
    assert_illegal(SUPER, 2, [mv("col8", "cell3")], "no cell3 with 2 free cells")


def test_malformed_moves_raise() -> None:
    for bad in (
        mv("col9", "col1"),
        mv("col1", "cell9"),
        mv("cell0", "col1"),
        mv("col1", "tableau"),
        {"from": "col1"},
        mv("col1", "col2", 0),
        {"from": "col1", "to": "col2", "count": "2"},
        {"from": "col1", "to": "col2", "count": True},
        {"from": "col1", "to": "col2", "auto": "yes"},
    ):
        with pytest.raises(ValueError, match="move 1"):
            ck.replay(SUPER, 4, [mv("col6", "col7"), bad])
    with pytest.raises(ValueError, match="must be a dict"):
        ck.replay(SUPER, 4, ["5h"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="autos"):
        ck.replay(SUPER, 4, [], autos="none")  # type: ignore[arg-type]


def test_count_and_auto_default() -> None:
    assert_legal(SUPER, 4, [{"from": "col6", "to": "col7"}])


# ---------------------------------------------------------------------------------------------------------
# Automatic moves


def test_complete_won_game() -> None:
    result = ck.replay(KINGS_ON_TOP, 4, KINGS_LINE)
    assert result == ck.Replay(True, True, None, None, 2, result.final)
    assert ck.won(result.final)
    assert result.final["columns"] == [[]] * 8 and result.final["cells"] == [None] * 4


def test_implied_mode_equals_explicit_mode() -> None:
    player = [move for move in KINGS_LINE if not move["auto"]]
    explicit = ck.replay(KINGS_ON_TOP, 4, KINGS_LINE)
    implied = ck.replay(KINGS_ON_TOP, 4, player, autos="implied")
    assert implied == explicit
    assert ck.expand_autos(KINGS_ON_TOP, 4, player) == KINGS_LINE
    # the same on a line that does not win: both stop at the end, in the same position
    explicit = ck.replay(KINGS_ON_TOP, 4, KINGS_LINE[:5])
    implied = ck.replay(KINGS_ON_TOP, 4, KINGS_LINE[:1], autos="implied")
    assert not explicit.ok and explicit.index == 5 and implied.index == 1
    assert dataclasses.replace(implied, index=5) == explicit


def test_automatic_moves_at_the_start_in_any_order() -> None:
    order_a = [up("col1"), up("col2"), up("col3"), up("col4")] * 2
    order_b = [up("col4"), up("col3"), up("col2"), up("col1")] * 2
    for line in (order_a, order_b):
        result = ck.replay(QUEENS_EXPOSED, 4, line)
        assert (result.ok, result.won, result.index, result.reason, result.moves) == (
            True,
            True,
            None,
            None,
            0,
        )
    assert ck.replay(QUEENS_EXPOSED, 0, [], autos="implied").ok
    # KS goes up as soon as QH and QS are home (clause 3: diamonds and hearts hold 11+, clubs 10+)
    first_due = [
        up("col1"),
        up("col2"),
        up("col1"),
        up("col2"),
        up("col3"),
        up("col4"),
        up("col3"),
        up("col4"),
    ]
    assert ck.expand_autos(QUEENS_EXPOSED, 4, []) == first_due


def test_missing_automatic_moves_are_rejected() -> None:
    # nothing listed at the start although four queens are due
    result = ck.replay(QUEENS_EXPOSED, 4, [])
    assert not result.ok and result.index == 0
    assert "at the end: a safe automatic move is still due (QH from col1, QS from col2" in (
        result.reason or ""
    )
    # the automatic moves after the first player move are left out: the next player move is refused
    line = KINGS_LINE[:1] + KINGS_LINE[5:]
    result = ck.replay(KINGS_ON_TOP, 4, line)
    assert (result.index, result.moves) == (1, 1)
    assert result.reason == "move 1 (col3 -> col1, 1 card): a safe automatic move is still due (QH from col1)"
    assert result.final["columns"][0] == ["QH"]  # the position before the offending move
    # the last automatic moves are left out
    result = ck.replay(KINGS_ON_TOP, 4, KINGS_LINE[:-1])
    assert result.index == len(KINGS_LINE) - 1
    assert "at the end: a safe automatic move is still due (KD from col1)" in (result.reason or "")


def test_due_automatic_move_made_by_hand_must_be_flagged() -> None:
    line = [*KINGS_LINE[:1], mv("col1", "foundation"), *KINGS_LINE[2:]]
    assert_illegal(KINGS_ON_TOP, 4, line[:2], "must be flagged auto")


def test_wrongly_flagged_automatic_moves_are_rejected() -> None:
    # a player move flagged automatic
    assert_illegal(KINGS_ON_TOP, 4, [mv("col1", "cell1", auto=True)], "can only go to the foundation")
    # a move to the foundation that is legal but not safe (QD: hearts hold only 4)
    assert_illegal(SUPER, 4, [up("col2")], "QD is not a safe automatic move")
    # an automatic move of a card that cannot go up at all
    assert_illegal(SUPER, 4, [up("col8")], "7S must go first")
    # an automatic move listed ahead of its time: KH is not available before QH goes up
    assert_illegal(KINGS_ON_TOP, 4, [KINGS_LINE[0], up("col2")], "KH cannot go to the foundation")


def test_implied_mode_refuses_automatic_moves() -> None:
    assert_illegal(KINGS_ON_TOP, 4, KINGS_LINE[:2], "must not be listed in implied mode", autos="implied")


def test_implied_mode_settles_after_each_move() -> None:
    result = ck.replay(KINGS_ON_TOP, 4, KINGS_LINE[:1], autos="implied")
    assert result.index == 1 and result.moves == 1 and "not won, 4 cards" in (result.reason or "")
    assert result.final["foundations"] == {"C": 11, "D": 11, "H": 13, "S": 13}
    assert result.final == ck.replay(KINGS_ON_TOP, 4, KINGS_LINE[:5]).final


# ---------------------------------------------------------------------------------------------------------
# Microsoft deal 1


def ms_deal(number: int) -> list[list[str]]:
    """Microsoft deal ``number`` (1 <= number < 2**31), by SPEC §1's generator."""
    deck = [RANKS[i // 4] + "CDHS"[i % 4] for i in range(52)]
    columns: list[list[str]] = [[] for _ in range(8)]
    state = number
    for i in range(52):
        state = (state * 214013 + 2531011) % 2**32
        j = ((state >> 16) & 0x7FFF) % (52 - i)
        columns[i % 8].append(deck[j])
        deck[j] = deck[51 - i]
    return columns


def deal_1() -> dict[str, Any]:
    return {"columns": [column.split() for column in DEAL_1.split(" | ")], "cells": [], "foundations": {}}


def test_deal_1_layout() -> None:
    assert deal_1()["columns"] == ms_deal(1)
    ck.validate_layout(deal_1(), 4)


def test_deal_1_start() -> None:
    layout = deal_1()
    exposed = [column[-1] for column in layout["columns"]]
    assert not any(ck.is_safe_auto(card, {}) for card in exposed)
    explicit = ck.replay(layout, 4, [])
    assert not explicit.ok and not explicit.won and explicit.index == 0
    assert explicit.reason == "at the end: not won, 52 cards not on the foundations"
    implied = ck.replay(layout, 4, [], autos="implied")
    assert implied == explicit
    assert implied.final == {
        "columns": layout["columns"],
        "cells": [None] * 4,
        "foundations": dict.fromkeys("CDHS", 0),
    }
    # the first move of a known solution of deal 1 (5a) and an obviously illegal one
    assert_legal(layout, 4, [mv("col5", "cell1")])
    assert_illegal(layout, 4, [mv("col1", "col2")], "6S does not fit on 9C")


# A solution of deal 1 with 4 cells: Freecell Solver 5.0.0's (`fc-solve -m -p -t -sam`), less the foundation
# moves that SPEC §2's automatic moves make first. Places: 1-8 columns, a-d free cells, h foundation;
# ":n" is the number of cards.
DEAL_1_SOLUTION = (
    "5a 5b 5c 5d b2 8b a8 7a b7 58 6b 65 76:2 b5 81 5b a5 85:2 8a 8h a2 7a ch 8h 4h 3c b3 4b 48 d4 b7 28:3 "
    "2d 2b a2 b4 31:2 3a 3b c3 b6 d6 7c 7b 73 34:3 53:3 2d 27 25 d7 2d 7h a2 62:2 32:2 36:2 1a 1h 13 71 18:2 "
    "17 2h 6h 4h c1 8a 8c 8h c4 a4 6c 6h 6a 67 6h a1 2a 2h c2 a2 4c 4h 2a 2h 8h 1h 46 4h 48 4h bh 4b 5h dh 1c"
)


def notation(text: str) -> list[dict[str, Any]]:
    """Moves from the notation of DEAL_1_SOLUTION."""

    def place(char: str) -> str:
        return (
            "foundation"
            if char == "h"
            else f"col{char}"
            if char.isdigit()
            else f"cell{'abcd'.index(char) + 1}"
        )

    moves = []
    for token in text.split():
        pair, _, count = token.partition(":")
        moves.append(mv(place(pair[0]), place(pair[1]), int(count or 1)))
    return moves


def test_deal_1_solution() -> None:
    player = notation(DEAL_1_SOLUTION)
    implied = ck.replay(deal_1(), 4, player, autos="implied")
    assert implied.ok and implied.won and implied.moves == len(player) == 97
    explicit_line = ck.expand_autos(deal_1(), 4, player)
    assert sum(move["auto"] for move in explicit_line) == 52 - sum(m["to"] == "foundation" for m in player)
    assert ck.replay(deal_1(), 4, explicit_line) == implied
    # deal 1 needs 3 cells (SPEC §6), but not this line: it fills the fourth cell on move 3
    assert_illegal(deal_1(), 3, player[:4], "no cell4 with 3 free cells", autos="implied")
    # one automatic move left out, or one player move changed: the line is refused where it goes wrong
    i = next(i for i, move in enumerate(explicit_line) if move["auto"] and i > 40)
    result = ck.replay(deal_1(), 4, explicit_line[:i] + explicit_line[i + 1 :])
    assert (result.ok, result.index) == (False, i) and "2D must go first" in (result.reason or "")
    wrong = [*player[:30], mv("cell2", "col7", 2), *player[31:]]
    assert_illegal(deal_1(), 4, wrong[:31], "a free cell holds one card", autos="implied")
    assert ck.replay(deal_1(), 4, wrong, autos="implied").index == 30


# ---------------------------------------------------------------------------------------------------------
# Layout validation


def test_input_tokens_are_normalised() -> None:
    layout = {
        "columns": [["kc", "KH", "QH", "JH", "10h"], ["kd"]],
        "cells": ["qd"],
        "foundations": {"c": 12, "d": 11, "H": 9, "S": 13},
    }
    final = ck.replay(layout, 1, []).final
    assert final["columns"][:2] == [["KC", "KH", "QH", "JH", "TH"], ["KD"]]
    assert final["cells"] == ["QD"] and final["foundations"] == {"C": 12, "D": 11, "H": 9, "S": 13}


@pytest.mark.parametrize(
    ("layout", "cells", "words"),
    [
        pytest.param({"columns": [["KC"]] * 9}, 4, "at most 8 columns", id="nine columns"),
        pytest.param(
            {"columns": [["KC"], ["KD", "XH"]], "foundations": dict.fromkeys("CDHS", 12)},
            4,
            "unknown card token 'XH' in column 2",
            id="bad token",
        ),
        pytest.param(position("KC", "KD", "KH", "KS", "KC"), 4, "duplicate card KC", id="duplicate"),
        pytest.param(
            {"columns": [["KC", "AS"], ["KD"], ["KH"], ["KS"]], "foundations": dict.fromkeys("CDHS", 12)},
            4,
            "duplicate card AS (it is already on the foundations)",
            id="duplicate of a foundation card",
        ),
        pytest.param(
            {"columns": [["KC"], ["KD"]], "foundations": dict.fromkeys("CDHS", 12)},
            4,
            "missing 2 cards: KH KS",
            id="missing cards",
        ),
        pytest.param(
            {"columns": [], "foundations": {"C": 14, "D": 13, "H": 13, "S": 13}}, 4, "0 to 13", id="above 13"
        ),
        pytest.param(
            {"columns": [["AC"]], "foundations": {"C": -1, "D": 13, "H": 13, "S": 13}},
            4,
            "0 to 13",
            id="below 0",
        ),
        pytest.param({"columns": [], "foundations": {"X": 13}}, 4, "unknown foundation suit", id="bad suit"),
        pytest.param(
            position(cells=("KC", "KD", "KH", "KS")), 3, "4 cards in the free cells", id="full cells"
        ),
        pytest.param(
            position("KC", "KD", "KH", cells=(None, "KS")), 1, "free cell 2", id="card beyond cells"
        ),
        pytest.param(
            {"columns": [["KC"]], "cells": ["KX"], "foundations": dict.fromkeys("CDHS", 12)},
            1,
            "in free cell 1",
            id="bad cell token",
        ),
        pytest.param(position("KC", "KD", "KH", "KS"), 9, "from 0 to 8", id="nine cells"),
        pytest.param(position("KC", "KD", "KH", "KS"), -1, "from 0 to 8", id="negative cells"),
        pytest.param([], 4, "must be a dict", id="not a dict"),
        pytest.param({"cells": []}, 4, "needs 'columns'", id="no columns"),
    ],
)
def test_validate_layout_errors(layout: Any, cells: int, words: str) -> None:
    with pytest.raises(ValueError) as error:
        ck.validate_layout(layout, cells)
    assert words in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(ValueError):
        ck.replay(layout, cells, [])


def test_validate_layout_accepts_short_lists() -> None:
    ck.validate_layout(position("KC", "KD", "KH", cells=(None, None, "KS", None, None)), 3)
    ck.validate_layout({"columns": [], "foundations": dict.fromkeys("CDHS", 13)}, 0)


# ---------------------------------------------------------------------------------------------------------
# Random play: every line of legal moves replays the same way in both modes, and no card is lost


@st.composite
def random_positions(draw: st.DrawFn) -> tuple[dict[str, Any], int]:
    """A random position with a few cards of each suit left to play."""
    homes = {s: draw(st.integers(6, 13)) for s in "CDHS"}
    left = [r + s for s in "CDHS" for r in RANKS[homes[s] :]]
    cards = draw(st.permutations(left))
    cells = draw(st.integers(0, 4))
    in_cells = draw(st.integers(0, min(cells, len(cards))))
    cell_cards: list[str | None] = list(cards[:in_cells]) + [None] * (cells - in_cells)
    columns: list[list[str]] = [[] for _ in range(8)]
    for card in cards[in_cells:]:
        columns[draw(st.integers(0, 7))].append(card)
    return {"columns": columns, "cells": cell_cards, "foundations": homes}, cells


PLACES = [f"col{i}" for i in range(1, 9)] + [f"cell{i}" for i in range(1, 5)] + ["foundation"]


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(random_positions(), st.randoms(use_true_random=False))
def test_random_play_is_consistent(start: tuple[dict[str, Any], int], rng: random.Random) -> None:
    layout, cells = start
    player: list[dict[str, Any]] = []
    for _ in range(12):
        for _ in range(20):  # try random moves until one is legal
            move = mv(rng.choice(PLACES[:-1]), rng.choice(PLACES), rng.choice([1, 1, 1, 2, 3]))
            if ck.replay(layout, cells, [*player, move], autos="implied").index != len(player):
                player.append(move)
                break
    implied = ck.replay(layout, cells, player, autos="implied")
    assert implied.index in (None, len(player)) and implied.moves == len(player)
    assert implied.ok == implied.won == ck.won(implied.final)
    ck.validate_layout(implied.final, cells)  # no card lost or duplicated
    explicit_line = ck.expand_autos(layout, cells, player)
    assert [move for move in explicit_line if not move["auto"]] == [dict(m) for m in player]
    explicit = ck.replay(layout, cells, explicit_line)
    assert explicit.final == implied.final and explicit.moves == implied.moves
    assert explicit.ok == implied.ok and (explicit.index is None) == (implied.index is None)
    if explicit_line and explicit_line[-1]["auto"]:
        # dropping the last automatic move leaves it due at the end
        short = ck.replay(layout, cells, explicit_line[:-1])
        assert "still due" in (short.reason or "")


# ---------------------------------------------------------------------------------------------------------
# An outside opinion: Freecell Solver's solutions, move by move


def fcs_solution(deal: int, cells: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """Freecell Solver's solution of a Microsoft deal: the positions it prints and its moves between them."""
    board = subprocess.run(
        ["make-microsoft-freecell-board", "-t", str(deal)], capture_output=True, text=True, check=True
    ).stdout
    out = subprocess.run(
        ["fc-solve", "--freecells-num", str(cells), "-mi", "20000", "-m", "-p", "-t", "-sam"],
        input=board,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    if "This game is solveable" not in out:
        return None
    positions, moves = [], []
    for block in out.split("===================="):
        for line in block.strip().splitlines():
            if line.startswith("Move "):
                moves.append(fcs_move(line))
        if "Foundations:" in block:
            positions.append(fcs_position(block.split("Foundations:")[1], cells))
    return positions, moves


def fcs_position(text: str, cells: int) -> dict[str, Any]:
    """A position as fc-solve prints it (after 'Foundations:'): foundations, free cells, then 8 columns."""
    lines = text.splitlines()
    foundations = {t[0]: 0 if t[2] == "0" else rank(t[2] + "C") for t in lines[0].split()}
    row = lines[1].removeprefix("Freecells:")
    slots = [row[i : i + 4].strip() or None for i in range(0, 4 * cells, 4)]
    columns = [line.removeprefix(":").split() for line in lines[2:10]]
    return {"columns": columns, "cells": slots, "foundations": foundations}


def fcs_move(line: str) -> dict[str, Any]:
    """A move from fc-solve's description, e.g. 'Move 3 cards from stack 5 to stack 2' (places from 0)."""
    found = re.fullmatch(
        r"Move (?:a card|(\d+) cards) from (stack|freecell) (\d) to "
        r"(?:the foundations|(stack|freecell) (\d))",
        line.strip(),
    )
    assert found, line
    count, src_kind, src, dst_kind, dst = found.groups()
    kinds = {"stack": "col", "freecell": "cell"}
    dst_place = f"{kinds[dst_kind]}{int(dst) + 1}" if dst_kind else "foundation"
    return mv(f"{kinds[src_kind]}{int(src) + 1}", dst_place, int(count or 1))


def without_home_cards(fcs: dict[str, Any], foundations: dict[str, int]) -> dict[str, Any]:
    """fc-solve's position less the cards that SPEC §2's automatic moves have already taken home."""

    def away(card: str) -> bool:
        return rank(card) > foundations[card[1]]

    return {
        "columns": [[card for card in column if away(card)] for column in fcs["columns"]],
        "cells": [card if card and away(card) else None for card in fcs["cells"]],
        "foundations": foundations,
    }


@pytest.mark.fcs
@pytest.mark.skipif(
    not (shutil.which("fc-solve") and shutil.which("make-microsoft-freecell-board")),
    reason="needs Freecell Solver (freecell-solver-bin)",
)
@pytest.mark.parametrize("cells", [4, 2])
def test_freecell_solver_solutions_replay(cells: int) -> None:
    """Each fc-solve move is legal here and leads to the position it prints, once the cards that our
    automatic moves took home are set aside; a line where fc-solve uses such a card is left there."""
    complete = 0
    for deal in range(1, 16):
        solution = fcs_solution(deal, cells)
        if solution is None:
            continue
        positions, moves = solution
        layout = positions[0]
        player: list[dict[str, Any]] = []
        now = ck.replay(layout, cells, player, autos="implied").final
        for before, move, after in zip(positions[:-1], moves, positions[1:], strict=True):
            source = before["cells"] if move["from"].startswith("cell") else before["columns"]
            index = int(move["from"][-1]) - 1
            cards = (
                source[index : index + 1]
                if move["from"].startswith("cell")
                else source[index][-move["count"] :]
            )
            if any(rank(card) <= now["foundations"][card[1]] for card in cards):
                if move["to"] == "foundation":
                    continue  # our automatic moves took it home already
                break  # fc-solve keeps playing a card that is home here: the lines part
            player.append(move)
            result = ck.replay(layout, cells, player, autos="implied")
            assert result.index in (None, len(player)), f"deal {deal}: {result.reason}"
            now = result.final
            assert now == without_home_cards(after, now["foundations"]), f"deal {deal}, move {move}"
        else:
            assert ck.replay(layout, cells, player, autos="implied").ok, f"deal {deal}"
            complete += 1
    assert complete >= 6
