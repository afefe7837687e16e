"""End-to-end walks over real HTTP on 127.0.0.1 (issue 2's list)."""

from __future__ import annotations

import gc
import gzip
import time
from typing import Any

import pytest

import sitescout
from sitescout import Entry, WalkReport
from sitescout._walk.walk import ENTRY_SLICE

from .server import InFlight, Reply, RequestHandler, Site, gz, sitemapindex, urlset

FAST = {"retries": 2, "backoff": 0.01, "timeout": 5.0}


async def collect(url: str, **kwargs: Any) -> tuple[list[Entry], WalkReport, list[int]]:
    options = {**FAST, **kwargs}
    walk = sitescout.walk(url, **options)
    entries: list[Entry] = []
    sizes: list[int] = []
    async for batch in walk:
        sizes.append(len(batch))
        entries.extend(batch)
    return entries, walk.report, sizes


def robots(site: Site, *lines: str) -> None:
    site.add("/robots.txt", "User-agent: *\n" + "\n".join(lines) + "\n", Content_Type="text/plain")


def pages(site: Site, prefix: str, n: int) -> list[str]:
    return [f"{site.url}/{prefix}{i}" for i in range(n)]


# -- shapes --------------------------------------------------------------------------------------


async def test_flat_urlset(site: Site) -> None:
    robots(site, f"Sitemap: {site.url}/sitemap.xml")
    site.add("/sitemap.xml", urlset(pages(site, "p", 10)))
    entries, report, _ = await collect(site.url + "/")
    assert [e.url for e in entries] == pages(site, "p", 10)
    assert report.source == "robots.txt"
    assert not report.partial
    assert all(e.depth == 1 and e.sitemap == f"{site.url}/sitemap.xml" for e in entries)


async def test_index_to_two_urlsets(site: Site) -> None:
    robots(site, f"Sitemap: {site.url}/index.xml")
    site.add("/index.xml", sitemapindex([f"{site.url}/a.xml", f"{site.url}/b.xml"]))
    site.add("/a.xml", urlset(pages(site, "a", 3)))
    site.add("/b.xml", urlset(pages(site, "b", 4)))
    entries, report, _ = await collect(site.url)
    assert sorted(e.url for e in entries) == sorted(pages(site, "a", 3) + pages(site, "b", 4))
    assert {e.depth for e in entries} == {2}
    assert [d.kind for d in report.documents].count("urlset") == 2


async def test_nesting_five_levels_no_depth_cap(site: Site) -> None:
    for level in range(1, 5):
        site.add(f"/l{level}.xml", sitemapindex([f"{site.url}/l{level + 1}.xml"]))
    site.add("/l5.xml", urlset(pages(site, "deep", 2)))
    entries, report, _ = await collect(site.url + "/l1.xml")
    assert [e.url for e in entries] == pages(site, "deep", 2)
    assert entries[0].depth == 5
    assert report.source == "user"
    assert site.hits["/robots.txt"] == 0  # a sitemap URL given directly skips robots.txt


async def test_self_reference_and_mutual_cycle_fetch_each_once(site: Site) -> None:
    robots(site, f"Sitemap: {site.url}/a.xml")
    site.add(
        "/a.xml", sitemapindex([f"{site.url}/a.xml", f"{site.url}/b.xml", f"{site.url}/c.xml"])
    )
    site.add(
        "/b.xml", sitemapindex([f"{site.url}/a.xml", f"{site.url}/b.xml", f"{site.url}/c.xml"])
    )
    site.add("/c.xml", urlset(pages(site, "c", 5)))
    entries, _, _ = await collect(site.url)
    assert len(entries) == 5
    assert site.hits["/a.xml"] == site.hits["/b.xml"] == site.hits["/c.xml"] == 1


# -- compression ---------------------------------------------------------------------------------


async def test_gz_served_as_octet_stream(site: Site) -> None:
    site.add("/s.xml.gz", gz(urlset(pages(site, "g", 3))), Content_Type="application/octet-stream")
    entries, report, _ = await collect(site.url + "/s.xml.gz")
    assert len(entries) == 3
    assert report.documents[0].kind == "urlset"


async def test_gzip_body_at_xml_url_without_content_encoding(site: Site) -> None:
    site.add("/sitemap.xml", gz(urlset(pages(site, "g", 3))))
    entries, _, _ = await collect(site.url + "/sitemap.xml")
    assert len(entries) == 3


async def test_content_encoding_gzip(site: Site) -> None:
    body = gz(urlset(pages(site, "g", 3)))
    site.add("/sitemap.xml", body, Content_Encoding="gzip")
    entries, report, _ = await collect(site.url + "/sitemap.xml")
    assert len(entries) == 3
    assert report.documents[0].bytes > len(body)  # decoded bytes are what counts


async def test_gzip_file_also_content_encoded(site: Site) -> None:
    # A .gz file served with Content-Encoding: gzip is compressed twice on the wire.
    site.add("/s.xml.gz", gz(gz(urlset(pages(site, "g", 3)))), Content_Encoding="gzip")
    entries, _, _ = await collect(site.url + "/s.xml.gz")
    assert len(entries) == 3


async def test_gzip_bomb_is_capped_and_recorded(site: Site) -> None:
    head = urlset(pages(site, "b", 50))[: -len("</urlset>")]
    # 64 MiB of whitespace after 50 entries compresses to ~64 KiB.
    bomb = gzip.compress(head.encode() + b" " * (64 << 20))
    assert len(bomb) < 1 << 20
    site.add("/bomb.xml.gz", bomb, Content_Type="application/octet-stream")
    entries, report, _ = await collect(site.url + "/bomb.xml.gz", max_document_bytes=8 << 20)
    assert len(entries) == 50  # what came before the cut is kept
    doc = report.documents[0]
    assert doc.truncated and doc.bytes == 8 << 20
    assert report.partial
    assert any("document limit" in w for w in report.warnings)


# -- batches and de-duplication ------------------------------------------------------------------


async def test_fifty_thousand_urls_in_batches_of_a_thousand(site: Site) -> None:
    site.add("/big.xml", urlset([f"{site.url}/page/{i}/x" for i in range(50_000)]))
    entries, report, sizes = await collect(site.url + "/big.xml")
    assert len(entries) == 50_000 == report.urls
    assert len(sizes) == 50 and set(sizes) == {1000}
    assert len({e.url for e in entries}) == 50_000


async def test_hreflang_alternates_yielded_flagged_and_deduplicated(site: Site) -> None:
    u = site.url
    alt = (
        f'<xhtml:link rel="alternate" hreflang="en" href="{u}/en/"/>'
        f'<xhtml:link rel="alternate" hreflang="de" href="{u}/de/"/>'
        f'<xhtml:link rel="alternate" hreflang="fr" href="{u}/fr/"/>'
    )
    doc = urlset([f"{u}/en/", f"{u}/de/"], extra=alt)
    site.add("/sitemap.xml", doc)
    entries, report, _ = await collect(u + "/sitemap.xml")
    by_url = {e.url: e for e in entries}
    assert sorted(by_url) == sorted([f"{u}/en/", f"{u}/de/", f"{u}/fr/"])
    assert by_url[f"{u}/fr/"].hreflang == "fr"
    assert by_url[f"{u}/fr/"].alternate_of == f"{u}/en/"
    # /de/ is a loc of the same document: a page, not an alternate, though /en/ came first.
    assert by_url[f"{u}/en/"].alternate_of is None
    assert by_url[f"{u}/de/"].alternate_of is None
    assert report.alternates == 1 and report.urls == 2
    no_alt, _, _ = await collect(u + "/sitemap.xml", alternates=False)
    assert sorted(e.url for e in no_alt) == sorted([f"{u}/en/", f"{u}/de/"])


def _alternates_of_each_other(site: Site) -> None:
    u = site.url
    site.add("/index.xml", sitemapindex([f"{u}/a.xml", f"{u}/b.xml"]))
    site.add(
        "/a.xml",
        urlset([f"{u}/en/"], extra=f'<xhtml:link rel="alternate" hreflang="de" href="{u}/de/"/>'),
    )
    site.add(
        "/b.xml",
        urlset([f"{u}/de/"], extra=f'<xhtml:link rel="alternate" hreflang="fr" href="{u}/fr/"/>'),
    )


async def test_a_page_named_as_an_alternate_first_is_still_a_page(site: Site) -> None:
    """/de/ is first an alternate of /en/ (a.xml), then a page of its own that lists /fr/
    (b.xml): /de/ is a page, and /fr/, which no sitemap lists as a page, its alternate."""
    u = site.url
    _alternates_of_each_other(site)
    entries, report, _ = await collect(u + "/index.xml", concurrency=1)
    assert [(e.url, e.alternate_of) for e in entries] == [
        (f"{u}/en/", None),
        (f"{u}/de/", None),
        (f"{u}/fr/", f"{u}/de/"),
    ]
    assert (report.urls, report.alternates, report.duplicates) == (2, 1, 0)


@pytest.mark.parametrize("late", ["/a.xml", "/b.xml"])
async def test_pages_and_alternates_do_not_depend_on_which_document_arrives_first(
    site: Site, late: str
) -> None:
    """Concurrent documents finish in any order; the same site gives the same pages and the
    same alternates either way. The late document is served only after the other was."""
    u = site.url
    _alternates_of_each_other(site)
    early = next(p for p in ("/a.xml", "/b.xml") if p != late)
    body = site.routes[late]
    assert isinstance(body, Reply)

    def after_the_other(handler: RequestHandler) -> Reply:
        deadline = time.monotonic() + 5.0
        while site.hits[early] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # the early document is read and passed on meanwhile
        return body

    site.handle(late, after_the_other)
    entries, report, _ = await collect(u + "/index.xml", concurrency=2)
    assert sorted((e.url, e.alternate_of) for e in entries) == [
        (f"{u}/de/", None),
        (f"{u}/en/", None),
        (f"{u}/fr/", f"{u}/de/"),
    ]
    assert (report.urls, report.alternates) == (2, 1)


async def test_past_the_hold_alternates_go_out_as_they_come(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With more alternates waiting than the hold keeps, they are handed on before the walk
    ends (first come, first served), each URL still once."""
    monkeypatch.setattr("sitescout._walk.emitter.HELD_ALTERNATES", 2)
    u = site.url
    alt = "".join(
        f'<xhtml:link rel="alternate" hreflang="x{i}" href="{u}/x{i}/"/>' for i in range(5)
    )
    site.add("/index.xml", sitemapindex([f"{u}/a.xml", f"{u}/b.xml"]))
    site.add("/a.xml", urlset([f"{u}/en/"], extra=alt))
    site.add("/b.xml", urlset([f"{u}/x0/", f"{u}/en/"], extra=alt))
    entries, report, _ = await collect(u + "/index.xml", concurrency=1)
    urls = [e.url for e in entries]
    assert len(urls) == len(set(urls)) == 6
    # a.xml's alternates went out before b.xml was read: /x0/ stays an alternate.
    assert {e.url for e in entries if e.alternate_of} == {f"{u}/x{i}/" for i in range(5)}
    assert (report.urls, report.alternates, report.duplicates) == (1, 5, 2)


async def test_alternates_held_when_the_consumer_leaves_are_noted(site: Site) -> None:
    """The consumer leaves after the first document's pages, while the second document is
    still on its way: the alternates waiting for the end of the walk are said to be lost."""
    u = site.url
    site.add("/index.xml", sitemapindex([f"{u}/a.xml", f"{u}/b.xml"]))
    alt = "".join(
        f'<xhtml:link rel="alternate" hreflang="x{i}" href="{u}/x{i}/"/>' for i in range(3)
    )
    site.add("/a.xml", urlset([f"{u}/en/"], extra=alt))
    body = urlset([f"{u}/b/"])

    def slow(handler: RequestHandler) -> Reply:
        time.sleep(1.0)
        return Reply(body=body.encode())

    site.handle("/b.xml", slow)
    walk = sitescout.walk(u + "/index.xml", concurrency=2, **FAST)
    batches = walk.__aiter__()
    first = await batches.__anext__()
    await batches.aclose()
    assert [e.url for e in first] == [f"{u}/en/"]
    assert "3 hreflang alternates found but not passed on before the walk stopped" in (
        walk.report.notes
    )


def test_a_slow_consumer_gets_every_url_once(site: Site) -> None:
    """Workers of several documents fill batches while the consumer lags (the queue is full):
    no batch is changed or sent twice after it was queued."""
    shards = [f"{site.url}/s{i}.xml" for i in range(6)]
    site.add("/index.xml", sitemapindex(shards))
    for i in range(6):
        site.add(f"/s{i}.xml", urlset(pages(site, f"s{i}-", 3000)))
    urls = []
    for n, entry in enumerate(sitescout.iter_urls(site.url + "/index.xml", concurrency=6)):
        urls.append(entry.url)
        if n % 1000 == 0:
            time.sleep(0.02)  # the walk's queue fills while the loop is stopped
    assert len(urls) == 18_000
    assert len(set(urls)) == 18_000


async def test_duplicates_across_documents(site: Site) -> None:
    site.add("/index.xml", sitemapindex([f"{site.url}/a.xml", f"{site.url}/b.xml"]))
    site.add("/a.xml", urlset(pages(site, "p", 5)))
    site.add("/b.xml", urlset([*pages(site, "p", 5), f"{site.url}/p0?utm_source=x"]))
    entries, report, _ = await collect(site.url + "/index.xml")
    assert len(entries) == 5
    assert report.duplicates == 6


# -- quirks of real sitemaps ---------------------------------------------------------------------


async def test_relative_locs_resolve_against_the_document(site: Site) -> None:
    robots(site, "Sitemap: /sitemaps/pages.xml")
    site.add("/sitemaps/pages.xml", urlset(["/post/x/", "post/y/", "../top/"]))
    entries, _, _ = await collect(site.url)
    assert [e.url for e in entries] == [
        f"{site.url}/post/x/",
        f"{site.url}/sitemaps/post/y/",
        f"{site.url}/top/",
    ]


async def test_relative_locs_use_the_final_url_after_redirect(site: Site) -> None:
    site.add("/sitemap.xml", status=301, Location="/moved/sitemap.xml")
    site.add("/moved/sitemap.xml", urlset(["a/"]))
    entries, report, _ = await collect(site.url + "/sitemap.xml")
    assert [e.url for e in entries] == [f"{site.url}/moved/a/"]
    assert report.documents[0].final_url == f"{site.url}/moved/sitemap.xml"


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"\xef\xbb\xbf \n\t" + urlset(["/a"]).encode(), id="bom-and-whitespace"),
        pytest.param(b"<urlset><url><loc><![CDATA[/a]]></loc></url></urlset>", id="cdata"),
        pytest.param(b"<urlset><url><loc>\n   /a  \n</loc></url></urlset>", id="whitespace-in-loc"),
        pytest.param(b"<urlset><url><loc>/a</loc></url></urlset>", id="no-namespace"),
        pytest.param(
            b'<s:urlset xmlns:s="urn:x"><s:url><s:loc>/a</s:loc></s:url></s:urlset>',
            id="prefixed-other-namespace",
        ),
    ],
)
async def test_tolerated_quirks(site: Site, body: bytes) -> None:
    site.add("/sitemap.xml", body)
    entries, _, _ = await collect(site.url + "/sitemap.xml")
    assert [e.url for e in entries] == [f"{site.url}/a"]


async def test_amp_entities_in_locs(site: Site) -> None:
    site.add("/sitemap.xml", urlset(["/a?x=1&amp;y=2", "<![CDATA[/b?x=1&y=2]]>"]))
    entries, _, _ = await collect(site.url + "/sitemap.xml")
    assert [e.url for e in entries] == [f"{site.url}/a?x=1&y=2", f"{site.url}/b?x=1&y=2"]


async def test_rss_atom_and_text_sitemaps(site: Site) -> None:
    u = site.url
    site.add("/index.xml", sitemapindex([f"{u}/rss.xml", f"{u}/atom.xml", f"{u}/list.txt"]))
    site.add(
        "/rss.xml",
        f'<rss version="2.0"><channel><title>t</title><item><link>{u}/r1</link>'
        "<pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate></item></channel></rss>",
    )
    site.add(
        "/atom.xml",
        f'<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="{u}/a1"/>'
        "<updated>2003-12-13T18:30:02Z</updated></entry></feed>",
    )
    site.add("/list.txt", f"{u}/t1\n\n{u}/t2\n", Content_Type="text/plain")
    entries, report, _ = await collect(u + "/index.xml")
    by_url = {e.url: e for e in entries}
    assert sorted(by_url) == sorted([f"{u}/r1", f"{u}/a1", f"{u}/t1", f"{u}/t2"])
    assert by_url[f"{u}/r1"].lastmod == "2003-06-10T04:00:00+00:00"
    assert by_url[f"{u}/a1"].lastmod == "2003-12-13T18:30:02+00:00"
    assert {d.kind for d in report.documents} == {"sitemapindex", "rss", "atom", "text"}


# -- discovery chain -----------------------------------------------------------------------------


async def test_robots_odd_casing_and_relative_value(site: Site) -> None:
    robots(site, "SITEMAP: /maps/one.xml", "sItEmAp:/maps/one.xml", "Sitemap: maps/two.xml")
    site.add("/maps/one.xml", urlset(pages(site, "one", 1)))
    site.add("/maps/two.xml", urlset(pages(site, "two", 1)))
    entries, report, _ = await collect(site.url)
    assert sorted(e.url for e in entries) == sorted(pages(site, "one", 1) + pages(site, "two", 1))
    assert site.hits["/maps/one.xml"] == 1
    assert report.source == "robots.txt"


async def test_robots_404_falls_back_to_well_known_in_order(site: Site) -> None:
    site.add("/sitemap_index.xml", sitemapindex([f"{site.url}/s.xml"]))
    site.add("/s.xml", urlset(pages(site, "p", 2)))
    site.add("/sitemap-index.xml", urlset(pages(site, "never", 2)))
    entries, report, _ = await collect(site.url)
    assert len(entries) == 2
    assert report.source == "sitemap_index.xml"
    assert site.hits["/robots.txt"] == 1 and site.hits["/sitemap.xml"] == 1
    assert site.hits["/sitemap-index.xml"] == 0
    assert not report.partial  # a missing well-known path is not a failure of the walk


async def test_html_soft_404_is_not_a_sitemap(site: Site) -> None:
    robots(site)  # robots.txt without Sitemap lines
    site.add(
        "/sitemap.xml", "<!DOCTYPE html><html><body>Welcome</body></html>", Content_Type="text/html"
    )
    site.add("/sitemap_index.xml", "<html><body>Home</body></html>", Content_Type="text/html")
    site.add("/sitemap-index.xml", urlset(pages(site, "p", 1)))
    entries, report, _ = await collect(site.url)
    assert [e.url for e in entries] == pages(site, "p", 1)
    assert report.source == "sitemap-index.xml"
    kinds = {d.url.rsplit("/", 1)[-1]: d.kind for d in report.documents}
    assert kinds["sitemap.xml"] == kinds["sitemap_index.xml"] == "not-a-sitemap"


async def test_xml_sniffed_despite_html_content_type(site: Site) -> None:
    site.add("/sitemap.xml", urlset(pages(site, "p", 2)), Content_Type="text/html")
    entries, report, _ = await collect(site.url)
    assert len(entries) == 2 and report.source == "sitemap.xml"


async def test_nothing_found(site: Site) -> None:
    entries, report, _ = await collect(site.url)
    assert entries == []
    assert any("no sitemap found" in n for n in report.notes)
    # §10: the link crawl ran next, and its start page answered 404.
    assert report.source == "bfs"
    assert [(d.kind, d.error_class, d.status) for d in report.errors] == [
        ("page", "HTTPError", 404)
    ]


async def test_no_sitemap_falls_back_to_the_link_crawl(site: Site) -> None:
    page = "<html><head><title>{t}</title></head><body><p>{t}</p>{links}</body></html>"
    site.add("/", page.format(t="Home", links='<a href="/a">a</a> <a href="/b/">b</a>'),
             Content_Type="text/html")  # fmt: skip
    site.add("/a", page.format(t="A", links='<a href="/">home</a>'), Content_Type="text/html")
    site.add("/b/", page.format(t="B", links=""), Content_Type="text/html")
    entries, report, _ = await collect(site.url + "/")
    # Pages of one depth are fetched at once and come out as they finish: compare them as a set.
    found = [(e.url.removeprefix(site.url), e.source, e.depth, e.title) for e in entries]
    assert found[0] == ("/", "bfs", 0, "Home")
    assert sorted(found[1:]) == [("/a", "bfs", 1, "A"), ("/b/", "bfs", 1, "B")]
    assert report.source == "bfs"
    assert report.crawl is not None and report.crawl.pages == 3
    assert site.hits["/a"] == site.hits["/b/"] == 1


async def test_a_sitemap_linked_from_a_crawled_page_is_walked(site: Site) -> None:
    site.add("/", '<html><title>Home</title><a href="/sitemap-extra.xml">map</a></html>',
             Content_Type="text/html")  # fmt: skip
    site.add("/sitemap-extra.xml", urlset(pages(site, "p", 3)))
    entries, report, _ = await collect(site.url + "/")
    urls = {e.url for e in entries}
    assert set(pages(site, "p", 3)) <= urls
    assert site.url + "/" in urls
    assert site.hits["/sitemap-extra.xml"] <= 2  # sniffed by the crawl, then walked
    assert any("sitemap found by the crawl" in n for n in report.notes)


async def test_crawl_option_follows_links_even_with_a_sitemap(site: Site) -> None:
    site.add("/sitemap.xml", urlset(pages(site, "p", 3)))
    site.add("/", "<html><title>Home</title><p>x</p></html>", Content_Type="text/html")
    entries, report, _ = await collect(site.url + "/", crawl=True)
    assert [e.url for e in entries] == [site.url + "/"]
    assert report.source == "bfs"
    assert site.hits["/sitemap.xml"] == 0


async def test_robots_sitemaps_all_failing_fall_back_to_well_known(site: Site) -> None:
    robots(site, "Sitemap: /gone.xml")
    site.add("/sitemap.xml", urlset(pages(site, "p", 2)))
    entries, report, _ = await collect(site.url)
    assert len(entries) == 2
    assert report.source == "sitemap.xml"


# -- hostile and broken documents ----------------------------------------------------------------


async def test_malformed_xml_salvaged_and_recorded(site: Site) -> None:
    u = site.url
    body = (
        f"<urlset><url><loc>{u}/a</loc></url><url><loc>{u}/b</loc></url>"
        f"<url><loc>oops < broken</loc></url><url><loc>{u}/c</loc></url>"
        f"<url><loc>{u}/d</loc></url></urlset>"
    )
    site.add("/sitemap.xml", body)
    entries, report, _ = await collect(u + "/sitemap.xml")
    urls = {e.url for e in entries}
    assert {f"{u}/a", f"{u}/b", f"{u}/c", f"{u}/d"} <= urls
    assert report.errors and "malformed XML" in (report.errors[0].error or "")


async def test_billion_laughs_not_expanded(site: Site) -> None:
    u = site.url
    ents = '<!ENTITY a0 "lol">' + "".join(
        f'<!ENTITY a{i} "{"".join(f"&a{i - 1};" for _ in range(10))}">' for i in range(1, 10)
    )
    body = (
        f'<?xml version="1.0"?><!DOCTYPE urlset [{ents}]><urlset>'
        f"<url><loc>{u}/x&a9;</loc></url><url><loc>{u}/ok</loc></url></urlset>"
    )
    site.add("/sitemap.xml", body)
    started = time.monotonic()
    entries, _, _ = await collect(u + "/sitemap.xml")
    assert time.monotonic() - started < 20  # generous: a hang or an expansion would blow it
    assert f"{u}/ok" in {e.url for e in entries}
    assert all(len(e.url) < 200 for e in entries)


async def test_external_entity_not_loaded(site: Site, tmp_path: Any) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    u = site.url
    body = (
        f'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY e SYSTEM "file://{secret}">'
        f'<!ENTITY % p SYSTEM "{u}/evil.dtd">%p;]>'
        f"<urlset><url><loc>{u}/&e;</loc></url><url><loc>{u}/ok</loc></url></urlset>"
    )
    site.add("/sitemap.xml", body)
    site.add("/evil.dtd", '<!ENTITY x "y">')
    entries, _, _ = await collect(u + "/sitemap.xml")
    assert f"{u}/ok" in {e.url for e in entries}
    assert not any("TOPSECRET" in e.url for e in entries)
    assert site.hits["/evil.dtd"] == 0


# -- network failures ----------------------------------------------------------------------------


async def test_trickling_server_ends_at_total_timeout(site: Site) -> None:
    head = urlset(pages(site, "t", 3))

    def trickle(h: RequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/xml")
        h.send_header("Content-Length", str(len(head) + 1000))
        h.end_headers()
        h.wfile.write(head[: -len("</urlset>")].encode())
        h.wfile.flush()
        for _ in range(20):  # bounded: 20 s at most, far past the client's timeout
            try:
                h.wfile.write(b" ")
                h.wfile.flush()
            except OSError:
                return
            time.sleep(1)

    site.handle("/slow.xml", trickle)
    started = time.monotonic()
    entries, report, _ = await collect(site.url + "/slow.xml", timeout=2.0, retries=0)
    assert time.monotonic() - started < 10
    assert len(entries) == 3  # entries parsed before the timeout are kept
    assert report.errors[0].error_class == "TimeoutError"
    assert report.partial


def _sequence(*replies: Reply) -> Any:
    calls = iter(replies)

    def handler(h: RequestHandler) -> Reply:
        return next(calls, replies[-1])

    return handler


async def test_429_with_retry_after_then_200(site: Site) -> None:
    ok = Reply(200, urlset(pages(site, "r", 2)).encode())
    site.handle("/s.xml", _sequence(Reply(429, b"", {"Retry-After": "1"}), ok))
    started = time.monotonic()
    entries, report, _ = await collect(site.url + "/s.xml")
    assert time.monotonic() - started >= 0.9  # Retry-After was honoured
    assert len(entries) == 2 and not report.errors
    assert site.hits["/s.xml"] == 2


async def test_500_twice_then_200(site: Site) -> None:
    ok = Reply(200, urlset(pages(site, "r", 2)).encode())
    site.handle("/s.xml", _sequence(Reply(500), Reply(503), ok))
    entries, report, _ = await collect(site.url + "/s.xml")
    assert len(entries) == 2 and not report.errors
    assert site.hits["/s.xml"] == 3


async def test_500_forever_is_recorded_after_two_retries(site: Site) -> None:
    site.add("/index.xml", sitemapindex([f"{site.url}/bad.xml", f"{site.url}/good.xml"]))
    site.add("/bad.xml", status=500)
    site.add("/good.xml", urlset(pages(site, "g", 2)))
    entries, report, _ = await collect(site.url + "/index.xml")
    assert len(entries) == 2
    assert site.hits["/bad.xml"] == 3
    assert [d.error_class for d in report.errors] == ["HTTPError"]
    assert report.partial


async def test_404_not_retried(site: Site) -> None:
    site.add("/index.xml", sitemapindex([f"{site.url}/missing.xml"]))
    _, report, _ = await collect(site.url + "/index.xml")
    assert site.hits["/missing.xml"] == 1
    assert report.errors[0].status == 404


async def test_redirect_loop_recorded(site: Site) -> None:
    site.add("/index.xml", sitemapindex([f"{site.url}/loop1.xml", f"{site.url}/ok.xml"]))
    site.add("/loop1.xml", status=302, Location="/loop2.xml")
    site.add("/loop2.xml", status=302, Location="/loop1.xml")
    site.add("/ok.xml", urlset(pages(site, "ok", 1)))
    entries, report, _ = await collect(site.url + "/index.xml")
    assert len(entries) == 1
    assert report.errors[0].error_class == "TooManyRedirects"
    assert site.hits["/loop1.xml"] <= 2


async def test_too_many_redirects(site: Site) -> None:
    for i in range(8):
        site.add(f"/r{i}.xml", status=301, Location=f"/r{i + 1}.xml")
    _, report, _ = await collect(site.url + "/r0.xml")
    assert report.errors[0].error_class == "TooManyRedirects"
    assert site.total_hits("/r") == 6  # the first request and five redirects


async def test_connection_reset_mid_body_keeps_entries(site: Site) -> None:
    body = urlset(pages(site, "m", 200)).encode()

    def reset(h: RequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/xml")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body[: len(body) // 2])
        h.wfile.flush()
        time.sleep(0.2)
        h.reset()

    site.handle("/s.xml", reset)
    entries, report, _ = await collect(site.url + "/s.xml")
    assert 50 < len(entries) < 200
    assert report.errors[0].error_class == "NetworkError"
    assert report.partial


async def test_closed_port_is_a_network_error() -> None:
    site = Site()  # bound, never served: closing the socket leaves a port nobody listens on
    url = site.url
    site._server.server_close()
    entries, report, _ = await collect(url + "/sitemap.xml", retries=0)
    assert entries == []
    assert report.errors[0].error_class == "NetworkError"


# -- sync face -----------------------------------------------------------------------------------


def test_iter_urls_sync(site: Site) -> None:
    site.add("/sitemap.xml", urlset(pages(site, "s", 2500)))
    it = sitescout.iter_urls(site.url + "/sitemap.xml")
    urls = [e.url for e in it]
    assert len(urls) == 2500
    assert it.report.urls == 2500


def test_iter_urls_makes_entries_a_slice_at_a_time(site: Site) -> None:
    """Few entries are made ahead of the one handed over: made a whole batch at a time, they
    outlived the collector's youngest generation, and its older ones walked them again."""
    listed = pages(site, "s", 2500)
    site.add("/sitemap.xml", urlset(listed))
    urls: list[str] = []
    ahead: list[int] = []

    def alive() -> int:
        return sum(1 for o in gc.get_objects() if type(o) is Entry)

    before = alive()  # an earlier test's, not yet collected
    for i, entry in enumerate(sitescout.iter_urls(site.url + "/sitemap.xml")):
        urls.append(entry.url)
        if i % 250 == 1:
            ahead.append(alive() - before)
    assert urls == listed
    assert len(ahead) == 10
    assert 1 <= max(ahead) <= ENTRY_SLICE


def test_iter_urls_stops_early_and_closes(site: Site) -> None:
    site.add("/sitemap.xml", urlset(pages(site, "s", 5000)))
    it = sitescout.iter_urls(site.url + "/sitemap.xml")
    first = [next(it) for _ in range(3)]
    it.close()
    assert len(first) == 3
    with pytest.raises(StopIteration):
        next(it)


def test_bad_url_is_a_usage_error() -> None:
    with pytest.raises(sitescout.UsageError):
        sitescout.walk("ftp://x/")


# -- documents in flight -------------------------------------------------------------------------


def slow_leaves(site: Site, n: int, wait: float) -> InFlight:
    """`n` leaf urlsets under one index, each answered after `wait` seconds."""

    def leaf(handler: RequestHandler) -> Reply:
        return Reply(body=urlset([f"{site.url}/p{handler.path.strip('/')}"]).encode())

    slow = InFlight(wait, leaf)
    for i in range(n):
        site.handle(f"/leaf-{i}.xml", slow)
    site.add("/sitemap.xml", sitemapindex([f"{site.url}/leaf-{i}.xml" for i in range(n)]))
    return slow


@pytest.mark.parametrize(
    ("options", "most"),
    [
        ({"concurrency": 16}, 16),  # on one host as on many: not the fetcher's default of 8
        ({"concurrency": 16, "per_host": 4}, 4),  # a lower limit per host holds
    ],
)
async def test_concurrency_is_documents_in_flight_on_one_host(
    site: Site, options: dict[str, int], most: int
) -> None:
    slow = slow_leaves(site, 20, 0.2)
    entries, report, _ = await collect(f"{site.url}/sitemap.xml", **options)
    assert len(entries) == 20 and not report.errors
    assert slow.most == most
