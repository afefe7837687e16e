"""The link crawl over real HTTP on 127.0.0.1 (issue 7's list); requests counted at the server."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import threading
import time
from typing import Any

import pytest

from sitescout._crawl import (
    HTML_ACCEPT,
    MAX_PAGES,
    CrawledPage,
    Crawler,
    CrawlOptions,
    CrawlReport,
    SitemapFound,
    fetch_page,
)
from sitescout._errors import UsageError
from sitescout._http import FetchConfig, Fetcher
from sitescout._render import BrowserUnavailableError, check_render_available

from .server import InFlight, Reply, RequestHandler, Site, urlset

FAST = FetchConfig(timeout=5.0, retries=2, backoff=0.01)
HTML = "text/html; charset=utf-8"


def html(title: str, *hrefs: str, head: str = "", body: str = "") -> str:
    anchors = "".join(f'<a href="{h}">{h}</a> ' for h in hrefs)
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title>{head}</head>"
        f"<body><p>{title}</p>{anchors}{body}</body></html>"
    )


def add_page(site: Site, path: str, *hrefs: str, **kwargs: str) -> None:
    site.add(path, html(path, *hrefs, **kwargs), Content_Type=HTML)


def robots(site: Site, text: str) -> None:
    site.add("/robots.txt", text, Content_Type="text/plain")


async def crawl(
    site: Site, path: str = "/", **kwargs: Any
) -> tuple[list[CrawledPage], list[SitemapFound], CrawlReport]:
    kwargs.setdefault("config", FAST)
    crawler = Crawler(site.url + path, CrawlOptions(**kwargs))
    pages: list[CrawledPage] = []
    sitemaps: list[SitemapFound] = []
    async for event in crawler:
        if isinstance(event, SitemapFound):
            sitemaps.append(event)
        else:
            pages.append(event)
    return pages, sitemaps, crawler.report


def page_hits(site: Site) -> int:
    return sum(n for path, n in site.hits.items() if path != "/robots.txt")


def paths(pages: list[CrawledPage], site: Site) -> set[str]:
    return {p.url.removeprefix(site.url) for p in pages}


# -- depth and size limits -----------------------------------------------------------------------


async def test_six_levels_deep_only_depth_three_requested(site: Site) -> None:
    # A binary tree 6 levels below the home page: /d1-0, /d1-1, /d2-0 ... /d6-63.
    add_page(site, "/", "/d1-0", "/d1-1")
    for level in range(1, 7):
        for i in range(2**level):
            children = [f"/d{level + 1}-{2 * i}", f"/d{level + 1}-{2 * i + 1}"]
            add_page(site, f"/d{level}-{i}", *(children if level < 6 else []), "/")
    pages, _, report = await crawl(site)
    expected = {"/"} | {f"/d{lv}-{i}" for lv in (1, 2, 3) for i in range(2**lv)}
    assert paths(pages, site) == expected
    assert {p.url.removeprefix(site.url): p.depth for p in pages}["/d3-7"] == 3
    assert all(p.ok and p.title == p.url.removeprefix(site.url) for p in pages)
    assert site.total_hits("/d4") + site.total_hits("/d5") + site.total_hits("/d6") == 0
    assert page_hits(site) == len(expected)  # and nothing twice
    assert report.beyond_depth == 16  # the links to level 4, seen but not requested


async def test_max_depth_lower_than_three(site: Site) -> None:
    add_page(site, "/", "/a")
    add_page(site, "/a", "/b")
    add_page(site, "/b", "/c")
    pages, _, _ = await crawl(site, max_depth=1)
    assert paths(pages, site) == {"/", "/a"}
    assert site.hits["/b"] == 0


async def test_thousand_linked_pages_at_most_two_hundred_requested(site: Site) -> None:
    add_page(site, "/", *[f"/p{i}" for i in range(1000)])
    for i in range(1000):
        add_page(site, f"/p{i}", "/", f"/p{(i + 1) % 1000}", f"/q{i}")
    pages, _, report = await crawl(site, max_pages=10_000, concurrency=8)
    assert page_hits(site) <= MAX_PAGES
    assert len(pages) == report.fetches == MAX_PAGES
    assert report.page_limit_hit and report.unvisited > 0
    # Breadth first: every page requested is the home page or one it links to directly.
    assert site.total_hits("/q") == 0


async def test_fewer_pages_when_asked(site: Site) -> None:
    add_page(site, "/", *[f"/p{i}" for i in range(50)])
    for i in range(50):
        add_page(site, f"/p{i}")
    pages, _, _ = await crawl(site, max_pages=10)
    assert len(pages) == 10 == page_hits(site)


# -- what is not followed ------------------------------------------------------------------------


async def test_links_not_followed(site: Site) -> None:
    other = Site().start()
    try:
        add_page(
            site,
            "/",
            f"{other.url}/elsewhere",  # another origin (another port on the same host)
            "mailto:someone@example.com",
            "tel:+123",
            "javascript:void(0)",
            "/style.css",
            "/app.js",
            "/logo.png",
            "/doc.pdf",
            "/a",
            "/a/",
            "/a?utm_source=news&utm_medium=mail",
            "/a#section",
            "/a/?gclid=1",
            "#top",
            "/blog/page/2/",
            "/blog?page=3",
            "/blog/page/1/",
            "/api/items",
            "/account/settings",
            "/b?id=1",
            "/b?id=2",
        )
        for path in ("/a", "/blog/page/1/", "/b"):
            add_page(site, path)
        pages, _, report = await crawl(site)
    finally:
        other.stop()
    assert other.total_hits() == 0
    assert dict(site.hits) == {
        "/robots.txt": 1,
        "/": 1,
        "/a": 1,  # one request for /a, /a/, tracking and fragment variants
        "/blog/page/1/": 1,  # page 1 is a page; later pages are pagination
        "/b?id=1": 1,  # other query parameters make other pages
        "/b?id=2": 1,
    }
    assert len(pages) == 5
    assert report.filtered["asset-extension"] == 4
    assert report.filtered["pagination"] == 2
    assert report.filtered["api-path"] == 1
    assert report.filtered["requires-auth"] == 1
    assert report.filtered["other-host"] == 1


async def test_base_href_and_final_url_resolve_links(site: Site) -> None:
    site.add("/start", status=301, Location="/docs/intro/")
    add_page(site, "/docs/intro/", "next", "../sibling")  # relative to the final URL
    add_page(site, "/docs/intro/next", "child", head='<base href="/base/dir/">')
    add_page(site, "/docs/sibling")
    add_page(site, "/base/dir/child")
    pages, _, _ = await crawl(site, "/start")
    by_url = {p.url.removeprefix(site.url): p for p in pages}
    assert set(by_url) == {"/start", "/docs/intro/next", "/docs/sibling", "/base/dir/child"}
    assert by_url["/start"].final_url == site.url + "/docs/intro/"
    assert site.hits["/docs/intro/next/child"] == 0


async def test_start_url_moved_to_another_site_crawls_that_site_by_its_rules(
    site: Site,
) -> None:
    moved = Site().start()
    try:
        site.add("/", status=301, Location=moved.url + "/")
        robots(moved, "User-agent: *\nDisallow: /private/\n")
        add_page(moved, "/", "/ok", "/private/x", site.url + "/back")
        add_page(moved, "/ok")
        add_page(moved, "/private/x")
        pages, _, report = await crawl(site)
    finally:
        moved.stop()
    assert [p.final_url for p in pages] == [moved.url + "/", moved.url + "/ok"]
    assert moved.hits["/robots.txt"] == 1 and moved.hits["/private/x"] == 0
    assert site.hits["/back"] == 0  # the old site is another site now
    assert report.robots_url == moved.url + "/robots.txt"
    assert any("redirects to" in note for note in report.notes)


async def test_redirect_to_a_page_already_crawled_is_not_read_twice(site: Site) -> None:
    add_page(site, "/", "/old", "/new")
    site.add("/old", status=301, Location="/new")
    add_page(site, "/new", "/deeper")
    add_page(site, "/deeper")
    pages, _, _ = await crawl(site, concurrency=1)
    assert site.hits["/new"] == 1 and site.hits["/deeper"] == 1
    assert [(p.url, p.final_url) for p in pages] == [
        (site.url + "/", site.url + "/"),
        (site.url + "/old", site.url + "/new"),
        (site.url + "/deeper", site.url + "/deeper"),
    ]


# -- robots.txt ----------------------------------------------------------------------------------


async def test_robots_disallow_no_request_reaches_the_server(site: Site) -> None:
    robots(site, "User-agent: *\nDisallow: /private/\nAllow: /private/open\n")
    add_page(site, "/", "/private/a", "/private/b/c", "/private/open", "/public")
    for path in ("/private/a", "/private/b/c", "/private/open", "/public"):
        add_page(site, path)
    pages, _, report = await crawl(site)
    assert site.total_hits("/private/") == 1 and site.hits["/private/open"] == 1
    assert paths(pages, site) == {"/", "/private/open", "/public"}
    assert report.disallowed == 2
    assert report.robots_url == site.url + "/robots.txt"


async def test_robots_rules_matched_with_the_user_agent_sent(site: Site) -> None:
    robots(
        site,
        "User-agent: *\nDisallow: /for-all/\n\n"
        "User-agent: sitescout\nDisallow: /for-sitescout/\n\n"
        "User-agent: acmebot\nDisallow: /for-acme/\n",
    )
    add_page(site, "/", "/for-all/x", "/for-sitescout/x", "/for-acme/x")
    for path in ("/for-all/x", "/for-sitescout/x", "/for-acme/x"):
        add_page(site, path)
    await crawl(site)
    # Our group replaces the `*` group (RFC 9309): only /for-sitescout/ is closed to us.
    assert site.hits["/for-sitescout/x"] == 0
    assert site.hits["/for-all/x"] == site.hits["/for-acme/x"] == 1

    site.hits.clear()
    site.log.clear()
    await crawl(site, config=FetchConfig(user_agent="AcmeBot/2.1 (+https://acme.test/)"))
    assert site.hits["/for-acme/x"] == 0
    assert site.hits["/for-sitescout/x"] == site.hits["/for-all/x"] == 1
    assert {ua for _, _, ua in site.log} == {"AcmeBot/2.1 (+https://acme.test/)"}


async def test_disallowed_start_url_fetches_nothing(site: Site) -> None:
    robots(site, "User-agent: *\nDisallow: /\n")
    add_page(site, "/")
    pages, _, report = await crawl(site)
    assert pages == [] and page_hits(site) == 0
    assert report.disallowed == 1 and report.notes


async def test_crawl_delay_spaces_requests(site: Site) -> None:
    robots(site, "User-agent: *\nCrawl-delay: 1\n")
    add_page(site, "/", "/a", "/b")
    add_page(site, "/a")
    add_page(site, "/b")
    pages, _, report = await crawl(site, concurrency=8)
    assert len(pages) == 3 and report.crawl_delay == 1.0
    times = [t for t, path, _ in site.log if path != "/robots.txt"]
    assert len(times) == 3
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert min(gaps) >= 1.0, gaps


async def test_robots_given_by_the_caller_is_not_fetched_again(site: Site) -> None:
    from sitescout._robots import parse_robots

    add_page(site, "/", "/x", "/y")
    add_page(site, "/y")
    rules = parse_robots("User-agent: *\nDisallow: /x\n", site.url + "/robots.txt", "sitescout")
    pages, _, _ = await crawl(site, robots=rules)
    assert site.hits["/robots.txt"] == 0 and site.hits["/x"] == 0
    assert paths(pages, site) == {"/", "/y"}


# -- sitemaps met on the way ---------------------------------------------------------------------


async def test_sitemap_linked_from_a_page_is_reported(site: Site) -> None:
    extra = [f"{site.url}/from-sitemap/{i}" for i in range(3)]
    add_page(site, "/", "/sitemap-extra.xml", "/feeds/all", "/data.xml", "/about")
    add_page(site, "/about", "/sitemap-extra.xml")
    site.add("/sitemap-extra.xml", urlset(extra))  # Content-Type: application/xml
    # No sitemap-like name and served as text/html: known by sniffing the body.
    site.add("/feeds/all", urlset([f"{site.url}/f"]), Content_Type="text/html")
    site.add("/data.xml", "<?xml version='1.0'?><config><a>1</a></config>")  # XML, not a sitemap
    pages, sitemaps, report = await crawl(site)
    assert sorted((s.url, s.found_on, s.depth, s.document_kind) for s in sitemaps) == [
        (f"{site.url}/feeds/all", site.url + "/", 1, "urlset"),
        (f"{site.url}/sitemap-extra.xml", site.url + "/", 1, "urlset"),
    ]
    assert report.sitemaps == [s.url for s in sitemaps]
    assert site.hits["/sitemap-extra.xml"] == 1  # once, however often it is linked
    assert paths(pages, site) == {"/", "/about"}  # sitemaps and other XML are not pages


async def test_big_sitemap_is_only_sniffed(site: Site) -> None:
    body = urlset([f"{site.url}/p/{i}" for i in range(50_000)])
    add_page(site, "/", "/sitemap_big.xml")
    site.add("/sitemap_big.xml", body)
    _, sitemaps, _ = await crawl(site)
    assert [s.url for s in sitemaps] == [f"{site.url}/sitemap_big.xml"]
    async with Fetcher(FAST, accept=HTML_ACCEPT) as fetcher:
        fetched = await fetch_page(fetcher, site.url + "/sitemap_big.xml")
    assert fetched.sitemap_kind == "urlset" and fetched.info is None and fetched.error is None
    assert fetched.bytes < len(body) // 10  # reading stopped once the kind was known


async def test_text_sitemap_only_when_it_says_so(site: Site) -> None:
    add_page(site, "/", "/sitemap.txt", "/notes")
    site.add("/sitemap.txt", f"{site.url}/t1\n{site.url}/t2\n", Content_Type="text/plain")
    site.add("/notes", f"{site.url}/t1 is a page I like\n", Content_Type="text/plain")
    pages, sitemaps, _ = await crawl(site)
    assert [(s.url, s.document_kind) for s in sitemaps] == [(f"{site.url}/sitemap.txt", "text")]
    assert {p.url: p.error_class for p in pages}[f"{site.url}/notes"] == "ContentTypeError"


async def test_sitemap_behind_a_long_prolog_is_still_sniffed(site: Site) -> None:
    padding = "<!-- " + "x" * 300_000 + " -->\n" + " " * 70_000
    add_page(site, "/", "/maps/all")
    site.add(
        "/maps/all", '<?xml version="1.0"?>' + padding + urlset([f"{site.url}/z"]).split("?>", 1)[1]
    )
    _, sitemaps, _ = await crawl(site)
    assert [s.url for s in sitemaps] == [f"{site.url}/maps/all"]


XHTML = (
    '<?xml version="1.0" encoding="utf-8"?>\n'
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN"'
    ' "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">'
    '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{title}</title></head>'
    '<body><p>text</p><a href="/y">y</a></body></html>'
)


async def test_xhtml_pages_are_pages_not_sitemaps(site: Site) -> None:
    site.add("/", XHTML.format(title="as xml"))  # served as application/xml
    site.add("/y", XHTML.format(title="as xhtml"), Content_Type="application/xhtml+xml")
    pages, sitemaps, _ = await crawl(site)
    assert sitemaps == []
    assert [(p.title, p.error_class) for p in pages] == [("as xml", None), ("as xhtml", None)]


# -- failures ------------------------------------------------------------------------------------


async def test_failures_are_recorded_and_the_crawl_goes_on(
    site: Site, release: threading.Event
) -> None:
    add_page(site, "/", "/loop", "/error", "/slow", "/data", "/blank", "/ok", "/js-shell")
    site.add("/loop", status=302, Location="/loop2")
    site.add("/loop2", status=302, Location="/loop")
    site.add("/error", "<html><body>oops</body></html>", status=500, Content_Type=HTML)

    def slow(_handler: RequestHandler) -> Reply:
        release.wait(5)
        return Reply(200, html("late").encode(), {"Content-Type": HTML})

    site.handle("/slow", slow)
    site.add("/data", "just some text", Content_Type="text/plain")
    site.add("/blank", "  \n ", Content_Type=HTML)
    site.add(
        "/js-shell",
        "<html><head><title>App</title><script>x()</script></head></html>",
        Content_Type=HTML,
    )
    add_page(site, "/ok", "/after")
    add_page(site, "/after")
    config = FetchConfig(timeout=0.5, retries=1, backoff=0.01)
    pages, _, report = await crawl(site, config=config)
    by_path = {p.url.removeprefix(site.url): p for p in pages}
    assert {path: p.error_class for path, p in by_path.items()} == {
        "/": None,
        "/loop": "TooManyRedirects",
        "/error": "HTTPError",
        "/slow": "TimeoutError",
        "/data": "ContentTypeError",
        "/blank": "EmptyPageError",
        "/js-shell": "EmptyPageError",
        "/ok": None,
        "/after": None,  # found through a page crawled after all those failures
    }
    assert by_path["/error"].status == 500 and "500" in (by_path["/error"].error or "")
    assert by_path["/js-shell"].title == "App"
    assert report.failures == 6 and report.pages == 9


async def test_closed_port_is_a_network_error() -> None:
    crawler = Crawler("http://127.0.0.1:9/", CrawlOptions(config=FetchConfig(timeout=2, retries=0)))
    events = [e async for e in crawler]
    assert [(type(e).__name__, getattr(e, "error_class", None)) for e in events] == [
        ("CrawledPage", "NetworkError")
    ]


# -- politeness, shape, early exit -----------------------------------------------------------------


async def test_concurrency_is_bounded_at_the_server(site: Site) -> None:
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def counted(handler: RequestHandler) -> Reply:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return Reply(200, html(handler.path).encode(), {"Content-Type": HTML})

    add_page(site, "/", *[f"/c{i}" for i in range(20)])
    for i in range(20):
        site.handle(f"/c{i}", counted)
    pages, _, _ = await crawl(site, concurrency=3)
    assert len(pages) == 21
    assert 1 < state["max"] <= 3


async def test_consumer_leaving_early_stops_the_crawl(site: Site) -> None:
    add_page(site, "/", *[f"/p{i}" for i in range(100)])
    for i in range(100):
        add_page(site, f"/p{i}")
    crawler = Crawler(site.url + "/", CrawlOptions(config=FAST, concurrency=2))
    async for event in crawler:
        assert isinstance(event, CrawledPage)
        break
    await asyncio.sleep(0.3)  # the generator is closed; requests in flight may land
    hits = page_hits(site)
    await asyncio.sleep(0.3)
    assert page_hits(site) == hits < 30


async def test_events_carry_what_the_walker_needs(site: Site) -> None:
    add_page(
        site,
        "/",
        "/a/",
        "https://elsewhere.example/",
        head=f'<link rel="canonical" href="{site.url}/">',
    )
    add_page(site, "/a/")
    pages, _, _ = await crawl(site)
    home = pages[0]
    assert (home.url, home.final_url, home.depth, home.found_on) == (
        site.url + "/",
        site.url + "/",
        0,
        None,
    )
    assert (home.title, home.canonical, home.status) == ("/", site.url + "/", 200)
    assert (home.links_internal, home.links_external) == (1, 1)
    assert home.info is not None and home.info.links_internal == [site.url + "/a/"]
    assert pages[1].found_on == site.url + "/" and pages[1].depth == 1
    data = json.loads(json.dumps(home.to_dict()))
    assert data["kind"] == "page" and data["title"] == "/" and "info" not in data


async def test_prefix_keeps_the_crawl_under_a_base_path(site: Site) -> None:
    add_page(site, "/docs/", "/docs/a", "/blog/x", "/", "/docs")
    add_page(site, "/docs/a", "/docs/b/")
    add_page(site, "/docs/b/")
    pages, _, report = await crawl(site, "/docs/", prefix="/docs/")
    assert paths(pages, site) == {"/docs/", "/docs/a", "/docs/b/"}
    assert report.filtered["outside-prefix"] == 2  # "/docs" is the start page without its slash
    assert site.hits["/blog/x"] == site.hits["/"] == 0


async def test_deadline_stops_requesting_new_pages(site: Site) -> None:
    def slow(handler: RequestHandler) -> Reply:
        time.sleep(0.6)
        body = html(handler.path, "/", "/s1", "/s2", "/s3").encode()
        return Reply(200, body, {"Content-Type": HTML})

    for path in ("/", "/s1", "/s2", "/s3"):
        site.handle(path, slow)
    # "/" ends at about 0.6 s, "/s1" starts before the deadline and ends at 1.2 s; no more.
    pages, _, report = await crawl(site, concurrency=1, deadline=1.0)
    assert len(pages) == 2 and report.deadline_hit and report.unvisited == 2


async def test_a_shared_fetcher_is_used_and_left_open(site: Site) -> None:
    add_page(site, "/", "/a")
    add_page(site, "/a")
    async with Fetcher(FAST) as fetcher:
        crawler = Crawler(site.url + "/", fetcher=fetcher)
        events = [e async for e in crawler]
        assert len(events) == 2
        again = await fetch_page(fetcher, site.url + "/a")  # still open
    assert again.info is not None and again.info.title == "/a"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("config", {"timeout": 5}),
        ("robots", "User-agent: *"),
        ("render", "yes"),
        ("read_robots", 1),
        ("ssrf_guard", None),
        ("prefix", b"/docs/"),
        ("chromium", 42),
    ],
)
def test_crawl_options_name_the_bad_option(name: str, value: object) -> None:
    with pytest.raises(UsageError, match=name):
        CrawlOptions(**{name: value})  # type: ignore[arg-type]


def test_bad_arguments_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        Crawler("ftp://example.com/")
    with pytest.raises(UsageError, match="max_pages"):
        CrawlOptions(max_pages=0)
    with pytest.raises(UsageError, match="options"):
        Crawler("https://example.com/", {"max_pages": 5})  # type: ignore[arg-type]
    many = Crawler("https://example.com/", CrawlOptions(max_pages=5000, max_depth=10))
    assert (many.max_pages, many.max_depth) == (MAX_PAGES, 3)


# -- JavaScript-built links (a real Chromium) ------------------------------------------------------


def need_browser() -> None:
    """Skip with the reason outside CI when Chromium or Playwright is missing; fail in CI."""
    try:
        check_render_available()
    except BrowserUnavailableError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser tests: {exc}")
        pytest.skip(f"browser tests need Chromium and Playwright: {exc}")


JS_HOME = """<!DOCTYPE html><html><head><title>JS app</title></head><body><nav id="nav"></nav>
<script>
setTimeout(function () {
  var nav = document.getElementById("nav");
  for (var i = 0; i < 4; i++) {
    var a = document.createElement("a"); a.href = "/js/t" + i; a.textContent = "t" + i;
    nav.appendChild(a);
  }
}, 50);
fetch("/links.json").then(function (r) { return r.json(); }).then(function (list) {
  list.forEach(function (href) {
    var a = document.createElement("a"); a.href = href; a.textContent = href;
    document.body.appendChild(a);
  });
});
</script></body></html>"""


def js_site(site: Site) -> set[str]:
    site.add("/", JS_HOME, Content_Type=HTML)
    site.add("/links.json", '["/js/f0", "/js/f1", "/js/f2"]', Content_Type="application/json")
    built = {f"/js/t{i}" for i in range(4)} | {f"/js/f{i}" for i in range(3)}
    for path in built:
        add_page(site, path)
    return built


async def test_plain_crawl_finds_no_javascript_links(site: Site) -> None:
    built = js_site(site)
    pages, _, _ = await crawl(site)
    assert paths(pages, site) == {"/"}
    assert pages[0].error_class == "EmptyPageError"  # the shell has no text and no link
    assert site.total_hits("/js/") == 0 and site.hits["/links.json"] == 0
    assert built


@pytest.mark.browser
async def test_rendered_crawl_finds_every_javascript_link(site: Site) -> None:
    need_browser()
    built = js_site(site)
    pages, _, _ = await crawl(site, render=True)
    assert paths(pages, site) == {"/"} | built
    home = pages[0]
    assert home.rendered and home.ok and home.links_internal == 7
    assert all(p.rendered and p.ok for p in pages)
    assert site.hits["/"] == 1  # the browser was handed the page, not sent to fetch it again
    assert all(site.hits[path] == 1 for path in built)


async def test_render_without_a_browser_names_what_to_install(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SITESCOUT_CHROMIUM", "/nonexistent/chromium")
    add_page(site, "/")
    with pytest.raises(BrowserUnavailableError, match="apt-get install chromium"):
        await crawl(site, render=True)
    assert page_hits(site) == 0


async def test_concurrency_is_pages_in_flight_on_one_host(site: Site) -> None:
    """More than the fetcher's default of 8 when asked: a crawl's pages share one host."""

    def page(handler: RequestHandler) -> Reply:
        return Reply(body=html(handler.path).encode(), headers={"Content-Type": HTML})

    slow = InFlight(0.2, page)
    add_page(site, "/", *[f"/p{i}" for i in range(12)])
    for i in range(12):
        site.handle(f"/p{i}", slow)
    pages, _, _ = await crawl(site, concurrency=12)
    assert len(pages) == 13
    assert slow.most == 12
