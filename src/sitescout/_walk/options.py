"""What shapes a walk, checked before any request: `WalkOptions`, and the keyword arguments that
fill it (`walk_options`), with the URL checks the entry points share."""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .._budget import Budgets
from .._core import UrlFilter
from .._errors import UsageError, check_whole
from .._http import FetchConfig, render_problem
from .._local import check_maps, is_file_url
from .._locale import require_locale
from .._since import as_utc
from .._urls import is_http_url

# Workers are tasks with their own buffers: a huge count is a mistake, not a speed-up.
MAX_CONCURRENCY = 64
# Where page URLs come from. auto: the sitemaps; llms.txt when there are none; then the link
# crawl. all: sitemaps and llms.txt merged, each entry naming the sources that listed it.
SOURCES = ("auto", "sitemap", "llms", "all")


@dataclass(frozen=True, slots=True)
class WalkOptions:
    """Everything that shapes one walk besides its URL."""

    # The site's sitemap, walked without discovery; a `file://` URL or a path (an
    # `os.PathLike`, held as its `file://` URL) reads it from disk.
    sitemap: str | None = None
    alternates: bool = True
    concurrency: int = 8
    fetch: FetchConfig = field(default_factory=FetchConfig)
    budgets: Budgets = field(default_factory=Budgets)
    locale: str | None = None
    filter_locales: bool = False
    ssrf_guard: bool = True
    # §10: follow links instead of walking sitemaps (also done when discovery finds none).
    crawl: bool = False
    render: bool = False  # the crawl loads pages in headless Chromium
    source: str = "auto"  # one of SOURCES
    llms_txt: str | None = None  # the llms.txt to read instead of looking for one
    # Documents whose URL starts with a prefix are read from its folder, never requested.
    maps: tuple[tuple[str, str], ...] = ()
    offline: bool = False  # no request at all: http(s) documents no map covers are skipped
    # Filters that save fetches. `since`: page URLs and index children whose lastmod is older
    # are dropped (children not fetched); a naive datetime means UTC; no lastmod is kept unless
    # `since_strict` (pages only). Patterns are regexes (linear-time engine) searched in the URL:
    # kept when one include matches (or there is none) and no exclude does.
    since: datetime | None = None
    since_strict: bool = False
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    sitemap_include: tuple[str, ...] = ()
    sitemap_exclude: tuple[str, ...] = ()
    # url -> bool for each child sitemap of an index: False leaves it unfetched; raising records
    # an error for that child.
    sitemap_filter: Callable[[str], bool] | None = None
    # A directory kept between walks of the site: each sitemap document's body and validators,
    # so that the next walk asks conditionally and reads what did not change from disk.
    state: Path | None = None
    # With a state: a child sitemap whose index lastmod did not move is read from the state
    # without a request (off by default: many indexes stamp every entry with the time).
    trust_lastmod: bool = False

    def __post_init__(self) -> None:
        # Checked here, before any request: `concurrency=0` starts no worker and waits forever,
        # and a bad locale would only surface mid-walk, inside the first sitemap index.
        if self.sitemap is not None:  # a file on disk may stand for the site's sitemap
            object.__setattr__(self, "sitemap", as_walk_url(self.sitemap, "sitemap"))
        if self.llms_txt is not None:
            require_http_url(self.llms_txt, "llms_txt")
        if self.state is not None:
            if not isinstance(self.state, str | os.PathLike) or not str(self.state):
                raise UsageError(f"state must be a directory path, got {self.state!r}")
            object.__setattr__(self, "state", Path(self.state))
        if self.trust_lastmod is not False and self.state is None:
            raise UsageError("trust_lastmod needs a state directory (state)")
        if self.source not in SOURCES:
            raise UsageError(f"source must be one of {', '.join(SOURCES)}; got {self.source!r}")
        if self.llms_txt is not None and self.source == "sitemap":
            raise UsageError(
                "llms_txt names a file that source 'sitemap' never reads; "
                "use source 'llms' or 'all' to read it"
            )
        check_whole("concurrency", self.concurrency, low=1, high=MAX_CONCURRENCY)
        for name, kind in (("fetch", FetchConfig), ("budgets", Budgets)):
            if not isinstance(getattr(self, name), kind):
                raise UsageError(f"{name} must be a {kind.__name__}, got {getattr(self, name)!r}")
        if self.locale is not None:
            if not isinstance(self.locale, str):
                raise UsageError(f"locale must be a string, got {self.locale!r}")
            require_locale(self.locale)
        object.__setattr__(self, "maps", check_maps(self.maps))
        if self.offline is True and self.crawl:
            raise UsageError("offline and crawl cannot be combined: the crawl fetches pages")
        for name in (
            "alternates",
            "filter_locales",
            "ssrf_guard",
            "crawl",
            "render",
            "offline",
            "trust_lastmod",
        ):
            if not isinstance(getattr(self, name), bool):
                raise UsageError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.render and (problem := render_problem(self.fetch)) is not None:
            raise UsageError(problem)
        self._check_filters()

    def _check_filters(self) -> None:
        if self.since is not None:
            if not isinstance(self.since, datetime):
                raise UsageError(f"since must be a datetime, got {self.since!r}")
            try:
                object.__setattr__(self, "since", as_utc(self.since))
            except (OverflowError, ValueError):
                raise UsageError(f"since is out of range in UTC: {self.since!r}") from None
        if not isinstance(self.since_strict, bool):
            raise UsageError(f"since_strict must be True or False, got {self.since_strict!r}")
        if self.since_strict and self.since is None:
            raise UsageError("since_strict needs since")
        for name in ("include", "exclude", "sitemap_include", "sitemap_exclude"):
            value = getattr(self, name)
            if not isinstance(value, tuple | list) or not all(isinstance(p, str) for p in value):
                raise UsageError(f"{name} must be a sequence of regex strings, got {value!r}")
            object.__setattr__(self, name, tuple(value))
            for pattern in value:
                try:
                    UrlFilter([pattern])
                except ValueError as exc:
                    raise UsageError(f"{name}: invalid regex {exc}") from None
        if self.sitemap_filter is not None and not callable(self.sitemap_filter):
            raise UsageError(f"sitemap_filter must be callable, got {self.sitemap_filter!r}")

    def page_filter(self) -> UrlFilter | None:
        """The native filter of page rows; None when nothing would be dropped."""
        if self.since is None and not self.include and not self.exclude:
            return None
        since = self.since.isoformat() if self.since is not None else None
        return UrlFilter(list(self.include), list(self.exclude), since, self.since_strict)

    def child_filter(self) -> UrlFilter | None:
        """The native filter of an index's child sitemaps; None when none is set."""
        if self.since is None and not self.sitemap_include and not self.sitemap_exclude:
            return None
        since = self.since.isoformat() if self.since is not None else None
        return UrlFilter(list(self.sitemap_include), list(self.sitemap_exclude), since, False)


def require_walk_url(value: object, name: str) -> str:
    """`value` when a walk can start there: an http(s) URL, or a `file://` URL of a sitemap
    on disk; UsageError naming `name` otherwise."""
    if is_file_url(value):
        assert isinstance(value, str)
        if urlsplit(value).netloc not in ("", "localhost"):
            raise UsageError(f"{name}: a file URL on another host cannot be read: {value!r}")
        return value
    if not is_http_url(value):
        raise UsageError(f"{name} must be an http(s) URL, got {value!r}")  # or a file:// one
    return value


# -- keyword arguments: WalkOptions, FetchConfig and Budgets fields in one call ----------------

_WALK_FIELDS = frozenset(WalkOptions.__dataclass_fields__)
_FETCH_FIELDS = frozenset(FetchConfig.__dataclass_fields__)
_BUDGET_FIELDS = frozenset(Budgets.__dataclass_fields__)


def unknown_option(name: str, known: Iterable[str]) -> UsageError:
    guess = difflib.get_close_matches(name, sorted(known), n=1)
    hint = f" (did you mean {guess[0]!r}?)" if guess else ""
    return UsageError(f"unknown option {name!r}{hint}")


def walk_options(options: WalkOptions | None, kwargs: dict[str, Any]) -> WalkOptions:
    """`options` with the keyword arguments applied; every value is checked here, up front."""
    if options is not None and not isinstance(options, WalkOptions):
        raise UsageError(f"options must be a WalkOptions, got {options!r}")
    known = _WALK_FIELDS | _FETCH_FIELDS | _BUDGET_FIELDS
    for name in kwargs:
        if name not in known:
            raise unknown_option(name, known)
    own = {k: v for k, v in kwargs.items() if k in _WALK_FIELDS}
    # WalkOptions' own fields first, so `fetch=FetchConfig(...), timeout=5` keeps both.
    opts = replace(options or WalkOptions(), **own)
    fetch = fetch_config(opts.fetch, {k: v for k, v in kwargs.items() if k in _FETCH_FIELDS})
    budget_fields = {k: v for k, v in kwargs.items() if k in _BUDGET_FIELDS}
    budgets = replace(opts.budgets, **budget_fields) if budget_fields else opts.budgets
    if fetch is opts.fetch and budgets is opts.budgets:
        return opts
    return replace(opts, fetch=fetch, budgets=budgets)


def fetch_config(config: FetchConfig | None, fields: dict[str, Any]) -> FetchConfig:
    """`config` (or the defaults) with `fields` of `FetchConfig` applied; UsageError for an
    unknown one."""
    if config is not None and not isinstance(config, FetchConfig):
        raise UsageError(f"config must be a FetchConfig, got {config!r}")
    for name in fields:
        if name not in _FETCH_FIELDS:
            raise unknown_option(name, _FETCH_FIELDS)
    if not fields:
        return config or FetchConfig()
    return replace(config or FetchConfig(), **fields)


def as_walk_url(value: object, name: str) -> str:
    """`require_walk_url`, with a path (`os.PathLike`) on disk taken as its `file://` URL."""
    if isinstance(value, os.PathLike):
        return Path(value).resolve().as_uri()
    return require_walk_url(value, name)


def require_http_url(value: object, name: str) -> str:
    """`value` when it is an absolute http(s) URL; UsageError naming `name` otherwise."""
    if not is_http_url(value):
        raise UsageError(f"{name} must be an http(s) URL, got {value!r}")
    return value
