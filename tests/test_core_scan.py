"""The native scanner (`sitescout._core.Scanner`) against the reference parser on well-formed
input: zero differences in kind, entries (every field), child sitemaps, malformed records and
notes, and in whether the document counts as damaged.

The reference is the Python parser as it was before the scanner replaced it
(tests/reference/parse.py), with one deliberate change: several `<loc>`s in one item (see its
docstring, and tests/test_several_locs.py). The core is fed in random chunk sizes (1 byte to
the whole document) with `take()` at random points; the oracle reads the document whole.

Inputs: every document literal of the parser tests (read from their source), hand-written edge
cases, and generated urlsets, sitemap indexes, RSS, Atom, text sitemaps and non-sitemaps (see
`tests/reference/compare.py` for what the generators vary). `SITESCOUT_DIFF_EXAMPLES` is the
number of generated documents over the whole file (default 5,000, about 30 s); the
issue's run is `SITESCOUT_DIFF_EXAMPLES=100000 pytest -s tests/test_core_scan.py`, and
`-s` shows how many documents each test compared.

Nothing is left out of the generators as a libxml2 quirk: every generated form is held to the
oracle. `SITESCOUT_DIFF_SKIP=unicode-digits` drops the `lastmod`/`priority` values written with
non-ASCII decimal digits (Python's `\\d` and `float()` read them as digits), to hunt for other
differences while that one is open.
"""

from __future__ import annotations

import gzip
import os
import random
import zlib
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.reference import compare as c

pytestmark = pytest.mark.skipif(
    not c.core_available(), reason="sitescout._core.Scanner is not built (`make build`)"
)

TOTAL = int(os.environ.get("SITESCOUT_DIFF_EXAMPLES", "5000"))
# Share of the generated documents per family: urlsets carry most of the rules.
SHARE = {"urlset": 0.4, "index": 0.12, "rss": 0.12, "atom": 0.12, "text": 0.1, "other": 0.04}
SHARE_ENCODED = 0.1
SHARE_COMPRESSED = 0.1
COUNTS: Counter[str] = Counter()
# The document URLs entries resolve against, and the depths stamped on them.
DOC_URLS = (
    c.DOC_URL,
    "https://x.com/",
    "http://127.0.0.1:8080/a/b/sitemap.xml?page=2",
    "https://B\u00fccher.example/s/index.xml",
    "https://x.com/sitemap.xml#frag",
)


def examples(family: str) -> settings:
    share = SHARE_COMPRESSED if family == "compressed" else SHARE.get(family, SHARE_ENCODED)
    return settings(
        max_examples=max(1, int(TOTAL * share)),
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=False,
    )


@pytest.fixture(scope="module", autouse=True)
def report() -> Iterator[None]:
    yield
    if COUNTS:
        total = sum(COUNTS.values())
        print(f"\ncore vs oracle, well-formed documents compared: {total} {dict(COUNTS)}")


def check(data: bytes, seed: int, family: str) -> None:
    rnd = random.Random(seed)
    url = rnd.choice(DOC_URLS)
    want = c.run_oracle(data, url)
    assert not want.damaged, f"the generator made a damaged {family} document: {data[:2000]!r}"
    c.assert_same(data, url, rnd=rnd, label=family)
    COUNTS[family] += 1


SEEDS = st.integers(0, 2**64 - 1)


# --------------------------------------------------------------------------- the suite's documents

SUITE = c.suite_documents()


@pytest.mark.parametrize("data", SUITE, ids=[f"doc{i}" for i in range(len(SUITE))])
def test_suite_documents(data: bytes) -> None:
    want = c.run_oracle(data)
    if want.damaged:
        pytest.skip("damaged: tests/test_core_damaged.py holds the core to properties there")
    for seed in range(3):
        c.assert_same(data, rnd=random.Random(seed), label="suite")
    c.assert_same(data, plan=[1] * len(data), label="suite, 1-byte feeds")


def test_suite_documents_were_found() -> None:
    """The harvest must keep finding documents (a refactor of the tests could hide them)."""
    kinds = Counter(c.run_oracle(d).kind for d in SUITE)
    assert len(SUITE) >= 100
    for kind in ("urlset", "sitemapindex", "rss", "atom", "text", "not-a-sitemap"):
        assert kinds[kind] > 0, kinds


# --------------------------------------------------------------------------- hand-written edges

SM = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
EDGES = [
    # text: entities, references, CDATA, comments and PIs inside values
    f"<urlset {SM}><url><loc>https://x.com/a?b=1&amp;c=2&d=3&eacute;&#x41;&#66;</loc></url></urlset>",
    "<urlset><url><loc>https://x.com/<!--c-->b<?pi x?>c<![CDATA[d&amp;]]>e</loc></url></urlset>",
    "<urlset><url><loc><!--c-->https://x.com/a</loc></url></urlset>",
    "<urlset><url><loc>https://x.com/a<b/>tail</loc></url></urlset>",
    "<urlset><url><loc>\r\n https://x.com/a\r\n</loc></url></urlset>",
    "<urlset><url><loc></loc></url><url><loc> </loc></url><url/><url><loc/></url></urlset>",
    "<urlset><url><loc>https://x.com/1</loc><loc>https://x.com/2</loc></url></urlset>",
    "<urlset><url><loc>https://x.com/1</loc><loc/></url></urlset>",
    # several <loc>s: the first non-blank is the entry's, the others are malformed records
    "<urlset><url><loc> </loc><loc>/1</loc><lastmod>2024</lastmod><loc>mailto:x</loc>"
    '<x:link xmlns:x="http://www.w3.org/1999/xhtml" rel="alternate" hreflang="de" href="ftp:/"/>'
    "<loc><![CDATA[/3]]></loc></url><url><loc/><loc> </loc></url></urlset>",
    "<sitemapindex><sitemap><loc>/a.xml</loc><lastmod>2024</lastmod><loc>/b.xml</loc>"
    "</sitemap><sitemap><loc/><loc>/c.xml</loc></sitemap></sitemapindex>",
    "<urlset><url><loc>&#0;https://x.com/a</loc></url></urlset>".replace("&#0;", ""),
    "<urlset><url><loc>https://x.com/\x01\x02a\x1f</loc></url></urlset>",
    # lastmod, priority, changefreq
    "<urlset><url><loc>/a</loc><lastmod>2024-05-01t10:00z</lastmod><priority> .5 </priority>"
    "<changefreq> Daily </changefreq></url></urlset>",
    "<urlset><url><loc>/a</loc><priority>1_0</priority><priority>0.5_0</priority></url></urlset>",
    "<urlset><url><loc>/a</loc><priority>nan</priority><changefreq>\u212aeekly</changefreq>"
    "</url></urlset>".replace("\u212aeekly", "wee\u212aly"),
    "<urlset><url><loc>/a</loc><lastmod>\u00a02024-05-01 10:00:00.5 +0530\u00a0</lastmod></url>"
    "</urlset>",
    # alternates, images, videos, news
    '<urlset xmlns:x="http://www.w3.org/1999/xhtml"><url><loc>/a</loc>'
    '<x:link rel="alternate" hreflang=" de\t" href="\n/de/a\tb "/>'
    '<x:link rel="alternate" hreflang="" href="/x"/><x:link rel="alternate" hreflang="fr"/>'
    '<x:link x:rel="alternate" hreflang="es" href="/es"/></url></urlset>',
    '<urlset xmlns:i="urn:i"><url><loc>/a</loc><i:image><i:loc> </i:loc></i:image>'
    "<i:image><i:loc>mailto:x@y</i:loc></i:image><i:image><i:loc>/i.jpg</i:loc>"
    "<i:title> T </i:title><i:caption/></i:image></url></urlset>",
    '<urlset xmlns:n="urn:n"><url><loc>/a</loc><n:news><n:publication><n:name>N</n:name>'
    "<n:language>en</n:language></n:publication><n:title>first</n:title><n:title>second</n:title>"
    "<n:publication_date>2024-05-01T10:00Z</n:publication_date></n:news></url></urlset>",
    # prolog
    '\ufeff \n<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY e "https://evil/">]>'
    "<urlset><url><loc>&e;</loc></url></urlset>",
    "<!-- c --><?pi?><!DOCTYPE urlset><!-- d --><urlset><url><loc>/a</loc></url></urlset>",
    "<URLSET><url><loc>/a</loc></url><URL><loc>/b</loc></URL></URLSET>",
    # RSS and Atom
    "<rss><channel><item><guid isPermaLink='false'>https://x.com/g</guid></item>"
    "<item><link>https://x.com/a</link><link></link><guid>/g</guid></item>"
    "<item><guid>/g2</guid><link>/l2</link><pubDate>Wed, 01 May 2024 10:00:00 +0200</pubDate>"
    "</item></channel></rss>",
    "<feed><entry><link href='/a' rel='alternate'/><link href='/b'/><published>2024</published>"
    "<updated> </updated></entry><entry><link rel='self' href='/s'/></entry></feed>",
    # text sitemaps
    "https://x.com/a\r\nhttps://x.com/b\rhttps://x.com/c\n\n  /relative\nftp://x.com/d\n",
    "HTTPS://X.COM/A?utm_source=x#frag",
]


@pytest.mark.parametrize("text", EDGES, ids=[f"edge{i}" for i in range(len(EDGES))])
def test_edge_cases(text: str) -> None:
    data = text.encode()
    for seed in range(4):
        check(data, seed, "edge")


URLSET_OF = "<urlset><url><loc>{}</loc></url></urlset>"
ENCODED = [
    ("utf-16", URLSET_OF.format("https://x.com/caf\u00e9")),
    ("utf-16-le", "\ufeff" + URLSET_OF.format("https://x.com/a")),
    ("utf-16-be", "\ufeffhttps://x.com/a\nhttps://x.com/\u00e9\n"),
    ("latin-1", '<?xml version="1.0" encoding="ISO-8859-1"?>' + URLSET_OF.format("/caf\u00e9")),
    ("cp1252", '<?xml version="1.0" encoding="windows-1252"?>' + URLSET_OF.format("/\u20ac")),
    ("ascii", '<?xml version="1.0" encoding="US-ASCII"?>' + URLSET_OF.format("/a")),
]


@pytest.mark.parametrize(("codec", "text"), ENCODED, ids=[e[0] for e in ENCODED])
def test_declared_encodings(codec: str, text: str) -> None:
    data = text.encode(codec)
    for seed in range(4):
        check(data, seed, "encoded")


# --------------------------------------------------------------------------- generated documents


@examples("urlset")
@given(c.strategy(c.urlset_docs()), SEEDS)
def test_generated_urlsets(doc: c.Doc, seed: int) -> None:
    check(doc.data, seed, "urlset")


@examples("index")
@given(c.strategy(c.index_docs()), SEEDS)
def test_generated_sitemap_indexes(doc: c.Doc, seed: int) -> None:
    check(doc.data, seed, "sitemapindex")


@examples("rss")
@given(c.strategy(c.rss_docs()), SEEDS)
def test_generated_rss(doc: c.Doc, seed: int) -> None:
    check(doc.data, seed, "rss")


@examples("atom")
@given(c.strategy(c.atom_docs()), SEEDS)
def test_generated_atom(doc: c.Doc, seed: int) -> None:
    check(doc.data, seed, "atom")


@examples("text")
@given(c.strategy(c.text_docs()), SEEDS)
def test_generated_text_sitemaps(doc: c.Doc, seed: int) -> None:
    check(doc.data, seed, "text")


@examples("other")
@given(c.strategy(c.other_docs()), SEEDS)
def test_generated_non_sitemaps(doc: c.Doc, seed: int) -> None:
    check(doc.data, seed, "other")


@examples("encoded")
@given(
    c.strategy(c.one_of(c.urlset_docs(), c.index_docs(), c.rss_docs(), c.text_docs())),
    st.sampled_from(["utf-16", "utf-16-le", "utf-16-be", "latin-1", "cp1252"]),
    SEEDS,
)
def test_generated_in_other_encodings(doc: c.Doc, codec: str, seed: int) -> None:
    """The same documents transcoded: UTF-16 with a BOM, or declared ISO-8859-1/windows-1252."""
    data = c.reencode(doc.data, codec)
    if data is None:
        return  # a character the codec cannot write
    check(data, seed, "encoded")


def compress(data: bytes, how: str, level: int) -> tuple[str, bytes]:
    """`data` as a server may send it: (Content-Encoding, body)."""
    if how == "gzip":
        return "gzip", gzip.compress(data, level)
    if how == "gzip-members":  # several members, zero padding after some
        cut = len(data) // 2
        return "gzip", gzip.compress(data[:cut], level) + b"\0" * 3 + gzip.compress(data[cut:])
    if how == "deflate":
        return "deflate", zlib.compress(data, level)
    raw = zlib.compressobj(level, wbits=-15)  # "deflate" sent raw, as some servers do
    return "deflate", raw.compress(data) + raw.flush()


@examples("compressed")
@given(
    c.strategy(c.one_of(c.urlset_docs(), c.index_docs(), c.rss_docs(), c.text_docs())),
    st.sampled_from(["gzip", "gzip-members", "deflate", "raw-deflate"]),
    st.integers(0, 9),
    SEEDS,
)
def test_generated_compressed_in_network_chunks(
    doc: c.Doc, how: str, level: int, seed: int
) -> None:
    """Compressed bodies in random chunk sizes through the walk's decoder (the core's
    inflater): the same rows as the document read whole."""
    encoding, body = compress(doc.data, how, level)
    rnd = random.Random(seed)
    c.assert_same(doc.data, rnd.choice(DOC_URLS), rnd=rnd, label=how, encoding=encoding, body=body)
    COUNTS["compressed"] += 1
