"""The deal generator: SPEC's vectors, pysol-cards as an independent oracle, numbers and ranges."""

from __future__ import annotations

import pytest
from conftest import load_vectors
from hypothesis import given, settings
from hypothesis import strategies as st
from pysol_cards.cards import CardRenderer
from pysol_cards.deal_game import Game
from pysol_cards.random_base import RandomBase

from fcanalyze import MAX_DEAL, _core, deal_layout, parse_deal_number, parse_range
from fcanalyze.deals import format_range, range_size


def test_vectors_match_spec():
    vectors = load_vectors()
    assert {1, 24, 164, 617, 11982, 3_000_000_000, 6_000_000_000} <= set(vectors)
    for n, columns in vectors.items():
        assert _core.deal(n) == columns, n


def test_layout_shape():
    cols = deal_layout(1)["columns"]
    assert [len(c) for c in cols] == [7, 7, 7, 7, 6, 6, 6, 6]
    assert sorted(c for col in cols for c in col) == sorted(r + s for r in "A23456789TJQK" for s in "CDHS")


def pysol_layout(n: int) -> list[list[str]]:
    text = Game("freecell", n, RandomBase.DEALS_MS).calc_layout_string(CardRenderer(True))
    return [line.split() for line in text.splitlines()]


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        st.integers(1, 2**31 - 1),  # classic generator
        st.integers(2**31, 2**32 - 1),  # r |= 0x8000
        st.integers(2**32, MAX_DEAL),  # FreeCell Pro's extension
        st.sampled_from([1, 32000, 2**31 - 1, 2**31, 2**32 - 1, 2**32, MAX_DEAL]),
    )
)
def test_generator_agrees_with_pysol_cards(n):
    assert _core.deal(n) == pysol_layout(n)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0", "out of range"),
        ("-1", "out of range"),
        ("-2", "out of range"),
        (str(MAX_DEAL + 1), "out of range"),
        ("abc", "not a deal number"),
        ("1.5", "not a deal number"),
        ("", "not a deal number"),
    ],
)
def test_bad_deal_numbers(text, message):
    with pytest.raises(ValueError, match=message):
        parse_deal_number(text)


def test_core_rejects_bad_numbers_too():
    for n in (0, -1, MAX_DEAL + 1):
        with pytest.raises(ValueError, match="out of range"):
            _core.deal(n)


def test_deal_number_forms():
    assert parse_deal_number("32_000") == 32000
    # One comma rule in every command (issue 19): a comma separates deals, as in a range.
    with pytest.raises(ValueError, match="a comma separates deals"):
        parse_deal_number("32,000")
    assert parse_deal_number(" 617 ") == 617
    assert parse_deal_number(MAX_DEAL) == MAX_DEAL


def test_ranges():
    assert parse_range("1-32000") == [(1, 32000)]
    assert parse_range("617") == [(617, 617)]
    assert parse_range("200-300,1-100") == [(1, 100), (200, 300)]
    assert parse_range("1-100,101-200,150-160") == [(1, 200)]
    assert range_size(parse_range("1-100,200-300")) == 201
    assert format_range(parse_range("5,1-3")) == "1-3,5"
    for bad in ("", "10-1", "1-x", "0-5", "1-2-3", f"1-{MAX_DEAL + 1}"):
        with pytest.raises(ValueError):
            parse_range(bad)
