"""Walk budgets, base-path scoping and locale-aware shard selection over real HTTP (issue 3).

Spec: §5 (budgets, their accounting and warnings, order under budgets, presets) and §7 (base path
prefix, narrow-prefix warning, locale of sitemap documents, locale filtering). Every walk runs
against `tests/server.py` on 127.0.0.1 and is bounded in time (`asyncio.timeout`); what reached
the server is counted there (`site.hits`), not taken from the walker's own report.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

import sitescout
from sitescout import Budgets
from sitescout._budget import truncation_notice
from sitescout._models import Entry
from sitescout._walk import Walk

from .server import Reply, RequestHandler, Site, sitemapindex, urlset

MiB = 1024 * 1024
WALK_TIMEOUT = 20.0  # seconds; no walk in this file should come near it

FETCH_WARNING_20 = "Sitemap fetch limit (20 documents) reached; discovery results are partial."
BYTE_WARNING_50MIB = (
    "Sitemap body byte limit (52428800 bytes) reached; discovery results are partial."
)


# --- helpers -------------------------------------------------------------------------------------


async def collect(walk: Walk, seconds: float = WALK_TIMEOUT) -> list[Entry]:
    """Every entry of the walk, with the whole walk bounded in time."""
    entries: list[Entry] = []
    async with asyncio.timeout(seconds):
        async for batch in walk:
            entries.extend(batch)
    return entries


def robots(site: Site, *sitemaps: str) -> None:
    lines = "".join(f"Sitemap: {site.url}{path}\n" for path in sitemaps)
    site.add("/robots.txt", "User-agent: *\nAllow: /\n" + lines, content_type="text/plain")


def sitemap_hits(site: Site) -> int:
    """Requests that reached the server for anything but robots.txt (retries and hops included)."""
    return sum(n for path, n in site.hits.items() if path != "/robots.txt")


def hit_paths(site: Site) -> set[str]:
    return {path for path, n in site.hits.items() if n and path != "/robots.txt"}


def pages(site: Site, prefix: str, n: int) -> list[str]:
    return [f"{site.url}{prefix}{i}" for i in range(n)]


def warnings_starting(walk: Walk, start: str) -> list[str]:
    return [w for w in walk.report.warnings if w.startswith(start)]


def slow(body: str, delay: float, release: threading.Event) -> Any:
    """A handler that answers `body` after `delay` seconds, or resets once `release` is set."""
    data = body.encode()

    def handler(h: RequestHandler) -> Reply | None:
        if release.wait(delay):
            # The test is over and the client gone: drop the connection quietly.
            h.reset()
            return None
        return Reply(200, data)

    return handler


def reset(h: RequestHandler) -> None:
    h.reset()


# --- max_fetches: the 26-shard documentation site ------------------------------------------------


def docs_site_26(site: Site, urls_per_shard: int = 10) -> list[str]:
    """robots.txt → an index of 26 shards whose pages all live outside `/en-us/docs/`."""
    shards = [f"/shard-{i}.xml" for i in range(26)]
    robots(site, "/sitemap.xml")
    site.add("/sitemap.xml", sitemapindex([site.url + s for s in shards]))
    for i, shard in enumerate(shards):
        site.add(shard, urlset(pages(site, f"/en-us/training/m{i}-", urls_per_shard)))
    return shards


async def test_26_shards_unmatched_base_path_stop_at_20_fetches(site: Site) -> None:
    shards = docs_site_26(site)
    walk = sitescout.walk(f"{site.url}/en-us/docs/", budgets=Budgets.SAMPLER)
    entries = await collect(walk)
    report = walk.report

    # Exactly 20 attempts reached the server: the index and the first 19 shards (document
    # order, since no shard name ranks above another); the sub-path fallback of §7 goes through
    # the same budget and is refused.
    assert sitemap_hits(site) == 20
    assert hit_paths(site) == {"/sitemap.xml", *shards[:19]}
    assert site.hits["/en-us/docs/sitemap.xml"] == 0
    assert site.hits["/robots.txt"] == 1
    assert len(report.documents) == 20

    assert report.warnings.count(FETCH_WARNING_20) == 1
    assert report.budgets_hit == ["max_fetches"]
    assert report.partial
    assert report.partial_reasons
    assert entries == []
    assert (
        report.warnings.count(
            'Sitemap path prefix "/en-us/docs" matched 0 of 190 examined same-site URLs '
            "(less than 1%); consider a broader base URL."
        )
        == 1
    )


async def test_budgets_are_shared_by_every_root_and_child(site: Site) -> None:
    robots(site, "/a-index.xml", "/b-index.xml")
    for name in ("a", "b"):
        shards = [f"{site.url}/{name}-{i}.xml" for i in range(5)]
        site.add(f"/{name}-index.xml", sitemapindex(shards))
        for i in range(5):
            site.add(f"/{name}-{i}.xml", urlset(pages(site, f"/{name}/{i}/", 3)))
    walk = sitescout.walk(f"{site.url}/", max_fetches=4)
    await collect(walk)
    assert sitemap_hits(site) == 4
    assert {"/a-index.xml", "/b-index.xml"} <= hit_paths(site)
    assert (
        walk.report.warnings.count(
            "Sitemap fetch limit (4 documents) reached; discovery results are partial."
        )
        == 1
    )
    assert walk.report.partial


# --- what counts as a fetch ----------------------------------------------------------------------


FAILING = {
    "/s-404.xml": 1,
    "/s-500.xml": 1,
    "/s-reset.xml": 1,
    "/s-empty.xml": 1,
    "/s-html.xml": 1,
}


def failing_site(site: Site) -> list[str]:
    good = [f"/good-{i}.xml" for i in range(4)]
    site.add("/sitemap.xml", sitemapindex([site.url + p for p in [*FAILING, *good]]))
    site.add("/s-404.xml", "<html>gone</html>", status=404, content_type="text/html")
    site.add("/s-500.xml", "<html>oops</html>", status=500, content_type="text/html")
    site.handle("/s-reset.xml", reset)
    site.add("/s-empty.xml", "")
    site.add("/s-html.xml", "<html><body>soft 404</body></html>", content_type="text/html")
    for i, path in enumerate(good):
        site.add(path, urlset(pages(site, f"/good/{i}/", 3)))
    return good


@pytest.mark.parametrize(
    ("retries", "server_hits"),
    [
        # One request per attempt.
        pytest.param(0, dict(FAILING), id="no-retries"),
        # 500 and a reset are retried twice at the HTTP level: three requests reach the server,
        # still one fetch attempt each.
        pytest.param(2, {**FAILING, "/s-500.xml": 3, "/s-reset.xml": 3}, id="two-retries"),
    ],
)
async def test_failed_and_empty_shards_consume_fetch_slots(
    site: Site, retries: int, server_hits: dict[str, int]
) -> None:
    good = failing_site(site)
    walk = sitescout.walk(f"{site.url}/sitemap.xml", max_fetches=6, retries=retries, backoff=0.01)
    entries = await collect(walk)
    report = walk.report

    # The index plus five failures spent all six slots: no good shard was ever requested.
    assert {p: site.hits[p] for p in FAILING} == server_hits
    assert all(site.hits[p] == 0 for p in good)
    assert site.hits["/sitemap.xml"] == 1
    assert sitemap_hits(site) == 1 + sum(server_hits.values())
    assert len(report.documents) == 6
    assert {d.url.removeprefix(site.url) for d in report.errors} == set(FAILING)
    assert entries == []
    assert report.budgets_hit == ["max_fetches"]
    assert (
        report.warnings.count(
            "Sitemap fetch limit (6 documents) reached; discovery results are partial."
        )
        == 1
    )
    assert report.partial


async def test_robots_txt_does_not_count_as_a_fetch(site: Site) -> None:
    robots(site, "/sitemap.xml")
    site.add("/sitemap.xml", urlset(pages(site, "/p/", 5)))
    walk = sitescout.walk(f"{site.url}/", max_fetches=1)
    entries = await collect(walk)
    assert site.hits["/robots.txt"] == 1
    assert sitemap_hits(site) == 1
    assert len(entries) == 5
    # The walk ended exactly at the limit without being refused anything: not partial.
    assert walk.report.budgets_hit == []
    assert not walk.report.partial


async def test_redirect_hops_do_not_count_as_fetches(site: Site) -> None:
    site.add("/sitemap.xml", sitemapindex([f"{site.url}/moved.xml"]))
    site.add("/moved.xml", "", status=301, Location=f"{site.url}/real.xml")
    site.add("/real.xml", urlset(pages(site, "/p/", 5)))
    walk = sitescout.walk(f"{site.url}/sitemap.xml", max_fetches=2)
    entries = await collect(walk)
    assert site.hits["/moved.xml"] == 1
    assert site.hits["/real.xml"] == 1
    assert len(entries) == 5
    assert walk.report.budgets_hit == []
    assert not walk.report.partial


# --- max_bytes -----------------------------------------------------------------------------------

# One URL per 64 KiB: a comment pads each <url> (the parser drops comments), so a 12 MiB shard
# holds 192 URLs and generating and parsing it stays cheap.
_PAD = "<!--" + "x" * (64 * 1024 - 7) + "-->"
URLS_PER_BIG_SHARD = 192


def big_shard(site: Site, n: int) -> bytes:
    items = "".join(
        f"<url><loc>{site.url}/big/{n}/{j}</loc></url>{_PAD}" for j in range(URLS_PER_BIG_SHARD)
    )
    return urlset([])[: -len("</urlset>")].encode() + items.encode() + b"</urlset>"


async def test_byte_budget_stops_the_document_that_crosses_it(site: Site) -> None:
    shards = [f"/big-{n}.xml" for n in range(1, 7)]
    site.add("/sitemap.xml", sitemapindex([site.url + s for s in shards]))
    for n, path in enumerate(shards, start=1):
        body = big_shard(site, n)
        assert 12 * MiB <= len(body) < 12 * MiB + 64 * 1024
        site.add(path, body)

    walk = sitescout.walk(
        f"{site.url}/sitemap.xml", budgets=Budgets(max_bytes=50 * MiB), concurrency=1
    )
    entries = await collect(walk)
    report = walk.report

    # Four shards (48 MiB) stay under the budget; the fifth crosses it and its reading stops
    # there, keeping the entries it gave so far; the sixth is never requested.
    assert [site.hits[p] for p in shards] == [1, 1, 1, 1, 1, 0]
    by_sitemap = {s: sum(1 for e in entries if e.sitemap == site.url + s) for s in shards}
    assert by_sitemap == {**dict.fromkeys(shards[:4], URLS_PER_BIG_SHARD), shards[5]: 0} | {
        shards[4]: by_sitemap[shards[4]]
    }
    assert 0 < by_sitemap[shards[4]] < URLS_PER_BIG_SHARD
    # Stopped within one network read of the budget, not after the whole 12 MiB document.
    assert 50 * MiB < report.bytes < 50 * MiB + MiB
    assert report.warnings.count(BYTE_WARNING_50MIB) == 1
    over = next(w for w in report.warnings if "over the byte limit" in w)
    assert f"{report.bytes - 50 * MiB:,} over" in over
    assert report.budgets_hit == ["max_bytes"]
    assert report.partial and report.partial_reasons == ["a walk budget was reached"]
    assert not report.errors and report.malformed_count == 0
    fifth = next(d for d in report.documents if d.url.endswith(shards[4]))
    assert fifth.stopped_by == "max_bytes" and fifth.error is None
    assert fifth.entries == by_sitemap[shards[4]]


async def test_byte_budget_stops_every_document_in_flight(site: Site) -> None:
    # Eight shards fetched at once: the budget is reached while all are streaming, and each
    # stops at its next read instead of being read whole (the budget binds on bytes read).
    shards = [f"/big-{n}.xml" for n in range(1, 9)]
    site.add("/sitemap.xml", sitemapindex([site.url + s for s in shards]))
    for n, path in enumerate(shards, start=1):
        site.add(path, big_shard(site, n))
    walk = sitescout.walk(f"{site.url}/sitemap.xml", max_bytes=4 * MiB, concurrency=8)
    entries = await collect(walk)
    report = walk.report
    assert report.budgets_hit == ["max_bytes"]
    assert report.bytes < 4 * MiB + 8 * MiB  # at most about one read per document past it
    assert not report.errors and report.malformed_count == 0
    stopped = [d for d in report.documents if d.stopped_by == "max_bytes"]
    assert stopped and all(d.error is None for d in stopped)
    assert len(entries) < 8 * URLS_PER_BIG_SHARD
    assert sum(d.entries for d in report.documents) == len(entries)


async def test_max_bytes_keyword_sets_the_walk_byte_budget(site: Site) -> None:
    # `max_bytes` is the §5 walk budget (as `--max-bytes` on the CLI), not the per-document cap.
    shards = [f"/s-{n}.xml" for n in range(4)]
    site.add("/sitemap.xml", sitemapindex([site.url + s for s in shards]))
    for n, path in enumerate(shards):
        site.add(path, urlset(pages(site, f"/s{n}/", 40)))
    limit = 3000  # the index plus about one shard
    walk = sitescout.walk(f"{site.url}/sitemap.xml", max_bytes=limit, concurrency=1)
    await collect(walk)
    assert walk.options.budgets.max_bytes == limit
    assert walk.options.fetch.max_document_bytes == 50 * MiB  # the per-document cap: default
    assert walk.report.budgets_hit == ["max_bytes"]
    assert (
        walk.report.warnings.count(
            f"Sitemap body byte limit ({limit} bytes) reached; discovery results are partial."
        )
        == 1
    )
    assert not any("document limit" in w for w in walk.report.warnings)


# --- locale-aware shard selection (§7) -----------------------------------------------------------

LOCALE_CHILDREN = [
    "/dotnet_en-us_1.xml",
    "/dotnet_fr-fr_1.xml",
    "/previous-versions_en-us_8.xml",
    "/sitemap-de.xml",
    "/ja-jp/sitemap.xml",
    "/sitemap-pages.xml",
    "/sitemap.xml?lang=fr",
]


def localized_site(site: Site, children: list[str]) -> None:
    """robots.txt → /sitemap_index.xml → `children`, each holding pages under /en-us/docs/."""
    robots(site, "/sitemap_index.xml")
    site.add("/sitemap_index.xml", sitemapindex([site.url + c for c in children]))
    for n, child in enumerate(children):
        site.add(child, urlset(pages(site, f"/en-us/docs/c{n}/", 3)))


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"filter_locales": True}, id="base-url-locale"),
        pytest.param({"filter_locales": True, "locale": "en-us"}, id="explicit-locale"),
        pytest.param({"filter_locales": True, "max_fetches": 20}, id="under-budget"),
    ],
)
async def test_only_the_preferred_locale_and_unlocalized_shards_are_fetched(
    site: Site, options: dict[str, Any]
) -> None:
    localized_site(site, LOCALE_CHILDREN)
    walk = sitescout.walk(f"{site.url}/en-us/docs/", **options)
    entries = await collect(walk)

    fetched = {
        "/dotnet_en-us_1.xml",
        "/previous-versions_en-us_8.xml",
        "/sitemap-pages.xml",
        "/sitemap.xml?lang=fr",  # the query string is not a locale
    }
    skipped = {"/dotnet_fr-fr_1.xml", "/sitemap-de.xml", "/ja-jp/sitemap.xml"}
    assert hit_paths(site) == {"/sitemap_index.xml", *fetched}
    assert all(site.hits[p] == 1 for p in fetched)
    assert {u.removeprefix(site.url) for u in walk.report.skipped_sitemaps} == skipped
    assert len(walk.report.skipped_sitemaps) == 3
    assert {e.sitemap.removeprefix(site.url) for e in entries} == fetched
    assert len(entries) == 3 * len(fetched)


@pytest.mark.parametrize(
    "children",
    [
        pytest.param(
            ["/dotnet_fr-fr_1.xml", "/dotnet_fr-fr_2.xml", "/sitemap-pages.xml"],
            id="one-other-locale",
        ),
        pytest.param(
            ["/dotnet_en-us_1.xml", "/dotnet_en-us_2.xml", "/sitemap-pages.xml"],
            id="one-matching-locale",
        ),
        # Two locales, neither preferred: filtering would keep only the unlocalized shard and
        # lose the site's content, so the full list is kept.
        pytest.param(
            ["/dotnet_fr-fr_1.xml", "/sitemap-de.xml", "/sitemap-pages.xml"], id="none-match"
        ),
    ],
)
async def test_children_are_not_filtered_without_two_locales_or_a_match(
    site: Site, children: list[str]
) -> None:
    localized_site(site, children)
    walk = sitescout.walk(f"{site.url}/en-us/docs/", filter_locales=True)
    entries = await collect(walk)
    assert hit_paths(site) == {"/sitemap_index.xml", *children}
    assert walk.report.skipped_sitemaps == []
    assert len(entries) == 3 * len(children)


async def test_false_friends_are_not_locales(site: Site) -> None:
    false_friends = [
        "/sitemap-pages.xml",
        "/post-sitemap.xml",
        "/sitemap-products-1.xml",
        "/sitemap-zz.xml",
    ]
    localized_site(site, [*false_friends, "/sitemap-en.xml", "/sitemap-fr.xml"])
    walk = sitescout.walk(f"{site.url}/en-us/docs/", filter_locales=True)
    await collect(walk)
    # Two real locales (en, fr) switch filtering on; the false friends carry no locale and are
    # kept, `en` serves an `en-us` user, `fr` is skipped.
    assert hit_paths(site) == {"/sitemap_index.xml", *false_friends, "/sitemap-en.xml"}
    assert walk.report.skipped_sitemaps == [f"{site.url}/sitemap-fr.xml"]


async def test_inventory_does_not_filter_locales_unless_asked(site: Site) -> None:
    localized_site(site, LOCALE_CHILDREN)
    walk = sitescout.walk(f"{site.url}/en-us/docs/")  # filter_locales defaults to False
    await collect(walk)
    assert hit_paths(site) == {"/sitemap_index.xml", *LOCALE_CHILDREN}
    assert walk.report.skipped_sitemaps == []


# --- narrow base-path prefix (§7) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("examined", "matched", "warns"),
    [
        pytest.param(100, 1, False, id="1-of-100-silent"),
        pytest.param(101, 1, True, id="1-of-101-warns"),
        pytest.param(250, 0, True, id="0-of-250-warns"),
        pytest.param(100, 2, False, id="2-of-100-silent"),
    ],
)
async def test_narrow_prefix_warning(site: Site, examined: int, matched: int, warns: bool) -> None:
    robots(site, "/sitemap.xml")
    inside = pages(site, "/docs/p", matched)
    outside = pages(site, "/blog/p", examined - matched)
    # Other hosts are neither selected nor counted, even under the same path.
    offsite = [f"http://other.example/docs/x{i}" for i in range(5)]
    site.add("/sitemap.xml", urlset([*outside, *offsite, *inside]))
    walk = sitescout.walk(f"{site.url}/docs/")
    entries = await collect(walk)

    assert sorted(e.url for e in entries) == sorted(inside)
    prefix_warnings = warnings_starting(walk, "Sitemap path prefix")
    if warns:
        assert prefix_warnings == [
            f'Sitemap path prefix "/docs" matched {matched} of {examined} examined same-site '
            "URLs (less than 1%); consider a broader base URL."
        ]
    else:
        assert prefix_warnings == []
    # §7 sub-path fallback: tried only when nothing matched.
    assert site.hits["/docs/sitemap.xml"] == (0 if matched else 1)


# --- order under budgets (§5) --------------------------------------------------------------------

PRIORITY_CHILDREN = ["image", "video", "products", "pages", "posts", "blog"]


def priority_site(site: Site) -> None:
    robots(site, "/sitemap.xml")
    site.add(
        "/sitemap.xml", sitemapindex([f"{site.url}/sitemap-{n}.xml" for n in PRIORITY_CHILDREN])
    )
    for name in PRIORITY_CHILDREN:
        site.add(f"/sitemap-{name}.xml", urlset(pages(site, f"/{name}/", 5)))


async def test_budget_is_spent_on_content_shards_first(site: Site) -> None:
    priority_site(site)
    walk = sitescout.walk(f"{site.url}/", max_fetches=3)
    entries = await collect(walk)
    assert hit_paths(site) == {"/sitemap.xml", "/sitemap-pages.xml", "/sitemap-posts.xml"}
    assert sitemap_hits(site) == 3
    assert {e.sitemap.removeprefix(site.url) for e in entries} == {
        "/sitemap-pages.xml",
        "/sitemap-posts.xml",
    }
    assert walk.report.budgets_hit == ["max_fetches"]


async def test_without_budgets_children_are_all_fetched(site: Site) -> None:
    priority_site(site)
    walk = sitescout.walk(f"{site.url}/")
    entries = await collect(walk)
    assert hit_paths(site) == {"/sitemap.xml", *(f"/sitemap-{n}.xml" for n in PRIORITY_CHILDREN)}
    assert len(entries) == 5 * len(PRIORITY_CHILDREN)
    assert not walk.report.partial


# --- max_depth -----------------------------------------------------------------------------------


async def test_depth_cap_drops_children_of_the_last_level(site: Site) -> None:
    u = site.url
    site.add("/l1.xml", sitemapindex([f"{u}/l2.xml"]))
    site.add("/l2.xml", sitemapindex([f"{u}/l3a.xml", f"{u}/l3b.xml", f"{u}/leaf3.xml"]))
    site.add("/leaf3.xml", urlset(pages(site, "/leaf3/", 4)))
    site.add("/l3a.xml", sitemapindex([f"{u}/l4a1.xml", f"{u}/l4a2.xml"]))
    site.add("/l3b.xml", sitemapindex([f"{u}/l4b1.xml", f"{u}/l4b2.xml"]))
    site.add("/l4a1.xml", urlset(pages(site, "/l4a1/", 2)))
    site.add("/l4a2.xml", urlset(pages(site, "/l4a2/", 2)))
    site.add("/l4b1.xml", sitemapindex([f"{u}/l5.xml"]))
    site.add("/l4b2.xml", urlset(pages(site, "/l4b2/", 2)))
    site.add("/l5.xml", urlset(pages(site, "/l5/", 2)))

    walk = sitescout.walk(f"{u}/l1.xml", max_depth=3)
    entries = await collect(walk)
    report = walk.report

    assert hit_paths(site) == {"/l1.xml", "/l2.xml", "/l3a.xml", "/l3b.xml", "/leaf3.xml"}
    assert all(site.hits[p] == 0 for p in ("/l4a1.xml", "/l4a2.xml", "/l4b1.xml", "/l4b2.xml"))
    assert site.hits["/l5.xml"] == 0
    assert sorted(e.url for e in entries) == sorted(pages(site, "/leaf3/", 4))
    assert {e.depth for e in entries} == {3}
    assert warnings_starting(walk, "Sitemap depth") == [
        "Sitemap depth limit (3 levels) reached; dropped 4 child sitemaps; "
        "discovery results are partial."
    ]
    assert report.dropped_children == 4
    assert report.budgets_hit == ["max_depth"]
    assert report.partial


# --- deadline ------------------------------------------------------------------------------------


async def test_deadline_ends_a_slow_walk_and_keeps_what_was_collected(
    site: Site, release: threading.Event
) -> None:
    shards = [f"/shard-{i}.xml" for i in range(20)]
    site.add("/sitemap.xml", sitemapindex([site.url + s for s in shards]))
    for i, path in enumerate(shards):
        site.handle(path, slow(urlset(pages(site, f"/s{i}/", 10)), 0.5, release))

    walk = sitescout.walk(
        f"{site.url}/sitemap.xml", deadline=2, concurrency=1, retries=0, backoff=0.01
    )
    start = time.perf_counter()
    entries = await collect(walk)
    elapsed = time.perf_counter() - start
    report = walk.report

    assert elapsed < 10
    requested = [p for p in shards if site.hits[p]]
    assert 1 <= len(requested) < len(shards)
    assert requested == shards[: len(requested)]  # one at a time, in order, then stopped
    # What arrived before the deadline is kept: whole shards of ten URLs each.
    assert len(entries) >= 10
    assert len(entries) % 10 == 0
    assert {e.sitemap.removeprefix(site.url) for e in entries} <= set(requested)
    assert "deadline" in report.budgets_hit
    assert (
        report.warnings.count("Sitemap walk deadline (2 s) reached; discovery results are partial.")
        == 1
    )
    assert report.partial


async def test_deadline_cutting_the_last_document_is_reported(
    site: Site, release: threading.Event
) -> None:
    site.add("/sitemap.xml", sitemapindex([f"{site.url}/slow.xml"]))
    site.handle("/slow.xml", slow(urlset(pages(site, "/p/", 3)), 5.0, release))
    walk = sitescout.walk(f"{site.url}/sitemap.xml", deadline=1, retries=0)
    start = time.perf_counter()
    await collect(walk)
    assert time.perf_counter() - start < 5
    assert walk.report.partial
    assert walk.report.budgets_hit == ["deadline"]
    assert (
        walk.report.warnings.count(
            "Sitemap walk deadline (1 s) reached; discovery results are partial."
        )
        == 1
    )


# --- max_urls ------------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [1000, 1500])
async def test_max_urls_truncates_to_exactly_the_limit(site: Site, limit: int) -> None:
    site.add("/sitemap.xml", urlset(pages(site, "/p/", 2500)))
    walk = sitescout.walk(f"{site.url}/sitemap.xml", max_urls=limit)
    entries = await collect(walk)
    report = walk.report
    assert len(entries) == limit
    assert [e.url for e in entries] == pages(site, "/p/", limit)  # the first ones, in order
    assert report.urls == limit
    assert report.partial
    assert report.budgets_hit == ["max_urls"]
    assert (
        report.warnings.count(
            f"Sitemap URL limit ({limit} URLs) reached; discovery results are partial."
        )
        == 1
    )


async def test_max_urls_stops_further_fetches(site: Site) -> None:
    site.add("/sitemap.xml", sitemapindex([f"{site.url}/a.xml", f"{site.url}/b.xml"]))
    site.add("/a.xml", urlset(pages(site, "/a/", 2500)))
    site.add("/b.xml", urlset(pages(site, "/b/", 10)))
    walk = sitescout.walk(f"{site.url}/sitemap.xml", max_urls=1000, concurrency=1)
    entries = await collect(walk)
    assert len(entries) == 1000
    assert site.hits["/b.xml"] == 0
    assert walk.report.budgets_hit == ["max_urls"]


async def test_full_url_budget_refuses_the_next_fetch(site: Site) -> None:
    site.add("/sitemap.xml", sitemapindex([f"{site.url}/a.xml", f"{site.url}/b.xml"]))
    site.add("/a.xml", urlset(pages(site, "/a/", 1000)))
    site.add("/b.xml", urlset(pages(site, "/b/", 10)))
    walk = sitescout.walk(f"{site.url}/sitemap.xml", max_urls=1000, concurrency=1)
    entries = await collect(walk)
    assert len(entries) == 1000
    assert walk.report.budgets_hit == ["max_urls"]  # it prevented b.xml, so it bound
    # §5 / BudgetTracker.exhausted_reason: no URL of b.xml could be kept, so it is not fetched.
    assert site.hits["/b.xml"] == 0


async def test_max_urls_reached_exactly_is_not_partial(site: Site) -> None:
    site.add("/sitemap.xml", urlset(pages(site, "/p/", 1000)))
    walk = sitescout.walk(f"{site.url}/sitemap.xml", max_urls=1000)
    entries = await collect(walk)
    assert len(entries) == 1000
    assert walk.report.budgets_hit == []
    assert not walk.report.partial
    assert walk.report.warnings == []


# --- the sampler preset --------------------------------------------------------------------------


def test_sampler_preset_values() -> None:
    sampler = Budgets.SAMPLER
    assert sampler.max_depth == 3
    assert sampler.max_fetches == 20
    assert sampler.max_bytes == 50 * MiB == 52_428_800
    assert sampler.max_urls == 10_000
    assert sampler.deadline is None
    assert sampler.any_set
    assert not Budgets().any_set


async def test_sampler_preset_caps_urls_and_fetches_in_one_walk(site: Site) -> None:
    shards = [f"/shard-{i}.xml" for i in range(30)]
    site.add("/sitemap.xml", sitemapindex([site.url + s for s in shards]))
    for i, path in enumerate(shards):
        site.add(path, urlset(pages(site, f"/s{i}/", 600)))
    walk = sitescout.walk(f"{site.url}/sitemap.xml", budgets=Budgets.SAMPLER, concurrency=1)
    entries = await collect(walk)
    # 600 URLs a shard: the URL budget (10,000) binds inside the 17th shard, before the fetch
    # budget (20) would.
    assert len(entries) == 10_000
    assert sitemap_hits(site) == 1 + 17
    assert walk.report.budgets_hit == ["max_urls"]


async def test_url_cut_counts_feed_the_truncation_notice(site: Site) -> None:
    site.add("/sitemap.xml", sitemapindex([f"{site.url}/a.xml", f"{site.url}/b.xml"]))
    site.add("/a.xml", urlset(pages(site, "/a/", 990)))
    site.add("/b.xml", urlset(pages(site, "/b/", 30)))
    walk = sitescout.walk(f"{site.url}/sitemap.xml", max_urls=1000, concurrency=1)
    entries = await collect(walk)
    report = walk.report
    assert len(entries) == 1000
    assert report.leaf_sitemaps == 2
    # b.xml (2 KiB) arrives in one piece, so all of its URLs were seen before the cut.
    assert report.urls + report.urls_cut == 1020
    assert truncation_notice(report.urls + report.urls_cut, report.leaf_sitemaps, 1000) == (
        "Discovered 1,020 page URLs across 2 leaf sitemaps. "
        "Truncated discovery to the first 1,000 page URLs; pass --all to lift the limit."
    )


async def test_missing_sub_path_sitemap_is_a_note_not_a_failure(site: Site) -> None:
    robots(site, "/sitemap.xml")
    site.add("/sitemap.xml", urlset(pages(site, "/blog/p", 5)))
    walk = sitescout.walk(f"{site.url}/docs/")
    assert await collect(walk) == []
    assert site.hits["/docs/sitemap.xml"] == 1
    assert walk.report.errors == []
    assert not walk.report.partial
    assert any("/docs/sitemap.xml" in n and "404" in n for n in walk.report.notes)


async def test_sub_path_sitemap_is_walked_when_the_site_map_misses_the_prefix(site: Site) -> None:
    robots(site, "/sitemap.xml")
    site.add("/sitemap.xml", urlset(pages(site, "/blog/p", 5)))
    site.add("/docs/sitemap.xml", urlset(pages(site, "/docs/p", 3)))
    walk = sitescout.walk(f"{site.url}/docs/")
    assert sorted(e.url for e in await collect(walk)) == sorted(pages(site, "/docs/p", 3))
    assert not walk.report.partial
