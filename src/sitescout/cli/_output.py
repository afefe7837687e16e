"""What a command prints after a walk: data on stdout, the summary, errors and progress on
stderr, and the exit code that agrees with the summary."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._core import Batch
from .._models import WalkReport
from ._app import (
    EXIT_NOTHING,
    EXIT_OK,
    EXIT_PARTIAL,
    RUN_WARNINGS,
    err,
)

if TYPE_CHECKING:  # the walk loads with the commands that walk, not with `diff`
    from .._walk import Walk


def drain(walk: Walk, consume: Callable[[Batch], None], *, progress: bool) -> None:
    """Run `walk` to its end, handing each native batch to `consume` (progress on a
    terminal when `progress`). Ctrl-C ends it as a partial result: what was consumed so far is
    still the answer, and the report counts that."""
    tally = Tally()

    async def pump(shown: WalkProgress) -> None:
        async for batch in walk.batches():
            consume(batch)
            tally.add(batch)
            shown.update(walk.report)

    with WalkProgress(progress) as shown:
        try:
            asyncio.run(pump(shown))
        except KeyboardInterrupt:
            walk.report.mark_partial("interrupted")
    tally.settle(walk.report)


# -- output --------------------------------------------------------------------------------


def print_json(data: object, *, stderr: bool = False) -> None:
    """One indented JSON document: a command's answer on stdout, or a summary on stderr when
    stdout carries the data."""
    text = json.dumps(data, indent=2)
    if stderr:
        err.out(text, highlight=False)
    else:
        sys.stdout.write(text + "\n")


def report_summary(report: WalkReport) -> dict[str, Any]:
    return (
        {
            "source": report.source,
            "source_url": report.source_url,
            "sitemap_spellings": report.sitemap_spellings,
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
                {"raw": m.raw, "reason": m.reason, "sitemap": m.sitemap}
                for m in report.malformed[:20]
            ],
            "warnings": [*RUN_WARNINGS, *report.warnings],
            "notes": report.notes[:50],
            "budgets_hit": report.budgets_hit,
            "skipped_sitemaps": len(report.skipped_sitemaps),
            "filtered_pages": report.filtered_pages,
            "partial": report.partial,
            "partial_reasons": report.partial_reasons,
            "elapsed": round(report.elapsed, 3),
        }
        | ({} if report.llms is None else {"llms": report.llms.as_dict()})
        | ({} if report.rewalk is None else {"state": report.rewalk.as_dict()})
    )


ERRORS_SHOWN = 10


def print_summary(report: WalkReport, *, as_json: bool, quiet: bool) -> None:
    """The walk's summary on stderr: warnings, one line of counts, failed documents, why the
    result is partial. `as_json`: the summary as JSON instead (also with `quiet`, which asked
    for it). `quiet`: only errors (`print_errors`)."""
    if as_json:
        print_json(report_summary(report), stderr=True)
        return
    if quiet:
        print_errors(report)
        return
    from rich.markup import escape  # here, not at the top: a quiet run never loads rich

    for warning in [*RUN_WARNINGS, *report.warnings]:
        # The warning's own text (a URL, a path) is not markup: `[b]` in it stays as written.
        err.print(f"[yellow]warning:[/] {escape(warning)}", markup=True)
    source = _source_of(report)
    errors = len(report.errors)
    err.print(
        f"{report.urls + report.alternates:,} URLs ({report.alternates:,} alternates) "
        f"from {len(report.documents)} documents via {source}; {errors} errors, "
        f"{report.malformed_count} malformed entries; {report.elapsed:.2f} s",
        markup=False,
    )
    if report.rewalk is not None:
        err.print(f"  state: {report.rewalk.line()}", markup=False)
    for spelling in report.sitemap_spellings:
        err.print(f'  robots.txt: sitemaps also read from "{spelling}:" lines', markup=False)
    for doc in report.errors[:ERRORS_SHOWN]:
        err.print(f"  error: {doc.url}: {doc.error}", markup=False)
    if report.partial:
        err.print("partial result: " + "; ".join(report.partial_reasons), markup=False)


def print_errors(report: WalkReport) -> None:
    """What `-q` still says about a walk: its failed documents, and one closing line when it
    gave no URL (the run failed). Warnings (a budget reached, a narrow base path) are not
    errors: the exit code still tells a partial result (1) from a complete one (0)."""
    for doc in report.errors[:ERRORS_SHOWN]:
        err.print(f"error: {doc.url}: {doc.error}", markup=False)
    more = len(report.errors) - ERRORS_SHOWN
    if more > 0:
        err.print(f"error: {more:,} more failed documents", markup=False)
    if report.urls + report.alternates == 0:
        source = _source_of(report)
        err.print(
            "error: no URLs found" + ("" if source == "none" else f" (via {source})"), markup=False
        )


def _source_of(report: WalkReport) -> str:
    source = report.source or "none"
    return source if report.source_url is None else f"{source} {report.source_url}"


class Tally:
    """The entries a command has passed on (written, or counted into groups).

    The walk counts an entry when it finds it; after Ctrl-C some of those were still queued
    inside the walk and never reached the command, so the summary takes its counts from here.
    """

    def __init__(self) -> None:
        self.urls = 0
        self.alternates = 0

    @property
    def total(self) -> int:
        return self.urls + self.alternates

    def add(self, batch: Batch) -> None:
        pages = batch.pages()
        self.urls += pages
        self.alternates += len(batch) - pages

    def settle(self, report: WalkReport) -> None:
        """Make `report` count what was passed on, noting what the walk found beyond it."""
        dropped = report.urls + report.alternates - self.total
        if dropped > 0:
            report.notes.append(f"{dropped:,} URLs found but not passed on before the interruption")
        report.urls, report.alternates = self.urls, self.alternates


def exit_code(report: WalkReport) -> int:
    """3 when the walk failed outright or a complete walk gave no URL (an empty sitemap, a base
    path or a source that matched nothing); 1 for a partial result, whose missing part may hold
    what was looked for (a budget, failed documents, Ctrl-C); 0 otherwise."""
    if report.found_nothing:
        return EXIT_NOTHING
    if report.partial:
        return EXIT_PARTIAL
    return EXIT_OK if report.urls + report.alternates else EXIT_NOTHING


class WalkProgress:
    """Documents, URLs and bytes on stderr while walking — only when stderr is a terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and err.is_terminal
        self._status: Any = None
        self._last = 0.0

    def __enter__(self) -> WalkProgress:
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
