"""The typer app, its command class, the stderr console, logging and the exit codes. Stdout
carries data only; the rest is stderr. Shared options live in `_flags`, output in `_output`.

Exit codes (§13): 0 ok, 1 partial result (a budget bound or documents failed), 2 usage error,
3 nothing found or fatal.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

from ..__about__ import __version__
from .._errors import UsageError
from ._values import read_plainly

if TYPE_CHECKING:
    from rich.console import Console

CommandFunction = TypeVar("CommandFunction", bound=Callable[..., Any])


def _prepared(params: list[Any]) -> list[Any]:
    """The command's parameters, their values read plainly where they can be (`_values`).

    A boolean flag takes no value, so its help shows no type: typer's rich help otherwise
    prints `<bool>` after every flag, `--help` included, as if one had to write `--crawl true`."""
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""
    return read_plainly(params)


class _Command(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return _prepared(super().get_params(ctx))

    def invoke(self, ctx: Any) -> Any:
        """Run the command; a reader that closed stdout (`| head`) ends it quietly, exit 0.

        The logging set up for the command (`setup_logging`) is put back as it was when the
        command ends: a command run inside another program (a test's CliRunner) leaves that
        program's logging as it found it.
        """
        restore_logging = _logging_restorer()
        RUN_WARNINGS[:] = [INSECURE_WARNING] if ctx.params.get("insecure") else []
        if (
            RUN_WARNINGS
            and ctx.command.name in ("scope", "extract")
            and not ctx.params.get("quiet")
        ):
            # Their own summaries do not go through `print_summary`: said once, up front.
            err.print(f"warning: {INSECURE_WARNING}", markup=False)
        try:
            try:
                return super().invoke(ctx)
            finally:
                _flush_stdout()  # what is still buffered meets a closed pipe here, not at exit
        except BrokenPipeError:
            _discard_stdout()
            raise typer.Exit(EXIT_OK) from None
        finally:
            restore_logging()


def _flush_stdout() -> None:
    with contextlib.suppress(ValueError):  # already closed: nothing is buffered
        sys.stdout.flush()


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of what is still
    buffered for the closed pipe neither fails nor prints a complaint."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a file (a test runner's buffer): nothing flushes to a pipe at exit
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


class _Group(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return _prepared(super().get_params(ctx))


class _Typer(typer.Typer):
    """Every command registered here (each module's `@app.command()`) gets `_Command`."""

    def command(self, *args: Any, **kwargs: Any) -> Callable[[CommandFunction], CommandFunction]:
        kwargs.setdefault("cls", _Command)
        decorator: Callable[[CommandFunction], CommandFunction] = super().command(*args, **kwargs)
        return decorator


app = _Typer(
    cls=_Group,
    add_completion=False,
    no_args_is_help=True,
    help="Find every page a website has, fast and safely, and the few that show its shape.",
)


class _Stderr:
    """The stderr console, made on first use: rich's console costs about 0.03 s to load, and a
    quiet run that goes well prints nothing."""

    _console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(stderr_console(), name)


def stderr_console() -> Console:
    """The console behind `err` (for what needs the object itself, such as a progress display)."""
    made = _Stderr._console
    if made is None:
        from rich.console import Console

        # No emoji codes: a URL's `:name:` (`/wiki/Tag:fire:`) is part of it, not a picture.
        made = _Stderr._console = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
    return made


err = cast("Console", _Stderr())

EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, EXIT_NOTHING = 0, 1, 2, 3


INSECURE_WARNING = (
    "TLS certificates are not verified (--insecure): anyone on the path can read and change"
    " what this run fetches"
)
# Warnings of this run that its summary adds to the walk's own (`print_summary`).
RUN_WARNINGS: list[str] = []


def usage_error(exc: Exception) -> typer.Exit:
    """Say what the caller got wrong, on stderr; the exit (2) for the command to raise."""
    err.print(f"error: {exc}", markup=False)
    return typer.Exit(EXIT_USAGE)


# Other libraries' loggers: below `-vv` they say nothing under WARNING (the HTTP library logs
# every request at INFO and its connection pool at DEBUG; Dask its cluster's life at INFO).
_OTHER_LOGGERS = ("httpx", "httpcore", "hpack", "asyncio", "dask", "distributed", "tornado")


# The logging flags every command takes (`setup_logging`'s `quiet` and `verbose`).
Quiet = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", help="Only errors on stderr; stdout keeps the data, table or --json."
    ),
]
Verbose = Annotated[
    int,
    typer.Option(
        "--verbose",
        "-v",
        count=True,
        help="Log each sitemap document on stderr; -vv adds the HTTP library's debug log.",
    ),
]


def setup_logging(verbose: int = 0, *, quiet: bool = False) -> None:
    """Log records on stderr for `-v` (sitescout's own, from INFO: one line per sitemap
    document) and `-vv` (everything, from DEBUG, with logger names); otherwise errors only.

    `quiet` and `verbose` together are a usage error (exit 2). Every command calls this first,
    with its `-q` and `-v`.
    """
    if quiet and verbose:
        raise usage_error(UsageError("--quiet and --verbose cannot be used together"))
    if verbose >= 2:
        own, others = logging.DEBUG, logging.DEBUG
    elif verbose == 1:
        own, others = logging.INFO, logging.WARNING
    else:
        own, others = logging.ERROR, logging.ERROR
    root = logging.getLogger()
    handler = next((h for h in root.handlers if isinstance(h, _StderrHandler)), None)
    if handler is None:
        handler = _StderrHandler()
        root.addHandler(handler)
    handler.setFormatter(_LogFormat(detailed=verbose >= 2))
    # By name, not by level alone: a library that sets its own logger's level (Dask logs at
    # INFO) would otherwise reach stderr past the root logger's level.
    handler.filters = [_Threshold(own=own, others=others)]
    root.setLevel(min(own, others))
    for name in _OTHER_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET if verbose >= 2 else others)


def _logging_restorer() -> Callable[[], None]:
    """A function that puts the levels and handlers `setup_logging` sets back as they are now."""
    root = logging.getLogger()
    handlers = list(root.handlers)
    levels = {name: logging.getLogger(name).level for name in ("", *_OTHER_LOGGERS)}

    def restore() -> None:
        for handler in root.handlers:
            if handler not in handlers:
                root.removeHandler(handler)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)

    return restore


class _StderrHandler(logging.Handler):
    """Log records through the stderr console: a live progress line is redrawn below them
    instead of being torn, and a record is printed as it is (no markup, no emoji codes)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            err.out(self.format(record), highlight=False)
        except Exception:
            self.handleError(record)


class _LogFormat(logging.Formatter):
    """`-v`: the message, and `warning:`/`error:` before the records that are one. `-vv`:
    level and logger name too, for debugging."""

    def __init__(self, *, detailed: bool) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s" if detailed else "%(message)s")
        self.detailed = detailed

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if not self.detailed and record.levelno >= logging.WARNING:
            text = f"{record.levelname.lower()}: {text}"
        return text


class _Threshold(logging.Filter):
    """Records of sitescout's loggers from `own` up; other libraries' from `others` up."""

    def __init__(self, *, own: int, others: int) -> None:
        super().__init__()
        self.own = own
        self.others = others

    def filter(self, record: logging.LogRecord) -> bool:
        name = record.name
        mine = name == "sitescout" or name.startswith("sitescout.")
        return record.levelno >= (self.own if mine else self.others)


def version_callback(value: bool) -> None:
    if value:
        print(f"sitescout {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=version_callback,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """sitescout — site inventories from sitemaps, safely, at any size."""
