"""URL rules: resolution (§4), normalization (§6), filtering (§8), slugs (§11)."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitescout import _urls
from sitescout._urls import (
    Classification,
    SlugRegistry,
    UrlSet,
    classify,
    document_key,
    is_http_url,
    looks_like_sitemap_url,
    normalize_url,
    origin_of,
    page_key,
    resolve_url,
    slugify,
)

from .reference import urls as reference

SITE = "https://example.com/"
PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- normalize_url

RULE_1_CASE = [
    pytest.param("HTTPS://Example.COM/About", "https://example.com/About", id="scheme-host-lower"),
    pytest.param("http://WWW.EXAMPLE.COM/A/B", "http://www.example.com/A/B", id="path-case-kept"),
    pytest.param("HtTp://x.com/", "http://x.com/", id="mixed-scheme"),
    pytest.param("https://Bücher.Example/x", "https://xn--bcher-kva.example/x", id="idna"),
    pytest.param("https://xn--bcher-kva.example/x", "https://xn--bcher-kva.example/x", id="puny"),
    pytest.param(
        "https://XN--BCHER-KVA.example/", "https://xn--bcher-kva.example/", id="puny-upper"
    ),
    pytest.param("http://[2001:DB8::1]/a", "http://[2001:db8::1]/a", id="ipv6-lower"),
    pytest.param(
        "http://[2001:db8:0:0::1]:8080/", "http://[2001:db8::1]:8080/", id="ipv6-compress"
    ),
    pytest.param("https://user:pw@x.com/a", "https://x.com/a", id="userinfo-dropped"),
    pytest.param("https://user@X.com:8443/a", "https://x.com:8443/a", id="user-port"),
    pytest.param("http://192.168.0.1/x", "http://192.168.0.1/x", id="ipv4"),
]
RULE_2_PORTS = [
    pytest.param("https://x.com:443/", "https://x.com/", id="https-443"),
    pytest.param("http://x.com:80/a", "http://x.com/a", id="http-80"),
    pytest.param("http://x.com:443/", "http://x.com:443/", id="http-443-kept"),
    pytest.param("https://x.com:80/", "https://x.com:80/", id="https-80-kept"),
    pytest.param("https://x.com:8080/", "https://x.com:8080/", id="other-port"),
    pytest.param("https://x.com:0443/", "https://x.com/", id="leading-zero-port"),
    pytest.param("https://x.com:/a", "https://x.com/a", id="empty-port"),
    pytest.param("http://[::1]:80/", "http://[::1]/", id="ipv6-default-port"),
]
RULE_3_BARE_HOST = [
    pytest.param("http://x.com:80", "http://x.com/", id="bare-with-port"),
    pytest.param("https://x.com", "https://x.com/", id="bare"),
    pytest.param("https://x.com?a=1", "https://x.com/?a=1", id="bare-with-query"),
    pytest.param("https://x.com#top", "https://x.com/", id="bare-with-fragment"),
]
RULE_4_FRAGMENT = [
    pytest.param("https://x.com/about#team", "https://x.com/about", id="fragment"),
    pytest.param("https://x.com/a?b=1#c", "https://x.com/a?b=1", id="fragment-after-query"),
    pytest.param("https://x.com/a#", "https://x.com/a", id="empty-fragment"),
]
RULE_5_ESCAPES = [
    pytest.param("https://x.com/a%2Db%5Fc", "https://x.com/a-b_c", id="dash-underscore"),
    pytest.param("https://x.com/a%2Fb", "https://x.com/a%2Fb", id="slash-kept"),
    pytest.param("https://x.com/a%2fb", "https://x.com/a%2Fb", id="lower-hex-upper"),
    pytest.param("https://x.com/%41%7a%30%7E%2E", "https://x.com/Az0~.", id="alnum-tilde-dot"),
    pytest.param("https://x.com/a%20b", "https://x.com/a%20b", id="space-kept"),
    pytest.param("https://x.com/caf%c3%a9", "https://x.com/caf%C3%A9", id="utf8-upper"),
    pytest.param("https://x.com/café", "https://x.com/caf%C3%A9", id="raw-unicode-encoded"),
    pytest.param("https://x.com/a b", "https://x.com/a%20b", id="raw-space-encoded"),
    pytest.param("https://x.com/100%", "https://x.com/100%25", id="lone-percent"),
    pytest.param("https://x.com/%%341", "https://x.com/%2541", id="no-new-escape"),
    pytest.param("https://x.com/a%3Fb%23c", "https://x.com/a%3Fb%23c", id="reserved-kept"),
    pytest.param("https://x.com/a/../b", "https://x.com/b", id="dotdot"),
    pytest.param("https://x.com/a/./b/", "https://x.com/a/b/", id="dot"),
    pytest.param("https://x.com/a/b/..", "https://x.com/a/", id="trailing-dotdot"),
    pytest.param("https://x.com/../../a", "https://x.com/a", id="dotdot-above-root"),
    pytest.param("https://x.com/a/%2E%2E/b", "https://x.com/b", id="escaped-dotdot"),
    pytest.param("https://x.com/.well-known/x", "https://x.com/.well-known/x", id="dotfile-kept"),
]
RULE_6_TRACKING = [
    pytest.param("https://x.com/?utm_source=a&id=3&gclid=z", "https://x.com/?id=3", id="utm-gclid"),
    pytest.param("https://x.com/a?ref=x", "https://x.com/a", id="ref"),
    pytest.param("https://x.com/a?refresh=1", "https://x.com/a?refresh=1", id="refresh-kept"),
    pytest.param("https://x.com/a?mc_cid=1&mc_eid=2", "https://x.com/a", id="mailchimp"),
    pytest.param("https://x.com/a?fbclid=1&_ga=2&source=n", "https://x.com/a", id="fb-ga-source"),
    pytest.param("https://x.com/a?b=2&a=1", "https://x.com/a?b=2&a=1", id="order-kept"),
    pytest.param("https://x.com/a?q=a+b%20c", "https://x.com/a?q=a+b%20c", id="encoding-kept"),
    pytest.param("https://x.com/a?q=%2f", "https://x.com/a?q=%2F", id="query-hex-upper"),
    pytest.param("https://x.com/a?UTM_Medium=x&b=1", "https://x.com/a?b=1", id="tracking-case"),
    pytest.param("https://x.com/a?", "https://x.com/a", id="empty-query"),
    pytest.param("https://x.com/a?&&b=1&", "https://x.com/a?b=1", id="empty-params"),
    pytest.param("https://x.com/a?utm_campaign=1", "https://x.com/a", id="all-tracking"),
    pytest.param(
        "https://x.com/a?sources=1&referrer=2",
        "https://x.com/a?sources=1&referrer=2",
        id="near-names-kept",
    ),
    pytest.param("https://x.com/a?q=é", "https://x.com/a?q=%C3%A9", id="query-unicode"),
]
UNCHANGED = [
    pytest.param("mailto:a@x.com", "mailto:a@x.com", id="not-http"),
    pytest.param("https://a b.com/", "https://a b.com/", id="invalid-host"),
    pytest.param("", "", id="empty"),
]


@pytest.mark.parametrize(
    ("url", "expected"),
    RULE_1_CASE
    + RULE_2_PORTS
    + RULE_3_BARE_HOST
    + RULE_4_FRAGMENT
    + RULE_5_ESCAPES
    + RULE_6_TRACKING
    + UNCHANGED,
)
def test_normalize_url(url: str, expected: str) -> None:
    assert normalize_url(url) == expected
    assert normalize_url(expected) == expected


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("https://example.com/blog/post-one/", id="slash"),
        pytest.param("https://example.com/blog/post-one", id="no-slash"),
        pytest.param("https://docs.example.com/en-us/api/System.String?view=net-8.0", id="query"),
        pytest.param("https://example.com/caf%C3%A9/a%2Fb?q=%2F&x", id="kept-escapes"),
        pytest.param("https://example.com/a/b?next=/./x", id="dot-in-query-only"),
    ],
)
def test_normalize_clean_url_is_returned_as_is(url: str) -> None:
    assert normalize_url(url) is url


# --------------------------------------------------------------------------- resolve_url

DOC = "https://example.com/sitemaps/pages.xml"


@pytest.mark.parametrize(
    ("raw", "base", "expected"),
    [
        pytest.param("post/x/", DOC, "https://example.com/sitemaps/post/x/", id="relative"),
        pytest.param("/post/x/", DOC, "https://example.com/post/x/", id="root-relative"),
        pytest.param("../x", DOC, "https://example.com/x", id="parent"),
        pytest.param("\n   https://example.com/a/\n\t", DOC, "https://example.com/a/", id="ws"),
        pytest.param("  /post/x/  ", DOC, "https://example.com/post/x/", id="ws-relative"),
        pytest.param("https://x.com/a?b=1&c=2", DOC, "https://x.com/a?b=1&c=2", id="ampersand"),
        pytest.param("//cdn.example.com/x", DOC, "https://cdn.example.com/x", id="proto-relative"),
        pytest.param(
            "//cdn.example.com/x",
            "http://e.com/",
            "http://cdn.example.com/x",
            id="proto-relative-http",
        ),
        pytest.param("?page=2", DOC, "https://example.com/sitemaps/pages.xml?page=2", id="query"),
        pytest.param("HTTPS://Example.com/A", DOC, "HTTPS://Example.com/A", id="not-normalized"),
        pytest.param("https://[::1]:8080/", DOC, "https://[::1]:8080/", id="ipv6"),
        pytest.param("https://bücher.example/", DOC, "https://bücher.example/", id="idna"),
        pytest.param("mailto:a@example.com", DOC, None, id="mailto"),
        pytest.param("javascript:void(0)", DOC, None, id="javascript"),
        pytest.param("tel:+123", DOC, None, id="tel"),
        pytest.param("ftp://example.com/x", DOC, None, id="ftp"),
        pytest.param("", DOC, None, id="empty"),
        pytest.param("   \n ", DOC, None, id="blank"),
        pytest.param("#top", DOC, None, id="fragment-only"),
        pytest.param("https://exa mple.com/", DOC, None, id="host-space"),
        pytest.param("https://example.com:99999/", DOC, None, id="port-range"),
        pytest.param("https://example.com:8o/", DOC, None, id="port-letters"),
        pytest.param("https://[::1/", DOC, None, id="bad-ipv6"),
        pytest.param("https://[zz::1]/", DOC, None, id="ipv6-garbage"),
        pytest.param("https:///path", DOC, None, id="no-host"),
        pytest.param("https://a..b/", DOC, None, id="empty-label"),
        pytest.param("post/x/", "", None, id="relative-without-base"),
        pytest.param("post/x/", "not a url", None, id="relative-bad-base"),
    ],
)
def test_resolve_url(raw: str, base: str, expected: str | None) -> None:
    assert resolve_url(raw, base) == expected


# --------------------------------------------------------------------------- properties


def _urlish() -> st.SearchStrategy[str]:
    """URLs built from pieces that exercise every normalization rule."""
    schemes = st.sampled_from(["http", "https", "HTTP", "Https", "ftp", "mailto", ""])
    hosts = st.sampled_from(
        [
            "example.com",
            "WWW.Example.COM",
            "bücher.example",
            "[::1]",
            "[2001:DB8:0::1]",
            "1.2.3.4",
            "a b.com",
            "xn--bcher-kva.example",
            "",
            "x.com.",
            "[::1",
            "ex%41.com",
        ]
    )
    userinfo = st.sampled_from(["", "user@", "u:p@", "@"])
    ports = st.sampled_from(["", ":", ":80", ":443", ":8080", ":0", ":99999", ":x"])
    segment = st.text(
        st.sampled_from(list("aZ09-_.~%2fFé /?#:@!$&'()*+,;=\\\x00")) | st.characters(),
        max_size=8,
    ) | st.sampled_from([".", "..", "%2E", "%2e%2E", "%25", "%%34"])
    path = st.lists(segment, max_size=5).map(lambda parts: "/" + "/".join(parts))
    param = st.tuples(
        st.sampled_from(["utm_source", "id", "ref", "refresh", "MC_cid", "q", "", "gclid"]),
        st.text(st.sampled_from(list("ab%2f=é +&")), max_size=4),
    ).map(lambda kv: f"{kv[0]}={kv[1]}")
    query = st.one_of(st.just(""), st.lists(param, max_size=4).map(lambda ps: "?" + "&".join(ps)))
    fragment = st.sampled_from(["", "#", "#top", "#a?b"])
    return st.builds(
        lambda *pieces: "".join(pieces),
        schemes.map(lambda s: s + "://" if s else ""),
        userinfo,
        hosts,
        ports,
        path,
        query,
        fragment,
    )


@PROPERTY
@given(
    raw=st.text() | _urlish(),
    base=st.sampled_from([DOC, "http://[::1]/a/", "", "x"]) | st.text(max_size=30),
)
def test_normalize_idempotent_on_resolved(raw: str, base: str) -> None:
    resolved = resolve_url(raw, base)
    if resolved is None:
        return
    once = normalize_url(resolved)
    assert once.startswith(("http://", "https://"))
    assert normalize_url(once) == once


def _nearly_clean() -> st.SearchStrategy[str]:
    """URLs close to the fast path's boundary: every piece is either clean or one step off."""
    path = st.lists(st.sampled_from([*"aZ09-_.~/%2fFE:@!&=+", "%2D", "%2d", "%C3", "/."])).map(
        "".join
    )
    query = st.lists(st.sampled_from([*"aZ9=&%2fF?/.#", "utm_x=1", "ref=", "&&"])).map("".join)
    return st.builds(
        "{}://{}{}/{}{}".format,
        st.sampled_from(["http", "https", "HTTPS"]),
        st.sampled_from(["example.com", "Example.com", "a_b.example-1.com.", "1.2.3.4", "x..y"]),
        st.sampled_from(["", ":443", ":80", ":8080"]),
        path,
        st.one_of(st.just(""), query.map(lambda q: "?" + q)),
    )


@PROPERTY
@given(url=_nearly_clean())
def test_fast_path_agrees_with_slow_path(url: str) -> None:
    # The fast path may only accept URLs that the full normalization would leave unchanged.
    if _urls._is_clean(url):
        assert reference._normalize_slow(url) == url
    assert normalize_url(url) == normalize_url(normalize_url(url))


@PROPERTY
@given(url=st.text() | _urlish())
def test_normalize_never_raises_and_is_idempotent(url: str) -> None:
    once = normalize_url(url)
    assert normalize_url(once) == once


@PROPERTY
@given(url=st.text() | _urlish())
def test_slugify_is_always_a_safe_name(url: str) -> None:
    slug = slugify(url)
    assert re.fullmatch(r"[a-z0-9_-]+", slug)
    assert len(slug) <= 150


@PROPERTY
@given(url=st.text() | _urlish(), site=st.sampled_from([SITE, "example.com", "", "ftp://x"]))
def test_classify_never_raises(url: str, site: str) -> None:
    result = classify(url, site)
    assert result.decision in ("keep", "drop", "flag")
    assert result.reason


# --------------------------------------------------------------------------- classify (§8)

ASSETS = [".css", ".js", ".json", ".xml", ".txt", ".pdf", ".zip"]
IMAGES = [".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".svg"]


@pytest.mark.parametrize(
    ("url", "decision", "reason"),
    [
        pytest.param(
            f"https://example.com/static/file{ext}", "drop", "asset-extension", id=f"asset{ext}"
        )
        for ext in ASSETS + IMAGES
    ]
    + [
        pytest.param("https://example.com/IMG.JPG", "drop", "asset-extension", id="asset-upper"),
        pytest.param("https://example.com/about", "keep", "page", id="page"),
        pytest.param("https://example.com/", "keep", "page", id="home"),
        pytest.param("https://example.com/js-guide/", "keep", "page", id="ext-word-in-path"),
        pytest.param("https://example.com/page/1/", "keep", "page", id="page-1"),
        pytest.param("https://example.com/blog/?page=1", "keep", "page", id="query-page-1"),
        pytest.param("https://example.com/page/2/", "drop", "pagination", id="page-2"),
        pytest.param("https://example.com/blog/page/12", "drop", "pagination", id="nested-page"),
        pytest.param("https://example.com/blog/?page=3", "drop", "pagination", id="query-page-3"),
        pytest.param("https://example.com/?cat=a&paged=2", "drop", "pagination", id="wp-paged"),
        pytest.param("https://example.com/page-2/", "drop", "pagination", id="page-dash-2"),
        pytest.param(
            "https://example.com/?page=" + "9" * 5000, "drop", "pagination", id="huge-page-number"
        ),
        pytest.param("https://example.com/pages/2/", "keep", "page", id="pages-not-pagination"),
        pytest.param("https://example.com/api/", "drop", "api-path", id="api"),
        pytest.param("https://example.com/api/v1/users", "drop", "api-path", id="api-nested"),
        pytest.param("https://example.com/wp-json/wp/v2", "drop", "api-path", id="wp-json"),
        pytest.param("https://example.com/blog/wp-json/", "drop", "api-path", id="wp-json-sub"),
        pytest.param(
            "https://example.com/.well-known/security.txt",
            "drop",
            "asset-extension",
            id="well-known-txt",
        ),
        pytest.param(
            "https://example.com/.well-known/change-password", "drop", "api-path", id="well-known"
        ),
        pytest.param(
            "https://example.com/docs/api/system.string", "keep", "page", id="api-reference-page"
        ),
        pytest.param("https://example.com/apis-overview", "keep", "page", id="api-prefix-word"),
        pytest.param("https://example.com/admin/settings", "flag", "requires-auth", id="admin"),
        pytest.param("https://example.com/account", "flag", "requires-auth", id="account"),
        pytest.param("https://example.com/accounts/me", "flag", "requires-auth", id="accounts"),
        pytest.param("https://example.com/user/dashboard/", "flag", "requires-auth", id="dash"),
        pytest.param("https://example.com/login?next=/", "flag", "requires-auth", id="login"),
        pytest.param("https://example.com/SignIn", "flag", "requires-auth", id="signin-case"),
        pytest.param("https://example.com/my-account/", "flag", "requires-auth", id="woo"),
        pytest.param("https://example.com/accounting/", "keep", "page", id="accounting"),
        pytest.param("https://example.com/administration", "keep", "page", id="administration"),
        pytest.param("mailto:info@example.com", "drop", "non-http-scheme", id="mailto"),
        pytest.param("tel:+15551234", "drop", "non-http-scheme", id="tel"),
        pytest.param("javascript:void(0)", "drop", "non-http-scheme", id="javascript"),
        pytest.param("ftp://example.com/file", "drop", "non-http-scheme", id="ftp"),
        pytest.param("#top", "drop", "fragment-only", id="fragment-only"),
        pytest.param("", "drop", "fragment-only", id="empty"),
        pytest.param("https://other.com/about", "drop", "other-host", id="other-host"),
        pytest.param("https://blog.example.com/", "drop", "other-host", id="subdomain"),
        pytest.param("https://example.com:8080/", "drop", "other-host", id="other-port"),
        pytest.param("https://www.example.com/about", "keep", "page", id="www-variant"),
        pytest.param("https://WWW.EXAMPLE.COM:443/about", "keep", "page", id="raw-www-variant"),
        pytest.param("http://example.com/about", "keep", "page", id="http-variant"),
        pytest.param("/about", "keep", "page", id="relative"),
        pytest.param("https://exa mple.com/", "drop", "unparseable", id="bad-host"),
    ],
)
def test_classify(url: str, decision: str, reason: str) -> None:
    assert classify(url, SITE) == Classification(decision, reason)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "site",
    [
        pytest.param("https://www.example.com/", id="www-site"),
        pytest.param("example.com", id="bare-host"),
        pytest.param("https://example.com/en-us/docs/", id="with-path"),
        pytest.param("HTTPS://EXAMPLE.COM", id="raw"),
    ],
)
def test_classify_site_forms(site: str) -> None:
    assert classify("https://example.com/x", site).decision == "keep"
    assert classify("https://www.example.com/x", site).decision == "keep"
    assert classify("https://other.com/x", site).reason == "other-host"


# --------------------------------------------------------------------------- slugs (§11)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        pytest.param("https://x.com/", "home", id="home"),
        pytest.param("https://x.com", "home", id="bare-host"),
        pytest.param("https://x.com/?q=1", "home", id="home-query"),
        pytest.param("https://x.com/about", "about", id="simple"),
        pytest.param("https://x.com/about/", "about", id="trailing-slash"),
        pytest.param("https://x.com/blog/post-one", "blog__post-one", id="nested"),
        pytest.param("https://x.com/Über/Straße", "uber__strasse", id="german"),
        pytest.param("https://x.com/%C3%9Cber/Stra%C3%9Fe/", "uber__strasse", id="escaped"),
        pytest.param("https://x.com/Crème Brûlée", "creme-brulee", id="accents-space"),
        pytest.param("https://x.com/a--b__c", "a-b__c", id="collapse-dashes"),
        pytest.param("https://x.com/-a-/", "a", id="trim"),
        pytest.param("https://x.com/a%2Fb", "a-b", id="escaped-slash-not-separator"),
        pytest.param("https://x.com/v1.2/API", "v1-2__api", id="dots"),
        pytest.param("/blog/post-one", "blog__post-one", id="path-only"),
    ],
)
def test_slugify(url: str, expected: str) -> None:
    assert slugify(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("https://x.com/%3F%3F%3F", id="question-marks"),
        pytest.param("https://x.com/***", id="stars"),
        pytest.param("https://x.com/日本語", id="cjk"),
    ],
)
def test_slugify_unsluggable_path_gets_stable_hash(url: str) -> None:
    slug = slugify(url)
    assert re.fullmatch(r"_[0-9a-f]{8}", slug)
    assert slugify(url) == slug
    assert slugify(url + "x") != slug


def test_slugify_long_path_is_cut_with_hash() -> None:
    slug = slugify("https://x.com/" + "a" * 300)
    assert len(slug) == 150
    assert re.fullmatch(r"a+-[0-9a-f]{8}", slug)


def test_slug_registry_numbers_collisions_in_discovery_order() -> None:
    registry = SlugRegistry()
    assert registry.assign("https://x.com/About") == "about"
    assert registry.assign("https://x.com/about/") == "about-2"
    assert registry.assign("https://x.com/ABOUT") == "about-3"
    assert registry.assign("https://x.com/about/") == "about-2"
    assert registry.assign("https://x.com/about-2") == "about-2-2"
    assert registry.get("https://x.com/About") == "about"
    assert len(registry) == 4


# --------------------------------------------------------------------------- UrlSet (§6)


def test_url_set_trailing_slash_pair_takes_slash_form() -> None:
    urls = UrlSet(SITE)
    urls.add("https://example.com/foo")
    urls.add("https://example.com/foo/")
    urls.add("https://example.com/bar")
    assert list(urls) == ["https://example.com/foo/", "https://example.com/bar"]
    assert urls.notes == [
        "Trailing-slash duplicates https://example.com/foo/ and https://example.com/foo; "
        "kept https://example.com/foo/ (the trailing-slash form)."
    ]


def test_url_set_trailing_slash_pair_follows_canonical() -> None:
    urls = UrlSet(SITE)
    urls.add("https://example.com/foo/")
    urls.add("https://example.com/foo")
    urls.set_canonical("https://example.com/foo/", "https://example.com/foo")
    assert list(urls) == ["https://example.com/foo"]
    assert "the page's canonical" in urls.notes[0]


def test_url_set_single_form_is_kept_as_seen() -> None:
    urls = UrlSet(SITE)
    urls.add("https://example.com/foo")
    urls.set_canonical("https://example.com/foo", "https://example.com/foo/")
    assert list(urls) == ["https://example.com/foo"]
    assert urls.notes == []


@pytest.mark.parametrize(
    ("site", "expected_host"),
    [
        pytest.param("https://example.com", "example.com", id="typed-bare"),
        pytest.param("www.example.com", "www.example.com", id="typed-www"),
    ],
)
def test_url_set_www_collapses_to_typed_form(site: str, expected_host: str) -> None:
    urls = UrlSet(site)
    for url in ("https://www.example.com/a", "https://example.com/a", "https://example.com/b"):
        urls.add(url)
    assert list(urls) == [f"https://{expected_host}/a", f"https://{expected_host}/b"]
    assert len(urls) == 2
    assert f"using {expected_host} (the form you typed)" in urls.notes[0]


def test_url_set_www_follows_home_canonical() -> None:
    urls = UrlSet("example.com")
    urls.add("https://example.com/")
    urls.add("https://www.example.com/a")
    urls.set_canonical("https://example.com/", "https://www.example.com/")
    assert list(urls) == ["https://www.example.com/", "https://www.example.com/a"]
    assert urls.resolve("https://example.com/a") == "https://www.example.com/a"
    assert "https://example.com/a" in urls
    assert "https://example.com/zzz" not in urls
    assert urls.notes == [
        "Both www.example.com and example.com appear; using www.example.com "
        "(the home page's canonical), rewrote example.com."
    ]


def test_url_set_normalizes_and_keeps_non_http_values() -> None:
    urls = UrlSet(SITE)
    assert urls.add("HTTPS://EXAMPLE.COM:443/a?utm_source=x") == "https://example.com/a"
    urls.add("https://example.com/a#frag")
    urls.add("mailto:x@example.com")
    assert urls.urls() == ["https://example.com/a", "mailto:x@example.com"]
    assert urls.notes == []


# -- predicates and keys -----------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com/sitemap.xml", True),
        ("https://example.com/feeds/pages.xml.gz", True),
        ("https://example.com/blog/feed.rss", True),
        ("https://example.com/atom.ATOM", True),
        ("https://example.com/sitemap1.gz", True),  # named a sitemap
        ("https://example.com/Sitemap_Index", True),
        ("https://example.com/release-1.0.tar.gz", False),  # an archive, not a sitemap
        ("https://example.com/pages.gz", False),
        ("https://example.com/", False),
        ("https://example.com/docs/", False),
        ("https://example.com/sitemap/", False),  # a folder: its last segment is empty
        ("https://[::1/x.xml", True),  # never raises on a bad host
    ],
)
def test_looks_like_sitemap_url(url: str, expected: bool) -> None:
    assert looks_like_sitemap_url(url) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://example.com", True),
        ("HTTP://EXAMPLE.COM/x", True),
        ("ftp://example.com", False),
        ("example.com", False),
        ("http:/example.com", False),
        ("", False),
        (None, False),
        (b"https://example.com", False),
    ],
)
def test_is_http_url(value: object, expected: bool) -> None:
    assert is_http_url(value) is expected


def test_url_keys_and_origin() -> None:
    assert origin_of("https://Example.com:8443/a/b?c#d") == "https://Example.com:8443"
    assert (
        document_key("HTTPS://Example.COM/A.xml?source=x#f") == "https://example.com/A.xml?source=x"
    )
    assert document_key("https://example.com/a.xml") != document_key("https://example.com/A.xml")
    same = {page_key(u) for u in ("https://www.example.com/a/", "http://example.com/a")}
    assert len(same) == 1
    assert page_key("https://example.com/a?x=1") != page_key("https://example.com/a?x=2")
