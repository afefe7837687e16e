"""Phase 1, `plan_extract`: walk, gather the candidates, select (§11), choose what to fetch.

Nothing is fetched or written here; the project directory is only opened, and locked, so that a
second run into it stops before any request.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from .._budget import truncation_notice
from .._errors import UsageError
from .._locale import path_locale
from .._models import Entry
from .._project import Project
from .._select import Candidate, select_pages
from .._urls import SlugRegistry, UrlSet, normalize_url, origin_of
from .._walk import Walk
from .options import ExtractOptions
from .plan import Plan


def default_out(url: str) -> Path:
    host = (urlsplit(url).hostname or "site").replace(":", "_")
    port = urlsplit(url).port
    return Path(f"sitescout-{host}" + (f"-{port}" if port else ""))


async def plan_extract(url: str, options: ExtractOptions) -> Plan:
    """Walk and select; nothing is fetched or written yet.

    The project directory is locked from here until `run_extract` ends; a caller that does not
    run the plan releases it with `plan.project.close()`.
    """
    origin = origin_of(normalize_url(url))
    # Locked before any request: a second run into the directory stops here, not half-way.
    project = Project.open(options.out or default_out(url), origin)
    try:
        return await _plan(url, options, origin, project)
    except BaseException:
        project.close()
        raise


async def _plan(url: str, options: ExtractOptions, origin: str, project: Project) -> Plan:
    budgets = options.walk_budgets()
    walk = Walk(url, options.walk_options())
    chosen_locale = options.locale or path_locale(url)
    gathered = _Gather(url, chosen_locale)
    async for batch in walk:
        gathered.add(batch)
    report = walk.report
    default_locale, other = gathered.default_locale()
    candidates = [c for c in gathered.candidates if path_locale(c.url) == default_locale]
    slugs = SlugRegistry()
    for slug, rec in project.pages.items():
        slugs.reserve(rec.url, slug)
    scope = options.pages_wanted(url)
    selection = select_pages(
        candidates, scope, site=url, filter_junk=options.junk_filter, slugs=slugs
    )
    truncation = None
    if "max_urls" in report.budgets_hit and budgets.max_urls is not None:
        truncation = truncation_notice(
            report.urls + report.urls_cut, report.leaf_sitemaps, budgets.max_urls
        )
    plan = Plan(
        url=url,
        origin=origin,
        project=project,
        report=report,
        robots=walk.discovery.robots if walk.discovery is not None else None,
        discovered=gathered.discovered,
        other_locales=other,
        default_locale=default_locale,
        selection=selection,
        slugs=slugs,
        truncation=truncation,
        locale_chosen=chosen_locale is not None,
        filters=options.filters_given,
        filters_applied=options.filters_apply,
        named_by=scope.source if scope.mode in ("pages", "single") else None,
        filtered=walk.report.filtered_pages,
    )
    if plan.locale_note is not None:
        report.notes.append(plan.locale_note)  # the crawl log's notes carry it too
    if not plan.filters_applied and plan.filter_note is not None:
        report.notes.append(plan.filter_note)  # (the walk notes what its filters dropped)
    _choose_fetches(plan, options)
    if plan.refresh_note is not None:
        report.notes.append(plan.refresh_note)
    return plan


class _Gather:
    """Turns walk batches into candidates: one per page, trailing-slash and www twins merged."""

    def __init__(self, url: str, locale: str | None) -> None:
        self.url = url
        self.locale = locale
        self.urlset = UrlSet(url)
        self.candidates: list[Candidate] = []
        self.discovered = 0
        self.locales: Counter[str | None] = Counter()

    def add(self, batch: list[Entry]) -> None:
        for entry in batch:
            if entry.alternate_of is not None:
                continue
            self.discovered += 1
            if entry.canonical:
                self.urlset.set_canonical(entry.url, entry.canonical)
            known = len(self.urlset)
            url = self.urlset.add(entry.url)
            if len(self.urlset) == known:
                continue  # a trailing-slash or www twin of a page already taken
            self.candidates.append(Candidate.from_entry(entry, url=url))
            self.locales[path_locale(url)] += 1

    def default_locale(self) -> tuple[str | None, int]:
        """The locale to extract and how many candidates are in others.

        The base URL's (or --locale's) when given; otherwise un-localized paths when there are
        any (the site's default language usually lives at the root), else the most common.
        """
        if self.locale is not None:
            chosen: str | None = self.locale.lower()
        elif None in self.locales or not self.locales:
            chosen = None
        else:
            chosen = self.locales.most_common(1)[0][0]
        other = sum(n for loc, n in self.locales.items() if loc != chosen)
        return chosen, other


def _choose_fetches(plan: Plan, options: ExtractOptions) -> None:
    known = set(plan.project.pages)
    for slug in options.refresh:
        if slug not in known and slug not in {s.slug for s in plan.selection.kept}:
            raise UsageError(f"--refresh {slug}: no page with that slug in this project")
    refresh = set(options.refresh)
    for scored in plan.selection.kept:
        slug = scored.slug
        if plan.project.extracted(slug) and not (options.refresh_all or slug in refresh):
            plan.already.append(slug)
        else:
            plan.to_fetch.append((slug, scored.url))
    kept = {slug for slug, _ in plan.to_fetch} | set(plan.already)
    for slug in options.refresh:  # named: re-extracted whatever the selection (and filters) kept
        if slug not in kept:
            plan.to_fetch.append((slug, plan.project.pages[slug].url))
    if options.refresh_all and plan.filters and plan.filters_applied:
        kept |= refresh
        plan.unrefreshed = sorted(
            slug for slug in plan.project.pages if plan.project.extracted(slug) and slug not in kept
        )
