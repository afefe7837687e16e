"""The walk's ledger (§5, §7): what each fetched document means for the report, with no I/O.

`Walk` fetches and parses; every decision about what a document's answer means is taken here,
synchronously, so that it can be tested with hand-made records and responses:

* `settle` a fetched sitemap document: its kind, notes, the size cap, a probe (well-known path,
  or the site URL tried as a sitemap) that did not answer as an answer rather than a failure,
  failure classes and partial marks (a failed document, and a damaged one whose entries were
  salvaged: both are errors in the summary, and the walk is partial);
* `settle_llms` an llms.txt fetch the same way;
* base-path scope (§7): which page URLs are under the prefix, counted per source for the
  narrow-prefix warning;
* whether any root document turned out to be a sitemap (discovery moves on when none did);
* `finish`: budget warnings, the narrow-prefix warnings and the depth warning, in report order.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ._budget import BudgetName, BudgetTracker, budget_label
from ._errors import ErrorClass
from ._llms import SOURCE as LLMS
from ._locale import prefix_warning, under_prefix
from ._models import SITEMAP_KINDS, DocumentRecord, WalkReport
from ._urls import document_key, normalize_url, site_key

if TYPE_CHECKING:
    from ._core import Batch
    from ._http import Response
    from ._parse import SitemapParser

__all__ = ["WalkLedger", "document_key"]

log = logging.getLogger(__name__)

# A root that failed this way may still be a sitemap: discovery does not try the next source.
_TRANSIENT = (None, "TimeoutError", "NetworkError")
DAMAGED = "some sitemap documents were damaged"
# Document kinds that hold page entries: their count is shown even when it is 0.
_ENTRY_KINDS = ("urlset", "rss", "atom", "text")


def log_document(what: str, record: DocumentRecord) -> None:
    """The one INFO line per settled document that `sitescout -v` shows: URL, status, kind,
    entries (child sitemaps for an index), bytes, seconds, and the error if it failed."""
    if not log.isEnabledFor(logging.INFO):
        return
    parts = ["no response" if record.status is None else f"HTTP {record.status}"]
    if record.kind:
        parts.append(str(record.kind))
    entries = record.entries or 0
    if entries or record.kind in _ENTRY_KINDS:
        parts.append(f"{entries:,} {'entry' if entries == 1 else 'entries'}")
    if record.children:
        parts.append(f"{record.children:,} child sitemaps")
    parts.append(f"{record.bytes or 0:,} bytes")
    parts.append(f"{record.duration or 0.0:.2f} s")
    error = record.error or ""
    # `HTTP 404 (url)` says no more than the status and the URL already do.
    failed = f"; {error}" if error and not error.startswith(parts[0]) else ""
    if record.stopped_by:
        failed += f"; not read to its end ({budget_label(record.stopped_by)})"
    log.info("%s %s: %s%s", what, record.url, ", ".join(parts), failed)


class WalkLedger:
    """Books one walk's documents and scope counts into its `WalkReport`."""

    def __init__(
        self,
        report: WalkReport,
        budget: BudgetTracker,
        *,
        site_url: str,
        prefix: str | None,
        max_document_bytes: int,
    ) -> None:
        self.report = report
        self.budget = budget
        self.prefix = prefix  # §7: only page URLs under it are yielded; None: all
        self.max_document_bytes = max_document_bytes
        self._site_key = site_key(site_url)
        self._start_key = document_key(normalize_url(site_url))  # tried as a sitemap itself
        self.prefix_examined = 0
        self.prefix_matched = 0
        # llms.txt links under the base path, counted apart: the narrow-prefix warning names
        # the source whose URLs missed it.
        self.llms_examined = 0
        self.llms_matched = 0
        self._depth_warnings: set[str] = set()  # each wording of the depth warning put out

    # -- scope ------------------------------------------------------------------------------------

    def retain_under_base_path(self, rows: Batch) -> None:
        """Keep the rows of a sitemap batch under the base path, in the core, and count the
        same-site ones examined and matched (other sites' rows go uncounted)."""
        assert self.prefix is not None
        host, port = self._site_key
        examined, matched = rows.retain_under(host, port, self.prefix)
        self.prefix_examined += examined
        self.prefix_matched += matched

    def llms_under_base_path(self, url: str) -> bool:
        """Whether an llms.txt link (already same-site) is under the base path."""
        assert self.prefix is not None
        self.llms_examined += 1
        if under_prefix(url, self.prefix):
            self.llms_matched += 1
            return True
        return False

    # -- documents --------------------------------------------------------------------------------

    def settle(
        self, record: DocumentRecord, resp: Response, parser: SitemapParser | None, probe: bool
    ) -> None:
        """Book a fetched sitemap document (already in `report.documents`) and its outcome."""
        report = self.report
        record.status, record.final_url = resp.status, resp.final_url
        record.bytes, record.duration, record.truncated = resp.bytes, resp.elapsed, resp.truncated
        if parser is not None:
            record.kind = parser.kind
            for note in parser.notes:
                report.notes.append(f"{resp.final_url}: {note}")
        if resp.truncated:
            cap = self.max_document_bytes
            report.warn(f"{resp.final_url}: cut at the {cap}-byte document limit")
            report.mark_partial("a document exceeded the size limit")
        if probe and (resp.error is not None or not (parser and parser.is_sitemap)):
            # A well-known path (or the site URL tried as a sitemap) that is missing or not a
            # sitemap is an answer, not a failure.
            record.error = str(resp.error) if resp.error else "not a sitemap"
            record.error_class = resp.error.error_class if resp.error else "NotASitemap"
            what = "site URL" if document_key(record.url) == self._start_key else "well-known"
            report.notes.append(f"{what} {record.url}: {record.error}")
        elif resp.error is not None:
            self.record_failure(record, str(resp.error), resp.error.error_class)
        elif parser is not None and parser.kind == "not-a-sitemap":
            why = parser.refusal
            self.record_failure(record, why, "NotASitemap", partial=record.depth > 1)
        elif parser is not None and parser.errors:
            what = "malformed text sitemap" if parser.kind == "text" else "malformed XML"
            record.error = f"{what}: " + "; ".join(parser.errors[:3])
            record.error_class = None
            report.errors.append(record)
            # What the damage hid is lost: the summary counts it as an error, and the walk is
            # partial (exit 1) like one with a failed document. A document cut by the size cap
            # ends inside an entry, and is partial for that reason already.
            if not resp.truncated:
                report.mark_partial(DAMAGED)
        log_document("sitemap", record)

    def settle_stopped(
        self,
        record: DocumentRecord,
        resp: Response,
        parser: SitemapParser | None,
        budget: BudgetName,
    ) -> None:
        """Book a document whose reading a budget ended: the entries it gave so far are kept
        and the rest was never read, so it is neither a failure nor malformed."""
        record.status, record.final_url = resp.status, resp.final_url
        record.bytes, record.duration = resp.bytes, resp.elapsed
        record.stopped_by = budget
        if parser is not None and parser.kind in SITEMAP_KINDS:
            record.kind = parser.kind
        self.report.notes.append(f"{record.url}: not read to its end ({budget_label(budget)})")
        self.budget_bound()
        log_document("sitemap", record)

    def record_failure(
        self, record: DocumentRecord, message: str, error_class: ErrorClass, *, partial: bool = True
    ) -> None:
        record.error, record.error_class = message, error_class
        self.report.errors.append(record)
        log.warning("sitemap %s failed: %s", record.url, message)
        if partial:
            self.report.mark_partial("some sitemap documents failed")

    def settle_llms(self, url: str, depth: int, resp: Response, why: str | None) -> None:
        """Book one llms.txt fetch; `why` says why it is unusable (None: it was read)."""
        record = DocumentRecord(url=url, depth=depth, kind="llms")
        record.status, record.final_url = resp.status, resp.final_url
        record.bytes, record.duration = resp.bytes, resp.elapsed
        record.error = why
        if why is not None:
            # A missing or unusable llms.txt is an answer, like a missing well-known sitemap.
            record.error_class = resp.error.error_class if resp.error else "NotAnLlmsFile"
            self.report.notes.append(f"llms.txt {url}: {why}")
        self.report.documents.append(record)
        log_document("llms.txt", record)

    def any_root_was_sitemap(self, urls: list[str]) -> bool:
        """Whether any of these root documents answered as a sitemap (or may have: a timeout or a
        network error is not proof that it is not one)."""
        wanted = {document_key(u) for u in urls}
        return any(
            d.kind in SITEMAP_KINDS and d.error_class in _TRANSIENT
            for d in self.report.documents
            if d.depth == 1 and document_key(d.url) in wanted
        )

    # -- the report -------------------------------------------------------------------------------

    def budget_bound(self) -> None:
        """A budget bound: its warnings and name into the report, which becomes partial."""
        for name in self.budget.hit:
            warning = self.budget.warning(name)
            if name == "max_depth":
                self._depth_warnings.add(warning)
            self.report.warn(warning)
        for name in self.budget.hit:
            if name not in self.report.budgets_hit:
                self.report.budgets_hit.append(name)
        self.report.mark_partial("a walk budget was reached")

    def finish(self) -> None:
        """The closing warnings, once every document is settled."""
        report = self.report
        if self.budget.hit:
            self.budget_bound()
        if self.prefix is not None:
            for source, matched, examined in (
                ("Sitemap", self.prefix_matched, self.prefix_examined),
                (LLMS, self.llms_matched, self.llms_examined),
            ):
                warning = prefix_warning(self.prefix, matched, examined, source=source)
                if warning is not None:
                    report.warn(warning)
        over = self.budget.overshoot()
        if over and "max_bytes" in self.budget.hit:
            report.warn(
                f"{self.budget.bytes:,} sitemap bytes read, {over:,} over the byte limit: "
                "documents in flight were stopped at their next read"
            )
        # The depth warning names the final count of dropped children: the latest wording
        # replaces the earlier ones, last.
        if "max_depth" in self.budget.hit:
            report.warnings = [w for w in report.warnings if w not in self._depth_warnings]
            report.warnings.append(self.budget.warning("max_depth"))
