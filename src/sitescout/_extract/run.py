"""Phase 2, `run_extract`: fetch the planned pages and record each outcome as it lands.

What it writes goes through the project (`_project`): the crawl log's run, opened with
`discovery_record` and closed on every way out, and each page's file and state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .._http import AddressGuard, Fetcher, Pacer
from .._pages import PageOutcome, extract_page
from .._project import DISCOVERED, ProjectError, now_iso
from .._walk import MAX_CONCURRENCY
from .options import ExtractOptions
from .plan import Plan

if TYPE_CHECKING:
    from .._render import Renderer

# The package's name, not this room's: `-vv` shows it, and its records have always borne it.
log = logging.getLogger(__package__)


@dataclass(slots=True)
class RunResult:
    successes: list[str] = field(default_factory=list)
    failures: list[PageOutcome] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # already extracted in an earlier run
    disallowed: list[str] = field(default_factory=list)  # by robots.txt
    interrupted: bool = False


def discovery_record(plan: Plan, *, user_choice: str | None) -> dict[str, Any]:
    """The `discovery` object of a crawl-log run (§12): the walk's findings and the selection."""
    report = plan.report
    return {
        "source": report.source or "none",
        "sourceUrl": report.source_url,
        # What the llms.txt lookup found, when there was one (source `llms.txt` or `all`).
        "llmsTxt": None if report.llms is None else report.llms.as_dict(),
        "fetchedAt": now_iso(),
        **plan.selection.to_dict(),
        "walkedUrlCount": plan.discovered,
        "truncation": plan.truncation,
        "userChoice": user_choice,
        "malformed": [
            {"raw": m.raw, "reason": m.reason, "sitemap": m.sitemap} for m in report.malformed
        ],
        "notes": report.notes,
        "budgetsHit": report.budgets_hit,
        "warnings": report.warnings,
        "partial": report.partial,
        "defaultLocale": plan.default_locale,
        "otherLocaleCount": plan.other_locales,
    }


async def run_extract(
    plan: Plan,
    options: ExtractOptions,
    *,
    user_choice: str | None = None,
    on_page: Callable[[str, PageOutcome | None], None] | None = None,
) -> RunResult:
    """Fetch every page of `plan.to_fetch` and record each outcome as it lands.

    Pages run concurrently (at most `options.concurrency`; one at a time, spaced by `_http.Pacer`,
    with a robots.txt Crawl-delay). Cancellation (Ctrl-C) still closes the run in the crawl log.
    The project's lock, taken by `plan_extract`, is released on every way out.
    """
    try:
        return await _run(plan, options, user_choice, on_page)
    finally:
        plan.project.close()


async def _run(
    plan: Plan,
    options: ExtractOptions,
    user_choice: str | None,
    on_page: Callable[[str, PageOutcome | None], None] | None,
) -> RunResult:
    project = plan.project
    result = RunResult(skipped=list(plan.already))
    project.start_run(discovery_record(plan, user_choice=user_choice))
    for slug in plan.already:
        project.page_skipped(slug)
    for slug, url in plan.to_fetch:
        previous = project.pages.get(slug)
        if previous is None or previous.status != DISCOVERED:
            refresh = {"refresh": True} if project.extracted(slug) else {}
            project.mark(slug, url, DISCOVERED, **refresh)
    project.flush()
    robots = plan.robots
    # Crawl-delay paces the page fetches as it paces the link crawl: one at a time.
    pacer = Pacer(robots.crawl_delay if robots is not None else None)
    if pacer.capped:
        log.info("robots.txt asks for a longer Crawl-delay; using %g s", pacer.delay)
    gate = asyncio.Semaphore(options.concurrency)
    guard = AddressGuard(plan.url) if options.ssrf_guard else None
    # The pages of one site share its host: as many in flight as the concurrency, at most what
    # a walk may open.
    fetch = options.fetch.for_concurrency(min(options.concurrency, MAX_CONCURRENCY))
    config = pacer.config(replace(fetch, retries=min(fetch.retries, 1)))

    async def one(fetcher: Fetcher, renderer: Renderer | None, slug: str, url: str) -> None:
        if robots is not None and not robots.allowed(url):
            project.page_skipped(slug)
            result.disallowed.append(slug)
            log.info("%s: disallowed by robots.txt, not fetched", url)
            if on_page:
                on_page(slug, None)
            return
        async with gate, pacer.slot():
            try:
                outcome = await extract_page(fetcher, url, renderer)
            except Exception as exc:  # a bug in one page must not lose the others
                log.exception("internal error extracting %s", url)
                outcome = _internal_failure(url, f"{type(exc).__name__}: {exc}")
        if outcome.ok:
            try:
                project.page_done(slug, url, outcome.record(slug, now_iso(), options.render))
            except (OSError, ProjectError) as exc:  # e.g. pages/ swapped for a link mid-run
                log.error("%s: page file not written: %s", url, exc)
                outcome = _internal_failure(url, f"page file not written: {exc}")
        if outcome.ok:
            result.successes.append(slug)
        else:
            project.page_failed(
                slug, url, outcome.error_class or "NetworkError", outcome.error or ""
            )
            result.failures.append(outcome)
        if on_page:
            on_page(slug, outcome)

    try:
        async with (
            Fetcher(config, guard=guard, origin=plan.url) as fetcher,
            _renderer(options, guard) as renderer,
            asyncio.TaskGroup() as group,
        ):
            for slug, url in plan.to_fetch:
                group.create_task(one(fetcher, renderer, slug, url))
    except BaseException:
        result.interrupted = True
        project.finish_run(interrupted=True)
        raise
    project.finish_run()
    return result


def _internal_failure(url: str, message: str) -> PageOutcome:
    outcome = PageOutcome(url, url, None, "", error_class="InternalError")
    outcome.error = message
    return outcome


@contextlib.asynccontextmanager
async def _renderer(
    options: ExtractOptions, guard: AddressGuard | None
) -> AsyncIterator[Renderer | None]:
    if not options.render:
        yield None
        return
    from .._render import Renderer

    async with Renderer(
        guard=guard, user_agent=options.fetch.user_agent, timeout=options.fetch.timeout
    ) as renderer:
        yield renderer
