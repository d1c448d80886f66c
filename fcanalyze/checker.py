"""Independent FreeCell solution checker, written in pure Python from SPEC §2 (rules) and §5 (solutions).

It replays under either rules of automatic moves: ``"safe"`` (SPEC §2, the default) or ``"max"``
(macroxue's: every card that fits its foundation goes home at once, and none goes home by hand).

It shares nothing with the solver (the Rust core and ``fcanalyze._core``): its purpose is to catch the
solver's bugs, so it favours plain, readable rules code over speed.

Data shapes (plain, JSON-friendly values):

- card: two characters, rank ``A23456789TJQK`` + suit ``CDHS`` (``10`` and lower case accepted on input);
- layout: ``{"columns": [[card, ...], ...], "cells": [card | None, ...], "foundations": {"C": n, ...}}``,
  each column listed from the buried card to the exposed one; missing columns are empty, missing cells are
  empty, missing foundation keys are 0;
- move: ``{"from": place, "to": place, "count": n, "auto": bool}`` with places ``"col1"``..``"col8"``,
  ``"cell1"``..``"cell8"`` and ``"foundation"``; ``count`` defaults to 1 and ``auto`` to False.

Move numbers in failure reasons are indices into the move list (from 0), the same as ``Replay.index``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal

__all__ = [
    "AUTOPLAY",
    "Replay",
    "expand_autos",
    "is_safe_auto",
    "max_movable",
    "parse_card",
    "replay",
    "validate_layout",
    "won",
]

RANKS = "A23456789TJQK"
SUITS = "CDHS"
NUM_COLUMNS = 8
MAX_CELLS = 8
SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
RED_SUITS = frozenset("DH")
# The two suits of the other colour, and the other suit of the same colour.
OPPOSITE = {"C": ("D", "H"), "S": ("D", "H"), "D": ("C", "S"), "H": ("C", "S")}
PARTNER = {"C": "S", "S": "C", "D": "H", "H": "D"}

ALL_CARDS = tuple(rank + suit for suit in SUITS for rank in RANKS)
_RANK = {card: RANKS.index(card[0]) + 1 for card in ALL_CARDS}  # A = 1 .. K = 13
_RED = {card: card[1] in RED_SUITS for card in ALL_CARDS}

#: The rules of automatic moves: SPEC §2's safe rule, or every card that fits (macroxue's max auto-play).
AUTOPLAY = ("safe", "max")

Card = str
Place = tuple[str, int]  # ("col", 0..7), ("cell", 0..7) or ("foundation", 0)
_PLACES: dict[str, Place] = {"foundation": ("foundation", 0)}
_PLACES.update({f"col{i + 1}": ("col", i) for i in range(NUM_COLUMNS)})
_PLACES.update({f"cell{i + 1}": ("cell", i) for i in range(MAX_CELLS)})


def _name(place: Place) -> str:
    """The move-dict name of a place, e.g. ``("col", 2)`` -> ``"col3"``."""
    kind, i = place
    return kind if kind == "foundation" else f"{kind}{i + 1}"


def _plural(n: int, word: str) -> str:
    """``"1 card"``, ``"2 cards"``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# ---------------------------------------------------------------------------------------------------------
# Cards and the rules' small functions


def parse_card(token: object) -> Card:
    """Normalise a card token (``"10h"`` -> ``"TH"``); raise ValueError for anything that is not a card."""
    if isinstance(token, str):
        text = token.upper()
        if text.startswith("10"):
            text = "T" + text[2:]
        if text in _RANK:
            return text
    raise ValueError(f"unknown card token {token!r}")


def _fits(card: Card, onto: Card) -> bool:
    """True if ``card`` may lie on ``onto`` in a column: one rank lower and of the opposite colour."""
    return _RANK[onto] == _RANK[card] + 1 and _RED[onto] != _RED[card]


def _is_safe(card: Card, found: Mapping[str, int]) -> bool:
    """SPEC §2's safe automatic rule on a normalised card and a complete foundations dict."""
    rank, suit = _RANK[card], card[1]
    if found[suit] != rank - 1:
        return False
    if rank <= 2:
        return True
    opp1, opp2 = (found[s] for s in OPPOSITE[suit])
    if opp1 >= rank - 1 and opp2 >= rank - 1:
        return True
    return opp1 >= rank - 2 and opp2 >= rank - 2 and found[PARTNER[suit]] >= rank - 3


def _goes_home(card: Card, found: Mapping[str, int], autoplay: str) -> bool:
    """Whether ``card`` goes to the foundations automatically now under ``autoplay``: under ``"max"``
    whenever it fits, under ``"safe"`` by SPEC §2's rule."""
    if autoplay == "max":
        return found[card[1]] == _RANK[card] - 1
    return _is_safe(card, found)


def _check_autoplay(autoplay: object) -> str:
    """``autoplay`` if it names rules of automatic moves; ValueError otherwise."""
    if autoplay not in AUTOPLAY:
        raise ValueError(f"autoplay must be 'safe' or 'max', not {autoplay!r}")
    return str(autoplay)


def is_safe_auto(card: str, foundations: Mapping[str, int]) -> bool:
    """True if ``card`` goes to the foundations automatically over ``foundations`` (SPEC §2).

    A card of rank r (A = 1) whose foundation holds r - 1 goes up if r <= 2, or if both opposite-colour
    foundations hold at least r - 1, or if both hold at least r - 2 and the other foundation of its own
    colour holds at least r - 3. Missing foundation keys count as 0.
    """
    found = {suit: foundations.get(suit, 0) for suit in SUITS}
    return _is_safe(parse_card(card), found)


def max_movable(free_cells: int, empty_columns: int) -> int:
    """Longest run that may move as one supermove: (free cells + 1) * 2 ** (empty columns).

    For a move into an empty column, do not count that column among ``empty_columns``.
    """
    return (free_cells + 1) * 2**empty_columns


def won(layout: Mapping[str, Any]) -> bool:
    """True if all 52 cards are on the foundations."""
    foundations = layout.get("foundations") or {}
    return all(foundations.get(suit, 0) == 13 for suit in SUITS)


# ---------------------------------------------------------------------------------------------------------
# Layouts


def _normalise(layout: object, cells: object) -> tuple[list[list[Card]], list[Card | None], dict[str, int]]:
    """Check a layout (see ``validate_layout``) and return its columns, cell slots and foundations."""
    if isinstance(cells, bool) or not isinstance(cells, int) or not 0 <= cells <= MAX_CELLS:
        raise ValueError(f"the number of free cells must be an integer from 0 to {MAX_CELLS}, not {cells!r}")
    if not isinstance(layout, Mapping):
        raise ValueError(f"a layout must be a dict, not {type(layout).__name__}")

    raw_found = layout.get("foundations") or {}
    if not isinstance(raw_found, Mapping):
        raise ValueError("the foundations must be a dict from suit letter to the number of cards home")
    found = dict.fromkeys(SUITS, 0)
    for key, value in raw_found.items():
        suit = key.upper() if isinstance(key, str) else key
        if suit not in found:
            raise ValueError(f"unknown foundation suit {key!r}")
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 13:
            raise ValueError(f"foundation {suit} must hold 0 to 13 cards, not {value!r}")
        found[suit] = value

    raw_columns = layout.get("columns")
    if not isinstance(raw_columns, Sequence) or isinstance(raw_columns, str):
        raise ValueError("the layout needs 'columns': a list of up to 8 lists of cards")
    if len(raw_columns) > NUM_COLUMNS:
        raise ValueError(f"a layout has at most {NUM_COLUMNS} columns, not {len(raw_columns)}")
    columns: list[list[Card]] = []
    for i, raw in enumerate(raw_columns):
        if not isinstance(raw, Sequence) or isinstance(raw, str):
            raise ValueError(f"column {i + 1} must be a list of cards")
        try:
            columns.append([parse_card(token) for token in raw])
        except ValueError as error:
            raise ValueError(f"{error} in column {i + 1}") from None
    columns += [[] for _ in range(NUM_COLUMNS - len(columns))]

    raw_cells = layout.get("cells") or []
    if not isinstance(raw_cells, Sequence) or isinstance(raw_cells, str):
        raise ValueError("'cells' must be a list of cards or None, one per free cell")
    slots: list[Card | None] = [None] * cells
    held = [(i, token) for i, token in enumerate(raw_cells) if token is not None]
    if len(held) > cells:
        raise ValueError(f"{_plural(len(held), 'card')} in the free cells, but there are only {cells}")
    for i, token in held:
        try:
            card = parse_card(token)
        except ValueError as error:
            raise ValueError(f"{error} in free cell {i + 1}") from None
        if i >= cells:
            raise ValueError(f"{card} is in free cell {i + 1}, but there are only {cells} free cells")
        slots[i] = card

    seen = {rank + suit for suit in SUITS for rank in RANKS[: found[suit]]}
    for card in [card for column in columns for card in column] + [c for c in slots if c is not None]:
        if card in seen:
            home = " (it is already on the foundations)" if _RANK[card] <= found[card[1]] else ""
            raise ValueError(f"duplicate card {card}{home}")
        seen.add(card)
    missing = [card for card in ALL_CARDS if card not in seen]
    if missing:
        raise ValueError(f"missing {_plural(len(missing), 'card')}: {' '.join(missing)}")
    return columns, slots, found


def validate_layout(layout: Mapping[str, Any], cells: int) -> None:
    """Raise ValueError with a one-line message if ``layout`` is not a well-formed position with ``cells``
    free cells: more than 8 columns, an unknown card, a duplicate or missing card (the foundations imply
    their cards), a foundation outside 0..13, more cards in free cells than ``cells``, ``cells`` outside 0..8.
    """
    _normalise(layout, cells)


# ---------------------------------------------------------------------------------------------------------
# Moves


@dataclass(frozen=True, slots=True)
class _Move:
    """A well-formed move, with its places resolved."""

    src: Place
    dst: Place
    count: int
    auto: bool

    def describe(self, index: int) -> str:
        """E.g. ``"move 12 (col3 -> col5, 2 cards)"``."""
        flag = ", auto" if self.auto else ""
        return f"move {index} ({_name(self.src)} -> {_name(self.dst)}, {_plural(self.count, 'card')}{flag})"

    def as_dict(self) -> dict[str, Any]:
        """The move as a plain dict."""
        return {"from": _name(self.src), "to": _name(self.dst), "count": self.count, "auto": self.auto}


def _parse_move(move: object, index: int) -> _Move:
    """Check the shape of one move dict; raise ValueError if it is malformed (not if it is illegal)."""
    if not isinstance(move, Mapping):
        raise ValueError(f"move {index} must be a dict, not {type(move).__name__}")
    places = []
    for key in ("from", "to"):
        value = move.get(key)
        if not isinstance(value, str) or value not in _PLACES:
            raise ValueError(f"move {index}: unknown place {value!r} in {key!r}")
        places.append(_PLACES[value])
    count = move.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"move {index}: 'count' must be a positive integer, not {count!r}")
    auto = move.get("auto", False)
    if not isinstance(auto, bool):
        raise ValueError(f"move {index}: 'auto' must be true or false, not {auto!r}")
    return _Move(places[0], places[1], count, auto)


class _Game:
    """A position being replayed: 8 columns, the free-cell slots and the foundations (cards home per suit),
    under rules of automatic moves (one of `AUTOPLAY`)."""

    __slots__ = ("autoplay", "cells", "columns", "found")

    def __init__(
        self,
        columns: list[list[Card]],
        cells: list[Card | None],
        found: dict[str, int],
        autoplay: str = "safe",
    ) -> None:
        self.columns = columns
        self.cells = cells
        self.found = found
        self.autoplay = autoplay

    def layout(self) -> dict[str, Any]:
        """A copy of the position as a layout dict (8 columns, one slot per free cell)."""
        return {
            "columns": [list(column) for column in self.columns],
            "cells": list(self.cells),
            "foundations": dict(self.found),
        }

    def won(self) -> bool:
        """True if all 52 cards are home."""
        return all(n == 13 for n in self.found.values())

    def due_autos(self) -> list[tuple[Place, Card]]:
        """Every available card (exposed in a column or in a free cell) that is an automatic move now."""
        due: list[tuple[Place, Card]] = []
        for i, column in enumerate(self.columns):
            if column and _goes_home(column[-1], self.found, self.autoplay):
                due.append((("col", i), column[-1]))
        for i, card in enumerate(self.cells):
            if card is not None and _goes_home(card, self.found, self.autoplay):
                due.append((("cell", i), card))
        return due

    def problem(self, move: _Move) -> str | None:
        """Why ``move`` is illegal here under SPEC §2, or None if it is legal."""
        (src_kind, s), (dst_kind, d), count = move.src, move.dst, move.count
        if move.src == move.dst:
            return f"the source and the destination are the same place ({_name(move.src)})"

        # The source must hold the cards.
        if src_kind == "foundation":
            return "cards never leave the foundations"
        if src_kind == "cell":
            if s >= len(self.cells):
                return f"there is no cell{s + 1} with {_plural(len(self.cells), 'free cell')}"
            card = self.cells[s]
            if card is None:
                return f"cell{s + 1} is empty"
            if count != 1:
                return f"a free cell holds one card, so {count} cards cannot move from cell{s + 1}"
        else:
            column = self.columns[s]
            if not column:
                return f"col{s + 1} is empty"
            if count > len(column):
                return f"col{s + 1} holds only {_plural(len(column), 'card')}"
            run = column[-count:]
            for upper, lower in pairwise(run):
                if not _fits(lower, upper):
                    return (
                        f"the last {count} cards of col{s + 1} ({' '.join(run)}) are not a run descending"
                        f" by one rank in alternating colours ({lower} on {upper})"
                    )
            card = run[0]  # the highest card of the run: the one that lands on the destination

        # The destination must take them.
        if dst_kind == "foundation":
            if count != 1:
                return f"cards go to the foundations one at a time, not {count}"
            suit, home = card[1], self.found[card[1]]
            if home != _RANK[card] - 1:
                return (
                    f"{card} cannot go to the foundation: {SUIT_NAMES[suit]} hold {_plural(home, 'card')},"
                    f" so {RANKS[home]}{suit} must go first"
                )
        elif dst_kind == "cell":
            if d >= len(self.cells):
                return f"there is no cell{d + 1} with {_plural(len(self.cells), 'free cell')}"
            if self.cells[d] is not None:
                return f"cell{d + 1} is not empty (it holds {self.cells[d]})"
            if count != 1:
                return f"a free cell takes one card, not {count}"
        else:
            target = self.columns[d]
            if target and not _fits(card, target[-1]):
                return f"{card} does not fit on {target[-1]}"
            free = self.cells.count(None)
            empty = sum(1 for column in self.columns if not column) - (0 if target else 1)
            limit = max_movable(free, empty)
            if count > limit:
                into = f"onto {target[-1]} in" if target else "into the empty"
                other = "other " if not target else ""
                return (
                    f"{count} cards exceed the supermove limit of {limit} {into} col{d + 1}"
                    f" ({_plural(free, 'empty free cell')}, {_plural(empty, other + 'empty column')})"
                )
        return None

    def available(self, place: Place) -> Card | None:
        """The card that can move from ``place``: a column's exposed card or a free cell's card."""
        kind, i = place
        if kind == "cell":
            return self.cells[i] if i < len(self.cells) else None
        if kind == "col" and self.columns[i]:
            return self.columns[i][-1]
        return None

    def apply(self, move: _Move) -> None:
        """Make a move already found legal."""
        (src_kind, s), (dst_kind, d), count = move.src, move.dst, move.count
        if src_kind == "cell":
            card = self.cells[s]
            self.cells[s] = None
            run = [card] if card is not None else []
        else:
            column = self.columns[s]
            run = column[-count:]
            del column[-count:]
        if dst_kind == "foundation":
            self.found[run[0][1]] += 1
        elif dst_kind == "cell":
            self.cells[d] = run[0]
        else:
            self.columns[d].extend(run)

    def settle(self, record: list[_Move] | None = None) -> None:
        """Make automatic moves (first due in place order) until none is due; record them if asked."""
        while due := self.due_autos():
            move = _Move(due[0][0], ("foundation", 0), 1, True)
            self.apply(move)
            if record is not None:
                record.append(move)


def _due_text(due: list[tuple[Place, Card]]) -> str:
    """E.g. ``"AH from col2"`` or ``"AH from col2, 2S from cell1"``."""
    return ", ".join(f"{card} from {_name(place)}" for place, card in due)


def _unsafe_text(card: Card, found: Mapping[str, int]) -> str:
    """Why a card that fits on its foundation is not a safe automatic move."""
    rank, suit = _RANK[card], card[1]
    opp1, opp2 = OPPOSITE[suit]
    return (
        f"{card} is not a safe automatic move: it needs {SUIT_NAMES[opp1]} and {SUIT_NAMES[opp2]} to hold at"
        f" least {rank - 1} cards each, or {rank - 2} with {SUIT_NAMES[PARTNER[suit]]} at {rank - 3}"
        f" (they hold {found[opp1]}, {found[opp2]} and {found[PARTNER[suit]]})"
    )


# ---------------------------------------------------------------------------------------------------------
# Replays


@dataclass(frozen=True)
class Replay:
    """The verdict on a replayed solution.

    ``ok``: every move was legal and the game is won at the end. ``won``: the final position is won.
    ``index``: the first offending move (``len(moves)`` for a problem at the end), None if ok.
    ``reason``: one sentence saying what is wrong, None if ok. ``moves``: player moves made (automatic
    ones excluded). ``final``: the last legal position reached (before the offending move, if any).
    """

    ok: bool
    won: bool
    index: int | None
    reason: str | None
    moves: int
    final: dict[str, Any]


def _run(
    layout: Mapping[str, Any],
    cells: int,
    moves: Sequence[Mapping[str, Any]],
    autos: str,
    autoplay: str,
    record: list[_Move] | None = None,
) -> Replay:
    """Replay ``moves`` (see ``replay``); with ``record``, collect the moves made, automatic ones included."""
    if autos not in ("explicit", "implied"):
        raise ValueError(f"autos must be 'explicit' or 'implied', not {autos!r}")
    game = _Game(*_normalise(layout, cells), autoplay=_check_autoplay(autoplay))
    # The words of the reasons: SPEC §2's automatic moves are the safe ones.
    kind = "a safe automatic move" if autoplay == "safe" else "an automatic move"
    parsed = [_parse_move(move, i) for i, move in enumerate(moves)]
    played = 0

    def failure(index: int, problem: str) -> Replay:
        where = parsed[index].describe(index) if index < len(parsed) else "at the end"
        return Replay(False, game.won(), index, f"{where}: {problem}", played, game.layout())

    if autos == "implied":
        game.settle(record)
    for i, move in enumerate(parsed):
        if move.auto and autos == "implied":
            return failure(i, "automatic moves must not be listed in implied mode")
        if move.auto and move.dst[0] != "foundation":
            return failure(i, "an automatic move can only go to the foundation")
        if autoplay == "max" and not move.auto and move.dst[0] == "foundation":
            return failure(i, "under max autoplay no card goes to the foundations by hand")
        due = game.due_autos() if autos == "explicit" and not move.auto else []
        if (move.src, move.dst) in {(place, ("foundation", 0)) for place, _ in due}:
            return failure(i, f"this is {kind}, so it must be flagged auto")
        if due:
            return failure(i, f"{kind} is still due ({_due_text(due)})")
        problem = game.problem(move)
        if problem is not None:
            return failure(i, problem)
        card = game.available(move.src)
        if move.auto and card is not None and not _goes_home(card, game.found, autoplay):
            return failure(i, _unsafe_text(card, game.found))
        if not move.auto:
            played += 1
        game.apply(move)
        if record is not None:
            record.append(move)
        if autos == "implied":
            game.settle(record)

    due = game.due_autos()
    if due:
        return failure(len(parsed), f"{kind} is still due ({_due_text(due)})")
    if not game.won():
        left = 52 - sum(game.found.values())
        return failure(len(parsed), f"not won, {_plural(left, 'card')} not on the foundations")
    return Replay(True, True, None, None, played, game.layout())


def replay(
    layout: Mapping[str, Any],
    cells: int,
    moves: Sequence[Mapping[str, Any]],
    *,
    autos: Literal["explicit", "implied"] = "explicit",
    autoplay: Literal["safe", "max"] = "safe",
) -> Replay:
    """Replay ``moves`` from ``layout`` with ``cells`` free cells under SPEC §2 and say whether they win.

    ``autoplay`` names the automatic moves: ``"safe"``, SPEC §2's rule, or ``"max"``, every card that
    fits its foundation (then no move to the foundations is a player's).
    ``autos="explicit"``: the list holds the automatic moves too, flagged ``"auto": True``, made as soon
    as they are due (after the start and after each player move, until none applies; any order among
    those due). Each flagged move must be an automatic move, no player move may be made while one is
    due, and none may be due at the end. ``autos="implied"``: the list holds player moves only and the
    checker makes the automatic moves itself.

    A malformed layout or move dict, or unknown ``autoplay``, raises ValueError; an illegal move is
    reported in the Replay.
    """
    return _run(layout, cells, moves, autos, autoplay)


def expand_autos(
    layout: Mapping[str, Any],
    cells: int,
    moves: Sequence[Mapping[str, Any]],
    *,
    autoplay: Literal["safe", "max"] = "safe",
) -> list[dict[str, Any]]:
    """The explicit form of a line of player moves: the same moves with the automatic moves (of
    ``autoplay``, see ``replay``) inserted.

    Raises ValueError if the line is malformed or breaks a rule (a line that does not win is fine).
    """
    record: list[_Move] = []
    result = _run(layout, cells, moves, "implied", autoplay, record)
    if not result.ok and result.index != len(moves):
        raise ValueError(result.reason)
    return [move.as_dict() for move in record]
