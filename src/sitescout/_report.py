"""The site report: a walk's (or a saved inventory's) shape as one self-contained HTML file.

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

Rendering escapes every string that came from the site and ships a Content-Security-Policy that
allows no network access at all and only the page's own script (by nonce).
"""

from __future__ import annotations

import html
import math
import operator
import re
import secrets
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import squarify  # type: ignore[import-untyped, unused-ignore]

from ._budget import budget_label
from ._groups import MIN_GROUP_SIZE, OTHER, ROOT, group_key, split_groups, subgroup_key
from ._junk import junk_filter
from ._models import Entry, WalkReport
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

__all__ = ["InventoryInfo", "ReportBuilder", "render_report"]

MAX_GROUPS = 2_000  # depth-1 groups counted exactly; later new ones go to `other`
MAX_SUBGROUPS = 20_000  # depth-2 groups across all parents; later new ones go to the parent's other
MAX_MONTHS = 1_200  # a century of months; later new ones go to `other`
MAX_SITEMAPS = 5_000
MAX_LOCALES = 500
MAX_LOCALE_GROUPS = 20_000  # (group, locale) pairs
LIST_LIMIT = 50  # URLs kept per list (junk, sign-in, malformed)
MAX_SHOWN_URL = 300  # characters of one URL shown in the page; the rest is cut with …

TREEMAP_GROUPS = 40
TREEMAP_CHILDREN = 12
MONTHS_SHOWN = 120
TABLE_ROWS = 50
DOCUMENTS_SHOWN = 300
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


@dataclass(slots=True)
class InventoryInfo:
    """What reading a saved inventory file learned about the file itself."""

    path: str
    format: str
    rows: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    missing_columns: list[str] = field(default_factory=list)


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
        """One batch of a walk (entries carry their hreflang links)."""
        if not batch:
            return
        self.declared_alternates = True
        alternates = [e for e in batch if e.alternate_of is not None]
        self._add_urls([e.url for e in batch], normalized=True)
        self.urls += len(batch) - len(alternates)
        self.alternates += len(alternates)
        self._add_lastmods([e.lastmod for e in batch])
        self._add_sitemaps([e.sitemap for e in batch])
        for e in alternates:
            self._alternate_row(e.hreflang, e.alternate_of)
        for e in batch:
            if e.alternates and e.alternate_of is None:
                self._declared(e.url, {a.hreflang for a in e.alternates})

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
        lowered = text.lower()
        if len(lowered) != len(text):  # case folding moved characters: spans would not match
            lowered = "\n".join(
                low if len(low) == len(line) else line
                for line, low in ((line, line.lower()) for line in text.split("\n"))
            )
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
        values = [v or "" for v in lastmods]
        missing = values.count("")
        self.no_lastmod += missing
        months: Counter[str] = Counter()
        for head, n in Counter(map(_FIRST_8, values)).items():
            match = _MONTH.match(head)
            if match is not None:
                months[match.group(1)] += n
            elif head:
                self.bad_lastmod += n
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
        for sitemap, n in counts.items():
            if sitemap in self.sitemaps or len(self.sitemaps) < MAX_SITEMAPS:
                self.sitemaps[sitemap] += n
            else:
                self.sitemap_other += n

    def _alternate_row(self, hreflang: str | None, alternate_of: str | None) -> None:
        locale = (hreflang or "").strip().lower() or "(none)"
        _bump(self.locale_rows, locale, MAX_LOCALES)
        if not self.declared_alternates:
            group = self._group_of(alternate_of or "")
            _bump(self.group_hreflang, group, MAX_GROUPS)
            self._group_locale(group, locale)

    def _declared(self, url: str, locales: set[str]) -> None:
        group = self._group_of(url)
        _bump(self.group_hreflang, group, MAX_GROUPS)
        for raw in locales:
            locale = raw.strip().lower() or "(none)"
            _bump(self.locale_pages, locale, MAX_LOCALES)
            self._group_locale(group, locale)

    def _group_locale(self, group: str, locale: str) -> None:
        pair = (group, locale)
        if pair in self.group_locales or len(self.group_locales) < MAX_LOCALE_GROUPS:
            self.group_locales[pair] += 1

    def _find_junk(self, origin: str, text: str, lowered: str, spans: set[tuple[int, int]]) -> None:
        """Run the junk rows on the candidate lines of a batch, plus the lines a `-2` copy
        among them would be a copy of (the copy rows compare URLs with each other)."""
        originals = [  # what each `-2` copy would be a copy of: the line without its suffix
            line[: m.start(1)] + line[m.end(1) :]
            for line in (lowered[a:b] for a, b in spans)
            for m in _JUNK_COPY.finditer(line)
        ]
        if len(originals) > _COPY_LOOKUPS:  # each lookup scans the batch: judge it whole instead
            urls = [_whole(origin, line) for line in text.split("\n")]
        else:
            context = set(spans)
            padded = "\n" + lowered
            for original in originals:
                context.update(_same_path_lines(padded, original))
            urls = [_whole(origin, text[a:b]) for a, b in sorted(context)]
        for url, pattern in junk_filter(urls).junk:
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


def _bump(counter: Counter[str], key: str, cap: int) -> None:
    """Count `key`, or `other` once `cap` distinct keys are held."""
    counter[key if key in counter or len(counter) < cap else OTHER] += 1


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


# -- rendering ----------------------------------------------------------------------------------


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _short(url: str) -> str:
    return url if len(url) <= MAX_SHOWN_URL else url[:MAX_SHOWN_URL] + "…"


def _n(value: int) -> str:
    return f"{value:,}"


def _pct(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "–"


def render_report(
    builder: ReportBuilder,
    *,
    title: str,
    walk: WalkReport | None = None,
    inventory: InventoryInfo | None = None,
    generated: str = "",
) -> str:
    """The whole HTML page. Strings from the site are escaped; nothing is loaded from anywhere."""
    nonce = secrets.token_urlsafe(16)
    sections = [
        _summary(builder, walk, inventory),
        _treemap(builder),
        _freshness(builder),
        _locales(builder),
        _sitemap_tree(builder, walk),
        _lists(builder, walk, inventory),
    ]
    csp = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'nonce-{nonce}'; base-uri 'none'; form-action 'none'"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(csp)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>sitescout report: {_e(title)}</title>\n<style>{_CSS}</style></head>\n<body>\n"
        f'<h1>sitescout report: <span class="site">{_e(title)}</span></h1>\n'
        f'<p class="muted">{_e(generated)}</p>\n'
        + "\n".join(sections)
        + f'\n<script nonce="{nonce}">{_JS}</script>\n</body></html>\n'
    )


def _row(*cells: str, head: bool = False) -> str:
    tag = "th" if head else "td"
    return "<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>"


def _grid(head: Sequence[str], body: str) -> str:
    return f'<table class="grid">{_row(*head, head=True)}{body}</table>'


def _details(summary: str, body: str) -> str:
    return f"<details><summary>{summary}</summary>{body}</details>"


def _section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{title}</h2>{body}</section>'


def _urls_line(b: ReportBuilder) -> str:
    return f"{_n(b.urls + b.alternates)} ({_n(b.urls)} pages, {_n(b.alternates)} alternates)"


def _summary(b: ReportBuilder, walk: WalkReport | None, inv: InventoryInfo | None) -> str:
    rows: list[tuple[str, str]] = []
    unknown = '<span class="muted">not recorded in an inventory</span>'
    if walk is not None:
        source = walk.source or "none"
        if walk.source_url:
            source += " " + walk.source_url
        rows += [
            ("source", _e(source)),
            ("documents", _n(len(walk.documents))),
            ("URLs", _urls_line(b)),
            ("duplicates", _n(walk.duplicates)),
            ("errors", _n(len(walk.errors))),
            ("malformed entries", _n(walk.malformed_count)),
            ("partial", _e("; ".join(walk.partial_reasons)) if walk.partial else "no"),
            ("budgets hit", _e(", ".join(walk.budgets_hit)) if walk.budgets_hit else "none"),
            ("walk time", f"{walk.elapsed:.2f} s"),
        ]
    else:
        where = f"{inv.format} inventory {inv.path}" if inv else "inventory"
        rows += [
            ("source", _e(where)),
            ("documents", f"{_n(len(b.sitemaps))} sitemaps named in the rows"),
            ("URLs", _urls_line(b)),
            ("errors", unknown),
            ("malformed entries", unknown),
            ("partial", unknown),
            ("budgets hit", unknown),
        ]
        if inv is not None:
            skipped = sum(inv.skipped.values())
            rows.append(("rows skipped", _n(skipped) if skipped else "none"))
            if inv.missing_columns:
                rows.append(("columns missing", _e(", ".join(inv.missing_columns))))
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    warnings = ""
    if walk is not None and walk.warnings:
        items = "".join(f"<li>{_e(w)}</li>" for w in walk.warnings[:TABLE_ROWS])
        warnings = f"<h3>Warnings</h3><ul>{items}</ul>"
    table = f'<table class="kv">{body}</table>'
    return f'<section id="summary"><h2>Summary</h2>{table}{warnings}</section>'


def _hue(index: int) -> int:
    return (index * 137) % 360


def _treemap(b: ReportBuilder) -> str:
    table = b.group_table()
    total = sum(n for _, n in table)
    if not total:
        return '<section id="treemap"><h2>Path treemap</h2><p>No URLs.</p></section>'
    shown = [(k, n) for k, n in table if k != OTHER][:TREEMAP_GROUPS]
    rest = total - sum(n for _, n in shown)
    if rest:
        shown.append((OTHER, rest))
    width, height = 1000.0, 560.0
    ordered = sorted(shown, key=lambda kn: -kn[1])
    rects = squarify.squarify(
        squarify.normalize_sizes([n for _, n in ordered], width, height), 0.0, 0.0, width, height
    )
    cells: list[str] = []
    for index, ((group, count), rect) in enumerate(zip(ordered, rects, strict=True)):
        x, y, dx, dy = rect["x"], rect["y"], rect["dx"], rect["dy"]
        label = f"{group}: {_n(count)} URLs ({_pct(count, total)})"
        if group == OTHER:
            label = f"{OTHER} (smaller groups and non-http URLs): {label[len(OTHER) + 2 :]}"
        hue = _hue(index)
        parts = [
            f'<g class="cell" data-group="{_e(group)}" data-count="{count}"'
            f' data-x="{x:.1f}" data-y="{y:.1f}" data-w="{dx:.1f}" data-h="{dy:.1f}">'
            f"<title>{_e(label)}</title>"
            f'<rect class="area" x="{x:.1f}" y="{y:.1f}" width="{dx:.1f}" height="{dy:.1f}"'
            f' fill="hsl({hue},45%,78%)"/>'
        ]
        children = b.children_of(group) if group != OTHER else []
        header = 18.0
        if children and dx > 60 and dy > 50:
            inner = squarify.padded_squarify(
                squarify.normalize_sizes([n for _, n in children], dx - 4, dy - header - 2),
                x + 2,
                y + header,
                dx - 4,
                dy - header - 2,
            )
            for (child, n), r in zip(children, inner, strict=True):
                name = f"{group[:-1]}…" if child == OTHER else child
                sub_label = f"{name}: {_n(n)} URLs"
                if child == OTHER:
                    sub_label = f"other paths under {group}: {_n(n)} URLs"
                parts.append(
                    f'<rect class="sub" data-count="{n}" x="{r["x"]:.1f}" y="{r["y"]:.1f}"'
                    f' width="{r["dx"]:.1f}" height="{r["dy"]:.1f}"'
                    f' fill="hsl({hue},40%,66%)"><title>{_e(sub_label)}</title></rect>'
                )
                if r["dx"] > 48 and r["dy"] > 30:
                    tail = "…" if child == OTHER else (child[len(group) - 2 : -2] or "/")
                    chars = max(1, int(r["dx"] / 6.5))
                    tail = tail if len(tail) <= chars else tail[: chars - 1] + "…"
                    parts.append(
                        f'<text class="sub" x="{r["x"] + 3:.1f}" y="{r["y"] + 12:.1f}">'
                        f"{_e(tail)}</text>"
                    )
        if dx > 50 and dy > 16:
            chars = max(1, int(dx / 7.5))
            text = f"{group} {_n(count)}"
            if len(text) > chars:
                text = text[: chars - 1] + "…"
            parts.append(f'<text x="{x + 4:.1f}" y="{y + 13:.1f}">{_e(text)}</text>')
        parts.append("</g>")
        cells.append("".join(parts))
    legend = (
        f"{_n(total)} URLs in {_n(len(table))} groups (groups of fewer than {MIN_GROUP_SIZE} URLs"
        f" are in <em>other</em>); the {len(shown)} largest are drawn, each with up to"
        f" {TREEMAP_CHILDREN} second-level groups inside. Hover a cell for its exact count;"
        " click it to zoom, click again or press Escape to zoom out."
    )
    return (
        '<section id="treemap"><h2>Path treemap</h2>'
        f'<p class="muted">{legend}</p>'
        f'<svg id="treemap-svg" viewBox="0 0 {width:.0f} {height:.0f}" role="img"'
        ' aria-label="URLs per path group">' + "".join(cells) + "</svg></section>"
    )


def _freshness(b: ReportBuilder) -> str:
    entries = b.urls + b.alternates
    head = (
        f"<p>{_n(b.no_lastmod)} of {_n(entries)} URLs ({_pct(b.no_lastmod, entries)}) have no"
        f" lastmod; {_n(b.bad_lastmod)} have one that is not a date.</p>"
    )
    if not b.months:
        return f'<section id="freshness"><h2>Freshness (lastmod)</h2>{head}</section>'
    months = sorted(b.months.items())
    earlier = b.month_other + sum(n for _, n in months[:-MONTHS_SHOWN])
    months = months[-MONTHS_SHOWN:]
    bars = [("earlier", earlier)] if earlier else []
    bars += _fill_months(months)
    peak = max(n for _, n in bars) or 1
    width, height, gap = 1000.0, 220.0, 1.0
    step = width / len(bars)
    out: list[str] = []
    for i, (month, n) in enumerate(bars):
        h = (height - 30) * n / peak
        out.append(
            f'<rect class="month" data-month="{_e(month)}" data-count="{n}"'
            f' x="{i * step:.1f}" y="{height - 20 - h:.1f}" width="{max(step - gap, 0.5):.1f}"'
            f' height="{h:.1f}"><title>{_e(month)}: {_n(n)} URLs</title></rect>'
        )
    labels: list[str] = []
    every = max(1, math.ceil(len(bars) / 12))
    for i in range(0, len(bars), every):
        labels.append(f'<text x="{i * step:.1f}" y="{height - 5:.1f}">{_e(bars[i][0])}</text>')
    return (
        '<section id="freshness"><h2>Freshness (lastmod)</h2>'
        + head
        + f'<svg viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="URLs per month">'
        + "".join(out)
        + "".join(labels)
        + "</svg></section>"
    )


def _fill_months(months: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The months from the first to the last, empty ones included (so gaps show)."""
    counts = dict(months)
    year, month = int(months[0][0][:4]), int(months[0][0][5:7])
    last = months[-1][0]
    out: list[tuple[str, int]] = []
    for _ in range(MONTHS_SHOWN * 2):  # at most the shown span; a gap never adds more
        key = f"{year:04d}-{month:02d}"
        out.append((key, counts.get(key, 0)))
        if key >= last:
            break
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out[-MONTHS_SHOWN:]


def _locales(b: ReportBuilder) -> str:
    if not b.locale_pages and not b.locale_rows:
        return _section("locales", "Locales (hreflang)", "<p>No hreflang alternates.</p>")
    pages = b.urls
    rows = [
        _row(
            "locale",
            "pages declaring it",
            "share of pages",
            "alternates listed as entries",
            head=True,
        )
    ]
    locales = b.locale_pages if b.declared_alternates else b.locale_rows
    for locale, _ in sorted(locales.items(), key=lambda kv: (-kv[1], kv[0]))[:TABLE_ROWS]:
        declared = b.locale_pages.get(locale)
        rows.append(
            _row(
                _e(locale),
                _n(declared) if declared is not None else "–",
                _pct(declared, pages) if declared is not None else "–",
                _n(b.locale_rows.get(locale, 0)),
            )
        )
    note = ""
    if not b.declared_alternates:
        note = (
            '<p class="muted">A saved inventory keeps an alternate only when its URL was new, and'
            " not the hreflang links of each page: the counts below are those alternates.</p>"
        )
    top_locales = [loc for loc, _ in sorted(locales.items(), key=lambda kv: -kv[1])[:8]]
    group_rows = [
        _row(
            "group",
            "URLs",
            "with hreflang" if b.declared_alternates else "alternates",
            *(_e(loc) for loc in top_locales),
            head=True,
        )
    ]
    for group, n in b.group_table()[:TABLE_ROWS]:
        with_h = b.group_hreflang.get(group, 0)
        share = f"{_n(with_h)} ({_pct(with_h, n)})" if b.declared_alternates else _n(with_h)
        group_rows.append(
            _row(
                _e(group),
                _n(n),
                share,
                *(_n(b.group_locales.get((group, loc), 0)) for loc in top_locales),
            )
        )
    return (
        '<section id="locales"><h2>Locales (hreflang)</h2>'
        + note
        + f'<table class="grid">{"".join(rows)}</table>'
        + "<h3>Per top-level group</h3>"
        + f'<table class="grid">{"".join(group_rows)}</table></section>'
    )


def _gz(url: str) -> str:
    return "yes" if url.lower().split("?", 1)[0].endswith(".gz") else ""


def _sitemap_tree(b: ReportBuilder, walk: WalkReport | None) -> str:
    if walk is not None:
        docs = sorted(enumerate(walk.documents), key=lambda d: (d[1].depth, d[0]))
        rows = [
            _row("level", "sitemap", "kind", "URLs", "children", "bytes", ".gz", "error", head=True)
        ]
        for _, d in docs[:DOCUMENTS_SHOWN]:
            error = "" if d.error is None else f"{d.error_class or ''}: {d.error}"
            if d.stopped_by is not None:
                error = f"not read to its end: {budget_label(d.stopped_by)} reached"
            rows.append(
                _row(
                    str(d.depth),
                    f'<span class="url" style="padding-left:{(d.depth - 1) * 14}px">'
                    f"{_e(_short(d.url))}</span>",
                    _e(d.kind or "–"),
                    _n(d.entries),
                    _n(d.children),
                    _n(d.bytes),
                    _gz(d.final_url or d.url),
                    f'<span class="err">{_e(error)}</span>' if error else "",
                )
            )
        more = len(docs) - DOCUMENTS_SHOWN
        tail = f'<p class="muted">{_n(more)} more documents not shown.</p>' if more > 0 else ""
        return (
            '<section id="sitemaps"><h2>Sitemap tree</h2>'
            '<p class="muted">Documents by level (root = 1), in the order they were read;'
            " .gz: the URL names a gzip file (every body is decoded whatever its name).</p>"
            f'<table class="grid">{"".join(rows)}</table>{tail}</section>'
        )
    rows = [_row("sitemap", "URLs", ".gz", head=True)]
    ranked = sorted(b.sitemaps.items(), key=lambda kv: (-kv[1], kv[0]))
    for sitemap, n in ranked[:DOCUMENTS_SHOWN]:
        rows.append(
            _row(f'<span class="url">{_e(_short(sitemap)) or "(none)"}</span>', _n(n), _gz(sitemap))
        )
    rest = b.sitemap_other + sum(n for _, n in ranked[DOCUMENTS_SHOWN:])
    if rest:
        rows.append(_row("other sitemaps", _n(rest), ""))
    return (
        '<section id="sitemaps"><h2>Sitemaps</h2>'
        '<p class="muted">URLs per sitemap named in the inventory; document kinds, sizes and'
        " errors are not recorded in an inventory.</p>"
        f'<table class="grid">{"".join(rows)}</table></section>'
    )


def _counts(counter: Counter[str]) -> str:
    items = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:TABLE_ROWS]
    return "".join(_row(_e(k), _n(n)) for k, n in items)


def _lists(b: ReportBuilder, walk: WalkReport | None, inv: InventoryInfo | None) -> str:
    junk_rows = "".join(_row(f'<span class="url">{_e(_short(u))}</span>', _e(p)) for u, p in b.junk)
    auth_rows = "".join(_row(f'<span class="url">{_e(_short(u))}</span>') for u in b.auth)
    parts = [
        '<section id="junk"><h2>Likely junk</h2>',
        f"<p>{_n(b.junk_count)} URLs look like test, sample or duplicate pages"
        f" (the first {min(b.junk_count, LIST_LIMIT)} are listed).</p>",
        _grid(("pattern", "URLs"), _counts(b.junk_patterns)) if b.junk_count else "",
        _details("The URLs", _grid(("URL", "pattern"), junk_rows)) if junk_rows else "",
        "</section>",
        '<section id="signin"><h2>Sign-in areas</h2>',
        f"<p>{_n(b.auth_count)} URLs are behind a sign-in (account, admin, log-in paths)"
        f" (the first {min(b.auth_count, LIST_LIMIT)} are listed).</p>",
        f'<table class="grid">{_row("group", "URLs", head=True)}{_counts(b.auth_groups)}</table>'
        if b.auth_count
        else "",
        _details("The URLs", _grid(("URL",), auth_rows)) if auth_rows else "",
        "</section>",
        '<section id="malformed"><h2>Malformed entries</h2>',
    ]
    if walk is not None:
        reasons: Counter[str] = Counter(m.reason for m in walk.malformed)
        shown = walk.malformed[:LIST_LIMIT]
        parts.append(
            f"<p>{_n(walk.malformed_count)} sitemap entries could not be used"
            f" (the first {len(shown)} are listed).</p>"
        )
        if reasons:
            parts.append(_grid(("reason", "entries"), _counts(reasons)))
        if shown:
            rows = "".join(
                _row(
                    f'<span class="url">{_e(_short(m.raw))}</span>',
                    _e(m.reason),
                    _e(_short(m.sitemap)),
                )
                for m in shown
            )
            parts.append(_details("The entries", _grid(("entry", "reason", "sitemap"), rows)))
    else:
        parts.append("<p>Malformed sitemap entries are not recorded in an inventory.</p>")
        if inv is not None and inv.skipped:
            parts.append(
                f"<p>{_n(sum(inv.skipped.values()))} rows of the inventory file were skipped:</p>"
                + _grid(("reason", "rows"), _counts(inv.skipped))
            )
    parts.append("</section>")
    return "".join(parts)


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;
max-width:1040px;padding:0 16px;color:#1d232b;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #dde}
h3{font-size:15px;margin:16px 0 6px}.muted{color:#667}.site,.url{word-break:break-all}
table{border-collapse:collapse;margin:6px 0}td,th{padding:3px 10px 3px 0;text-align:left;
vertical-align:top}table.grid td,table.grid th{border-bottom:1px solid #eef}
summary{cursor:pointer;color:#345;margin:6px 0}
table.kv th{font-weight:600;color:#445;width:11em}.err{color:#a22}
svg{width:100%;height:auto;display:block;background:#fafbfd;border:1px solid #e3e6ee}
#treemap-svg rect{stroke:#fff;stroke-width:1}#treemap-svg text.sub{font-size:10px;fill:#333}
#treemap-svg text{font-size:12px;fill:#1d232b;
pointer-events:none}#treemap-svg g.cell{cursor:zoom-in}#treemap-svg.zoomed g.cell{cursor:zoom-out}
#treemap-svg g.cell:hover>rect.area{filter:brightness(.93)}rect.month{fill:#5b7fbf}
rect.month:hover{fill:#2d4f8f}svg text{font-size:11px;fill:#556}
"""

# Zoom into a treemap cell with the SVG viewBox; no library, no network.
_JS = """
(function(){var svg=document.getElementById('treemap-svg');if(!svg)return;
var full=svg.getAttribute('viewBox');
function reset(){svg.setAttribute('viewBox',full);svg.classList.remove('zoomed');}
svg.addEventListener('click',function(ev){var g=ev.target.closest('g.cell');
if(!g||svg.classList.contains('zoomed')){reset();return;}
svg.setAttribute('viewBox',[g.dataset.x,g.dataset.y,g.dataset.w,g.dataset.h].join(' '));
svg.classList.add('zoomed');});
document.addEventListener('keydown',function(ev){if(ev.key==='Escape')reset();});})();
"""
