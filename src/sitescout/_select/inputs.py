"""What a selection is given: the pages offered (`Candidate`) and how many to keep (`PagesWanted`).

Both are plain values a front end builds: from the walk's entries, and from the scope flags.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from .._errors import UsageError
from .._models import Entry

Mode = Literal["cap", "all", "pages", "single"]
CapSource = Literal["default", "--cap", "--all", "--single", "--pages", "prompt-intent"]

DEFAULT_CAP: Final = 5


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
