"""The rules as data: every pattern, word list and weight the URL rules apply, in one place.

To change a rule, change it here: the modules that apply the rules read them from this module and
derive what they need (a compiled matcher, the report's cheap prefilter, the crawl log's rule
texts), so nothing is written twice. Readers:

* `JUNK_ROWS` (JUNK.md, §8): `_junk` matches them, `_report` derives its prefilter from them;
* `AUTH_*` (§8, SCORING.md): `_urls` flags the paths, `_select` scores them down, `_report`
  lists them;
* `PAGINATION_*` (§8): `_urls` drops the pages, `_junk` never calls them junk, `_select` does not
  take `/page/2/` for a version marker;
* dates (`DATE_ARCHIVES`, `YEARLY_ARCHIVE`, `DATED_POST`): `_pagetype` (listing and article pages,
  and the score's archive rule through it), `_junk` (never junk), `_report` (lastmod months);
* `WEIGHTS` and `IA_KEYWORDS` (SCORING.md): `_select` scores with them and states them
  (`Weight.text`), `_pagetype` types pages with the keywords;
* `TRACKING_PREFIXES`/`TRACKING_NAMES` (§6): normalization drops them in the native core
  (`rust/src/urls.rs` holds its own copy; `tests/test_rules.py` holds the two equal);
* `WELL_KNOWN_SITEMAPS` (§2): `_discover` tries them when robots.txt lists no sitemap;
* `MIN_GROUP_SIZE` (§9): `_groups` merges smaller path groups into `other`, for `_report` too.

Patterns are matched against the lowercased path. This module imports nothing of the package: it
is the bottom layer, and it is data plus the few helpers that turn a row into a regex.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final, Literal, NamedTuple

__all__ = [
    "AUTH_HEAD",
    "AUTH_PATH",
    "AUTH_PREFIXES",
    "AUTH_WORDS",
    "BARE_COPY_SEGMENTS",
    "DATED_POST",
    "DATE_ARCHIVE",
    "DATE_ARCHIVES",
    "IA_KEYWORDS",
    "JUNK_ROWS",
    "MIN_GROUP_SIZE",
    "MONTH_NUMBER",
    "OLD_COPY",
    "OLD_COPY_WORDS",
    "PAGE_WORD",
    "PAGINATION_FORM",
    "PAGINATION_HEAD",
    "PAGINATION_PATH",
    "PAGINATION_QUERY",
    "TRACKING_NAMES",
    "TRACKING_PREFIXES",
    "VERSION_WORD",
    "WEIGHTS",
    "WELL_KNOWN_SITEMAPS",
    "YEARLY_ARCHIVE",
    "JunkCheck",
    "JunkRow",
    "Weight",
    "path_regex",
    "required_literal",
    "row_core",
    "spellings",
]


def spellings(words: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    """Every spelling of words given as (word, *other spellings): `login` and `log-in`."""
    return tuple(spelling for word in words for spelling in word)


def _alternation(words: Iterable[str]) -> str:
    return "(?:" + "|".join(re.escape(word) for word in words) + ")"


def _either(items: Iterable[str]) -> str:
    """`a, b or c`."""
    *rest, last = items
    return f"{', '.join(rest)} or {last}" if rest else last


# --------------------------------------------------------------------------- junk (JUNK.md, §8)

# A row that needs the whole discovered set: `copy` rows remove `/x-2` only when `/x` was also
# discovered; `siblings` rows remove `/promo1` only when at least 3 numbered siblings exist.
JunkCheck = Literal["copy", "siblings"]


class JunkRow(NamedTuple):
    """One pattern of JUNK.md's table; a removed URL is recorded with `pattern`, as written there.

    `example` is a discovered set whose first path the row removes, `near_miss` one whose first
    path it keeps: they show what the row means, and the tests hold the row to them.
    """

    kind: str
    pattern: str
    example: tuple[str, ...]
    near_miss: tuple[str, ...]
    check: JunkCheck | None = None


# Checked in this order, except that the rows with a `check` come after all the others.
JUNK_ROWS: Final[tuple[JunkRow, ...]] = (
    JunkRow("test pages", r"^/test(\b|-|\d|/)", ("/test1/",), ("/testimonials/",)),
    JunkRow("test pages", "/test-content/", ("/blog/test-content",), ("/blog/test-contents/",)),
    JunkRow("test pages", r"/[a-z-]*-test(/|$)", ("/my-test/",), ("/my-tests/",)),
    JunkRow("WordPress sample page", "/sample-?page/", ("/samplepage/",), ("/sample-pages/",)),
    JunkRow("WordPress sample page", "/page-sample/", ("/page-sample",), ("/page-samples/",)),
    JunkRow("staging / dev copies", "/staging/", ("/staging",), ("/staging-area/",)),
    JunkRow("staging / dev copies", "/dev/", ("/dev",), ("/developers/",)),
    JunkRow("holiday campaigns", r"/holiday[0-9]+(/|$)", ("/holiday1/",), ("/holidays/",)),
    JunkRow("duplicate copies", r"/[^/]+-2(/|$)", ("/about-2/", "/about"), ("/about-2/",), "copy"),
    JunkRow("duplicate copies", r"/[^/]+-3(/|$)", ("/team-3", "/team/"), ("/team-3",), "copy"),
    JunkRow("duplicate copies", r"/[^/]+-4(/|$)", ("/a/b-4", "/a/b"), ("/a/b-4", "/b"), "copy"),
    JunkRow("numbered drafts", r"/[0-9]{3,}-[0-9]+(/|$)", ("/7389-2/",), ("/73-2/",)),
    JunkRow(
        "numbered one-offs",
        r"/[a-z]+[0-9]+(/|$)",
        ("/promo1/", "/promo2/", "/promo3/"),
        ("/promo1/", "/promo2/", "/other3/"),
        "siblings",
    ),
)

_SEGMENT_END = "(/|$)"
_LEADS: Final[dict[JunkCheck, str]] = {"copy": "/[^/]+", "siblings": "/"}
_GROUP = re.compile(r"(?<!\\)\((?!\?)")
_META = frozenset(".^$*+?{}[]\\|()")


def path_regex(pattern: str) -> str:
    """The regex a junk row runs: its groups non-capturing, and a trailing `/` matching at the
    end of the path as well (`/x/` → `/x(?:/|$)`): normalized paths often end bare."""
    regex = _GROUP.sub("(?:", pattern)
    return regex[:-1] + "(?:/|$)" if regex.endswith("/") else regex


def row_core(row: JunkRow) -> str:
    """What a row with a check looks for, its lead and end left to the check: the suffix `-N` of
    a copy row (`/[^/]+-N(/|$)`), the segment `[a-z]+[0-9]+` of the siblings row."""
    if row.check is None:
        raise ValueError(f"{row.pattern} has no check")
    lead = _LEADS[row.check]
    if not (row.pattern.startswith(lead) and row.pattern.endswith(_SEGMENT_END)):
        raise ValueError(f"a {row.check} row reads {lead}…{_SEGMENT_END}, not {row.pattern}")
    return row.pattern[len(lead) : -len(_SEGMENT_END)]


def required_literal(regex: str) -> str:
    """The longest run of plain characters that every match of `regex` holds ("" if none):
    `/test` of `^/test(?:\\b|-|\\d|/)`, `-test` of `/[a-z-]*-test(?:/|$)`.

    Only runs outside groups and classes count; a character a quantifier follows, an escape and
    any other special character end a run; a `|` outside groups leaves nothing certain."""
    best = run = ""
    depth = i = 0
    while i < len(regex):
        char = regex[i]
        if char == "[":  # skip the class; a `]` first in it is a member
            i += 2 if regex.startswith("[^", i) else 1
            i += regex.startswith("]", i)
            while regex[i] != "]":
                i += 2 if regex[i] == "\\" else 1
            char = "]"
        elif char == "{":  # a repeat count, `{3,}`: digits that are not in the path
            i = max(i, regex.find("}", i))
            char = "}"
        elif char == "\\":
            i += 1
        elif char == "|" and depth == 0:
            return ""
        depth += (char == "(") - (char == ")")
        quantified = i + 1 < len(regex) and regex[i + 1] in "*+?{"
        run = run + char if depth == 0 and char not in _META and not quantified else ""
        best = max(best, run, key=len)
        i += 1
    return best


# --------------------------------------------------------------------------- auth-walled (§8)

# A path segment that starts with one of these words (its plural too, after `my-` or `wp-`) is
# behind a sign-in: flagged `requires-auth` (§8) and scored down (SCORING.md). Not `/accounting`.
AUTH_WORDS: Final[tuple[tuple[str, ...], ...]] = (
    ("account",),
    ("dashboard",),
    ("admin",),
    ("login", "log-in"),
    ("signin", "sign-in"),
)
AUTH_PREFIXES: Final = ("my-", "wp-")
# What every auth-walled path holds; `AUTH_PATH` also ends the word there.
AUTH_HEAD: Final = f"/{_alternation(AUTH_PREFIXES)}?{_alternation(spellings(AUTH_WORDS))}"
AUTH_PATH: Final = AUTH_HEAD + "s?(?![a-z0-9])"

# --------------------------------------------------------------------------- pagination (§8)

PAGE_WORD: Final = "page"
PAGINATION_HEAD: Final = rf"/{PAGE_WORD}[/-]"  # what every path form holds
# `/page/N/`, `/page-N/` ending the path, and `?page=N`, `?paged=N`: dropped from page 2 on.
# Groups hold the number without leading zeros, compared as a string ("1" is the first page).
PAGINATION_PATH: Final = rf"{PAGINATION_HEAD}0*([1-9][0-9]*)/?$"
PAGINATION_QUERY: Final = rf"(?:^|&){PAGE_WORD}d?=0*([1-9][0-9]*)(?:&|$)"
# Any number, 0 and 1 too: JUNK.md never calls a pagination form junk.
PAGINATION_FORM: Final = rf"{PAGINATION_HEAD}[0-9]+/?$"

# --------------------------------------------------------------------------- dates

_YEAR = r"(?:19|20)[0-9]{2}"
_MONTH = r"(?:0?[1-9]|1[0-2])"  # a month segment: `5` or `05`
_DAY = r"(?:0?[1-9]|[12][0-9]|3[01])"
MONTH_NUMBER: Final = r"(?:0[1-9]|1[0-2])"  # two digits, as in `2024-05`
_DAY_NUMBER = r"(?:0[1-9]|[12][0-9]|3[01])"

# SCORING.md's date-like archives, as written there, with the regex of each.
DATE_ARCHIVES: Final[tuple[tuple[str, str], ...]] = (
    ("/YYYY/MM/DD/", f"{_YEAR}/{_MONTH}/{_DAY}"),
    ("/YYYY-MM-DD/", f"{_YEAR}-{MONTH_NUMBER}-{_DAY_NUMBER}"),
    ("/YYYY/MM/", f"{_YEAR}/{_MONTH}"),
)
# At the end of the path, trailing slash optional: `/blog/2024/05/` too, not `/2024/05/01/slug`.
DATE_ARCHIVE: Final = "(?:^|/)(?:" + "|".join(regex for _, regex in DATE_ARCHIVES) + ")/?$"
# A post below a date (`/2024/05/01/slug`, `/2024/05/slug`) or a dated slug (`/2024-05-01-x`).
DATED_POST: Final = (
    rf"/{_YEAR}/{_MONTH}/(?:{_DAY}/)?[^/]*[a-z][^/]*|/{_YEAR}-[0-9]{{2}}-[0-9]{{2}}-[a-z]"
)
# Yearly and monthly archive pages (`/2024/`, `/year-2024/`, `/2024-05/`): never junk (JUNK.md).
# No other prefix counts, so `/test-2024/` is still a test page.
YEARLY_ARCHIVE: Final = rf"(?:^|/)(?:year-|archives?-)?{_YEAR}(?:-{MONTH_NUMBER})?/?$"

# --------------------------------------------------------------------------- tracking (§6)

# Query parameters normalization removes, by name, case-insensitively: any name starting with a
# prefix, and exactly these names (`refresh` stays). Applied by the native core (rust/src/urls.rs).
TRACKING_PREFIXES: Final = ("utm_", "mc_")
TRACKING_NAMES: Final = ("gclid", "fbclid", "_ga", "ref", "source")

# --------------------------------------------------------------------------- discovery (§2)

# Tried in this order when robots.txt lists no sitemap; the first that is a sitemap wins.
WELL_KNOWN_SITEMAPS: Final = ("/sitemap.xml", "/sitemap_index.xml", "/sitemap-index.xml")

# --------------------------------------------------------------------------- path groups (§9)

# Path groups of fewer URLs are merged into `other` (`sitescout groups`, the report's treemap).
MIN_GROUP_SIZE: Final = 3

# --------------------------------------------------------------------------- scoring (SCORING.md)

# The IA-pillar keywords, verbatim: scoring and page-type inference share them.
IA_KEYWORDS: Final[frozenset[str]] = frozenset(
    "about pricing products product services service contact team blog help docs doc support "
    "features feature customers work case-studies story stories".split()
)
# The version/test marker: a `vN` word of a segment (`/v2/`, `/pricing-v2`, `/docs/v1.2`), a bare
# segment (not after `/page/`), or a segment with an old-copy word ending a word (`-archived`
# too; `/golden-oldies` is not an old copy).
VERSION_WORD: Final = r"(?:^|[-.])v[0-9]+(?:[-.]|$)"
BARE_COPY_SEGMENTS: Final = ("2", "3")
OLD_COPY_WORDS: Final[tuple[tuple[str, ...], ...]] = (
    ("old",),
    ("archive", "archived", "archives"),
    ("legacy",),
    ("deprecated",),
)
OLD_COPY: Final = "-" + _alternation(spellings(OLD_COPY_WORDS)) + "(?![a-z])"


class Weight(NamedTuple):
    """One row of SCORING.md: its points, `per` what they are multiplied by, and `when`."""

    points: float
    when: str = ""
    per: str = ""

    @property
    def text(self) -> str:
        """The row as the crawl log states it: `+5 × priority: the sitemap declared …`."""
        sign = "+" if self.points >= 0 else "−"
        head = f"{sign}{abs(self.points):g}" + (f" {self.per}" if self.per else "")
        return f"{head}: {self.when}" if self.when else head


_VERSION_WHEN = (
    f"/vN/, a bare {_either(f'/{segment}/' for segment in BARE_COPY_SEGMENTS)}, or "
    + "/".join(f"-{word[0]}" for word in OLD_COPY_WORDS)
)

# By the names the breakdowns and the crawl log use, in SCORING.md's order.
WEIGHTS: Final[dict[str, Weight]] = {
    "home": Weight(10, "the path is / (or empty)"),
    "ia-pillar-keyword": Weight(5, "the first path segment is an IA-pillar keyword"),
    "sitemap-priority": Weight(5, "the sitemap declared a <priority> (0.0–1.0)", "× priority"),
    "shallow-path": Weight(2, "exactly one path segment"),
    "extra-depth": Weight(-1, per="per segment beyond the first"),
    "date-like-archive": Weight(-3, _either(form for form, _ in DATE_ARCHIVES)),
    "version-test-marker": Weight(-3, _VERSION_WHEN),
    "auth-walled": Weight(-5, _either(f"/{word[0]}" for word in AUTH_WORDS)),
    "page-type-checklist": Weight(8, "the URL fills a slot of the page-type checklist"),
}
