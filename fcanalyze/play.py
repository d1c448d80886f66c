"""For the games: positions, players' moves, "is it still winnable?", hints and the way back.

    >>> from fcanalyze import Position, Budget, hint, winnable, last_winnable
    >>> p = Position.from_deal(1).play("3a 36")        # full legality checks, automatic moves made
    >>> winnable(p, Budget(time_limit_ms=200)).winnable  # True, False (proven) or None (undecided)
    >>> hint(p).move                                     # the next move of a winning line, as a dict
    >>> last_winnable(1, ["6a", "6b", ...]).index        # the last position a win is possible from

Players' moves are move dicts (``{"from": "col3", "to": "cell1", "count": 1}``) or standard notation
(``3a``, ``36``, ``a8``, ``2h``, ``36(3)``). A move's card count may be left out when the rules leave
only one choice. Every move is checked by the independent rules code (`fcanalyze.checker`), and every
winning line returned has been replayed by it. A search that runs out of budget answers undecided,
never "not winnable".

A position is played under rules of automatic moves, ``autoplay="safe"`` (SPEC §2, the default) or
``"max"`` (every card that fits its foundation goes home at once; no foundation move by hand):
``Position.from_deal(617, autoplay="max")``, or ``hint(617, autoplay="max")``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fcanalyze import _core, checker
from fcanalyze.board import format_board, layout_from_json, parse_board
from fcanalyze.deals import deal_layout, looks_like_deal_number, parse_deal_number
from fcanalyze.solve import Autoplay

#: The longest time limit the core takes, in milliseconds.
_MAX_MS = 2**64 - 1

_TOKEN = re.compile(r"^[1-8a-gi][1-8a-gih](\([0-9]{1,3}\))?$")
_PLACE = re.compile(r"col[1-8]|cell[1-8]|foundation")


class IllegalMove(ValueError):
    """A player's move that the rules do not allow; `index` is its position in the list (from 0)."""

    def __init__(self, index: int, move: Any, reason: str):
        self.index, self.move, self.reason = index, move, reason
        super().__init__(f"move {index + 1} ({_show(move)}) is illegal: {reason}")


def _show(move: Any) -> str:
    """A player's move as a message shows it (never the whole of an odd value)."""
    if isinstance(move, dict):
        src, dst, n = (move.get(k) for k in ("from", "to", "count"))
        src, dst = (p if isinstance(p, str) and len(p) <= 20 and p.isprintable() else "?" for p in (src, dst))
        return f"{src} -> {dst}" + (f", {n} cards" if isinstance(n, int) and n != 1 else "")
    if isinstance(move, str):
        return repr(move) if not move.isprintable() else move if len(move) <= 40 else move[:37] + "..."
    return type(move).__name__


@dataclass(frozen=True)
class Budget:
    """What one answer may cost: positions per search and milliseconds for the whole answer."""

    max_positions: int = 2_000_000
    time_limit_ms: int | None = 2_000


@dataclass(frozen=True)
class Position:
    """A settled position (automatic moves made) with its number of free cells and its rules of
    automatic moves (``"safe"`` or ``"max"``)."""

    layout: dict[str, Any] = field(repr=False)
    cells: int = 4
    deal: int | None = None
    autoplay: Autoplay = "safe"

    @classmethod
    def from_layout(
        cls, layout: dict[str, Any], cells: int = 4, deal: int | None = None, autoplay: Autoplay = "safe"
    ) -> Position:
        """A position from a layout dict; the automatic moves of `autoplay` are made, as in the game."""
        checker.validate_layout(layout, cells)
        _core.validate(layout, cells)
        r = checker.replay(layout, cells, [], autos="implied", autoplay=autoplay)
        return cls(layout=r.final, cells=cells, deal=deal, autoplay=autoplay)

    @classmethod
    def from_deal(cls, deal: int, cells: int = 4, autoplay: Autoplay = "safe") -> Position:
        n = parse_deal_number(deal)
        return cls.from_layout(deal_layout(n), cells, deal=n, autoplay=autoplay)

    @classmethod
    def from_text(cls, text: str, cells: int = 4, autoplay: Autoplay = "safe") -> Position:
        """From Freecell Solver's board text, or JSON (``{"cells": [...], "foundations": {...}, "columns":
        [[...], ...]}``) when the text starts with ``{``."""
        layout = layout_from_json(text) if text.lstrip().startswith("{") else parse_board(text)
        return cls.from_layout(layout, cells, autoplay=autoplay)

    def to_text(self) -> str:
        return format_board(self.layout)

    def to_json(self) -> dict[str, Any]:
        return {
            "cells": list(self.layout["cells"]),
            "foundations": dict(self.layout["foundations"]),
            "columns": [list(c) for c in self.layout["columns"]],
        }

    @property
    def won(self) -> bool:
        return checker.won(self.layout)

    def play(self, moves: str | Iterable[Any]) -> Position:
        """The position after the player's moves (each checked; automatic moves made after each)."""
        return self.line(moves)[-1]

    def line(self, moves: str | Iterable[Any]) -> list[Position]:
        """This position and the one after each player's move: ``len(moves) + 1`` positions."""
        out = [self]
        for i, move in enumerate(parse_moves(moves)):
            cur = out[-1]
            m = cur._resolve(i, move)
            r = checker.replay(cur.layout, cur.cells, [m], autos="implied", autoplay=cur.autoplay)
            if r.index == 0:
                raise IllegalMove(i, move, r.reason.split(": ", 1)[-1])
            out.append(Position(layout=r.final, cells=cur.cells, deal=cur.deal, autoplay=cur.autoplay))
        return out

    def _resolve(self, index: int, move: Any) -> dict[str, Any]:
        """A move dict with its card count filled in where the rules leave one choice."""
        if isinstance(move, str):
            token = move.strip().lower()
            if not _TOKEN.match(token):
                raise IllegalMove(index, move, "not a move in standard notation (e.g. 3a, 36, a8, 2h, 36(3))")
            m = dict(_core.parse_notation(token)[0])
            explicit = "(" in token
        elif isinstance(move, dict):
            m = {"from": move.get("from"), "to": move.get("to"), "count": move.get("count", 1)}
            if not all(isinstance(m[k], str) and _PLACE.fullmatch(m[k]) for k in ("from", "to")):
                raise IllegalMove(index, move, 'a move goes "from" and "to" col1-8, cell1-8 or foundation')
            if isinstance(m["count"], bool) or not isinstance(m["count"], int) or not 1 <= m["count"] <= 13:
                raise IllegalMove(index, move, '"count" is a number of cards, 1 to 13')
            explicit = "count" in move
        else:
            raise IllegalMove(index, move, "a move is a dict or a string in standard notation")
        m["auto"] = False
        if explicit or not (str(m["from"]).startswith("col") and str(m["to"]).startswith("col")):
            return m
        cols = self.layout["columns"]
        src, dst = cols[int(m["from"][3:]) - 1], cols[int(m["to"][3:]) - 1]
        run = 1
        while run < len(src) and _fits(src[-run], src[-run - 1]):
            run += 1
        if dst:
            fitting = [n for n in range(1, run + 1) if _fits(src[-n], dst[-1])]
            m["count"] = fitting[0] if fitting else 1
        elif run > 1:
            raise IllegalMove(index, move, f"say how many cards go to the empty {m['to']} (e.g. 36({run}))")
        return m


def _fits(card: str, onto: str) -> bool:
    ranks = "A23456789TJQK"
    return ranks.index(onto[0]) == ranks.index(card[0]) + 1 and (card[1] in "DH") != (onto[1] in "DH")


def parse_moves(moves: str | Iterable[Any]) -> list[Any]:
    """A list of move dicts or notation tokens (a string is split on whitespace and commas)."""
    if isinstance(moves, str):
        return [t for t in re.split(r"[\s,]+", moves.strip()) if t]
    return list(moves)


@dataclass(frozen=True)
class Answer:
    """Whether a position can still be won, and a winning line from it when it can.

    ``winnable`` is True (a line was found and replayed), False (proven: every reachable position was
    examined) or None (undecided: the budget ran out)."""

    outcome: str
    positions: int
    elapsed_ms: float
    line: list[dict[str, Any]] = field(repr=False)
    notation: str = ""
    move_count: int = 0

    @property
    def winnable(self) -> bool | None:
        return {"solved": True, "unsolvable": False}.get(self.outcome)

    @property
    def move(self) -> dict[str, Any] | None:
        """The next player move of the winning line (None when the game is won or not winnable)."""
        return next((m for m in self.line if not m["auto"]), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "winnable": self.winnable,
            "move": self.move,
            "move_notation": self.notation.split()[0] if self.notation else None,
            "move_count": self.move_count,
            "line": self.line,
            "notation": self.notation,
            "positions": self.positions,
            "elapsed_ms": round(self.elapsed_ms, 3),
        }


def _search(position: Position, budget: Budget, short: bool, deadline: float | None) -> Answer:
    ms = None
    if deadline is not None:
        # The core counts milliseconds in 64 bits; a float deadline that far off rounds past them.
        ms = min(max(1, int((deadline - time.monotonic()) * 1000)), _MAX_MS)
    r = _core.solve(
        position.layout,
        position.cells,
        max_positions=budget.max_positions,
        time_limit_ms=ms,
        strategy="short" if short else "solve",
        autoplay=position.autoplay,
    )
    if r["outcome"] == "solved":
        check = checker.replay(position.layout, position.cells, r["moves"], autoplay=position.autoplay)
        if not check.ok:
            raise _core.InternalError(f"a winning line failed the independent replay: {check.reason}")
    return Answer(
        outcome=r["outcome"],
        positions=r["positions"],
        elapsed_ms=r["elapsed_ms"],
        line=r["moves"],
        notation=r["notation"],
        move_count=r["move_count"],
    )


def _deadline(budget: Budget) -> float | None:
    return None if budget.time_limit_ms is None else time.monotonic() + budget.time_limit_ms / 1000


def _position(source: Position | int | dict | str, cells: int, autoplay: Autoplay | None) -> Position:
    """The position of `source` under `autoplay` (None: a Position's own rules, else ``"safe"``); a
    Position given under other rules is settled again under `autoplay`."""
    if isinstance(source, Position):
        if autoplay is None or autoplay == source.autoplay:
            return source
        return Position.from_layout(source.layout, source.cells, source.deal, autoplay)
    rules: Autoplay = autoplay or "safe"
    if isinstance(source, dict):
        return Position.from_layout(layout_from_json(source), cells, autoplay=rules)
    if isinstance(source, str) and not looks_like_deal_number(source):
        return Position.from_text(source, cells, rules)
    return Position.from_deal(source, cells, rules)


def winnable(
    position: Position | int | dict | str,
    budget: Budget | None = None,
    *,
    short: bool = False,
    cells: int = 4,
    autoplay: Autoplay | None = None,
) -> Answer:
    """Can the position still be won? See `Answer.winnable`. `autoplay`: the rules of automatic moves
    (default: a Position's own, else ``"safe"``)."""
    budget = budget or Budget()
    return _search(_position(position, cells, autoplay), budget, short, _deadline(budget))


def hint(
    position: Position | int | dict | str,
    budget: Budget | None = None,
    *,
    short: bool = False,
    cells: int = 4,
    autoplay: Autoplay | None = None,
) -> Answer:
    """The next move of a winning line (`Answer.move`) and the whole line; ``short=True`` looks for a
    short line (moves counted as players see them). `autoplay` as in `winnable`."""
    return winnable(position, budget, short=short, cells=cells, autoplay=autoplay)


@dataclass(frozen=True)
class LastWinnable:
    """The last position of a played game from which a win is still possible.

    ``index`` counts player moves: 0 is the start, ``moves_played`` the current position; None when no
    position of the game is proven winnable. ``exact`` is True when the position after it is proven
    unwinnable (or it is the current position); otherwise a search ran out of budget and ``index`` is
    only the last position proven winnable. ``answer`` holds the winning line from ``index``."""

    index: int | None
    moves_played: int
    exact: bool
    answer: Answer | None
    positions: int

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "moves_played": self.moves_played,
            "exact": self.exact,
            "undo": None if self.index is None else self.moves_played - self.index,
            "positions": self.positions,
            "answer": self.answer.to_json() if self.answer else None,
        }


def last_winnable(
    start: Position | int | dict | str,
    moves: str | Sequence[Any],
    budget: Budget | None = None,
    *,
    cells: int = 4,
    autoplay: Autoplay | None = None,
) -> LastWinnable:
    """Find the last winnable position of a game played from `start` (winnability only falls along a
    game: a position that cannot be won has no winnable successor, so a binary search is exact), under
    the rules `autoplay` (as in `winnable`)."""
    budget = budget or Budget()
    deadline = _deadline(budget)
    line = _position(start, cells, autoplay).line(moves)
    n = len(line) - 1
    spent = 0
    answers: dict[int, Answer] = {}

    def ask(i: int) -> Answer:
        nonlocal spent
        a = _search(line[i], budget, False, deadline)
        spent += a.positions
        answers[i] = a
        return a

    if ask(n).winnable:
        return LastWinnable(n, n, True, answers[n], spent)
    lo, hi = -1, n  # lo: last proven winnable (-1: none yet); hi: first not proven winnable
    exact_hi = answers[n].winnable is False
    if n > 0:
        a = ask(0)
        if a.winnable:
            lo = 0
        else:
            hi, exact_hi = 0, a.winnable is False
    while lo >= 0 and hi - lo > 1:
        mid = (lo + hi) // 2
        a = ask(mid)
        if a.winnable:
            lo = mid
        else:
            hi, exact_hi = mid, a.winnable is False
    if lo < 0:
        return LastWinnable(None, n, exact_hi and hi == 0, None, spent)
    return LastWinnable(lo, n, exact_hi, answers[lo], spent)
