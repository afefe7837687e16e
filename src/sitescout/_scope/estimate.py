"""The scope estimate run (§9): discovery, the top document, a sample of its children, the
site's llms.txt, every outcome written down as a note as it happens; and its entry points,
`estimate_scope` and `estimate_scope_async`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import warnings
from collections.abc import Sequence
from dataclasses import replace

from .._discover import SCOPE, DiscoveryPlan, Done, FetchRobots, LlmsReader, Tried
from .._errors import UsageError
from .._http import AddressGuard, FetchConfig, Fetcher
from .._llms import candidates
from .._local import STDIN_URL, LocalFiles, check_maps, is_file_url
from .._locale import base_prefix
from .._models import LlmsSummary
from .._text import plural
from .._urls import normalize_url, origin_of
from .._walk import as_walk_url, require_http_url
from .documents import DocumentRead, DocumentReader
from .rules import (
    LanguageTally,
    ScopeEstimate,
    Transport,
    children_notes,
    expected_duration,
    refine_range,
    refined_note,
    url_range,
)

# Records keep the name they had before the split: "sitescout._scope".
log = logging.getLogger(__package__)

# A pre-flight must answer in seconds: one retry, short backoff, `Retry-After` capped at 2 s, and
# 10 s per document. A caller's own `FetchConfig` replaces all of it.
SCOPE_FETCH = FetchConfig(timeout=10.0, retries=1, backoff=0.25, retry_after_cap=2.0)
# Offline, a document that is not on disk got no answer because none was asked for: that says
# nothing about the site, so the chain goes on to the next well-known path.
OFFLINE_SCOPE = replace(SCOPE, stop_when_unreachable=False)


class _Estimator:
    """One estimate: the §9 steps in order, every outcome written down as it happens.

    `url` is a site URL, or a `file://` URL whose file is the top document (then `sitemap` is
    None: the file stands for it). `offline`: no request at all.
    """

    def __init__(
        self,
        url: str,
        sitemap: str | None,
        sample: int,
        seed: int | None,
        llms_txt: str | None = None,
        *,
        offline: bool = False,
    ) -> None:
        self.url = url
        self.local_root = is_file_url(url)
        self.sitemap = url if self.local_root else sitemap
        self.llms_url = llms_txt
        self.llms_summary: LlmsSummary | None = None
        self.sample_size = sample
        self.offline = offline
        self.tally = LanguageTally()
        self.reader = DocumentReader(self.tally, random.Random(seed), offline=offline)
        self.notes: list[str] = []
        self.pushback: list[str] = []
        self.source = "none"
        self.source_url: str | None = None
        self.top_urls: list[str] = []  # the top sitemaps discovery named
        self.top: DocumentRead | None = None  # the first of them, once read
        self.unreachable = False
        self.range = (0, 0)
        self.sampled = 0

    async def run(self, fetcher: Fetcher) -> None:
        if self.offline and fetcher.local is None:
            self.notes.append(
                f"offline: nothing was read (no request is made, and no sitemap file or map "
                f"stands for {self.url})"
            )
            return
        await self._find_top(fetcher)
        if self.top is None and self.top_urls and not self.unreachable:
            self.top = await self.reader.read(fetcher, self.top_urls[0], pick=self.sample_size)
        self._judge_top()
        top = self.top
        if top is not None and top.kind == "sitemapindex" and top.picked:
            await self._sample_children(fetcher, top)
        if self.local_root:
            pass  # a file on disk is the top document: no site, so no llms.txt
        elif not self.unreachable and (self.source != "user" or self.llms_url is not None):
            await self._read_llms(fetcher)
        if self.reader.not_fetched:
            n = self.reader.not_fetched
            self.notes.append(f"offline: {plural(n, 'http(s) document')} not fetched")

    async def _read_llms(self, fetcher: Fetcher) -> None:
        """Whether the site publishes an llms.txt and how many page links it has (its aggregate
        files are counted, not read: the estimate stays a few requests)."""
        if self.offline and not any(
            fetcher.reads_locally(url) for url in candidates(self.url, self.llms_url)
        ):
            return  # offline, and no map covers where llms.txt would be
        llms_reader = LlmsReader(fetcher, self.url, self.llms_url, aggregates=False)
        links = await llms_reader.read()
        self.llms_summary = summary = llms_reader.summary
        if summary.url is None:
            return
        extra = f"; {len(summary.omitted)} aggregate files not read" if summary.omitted else ""
        self.notes.append(f"llms.txt {summary.url}: {len(links):,} page links{extra}")
        if (self.top is None or not self.top.is_sitemap) and links:
            self.source, self.source_url = "llms.txt", summary.url
            self.range = (len(links), len(links))

    # §9 step 1 (§2): a sitemap given directly, else robots.txt, else the well-known paths; the
    # first well-known path that is a sitemap is read once, as the top document.
    async def _find_top(self, fetcher: Fetcher) -> None:
        plan = DiscoveryPlan(
            self.url,
            self.sitemap,
            user_agent=fetcher.config.user_agent,
            rules=OFFLINE_SCOPE if self.offline else SCOPE,
        )
        step = plan.start()
        prefix = base_prefix(self.url)
        if not isinstance(step, Done) and prefix is not None:
            self.notes.append(f"the estimate covers the whole site, not only {prefix}")
        while True:
            # Written down after every step: a later step may raise (the SSRF guard).
            self.notes.extend(plan.new_notes())
            self.pushback = list(plan.pushback)
            self.unreachable = plan.unreachable
            self.source, self.source_url = plan.found.source, plan.found.source_url
            self.top_urls = list(plan.found.sitemaps)
            if isinstance(step, Done):
                return
            if isinstance(step, FetchRobots):
                step = plan.feed(await self.reader.robots(fetcher, step.url))
                continue
            read = await self.reader.read(fetcher, step.urls[0], pick=self.sample_size)
            if read.is_sitemap:
                self.top = read
            step = plan.feed(Tried(read.is_sitemap, read.answered, read.failure(), read.pushback))

    def _counted_children(self, top: DocumentRead) -> int:
        """The children a walk would read: offline, those on disk only."""
        return top.children - top.remote if self.offline else top.children

    # §9 steps 3 and 6 for the top document.
    def _judge_top(self) -> None:
        top = self.top
        if top is None:
            return
        if top.pushback is not None:
            self._pushed_back(f"the top sitemap answered {top.pushback}")
        if not top.is_sitemap:
            self.notes.append(f"top sitemap {top.url} failed: {top.failure()}")
            if not top.answered and not top.local:
                self.unreachable = True
            return
        self.range = url_range(top.kind, top.urls, self._counted_children(top))
        resp = top.response
        if resp.error is not None:
            self.notes.append(f"top sitemap read incomplete ({resp.error}); counts are a minimum")
        if resp.truncated:
            self.notes.append("top sitemap cut at the document size limit; counts are a minimum")
        if top.errors:
            self.notes.append(f"top sitemap is damaged XML ({top.errors[0]}); entries salvaged")
        if top.kind == "sitemapindex":
            self.notes.extend(
                children_notes(
                    top.children,
                    top.remote,
                    top.escaped,
                    offline=self.offline,
                    on_stdin=top.url == STDIN_URL,
                )
            )
        if top.alternates:
            self.notes.append(f"{top.alternates:,} hreflang alternate links (not counted)")

    async def _sample_children(self, fetcher: Fetcher, top: DocumentRead) -> None:
        """Beyond §9: read `sample_size` random children in full and re-derive the range."""
        picked = [u for u in top.picked if normalize_url(u) != normalize_url(top.url)]
        reads = await asyncio.gather(*(self.reader.read(fetcher, url) for url in picked))
        ranges = [r.range for r in reads if r.is_sitemap]
        failed = [r for r in reads if not r.is_sitemap]
        if failed:
            first = failed[0]
            more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            self.notes.append(f"sampled child {first.url} failed: {first.failure()}{more}")
        if not ranges:
            self.notes.append(
                f"none of the {len(picked)} sampled child sitemaps could be read; "
                "range from the formula"
            )
            return
        counted = self._counted_children(top)
        self.range = refine_range(counted, ranges)
        self.sampled = len(ranges)
        self.notes.append(refined_note(counted, ranges))

    def _pushed_back(self, reason: str) -> None:
        if reason not in self.pushback:
            self.pushback.append(reason)
            self.notes.append(f"{reason}: the site likely needs a real browser")

    def fail(self, message: str) -> None:
        self.unreachable = True
        self.notes.append(message)

    def transport(self) -> Transport:
        """§9 step 6: pushback wins; a top document read from disk is `local`; a sitemap read
        over the network means plain fetching works; no answer at all means discovery itself
        failed, and so does an offline estimate that read nothing."""
        if self.pushback:
            return "browser"
        top = self.top
        if top is not None and top.local:
            return "local"
        if top is not None and top.is_sitemap:
            return "fetch"
        if self.unreachable:
            return "unknown"
        if self.reader.network_reads:
            return "fetch"
        return "local" if self.reader.disk_reads else "unknown"

    def result(self) -> ScopeEstimate:
        top = self.top
        sitemap_read = top is not None and top.is_sitemap
        children = top.children if top is not None and top.kind == "sitemapindex" else 0
        # Only the children fetched over the network take walking time (none, offline).
        fetched = 0 if top is None or self.offline else min(children, top.remote)
        seconds, span = expected_duration(fetched, read=sitemap_read)
        root = self.url if self.local_root else normalize_url(origin_of(self.url) + "/")
        return ScopeEstimate(
            root_url=root,
            top_sitemap_urls=tuple(self.top_urls),
            source=self.source,
            url_estimate_range=self.range,
            sub_sitemap_count=children,
            languages_detected=self.tally.languages(),
            expected_duration_seconds=seconds,
            transport=self.transport(),
            notes=tuple(self.notes),
            source_url=self.source_url,
            expected_duration_range=span,
            top_kind=top.kind if top is not None and top.is_sitemap else None,
            sampled_children=self.sampled,
            llms_txt=self.llms_summary.url if self.llms_summary is not None else None,
            llms_links=self.llms_summary.links if self.llms_summary is not None else 0,
        )


def _check_arguments(
    url: object,
    sitemap: object,
    sample: object,
    llms_txt: object,
    maps: object,
    offline: object,
) -> tuple[str, str | None, tuple[tuple[str, str], ...]]:
    """The arguments checked: the site (or file) URL, the sitemap URL, the maps."""
    site = as_walk_url(url, "url")
    given = None if sitemap is None else as_walk_url(sitemap, "sitemap")
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
        raise UsageError(f"sample must be a whole number >= 0, got {sample!r}")
    if llms_txt is not None:
        require_http_url(llms_txt, "llms_txt")
    if not isinstance(offline, bool):
        raise UsageError(f"offline must be True or False, got {offline!r}")
    checked = check_maps(maps)
    if is_file_url(site):
        if given is not None:
            raise UsageError("url is a sitemap file: it is the top document, so no sitemap too")
        if llms_txt is not None:
            raise UsageError("url is a sitemap file: there is no site to read an llms.txt of")
    return site, given, checked


async def estimate_scope_async(
    url: str | os.PathLike[str],
    *,
    sitemap: str | os.PathLike[str] | None = None,
    config: FetchConfig | None = None,
    sample: int = 0,
    seed: int | None = None,
    ssrf_guard: bool = True,
    llms_txt: str | None = None,
    maps: Sequence[tuple[str, str | os.PathLike[str]]] = (),
    offline: bool = False,
) -> ScopeEstimate:
    """Estimate what walking `url` would take, in one or two requests.

    `url` is a site URL (discovery runs) or a sitemap URL (read directly, as is `sitemap`); or
    a sitemap you already have: a `file://` URL or a path (`os.PathLike`), read as the top
    document without discovery, robots.txt or llms.txt. `sitemap` may be a file too, for a site
    given by URL. `maps`: (URL prefix, folder) pairs; a document whose URL starts with a prefix
    is read from that folder. `offline`: no request at all; http(s) documents no map covers are
    skipped, and a note counts them.
    `config` defaults to `SCOPE_FETCH` (10 s per document, one retry); robots.txt gets at most
    8 s. `sample=N` also reads N random children of a top index to refine the range; `seed`
    makes that choice repeatable. Raises `UsageError` for a bad argument, never for network
    trouble or an unreadable file: what failed is in `notes`. The site's llms.txt is also looked
    for (`llms_txt` names one), up to three more small requests.
    """
    site, given, checked = _check_arguments(url, sitemap, sample, llms_txt, maps, offline)
    cfg = config or SCOPE_FETCH
    run = _Estimator(site, given, sample, seed, llms_txt, offline=offline)
    guard = AddressGuard(site) if ssrf_guard else None
    file_root = site if is_file_url(site) else given if is_file_url(given) else None
    local_files = LocalFiles(checked, root=file_root)
    try:
        async with Fetcher(
            cfg,
            guard=guard,
            origin=site,
            local=local_files if local_files else None,
            offline=offline,
        ) as fetcher:
            await run.run(fetcher)
    except OSError as exc:  # the SSRF guard resolves the root host before any request
        log.info("scope estimate of %s: %s", site, exc)
        run.fail(f"cannot reach {origin_of(site)}: {exc}")
    return run.result()


def estimate_scope(
    url: str | os.PathLike[str],
    *,
    sitemap: str | os.PathLike[str] | None = None,
    config: FetchConfig | None = None,
    sample: int = 0,
    seed: int | None = None,
    ssrf_guard: bool = True,
    llms_txt: str | None = None,
    maps: Sequence[tuple[str, str | os.PathLike[str]]] = (),
    offline: bool = False,
) -> ScopeEstimate:
    """Sync twin of `estimate_scope_async`, on a private event loop.

    This name used to be the coroutine function. For one release, a call from inside a running
    event loop (where `await estimate_scope(...)` used to be right) warns `DeprecationWarning`
    and returns the coroutine of `estimate_scope_async`, so that old callers keep working.
    """
    estimate = estimate_scope_async(
        url,
        sitemap=sitemap,
        config=config,
        sample=sample,
        seed=seed,
        ssrf_guard=ssrf_guard,
        llms_txt=llms_txt,
        maps=maps,
        offline=offline,
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(estimate)
    warnings.warn(
        "estimate_scope is synchronous now; inside an event loop use "
        "`await estimate_scope_async(...)`",
        DeprecationWarning,
        stacklevel=2,
    )
    # The old async contract, kept for one release: the caller awaits what it gets.
    return estimate  # type: ignore[return-value]
