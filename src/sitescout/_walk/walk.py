"""`Walk`, the orchestrator: it follows the source plan, runs discovery and the link crawl, and
hands the documents they find to the pool's workers.

`Walk` is an async iterable of batches (lists of at most 1,000 entries). Documents are fetched by
`concurrency` workers pulling from one queue (`DocumentTask`); entries flow to the consumer
through the `Emitter` and a small bounded queue, so a slow consumer slows the fetching instead of
growing memory. `SyncEntries` is the same walk as a plain iterator.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from dataclasses import replace

from .._budget import BudgetTracker
from .._core import Batch
from .._discover import (
    WALK,
    WALK_CRAWL,
    Discovery,
    DiscoveryPlan,
    Done,
    FetchRobots,
    Tried,
    TrySitemaps,
    fetch_robots,
)
from .._errors import UsageError, refuse_running_loop
from .._http import AddressGuard, Fetcher
from .._ledger import WalkLedger
from .._local import LocalFiles, is_file_url
from .._locale import base_prefix, path_locale
from .._models import DocumentRecord, Entry, WalkReport
from .._pool import Pool
from .._rules import WELL_KNOWN_SITEMAPS
from .._state import WalkState
from .._text import plural
from .._urls import document_key, looks_like_sitemap_url, origin_of
from .children import ChildSitemaps, HandOff
from .documents import Document, DocumentTask
from .emitter import Emitter
from .llms_source import LlmsSource
from .options import WalkOptions, require_walk_url
from .plan import (
    CloseSitemaps,
    Crawl,
    Finished,
    LlmsRead,
    Progress,
    ReadLlms,
    SitemapsWalked,
    SourceAnswer,
    SourcePlan,
    WalkSitemaps,
)
from .rewalk import Rewalk

__all__ = ["SyncEntries", "Walk"]


class Walk:
    """One walk of one site. Iterate it (`async for batch in walk`), then read `report`."""

    def __init__(
        self,
        url: str,
        options: WalkOptions | None = None,
        *,
        hand_off: HandOff | None = None,
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
        self.report = WalkReport()
        self.discovery: Discovery | None = None
        self._budget = BudgetTracker(self.options.budgets)
        self._started = False
        # §7: a non-root base path scopes which page URLs are yielded; a sitemap URL given
        # directly implies no prefix.
        direct = self.options.sitemap is not None or self._local_root or looks_like_sitemap_url(url)
        self._ledger = WalkLedger(
            self.report,
            self._budget,
            site_url=url,
            prefix=None if direct else base_prefix(url),
            max_document_bytes=self.options.fetch.max_document_bytes,
        )
        # Documents as (url, depth, probe); batches go out through a small bounded queue.
        self._pool: Pool[Document, Batch] = Pool(self._handle, self._failed, out_size=4)
        parts = (self.options, self.report, self._ledger, self._budget)
        self._emitter = Emitter(*parts, emit=self._pool.emit)
        children = ChildSitemaps(
            *parts, preferred_locale=self.options.locale or path_locale(url), hand_off=hand_off
        )
        self._state = self._open_state()
        rewalk = Rewalk(self.options, self.report, self._state) if self._state else None
        self._documents = DocumentTask(
            *parts, self._emitter, children, queue=self._pool.put, rewalk=rewalk
        )
        self._llms = LlmsSource(url, *parts, self._emitter)

    def _open_state(self) -> WalkState | None:
        """Take the state directory now, so that a second walk into it is refused before any
        request (ProjectError); it is released when the walk ends, or when it is dropped."""
        directory = self.options.state
        if directory is None:
            return None
        state = WalkState.open(directory, document_key(self.url))
        self._release = weakref.finalize(self, state.close)
        self.report.rewalk = state.summary
        if state.summary.ignored is not None:
            self.report.warn(
                f"state in {directory} ignored ({state.summary.ignored}): every document is"
                " read again, and the state written anew"
            )
        return state

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
    def prefix(self) -> str | None:
        """The base path page URLs must be under (§7); None: every page URL of the site."""
        return self._ledger.prefix

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
            held = self._emitter.held_alternates
            if held:
                self.report.notes.append(
                    f"{plural(held, 'hreflang alternate')} found but not passed on before the walk"
                    " stopped"
                )
            if self._state is not None:
                self._release()

    async def _handle(self, item: Document) -> None:
        await self._documents.run(*item)

    async def _failed(self, item: Document, exc: Exception) -> None:
        await self._documents.failed(item, exc)

    # -- orchestration ----------------------------------------------------------------------------

    async def _work(self) -> None:
        opts = self.options
        guard = AddressGuard(self.url) if opts.ssrf_guard else None
        root = self.url if self._local_root else opts.sitemap if self._local_sitemap else None
        local = LocalFiles(opts.maps, root=root)
        async with Fetcher(
            opts.fetch.for_concurrency(opts.concurrency),
            guard=guard,
            origin=self.url,
            local=local if local else None,
            offline=opts.offline,
        ) as fetcher:
            self._documents.bind(fetcher)
            ticker = asyncio.create_task(self._emitter.flush_waiting())
            try:
                async with self._pool.workers(opts.concurrency):
                    await self._follow_plan(fetcher)
            finally:
                await self._emitter.stop_ticker(ticker)
        self._documents.note_unread()
        self._emitter.note_filtered()
        self._ledger.finish()
        if self._state is not None:
            # Only a walk that ended gets here: an interrupted one leaves the last state.
            self._state.commit()
        await self._emitter.release_alternates()
        await self._emitter.flush()

    async def _follow_plan(self, fetcher: Fetcher) -> None:
        """Take the source plan's steps until it is finished."""
        plan = SourcePlan(
            self.options.source, crawl=self.options.crawl, offline=self.options.offline
        )
        step = plan.start()
        while True:
            self.report.notes.extend(plan.new_notes())
            if isinstance(step, Finished):
                return
            answer: SourceAnswer
            if isinstance(step, ReadLlms):
                found, links = await self._llms.take(fetcher, step)
                answer = LlmsRead(found, links, self._progress())
            elif isinstance(step, WalkSitemaps):
                answer = await self._walk_sitemaps(fetcher)
            elif isinstance(step, Crawl):
                await self._crawl()
                answer = self._progress()
            elif isinstance(step, CloseSitemaps):
                await self._llms.close(step)
                answer = self._progress()
            else:  # ProbeUnderPrefix
                await self._probe_under_prefix()
                answer = self._progress()
            step = plan.feed(answer)

    def _progress(self) -> Progress:
        return Progress(
            urls_full=self._emitter.urls_full,
            budget_hit=bool(self._budget.hit),
            prefix_unmatched=self.prefix is not None and self.prefix_matched == 0,
        )

    # -- sitemaps ---------------------------------------------------------------------------------

    async def _walk_sitemaps(self, fetcher: Fetcher) -> SitemapsWalked:
        """§2 with every tried sitemap walked whole."""
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
        # Every sitemap is walked: the alternates no sitemap listed as a page go out now.
        await self._emitter.release_alternates()
        if plan.cannot_connect is not None:
            # The first request reached no server: every other would fail alike, so neither
            # llms.txt nor the link crawl is tried (the plan's part), and the failure is said
            # once, plainly.
            self.report.warn(plan.cannot_connect)
            if plan.failure is not None:
                self.report.errors.append(plan.failure)
        return SitemapsWalked(
            found.source,
            len(found.sitemaps),
            cannot_connect=plan.cannot_connect is not None,
            progress=self._progress(),
        )

    async def _try_sitemaps(self, step: TrySitemaps) -> Tried:
        """Walk the step's URLs as root documents; whether one of them was a sitemap.

        The site URL itself (`step.start`) is walked with no base path: what a sitemap lists is
        not under its own path. Only a sitemap gives entries, so an HTML page gives none either
        way, and the base path is back for what comes next (llms.txt, the link crawl)."""
        documents = self._documents
        for url in step.urls:
            if step.guess:
                if documents.visited(url):
                    return Tried(False)  # already walked, and it was not a sitemap
                documents.add_probe(url)
        prefix = self._ledger.prefix
        if step.start:
            self._ledger.prefix = None
        for url in step.urls:
            documents.enqueue(url, 1)
        await self._pool.join()
        tried = Tried(self._ledger.any_root_was_sitemap(list(step.urls)))
        if step.start and not tried.sitemap:
            self._ledger.prefix = prefix
        return tried

    async def _probe_under_prefix(self) -> None:
        """§7: documentation portals often keep their own sitemap under their path."""
        prefix = self.prefix
        assert prefix is not None
        sub = origin_of(self.url) + prefix + WELL_KNOWN_SITEMAPS[0].lstrip("/")
        self._documents.add_probe(sub)  # a guess like the well-known paths: missing is an answer
        if self._documents.enqueue(sub, 1):
            self.report.notes.append(
                f"no page URL under {prefix} in the site's sitemaps; trying {sub}"
            )
            await self._pool.join()

    # -- the link crawl ---------------------------------------------------------------------------

    async def _crawl(self) -> None:
        """§10: find pages by following links from the URL; sitemaps met on the way are walked."""
        # The crawl (and its HTML reader) loads when a site has no sitemap, not with every walk.
        from .._crawl import Crawler, CrawlOptions, SitemapFound

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
                if self._documents.enqueue(event.url, 1):
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
            if not self._emitter.undated_kept(event.final_url):
                continue  # the crawl still follows its links: only the entry is filtered
            page = Batch()
            page.push(event.final_url, "", event.depth, "bfs", event.title, None, event.canonical)
            await self._emitter.pass_on(page, alternates=False)
            if self._emitter.urls_full:
                break
        await self._pool.join()


# `iter_urls` makes entries this many at a time. Entries still waiting to be handed over when
# the cyclic collector runs (every 700 new objects) survive it and move to older generations,
# whose collections then walk them again: made a whole batch (1,000) at a time, a walk that
# keeps no entry spent about a tenth of its CPU there (1M URLs: 0.87x with the collector off,
# 0.89x in slices of 64, paired runs).
ENTRY_SLICE = 64


class SyncEntries(Iterator[Entry]):
    """`iter_urls`: the walk as a plain iterator of entries, on a private event loop."""

    def __init__(self, url: str, options: WalkOptions | None = None) -> None:
        self._loop = asyncio.new_event_loop()
        self.walk = Walk(url, options)
        self._batches = self.walk.batches()
        self._slices: deque[Batch] = deque()
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
            if self._slices:
                self._current = iter(self._slices.popleft().entries())
                continue
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
            self._slices.extend(batch.take_batches(ENTRY_SLICE))
            self._slices.append(batch)  # what is left of it: fewer than a slice

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._current = iter(())
        self._slices.clear()
        closer = getattr(self._batches, "aclose", None)
        if closer is not None:
            self._loop.run_until_complete(closer())
        self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        self._loop.close()

    def __del__(self) -> None:
        if not self._closed and not self._loop.is_running():
            with contextlib.suppress(Exception):
                self.close()
