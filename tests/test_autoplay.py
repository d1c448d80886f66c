"""The rules of automatic moves as an option, ``safe`` (SPEC §2) or ``max`` (macroxue's: every card that
fits its foundation goes home at once, none by hand): the independent checker under both, the core
against it, the Python API, the command line and the records."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
from conftest import ROOT, run_cli

from fcanalyze import _core, checker, play, records
from fcanalyze.checker import expand_autos, replay
from fcanalyze.solve import solve

# A position where 3C fits its foundation (AC and 2C are home) but is not safe (no diamond or heart is
# home): no ace is exposed, and 3C is the only card that fits.
REST = [c for c in checker.ALL_CARDS if c not in ("AC", "2C", "3C")]
BURIED = ["AD", "AH", "AS", "4C"]
COLUMNS: list[list[str]] = [[b] for b in BURIED] + [[] for _ in range(4)]
for i, card in enumerate(c for c in REST if c not in BURIED):
    COLUMNS[i % 8].append(card)
COLUMNS[0].append("3C")
LAYOUT = {"columns": COLUMNS, "cells": [], "foundations": {"C": 2}}


def mv(src: str, dst: str, auto: bool = False) -> dict:
    return {"from": src, "to": dst, "count": 1, "auto": auto}


def test_the_position_has_one_fitting_card_that_is_not_safe():
    checker.validate_layout(LAYOUT, 4)
    tops = [col[-1] for col in COLUMNS]
    assert "3C" in tops and not any(t[0] == "A" for t in tops)
    assert not checker.is_safe_auto("3C", {"C": 2})


def test_max_sends_every_fitting_card_home_and_safe_does_not():
    assert replay(LAYOUT, 4, [], autos="implied").final["foundations"]["C"] == 2
    assert replay(LAYOUT, 4, [], autos="implied", autoplay="max").final["foundations"]["C"] == 3
    assert expand_autos(LAYOUT, 4, [], autoplay="max") == [mv("col1", "foundation", auto=True)]
    assert expand_autos(LAYOUT, 4, []) == []


def test_a_foundation_move_by_hand_is_refused_under_max_only():
    by_hand = [mv("col1", "foundation")]
    r = replay(LAYOUT, 4, by_hand, autoplay="max")
    assert (r.ok, r.index) == (False, 0) and "by hand" in r.reason
    r = replay(LAYOUT, 4, by_hand, autos="implied", autoplay="max")
    assert (r.ok, r.index) == (False, 0) and "by hand" in r.reason
    # Under the safe rules the same move is a player's (the game is not won: the end fails, not move 0).
    assert replay(LAYOUT, 4, by_hand).index == 1
    ok, index, reason = _core.replay(LAYOUT, 4, by_hand, autoplay="max")
    assert (ok, index) == (False, 0) and "by hand" in reason


def test_an_unflagged_fitting_card_is_refused_under_max():
    player = [mv("col2", "cell1")]
    r = replay(LAYOUT, 4, player, autoplay="max")
    assert (r.ok, r.index) == (False, 0)
    assert "an automatic move is still due (3C from col1)" in r.reason
    assert _core.replay(LAYOUT, 4, player, autoplay="max")[:2] == (False, 0)
    # Flagged, it is the automatic move max autoplay makes; under the safe rules it is not one.
    flagged = [mv("col1", "foundation", auto=True), *player]
    assert replay(LAYOUT, 4, flagged, autoplay="max").index == 2
    assert _core.replay(LAYOUT, 4, flagged, autoplay="max")[1] == 2
    r = replay(LAYOUT, 4, flagged)
    assert r.index == 0 and "is not a safe automatic move" in r.reason
    assert _core.replay(LAYOUT, 4, flagged)[1] == 0


def test_unknown_rules_are_refused():
    with pytest.raises(ValueError, match="autoplay"):
        replay(LAYOUT, 4, [], autoplay="most")
    with pytest.raises(ValueError, match="autoplay"):
        _core.solve(1, 4, autoplay="most")
    with pytest.raises(ValueError, match="autoplay"):
        play.Position.from_deal(1, autoplay="most")


@pytest.mark.parametrize("deal", [1, 617, 11982])
def test_the_core_moves_agree_with_the_checker_under_max(deal):
    autos, settled, nexts = _core.successors(deal, 4, autoplay="max")
    start = {"columns": _core.deal(deal)}
    assert expand_autos(start, 4, [], autoplay="max") == autos
    assert replay(start, 4, [], autos="implied", autoplay="max").final == settled
    for move, after, layout in nexts:
        assert move["to"] != "foundation"
        assert expand_autos(settled, 4, [move], autoplay="max") == [move, *after]
        assert replay(settled, 4, [move], autos="implied", autoplay="max").final == layout


def test_solve_under_max_gives_a_line_under_max():
    for short in (False, True):
        r = solve(617, autoplay="max", short=short)
        assert r.outcome == "solved" and r.to_json()["autoplay"] == "max"
        assert replay({"columns": _core.deal(617)}, 4, r.moves, autoplay="max").ok
        assert all(m["auto"] for m in r.moves if m["to"] == "foundation")
        assert "h" not in r.notation
        assert not replay({"columns": _core.deal(617)}, 4, r.moves).ok
    # 164 needs no free cell under the safe rules; under max autoplay it is proven unsolvable without.
    assert solve(164, 0, prove=True).outcome == "solved"
    r = solve(164, 0, prove=True, autoplay="max")
    assert (r.outcome, r.positions) == ("unsolvable", 51_511)


def test_play_under_max():
    safe, most = play.Position.from_deal(617), play.Position.from_deal(617, autoplay="max")
    assert (safe.autoplay, most.autoplay) == ("safe", "max")
    a = play.hint(most)
    assert a.winnable and replay(most.layout, 4, a.line, autoplay="max").ok
    # The keyword settles a Position under other rules again; a deal number takes it too.
    assert play.hint(safe, autoplay="max").line == a.line
    assert play.hint(617, autoplay="max").line == a.line
    first = a.notation.split()[0]
    after = most.play(first)
    assert after.autoplay == "max"
    assert play.last_winnable(617, [first], autoplay="max").index == 1
    with pytest.raises(play.IllegalMove, match="by hand"):
        play.Position.from_layout(LAYOUT, autoplay="max").play("1h")


def test_cli_solve_617_max_short_replays():
    r = run_cli("solve", "617", "--autoplay", "max", "--short", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["autoplay"] == "max" and doc["outcome"] == "solved"
    assert replay({"columns": _core.deal(617)}, 4, doc["moves"], autoplay="max").ok
    moves = _core.parse_notation(doc["notation"])
    assert len(moves) == doc["move_count"] and all(m["to"] != "foundation" for m in moves)
    assert replay({"columns": _core.deal(617)}, 4, moves, autos="implied", autoplay="max").ok
    text = run_cli("solve", "617", "--autoplay", "max", "--short")
    assert text.returncode == 0 and "max autoplay: solved in" in text.stdout


def test_cli_solve_short_prove_proves_a_shortest_line_or_a_bound():
    """``--short --prove``: 617 under max autoplay takes 34 moves, proven (macroxue's line: 35); within a
    small budget deal 1 gets a line and the bound proven so far, below it (exit 0 either way: a line)."""
    r = run_cli("solve", "617", "--autoplay", "max", "--short", "--prove", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["move_count"], doc["lower_bound"]) == (34, 34)
    assert replay({"columns": _core.deal(617)}, 4, doc["moves"], autoplay="max").ok
    text = run_cli("solve", "617", "--autoplay", "max", "--short", "--prove")
    assert "solved in 34 moves, a shortest line, proven" in text.stdout
    r = run_cli("solve", "1", "--short", "--prove", "--max-positions", "300000", "--format", "json")
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["outcome"] == "solved"
    assert 28 <= doc["lower_bound"] < doc["move_count"]
    text = run_cli("solve", "1", "--short", "--prove", "--max-positions", "300000")
    assert f"every line takes at least {doc['lower_bound']} moves" in text.stdout
    # Other searches carry no bound.
    assert solve(617, short=True).lower_bound is None and solve(617).lower_bound is None


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["solve", "617", "--autoplay", "most"], "'most' is not one of 'safe', 'max'"),
        (["hint", "617", "--autoplay", "max", "--moves", "4a 1h"], "by hand"),
        (["last-winnable", "617", "--autoplay", "MAX"], "--autoplay"),
    ],
)
def test_cli_bad_rules_or_lines_get_one_line_and_exit_2(args, words):
    r = run_cli(*args)
    assert r.returncode == 2, r.stderr
    assert r.stdout == "" and len(r.stderr.strip().splitlines()) == 1 and words in r.stderr


def verify(out, *extra):
    return run_cli("verify-unsolvable", "11981-11983", "--out", str(out), "--workers", "1", "-q", *extra)


def test_records_name_their_rules_and_a_resume_keeps_them(tmp_path):
    r = verify(tmp_path / "max", "--autoplay", "max", "--format", "json")
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["autoplay"] == "max" and doc["proven_unsolvable"] == [11982]
    run = json.loads((tmp_path / "max" / "run.json").read_text())
    assert run["config"]["autoplay"] == "max" and "max automatic moves" in run["rules"]
    meta = pq.read_schema(next((tmp_path / "max" / "searches").glob("*.parquet"))).metadata
    assert records.autoplay_of(meta) == "max" and json.loads(meta[b"fcanalyze.config"])["autoplay"] == "max"
    other = verify(tmp_path / "max")
    assert other.returncode == 2 and "autoplay 'max' -> 'safe'" in other.stderr
    assert len(other.stderr.strip().splitlines()) == 1
    # A run from before the rules were recorded was made under the safe rules, and resumes under them.
    assert verify(tmp_path / "old").returncode == 0
    path = tmp_path / "old" / "run.json"
    old = json.loads(path.read_text())
    del old["config"]["autoplay"]
    path.write_text(json.dumps(old))
    assert verify(tmp_path / "old").returncode == 0
    assert verify(tmp_path / "old", "--autoplay", "max").returncode == 2
    assert records.autoplay_of(None) == "safe" and records.autoplay_of({b"fcanalyze.config": b"{}"}) == "safe"


def test_the_replay_pipeline_follows_the_rules_a_table_records(tmp_path):
    line = solve(617, autoplay="max")
    row = {
        "deal": 617,
        "min_cells": 4,
        "min_cells_lower": 4,
        "min_cells_upper": 4,
        "difficulty": "hard",
        "moves": line.move_count,
        "solution": line.notation,
        "positions": line.positions,
    }
    for autoplay, code in (("max", 0), ("safe", 1)):
        out = tmp_path / autoplay
        (out / "deals").mkdir(parents=True)
        table = records.to_table("deals", [row], {"autoplay": autoplay})
        pq.write_table(table, out / "deals" / "deals-000000.parquet")
        r = subprocess.run(
            [sys.executable, str(ROOT / "pipelines" / "replay.py"), str(out)], capture_output=True, text=True
        )
        assert r.returncode == code, r.stderr
        assert (f"under {autoplay} autoplay" in r.stdout) == (code == 0)
