"""`sitescout demo`: the bundled sample site, served on loopback, and `extract` run against it;
`sitescout demo --serve` only serves it, on a fixed port, until Ctrl-C."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import shutil
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from .._extract import ExtractOptions, plan_extract
from .._project import CRAWL_LOG, PAGES, STATE
from ._app import EXIT_OK, EXIT_USAGE, Quiet, app, err, setup_logging
from .extract import after_plan

# `--serve` listens here unless told otherwise: the README's examples use this address.
SERVE_PORT = 8765
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _reset(out: Path) -> None:
    """Clear an earlier demo's files: each demo serves on a new port, so a new origin."""
    log = out / CRAWL_LOG
    try:
        origin = json.loads(log.read_text(encoding="utf-8")).get("origin", "")
    except (OSError, ValueError):
        return
    if isinstance(origin, str) and origin.startswith("http://127.0.0.1:"):
        log.unlink(missing_ok=True)
        (out / STATE).unlink(missing_ok=True)
        shutil.rmtree(out / PAGES, ignore_errors=True)


@app.command()
def demo(
    out: Annotated[Path, typer.Option("--out", help="Where the demo's project files go.")] = Path(
        "sitescout-demo"
    ),
    serve_only: Annotated[
        bool,
        typer.Option("--serve", help="Only serve the sample site, until Ctrl-C; run no extract."),
    ] = False,
    port: Annotated[
        int | None,
        typer.Option(
            "--port",
            min=0,
            max=65535,
            show_default=False,
            help=f"The port to serve on: {SERVE_PORT} with --serve, a free one without "
            "(0: a free one).",
        ),
    ] = None,
    quiet: Quiet = False,
) -> None:
    """Serve the bundled sample site on loopback and run `extract` against it (or, with --serve,
    only serve it until Ctrl-C)."""
    setup_logging(quiet=quiet)
    if serve_only:
        # Handlers first: a signal that comes as soon as the port answers still stops it cleanly.
        with _stop_on_signals() as stop, _served(SERVE_PORT if port is None else port) as base:
            err.print(f"sample site served at {base}/ (Ctrl-C to stop)", markup=False)
            if not quiet:
                err.print("try, in another terminal:", markup=False)
                for command in _examples(base, out):
                    err.print(f"  {command}", markup=False)
            while not stop.wait(0.5):  # timed waits: the handlers run between them
                pass
        if not quiet:
            err.print("sample site stopped", markup=False)
        raise typer.Exit(EXIT_OK)
    with _served(0 if port is None else port) as base:  # each demo a free port of its own
        _reset(out)
        if not quiet:
            err.print(f"sample site served at {base}/", markup=False)
            err.print(f"$ sitescout extract {base}/ --out {out}", markup=False)
        options = ExtractOptions(out=out)
        plan = asyncio.run(plan_extract(base + "/", options))
        code = after_plan(plan, options, yes=True, as_json=False, quiet=quiet)
    raise typer.Exit(code)


def _examples(base: str, out: Path) -> list[str]:
    return [
        f"sitescout extract {base}/ --out {out}",
        f"sitescout scope {base}/",
        f"sitescout groups {base}/",
        f"sitescout urls {base}/",
        f"sitescout report {base}/ -o report.html",
    ]


@contextlib.contextmanager
def _served(port: int) -> Iterator[str]:
    """The sample site's base URL while it is served; a port that cannot be listened on is a
    usage error (exit 2) in one line."""
    from .._demo.server import serve

    with contextlib.ExitStack() as stack:
        try:
            base = stack.enter_context(serve(port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                problem = f"port {port} on 127.0.0.1 is already in use"
            else:
                problem = f"cannot listen on port {port} of 127.0.0.1: {exc.strerror or exc}"
            err.print(f"error: {problem}; choose another with --port N", markup=False)
            raise typer.Exit(EXIT_USAGE) from None
        yield base


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[threading.Event]:
    """An event that SIGINT (Ctrl-C) or SIGTERM sets, instead of ending the process."""
    stop = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in _STOP_SIGNALS}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
