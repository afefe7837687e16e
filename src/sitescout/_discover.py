"""The discovery chain (§2): user sitemap → robots.txt → well-known paths → (crawl fallback)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ._http import Fetcher, Response
from ._parse import SitemapParser
from ._robots import Robots, parse_robots
from ._urls import normalize_url

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
    paths to try in order, the first that really is a sitemap winning (§2 step 3).
    """

    site_url: str
    source: str = "none"
    source_url: str | None = None
    sitemaps: list[str] = field(default_factory=list)
    candidates: list[tuple[str, str]] = field(default_factory=list)
    robots: Robots | None = None
    robots_status: int | None = None
    notes: list[str] = field(default_factory=list)


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
    """Fetch `<origin>/robots.txt` (8 s); None when missing, failing or not text."""
    robots_url = origin_of(site_url) + "/robots.txt"
    sink = _TextSink(ROBOTS_MAX_BYTES)
    resp = await fetcher.fetch(robots_url, lambda _r: sink, time_limit=ROBOTS_TIMEOUT)
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
    elif robots is None:
        found.notes.append(f"robots.txt unavailable ({_why(resp)}); trying well-known paths")
    else:
        found.notes.append("robots.txt lists no sitemap; trying well-known paths")
    origin = origin_of(site_url)
    found.candidates = [(name, origin + path) for name, path in WELL_KNOWN]
    return found


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
