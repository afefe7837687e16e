"""`sitescout batch`: many sites walked on a Dask cluster into one partitioned Parquet dataset."""

from __future__ import annotations

import functools
import logging
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import Progress, TextColumn, TimeElapsedColumn

from .._batch import BatchRun, SiteResult
from .._errors import UsageError
from ._app import (
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
    RUN_WARNINGS,
    Quiet,
    Verbose,
    app,
    err,
    setup_logging,
    stderr_console,
    usage_error,
)
from ._flags import (
    Crawl,
    Locale,
    NoAlternates,
    PageSource,
    Source,
    WalkFlags,
    inventory_options,
    with_walk_flags,
)
from ._output import print_json

_REFRESH = 0.25  # seconds between progress updates


class _Progress:
    """Sites done / failed / URLs found on a terminal; nothing otherwise."""

    def __init__(self, show: bool, total: int) -> None:
        self._bar = (
            Progress(
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=stderr_console(),
                transient=True,
            )
            if show and err.is_terminal
            else None
        )
        self._total = total
        self._task: Any = None
        self._show = show
        self._dashboard_shown = False
        self._shown = 0.0

    def __enter__(self) -> _Progress:
        if self._bar is not None:
            self._bar.__enter__()
            self._task = self._bar.add_task(self._text({}, 0))
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)

    def _text(self, counts: dict[str, int], urls: int) -> str:
        done = sum(n for status, n in counts.items() if status != "not run")
        failed = counts.get("failed", 0)
        return f"{done:,}/{self._total:,} sites, {failed:,} failed, {urls:,} URLs"

    def update(self, run: BatchRun) -> None:
        if self._show and run.dashboard and not self._dashboard_shown:
            self._dashboard_shown = True
            err.print(f"Dask dashboard: {run.dashboard}", markup=False)
        now = time.monotonic()
        if self._bar is not None and now - self._shown >= _REFRESH:
            # Counting statuses walks every site: at most a few times a second.
            self._shown = now
            self._bar.update(self._task, description=self._text(run.counts(), run.urls_found))


def _summary(run: BatchRun, out: Path) -> dict[str, Any]:
    results = run.results
    failed = [r for r in results if r.status == "failed"]
    return {
        "out": str(out),
        "sites": len(results),
        "statuses": run.counts(),
        "urls": sum(r.urls for r in results),
        "alternates": sum(r.alternates for r in results),
        "dashboard": run.dashboard,
        "warnings": list(RUN_WARNINGS),
        "failed": [
            {"url": r.url, "error_class": r.error_class, "error": r.error_message}
            for r in failed[:100]
        ],
    }


def _print_summary(run: BatchRun, out: Path, *, as_json: bool, quiet: bool) -> None:
    summary = _summary(run, out)
    if as_json:
        print_json(summary, stderr=True)
        return
    if quiet:  # only the sites that failed, as errors
        for row in summary["failed"][:10]:
            err.print(f"error: {row['url']}: {row['error_class']}: {row['error']}", markup=False)
        more = len(summary["failed"]) - 10
        if more > 0:
            err.print(f"error: {more:,} more sites failed", markup=False)
        return
    for warning in summary["warnings"]:
        err.print(f"warning: {warning}", markup=False)
    statuses = ", ".join(f"{n:,} {status}" for status, n in sorted(summary["statuses"].items()))
    err.print(
        f"{summary['sites']:,} sites ({statuses}); "
        f"{summary['urls'] + summary['alternates']:,} URLs in {out / 'urls'}",
        markup=False,
    )
    for row in summary["failed"][:10]:
        err.print(f"  failed: {row['url']}: {row['error_class']}: {row['error']}", markup=False)


def _cluster_logging(verbose: int) -> None:
    """Dask's loggers as the command wants them: its import set their levels (INFO, with a
    handler of their own), so this comes after `BatchRun` imported it. Without `-v` the
    cluster's own complaints while it shuts down after Ctrl-C are not the user's business (the
    summary says what happened to every site); `-v` shows its warnings, `-vv` everything."""
    if verbose >= 2:
        return
    level = logging.WARNING if verbose else logging.CRITICAL
    for name in ("distributed", "tornado"):
        logging.getLogger(name).setLevel(level)


def _exit_code(results: list[SiteResult]) -> int:
    ok = ("complete", "skipped")
    return EXIT_OK if all(r.status in ok and not r.partial for r in results) else EXIT_PARTIAL


@app.command()
@with_walk_flags(concurrency=8)
def batch(
    sites: Annotated[
        str,
        typer.Argument(
            help="File of site URLs, one per line (# comments), or a CSV with a url column;"
            " - reads stdin."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory of the dataset.")],
    fanout: Annotated[
        int,
        typer.Option(
            min=1,
            help="A sitemap index with more child sitemaps than this walks them as tasks of"
            " their own.",
        ),
    ] = 50,
    refresh: Annotated[
        bool, typer.Option("--refresh", help="Walk again sites already complete in --out.")
    ] = False,
    scheduler: Annotated[
        str | None,
        typer.Option(
            help="Address of a running Dask scheduler (tcp://HOST:PORT); default"
            " $DASK_SCHEDULER_ADDRESS, else a local cluster.",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(min=1, help="Worker processes of the local cluster (default: CPU count)."),
    ] = None,
    no_alternates: NoAlternates = False,
    *,
    flags: WalkFlags,
    locale: Locale = None,
    crawl: Crawl = False,
    source: Source = PageSource.auto,
    as_json: Annotated[bool, typer.Option("--json", help="Summary as JSON on stderr.")] = False,
    quiet: Quiet = False,
    verbose: Verbose = 0,
) -> None:
    """Walk every site of a list on a Dask cluster into a Parquet dataset partitioned by site.

    Writes DIR/urls/site=HOST/part-N.parquet (the columns of `urls --format parquet`) and
    DIR/sites.parquet (one row per site). A re-run skips sites already complete.
    """
    setup_logging(verbose, quiet=quiet)
    try:
        options = inventory_options(
            None,
            sitemap=None,  # a sitemap URL in the list is walked directly
            flags=flags,
            alternates=not no_alternates,
            locale=locale,
            crawl=crawl,
            source=source,
            llms_txt=None,
        )
        new_run = functools.partial(
            BatchRun,
            out=out,
            scheduler=scheduler,
            workers=workers,
            fanout=fanout,
            refresh=refresh,
            options=options,
            quiet_workers=not verbose,
        )
        if sites == "-":
            run = new_run(sys.stdin)
        else:
            try:
                with open(sites, encoding="utf-8", errors="replace") as f:
                    run = new_run(f)
            except OSError as exc:
                raise UsageError(f"cannot read {sites}: {exc.strerror or exc}") from exc
    except (UsageError, ValueError) as exc:
        raise usage_error(exc) from None
    if not run.sites:
        err.print(f"error: no site URL in {sites}", markup=False)
        raise typer.Exit(EXIT_USAGE)
    _cluster_logging(verbose)
    code = EXIT_PARTIAL
    try:
        with _Progress(not quiet and not as_json, len(run.sites)) as progress:
            run.progress = progress.update
            results = run.run()
        code = _exit_code(results)
    except KeyboardInterrupt:
        if not quiet:
            err.print("interrupted: complete sites are kept; run again to resume", markup=False)
    except UsageError as exc:
        raise usage_error(exc) from None
    _print_summary(run, out, as_json=as_json, quiet=quiet)
    raise typer.Exit(code)
