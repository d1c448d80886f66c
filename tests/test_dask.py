"""The Dask engine on a real cluster: a ``dask scheduler`` and two ``dask worker`` processes on loopback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from conftest import run_cli
from test_pipeline import ARGS, RANGE, assert_same_tables

from fcanalyze import runfile

pytest.importorskip("dask.distributed")
# `python -m dask scheduler|worker`: the dask command of this very environment (workers need fcanalyze).
DASK = [sys.executable, "-m", "dask"]


@pytest.fixture
def cluster(tmp_path):
    """A scheduler and two single-threaded workers without nannies (a killed worker stays dead)."""
    info = tmp_path / "scheduler.json"
    procs = [
        subprocess.Popen(
            [
                *DASK,
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(info),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=tmp_path,  # not the source tree: the installed package must be imported
        )
    ]
    deadline = time.monotonic() + 60
    while not info.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    address = json.loads(info.read_text())["address"]
    for _ in range(2):
        procs.append(
            subprocess.Popen(
                [
                    *DASK,
                    "worker",
                    address,
                    "--nthreads",
                    "1",
                    "--no-nanny",
                    "--no-dashboard",
                    "--host",
                    "127.0.0.1",
                    "--memory-limit",
                    "0",
                    "--death-timeout",
                    "60",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=tmp_path,
            )
        )
    from dask.distributed import Client

    with Client(address, timeout="30s") as c:
        c.wait_for_workers(2, timeout=60)
    yield address, procs[1:]
    for p in procs:
        p.kill()
        p.wait()


@pytest.fixture(scope="module")
def local_reference(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dask-ref") / "run"
    assert run_cli("analyze", RANGE, "--out", str(out), *ARGS, "--workers", "2").returncode == 0
    return out


@pytest.mark.slow
def test_cluster_gives_the_local_tables(cluster, local_reference, tmp_path):
    address, _ = cluster
    out = tmp_path / "dask"
    r = run_cli("analyze", RANGE, "--out", str(out), *ARGS, "--engine", "dask", "--scheduler", address)
    assert r.returncode == 0, r.stderr
    assert_same_tables(local_reference, out)
    assert runfile.read(out)["complete"]


@pytest.mark.slow
def test_killing_a_worker_loses_no_rows(cluster, tmp_path):
    address, workers = cluster
    rng = "1-60"
    ref = tmp_path / "ref"
    assert run_cli("analyze", rng, "--out", str(ref), *ARGS, "--workers", "2").returncode == 0
    out = tmp_path / "dask"
    proc = subprocess.Popen(
        [
            *__import__("conftest").fcanalyze_command(),
            "analyze",
            rng,
            "--out",
            str(out),
            *ARGS,
            "--engine",
            "dask",
            "--scheduler",
            address,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        run = runfile.read(out) if (out / "run.json").exists() else None
        if run and run["shards"]:
            break
        time.sleep(0.05)
    victim = psutil.Process(workers[0].pid)
    victim.send_signal(signal.SIGKILL)  # mid-run: the other worker must finish the job
    _stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr
    assert workers[0].wait(timeout=10) == -signal.SIGKILL
    run = runfile.read(out)
    assert run["complete"] and sum(s["deals"] for s in run["shards"].values()) == 60
    assert_same_tables(ref, out)


def test_without_dask_the_engine_says_how_to_install(tmp_path):
    code = (
        "import sys; sys.modules['dask'] = None; sys.modules['dask.distributed'] = None\n"
        "from fcanalyze.cli import main\n"
        f"main(['analyze', '1-2', '--out', {str(tmp_path / 'x')!r}, '--engine', 'dask'])\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 2
    assert "pip install 'fcanalyze[dask]'" in r.stderr
