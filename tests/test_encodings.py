"""Sitemaps in encodings other than UTF-8: the one the document declares (XML declaration, else
the HTTP Content-Type charset; a byte order mark wins over both) is honoured for every label of
the WHATWG Encoding Standard, decoded as the bytes stream in, whatever their chunking.

The reference is lxml (what the parser read before the native scanner): the `<loc>` strings it
decodes, normalized as sitescout normalizes URLs (non-ASCII paths become percent-encoded UTF-8),
must be the URLs the scanner gives, fed in random chunks and a byte at a time (which splits
multi-byte characters).
"""

from __future__ import annotations

import random

import pytest
from lxml import etree

from sitescout import normalize_url
from sitescout._core import Scanner
from sitescout._parse import SitemapParser

from .scaling import assert_linear
from .server import Site
from .test_parse_hostile import collect

DOC_URL = "https://x.com/sitemap.xml"
SM_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
# Words in each encoding's language, used as path segments and query values.
WORDS = {
    "Shift_JIS": ["東京", "日本語", "検索", "カタカナ", "ひらがな", "ｶﾅ", "漢字", "ー"],
    "EUC-JP": ["東京", "日本語", "検索", "カタカナ", "ひらがな", "漢字", "駅"],
    "GBK": ["北京", "中文", "搜索", "简体字", "上海", "网站"],
    "Big5": ["臺北", "中文", "搜尋", "繁體字", "網站", "香港"],
    "windows-1251": ["Москва", "поиск", "тест", "Ёлка", "щука", "Україна", "ї"],
    "KOI8-R": ["Москва", "поиск", "тест", "ёлка", "ЩУКА", "объявления"],
    "ISO-8859-2": ["Łódź", "zażółć", "gęślą", "jaźń", "Příliš", "žluťoučký", "Đ"],
}
ASCII = ["a", "page", "x-1", "b_2", "v.3", "42"]


def make_loc(rnd: random.Random, words: list[str]) -> str:
    pick = lambda: rnd.choice(words if rnd.random() < 0.7 else ASCII)  # noqa: E731
    path = "/".join(pick() for _ in range(rnd.randint(1, 4)))
    query = ""
    if rnd.random() < 0.6:
        query = "?" + "&amp;".join(f"{pick()}={pick()}" for _ in range(rnd.randint(1, 3)))
    return f"https://x.com/{path}{query}"


def make_urlset(rnd: random.Random, words: list[str], encoding: str | None, n: int) -> str:
    decl = f'<?xml version="1.0" encoding="{encoding}"?>\n' if encoding else ""
    space = lambda: rnd.choice(["", "\n", "  ", "\r\n\t"])  # noqa: E731
    body = "".join(
        f"<url>{space()}<loc>{space()}{make_loc(rnd, words)}{space()}</loc></url>\n"
        for _ in range(n)
    )
    return f'{decl}<urlset xmlns="{SM_NS}">\n{body}</urlset>\n'


def lxml_urls(data: bytes, encoding: str | None = None) -> list[str]:
    parser = etree.XMLParser(encoding=encoding) if encoding else None
    root = etree.fromstring(data, parser)
    return [normalize_url((loc.text or "").strip()) for loc in root.iter(f"{{{SM_NS}}}loc")]


def chunked(data: bytes, rnd: random.Random | None) -> list[bytes]:
    """`data` in random pieces (1 byte to the whole), or a byte at a time without `rnd`."""
    if rnd is None:
        return [data[i : i + 1] for i in range(len(data))]
    pieces, at = [], 0
    while at < len(data):
        size = rnd.choice([1, 2, 3, rnd.randint(1, 64), rnd.randint(1, len(data))])
        pieces.append(data[at : at + size])
        at += size
    return pieces


def parse(pieces: list[bytes], charset: str | None = None) -> SitemapParser:
    parser = SitemapParser(DOC_URL, charset=charset)
    for piece in pieces:
        parser.feed(piece)
    parser.close()
    return parser


def urls_of(parser: SitemapParser) -> list[str]:
    return [e.url for e in parser.take()[0]]


@pytest.mark.parametrize("encoding", list(WORDS))
def test_declared_encoding_matches_lxml(encoding: str) -> None:
    for seed in range(25):
        rnd = random.Random(f"{encoding}/{seed}")
        data = make_urlset(rnd, WORDS[encoding], encoding, rnd.randint(1, 12)).encode(encoding)
        want = lxml_urls(data)
        assert any("%" in url for url in want)  # non-ASCII made it into the URLs
        for plan in (rnd, None):
            parser = parse(chunked(data, plan), None)
            assert urls_of(parser) == want, (encoding, seed, data)
            assert parser.kind == "urlset"
            assert parser.notes == [] and parser.errors == [], data


@pytest.mark.parametrize("encoding", ["Shift_JIS", "KOI8-R", "GBK"])
def test_http_charset_when_the_declaration_is_silent(encoding: str) -> None:
    rnd = random.Random(encoding)
    for decl in ("", '<?xml version="1.0"?>\n'):
        data = (decl + make_urlset(rnd, WORDS[encoding], None, 8)).encode(encoding)
        want = lxml_urls(data, encoding)
        content_type = f'text/xml; charset="{encoding.lower()}"'
        charset = SitemapParser.charset_of(content_type)
        assert charset == encoding.lower()
        for plan in (rnd, None):
            assert urls_of(parse(chunked(data, plan), charset)) == want
    # The declaration wins over the HTTP charset.
    data = make_urlset(rnd, WORDS[encoding], encoding, 8).encode(encoding)
    assert urls_of(parse(chunked(data, rnd), "windows-1252")) == lxml_urls(data)


def test_http_charset_parsing() -> None:
    assert SitemapParser.charset_of("application/xml; charset=Shift_JIS") == "Shift_JIS"
    assert SitemapParser.charset_of("text/xml;CHARSET='koi8-r'; q=1") == "koi8-r"
    assert SitemapParser.charset_of("application/xml") is None
    assert SitemapParser.charset_of("") is None
    assert SitemapParser.charset_of(None) is None


def test_http_charset_of_a_text_sitemap() -> None:
    lines = ["https://x.com/Москва/поиск", "https://x.com/a?q=тест"]
    data = ("\r\n".join(lines) + "\n").encode("koi8-r")
    want = [normalize_url(line) for line in lines]
    for plan in (random.Random(1), None):
        parser = parse(chunked(data, plan), "koi8-r")
        assert parser.kind == "text"
        assert urls_of(parser) == want


@pytest.mark.parametrize("charset", [None, "koi8-r"])
def test_byte_order_mark_wins_over_a_conflicting_declaration(charset: str | None) -> None:
    rnd = random.Random(7)
    text = make_urlset(rnd, WORDS["KOI8-R"], "KOI8-R", 6)
    data = b"\xef\xbb\xbf" + text.encode("utf-8")
    want = lxml_urls(data)  # lxml too reads UTF-8 after a UTF-8 byte order mark
    assert any("%D0%" in url for url in want)
    for plan in (rnd, None):
        parser = parse(chunked(data, plan), charset)
        assert urls_of(parser) == want
        assert parser.notes == [] and parser.errors == []
    # UTF-16 with its byte order mark, declaring something else.
    utf16 = ("\ufeff" + text).encode("utf-16-le")
    assert urls_of(parse(chunked(utf16, rnd), charset)) == want


@pytest.mark.parametrize("where", ["declared", "http"])
def test_unknown_label_is_noted_and_read_as_utf8(where: str) -> None:
    label = "x-no-such-encoding"
    decl = f'<?xml version="1.0" encoding="{label}"?>\n' if where == "declared" else ""
    data = (
        decl + f'<urlset xmlns="{SM_NS}"><url><loc>https://x.com/é</loc></url></urlset>'
    ).encode()
    for plan in (random.Random(3), None):
        parser = parse(chunked(data, plan), label if where == "http" else "koi8-r")
        assert urls_of(parser) == ["https://x.com/%C3%A9"]
        assert parser.notes == [f'encoding "{label}" not supported: read as UTF-8']


async def test_walk_reads_the_http_charset(site: Site) -> None:
    lines = [f"{site.url}/Москва", f"{site.url}/поиск?q=тест"]
    site.add(
        "/sitemap.txt", "\n".join(lines).encode("koi8-r"), Content_Type="text/plain; charset=KOI8-R"
    )
    entries, _report = await collect(site.url + "/sitemap.txt")
    assert [e.url for e in entries] == [normalize_url(line) for line in lines]


@pytest.mark.scaling
def test_decoding_costs_linear_time() -> None:
    """A Shift_JIS urlset trickled in 3-byte pieces (most characters split): 4x the input costs
    at most 5x the time."""
    rnd = random.Random(11)
    one = make_urlset(rnd, WORDS["Shift_JIS"], "Shift_JIS", 1)
    head, tail = one.split("<url>", 1)
    item = "<url>" + tail.rsplit("</urlset>", 1)[0]
    want = lxml_urls(one.encode("shift_jis"))
    assert urls_of(parse(chunked(one.encode("shift_jis"), None))) == want

    def make(n: int) -> list[bytes]:
        data = (head + item * n + "</urlset>").encode("shift_jis")
        return [data[i : i + 3] for i in range(0, len(data), 3)]

    def read(pieces: list[bytes]) -> object:
        scanner = Scanner(DOC_URL)
        for piece in pieces:
            scanner.feed(piece)
        scanner.close()
        return scanner.take()

    assert_linear(make, read, 2_000)


@pytest.mark.parametrize("label", ["ISO-8859-1", "latin1", "iso_8859-1", "windows-1252"])
def test_latin1_labels_read_as_browsers_read_them(label: str) -> None:
    """Bytes 0x80-0x9F under an ISO-8859-1 label are windows-1252's characters (an en dash, a
    euro sign), as the WHATWG Encoding Standard says: never C1 controls in a URL."""
    data = (
        f"<?xml version='1.0' encoding='{label}'?><urlset><url>"
        "<loc>https://a.example/caf\xe9-\x96-\x80</loc></url></urlset>"
    ).encode("latin-1")
    for plan in (random.Random(label), None):
        assert urls_of(parse(chunked(data, plan))) == [
            "https://a.example/caf%C3%A9-%E2%80%93-%E2%82%AC"
        ]
    text = "https://a.example/a\x96b\n".encode("latin-1")  # a text sitemap: the HTTP charset
    assert urls_of(parse([text], "iso-8859-1")) == ["https://a.example/a%E2%80%93b"]
