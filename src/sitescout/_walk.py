"""The walker (§5): discovery, a bounded pool of document workers, de-duplication, the report.

`Walk` is an async iterable of batches (lists of at most 1,000 entries). Documents are fetched by
`concurrency` workers pulling from one queue; each streams its body into a `SitemapParser`, and
entries flow to the consumer through a small bounded queue, so a slow consumer slows the
fetching instead of growing memory. Nothing holds the inventory: memory is the batch, the
documents in flight and the compact seen-set.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import logging
import os
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ._budget import BudgetName, Budgets, BudgetTracker, budget_label, order_children
from ._core import Batch, LlmsIndex, SeenSet, UrlFilter
from ._crawl import Crawler, CrawlOptions, SitemapFound
from ._discover import (
    WALK,
    WALK_CRAWL,
    Discovery,
    DiscoveryPlan,
    Done,
    FetchRobots,
    LlmsReader,
    Tried,
    TrySitemaps,
    fetch_robots,
    llms_shortfall,
    llms_txt_unread,
)
from ._errors import UsageError, check_whole, refuse_running_loop
from ._http import AddressGuard, FetchConfig, Fetcher, Response, render_problem
from ._ledger import WalkLedger
from ._llms import SOURCE as LLMS
from ._llms import LlmsLink
from ._local import STDIN_URL, LocalFiles, check_maps, is_file_url, local_child
from ._locale import base_prefix, filter_children, path_locale, require_locale
from ._models import DocumentRecord, Entry, Malformed, WalkReport
from ._parse import SitemapParser
from ._pool import Pool
from ._rules import WELL_KNOWN_SITEMAPS
from ._since import as_utc
from ._urls import document_key, is_http_url, looks_like_sitemap_url, origin_of

log = logging.getLogger(__name__)

BATCH_SIZE = 1000
# A batch is handed on when full, when a document ends, or when its oldest entry has waited
# this long (seconds), whichever comes first; the wait is checked every tick.
MAX_BATCH_WAIT = 0.4
_FLUSH_TICK = 0.1
# A fetch timing out with less than this left before the deadline was cut by the deadline.
_DEADLINE_SLACK = 0.1
MAX_MALFORMED_KEPT = 1000
# Workers are tasks with their own buffers: a huge count is a mistake, not a speed-up.
MAX_CONCURRENCY = 64
# Where page URLs come from. auto: the sitemaps; llms.txt when there are none; then the link
# crawl. all: sitemaps and llms.txt merged, each entry naming the sources that listed it.
SOURCES = ("auto", "sitemap", "llms", "all")
_BOTH = ("sitemap", LLMS)
_SITEMAP_ONLY = ("sitemap",)
_LLMS_ONLY = (LLMS,)


@dataclass(frozen=True, slots=True)
class WalkOptions:
    """Everything that shapes one walk besides its URL."""

    # The site's sitemap, walked without discovery; a `file://` URL or a path (an
    # `os.PathLike`, held as its `file://` URL) reads it from disk.
    sitemap: str | None = None
    alternates: bool = True
    concurrency: int = 8
    fetch: FetchConfig = field(default_factory=FetchConfig)
    budgets: Budgets = field(default_factory=Budgets)
    locale: str | None = None
    filter_locales: bool = False
    ssrf_guard: bool = True
    # §10: follow links instead of walking sitemaps (also done when discovery finds none).
    crawl: bool = False
    render: bool = False  # the crawl loads pages in headless Chromium
    source: str = "auto"  # one of SOURCES
    llms_txt: str | None = None  # the llms.txt to read instead of looking for one
    # Documents whose URL starts with a prefix are read from its folder, never requested.
    maps: tuple[tuple[str, str], ...] = ()
    offline: bool = False  # no request at all: http(s) documents no map covers are skipped
    # Filters that save fetches. `since`: page URLs and index children whose lastmod is older
    # are dropped (children not fetched); a naive datetime means UTC; no lastmod is kept unless
    # `since_strict` (pages only). Patterns are regexes (linear-time engine) searched in the URL:
    # kept when one include matches (or there is none) and no exclude does.
    since: datetime | None = None
    since_strict: bool = False
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    sitemap_include: tuple[str, ...] = ()
    sitemap_exclude: tuple[str, ...] = ()
    # url -> bool for each child sitemap of an index: False leaves it unfetched; raising records
    # an error for that child.
    sitemap_filter: Callable[[str], bool] | None = None

    def __post_init__(self) -> None:
        # Checked here, before any request: `concurrency=0` starts no worker and waits forever,
        # and a bad locale would only surface mid-walk, inside the first sitemap index.
        if self.sitemap is not None:  # a file on disk may stand for the site's sitemap
            object.__setattr__(self, "sitemap", as_walk_url(self.sitemap, "sitemap"))
        if self.llms_txt is not None:
            require_http_url(self.llms_txt, "llms_txt")
        if self.source not in SOURCES:
            raise UsageError(f"source must be one of {', '.join(SOURCES)}; got {self.source!r}")
        if self.llms_txt is not None and self.source == "sitemap":
            raise UsageError(
                "llms_txt names a file that source 'sitemap' never reads; "
                "use source 'llms' or 'all' to read it"
            )
        check_whole("concurrency", self.concurrency, low=1, high=MAX_CONCURRENCY)
        for name, kind in (("fetch", FetchConfig), ("budgets", Budgets)):
            if not isinstance(getattr(self, name), kind):
                raise UsageError(f"{name} must be a {kind.__name__}, got {getattr(self, name)!r}")
        if self.locale is not None:
            if not isinstance(self.locale, str):
                raise UsageError(f"locale must be a string, got {self.locale!r}")
            require_locale(self.locale)
        object.__setattr__(self, "maps", check_maps(self.maps))
        if self.offline is True and self.crawl:
            raise UsageError("offline and crawl cannot be combined: the crawl fetches pages")
        for name in ("alternates", "filter_locales", "ssrf_guard", "crawl", "render", "offline"):
            if not isinstance(getattr(self, name), bool):
                raise UsageError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.render and (problem := render_problem(self.fetch)) is not None:
            raise UsageError(problem)
        self._check_filters()

    def _check_filters(self) -> None:
        if self.since is not None:
            if not isinstance(self.since, datetime):
                raise UsageError(f"since must be a datetime, got {self.since!r}")
            try:
                object.__setattr__(self, "since", as_utc(self.since))
            except (OverflowError, ValueError):
                raise UsageError(f"since is out of range in UTC: {self.since!r}") from None
        if not isinstance(self.since_strict, bool):
            raise UsageError(f"since_strict must be True or False, got {self.since_strict!r}")
        if self.since_strict and self.since is None:
            raise UsageError("since_strict needs since")
        for name in ("include", "exclude", "sitemap_include", "sitemap_exclude"):
            value = getattr(self, name)
            if not isinstance(value, tuple | list) or not all(isinstance(p, str) for p in value):
                raise UsageError(f"{name} must be a sequence of regex strings, got {value!r}")
            object.__setattr__(self, name, tuple(value))
            for pattern in value:
                try:
                    UrlFilter([pattern])
                except ValueError as exc:
                    raise UsageError(f"{name}: invalid regex {exc}") from None
        if self.sitemap_filter is not None and not callable(self.sitemap_filter):
            raise UsageError(f"sitemap_filter must be callable, got {self.sitemap_filter!r}")

    def page_filter(self) -> UrlFilter | None:
        """The native filter of page rows; None when nothing would be dropped."""
        if self.since is None and not self.include and not self.exclude:
            return None
        since = self.since.isoformat() if self.since is not None else None
        return UrlFilter(list(self.include), list(self.exclude), since, self.since_strict)

    def child_filter(self) -> UrlFilter | None:
        """The native filter of an index's child sitemaps; None when none is set."""
        if self.since is None and not self.sitemap_include and not self.sitemap_exclude:
            return None
        since = self.since.isoformat() if self.since is not None else None
        return UrlFilter(list(self.sitemap_include), list(self.sitemap_exclude), since, False)


def require_walk_url(value: object, name: str) -> str:
    """`value` when a walk can start there: an http(s) URL, or a `file://` URL of a sitemap
    on disk; UsageError naming `name` otherwise."""
    if is_file_url(value):
        assert isinstance(value, str)
        if urlsplit(value).netloc not in ("", "localhost"):
            raise UsageError(f"{name}: a file URL on another host cannot be read: {value!r}")
        return value
    if not is_http_url(value):
        raise UsageError(f"{name} must be an http(s) URL, got {value!r}")  # or a file:// one
    return value


# -- keyword arguments: WalkOptions, FetchConfig and Budgets fields in one call ----------------

_WALK_FIELDS = frozenset(WalkOptions.__dataclass_fields__)
_FETCH_FIELDS = frozenset(FetchConfig.__dataclass_fields__)
_BUDGET_FIELDS = frozenset(Budgets.__dataclass_fields__)


def unknown_option(name: str, known: Iterable[str]) -> UsageError:
    guess = difflib.get_close_matches(name, sorted(known), n=1)
    hint = f" (did you mean {guess[0]!r}?)" if guess else ""
    return UsageError(f"unknown option {name!r}{hint}")


def walk_options(options: WalkOptions | None, kwargs: dict[str, Any]) -> WalkOptions:
    """`options` with the keyword arguments applied; every value is checked here, up front."""
    if options is not None and not isinstance(options, WalkOptions):
        raise UsageError(f"options must be a WalkOptions, got {options!r}")
    known = _WALK_FIELDS | _FETCH_FIELDS | _BUDGET_FIELDS
    for name in kwargs:
        if name not in known:
            raise unknown_option(name, known)
    own = {k: v for k, v in kwargs.items() if k in _WALK_FIELDS}
    # WalkOptions' own fields first, so `fetch=FetchConfig(...), timeout=5` keeps both.
    opts = replace(options or WalkOptions(), **own)
    fetch = fetch_config(opts.fetch, {k: v for k, v in kwargs.items() if k in _FETCH_FIELDS})
    budget_fields = {k: v for k, v in kwargs.items() if k in _BUDGET_FIELDS}
    budgets = replace(opts.budgets, **budget_fields) if budget_fields else opts.budgets
    if fetch is opts.fetch and budgets is opts.budgets:
        return opts
    return replace(opts, fetch=fetch, budgets=budgets)


def fetch_config(config: FetchConfig | None, fields: dict[str, Any]) -> FetchConfig:
    """`config` (or the defaults) with `fields` of `FetchConfig` applied; UsageError for an
    unknown one."""
    if config is not None and not isinstance(config, FetchConfig):
        raise UsageError(f"config must be a FetchConfig, got {config!r}")
    for name in fields:
        if name not in _FETCH_FIELDS:
            raise unknown_option(name, _FETCH_FIELDS)
    if not fields:
        return config or FetchConfig()
    return replace(config or FetchConfig(), **fields)


def as_walk_url(value: object, name: str) -> str:
    """`require_walk_url`, with a path (`os.PathLike`) on disk taken as its `file://` URL."""
    if isinstance(value, os.PathLike):
        return Path(value).resolve().as_uri()
    return require_walk_url(value, name)


def require_http_url(value: object, name: str) -> str:
    """`value` when it is an absolute http(s) URL; UsageError naming `name` otherwise."""
    if not is_http_url(value):
        raise UsageError(f"{name} must be an http(s) URL, got {value!r}")
    return value


class _DocumentSink:
    """Feeds one document's bytes to its parser and hands entries to the walk as they appear.

    The bytes are parsed in `drain()`, one decoded piece per turn of the event loop: a small
    compressed read may inflate to megabytes, and parsing them all inside `feed()` would hold
    the loop (timeouts, the deadline, Ctrl-C) for as long as that takes.

    Every decoded byte counts against `max_bytes` as it arrives. A piece that arrives once the
    walk has read past its byte budget is not parsed and ends the document's reading, so the
    overshoot is at most one network read per document in flight; a document whose body ended
    with the piece that crossed the budget was read whole and is not cut. `stopped_by` names
    the budget that ended the reading.
    """

    def __init__(self, walk: Walk, parser: SitemapParser, record: DocumentRecord) -> None:
        self.walk = walk
        self.parser = parser
        self.record = record
        self.pending: deque[bytes] = deque()
        self.stopped_by: BudgetName | None = None

    def feed(self, data: bytes) -> None:
        if self.stopped_by is None:
            self.stopped_by = self.walk._reading_stopped()
        if self.stopped_by is None:
            self.pending.append(data)
        self.walk._budget.add_bytes(len(data))  # read is read, parsed or not

    async def drain(self) -> bool:
        await self.parse_pending()
        if self.stopped_by is None and self.walk._stop_urls:
            self.stopped_by = "max_urls"  # nothing more of it could be kept
        return self.stopped_by is None

    async def parse_pending(self) -> None:
        pending = self.pending
        while pending and not self.walk._stop_urls:
            self.parser.feed(pending.popleft())
            await self.walk._absorb(self.parser, self.record)
            if pending:
                await asyncio.sleep(0)


class Walk:
    """One walk of one site. Iterate it (`async for batch in walk`), then read `report`."""

    def __init__(
        self,
        url: str,
        options: WalkOptions | None = None,
        *,
        hand_off: Callable[[str, list[str]], bool] | None = None,
    ) -> None:
        """`hand_off(index_url, children)` sees the child sitemaps of every root sitemap index
        before they are walked; when it returns True they are left out of this walk (the batch
        pipeline walks a huge site's leaves as tasks of their own)."""
        self.url = require_walk_url(url, "site URL")
        if options is not None and not isinstance(options, WalkOptions):
            raise UsageError(f"options must be a WalkOptions, got {options!r}")
        self.options = options or WalkOptions()
        # A walk of a file on disk: the file is the one root sitemap, no discovery, no crawl.
        self._local_root = is_file_url(url)
        if self._local_root and (self.options.crawl or self.options.source == "llms"):
            raise UsageError("a file on disk is read as a sitemap: no crawl, no llms.txt source")
        # The site's sitemap given as a file on disk: relative children resolve in its folder.
        self._local_sitemap = is_file_url(self.options.sitemap)
        self._offline_skipped = 0
        self._hand_off = hand_off
        self.report = WalkReport()
        self.discovery: Discovery | None = None
        self._budget = BudgetTracker(self.options.budgets)
        self._seen = SeenSet()
        # Filters that save fetches, built once per walk (None: nothing to check per URL).
        self._page_filter = self.options.page_filter()
        self._child_filter = self.options.child_filter()
        self._visited: set[str] = set()
        # Documents as (url, depth, probe); batches go out through a small bounded queue.
        self._pool: Pool[tuple[str, int, bool], Batch] = Pool(
            self._handle, self._failed, out_size=4
        )
        self._probes: set[str] = set()
        # Rows waiting to fill a batch; the native core holds them.
        self._rows = Batch()
        self._stop_urls = False
        # When the oldest row waiting in `_rows` arrived; None while none waits.
        self._pending_since: float | None = None
        self._ticking = True
        self._ticker_flushing = False
        # Documents left unread because a budget was reached, per budget (a note, not errors).
        self._unread: dict[BudgetName, int] = {}
        self._started = False
        self._preferred_locale = self.options.locale or path_locale(url)
        # Child sitemap URLs seen while a document streams, keyed by its parser.
        self._pending_children: dict[int, list[str]] = {}
        # §7: a non-root base path scopes which page URLs are yielded; a sitemap URL given
        # directly implies no prefix.
        direct = self.options.sitemap is not None or self._local_root or looks_like_sitemap_url(url)
        self.prefix = None if direct else base_prefix(url)
        self._ledger = WalkLedger(
            self.report,
            self._budget,
            site_url=url,
            prefix=self.prefix,
            max_document_bytes=self.options.fetch.max_document_bytes,
        )
        # source="all": the llms.txt page links by URL and markdown URL, held natively (they are
        # bounded) until the sitemaps are walked, so that a sitemap row can say llms.txt lists it
        # too; the index remembers which links a sitemap listed.
        self._llms_index: LlmsIndex | None = None

    def __aiter__(self) -> AsyncIterator[list[Entry]]:
        return self._entries(self.batches())

    @staticmethod
    async def _entries(batches: AsyncGenerator[Batch, None]) -> AsyncGenerator[list[Entry], None]:
        """The walk's batches as lists of `Entry` objects, built here, at the edge."""
        try:
            async for batch in batches:
                yield batch.entries()
        finally:
            await batches.aclose()  # now, on this loop: it stops the walk's tasks

    def batches(self) -> AsyncGenerator[Batch, None]:
        """The walk's batches as they are made: `Batch`es of rows the native core holds
        (`to_jsonl()`, `to_csv()`, `entries()`), which spare a writer building an object per URL.
        Iterate either this or the walk itself, once."""
        if self._started:
            raise RuntimeError("a Walk can be iterated once")
        self._started = True
        return self._batches()

    @property
    def prefix_matched(self) -> int:
        """Page URLs from the sitemaps found under the base path so far."""
        return self._ledger.prefix_matched

    async def _batches(self) -> AsyncGenerator[Batch, None]:
        start = time.monotonic()
        try:
            # A bug in the driver surfaces here instead of being hidden.
            async with contextlib.aclosing(self._pool.run(self._work)) as batches:
                async for batch in batches:
                    yield batch
        finally:
            self.report.elapsed = time.monotonic() - start

    # -- orchestration ----------------------------------------------------------------------------

    async def _work(self) -> None:
        opts = self.options
        guard = AddressGuard(self.url) if opts.ssrf_guard else None
        root = self.url if self._local_root else opts.sitemap if self._local_sitemap else None
        local = LocalFiles(opts.maps, root=root)
        async with Fetcher(
            opts.fetch,
            guard=guard,
            origin=self.url,
            local=local if local else None,
            offline=opts.offline,
        ) as fetcher:
            self._fetcher = fetcher
            ticker = asyncio.create_task(self._flush_waiting())
            try:
                async with self._pool.workers(opts.concurrency):
                    await self._run_discovery(fetcher)
            finally:
                await self._stop_ticker(ticker)
        self._note_unread()
        self._note_filtered()
        self._ledger.finish()
        await self._flush_pending()

    async def _run_discovery(self, fetcher: Fetcher) -> None:
        await self._discover_and_walk(fetcher)
        if (
            self.prefix is not None
            and self.prefix_matched == 0
            and not self._stop_urls
            and self.options.source != "llms"
        ):
            # §7: documentation portals often keep their own sitemap under their path.
            sub = origin_of(self.url) + self.prefix + WELL_KNOWN_SITEMAPS[0].lstrip("/")
            self._probes.add(sub)  # a guess like the well-known paths: missing is an answer
            if self._enqueue(sub, 1):
                self.report.notes.append(
                    f"no page URL under {self.prefix} in the site's sitemaps; trying {sub}"
                )
                await self._pool.join()

    async def _discover_and_walk(self, fetcher: Fetcher) -> None:
        source = self.options.source
        if source == "llms":
            self.report.source, self.report.source_url = "none", None
            await self._walk_llms(fetcher)
            shortfall = llms_shortfall(self.report.llms, fetcher.cannot_connect)
            if shortfall is not None:  # the only source gave nothing: say why
                warning, failed = shortfall
                self.report.warn(warning)
                self.report.errors.extend(d for d in self.report.documents if d.url == failed)
            if self.report.source == "none":
                self.report.notes.append("no usable llms.txt found")
            return
        if source == "all":
            await self._walk_all(fetcher)
            return
        await self._walk_sitemaps(fetcher)
        unread = llms_txt_unread(self.options.llms_txt, source, self.report)
        if unread is not None:
            self.report.warn(unread)

    async def _walk_all(self, fetcher: Fetcher) -> None:
        """Sitemaps and llms.txt merged: llms.txt first (small, bounded), held in an index; the
        sitemap walk streams as usual and marks what the index also lists; the llms.txt links no
        sitemap listed come last."""
        links = await self._read_llms(fetcher)
        index = LlmsIndex()
        for link in links:
            index.add(link.url, link.md_url, link.title)
        self._llms_index = index
        llms_report = self.report.llms
        await self._walk_sitemaps(fetcher, crawl_fallback=not links)
        self._llms_index = None
        if links:
            assert llms_report is not None
            if self.report.source == "none":
                self.report.source, self.report.source_url = LLMS, llms_report.url
            else:
                self.report.notes.append(f"also llms.txt {llms_report.url}")
            left = [link for link in links if not index.is_listed(link.url)]
            await self._pass_on(self._llms_rows(left), alternates=False, scoped=True)

    async def _walk_llms(self, fetcher: Fetcher) -> bool:
        """Read llms.txt and emit its pages; whether it had any."""
        links = await self._read_llms(fetcher)
        summary = self.report.llms
        if summary is None or summary.url is None:
            return False
        self.report.source, self.report.source_url = LLMS, summary.url
        await self._pass_on(self._llms_rows(links), alternates=False, scoped=True)
        return bool(links)

    async def _read_llms(self, fetcher: Fetcher) -> list[LlmsLink]:
        """The llms.txt links under the base path; every fetch counts against the budgets."""
        reader = LlmsReader(
            fetcher,
            self.url,
            self.options.llms_txt,
            gate=self._llms_gate,
            time_limit=self._time_limit,
            observe=self._llms_fetched,
        )
        links = await reader.read()
        summary = self.report.llms = reader.summary
        if reader.stopped:
            self._ledger.budget_bound()
        if summary.url is None:
            return []
        self.report.notes.append(
            f"llms.txt {summary.url}: {summary.links} page links"
            + (f", {len(summary.aggregates)} aggregate files read" if summary.aggregates else "")
            + (f", {len(summary.omitted)} .txt files omitted" if summary.omitted else "")
        )
        for url in summary.cut:
            self.report.warn(f"{url}: cut at the llms.txt size limit")
            self.report.mark_partial("a document exceeded the size limit")
        if self.prefix is None:
            summary.in_scope = len(links)
            return links
        kept = [link for link in links if self._ledger.llms_in_scope(link.url)]
        summary.in_scope = len(kept)
        return kept

    def _llms_gate(self) -> bool:
        return not self._stop_urls and self._budget.try_fetch()

    def _llms_fetched(self, url: str, depth: int, resp: Response, why: str | None) -> None:
        self._ledger.settle_llms(url, depth, resp, why)
        if self._deadline_cut(resp):
            self._budget.mark_hit("deadline")
            self._ledger.budget_bound()
        self._budget.add_bytes(resp.bytes)
        self.report.bytes += resp.bytes

    def _llms_rows(self, links: list[LlmsLink]) -> Batch:
        """Rows for llms.txt links (already scoped to the base path) the page filters keep; they
        are de-duplicated with the rest, markdown URLs included (`_pass_on`)."""
        rows = Batch()
        sources = [LLMS] if self.options.source == "all" else []
        for link in links:
            if self._undated_kept(link.url):
                rows.push(
                    link.url,
                    link.found_in,
                    link.depth,
                    LLMS,
                    link.title,
                    link.md_url,
                    None,
                    sources,
                )
        return rows

    async def _walk_sitemaps(self, fetcher: Fetcher, *, crawl_fallback: bool = True) -> None:
        """§2 with every tried sitemap walked whole; then llms.txt and the link crawl (§10)."""
        plan = DiscoveryPlan(
            self.url,
            self.url if self._local_root else self.options.sitemap,
            user_agent=fetcher.config.user_agent,
            rules=WALK_CRAWL if self.options.crawl else WALK,
        )
        found = self.discovery = plan.found
        step = plan.start()
        while True:
            self.report.notes.extend(plan.new_notes())
            self.report.source, self.report.source_url = found.source, found.source_url
            if isinstance(step, Done):
                break
            if isinstance(step, FetchRobots):
                answer, _resp = await fetch_robots(fetcher, step.url)
                step = plan.feed(answer)
                if found.robots is not None and found.sitemaps:
                    self.report.sitemap_spellings = list(found.robots.sitemap_spellings)
            else:
                tried = await self._try_sitemaps(step)
                why = fetcher.cannot_connect(step.urls[0])
                step = plan.feed(replace(tried, unreachable=why))
        if plan.cannot_connect is not None:
            # The first request reached no server: every other would fail alike, so neither
            # llms.txt nor the link crawl is tried, and the failure is said once, plainly.
            self.report.warn(plan.cannot_connect)
            if plan.failure is not None:
                self.report.errors.append(plan.failure)
            return
        if self.options.crawl:
            if found.sitemaps:
                self.report.notes.append(
                    f"--crawl: {len(found.sitemaps)} sitemaps from {found.source} not walked"
                )
            await self._crawl()
            return
        if found.source != "none" or not crawl_fallback or self._stop_urls or self._budget.hit:
            return
        if self.options.offline:
            self.report.notes.append("offline: no llms.txt, no link crawl")
            return
        if self.options.source == "auto" and await self._walk_llms(fetcher):
            return
        if not self._stop_urls and not self._budget.hit:
            await self._crawl()

    async def _try_sitemaps(self, step: TrySitemaps) -> Tried:
        """Walk the step's URLs as root documents; whether one of them was a sitemap.

        The site URL itself (`step.start`) is walked with no base path: what a sitemap lists is
        not under its own path. Only a sitemap gives entries, so an HTML page gives none either
        way, and the base path is back for what comes next (llms.txt, the link crawl)."""
        for url in step.urls:
            if step.guess:
                if document_key(url) in self._visited:
                    return Tried(False)  # already walked, and it was not a sitemap
                self._probes.add(url)
        prefix = self.prefix
        if step.start:
            self.prefix = self._ledger.prefix = None
        for url in step.urls:
            self._enqueue(url, 1)
        await self._pool.join()
        tried = Tried(self._any_root_was_sitemap(list(step.urls)))
        if step.start and not tried.sitemap:
            self.prefix = self._ledger.prefix = prefix
        return tried

    async def _crawl(self) -> None:
        """§10: find pages by following links from the URL; sitemaps met on the way are walked."""
        found = self.discovery
        options = CrawlOptions(
            config=self.options.fetch,
            robots=found.robots if found is not None else None,
            read_robots=found is None or found.robots_status is None,
            concurrency=self.options.concurrency,
            render=self.options.render,
            ssrf_guard=self.options.ssrf_guard,
            prefix=self.prefix,
            deadline=self._budget.deadline_left(),
        )
        crawler = Crawler(self.url, options)
        report = self.report
        report.crawl = crawler.report
        report.source, report.source_url = "bfs", crawler.start_url
        report.notes.append(f"link crawl from {crawler.start_url}")
        async for event in crawler:
            if isinstance(event, SitemapFound):
                if self._enqueue(event.url, 1):
                    report.notes.append(
                        f"sitemap found by the crawl on {event.found_on}: {event.url}"
                    )
                continue
            if not event.ok:
                record = DocumentRecord(event.url, event.depth, status=event.status, kind="page")
                record.final_url = event.final_url
                record.error, record.error_class = event.error, event.error_class
                report.errors.append(record)
                continue
            if not self._undated_kept(event.final_url):
                continue  # the crawl still follows its links: only the entry is filtered
            page = Batch()
            page.push(event.final_url, "", event.depth, "bfs", event.title, None, event.canonical)
            await self._pass_on(page, alternates=False)
            if self._stop_urls:
                break
        await self._pool.join()

    def _any_root_was_sitemap(self, urls: list[str]) -> bool:
        return self._ledger.any_root_was_sitemap(urls)

    def _enqueue(self, url: str, depth: int) -> bool:
        key = document_key(url)
        if key in self._visited:
            return False
        self._visited.add(key)
        if self.options.offline and not self._fetcher.reads_locally(url):
            self._offline_skipped += 1  # offline: never requested, counted in a note
            return False
        self._pool.put((url, depth, url in self._probes))
        return True

    async def _handle(self, item: tuple[str, int, bool]) -> None:
        await self._document(*item)

    async def _failed(self, item: tuple[str, int, bool], exc: Exception) -> None:
        """A bug while walking one document: recorded as its failure, the walk goes on."""
        url, depth, _probe = item
        log.exception("internal error walking %s", url)
        self._ledger.record_failure(DocumentRecord(url, depth), "internal error", "InternalError")

    # -- one document ---------------------------------------------------------------------------

    async def _document(self, url: str, depth: int, probe: bool = False) -> None:
        if self._stop_urls:
            self._left_unread("max_urls")
            return
        if self._url_budget_full():
            # §5: a full URL budget prevents this fetch, so it binds even if filled exactly.
            self._url_limit_reached()
            self._left_unread("max_urls")
            return
        if not self._budget.try_fetch():
            self._ledger.budget_bound()
            self._left_unread(self._budget.exhausted_reason())
            return
        record = DocumentRecord(url=url, depth=depth)
        self.report.documents.append(record)

        def sink_for(resp: Response) -> _DocumentSink:
            charset = SitemapParser.charset_of(resp.content_type)
            parser = SitemapParser(resp.final_url, depth=depth, charset=charset)
            return _DocumentSink(self, parser, record)

        resp, sink = await self._fetcher.fetch_into(url, sink_for, time_limit=self._time_limit())
        stopped_by = sink.stopped_by if sink is not None else None
        if self._deadline_cut(resp):
            self._budget.mark_hit("deadline")
            self._ledger.budget_bound()
            stopped_by = "deadline"
        parser = sink.parser if sink is not None else None
        if sink is not None and parser is not None and stopped_by is None:
            if resp.error is None or resp.error.error_class != "TimeoutError":
                await sink.parse_pending()  # what arrived after the last drain (cut, flush)
            if resp.truncated or resp.error is not None:
                parser.note_truncated()  # its last line may be a fragment, not a URL
            for _step in parser.closing():  # salvage emits its finds here: let the loop run
                await self._absorb(parser, record)
                await asyncio.sleep(0)
            await self._absorb(parser, record)
        if parser is not None:
            record.children = len(self._pending_children.get(id(parser), ()))
        if stopped_by is not None:
            # Left unfinished by a budget: what it gave so far is kept, the rest was not read.
            # Not a failure, and no fragment of it is reported as malformed.
            self._ledger.settle_stopped(record, resp, parser, stopped_by)
        else:
            self._ledger.settle(record, resp, parser, probe)
        if parser is not None and parser.kind == "sitemapindex":
            self._children(record, parser)
        self.report.bytes += resp.bytes
        await self._flush_pending()  # the document ended: what it gave goes out now

    def _url_budget_full(self) -> bool:
        limit = self.options.budgets.max_urls
        return limit is not None and self.report.urls + self.report.alternates >= limit

    def _deadline_cut(self, resp: Response) -> bool:
        """Whether the walk's deadline, not the per-document timeout, ended this fetch."""
        if resp.error is None or resp.error.error_class != "TimeoutError":
            return False
        left = self._budget.deadline_left()
        return left is not None and left < _DEADLINE_SLACK

    def _time_limit(self) -> float:
        left = self._budget.deadline_left()
        cap = self.options.fetch.timeout
        return cap if left is None else max(0.05, min(cap, left))

    def _children(self, record: DocumentRecord, parser: SitemapParser) -> None:
        children = self._pending_children.pop(id(parser), [])
        record.children = len(children)
        if not children:
            return
        if self._child_filter is not None or self.options.sitemap_filter is not None:
            children = self._filter_children(record, parser, children)
            if not children:
                return
        if not self._budget.depth_allows_children(record.depth):
            self._budget.drop_children(len(children))
            self.report.dropped_children += len(children)
            self._ledger.budget_bound()
            return
        if self.options.budgets.any_set:
            # Ordered before filtering: a locale folder is read with all its siblings as
            # evidence, and the filter keeps the order of what it keeps.
            children = order_children(children, self._preferred_locale)
        if self.options.filter_locales:
            result = filter_children(children, self._preferred_locale)
            if result.applied and result.skipped:
                self.report.skipped_sitemaps.extend(result.skipped)
                self.report.notes.append(
                    f"{record.url}: skipped {len(result.skipped)} child sitemaps in other locales "
                    f"than {result.preferred}"
                )
            children = result.kept
        hand_off = self._hand_off
        if hand_off is not None and record.depth == 1 and hand_off(record.url, children):
            self.report.notes.append(f"{record.url}: {len(children)} child sitemaps handed off")
            return
        for child in children:
            self._enqueue(child, record.depth + 1)

    # -- entries ----------------------------------------------------------------------------------

    async def _absorb(self, parser: SitemapParser, record: DocumentRecord) -> None:
        """Move what the parser produced into batches; awaits when the consumer is behind."""
        rows, sitemaps, malformed = parser.take_rows()
        record.entries += len(rows)
        if malformed and is_file_url(parser.url) and parser.kind == "sitemapindex":
            malformed = self._local_children(parser, malformed, sitemaps)
        if sitemaps:
            self._pending_children.setdefault(id(parser), []).extend(sitemaps)
        report = self.report
        for bad in malformed:
            report.malformed_count += 1
            if len(report.malformed) < MAX_MALFORMED_KEPT:
                report.malformed.append(bad)
        if not rows:
            return
        page_filter = self._page_filter
        if page_filter is not None:
            index = self._llms_index
            listed = [url for url in rows.urls() if url in index] if index is not None else None
            self.report.filtered_pages += page_filter.retain(rows)
            if listed:
                self._drop_listed(listed, rows)
            if not rows:
                return
        await self._pass_on(rows, alternates=self.options.alternates)

    async def _pass_on(self, rows: Batch, *, alternates: bool, scoped: bool = False) -> None:
        """De-duplicate `rows` (and make rows of their hreflang alternates not seen yet), keep
        those under the base path (unless `scoped` already), mark their sources when llms.txt is
        merged, and hand them on. Pages first, alternates after: a URL that is a loc in this
        stretch of the document is reported as a page, not as some other page's alternate."""
        if alternates:
            dropped, more = rows.retain_new_with_alternates(self._seen)
        else:
            dropped, more = rows.retain_new(self._seen), None
        self.report.duplicates += dropped
        self._place(rows, scoped)
        await self._emit_rows(rows)
        if more:
            if self._page_filter is not None:
                self._page_filter.retain(more, dated=False)  # an alternate shares its page's date
            self._place(more, scoped)
            await self._emit_rows(more)

    def _place(self, rows: Batch, scoped: bool) -> None:
        if self.prefix is not None and not scoped and rows:
            self._ledger.retain_in_scope(rows)  # counted for the narrow-prefix warning
        if self._llms_index is not None and rows:
            self._llms_index.mark(rows)

    @staticmethod
    def _local_children(
        parser: SitemapParser, malformed: list[Malformed], sitemaps: list[str]
    ) -> list[Malformed]:
        """A local index's relative `<loc>`s as `file://` children beside or below it (the
        scanner resolves only to http(s)); what cannot be one stays malformed."""
        left: list[Malformed] = []
        for bad in malformed:
            child = local_child(parser.url, bad.raw) if parser.url != STDIN_URL else None
            if child is None:
                if parser.url != STDIN_URL and not urlsplit(bad.raw.strip()).scheme:
                    bad = replace(bad, reason="a path that leaves the folder of its index")
                left.append(bad)
            else:
                sitemaps.append(child)
        return left

    def _drop_listed(self, listed: list[str], kept: Batch) -> None:
        """llms.txt links whose sitemap rows the filters dropped: their lastmod came from the
        sitemap, so the undated llms.txt copy must not bring them back."""
        index = self._llms_index
        assert index is not None
        left = set(kept.urls())
        for url in listed:
            if url not in left:
                index.mark_listed(url)

    def _undated_kept(self, url: str) -> bool:
        """Whether the page filters keep `url`, an entry with no lastmod (an llms.txt link, a
        crawled page); a dropped one is counted with the sitemap rows the filters dropped."""
        page_filter = self._page_filter
        if page_filter is None or (page_filter.keeps_url(url) and page_filter.keeps_lastmod(None)):
            return True
        self.report.filtered_pages += 1
        return False

    async def _emit_rows(self, rows: Batch) -> None:
        """Add rows (pages, or alternates) to the batch being filled, handing on full ones; the
        URL cap cuts them, counting the pages cut."""
        if self._stop_urls or not rows:
            return
        report = self.report
        limit = self.options.budgets.max_urls
        if limit is not None:
            room = max(0, limit - report.urls - report.alternates)
            if len(rows) > room:
                # Counted for the §5 truncation notice; the rest of the document is not read.
                report.urls_cut += rows.split_off(room).pages()
                self._url_limit_reached()
        pages = rows.pages()
        report.urls += pages
        report.alternates += len(rows) - pages
        self._rows.extend(rows)
        self._waiting()
        # Other documents' workers emit while this one waits on a full queue: what is pending
        # is read from `self._rows` again after every wait, never kept across it.
        while len(self._rows) >= BATCH_SIZE:
            full = self._rows
            self._rows = full.split_off(BATCH_SIZE)
            self._pending_since = time.monotonic() if self._rows else None
            await self._pool.emit(full)

    async def _flush_rows(self) -> None:
        if self._rows:
            rows, self._rows = self._rows, Batch()
            self._pending_since = None
            await self._pool.emit(rows)

    async def _flush_pending(self) -> None:
        """Hand on every row waiting for its batch to fill."""
        await self._flush_rows()

    def _waiting(self) -> None:
        """Entries now wait in a batch: note since when, unless older ones already did."""
        if self._pending_since is None and self._rows:
            self._pending_since = time.monotonic()

    async def _flush_waiting(self) -> None:
        """Hand on a batch that has waited `MAX_BATCH_WAIT` to fill, however small: on a slow
        site the entries parsed so far reach the consumer (and survive a Ctrl-C) at once,
        while a fast walk still fills its batches long before this fires."""
        while self._ticking:
            await asyncio.sleep(_FLUSH_TICK)
            since = self._pending_since
            if since is not None and time.monotonic() - since >= MAX_BATCH_WAIT:
                self._ticker_flushing = True
                try:
                    await self._flush_pending()
                finally:
                    self._ticker_flushing = False

    async def _stop_ticker(self, ticker: asyncio.Task[None]) -> None:
        """End `_flush_waiting`. A batch it is handing on is finished first (it holds the only
        reference to those entries) unless the consumer has left, when nobody would take it."""
        self._ticking = False
        task = asyncio.current_task()
        if not self._ticker_flushing or (task is not None and task.cancelling()):
            ticker.cancel()
        await asyncio.gather(ticker, return_exceptions=True)

    def _url_limit_reached(self) -> None:
        self._stop_urls = True
        self._budget.mark_hit("max_urls")
        self._ledger.budget_bound()

    def _reading_stopped(self) -> BudgetName | None:
        """The budget that ends the reading of documents in flight now, if one does."""
        if self._stop_urls:
            return "max_urls"
        limit = self.options.budgets.max_bytes
        if limit is not None and self._budget.bytes > limit:
            self._budget.mark_hit("max_bytes")
            self._ledger.budget_bound()
            return "max_bytes"
        return None

    def _left_unread(self, budget: BudgetName | None) -> None:
        if budget is not None:
            self._unread[budget] = self._unread.get(budget, 0) + 1

    def _note_filtered(self) -> None:
        if self.report.filtered_pages:
            count = self.report.filtered_pages
            self.report.notes.append(
                f"filters dropped {count} page URL{'s' if count != 1 else ''}" + self._since_words()
            )

    def _since_words(self) -> str:
        since = self.options.since
        return f" (since {since.isoformat()})" if since is not None else ""

    def _filter_children(
        self, record: DocumentRecord, parser: SitemapParser, children: list[str]
    ) -> list[str]:
        """The children of an index the filters keep; the others are noted, never fetched."""
        native, call = self._child_filter, self.options.sitemap_filter
        lastmods = parser.sitemap_lastmods
        kept: list[str] = []
        old: list[str] = []
        excluded: list[str] = []
        for child in children:
            if native is not None and not native.keeps_lastmod(lastmods.get(child)):
                old.append(child)
                continue
            if native is not None and not native.keeps_url(child):
                excluded.append(child)
                continue
            if call is not None:
                try:
                    keep = bool(call(child))
                except Exception as exc:  # the caller's code: its failure is that child's error
                    failed = DocumentRecord(url=child, depth=record.depth + 1)
                    self._ledger.record_failure(
                        failed,
                        f"sitemap_filter raised {type(exc).__name__}: {exc}",
                        "InternalError",
                    )
                    continue
                if not keep:
                    excluded.append(child)
                    continue
            kept.append(child)
        report = self.report
        if old:
            report.skipped_sitemaps.extend(old)
            since = self.options.since
            assert since is not None
            report.notes.append(
                f"{record.url}: skipped {len(old)} child sitemaps unchanged since "
                f"{since.isoformat()}"
            )
        if excluded:
            report.skipped_sitemaps.extend(excluded)
            report.notes.append(
                f"{record.url}: skipped {len(excluded)} child sitemaps excluded by the "
                "sitemap filters"
            )
        return kept

    def _note_unread(self) -> None:
        if self._offline_skipped:
            count = self._offline_skipped
            self.report.notes.append(
                f"offline: {count} http(s) sitemap document{'s' if count != 1 else ''} not fetched"
            )
        for budget, count in self._unread.items():
            self.report.notes.append(
                f"{count} sitemap document{'s' if count != 1 else ''} left unread: "
                f"{budget_label(budget)} reached"
            )


class SyncEntries(Iterator[Entry]):
    """`iter_urls`: the walk as a plain iterator of entries, on a private event loop."""

    def __init__(self, url: str, options: WalkOptions | None = None) -> None:
        self._loop = asyncio.new_event_loop()
        self.walk = Walk(url, options)
        self._batches = aiter(self.walk)
        self._current: Iterator[Entry] = iter(())
        self._closed = False

    @property
    def report(self) -> WalkReport:
        return self.walk.report

    def __next__(self) -> Entry:
        while True:
            entry = next(self._current, None)
            if entry is not None:
                return entry
            if self._closed:
                raise StopIteration
            refuse_running_loop("iter_urls", instead="async for batch in walk(...)")
            try:
                batch = self._loop.run_until_complete(anext(self._batches))
            except StopAsyncIteration:
                self.close()
                raise StopIteration from None
            except BaseException:
                self.close()
                raise
            self._current = iter(batch)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._current = iter(())
        closer = getattr(self._batches, "aclose", None)
        if closer is not None:
            self._loop.run_until_complete(closer())
        self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        self._loop.close()

    def __del__(self) -> None:
        if not self._closed and not self._loop.is_running():
            with contextlib.suppress(Exception):
                self.close()
