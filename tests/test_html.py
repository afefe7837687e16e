"""Pure HTML page reading: tables, hostile input, encodings. No network."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitescout._html import MAX_HTML_BYTES, decode_html, parse_page
from sitescout._models import Heading, PageInfo

PAGE = "https://example.com/docs/guide/page.html"


def page(head: str = "", body: str = "", *, lang: str = "") -> bytes:
    attr = f' lang="{lang}"' if lang else ""
    return f"<!DOCTYPE html><html{attr}><head>{head}</head><body>{body}</body></html>".encode()


def links(*hrefs: str) -> str:
    return "".join(f'<a href="{h}">x</a>' for h in hrefs)


# -- head ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "body", "title"),
    [
        pytest.param("<title> Hello \n  World </title>", "", "Hello World", id="whitespace"),
        pytest.param("<title>Caf&eacute; &amp; Bar</title>", "", "Café & Bar", id="html-entities"),
        pytest.param("", "<svg><title>icon</title></svg><p>x</p>", None, id="svg-title-ignored"),
        pytest.param("<title></title>", "", None, id="empty"),
        pytest.param("<title>first</title><title>second</title>", "", "first", id="first-wins"),
    ],
)
def test_title(head: str, body: str, title: str | None) -> None:
    assert parse_page(page(head, body), PAGE).title == title


@pytest.mark.parametrize(
    ("head", "canonical"),
    [
        pytest.param(
            '<link rel="canonical" href="/docs/guide/">', "https://example.com/docs/guide/"
        ),
        pytest.param('<link rel="canonical" href="other">', "https://example.com/docs/guide/other"),
        pytest.param(
            '<link rel="canonical" href="../x?utm_source=a#f">',
            "https://example.com/docs/x",
            id="relative-dotdot-normalized",
        ),
        pytest.param(
            '<base href="https://example.com/base/"><link rel="canonical" href="c">',
            "https://example.com/base/c",
            id="relative-to-base",
        ),
        pytest.param(
            '<link rel="Canonical alternate" href="HTTPS://Example.COM:443/A">',
            "https://example.com/A",
            id="rel-tokens-and-case",
        ),
        pytest.param('<link rel="canonical" href="mailto:x@y">', None, id="not-http"),
        pytest.param('<link rel="stylesheet" href="/s.css">', None, id="absent"),
    ],
)
def test_canonical_resolved_and_normalized(head: str, canonical: str | None) -> None:
    assert parse_page(page(head), PAGE).canonical == canonical


def test_meta_language_robots() -> None:
    head = (
        '<meta name="Description" content="  A   guide. ">'
        '<meta name="robots" content="noindex, nofollow">'
    )
    info = parse_page(page(head, lang="de-DE"), PAGE)
    assert (info.description, info.robots, info.language) == (
        "A guide.",
        "noindex, nofollow",
        "de-DE",
    )


# -- links ---------------------------------------------------------------------------------------


def test_links_split_resolved_normalized_and_counted() -> None:
    body = links(
        "next.html",
        "/docs/guide/next.html?utm_source=x#top",  # the same page again
        "https://www.example.com/about/",  # www: the same site
        "http://example.com/plain",  # another scheme: the same site
        "https://example.com:8443/port",  # another port: another site
        "https://other.org/",
        "mailto:a@example.com",
        "javascript:void(0)",
        "#section",
        "",
    )
    info = parse_page(page(body=body), PAGE)
    assert info.links_internal == [
        "https://example.com/docs/guide/next.html",
        "https://www.example.com/about/",
        "http://example.com/plain",
    ]
    assert info.links_external == ["https://example.com:8443/port", "https://other.org/"]
    assert (info.link_count_internal, info.link_count_external, info.link_count_other) == (4, 2, 2)


def test_base_href_resolves_relative_links() -> None:
    head = '<base href="/other/base/">'
    body = links("child", "../up", "/abs", "?q=1")
    info = parse_page(page(head, body), PAGE)
    assert info.base_url == "https://example.com/other/base/"
    assert info.links_internal == [
        "https://example.com/other/base/child",
        "https://example.com/other/up",
        "https://example.com/abs",
        "https://example.com/other/base/?q=1",
    ]


def test_base_href_first_usable_wins_and_bad_base_ignored() -> None:
    info = parse_page(page('<base href="javascript:x">', links("a")), PAGE)
    assert info.base_url == PAGE
    assert info.links_internal == ["https://example.com/docs/guide/a"]


def test_area_links_count() -> None:
    info = parse_page(page(body='<map><area href="/m"></map>'), PAGE)
    assert info.links_internal == ["https://example.com/m"]


# -- body ----------------------------------------------------------------------------------------


def test_headings_outline_h1_to_h3_in_order() -> None:
    body = "<h2>Two</h2><h1> One <em>big</em> </h1><h4>Four</h4><h3>Three</h3><h1></h1>"
    assert parse_page(page(body=body), PAGE).headings == [
        Heading(2, "Two"),
        Heading(1, "One big"),
        Heading(3, "Three"),
    ]


def test_counts_and_visible_text_without_script_style_noscript() -> None:
    body = (
        "<p>Hello   <b>world</b></p><script>var hidden = 'secret text';</script>"
        "<style>p { color: red }</style><noscript>enable js</noscript>"
        "<form><input></form><form></form><img src=a><img src=b><img src=c><iframe></iframe>"
    )
    info = parse_page(page("<title>T</title>", body), PAGE)
    assert info.text_length == len("Hello world")
    assert (info.forms, info.images, info.iframes) == (2, 3, 1)


def test_empty_page_rules() -> None:
    assert parse_page(b"", PAGE).is_empty
    assert parse_page(b"   \n", PAGE).is_empty
    shell = page("<title>App</title>", '<div id="root"></div><script src="/app.js"></script>')
    assert parse_page(shell, PAGE).is_empty  # a title alone is not a body
    assert not parse_page(page(body="<p>text</p>"), PAGE).is_empty
    assert not parse_page(page(body=links("/x")), PAGE).is_empty


def test_to_dict_is_json() -> None:
    info = parse_page(page("<title>T</title>", "<h1>H</h1>" + links("/a")), PAGE)
    data = json.loads(json.dumps(info.to_dict()))
    assert data["title"] == "T"
    assert data["headings"] == [{"level": 1, "text": "H"}]
    assert data["link_count_internal"] == 1
    camel = info.to_dict(camel=True)
    assert camel["linkCountInternal"] == 1 and camel["baseUrl"] == PAGE
    assert set(data) == set(PageInfo.__dataclass_fields__)


# -- encodings -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "content_type", "text"),
    [
        pytest.param("café".encode(), None, "café", id="utf8-sniffed"),
        pytest.param("café".encode("cp1252"), None, "café", id="not-utf8-falls-back-1252"),
        pytest.param(
            "café".encode("latin-1"), "text/html; charset=ISO-8859-1", "café", id="header"
        ),
        pytest.param(
            b'<meta charset="windows-1251">' + "мир".encode("cp1251"), None, "мир", id="meta"
        ),
        pytest.param(
            b'<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">'
            + "мир".encode("koi8-r"),
            None,
            "мир",
            id="meta-http-equiv",
        ),
        pytest.param(
            b"\xff\xfe" + "<p>ünï</p>".encode("utf-16-le"),
            "text/html; charset=utf-8",
            "ünï",
            id="bom",
        ),
        pytest.param("café".encode(), "text/html; charset=bogus", "café", id="unknown-label"),
    ],
)
def test_decoding(body: bytes, content_type: str | None, text: str) -> None:
    assert text in decode_html(body, content_type)


def test_title_in_declared_encoding() -> None:
    body = '<html><head><meta charset="iso-8859-1"><title>Ça va</title></head></html>'
    assert parse_page(body.encode("latin-1"), PAGE).title == "Ça va"


# -- hostile input -------------------------------------------------------------------------------


def test_declared_entities_are_never_expanded() -> None:
    doc = (
        b'<?xml version="1.0"?><!DOCTYPE html [<!ENTITY x "EXPANDED">'
        b'<!ENTITY ext SYSTEM "file:///etc/passwd">'
        b'<!ENTITY a "&x;&x;&x;&x;&x;&x;&x;&x;&x;&x;">]>'
        b'<html lang="en"><head><title>&x; &ext; &a;</title></head><body><p>&ext;</p></body></html>'
    )
    info = parse_page(doc, PAGE)
    assert info.title == "&x; &ext; &a;"
    assert info.language == "en"  # the DOCTYPE was cut cleanly, the document is intact
    assert info.text_length == len("&ext;")


def test_huge_document_is_cut_at_the_cap() -> None:
    chunk = b"<p>" + links("/l").encode() + b" words words words</p>"
    doc = b"<html><body>" + chunk * (MAX_HTML_BYTES // len(chunk) + 1000) + b"</body></html>"
    info = parse_page(doc, PAGE)
    assert info.truncated and info.bytes == MAX_HTML_BYTES
    assert info.links_internal == ["https://example.com/l"]
    assert info.link_count_internal > 100_000


def test_deep_nesting_reads_what_came_before() -> None:
    doc = page("<title>Deep</title>", links("/before") + "<div>" * 100_000 + "x")
    info = parse_page(doc, PAGE)
    assert info.title == "Deep"
    assert info.links_internal == ["https://example.com/before"]
    assert any("nesting" in note for note in info.notes)


@pytest.mark.parametrize(
    "doc",
    [
        pytest.param(b"\x00\x01\x02<html>\x00<title>a\x00b</title>", id="nul-and-controls"),
        pytest.param(b"\xff\xfe\xfd\x80<a href='/\xff'>x</a>", id="invalid-bytes"),
        pytest.param(b"<a href='http://[::1'>x</a><a href='http://h:99999/'>y</a>", id="bad-urls"),
        pytest.param(b"<<<>>></a></b><title", id="tag-soup"),
        pytest.param(b"<!--" * 10_000, id="open-comments"),
        pytest.param(b"<!DOCTYPE html [" + b"]" * 50_000, id="unclosed-subset"),
        pytest.param(
            b"<?xml version='1.0' encoding='utf-16'?><html><p>x</p></html>", id="xml-decl"
        ),
        pytest.param("\ufeff\ufffe\uffff<p>x</p>".encode(), id="nonchars"),
    ],
)
def test_hostile_input_never_raises(doc: bytes) -> None:
    info = parse_page(doc, PAGE)
    json.dumps(info.to_dict())


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000) | st.text(max_size=500).map(str.encode))
def test_any_bytes_parse_without_raising(doc: bytes) -> None:
    info = parse_page(doc, PAGE)
    assert info.bytes == len(doc)
