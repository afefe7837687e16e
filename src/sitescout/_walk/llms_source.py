"""llms.txt as a source of the walk's pages: read through the walk's fetcher with every fetch
counted against its budgets, its links kept under the base path (§7) and made into rows."""

from __future__ import annotations

from .._budget import BudgetTracker
from .._core import Batch, LlmsIndex
from .._discover import LlmsReader, llms_shortfall, llms_txt_unread
from .._http import Fetcher, Response
from .._ledger import WalkLedger
from .._llms import SOURCE as LLMS
from .._llms import LlmsLink
from .._models import WalkReport
from .documents import deadline_cut, time_limit
from .emitter import Emitter
from .options import WalkOptions
from .plan import CloseSitemaps, ReadLlms

__all__ = ["LlmsSource"]


class LlmsSource:
    """Takes the source plan's llms.txt steps: `take` reads it (for source "all", holding its
    links while the sitemaps are walked), `close` ends the merge."""

    def __init__(
        self,
        site_url: str,
        options: WalkOptions,
        report: WalkReport,
        ledger: WalkLedger,
        budget: BudgetTracker,
        emitter: Emitter,
    ) -> None:
        self.site_url = site_url
        self.options = options
        self.report = report
        self.ledger = ledger
        self.budget = budget
        self.emitter = emitter
        self._held: list[LlmsLink] = []

    async def take(self, fetcher: Fetcher, step: ReadLlms) -> tuple[bool, int]:
        """Read llms.txt: its pages go out now, or (`step.hold`) wait for the sitemaps. Whether
        one was found, and how many page links it gave under the base path."""
        report = self.report
        if step.alone:
            report.source, report.source_url = "none", None
        links = await self._read(fetcher)
        found = report.llms.url if report.llms is not None else None
        if step.hold:
            self._hold(links)
        elif found is not None:
            report.source, report.source_url = LLMS, found
            await self.emitter.pass_on(self._rows(links), alternates=False, scoped=True)
        if step.alone:
            shortfall = llms_shortfall(report.llms, fetcher.cannot_connect)
            if shortfall is not None:  # the only source gave nothing: say why
                warning, failed = shortfall
                report.warn(warning)
                report.errors.extend(d for d in report.documents if d.url == failed)
        return found is not None, len(links)

    async def close(self, step: CloseSitemaps) -> None:
        """The sitemaps are walked. Merged with them, the llms.txt links no sitemap listed come
        last; a named llms.txt that was not read is said to be."""
        left = self._release()
        report = self.report
        if step.pass_held:
            llms_report = report.llms
            assert llms_report is not None
            if report.source == "none":
                report.source, report.source_url = LLMS, llms_report.url
            else:
                report.notes.append(f"also llms.txt {llms_report.url}")
            await self.emitter.pass_on(self._rows(left), alternates=False, scoped=True)
        unread = llms_txt_unread(self.options.llms_txt, self.options.source, report)
        if unread is not None:
            report.warn(unread)

    async def _read(self, fetcher: Fetcher) -> list[LlmsLink]:
        """The llms.txt links under the base path; every fetch counts against the budgets."""
        reader = LlmsReader(
            fetcher,
            self.site_url,
            self.options.llms_txt,
            gate=self._gate,
            time_limit=lambda: time_limit(self.budget, self.options.fetch.timeout),
            observe=self._fetched,
        )
        links = await reader.read()
        summary = self.report.llms = reader.summary
        if reader.stopped:
            self.ledger.budget_bound()
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
        if self.ledger.prefix is None:
            summary.in_scope = len(links)
            return links
        kept = [link for link in links if self.ledger.llms_under_base_path(link.url)]
        summary.in_scope = len(kept)
        return kept

    def _hold(self, links: list[LlmsLink]) -> None:
        """Keep `links` in an index while the sitemaps are walked: the emitter marks the rows it
        also lists, and remembers which links a sitemap listed."""
        index = LlmsIndex()
        for link in links:
            index.add(link.url, link.md_url, link.title)
        self.emitter.llms_index = index
        self._held = links

    def _release(self) -> list[LlmsLink]:
        """Stop marking rows; the held links no sitemap listed (none when none was held)."""
        index, self.emitter.llms_index = self.emitter.llms_index, None
        held, self._held = self._held, []
        if index is None:
            return []
        return [link for link in held if not index.is_listed(link.url)]

    def _rows(self, links: list[LlmsLink]) -> Batch:
        """Rows for llms.txt links (already scoped to the base path) the page filters keep; they
        are de-duplicated with the rest, markdown URLs included (`Emitter.pass_on`)."""
        rows = Batch()
        sources = [LLMS] if self.options.source == "all" else []
        for link in links:
            if self.emitter.undated_kept(link.url):
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

    def _gate(self) -> bool:
        return not self.emitter.urls_full and self.budget.try_fetch()

    def _fetched(self, url: str, depth: int, resp: Response, why: str | None) -> None:
        self.ledger.settle_llms(url, depth, resp, why)
        if deadline_cut(self.budget, resp):
            self.budget.mark_hit("deadline")
            self.ledger.budget_bound()
        self.budget.add_bytes(resp.bytes)
        self.report.bytes += resp.bytes
