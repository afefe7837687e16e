"""The site report's numbers: a walk's (or a saved inventory's) shape, aggregated.

`ReportBuilder` holds aggregates only, never the URLs: counts per path group (depth 1, and depth 2
nested inside), per lastmod month, per sitemap, per hreflang locale, and the first 50 junk and
sign-in URLs. Every table is capped, with an `other` bucket for what arrives once it is full, so
memory stays bounded however big the site is, and so does the page (30-60 kB for the 1M-URL
sites of `benchmarks/report.py`, under 2 MB with every cap full).

The per-URL work is the budget that matters (the report must not slow the walk noticeably), so
the core reads each batch's URLs in one pass (`report_urls`): their path groups (`group_key` at
depth 2, counted per batch), and the few URLs the junk and sign-in rules must judge. The rules
stay here and in `_junk` / `_urls`; the core is handed what they look for (`_RULES`) and only
picks candidates, so this module takes a step per distinct group and per candidate, not per URL.

The junk rows that depend on other URLs (`-2` copies, numbered siblings) are judged within each
batch (up to 1,000 URLs, usually neighbours in one sitemap): a copy whose original is listed far
away is not seen, because remembering every path would defeat the memory bound.

`ReportBuilder.data` hands them over as a `ReportData` record, which `_report_html` renders
as one self-contained HTML page.
"""

from __future__ import annotations

import operator
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ._core import Batch, UrlRules, report_urls
from ._groups import OTHER, group_key, split_groups
from ._junk import junk_filter
from ._models import Entry
from ._rules import (
    AUTH_WORDS,
    JUNK_ROWS,
    MONTH_NUMBER,
    path_regex,
    required_literal,
    row_core,
    spellings,
)
from ._urls import classify

__all__ = ["ReportBuilder", "ReportData"]

MAX_GROUPS = 2_000  # depth-1 groups counted exactly; later new ones go to `other`
MAX_SUBGROUPS = 20_000  # depth-2 groups across all parents; later new ones go to the parent's other
MAX_MONTHS = 1_200  # a century of months; later new ones go to `other`
MAX_SITEMAPS = 5_000
MAX_LOCALES = 500
MAX_LOCALE_GROUPS = 20_000  # (group, locale) pairs
LIST_LIMIT = 50  # URLs kept per list (junk, sign-in, malformed)
TREEMAP_CHILDREN = 12  # depth-2 groups handed on per group (the treemap's); the rest is `other`

_MONTH = re.compile(rf"([0-9]{{4}}-{MONTH_NUMBER})(?![0-9])")
_FIRST_8 = operator.itemgetter(slice(0, 8))  # a month and the character after it


def _url_rules() -> UrlRules:
    """What the core looks for in each lowercased path, from the junk rows and the sign-in words:
    a literal that every match of a row holds (`/test`, `/staging`: found faster than any
    regex), else the row's regex; the copy rows by their suffix, which also names the URL a copy
    would be a copy of. The tests check the candidates against `junk_filter` and `classify`."""
    words: list[str] = []
    shapes: list[str] = []
    for row in JUNK_ROWS:
        if row.check == "copy":
            continue  # by their suffix, below
        regex = path_regex(row.pattern)
        word = required_literal(regex)
        if len(word) >= 3:  # shorter ones are on most lines
            words.append(word)
        else:
            shapes.append(regex)
    words = list(dict.fromkeys(words))
    needed = [w for w in words if not any(o in w for o in words if o != w)]  # `/test`
    copies = "|".join(row_core(row) for row in JUNK_ROWS if row.check == "copy")
    copy = f"({copies})(?:/|$)" if copies else None
    return UrlRules(needed, shapes, copy, list(spellings(AUTH_WORDS)))


_RULES = _url_rules()


@dataclass(slots=True)
class _Sub:
    """Depth-2 counts inside one depth-1 group."""

    children: Counter[str] = field(default_factory=Counter)
    other: int = 0


@dataclass(frozen=True, slots=True)
class ReportData:
    """What the report shows, as `ReportBuilder.data` hands it over: counts and capped lists
    only, copied, so the builder may go on counting. Every field is a `ReportBuilder` one of
    the same name, save `groups` (its `group_table`) and `children` (its `children_of`, for the
    groups of that table that have depth-2 groups)."""

    urls: int
    alternates: int
    groups: list[tuple[str, int]]
    children: dict[str, list[tuple[str, int]]]
    months: Counter[str]
    month_other: int
    no_lastmod: int
    bad_lastmod: int
    sitemaps: Counter[str]
    sitemap_other: int
    locale_pages: Counter[str]
    locale_rows: Counter[str]
    group_hreflang: Counter[str]
    group_locales: Counter[tuple[str, str]]
    declared_alternates: bool
    junk: list[tuple[str, str]]
    junk_count: int
    junk_patterns: Counter[str]
    auth: list[str]
    auth_count: int
    auth_groups: Counter[str]

    @classmethod
    def of(cls, b: ReportBuilder) -> ReportData:
        groups = b.group_table()
        return cls(
            urls=b.urls,
            alternates=b.alternates,
            groups=groups,
            children={k: b.children_of(k) for k, _ in groups if k in b.subgroups},
            months=Counter(b.months),
            month_other=b.month_other,
            no_lastmod=b.no_lastmod,
            bad_lastmod=b.bad_lastmod,
            sitemaps=Counter(b.sitemaps),
            sitemap_other=b.sitemap_other,
            locale_pages=Counter(b.locale_pages),
            locale_rows=Counter(b.locale_rows),
            group_hreflang=Counter(b.group_hreflang),
            group_locales=Counter(b.group_locales),
            declared_alternates=b.declared_alternates,
            junk=list(b.junk),
            junk_count=b.junk_count,
            junk_patterns=Counter(b.junk_patterns),
            auth=list(b.auth),
            auth_count=b.auth_count,
            auth_groups=Counter(b.auth_groups),
        )


class ReportBuilder:
    """Streaming aggregates of one site for the HTML report. Memory is bounded by the caps."""

    def __init__(self, site: str | None = None) -> None:
        self.site = site
        self.urls = 0  # page URLs, alternates excluded
        self.alternates = 0
        self.groups: Counter[str] = Counter()
        self.group_other = 0  # URLs that are not absolute http(s), or of groups past the cap
        self.subgroups: dict[str, _Sub] = {}
        self._subgroup_count = 0
        self.months: Counter[str] = Counter()
        self.month_other = 0
        self.no_lastmod = 0
        self.bad_lastmod = 0
        self.sitemaps: Counter[str] = Counter()
        self.sitemap_other = 0
        self.locale_pages: Counter[str] = Counter()  # pages declaring an alternate in a locale
        self.locale_rows: Counter[str] = Counter()  # alternates emitted as entries, by locale
        self.group_hreflang: Counter[str] = Counter()  # pages (or alternates) with hreflang
        self.group_locales: Counter[tuple[str, str]] = Counter()
        self.declared_alternates = False  # whether entries carried their hreflang links
        self.junk: list[tuple[str, str]] = []
        self.junk_count = 0
        self.junk_patterns: Counter[str] = Counter()
        self.auth: list[str] = []
        self.auth_count = 0
        self.auth_groups: Counter[str] = Counter()

    # -- input ------------------------------------------------------------------------------

    def add_entries(self, batch: Sequence[Entry]) -> None:
        """One batch of a walk as entries (they carry their hreflang links): as `add_batch` of
        the same rows."""
        self.add_batch(Batch.from_entries(batch))

    def add_batch(self, batch: Batch) -> None:
        """One native batch of a walk: the core counts the rows' lastmods, sitemaps and hreflang
        values, so this takes a step per distinct value, not per row."""
        if not len(batch):
            return
        lastmods, sitemaps, alternates, declaring, declared = batch.report_counts()
        self.declared_alternates = True
        self._add_places(*batch.report_urls(_RULES))
        alternate_rows = sum(n for _, n in alternates)
        self.urls += len(batch) - alternate_rows
        self.alternates += alternate_rows
        self._add_lastmod_heads(lastmods)
        self._add_sitemap_counts(sitemaps)
        for hreflang, n in alternates:
            _bump(self.locale_rows, _locale(hreflang), MAX_LOCALES, n)
        for group, n in declaring:
            _bump(self.group_hreflang, group or OTHER, MAX_GROUPS, n)
        for group, hreflang, n in declared:
            locale = _locale(hreflang)
            _bump(self.locale_pages, locale, MAX_LOCALES, n)
            self._group_locale(group or OTHER, locale, n)

    def add_rows(
        self,
        urls: Sequence[str],
        lastmods: Sequence[str | None],
        sitemaps: Sequence[str | None],
        hreflangs: Sequence[str | None],
        alternate_ofs: Sequence[str | None],
    ) -> None:
        """Rows of a saved inventory, column by column (the columns have equal lengths)."""
        alternates = 0
        for hreflang, alternate_of in zip(hreflangs, alternate_ofs, strict=True):
            if alternate_of is not None or hreflang is not None:
                alternates += 1
                self._alternate_row(hreflang, alternate_of)
        self.urls += len(urls) - alternates
        self.alternates += alternates
        self._add_urls(urls)
        self._add_lastmods(lastmods)
        self._add_sitemaps([s or "" for s in sitemaps])

    # -- aggregation ------------------------------------------------------------------------

    def _add_urls(self, urls: Sequence[str]) -> None:
        """Path groups, junk and sign-in URLs of page URLs and alternates alike (as `groups`)."""
        if urls:
            self._add_places(*report_urls(list(urls), _RULES))

    def _add_places(
        self,
        places: list[tuple[str | None, str | None, int]],
        junk: list[str],
        auth: list[str],
    ) -> None:
        """What the core read of a batch's URLs (`report_urls`): counts per path group, and the
        candidates of the junk and sign-in rules, which are judged here."""
        for group, subgroup, n in places:
            self._count(group, subgroup, n)
        if junk:
            self._find_junk(junk)
        if auth:
            self._find_auth(auth)

    def _count(self, k1: str | None, k2: str | None, n: int) -> None:
        if k1 is None or (k1 not in self.groups and len(self.groups) >= MAX_GROUPS):
            self.group_other += n
            return
        self.groups[k1] += n
        if k2 is None:
            return
        sub = self.subgroups.get(k1)
        if sub is None:
            sub = self.subgroups[k1] = _Sub()
        if k2 in sub.children:
            sub.children[k2] += n
        elif self._subgroup_count < MAX_SUBGROUPS:
            sub.children[k2] = n
            self._subgroup_count += 1
        else:
            sub.other += n

    def _add_lastmods(self, lastmods: Sequence[str | None]) -> None:
        self._add_lastmod_heads(Counter(map(_FIRST_8, [v or "" for v in lastmods])).items())

    def _add_lastmod_heads(self, heads: Iterable[tuple[str, int]]) -> None:
        """Lastmods counted by their first 8 characters ("" for none): a month and what follows."""
        heads = list(heads)
        self.no_lastmod += sum(n for head, n in heads if not head)
        months, bad = _months(heads)
        self.bad_lastmod += bad
        for month, n in months.items():
            if month in self.months or len(self.months) < MAX_MONTHS:
                self.months[month] += n
            else:
                self.month_other += n

    def _add_sitemaps(self, sitemaps: Sequence[str]) -> None:
        first = sitemaps[0] if sitemaps else ""
        # A batch nearly always comes from one document: counting identical objects is cheap.
        counts = (
            {first: len(sitemaps)} if sitemaps.count(first) == len(sitemaps) else Counter(sitemaps)
        )
        self._add_sitemap_counts(counts.items())

    def _add_sitemap_counts(self, counts: Iterable[tuple[str, int]]) -> None:
        for sitemap, n in counts:
            if sitemap in self.sitemaps or len(self.sitemaps) < MAX_SITEMAPS:
                self.sitemaps[sitemap] += n
            else:
                self.sitemap_other += n

    def _alternate_row(self, hreflang: str | None, alternate_of: str | None) -> None:
        locale = _locale(hreflang)
        _bump(self.locale_rows, locale, MAX_LOCALES)
        if not self.declared_alternates:
            group = group_key(alternate_of or "", 1) or OTHER
            _bump(self.group_hreflang, group, MAX_GROUPS)
            self._group_locale(group, locale)

    def _group_locale(self, group: str, locale: str, n: int = 1) -> None:
        pair = (group, locale)
        if pair in self.group_locales or len(self.group_locales) < MAX_LOCALE_GROUPS:
            self.group_locales[pair] += n

    def _find_junk(self, candidates: list[str]) -> None:
        """Run the junk rows on a batch's candidates (with the URLs a copy among them could be
        a copy of: the copy rows compare URLs with each other)."""
        for url, pattern in junk_filter(candidates).junk:
            self.junk_count += 1
            self.junk_patterns[pattern] += 1
            if len(self.junk) < LIST_LIMIT:
                self.junk.append((url, pattern))

    def _find_auth(self, candidates: list[str]) -> None:
        for url in candidates:
            if classify(url, self.site or url).reason != "requires-auth":
                continue
            self.auth_count += 1
            _bump(self.auth_groups, group_key(url, 1) or OTHER, MAX_GROUPS)
            if len(self.auth) < LIST_LIMIT:
                self.auth.append(url)

    # -- results ----------------------------------------------------------------------------

    def data(self) -> ReportData:
        """A copy of the aggregates, for `_report_html.render_report`."""
        return ReportData.of(self)

    def group_table(self) -> list[tuple[str, int]]:
        """Groups of at least 3 URLs, largest first, `other` last (as `sitescout groups`)."""
        big, small = split_groups(self.groups)
        other = self.group_other + sum(self.groups[k] for k in small)
        return [(k, self.groups[k]) for k in big] + ([(OTHER, other)] if other else [])

    def children_of(self, group: str) -> list[tuple[str, int]]:
        """Depth-2 groups of `group`, largest first, with `other` (the rest) last."""
        sub = self.subgroups.get(group)
        if sub is None:
            return []
        ranked = sorted(sub.children.items(), key=lambda kn: (-kn[1], kn[0]))
        shown = ranked[:TREEMAP_CHILDREN]
        rest = sub.other + sum(n for _, n in ranked[TREEMAP_CHILDREN:])
        return shown + ([(OTHER, rest)] if rest else [])


def _bump(counter: Counter[str], key: str, cap: int, n: int = 1) -> None:
    """Count `key` (`n` times), or `other` once `cap` distinct keys are held."""
    counter[key if key in counter or len(counter) < cap else OTHER] += n


def _locale(hreflang: str | None) -> str:
    """The locale an hreflang value is counted under."""
    return (hreflang or "").strip().lower() or "(none)"


def _months(heads: Iterable[tuple[str, int]]) -> tuple[Counter[str], int]:
    """The lastmods per month from their counted first 8 characters, and how many are set but
    not a date."""
    months: Counter[str] = Counter()
    bad = 0
    for head, n in heads:
        match = _MONTH.match(head)
        if match is not None:
            months[match.group(1)] += n
        elif head:
            bad += n
    return months, bad
