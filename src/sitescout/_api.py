"""Keyword-friendly entry points over the walker (the public faces of `__init__`)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from ._budget import Budgets
from ._discover import Discovery, discover, probe
from ._errors import UsageError
from ._http import AddressGuard, FetchConfig, Fetcher
from ._urls import normalize_url
from ._walk import SyncEntries, Walk, WalkOptions


def _options(options: WalkOptions | None, kwargs: dict[str, Any]) -> WalkOptions:
    opts = options or WalkOptions()
    fetch_fields = {k: kwargs.pop(k) for k in list(kwargs) if k in FetchConfig.__dataclass_fields__}
    budget_fields = {k: kwargs.pop(k) for k in list(kwargs) if k in Budgets.__dataclass_fields__}
    try:
        if fetch_fields:
            opts = replace(opts, fetch=replace(opts.fetch, **fetch_fields))
        if budget_fields:
            opts = replace(opts, budgets=replace(opts.budgets, **budget_fields))
        return replace(opts, **kwargs) if kwargs else opts
    except TypeError as exc:
        raise UsageError(str(exc)) from exc


def _check_url(url: str) -> str:
    if not url.lower().startswith(("http://", "https://")):
        raise UsageError(f"not an http(s) URL: {url!r}")
    return url


def walk(url: str, options: WalkOptions | None = None, **kwargs: Any) -> Walk:
    """Walk a site's sitemaps as an async iterable of batches of `Entry` (at most 1,000 each).

    `url` is a site URL (discovery runs) or a sitemap URL (walked directly). Keyword arguments
    are fields of `WalkOptions`, `FetchConfig` (`timeout`, `user_agent`, `max_document_bytes`, …) or
    `Budgets` (`max_fetches`, `max_depth`, …). After iteration, `walk.report` holds the report.
    """
    return Walk(_check_url(url), _options(options, kwargs))


def iter_urls(url: str, options: WalkOptions | None = None, **kwargs: Any) -> SyncEntries:
    """The same walk for scripts: a plain iterator of entries (`.report` when exhausted).

    Must not be called from inside a running event loop; use `walk` there.
    """
    return SyncEntries(_check_url(url), _options(options, kwargs))


async def discover_sitemaps_async(
    url: str, *, sitemap: str | None = None, config: FetchConfig | None = None
) -> Discovery:
    """Run the §2 chain and return where the walk would start (robots, well-known probes)."""
    async with Fetcher(config, guard=AddressGuard(_check_url(url))) as fetcher:
        found = await discover(fetcher, url, sitemap)
        if found.sitemaps:
            return found
        for name, candidate in found.candidates:
            ok, _resp = await probe(fetcher, candidate)
            if ok:
                found.source, found.source_url = name, candidate
                found.sitemaps = [normalize_url(candidate)]
                return found
        found.notes.append("no sitemap found (robots.txt and well-known paths)")
        return found


def discover_sitemaps(
    url: str, *, sitemap: str | None = None, config: FetchConfig | None = None
) -> Discovery:
    """Sync twin of `discover_sitemaps_async`."""
    return asyncio.run(discover_sitemaps_async(url, sitemap=sitemap, config=config))
