"""`sitescout demo`: the bundled sample site, served on loopback, and `extract` run against it."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Annotated

import typer

from .._extract import ExtractOptions, plan_extract
from .._project import CRAWL_LOG, PAGES, STATE
from ._app import Quiet, app, err
from .extract import after_plan


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
    quiet: Quiet = False,
) -> None:
    """Serve the bundled sample site on loopback and run `extract` against it."""
    from .._demo.server import serve

    with serve() as base:
        _reset(out)
        err.print(f"sample site served at {base}/", markup=False)
        err.print(f"$ sitescout extract {base}/ --out {out}", markup=False)
        options = ExtractOptions(out=out)
        plan = asyncio.run(plan_extract(base + "/", options))
        code = after_plan(plan, options, yes=True, as_json=False, quiet=quiet)
    raise typer.Exit(code)
