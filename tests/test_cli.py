"""The command line, in-process (CliRunner) and end to end as the README tells users to run it."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time

import pytest
from click.testing import CliRunner
from conftest import (
    DATA,
    FC_SOLVE,
    ROOT,
    fcanalyze_command,
    needs_fcs,
    run_cli,
    sigint_as_in_a_terminal,
)

from fcanalyze import _core, replay
from fcanalyze.cli import cli

BOARDS = DATA / "boards"


def invoke(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False, standalone_mode=False)


def test_every_command_has_help_and_is_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    assert cli.commands, "no commands registered"
    for name, command in cli.commands.items():
        r = CliRunner().invoke(cli, [name, "--help"])
        assert r.exit_code == 0, name
        assert command.help and len(command.help) > 40, name
        assert f"fcanalyze {name}" in readme, f"README has no example of `fcanalyze {name}`"


def test_version_and_module_entry_point():
    r = run_cli("--version")
    assert r.returncode == 0 and _core.__version__ in r.stdout
    r = run_cli("-h")
    assert r.returncode == 0 and "solve" in r.stdout


def test_deal_text_and_json():
    r = run_cli("deal", "1")
    assert r.returncode == 0
    assert r.stdout.splitlines()[0] == "JD KD 2S 4C 3S 6D 6S"
    r = run_cli("deal", "11982", "--format", "json")
    doc = json.loads(r.stdout)
    assert doc == {"deal": 11982, "columns": _core.deal(11982)}


@needs_fcs
def test_deal_text_is_accepted_by_freecell_solver():
    import subprocess

    board = run_cli("deal", "24").stdout
    out = subprocess.run([FC_SOLVE, "-m", "-sn"], input=board, capture_output=True, text=True, timeout=60)
    assert "This game is solveable." in out.stdout


def test_solve_11982_proof_counts_61643_positions():
    r = run_cli("solve", "11982", "--cells", "4", "--prove")
    assert r.returncode == 1, r.stderr
    assert "unsolvable" in r.stdout and "61,643 positions" in r.stdout
    r = run_cli("solve", "11982", "--cells", "4", "--prove", "--format", "json")
    doc = json.loads(r.stdout)
    assert (doc["outcome"], doc["positions"], doc["moves"]) == ("unsolvable", 61643, [])


@pytest.mark.slow
def test_prove_with_a_memory_bound():
    """`--max-memory` reaches the proof (the hand-over to the layered proof itself is tested through the
    binding in test_classify_core.py); a bound below 64 MB is bad input."""
    r = run_cli("solve", "883", "--cells", "0", "--prove", "--max-memory", "64", "--format", "json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["outcome"], doc["positions"]) == ("unsolvable", 2_174_568)
    r = run_cli("solve", "883", "--prove", "--max-memory", "10")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.parametrize("threads", ["1", "2"])
def test_prove_on_threads_counts_the_same(threads):
    """`--threads` reaches the proof: past its first million positions (searched on one thread) the lean
    prover runs on the threads given, and the count of the reachable set is the same."""
    r = run_cli("solve", "883", "--cells", "0", "--prove", "--threads", threads, "--format", "json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["outcome"], doc["positions"]) == ("unsolvable", 2_174_568)


@pytest.mark.parametrize(
    ("deal", "cells", "outcome"),
    [(164, 0, "solved"), (1, 2, "unsolvable"), (1, 3, "solved"), (617, 3, "unsolvable"), (617, 4, "solved")],
)
def test_known_cells(deal, cells, outcome):
    r = invoke("solve", str(deal), "--cells", str(cells), "--prove", "--format", "json")
    doc = json.loads(r.output)
    assert doc["outcome"] == outcome
    assert r.return_value == (0 if outcome == "solved" else 1)
    if outcome == "solved":
        assert replay(_layout(deal), cells, doc["moves"]).ok


def _layout(deal: int) -> dict:
    return {"columns": _core.deal(deal), "cells": [], "foundations": {}}


def test_solution_json_shape_and_replay():
    r = run_cli("solve", "1", "--format", "json")
    assert r.returncode == 0
    doc = json.loads(r.stdout)
    assert doc["deal"] == 1 and doc["cells"] == 4 and doc["outcome"] == "solved"
    places = re.compile(r"^(col[1-8]|cell[1-8]|foundation)$")
    for m in doc["moves"]:
        assert set(m) == {"from", "to", "count", "auto"}
        assert places.match(m["from"]) and places.match(m["to"]) and m["count"] >= 1
        assert not m["auto"] or m["to"] == "foundation"
    assert doc["move_count"] == sum(not m["auto"] for m in doc["moves"])
    assert replay(_layout(1), 4, doc["moves"]).ok


def test_text_output_lists_the_solution():
    r = run_cli("solve", "2", "--cells", "1")
    assert r.returncode == 0
    head, *body = r.stdout.splitlines()
    assert head.startswith("deal 2, 1 free cell: solved in ")
    tokens = " ".join(body).split()
    assert len(tokens) == int(re.search(r"solved in (\d+) moves", head).group(1))
    assert all(re.fullmatch(r"[1-8a][1-8ah](\(\d+\))?", t) for t in tokens)


def test_undecided_exit_code():
    r = run_cli("solve", "11982", "--max-positions", "500")
    assert r.returncode == 3
    assert "undecided" in r.stdout and "positions budget ran out" in r.stdout


@pytest.mark.parametrize(
    "sig, code, message",
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "stopped (SIGTERM)")],
)
def test_ctrl_c_or_sigterm_stops_a_long_proof(sig, code, message):
    """The proof of deal 20410 with 1 cell examines 652,740,262 positions (many minutes). Ctrl-C or
    SIGTERM two seconds in stops it (the core watches for them, a search of hours included): the
    one-line message, exit code 130 or 143, and no result printed."""
    proc = subprocess.Popen(
        [*fcanalyze_command(), "solve", "20410", "--cells", "1", "--prove", "--max-memory", "512"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_in_a_terminal,
    )
    try:
        time.sleep(2)
        assert proc.poll() is None
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.communicate()
    assert proc.returncode == code, err
    assert out == ""
    assert err.strip().splitlines() == [f"fcanalyze: {message}"]


def test_position_file_and_stdin():
    board = (BOARDS / "deal-1.txt").read_text()
    a = json.loads(run_cli("solve", str(BOARDS / "deal-1.txt"), "--format", "json").stdout)
    b = json.loads(run_cli("solve", "-", "--format", "json", input=board).stdout)
    assert a["outcome"] == b["outcome"] == "solved"
    assert a["moves"] == b["moves"]


def test_mid_game_position_file():
    r = run_cli("solve", str(BOARDS / "mid-game.txt"), "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    from fcanalyze import parse_board

    assert replay(parse_board((BOARDS / "mid-game.txt").read_text()), 4, doc["moves"]).ok


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["solve", "0"], "deal number 0 is out of range"),
        (["solve", "-3"], "deal number -3 is out of range"),
        (["solve", "8589934592"], "out of range"),
        (["deal", "abc"], "not a deal number"),
        (["deal", "0"], "out of range"),
        (["solve", "nonsense"], "neither a deal number nor a board file"),
        (["solve", "1", "--cells", "9"], "--cells"),
        (["solve", str(BOARDS / "col-with-duplicate-card.txt")], "duplicate card TC"),
        (["solve", str(BOARDS / "missing-card.txt")], "missing card TC"),
        (["solve", str(BOARDS / "bad-card-token.txt")], "bad card token '9X'"),
        (["solve", str(BOARDS / "too-many-columns.txt")], "9 columns"),
        (["solve", str(BOARDS / "more-freecell-cards-than-cells.txt")], "5 cards in free cells but only 4"),
        (["solve", str(BOARDS / "foundation-duplicates-a-column-card.txt")], "duplicate card AC"),
        (["solve", str(BOARDS / "bad-foundation-value.txt")], "bad foundation value"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    r = run_cli(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert message in lines[0]
    assert "Traceback" not in r.stderr
