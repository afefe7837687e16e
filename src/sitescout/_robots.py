"""Pure robots.txt reading (§2 step 2, §10): Sitemap lines, Crawl-delay and allow/deny rules.

protego does the rule matching; the `Sitemap:` lines are read here because the spec wants them
resolved against the robots.txt URL, de-duplicated and in order, whatever their casing.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from protego import Protego

from ._urls import normalize_url, resolve_url

log = logging.getLogger(__name__)

_SITEMAP_LINE = re.compile(r"^\s*sitemap\s*:\s*(\S.*?)\s*$", re.I)


@dataclass(slots=True)
class Robots:
    """What one robots.txt says, for one user agent."""

    url: str
    sitemaps: list[str] = field(default_factory=list)
    crawl_delay: float | None = None
    _rules: Protego | None = None
    user_agent: str = "*"

    def allowed(self, url: str) -> bool:
        if self._rules is None:
            return True
        return bool(self._rules.can_fetch(url, self.user_agent))


def sitemap_lines(text: str, robots_url: str) -> list[str]:
    """Every `Sitemap:` value, resolved against the robots.txt URL, in order, without repeats."""
    seen: set[str] = set()
    out: list[str] = []
    for line in text.lstrip("\ufeff").splitlines():
        m = _SITEMAP_LINE.match(line.split("#", 1)[0] if "#" in line else line)
        if m is None:
            continue
        url = resolve_url(m.group(1), robots_url)
        if url is None:
            log.debug("unusable Sitemap line in %s: %r", robots_url, line)
            continue
        url = normalize_url(url)
        if url not in seen:
            seen.add(url)
            out.append(url)
    return out


def parse_robots(text: str, robots_url: str, user_agent: str) -> Robots:
    """Read robots.txt text; never raises (bad lines are skipped, like protego does)."""
    token = user_agent.split("/", 1)[0].strip() or "*"
    try:
        rules = Protego.parse(text)
        delay = rules.crawl_delay(token)
    except Exception:  # protego is lenient, but a hostile file must not end a run
        log.warning("unparseable robots.txt at %s", robots_url, exc_info=True)
        rules, delay = None, None
    return Robots(
        url=robots_url,
        sitemaps=sitemap_lines(text, robots_url),
        crawl_delay=float(delay) if delay is not None else None,
        _rules=rules,
        user_agent=token,
    )
