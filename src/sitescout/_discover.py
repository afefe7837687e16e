"""The discovery chain (§2): user sitemap → robots.txt → well-known paths → (crawl fallback)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ._http import FetchConfig, Fetcher, Response
from ._llms import (
    MAX_AGGREGATES,
    MAX_LINKS,
    MAX_LLMS_BYTES,
    LlmsLink,
    candidates,
    judge_link,
    markdown_links,
    rejection,
)
from ._models import LlmsSummary
from ._parse import SitemapParser
from ._robots import Robots, parse_robots
from ._urls import normalize_url, site_key

log = logging.getLogger(__name__)

ROBOTS_TIMEOUT = 8.0
ROBOTS_MAX_BYTES = 512 * 1024
WELL_KNOWN: tuple[tuple[str, str], ...] = (
    ("sitemap.xml", "/sitemap.xml"),
    ("sitemap_index.xml", "/sitemap_index.xml"),
    ("sitemap-index.xml", "/sitemap-index.xml"),
)
_SITEMAP_SUFFIXES = (".xml", ".xml.gz", ".gz", ".rss", ".atom")


@dataclass(slots=True)
class Discovery:
    """Where the walk starts.

    `sitemaps` are definite roots (from the user or robots.txt); `candidates` are the well-known
    paths to try in order, the first that really is a sitemap winning.
    """

    site_url: str
    source: str = "none"
    source_url: str | None = None
    sitemaps: list[str] = field(default_factory=list)
    candidates: list[tuple[str, str]] = field(default_factory=list)
    robots: Robots | None = None
    robots_status: int | None = None
    notes: list[str] = field(default_factory=list)


def robots_time_limit(config: FetchConfig) -> float:
    """robots.txt gets at most `ROBOTS_TIMEOUT`, and never longer than any other document."""
    return min(ROBOTS_TIMEOUT, config.timeout)


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def looks_like_sitemap_url(url: str) -> bool:
    """A URL the user gave that names a sitemap document rather than a site (§2 step 1)."""
    path = urlsplit(url).path.lower()
    last = path.rsplit("/", 1)[-1]
    return last.endswith(_SITEMAP_SUFFIXES) or "sitemap" in last


class _TextSink:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[bytes] = []
        self.size = 0

    def feed(self, data: bytes) -> None:
        if self.size < self.limit:
            self.parts.append(data[: self.limit - self.size])
            self.size += len(self.parts[-1])

    async def drain(self) -> bool:
        return True

    def text(self) -> str:
        return b"".join(self.parts).decode("utf-8", "replace")


async def read_robots(fetcher: Fetcher, site_url: str) -> tuple[Robots | None, Response]:
    """Fetch `<origin>/robots.txt` (see `robots_time_limit`); None when missing or failing."""
    robots_url = origin_of(site_url) + "/robots.txt"
    sink = _TextSink(ROBOTS_MAX_BYTES)
    limit = robots_time_limit(fetcher.config)
    resp = await fetcher.fetch(robots_url, lambda _r: sink, time_limit=limit)
    if not resp.ok:
        log.info("robots.txt unavailable at %s: %s", robots_url, resp.error or resp.status)
        return None, resp
    robots = parse_robots(sink.text(), resp.final_url, fetcher.config.user_agent)
    return robots, resp


async def discover(fetcher: Fetcher, site_url: str, sitemap: str | None = None) -> Discovery:
    """Run §2 up to (not including) fetching sitemaps: the walker fetches and judges them."""
    found = Discovery(site_url=site_url)
    direct = sitemap or (site_url if looks_like_sitemap_url(site_url) else None)
    if direct is not None:
        found.source, found.source_url = "user", direct
        found.sitemaps = [normalize_url(direct)]
        return found
    robots, resp = await read_robots(fetcher, site_url)
    found.robots, found.robots_status = robots, resp.status
    if robots is not None and robots.sitemaps:
        found.source, found.source_url = "robots.txt", resp.final_url
        found.sitemaps = list(robots.sitemaps)
        found.notes.extend(spelling_notes(robots))
    elif robots is None:
        found.notes.append(f"robots.txt unavailable ({_why(resp)}); trying well-known paths")
    else:
        found.notes.append("robots.txt lists no sitemap; trying well-known paths")
    origin = origin_of(site_url)
    found.candidates = [(name, origin + path) for name, path in WELL_KNOWN]
    return found


def spelling_notes(robots: Robots) -> list[str]:
    """What to tell the user when sitemaps were listed under a nonstandard directive name."""
    return [
        f'robots.txt also lists sitemaps under the nonstandard "{spelling}:" spelling'
        for spelling in robots.sitemap_spellings
    ]


def _why(resp: Response) -> str:
    if resp.error is not None:
        return str(resp.error)
    return f"HTTP {resp.status}"


class _SniffSink:
    """Reads just enough of a body to know whether it is a sitemap."""

    def __init__(self, url: str) -> None:
        self.parser = SitemapParser(url)

    def feed(self, data: bytes) -> None:
        if self.parser.kind is None:
            self.parser.feed(data)

    async def drain(self) -> bool:
        return self.parser.kind is None


async def probe(fetcher: Fetcher, url: str) -> tuple[bool, Response]:
    """True when `url` answers with a sitemap (reads only its first kilobytes)."""
    sinks: list[_SniffSink] = []

    def factory(r: Response) -> _SniffSink:
        sinks.append(_SniffSink(r.final_url))
        return sinks[-1]

    resp = await fetcher.fetch(url, factory)
    if not sinks:
        return False, resp
    parser = sinks[-1].parser
    if parser.kind is None:
        parser.close()
    return parser.is_sitemap, resp


# -- llms.txt -------------------------------------------------------------------------------------


class _LlmsSink:
    """Keeps an llms file's bytes up to `MAX_LLMS_BYTES`, then stops the read (`cut`)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0
        self.cut = False

    def feed(self, data: bytes) -> None:
        room = MAX_LLMS_BYTES - self.size
        if len(data) > room:
            self.cut = True
            data = data[:room]
        if data:
            self.parts.append(data)
            self.size += len(data)

    async def drain(self) -> bool:
        return not self.cut

    def body(self) -> bytes:
        return b"".join(self.parts)


MAX_OMITTED_KEPT = 1000

# Asked before each fetch: False means a budget forbids it (the reader stops).
LlmsGate = Callable[[], bool]
# Told after each fetch: the URL asked for, its depth (1: llms.txt, 2: an aggregate), the
# response, and why it was refused (None: used).
LlmsObserver = Callable[[str, int, Response, str | None], None]


class LlmsReader:
    """Finds a site's llms.txt and collects its page links, aggregates one level deep.

    The fetches go through the walk's `Fetcher` (SSRF guard, timeouts, redirects); `gate`,
    `time_limit` and `observe` let the walk count them against its budgets. The links are held
    (at most `MAX_LINKS`, de-duplicated, in file order): an llms.txt is a bounded index, and the
    walk needs them whole to tell which sitemap URLs it also lists.
    """

    def __init__(
        self,
        fetcher: Fetcher,
        site_url: str,
        explicit: str | None = None,
        *,
        aggregates: bool = True,
        gate: LlmsGate | None = None,
        time_limit: Callable[[], float] | None = None,
        observe: LlmsObserver | None = None,
    ) -> None:
        self.fetcher = fetcher
        self.site_url = site_url
        self.explicit = explicit
        self.follow_aggregates = aggregates
        self.gate = gate or (lambda: True)
        self.time_limit = time_limit
        self.observe = observe
        self.summary = LlmsSummary()
        self.links: dict[str, LlmsLink] = {}
        self.stopped = False  # a budget ended the reading
        self._site = site_key(site_url)
        self._read: set[str] = set()
        self._omitted: set[str] = set()

    async def read(self) -> list[LlmsLink]:
        """The page links, in order; `summary` says what was found and what was not used."""
        for url in candidates(self.site_url, self.explicit):
            text = await self._fetch(url, 1)
            if text is not None:
                self.summary.url = url
                aggregates = self._collect(text, url, 1, deeper=self.follow_aggregates)
                break
            if self.stopped:
                return []
        else:
            return []
        for url in aggregates:
            if len(self.summary.aggregates) >= MAX_AGGREGATES or self.stopped:
                self._omit(url)
                continue
            text = await self._fetch(url, 2)
            if text is not None:
                self.summary.aggregates.append(url)
                self._collect(text, url, 2, deeper=False)
        return list(self.links.values())

    async def _fetch(self, url: str, depth: int) -> str | None:
        if self.stopped or not self.gate():
            self.stopped = True
            return None
        self._read.add(url)
        sinks: list[_LlmsSink] = []

        def sink_for(_resp: Response) -> _LlmsSink:
            sinks.append(_LlmsSink())
            return sinks[-1]

        limit = self.time_limit() if self.time_limit is not None else None
        resp = await self.fetcher.fetch(url, sink_for, time_limit=limit)
        body = sinks[-1].body() if sinks else b""
        why = self._refusal(resp, body)
        if why is None and sinks[-1].cut:
            self.summary.cut.append(resp.final_url)
            log.warning("%s: cut at the %d-byte llms.txt limit", resp.final_url, MAX_LLMS_BYTES)
        if why is not None:
            self.summary.rejected.append((url, why))
            log.info("llms.txt %s not used: %s", url, why)
        if self.observe is not None:
            self.observe(url, depth, resp, why)
        return None if why is not None else body.decode("utf-8", "replace")

    def _refusal(self, resp: Response, body: bytes) -> str | None:
        if resp.error is not None:
            return str(resp.error)
        if not resp.ok:
            return f"HTTP {resp.status}"
        if site_key(resp.final_url) != self._site:
            return f"redirected to another site ({resp.final_url})"
        return rejection(resp.content_type, body[:512], len(body))

    def _collect(self, text: str, file_url: str, depth: int, *, deeper: bool) -> list[str]:
        """Keep the page links of one file; return the aggregate files it names (if `deeper`)."""
        summary = self.summary
        aggregates: dict[str, None] = {}  # ordered, with O(1) membership
        judged: set[str] = set()
        for title, raw in markdown_links(text):
            if raw in judged:
                continue  # the same link again: nothing new to learn from it
            if len(self.links) >= MAX_LINKS:
                # Judging costs far more than scanning: a file of a million tiny links stops here.
                summary.dropped["over the link limit"] = (
                    summary.dropped.get("over the link limit", 0) + 1
                )
                continue
            judged.add(raw)
            verdict = judge_link(raw, file_url)
            if verdict.kind == "dropped":
                summary.dropped[verdict.reason] = summary.dropped.get(verdict.reason, 0) + 1
                continue
            assert verdict.url is not None
            if verdict.kind == "aggregate":
                if verdict.url in self._read or verdict.url in aggregates:
                    continue
                if deeper:
                    aggregates[verdict.url] = None
                else:
                    self._omit(verdict.url)
                continue
            if verdict.url in self.links:
                continue
            self.links[verdict.url] = LlmsLink(
                verdict.url, title or None, verdict.md_url, file_url, depth
            )
            summary.links += 1
            summary.md_links += verdict.md_url is not None
        return list(aggregates)

    def _omit(self, url: str) -> None:
        if url in self._omitted:
            return
        self._omitted.add(url)
        if len(self.summary.omitted) < MAX_OMITTED_KEPT:
            self.summary.omitted.append(url)
        else:
            self.summary.dropped["omitted, not listed"] = (
                self.summary.dropped.get("omitted, not listed", 0) + 1
            )
