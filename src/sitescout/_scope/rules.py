"""The scope estimate's rules, with no I/O (§9): its record, its arithmetic, its words.

`ScopeEstimate` is what an estimate returns; `url_range`, `expected_duration` and
`refine_range` are the §9 formulas; `looks_like_challenge` tells a bot-challenge page from
content; `LanguageTally` gathers the languages a site shows; `children_notes` and
`refined_note` word what the estimate learned about a top index's children. The documents
themselves are read in `documents.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from .._locale import SiblingLocales, multilingual, normalize_locale
from .._models import SITEMAP_KINDS, DocumentKind
from .._text import plural
from .._urls import url_path

# How a walk of the site would have to read it (§9 step 6); see `ScopeEstimate.transport`.
Transport = Literal["fetch", "browser", "local", "unknown"]

# §9: an index child holds at least ~1,000 URLs in practice and at most 50,000 (the protocol).
URLS_PER_CHILD_MIN = 1_000
URLS_PER_CHILD_MAX = 50_000
# §9: the walker keeps 8 documents in flight, about 1.5 s each; never promise less than 5 s.
WALK_CONCURRENCY = 8
SECONDS_PER_DOCUMENT = 1.5
MIN_DURATION = 5.0
HEAD_BYTES = 16 * 1024  # kept from a non-sitemap body to recognise a bot-challenge page
LOCALE_SEGMENTS = 3  # path segments examined for a locale (`/dotnet/en-us/...`)


@dataclass(frozen=True, slots=True)
class ScopeEstimate:
    """What `estimate_scope` learned. Ranges are `(low, high)`; times are seconds.

    `top_kind` is the kind of the top document read (None when none could be read);
    `sampled_children` counts the child sitemaps whose real size refined the range.
    """

    root_url: str
    top_sitemap_urls: tuple[str, ...]
    source: str
    url_estimate_range: tuple[int, int]
    sub_sitemap_count: int
    languages_detected: tuple[str, ...]
    expected_duration_seconds: float
    transport: Transport
    notes: tuple[str, ...] = ()
    source_url: str | None = None
    expected_duration_range: tuple[float, float] = (0.0, 0.0)
    top_kind: DocumentKind | None = None
    sampled_children: int = 0
    # The site's llms.txt (None when there is none) and its page links, aggregates not read.
    llms_txt: str | None = None
    llms_links: int = 0

    @property
    def found(self) -> bool:
        """Whether a top sitemap or an llms.txt with links was read (the CLI exits 3 when not)."""
        return self.top_kind is not None or self.llms_links > 0

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (tuples become lists when dumped)."""
        return asdict(self)


def url_range(kind: DocumentKind | None, urls: int, children: int) -> tuple[int, int]:
    """§9 step 3: `[n, n]` for a list of pages, `[c × 1,000, c × 50,000]` for an index."""
    if kind == "sitemapindex":
        return children * URLS_PER_CHILD_MIN, children * URLS_PER_CHILD_MAX
    if kind in SITEMAP_KINDS:
        return urls, urls
    return 0, 0


def expected_duration(children: int, *, read: bool = True) -> tuple[float, tuple[float, float]]:
    """§9 step 5: `c / 8 × 1.5 s` within `[½×, 1½×]`, each at least 5 s (a flat urlset: 5 s).

    Nothing read means nothing to walk: 0 s.
    """
    if not read:
        return 0.0, (0.0, 0.0)
    base = children / WALK_CONCURRENCY * SECONDS_PER_DOCUMENT
    low, high = max(MIN_DURATION, base / 2), max(MIN_DURATION, base * 1.5)
    return round(max(MIN_DURATION, base), 1), (round(low, 1), round(high, 1))


def refine_range(children: int, sampled: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """The range of an index of `children` from the real ranges of some of them.

    Sampled children count as they are; every other child is assumed to be as small as the
    smallest sample (low bound) and as large as the largest (high bound).
    """
    if not sampled:
        raise ValueError("no sampled child to refine from")
    rest = max(0, children - len(sampled))
    low = sum(lo for lo, _ in sampled) + rest * min(lo for lo, _ in sampled)
    high = sum(hi for _, hi in sampled) + rest * max(hi for _, hi in sampled)
    return low, high


# Markers of the bot-protection interstitials seen in place of robots.txt or sitemaps
# (Cloudflare, Imperva/Incapsula, PerimeterX, DataDome, AWS WAF, Sucuri, DDoS-Guard, Akamai).
_CHALLENGE_MARKERS = (
    b"cf-browser-verification",
    b"cf_chl_",
    b"challenges.cloudflare.com",
    b"/cdn-cgi/challenge-platform",
    b"<title>just a moment...</title>",
    b"attention required! | cloudflare",
    b"_incapsula_resource",
    b"incapsula incident id",
    b"px-captcha",
    b"captcha-delivery.com",
    b"awswafintegration",
    b"sucuri website firewall",
    b"ddos-guard",
    b"checking your browser before accessing",
    b"enable javascript and cookies to continue",
    b"errors.edgesuite.net",
)


def looks_like_challenge(head: bytes) -> bool:
    """Whether the start of a body is a bot-challenge page rather than content.

    Only asked of bodies that should have been robots.txt or a sitemap and are not, so a
    vendor's name in an ordinary page cannot make a site look blocked.
    """
    text = head[:HEAD_BYTES].lower()
    return any(marker in text for marker in _CHALLENGE_MARKERS)


def _hreflang_locale(value: str) -> str | None:
    """`en-US` → `en-us`; `zh-Hant-TW` → `zh-hant`; `x-default` → None."""
    parts = value.strip().replace("_", "-").split("-")
    for n in (len(parts), 2, 1):
        locale = normalize_locale("-".join(parts[:n]))
        if locale is not None:
            return locale
    return None


class LanguageTally:
    """The languages a site shows (§9 step 4), from the URLs and hreflang values the estimate saw.

    An hreflang value names a language by definition. A locale read from a path or a sitemap's
    name may be a word that only looks like one (`/it/` for IT, `/sm/leaf-1.xml.gz`,
    `/docs/id/123`), so those count only with the evidence the locale rules (§7) ask for: at
    least two distinct locales among the sitemaps' locales, or at one position of the page paths
    (`/fr/…` beside `/de/…`, `/dotnet/en-us/…` beside `/dotnet/fr/…`). A sitemap's locale is
    read with its siblings, the other children of the same index (`SiblingLocales`): a folder
    such as `/maps/en-gb/part-1.xml` counts when another locale sits at the same position.
    """

    def __init__(self) -> None:
        self._sure: set[str] = set()
        self._indexes: dict[str, SiblingLocales] = {}  # index URL -> its children's locales
        self._at: dict[int, set[str]] = {}

    def add_hreflang(self, value: str) -> None:
        locale = _hreflang_locale(value)
        if locale is not None:
            self._sure.add(locale)

    def add_sitemap(self, url: str, index: str = "") -> None:
        """A child sitemap `url` listed by the index `index`."""
        siblings = self._indexes.get(index)
        if siblings is None:
            siblings = self._indexes[index] = SiblingLocales()
        siblings.add(url)

    def add_page(self, url: str) -> None:
        segments = [s for s in url_path(url).split("/", LOCALE_SEGMENTS + 1) if s]
        for position, segment in enumerate(segments[:LOCALE_SEGMENTS]):
            locale = normalize_locale(segment) if len(segment) <= 10 else None
            if locale is not None:
                self._at.setdefault(position, set()).add(locale)
                return

    def languages(self) -> tuple[str, ...]:
        found = set(self._sure)
        sitemaps: set[str] = set()
        for siblings in self._indexes.values():
            sitemaps |= siblings.locales()
        for locales in (sitemaps, *self._at.values()):
            if multilingual(locales):
                found |= locales
        return tuple(sorted(found))


# -- the words -------------------------------------------------------------------------------------


def children_notes(
    children: int, remote: int, escaped: int, *, offline: bool, on_stdin: bool
) -> list[str]:
    """What the notes say about a top index's children: none, some unusable, some on disk
    (not in the duration), some that offline leaves unread (not in the range either).

    `remote` of the `children` would be fetched over the network; `escaped` relative paths
    could not be read; `on_stdin`: the index came from stdin, which has no folder.
    """
    notes: list[str] = []
    if escaped:
        n = escaped
        what = plural(n, "child sitemap path")
        if on_stdin:
            notes.append(f"{what} cannot be read: a relative path has no folder on stdin")
        else:
            notes.append(f"{what} {'leave' if n != 1 else 'leaves'} the index's folder: not read")
    if children == 0:
        notes.append("the top sitemap index lists no child sitemap")
        return notes
    from_disk = children - remote
    if offline and remote:
        notes.append(
            f"offline: {remote:,} of {children:,} child sitemaps are http(s) and "
            f"would not be fetched; the estimate counts the other {from_disk:,}"
        )
    elif from_disk == children:
        notes.append(
            f"all {from_disk:,} child sitemaps are read from disk; the expected duration does "
            "not count them"
        )
    elif from_disk:
        notes.append(
            f"{from_disk:,} of {children:,} child sitemaps are read from disk; the expected "
            f"duration counts only the {remote:,} fetched over the network"
        )
    return notes


def refined_note(counted: int, ranges: Sequence[tuple[int, int]]) -> str:
    """The note on a range refined from the real `ranges` of some of `counted` children."""
    sizes = ", ".join(f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}" for lo, hi in ranges)
    return (
        f"range refined from {len(ranges)} of {counted:,} child sitemaps sampled at "
        f"random ({sizes} URLs); the others are assumed alike"
    )
