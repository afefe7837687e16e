"""Page selection for the sampler: §8 filtering, SCORING.md scores, the §11 checklist and cap.

Pure: no I/O. `select_pages` takes the walk's page URLs (normalized §6, scoped to the base path and
default locale §7) as `Candidate`s and returns a `Selection`; `Selection.to_dict` is the
`--json`/crawl-log form, and `questions` tells the caller when §11 wants the user asked (as data:
the CLI words the questions and prints the §11 block, `cli/_selection`). Memory is the sampler's
candidate list (≤ 10,000 URLs by its preset).

Pipeline of `select_pages`:

1. De-duplicate by URL (the first record wins) and run `_urls.classify` (§8): non-pages are
   dropped with their reason, auth-walled paths are flagged (`requires_auth`) and stay out of the
   pool unless `include_auth` or the user names them.
2. `_junk.junk_filter` over the whole set (its conditional rows need it); `--pages`/`--single`
   names are protected from it.
3. Every remaining page gets a slug (`SlugRegistry`, discovery order), a type (`_pagetype`) and its
   SCORING.md breakdown.
4. The scope decides `kept` and `cut`:
   * cap N (default 5) and `--all`: the checklist first, home always, one page per slot before any
     slot gets a second (only the IA-pillar slot has seconds: one pillar per top-level section),
     then the score fills what is left of the cap. Pages are ranked by score, newest `lastmod`,
     URL. A kept page that fills a slot gets the +8 checklist points; a cut one does not, since it
     filled nothing (its breakdown shows why it lost).
   * `--pages`: the named pages (slug, path or URL) in the order named; names matching nothing are
     reported in `unmatched`, not guessed.
   * `--single`: the given URL (the site URL when none): the matching candidate, or a new one when
     the sitemap did not list it, since the user named it.

Scoring choices the table leaves open (SCORING.md is the source of truth, and `_rules.WEIGHTS`
its copy as data; these only settle what it does not say):
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Final, Literal

from ._errors import UsageError
from ._junk import junk_filter
from ._models import Entry
from ._pagetype import (
    CHECKLIST,
    LABELS,
    PageType,
    SiteShape,
    infer_page_type,
    is_date_archive,
    path_segments,
    segment_stem,
)
from ._rules import (
    AUTH_PATH,
    BARE_COPY_SEGMENTS,
    IA_KEYWORDS,
    OLD_COPY,
    PAGE_WORD,
    VERSION_WORD,
    WEIGHTS,
)
from ._urls import SlugRegistry, classify, normalize_url, url_path

__all__ = [
    "CHECKLIST_POINTS",
    "DEFAULT_CAP",
    "RULES",
    "Breakdown",
    "Candidate",
    "CapSource",
    "FewTemplates",
    "LargeRun",
    "Mode",
    "PagesWanted",
    "Question",
    "Scored",
    "Selection",
    "lastmod_datetime",
    "questions",
    "score_path",
    "select_pages",
]

Mode = Literal["cap", "all", "pages", "single"]
CapSource = Literal["default", "--cap", "--all", "--single", "--pages", "prompt-intent"]
Breakdown = tuple[tuple[str, float], ...]

DEFAULT_CAP: Final = 5
LARGE_RUN: Final = 100  # §11: `--all` above this many pages asks first
MIN_TEMPLATES: Final = 3  # §11: fewer distinct templates than this asks first
SECONDS_PER_PAGE: Final = 2.0  # §11's example: 247 pages, ~8 minutes

# SCORING.md's rows, by the names the breakdowns and the crawl log use: points, and their text.
_POINTS: Final[dict[str, float]] = {name: float(weight.points) for name, weight in WEIGHTS.items()}
RULES: Final[dict[str, str]] = {name: weight.text for name, weight in WEIGHTS.items()}
CHECKLIST_POINTS: Final = _POINTS["page-type-checklist"]

_AUTH_PATH = re.compile(AUTH_PATH)
_VERSION_WORD = re.compile(VERSION_WORD)
_OLD_COPY = re.compile(OLD_COPY)
_YEAR_ONLY = re.compile(r"[0-9]{4}")
_YEAR_MONTH = re.compile(r"[0-9]{4}-[0-9]{2}")


# --------------------------------------------------------------------------- candidates


@dataclass(frozen=True, slots=True)
class Candidate:
    """One page URL offered for selection, with what the sitemap (and a crawl) said about it."""

    url: str
    lastmod: str | None = None
    priority: float | None = None
    changefreq: str | None = None
    sitemap: str | None = None  # the sitemap document it came from
    sitemap_depth: int | None = None  # that document's level, root = 1
    news: bool = False  # a Google News entry: an article
    videos: int = 0
    title: str | None = None  # crawl hints (§10), None when not crawled
    internal_links: int | None = None
    external_links: int | None = None

    @classmethod
    def from_entry(cls, entry: Entry, *, url: str | None = None) -> Candidate:
        """The candidate of a sitemap entry; `url` replaces the entry's (e.g. its `UrlSet` form)."""
        return cls(
            url=entry.url if url is None else url,
            lastmod=entry.lastmod,
            priority=entry.priority,
            changefreq=entry.changefreq,
            sitemap=entry.sitemap or None,
            sitemap_depth=entry.depth if entry.source == "sitemap" else None,
            news=entry.news is not None,
            videos=len(entry.videos),
            title=entry.title,
        )


# --------------------------------------------------------------------------- scoring


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
            "score": _number(self.score),
            "reason": self.reason,
        }


def _number(value: float) -> float | int:
    """10.0 → 10 in JSON and text; 4.5 stays."""
    return int(value) if value == int(value) else value


def lastmod_datetime(lastmod: str | None) -> datetime | None:
    """The instant a §4 ISO 8601 lastmod names (`2024`, `2024-05` too); None if unusable.

    A year or a month is its first day; a date or time without a zone is read as UTC. The one
    reading of a lastmod: the sampler sorts by it, the DataFrames' `lastmod` column holds it.
    """
    if not lastmod:
        return None
    value = lastmod.strip()
    if _YEAR_ONLY.fullmatch(value):
        value += "-01-01"
    elif _YEAR_MONTH.fullmatch(value):
        value += "-01"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # a date without a zone: read as UTC
    return moment


def _lastmod_key(lastmod: str | None) -> float | None:
    """A sortable timestamp of a lastmod; None if unusable."""
    moment = lastmod_datetime(lastmod)
    if moment is None:
        return None
    try:
        return moment.timestamp()
    except (ValueError, OverflowError):
        return None


def _rank_key(item: Scored) -> tuple[float, bool, float, str]:
    """Score high first, then newest lastmod (none last), then the URL alphabetically."""
    stamp = _lastmod_key(item.candidate.lastmod)
    return (-item.score, stamp is None, -(stamp or 0.0), item.url)


class _Scorer:
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


# --------------------------------------------------------------------------- pages wanted


@dataclass(frozen=True, slots=True)
class PagesWanted:
    """How many pages to keep: the scope flags (--cap, --all, --pages, --single) as one value.

    `cap` is used by mode "cap" only; `pages` by "pages"; `url` by "single" (None: the site URL).
    `source` is what the crawl log records as `capSource`.
    """

    mode: Mode = "cap"
    cap: int = DEFAULT_CAP
    pages: tuple[str, ...] = ()
    url: str | None = None
    source: CapSource = "default"

    def __post_init__(self) -> None:
        if self.mode == "cap" and self.cap < 1:
            raise UsageError(f"--cap must be at least 1, not {self.cap}")
        if self.mode == "pages" and not self.pages:
            raise UsageError("--pages needs at least one slug or path")

    @classmethod
    def from_flags(
        cls,
        *,
        cap: int | None = None,
        all_pages: bool = False,
        pages: str | Sequence[str] | None = None,
        single: bool = False,
        url: str | None = None,
    ) -> PagesWanted:
        """The scope the CLI flags ask for; more than one scope flag is a usage error."""
        given = [
            name
            for name, on in (
                ("--cap", cap is not None),
                ("--all", all_pages),
                ("--pages", pages is not None),
                ("--single", single),
            )
            if on
        ]
        if len(given) > 1:
            raise UsageError(
                f"use only one of --cap, --all, --pages and --single (got {' and '.join(given)})"
            )
        if cap is not None:
            return cls(mode="cap", cap=cap, source="--cap")
        if all_pages:
            return cls(mode="all", source="--all")
        if pages is not None:
            parts = pages.split(",") if isinstance(pages, str) else pages
            names = tuple(part.strip() for part in parts if part.strip())
            return cls(mode="pages", pages=names, source="--pages")
        if single:
            return cls(mode="single", url=url, source="--single")
        return cls()


# --------------------------------------------------------------------------- selection


@dataclass(frozen=True, slots=True)
class Selection:
    """The outcome of `select_pages`: every discovered page ends in exactly one list.

    `kept` is in selection order (checklist slots, then score), `cut` in rank order,
    `requires_auth` holds flagged pages not kept, `junk` (url, JUNK.md pattern) and `filtered`
    (url, §8 reason) the removed ones. `discovered` counts pages: kept + cut + requires_auth +
    junk (the `filtered` non-pages are not pages; a `--single` URL the sitemap lacked is kept
    on top). `templates` are the distinct page types among the pages that could be kept.
    """

    mode: Mode
    cap: int | None
    cap_source: CapSource
    kept: tuple[Scored, ...]
    cut: tuple[Scored, ...]
    requires_auth: tuple[Scored, ...] = ()
    junk: tuple[tuple[str, str], ...] = ()
    filtered: tuple[tuple[str, str], ...] = ()
    templates: tuple[PageType, ...] = ()
    unmatched: tuple[str, ...] = ()
    discovered: int = 0

    @property
    def capped_at(self) -> int | None:
        """How many pages were kept when the cap cut any, else None (§12 `cappedAt`)."""
        return len(self.kept) if self.mode == "cap" and self.cut else None

    def to_dict(self) -> dict[str, object]:
        """The `--json` summary, and the selection part of the crawl log's `discovery` (§12)."""
        return {
            "discoveredCount": self.discovered,
            "filteredCount": len(self.filtered) + len(self.junk),
            "filtered": [{"url": url, "reason": reason} for url, reason in self.filtered],
            "filteredAsJunk": [{"url": url, "pattern": pattern} for url, pattern in self.junk],
            "requiresAuth": [item.url for item in self.requires_auth],
            "mode": self.mode,
            "cap": self.cap,
            "capSource": self.cap_source,
            "cappedAt": self.capped_at,
            "templates": list(self.templates),
            "kept": [item.to_dict() for item in self.kept],
            "cut": [item.to_dict() for item in self.cut],
            "unmatched": list(self.unmatched),
            "scores": self.scores_dict(),
        }

    def scores_dict(self) -> dict[str, object]:
        """The crawl log's `scores`: the rule names, and each scored URL's breakdown.

        Junk and §8-filtered URLs are not scored: they carry their pattern/reason instead.
        """
        scored = (*self.kept, *self.cut, *self.requires_auth)
        return {
            "rules": dict(RULES),
            "urls": {
                item.url: {rule: _number(points) for rule, points in item.breakdown}
                for item in scored
            },
        }


def select_pages(
    candidates: Iterable[Candidate],
    scope: PagesWanted | None = None,
    *,
    site: str,
    filter_junk: bool = True,
    include_auth: bool = False,
    keywords: Iterable[str] = (),
    slugs: SlugRegistry | None = None,
) -> Selection:
    """Filter, type, score and select the pages of `site` (see the module docstring).

    `site` is the site URL (or host) the candidates belong to; `keywords` extends SCORING.md's
    IA-pillar list; `slugs` lets a re-run keep the slugs of an earlier one.
    """
    scope = scope or PagesWanted()
    words = IA_KEYWORDS | {word.strip().lower() for word in keywords if word.strip()}
    pages, filtered, flagged = _classify_all(candidates, site)
    named = scope.pages if scope.mode == "pages" else ()
    if scope.mode == "single":
        named = (scope.url or site,)
    cleaned = junk_filter([c.url for c in pages], pages=named, enabled=filter_junk)
    junk_urls = {url for url, _ in cleaned.junk}
    live = [c for c in pages if c.url not in junk_urls]
    scorer = _Scorer(live, frozenset(words), slugs if slugs is not None else SlugRegistry())
    scored = [scorer.score(c) for c in live]
    pool = [item for item in scored if include_auth or item.url not in flagged]
    unmatched: tuple[str, ...] = ()
    if scope.mode in ("cap", "all"):
        kept, cut = _by_rank(pool, scope)
    elif scope.mode == "pages":
        kept, unmatched = _by_name(scored, scope.pages)
        cut = _rest(pool, kept, "not named with --pages")
    else:
        kept = (_single(scored, scope.url or site, scorer),)
        cut = _rest(pool, kept, "--single keeps one page")
    kept_urls = {item.url for item in kept}
    return Selection(
        mode=scope.mode,
        cap=_cap_of(scope, kept),
        cap_source=scope.source,
        kept=kept,
        cut=cut,
        requires_auth=tuple(s for s in scored if s.url in flagged and s.url not in kept_urls),
        junk=tuple(cleaned.junk),
        filtered=tuple(filtered),
        templates=_templates(pool),
        unmatched=unmatched,
        discovered=len(pages),
    )


def _classify_all(
    candidates: Iterable[Candidate], site: str
) -> tuple[list[Candidate], list[tuple[str, str]], set[str]]:
    """§8 over de-duplicated candidates: (pages, dropped with reason, auth-flagged URLs)."""
    seen: set[str] = set()
    pages: list[Candidate] = []
    dropped: list[tuple[str, str]] = []
    flagged: set[str] = set()
    for candidate in candidates:
        if candidate.url in seen:
            continue
        seen.add(candidate.url)
        verdict = classify(candidate.url, site)
        if verdict.decision == "drop":
            dropped.append((candidate.url, verdict.reason))
            continue
        if verdict.decision == "flag":
            flagged.add(candidate.url)
        pages.append(candidate)
    return pages, dropped, flagged


def _by_rank(
    pool: Sequence[Scored], scope: PagesWanted
) -> tuple[tuple[Scored, ...], tuple[Scored, ...]]:
    """Checklist slots first, then score, up to the cap (everything with `--all`)."""
    ranked = sorted(pool, key=_rank_key)
    limit = scope.cap if scope.mode == "cap" else len(ranked)
    fillers = _checklist(ranked)[:limit]
    kept = [
        replace(
            item,
            breakdown=(*item.breakdown, ("page-type-checklist", CHECKLIST_POINTS)),
            slot=item.page_type,
            reason=f"checklist: {item.label}",
        )
        for item in fillers
    ]
    taken = {item.url for item in fillers}
    rest = [item for item in ranked if item.url not in taken]
    by_score = "score" if scope.mode == "cap" else "--all"
    kept += [replace(item, reason=by_score) for item in rest[: limit - len(kept)]]
    cut = [replace(item, reason=f"cap {limit} reached") for item in rest[limit - len(fillers) :]]
    return tuple(kept), tuple(cut)


def _checklist(ranked: Sequence[Scored]) -> list[Scored]:
    """Slot fillers in the order they get in: a first round of one page per slot, in §11's order,
    then the other top-level sections' pillars (the only slot with seconds)."""
    best: dict[PageType, Scored] = {}
    pillars: list[Scored] = []
    sections: set[str] = set()
    for item in ranked:
        if item.page_type == "pillar":
            section = path_segments(item.path)[0]
            if section not in sections:
                sections.add(section)
                pillars.append(item)
        elif item.page_type != "page" and item.page_type not in best:
            best[item.page_type] = item
    first_round = [
        pillars[0] if kind == "pillar" and pillars else best.get(kind) for kind in CHECKLIST
    ]
    return [item for item in first_round if item is not None] + pillars[1:]


def _by_name(
    scored: Sequence[Scored], names: Sequence[str]
) -> tuple[tuple[Scored, ...], tuple[str, ...]]:
    """The pages named with `--pages`, in the order named; names that match nothing."""
    by_slug = {item.slug: item for item in reversed(scored)}
    by_path: dict[str, Scored] = {}
    for item in scored:
        by_path.setdefault(_lookup_key(item.path), item)
    kept: dict[str, Scored] = {}
    unmatched: list[str] = []
    for name in names:
        found = _lookup(name, by_slug, by_path)
        if found is None:
            unmatched.append(name)
        elif found.url not in kept:
            kept[found.url] = replace(found, reason="named with --pages")
    return tuple(kept.values()), tuple(unmatched)


def _lookup(name: str, by_slug: dict[str, Scored], by_path: dict[str, Scored]) -> Scored | None:
    """A name is a path (`/about/`), a URL, or a slug (`about`, `blog__post-1`); a bare
    `blog/post-1` is tried as a path too, the way the junk filter protects names."""
    value = name.strip()
    if value.startswith("/") or "://" in value:
        return by_path.get(_lookup_key(url_path(value)))
    return by_slug.get(value.lower()) or by_path.get(_lookup_key("/" + value))


def _lookup_key(path: str) -> str:
    return path.lower().rstrip("/") or "/"


def _single(scored: Sequence[Scored], url: str, scorer: _Scorer) -> Scored:
    """The page at `url`; a new candidate when the sitemap did not list it (the user named it)."""
    target = _lookup_key(url_path(normalize_url(url.strip())))
    for item in scored:
        if _lookup_key(item.path) == target:
            return replace(item, reason="--single")
    value = url.strip()
    fresh = scorer.score(Candidate(normalize_url(value if "://" in value else "https://" + value)))
    return replace(fresh, reason="--single (not among the discovered pages)")


def _rest(pool: Sequence[Scored], kept: Sequence[Scored], reason: str) -> tuple[Scored, ...]:
    taken = {item.url for item in kept}
    rest = sorted((item for item in pool if item.url not in taken), key=_rank_key)
    return tuple(replace(item, reason=reason) for item in rest)


def _cap_of(scope: PagesWanted, kept: Sequence[Scored]) -> int | None:
    """The cap recorded in the log: N for `--cap`/default, none for `--all`, else what was kept."""
    if scope.mode == "cap":
        return scope.cap
    return None if scope.mode == "all" else len(kept)


def _templates(pool: Sequence[Scored]) -> tuple[PageType, ...]:
    found = {item.page_type for item in pool}
    return tuple(kind for kind in (*CHECKLIST, "page") if kind in found)


# --------------------------------------------------------------------------- asking (§11.5)


@dataclass(frozen=True, slots=True)
class LargeRun:
    """§11: `--all` selects `pages`, more than `limit`; fetching takes about `seconds`."""

    pages: int
    limit: int
    seconds: float
    kind: Literal["large-run"] = "large-run"


@dataclass(frozen=True, slots=True)
class FewTemplates:
    """§11: the pages that could be kept show fewer than `MIN_TEMPLATES` page types."""

    templates: tuple[PageType, ...]
    kind: Literal["few-templates"] = "few-templates"


# A reason to ask once before fetching; the front end words it (the CLI: `cli/_selection`).
Question = LargeRun | FewTemplates


def questions(
    selection: Selection,
    *,
    large_run: int = LARGE_RUN,
    seconds_per_page: float = SECONDS_PER_PAGE,
) -> tuple[Question, ...]:
    """The §11 cases that ask once: `--all` over `large_run` pages, or fewer than 3 templates.

    Pages the user picked (`--pages`, `--single`) never ask about templates: they chose.
    """
    found: list[Question] = []
    count = len(selection.kept)
    if selection.mode == "all" and count > large_run:
        found.append(LargeRun(count, large_run, count * seconds_per_page))
    if selection.mode in ("cap", "all") and len(selection.templates) < MIN_TEMPLATES:
        found.append(FewTemplates(selection.templates))
    return tuple(found)
