"""Shared fixtures: paths, the installed ``fcanalyze`` command, Freecell Solver when present."""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# The property tests run the same examples every time (CI must not pass or fail by chance); set
# HYPOTHESIS_PROFILE=explore to draw new ones while working on the rules.
settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
FC_SOLVE = shutil.which("fc-solve")

needs_fcs = pytest.mark.skipif(
    FC_SOLVE is None, reason="Freecell Solver (freecell-solver-bin) is not installed"
)


def load_file(name: str, path: Path):
    """The Python file at `path` loaded as module `name` (a pipeline script, which is no package's), and
    registered under that name (a dataclass looks its module up there)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def fcanalyze_command() -> list[str]:
    """The ``fcanalyze`` console script installed beside this Python, as the README tells users to run it."""
    script = Path(sys.executable).with_name("fcanalyze")
    return [str(script)] if script.exists() else [sys.executable, "-m", "fcanalyze"]


def sigint_as_in_a_terminal() -> None:
    """``preexec_fn`` for a command that a test stops with SIGINT as Ctrl-C would: a shell started in the
    background (a CI job, `cmd &`) hands its children SIGINT ignored, and Python then leaves it ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_cli(*args: str, input: str | None = None, timeout: float = 300, cwd: Path | None = None):
    """Run the installed command as a subprocess; returns the CompletedProcess (text mode)."""
    return subprocess.run(
        [*fcanalyze_command(), *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


def load_vectors() -> dict[int, list[list[str]]]:
    """SPEC's deal vectors (docs/spec.md §1: pinned layouts at both ends of the deal range)."""
    out = {}
    for line in (DATA / "deals.txt").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        n, layout = line.split(":", 1)
        out[int(n)] = [col.split() for col in layout.split("|")]
    return out
