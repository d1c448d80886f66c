"""Deal numbers and ranges (SPEC §1): Microsoft numbering, 1 to 8,589,934,591."""

from __future__ import annotations

import re
from collections.abc import Iterable

from fcanalyze import _core

MAX_DEAL: int = _core.MAX_DEAL

_RANGE_PART = re.compile(r"^\s*(\S+?)\s*(?:-\s*(\S+)\s*)?$")
#: What a deal number looks like (`looks_like_deal_number`): ASCII digits, maybe signed, maybe grouped.
_NUMBER_LIKE = re.compile(r"\s*[+-]?[0-9][0-9_,]*\s*")
#: A comma followed by three digits: a thousands separator, as the user probably meant it.
_THOUSANDS = re.compile(r"[0-9],[0-9]{3}(?![0-9])")
#: The comma rule, said where a comma is refused or misread (one rule in every command: a comma
#: separates deal numbers and ranges, as in ``1-100,200-300``; digits are grouped with ``_``).
COMMA_RULE = "a comma separates deals and ranges; write one thousand as 1000 or 1_000"


def looks_like_deal_number(text: str) -> bool:
    """True when `text` is meant as a deal number (signed or grouped digits, valid or not): a SOURCE
    that looks like one is a deal, never a file of that name (``./5`` is the file)."""
    return _NUMBER_LIKE.fullmatch(text) is not None


def parse_deal_number(text: str | int) -> int:
    """A deal number from user input; `ValueError` with a one-line reason when it is not one.

    Digits may be grouped with ``_`` (``1_000``); a comma is refused, since it separates deals in a
    range (`parse_range`): ``1,000`` is not one thousand in any command."""
    if isinstance(text, int) and not isinstance(text, bool):
        n = text
    else:
        s = str(text).strip()
        digits = s.replace("_", "")
        if "," in s and re.fullmatch(r"[+-]?[0-9,]+", digits):
            raise ValueError(f"{s!r} is not one deal number ({COMMA_RULE})")
        if not re.fullmatch(r"[+-]?[0-9]+", digits):
            raise ValueError(f"{s!r} is not a deal number (expected a whole number 1 to {MAX_DEAL:,})")
        if len(digits.lstrip("+-").lstrip("0")) > 20:  # out of range; no need to convert it
            raise ValueError(f"deal number {s} is out of range (deals are numbered 1 to {MAX_DEAL:,})")
        n = int(digits)
    if n < 1 or n > MAX_DEAL:
        raise ValueError(f"deal number {n} is out of range (deals are numbered 1 to {MAX_DEAL:,})")
    return n


def parse_range(text: str) -> list[tuple[int, int]]:
    """Deal ranges such as ``1-32000``, ``617`` or ``1-100,200-300`` as sorted, merged, inclusive
    ``(first, last)`` pairs. Raises `ValueError` for a malformed or reversed range. A comma always
    separates ranges (``1,000`` is deals 1 and 0, refused with a word on the comma rule)."""
    try:
        return _parse_range(text)
    except ValueError as e:
        if _THOUSANDS.search(text or ""):
            raise ValueError(f"{e}; {COMMA_RULE}") from None
        raise


def _parse_range(text: str) -> list[tuple[int, int]]:
    if not text or not text.strip():
        raise ValueError("empty deal range (expected e.g. 1-32000, 617 or 1-100,200-300)")
    spans: list[tuple[int, int]] = []
    for part in text.split(","):
        m = _RANGE_PART.match(part)
        if not m:
            raise ValueError(f"bad deal range {part.strip()!r} (expected e.g. 1-32000 or 617)")
        first = parse_deal_number(m.group(1))
        last = parse_deal_number(m.group(2)) if m.group(2) else first
        if last < first:
            raise ValueError(f"bad deal range {part.strip()!r}: {last} is below {first}")
        spans.append((first, last))
    spans.sort()
    merged = [spans[0]]
    for first, last in spans[1:]:
        if first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def range_size(spans: list[tuple[int, int]]) -> int:
    """Number of deals in merged spans."""
    return sum(last - first + 1 for first, last in spans)


def in_spans(deal: int, spans: Iterable[tuple[int, int]]) -> bool:
    """Whether `deal` is in one of the inclusive `spans`."""
    return any(a <= deal <= b for a, b in spans)


def within_spans(first: int, last: int, spans: Iterable[tuple[int, int]]) -> bool:
    """Whether one of the inclusive `spans` holds all of ``first..last``."""
    return any(a <= first and last <= b for a, b in spans)


def format_range(spans: list[tuple[int, int]]) -> str:
    """The canonical text of merged spans, e.g. ``1-100,200-300``."""
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def deal_layout(n: int) -> dict:
    """The layout of Microsoft deal `n` as a layout dict (8 columns, no cells, empty foundations)."""
    return {"columns": _core.deal(parse_deal_number(n)), "cells": [], "foundations": {s: 0 for s in "CDHS"}}
