"""Fuzzing the command line (issue 19), kept in the suite: random command lines, board texts and JSON
positions, each run through the exit-code contract.

Every input must end in exit 0-3 with a correct answer (a solution that the independent checker
replays, an outcome that matches the exit code, 1 only with a finished proof) or in exit 2 with exactly
one line on stderr; never a traceback, never exit 4, always within a bounded time. Hypothesis runs
derandomized (the same inputs every run) with bounded examples, so each test takes a few seconds; most
inputs run in-process through the group's guard (click's CliRunner), a handful end to end. The number
of inputs tried is printed at the end of the module ("fuzzed inputs: ...")."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import DATA, run_cli
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fcanalyze import MAX_DEAL, _core, checker, replay
from fcanalyze.board import format_board
from fcanalyze.cli import cli
from fcanalyze.cli.errors import BadInput
from fcanalyze.cli.inputs import load_source
from fcanalyze.deals import deal_layout, parse_range, range_size
from fcanalyze.play import Position

#: Inputs tried, by kind, and their exit codes (printed when the module ends).
TRIED: Counter[str] = Counter()
CODES: Counter[int] = Counter()
#: The longest one input may take, in seconds (budgets below keep every search well under it).
BOUND_S = 30


def fuzz(examples: int):
    return settings(
        max_examples=examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


@pytest.fixture(scope="module", autouse=True)
def report_count(request: pytest.FixtureRequest):
    yield
    kinds = ", ".join(f"{k} {v:,}" for k, v in sorted(TRIED.items()))
    codes = ", ".join(f"{k}: {v:,}" for k, v in sorted(CODES.items()))
    line = f"fuzzed inputs: {sum(TRIED.values()):,} ({kinds}); exit codes {codes}"
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if capture is not None:
        with capture.global_and_fixture_disabled():
            print(f"\n{line}")
    else:
        print(line)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fuzz")
    (path / "board.txt").write_text(format_board(deal_layout(1)))
    (path / "mid-game.txt").write_text((DATA / "boards" / "mid-game.txt").read_text())
    (path / "5").write_text(format_board(deal_layout(7)))
    (path / "bin").write_bytes(bytes(range(256)))
    (path / "moves.txt").write_text("6a 6b")
    (path / "moves.json").write_text('[{"from": "col6", "to": "cell1"}]')
    return path


def runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:
        return CliRunner()


# --- the contract ------------------------------------------------------------------------------------


def check(kind: str, args: list[str], code: int, out: str, err: str, elapsed: float) -> dict | None:
    """Assert the contract for one run; return the JSON document printed, if any."""
    TRIED[kind] += 1
    CODES[code] += 1
    where = (args, code, out[-500:], err[-500:])
    assert "Traceback" not in out + err, where
    assert code in (0, 1, 2, 3), where
    assert elapsed < BOUND_S, where
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("fcanalyze: error: "), where
        assert out == "", where
        return None
    assert err.strip() == "", where
    doc = None
    if last_value(args, "--format") == "json" and out.strip():
        doc = json.loads(out.strip().splitlines()[-1])
    command = args[0] if args and not args[0].startswith("-") else ""
    if code == 1:  # only a finished proof (or verify-unsolvable's disagreement) says 1
        assert command in ("solve", "hint", "verify-unsolvable"), where
        if command == "solve":
            assert (doc or {}).get("outcome", "unsolvable") == "unsolvable" and "undecided" not in out, where
            assert doc is not None or "unsolvable, proven" in out, where
        elif command == "hint":
            assert (doc or {}).get("outcome", "unsolvable") == "unsolvable", where
            assert doc is not None or out.startswith("not winnable: proven"), where
        else:
            assert (doc or {}).get("agree", False) is False, where
    if command in ("solve", "hint") and doc is not None:
        assert doc["outcome"] == {0: "solved", 1: "unsolvable", 3: "undecided"}[code], where
    if command == "last-winnable":
        assert code in (0, 2, 3), where
    return doc


def last_value(args: list[str], option: str) -> str | None:
    """The value click takes for `option`: its last occurrence's."""
    at = [i for i, a in enumerate(args[:-1]) if a == option]
    return args[at[-1] + 1] if at else None


def invoke(kind: str, args: list[str], input: bytes | None = None) -> tuple[int, dict | None]:
    start = time.monotonic()
    r = runner().invoke(cli, args, input=input)
    elapsed = time.monotonic() - start
    if r.exit_code not in (0, 1, 2, 3) and r.exc_info is not None:
        import traceback

        traceback.print_exception(*r.exc_info)
    return r.exit_code, check(kind, args, r.exit_code, r.stdout, r.stderr, elapsed)


def assert_solution_replays(layout: dict, cells: int, doc: dict) -> None:
    assert replay(layout, cells, doc["moves"], autoplay=doc.get("autoplay", "safe")).ok, doc


# --- command lines -----------------------------------------------------------------------------------

ODD_TEXT = st.one_of(
    st.sampled_from(
        ["", " ", "-", "--", "nan", "inf", "1e3", "0x10", "1.5", "1,000", "1_000", "+5", "-0", "\u0661\u0662"]
    ),
    st.sampled_from(["\uff12", "\u00b2", "9" * 5000, str(2**64), str(2**64 - 1), "-" + "9" * 30, "\x00"]),
    st.text(max_size=12),
)


def number(valid: st.SearchStrategy[int]) -> st.SearchStrategy[str]:
    """A number option's value: valid (in a band that keeps every run short), out of range, or odd."""
    return st.one_of(
        valid.map(str),
        st.integers(-(10**30), 10**30).map(str),
        ODD_TEXT,
    )


DEAL = st.one_of(
    st.integers(1, MAX_DEAL).map(str),
    st.integers(-(10**25), 10**25).map(str),
    st.integers(1, 32000).map(lambda n: f"{n:,}"),
    st.integers(1, 32000).map(lambda n: f"{n:_}"),
    ODD_TEXT,
)
SOURCE = st.one_of(DEAL, st.sampled_from(["board.txt", "./5", "5", "mid-game.txt", "bin", "nope", ".", "-"]))
RANGE = st.one_of(
    st.tuples(st.integers(1, 40), st.integers(0, 2)).map(lambda t: f"{t[0]}-{t[0] + t[1]}"),
    st.integers(1, 40).map(str),
    st.from_regex(r"[0-9]{1,2}(-[0-9]{1,2})?(,[0-9]{1,2}(-[0-9]{1,2})?)?", fullmatch=True),
    st.text(alphabet="0123456789-, _", max_size=10),
    ODD_TEXT,
)
FORMAT = st.sampled_from(["text", "json", "JSON", "xml", ""])
AUTOPLAY = st.sampled_from(["safe", "max", "MAX", "most", ""])
MOVES = st.one_of(
    st.sampled_from(["6a 6b", "6a 19", "3a 36 a8 2h 36(3)", "36(999)", "36(99999999999999999999)", "zz", ""]),
    st.lists(st.from_regex(r"[1-8a-i][1-8a-ih](\([0-9]{1,3}\))?", fullmatch=True), max_size=6).map(" ".join),
    st.text(max_size=20),
)

#: Per command: its options, each with a strategy for its value (None: a flag).
OPTIONS: dict[str, dict[str, st.SearchStrategy[str] | None]] = {
    "solve": {
        "--cells": number(st.integers(1, 8)),
        "--max-positions": number(st.integers(1, 200_000)),
        "--time-limit": number(st.integers(1, 300)),
        "--max-memory": number(st.integers(64, 1024)),
        "--prove": None,
        "--short": None,
        "--autoplay": AUTOPLAY,
        "--format": FORMAT,
    },
    "hint": {
        "--cells": number(st.integers(1, 8)),
        "--max-positions": number(st.integers(1, 200_000)),
        "--time-limit": number(st.integers(1, 300)),
        "--moves": MOVES,
        "--moves-file": st.sampled_from(["moves.txt", "moves.json", "bin", "nope", "board.txt"]),
        "--short": None,
        "--autoplay": AUTOPLAY,
        "--format": FORMAT,
    },
    "last-winnable": {
        "--cells": number(st.integers(1, 8)),
        "--max-positions": number(st.integers(1, 50_000)),
        "--time-limit": number(st.integers(1, 300)),
        "--moves": MOVES,
        "--autoplay": AUTOPLAY,
        "--format": FORMAT,
    },
    "deal": {"--format": FORMAT},
    "daily": {
        "--date": st.one_of(
            st.dates().map(str), st.sampled_from(["20261201", "2026-13-01", "2026-02-30"]), ODD_TEXT
        ),
        "--class": st.sampled_from(["any", "easy", "normal", "hard", "unsolvable", ""]),
        "--manifest": st.sampled_from(["board.txt", "bin", "nope"]),
        "--format": FORMAT,
    },
}
#: What each command's first argument is, and the budget options put first (a fuzzed value comes after
#: them, so it is the one that counts), so that every run is short.
ARGUMENT = {"solve": SOURCE, "hint": SOURCE, "last-winnable": SOURCE, "deal": DEAL, "daily": None}
SAFE = {
    "solve": ["--time-limit", "300"],
    "hint": ["--time-limit", "300"],
    "last-winnable": ["--time-limit", "300"],
}


@st.composite
def command_line(draw: st.DrawFn, commands: tuple[str, ...] = tuple(OPTIONS)) -> list[str]:
    name = draw(st.sampled_from(commands))
    if draw(st.integers(0, 20)) == 0:  # now and then, a mistyped command or a stray option
        name = draw(st.sampled_from(["slove", "dael", "hnit", "--bogus", "-x", ""]))
    args = [name, *SAFE.get(name, [])]
    if ARGUMENT.get(name) is not None and draw(st.integers(0, 15)) > 0:
        args.append(draw(ARGUMENT[name]))
    options = OPTIONS.get(name, {})
    for _ in range(draw(st.integers(0, 4))):
        if options and draw(st.integers(0, 12)) > 0:
            opt = draw(st.sampled_from(sorted(options)))
        else:
            opt = draw(st.sampled_from(["--max-postions", "--fromat", "--cell", "-q", "--workers"]))
        args.append(opt)
        if options.get(opt) is not None:
            args.append(draw(options[opt]))
    return args


def check_answer(args: list[str], code: int, doc: dict | None, workdir: Path) -> None:
    """When a command answered with a solution in JSON, the solution replays from its position."""
    if doc is None or code != 0 or args[0] not in ("solve", "hint"):
        return
    cells = int(last_value(args, "--cells") or 4)
    source = args[1 + len(SAFE.get(args[0], []))]
    if source == "-":
        return
    try:
        layout, _ = load_source(source)
    except BadInput:
        return
    if args[0] == "solve":
        layout = deal_layout(layout) if isinstance(layout, int) else layout
        assert_solution_replays(layout, cells, doc)
    elif "--moves" not in args and "--moves-file" not in args:
        rules = "max" if last_value(args, "--autoplay") == "max" else "safe"
        start = (
            Position.from_deal(layout, cells, rules)
            if isinstance(layout, int)
            else Position.from_layout(layout, cells, autoplay=rules)
        )
        assert checker.replay(start.layout, cells, doc["line"], autoplay=rules).ok, doc


@fuzz(500)
@given(args=command_line())
def test_fuzz_command_lines(args: list[str], workdir: Path, monkeypatch_module):
    code, doc = invoke("command line", args, input=b"")
    check_answer(args, code, doc, workdir)


@fuzz(100)
@given(
    data=st.deferred(lambda: encoded()), command=st.sampled_from(["solve", "hint"]), cells=st.integers(0, 8)
)
def test_fuzz_stdin_positions(data: bytes, command: str, cells: int, workdir: Path, monkeypatch_module):
    """Fuzzed positions (below) on stdin: the same reader, bounded at 1 MB by reading, not by size."""
    args = [command, "-", "--cells", str(cells), "--time-limit", "300", "--format", "json"]
    invoke("stdin", args, input=data)


@fuzz(12)
@given(
    command=st.sampled_from(["analyze", "verify-unsolvable"]),
    spans=RANGE,
    extra=st.lists(
        st.tuples(
            st.sampled_from(
                ["--max-cells", "--max-positions", "--time-limit", "--shard-size", "--workers", "--threads"]
            ),
            st.one_of(st.integers(1, 2).map(str), number(st.integers(1, 2))),
        ),
        max_size=2,
    ),
)
def test_fuzz_runs(command: str, spans: str, extra: list[tuple[str, str]], workdir: Path, monkeypatch_module):
    """analyze and verify-unsolvable over tiny ranges (a valid range of more than 3 deals is skipped)."""
    try:
        deals = range_size(parse_range(spans))
    except ValueError:
        deals = 0  # refused: exit 2
    assume(deals <= 3)
    if command == "verify-unsolvable":
        extra = [(o, v) for o, v in extra if o not in ("--max-cells", "--threads")]
    out = workdir / f"run-{TRIED['run']}"
    args = [command, spans, "--out", str(out), "--workers", "1", "--time-limit", "2000", "-q"]
    args += [x for pair in extra for x in pair]
    invoke("run", args)


@pytest.fixture(scope="module")
def monkeypatch_module(workdir: Path):
    """The fuzzed commands run in the module's working directory (its files are their sources)."""
    mp = pytest.MonkeyPatch()
    mp.chdir(workdir)
    yield mp
    mp.undo()


# --- board texts and JSON positions -----------------------------------------------------------------

ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "cp1252"]


@st.composite
def mutated(draw: st.DrawFn, text: str) -> str:
    """`text` with a few random edits: a slice deleted, random characters inserted, two tokens swapped,
    a line duplicated, the case changed, the end cut off."""
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["delete", "insert", "swap", "duplicate", "case", "truncate"]))
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        if op == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 20)) :]
        elif op == "insert":
            text = text[:i] + draw(st.text(max_size=8)) + text[i:]
        elif op == "swap":
            tokens = text.split(" ")
            a, b = draw(st.integers(0, len(tokens) - 1)), draw(st.integers(0, len(tokens) - 1))
            tokens[a], tokens[b] = tokens[b], tokens[a]
            text = " ".join(tokens)
        elif op == "duplicate":
            lines = text.split("\n")
            j = draw(st.integers(0, len(lines) - 1))
            text = "\n".join([*lines[: j + 1], lines[j], *lines[j + 1 :]])
        elif op == "case":
            text = text.lower() if draw(st.booleans()) else text.swapcase()
        else:
            text = text[:i]
    return text


def layout_text(deal: int, as_json: bool) -> str:
    layout = deal_layout(deal)
    if as_json:
        return json.dumps({"columns": layout["columns"], "cells": [], "foundations": layout["foundations"]})
    return format_board(layout)


JSON_SCALAR = st.one_of(
    st.integers(), st.floats(allow_nan=True), st.text(max_size=5), st.booleans(), st.none()
)
JSON_VALUE = st.one_of(
    JSON_SCALAR,
    st.recursive(
        JSON_SCALAR,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
        max_leaves=12,
    ),
)


@st.composite
def position_text(draw: st.DrawFn) -> str:
    kind = draw(
        st.sampled_from(["json-values", "board", "json", "json-values", "random", "deep", "huge", "mid-game"])
    )
    deal = draw(st.integers(1, 32000))
    if kind == "board":
        return draw(mutated(layout_text(deal, False)))
    if kind == "json":
        return draw(mutated(layout_text(deal, True)))
    if kind == "json-values":  # one part of a valid position replaced by any JSON value
        doc = json.loads(layout_text(deal, True))
        part = draw(st.sampled_from(["cells", "foundations", "columns", "a column", "a card", "a suit"]))
        value = draw(JSON_VALUE)
        if part == "a column":
            doc["columns"][draw(st.integers(0, 7))] = value
        elif part == "a card":
            doc["columns"][draw(st.integers(0, 7))][0] = value
        elif part == "a suit":
            doc["foundations"][draw(st.sampled_from("CDHS"))] = value
        else:
            doc[part] = value
        return json.dumps(doc, allow_nan=True)
    if kind == "deep":
        depth = draw(st.sampled_from([10, 500, 1000, 5000, 100_000]))
        return '{"columns": ' + "[" * depth + "]" * depth + "}"
    if kind == "huge":
        return layout_text(deal, False) * draw(st.sampled_from([1, 100, 5000, 10_000]))
    if kind == "mid-game":
        return draw(mutated((DATA / "boards" / "mid-game.txt").read_text()))
    return draw(st.text(max_size=300))


@st.composite
def encoded(draw: st.DrawFn) -> bytes:
    text = draw(position_text())
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    text = text.replace("\n", newline)
    encoding = draw(st.sampled_from(ENCODINGS))
    return text.encode(encoding, errors="replace")


def check_position_answer(path: Path, cells: int, code: int, doc: dict | None) -> None:
    if code != 0 or doc is None:
        return
    layout, _ = load_source(str(path))
    assert_solution_replays(layout, cells, doc)


@fuzz(400)
@given(data=encoded(), cells=st.integers(0, 8), command=st.sampled_from(["solve", "hint"]))
def test_fuzz_board_files(data: bytes, cells: int, command: str, workdir: Path, monkeypatch_module):
    path = workdir / "fuzzed-position"
    path.write_bytes(data)
    args = [command, str(path), "--cells", str(cells), "--time-limit", "300", "--format", "json"]
    code, doc = invoke("position file", args)
    if command == "solve":
        check_position_answer(path, cells, code, doc)
    elif code == 0 and doc is not None and doc["line"]:
        start = Position.from_layout(load_source(str(path))[0], cells)
        assert checker.replay(start.layout, cells, doc["line"]).ok


# --- end to end ----------------------------------------------------------------------------------------


@fuzz(10)
@given(
    args=st.one_of(
        command_line(("solve", "hint", "deal", "daily")),
        st.tuples(st.sampled_from(["solve", "hint", "deal"]), DEAL).map(
            lambda t: [t[0], *SAFE.get(t[0], []), t[1], "--format", "json"]
        ),
    )
)
def test_fuzz_end_to_end(args: list[str], workdir: Path):
    """A handful as a user runs them: the console script, a real stdout, stderr and exit status."""
    args = [a for a in args if "\x00" not in a]  # a command line cannot carry NUL
    start = time.monotonic()
    r = run_cli(*args, cwd=workdir, timeout=BOUND_S)
    doc = check("end to end", args, r.returncode, r.stdout, r.stderr, time.monotonic() - start)
    check_answer(args, r.returncode, doc, workdir)


def test_the_core_refuses_what_the_fuzzers_send_it_directly():
    """The layouts the parsers pass on reach the core well formed; the core's own checks still refuse a
    wrong one with a ValueError (one line), never a crash."""
    for bad in ({"columns": [["AS"]] * 9}, {"columns": [["ZZ"]]}, {"columns": [], "cells": ["AS"] * 9}):
        with pytest.raises(ValueError):
            _core.validate({"cells": [], "foundations": {}, **bad}, 4)
        TRIED["core"] += 1
