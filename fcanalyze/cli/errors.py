"""The command line's exit codes and its error for bad input (`fcanalyze.cli.guard` says what each means)."""

from __future__ import annotations

import signal

import click

EXIT_OK = 0
EXIT_UNSOLVABLE = 1
EXIT_BAD_INPUT = 2
EXIT_UNDECIDED = 3
EXIT_INTERNAL = 4
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 128 + signal.SIGTERM
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


class BadInput(click.ClickException):
    """Bad input from the user: one line on stderr, exit code 2."""

    exit_code = EXIT_BAD_INPUT
