"""Fuzzing the sitemap parser (issue 15): random bytes and mutated real documents.

Two properties over every input: nothing but the documented error tree (`sitescout._errors`)
escapes the parser, and the result does not depend on how the bytes were chunked. Seeds are
realistic documents of every kind; mutations truncate them, insert, delete and flip bytes.

`SITESCOUT_FUZZ_EXAMPLES` sets the examples per test (default 200), so a long fuzzing session
is the same harness with a larger number.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitescout._errors import SitescoutError
from sitescout._models import Entry, Malformed
from sitescout._parse import SitemapParser

from .test_parse import Result

DOC = "https://x.com/sitemaps/main.xml"
EXAMPLES = int(os.environ.get("SITESCOUT_FUZZ_EXAMPLES", "200"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Past the parser's 1 KiB sniffing window, so that small chunks really are small.
PAD = "<!-- " + "padding " * 140 + "-->"

URLSET = f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:xhtml="http://www.w3.org/1999/xhtml"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
        xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"
        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">{PAD}
  <url>
    <loc>https://x.com/en/page?a=1&amp;b=2</loc>
    <lastmod>2024-05-01T10:00:00Z</lastmod><changefreq>weekly</changefreq>
    <priority>0.8</priority>
    <xhtml:link rel="alternate" hreflang="de" href="https://x.com/de/seite"/>
    <xhtml:link rel="alternate" hreflang="fr" href="/fr/page"/>
  </url>
  <url>
    <loc><![CDATA[https://x.com/gallery]]></loc>
    <image:image><image:loc>https://x.com/img/1.jpg</image:loc>
      <image:title>One &amp; two</image:title></image:image>
  </url>
  <url>
    <loc>/videos/intro</loc>
    <video:video><video:thumbnail_loc>https://x.com/t.jpg</video:thumbnail_loc>
      <video:title>Intro</video:title><video:description>d</video:description>
      <video:content_loc>https://x.com/v.mp4</video:content_loc></video:video>
  </url>
  <url>
    <loc>https://x.com/news/story</loc>
    <news:news><news:publication><news:name>X</news:name><news:language>en</news:language>
      </news:publication><news:publication_date>2024-05-01</news:publication_date>
      <news:title>Story</news:title></news:news>
  </url>
  <url><loc> https://x.com/caf\u00e9 </loc><priority>2</priority></url>
</urlset>
""".encode()

SITEMAPINDEX = f"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{PAD}
  <sitemap><loc>https://x.com/sitemap-1.xml</loc><lastmod>2024-05-01</lastmod></sitemap>
  <sitemap><loc>https://x.com/sitemap-2.xml.gz?source=a&amp;x=1</loc></sitemap>
  <sitemap><loc>/relative/sitemap-3.xml</loc></sitemap>
</sitemapindex>
""".encode()

RSS = f"""<?xml version="1.0"?>
<rss version="2.0"><channel><title>Blog</title><link>https://x.com/</link>{PAD}
<item><title>A</title><link>https://x.com/a</link>
  <pubDate>Wed, 01 May 2024 10:00:00 GMT</pubDate></item>
<item><guid isPermaLink="true">https://x.com/g</guid></item>
<item><link> /b </link></item>
</channel></rss>
""".encode()

ATOM = f"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>{PAD}
<entry><link rel="alternate" href="https://x.com/a"/><updated>2024-05-01T10:00:00Z</updated>
</entry>
<entry><link href="/b"/><published>2024-05-01</published></entry>
</feed>
""".encode()

TEXT = ("\n".join(f"https://x.com/page/{i}?q={i}" for i in range(60)) + "\nnot a url\n").encode()

SEEDS = [
    URLSET,
    SITEMAPINDEX,
    RSS,
    ATOM,
    TEXT,
    URLSET.replace(b"\n", b"\r\n"),
    URLSET.decode().replace("UTF-8", "UTF-16").encode("utf-16"),  # with a BOM
]


def parse(data: bytes, sizes: list[int], *, cut: bool) -> Result:
    """Feed `data` in chunks of the given sizes (cycled; [] means whole), draining as it goes."""
    parser = SitemapParser(DOC)
    entries: list[Entry] = []
    sitemaps: list[str] = []
    malformed: list[Malformed] = []
    pos = k = 0
    while pos < len(data):
        size = sizes[k % len(sizes)] if sizes else len(data)
        parser.feed(data[pos : pos + size])
        pos, k = pos + size, k + 1
        e, s, m = parser.take()
        entries += e
        sitemaps += s
        malformed += m
    if cut:
        parser.note_truncated()
    parser.close()
    e, s, m = parser.take()
    return Result(
        parser.kind, entries + e, sitemaps + s, malformed + m, parser.notes, parser.errors
    )


def check(data: bytes, sizes: list[int], cut: bool) -> None:
    try:
        whole = parse(data, [], cut=cut)
        chunked = parse(data, sizes, cut=cut)
    except SitescoutError:
        return  # the documented tree may be raised on purpose; anything else is a bug
    for field in ("kind", "entries", "sitemaps", "malformed", "notes", "errors"):
        got, want = getattr(chunked, field), getattr(whole, field)
        assert got == want, f"{field} differs in chunks of {sizes}"


# Bytes that matter to the parser's carry-overs between chunks and to its recovery.
PIECES = (
    b"<", b">", b"&", b"]]>", b"<![CDATA[", b"<!--", b"-->", b"<loc>", b"</loc>", b"<url>",
    b"</url>", b"\x00", b"\xff\xfe", b"\n", b'"', b"<!DOCTYPE x [<!ENTITY e 'v'>]>", b"&e;",
    b"&#x0;", b"\xc3",
)  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(0, 6))):
        op = draw(st.sampled_from(["truncate", "insert", "delete", "flip", "repeat"]))
        at = draw(st.integers(0, len(data)))
        if op == "truncate":
            del data[at:]
        elif op == "insert":
            piece = draw(st.one_of(st.binary(max_size=8), st.sampled_from(PIECES)))
            data[at:at] = piece
        elif op == "delete":
            del data[at : at + draw(st.integers(1, 64))]
        elif op == "flip" and at < len(data):
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "repeat":
            data[at:at] = data[at : at + draw(st.integers(1, 32))] * draw(st.integers(2, 20))
    return bytes(data)


CHUNKS = st.lists(st.integers(1, 700), min_size=1, max_size=12)


@FUZZ
@given(data=mutated(), sizes=CHUNKS, cut=st.booleans())
def test_mutated_documents(data: bytes, sizes: list[int], cut: bool) -> None:
    check(data, sizes, cut)


@FUZZ
@given(data=st.binary(max_size=4000), sizes=CHUNKS, cut=st.booleans())
def test_random_bytes(data: bytes, sizes: list[int], cut: bool) -> None:
    check(data, sizes, cut)


@FUZZ
@given(
    head=st.sampled_from(SEEDS).map(lambda d: d[: len(d) // 2]),
    tail=st.binary(max_size=3000),
    sizes=CHUNKS,
)
def test_random_bytes_after_a_real_beginning(head: bytes, tail: bytes, sizes: list[int]) -> None:
    check(head + tail, sizes, cut=False)


def test_seeds_parse_cleanly() -> None:
    """The seeds are real documents: the fuzzing starts from inputs that work."""
    for seed in SEEDS:
        result = parse(seed, [], cut=False)
        assert result.kind in ("urlset", "sitemapindex", "rss", "atom", "text")
        assert result.entries or result.sitemaps
        assert not result.errors
