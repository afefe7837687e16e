"""Fuzzing the HTML page reader and the robots.txt reader: random bytes and text, markup built
from hostile pieces, and mutations of real files (robots.txt files from protego's corpus when it
has been downloaded, HTML pages built here). Both readers document that they never raise.

SITESCOUT_FUZZ_EXAMPLES sets the examples per test (default 200); raise it for a long session.
"""

from __future__ import annotations

import os
import tarfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protego import Protego

from sitescout._html import (
    MAX_HEADINGS,
    MAX_LINKS_KEPT,
    MAX_TEXT,
    PageInfo,
    _cap_attributes,
    parse_page,
)
from sitescout._robots import Robots, parse_robots

from .test_robots_corpus import CORPUS, DATA

EXAMPLES = int(os.environ.get("SITESCOUT_FUZZ_EXAMPLES", "200"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,  # the machine is shared; slowness is what the scaling tests measure
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PAGE = "https://example.com/a/b.html"
ROBOTS = "https://example.com/robots.txt"
AGENT = "sitescout/0.1 (+https://example.com/)"


def _corpus_sample(count: int = 60) -> list[str]:
    """Every 70th robots.txt of the corpus, or a few written here when it is not downloaded."""
    if not CORPUS.is_file():
        return [
            "User-agent: *\nDisallow: /private/\nCrawl-delay: 2\nSitemap: /s.xml\n",
            "User-agent: sitescout\nAllow: /a$\nDisallow: /*.pdf\n\nSite-map: news.xml\n",
            "\ufeffUSER-AGENT: x\nuser agent: *\ndisallow /y\nSitemap https://e.com/s.xml\n",
        ]
    out: list[str] = []
    with tarfile.open(CORPUS) as tar:
        members = [m for m in tar if m.isfile() and DATA in m.name]
        for member in members[:: max(1, len(members) // count)]:
            data = tar.extractfile(member)
            if data is not None:
                out.append(data.read().decode("utf-8", "replace"))
    return out


REAL_ROBOTS = _corpus_sample()
REAL_PAGES = [
    (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Guide</title>'
        '<link rel="canonical" href="/a/"><base href="/docs/"><meta name="description" '
        'content="A guide"></head><body><h1>Guide <b>one</b></h1><svg><g><title>i</title></g>'
        '</svg><p>Text <a href="x.html">x</a> <a href="https://o.org/">o</a>'
        '<a href="mailto:a@b">m</a></p><form></form><img src="i.png"><iframe></iframe>'
        "<script>var a = '<a href=/no>';</script><h2>Two</h2></body></html>"
    ),
    (
        '<?xml version="1.0"?><!-- c --><!DOCTYPE html [<!ENTITY e "x">]><html><body>'
        '<map><area href="/m"></map><h3 class="a" id=b data-x=\'y\'>&e; &amp;</h3>'
        "<table><tr><td><a href=/t>t</a></td></tr></table></body></html>"
    ),
]
PIECES = [
    "<svg>", "</svg>", "<title>", "</title>", "<h1>", "</h1>", "<h2 a=b>", "<a href=", '"/x"',
    "'y'", ">", "<", "/>", "=", " ", "\n", "<!--", "-->", "<!DOCTYPE html", "[", "]", "<?xml ",
    "?>", "<base href=/b/>", "<meta charset=", "utf-16", "<script>", "</script>", "&amp;",
    "&#0;", "\x00", "\ufeff", "é", "<div ", "x=1 ", "<p>", "text", "<html lang=de>", "<head>",
]  # fmt: skip
ROBOTS_PIECES = [
    "User-agent:", "user agent", "*", "sitescout", "s*", "Disallow:", "Allow:", "/", "/a$",
    "/*.x", "Crawl-delay:", "2", "-1", "nan", "1e999", "Sitemap:", "Site-map:", "sitemaps",
    "https://e.com/s.xml", "s.xml", "#", ":", " ", "\t", "\n", "\r\n", "\ufeff", "%", "%zz",
    "Host:", "Request-rate: 1/5", "Visit-time: 0400-0845", "\x00",
]  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn, originals: list[str], pieces: list[str]) -> str:
    """A real file with a few slices deleted, repeated or replaced by hostile pieces."""
    text = draw(st.sampled_from(originals))
    for _ in range(draw(st.integers(0, 6))):
        if not text:
            break
        start = draw(st.integers(0, len(text) - 1))
        end = draw(st.integers(start, min(len(text), start + 200)))
        kind = draw(st.sampled_from(["delete", "repeat", "insert"]))
        if kind == "delete":
            text = text[:start] + text[end:]
        elif kind == "repeat":
            text = text[:end] + text[start:end] * draw(st.integers(1, 50)) + text[end:]
        else:
            inserted = "".join(draw(st.lists(st.sampled_from(pieces), max_size=20)))
            text = text[:start] + inserted + text[start:]
    return text


def assert_sane_page(info: PageInfo) -> None:
    assert info.url == PAGE
    assert min(info.link_count_internal, info.link_count_external, info.link_count_other) >= 0
    assert len(info.links_internal) <= min(MAX_LINKS_KEPT, info.link_count_internal)
    assert len(info.links_external) <= min(MAX_LINKS_KEPT, info.link_count_external)
    assert len(set(info.links_internal)) == len(info.links_internal)
    assert len(info.headings) <= MAX_HEADINGS
    assert all(1 <= h.level <= 3 and 0 < len(h.text) <= MAX_TEXT for h in info.headings)
    for text in (info.title, info.description, info.robots, info.language):
        assert text is None or 0 < len(text) <= MAX_TEXT
    assert info.text_length >= 0
    info.to_dict(camel=True)


def assert_sane_robots(robots: Robots) -> None:
    assert len(set(robots.sitemaps)) == len(robots.sitemaps)
    assert all(url.startswith(("http://", "https://")) for url in robots.sitemaps)
    assert robots.crawl_delay is None or robots.crawl_delay >= 0
    assert isinstance(robots.allowed("https://example.com/a/b?c"), bool)
    assert set(robots.sitemap_spellings) <= {"Site-map", "Sitemaps"}


# -- the HTML page reader ------------------------------------------------------------------------


@FUZZ
@given(st.binary(max_size=4_000), st.sampled_from([None, "text/html; charset=utf-16", "x/y"]))
def test_any_bytes_make_a_page(body: bytes, content_type: str | None) -> None:
    assert_sane_page(parse_page(body, PAGE, content_type))


@FUZZ
@given(st.lists(st.sampled_from(PIECES), max_size=200).map("".join))
def test_hostile_markup_makes_a_page(text: str) -> None:
    assert_sane_page(parse_page(text.encode("utf-8", "surrogatepass"), PAGE))


@FUZZ
@given(mutated(REAL_PAGES, PIECES))
def test_mutated_real_pages_make_a_page(text: str) -> None:
    assert_sane_page(parse_page(text.encode("utf-8", "surrogatepass"), PAGE))


# -- the robots.txt reader -----------------------------------------------------------------------


@FUZZ
@given(st.text(max_size=2_000))
def test_any_text_makes_robots(text: str) -> None:
    assert_sane_robots(parse_robots(text, ROBOTS, AGENT))


@FUZZ
@given(st.lists(st.sampled_from(ROBOTS_PIECES), max_size=200).map("".join))
def test_hostile_directives_make_robots(text: str) -> None:
    assert_sane_robots(parse_robots(text, ROBOTS, AGENT))


@FUZZ
@given(mutated(REAL_ROBOTS, ROBOTS_PIECES))
def test_mutated_real_robots_make_robots(text: str) -> None:
    assert_sane_robots(parse_robots(text, ROBOTS, AGENT))


@FUZZ
@given(
    st.one_of(
        st.lists(st.sampled_from(ROBOTS_PIECES), max_size=200).map("".join),
        mutated(REAL_ROBOTS, ROBOTS_PIECES),
    ),
    st.sampled_from(["/", "/a", "/a.x", "/private/x", "/y", "/s.xml?q"]),
)
def test_robots_rules_mean_what_protego_reads(text: str, path: str) -> None:
    # Agent lines that cannot name us are rewritten before protego sees them: same answers.
    ours = parse_robots(text, ROBOTS, AGENT)
    theirs = Protego.parse(text.lstrip("\ufeff"))
    url = "https://example.com" + path
    assert ours.allowed(url) == theirs.can_fetch(url, ours.user_agent)
    delay = theirs.crawl_delay(ours.user_agent)
    assert ours.crawl_delay == (float(delay) if delay is not None else None)


@FUZZ
@given(st.lists(st.sampled_from(PIECES), max_size=200).map("".join))
def test_markup_with_few_attributes_is_left_alone(text: str) -> None:
    assert _cap_attributes(text) == (text, 0)
