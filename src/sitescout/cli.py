"""The command line: a thin layer over the library. Stdout carries data only; the rest is stderr.

Exit codes (§13): 0 ok, 1 partial result (a budget bound or documents failed), 2 usage error,
3 nothing found or fatal.
"""

from __future__ import annotations

import asyncio
import csv
import json
import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from json.encoder import encode_basestring
from pathlib import Path
from typing import IO, Annotated, Any

import typer
from rich.console import Console

from .__about__ import __version__
from ._api import walk as start_walk
from ._budget import Budgets
from ._errors import UsageError
from ._http import DEFAULT_USER_AGENT, FetchConfig
from ._locale import path_locale
from ._models import Entry, WalkReport
from ._walk import Walk, WalkOptions

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Find every page a website has, fast and safely, and the few that show its shape.",
)
err = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, EXIT_NOTHING = 0, 1, 2, 3


class Format(StrEnum):
    jsonl = "jsonl"
    csv = "csv"


COLUMNS = (
    "url",
    "lastmod",
    "priority",
    "changefreq",
    "hreflang",
    "alternate_of",
    "sitemap",
    "depth",
)

# -- shared options ------------------------------------------------------------------------

UserAgent = Annotated[str, typer.Option(help="User-Agent sent with every request.")]
Concurrency = Annotated[int, typer.Option(min=1, max=64, help="Documents in flight per host.")]
Timeout = Annotated[float, typer.Option(min=0.1, help="Total seconds allowed per document.")]
MaxDepth = Annotated[int | None, typer.Option(min=1, help="Deepest sitemap level (root = 1).")]
MaxFetches = Annotated[int | None, typer.Option(min=1, help="Sitemap fetch attempts allowed.")]
MaxBytes = Annotated[int | None, typer.Option(min=1, help="Decoded sitemap bytes allowed.")]
MaxUrls = Annotated[int | None, typer.Option(min=1, help="Page URLs to collect at most.")]
Deadline = Annotated[float | None, typer.Option(min=0.1, help="Wall-clock seconds for the walk.")]
Locale = Annotated[
    str | None, typer.Option(help="Preferred locale; shards of other locales are skipped.")
]
Sitemap = Annotated[str | None, typer.Option(help="Walk this sitemap URL; skip discovery.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress or summary on stderr.")]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Log each document on stderr.")]


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.ERROR,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


# -- output --------------------------------------------------------------------------------


def _jstr(value: str | None) -> str:
    return "null" if value is None else str(encode_basestring(value))


def entry_json(e: Entry) -> str:
    """One JSON line; hand-built because `json.dumps` of a dict per URL dominates large walks."""
    prio = "null" if e.priority is None else repr(e.priority)
    return (
        f'{{"url":{_jstr(e.url)},"lastmod":{_jstr(e.lastmod)},"priority":{prio},'
        f'"changefreq":{_jstr(e.changefreq)},"hreflang":{_jstr(e.hreflang)},'
        f'"alternate_of":{_jstr(e.alternate_of)},"sitemap":{_jstr(e.sitemap)},"depth":{e.depth}}}\n'
    )


class _Writer:
    def __init__(self, out: IO[str], fmt: Format) -> None:
        self.out = out
        self.fmt = fmt
        self._csv = csv.writer(out, lineterminator="\n") if fmt is Format.csv else None
        if self._csv is not None:
            self._csv.writerow(COLUMNS)

    def write(self, batch: list[Entry]) -> None:
        if self._csv is None:
            self.out.write("".join(map(entry_json, batch)))
            return
        self._csv.writerows(
            (
                e.url,
                e.lastmod,
                e.priority,
                e.changefreq,
                e.hreflang,
                e.alternate_of,
                e.sitemap,
                e.depth,
            )
            for e in batch
        )


@contextmanager
def _open_output(path: Path | None) -> Iterator[IO[str]]:
    if path is None or str(path) == "-":
        yield sys.stdout
        return
    with path.open("w", encoding="utf-8", newline="") as fh:
        yield fh


class _Progress:
    """Documents, URLs and bytes on stderr while walking — only when stderr is a terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and err.is_terminal
        self._status: Any = None
        self._last = 0.0

    def __enter__(self) -> _Progress:
        if self.enabled:
            self._status = err.status("walking sitemaps…")
            self._status.__enter__()
        return self

    def update(self, report: WalkReport) -> None:
        now = time.monotonic()
        if self._status is None or now - self._last < 0.1:
            return
        self._last = now
        self._status.update(
            f"{len(report.documents)} documents · {report.urls + report.alternates:,} URLs · "
            f"{report.bytes / 1048576:,.1f} MiB"
        )

    def __exit__(self, *exc: object) -> None:
        if self._status is not None:
            self._status.__exit__(*exc)


def report_summary(report: WalkReport) -> dict[str, Any]:
    return {
        "source": report.source,
        "source_url": report.source_url,
        "documents": len(report.documents),
        "urls": report.urls,
        "alternates": report.alternates,
        "duplicates": report.duplicates,
        "bytes": report.bytes,
        "errors": [
            {"url": d.url, "status": d.status, "error": d.error, "error_class": d.error_class}
            for d in report.errors
        ],
        "malformed": report.malformed_count,
        "malformed_examples": [
            {"raw": m.raw, "reason": m.reason, "sitemap": m.sitemap} for m in report.malformed[:20]
        ],
        "warnings": report.warnings,
        "notes": report.notes[:50],
        "budgets_hit": report.budgets_hit,
        "skipped_sitemaps": len(report.skipped_sitemaps),
        "partial": report.partial,
        "partial_reasons": report.partial_reasons,
        "elapsed": round(report.elapsed, 3),
    }


def _print_summary(report: WalkReport, *, as_json: bool, quiet: bool) -> None:
    if as_json:
        err.out(json.dumps(report_summary(report), indent=2), highlight=False)
        return
    for warning in report.warnings:
        err.print(f"[yellow]warning:[/] {warning}", markup=True)
    if quiet:
        return
    source = report.source if report.source_url is None else f"{report.source} {report.source_url}"
    errors = len(report.errors)
    err.print(
        f"{report.urls + report.alternates:,} URLs ({report.alternates:,} alternates) "
        f"from {len(report.documents)} documents via {source}; {errors} errors, "
        f"{report.malformed_count} malformed entries; {report.elapsed:.2f} s",
        markup=False,
    )
    for doc in report.errors[:10]:
        err.print(f"  error: {doc.url}: {doc.error}", markup=False)
    if report.partial:
        err.print("partial result: " + "; ".join(report.partial_reasons), markup=False)


def exit_code(report: WalkReport) -> int:
    if report.urls == 0 and report.alternates == 0 and (report.source == "none" or report.errors):
        return EXIT_NOTHING
    return EXIT_PARTIAL if report.partial else EXIT_OK


async def _stream(walk: Walk, writer: _Writer, progress: _Progress) -> None:
    async for batch in walk:
        writer.write(batch)
        progress.update(walk.report)


# -- commands ------------------------------------------------------------------------------


@app.command()
def urls(
    url: Annotated[str, typer.Argument(help="Site URL (or a sitemap URL).")],
    format: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.jsonl,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here.")] = None,
    sitemap: Sitemap = None,
    no_alternates: Annotated[
        bool, typer.Option("--no-alternates", help="Do not emit hreflang alternates.")
    ] = False,
    concurrency: Concurrency = 8,
    timeout: Timeout = 30.0,
    user_agent: UserAgent = DEFAULT_USER_AGENT,
    max_depth: MaxDepth = None,
    max_fetches: MaxFetches = None,
    max_bytes: MaxBytes = None,
    max_urls: MaxUrls = None,
    deadline: Deadline = None,
    locale: Locale = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Summary as JSON on stderr (stdout stays data).")
    ] = False,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Stream the site's full URL inventory: JSON lines (default) or CSV."""
    _setup_logging(verbose)
    try:
        budgets = Budgets(
            max_depth=max_depth,
            max_fetches=max_fetches,
            max_bytes=max_bytes,
            max_urls=max_urls,
            deadline=deadline,
        )
        options = WalkOptions(
            sitemap=sitemap,
            alternates=not no_alternates,
            concurrency=concurrency,
            fetch=FetchConfig(user_agent=user_agent, timeout=timeout),
            budgets=budgets,
            locale=locale,
            # §7: the inventory filters locales only when asked, by flag or by the base URL.
            filter_locales=locale is not None or path_locale(url) is not None,
        )
        walk = start_walk(url, options)
    except (UsageError, ValueError) as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(EXIT_USAGE) from None
    with _open_output(output) as out, _Progress(not quiet) as progress:
        try:
            asyncio.run(_stream(walk, _Writer(out, format), progress))
        except KeyboardInterrupt:
            walk.report.mark_partial("interrupted")
        except BrokenPipeError:  # `| head` closed the pipe: stop quietly
            sys.stderr.close()
            raise typer.Exit(EXIT_OK) from None
        out.flush()
    _print_summary(walk.report, as_json=as_json, quiet=quiet)
    raise typer.Exit(exit_code(walk.report))


@app.command()
def demo(
    quiet: Quiet = False,
) -> None:
    """Serve the bundled sample site on loopback and walk it."""
    from ._demo.server import serve

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
        _print_summary(walk.report, as_json=False, quiet=quiet)
    raise typer.Exit(exit_code(walk.report))


def version_callback(value: bool) -> None:
    if value:
        print(f"sitescout {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=version_callback, is_eager=True)
    ] = False,
) -> None:
    """sitescout — site inventories from sitemaps, safely, at any size."""


def main() -> None:
    app()
