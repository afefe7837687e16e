"""Keyword-friendly entry points over the pipelines (the public faces of `__init__`).

Plain names are synchronous and `_async` names are coroutines (`walk` and `iter_urls` are the
exception that is the rule's other half: an async iterable and its sync iterator).
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._discover import (
    SNIFF,
    Discovery,
    DiscoveryPlan,
    Done,
    FetchRobots,
    Tried,
    fetch_robots,
    probe,
)
from ._errors import NothingFoundError, refuse_running_loop
from ._http import AddressGuard, FetchConfig, Fetcher
from ._walk import (
    SyncEntries,
    Walk,
    WalkOptions,
    as_walk_url,
    fetch_config,
    require_http_url,
    unknown_option,
    walk_options,
)

if TYPE_CHECKING:
    # The extraction's modules (selection, page records, project files) load with the first
    # extraction: a walk, which is most runs of the CLI, does not pay their import.
    from ._extract import ExtractOptions, Plan, RunResult
    from ._select import Question

log = logging.getLogger(__name__)


def _check_url(url: object) -> str:
    return require_http_url(url, "site URL")


def _walk_url(url: object) -> str:
    """A walk's start: an http(s) URL, a `file://` URL, or a path (`os.PathLike`) on disk."""
    return as_walk_url(url, "site URL")


def walk(url: str | os.PathLike[str], options: WalkOptions | None = None, **kwargs: Any) -> Walk:
    """Walk a site's sitemaps as an async iterable of batches of `Entry` (at most 1,000 each).

    `url` is a site URL (discovery runs) or a sitemap URL (walked directly). Keyword arguments
    are fields of `WalkOptions`, `FetchConfig` (`timeout`, `user_agent`, `max_document_bytes`, …) or
    `Budgets` (`max_fetches`, `max_depth`, …). After iteration, `walk.report` holds the report.
    """
    return Walk(_walk_url(url), walk_options(options, kwargs))


def iter_urls(
    url: str | os.PathLike[str], options: WalkOptions | None = None, **kwargs: Any
) -> SyncEntries:
    """The same walk for scripts: a plain iterator of entries (`.report` when exhausted).

    Must not be called from inside a running event loop (`UsageError`); use `walk` there.
    """
    refuse_running_loop("iter_urls", instead="async for batch in walk(...)")
    return SyncEntries(_walk_url(url), walk_options(options, kwargs))


async def discover_sitemaps_async(
    url: str, *, sitemap: str | None = None, config: FetchConfig | None = None, **kwargs: Any
) -> Discovery:
    """Find where a walk would start: robots.txt, then the well-known sitemap paths.

    Keyword arguments are fields of `FetchConfig` applied on top of `config`.
    """
    url = _check_url(url)
    if sitemap is not None:
        require_http_url(sitemap, "sitemap")
    config = fetch_config(config, kwargs)
    async with Fetcher(config, guard=AddressGuard(url)) as fetcher:
        plan = DiscoveryPlan(url, sitemap, user_agent=config.user_agent, rules=SNIFF)
        step = plan.start()
        while not isinstance(step, Done):
            if isinstance(step, FetchRobots):
                answer, _resp = await fetch_robots(fetcher, step.url)
                step = plan.feed(answer)
            else:  # a well-known path: its first kilobytes tell
                is_sitemap, _resp = await probe(fetcher, step.urls[0])
                step = plan.feed(Tried(is_sitemap))
        return step.found


def discover_sitemaps(
    url: str, *, sitemap: str | None = None, config: FetchConfig | None = None, **kwargs: Any
) -> Discovery:
    """Sync twin of `discover_sitemaps_async`; not from inside a running event loop."""
    refuse_running_loop("discover_sitemaps")
    return asyncio.run(discover_sitemaps_async(url, sitemap=sitemap, config=config, **kwargs))


def extract_options(out: str | Path | None, kwargs: dict[str, Any]) -> ExtractOptions:
    """`ExtractOptions` from keywords; an unknown name is refused with a guess at the right one."""
    from ._extract import ExtractOptions

    fields = frozenset(ExtractOptions.__dataclass_fields__) - {"out"}
    for name in kwargs:
        if name not in fields:
            raise unknown_option(name, fields)
    return ExtractOptions(out=None if out is None else Path(out), **kwargs)


async def extract_async(url: str, out: str | Path | None = None, **options: Any) -> RunResult:
    """Pick a handful of representative pages of `url`, fetch them and write the project.

    The run of `sitescout extract URL --yes`: walk with the sampler preset, select (§11), fetch
    and record in `out` (default `sitescout-HOST[-PORT]`). Keyword arguments are the fields of
    `ExtractOptions` (`cap=`, `all=`, `pages=`, `single=`, `locale=`, `fetch=`, `budgets=`, …).
    Never asks: where the CLI would ask (a large `all=True` run, too few templates), it logs the
    warning and goes on. Raises `UsageError` for a bad option or a project directory that cannot
    be used (`ProjectError`), `NothingFoundError` when the walk found no page; what a site does
    to single pages is recorded in the result and the crawl log, not raised.
    """
    from ._extract import plan_extract, run_extract

    url = _check_url(url)
    opts = extract_options(out, options)
    plan = await plan_extract(url, opts)
    try:
        _log_plan(plan)
        if not plan.selection.kept and not plan.to_fetch:
            raise NothingFoundError(f"nothing to extract at {url}: {plan.nothing_reason()}")
        choice = _unasked_choice(plan, opts)
    except BaseException:
        plan.project.close()  # run_extract releases the lock on its own ways out, not here
        raise
    return await run_extract(plan, opts, user_choice=choice)


def extract(url: str, out: str | Path | None = None, **options: Any) -> RunResult:
    """Sync twin of `extract_async`; not from inside a running event loop."""
    refuse_running_loop("extract")
    return asyncio.run(extract_async(url, out, **options))


def _log_plan(plan: Plan) -> None:
    for warning in plan.report.warnings:
        log.warning("%s: %s", plan.url, warning)
    if plan.truncation:
        log.warning("%s: %s", plan.url, plan.truncation)


def _described(question: Question) -> str:
    """A question the CLI would ask, as one log line (the CLI words its own)."""
    from ._select import LargeRun

    if isinstance(question, LargeRun):
        return f"the selection has {question.pages} pages, more than {question.limit}"
    return f"only {len(question.templates)} distinct page templates are discoverable"


def _unasked_choice(plan: Plan, options: ExtractOptions) -> str | None:
    """What the crawl log records as the user's answer: the CLI's non-interactive one, where
    the CLI would have asked, None where it would not have."""
    from ._select import questions

    asked = [_described(question) for question in questions(plan.selection)]
    if options.refresh_all and plan.project.runs:
        asked.append(f"re-extracting all {len(plan.to_fetch)} pages")
    for warning in asked:
        log.warning("%s: %s", plan.url, warning)
    return "proceed (non-interactive)" if asked else None
