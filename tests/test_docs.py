"""The docs keep up with the code: every command is in the README, every README example runs as shown,
every citation of the rules resolves to a section of docs/spec.md, and nothing points outside the
repository."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from fcanalyze.cli import cli

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SPEC = ROOT / "docs" / "spec.md"

#: README examples the tests do not run: the main job takes hours, and `make test` runs this file.
LONG = ("make install run", "make test")

#: Directories that are not the repository's own files.
NOT_OURS = {
    ".git",
    "target",
    ".venv",
    "venv",
    "out",
    "build",
    "dist",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    "node_modules",
}

#: The sections of docs/spec.md that the code cites by number, with a word of each title: their numbers
#: and meanings must not change.
SPEC_SECTIONS = {
    1: "deals",
    2: "rules",
    3: "outcomes",
    4: "difficulty",
    5: "solutions",
    6: "published",
    7: "freecell solver",
}

#: A citation of the rules: "SPEC §2", "SPEC §2-§3" (or an en dash), "SPEC §2 and §5", "docs/spec.md §6",
#: "spec §1".
CITATION = re.compile(
    r"(?i)\bspec(?:\.md\)?)?\s*(§\s*\d+(?:\.\d+)*(?:\s*(?:[-\u2013,]|and|or)\s*§\s*\d+(?:\.\d+)*)*)"
)


def repository_files(suffixes: tuple[str, ...] | None = None) -> Iterator[Path]:
    """The repository's files (those with `suffixes` only, if given), build products and caches left out."""
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = sorted(d for d in dirnames if d not in NOT_OURS and not d.endswith(".egg-info"))
        for name in sorted(filenames):
            path = Path(dirpath, name)
            if suffixes is None or path.suffix in suffixes:
                yield path


def console_examples() -> list[tuple[str, int]]:
    """The README's example commands (``$ `` lines of its ```console blocks), each with the exit code it
    shows (a trailing ``# exit code N``; 0 when none is shown)."""
    examples = []
    for block in re.findall(r"^```console\n(.*?)^```", README.read_text(), flags=re.M | re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                shown = re.search(r"#\s*exit code (\d+)", line)
                examples.append((line[2:].strip(), int(shown.group(1)) if shown else 0))
    return examples


def without_comment(command: str) -> str:
    return " ".join(shlex.split(command, comments=True))


def command_paths(group: click.Group, prefix: tuple[str, ...] = ()) -> Iterator[str]:
    """Every command and subcommand of the click group, as typed after ``fcanalyze``."""
    ctx = click.Context(group, info_name="fcanalyze")
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        path = (*prefix, name)
        yield " ".join(path)
        if isinstance(command, click.Group):
            yield from command_paths(command, path)


def test_readme_documents_every_command() -> None:
    text = README.read_text()
    paths = list(command_paths(cli))
    assert paths, "the click group lists no commands"
    missing = [p for p in paths if not re.search(rf"\bfcanalyze {re.escape(p)}(?![\w-])", text)]
    assert not missing, f"commands not in README.md: {missing}"


def test_readme_examples_every_command() -> None:
    """Each command has an example in a console block, not only a mention."""
    run = [without_comment(c) for c, _ in console_examples()]
    missing = [
        p
        for p in command_paths(cli)
        if not any(re.match(rf"fcanalyze {re.escape(p)}(?![\w-])", c) for c in run)
    ]
    assert not missing, f"commands without a README example: {missing}"


def test_readme_setup_commands() -> None:
    """The two set-up commands stay exactly these: CI runs `make test` as the README's test command."""
    shown = [without_comment(c) for c, _ in console_examples()]
    assert [c for c in shown if c in LONG] == list(LONG)


def test_readme_length() -> None:
    assert len(README.read_text().split()) <= 1500


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the examples run, as from the repository's root: `results/` is there (linked), `out/` is new."""
    path = tmp_path_factory.mktemp("readme")
    (path / "results").symlink_to(ROOT / "results")
    return path


def example_env(workdir: Path) -> dict[str, str]:
    """The environment of an example: the `fcanalyze` command of this Python first on the PATH."""
    script = Path(sys.executable).with_name("fcanalyze")
    if script.exists():
        bin_dir = script.parent
    else:
        bin_dir = workdir / "bin"
        bin_dir.mkdir(exist_ok=True)
        wrapper = bin_dir / "fcanalyze"
        wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m fcanalyze "$@"\n')
        wrapper.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


# The examples run in the README's order, in one directory: `manifest out/20` reads what `analyze` wrote.
@pytest.mark.parametrize(("command", "exit_code"), console_examples(), ids=lambda v: str(v))
def test_readme_example_runs(command: str, exit_code: int, workdir: Path) -> None:
    if without_comment(command) in LONG:
        pytest.skip("long: not run by the tests")
    done = subprocess.run(
        command,
        shell=True,
        cwd=workdir,
        env=example_env(workdir),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == exit_code, f"$ {command}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert done.stdout, f"$ {command} printed nothing"


def test_readme_python_example_runs() -> None:
    blocks = re.findall(r"^```python\n(.*?)^```", README.read_text(), flags=re.M | re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def spec_headings() -> dict[str, str]:
    """The numbered headings of docs/spec.md: `## n. Title` and `### n.m Title`, by number."""
    found = {}
    for line in SPEC.read_text().splitlines():
        heading = re.match(r"## (\d+)\. (.+)", line) or re.match(r"### (\d+\.\d+)\.? (.+)", line)
        if heading:
            found[heading.group(1)] = heading.group(2)
    return found


def test_spec_sections_keep_their_numbers() -> None:
    headings = spec_headings()
    top = {int(n): title for n, title in headings.items() if "." not in n}
    assert sorted(top) == sorted(SPEC_SECTIONS)
    for n, word in SPEC_SECTIONS.items():
        assert word in top[n].lower(), f"docs/spec.md §{n} is {top[n]!r}, cited as the one on {word}"


def test_spec_citations_resolve() -> None:
    headings = spec_headings()
    cited = 0
    unresolved = []
    for path in repository_files((".rs", ".py", ".pyi", ".md")):
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for match in CITATION.finditer(line):
                for number in re.findall(r"\d+(?:\.\d+)*", match.group(1)):
                    cited += 1
                    if number not in headings:
                        unresolved.append(f"{path.relative_to(ROOT)}:{lineno}: {match.group(0)}")
    assert cited > 50, "the citations of the rules were not found"
    assert not unresolved, "citations with no section in docs/spec.md:\n" + "\n".join(unresolved)


def test_docs_links_resolve() -> None:
    """Relative links of README.md, BENCHMARKS.md and docs/ lead to files of the repository."""
    broken = []
    for doc in [README, ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", doc.read_text()):
            if "://" not in target and not (doc.parent / target).exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
    assert not broken, broken


def test_nothing_points_outside_the_repository() -> None:
    # Built from parts, so that this file does not name them itself.
    outside = [s.encode() for s in ("../" + "shared", "shared/" + "SPEC", "shared/" + "SEARCH")]
    found = [
        str(path.relative_to(ROOT))
        for path in repository_files()
        if any(s in path.read_bytes() for s in outside)
    ]
    assert not found, f"files that point outside the repository: {found}"
