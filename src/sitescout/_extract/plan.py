"""`Plan`: what a run will do, before any page is fetched, and how the front end words it.

The notes (locale, filters, `--refresh-all`) go above the selection and into the crawl log;
`nothing_reason` says why there is nothing to fetch, in the selection's own terms.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._models import WalkReport
from .._project import Project
from .._robots import Robots
from .._select import Selection
from .._text import plural
from .._urls import SlugRegistry


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
            f"{plural(self.filtered, 'page URL', separators=True)} before the selection"
        )

    @property
    def refresh_note(self) -> str | None:
        if not self.unrefreshed:
            return None
        shown = ", ".join(self.unrefreshed[:4]) + (", ..." if len(self.unrefreshed) > 4 else "")
        return (
            f"--refresh-all: {plural(len(self.unrefreshed), 'page', separators=True)} extracted "
            "earlier "
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
            found = plural(self.discovered, "URL", separators=True)
            return f"none of the {found} discovered is a page to extract: {set_aside or 'none'}"
        found = plural(selection.discovered, "page", separators=True)
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


def _listed(names: tuple[str, ...]) -> str:
    """`--a`, `--a and --b`, `--a, --b and --c`."""
    if len(names) < 2:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _counted(*parts: tuple[int, str]) -> str:
    """`3 in other locales, 1 not pages`: the parts whose count is not 0."""
    return ", ".join(f"{count:,} {what}" for count, what in parts if count)
