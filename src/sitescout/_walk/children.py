"""Which child sitemaps of an index are walked: the filters, the depth budget, locale
order and folders, and the batch pipeline's hand-off. No I/O: the document task queues what
`pick` keeps."""

from __future__ import annotations

from collections.abc import Callable

from .._budget import BudgetTracker, order_children
from .._ledger import WalkLedger
from .._locale import filter_children
from .._models import DocumentRecord, WalkReport
from .._parse import SitemapParser
from .options import WalkOptions

__all__ = ["ChildSitemaps", "HandOff"]

# `hand_off(index_url, children)`: True when the children are walked elsewhere (see `Walk`).
HandOff = Callable[[str, list[str]], bool]


class ChildSitemaps:
    """Picks the children of each sitemap index to walk; the others are noted in the report."""

    def __init__(
        self,
        options: WalkOptions,
        report: WalkReport,
        ledger: WalkLedger,
        budget: BudgetTracker,
        *,
        preferred_locale: str | None,
        hand_off: HandOff | None = None,
    ) -> None:
        self.options = options
        self.report = report
        self.ledger = ledger
        self.budget = budget
        self.preferred_locale = preferred_locale
        self.hand_off = hand_off
        # The native filter of child sitemaps, built once per walk (None: none is set).
        self.child_filter = options.child_filter()

    def pick(self, record: DocumentRecord, parser: SitemapParser, children: list[str]) -> list[str]:
        """The children of the index `record` (read by `parser`) to walk, in order."""
        if not children:
            return []
        if self.child_filter is not None or self.options.sitemap_filter is not None:
            children = self._filter(record, parser, children)
            if not children:
                return []
        if not self.budget.depth_allows_children(record.depth):
            self.budget.drop_children(len(children))
            self.report.dropped_children += len(children)
            self.ledger.budget_bound()
            return []
        if self.options.budgets.any_set:
            # Ordered before filtering: a locale folder is read with all its siblings as
            # evidence, and the filter keeps the order of what it keeps.
            children = order_children(children, self.preferred_locale)
        if self.options.filter_locales:
            result = filter_children(children, self.preferred_locale)
            if result.applied and result.skipped:
                self.report.skipped_sitemaps.extend(result.skipped)
                self.report.notes.append(
                    f"{record.url}: skipped {len(result.skipped)} child sitemaps in other locales "
                    f"than {result.preferred}"
                )
            children = result.kept
        hand_off = self.hand_off
        if hand_off is not None and record.depth == 1 and hand_off(record.url, children):
            self.report.notes.append(f"{record.url}: {len(children)} child sitemaps handed off")
            return []
        return children

    def _filter(
        self, record: DocumentRecord, parser: SitemapParser, children: list[str]
    ) -> list[str]:
        """The children of an index the filters keep; the others are noted, never fetched."""
        native, call = self.child_filter, self.options.sitemap_filter
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
                    self.ledger.record_failure(
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
