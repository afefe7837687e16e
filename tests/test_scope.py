"""The §9 scope estimate over real HTTP on 127.0.0.1 (issue 5), and its pure rules."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import pytest

from sitescout import FetchConfig, UsageError
from sitescout._scope import (
    LanguageTally,
    ScopeEstimate,
    estimate_scope,
    estimate_scope_async,
    expected_duration,
    looks_like_challenge,
    refine_range,
    url_range,
)

from .server import Reply, RequestHandler, Site, gz, sitemapindex, urlset

FAST = FetchConfig(timeout=5.0, retries=1, backoff=0.01, retry_after_cap=0.1)

CHALLENGE = (
    "<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>"
    '<div id="challenge"></div><script src="/cdn-cgi/challenge-platform/h/b/orchestrate/'
    'chl_page/v1"></script></body></html>'
)


async def estimate(url: str, **kwargs: Any) -> ScopeEstimate:
    kwargs.setdefault("config", FAST)
    return await estimate_scope_async(url, **kwargs)


def robots(site: Site, *lines: str) -> None:
    site.add("/robots.txt", "User-agent: *\n" + "\n".join(lines) + "\n", Content_Type="text/plain")


def pages(site: Site, prefix: str, n: int) -> list[str]:
    return [f"{site.url}{prefix}{i}" for i in range(n)]


def hang(release: threading.Event) -> Any:
    """A handler that never answers while the test runs; it resets once `release` is set."""

    def handler(h: RequestHandler) -> Reply | None:
        release.wait(30)
        h.reset()
        return None

    return handler


# -- the list ----------------------------------------------------------------------------


async def test_flat_urlset_of_100_is_counted_exactly(site: Site) -> None:
    robots(site, "Sitemap: /sitemap.xml")
    site.add("/sitemap.xml", urlset(pages(site, "/p/", 100)))
    est = await estimate(site.url + "/")
    assert est.url_estimate_range == (100, 100)
    assert est.sub_sitemap_count == 0
    assert est.transport == "fetch"
    assert est.source == "robots.txt"
    assert est.source_url == f"{site.url}/robots.txt"
    assert est.top_sitemap_urls == (f"{site.url}/sitemap.xml",)
    assert est.top_kind == "urlset" and est.found
    assert est.root_url == f"{site.url}/"
    assert est.expected_duration_seconds == 5.0
    assert est.expected_duration_range == (5.0, 5.0)
    # Besides the sitemap: whether an llms.txt exists (two candidate paths for a root URL).
    assert site.hits == {"/robots.txt": 1, "/sitemap.xml": 1, "/llms.txt": 1, "/docs/llms.txt": 1}


async def test_index_of_531_children_reads_one_document_only(site: Site) -> None:
    robots(site, "Sitemap: /sitemap_index.xml")
    children = [f"{site.url}/shards/s{i}.xml" for i in range(531)]
    site.add("/sitemap_index.xml", sitemapindex(children))
    est = await estimate(site.url + "/")
    assert est.url_estimate_range == (531_000, 26_550_000)
    assert est.sub_sitemap_count == 531
    assert est.expected_duration_seconds > 60
    assert est.expected_duration_seconds == round(531 / 8 * 1.5, 1)
    assert est.expected_duration_range == (round(531 / 16 * 1.5, 1), round(531 * 3 / 16 * 1.5, 1))
    assert est.top_kind == "sitemapindex"
    assert est.transport == "fetch"
    assert site.hits["/robots.txt"] == 1
    assert site.hits["/sitemap_index.xml"] == 1
    assert site.total_hits("/shards/") == 0  # no child fetched
    assert site.total_hits() == 4  # robots.txt, the index, the two llms.txt candidates


async def test_languages_from_child_paths(site: Site) -> None:
    robots(site, "Sitemap: /sitemap.xml")
    children = [
        f"{site.url}/dotnet/en-us/sitemap.xml",
        f"{site.url}/dotnet/de-de/sitemap.xml",
        f"{site.url}/dotnet/fr/sitemap.xml",
    ]
    site.add("/sitemap.xml", sitemapindex(children))
    est = await estimate(site.url + "/")
    assert {"en-us", "de-de", "fr"} <= set(est.languages_detected)
    assert est.sub_sitemap_count == 3


async def test_languages_from_page_paths_and_hreflang(site: Site) -> None:
    links = (
        '<xhtml:link rel="alternate" hreflang="de-DE" href="/de/p"/>'
        '<xhtml:link rel="alternate" hreflang="pt_BR" href="/pt/p"/>'
        '<xhtml:link rel="alternate" hreflang="x-default" href="/p"/>'
    )
    site.add(
        "/sitemap.xml",
        urlset([f"{site.url}/ja/start", f"{site.url}/docs/id/3"], extra=links),
    )
    est = await estimate(site.url + "/sitemap.xml")
    langs = set(est.languages_detected)
    assert {"de-de", "pt-br", "ja", "de", "pt"} <= langs
    assert "id" not in langs  # a bare language deep in one path is not evidence
    assert est.url_estimate_range == (2, 2)  # alternates are not page URLs of their own here
    assert any("6 hreflang alternate links" in n for n in est.notes)


async def test_sitemap_answering_403_means_browser(site: Site) -> None:
    robots(site, "Sitemap: /sitemap.xml")
    site.add("/sitemap.xml", "<html>Forbidden</html>", status=403, Content_Type="text/html")
    est = await estimate(site.url + "/")
    assert est.transport == "browser"
    assert est.url_estimate_range == (0, 0)
    assert est.top_sitemap_urls == (f"{site.url}/sitemap.xml",)
    assert not est.found
    assert any("403" in n and "browser" in n for n in est.notes)
    assert site.hits["/sitemap.xml"] == 1  # 403 is not retried


async def test_no_sitemap_anywhere_is_a_note_not_an_exception(site: Site) -> None:
    site.add("/sitemap.xml", "<html><body>home</body></html>", Content_Type="text/html")
    est = await estimate(site.url + "/")
    assert est.top_sitemap_urls == ()
    assert est.url_estimate_range == (0, 0)
    assert est.source == "none"
    assert est.top_kind is None
    assert est.expected_duration_seconds == 0.0
    assert "no sitemap found (robots.txt and well-known paths)" in est.notes
    assert any(n.startswith("well-known /sitemap.xml: not a sitemap") for n in est.notes)
    assert est.transport == "fetch"  # the site answers; it just has no sitemap
    assert site.hits["/robots.txt"] == 1
    for path in ("/sitemap.xml", "/sitemap_index.xml", "/sitemap-index.xml"):
        assert site.hits[path] == 1


async def test_server_that_never_answers_returns_within_the_timeouts(
    site: Site, release: threading.Event
) -> None:
    for path in ("/robots.txt", "/sitemap.xml", "/sitemap_index.xml", "/sitemap-index.xml"):
        site.handle(path, hang(release))
    start = time.monotonic()
    est = await estimate(site.url + "/", config=FetchConfig(timeout=0.5, retries=1, backoff=0.01))
    assert time.monotonic() - start < 5
    assert est.transport == "unknown"
    assert est.url_estimate_range == (0, 0)
    assert any(n.startswith("robots.txt did not answer") for n in est.notes)
    # No HTTP answer at all: the well-known paths would only triple the wait.
    assert site.hits["/sitemap.xml"] == 0


async def test_top_sitemap_that_never_answers_is_unknown(
    site: Site, release: threading.Event
) -> None:
    robots(site, "Sitemap: /slow.xml")
    site.handle("/slow.xml", hang(release))
    start = time.monotonic()
    est = await estimate(site.url + "/", config=FetchConfig(timeout=0.5, retries=1, backoff=0.01))
    assert time.monotonic() - start < 5
    assert est.transport == "unknown"
    assert est.top_sitemap_urls == (f"{site.url}/slow.xml",)
    assert any("top sitemap" in n and "failed" in n for n in est.notes)


async def test_refused_connection_is_unknown() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    est = await estimate(f"http://127.0.0.1:{port}/")
    assert est.transport == "unknown"
    assert est.url_estimate_range == (0, 0)


# -- discovery paths and pushback ----------------------------------------------------------------


async def test_well_known_path_is_read_once_as_the_top_document(site: Site) -> None:
    robots(site, "Disallow: /private/")
    site.add("/sitemap.xml", "<html>soft 404</html>", Content_Type="text/html")
    site.add("/sitemap_index.xml", sitemapindex(pages(site, "/s", 4)))
    est = await estimate(site.url + "/")
    assert est.source == "sitemap_index.xml"
    assert est.top_sitemap_urls == (f"{site.url}/sitemap_index.xml",)
    assert est.url_estimate_range == (4_000, 200_000)
    assert site.hits["/sitemap_index.xml"] == 1
    assert site.hits["/sitemap-index.xml"] == 0
    assert "robots.txt lists no sitemap; trying well-known paths" in est.notes


async def test_sitemap_url_given_directly_skips_robots(site: Site) -> None:
    site.add("/feeds/pages.xml.gz", gz(urlset(pages(site, "/p/", 7))))
    est = await estimate(site.url + "/feeds/pages.xml.gz")
    assert est.source == "user"
    assert est.url_estimate_range == (7, 7)
    assert site.hits["/robots.txt"] == 0


async def test_sitemap_keyword_overrides_discovery(site: Site) -> None:
    site.add("/x.xml", urlset(pages(site, "/p/", 3)))
    est = await estimate(site.url + "/", sitemap=site.url + "/x.xml")
    assert est.source == "user" and est.url_estimate_range == (3, 3)
    assert site.hits["/robots.txt"] == 0


async def test_only_the_first_robots_sitemap_is_read(site: Site) -> None:
    robots(site, "Sitemap: /a.xml", "Sitemap: /b.xml")
    site.add("/a.xml", urlset(pages(site, "/a/", 5)))
    site.add("/b.xml", urlset(pages(site, "/b/", 5)))
    est = await estimate(site.url + "/")
    assert est.top_sitemap_urls == (f"{site.url}/a.xml", f"{site.url}/b.xml")
    assert est.url_estimate_range == (5, 5)
    assert site.hits["/b.xml"] == 0
    assert "robots.txt lists 2 sitemaps; only the first was read" in est.notes


async def test_robots_429_means_browser(site: Site) -> None:
    site.add("/robots.txt", "slow down", status=429, Retry_After="0", Content_Type="text/plain")
    site.add("/sitemap.xml", urlset(pages(site, "/p/", 2)))
    est = await estimate(site.url + "/")
    assert est.transport == "browser"
    assert est.url_estimate_range == (2, 2)  # discovery went on to the well-known paths
    assert site.hits["/robots.txt"] == 2  # one retry, as configured


async def test_bot_challenge_page_instead_of_the_sitemap_means_browser(site: Site) -> None:
    robots(site, "Sitemap: /sitemap.xml")
    site.add("/sitemap.xml", CHALLENGE, Content_Type="text/html")
    est = await estimate(site.url + "/")
    assert est.transport == "browser"
    assert est.url_estimate_range == (0, 0)
    assert any("bot-challenge page" in n for n in est.notes)


async def test_bot_challenge_page_instead_of_robots_means_browser(site: Site) -> None:
    site.add("/robots.txt", CHALLENGE, Content_Type="text/html")
    est = await estimate(site.url + "/")
    assert est.transport == "browser"
    assert "robots.txt is a bot-challenge page: the site likely needs a real browser" in est.notes


async def test_ordinary_soft_404_is_not_a_challenge(site: Site) -> None:
    robots(site, "Sitemap: /sitemap.xml")
    site.add("/sitemap.xml", "<html><title>Not found</title></html>", Content_Type="text/html")
    est = await estimate(site.url + "/")
    assert est.transport == "fetch"
    assert any("not a sitemap" in n for n in est.notes)


async def test_base_path_is_noted(site: Site) -> None:
    robots(site, "Sitemap: /sitemap.xml")
    site.add("/sitemap.xml", urlset(pages(site, "/en-us/docs/", 3)))
    est = await estimate(site.url + "/en-us/docs/")
    assert "the estimate covers the whole site, not only /en-us/docs/" in est.notes
    assert est.root_url == f"{site.url}/"


async def test_damaged_top_sitemap_keeps_what_it_salvaged(site: Site) -> None:
    body = urlset(pages(site, "/p/", 4)).replace("</url><url>", "</url><<url>", 1)
    site.add("/sitemap.xml", body)
    est = await estimate(site.url + "/sitemap.xml")
    assert est.url_estimate_range[0] >= 3
    assert est.transport == "fetch"


# -- sampling (beyond §9) -----------------------------------------------------------------------


def shard_site(site: Site, sizes: list[int]) -> None:
    robots(site, "Sitemap: /index.xml")
    site.add("/index.xml", sitemapindex([f"{site.url}/s{i}.xml" for i in range(len(sizes))]))
    for i, n in enumerate(sizes):
        site.add(f"/s{i}.xml", urlset(pages(site, f"/s{i}/", n)))


async def test_sample_refines_the_range_from_real_child_sizes(site: Site) -> None:
    sizes = [10 * (i + 1) for i in range(10)]
    shard_site(site, sizes)
    est = await estimate(site.url + "/", sample=3, seed=7)
    fetched = [i for i in range(10) if site.hits[f"/s{i}.xml"]]
    assert len(fetched) == 3
    assert all(site.hits[f"/s{i}.xml"] == 1 for i in fetched)
    assert est.sampled_children == 3
    assert est.url_estimate_range == refine_range(10, [(sizes[i], sizes[i]) for i in fetched])
    assert est.sub_sitemap_count == 10
    assert any(n.startswith("range refined from 3 of 10 child sitemaps") for n in est.notes)


async def test_sample_choice_is_repeatable_with_a_seed(site: Site) -> None:
    shard_site(site, [5] * 20)
    first = await estimate(site.url + "/", sample=2, seed=3)
    hits_first = {p for p, n in site.hits.items() if p.startswith("/s")}
    site.hits.clear()
    second = await estimate(site.url + "/", sample=2, seed=3)
    hits_second = {p for p, n in site.hits.items() if p.startswith("/s")}
    assert hits_first == hits_second and len(hits_first) == 2
    assert first.url_estimate_range == second.url_estimate_range == (100, 100)


async def test_sample_counts_a_nested_index_child_by_the_formula(site: Site) -> None:
    robots(site, "Sitemap: /index.xml")
    site.add("/index.xml", sitemapindex([f"{site.url}/nested.xml"]))
    site.add("/nested.xml", sitemapindex(pages(site, "/leaf", 4)))
    est = await estimate(site.url + "/", sample=2)
    assert est.url_estimate_range == (4_000, 200_000)
    assert est.sampled_children == 1
    assert site.total_hits("/leaf") == 0


async def test_sample_that_fails_keeps_the_formula(site: Site) -> None:
    robots(site, "Sitemap: /index.xml")
    site.add("/index.xml", sitemapindex(pages(site, "/missing", 5)))
    est = await estimate(site.url + "/", sample=2)
    assert est.url_estimate_range == (5_000, 250_000)
    assert est.sampled_children == 0
    assert any("none of the 2 sampled child sitemaps could be read" in n for n in est.notes)


async def test_sample_on_a_flat_urlset_fetches_nothing_more(site: Site) -> None:
    site.add("/sitemap.xml", urlset(pages(site, "/p/", 8)))
    est = await estimate(site.url + "/sitemap.xml", sample=3)
    assert est.url_estimate_range == (8, 8)
    assert est.sampled_children == 0
    assert site.total_hits() == 1


# -- sync twin and caller mistakes --------------------------------------------------------------


def test_sync_twin(site: Site) -> None:
    robots(site, "Sitemap: /sitemap.xml")
    site.add("/sitemap.xml", urlset(pages(site, "/p/", 12)))
    est = estimate_scope(site.url + "/", config=FAST)
    assert est.url_estimate_range == (12, 12)
    assert est.as_dict()["url_estimate_range"] == (12, 12)


@pytest.mark.parametrize(
    ("url", "sitemap", "sample"),
    [
        pytest.param("ftp://example.com/", None, 0, id="not-http"),
        pytest.param("example.com", None, 0, id="no-scheme"),
        pytest.param("https://example.com/", "/sitemap.xml", 0, id="relative-sitemap"),
        pytest.param("https://example.com/", None, -1, id="negative-sample"),
        pytest.param("https://example.com/", None, True, id="bool-sample"),
    ],
)
async def test_caller_mistakes_raise_usage_error(
    url: str, sitemap: str | None, sample: int
) -> None:
    with pytest.raises(UsageError):
        await estimate_scope_async(url, sitemap=sitemap, sample=sample)


# -- pure rules ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "urls", "children", "expected"),
    [
        pytest.param("urlset", 100, 0, (100, 100), id="urlset"),
        pytest.param("text", 3, 0, (3, 3), id="text"),
        pytest.param("sitemapindex", 0, 531, (531_000, 26_550_000), id="index"),
        pytest.param("not-a-sitemap", 0, 0, (0, 0), id="not-a-sitemap"),
        pytest.param(None, 0, 0, (0, 0), id="nothing"),
    ],
)
def test_url_range(kind: Any, urls: int, children: int, expected: tuple[int, int]) -> None:
    assert url_range(kind, urls, children) == expected


@pytest.mark.parametrize(
    ("children", "expected"),
    [
        pytest.param(0, (5.0, (5.0, 5.0)), id="flat-urlset"),
        pytest.param(10, (5.0, (5.0, 5.0)), id="small-index-minimum"),
        pytest.param(32, (6.0, (5.0, 9.0)), id="low-end-clamped"),
        pytest.param(531, (99.6, (49.8, 149.3)), id="531"),
    ],
)
def test_expected_duration(children: int, expected: tuple[float, tuple[float, float]]) -> None:
    assert expected_duration(children) == expected


def test_expected_duration_of_nothing_read() -> None:
    assert expected_duration(0, read=False) == (0.0, (0.0, 0.0))


def test_refine_range() -> None:
    assert refine_range(10, [(100, 100), (120, 120)]) == (100 * 9 + 120, 100 + 120 * 9)
    assert refine_range(3, [(5, 5), (4000, 200000)]) == (5 + 4000 + 5, 5 + 200000 * 2)
    with pytest.raises(ValueError):
        refine_range(3, [])


@pytest.mark.parametrize(
    "body",
    [
        CHALLENGE,
        "<html><title>Attention Required! | Cloudflare</title></html>",
        '<html><script src="/_Incapsula_Resource?x=1"></script></html>',
        '<html><div id="px-captcha"></div></html>',
        '<html><script src="https://ct.captcha-delivery.com/c.js"></script></html>',
    ],
)
def test_challenge_pages_are_recognised(body: str) -> None:
    assert looks_like_challenge(body.encode())


@pytest.mark.parametrize(
    "body",
    [
        "<html><title>Not found</title></html>",
        "<html><form><div class='g-recaptcha'></div></form></html>",  # a contact form
        "",
    ],
)
def test_ordinary_pages_are_not_challenges(body: str) -> None:
    assert not looks_like_challenge(body.encode())


@pytest.mark.parametrize(
    ("urls", "expected"),
    [
        # One locale alone is no evidence, first segment or region-qualified (`/to-do/`).
        pytest.param(["https://x.com/fr/", "https://x.com/about"], (), id="first-segment-alone"),
        pytest.param(["https://x.com/dotnet/en-us/a"], (), id="region-alone"),
        pytest.param(["https://x.com/fr/", "https://x.com/de/a"], ("de", "fr"), id="first-pair"),
        pytest.param(["https://x.com/docs/id/123"], (), id="bare-deep-alone"),
        pytest.param(
            ["https://x.com/dotnet/fr/", "https://x.com/dotnet/de/"], ("de", "fr"), id="bare-pair"
        ),
        pytest.param(
            ["https://x.com/dotnet/fr/", "https://x.com/dotnet/en-us/"],
            ("en-us", "fr"),
            id="bare-with-region",
        ),
        pytest.param(["https://x.com/a/b/c/fr/"], (), id="too-deep"),
        pytest.param(["https://x.com/zz/", "https://x.com/pages/"], (), id="not-locales"),
    ],
)
def test_language_tally_pages(urls: list[str], expected: tuple[str, ...]) -> None:
    tally = LanguageTally()
    for url in urls:
        tally.add_page(url)
    assert tally.languages() == expected


def test_language_tally_sitemaps_and_hreflang() -> None:
    tally = LanguageTally()
    tally.add_sitemap("https://x.com/sitemaps/dotnet_en-us_1.xml")
    tally.add_sitemap("https://x.com/sitemap-fr.xml")
    for value in ("de-DE", "zh-Hant-TW", "x-default", "", "klingon"):
        tally.add_hreflang(value)
    assert tally.languages() == ("de-de", "en-us", "fr", "zh-hant")


@pytest.mark.parametrize(
    ("indexes", "expected"),
    [
        pytest.param(
            {"i": ["/maps/en-gb/part-1.xml", "/maps/es-mx/part-1.xml", "/maps/ko/part-1.xml"]},
            ("en-gb", "es-mx", "ko"),
            id="locale-folders",
        ),
        pytest.param(
            {"i": ["/sm/leaf-1.xml.gz", "/maps/de/part.xml", "/maps/fr/part.xml"]},
            ("de", "fr"),
            id="lone-sm-is-a-word",
        ),
        pytest.param(
            {"i": ["/it/part.xml", "/maps/de/part.xml", "/maps/fr/part.xml"]},
            ("de", "fr"),
            id="lone-it-is-a-word",
        ),
        # Positions are compared among the children of one index, not across indexes.
        pytest.param(
            {"a": ["/maps/en-gb/part-1.xml", "/maps/ko/part-1.xml"], "b": ["/maps/fr/part-1.xml"]},
            ("en-gb", "ko"),
            id="per-index",
        ),
        # Once each index's children are read, their locales are pooled as before.
        pytest.param(
            {"a": ["/sitemap-fr.xml"], "b": ["/de/part.xml", "/pt-br/part.xml"]},
            ("de", "fr", "pt-br"),
            id="pooled",
        ),
    ],
)
def test_language_tally_locale_folders(
    indexes: dict[str, list[str]], expected: tuple[str, ...]
) -> None:
    tally = LanguageTally()
    for index, paths in indexes.items():
        for path in paths:
            tally.add_sitemap(f"https://x.com{path}", index=f"https://x.com/{index}.xml")
    assert tally.languages() == expected
