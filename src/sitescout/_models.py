"""Typed values shared by every module. Pure: no I/O here."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ._errors import ErrorClass
from ._text import byte_size

# -- one HTML page, as `_html` reads it ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Heading:
    level: int  # 1-3
    text: str


@dataclass(slots=True)
class PageInfo:
    """What one HTML page says about itself. `to_dict()` is its JSON form."""

    url: str  # the page's (final) URL, as given
    base_url: str  # what relative links resolved against (`<base href>` or `url`)
    title: str | None = None
    canonical: str | None = None  # `<link rel="canonical">`, resolved and normalized
    description: str | None = None  # `<meta name="description">`
    language: str | None = None  # `<html lang>`
    robots: str | None = None  # `<meta name="robots">`, e.g. "noindex, nofollow"
    headings: list[Heading] = field(default_factory=list)  # h1-h3 in document order
    links_internal: list[str] = field(default_factory=list)  # same site, unique, normalized
    links_external: list[str] = field(default_factory=list)
    link_count_internal: int = 0  # every `<a>`/`<area>` occurrence
    link_count_external: int = 0
    link_count_other: int = 0  # mailto:, tel:, javascript:, unresolvable
    forms: int = 0
    images: int = 0
    iframes: int = 0
    text_length: int = 0  # visible text, whitespace collapsed, without script/style/noscript
    bytes: int = 0  # bytes of the body that were parsed
    truncated: bool = False  # the body was longer than MAX_HTML_BYTES
    notes: list[str] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        """No meaningful body (an `EmptyPageError`): no text, link, image, form or frame.

        A title alone does not count: a JavaScript app's shell has one and nothing else.
        """
        return not (
            self.text_length
            or self.link_count_internal
            or self.link_count_external
            or self.images
            or self.forms
            or self.iframes
        )

    def to_dict(self, *, camel: bool = False) -> dict[str, Any]:
        """The JSON form: field names as keys (`camel=True`: `linkCountInternal`, ...)."""
        data = asdict(self)
        return {_camel(k): v for k, v in data.items()} if camel else data


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


# "page": a page the link crawl requested, in `WalkReport.errors` when it failed; "llms": an
# llms.txt or an aggregate file it links to.
DocumentKind = Literal[
    "urlset", "sitemapindex", "rss", "atom", "text", "not-a-sitemap", "page", "llms"
]
SITEMAP_KINDS: frozenset[str] = frozenset({"urlset", "sitemapindex", "rss", "atom", "text"})


@dataclass(frozen=True, slots=True)
class Alternate:
    """One `xhtml:link rel="alternate"` of an entry."""

    hreflang: str
    url: str


@dataclass(frozen=True, slots=True)
class Image:
    loc: str
    title: str | None = None
    caption: str | None = None


@dataclass(frozen=True, slots=True)
class Video:
    content_loc: str | None = None
    player_loc: str | None = None
    thumbnail_loc: str | None = None
    title: str | None = None
    description: str | None = None


@dataclass(frozen=True, slots=True)
class News:
    title: str | None = None
    publication_date: str | None = None
    language: str | None = None
    publication_name: str | None = None


@dataclass(slots=True)
class Entry:
    """One page URL found in a sitemap or by the link crawl.

    `hreflang`/`alternate_of` are set only on entries that were yielded because they appeared
    as an hreflang alternate of another entry (`alternate_of` is that entry's URL).
    """

    url: str
    lastmod: str | None = None
    priority: float | None = None
    changefreq: str | None = None
    alternates: tuple[Alternate, ...] = ()
    images: tuple[Image, ...] = ()
    videos: tuple[Video, ...] = ()
    news: News | None = None
    sitemap: str = ""
    depth: int = 1
    hreflang: str | None = None
    alternate_of: str | None = None
    # Pages found by the link crawl (§10): source "bfs", the page's title and canonical; their
    # depth counts clicks from the start URL (0), not sitemap levels.
    source: str = "sitemap"
    title: str | None = None
    canonical: str | None = None
    # Pages listed by an llms.txt: the markdown copy it links to. `sources` is set when a walk
    # merges sources (`source="all"`): every source that listed the URL, sitemap first.
    md_url: str | None = None
    sources: tuple[str, ...] = ()

    @property
    def is_alternate(self) -> bool:
        return self.alternate_of is not None


@dataclass(frozen=True, slots=True)
class Malformed:
    """An entry that could not be used, with its raw value and why."""

    raw: str
    reason: str
    sitemap: str


@dataclass(slots=True)
class DocumentRecord:
    """What happened to one sitemap document during a walk."""

    url: str
    depth: int
    status: int | None = None
    final_url: str | None = None
    kind: DocumentKind | None = None
    bytes: int = 0
    duration: float = 0.0
    entries: int = 0
    children: int = 0
    truncated: bool = False
    error: str | None = None
    error_class: ErrorClass | None = None
    # The budget that ended its reading early ("max_urls", "max_bytes", "deadline"): what it gave
    # so far is kept, the rest was not read. Not an error.
    stopped_by: str | None = None


_LEAF_KINDS = frozenset({"urlset", "rss", "atom", "text"})


@dataclass(slots=True)
class RewalkSummary:
    """What a walk with a state directory saved: documents the server said did not change (or
    sent again unchanged) were read from the state, the rest downloaded."""

    directory: str
    known: int = 0  # documents the stored state held
    not_modified: int = 0  # answered 304 and read from the state
    same_body: int = 0  # downloaded again, byte for byte what the state held
    trusted: int = 0  # not requested: its index lastmod had not moved (`trust_lastmod`)
    fetched: int = 0  # downloaded: new, changed, or with no stored copy to compare
    refetched: int = 0  # a 304 whose stored copy was missing or damaged, fetched again
    downloaded: int = 0  # body bytes over the network, as sent (compressed)
    total: int = 0  # body bytes of every document read, from the network or the state
    ignored: str | None = None  # why the stored state was not used, when it was not

    @property
    def unchanged(self) -> int:
        return self.not_modified + self.same_body + self.trusted

    def line(self) -> str:
        """One line for the summary: what the state saved ("18 of 20 documents unchanged
        (304), 2 fetched; 1.9 MB of 41.0 MB downloaded")."""
        ways = [
            (self.not_modified, "304"),
            (self.same_body, "the same bytes"),
            (self.trusted, "index lastmod"),
        ]
        said = [(n, how) for n, how in ways if n]
        how = ""
        if len(said) == 1:
            how = f" ({said[0][1]})"
        elif said:
            how = " (" + ", ".join(f"{n} by {what}" for n, what in said) + ")"
        documents = self.unchanged + self.fetched
        return (
            f"{self.unchanged} of {documents} documents unchanged{how}, {self.fetched} fetched;"
            f" {byte_size(self.downloaded)} of {byte_size(self.total)} downloaded"
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "directory": self.directory,
            "known": self.known,
            "not_modified": self.not_modified,
            "same_body": self.same_body,
            "trusted": self.trusted,
            "fetched": self.fetched,
            "refetched": self.refetched,
            "downloaded_bytes": self.downloaded,
            "total_bytes": self.total,
            "ignored": self.ignored,
        }


@dataclass(slots=True)
class LlmsSummary:
    """What reading a site's llms.txt found (also when it found none: `url` is None)."""

    url: str | None = None
    links: int = 0  # page URLs kept (same site, pages, de-duplicated), before base-path scoping
    md_links: int = 0  # of those, links to a markdown copy (`.md`/`.mdx`)
    aggregates: list[str] = field(default_factory=list)  # `.txt` files read one level deep
    omitted: list[str] = field(default_factory=list)  # `.txt` files not read (too deep, too many)
    dropped: dict[str, int] = field(default_factory=dict)  # links not kept, by reason
    rejected: list[tuple[str, str]] = field(default_factory=list)  # candidates and why not
    cut: list[str] = field(default_factory=list)  # files cut at the size cap
    in_scope: int = 0  # links under the base path (all of them without one)

    def as_dict(self) -> dict[str, object]:
        return {
            "url": self.url,
            "links": self.links,
            "md_links": self.md_links,
            "aggregates": list(self.aggregates),
            "omitted": list(self.omitted),
            "dropped": dict(self.dropped),
            "rejected": [{"url": u, "why": w} for u, w in self.rejected],
            "cut": list(self.cut),
            "in_scope": self.in_scope,
        }


# -- the link crawl (§10): its events and its report, built by `_crawl.Crawler` -----------------


@dataclass(slots=True)
class CrawledPage:
    """One page the crawl requested; `error_class` names the `FetchError` class when it failed."""

    url: str  # the URL requested (normalized)
    final_url: str  # after redirects (normalized)
    depth: int  # clicks from the start URL (0)
    found_on: str | None = None  # the page that linked it first
    status: int | None = None
    content_type: str = ""
    title: str | None = None
    canonical: str | None = None
    links_internal: int = 0  # `<a href>` occurrences to the same site
    links_external: int = 0
    bytes: int = 0
    elapsed: float = 0.0
    rendered: bool = False
    error: str | None = None
    error_class: ErrorClass | None = None
    info: PageInfo | None = None
    kind: Literal["page"] = "page"

    @property
    def ok(self) -> bool:
        return self.error_class is None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, without `info` (`info.to_dict()` has it)."""
        return {name: getattr(self, name) for name in _PAGE_FIELDS}


@dataclass(slots=True)
class SitemapFound:
    """A response that is a sitemap, met during the crawl: the walker walks `url`."""

    url: str  # the sitemap's final URL (normalized)
    requested: str  # the URL that was linked
    depth: int  # depth of the link that led to it
    found_on: str | None = None
    document_kind: str = ""  # urlset, sitemapindex, rss, atom, text
    kind: Literal["sitemap"] = "sitemap"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


CrawlEvent = CrawledPage | SitemapFound
_PAGE_FIELDS = tuple(name for name in CrawledPage.__dataclass_fields__ if name != "info")


@dataclass(slots=True)
class CrawlReport:
    """What the link crawl (`_crawl.Crawler`) did besides its events."""

    start_url: str
    fetches: int = 0  # requests for pages and sitemap sniffs (robots.txt not counted)
    pages: int = 0
    failures: int = 0
    sitemaps: list[str] = field(default_factory=list)
    robots_url: str | None = None
    crawl_delay: float | None = None
    disallowed: int = 0  # URLs robots.txt kept us from requesting
    disallowed_samples: list[str] = field(default_factory=list)
    filtered: Counter[str] = field(default_factory=Counter)  # §8 reason -> distinct URLs
    beyond_depth: int = 0  # distinct links deeper than max_depth, not requested
    unvisited: int = 0  # queued URLs left when the page limit or the deadline bound
    page_limit_hit: bool = False
    deadline_hit: bool = False
    notes: list[str] = field(default_factory=list)
    elapsed: float = 0.0


@dataclass(slots=True)
class WalkReport:
    """Everything a walk learned besides its entries."""

    source: str | None = None
    source_url: str | None = None
    # Nonstandard robots.txt directive names that listed sitemaps (e.g. "Site-map"), read too.
    sitemap_spellings: list[str] = field(default_factory=list)
    documents: list[DocumentRecord] = field(default_factory=list)
    errors: list[DocumentRecord] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)
    malformed_count: int = 0
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    budgets_hit: list[str] = field(default_factory=list)
    partial: bool = False
    partial_reasons: list[str] = field(default_factory=list)
    urls: int = 0
    alternates: int = 0
    duplicates: int = 0
    bytes: int = 0
    elapsed: float = 0.0
    skipped_sitemaps: list[str] = field(default_factory=list)
    filtered_pages: int = 0  # page URLs the walk's filters dropped (include, exclude, since)
    dropped_children: int = 0
    crawl: CrawlReport | None = None  # set when the link crawl ran (§10)
    llms: LlmsSummary | None = None  # set when an llms.txt was looked for
    rewalk: RewalkSummary | None = None  # set when the walk kept a state directory
    # Page URLs seen but not kept once max_urls bound (the rest of that document is not read).
    urls_cut: int = 0

    def mark_partial(self, reason: str) -> None:
        self.partial = True
        if reason not in self.partial_reasons:
            self.partial_reasons.append(reason)

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    @property
    def found_nothing(self) -> bool:
        """No URL, and either no source at all or errors: the walk failed, not an empty site."""
        empty = self.urls == 0 and self.alternates == 0
        return empty and (self.source == "none" or bool(self.errors))

    @property
    def fetches(self) -> int:
        return len(self.documents)

    @property
    def leaf_sitemaps(self) -> int:
        """Documents that listed pages rather than other sitemaps."""
        return sum(1 for d in self.documents if d.kind in _LEAF_KINDS)


# -- a saved inventory read back (`report`, `diff`) ----------------------------------------------


@dataclass(slots=True)
class InventoryInfo:
    """What reading a saved inventory file learned about the file itself: the rows it gave, the
    rows skipped by reason (and where the first few were: `line 7`, `row 12`), and the columns
    the file lacks."""

    path: str
    format: str
    rows: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    missing_columns: list[str] = field(default_factory=list)
    examples: list[tuple[str, str]] = field(default_factory=list)  # (where, why), the first few
