"""SCORING.md applied to a page: its breakdown (`score_path`), its type, and the rank order.

The weights and patterns are `_rules`' (read, never restated here). Scoring choices the table
leaves open (SCORING.md is the source of truth, and `_rules.WEIGHTS` its copy as data; these only
settle what it does not say):
   * segments are compared lowercased and without a page extension (`/About.html` is `/about`);
   * a date-like archive matches at the end of the path (`/blog/2024/05/` as well as `/2024/05/`);
   * "`/vN` word" is a `vN` word of a segment (`/v2/`, `/pricing-v2`, `/docs/v1.2`);
   * `-old`, `-archive`, ... must end their word (`/golden-oldies` is not an old copy);
   * auth-walled uses §8's definition (`_rules.AUTH_PATH`, as `_urls` does): `/login` and
     `/log-in`, not `/accounting`, so a page is penalized exactly when it is flagged
     `requiresAuth`;
   * each rule counts once per URL; priority outside 0–1 is ignored, like the parser does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from .._pagetype import (
    LABELS,
    PageType,
    SiteShape,
    infer_page_type,
    is_date_archive,
    path_segments,
    segment_stem,
)
from .._rules import (
    AUTH_PATH,
    BARE_COPY_SEGMENTS,
    IA_KEYWORDS,
    OLD_COPY,
    PAGE_WORD,
    VERSION_WORD,
    WEIGHTS,
)
from .._since import lastmod_datetime
from .._urls import SlugRegistry, url_path
from .inputs import Candidate

Breakdown = tuple[tuple[str, float], ...]

# SCORING.md's rows, by the names the breakdowns and the crawl log use: points, and their text.
_POINTS: Final[dict[str, float]] = {name: float(weight.points) for name, weight in WEIGHTS.items()}
RULES: Final[dict[str, str]] = {name: weight.text for name, weight in WEIGHTS.items()}
CHECKLIST_POINTS: Final = _POINTS["page-type-checklist"]

_AUTH_PATH = re.compile(AUTH_PATH)
_VERSION_WORD = re.compile(VERSION_WORD)
_OLD_COPY = re.compile(OLD_COPY)


def score_path(
    path: str, priority: float | None = None, *, keywords: frozenset[str] = IA_KEYWORDS
) -> Breakdown:
    """The SCORING.md breakdown of one path, checklist points excluded: (rule, points) pairs.

    `/about` → `(("ia-pillar-keyword", 5), ("shallow-path", 2))`. Only rules that apply appear;
    a declared priority appears even when it is 0, so the breakdown shows the sitemap said so.
    """
    segments = path_segments(path)
    rules: list[tuple[str, float]] = []
    if not segments:
        rules.append(("home", _POINTS["home"]))
    elif segment_stem(segments[0]) in keywords:
        rules.append(("ia-pillar-keyword", _POINTS["ia-pillar-keyword"]))
    if priority is not None and 0.0 <= priority <= 1.0:
        rules.append(("sitemap-priority", round(_POINTS["sitemap-priority"] * priority, 6)))
    if len(segments) == 1:
        rules.append(("shallow-path", _POINTS["shallow-path"]))
    elif len(segments) > 1:
        rules.append(("extra-depth", _POINTS["extra-depth"] * (len(segments) - 1)))
    if is_date_archive(path):
        rules.append(("date-like-archive", _POINTS["date-like-archive"]))
    if _has_version_marker(segments):
        rules.append(("version-test-marker", _POINTS["version-test-marker"]))
    if _AUTH_PATH.search(path.lower()):  # §8's rule, so the penalty and the flag agree
        rules.append(("auth-walled", _POINTS["auth-walled"]))
    return tuple(rules)


def _has_version_marker(segments: Sequence[str]) -> bool:
    for index, segment in enumerate(segments):
        if _VERSION_WORD.search(segment) or _OLD_COPY.search(segment):
            return True
        # `/page/2/` is pagination, not a second copy.
        if segment in BARE_COPY_SEGMENTS and (index == 0 or segments[index - 1] != PAGE_WORD):
            return True
    return False


def _total(breakdown: Breakdown) -> float:
    return round(sum(points for _, points in breakdown), 6)


@dataclass(frozen=True, slots=True)
class Scored:
    """A candidate with its slug, type, score breakdown and (once selected) why it was kept/cut."""

    candidate: Candidate
    path: str
    slug: str
    page_type: PageType
    breakdown: Breakdown
    slot: PageType | None = None  # the checklist slot it filled, if kept for one
    reason: str = ""

    @property
    def url(self) -> str:
        return self.candidate.url

    @property
    def score(self) -> float:
        return _total(self.breakdown)

    @property
    def label(self) -> str:
        return LABELS[self.page_type]

    def to_dict(self) -> dict[str, object]:
        """The crawl log's `kept[]`/`cut[]` record (§12)."""
        return {
            "url": self.url,
            "slug": self.slug,
            "type": self.page_type,
            "priority": self.candidate.priority,
            "lastmod": self.candidate.lastmod,
            "score": plain_number(self.score),
            "reason": self.reason,
        }


def plain_number(value: float) -> float | int:
    """10.0 → 10 in JSON and text; 4.5 stays."""
    return int(value) if value == int(value) else value


def _lastmod_key(lastmod: str | None) -> float | None:
    """A sortable timestamp of a lastmod; None if unusable."""
    moment = lastmod_datetime(lastmod)
    if moment is None:
        return None
    try:
        return moment.timestamp()
    except (ValueError, OverflowError):
        return None


def rank_key(item: Scored) -> tuple[float, bool, float, str]:
    """Score high first, then newest lastmod (none last), then the URL alphabetically."""
    stamp = _lastmod_key(item.candidate.lastmod)
    return (-item.score, stamp is None, -(stamp or 0.0), item.url)


class Scorer:
    """Types and scores candidates against one site shape and keyword list."""

    def __init__(
        self, pages: Sequence[Candidate], keywords: frozenset[str], slugs: SlugRegistry
    ) -> None:
        links = (c.internal_links for c in pages if c.internal_links is not None)
        self._shape = SiteShape((url_path(c.url) for c in pages), links)
        self._keywords = keywords
        self._slugs = slugs
        for candidate in pages:  # collisions get -2, -3 in discovery order (§11)
            slugs.assign(candidate.url)

    def score(self, candidate: Candidate) -> Scored:
        path = url_path(candidate.url)
        page_type = infer_page_type(
            path,
            shape=self._shape,
            title=candidate.title,
            internal_links=candidate.internal_links,
            changefreq=candidate.changefreq,
            news=candidate.news,
            videos=candidate.videos,
        )
        breakdown = score_path(path, candidate.priority, keywords=self._keywords)
        return Scored(candidate, path, self._slugs.assign(candidate.url), page_type, breakdown)
