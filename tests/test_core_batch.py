"""The native rows: JSON lines, CSV and plain URLs byte-for-byte as the Python writers made them
from the same entries (`tests/reference/encode.py`), de-duplication against the seen-set,
alternates, splitting."""

from __future__ import annotations

import hashlib
from xml.sax.saxutils import escape, quoteattr

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitescout._core import Batch, SeenSet, url_hashes
from sitescout._parse import SitemapParser
from tests.reference import encode

# Text that survives into the output as it is: anything printable, quotes, commas, backslashes,
# newlines inside values, non-ASCII.
TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), min_codepoint=0x20)
    | st.sampled_from('",\\\n'),
    max_size=30,
)
PRIORITY = st.one_of(
    st.sampled_from(["0.5", "1", "0", "1.0", "0.00001", "0.1234567890123", "1e-7", " 0.3 ", "x"]),
    st.floats(min_value=0, max_value=1).map(repr),
)


@st.composite
def documents(draw: st.DrawFn) -> tuple[bytes, str]:
    parts = []
    for i in range(draw(st.integers(1, 6))):
        loc = draw(st.sampled_from(["https://x.com/p", "/rel/p", "https://x.com/a?b=1&amp;c=2"]))
        fields = [f"<loc>{loc}{i}</loc>"]
        if draw(st.booleans()):
            fields.append(f"<lastmod>{escape(draw(TEXT))}</lastmod>")
        if draw(st.booleans()):
            fields.append(f"<priority>{draw(PRIORITY)}</priority>")
        if draw(st.booleans()):
            fields.append(
                f"<changefreq>{draw(st.sampled_from(['daily', 'Weekly', 'no']))}</changefreq>"
            )
        for _ in range(draw(st.integers(0, 2))):
            lang = quoteattr(draw(TEXT) or "de")
            fields.append(
                f'<xhtml:link rel="alternate" hreflang={lang} href="https://x.com/{i}/{draw(TEXT)!s:.5}"/>'.replace(
                    "&", "&amp;"
                )
            )
        parts.append("<url>" + "".join(fields) + "</url>")
    body = (
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:xhtml="http://www.w3.org/1999/xhtml">' + "".join(parts) + "</urlset>"
    )
    sitemap = "https://x.com/" + draw(TEXT)
    return body.encode(), sitemap


def rows_of(data: bytes, sitemap: str, depth: int = 2) -> Batch:
    parser = SitemapParser(sitemap, depth=depth)
    parser.feed(data)
    parser.close()
    rows, _sitemaps, _malformed = parser.take_rows()
    return rows


@settings(max_examples=300, deadline=None)
@given(documents())
def test_encodings_match_the_python_writers(doc: tuple[bytes, str]) -> None:
    rows = rows_of(*doc)
    alternates = rows.alternates(SeenSet(), SeenSet())
    for batch in (rows, alternates):
        entries = batch.entries()
        assert batch.to_jsonl() == encode.to_jsonl(entries)
        assert batch.to_csv() == encode.to_csv(entries)
        assert batch.to_txt() == encode.to_txt(entries)


def test_dedup_alternates_and_split() -> None:
    doc = (
        b'<urlset xmlns:xhtml="http://www.w3.org/1999/xhtml">'
        b'<url><loc>https://x.com/a</loc><xhtml:link rel="alternate" hreflang="de" '
        b'href="https://x.com/de/a"/></url>'
        b"<url><loc>https://x.com/b</loc></url><url><loc>https://x.com/a</loc></url>"
        b"<url><loc>https://x.com/de/a</loc></url></urlset>"
    )
    seen = SeenSet()
    rows = rows_of(doc, "https://x.com/s.xml")
    assert rows.urls() == [
        "https://x.com/a",
        "https://x.com/b",
        "https://x.com/a",
        "https://x.com/de/a",
    ]
    assert rows.retain_new(seen) == 1
    assert rows.urls() == ["https://x.com/a", "https://x.com/b", "https://x.com/de/a"]
    # The alternate is a page of this document already: not listed again as an alternate.
    assert len(rows.alternates(seen, SeenSet())) == 0
    fresh = rows_of(doc, "https://x.com/s.xml")
    held = SeenSet()
    alternates = fresh.alternates(SeenSet(), held)
    assert [(e.url, e.hreflang, e.alternate_of) for e in alternates.entries()] == [
        ("https://x.com/de/a", "de", "https://x.com/a")
    ]
    assert (alternates.pages(), fresh.pages()) == (0, 4)
    # Held once, an alternate is not made a row again.
    assert len(fresh.alternates(SeenSet(), held)) == 0
    tail = fresh.split_off(3)
    assert (fresh.urls(), tail.urls()) == (
        ["https://x.com/a", "https://x.com/b", "https://x.com/a"],
        ["https://x.com/de/a"],
    )
    fresh.extend(tail)
    assert (len(fresh), len(tail)) == (4, 0)
    assert {e.sitemap for e in fresh.entries()} == {"https://x.com/s.xml"}
    assert {e.depth for e in fresh.entries()} == {2}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 25)), max_size=20))
def test_batches_taken_between_appends_keep_every_row_once_in_order(
    steps: list[tuple[int, int]],
) -> None:
    """The emitter's way: a document's rows appended, then every full batch taken."""
    pending, taken, expected = Batch(), [], []
    for count, size in steps:
        urls = [f"https://x.com/p{len(expected) + i}" for i in range(count)]
        expected += urls
        piece = Batch()
        for url in urls:
            piece.push(url, "https://x.com/s.xml", 1, "sitemap")
        pending.extend(piece)
        for batch in pending.take_batches(size):
            assert len(batch) == size
            taken += batch.urls()
        assert len(pending) < size
    assert taken + pending.urls() == expected


# -- the batch run's URL hashes ----------------------------------------------------------------


def _blake2b(url: str, key: bytes) -> bytes:
    data = url.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=8, key=key).digest()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(), max_size=30), st.binary(min_size=1, max_size=64))
def test_url_hashes_are_hashlibs_keyed_blake2b(urls: list[str], key: bytes) -> None:
    """Any text (lone surrogates as their `surrogatepass` bytes) and any key hashlib takes."""
    assert url_hashes(urls, key) == b"".join(_blake2b(u, key) for u in urls)


def test_a_batchs_url_hashes_are_its_urls_hashes() -> None:
    batch = Batch()
    urls = ["https://x.com/a", "https://b\u00fccher.example/\u00e9", "https://x.com/?q=1&r=2"]
    for url in urls:
        batch.push(url, "https://x.com/s.xml", 1, "sitemap")
    key = bytes(range(16))
    assert (
        batch.url_hashes(key) == url_hashes(urls, key) == b"".join(_blake2b(u, key) for u in urls)
    )
    assert Batch().url_hashes(key) == b""


@pytest.mark.parametrize("key", [b"", bytes(65)])
def test_a_key_hashlib_refuses_is_refused(key: bytes) -> None:
    with pytest.raises(ValueError, match="1 to 64 bytes"):
        url_hashes(["https://x.com/"], key)
    with pytest.raises(ValueError, match="1 to 64 bytes"):
        Batch().url_hashes(key)
