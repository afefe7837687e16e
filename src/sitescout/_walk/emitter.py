"""The walk's output (§5, §7): de-duplication, base-path scope, the URL cap, the page filters and
batching, with no I/O of its own.

Rows from every source (sitemap documents, llms.txt, the crawl) come in; each URL goes out once,
in batches of at most `BATCH_SIZE`, through `emit` (the pool's small bounded queue, so a slow
consumer slows the fetching instead of growing memory). Nothing holds the inventory: memory is
the batch being filled, the compact seen-sets and at most `HELD_ALTERNATES` hreflang alternates.

A URL one sitemap lists as a page and another names as an hreflang alternate is a page, whichever
document arrives first: alternates wait until the sitemaps are walked (`release_alternates`),
and those some sitemap listed as pages by then are left out. Concurrent documents finish in any
order, and without the wait the same site gave "57 URLs (3 alternates)" on one run and "57 URLs
(0 alternates)" on the next. Past `HELD_ALTERNATES` waiting, they go out as they come.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from .._budget import BudgetTracker
from .._core import Batch, LlmsIndex, SeenSet
from .._ledger import WalkLedger
from .._models import WalkReport
from .._text import plural
from .options import WalkOptions

__all__ = ["BATCH_SIZE", "HELD_ALTERNATES", "MAX_BATCH_WAIT", "Emitter"]

BATCH_SIZE = 1000
# The most hreflang alternates held back at once: about 700 bytes each in the core, so 7 MB
# (50,000 added 35 MiB to the peak of a 1M-URL walk).
HELD_ALTERNATES = 10_000
# A batch is handed on when full, when a document ends, or when its oldest entry has waited
# this long (seconds), whichever comes first; the wait is checked every tick.
MAX_BATCH_WAIT = 0.4
_FLUSH_TICK = 0.1


class Emitter:
    """One walk's rows on their way to the consumer; the report counts what was kept and dropped.

    `pass_sitemap_rows` and `pass_on` take rows in; `flush` hands on what waits; `flush_waiting`
    runs beside the walk (the ticker) and `stop_ticker` ends it.
    """

    def __init__(
        self,
        options: WalkOptions,
        report: WalkReport,
        ledger: WalkLedger,
        budget: BudgetTracker,
        *,
        emit: Callable[[Batch], Awaitable[None]],
    ) -> None:
        self.report = report
        self.ledger = ledger  # base-path scope (`ledger.prefix`), and where budget warnings go
        self.budget = budget
        self.alternates = options.alternates
        self.max_urls = options.budgets.max_urls
        self.since = options.since
        # Filters that save fetches, built once per walk (None: nothing to check per URL).
        self.page_filter = options.page_filter()
        # source="all": the llms.txt page links by URL and markdown URL, held natively (they are
        # bounded) until the sitemaps are walked, so that a sitemap row can say llms.txt lists it
        # too; the index remembers which links a sitemap listed.
        self.llms_index: LlmsIndex | None = None
        self._emit = emit
        self._seen = SeenSet()
        # Alternates held back (`release_alternates`), and every alternate URL ever held.
        self._held = Batch()
        self._held_urls = SeenSet()
        # Rows waiting to fill a batch; the native core holds them.
        self._rows = Batch()
        self._urls_full = False
        # When the oldest row waiting in `_rows` arrived; None while none waits.
        self._pending_since: float | None = None
        self._ticking = True
        self._ticker_flushing = False

    # -- the URL cap ------------------------------------------------------------------------------

    @property
    def urls_full(self) -> bool:
        """Whether the URL budget is reached: nothing more can be kept, so nothing more is read."""
        return self._urls_full

    def cap_filled(self) -> bool:
        """Whether the URLs handed on fill the URL budget, exactly or more."""
        limit = self.max_urls
        return limit is not None and self.report.urls + self.report.alternates >= limit

    def reach_url_cap(self) -> None:
        self._urls_full = True
        self.budget.mark_hit("max_urls")
        self.ledger.budget_bound()

    # -- rows in ----------------------------------------------------------------------------------

    async def pass_sitemap_rows(self, rows: Batch) -> None:
        """A sitemap document's page rows: the page filters, then `pass_on` (which awaits when
        the consumer is behind)."""
        if not rows:
            return
        page_filter = self.page_filter
        if page_filter is not None:
            index = self.llms_index
            listed = [url for url in rows.urls() if url in index] if index is not None else None
            self.report.filtered_pages += page_filter.retain(rows)
            if listed:
                self._drop_listed(listed, rows)
            if not rows:
                return
        await self.pass_on(rows, alternates=self.alternates)

    async def pass_on(self, rows: Batch, *, alternates: bool, scoped: bool = False) -> None:
        """De-duplicate `rows` (and make rows of their hreflang alternates not seen yet), keep
        those under the base path (unless `scoped` already), mark their sources when llms.txt is
        merged, and hand them on; the alternates are held back (`release_alternates`)."""
        if alternates:
            dropped, more = rows.retain_new_with_alternates(self._seen, self._held_urls)
        else:
            dropped, more = rows.retain_new(self._seen), None
        self.report.duplicates += dropped
        self._place(rows, scoped)
        await self._emit_rows(rows)
        if more:
            if self.page_filter is not None:
                self.page_filter.retain(more, dated=False)  # an alternate shares its page's date
            self._place(more, scoped)
            self._held.extend(more)
            if len(self._held) >= HELD_ALTERNATES:
                await self.release_alternates()

    async def release_alternates(self) -> None:
        """Hand on the alternates held back, but those some sitemap has listed as pages since."""
        if self._held:
            held, self._held = self._held, Batch()
            held.retain_new(self._seen)
            await self._emit_rows(held)

    @property
    def held_alternates(self) -> int:
        """How many alternates wait to be released (some may turn out to be pages)."""
        return len(self._held)

    def undated_kept(self, url: str) -> bool:
        """Whether the page filters keep `url`, an entry with no lastmod (an llms.txt link, a
        crawled page); a dropped one is counted with the sitemap rows the filters dropped."""
        page_filter = self.page_filter
        if page_filter is None or (page_filter.keeps_url(url) and page_filter.keeps_lastmod(None)):
            return True
        self.report.filtered_pages += 1
        return False

    def note_filtered(self) -> None:
        if self.report.filtered_pages:
            count = self.report.filtered_pages
            since = f" (since {self.since.isoformat()})" if self.since is not None else ""
            self.report.notes.append(f"filters dropped {plural(count, 'page URL')}" + since)

    def _place(self, rows: Batch, scoped: bool) -> None:
        if self.ledger.prefix is not None and not scoped and rows:
            self.ledger.retain_under_base_path(rows)  # counted for the narrow-prefix warning
        if self.llms_index is not None and rows:
            self.llms_index.mark(rows)

    def _drop_listed(self, listed: list[str], kept: Batch) -> None:
        """llms.txt links whose sitemap rows the filters dropped: their lastmod came from the
        sitemap, so the undated llms.txt copy must not bring them back."""
        index = self.llms_index
        assert index is not None
        left = set(kept.urls())
        for url in listed:
            if url not in left:
                index.mark_listed(url)

    # -- batches out ------------------------------------------------------------------------------

    async def _emit_rows(self, rows: Batch) -> None:
        """Add rows (pages, or alternates) to the batch being filled, handing on full ones; the
        URL cap cuts them, counting the pages cut."""
        if self._urls_full or not rows:
            return
        report = self.report
        limit = self.max_urls
        if limit is not None:
            room = max(0, limit - report.urls - report.alternates)
            if len(rows) > room:
                # Counted for the §5 truncation notice; the rest of the document is not read.
                report.urls_cut += rows.split_off(room).pages()
                self.reach_url_cap()
        pages = rows.pages()
        report.urls += pages
        report.alternates += len(rows) - pages
        self._rows.extend(rows)
        self._waiting()
        # Other documents' workers emit while this one waits on a full queue: what is pending
        # is read from `self._rows` again after every wait, never kept across it.
        while len(self._rows) >= BATCH_SIZE:
            full = self._rows.take_batches(BATCH_SIZE)
            self._pending_since = time.monotonic() if self._rows else None
            for batch in full:
                await self._emit(batch)

    async def flush(self) -> None:
        """Hand on every row waiting for its batch to fill."""
        if self._rows:
            rows, self._rows = self._rows, Batch()
            self._pending_since = None
            await self._emit(rows)

    def _waiting(self) -> None:
        """Entries now wait in a batch: note since when, unless older ones already did."""
        if self._pending_since is None and self._rows:
            self._pending_since = time.monotonic()

    async def flush_waiting(self) -> None:
        """The ticker: hand on a batch that has waited `MAX_BATCH_WAIT` to fill, however small:
        on a slow site the entries parsed so far reach the consumer (and survive a Ctrl-C) at
        once, while a fast walk still fills its batches long before this fires."""
        while self._ticking:
            await asyncio.sleep(_FLUSH_TICK)
            since = self._pending_since
            if since is not None and time.monotonic() - since >= MAX_BATCH_WAIT:
                self._ticker_flushing = True
                try:
                    await self.flush()
                finally:
                    self._ticker_flushing = False

    async def stop_ticker(self, ticker: asyncio.Task[None]) -> None:
        """End `flush_waiting`. A batch it is handing on is finished first (it holds the only
        reference to those entries) unless the consumer has left, when nobody would take it."""
        self._ticking = False
        task = asyncio.current_task()
        if not self._ticker_flushing or (task is not None and task.cancelling()):
            ticker.cancel()
        await asyncio.gather(ticker, return_exceptions=True)
