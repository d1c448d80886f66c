"""The passes of the classification of deals 1-1,000,000 (docs/classes-1m.md), each run in its turn from
what the results directory holds: `make results-1m-classes`.

    python pipelines/classes_1m.py [OUT] [--dry-run] [fcanalyze analyze options, e.g. --workers 1]

Each pass is an `fcanalyze analyze` run through pipelines/regenerate.py, which resumes it where it
stopped and records each invocation in PROVENANCE.md. The first pass gives every search 300,000
positions; each later one searches again (--redo-undecided) the deals the passes before it left without
an exact minimum of cells, with larger budgets. The pass to run is read from OUT/run.json: the pass whose
budgets it has, while that pass is unfinished; the next one once it is finished. So one command goes on
from any stop, on any machine, and runs the passes in order to the last; run again after the last, it
says so and does nothing.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from fcanalyze import runfile

HERE = Path(__file__).resolve().parent
RANGE = "1-1000000"
#: Options of every pass: up to 5 cells (the 8 deals unsolvable with 4 get their class), 10,000-deal
#: shards, the lengths of the lines but not their moves (the repository stays small), lines not shortened
#: (pipelines/relines.py stores short ones after the last pass).
COMMON = ["--max-cells", "5", "--shard-size", "10000", "--no-solutions", "--shorten-positions", "0"]
#: The wide beams of the passes after the fourth: all three (`fcanalyze analyze --help`).
GIANTS = ["--wide-beam-positions", "92000000"]
#: The order of the last pass: first the ten cell counts a wider beam than the cascade's first won
#: outside the run (docs/classes-1m.md, "Half of pass 5 won by a wider beam"; each is searched again
#: and its line replayed like every other), so the games' table loses its cheapest undecided deals in
#: the first hours; last 384243 with 2 cells, the proof most likely to outgrow the disk.
ORDER = [
    "--first",
    "204545,266829,295997,353380,425171,433246,543724,569017,649257,654786",
    "--last",
    "384243",
]
#: The passes, lightest first: positions a search, memory of a proof (MB), and options of their own.
#: The second holds 3,000,000 positions within 1 GB; the third's lean prover holds 30,000,000 within
#: 2 GB, so those proofs end in memory; the fourth lets a proof go to 5 billion positions (deal 982 with
#: 2 cells has 3.1 billion), on disk past 8 GB, one proof at a time so that two giants never share a
#: disk. The fifth takes what the fourth left (its budget, or a disk filled) to 20 billion, and the
#: sixth has no budget but the disk: 384243 with 2 cells, which ran a 512 GB machine out of memory past
#: 13.7 billion positions and has 24.2 billion searched here, comes last. Both keep the fourth's 8 GB:
#: a layered proof goes on from its checkpoint only with the memory it was saved with, so the proofs
#: the fourth left at its budget go on where they stopped. Their cell counts are known giants, so the
#: wide beams before a proof include the one of 3,000,000 (it wins two of those the fourth left, at
#: about 70 s of a core where it finds nothing: docs/classes-1m.md).
#:
#: The seventh searches again what the sixth left with 16 GB: in the sixth, deal 155219 with 1 cell
#: reached its won position twice without a line (the way back through a group of 92 million
#: positions did not fit in 8 GB). Since 71ae847 that way back takes some 25 bytes a position instead
#: of 100, and 16 GB holds 650 million: the largest group of 155219's search for its line, in layer
#: 57, has 640 million (and since 66c5265 a group the memory does not hold is searched on disk). The
#: larger memory also keeps more of a giant proof's groups in their sets. A proof left at the disk's
#: limit begins again there.
#:
#: The fifth is cut short (`cut`): left unfinished, or finished, its run goes on as the sixth. Its
#: proofs stopped at 20 billion positions would each keep some 10 GB of files for the sixth, and the
#: disk keeps only a few such (`journal.KEEP_FREE`): the sixth would search most of them again from
#: nothing. So from stop 67 each proof runs to its end in one pass, in the order of `ORDER`.
PASSES: list[dict[str, Any]] = [
    {"max_positions": 300_000, "max_memory_mb": 1024, "options": []},
    {"max_positions": 3_000_000, "max_memory_mb": 1024, "options": []},
    {"max_positions": 30_000_000, "max_memory_mb": 2048, "options": []},
    {"max_positions": 5_000_000_000, "max_memory_mb": 8192, "options": ["--workers", "1"]},
    {
        "max_positions": 20_000_000_000,
        "max_memory_mb": 8192,
        "options": [*GIANTS, "--workers", "1"],
        "cut": True,
    },
    {
        "max_positions": 1_000_000_000_000,
        "max_memory_mb": 8192,
        "options": [*GIANTS, "--workers", "1", *ORDER],
    },
    {
        "max_positions": 1_000_000_000_000,
        "max_memory_mb": 16384,
        "options": [*GIANTS, "--workers", "1", "--first", "155219", "--last", "384243"],
    },
]


def next_pass(run: dict[str, Any] | None) -> int | None:
    """The index in `PASSES` of the pass to run for a directory whose run file is `run` (None: no run
    yet), or None when the last pass is finished; a pass cut short (``cut``) goes on as the next one.
    A run file whose budgets are those of no pass is an error (a directory made by hand, or by another
    plan)."""
    if run is None:
        return 0
    have = (run["config"]["max_positions"], run["config"]["max_memory_mb"])
    for i, p in enumerate(PASSES):
        if (p["max_positions"], p["max_memory_mb"]) == have:
            if not run.get("complete") and not p.get("cut"):
                return i
            return i + 1 if i + 1 < len(PASSES) else None
    raise ValueError(
        f"its run file has budgets of no pass of this plan ({have[0]:,} positions, {have[1]} MB)"
    )


def command(out: Path, i: int, extra: list[str]) -> list[str]:
    """The command that runs (or goes on with) pass `i` into `out`."""
    p = PASSES[i]
    budgets = ["--max-positions", str(p["max_positions"]), "--max-memory", str(p["max_memory_mb"])]
    redo = ["--redo-undecided"] if i > 0 else []
    return [
        sys.executable,
        str(HERE / "regenerate.py"),
        "analyze",
        RANGE,
        str(out),
        *COMMON,
        *budgets,
        *redo,
        *p["options"],
        *extra,
    ]


def main(argv: list[str]) -> int:
    dry = "--dry-run" in argv
    args = [a for a in argv if a != "--dry-run"]
    out = Path(args.pop(0)) if args and not args[0].startswith("-") else Path("results/1m-classes")
    ran: set[int] = set()
    while True:
        try:
            i = next_pass(runfile.read(out))
        except (ValueError, KeyError) as e:
            print(f"classes_1m: {out}: {e}", file=sys.stderr)
            return 2
        if i is None or i in ran:
            # After the last pass; or a pass that found nothing left to search (its budgets were not
            # raised), after which no later pass would find anything either.
            print(f"{out}: every pass of the plan is done ({len(PASSES)} passes)")
            return 0
        cmd = command(out, i, args)
        print(f"{out}: pass {i + 1} of {len(PASSES)}: {shlex.join(cmd[1:])}", flush=True)
        if dry:
            return 0
        ran.add(i)
        rc = subprocess.call(cmd)
        if rc != 0:
            return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
