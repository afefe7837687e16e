"""The link crawl (§10): breadth-first from the start URL when a site has no sitemap.

`Crawler(start_url, CrawlOptions(...))` is an async iterable of events:

* `CrawledPage` - one page fetched (or failed: `error` and `error_class`, §12 classes), with its
  depth (the start URL is depth 0), title, canonical and link counts;
* `SitemapFound` - a response that is a sitemap (§2.6: Content-Type or sniffed body), even when
  reached through an `<a href>`; its URL is for the walker to walk with its own machinery.

Both, and the `CrawlReport`, are plain records in `_models` (a `WalkReport` holds the crawl's
report); they are re-exported here.

Rules, in the order a link meets them (`_consider`):
1. Links come from `_html.parse_page` of the page's final URL, so they are resolved against it and
   `<base href>`, and normalized (§6: fragments, tracking parameters, default ports...).
2. De-duplication across the whole crawl on (host without `www.`, port, path without trailing
   slash, query): `/a`, `/a/` and `/a/?utm_source=x` are fetched once, in the form seen first
   (the walker's `UrlSet` picks the reported form from canonicals).
3. §8 filtering (`_urls.classify`): other sites, non-HTTP schemes, assets, API paths and pagination
   past page 1 are not queued; auth-walled paths are flagged and not fetched (§8 default). One
   exception: an asset-like link that names a sitemap (`.xml`, `.xml.gz`, `.rss`, `.atom`, or
   "sitemap" in its last segment) is fetched far enough to sniff it.
4. Depth: pages deeper than `max_depth` are not requested (counted in the report). Sitemap
   candidates on a page at the last depth are still sniffed: they are documents, not pages.
5. robots.txt: `Disallow`/`Allow` for our user agent (the token of the UA actually sent) - a
   disallowed URL never reaches the server. `Crawl-delay` serializes the crawl (`_http.Pacer`:
   from the end of one request to the start of the next, capped at `MAX_CRAWL_DELAY`).

Limits that bind whatever the caller asks (§10): at most `MAX_PAGES` (200) fetches - pages and
sitemap sniffs alike; robots.txt excepted - and depth at most `MAX_DEPTH` (3). A failure never
stops the crawl.

`fetch_page` is the single-page half, for `extract` too: one fetch through the `Fetcher`, the §12
classification (`HTTPError`, `ContentTypeError`, `EmptyPageError`, `TimeoutError`, `NetworkError`,
`TooManyRedirects`, `BlockedAddressError`), sitemap sniffing, and `PageInfo` from the raw or the
rendered (`Renderer`) HTML.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

from ._discover import read_robots
from ._errors import (
    ContentTypeError,
    EmptyPageError,
    ErrorClass,
    FetchError,
    UsageError,
    check_whole,
)
from ._html import MAX_HTML_BYTES, looks_like_html, parse_page
from ._http import MAX_CRAWL_DELAY, AddressGuard, FetchConfig, Fetcher, Pacer, Response
from ._models import SITEMAP_KINDS, CrawledPage, CrawlEvent, CrawlReport, PageInfo, SitemapFound
from ._parse import SitemapParser
from ._pool import Pool
from ._render import Renderer
from ._robots import Robots
from ._urls import (
    classify,
    is_http_url,
    looks_like_sitemap_url,
    normalize_url,
    page_key,
    site_key,
    url_path,
)

__all__ = [
    "HTML_ACCEPT",
    "MAX_CRAWL_DELAY",
    "MAX_DEPTH",
    "MAX_PAGES",
    "CrawlEvent",
    "CrawlOptions",
    "CrawlReport",
    "CrawledPage",
    "Crawler",
    "PageFetch",
    "SitemapFound",
    "fetch_page",
]

log = logging.getLogger(__name__)

MAX_PAGES = 200  # §10: "at most 200 visited pages regardless of the cap"
MAX_DEPTH = 3
HTML_ACCEPT = "text/html,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.5"
# Content types whose body is never read: no page, no sitemap can hide in them.
_NO_BODY_TYPES = (
    "image/",
    "audio/",
    "video/",
    "font/",
    "text/css",
    "text/javascript",
    "application/javascript",
    "application/json",
    "application/pdf",
    "application/zip",
)
_MAX_SAMPLES = 20
_MAX_BEYOND_TRACKED = 100_000


# -- one page ----------------------------------------------------------------------------------


@dataclass(slots=True)
class PageFetch:
    """What fetching one page found: a page (`info`), a sitemap (`sitemap_kind`) or an error."""

    url: str
    final_url: str
    status: int | None = None
    content_type: str = ""
    bytes: int = 0
    elapsed: float = 0.0
    redirects: list[str] = field(default_factory=list)
    info: PageInfo | None = None
    sitemap_kind: str | None = None
    rendered: bool = False
    error: FetchError | None = None


class _PageSink:
    """Keeps up to the HTML cap of a body and sniffs its start for a sitemap (§2.6).

    Reading stops as soon as the body is known to be a sitemap (the walker will read it) or, for
    a body that may not be HTML at all, known not to be one.
    """

    def __init__(self, url: str, content_type: str, sniff_only: bool) -> None:
        self.content_type = content_type
        self.kind: str | None = None
        self._parser = SitemapParser(url)
        self._keep_reading = not sniff_only and _maybe_html(content_type)
        self._parts: list[bytes] = []
        self._size = 0
        self._cap = MAX_HTML_BYTES + 1  # one byte more than parsed reveals the cut

    def feed(self, data: bytes) -> None:
        if self._size < self._cap:
            kept = data[: self._cap - self._size]
            self._parts.append(kept)
            self._size += len(kept)
        if self.kind is None:
            # The parser decides from the first kilobyte or so (more only behind a long
            # prolog, up to its own 1 MiB bound); it needs the bytes contiguous.
            self._parser.feed(data)
            self.kind = self._parser.kind

    async def drain(self) -> bool:
        if self.kind is None:
            return self._size < self._cap
        return self.kind == "not-a-sitemap" and self._keep_reading and self._size < self._cap

    def finish(self) -> None:
        if self.kind is None:
            self._parser.close()
            self.kind = self._parser.kind

    @property
    def body(self) -> bytes:
        return b"".join(self._parts)

    def sitemap_kind(self, url: str) -> str | None:
        kind = self.kind
        if kind is None or kind not in SITEMAP_KINDS:
            return None
        if kind == "text" and not (
            self.content_type.startswith("text/plain") and looks_like_sitemap_url(url)
        ):
            return None  # a plain-text page that starts with a URL is not a sitemap for that
        return kind


def _maybe_html(content_type: str) -> bool:
    """Whether a body of this type may turn out to be HTML (missing and generic types may)."""
    return (
        not content_type
        or "html" in content_type
        or "xml" in content_type  # XHTML served as application/xml
        or content_type.startswith("application/octet-stream")
    )


def _is_html(content_type: str, body: bytes) -> bool:
    if "html" in content_type:
        return True
    return _maybe_html(content_type) and looks_like_html(body)


async def fetch_page(
    fetcher: Fetcher,
    url: str,
    *,
    renderer: Renderer | None = None,
    time_limit: float | None = None,
    sniff_only: bool = False,
) -> PageFetch:
    """Fetch one page and classify the answer (§12). Never raises for what the site does.

    With `renderer`, an HTML answer is rendered in Chromium and `info` reads the rendered DOM.
    `sniff_only` reads just enough to tell whether the response is a sitemap.
    """

    def sink_for(resp: Response) -> _PageSink | None:
        content_type = resp.content_type.lower().strip()
        if content_type.startswith(_NO_BODY_TYPES):
            return None
        return _PageSink(resp.final_url, content_type, sniff_only)

    resp, sink = await fetcher.fetch_into(url, sink_for, time_limit=time_limit)
    result = PageFetch(
        url=url,
        final_url=resp.final_url,
        status=resp.status,
        content_type=resp.content_type,
        bytes=resp.bytes,
        elapsed=resp.elapsed,
        redirects=list(resp.redirects),
        error=resp.error,
    )
    if resp.error is None:
        await _classify(result, sink, renderer, sniff_only)
    return result


async def _classify(
    result: PageFetch, sink: _PageSink | None, renderer: Renderer | None, sniff_only: bool
) -> None:
    final = result.final_url
    content_type = result.content_type.lower().strip()
    if sink is None:
        result.error = ContentTypeError(f"not HTML: {content_type}", url=final)
        return
    sink.finish()
    result.sitemap_kind = sink.sitemap_kind(final)
    if result.sitemap_kind is not None or sniff_only:
        return
    body = sink.body
    if not body.strip():
        result.error = EmptyPageError("empty body", url=final)
        return
    if not _is_html(content_type, body):
        result.error = ContentTypeError(f"not HTML: {content_type or 'no Content-Type'}", url=final)
        return
    if renderer is not None:
        try:
            html = await renderer.render(
                final, body, content_type=result.content_type, status=result.status or 200
            )
        except FetchError as exc:
            result.error = exc
            return
        result.rendered = True
        result.info = parse_page(html.encode("utf-8"), final, "text/html; charset=utf-8")
    else:
        result.info = parse_page(body, final, result.content_type)
    if result.info.is_empty:
        why = "no visible text, link or media" + ("" if result.rendered else " (try --render)")
        result.error = EmptyPageError(why, url=final)


# -- the crawler -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Item:
    url: str
    depth: int
    found_on: str | None
    probe: bool = False  # a sitemap candidate: sniff only


@dataclass(frozen=True, slots=True)
class CrawlOptions:
    """Everything that shapes one crawl besides its start URL; checked when made.

    `robots`: rules already read by discovery; when None and `read_robots` is true, the crawler
    reads `<origin>/robots.txt` itself. `config`: for the crawler's own client (default: the
    shared fetcher's, else `FetchConfig()`), with an HTML `Accept` header and the SSRF guard
    rooted at the start URL unless `ssrf_guard` is false. `prefix`: follow only links whose path
    starts with it (the base path). `deadline`: seconds after which no new page is requested.
    `max_pages` and `max_depth` above `MAX_PAGES` and `MAX_DEPTH` are lowered to them.
    """

    config: FetchConfig | None = None
    max_pages: int = MAX_PAGES
    max_depth: int = MAX_DEPTH
    concurrency: int = 4
    render: bool = False
    robots: Robots | None = None
    read_robots: bool = True
    ssrf_guard: bool = True
    prefix: str | None = None
    deadline: float | None = None
    chromium: str | None = None  # the browser for `render` (default: found on the system)

    def __post_init__(self) -> None:
        check_whole("max_pages", self.max_pages, low=1)
        check_whole("max_depth", self.max_depth, low=0)
        check_whole("concurrency", self.concurrency, low=1)
        # A spent deadline is fine (the walk passes what is left of its own); NaN never expires.
        deadline = self.deadline
        if deadline is not None and (
            isinstance(deadline, bool)
            or not isinstance(deadline, int | float)
            or math.isnan(deadline)
        ):
            raise UsageError(f"deadline must be a number of seconds, got {deadline!r}")
        for name, kind in (("config", FetchConfig), ("robots", Robots)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                raise UsageError(f"{name} must be a {kind.__name__} or None, got {value!r}")
        for name in ("render", "read_robots", "ssrf_guard"):
            if not isinstance(getattr(self, name), bool):
                raise UsageError(f"{name} must be True or False, got {getattr(self, name)!r}")
        for name in ("prefix", "chromium"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise UsageError(f"{name} must be a string or None, got {value!r}")


class Crawler:
    """A breadth-first crawl of one site; iterate it (`async for event in crawler`) once.

    `fetcher`: share the caller's client (its guard and per-host limits) instead of opening one;
    it is left open.
    """

    def __init__(
        self,
        start_url: str,
        options: CrawlOptions | None = None,
        *,
        fetcher: Fetcher | None = None,
    ) -> None:
        if not is_http_url(start_url):
            raise UsageError(f"not an http(s) URL: {start_url!r}")
        if options is not None and not isinstance(options, CrawlOptions):
            raise UsageError(f"options must be a CrawlOptions, got {options!r}")
        self.options = opts = options or CrawlOptions()
        self.start_url = normalize_url(start_url)
        self.config = opts.config or (fetcher.config if fetcher else FetchConfig())
        self.max_pages = min(opts.max_pages, MAX_PAGES)
        self.max_depth = min(opts.max_depth, MAX_DEPTH)
        self.robots = opts.robots
        self.report = CrawlReport(start_url=self.start_url)
        self._own_fetcher = fetcher is None
        self._fetcher = fetcher
        self._renderer: Renderer | None = None
        self._site = self.start_url
        self._seen: set[str] = set()  # dedup keys queued or dropped
        self._read: set[str] = set()  # dedup keys of URLs fetched and of where they led
        self._beyond: set[str] = set()
        self._pool: Pool[_Item, CrawlEvent] = Pool(self._visit, self._failed, out_size=16)
        self._pacer = Pacer(None)
        self._robots_ours = False  # read by the crawler itself (not given by the caller)
        self._started = False
        self._t0 = 0.0

    def __aiter__(self) -> AsyncIterator[CrawlEvent]:
        if self._started:
            raise RuntimeError("a Crawler can be iterated once")
        self._started = True
        return self._events()

    async def _events(self) -> AsyncIterator[CrawlEvent]:
        self._t0 = time.monotonic()
        try:
            # A setup error (no browser) or a bug in the driver surfaces here.
            async with contextlib.aclosing(self._pool.run(self._run)) as events:
                async for event in events:
                    yield event
        finally:
            self.report.elapsed = time.monotonic() - self._t0

    async def _run(self) -> None:
        opts = self.options
        async with AsyncExitStack() as stack:
            fetcher = self._fetcher
            if fetcher is None:
                guard = AddressGuard(self.start_url) if opts.ssrf_guard else None
                fetcher = Fetcher(
                    self.config.for_concurrency(opts.concurrency),
                    guard=guard,
                    accept=HTML_ACCEPT,
                    origin=self.start_url,
                )
                self._fetcher = await stack.enter_async_context(fetcher)
            if opts.render:
                renderer = Renderer(
                    guard=fetcher.guard,
                    executable=opts.chromium,
                    user_agent=self.config.user_agent,
                    timeout=self.config.timeout,
                    max_open=self.config.per_host_for(opts.concurrency),
                )
                self._renderer = await stack.enter_async_context(renderer)
            await self._setup_robots(fetcher)
            workers = 1 if self._pacer else self.config.per_host_for(opts.concurrency)
            async with self._pool.workers(workers):
                self._seed()
                await self._pool.join()

    async def _setup_robots(self, fetcher: Fetcher) -> None:
        if self.robots is None and self.options.read_robots:
            self.robots, _resp = await read_robots(fetcher, self._site)
            self._robots_ours = True
        if self.robots is None:
            return
        self.report.robots_url = self.robots.url
        pacer = Pacer(self.robots.crawl_delay)
        if not pacer:
            return
        if pacer.capped:
            self.report.notes.append(
                f"robots.txt asks for Crawl-delay {self.robots.crawl_delay:g} s; "
                f"using {pacer.delay:g} s"
            )
        self.report.crawl_delay = pacer.delay
        self._pacer = pacer
        if self._own_fetcher and self._fetcher is not None:
            self._fetcher.config = pacer.config(self._fetcher.config)

    def _seed(self) -> None:
        url = self.start_url
        self._seen.add(page_key(url))
        if self.robots is not None and not self.robots.allowed(url):
            self._disallow(url)
            self.report.notes.append(f"robots.txt disallows the start URL {url}")
            return
        self._pool.put(_Item(url, 0, None))

    # -- workers ---------------------------------------------------------------------------------

    async def _failed(self, item: _Item, exc: Exception) -> None:
        """A bug while visiting one page: recorded as that page's failure, the crawl goes on."""
        log.exception("internal error crawling %s", item.url)
        await self._emit_failure(item, "internal error", "InternalError")

    def _may_fetch(self) -> bool:
        deadline = self.options.deadline
        if deadline is not None and time.monotonic() - self._t0 > deadline:
            self.report.deadline_hit = True
        elif self.report.fetches >= self.max_pages:
            self.report.page_limit_hit = True
        else:
            self.report.fetches += 1
            return True
        self.report.unvisited += 1
        return False

    async def _visit(self, item: _Item) -> None:
        key = page_key(item.url)
        if key in self._read:
            return  # an earlier redirect already led to this page
        if not self._may_fetch():
            return
        assert self._fetcher is not None
        async with self._pacer.slot():
            fetched = await fetch_page(
                self._fetcher,
                item.url,
                renderer=None if item.probe else self._renderer,
                sniff_only=item.probe,
            )
        final = normalize_url(fetched.final_url)
        final_key = page_key(final)
        # Redirected to a page the crawl has read: report the fetch, do not follow it twice.
        already = final_key in self._read
        self._read.update((key, final_key))
        self._seen.add(final_key)
        if fetched.sitemap_kind is not None:
            await self._sitemap(item, final, fetched.sitemap_kind)
        elif item.probe:
            log.debug("linked document %s is not a sitemap", item.url)
        else:
            await self._page(item, final, fetched, already)

    async def _sitemap(self, item: _Item, final: str, kind: str) -> None:
        if final in self.report.sitemaps:
            return
        self.report.sitemaps.append(final)
        log.info("sitemap found through a link: %s (on %s)", final, item.found_on)
        await self._pool.emit(SitemapFound(final, item.url, item.depth, item.found_on, kind))

    async def _page(self, item: _Item, final: str, fetched: PageFetch, already: bool) -> None:
        page = CrawledPage(
            url=item.url,
            final_url=final,
            depth=item.depth,
            found_on=item.found_on,
            status=fetched.status,
            content_type=fetched.content_type,
            bytes=fetched.bytes,
            elapsed=fetched.elapsed,
            rendered=fetched.rendered,
            info=fetched.info,
        )
        info = fetched.info
        if info is not None:
            page.title, page.canonical = info.title, info.canonical
            page.links_internal, page.links_external = (
                info.link_count_internal,
                info.link_count_external,
            )
        if fetched.error is not None:
            page.error, page.error_class = str(fetched.error), fetched.error.error_class
            self.report.failures += 1
            log.info("page %s failed: %s", item.url, fetched.error)
        self.report.pages += 1
        if item.depth == 0 and site_key(final) != site_key(self._site):
            await self._move_to(final)
        await self._pool.emit(page)
        if info is not None and not already and site_key(final) == site_key(self._site):
            for url in info.links_internal + info.links_external:
                self._consider(url, item.depth + 1, final)

    async def _move_to(self, site: str) -> None:
        """The start URL led to another site (a domain move): crawl that one, by its rules."""
        self.report.notes.append(f"the start URL redirects to {site}; crawling that site")
        self._site = site
        if self._robots_ours and self._fetcher is not None:
            self.robots = None  # nothing else is in flight while the start page is handled
            await self._setup_robots(self._fetcher)

    async def _emit_failure(self, item: _Item, message: str, error_class: ErrorClass) -> None:
        self.report.failures += 1
        self.report.pages += 1
        page = CrawledPage(item.url, item.url, item.depth, item.found_on)
        page.error, page.error_class = message, error_class
        await self._pool.emit(page)

    # -- the frontier ----------------------------------------------------------------------------

    def _consider(self, url: str, depth: int, found_on: str) -> None:
        key = page_key(url)
        if key in self._seen:
            return
        verdict = classify(url, self._site)
        probe = verdict.reason == "asset-extension" and looks_like_sitemap_url(url)
        if verdict.decision != "keep" and not probe:
            self._seen.add(key)
            self.report.filtered[verdict.reason] += 1
            return
        prefix = self.options.prefix
        if not probe and prefix is not None and not url_path(url).startswith(prefix):
            self._seen.add(key)
            self.report.filtered["outside-prefix"] += 1
            return
        if depth > self.max_depth and not probe:
            # Not marked seen: a shallower page finishing later may still link it in range.
            if key not in self._beyond and len(self._beyond) < _MAX_BEYOND_TRACKED:
                self._beyond.add(key)
                self.report.beyond_depth += 1
            return
        self._seen.add(key)
        if key in self._beyond:
            self._beyond.discard(key)
            self.report.beyond_depth -= 1
        if self.robots is not None and not self.robots.allowed(url):
            self._disallow(url)
            return
        self._pool.put(_Item(url, depth, found_on, probe))

    def _disallow(self, url: str) -> None:
        self.report.disallowed += 1
        if len(self.report.disallowed_samples) < _MAX_SAMPLES:
            self.report.disallowed_samples.append(url)
        log.debug("robots.txt disallows %s", url)
