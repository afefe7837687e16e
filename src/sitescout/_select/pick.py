"""`select_pages`: which of a site's pages are kept, cut, or set aside, and why.

Pipeline of `select_pages`:

1. De-duplicate by URL (the first record wins) and run `_urls.classify` (§8): non-pages are
   dropped with their reason, auth-walled paths are flagged (`requires_auth`) and stay out of the
   pool unless `include_auth` or the user names them.
2. `_junk.junk_filter` over the whole set (its conditional rows need it); `--pages`/`--single`
   names are protected from it.
3. Every remaining page gets a slug (`SlugRegistry`, discovery order), a type (`_pagetype`) and its
   SCORING.md breakdown (`score`).
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
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from .._junk import junk_filter
from .._pagetype import CHECKLIST, PageType, path_segments
from .._rules import IA_KEYWORDS
from .._urls import SlugRegistry, classify, normalize_url, url_path
from .inputs import Candidate, PagesWanted
from .score import CHECKLIST_POINTS, Scored, Scorer, rank_key
from .selection import Selection


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
    scorer = Scorer(live, frozenset(words), slugs if slugs is not None else SlugRegistry())
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
    # In URL order: candidates come in the order concurrent documents arrived, which changes
    # from run to run, and the lists a user sees (junk, sign-in, cut) must not.
    pages.sort(key=lambda c: c.url)
    return pages, dropped, flagged


def _by_rank(
    pool: Sequence[Scored], scope: PagesWanted
) -> tuple[tuple[Scored, ...], tuple[Scored, ...]]:
    """Checklist slots first, then score, up to the cap (everything with `--all`)."""
    ranked = sorted(pool, key=rank_key)
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


def _single(scored: Sequence[Scored], url: str, scorer: Scorer) -> Scored:
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
    rest = sorted((item for item in pool if item.url not in taken), key=rank_key)
    return tuple(replace(item, reason=reason) for item in rest)


def _cap_of(scope: PagesWanted, kept: Sequence[Scored]) -> int | None:
    """The cap recorded in the log: N for `--cap`/default, none for `--all`, else what was kept."""
    if scope.mode == "cap":
        return scope.cap
    return None if scope.mode == "all" else len(kept)


def _templates(pool: Sequence[Scored]) -> tuple[PageType, ...]:
    found = {item.page_type for item in pool}
    return tuple(kind for kind in (*CHECKLIST, "page") if kind in found)
