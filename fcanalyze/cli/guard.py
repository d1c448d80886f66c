"""The exit-code contract, kept in one place: every command runs inside `guarded`.

Scripts and games read the exit code, so each one means one thing:

- 0 done (``solve``: solved; ``hint``: winnable), 3 undecided (a budget ran out);
- 1 only a finished proof: ``solve`` proved the position unsolvable, ``hint`` proved it not winnable,
  ``verify-unsolvable`` found a disagreement (commands return it; nothing else may);
- 2 bad input or usage, or an output the user must make room for: one line on stderr (every
  `click.ClickException`, `BadInput` included; an output that cannot be written, ``deal 1 > /dev/full``,
  and a full or read-only disk: the run keeps what it finished, and the same command resumes);
- 4 anything else: an internal error (a bug: any other exception, a failed replay, a panic of the core,
  RecursionError, MemoryError) or another failure of the system (an OSError), one line on stderr; the
  traceback only with ``fcanalyze --debug`` or ``FCANALYZE_DEBUG=1``;
- 130 interrupted (Ctrl-C), 143 stopped by SIGTERM;
- 141 (128 + SIGPIPE) when the reader of the output went away (``fcanalyze deal 1 | head -1``): not an
  error, so nothing is printed, and the code is the one a shell shows for ``cat`` or ``yes`` in the same
  place (they die of SIGPIPE).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import sys
import traceback
import unicodedata
from collections.abc import Callable

import click

from fcanalyze import _core
from fcanalyze.cli.errors import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_UNDECIDED,
    EXIT_UNSOLVABLE,
)

#: The exit codes a command may return (the others come from `guarded` alone).
RESULT_CODES = (EXIT_OK, EXIT_UNSOLVABLE, EXIT_UNDECIDED)
#: What click >= 8.2 raises for a group called without a command (click 8.1 prints the help itself).
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())
#: The longest error line printed; a longer one keeps its head and tail (an echoed 1 MB token, say).
MAX_LINE = 400


class Terminated(KeyboardInterrupt):
    """SIGTERM (from `kill`, a scheduler, a shutting-down machine), raised like Ctrl-C."""


def on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


def debug_from_environment() -> bool:
    return os.environ.get("FCANALYZE_DEBUG", "") not in ("", "0")


def one_line(message: str) -> str:
    """`message` as one printable line: control characters escaped, at most `MAX_LINE` characters."""
    text = "".join(
        c if unicodedata.category(c)[0] != "C" or c == " " else repr(c)[1:-1]
        for c in " ".join(message.splitlines())
    )
    if len(text) > MAX_LINE:
        half = MAX_LINE // 2 - 2
        text = f"{text[:half]} ... {text[-half:]}"
    return text


def say(message: str) -> None:
    """One line on stderr, if stderr is still there."""
    with contextlib.suppress(OSError, ValueError):
        click.echo(f"fcanalyze: {one_line(message)}", err=True)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush of unwritable output neither fails
    nor prints (as the Python documentation advises for a broken pipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (click's test runner): nothing will flush it


def _flush_stdout() -> None:
    stream = sys.stdout
    if stream is not None:
        stream.flush()


class ReaderGone(Exception):
    """The reader of stdout went away (a closed pipe). Not an OSError, so that click's main lets it
    through instead of exiting 1 (its own handling of EPIPE)."""


class OutputError(Exception):
    """Writing the answer to stdout failed (a full disk, a closed terminal)."""


def _from_output(e: OSError) -> bool:
    """True when `e` was raised by `click.echo` writing to stdout (the answer, not a message)."""
    tb = e.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "echo" and "click" in code.co_filename:
            return not tb.tb_frame.f_locals.get("err")
        tb = tb.tb_next
    return False


def _describe(e: BaseException) -> str:
    text = str(e)
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


# A disk the user must make room on (or make writable): like an --out that cannot be created, exit 2.
_NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EROFS)


def _internal(e: BaseException, debug: bool) -> int:
    """Exit code 4 with one line (the traceback before it when debugging); 2 for an output that cannot
    be written or a full disk, which the user fixes (the same command then goes on)."""
    if debug:
        traceback.print_exception(e)
    if isinstance(e, OutputError) or (isinstance(e, OSError) and _from_output(e)):
        cause = e.__cause__ if isinstance(e, OutputError) else e
        _quiet_stdout()
        say(f"error: cannot write the output: {getattr(cause, 'strerror', None) or _describe(cause)}")
        return EXIT_BAD_INPUT
    if isinstance(e, OSError) and e.errno in _NO_ROOM:
        where = f": {e.filename}" if e.filename else ""
        say(f"error: {e.strerror or _describe(e)}{where}")
        return EXIT_BAD_INPUT
    if isinstance(e, OSError):
        where = f": {e.filename}" if e.filename else ""
        say(f"error: {e.strerror or _describe(e)}{where}")
    elif isinstance(e, MemoryError):
        say("error: out of memory")
    else:
        what = str(e) if isinstance(e, _core.InternalError) else _describe(e)
        hint = "" if debug else "; --debug shows the traceback"
        say(f"internal error (please report it{hint}): {what}")
    return EXIT_INTERNAL


def guarded(run: Callable[[], object], debug: Callable[[], bool]) -> int:
    """Run a command line (`run` returns the command's exit code or None) and return the exit code the
    contract gives it, printing the one line that goes with it. `debug` says, once the options are
    parsed, whether a traceback was asked for."""
    try:
        rv = run()
        try:
            _flush_stdout()
        except OSError as e:
            if isinstance(e, BrokenPipeError):
                raise
            raise OutputError() from e
    except (BrokenPipeError, ReaderGone):
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except _NO_ARGS_IS_HELP as e:
        click.echo(e.ctx.get_help())  # `fcanalyze` alone: the usage, not an error (click 8.2+)
        _flush_stdout()
        return EXIT_OK
    except (click.exceptions.Abort, KeyboardInterrupt) as e:
        # click turns a KeyboardInterrupt into Abort (the original is its cause).
        if isinstance(e, Terminated) or isinstance(e.__cause__, Terminated):
            say("stopped (SIGTERM)")
            return EXIT_TERMINATED
        say("interrupted")
        return EXIT_INTERRUPTED
    except click.exceptions.Exit as e:
        return EXIT_OK if e.exit_code == 0 else EXIT_BAD_INPUT
    except click.ClickException as e:
        # Every click error is about the command line or its files: never 1, which is a proof's.
        say(f"error: {e.format_message()}")
        return EXIT_BAD_INPUT
    except SystemExit as e:
        if e.code in (None, 0):
            return EXIT_OK
        if "PacifyFlushWrapper" in type(sys.stdout).__name__:
            return EXIT_BROKEN_PIPE  # click's main met EPIPE (printing the help) and exits 1 itself
        say(f"internal error (please report it): exit {e.code}")
        return EXIT_INTERNAL
    except BaseException as e:  # the contract's last line: a PanicException is a BaseException
        return _internal(e, debug())
    return rv if rv in RESULT_CODES else EXIT_OK


class Group(click.Group):
    """The ``fcanalyze`` group: its `main` keeps the exit-code contract (`guarded`) whenever it would
    exit (``standalone_mode``, the default), and an unknown command gets click's "did you mean"."""

    debug = False

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        Group.debug = debug_from_environment()

        def run() -> object:
            return super(Group, self).main(args, prog_name, complete_var, standalone_mode=False, **extra)

        sys.exit(guarded(run, lambda: Group.debug))

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except BrokenPipeError as e:
            raise ReaderGone() from e

    def resolve_command(self, ctx, args):
        name = args[0] if args else ""
        if self.get_command(ctx, name) is None and not name.startswith("-"):
            from difflib import get_close_matches

            close = get_close_matches(name, self.list_commands(ctx))
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise click.UsageError(f"No such command {name!r}.{hint}", ctx)
        return super().resolve_command(ctx, args)


def set_debug(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """The ``--debug`` group option's callback."""
    if value:
        Group.debug = True
    return value


def looks_like_option(token: object) -> bool:
    """``--name`` or ``-x`` (not ``-``, ``-3`` or ``-1-5``, which are arguments)."""
    return isinstance(token, str) and re.match(r"-(-.|[^\W\d_])", token) is not None


class Command(click.Command):
    """A command that takes negative-looking arguments (``solve -3`` is a bad deal number, not an
    option) yet answers a mistyped option with "No such option ... Did you mean ...?"."""

    def __init__(self, *args, **kwargs):
        kwargs["context_settings"] = {
            "ignore_unknown_options": True,
            **(kwargs.get("context_settings") or {}),
        }
        super().__init__(*args, **kwargs)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # The parser leaves an unknown option among the arguments: name it before click counts it as an
        # unexpected extra argument.
        values, extra, _ = self.make_parser(ctx).parse_args(args=list(args))
        landed = [values.get(p.name) for p in self.params if isinstance(p, click.Argument)]
        for token in [*landed, *extra]:
            if looks_like_option(token):
                known = [o for p in self.params if isinstance(p, click.Option) for o in p.opts]
                raise click.NoSuchOption(token.split("=", 1)[0], possibilities=known, ctx=ctx)
        return super().parse_args(ctx, args)


def install_signal_handlers() -> None:
    """SIGTERM ends a run as Ctrl-C does (the command line's entry point installs it)."""
    signal.signal(signal.SIGTERM, on_sigterm)
