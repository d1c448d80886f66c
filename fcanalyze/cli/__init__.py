"""The ``fcanalyze`` command: one click group, one module per command, thin commands over the library.

Exit codes (the contract, kept by `fcanalyze.cli.guard`): 0 success (for ``solve``: solved), 1 a finished
proof said no (``solve``: unsolvable; ``hint``: not winnable; ``verify-unsolvable``: a disagreement),
2 bad input or usage, 3 undecided (a budget ran out), 4 an internal error or a failure of the system,
130 interrupted (Ctrl-C), 143 stopped by SIGTERM, 141 the reader of the output went away (``| head``).
Ctrl-C and SIGTERM stop a search of hours within a fraction of a second (the core's searches watch for
them), and both end a run the same way: workers stopped, what was finished kept, the run resumable.
"""

from __future__ import annotations

import click

from fcanalyze import _core
from fcanalyze.cli import analyze, deal, games, hint, report, solve, summary, verify
from fcanalyze.cli.errors import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_UNDECIDED,
    EXIT_UNSOLVABLE,
    BadInput,
)
from fcanalyze.cli.guard import Group, install_signal_handlers, set_debug

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_BROKEN_PIPE",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "EXIT_UNDECIDED",
    "EXIT_UNSOLVABLE",
    "BadInput",
    "cli",
    "main",
]


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(_core.__version__, "-V", "--version", prog_name="fcanalyze")
@click.option(
    "--debug",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=set_debug,
    help="Print the traceback of an internal error (also FCANALYZE_DEBUG=1).",
)
def cli() -> None:
    """FreeCell deal analysis: Microsoft deals, an exact solver and prover, difficulty tables and the
    Easy/Normal/Hard manifest that game front ends consume."""


# Every command, from the module that defines it (click lists them sorted by name).
cli.add_command(analyze.analyze)
cli.add_command(verify.verify_unsolvable)
cli.add_command(summary.summary)
cli.add_command(report.report)
cli.add_command(games.manifest)
cli.add_command(games.daily)
cli.add_command(deal.deal)
cli.add_command(solve.solve_command)
cli.add_command(hint.hint)
cli.add_command(hint.last_winnable)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the group under the exit-code contract (one line on stderr and the exit code;
    see `fcanalyze.cli.guard`)."""
    install_signal_handlers()
    cli.main(args=argv, prog_name="fcanalyze")
