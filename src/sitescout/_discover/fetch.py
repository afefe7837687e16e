"""The fetches the plan's callers share: robots.txt (`fetch_robots`, `read_robots`) and a
well-known path sniffed for a sitemap (`probe`).
"""

from __future__ import annotations

import logging

from .._http import FetchConfig, Fetcher, Response
from .._parse import SitemapParser
from .._robots import Robots
from .plan import CRAWL, DiscoveryPlan, FetchRobots, RobotsAnswer

# Records keep the name they had before the split: "sitescout._discover".
log = logging.getLogger(__package__)

ROBOTS_TIMEOUT = 8.0
ROBOTS_MAX_BYTES = 512 * 1024


def robots_time_limit(config: FetchConfig) -> float:
    """robots.txt gets at most `ROBOTS_TIMEOUT`, and never longer than any other document."""
    return min(ROBOTS_TIMEOUT, config.timeout)


def why(resp: Response) -> str:
    """What went wrong with a response, in a few words: the fetch error, else the status."""
    if resp.error is not None:
        return str(resp.error)
    return f"HTTP {resp.status}"


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


async def fetch_robots(fetcher: Fetcher, url: str) -> tuple[RobotsAnswer, Response]:
    """Fetch robots.txt at `url` (at most `ROBOTS_MAX_BYTES`, see `robots_time_limit`)."""
    sink = _TextSink(ROBOTS_MAX_BYTES)
    limit = robots_time_limit(fetcher.config)
    resp = await fetcher.fetch(url, lambda _r: sink, time_limit=limit)
    if not resp.ok:
        log.info("robots.txt unavailable at %s: %s", url, resp.error or resp.status)
        answer = RobotsAnswer(
            resp.status, resp.final_url, why=why(resp), unreachable=resp.unreachable
        )
        return answer, resp
    return RobotsAnswer(resp.status, resp.final_url, text=sink.text()), resp


async def read_robots(fetcher: Fetcher, site_url: str) -> tuple[Robots | None, Response]:
    """Fetch `<origin>/robots.txt` (see `robots_time_limit`); None when missing or failing."""
    plan = DiscoveryPlan(site_url, user_agent=fetcher.config.user_agent, rules=CRAWL)
    step = plan.start()
    assert isinstance(step, FetchRobots)
    answer, resp = await fetch_robots(fetcher, step.url)
    plan.feed(answer)
    return plan.found.robots, resp


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
    resp, sink = await fetcher.fetch_into(url, lambda r: _SniffSink(r.final_url))
    if sink is None:
        return False, resp
    parser = sink.parser
    if parser.kind is None:
        parser.close()
    return parser.is_sitemap, resp
