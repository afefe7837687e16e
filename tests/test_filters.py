"""Filters that save fetches: `--since`, `--include`/`--exclude`, `--sitemap-include`/
`--sitemap-exclude` and `WalkOptions(sitemap_filter=...)`, over real HTTP on 127.0.0.1.

What reached the server is counted there (`site.hits`): a child sitemap a filter leaves out is
never requested. Every walk is bounded in time.
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from typer.testing import CliRunner

from sitescout import WalkOptions
from sitescout._core import UrlFilter
from sitescout._errors import UsageError
from sitescout._models import Entry
from sitescout._parse import parse_document
from sitescout._since import parse_since
from sitescout._walk import Walk
from sitescout.cli import app

from .server import Site

WALK_TIMEOUT = 20.0


def dated_index(site: Site, children: list[tuple[str, str | None]]) -> str:
    items = "".join(
        f"<sitemap><loc>{site.url}{path}</loc>"
        + (f"<lastmod>{lastmod}</lastmod>" if lastmod else "")
        + "</sitemap>"
        for path, lastmod in children
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</sitemapindex>'
    )


def dated_urlset(site: Site, pages: list[tuple[str, str | None]]) -> str:
    items = "".join(
        f"<url><loc>{site.url}{path}</loc>"
        + (f"<lastmod>{lastmod}</lastmod>" if lastmod else "")
        + "</url>"
        for path, lastmod in pages
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</urlset>'
    )


def xml(site: Site, path: str, body: str) -> None:
    site.add(path, body, content_type="application/xml")


def run_cli(*args: str) -> tuple[int, list[dict[str, Any]], dict[str, Any], str]:
    """Exit code, the JSON lines, the --json summary (empty on a usage error) and stderr."""
    result = CliRunner().invoke(app, ["urls", *args, "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    summary = json.loads(result.stderr) if result.exit_code != 2 else {}
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return result.exit_code, lines, summary, result.stderr


def urls_of(lines: list[dict[str, Any]], site: Site) -> list[str]:
    return sorted(line["url"].removeprefix(site.url) for line in lines)


async def collect(walk: Walk) -> list[Entry]:
    entries: list[Entry] = []
    async with asyncio.timeout(WALK_TIMEOUT):
        async for batch in walk:
            entries.extend(batch)
    return entries


def index_site(site: Site) -> None:
    """An index of 4 children: two old, one equal to 2025-06-01, one new, one without lastmod."""
    xml(
        site,
        "/sitemap.xml",
        dated_index(
            site,
            [
                ("/old-1.xml", "2025-01-01"),
                ("/old-2.xml", "2025-05-31T23:59:59Z"),
                ("/equal.xml", "2025-06-01T02:00:00+02:00"),
                ("/new.xml", "2025-07-01"),
                ("/undated.xml", None),
            ],
        ),
    )
    for name in ("old-1", "old-2", "equal", "new", "undated"):
        xml(site, f"/{name}.xml", dated_urlset(site, [(f"/{name}/page", None)]))


# -- --since on index children --------------------------------------------------------------------


def test_since_skips_old_children_unfetched(site: Site) -> None:
    index_site(site)
    code, lines, summary, _ = run_cli(
        site.url + "/", "--sitemap", f"{site.url}/sitemap.xml", "--since", "2025-06-01"
    )
    assert code == 0
    assert site.hits["/old-1.xml"] == 0
    assert site.hits["/old-2.xml"] == 0
    for kept in ("/equal.xml", "/new.xml", "/undated.xml"):
        assert site.hits[kept] == 1
    assert urls_of(lines, site) == ["/equal/page", "/new/page", "/undated/page"]
    note = (
        f"{site.url}/sitemap.xml: skipped 2 child sitemaps unchanged since "
        "2025-06-01T00:00:00+00:00"
    )
    assert note in summary["notes"]
    assert summary["skipped_sitemaps"] == 2


def test_parser_reports_child_lastmods() -> None:
    body = (
        "<sitemapindex><sitemap><loc>https://e.test/a.xml</loc><lastmod>2025-06-01</lastmod>"
        "</sitemap><sitemap><loc>https://e.test/b.xml</loc></sitemap></sitemapindex>"
    )
    parser = parse_document(body.encode(), "https://e.test/sitemap.xml")
    assert parser.sitemaps == ["https://e.test/a.xml", "https://e.test/b.xml"]
    assert parser.sitemap_lastmods == {"https://e.test/a.xml": "2025-06-01"}


# -- --since on pages -----------------------------------------------------------------------------


def pages_site(site: Site) -> None:
    xml(
        site,
        "/sitemap.xml",
        dated_urlset(
            site,
            [
                ("/old", "2025-05-31"),
                ("/equal", "2025-06-01T00:00:00+00:00"),
                ("/new", "2025-06-02T10:00:00Z"),
                ("/undated", None),
            ],
        ),
    )


def test_since_drops_older_pages_keeps_equal_and_undated(site: Site) -> None:
    pages_site(site)
    code, lines, summary, _ = run_cli(
        site.url + "/", "--sitemap", f"{site.url}/sitemap.xml", "--since", "2025-06-01T00:00:00"
    )
    assert code == 0
    assert urls_of(lines, site) == ["/equal", "/new", "/undated"]
    assert summary["urls"] == 3


def test_since_strict_drops_undated_pages(site: Site) -> None:
    pages_site(site)
    code, lines, _, _ = run_cli(
        site.url + "/",
        "--sitemap",
        f"{site.url}/sitemap.xml",
        "--since",
        "2025-06-01",
        "--since-strict",
    )
    assert code == 0
    assert urls_of(lines, site) == ["/equal", "/new"]


def test_since_relative_days(site: Site) -> None:
    now = datetime.now(UTC)
    recent = (now - timedelta(days=2)).isoformat()
    stale = (now - timedelta(days=9)).isoformat()
    xml(site, "/sitemap.xml", dated_urlset(site, [("/recent", recent), ("/stale", stale)]))
    code, lines, _, _ = run_cli(
        site.url + "/", "--sitemap", f"{site.url}/sitemap.xml", "--since", "7d"
    )
    assert code == 0
    assert urls_of(lines, site) == ["/recent"]


def test_parse_since_forms() -> None:
    now = datetime(2025, 6, 10, 12, tzinfo=UTC)
    assert parse_since("7d", now=now) == datetime(2025, 6, 3, 12, tzinfo=UTC)
    assert parse_since("12h", now=now) == datetime(2025, 6, 10, 0, tzinfo=UTC)
    assert parse_since("2025-06-01") == datetime(2025, 6, 1, tzinfo=UTC)
    assert parse_since("2025-06-01T02:00:00+02:00") == datetime(2025, 6, 1, tzinfo=UTC)
    with pytest.raises(UsageError):
        parse_since("last week")


def test_library_naive_since_is_utc(site: Site) -> None:
    pages_site(site)
    options = WalkOptions(sitemap=f"{site.url}/sitemap.xml", since=datetime(2025, 6, 1))
    assert options.since == datetime(2025, 6, 1, tzinfo=UTC)
    entries = asyncio.run(collect(Walk(site.url + "/", options)))
    assert sorted(e.url.removeprefix(site.url) for e in entries) == ["/equal", "/new", "/undated"]


@pytest.mark.parametrize("value", ["yesterday", "2025-13-01", "7y", ""])
def test_bad_since_exits_2(site: Site, value: str) -> None:
    code, lines, _, stderr = run_cli(site.url + "/", "--since", value)
    assert code == 2
    assert "--since" in stderr
    assert lines == []
    assert sum(site.hits.values()) == 0


def test_bad_library_options() -> None:
    with pytest.raises(UsageError, match="since must be a datetime"):
        WalkOptions(since="2025-06-01")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="include: invalid regex"):
        WalkOptions(include=("(",))
    with pytest.raises(UsageError, match="sitemap_filter must be callable"):
        WalkOptions(sitemap_filter="no")  # type: ignore[arg-type]


# -- include / exclude ----------------------------------------------------------------------------


def test_include_exclude_pages(site: Site) -> None:
    paths = ["/blog/a", "/blog/draft-b", "/news/c", "/shop/d"]
    xml(site, "/sitemap.xml", dated_urlset(site, [(p, None) for p in paths]))
    code, lines, summary, _ = run_cli(
        site.url + "/",
        "--sitemap",
        f"{site.url}/sitemap.xml",
        "--include",
        "/blog/",
        "--include",
        "/news/",
        "--exclude",
        "draft",
    )
    assert code == 0
    assert urls_of(lines, site) == ["/blog/a", "/news/c"]
    assert "filters dropped 2 page URLs" in summary["notes"]
    assert summary["filtered_pages"] == 2


def test_sitemap_include_exclude_children_unfetched(site: Site) -> None:
    xml(
        site,
        "/sitemap.xml",
        dated_index(site, [(f"/{n}.xml", None) for n in ("products-1", "products-2", "blog")]),
    )
    for name in ("products-1", "products-2", "blog"):
        xml(site, f"/{name}.xml", dated_urlset(site, [(f"/{name}/page", None)]))
    code, lines, summary, _ = run_cli(
        site.url + "/",
        "--sitemap",
        f"{site.url}/sitemap.xml",
        "--sitemap-include",
        "products",
        "--sitemap-exclude",
        r"-2\.xml$",
    )
    assert code == 0
    assert site.hits["/products-1.xml"] == 1
    assert site.hits["/products-2.xml"] == 0
    assert site.hits["/blog.xml"] == 0
    assert urls_of(lines, site) == ["/products-1/page"]
    assert summary["skipped_sitemaps"] == 2
    assert any("skipped 2 child sitemaps excluded" in n for n in summary["notes"])


@pytest.mark.parametrize(
    "flag", ["--include", "--exclude", "--sitemap-include", "--sitemap-exclude"]
)
def test_invalid_regex_exits_2_naming_the_flag(site: Site, flag: str) -> None:
    code, _, _, stderr = run_cli(site.url + "/", flag, "(unclosed")
    assert code == 2
    assert flag in stderr
    assert "unclosed group" in stderr
    assert sum(site.hits.values()) == 0


def test_pathological_pattern_is_linear() -> None:
    url = "https://e.test/" + "a" * 50_000 + "!"
    started = time.monotonic()
    keep = UrlFilter(["(a+)+$"]).keeps_url(url)
    assert time.monotonic() - started < 2.0
    assert keep is False


def test_pathological_pattern_in_a_walk(site: Site) -> None:
    long_path = "/" + "a" * 5_000 + "!"
    xml(site, "/sitemap.xml", dated_urlset(site, [(long_path, None), ("/aaa", None)]))
    started = time.monotonic()
    code, lines, _, _ = run_cli(
        site.url + "/", "--sitemap", f"{site.url}/sitemap.xml", "--exclude", "(a+)+$"
    )
    assert time.monotonic() - started < WALK_TIMEOUT
    assert code == 0
    assert urls_of(lines, site) == [long_path]


# -- the callable child filter --------------------------------------------------------------------


def three_children(site: Site) -> None:
    xml(site, "/sitemap.xml", dated_index(site, [(f"/{n}.xml", None) for n in ("a", "b", "c")]))
    for name in ("a", "b", "c"):
        xml(site, f"/{name}.xml", dated_urlset(site, [(f"/{name}/page", None)]))


def test_sitemap_filter_callable(site: Site) -> None:
    three_children(site)
    seen: list[str] = []

    def keep(url: str) -> bool:
        seen.append(url)
        return not url.endswith("/b.xml")

    options = WalkOptions(sitemap=f"{site.url}/sitemap.xml", sitemap_filter=keep)
    walk = Walk(site.url + "/", options)
    entries = asyncio.run(collect(walk))
    assert sorted(e.url.removeprefix(site.url) for e in entries) == ["/a/page", "/c/page"]
    assert site.hits["/b.xml"] == 0
    assert len(seen) == 3
    assert walk.report.skipped_sitemaps == [f"{site.url}/b.xml"]


def test_sitemap_filter_that_raises_is_that_childs_error(site: Site) -> None:
    three_children(site)

    def keep(url: str) -> bool:
        if url.endswith("/c.xml"):
            raise RuntimeError("boom")
        return True

    options = WalkOptions(sitemap=f"{site.url}/sitemap.xml", sitemap_filter=keep)
    walk = Walk(site.url + "/", options)
    entries = asyncio.run(collect(walk))
    assert sorted(e.url.removeprefix(site.url) for e in entries) == ["/a/page", "/b/page"]
    assert site.hits["/c.xml"] == 0
    (error,) = walk.report.errors
    assert error.url == f"{site.url}/c.xml"
    assert error.error is not None and "boom" in error.error


def test_no_filter_builds_none() -> None:
    options = WalkOptions()
    assert options.page_filter() is None
    assert options.child_filter() is None


@pytest.mark.parametrize(
    ("flag", "fetched"),
    [(["--include", "/blog/"], ["/blog/new"]), (["--since", "2025-01-01"], ["/", "/blog/new"])],
)
def test_extract_takes_the_inventory_filters(
    site: Site, tmp_path: Any, flag: list[str], fetched: list[str]
) -> None:
    """The filters narrow the pages extract chooses from (tests/test_extract_filters.py)."""
    entries = [("/", "2025-05-01"), ("/blog/new", "2025-03-01"), ("/old", "2024-01-01")]
    xml(site, "/sitemap.xml", dated_urlset(site, entries))
    for path, _ in entries:
        site.add(path, "<html><body><p>Some text.</p></body></html>", Content_Type="text/html")
    args = ["extract", site.url + "/", "--out", str(tmp_path / "p"), "--yes", "--all", *flag]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert sorted(p for p, _ in entries if site.hits[p]) == fetched


# -- page filters on entries with no sitemap row: llms.txt links and crawled pages --------------


def test_page_filters_apply_to_llms_txt_links(site: Site) -> None:
    site.add(
        "/llms.txt",
        "# Docs\n\n- [Intro](/docs/intro)\n- [Blog](/blog/one)\n- [API](/docs/api)\n",
        Content_Type="text/plain",
    )
    code, lines, summary, _ = run_cli(site.url + "/", "--source", "llms", "--exclude", "/blog/")
    assert code == 0
    assert urls_of(lines, site) == ["/docs/api", "/docs/intro"]
    assert "filters dropped 1 page URL" in summary["notes"]
    assert summary["filtered_pages"] == 1
    # No lastmod on an llms.txt link: --since keeps them all, --since-strict drops them all.
    code, lines, _, _ = run_cli(site.url + "/", "--source", "llms", "--since", "2025-01-01")
    assert len(lines) == 3
    code, lines, _, _ = run_cli(
        site.url + "/", "--source", "llms", "--since", "2025-01-01", "--since-strict"
    )
    assert lines == []


def test_page_filters_apply_to_crawled_pages_and_the_crawl_still_follows_links(
    site: Site,
) -> None:
    def page(*links: str) -> str:
        anchors = "".join(f'<a href="{href}">more</a>' for href in links)
        return f"<html><body><p>Some text.</p>{anchors}</body></html>"

    site.add("/", page("/blog/", "/about"), Content_Type="text/html")
    site.add("/blog/", page("/docs/deep"), Content_Type="text/html")
    site.add("/about", page(), Content_Type="text/html")
    site.add("/docs/deep", page(), Content_Type="text/html")
    code, lines, summary, _ = run_cli(site.url + "/", "--crawl", "--include", "/docs/|/about$")
    assert code == 0
    # /docs/deep is linked only from the excluded /blog/ page: the crawl went through it.
    assert urls_of(lines, site) == ["/about", "/docs/deep"]
    assert site.hits["/blog/"] == 1
    assert "filters dropped 2 page URLs" in summary["notes"]


def test_llms_links_merged_with_sitemaps_are_filtered_too(site: Site) -> None:
    xml(site, "/sitemap.xml", dated_urlset(site, [("/a", "2025-01-01"), ("/b", "2025-09-01")]))
    site.add("/llms.txt", "# S\n\n- [C](/c)\n- [A](/a)\n", Content_Type="text/plain")
    code, lines, summary, _ = run_cli(
        site.url + "/", "--source", "all", "--since", "2025-06-01", "--exclude", "/c$"
    )
    assert code == 0
    assert urls_of(lines, site) == ["/b"]
    assert "filters dropped 2 page URLs (since 2025-06-01T00:00:00+00:00)" in summary["notes"]
