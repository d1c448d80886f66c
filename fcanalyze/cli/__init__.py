"""The ``fcanalyze`` command: one click group, one module per command, thin commands over the library.

Exit codes: 0 success (for ``solve``: solved), 1 ``solve`` proved the position unsolvable,
2 bad input or usage, 3 ``solve`` ran out of budget (undecided), 4 an internal error (a bug),
130 interrupted (Ctrl-C), 143 stopped by SIGTERM. Both stop a search of hours within a fraction of a
second (the core's searches watch for them), and both end a run the way Ctrl-C does: workers stopped,
what was finished kept, the run resumable.
"""

from __future__ import annotations

import signal
import sys

import click

from fcanalyze import _core
from fcanalyze.cli import analyze, deal, games, hint, report, solve, summary, verify
from fcanalyze.cli.errors import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_UNDECIDED,
    EXIT_UNSOLVABLE,
    BadInput,
)

__all__ = [
    "EXIT_BAD_INPUT",
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


class Terminated(KeyboardInterrupt):
    """SIGTERM (from `kill`, a scheduler, a shutting-down machine), raised like Ctrl-C."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(_core.__version__, "--version", prog_name="fcanalyze")
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
    """Entry point: run the group, turning every error into one line on stderr and an exit code."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        rv = cli.main(args=argv, prog_name="fcanalyze", standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt) as e:
        # click turns a KeyboardInterrupt into Abort (the original is its cause).
        if isinstance(e, Terminated) or isinstance(e.__cause__, Terminated):
            click.echo("fcanalyze: stopped (SIGTERM)", err=True)
            sys.exit(EXIT_TERMINATED)
        click.echo("fcanalyze: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as e:
        code = EXIT_BAD_INPUT if isinstance(e, click.UsageError) else e.exit_code
        click.echo(f"fcanalyze: error: {e.format_message()}", err=True)
        sys.exit(code)
    except _core.InternalError as e:
        click.echo(f"fcanalyze: internal error (please report it): {e}", err=True)
        sys.exit(EXIT_INTERNAL)
    sys.exit(rv if isinstance(rv, int) else EXIT_OK)
