"""sitescout: what pages does this website have, and which few of them show its shape?

The public API. Everything else lives in private modules and may change.

    import sitescout

    for entry in sitescout.iter_urls("https://example.com/"):
        print(entry.url, entry.lastmod)

    async for batch in sitescout.walk("https://example.com/"):
        ...
"""

from __future__ import annotations

from .__about__ import __version__
from ._api import discover_sitemaps, iter_urls, walk
from ._batch import SiteResult, batch
from ._budget import Budgets
from ._core import Batch
from ._crawl import CrawledPage, Crawler, CrawlReport, SitemapFound
from ._discover import Discovery
from ._errors import (
    BlockedAddressError,
    BrowserUnavailableError,
    ContentTypeError,
    EmptyPageError,
    FetchError,
    HTTPError,
    NetworkError,
    NothingFoundError,
    SitescoutError,
    TimeoutError,
    TooManyRedirects,
    UsageError,
)
from ._groups import PathGroup, group_by_path_prefix
from ._html import Heading, PageInfo, parse_page
from ._http import FetchConfig
from ._models import (
    Alternate,
    DocumentRecord,
    Entry,
    Image,
    Malformed,
    News,
    Video,
    WalkReport,
)
from ._parse import SitemapParser, parse_document
from ._scope import ScopeEstimate, estimate_scope, estimate_scope_sync
from ._table import to_arrow, to_arrow_async, to_pandas, to_pandas_async
from ._urls import normalize_url, resolve_url
from ._walk import Walk, WalkOptions

__all__ = [
    "Alternate",
    "Batch",
    "BlockedAddressError",
    "BrowserUnavailableError",
    "Budgets",
    "ContentTypeError",
    "CrawlReport",
    "CrawledPage",
    "Crawler",
    "Discovery",
    "DocumentRecord",
    "EmptyPageError",
    "Entry",
    "FetchConfig",
    "FetchError",
    "HTTPError",
    "Heading",
    "Image",
    "Malformed",
    "NetworkError",
    "News",
    "NothingFoundError",
    "PageInfo",
    "PathGroup",
    "ScopeEstimate",
    "SiteResult",
    "SitemapFound",
    "SitemapParser",
    "SitescoutError",
    "TimeoutError",
    "TooManyRedirects",
    "UsageError",
    "Video",
    "Walk",
    "WalkOptions",
    "WalkReport",
    "__version__",
    "batch",
    "discover_sitemaps",
    "estimate_scope",
    "estimate_scope_sync",
    "group_by_path_prefix",
    "iter_urls",
    "normalize_url",
    "parse_document",
    "parse_page",
    "resolve_url",
    "to_arrow",
    "to_arrow_async",
    "to_pandas",
    "to_pandas_async",
    "walk",
]
