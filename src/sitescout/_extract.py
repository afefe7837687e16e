"""The extraction run (§12): walk with the sampler preset, choose pages (§11), fetch, record.

Two phases so that a front end can show the selection and ask before anything is fetched:
`plan_extract` walks, filters and selects; `run_extract` fetches the kept pages and writes the
project directory. The walk is bounded by the sampler preset (§5), so the candidate list held
here is bounded too (10,000 URLs); `--all` lifts the preset and then holds what the site has.

The walk's filters (`--since`, `--include`, ... as `WalkOptions` has them) narrow the pool the
sampler chooses from, inside the walk, so the preset's budgets count only pages that can be
chosen. Pages the user names are theirs: with `--pages` or `--single` the filters are not
applied (none of them can hide a named page, and the output says so), and `--refresh SLUG`
re-extracts its page whatever the filters keep.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ._budget import Budgets, truncation_notice
from ._errors import UsageError, check_whole
from ._http import AddressGuard, FetchConfig, Fetcher, Pacer, render_problem
from ._locale import path_locale, require_locale
from ._models import Entry, WalkReport
from ._pages import PageOutcome, extract_page
from ._project import DISCOVERED, Project, ProjectError, now_iso
from ._robots import Robots
from ._select import Candidate, PagesWanted, Selection, select_pages
from ._urls import SlugRegistry, UrlSet, normalize_url, origin_of
from ._walk import SOURCES, Walk, WalkOptions, as_walk_url, require_http_url

if TYPE_CHECKING:
    from ._render import Renderer

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ExtractOptions:
    """What `sitescout extract` (or `sitescout.extract`) was asked to do; the defaults are the
    §11/§12 defaults. Checked once, at construction: a bad value raises `UsageError` naming the
    option (by its CLI flag, which is also how the CLI reports it)."""

    out: Path | None = None
    cap: int | None = None
    all: bool = False
    pages: tuple[str, ...] = ()
    single: bool = False
    junk_filter: bool = True
    render: bool = False
    refresh: tuple[str, ...] = ()
    refresh_all: bool = False
    # The site's sitemap, walked without discovery: an http(s) URL, a `file://` URL, or a path
    # (an `os.PathLike`, held as its `file://` URL) of a file on disk. Pages are fetched from
    # the site all the same.
    sitemap: str | None = None
    locale: str | None = None
    crawl: bool = False  # find pages by following links even when there are sitemaps
    source: str = "auto"  # where page URLs come from: auto, sitemap, llms, all (see WalkOptions)
    llms_txt: str | None = None
    concurrency: int = 4
    fetch: FetchConfig = field(default_factory=FetchConfig)
    # None: the sampler preset (§5), or no budgets with --all.
    budgets: Budgets | None = None
    ssrf_guard: bool = True
    # Documents whose URL starts with a prefix are read from its folder (`--map PREFIX=DIR`).
    maps: tuple[tuple[str, str], ...] = ()
    # The walk's filters (`WalkOptions` has the same fields and checks them): they narrow the
    # pages the sampler chooses from. Not applied with `pages` or `single`: named pages win.
    since: datetime | None = None
    since_strict: bool = False
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    sitemap_include: tuple[str, ...] = ()
    sitemap_exclude: tuple[str, ...] = ()
    sitemap_filter: Callable[[str], bool] | None = None

    def __post_init__(self) -> None:
        for name in _FLAGS:
            if not isinstance(getattr(self, name), bool):
                raise UsageError(f"{name} must be True or False, got {getattr(self, name)!r}")
        # Python callers may pass a str path and lists; stored as the declared types.
        if self.out is not None:
            if not isinstance(self.out, str | Path):
                raise UsageError(f"--out must be a path, got {self.out!r}")
            object.__setattr__(self, "out", Path(self.out))
        for name in ("pages", "refresh"):
            object.__setattr__(self, name, _slugs(name, getattr(self, name)))
        self._check_modes()
        self._check_sources()
        if not isinstance(self.fetch, FetchConfig):
            raise UsageError(f"fetch must be a FetchConfig, got {self.fetch!r}")
        if self.render:
            problem = render_problem(self.fetch)
            if problem is not None:
                raise UsageError(problem)
        if self.budgets is not None and not isinstance(self.budgets, Budgets):
            raise UsageError(f"budgets must be a Budgets or None, got {self.budgets!r}")
        self._check_walk()

    def _check_modes(self) -> None:
        if self.cap is not None:
            check_whole("--cap", self.cap, low=1)  # a bool or a text is not a count
        self.pages_wanted()  # the scope flags' own rules: one of them at most, no empty --pages
        check_whole("--concurrency", self.concurrency, low=1)  # a zero-slot gate waits forever

    def pages_wanted(self, url: str | None = None) -> PagesWanted:
        """The selection scope these options ask for (`url`: the page of `--single`)."""
        return PagesWanted.from_flags(
            cap=self.cap,
            all_pages=self.all,
            pages=self.pages or None,
            single=self.single,
            url=url if self.single else None,
        )

    def _check_sources(self) -> None:
        if self.sitemap is not None:  # a file on disk may stand for the site's sitemap
            object.__setattr__(self, "sitemap", as_walk_url(self.sitemap, "--sitemap"))
        if self.llms_txt is not None:
            require_http_url(self.llms_txt, "--llms-txt")
        if self.source not in SOURCES:
            raise UsageError(f"--source must be one of {', '.join(SOURCES)}; got {self.source!r}")
        if self.locale is not None:
            if not isinstance(self.locale, str):
                raise UsageError(f"--locale must be a string, got {self.locale!r}")
            require_locale(self.locale)

    def _check_walk(self) -> None:
        """The walk's own rules check the sitemap, the maps and the filters (and how the walk
        options go together), once, here; their normalized values are kept (`since` in UTC,
        tuples for lists)."""
        checked = self._walk_options(filtered=True)
        for name in ("sitemap", "maps", *FILTERS):
            object.__setattr__(self, name, getattr(checked, name))

    def walk_budgets(self) -> Budgets:
        if self.budgets is not None:
            return self.budgets
        return Budgets() if self.all else Budgets.SAMPLER

    @property
    def filters_given(self) -> tuple[str, ...]:
        """The filters set, by flag (`--exclude`; the callable as `sitemap_filter`)."""
        return tuple(_FILTER_FLAGS[name] for name in FILTERS if getattr(self, name))

    @property
    def filters_apply(self) -> bool:
        """Whether the walk applies the filters: not when the user names the pages (`--pages`,
        `--single`), whom no filter may overrule."""
        return not (self.pages or self.single)

    def walk_options(self) -> WalkOptions:
        """The walk of this extraction: the sampler preset (or `--all`'s none, or the budgets
        given), the chosen or default locale's shards only, no hreflang alternates, the
        filters unless pages are named."""
        return self._walk_options(filtered=self.filters_apply)

    def _walk_options(self, *, filtered: bool) -> WalkOptions:
        filters = {name: getattr(self, name) for name in FILTERS} if filtered else {}
        return WalkOptions(
            sitemap=self.sitemap,
            alternates=False,  # §5: the sampler keeps the default locale only
            fetch=self.fetch,
            budgets=self.walk_budgets(),
            locale=self.locale,
            filter_locales=True,
            ssrf_guard=self.ssrf_guard,
            crawl=self.crawl,
            render=self.render,
            source=self.source,
            llms_txt=self.llms_txt,
            maps=self.maps,
            **filters,
        )


_FLAGS = ("all", "single", "junk_filter", "render", "refresh_all", "crawl", "ssrf_guard")
# The `WalkOptions` filter fields extract passes on, and how the output names each one.
_FILTER_FLAGS = {
    "since": "--since",
    "since_strict": "--since-strict",
    "include": "--include",
    "exclude": "--exclude",
    "sitemap_include": "--sitemap-include",
    "sitemap_exclude": "--sitemap-exclude",
    "sitemap_filter": "sitemap_filter",  # a Python callable: no flag
}
FILTERS = tuple(_FILTER_FLAGS)


def _slugs(name: str, value: object) -> tuple[str, ...]:
    # A bare string would become a tuple of its letters: refuse it rather than guess.
    if isinstance(value, str) or not isinstance(value, tuple | list):
        raise UsageError(f"--{name} must be a tuple of slugs or paths, got {value!r}")
    if not all(isinstance(item, str) for item in value):
        raise UsageError(f"--{name} must hold strings, got {value!r}")
    return tuple(value)


@dataclass(slots=True)
class Plan:
    """What a run will do: the walk's findings and the selection, before any page is fetched."""

    url: str
    origin: str
    project: Project
    report: WalkReport
    robots: Robots | None
    discovered: int  # page URLs the walk yielded (before §7 locale scoping and §8)
    other_locales: int
    default_locale: str | None
    selection: Selection
    slugs: SlugRegistry
    truncation: str | None
    to_fetch: list[tuple[str, str]] = field(default_factory=list)  # (slug, url)
    already: list[str] = field(default_factory=list)  # slugs skipped as already extracted
    # Whether the user chose `default_locale` (--locale, or a locale in the URL's path) rather
    # than it being inferred from the site's URLs.
    locale_chosen: bool = False
    filters: tuple[str, ...] = ()  # the filters given, by flag (`ExtractOptions.filters_given`)
    filters_applied: bool = True  # False when pages are named (`--pages`, `--single`)
    named_by: str | None = None  # `--pages` or `--single` when the user named the pages
    filtered: int = 0  # page URLs the filters dropped in the walk
    # With `--refresh-all` and filters: slugs extracted earlier that this selection leaves out,
    # so not re-extracted.
    unrefreshed: list[str] = field(default_factory=list)

    @property
    def notes(self) -> list[str]:
        """What the CLI shows above the selection: the locale, filter and refresh notes."""
        notes = (self.locale_note, self.filter_note, self.refresh_note)
        return [note for note in notes if note is not None]

    @property
    def filter_note(self) -> str | None:
        """How many page URLs the filters dropped; or, when pages are named, that the filters
        were not applied. None without filters (or when they dropped nothing)."""
        if not self.filters:
            return None
        if not self.filters_applied:
            what = "pages" if self.named_by == "--pages" else "page"
            return (
                f"{_listed(self.filters)} not applied: {self.named_by} names the {what} to extract"
            )
        if not self.filtered:
            return None
        return (
            f"the filters ({', '.join(self.filters)}) dropped "
            f"{_plural(self.filtered, 'page URL')} before the selection"
        )

    @property
    def refresh_note(self) -> str | None:
        if not self.unrefreshed:
            return None
        shown = ", ".join(self.unrefreshed[:4]) + (", ..." if len(self.unrefreshed) > 4 else "")
        return (
            f"--refresh-all: {_plural(len(self.unrefreshed), 'page')} extracted earlier "
            f"{'is' if len(self.unrefreshed) == 1 else 'are'} not in this filtered selection and "
            f"not re-extracted ({shown}); --refresh SLUG re-extracts one"
        )

    @property
    def locale_note(self) -> str | None:
        """§12's note when pages in other locales were set aside; None on a one-locale site.

        Its own attribute so the CLI can show it above the selection without matching notes.
        """
        if not self.other_locales:
            return None
        return (
            f"multi-locale site: extracting the {self._which_locale} locale only "
            f"({self._locale_name}); {self.other_locales} URLs in other locales skipped"
        )

    @property
    def _which_locale(self) -> str:
        """`chosen` when the user asked for it, `default` when it was inferred from the URLs."""
        return "chosen" if self.locale_chosen else "default"

    @property
    def _locale_name(self) -> str:
        return self.default_locale or "un-localized paths"

    def nothing_reason(self) -> str:
        """Why there is no page to fetch, in the terms of what the selection showed: no page
        at all, pages that are all set aside (and why), or pages named with `--pages` that are
        not among those discovered."""
        selection = self.selection
        if self.discovered == 0 and self.filtered:
            return (
                f"the filters ({', '.join(self.filters)}) dropped every page URL found "
                f"({self.filtered:,})"
            )
        if self.discovered == 0:
            return "no page was discovered"
        if selection.discovered == 0:
            set_aside = _counted(
                (
                    self.other_locales,
                    f"in locales other than the {self._which_locale} one ({self._locale_name})",
                ),
                (len(selection.filtered), "not pages (assets, feeds, pagination, API paths)"),
            )
            found = _plural(self.discovered, "URL")
            return f"none of the {found} discovered is a page to extract: {set_aside or 'none'}"
        found = _plural(selection.discovered, "page")
        if selection.mode == "pages" and selection.unmatched:
            named = ", ".join(selection.unmatched)
            if len(selection.unmatched) == 1:
                return f"the page named with --pages ({named}) is not among the {found} discovered"
            return f"none of the pages named with --pages ({named}) is among the {found} discovered"
        set_aside = _counted(
            (len(selection.junk), "filtered as likely junk (--no-junk-filter keeps them)"),
            (len(selection.requires_auth), "behind a sign-in"),
        )
        return f"none of the {found} discovered can be extracted: {set_aside or 'none selected'}"


@dataclass(slots=True)
class RunResult:
    successes: list[str] = field(default_factory=list)
    failures: list[PageOutcome] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # already extracted in an earlier run
    disallowed: list[str] = field(default_factory=list)  # by robots.txt
    interrupted: bool = False


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def _listed(names: tuple[str, ...]) -> str:
    """`--a`, `--a and --b`, `--a, --b and --c`."""
    if len(names) < 2:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _counted(*parts: tuple[int, str]) -> str:
    """`3 in other locales, 1 not pages`: the parts whose count is not 0."""
    return ", ".join(f"{count:,} {what}" for count, what in parts if count)


def default_out(url: str) -> Path:
    host = (urlsplit(url).hostname or "site").replace(":", "_")
    port = urlsplit(url).port
    return Path(f"sitescout-{host}" + (f"-{port}" if port else ""))


# -- phase 1: walk and select ----------------------------------------------------------------------


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


# -- phase 2: fetch and record ---------------------------------------------------------------------


def discovery_record(plan: Plan, *, user_choice: str | None) -> dict[str, Any]:
    """The `discovery` object of a crawl-log run (§12): the walk's findings and the selection."""
    report = plan.report
    return {
        "source": report.source or "none",
        "sourceUrl": report.source_url,
        # What the llms.txt lookup found, when there was one (source `llms.txt` or `all`).
        "llmsTxt": None if report.llms is None else report.llms.as_dict(),
        "fetchedAt": now_iso(),
        **plan.selection.to_dict(),
        "walkedUrlCount": plan.discovered,
        "truncation": plan.truncation,
        "userChoice": user_choice,
        "malformed": [
            {"raw": m.raw, "reason": m.reason, "sitemap": m.sitemap} for m in report.malformed
        ],
        "notes": report.notes,
        "budgetsHit": report.budgets_hit,
        "warnings": report.warnings,
        "partial": report.partial,
        "defaultLocale": plan.default_locale,
        "otherLocaleCount": plan.other_locales,
    }


async def run_extract(
    plan: Plan,
    options: ExtractOptions,
    *,
    user_choice: str | None = None,
    on_page: Callable[[str, PageOutcome | None], None] | None = None,
) -> RunResult:
    """Fetch every page of `plan.to_fetch` and record each outcome as it lands.

    Pages run concurrently (at most `options.concurrency`; one at a time, spaced by `_http.Pacer`,
    with a robots.txt Crawl-delay). Cancellation (Ctrl-C) still closes the run in the crawl log.
    The project's lock, taken by `plan_extract`, is released on every way out.
    """
    try:
        return await _run(plan, options, user_choice, on_page)
    finally:
        plan.project.close()


async def _run(
    plan: Plan,
    options: ExtractOptions,
    user_choice: str | None,
    on_page: Callable[[str, PageOutcome | None], None] | None,
) -> RunResult:
    project = plan.project
    result = RunResult(skipped=list(plan.already))
    project.start_run(discovery_record(plan, user_choice=user_choice))
    for slug in plan.already:
        project.page_skipped(slug)
    for slug, url in plan.to_fetch:
        previous = project.pages.get(slug)
        if previous is None or previous.status != DISCOVERED:
            refresh = {"refresh": True} if project.extracted(slug) else {}
            project.mark(slug, url, DISCOVERED, **refresh)
    project.flush()
    robots = plan.robots
    # Crawl-delay paces the page fetches as it paces the link crawl: one at a time.
    pacer = Pacer(robots.crawl_delay if robots is not None else None)
    if pacer.capped:
        log.info("robots.txt asks for a longer Crawl-delay; using %g s", pacer.delay)
    gate = asyncio.Semaphore(options.concurrency)
    guard = AddressGuard(plan.url) if options.ssrf_guard else None
    config = pacer.config(replace(options.fetch, retries=min(options.fetch.retries, 1)))

    async def one(fetcher: Fetcher, renderer: Renderer | None, slug: str, url: str) -> None:
        if robots is not None and not robots.allowed(url):
            project.page_skipped(slug)
            result.disallowed.append(slug)
            log.info("%s: disallowed by robots.txt, not fetched", url)
            if on_page:
                on_page(slug, None)
            return
        async with gate, pacer.slot():
            try:
                outcome = await extract_page(fetcher, url, renderer)
            except Exception as exc:  # a bug in one page must not lose the others
                log.exception("internal error extracting %s", url)
                outcome = _internal_failure(url, f"{type(exc).__name__}: {exc}")
        if outcome.ok:
            try:
                project.page_done(slug, url, outcome.record(slug, now_iso(), options.render))
            except (OSError, ProjectError) as exc:  # e.g. pages/ swapped for a link mid-run
                log.error("%s: page file not written: %s", url, exc)
                outcome = _internal_failure(url, f"page file not written: {exc}")
        if outcome.ok:
            result.successes.append(slug)
        else:
            project.page_failed(
                slug, url, outcome.error_class or "NetworkError", outcome.error or ""
            )
            result.failures.append(outcome)
        if on_page:
            on_page(slug, outcome)

    try:
        async with (
            Fetcher(config, guard=guard, origin=plan.url) as fetcher,
            _renderer(options, guard) as renderer,
            asyncio.TaskGroup() as group,
        ):
            for slug, url in plan.to_fetch:
                group.create_task(one(fetcher, renderer, slug, url))
    except BaseException:
        result.interrupted = True
        project.finish_run(interrupted=True)
        raise
    project.finish_run()
    return result


def _internal_failure(url: str, message: str) -> PageOutcome:
    outcome = PageOutcome(url, url, None, "", error_class="InternalError")
    outcome.error = message
    return outcome


@contextlib.asynccontextmanager
async def _renderer(
    options: ExtractOptions, guard: AddressGuard | None
) -> AsyncIterator[Renderer | None]:
    if not options.render:
        yield None
        return
    from ._render import Renderer

    async with Renderer(
        guard=guard, user_agent=options.fetch.user_agent, timeout=options.fetch.timeout
    ) as renderer:
        yield renderer
