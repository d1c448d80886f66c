"""Random legal play from random deals, checked by the independent Python rules: the Rust search's move
generator and the checker agree on every move's outcome, every card stays exactly once, and the two
replays (core and Python) agree on good and bad lines."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fcanalyze import _core, checker

PLACES = [f"col{i}" for i in range(1, 9)]


def canonical(layout: dict) -> tuple:
    """A position up to the order of columns and of free cells (SPEC §3)."""
    cols = tuple(sorted(tuple(c) for c in layout["columns"] if c))
    cells = tuple(sorted(c for c in layout.get("cells", []) if c))
    f = layout["foundations"]
    return cols, cells, tuple(f.get(s, 0) for s in "CDHS")


def python_successors(layout: dict, cells: int) -> set[tuple]:
    """Every canonical position one legal player move away, by brute force over the checker's rules."""
    sources = PLACES + [f"cell{i}" for i in range(1, cells + 1)]
    dests = [*sources, "foundation"]
    out = set()
    here = canonical(layout)
    for src in sources:
        for dst in dests:
            if src == dst:
                continue
            for count in range(1, 14 if src.startswith("col") and dst.startswith("col") else 2):
                # implied mode: the checker makes the automatic moves itself
                r = checker.replay(layout, cells, [{"from": src, "to": dst, "count": count}], autos="implied")
                if r.index == 1 or r.ok:  # the move itself was legal
                    result = canonical(r.final)
                    if result != here:
                        out.add(result)
    return out


deal_numbers = st.one_of(st.integers(1, 32000), st.integers(1, _core.MAX_DEAL))


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(deal=deal_numbers, cells=st.integers(0, 8), seed=st.integers(0, 2**32), steps=st.integers(1, 60))
def test_random_play_agrees_with_the_checker(deal, cells, seed, steps):
    rng = random.Random(seed)
    start = {"columns": _core.deal(deal), "cells": [], "foundations": {}}
    autos, layout, succ = _core.successors(start, cells)
    r = checker.replay(start, cells, autos)
    assert r.index in (None, len(autos)) and r.final == layout  # the same settled start
    line = list(autos)
    for step in range(steps):
        checker.validate_layout(layout, cells)  # every card exactly once
        if step % 10 == 0:  # the full cross-check is slower: every few steps
            assert {canonical(s[2]) for s in succ} == python_successors(layout, cells)
        if not succ:
            break
        move, autos, nxt = rng.choice(succ)
        r = checker.replay(layout, cells, [move, *autos])
        assert r.ok or r.index == len(autos) + 1, r.reason  # legal (the game need not be won)
        assert r.final == nxt
        line += [move, *autos]
        layout = nxt
        _, _, succ = _core.successors(layout, cells)
    # The whole line, from the deal, in both replays.
    py = checker.replay(start, cells, line)
    ok, index, _ = _core.replay(start, cells, line)
    assert (py.ok, py.index) == (ok, index)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    deal=st.integers(1, 32000), cells=st.integers(2, 5), seed=st.integers(0, 2**32), edit=st.integers(0, 3)
)
def test_core_replay_agrees_with_the_python_checker(deal, cells, seed, edit):
    """Both replays accept the solver's lines, and reject the same broken lines at the same move."""
    r = _core.solve(deal, cells, max_positions=200_000)
    if r["outcome"] != "solved":
        return
    start = {"columns": _core.deal(deal), "cells": [], "foundations": {}}
    line = [dict(m) for m in r["moves"]]
    assert checker.replay(start, cells, line).ok and _core.replay(start, cells, line)[0]
    rng = random.Random(seed)
    i = rng.randrange(len(line))
    if edit == 0:
        del line[i]
    elif edit == 1:
        line[i]["to"] = rng.choice([*PLACES, "cell1", "foundation"])
    elif edit == 2:
        line[i]["count"] = line[i]["count"] + rng.choice([1, 2])
    else:
        line[i]["auto"] = not line[i]["auto"]
    py = checker.replay(start, cells, line)
    ok, index, _ = _core.replay(start, cells, line)
    assert (py.ok, py.index) == (ok, index), (py.reason, _core.replay(start, cells, line))
