"""The site report's numbers: a walk's (or a saved inventory's) shape, aggregated.

`ReportBuilder` holds aggregates only, never the URLs: counts per path group (depth 1, and depth 2
nested inside), per lastmod month, per sitemap, per hreflang locale, and the first 50 junk and
sign-in URLs. Every table is capped, with an `other` bucket for what arrives once it is full, so
memory stays bounded however big the site is, and so does the page (30-60 kB for the 1M-URL
sites of `benchmarks/report.py`, under 2 MB with every cap full).

The per-URL work is the budget that matters (the report must not slow the walk noticeably), so
each batch is handled as one joined string: one regex pass reads every URL's first two path
segments, and the junk and sign-in rules only run on the few URLs that a plain substring search
flags as candidates. Group keys are still those of `group_key`: the regex only cuts each URL
down to a short prefix, and `group_key` decides what that prefix means.

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

from ._core import Batch
from ._groups import OTHER, ROOT, group_key, split_groups, subgroup_key
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

_KEY_CACHE_MAX = 50_000
_COPY_LOOKUPS = 8  # `-2` candidates looked up one by one in a batch; more: the whole batch

# Cuts each line of a batch to `scheme://host/seg1` and the second non-empty segment.
_PREFIX = re.compile(r"^([^/\n]*(?://)?[^/?#\n]*(?:/+[^/?#\n]+)?)(?:/+([^/?#\n]+))?", re.M)
# With a walk's URLs, lines that start with the batch's origin lose it first: the regex then
# scans two short path segments instead of the scheme and host as well.
_ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://[^/?#\n]*")
_PATH_PREFIX = re.compile(r"^(/+[^/?#\n]+(?:/+[^/?#\n]+)?|[^\n]*)", re.M)  # one string a line
_TWO_SEGMENTS = re.compile(r"/+([^/?#\n]+)(?:/+([^/?#\n]+))?")
# A line whose head (its first two segments) holds a doubled slash: `//a` or `/a//b`.
_ODD_HEAD = re.compile(r"^/(?:[^/?#\n]+/)?/", re.M)
_NOT_SEGMENT_LED = re.compile(r"^(?!/[^/?#\n])[^\n]*$", re.M)
_FIRST_SEGMENT = re.compile(r"^/([^/?#\n]+)", re.M)
_MONTH = re.compile(rf"([0-9]{{4}}-{MONTH_NUMBER})(?![0-9])")
_FIRST_8 = operator.itemgetter(slice(0, 8))  # a month and the character after it
# urlsplit strips and drops these, so a line holding one takes the exact, slower path.
_UNUSUAL = re.compile(r"[\x00-\x09\x0b-\x20\x7f]")
_AUTH_WORDS = spellings(AUTH_WORDS)  # what every sign-in path holds, for `str.find`


def _on_lines(regex: str) -> str:
    """A path regex read over a batch's lines, where a path ends at a query, a fragment or the
    line's end and no longer starts the line (an origin may come first)."""
    regex = regex.removeprefix("^").replace("[^/]", "[^/?#\n]")
    return regex.replace("(?:/|$)", "(?:[/?#\n]|$)")


def _junk_prefilter() -> tuple[tuple[str, ...], tuple[re.Pattern[str], ...], re.Pattern[str]]:
    """The cheap scan for junk candidates, from the junk rows: a literal that every match of a
    row holds (`/test`, `/staging`: `str.find` over the whole batch beats any regex scan), else
    the row's regex over the lines; the copy rows by their suffix, which also locates copies.
    The tests check the scan against `junk_filter` itself."""
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
            shapes.append(_on_lines(regex))
    words = list(dict.fromkeys(words))
    needed = tuple(w for w in words if not any(o in w for o in words if o != w))  # `/test`
    copies = "|".join(row_core(row) for row in JUNK_ROWS if row.check == "copy")
    # One regex for the shapes: they all start with `/`, and sre factors a common prefix out.
    patterns = (re.compile("|".join(shapes), re.M),) if shapes else ()
    return needed, patterns, re.compile(f"({copies})(?:[/?#\n]|$)", re.M)


_JUNK_WORDS, _JUNK_SHAPES, _JUNK_COPY = _junk_prefilter()


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
        self._keys: dict[str, str | None] = {}
        # Once the depth-2 table is full: each held group by its path ("/docs/api").
        self._held_heads: dict[str, tuple[str, str]] | None = None

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
        urls = batch.urls()
        lastmods, sitemaps, alternates, declaring, declared = batch.report_counts()
        self.declared_alternates = True
        self._add_urls(urls, normalized=True)
        alternate_rows = sum(n for _, n in alternates)
        self.urls += len(urls) - alternate_rows
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
        self._add_urls(list(urls))
        self._add_lastmods(lastmods)
        self._add_sitemaps([s or "" for s in sitemaps])

    # -- aggregation ------------------------------------------------------------------------

    def _add_urls(self, urls: list[str], *, normalized: bool = False) -> None:
        """Path groups, junk and sign-in URLs of page URLs and alternates alike (as `groups`)."""
        if not urls:
            return
        text = "\n".join(urls)
        origin = ""
        if text.count("\n") != len(urls) - 1:  # a line break inside a URL (an inventory's)
            self._add_urls_exact(urls)
            text = "\n".join(u.replace("\n", " ").replace("\r", " ") for u in urls)
        # A walk's URLs are normalized: no whitespace or control characters to look for.
        elif not normalized and _UNUSUAL.search(text):
            self._add_urls_exact(urls)
        elif normalized and (match := _ORIGIN.match(urls[0])) is not None:
            origin = match.group()
            text = f"\n{text}".replace(f"\n{origin}", "\n")[1:]
            self._count_paths(origin, text)
        else:
            self._count_prefixes(Counter(_PREFIX.findall(text)))
        # From here on `text` is the batch with its common origin cut off each line (if any).
        lowered = _lowered(text)
        junk = _spans(lowered, _JUNK_WORDS, (*_JUNK_SHAPES, _JUNK_COPY))
        if junk:
            self._find_junk(origin, text, lowered, junk)
        auth = _spans(lowered, _AUTH_WORDS, ())
        if auth:
            self._find_auth([_whole(origin, text[a:b]) for a, b in sorted(auth)])

    def _add_urls_exact(self, urls: list[str]) -> None:
        counts: Counter[tuple[str, str]] = Counter()
        for url in urls:
            k1 = group_key(url, 1)
            if k1 is None or k1 == ROOT:
                self._count(k1, None, 1)
                continue
            k2 = group_key(url, 2) or k1
            counts[(k1, k2)] += 1
        for (k1, k2), n in counts.items():
            self._count(k1, k2, n)

    def _count_paths(self, origin: str, stripped: str) -> None:
        """`_count_prefixes` for lines that lost their common `origin` where they had it."""
        heads = Counter(_PATH_PREFIX.findall(stripped))
        if self._subgroup_count < MAX_SUBGROUPS or _ODD_HEAD.search(stripped):
            self._count_heads(origin, heads)
        else:
            self._count_heads_full(origin, stripped, heads)

    def _count_heads(self, origin: str, heads: Counter[str]) -> None:
        for head, n in heads.items():
            segments = _TWO_SEGMENTS.fullmatch(head)
            if segments is not None:
                k1 = self._key(f"{origin}/{segments.group(1)}")
                second = segments.group(2)
                if k1 is None or k1 == ROOT:
                    self._count(k1, None, n)
                else:
                    self._count(k1, subgroup_key(k1, second) if second else k1, n)
                continue
            # The origin alone or with a query, or a URL of another origin: the general path.
            match = _PREFIX.match(_whole(origin, head))
            assert match is not None  # the pattern matches any line, if only emptily
            self._count_prefixes(Counter({(match.group(1), match.group(2) or ""): n}))

    def _count_heads_full(self, origin: str, stripped: str, heads: Counter[str]) -> None:
        """`_count_heads` once the depth-2 table is full, in time per distinct first segment
        rather than per distinct head: a site of a million unique slugs has a million heads.

        No depth-2 group can be added any more, so a head either names one already held (found
        by its path, as no head of this batch has a doubled slash) or goes to its parent's
        `other`; parents are counted from the first segments alone."""
        held = self._held_heads
        if held is None:
            held = self._held_heads = {
                child[:-2]: (k1, child)
                for k1, sub in self.subgroups.items()
                for child in sub.children
            }
        placed: Counter[str] = Counter()
        for head in heads.keys() & held.keys():
            parent, child = held[head]
            n = heads[head]
            self.subgroups[parent].children[child] += n
            placed[parent] += n
        others = _NOT_SEGMENT_LED.findall(stripped)  # their heads are the whole lines
        if others:
            self._count_heads(origin, Counter(others))
        for segment, n in Counter(_FIRST_SEGMENT.findall(stripped)).items():
            group = self._key(f"{origin}/{segment}")
            if group is None or (group not in self.groups and len(self.groups) >= MAX_GROUPS):
                self.group_other += n
                continue
            self.groups[group] += n
            rest = n - placed[group]
            if rest:
                sub = self.subgroups.get(group)
                if sub is None:
                    sub = self.subgroups[group] = _Sub()
                sub.other += rest

    def _count_prefixes(self, prefixes: Counter[tuple[str, str]]) -> None:
        for (prefix, second), n in prefixes.items():
            k1 = self._key(prefix)
            if k1 is None or k1 == ROOT:
                self._count(k1, None, n)
            else:
                self._count(k1, subgroup_key(k1, second) if second else k1, n)

    def _key(self, prefix: str) -> str | None:
        """`group_key(prefix, 1)`, cached: a site has few first segments and many URLs."""
        try:
            return self._keys[prefix]
        except KeyError:
            if len(self._keys) >= _KEY_CACHE_MAX:
                self._keys.clear()
            key = self._keys[prefix] = group_key(prefix, 1)
            return key

    def _group_of(self, url: str) -> str:
        match = _PREFIX.match(url)
        if match is None or "\n" in url or _UNUSUAL.search(match.group(1)):
            return group_key(url, 1) or OTHER
        return self._key(match.group(1)) or OTHER

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
            group = self._group_of(alternate_of or "")
            _bump(self.group_hreflang, group, MAX_GROUPS)
            self._group_locale(group, locale)

    def _group_locale(self, group: str, locale: str, n: int = 1) -> None:
        pair = (group, locale)
        if pair in self.group_locales or len(self.group_locales) < MAX_LOCALE_GROUPS:
            self.group_locales[pair] += n

    def _find_junk(self, origin: str, text: str, lowered: str, spans: set[tuple[int, int]]) -> None:
        """Run the junk rows on the candidate lines of a batch (and their context)."""
        for url, pattern in junk_filter(_junk_context(origin, text, lowered, spans)).junk:
            self.junk_count += 1
            self.junk_patterns[pattern] += 1
            if len(self.junk) < LIST_LIMIT:
                self.junk.append((url, pattern))

    def _find_auth(self, candidates: list[str]) -> None:
        for url in candidates:
            if classify(url, self.site or url).reason != "requires-auth":
                continue
            self.auth_count += 1
            _bump(self.auth_groups, self._group_of(url), MAX_GROUPS)
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


def _lowered(text: str) -> str:
    """`text.lower()`, save the lines where case folding moves characters (spans would not
    match `text` any more): those are kept as they are."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "\n".join(
        low if len(low) == len(line) else line
        for line, low in ((line, line.lower()) for line in text.split("\n"))
    )


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


def _junk_context(origin: str, text: str, lowered: str, spans: set[tuple[int, int]]) -> list[str]:
    """The URLs the junk rows judge in a batch: the candidate lines (`spans`), plus the lines a
    `-2` copy among them would be a copy of (the copy rows compare URLs with each other)."""
    originals = [  # what each `-2` copy would be a copy of: the line without its suffix
        line[: m.start(1)] + line[m.end(1) :]
        for line in (lowered[a:b] for a, b in spans)
        for m in _JUNK_COPY.finditer(line)
    ]
    if len(originals) > _COPY_LOOKUPS:  # each lookup scans the batch: judge it whole instead
        return [_whole(origin, line) for line in text.split("\n")]
    context = set(spans)
    padded = "\n" + lowered
    for original in originals:
        context.update(_same_path_lines(padded, original))
    return [_whole(origin, text[a:b]) for a, b in sorted(context)]


def _whole(origin: str, line: str) -> str:
    """The URL of a line that may have lost the batch's common origin."""
    return line if not origin or _ORIGIN.match(line) else origin + line


def _same_path_lines(padded: str, url: str) -> list[tuple[int, int]]:
    """Spans (in the batch without the leading newline of `padded`) of the lines whose URL has
    `url`'s path (query, fragment and a trailing slash aside), as the junk copy rule compares
    them."""
    cut = len(url)
    scheme = url.find("://")
    for sep in "?#":
        at = url.find(sep, scheme + 3 if scheme >= 0 else 0)
        if at >= 0:
            cut = min(cut, at)
    stem = url[:cut].rstrip("/")
    spans: list[tuple[int, int]] = []
    needle = "\n" + stem
    pos = padded.find(needle)
    while pos >= 0:
        end = pos + len(needle)
        rest = padded[end : end + 2]
        if rest[:1] in ("", "\n", "?", "#") or (
            rest[:1] == "/" and rest[1:2] in ("", "\n", "?", "#")
        ):
            line_end = padded.find("\n", end)
            spans.append((pos, (len(padded) if line_end < 0 else line_end) - 1))
        pos = padded.find(needle, end)
    return spans


def _spans(
    lowered: str, words: Sequence[str], patterns: Sequence[re.Pattern[str]]
) -> set[tuple[int, int]]:
    """(start, end) of every line of `lowered` that holds one of `words` or `patterns`.

    Substring search runs in C at memory speed and most batches hold none of the words, so
    the Python loop only ever runs per occurrence, never per URL."""
    found: set[tuple[int, int]] = set()

    def line_at(pos: int) -> tuple[int, int]:
        end = lowered.find("\n", pos)
        return lowered.rfind("\n", 0, pos) + 1, len(lowered) if end < 0 else end

    for word in words:
        pos = lowered.find(word)
        while pos >= 0:
            span = line_at(pos)
            found.add(span)
            pos = lowered.find(word, span[1])
    for pattern in patterns:
        match = pattern.search(lowered)
        while match is not None:
            span = line_at(match.start())
            found.add(span)
            match = pattern.search(lowered, span[1])
    return found
