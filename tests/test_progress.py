"""The progress of a run tells the truth: plain lines in a log, what a resumed run kept, an estimate of the
time left that knows the heavy tail, the proof in progress named from its checkpoint; and shell completion
as docs/completion.md shows it."""

from __future__ import annotations

import io
import itertools
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, fcanalyze_command, run_cli

from fcanalyze import runner
from fcanalyze.cli import progress
from fcanalyze.cli.progress import (
    Progress,
    duration,
    estimate,
    parse_checkpoint,
    read_checkpoint,
    search_line,
)
from fcanalyze.engines import SerialEngine
from fcanalyze.jobs import analyze as analyze_job
from fcanalyze.runner import Running

ARGS = ["--max-positions", "500000", "--shard-size", "8"]


def test_a_log_gets_plain_lines_and_no_carriage_returns(tmp_path):
    """stderr to a file: a line at each shard written (and every few seconds), with the deals, shards,
    classes so far, search time and the estimate; no bar, no carriage return."""
    log = tmp_path / "log"
    with open(log, "w") as f:
        done = subprocess.run(
            [*fcanalyze_command(), "analyze", "1-24", "--out", str(tmp_path / "o"), *ARGS, "--workers", "2"],
            stdout=subprocess.PIPE,
            stderr=f,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0
    text = log.read_text()
    assert "\r" not in text
    lines = text.splitlines()
    assert len(lines) >= 3, text  # the 3 shards
    line = re.compile(
        r"\d\d:\d\d:\d\d analyze: \d+ of 24 deals, \d of 3 shards(, \w+ \d+)*, search time \d+ \w+, "
        r"(ETA .*|all deals computed)$"
    )
    assert all(line.match(x) for x in lines), text
    assert "analyze: 24 of 24 deals, 3 of 3 shards" in lines[-1] and lines[-1].endswith("all deals computed")
    # --quiet stays silent.
    done = run_cli("analyze", "1-24", "--out", str(tmp_path / "q"), *ARGS, "--workers", "2", "-q")
    assert done.returncode == 0 and done.stderr == "" and done.stdout == ""


class _Stop(Exception):
    pass


class StopAfterOneShard(SerialEngine):
    """Runs the first shard whole, and one deal of the second (journaled), then stops."""

    def run(self, fn, tasks, on_progress, on_record=None):
        first = []

        def stop(task, record):
            on_record(task, record)
            first[:] = first or [task.block]
            if task.block != first[0]:
                raise _Stop

        yield from super().run(fn, itertools.islice(tasks, 2), on_progress, stop)


@pytest.mark.parametrize("command", ["analyze", "verify-unsolvable"])
def test_a_resumed_run_says_what_it_kept(tmp_path, command):
    out = tmp_path / "o"
    if command == "analyze":
        with pytest.raises(_Stop):
            runner.run(
                "analyze",
                [(1, 20)],
                out,
                StopAfterOneShard(),
                analyze_job.config(max_positions=500000, shard_size=8),
            )
        # Shard 1-8, and deal 9 journaled: counted again as its shard goes on, and the display says so.
        kept = (
            "9 of 20 deals already done (1 shard complete, 1 deal of started shards, counted as those go on)"
        )
        args = ["analyze", "1-20", "--out", str(out), *ARGS]
    else:
        from fcanalyze.jobs import verify as verify_job

        cfg = verify_job.config(shard_size=8)
        with pytest.raises(_Stop):
            runner.run("verify", [(1, 20)], out, _StopAfterShards(1), cfg)
        kept = "8 of 20 deals already done (1 shard complete)"  # verify resumes whole shards
        args = ["verify-unsolvable", "1-20", "--out", str(out), "--shard-size", "8"]
    done = run_cli(*args, "--workers", "1")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == f"resuming: {kept}"
    # Run again, complete: nothing is resumed, nothing is said.
    done = run_cli(*args, "--workers", "1")
    assert done.returncode == 0 and "resuming" not in done.stderr


class _StopAfterShards(SerialEngine):
    def __init__(self, n: int):
        super().__init__()
        self.n = n

    def run(self, fn, tasks, on_progress, on_record=None):
        for i, pair in enumerate(super().run(fn, tasks, on_progress, on_record)):
            if i == self.n:
                raise _Stop
            yield pair


def test_the_estimate_rule():
    # Nothing computed yet: unknown. Nothing left: none.
    assert estimate(100, 2, 0, 0.0, []) is None
    assert estimate(0, 2, 10, 5.0, []).seconds == 0
    # 10 deals in 20 s: 2 s each; 90 left on 2 workers.
    e = estimate(90, 2, 10, 20.0, [])
    assert (e.seconds, e.lower_bound) == (90.0, False)
    # A running search counts at its time so far: 2 running at 1 s and 7 s, 12 deals of 92 left.
    # mean (20 + 8) / 12; work: 90 not started at the mean, and what the 1 s search lacks of it.
    mean = 28 / 12
    e = estimate(92, 2, 10, 20.0, [1.0, 7.0])
    assert e.seconds == pytest.approx((90 * mean + (mean - 1)) / 2) and not e.lower_bound
    # A search past 10 times the mean of the finished deals and past 30 s: the heavy tail, a lower bound
    # naming it; one past 10 times the mean but under 30 s is not.
    assert not estimate(50, 2, 10, 20.0, [25.0]).lower_bound
    e = estimate(50, 2, 10, 20.0, [5.0, 840.0, 31.0])
    assert e.lower_bound and e.tail == 1
    # The workers share the work, but no more of them than deals left.
    assert estimate(1, 8, 10, 20.0, []).seconds == 2.0


def test_the_display_of_the_estimate():
    p = Progress(1000, ("easy",), quiet=False, desc="analyze", stream=io.StringIO())
    assert p.eta([]) == "ETA unknown"
    p.attach(lambda: [], 2, 10)
    p.finished(100, 100 * 6_000.0)  # 6 s a deal: 900 left on 2 workers, 45 min
    assert p.eta([]) == "ETA 45 min"
    slow = Running(982, (982, 982), 14 * 60.0)
    # Counted at its 14 min so far, it raises the mean to 14.3 s: 899 deals of it on 2 workers, at least.
    assert p.eta([slow]) == "ETA at least 1 h 46 min (heavy tail: deal 982 running 14 min)"
    p.finished(899, 899 * 10.0)
    assert p.eta([slow]) == "ETA unknown (heavy tail: deal 982 running 14 min)"
    assert p.eta([Running(982, (982, 982), 1.0)]) == "ETA under a minute"
    p.finished(1, 0.0)
    assert p.eta([]) == "all deals computed"
    p.close()
    assert [duration(s) for s in (4, 59.6, 61, 3 * 3600 + 5 * 60, 50 * 3600)] == [
        "4 s",
        "1 min",
        "1 min",
        "3 h 05 min",
        "2 d 02 h",
    ]


def test_a_long_search_is_named_from_its_layered_checkpoint(tmp_path):
    """Deal 10996 with 1 cell in 64 MB goes to the layered proof (as in test_classify_core): its checkpoint,
    read while it runs, gives the cells, layer and positions of the line naming it."""
    ckpt = tmp_path / "10996"
    code = (
        "import sys; from fcanalyze import _core; "
        "_core.classify(10996, 1, max_memory_mb=64, checkpoint_dir=sys.argv[1])"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(ckpt)], cwd=tmp_path)
    state = ckpt / "cells-1" / "checkpoint"
    found = None
    try:
        deadline = time.monotonic() + 300
        # The first checkpoints come before any position is counted: wait for one past them.
        while time.monotonic() < deadline and proc.poll() is None and not (found and found.positions):
            time.sleep(0.05)
            found = read_checkpoint(ckpt)
        assert state.exists(), "no checkpoint"
    finally:
        proc.kill()
        proc.wait()
    text = state.read_text()
    assert found is not None and found.cells == 1
    assert 0 < found.layer < 105 and found.positions > 0
    layer = int(re.search(r"^layer (\d+)$", text, re.M).group(1))
    done = int(re.search(r"^done (\d+)$", text, re.M).group(1))
    assert parse_checkpoint(text, 1).layer == layer and parse_checkpoint(text, 1).positions >= done
    line = search_line(Running(10996, (10996, 10996), 14 * 60.0, ckpt), 4)
    assert re.fullmatch(
        r"deal 10996, 1 cell: layered proof at layer \d+ \(of 0-104\), [\d,]+ positions at its last "
        r"checkpoint; searching for 14 min",
        line,
    ), line
    # The search for the line of a win found without one keeps its checkpoint in cells-K/line, and the
    # proof's positions in cells-K/won-at: the line counts both.
    won = tmp_path / "won" / "cells-1" / "line"
    won.mkdir(parents=True)
    (won / "checkpoint").write_text(text)
    running = Running(10996, (10996, 10996), 60.0, tmp_path / "won")
    assert search_line(running, 4) == "deal 10996, up to 4 cells: searching for 1 min", "no won-at"
    won_at = "fcanalyze-layered-won-at/1\nproof x cells=1\ntarget 1 2 3\npositions 2957086286\nms 1\n"
    (won.parent / "won-at").write_text(won_at)
    line = search_line(running, 4)
    positions = 2957086286 + parse_checkpoint(text, 1).positions
    assert line == (
        f"deal 10996, 1 cell: search for the line of its win at layer {layer} (of 0-104), "
        f"{positions:,} positions (the proof's too) at its last checkpoint; searching for 1 min"
    ), line
    # While the line is traced back through a group on disk (its levels beside the checkpoint), the
    # line says so: the checkpoint stays as it was, for minutes or hours.
    chain = ROOT / "crates/fcanalyze-core/src/layered/chain.rs"
    assert f'ON_DISK: &str = "{progress.ON_DISK}"' in chain.read_text()
    (won / progress.ON_DISK).mkdir()
    assert search_line(running, 4) == line.replace(
        "checkpoint;", "checkpoint, now tracing its line back through a group on disk;"
    )
    # A torn or foreign file is not read; without a checkpoint the line says how long it has run.
    assert parse_checkpoint(text[: len(text) // 2], 1) is None
    assert parse_checkpoint("something else\nend\n", 1) is None
    assert search_line(Running(617, (617, 617), 125.0, tmp_path / "617"), 4) == (
        "deal 617, up to 4 cells: searching for 2 min"
    )
    assert (
        search_line(Running(None, (1, 100), 600.0), 4)
        == "a deal of 1-100, up to 4 cells: searching for 10 min"
    )


def test_the_parsing_of_a_checkpoint_within_a_layer():
    """Within a layer the positions of the groups finished and searched by levels count too."""
    text = (
        "fcanalyze-layered-checkpoint/4\nidentity x cells=2\nlayer 53\ndone 1000\nexpanded 900\n"
        "elapsed_ms 5.5\npeak 1 2 3 4 5 6 7 8\nfiles 0 0 0 0\nseeds 53 100 0\n"
        "finished 7 1,2,3,4,5,6 250\nlevels 9 1,2,3,4,5,6 4000 level-1 10 - 0\nend\n"
    )
    assert parse_checkpoint(text, 2) == progress.Checkpoint(2, 53, 5250)
    # The format the core writes (its checkpoint.rs), which a change of format must change here too.
    core = ROOT / "crates/fcanalyze-core/src/layered/checkpoint.rs"
    assert f'CHECKPOINT_FORMAT: &str = "{progress.CHECKPOINT_FORMAT}"' in core.read_text()


def test_a_long_search_gets_its_line_in_the_log(tmp_path, monkeypatch):
    """In-process, with the thresholds made short: a search running past LONG_SEARCH gets a line naming it,
    and the plain lines come every LOG_EVERY seconds while it runs."""
    monkeypatch.setattr(progress, "LOG_EVERY", 0.2)
    monkeypatch.setattr(progress, "LONG_SEARCH", 0.3)
    stream = io.StringIO()
    p = Progress(3, ("easy",), quiet=False, desc="analyze", max_cells=4, stream=stream)
    started = time.monotonic()
    p.attach(lambda: [Running(140, (140, 140), time.monotonic() - started)], 1, 1)
    time.sleep(1.0)
    p.close()
    lines = stream.getvalue().splitlines()
    assert sum("analyze: 0 of 3 deals, 0 of 1 shards, search time" in x for x in lines) >= 2, lines
    named = [x for x in lines if "deal 140, up to 4 cells: searching for" in x]
    assert len(named) == 1, lines  # at most once a SEARCH_EVERY


def test_shell_completion_as_documented():
    """The installed command prints the completion script of each shell docs/completion.md names, and
    completes a command's name."""
    doc = (ROOT / "docs" / "completion.md").read_text()
    env = {**os.environ, "PATH": f"{Path(fcanalyze_command()[0]).parent}{os.pathsep}{os.environ['PATH']}"}
    for shell, marker in [
        ("bash", "complete -o nosort -F"),
        ("zsh", "#compdef fcanalyze"),
        ("fish", "complete"),
    ]:
        assert f"_FCANALYZE_COMPLETE={shell}_source fcanalyze" in doc
        done = subprocess.run(
            [*fcanalyze_command()],
            env={**env, "_FCANALYZE_COMPLETE": f"{shell}_source"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0 and marker in done.stdout and "_fcanalyze_completion" in done.stdout
    done = subprocess.run(
        [*fcanalyze_command()],
        env={
            **env,
            "_FCANALYZE_COMPLETE": "bash_complete",
            "COMP_WORDS": "fcanalyze verify",
            "COMP_CWORD": "1",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.split() == ["plain,verify-unsolvable"]


@pytest.mark.parametrize("records", [True, False], ids=["records", "dropped"])
def test_the_watch_hears_the_search_time_of_every_deal_computed(tmp_path, records):
    """From each deal's record, or, when an engine drops the records (the Dask engine does), from each
    task's searches table: the same deals and search time, those of the tables."""
    import pandas as pd

    class Engine(SerialEngine):
        def run(self, fn, tasks, on_progress, on_record=None):
            yield from super().run(fn, tasks, on_progress, on_record if records else None)

    class Heard(runner.Watch):
        deals, ms = 0, 0.0

        def finished(self, deals: int, cpu_ms: float) -> None:
            self.deals += deals
            self.ms += cpu_ms

    heard = Heard()
    config = analyze_job.config(max_positions=500000, shard_size=8)
    runner.run("analyze", [(1, 12)], tmp_path / "o", Engine(), config, watch=heard)
    searches = pd.read_parquet(tmp_path / "o" / "searches")
    assert heard.deals == 12 and heard.ms == pytest.approx(searches["elapsed_ms"].sum())


def test_the_deal_in_progress_is_named_from_the_task_s_order(tmp_path):
    """A task that resumed deals 1 and 2 of 1-4 searches 4 next (3, which the stop most likely cut short,
    goes last: jobs.analyze.order), even before its worker has counted the resumed ones; then 3. A verify
    task names the chunk of deals it is on."""
    from fcanalyze.engines import InFlight, Task

    config = analyze_job.config(max_positions=500000, shard_size=4)
    resumed = tuple({"deal": d} for d in (1, 2))
    task = Task("analyze", config, "0000000001-0000000004", ((1, 4),), resume=resumed, scratch=str(tmp_path))
    flight: list[InFlight] = []

    class Engine(SerialEngine):
        def in_flight(self):
            return flight

    searches = runner._Searches(runner.JOBS["analyze"], Engine(), tmp_path, [task])
    assert list(searches) == [task]
    now = time.monotonic()
    for reported, deal in [(0, 4), (2, 4), (3, 3)]:
        flight[:] = [InFlight(task, now - 5, now - 5, reported)]
        (r,) = searches.running()
        assert (r.deal, r.scratch) == (deal, tmp_path / str(deal)) and r.seconds >= 5
    flight[:] = [InFlight(task, now, now, 4)]
    assert searches.running() == []
    vtask = Task("verify", {}, "0000000001-0000001000", ((1, 1000),))
    searches = runner._Searches(runner.JOBS["verify"], Engine(), None, [vtask])
    list(searches)
    flight[:] = [InFlight(vtask, now, now, 200)]
    (r,) = searches.running()
    assert (r.deal, r.deals, r.scratch) == (None, (201, 300), None)
