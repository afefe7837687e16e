"""Several `<loc>`s in one `<url>`/`<sitemap>`, and items left open before the next one.

The rule (rust/src/scan/xml.rs, the module's notes): an item whose end tag is missing ends where
the next item of its name starts directly inside it, or where its parent ends; it is read whole
(an entry with its own fields, or a child sitemap) and the document counts as damaged. Within
one item the entry's URL is its first non-blank `<loc>`; each further non-blank `<loc>` is a
malformed record with its value. No `<loc>` is lost silently and no URL is invented.

Each case is read whole, a byte at a time and in random chunks (with `take()` at random
points), with and without a comment that pushes the items past the first KiB, and must give
the same record every time. The well-formed cases here are also held to the reference parser by
tests/test_core_scan.py (which harvests this module's documents); the damaged ones to the
damaged-input properties by tests/test_core_damaged.py.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest

from tests.reference import compare as c

pytestmark = pytest.mark.skipif(
    not c.core_available(), reason="sitescout._core.Scanner is not built (`make build`)"
)

DOC_URL = "https://x.com/sitemaps/pages.xml"
U = (
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    'xmlns:xhtml="http://www.w3.org/1999/xhtml">\n'
)
UE = "\n</urlset>"
SI = '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
SIE = "\n</sitemapindex>"
EXTRA_URL = "extra <loc> in one <url> (the first is the entry)"
EXTRA_SM = "extra <loc> in one <sitemap> (the first is the sitemap)"


@dataclass(frozen=True)
class Case:
    id: str
    doc: str
    # (url, lastmod, alternate URLs) of each entry, in order
    entries: list[tuple[str, str | None, tuple[str, ...]]] = field(default_factory=list)
    sitemaps: list[str] = field(default_factory=list)
    malformed: list[tuple[str, str]] = field(default_factory=list)
    damaged: bool = False
    # Whether the reference parser reads it the same (see the test).
    oracle: bool = True


CASES = [
    # -- urlset, end tags in place: the first <loc> is the entry, the others are recorded
    Case(
        "url-two-locs",
        U + "<url><loc>https://x.com/1</loc><loc>https://x.com/2</loc></url>" + UE,
        entries=[("https://x.com/1", None, ())],
        malformed=[("https://x.com/2", EXTRA_URL)],
    ),
    Case(
        "url-three-locs-lastmod-alternate-between",
        U
        + "<url><loc>/1</loc><lastmod>2024-05-01</lastmod>"
        + '<xhtml:link rel="alternate" hreflang="de" href="/de/1"/>'
        + "<loc> /2 </loc><loc>https://x.com/3</loc></url>"
        + "<url><loc>/4</loc></url>"
        + UE,
        entries=[
            ("https://x.com/1", "2024-05-01", ("https://x.com/de/1",)),
            ("https://x.com/4", None, ()),
        ],
        malformed=[("/2", EXTRA_URL), ("https://x.com/3", EXTRA_URL)],
    ),
    Case(
        "url-blank-first-loc",
        U + "<url><loc> </loc><loc>/1</loc><lastmod>2024</lastmod><loc/><loc>/2</loc></url>" + UE,
        entries=[("https://x.com/1", "2024", ())],
        malformed=[("/2", EXTRA_URL)],
    ),
    # -- urlset, an end tag missing: the open <url> ends at the next one, or at </urlset>
    Case(
        "url-unclosed-before-next",
        U
        + "<url><loc>https://x.com/1</loc><lastmod>2024-05-01</lastmod>\n"
        + "<url><loc>https://x.com/2</loc><lastmod>2024-05-02</lastmod></url>"
        + UE,
        entries=[("https://x.com/1", "2024-05-01", ()), ("https://x.com/2", "2024-05-02", ())],
        damaged=True,
    ),
    Case(
        "url-unclosed-alternates-in-both",
        U
        + '<url><loc>/1</loc><xhtml:link rel="alternate" hreflang="de" href="/de/1"/>\n'
        + '<url><loc>/2</loc><xhtml:link rel="alternate" hreflang="fr" href="/fr/2"/></url>\n'
        + "<url><loc>/3</loc></url>"
        + UE,
        entries=[
            ("https://x.com/1", None, ("https://x.com/de/1",)),
            ("https://x.com/2", None, ("https://x.com/fr/2",)),
            ("https://x.com/3", None, ()),
        ],
        damaged=True,
    ),
    Case(
        "url-last-unclosed-at-urlset-end",
        U + "<url><loc>/1</loc></url><url><loc>/2</loc><lastmod>2024</lastmod>" + UE,
        entries=[("https://x.com/1", None, ()), ("https://x.com/2", "2024", ())],
        damaged=True,
    ),
    Case(
        "url-none-closed",
        U + "<url><loc>/1</loc><url><loc>/2</loc><lastmod>2024</lastmod><url><loc>/3</loc>" + UE,
        entries=[
            ("https://x.com/1", None, ()),
            ("https://x.com/2", "2024", ()),
            ("https://x.com/3", None, ()),
        ],
        damaged=True,
    ),
    Case(
        "url-unclosed-with-two-locs",
        U + "<url><loc>/1</loc><loc>/2</loc><url><loc>/3</loc></url>" + UE,
        entries=[("https://x.com/1", None, ()), ("https://x.com/3", None, ())],
        malformed=[("/2", EXTRA_URL)],
        damaged=True,
        oracle=False,
    ),
    Case(
        # Well-formed XML, but a <url> is never valid inside a <url>: read as siblings.
        "url-nested-in-url",
        U + "<url><loc>/1</loc><url><loc>/2</loc></url></url>" + UE,
        entries=[("https://x.com/1", None, ()), ("https://x.com/2", None, ())],
        damaged=True,
    ),
    # -- sitemap index: the same two rules for <sitemap>
    Case(
        "sitemap-two-locs-lastmod-between",
        SI + "<sitemap><loc>/a.xml</loc><lastmod>2024</lastmod><loc>/b.xml</loc></sitemap>" + SIE,
        sitemaps=["https://x.com/a.xml"],
        malformed=[("/b.xml", EXTRA_SM)],
    ),
    Case(
        "sitemap-unclosed-before-next",
        SI
        + "<sitemap><loc>/a.xml</loc><lastmod>2024</lastmod>\n"
        + "<sitemap><loc>/b.xml</loc></sitemap>"
        + SIE,
        sitemaps=["https://x.com/a.xml", "https://x.com/b.xml"],
        damaged=True,
    ),
    Case(
        "sitemap-last-unclosed-at-index-end",
        SI + "<sitemap><loc>/z.xml</loc></sitemap><sitemap><loc>/a.xml</loc>" + SIE,
        sitemaps=["https://x.com/z.xml", "https://x.com/a.xml"],
        damaged=True,
    ),
    Case(
        "sitemap-none-closed-with-two-locs",
        SI + "<sitemap><loc>/a.xml</loc><loc>/b.xml</loc><sitemap><loc>/c.xml</loc>" + SIE,
        sitemaps=["https://x.com/a.xml", "https://x.com/c.xml"],
        malformed=[("/b.xml", EXTRA_SM)],
        damaged=True,
        oracle=False,
    ),
]


def padded(doc: bytes) -> bytes:
    """`doc` with a comment after the root's start tag that pushes the items past the first KiB."""
    end = doc.index(b">") + 1
    return doc[:end] + b"<!--" + b" " * 1100 + b"-->" + doc[end:]


def summary(r: c.Record) -> tuple[object, ...]:
    entries = [(e[0], e[1], tuple(a[1] for a in e[4])) for e in r.entries]
    return (entries, list(r.sitemaps), list(r.malformed), r.notes, r.damaged)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_every_loc_is_an_entry_or_a_record_in_any_chunks(case: Case) -> None:
    want = (case.entries, case.sitemaps, case.malformed, (), case.damaged)
    for data in (case.doc.encode(), padded(case.doc.encode())):
        assert summary(c.run_core(data, DOC_URL)) == want
        assert summary(c.run_core(data, DOC_URL, plan=[1] * len(data))) == want
        for seed in range(25):
            rnd = random.Random(seed)
            plan = c.chunk_plan(rnd, len(data))
            got = c.run_core(data, DOC_URL, plan=plan, drain=rnd)
            assert summary(got) == want, plan


ORACLE_CASES = [case for case in CASES if case.oracle]


@pytest.mark.parametrize("case", ORACLE_CASES, ids=[case.id for case in ORACLE_CASES])
def test_the_reference_parser_reads_them_the_same(case: Case) -> None:
    """The oracle of the differential tests was updated to the rule (tests/reference/parse.py):
    it agrees on these, damaged ones included. Not on a damaged document with an extra `<loc>`:
    its regex salvage, which runs once libxml2 reports damage, takes every `<loc>` as a URL."""
    want = (case.entries, case.sitemaps, case.malformed, (), case.damaged)
    assert summary(c.run_oracle(case.doc.encode(), DOC_URL)) == want


def test_an_error_says_where_the_open_item_ended() -> None:
    from sitescout._core import Scanner

    s = Scanner(DOC_URL, 1)
    s.feed(CASES[3].doc.encode())
    s.close()
    assert s.errors == ["line 3 col 1: <url> inside an open <url>: the open one ends here"]
    s = Scanner(DOC_URL, 1)
    s.feed(CASES[5].doc.encode())
    s.close()
    assert s.errors == ["line 3 col 1: <url> left open at its parent's end tag: it ends there"]
