"""What an extraction was asked to do: `ExtractOptions`, checked once, at construction.

The walk's filters are `WalkOptions`' own fields (`FILTERS`), checked by its rules and handed on
to the walk unless the user names the pages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from .._budget import Budgets
from .._errors import UsageError, check_whole
from .._http import FetchConfig, render_problem
from .._locale import require_locale
from .._select import PagesWanted
from .._walk import SOURCES, WalkOptions, as_walk_url, require_http_url


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
    # The walk's state directory between runs (`WalkOptions.state`).
    state: Path | None = None
    trust_lastmod: bool = False

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
            state=self.state,
            trust_lastmod=self.trust_lastmod,
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
