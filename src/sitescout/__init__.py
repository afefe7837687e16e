"""sitescout: what pages does this website have, and which few of them show its shape?

The public API is `__all__`. Everything else lives in private modules and may change.

    import sitescout

    for entry in sitescout.iter_urls("https://example.com/"):
        print(entry.url, entry.lastmod)

    async for batch in sitescout.walk("https://example.com/"):
        ...

Plain names are synchronous, `_async` names are coroutines; `walk` is the async iterable and
`iter_urls` its sync iterator.

Module map, in pipeline order (data flows CLI -> pipelines -> pure rules; only `_http` does
network I/O; nothing imports `cli`):

    _errors.py     the one exception tree and the `ErrorClass` names of recorded failures
    _extras.py     the optional extras (pyarrow, pandas), imported on first use
    _models.py     typed values: Entry, WalkReport, DocumentRecord, … (pure)
    _core          the native (Rust) layer: document scanner, URL hot path, seen-set, encoders
    _urls.py       URL rules: resolve, normalize, filter, slugs (pure)
    _locale.py     locale and base-path scoping (pure)
    _robots.py     robots.txt reading: Sitemap lines, Crawl-delay, allow/deny (pure)
    _parse.py      sitemap documents: bytes in, entries and child sitemaps out (pure)
    _llms.py       llms.txt as a page source (pure rules)
    _budget.py     walk budgets, their warnings, child ordering (pure)
    _junk.py       the junk-page filter (pure)
    _pagetype.py   page-type inference for the checklist (pure)
    _select/       page selection (pure): inputs, score (weights from _rules), selection (the
                   result, its explanations), pick (pool, buckets, cap)
    _html.py       one HTML page read into a PageInfo (pure)
    _cookies.py    cookies.txt reading and cookie matching for FetchConfig (pure)
    _local.py      sitemaps read from disk (file:// URLs, --map folders): path rules, reads
    _http/         the only network I/O: config (FetchConfig, TLS), guard (SSRF), decode
                   (content codings, size caps), pace (--rate, Crawl-delay), failure (errors
                   in plain words), urls, response, credentials (what goes to which host),
                   client (httpx, proxies), retry, body (reads under the caps), hops
                   (redirects), fetch (the Fetcher over them); local documents (via _local)
                   take the same decoding path
    _signals.py    Ctrl-C around work that must not be torn
    _discover/     the discovery chain: sitemap given -> robots.txt -> well-known paths; plan
                   (pure), fetch, llms (llms.txt reading)
    _pool.py       the async driver/worker pool shared by the walk and the crawl
    _ledger.py     the walk's decisions (settle, under the base path, finish), synchronous
    _walk/         the walker: options, plan (which source next, pure), documents (fetch,
                   scan, ledger), children (which child sitemaps), emitter (seen-set, base
                   path, cap, filters, batches), llms_source, walk (the thin Walk)
    _crawl.py      the link crawl when a site has no sitemap; _render.py drives Chromium for it
    _groups.py     streaming path groups
    _scope/        the pre-flight estimate: rules (pure arithmetic and notes), documents,
                   estimate (the steps)
    _pages.py      one selected page fetched as a page record or a failure
    _project.py    the project directory of an extraction: crawl log, state, page files
    _extract/      the extraction run: options, plan, gather (walk, select), run (fetch, record)
    _table.py      the inventory as Parquet / Arrow / pandas
    _inventory.py  saved inventories read back (JSON lines, CSV, plain URLs, Parquet): `report`'s
                   and `diff`'s one reader, bad rows skipped and counted
    _diff/         what changed between two saved inventories, in bounded memory: changes
                   (records, per-group tally), spill (hash partitions and sorted runs on
                   disk), compare (the diff, Arrow batches, DataFrame)
    _report.py     the site report: capped aggregates of a walk or a saved inventory (pure);
                   _report_html.py renders them as one self-contained HTML file (pure)
    _batch/        many sites on a Dask cluster: sites (the site list), results (sites.parquet),
                   parts (a partition on disk), tasks (what runs on a worker), driver (BatchRun)
    _api.py        keyword-friendly entry points: the functions exported here
    cli/           the command line, a thin layer over the above; _demo/ the bundled sample site
"""

from __future__ import annotations

import importlib
import typing  # as a module: a bare `Any` here would be one more public name
import warnings

from .__about__ import __version__
from ._errors import (
    BlockedAddressError,
    BrowserUnavailableError,
    ContentTypeError,
    EmptyPageError,
    FetchError,
    FetchTimeoutError,
    HTTPError,
    NetworkError,
    NothingFoundError,
    SitescoutError,
    TooManyRedirects,
    UsageError,
)

if typing.TYPE_CHECKING:  # what type checkers and IDEs see; at run time, `_LAZY` below
    from ._api import (
        discover_sitemaps,
        discover_sitemaps_async,
        extract,
        extract_async,
        iter_urls,
        walk,
    )
    from ._batch import SiteResult, batch
    from ._budget import Budgets
    from ._cookies import Cookie, parse_cookie, parse_cookies_txt
    from ._core import Batch
    from ._diff import Change, Diff, diff, diff_frame
    from ._discover import Discovery
    from ._extract import ExtractOptions, RunResult
    from ._groups import PathGroup, group_by_path_prefix
    from ._http import FetchConfig
    from ._models import (
        Alternate,
        CrawlReport,
        DocumentRecord,
        Entry,
        Image,
        Malformed,
        News,
        Video,
        WalkReport,
    )
    from ._parse import parse_document
    from ._project import ProjectError
    from ._scope import ScopeEstimate, estimate_scope, estimate_scope_async
    from ._table import to_arrow, to_arrow_async, to_pandas, to_pandas_async
    from ._urls import normalize_url, resolve_url, slugify
    from ._walk import SyncEntries, Walk, WalkOptions

# The public names whose modules load on first use (PEP 562), so that `import sitescout` costs
# the exception tree and no more: the HTTP client, asyncio, the Rust core, lxml, Dask and the
# optional extras load with the first name that needs them. Module -> the names it gives; the
# same objects as a plain import (each is bound here once loaded), mirrored in the block above.
_LAZY_BY_MODULE: dict[str, tuple[str, ...]] = {
    "_api": (
        "discover_sitemaps",
        "discover_sitemaps_async",
        "extract",
        "extract_async",
        "iter_urls",
        "walk",
    ),
    "_batch": ("SiteResult", "batch"),
    "_budget": ("Budgets",),
    "_cookies": ("Cookie", "parse_cookie", "parse_cookies_txt"),
    "_core": ("Batch",),
    "_diff": ("Change", "Diff", "diff", "diff_frame"),
    "_discover": ("Discovery",),
    "_extract": ("ExtractOptions", "RunResult"),
    "_groups": ("PathGroup", "group_by_path_prefix"),
    "_http": ("FetchConfig",),
    "_models": (
        "Alternate",
        "CrawlReport",
        "DocumentRecord",
        "Entry",
        "Image",
        "Malformed",
        "News",
        "Video",
        "WalkReport",
    ),
    "_parse": ("parse_document",),
    "_project": ("ProjectError",),
    "_scope": ("ScopeEstimate", "estimate_scope", "estimate_scope_async"),
    "_table": ("to_arrow", "to_arrow_async", "to_pandas", "to_pandas_async"),
    "_urls": ("normalize_url", "resolve_url", "slugify"),
    "_walk": ("SyncEntries", "Walk", "WalkOptions"),
}
_LAZY: dict[str, str] = {
    name: module for module, names in _LAZY_BY_MODULE.items() for name in names
}

__all__ = [
    "Alternate",
    "Batch",
    "BlockedAddressError",
    "BrowserUnavailableError",
    "Budgets",
    "Change",
    "ContentTypeError",
    "Cookie",
    "CrawlReport",
    "Diff",
    "Discovery",
    "DocumentRecord",
    "EmptyPageError",
    "Entry",
    "ExtractOptions",
    "FetchConfig",
    "FetchError",
    "FetchTimeoutError",
    "HTTPError",
    "Image",
    "Malformed",
    "NetworkError",
    "News",
    "NothingFoundError",
    "PathGroup",
    "ProjectError",
    "RunResult",
    "ScopeEstimate",
    "SiteResult",
    "SitescoutError",
    "SyncEntries",
    "TooManyRedirects",
    "UsageError",
    "Video",
    "Walk",
    "WalkOptions",
    "WalkReport",
    "__version__",
    "batch",
    "diff",
    "diff_frame",
    "discover_sitemaps",
    "discover_sitemaps_async",
    "estimate_scope",
    "estimate_scope_async",
    "extract",
    "extract_async",
    "group_by_path_prefix",
    "iter_urls",
    "normalize_url",
    "parse_cookie",
    "parse_cookies_txt",
    "parse_document",
    "resolve_url",
    "slugify",
    "to_arrow",
    "to_arrow_async",
    "to_pandas",
    "to_pandas_async",
    "walk",
]

# Names exported before the public API was narrowed, kept importable for one release:
# old name -> (module, name there, what to use instead).
_DEPRECATED: dict[str, tuple[str, str, str]] = {
    "TimeoutError": ("_errors", "FetchTimeoutError", "sitescout.FetchTimeoutError"),
    "estimate_scope_sync": ("_scope", "estimate_scope", "sitescout.estimate_scope"),
    "Crawler": ("_crawl", "Crawler", "sitescout.walk(url, crawl=True)"),
    "CrawledPage": ("_models", "CrawledPage", "sitescout.walk(url, crawl=True) and its entries"),
    "SitemapFound": ("_models", "SitemapFound", "sitescout.walk(url, crawl=True)"),
    "SitemapParser": ("_parse", "SitemapParser", "sitescout.parse_document"),
    "Heading": ("_models", "Heading", "sitescout.extract (pages/*.json hold the headings)"),
    "PageInfo": ("_models", "PageInfo", "sitescout.extract (pages/*.json hold each PageInfo)"),
    "parse_page": ("_html", "parse_page", "sitescout.extract (pages/*.json hold each page)"),
}


def __getattr__(name: str) -> typing.Any:
    # Only reached for names not bound yet (PEP 562): a public name's first use, or an old one.
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value  # bound: the next use is a plain lookup
        return value
    try:
        module, attr, instead = _DEPRECATED[name]
    except KeyError:
        raise AttributeError(f"module 'sitescout' has no attribute {name!r}") from None
    warnings.warn(
        f"sitescout.{name} is deprecated and goes in the next release; use {instead}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(f"{__name__}.{module}"), attr)


def __dir__() -> list[str]:
    # Every public name, loaded or not yet (the deprecated ones stay unlisted, as before).
    return sorted({*globals(), *__all__})
