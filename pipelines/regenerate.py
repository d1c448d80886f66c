"""Regenerate a results directory from nothing: run the pipeline, then the manifest and the summary, and
record how it was made (command, machine, versions, wall time) in PROVENANCE.md.

    python pipelines/regenerate.py [--anew] analyze 1-32000 results/32k [analyze options...]
    python pipelines/regenerate.py [--anew] verify 1-1000000 results/1m [verify-unsolvable options...]

The run resumes if interrupted (run it again with the same arguments). With ``--anew`` (the Makefile's
``results-*`` targets) a directory that holds a finished run is removed first, so that the run starts
from nothing, while one that holds an interrupted run is still continued, not started over. Shard and
run files are written atomically by fcanalyze itself; this script only adds the manifest, summary.md and
PROVENANCE.md.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

FCANALYZE = [str(Path(sys.executable).with_name("fcanalyze"))]
if not Path(FCANALYZE[0]).exists():
    FCANALYZE = [sys.executable, "-m", "fcanalyze"]


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(
            next(
                x for x in Path("/proc/meminfo").read_text().splitlines() if x.startswith("MemTotal")
            ).split()[1]
        )
        mem = f", {kb / 2**20:.0f} GiB memory"
    except (OSError, StopIteration, ValueError):
        pass
    return f"{os.cpu_count()} cores ({cpu}){mem}, {platform.system()} {platform.release()}"


def commit() -> str:
    """The git commit of this checkout (marked when it has uncommitted changes outside results/, which
    the run itself writes or a Makefile target deletes first), if it is one."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ":/", ":(exclude,top)results"],
            cwd=here,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{head}{' (with uncommitted changes)' if dirty else ''}"


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    print("+", shlex.join(cmd), flush=True)
    return subprocess.run(cmd, **kw)


def holds_finished_run(out: Path) -> bool:
    """Whether `out` holds a finished run (its run file says complete)."""
    from fcanalyze import runfile  # this script's interpreter is the one fcanalyze is installed in

    have = runfile.read(out)
    return bool(have and have.get("complete"))


def main() -> int:
    args = sys.argv[1:]
    anew = args[:1] == ["--anew"]
    args = args[1:] if anew else args
    if len(args) < 3 or args[0] not in ("analyze", "verify"):
        print(__doc__, file=sys.stderr)
        return 2
    job, rng, out, extra = args[0], args[1], Path(args[2]), args[3:]
    try:
        if anew and holds_finished_run(out):
            print(f"+ rm -rf {out}  (it holds a finished run: this one starts from nothing)", flush=True)
            shutil.rmtree(out)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    command = "analyze" if job == "analyze" else "verify-unsolvable"
    cmd = [*FCANALYZE, command, rng, "--out", str(out), *extra]
    resumed = (out / "run.json").exists()
    code = commit()
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    shown = ["fcanalyze", command, rng, "--out", str(out), *extra]
    prov = out / "PROVENANCE.md"
    earlier = prov.read_text().split("## Invocations\n", 1)[1].strip() + "\n" if prov.exists() else ""
    if not earlier and resumed:
        earlier = "- earlier invocations: not recorded\n"

    def record(this: str) -> None:
        # Every invocation of a resumed run is kept: which code computed which part, and how long it took.
        text = (
            f"# How {out} was made\n\n"
            f"- command: `{shlex.join(shown)}` (then `fcanalyze manifest` and `fcanalyze summary`), "
            f"via `python {shlex.join(sys.argv)}`\n"
            f"- machine: {machine()}\n- {version}, Python {platform.python_version()}\n\n"
            f"## Invocations\n\n{earlier}- started {stamp}, commit {code}: {this}\n"
        )
        tmp = prov.with_name(prov.name + ".tmp")
        tmp.write_text(text)
        tmp.replace(prov)

    version = run([*FCANALYZE, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    started = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)  # the version check above
    print("+", shlex.join(cmd), flush=True)
    proc = subprocess.Popen(cmd)
    # SIGTERM (a stop by `kill`, or by a scheduler) goes to the run too, and ends this invocation's line
    # like Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: proc.send_signal(signal.SIGTERM))
    # This invocation is on record once the run's directory is (a killed one stays as not finished).
    while proc.poll() is None and not (out / "run.json").exists():
        time.sleep(0.2)
    if (out / "run.json").exists():
        record("did not finish (stopped or killed, or still running)")
    try:
        returncode = proc.wait()
    except KeyboardInterrupt:  # fcanalyze has it too: it stops its workers and exits
        returncode = proc.wait()
    wall = time.monotonic() - started
    # the largest process, workers included; the CPU time of them all (the run's alone)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak_mb = usage.ru_maxrss / 1024
    cpu = usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime
    finished = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    if (out / "run.json").exists():
        record(
            f"ended {finished}, wall time {wall:,.0f} s ({wall / 60:.1f} min), CPU time {cpu:,.0f} s, peak "
            f"memory of the largest process (a worker) {peak_mb:,.0f} MB, exit code {returncode}"
        )
    if job == "verify" and returncode == 1:
        print("verify-unsolvable reported a disagreement or undecided deals (see above)", file=sys.stderr)
    elif returncode != 0:
        return returncode
    if job == "analyze":
        m = run([*FCANALYZE, "manifest", str(out)])
        if m.returncode != 0:
            return m.returncode
    summary = run([*FCANALYZE, "summary", str(out)], capture_output=True, text=True, check=True).stdout
    (out / "summary.md").write_text(summary)
    print(f"wrote {out}/summary.md and {out}/PROVENANCE.md ({wall:,.0f} s)")
    return returncode


if __name__ == "__main__":
    sys.exit(main())
