"""One sitemap document (§5): fetch → scan → ledger, its child sitemaps, and the budgets that cut
it short.

`DocumentTask.run` is what each of the pool's workers does with a queued document: the budgets
may forbid the fetch; the body streams into a `SitemapParser` through a `DocumentSink`; the rows
go to the `Emitter` as they appear; the `WalkLedger` books what the answer meant; the children an
index lists are queued (`ChildSitemaps` picks them).

With a state directory, each document is fetched through its `Visit` (`rewalk`): conditionally,
or replayed from the state, and kept there for the next walk.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from urllib.parse import urlsplit

from .._budget import BudgetName, BudgetTracker, budget_label
from .._http import Fetcher, Response
from .._ledger import WalkLedger
from .._local import STDIN_URL, is_file_url, local_child
from .._models import DocumentRecord, Malformed, WalkReport
from .._parse import SitemapParser
from .._state import BodyRecorder
from .._text import plural
from .._urls import document_key
from .children import ChildSitemaps
from .emitter import Emitter
from .options import WalkOptions
from .rewalk import Rewalk

__all__ = ["MAX_MALFORMED_KEPT", "Document", "DocumentSink", "DocumentTask", "deadline_cut"]

# The walk's logger, named as before the walk became a package (`-vv` shows the name).
log = logging.getLogger(__name__.rpartition(".")[0])

# A fetch timing out with less than this left before the deadline was cut by the deadline.
_DEADLINE_SLACK = 0.1
MAX_MALFORMED_KEPT = 1000

# One queued document: (url, depth, probe).
Document = tuple[str, int, bool]


def deadline_cut(budget: BudgetTracker, resp: Response) -> bool:
    """Whether the walk's deadline, not the per-document timeout, ended this fetch."""
    if resp.error is None or resp.error.error_class != "TimeoutError":
        return False
    left = budget.deadline_left()
    return left is not None and left < _DEADLINE_SLACK


def time_limit(budget: BudgetTracker, timeout: float) -> float:
    """How long the next fetch may take: the per-document `timeout`, or what is left before the
    walk's deadline when that is less."""
    left = budget.deadline_left()
    return timeout if left is None else max(0.05, min(timeout, left))


class DocumentSink:
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

    def __init__(self, task: DocumentTask, parser: SitemapParser, record: DocumentRecord) -> None:
        self.task = task
        self.parser = parser
        self.record = record
        self.pending: deque[bytes] = deque()
        self.stopped_by: BudgetName | None = None
        self.recorder: BodyRecorder | None = None  # stores the body as it came (`--state`)

    def raw(self, data: bytes) -> None:
        if self.recorder is not None:
            self.recorder.write(data)

    def feed(self, data: bytes) -> None:
        if self.stopped_by is None:
            self.stopped_by = self.task.reading_stopped()
        if self.stopped_by is None:
            self.pending.append(data)
        self.task.budget.add_bytes(len(data))  # read is read, parsed or not

    async def drain(self) -> bool:
        await self.parse_pending()
        if self.stopped_by is None and self.task.emitter.urls_full:
            self.stopped_by = "max_urls"  # nothing more of it could be kept
        return self.stopped_by is None

    async def parse_pending(self) -> None:
        pending = self.pending
        while pending and not self.task.emitter.urls_full:
            self.parser.feed(pending.popleft())
            await self.task.absorb(self.parser, self.record)
            if pending:
                await asyncio.sleep(0)


class DocumentTask:
    """Queues, fetches, scans and books the walk's sitemap documents, each once."""

    def __init__(
        self,
        options: WalkOptions,
        report: WalkReport,
        ledger: WalkLedger,
        budget: BudgetTracker,
        emitter: Emitter,
        children: ChildSitemaps,
        *,
        queue: Callable[[Document], None],
        rewalk: Rewalk | None = None,
    ) -> None:
        """`queue` puts a document in the pool's queue; a worker hands it back to `run`.
        `rewalk`: the state directory's side, when the walk keeps one."""
        self.options = options
        self.report = report
        self.ledger = ledger
        self.budget = budget
        self.emitter = emitter
        self.children = children
        self._queue = queue
        self.rewalk = rewalk
        self._fetcher: Fetcher | None = None
        self._visited: set[str] = set()
        self._probes: set[str] = set()
        self._offline_skipped = 0
        # Documents left unread because a budget was reached, per budget (a note, not errors).
        self._unread: dict[BudgetName, int] = {}
        # Child sitemap URLs seen while a document streams, keyed by its parser.
        self._pending_children: dict[int, list[str]] = {}

    def bind(self, fetcher: Fetcher) -> None:
        """Fetch through `fetcher` from now on (the walk opens it when it starts)."""
        self._fetcher = fetcher

    @property
    def fetcher(self) -> Fetcher:
        assert self._fetcher is not None, "bind() a fetcher first"
        return self._fetcher

    # -- the queue --------------------------------------------------------------------------------

    def add_probe(self, url: str) -> None:
        """Mark `url` a guess (a well-known path): its absence is an answer, not a failure."""
        self._probes.add(url)

    def visited(self, url: str) -> bool:
        return document_key(url) in self._visited

    def enqueue(self, url: str, depth: int) -> bool:
        """Queue a document unless it was queued before (or offline forbids it); whether it was."""
        key = document_key(url)
        if key in self._visited:
            return False
        self._visited.add(key)
        if self.options.offline and not self.fetcher.reads_locally(url):
            self._offline_skipped += 1  # offline: never requested, counted in a note
            return False
        self._queue((url, depth, url in self._probes))
        return True

    async def failed(self, item: Document, exc: Exception) -> None:
        """A bug while walking one document: recorded as its failure, the walk goes on."""
        url, depth, _probe = item
        log.exception("internal error walking %s", url)
        self.ledger.record_failure(DocumentRecord(url, depth), "internal error", "InternalError")

    # -- one document -----------------------------------------------------------------------------

    async def run(self, url: str, depth: int, probe: bool = False) -> None:
        emitter = self.emitter
        if emitter.urls_full:
            self._left_unread("max_urls")
            return
        if emitter.cap_filled():
            # §5: a full URL budget prevents this fetch, so it binds even if filled exactly.
            emitter.reach_url_cap()
            self._left_unread("max_urls")
            return
        if not self.budget.try_fetch():
            self.ledger.budget_bound()
            self._left_unread(self.budget.exhausted_reason())
            return
        record = DocumentRecord(url=url, depth=depth)
        self.report.documents.append(record)

        rewalk = self.rewalk
        visit = rewalk.visit(url) if rewalk and not self.fetcher.reads_locally(url) else None

        def sink_for(resp: Response) -> DocumentSink:
            charset = SitemapParser.charset_of(resp.content_type)
            parser = SitemapParser(resp.final_url, depth=depth, charset=charset)
            sink = DocumentSink(self, parser, record)
            if visit is not None:
                visit.record(sink, resp)
            return sink

        limit = time_limit(self.budget, self.options.fetch.timeout)
        if visit is not None:
            resp, sink = await visit.fetch(self.fetcher, sink_for, limit)
        else:
            resp, sink = await self.fetcher.fetch_into(url, sink_for, time_limit=limit)
        stopped_by = sink.stopped_by if sink is not None else None
        if deadline_cut(self.budget, resp):
            self.budget.mark_hit("deadline")
            self.ledger.budget_bound()
            stopped_by = "deadline"
        parser = sink.parser if sink is not None else None
        if sink is not None and parser is not None and stopped_by is None:
            if resp.error is None or resp.error.error_class != "TimeoutError":
                await sink.parse_pending()  # what arrived after the last drain (cut, flush)
            if resp.truncated or resp.error is not None:
                parser.note_truncated()  # its last line may be a fragment, not a URL
            for _step in parser.closing():  # salvage emits its finds here: let the loop run
                await self.absorb(parser, record)
                await asyncio.sleep(0)
            await self.absorb(parser, record)
        if parser is not None:
            record.children = len(self._pending_children.get(id(parser), ()))
        if stopped_by is not None:
            # Left unfinished by a budget: what it gave so far is kept, the rest was not read.
            # Not a failure, and no fragment of it is reported as malformed.
            self.ledger.settle_stopped(record, resp, parser, stopped_by)
        else:
            self.ledger.settle(record, resp, parser, probe)
        if parser is not None and parser.kind == "sitemapindex":
            children = self._pending_children.pop(id(parser), [])
            record.children = len(children)
            picked = self.children.pick(record, parser, children)
            queued = [child for child in picked if self.enqueue(child, record.depth + 1)]
            if visit is not None:
                visit.rewalk.children_queued(url, parser.sitemap_lastmods, queued)
        self.report.bytes += resp.bytes
        if visit is not None:
            whole = stopped_by is None and resp.error is None and not resp.truncated
            visit.settle(resp, whole and parser is not None and parser.is_sitemap)
        await emitter.flush()  # the document ended: what it gave goes out now

    async def absorb(self, parser: SitemapParser, record: DocumentRecord) -> None:
        """Move what the parser produced on: rows to the emitter (awaits when the consumer is
        behind), child sitemaps kept until the index ends, malformed entries into the report."""
        rows, sitemaps, malformed = parser.take_rows()
        record.entries += len(rows)
        if malformed and is_file_url(parser.url) and parser.kind == "sitemapindex":
            malformed = _local_children(parser, malformed, sitemaps)
        if sitemaps:
            self._pending_children.setdefault(id(parser), []).extend(sitemaps)
        report = self.report
        for bad in malformed:
            report.malformed_count += 1
            if len(report.malformed) < MAX_MALFORMED_KEPT:
                report.malformed.append(bad)
        await self.emitter.pass_sitemap_rows(rows)

    # -- budgets ----------------------------------------------------------------------------------

    def reading_stopped(self) -> BudgetName | None:
        """The budget that ends the reading of documents in flight now, if one does."""
        if self.emitter.urls_full:
            return "max_urls"
        limit = self.options.budgets.max_bytes
        if limit is not None and self.budget.bytes > limit:
            self.budget.mark_hit("max_bytes")
            self.ledger.budget_bound()
            return "max_bytes"
        return None

    def _left_unread(self, budget: BudgetName | None) -> None:
        if budget is not None:
            self._unread[budget] = self._unread.get(budget, 0) + 1

    def note_unread(self) -> None:
        """Notes on the documents never fetched: offline, or a budget was reached."""
        if self._offline_skipped:
            count = self._offline_skipped
            self.report.notes.append(
                f"offline: {plural(count, 'http(s) sitemap document')} not fetched"
            )
        for budget, count in self._unread.items():
            self.report.notes.append(
                f"{plural(count, 'sitemap document')} left unread: {budget_label(budget)} reached"
            )


def _local_children(
    parser: SitemapParser, malformed: list[Malformed], sitemaps: list[str]
) -> list[Malformed]:
    """A local index's relative `<loc>`s as `file://` children beside or below it (the scanner
    resolves only to http(s)); what cannot be one stays malformed."""
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
