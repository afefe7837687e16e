"""`sitescout demo`: the bundled sample site, served on loopback and walked."""

from __future__ import annotations

import asyncio
import sys

import typer

from .._walk import Walk, WalkOptions
from ._app import Quiet, app, err, exit_code, print_summary
from .urls import entry_json


@app.command()
def demo(
    quiet: Quiet = False,
) -> None:
    """Serve the bundled sample site on loopback and walk it."""
    from .._demo.server import serve

    with serve() as base:
        err.print(f"sample site served at {base}/", markup=False)
        err.print(f"$ sitescout urls {base}/ --format jsonl | head", markup=False)
        walk = Walk(base + "/", WalkOptions())
        shown: list[str] = []

        async def run() -> None:
            async for batch in walk:
                for entry in batch:
                    if len(shown) < 8:
                        shown.append(entry_json(entry))

        asyncio.run(run())
        sys.stdout.write("".join(shown))
        print_summary(walk.report, as_json=False, quiet=quiet)
    raise typer.Exit(exit_code(walk.report))
