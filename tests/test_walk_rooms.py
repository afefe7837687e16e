"""The walk's pure rooms, with no network: the source plan (which source comes next, given what
happened) and the emitter (seen-set, base-path scope, URL cap, page filters, batching).

The plan is driven with scripted answers; the emitter gets real native rows (a sitemap parsed
by `SitemapParser`, or rows pushed by hand) and hands its batches to a list."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime

from sitescout._budget import Budgets, BudgetTracker
from sitescout._core import Batch
from sitescout._ledger import WalkLedger
from sitescout._models import WalkReport
from sitescout._parse import SitemapParser
from sitescout._walk import BATCH_SIZE, MAX_BATCH_WAIT, WalkOptions
from sitescout._walk.emitter import Emitter
from sitescout._walk.plan import (
    CloseSitemaps,
    Crawl,
    Finished,
    LlmsRead,
    ProbeUnderPrefix,
    Progress,
    ReadLlms,
    SitemapsWalked,
    SourcePlan,
    SourceStep,
    WalkSitemaps,
)

SITE = "https://example.com"

# -- the source plan ------------------------------------------------------------------------------

GOING = Progress()
STOPPED = Progress(budget_hit=True)
NONE_FOUND = SitemapsWalked("none")
NO_LLMS = LlmsRead(found=False, links=0)


def drive(
    plan: SourcePlan,
    walked: SitemapsWalked,
    llms: LlmsRead = NO_LLMS,
    after: Progress = GOING,
) -> tuple[list[SourceStep], list[str]]:
    """The plan's steps until it is finished, each answered from the script, and its notes."""
    steps: list[SourceStep] = []
    notes: list[str] = []
    step = plan.start()
    while not isinstance(step, Finished):
        notes += plan.new_notes()
        steps.append(step)
        assert len(steps) < 10, steps
        if isinstance(step, WalkSitemaps):
            step = plan.feed(walked)
        elif isinstance(step, ReadLlms):
            step = plan.feed(llms)
        else:
            step = plan.feed(after)
    return steps, notes + plan.new_notes()


def test_auto_with_sitemaps_walks_only_them() -> None:
    steps, notes = drive(SourcePlan("auto"), SitemapsWalked("robots.txt", 2))
    assert steps == [WalkSitemaps(), CloseSitemaps()]
    assert notes == []


def test_auto_without_sitemaps_reads_llms_then_crawls_when_it_gave_no_page() -> None:
    steps, _ = drive(SourcePlan("auto"), NONE_FOUND, LlmsRead(found=True, links=0))
    assert steps == [WalkSitemaps(), ReadLlms(), Crawl(), CloseSitemaps()]
    steps, _ = drive(SourcePlan("auto"), NONE_FOUND, LlmsRead(found=True, links=3))
    assert steps == [WalkSitemaps(), ReadLlms(), CloseSitemaps()]


def test_a_budget_reached_while_reading_llms_txt_prevents_the_crawl() -> None:
    llms = LlmsRead(found=False, links=0, progress=STOPPED)
    steps, _ = drive(SourcePlan("auto"), NONE_FOUND, llms)
    assert Crawl() not in steps


def test_no_fallback_after_a_budget_or_when_offline() -> None:
    steps, notes = drive(SourcePlan("auto"), SitemapsWalked("none", progress=STOPPED))
    assert steps == [WalkSitemaps(), CloseSitemaps()]
    assert notes == []
    steps, notes = drive(SourcePlan("auto", offline=True), NONE_FOUND)
    assert steps == [WalkSitemaps(), CloseSitemaps()]
    assert notes == ["offline: no llms.txt, no link crawl"]


def test_source_sitemap_crawls_without_reading_llms_txt() -> None:
    steps, _ = drive(SourcePlan("sitemap"), NONE_FOUND)
    assert steps == [WalkSitemaps(), Crawl(), CloseSitemaps()]


def test_crawl_replaces_the_sitemaps_found_and_says_so() -> None:
    steps, notes = drive(SourcePlan("auto", crawl=True), SitemapsWalked("robots.txt", 2))
    assert steps == [WalkSitemaps(), Crawl(), CloseSitemaps()]
    assert notes == ["--crawl: 2 sitemaps from robots.txt not walked"]


def test_a_site_that_cannot_be_connected_to_gets_no_fallback() -> None:
    for plan in (SourcePlan("auto"), SourcePlan("auto", crawl=True), SourcePlan("sitemap")):
        steps, _ = drive(plan, SitemapsWalked("none", cannot_connect=True))
        assert steps == [WalkSitemaps(), CloseSitemaps()]


def test_llms_alone_says_when_there_was_none_and_never_probes() -> None:
    unmatched = Progress(prefix_unmatched=True)
    steps, notes = drive(SourcePlan("llms"), NONE_FOUND, after=unmatched)
    assert steps == [ReadLlms(alone=True)]
    assert notes == ["no usable llms.txt found"]
    steps, notes = drive(SourcePlan("llms"), NONE_FOUND, LlmsRead(found=True, links=0))
    assert notes == []


def test_all_holds_llms_links_and_passes_them_after_the_sitemaps() -> None:
    steps, _ = drive(SourcePlan("all"), NONE_FOUND, LlmsRead(found=True, links=4))
    # llms.txt gave links: they stand in for the missing sitemaps, no crawl
    assert steps == [ReadLlms(hold=True), WalkSitemaps(), CloseSitemaps(pass_held=True)]
    steps, _ = drive(SourcePlan("all"), NONE_FOUND, LlmsRead(found=True, links=0))
    assert steps == [ReadLlms(hold=True), WalkSitemaps(), Crawl(), CloseSitemaps()]


def test_the_sitemap_under_the_base_path_is_tried_after_the_sitemaps_unless_the_cap_is_full() -> (
    None
):
    unmatched = Progress(prefix_unmatched=True)
    walked = SitemapsWalked("robots.txt", 1, progress=unmatched)
    steps, _ = drive(SourcePlan("auto"), walked)
    assert steps == [WalkSitemaps(), ProbeUnderPrefix(), CloseSitemaps()]
    full = Progress(urls_full=True, budget_hit=True, prefix_unmatched=True)
    steps, _ = drive(SourcePlan("auto"), SitemapsWalked("robots.txt", 1, progress=full))
    assert ProbeUnderPrefix() not in steps


def test_with_all_the_sitemap_under_the_base_path_comes_before_the_held_llms_links() -> None:
    # Its rows must say llms.txt lists them too, and a link it lists must not go out alone.
    unmatched = Progress(prefix_unmatched=True)
    walked = SitemapsWalked("robots.txt", 1, progress=unmatched)
    steps, _ = drive(SourcePlan("all"), walked, LlmsRead(found=True, links=2))
    assert steps == [
        ReadLlms(hold=True),
        WalkSitemaps(),
        ProbeUnderPrefix(),
        CloseSitemaps(pass_held=True),
    ]


def test_the_probe_follows_what_the_fallback_left() -> None:
    # The crawl under the base path found pages there: no probe after it.
    unmatched = Progress(prefix_unmatched=True)
    steps, _ = drive(SourcePlan("sitemap"), SitemapsWalked("none", progress=unmatched))
    assert steps == [WalkSitemaps(), Crawl(), CloseSitemaps()]
    steps, _ = drive(
        SourcePlan("sitemap"), SitemapsWalked("none", progress=unmatched), after=unmatched
    )
    assert steps == [WalkSitemaps(), Crawl(), ProbeUnderPrefix(), CloseSitemaps()]


# -- the emitter ----------------------------------------------------------------------------------


class Room:
    """An emitter over a real report, ledger and budget tracker; batches land in `out`."""

    def __init__(self, options: WalkOptions | None = None, *, prefix: str | None = None) -> None:
        self.options = options or WalkOptions()
        self.report = WalkReport()
        self.budget = BudgetTracker(self.options.budgets)
        self.ledger = WalkLedger(
            self.report, self.budget, site_url=SITE, prefix=prefix, max_document_bytes=1 << 20
        )
        self.out: list[list[str]] = []
        self.emitted = asyncio.Event()
        self.emitter = Emitter(self.options, self.report, self.ledger, self.budget, emit=self.emit)

    async def emit(self, batch: Batch) -> None:
        self.out.append(batch.urls())
        self.emitted.set()

    def urls(self) -> list[str]:
        return [url for batch in self.out for url in batch]


def rows(*paths: str) -> Batch:
    batch = Batch()
    for path in paths:
        batch.push(SITE + path, SITE + "/sitemap.xml", 1, "sitemap")
    return batch


def parsed(xml: str) -> Batch:
    parser = SitemapParser(SITE + "/sitemap.xml")
    parser.feed(xml.encode())
    parser.close()
    batch, _children, _malformed = parser.take_rows()
    return batch


URLSET = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    'xmlns:xhtml="http://www.w3.org/1999/xhtml">'
    f"<url><loc>{SITE}/en/a</loc><lastmod>2024-03-01</lastmod>"
    f'<xhtml:link rel="alternate" hreflang="de" href="{SITE}/de/a"/></url>'
    f"<url><loc>{SITE}/en/b</loc><lastmod>2019-01-01</lastmod></url>"
    f"<url><loc>{SITE}/en/c</loc></url>"
    "</urlset>"
)


async def test_each_url_goes_out_once_in_full_batches_then_the_rest_on_flush() -> None:
    room = Room()
    paths = [f"/p{i}" for i in range(2500)]
    await room.emitter.pass_on(rows(*paths[:1500]), alternates=False)
    await room.emitter.pass_on(rows(*paths[1000:]), alternates=False)  # 500 seen again
    assert [len(b) for b in room.out] == [BATCH_SIZE, BATCH_SIZE]
    await room.emitter.flush()
    assert [len(b) for b in room.out] == [BATCH_SIZE, BATCH_SIZE, 500]
    assert room.urls() == [SITE + p for p in paths]
    assert (room.report.urls, room.report.duplicates) == (2500, 500)


async def test_many_rows_at_once_go_out_in_order_in_batches_of_their_own_size() -> None:
    """A release of held alternates hands the emitter thousands of rows at once: they go out
    in order, each batch holding only its own rows."""
    room = Room()
    paths = [f"/q{i}" for i in range(5500)]
    await room.emitter.pass_on(rows(*paths), alternates=False)
    assert [len(b) for b in room.out] == [BATCH_SIZE] * 5
    await room.emitter.flush()
    assert [len(b) for b in room.out] == [BATCH_SIZE] * 5 + [500]
    assert room.urls() == [SITE + p for p in paths]


async def test_the_url_cap_cuts_rows_counts_them_and_binds() -> None:
    room = Room(WalkOptions(budgets=Budgets(max_urls=3)))
    assert not room.emitter.cap_filled()
    await room.emitter.pass_on(rows("/a", "/b", "/c", "/d", "/e"), alternates=False)
    await room.emitter.pass_on(rows("/f"), alternates=False)
    await room.emitter.flush()
    assert room.urls() == [SITE + "/a", SITE + "/b", SITE + "/c"]
    assert (room.report.urls, room.report.urls_cut) == (3, 2)
    assert room.emitter.urls_full and room.emitter.cap_filled()
    assert room.report.budgets_hit == ["max_urls"]
    assert room.report.partial


async def test_a_cap_filled_exactly_is_filled_but_cut_nothing() -> None:
    room = Room(WalkOptions(budgets=Budgets(max_urls=2)))
    await room.emitter.pass_on(rows("/a", "/b"), alternates=False)
    assert room.emitter.cap_filled()
    assert not room.emitter.urls_full  # reached, not cut: the next fetch is what it prevents
    assert room.report.urls_cut == 0


async def test_the_base_path_scopes_unscoped_rows_and_counts_them() -> None:
    room = Room(prefix="/docs/")
    await room.emitter.pass_on(rows("/docs/a", "/blog/b", "/docs/c"), alternates=False)
    await room.emitter.pass_on(rows("/about"), alternates=False, scoped=True)  # llms.txt's
    await room.emitter.flush()
    assert room.urls() == [SITE + "/docs/a", SITE + "/docs/c", SITE + "/about"]
    assert (room.ledger.prefix_matched, room.ledger.prefix_examined) == (2, 3)


async def test_sitemap_rows_bring_their_alternates_after_the_sitemaps() -> None:
    room = Room()
    await room.emitter.pass_sitemap_rows(parsed(URLSET))
    await room.emitter.flush()
    assert room.urls() == [SITE + "/en/a", SITE + "/en/b", SITE + "/en/c"]
    assert room.emitter.held_alternates == 1
    await room.emitter.release_alternates()
    await room.emitter.flush()
    assert room.urls() == [SITE + "/en/a", SITE + "/en/b", SITE + "/en/c", SITE + "/de/a"]
    assert (room.report.urls, room.report.alternates) == (3, 1)
    assert room.emitter.held_alternates == 0
    plain = Room(WalkOptions(alternates=False))
    await plain.emitter.pass_sitemap_rows(parsed(URLSET))
    await plain.emitter.flush()
    assert plain.report.alternates == 0
    assert len(plain.urls()) == 3


async def test_a_held_alternate_some_sitemap_lists_as_a_page_is_a_page() -> None:
    room = Room()
    await room.emitter.pass_sitemap_rows(parsed(URLSET))
    await room.emitter.pass_sitemap_rows(rows("/de/a"))
    await room.emitter.release_alternates()
    await room.emitter.flush()
    assert room.urls() == [SITE + "/en/a", SITE + "/en/b", SITE + "/en/c", SITE + "/de/a"]
    assert (room.report.urls, room.report.alternates, room.report.duplicates) == (4, 0, 0)


async def test_page_filters_drop_sitemap_rows_and_undated_urls_and_say_so() -> None:
    since = datetime(2024, 1, 1)
    room = Room(WalkOptions(since=since, exclude=("/c$",)))
    await room.emitter.pass_sitemap_rows(parsed(URLSET))
    await room.emitter.release_alternates()
    await room.emitter.flush()
    # /en/b is older than `since`; /en/c is excluded; no lastmod is kept (not strict)
    assert room.urls() == [SITE + "/en/a", SITE + "/de/a"]
    assert room.emitter.undated_kept(SITE + "/llms-page")
    assert not room.emitter.undated_kept(SITE + "/x/c")
    assert room.report.filtered_pages == 3
    room.emitter.note_filtered()
    assert room.report.notes == ["filters dropped 3 page URLs (since 2024-01-01T00:00:00+00:00)"]


async def test_the_ticker_hands_on_a_small_batch_that_waited() -> None:
    room = Room()
    ticker = asyncio.create_task(room.emitter.flush_waiting())
    try:
        await room.emitter.pass_on(rows("/a", "/b"), alternates=False)
        assert room.out == []  # far from full: it waits
        started = time.monotonic()
        await asyncio.wait_for(room.emitted.wait(), timeout=10 * MAX_BATCH_WAIT + 5)
        assert room.out == [[SITE + "/a", SITE + "/b"]]
        assert time.monotonic() - started >= MAX_BATCH_WAIT * 0.9
    finally:
        await room.emitter.stop_ticker(ticker)
    assert ticker.done()
