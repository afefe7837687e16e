"""Page-type inference for the §11 checklist. Pure: no I/O.

A page's type is a guess from its URL first, then from what the sitemap says about it, then (when
the page was crawled, §10) from its title and link count. The URL decides whenever it can, because
it is the one signal every candidate has; the hints only sharpen a page the URL left vague (a
top-level page without a known keyword, a sub-page, a plain page).

Types, in checklist order (§11): `home`, `pillar` (a top-level section page: `/about`, `/pricing`),
`article` (a long-form post or story), `listing` (an index or grid of other pages: `/blog`,
`/category/x`, a date archive), `form` (contact, signup, donate, ...), `data` (a data, map, chart or
embed page), `subsection` (the landing page of a section below the top level: `/docs/api`), and
`page` for everything else (not a checklist slot; such pages are kept by score only).

The rules, first match wins:

1. no path segment: `home`;
2. the last segment names a form (`/contact-us`, `/signup`, `/get-in-touch`): `form`;
3. the last segment names data or an embed (`/data`, `/store-locator`, `/loan-calculator`):
   `data`;
4. a date archive (`/2024/05/`, `/blog/2024-05-01/`), a listing word as the last segment (`/blog`,
   `/news`, `/tags`) or a taxonomy parent (`/category/x`, `/tag/x`, `/author/x`): `listing`;
5. a news sitemap entry, a date in the path (`/2024/05/01/slug`), or any ancestor segment that
   holds articles (`/blog/x`, `/en/news/x`): `article`;
6. one segment: `pillar` when it is an IA keyword (SCORING.md); otherwise a long slug (four words
   or more) without children is an `article` (WordPress puts posts at the root), a page with five
   or more children is a `listing`, and anything else is a `pillar` of its own section;
7. deeper: a long slug without children is an `article`; a page with children or a short slug
   (one or two words) is a `subsection` landing; the rest are `page`s.

Vague results (a keyword-less top-level page, `subsection`, `page`) then take the hints, in order:
a form/data/listing word in the title; a title of eight or more words (`article`); far more
internal links than the site's typical page (`listing`: navigation is shared, so a listing stands
out against the median, not against a fixed number); a `changefreq` of always/hourly/daily
(`listing`: indexes change when anything under them does); a video in the sitemap entry (`data`,
an embed page).

Word lists are English, like SCORING.md's keywords; localized slugs fall through to the structural
rules, and `--pages` is the user's override.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable
from typing import Final, Literal

from ._rules import DATE_ARCHIVE, DATED_POST, IA_KEYWORDS

__all__ = [
    "CHECKLIST",
    "IA_KEYWORDS",
    "LABELS",
    "PageType",
    "SiteShape",
    "infer_page_type",
    "is_date_archive",
    "path_segments",
    "segment_stem",
]

PageType = Literal["home", "pillar", "article", "listing", "form", "data", "subsection", "page"]

# §11's checklist order; `page` is not a slot.
CHECKLIST: Final[tuple[PageType, ...]] = (
    "home",
    "pillar",
    "article",
    "listing",
    "form",
    "data",
    "subsection",
)
LABELS: Final[dict[PageType, str]] = {
    "home": "home",
    "pillar": "IA pillar",
    "article": "article",
    "listing": "listing",
    "form": "form",
    "data": "data/embed",
    "subsection": "sub-section landing",
    "page": "page",
}

# Whole last segments that are forms, and words that start a short form slug (`donate-now`).
_FORM_SEGMENTS = frozenset(
    "sign-up sign_up get-in-touch contact-us join-us request-a-demo book-a-demo book-a-call "
    "get-a-quote request-a-quote free-trial start-trial booking bookings".split()
)
_FORM_WORDS = frozenset(
    "contact signup register registration donate donation donations subscribe newsletter apply "
    "enquiry enquiries inquiry inquiries rsvp feedback volunteer join trial checkout".split()
)
# Any word of a short last segment (`live-data`, `covid-tracker`). No `dashboard`: that is an
# auth-walled path (§8), flagged before types matter.
_DATA_WORDS = frozenset(
    "data dataset datasets map maps chart charts embed stats statistics interactive calculator "
    "calculators explorer tracker visualization visualizations visualisation visualisations "
    "graph graphs widget locator live".split()
)
_LISTING_SEGMENTS = frozenset(
    "blog blogs news articles posts stories insights journal press press-releases newsroom "
    "updates events resources library archive archives category categories tag tags topics "
    "shop store catalog catalogue collections gallery portfolio projects case-studies jobs "
    "careers directory search latest podcasts podcast videos webinars changelog".split()
)
# `/category/<x>`: the child of a taxonomy segment lists that term's pages.
_LISTING_PARENTS = frozenset(
    "category categories tag tags topic topics author authors collections collection "
    "archive archives series label labels".split()
)
_ARTICLE_SECTIONS = frozenset(
    "blog blogs news articles article posts post stories story insights journal press "
    "newsroom updates magazine case-studies case-study guides tutorials podcast".split()
)
_PAGE_EXTENSIONS = (".html", ".htm", ".php", ".asp", ".aspx", ".jsp", ".shtml")
_WORD_SPLIT = re.compile(r"[-_.+~]+")
_TITLE_WORDS = re.compile(r"[a-z0-9]+")
_TITLE_FORM = frozenset("contact signup register donate subscribe apply rsvp".split())
_TITLE_DATA = frozenset(
    "dashboard map maps chart charts data statistics calculator tracker".split()
)
_TITLE_LISTING = frozenset("archive archives category tag topics latest".split())
_FREQUENT = frozenset({"always", "hourly", "daily"})

_DATE_ARCHIVE = re.compile(DATE_ARCHIVE)
_DATED_POST = re.compile(DATED_POST)
_LONG_SLUG_WORDS = 4
_SHORT_SLUG_WORDS = 2
_LISTING_CHILDREN = 5
_LONG_TITLE_WORDS = 8
_MANY_LINKS_FACTOR = 2.0
_MANY_LINKS_MIN = 40  # below this, "twice the median" is noise (a 6-link page is no listing)
_LINK_SAMPLE_MIN = 5  # a median of fewer crawled pages says nothing about the site


def path_segments(path: str) -> list[str]:
    """The non-empty segments of a path, lowercased (`/Blog//Post/` → `["blog", "post"]`)."""
    return [segment for segment in path.lower().split("/") if segment]


def segment_stem(segment: str) -> str:
    """A segment without a page extension: `about.html` is the about page."""
    for extension in _PAGE_EXTENSIONS:
        if segment.endswith(extension) and len(segment) > len(extension):
            return segment[: -len(extension)]
    return segment


def is_date_archive(path: str) -> bool:
    """SCORING.md's date-like archive: `/YYYY/MM/DD/`, `/YYYY-MM-DD/`, `/YYYY/MM/`.

    Matched at the end of the path (trailing slash optional), so a section's archive
    (`/blog/2024/05/`) counts like the root's; a post below a date (`/2024/05/01/slug`) does not.
    """
    return _DATE_ARCHIVE.search(path.lower()) is not None


class SiteShape:
    """What inference needs from the whole candidate set: children per path, typical link count.

    Built once per selection from every page path (a few thousand); lookups are dict reads.
    """

    __slots__ = ("_children", "_descendants", "_link_median")

    def __init__(self, paths: Iterable[str], internal_links: Iterable[int] = ()) -> None:
        self._children: dict[str, int] = {}
        self._descendants: dict[str, int] = {}
        for segments in {tuple(path_segments(path)) for path in paths}:
            for depth in range(len(segments)):
                parent = "/".join(segments[:depth])
                self._descendants[parent] = self._descendants.get(parent, 0) + 1
                if depth == len(segments) - 1:
                    self._children[parent] = self._children.get(parent, 0) + 1
        counts = [count for count in internal_links if count >= 0]
        self._link_median = statistics.median(counts) if len(counts) >= _LINK_SAMPLE_MIN else None

    def children(self, segments: list[str]) -> int:
        """Discovered pages exactly one level below this path."""
        return self._children.get("/".join(segments), 0)

    def descendants(self, segments: list[str]) -> int:
        """Discovered pages anywhere below this path."""
        return self._descendants.get("/".join(segments), 0)

    def many_links(self, count: int | None) -> bool:
        """Far more internal links than the site's median crawled page."""
        if count is None or self._link_median is None:
            return False
        return count >= _MANY_LINKS_MIN and count >= _MANY_LINKS_FACTOR * self._link_median


_EMPTY_SHAPE = SiteShape(())


def infer_page_type(
    path: str,
    *,
    shape: SiteShape = _EMPTY_SHAPE,
    title: str | None = None,
    internal_links: int | None = None,
    changefreq: str | None = None,
    news: bool = False,
    videos: int = 0,
) -> PageType:
    """The page type of one path (rules in the module docstring). Never raises."""
    segments = path_segments(path)
    if not segments:
        return "home"
    guess, vague = _from_url(path.lower(), segments, shape, news)
    if not vague:
        return guess
    hinted = _from_hints(title, shape.many_links(internal_links), changefreq, videos)
    return hinted or guess


def _from_url(
    path: str, segments: list[str], shape: SiteShape, news: bool
) -> tuple[PageType, bool]:
    """(type, vague): vague types may still be refined by hints."""
    last = segment_stem(segments[-1])
    words = [word for word in _WORD_SPLIT.split(last) if word]
    if last in _FORM_SEGMENTS or (len(words) <= 3 and words and words[0] in _FORM_WORDS):
        return "form", False
    if len(words) <= 3 and any(word in _DATA_WORDS for word in words):
        return "data", False
    if (
        is_date_archive(path)
        or last in _LISTING_SEGMENTS
        or (len(segments) >= 2 and segments[-2] in _LISTING_PARENTS)
    ):
        return "listing", False
    if news or _DATED_POST.search(path) or any(s in _ARTICLE_SECTIONS for s in segments[:-1]):
        return "article", False
    long_leaf = len(words) >= _LONG_SLUG_WORDS and shape.descendants(segments) == 0
    if len(segments) == 1:
        if last in IA_KEYWORDS:
            return "pillar", False
        if long_leaf:
            return "article", False
        if shape.children(segments) >= _LISTING_CHILDREN:
            return "listing", False
        return "pillar", True
    if long_leaf:
        return "article", False
    if shape.descendants(segments) > 0 or len(words) <= _SHORT_SLUG_WORDS:
        return "subsection", True
    return "page", True


def _from_hints(
    title: str | None, many_links: bool, changefreq: str | None, videos: int
) -> PageType | None:
    if title:
        words = _TITLE_WORDS.findall(title.lower())
        found = set(words)
        # "sign up" and "get in touch" are two or three words in a title.
        if found & _TITLE_FORM or "sign up" in title.lower() or "get in touch" in title.lower():
            return "form"
        if found & _TITLE_DATA:
            return "data"
        if found & _TITLE_LISTING:
            return "listing"
        if len(words) >= _LONG_TITLE_WORDS:
            return "article"
    if many_links:
        return "listing"
    if changefreq is not None and changefreq.strip().lower() in _FREQUENT:
        return "listing"
    if videos > 0:
        return "data"
    return None
