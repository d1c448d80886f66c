"""The games' API: positions, players' moves (legal and illegal), winnable / hint / last_winnable, checked
against the exhaustive prover on positions reached by random legal play."""

from __future__ import annotations

import json
import random

import pytest
from conftest import DATA, run_cli
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fcanalyze import Budget, IllegalMove, Position, _core, checker, hint, last_winnable, winnable

BIG = Budget(max_positions=2_000_000, time_limit_ms=None)


def proven(position: Position) -> str:
    """The exhaustive prover's verdict (small cases only)."""
    return _core.solve(position.layout, position.cells, max_positions=1_000_000, strategy="prove")["outcome"]


def random_play(deal: int, cells: int, steps: int, rng: random.Random) -> tuple[Position, list[dict]]:
    """A position reached by `steps` random legal player moves, and the moves."""
    start = Position.from_deal(deal, cells)
    layout, moves = start.layout, []
    for _ in range(steps):
        _, _, succ = _core.successors(layout, cells)
        if not succ:
            break
        move, _, layout = rng.choice(succ)
        moves.append({k: move[k] for k in ("from", "to", "count")})
    return start, moves


def test_play_applies_moves_and_autos():
    p = Position.from_deal(1).play("6a 6b")
    # 3D and 2C to the cells; AC, AS, then 2C go home automatically
    assert p.layout["foundations"] == {"C": 2, "D": 0, "H": 0, "S": 1}
    assert p.layout["cells"] == ["3D", None, None, None]
    assert Position.from_deal(1).play([{"from": "col6", "to": "cell1"}]).layout["cells"][0] == "3D"
    assert not p.won
    text = p.to_text()
    assert Position.from_text(text).layout == p.layout
    assert Position.from_text(json.dumps(p.to_json())).layout == p.layout


@pytest.mark.parametrize(
    ("moves", "index", "reason"),
    [
        ("6a 19", 1, "not a move in standard notation"),
        ("1h", 0, "cannot go"),
        ("12", 0, "does not fit"),
        ("6a 6b b1", 2, "empty"),
        ("6a 1a", 1, "cell1 is not empty"),
        ("6a a1", 1, "does not fit"),
    ],
)
def test_illegal_moves_are_rejected_with_the_reason(moves, index, reason):
    with pytest.raises(IllegalMove) as e:
        Position.from_deal(1).play(moves)
    assert e.value.index == index
    assert reason in str(e.value)


@pytest.mark.slow
def test_count_is_needed_only_when_ambiguous():
    # Random play until a run of 2+ cards may go to an empty column: there the count must be given.
    rng = random.Random(7)
    for deal in range(1, 200):
        start, moves = random_play(deal, 4, 60, rng)
        p = start.play(moves)
        _, _, succ = _core.successors(p.layout, 4)
        multi = [m for m, _, _ in succ if m["count"] > 1 and not p.layout["columns"][int(m["to"][3:]) - 1]]
        if multi:
            break
    else:
        pytest.skip("no position with a run to move into an empty column")
    m = multi[0]
    token = f"{m['from'][3:]}{m['to'][3:]}"
    with pytest.raises(IllegalMove, match="say how many"):
        p.play(token)
    moved = p.play(f"{token}({m['count']})")
    assert moved.layout == p.play([{k: m[k] for k in ("from", "to", "count")}]).layout
    # onto a card there is one choice, so the count may be left out
    onto = [
        m
        for m, _, _ in succ
        if m["from"].startswith("col")
        and m["to"].startswith("col")
        and p.layout["columns"][int(m["to"][3:]) - 1]
    ]
    for m in onto:
        token = f"{m['from'][3:]}{m['to'][3:]}"
        assert p.play(token).layout == p.play([{k: m[k] for k in ("from", "to", "count")}]).layout


def test_hint_on_a_won_game_and_a_lost_one():
    assert hint(1).winnable is True
    a = winnable(11982, BIG)
    assert a.winnable is False and a.positions == 61643 and a.move is None
    u = winnable(11982, Budget(max_positions=1000, time_limit_ms=None))
    assert u.winnable is None and u.outcome == "undecided"


@settings(max_examples=25, deadline=None)
@given(
    deal=st.integers(1, 32000), cells=st.integers(0, 2), seed=st.integers(0, 2**32), steps=st.integers(0, 40)
)
def test_winnable_agrees_with_the_prover_after_random_play(deal, cells, seed, steps):
    start, moves = random_play(deal, cells, steps, random.Random(seed))
    p = start.play(moves)
    verdict = proven(p)
    assume(verdict != "undecided")  # small cases only: the prover's budget decides them
    a = winnable(p, BIG)
    assert a.outcome == verdict
    if a.winnable:
        assert checker.replay(p.layout, cells, a.line).ok
        if a.move is not None:  # the hint's move keeps the game winnable: the rest of its line wins
            after = p.play([a.move])
            rest = a.line[1:]
            while rest and rest[0]["auto"]:  # the automatic moves that followed the hint's move
                rest = rest[1:]
            assert checker.replay(after.layout, cells, rest).ok
            assert proven(after) != "unsolvable"


@settings(max_examples=15, deadline=None)
@given(deal=st.integers(1, 32000), seed=st.integers(0, 2**32))
def test_last_winnable_matches_the_prover_move_by_move(deal, seed):
    cells = 1
    start, moves = random_play(deal, cells, 30, random.Random(seed))
    line = start.line(moves)
    verdicts = [proven(q) for q in line]
    assume("undecided" not in verdicts)
    # winnability only falls along a game
    assert verdicts == sorted(verdicts, key=lambda v: v != "solved")
    expected = max((i for i, v in enumerate(verdicts) if v == "solved"), default=None)
    r = last_winnable(start, moves, BIG)
    assert r.exact and r.index == expected and r.moves_played == len(moves)
    if expected is not None:
        assert checker.replay(line[expected].layout, cells, r.answer.line).ok


def test_last_winnable_undecided_is_not_a_verdict():
    start, moves = random_play(1, 4, 10, random.Random(3))
    r = last_winnable(start, moves, Budget(max_positions=2, time_limit_ms=None))
    assert not r.exact
    assert r.index is None


@pytest.mark.slow
def test_cli_hint_and_last_winnable():
    r = run_cli("hint", "1", "--moves", "6a 6b", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["winnable"] is True and doc["move"]["auto"] is False
    p = Position.from_deal(1).play("6a 6b")
    assert checker.replay(p.layout, 4, doc["line"]).ok
    r = run_cli("hint", str(DATA / "boards" / "mid-game.txt"))
    assert r.returncode == 0 and r.stdout.startswith("winnable: next move ")
    r = run_cli("hint", "11982", "--max-positions", "100000", "--time-limit", "600000")
    assert r.returncode == 1 and "not winnable: proven" in r.stdout
    r = run_cli("hint", "1", "--moves", "6a 19")
    assert r.returncode == 2 and "move 2 (19) is illegal" in r.stderr
    r = run_cli("last-winnable", "1", "--moves", "6a 6b", "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["index"] == 2
    r = run_cli("last-winnable", "11982", "--moves", "3a", "--time-limit", "600000")
    assert r.returncode == 0 and r.stdout.startswith("no position of this game is winnable (proven)")
