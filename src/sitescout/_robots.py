"""Pure robots.txt reading (§2 step 2, §10): Sitemap lines, Crawl-delay and allow/deny rules.

protego does the rule matching; the `Sitemap:` lines are read here because the spec wants them
resolved against the robots.txt URL, de-duplicated and in order, whatever their casing. Lines are
split into directive and value by protego's own reader, so both see the same directives: the
nonstandard `Site-map:` and `Sitemaps:` spellings that Google's and protego's parsers accept are
read too, and recorded so that the summary can say so.

Hostile input: protego stores every rule of a group once per user agent the group names, so a
file naming thousands of agents above thousands of rules costs agents x rules. Only the rules for
our own agent are ever asked for, so before protego sees the text every agent line that cannot
name us is rewritten to one placeholder agent: groups keep their boundaries and our rules their
meaning, and each rule is stored a bounded number of times.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from protego import Protego
from protego._protego import _SITEMAP_DIRECTIVE, _USER_AGENT_DIRECTIVE, _extract_directive

from ._urls import normalize_url, resolve_url

log = logging.getLogger(__name__)

_STANDARD_SITEMAP = "sitemap"


@dataclass(slots=True)
class Robots:
    """What one robots.txt says, for one user agent."""

    url: str
    sitemaps: list[str] = field(default_factory=list)
    crawl_delay: float | None = None
    _rules: Protego | None = None
    user_agent: str = "*"
    # Nonstandard directive names that listed sitemaps, e.g. "Site-map", first use first.
    sitemap_spellings: list[str] = field(default_factory=list)

    def allowed(self, url: str) -> bool:
        if self._rules is None:
            return True
        return bool(self._rules.can_fetch(url, self.user_agent))


@dataclass(slots=True)
class _Reading:
    sitemaps: list[str] = field(default_factory=list)
    spellings: list[str] = field(default_factory=list)
    rules_text: str = ""


def _directive(raw: str) -> tuple[str, str] | None:
    """A line's (lowercased field, value), comments and blanks dropped the way protego does."""
    line = (raw.split("#", 1)[0] if "#" in raw else raw).strip()
    return _extract_directive(line) if line else None


def _agent_line(agent: str, token: str) -> str | None:
    """A `User-agent` line that means the same for `token` (lowercased), or None if it cannot
    apply to it.

    protego matches a value, and the value without its `*`s, as a part of the token, and keeps a
    rule set for each; one that cannot match is left out, so that the group's rules are stored
    only for the agents that could be us.
    """
    value = agent.lower()
    if value == "*" or value in token:
        return f"User-agent: {value}"
    bare = value.replace("*", "")
    return f"User-agent: {bare}" if bare and bare in token else None


def _read(text: str, robots_url: str, token: str) -> _Reading:
    reading = _Reading()
    seen: set[str] = set()
    placeholder = f"User-agent: {token}-not-us"  # longer than the token, so never a part of it
    lines: list[str] = []
    for raw in text.lstrip("\ufeff").splitlines():
        parsed = _directive(raw)
        if parsed is None:
            lines.append(raw)
            continue
        name, value = parsed
        if name in _USER_AGENT_DIRECTIVE and value:
            lines.append(_agent_line(value, token) or placeholder)
            continue
        lines.append(raw)
        if name not in _SITEMAP_DIRECTIVE or not value:
            continue
        url = resolve_url(value, robots_url)
        if url is None:
            log.debug("unusable Sitemap line in %s: %r", robots_url, raw)
            continue
        url = normalize_url(url)
        if url in seen:
            continue
        seen.add(url)
        reading.sitemaps.append(url)
        spelling = name.capitalize()
        if name != _STANDARD_SITEMAP and spelling not in reading.spellings:
            reading.spellings.append(spelling)
    reading.rules_text = "\n".join(lines)
    return reading


def sitemap_lines(text: str, robots_url: str) -> list[str]:
    """Every `Sitemap:` value, resolved against the robots.txt URL, in order, without repeats."""
    return _read(text, robots_url, "*").sitemaps


def parse_robots(text: str, robots_url: str, user_agent: str) -> Robots:
    """Read robots.txt text; never raises (bad lines are skipped, like protego does)."""
    token = user_agent.split("/", 1)[0].strip() or "*"
    reading = _read(text, robots_url, token.lower())
    try:
        rules = Protego.parse(reading.rules_text)
        delay = rules.crawl_delay(token)
    except Exception:  # protego is lenient, but a hostile file must not end a run
        log.warning("unparseable robots.txt at %s", robots_url, exc_info=True)
        rules, delay = None, None
    return Robots(
        url=robots_url,
        sitemaps=reading.sitemaps,
        crawl_delay=float(delay) if delay is not None else None,
        _rules=rules,
        user_agent=token,
        sitemap_spellings=reading.spellings,
    )
