"""The exit-code contract (issue 19), case by case: every bad input of the issue is exit 2 with exactly
one line on stderr, a failure of the system or a bug is exit 4 with one line, never a traceback; exit 1
only comes from a finished proof. In-process through the group's guard (click's CliRunner in standalone
mode goes through `Group.main`), and end to end where a real stdout or file system matters."""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import DATA, ROOT, fcanalyze_command, run_cli

from fcanalyze import _core, replay
from fcanalyze.cli import cli
from fcanalyze.cli import games as games_cli

BOARD = (DATA / "boards" / "deal-1.txt").read_text()
HUGE = "99999999999999999999999"  # past 64 bits
U64_MAX = str(2**64 - 1)


def runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # click < 8.2 mixes stderr into output unless told
    except TypeError:
        return CliRunner()


def invoke(*args: str, input: str | bytes | None = None):
    return runner().invoke(cli, list(args), input=input)


def one_error_line(r, code: int = 2) -> str:
    """Assert the contract of a refusal and return its line."""
    assert r.exit_code == code, (r.exit_code, r.stdout, r.stderr, r.exception)
    assert "Traceback" not in r.stderr + r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("fcanalyze: ")
    return lines[0]


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with the files the cases name: `a-file`, `5` (a board), `bin` (binary)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("x\n")
    (tmp_path / "5").write_text(BOARD)
    (tmp_path / "bin").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "board.txt").write_text(BOARD)
    (tmp_path / "moves.txt").write_text("6a 6b\n")
    for name, cells in {
        "cells-number": "3",
        "cells-nan": "NaN",
        "cells-string": '"8D"',
        "cells-object": '{"a": 1}',
        "cells-huge": "1" + "0" * 5000,
    }.items():
        (tmp_path / f"{name}.json").write_text(f'{{"columns": [], "cells": {cells}}}')
    (tmp_path / "deep.json").write_text('{"columns": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (tmp_path / "deep-list.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "huge-token.txt").write_text("X" * 900_000)
    return tmp_path


# (arguments, what the one line says). Every case: exit 2, one line on stderr, nothing on stdout.
BAD_INPUT = [
    # Numbers past the core's 64 bits, and out of every range, in every command that takes them.
    (["solve", "1", "--max-positions", HUGE], "--max-positions': 99999999999999999999999 is out of range"),
    (["solve", "1", "--time-limit", HUGE], "--time-limit"),
    (["solve", "1", "--max-memory", HUGE], "--max-memory"),
    (["solve", "1", "--prove", "--max-memory", str(2**44)], "expected a whole number from 64 to"),
    (["solve", "1", "--cells", HUGE], "--cells"),
    (["hint", "1", "--max-positions", HUGE], "--max-positions"),
    (["hint", "1", "--time-limit", str(2**64)], "--time-limit"),
    (["last-winnable", "1", "--moves", "6a", "--max-positions", HUGE], "--max-positions"),
    (["last-winnable", "1", "--moves", "6a", "--time-limit", HUGE], "--time-limit"),
    (["analyze", "1-3", "--out", "out", "--max-positions", HUGE], "--max-positions"),
    (["analyze", "1-3", "--out", "out", "--time-limit", HUGE], "--time-limit"),
    (["analyze", "1-3", "--out", "out", "--max-memory", HUGE], "--max-memory"),
    (["analyze", "1-3", "--out", "out", "--workers", HUGE], "--workers"),
    (["analyze", "1-3", "--out", "out", "--threads", "1025"], "--threads"),
    (["analyze", "1-3", "--out", "out", "--shard-size", HUGE], "--shard-size"),
    (["analyze", "1-3", "--out", "out", "--max-cells", "-1"], "--max-cells"),
    (["verify-unsolvable", "1-3", "--out", "out", "--max-positions", HUGE], "--max-positions"),
    (["solve", "1", "--max-positions", "0"], "out of range"),
    (["solve", "1", "--max-positions", "-5"], "out of range"),
    (["solve", "1", "--max-positions", "1e6"], "'1e6' is not a whole number"),
    (["solve", "1", "--max-positions", "\u0661\u0662"], "is not a whole number"),
    (["solve", "1", "--time-limit", ""], "is not a whole number"),
    # JSON positions of the wrong shape.
    (["solve", "cells-number.json"], '"cells" is a list of cards such as ["8D", null], not a number'),
    (["solve", "cells-nan.json"], "not NaN"),
    (["solve", "cells-string.json"], "not a string"),
    (["hint", "cells-object.json"], "not an object"),
    (["solve", "cells-huge.json"], "bad JSON"),
    (["solve", "deep.json"], "bad JSON: nested too deeply"),
    (["hint", "1", "--moves-file", "deep-list.json"], "nested too deeply"),
    (["solve", "huge-token.txt"], "bad card token"),
    # Outputs that cannot be created.
    (["analyze", "1-3", "--out", "a-file/run"], "a-file is a file, not a directory"),
    (["analyze", "1-3", "--out", "a-file"], "Directory 'a-file' is a file"),
    (["analyze", "1-3", "--out", "/proc/fcanalyze-run"], "cannot write there"),
    (["verify-unsolvable", "1-3", "--out", "a-file/run"], "a-file is a file, not a directory"),
    (["manifest", str(ROOT / "results" / "32k"), "-o", "a-file/m.json"], "a-file is a file, not a directory"),
    (["manifest", str(ROOT / "results" / "32k"), "-o", "/proc/m.json"], "cannot write there"),
    # Input files that are not text.
    (["verify-unsolvable", "1-3", "--expected", "bin", "--out", "out"], "bin: not text in UTF-8"),
    (["solve", "bin"], "bin: not text in UTF-8"),
    (["hint", "1", "--moves-file", "bin"], "bin: not text in UTF-8"),
    # One comma rule in every command: a comma separates deals.
    (["deal", "1,000"], "a comma separates deals and ranges"),
    (["solve", "1,000"], "a comma separates deals and ranges"),
    (["hint", "1,000"], "a comma separates deals and ranges"),
    (["analyze", "1,000-2,000", "--out", "out"], "a comma separates deals and ranges"),
    (["analyze", "1,000", "--out", "out"], "a comma separates deals and ranges"),
    (["verify-unsolvable", "1,000-2,000", "--out", "out"], "a comma separates deals and ranges"),
    # Conflicting options, malformed dates.
    (["hint", "1", "--moves", "6a", "--moves-file", "moves.txt"], "--moves and --moves-file"),
    (["last-winnable", "1", "--moves", "6a", "--moves-file", "moves.txt"], "--moves and --moves-file"),
    (["daily", "--date", "20261201"], "'20261201' is not a date (expected YYYY-MM-DD)"),
    (["daily", "--date", "2026-W48-2"], "is not a date"),
    # Mistyped commands and options: click's suggestion shows.
    (["slove", "1"], "No such command 'slove'. Did you mean 'solve'?"),
    (
        ["solve", "1", "--max-postions", "5"],
        "No such option '--max-postions'. Did you mean '--max-positions'?",
    ),
    (["solve", "--prov", "1"], "Did you mean '--prove'?"),
    (["analyze", "1-3", "--out", "out", "--worker", "2"], "Did you mean '--workers'?"),
    (["deal", "1", "--fromat", "json"], "Did you mean '--format'?"),
    # Sources.
    (["solve", "no-such-file"], "neither a deal number nor a board file"),
    (["solve", "."], "cannot read ."),
]


@pytest.mark.parametrize(
    ("args", "message"), BAD_INPUT, ids=lambda v: " ".join(v) if isinstance(v, list) else ""
)
def test_bad_input_is_exit_2_with_one_line(files: Path, args: list[str], message: str):
    r = invoke(*args)
    line = one_error_line(r)
    assert message in line, line
    assert r.stdout == ""
    assert not (files / "out").exists()  # refused before anything was written


def test_a_big_board_file_is_refused_by_its_size_at_once(files: Path):
    big = files / "big.txt"
    with open(big, "wb") as f:
        f.truncate(50 << 20)  # 50 MB (sparse): refused by its size, never read
    start = time.monotonic()
    line = one_error_line(invoke("solve", str(big)))
    assert "larger than 1 MB" in line
    assert time.monotonic() - start < 2
    line = one_error_line(invoke("solve", "-", input=b"\n" * ((1 << 20) + 1)))
    assert "stdin is larger than 1 MB" in line


def test_a_file_named_like_a_number_does_not_shadow_the_deal(files: Path):
    doc = json.loads(invoke("solve", "5", "--format", "json").stdout)
    assert doc["deal"] == 5
    doc = json.loads(invoke("solve", "./5", "--format", "json").stdout)
    assert doc["deal"] is None and doc["position"] == "./5"
    assert doc["moves"] == json.loads(invoke("solve", "1", "--format", "json").stdout)["moves"]


@pytest.mark.parametrize(
    "encode",
    [
        lambda t: t.encode("utf-8"),
        lambda t: codecs.BOM_UTF8 + t.encode("utf-8"),
        lambda t: t.encode("utf-16"),
        lambda t: codecs.BOM_UTF16_BE + t.encode("utf-16-be"),
        lambda t: t.encode("utf-32"),
        lambda t: t.replace("\n", "\r\n").encode("latin-1"),
        lambda t: codecs.BOM_UTF8 + t.replace("\n", "\r\n").encode("utf-8"),
        lambda t: t.replace("\n", "\r").encode("utf-8"),
    ],
    ids=["utf-8", "utf-8-bom", "utf-16", "utf-16-be", "utf-32", "latin-1-crlf", "utf-8-bom-crlf", "cr"],
)
def test_every_editors_encoding_reads_as_the_plain_file(files: Path, encode):
    (files / "enc.txt").write_bytes(encode(BOARD))
    want = json.loads(invoke("solve", "board.txt", "--format", "json").stdout)["moves"]
    r = invoke("solve", "enc.txt", "--format", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["moves"] == want
    json_position = json.dumps({"columns": _core.deal(1), "cells": [], "foundations": {}})
    (files / "enc.json").write_bytes(encode(json_position))
    r = invoke("solve", "enc.json", "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["moves"] == want, r.stderr


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (BOARD.encode("utf-16-le"), "UTF-16 text without a byte-order mark"),
        (BOARD.replace("JD", "J\u00e9").encode("latin-1"), "not text in UTF-8"),
        (codecs.BOM_UTF16_LE + b"\x00\xd8", "not text in UTF-16"),
        (b"JD KD\x00", "a binary file"),
    ],
    ids=["utf-16-no-bom", "latin-1-accent", "broken-utf-16", "nul"],
)
def test_other_bytes_are_one_line(files: Path, data: bytes, message: str):
    (files / "odd.txt").write_bytes(data)
    assert message in one_error_line(invoke("solve", "odd.txt"))


def test_fcanalyze_alone_prints_its_usage_and_exits_0():
    r = invoke()
    assert r.exit_code == 0 and r.stderr == ""
    assert r.stdout.startswith("Usage: ") and "solve" in r.stdout


def test_short_version_option():
    r = invoke("-V")
    assert r.exit_code == 0 and _core.__version__ in r.stdout


def test_one_position_is_singular():
    r = invoke("solve", "1", "--cells", "0", "--max-positions", "1")
    assert r.exit_code == 3
    assert "(1 position examined" in r.stdout
    r = invoke("hint", "1", "--max-positions", "1")
    assert r.exit_code == 3 and r.stdout.strip() == "undecided: the budget ran out after 1 position"


def test_daily_finds_the_repository_manifest_from_a_subdirectory(monkeypatch: pytest.MonkeyPatch):
    """Found upward from the current directory, as git finds its repository (an installed wheel does
    not know where the repository is; an install from it in place does: the next test)."""
    monkeypatch.chdir(ROOT)
    at_root = invoke("daily", "--date", "2026-12-01", "--class", "hard")
    monkeypatch.chdir(ROOT / "docs")
    here = invoke("daily", "--date", "2026-12-01", "--class", "hard")
    assert here.exit_code == at_root.exit_code == 0, here.stderr
    assert here.stdout == at_root.stdout


def test_daily_finds_the_installations_repository_from_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    if games_cli.default_manifest.__code__.co_filename != str(ROOT / "fcanalyze" / "cli" / "games.py"):
        pytest.skip("fcanalyze is installed as a wheel, not in place from this repository")
    monkeypatch.chdir(ROOT)
    at_root = invoke("daily", "--date", "2026-12-01", "--class", "hard")
    monkeypatch.chdir(tmp_path)
    here = invoke("daily", "--date", "2026-12-01", "--class", "hard")
    assert here.exit_code == at_root.exit_code == 0, here.stderr
    assert here.stdout == at_root.stdout
    (tmp_path / "results" / "32k").mkdir(parents=True)  # a decoy in the cwd is not taken
    (tmp_path / "results" / "32k" / "manifest.json").write_text("{}")
    assert invoke("daily", "--date", "2026-12-01", "--class", "hard").stdout == at_root.stdout


def test_limits_at_the_bounds_run(files: Path):
    """The largest values of the number options are taken, and the core takes them."""
    r = invoke("solve", "1", "--max-positions", U64_MAX, "--time-limit", U64_MAX, "--format", "json")
    assert r.exit_code == 0, r.stderr
    r = invoke("hint", "1", "--max-positions", U64_MAX, "--time-limit", U64_MAX)
    assert r.exit_code == 0, r.stderr
    r = invoke(
        "solve", "1", "--cells", "2", "--prove", "--max-memory", str(2**44 - 1), "--time-limit", U64_MAX
    )
    assert r.exit_code == 1, r.stderr


# Internal errors: whatever a command raises beyond bad input is exit 4 with one line, the traceback
# only with --debug or FCANALYZE_DEBUG=1.
class PanicException(BaseException):
    """What pyo3 raises for a panic of the core: a BaseException, not an Exception. The core has no
    known panic left to provoke (card::parse on "é" was the last one, fixed), so the test raises one."""


def _panic(n: int) -> dict:
    raise PanicException("byte index 1 is not a char boundary")


def _recurse(n: int) -> dict:
    return _recurse(n)


def _raiser(exc: BaseException):
    def raise_it(n: int) -> dict:
        raise exc

    return raise_it


@pytest.mark.parametrize(
    ("fake", "message"),
    [
        (_raiser(TypeError("unsupported operand")), "internal error (please report it"),
        (_raiser(OverflowError("int too big to convert")), "OverflowError: int too big to convert"),
        (_recurse, "RecursionError"),
        (_raiser(MemoryError()), "fcanalyze: error: out of memory"),
        (_raiser(_core.InternalError("a line failed the replay")), "a line failed the replay"),
        (_panic, "PanicException"),
        (_raiser(OSError(5, "Input/output error", "/bad/disk/x")), "Input/output error: /bad/disk/x"),
    ],
    ids=["TypeError", "OverflowError", "RecursionError", "MemoryError", "InternalError", "panic", "OSError"],
)
def test_anything_unexpected_is_exit_4_with_one_line(monkeypatch: pytest.MonkeyPatch, fake, message: str):
    monkeypatch.setattr("fcanalyze.cli.deal.deal_layout", fake)
    r = invoke("deal", "1")
    assert message in one_error_line(r, code=4)
    r = invoke("--debug", "deal", "1")
    assert r.exit_code == 4 and "Traceback" in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("fcanalyze: ")
    monkeypatch.setenv("FCANALYZE_DEBUG", "1")
    assert "Traceback" in invoke("deal", "1").stderr


def test_a_full_disk_is_exit_2_with_one_line(monkeypatch: pytest.MonkeyPatch):
    """A full disk is for the user to fix (then the same command goes on), as in a run: exit 2."""
    monkeypatch.setattr(
        "fcanalyze.cli.deal.deal_layout", _raiser(OSError(28, "No space left on device", "/full/disk/x"))
    )
    assert "No space left on device: /full/disk/x" in one_error_line(invoke("deal", "1"), code=2)


def test_an_unwritable_stdout_is_exit_2_with_one_line():
    """``fcanalyze deal 1 > /dev/full``: an output that cannot be written, like an --out."""
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [*fcanalyze_command(), "deal", "1"], stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "fcanalyze: error: cannot write the output: No space left on device"
    ]


def test_a_closed_pipe_ends_quietly():
    """``fcanalyze deal 1 | head -0``: the reader is gone before the answer is written. Not an error:
    no message, and 141 (128 + SIGPIPE), the status a shell shows for `cat` in the same place."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [*fcanalyze_command(), "deal", "1"], stdout=write, stderr=subprocess.PIPE, text=True
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")


def test_end_to_end_one_line_each(tmp_path: Path):
    """A few of the cases as a user runs them (the console script, a real stdout and stderr)."""
    (tmp_path / "5").write_text(BOARD)
    for args, code, message in [
        (["solve", "1", "--max-positions", HUGE], 2, "--max-positions"),
        (["analyze", "1-3", "--out", str(tmp_path / "5" / "run")], 2, "is a file, not a directory"),
        (["slove", "1"], 2, "Did you mean 'solve'?"),
        (["deal", "1,000"], 2, "a comma separates deals"),
    ]:
        r = run_cli(*args, cwd=tmp_path)
        assert r.returncode == code, (args, r.stderr)
        assert "Traceback" not in r.stderr and r.stdout == ""
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], r.stderr
    r = run_cli("solve", "5", "--format", "json", cwd=tmp_path)
    assert json.loads(r.stdout)["deal"] == 5
    r = run_cli(cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("Usage: fcanalyze") and r.stderr == ""


def test_exit_1_is_a_proof():
    """The commands that may answer 1 do so with a finished proof in their output."""
    r = invoke("solve", "1", "--cells", "2", "--prove", "--format", "json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 1 and doc["outcome"] == "unsolvable" and doc["exhausted"] is None
    r = invoke("hint", "11982", "--format", "json", "--time-limit", "600000", "--max-positions", "100000")
    assert r.exit_code == 1 and json.loads(r.stdout)["outcome"] == "unsolvable"
    layout = {"columns": _core.deal(1), "cells": [], "foundations": {}}
    r = invoke("solve", "1", "--cells", "3", "--format", "json")
    assert r.exit_code == 0 and replay(layout, 3, json.loads(r.stdout)["moves"]).ok
