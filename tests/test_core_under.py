"""Base-path scope in the core (rust/src/scope.rs) against the Python rules it replaced
(`tests/reference/scope.py`): `site_key`, `under_prefix`, and `Batch.retain_under`, the walk's
per-batch filter with the narrow-prefix warning's counts, must agree on every input, realistic
or hostile (percent-encoding, case, dot segments, trailing slashes, ports, IPv6, userinfo,
`www.`, non-ASCII and lone surrogates).

`SITESCOUT_DIFF_EXAMPLES` scales the number of generated cases.
"""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitescout import _core
from sitescout._budget import Budgets, BudgetTracker
from sitescout._ledger import WalkLedger
from sitescout._locale import under_prefix
from sitescout._models import WalkReport
from sitescout._urls import classify, site_key

from .reference import scope as ref

EXAMPLES = int(os.environ.get("SITESCOUT_DIFF_EXAMPLES", "3000"))
PROPERTY = settings(
    max_examples=max(100, EXAMPLES // 10),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)


def test_the_python_helpers_are_the_core() -> None:
    """One rule, one place: the Python names are the core's functions."""
    assert site_key is _core.site_key
    assert under_prefix is _core.under_prefix


# --------------------------------------------------------------------------- known answers


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://www.Example.COM./a", ("example.com", "")),
        ("http://example.com:80/", ("example.com", "")),
        ("https://example.com:80/", ("example.com", "80")),
        ("HTTPS://example.com:443", ("example.com", "")),
        ("https://u:p@www.www.ex.com:8443/x", ("www.ex.com", "8443")),
        ("https://a@b@ex.com/", ("ex.com", "")),
        ("https://[::1]:8080/", ("[::1]", "8080")),
        ("https://[::1/", ("[::1]", "")),
        ("https://www./", ("www", "")),
        ("https://WWW.\u212a.com/", ("k.com", "")),
        ("https://\u0130.com/", ("i\u0307.com", "")),
        ("https://A\u03a3.com/", ("a\u03c3.com", "")),
        ("https://A\u03a3:8/", ("a\u03c2", "8")),
        ("https://A\u03a3a.com/", ("a\u03c3a.com", "")),
        ("https://ex\ud800.com/", ("ex\ud800.com", "")),
        ("/a/b", ("", "")),
        ("", ("", "")),
    ],
)
def test_site_key_known_answers(url: str, key: tuple[str, str]) -> None:
    assert _core.site_key(url) == key
    assert ref.site_key(url) == key


@pytest.mark.parametrize(
    ("url", "under"),
    [
        ("https://x.com/en-us/docs", True),
        ("https://x.com/en-us/docs/", True),
        ("https://x.com/en-us/docs/x?q#f", True),
        ("/en-us/docs/x/y?q=1", True),
        ("https://x.com/en-us/docsx", False),
        ("https://x.com/en-us/", False),
        ("https://x.com/EN-US/docs/", False),
        ("https://x.com/en-us/d\tocs/", True),
        ("https://x.com/en-us/%64ocs/", False),
        ("https://x.com/en-us/docs/../blog", True),
        ("https://[x.com/en-us/docs/", False),
        ("https://x.com\uff0f/en-us/docs/", False),
        ("\x00 https://x.com/en-us/docs", True),
    ],
)
def test_under_prefix_known_answers(url: str, under: bool) -> None:
    for prefix in ("/en-us/docs/", "/en-us/docs", "/en-us/docs//"):
        assert _core.under_prefix(url, prefix) is under
        assert ref.under_prefix(url, prefix) is under
    assert _core.under_prefix(url, "/") and _core.under_prefix(url, "")


# --------------------------------------------------------------------------- generated URLs

SCHEMES = ["https", "http", "HTTP", "hTTps", "ftp", "x+y", "1http", "", "é"]
SEPARATORS = ["://", "://", "://", ":", ":/", ":///", "//", "", ":\\\\", ":\t//"]
USERINFO = ["", "", "", "u@", "u:p@", "@", "a@b@", "www.x.com@", "[::1]@", "é@", "u:80@"]
HOSTS = [
    "example.com", "example.com", "www.example.com", "WWW.Example.COM", "www.www.example.com",
    "example.com.", "example.com..", "www.", "www", ".", "", "ex.com.www", "wwww.example.com",
    "[::1]", "[::1", "::1]", "[::FFFF:1.2.3.4]", "[fe80::1%25eth0]", "[v1.x]", "[]", "[::1]x",
    "127.0.0.1", "b\u00fccher.de", "B\u00dcCHER.de", "xn--bcher-kva.de", "\u212aelvin.com",
    "\u0130stanbul.tr", "\u03a3\u0391\u03a3.gr", "A\u03a3.", "A\u03a3'", "ex\u200b.com",
    "\uff25x.com", "ex\uff0fcom", "ex\ufe55x", "a%41.com", "ex ample.com", "\u0295.com",
]  # fmt: skip
PORTS = [
    "", "", "", ":", ":80", ":443", ":8080", ":080", ":0", ":99999", ":8a", ":A", ":1:2",
    ":\uff18\uff10", ": 80", "]:80", ":80]",
]  # fmt: skip
PATH_PIECES = [
    "", "docs", "Docs", "DOCS", "en-us", "docs.html", "docsx", ".", "..", "%2e", "%2E%2e",
    "%64ocs", "d%6Fcs", "%2F", "%2f", "%", "a b", "\u00e9", "%C3%A9", "\t", "\n", "\r", "~x",
    ";p", "docs;x", "@", ":", "[", "]", "\\", "\x00", "\u3000", "\ud800",
]  # fmt: skip
TAILS = ["", "", "", "?", "?a=1", "?a=/docs/", "#", "#/docs/", "?#", "#?x"]
WRAPPERS = ["", "", "", " ", "\t", "\n", "\x00", "\x1f", "\u3000", "\x85"]
PREFIXES = [
    "/", "", "//", "/docs/", "/docs", "/docs//", "/Docs/", "/en-us/docs/", "/docs/a/",
    "/%64ocs/", "/d%6Fcs/", "/\u00e9/", "/a b/", "/docs;x/", "/../", "docs/", "/docs/./",
    "/\ud800/",
]  # fmt: skip


@st.composite
def paths(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.sampled_from(PATH_PIECES), max_size=5))
    lead = draw(st.sampled_from(["/", "/", "//", ""]))
    trail = draw(st.sampled_from(["", "", "/", "//"]))
    return lead + "/".join(pieces) + trail


@st.composite
def urls(draw: st.DrawFn) -> str:
    return (
        draw(st.sampled_from(WRAPPERS))
        + draw(st.sampled_from(SCHEMES))
        + draw(st.sampled_from(SEPARATORS))
        + draw(st.sampled_from(USERINFO))
        + draw(st.sampled_from(HOSTS))
        + draw(st.sampled_from(PORTS))
        + draw(paths())
        + draw(st.sampled_from(TAILS))
        + draw(st.sampled_from(WRAPPERS))
    )


def prefixes() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(PREFIXES), paths())


@given(urls())
@PROPERTY
def test_site_key(url: str) -> None:
    assert _core.site_key(url) == ref.site_key(url), repr(url)


@given(urls(), prefixes())
@PROPERTY
def test_under_prefix(url: str, prefix: str) -> None:
    assert _core.under_prefix(url, prefix) == ref.under_prefix(url, prefix), (url, prefix)


ANY_TEXT = st.text(
    st.one_of(
        st.characters(),
        st.sampled_from([*":/?#@[]%.wW\t\n \x00", "\ud800", "\udfff", "\u03a3", "\u212a"]),
    ),
    max_size=40,
)


@given(ANY_TEXT, ANY_TEXT)
@PROPERTY
def test_any_text(url: str, prefix: str) -> None:
    assert _core.site_key(url) == ref.site_key(url), repr(url)
    assert _core.under_prefix(url, prefix) == ref.under_prefix(url, prefix), (url, prefix)
    for head in ("https://", "http://www.", "//"):
        assert _core.site_key(head + url) == ref.site_key(head + url), repr(head + url)


# --------------------------------------------------------------------------- the batch


def scoped(
    urls: list[str], site: tuple[str, str], prefix: str
) -> tuple[list[str], tuple[int, int]]:
    """What the walk kept before the rule moved into the core, and its counts."""
    kept, examined, matched = [], 0, 0
    for url in urls:
        verdict = ref.in_scope(url, site, prefix)
        if verdict is not None:
            examined += 1
            matched += verdict
        if verdict:
            kept.append(url)
    return kept, (examined, matched)


def batch_of(urls: list[str]) -> _core.Batch:
    batch = _core.Batch()
    for url in urls:
        batch.push(url, "https://example.com/sitemap.xml", 1, "sitemap")
    return batch


SITES = [
    "https://example.com/",
    "https://www.example.com:8080/",
    "http://EXAMPLE.com./",
    "https://[::1]/",
    "https://b\u00fccher.de/",
]


@pytest.mark.slow
@given(
    st.lists(urls().filter(lambda u: "\ud800" not in u), max_size=20),
    st.sampled_from(SITES),
    prefixes(),
)
@PROPERTY
def test_retain_under_keeps_and_counts_as_under_base_path_did(
    urls: list[str], site_url: str, prefix: str
) -> None:
    site = ref.site_key(site_url)
    batch = batch_of(urls)
    counts = batch.retain_under(*site, prefix)
    assert (batch.urls(), counts) == scoped(urls, site, prefix)


def test_retain_under_on_a_walk_like_batch() -> None:
    urls = [
        "https://example.com/docs/a",
        "https://www.example.com/docs",
        "http://example.com:80/docs/b/",
        "https://example.com/docsx",
        "https://example.com/blog/docs/",
        "https://example.com:8443/docs/a",
        "https://other.com/docs/a",
        "https://EXAMPLE.com/Docs/a",
    ]
    batch = batch_of(urls)
    assert batch.retain_under("example.com", "", "/docs/") == (6, 3)
    assert batch.urls() == urls[:3]
    assert batch_of(urls).retain_under("example.com", "", "/") == (6, 6)


def test_the_ledger_counts_a_batch_as_the_reference_counts_urls() -> None:
    urls = [f"https://example.com/{p}/{i}" for i in range(50) for p in ("docs", "blog")]
    urls += ["https://elsewhere.com/docs/1", "https://www.example.com/docs"]

    def ledger() -> WalkLedger:
        return WalkLedger(
            WalkReport(),
            BudgetTracker(Budgets(), clock=lambda: 0.0),
            site_url="https://example.com/docs/",
            prefix="/docs/",
            max_document_bytes=1 << 20,
        )

    batched = ledger()
    kept, counts = scoped(urls, ref.site_key("https://example.com/docs/"), "/docs/")
    batch = batch_of(urls)
    batched.retain_under_base_path(batch)
    assert batch.urls() == kept
    assert (batched.prefix_examined, batched.prefix_matched) == (101, 51)
    assert (batched.prefix_examined, batched.prefix_matched) == counts


# --------------------------------------------------------------------------- classify


@pytest.mark.slow
@given(urls())
@PROPERTY
def test_classify_reads_the_site_as_before(url: str) -> None:
    """`classify` now asks the core for the URL's site: other-host verdicts as before."""
    if "\ud800" in url:
        return
    site = "https://example.com/"
    reason = classify(url, site).reason
    if reason in ("fragment-only", "non-http-scheme", "unparseable"):
        return
    normalized = _core.normalize_url(_core.resolve_url(url.strip(), site) or "")
    other = ref.site_key(normalized) != ref.site_key(site)
    assert (reason == "other-host") is other, (url, reason)


# --------------------------------------------------------------------------- every code point


@pytest.mark.slow
def test_every_code_point_in_a_host() -> None:
    """Lowercasing is CPython's own (the glue calls `str.lower()`), final sigma included: each
    code point after, before and between sigmas, where its case class decides the form."""
    bad = []
    for code in range(sys.maxunicode + 1):
        c = chr(code)
        url = f"https://{c}\u03a3.A\u03a3{c}0A\u03a3{c}A:{c}/"
        if _core.site_key(url) != ref.site_key(url):
            bad.append(hex(code))
    assert not bad
