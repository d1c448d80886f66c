"""Positions as text and JSON: Freecell Solver's board format and fcanalyze's layout dicts.

A layout is a plain dict, the shape every part of fcanalyze exchanges::

    {"columns": [["JD", "KD", ...], ...],   # up to 8 columns, buried card first
     "cells": ["8D", None, ...],            # free-cell slots, None when empty
     "foundations": {"C": 0, "D": 0, "H": 2, "S": 0}}   # cards home per suit

Freecell Solver's board text: optional ``Foundations: H-2 C-A D-0 S-0`` and ``Freecells: 8D - QH``
lines, then one line per column, buried card first, optionally prefixed with ``:``; an empty column is
``:`` or an empty line. ``10`` is accepted for ``T``.
"""

from __future__ import annotations

import json
from typing import Any

from fcanalyze import _core

SUITS = "CDHS"
RANKS = "A23456789TJQK"


def _card(token: str, where: str) -> str:
    t = token.strip().upper()
    if len(t) == 3 and t.startswith("10"):
        t = "T" + t[2]
    if len(t) != 2 or t[0] not in RANKS or t[1] not in SUITS:
        raise ValueError(
            f"{where}: bad card token {token!r} (expected rank A23456789TJQK and suit CDHS, e.g. TD)"
        )
    return t


def _foundation_value(token: str, where: str) -> int:
    t = token.strip().upper()
    if t.isdigit() and 0 <= int(t) <= 13:
        return int(t)
    if t == "T" or t == "10":
        return 10
    if len(t) == 1 and t in RANKS:
        return RANKS.index(t) + 1
    raise ValueError(f"{where}: bad foundation value {token!r} (expected 0, A, 2..9, T, J, Q or K)")


def parse_board(text: str, cells: int | None = None) -> dict:
    """Parse Freecell Solver's board text into a layout dict; `ValueError` naming the line on bad input.

    With `cells`, the layout is also validated as a position for that many free cells."""
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    foundations = dict.fromkeys(SUITS, 0)
    slots: list[str | None] = []
    columns: list[list[str]] = []
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        where = f"line {number}"
        head, _, rest = line.partition(":")
        key = head.strip().lower()
        if key == "foundations" and not columns:
            for tok in rest.split():
                suit, sep, value = tok.partition("-")
                if not sep or suit.upper() not in SUITS:
                    raise ValueError(f"{where}: bad foundation {tok!r} (expected e.g. H-5 or C-A)")
                foundations[suit.upper()] = _foundation_value(value, where)
        elif key == "freecells" and not columns:
            slots = [None if tok in ("-", "--") else _card(tok, where) for tok in rest.split()]
        else:
            body = line[1:] if line.startswith(":") else line
            columns.append([_card(tok, where) for tok in body.split()])
    if len(columns) > 8:
        raise ValueError(f"the board has {len(columns)} columns; FreeCell has 8")
    layout = {
        "columns": columns + [[] for _ in range(8 - len(columns))],
        "cells": slots,
        "foundations": foundations,
    }
    if cells is not None:
        validate(layout, cells)
    return layout


def layout_from_json(data: str | dict) -> dict:
    """A layout from JSON text or a decoded dict (``columns``, ``cells``, ``foundations``), normalised.
    `ValueError` (one line) for anything else: bad JSON, JSON nested too deeply, a value of the wrong
    type (``"cells": 3``, ``NaN``, a column that is not a list)."""
    if isinstance(data, str):
        try:
            obj: Any = json.loads(data.removeprefix("\ufeff"))
        except RecursionError:
            raise ValueError("bad JSON: nested too deeply") from None
        except ValueError as e:  # JSONDecodeError, and an integer of more than 4,300 digits
            raise ValueError(f"bad JSON: {e}") from None
    else:
        obj = data
    if not isinstance(obj, dict) or not isinstance(obj.get("columns"), list):
        raise ValueError('a JSON position is an object with "columns" (and optional "cells", "foundations")')
    columns = obj["columns"]
    if len(columns) > 8:
        raise ValueError(f"the position has {len(columns)} columns; FreeCell has 8")
    cols = []
    for i, col in enumerate(columns):
        where = f"column {i + 1}"
        if not isinstance(col, list):
            raise ValueError(f'{where}: a column is a list of cards such as ["KD", "QC"], not {_kind(col)}')
        cols.append([_card(_text(c, where), where) for c in col])
    raw_cells = obj.get("cells")
    if raw_cells is None:
        raw_cells = []
    if not isinstance(raw_cells, list):
        raise ValueError(f'"cells" is a list of cards such as ["8D", null], not {_kind(raw_cells)}')
    slots = [None if c in (None, "", "-") else _card(_text(c, "cells"), "cells") for c in raw_cells]
    raw_f = obj.get("foundations", {}) or {}
    if not isinstance(raw_f, dict):
        raise ValueError('"foundations" must be an object such as {"C": 0, "D": 2, "H": 0, "S": 1}')
    foundations = dict.fromkeys(SUITS, 0)
    for suit, value in raw_f.items():
        if str(suit).upper() not in SUITS:
            raise ValueError(f"bad foundation suit {suit!r} (expected C, D, H or S)")
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError(f'foundations: {suit}: a count 0-13 or a rank such as "K", not {_kind(value)}')
        foundations[str(suit).upper()] = _foundation_value(str(value)[:20], "foundations")
    return {"columns": cols + [[] for _ in range(8 - len(cols))], "cells": slots, "foundations": foundations}


def _kind(value: Any) -> str:
    """How a JSON value of the wrong type is named in a message."""
    if isinstance(value, float):
        return "a number" if value == value else "NaN"
    return {bool: "true or false", int: "a number", str: "a string", dict: "an object", list: "a list"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def _text(card: Any, where: str) -> str:
    if not isinstance(card, str):
        raise ValueError(f'{where}: a card is a string such as "TD", not {_kind(card)}')
    return card


def validate(layout: dict, cells: int) -> None:
    """Raise `ValueError` (one line) unless `layout` is a legal position for `cells` free cells."""
    _core.validate(layout, cells)


def format_board(layout: dict) -> str:
    """Freecell Solver's board text for a layout. A fresh deal prints as 8 plain lines; a position with
    cards home or in free cells gets ``Foundations:`` and ``Freecells:`` lines and ``:``-prefixed columns."""
    f = layout.get("foundations") or {}
    slots = layout.get("cells") or []
    cols = [" ".join(col) for col in layout["columns"]]
    if not any(f.values()) and not any(slots) and all(cols):
        return "\n".join(cols) + "\n"
    ranks = "0" + RANKS
    head = "Foundations: " + " ".join(f"{s}-{ranks[f.get(s, 0)]}" for s in "HCDS")
    cells = "Freecells: " + " ".join(c or "-" for c in slots) if slots else "Freecells:"
    return "\n".join([head, cells, *(f": {c}".rstrip() for c in cols)]) + "\n"
