"""`sitescout extract` with the walk's filters and a sitemap you already have, against real HTTP
servers on 127.0.0.1.

What reached the server is counted there (`site.hits`): a shard a filter leaves out is never
requested, a page a filter drops is never fetched, a sitemap read from disk is never asked for.
Every run is bounded in time (the CLI's own timeouts, `subprocess` timeouts, short walks).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from sitescout._errors import UsageError
from sitescout._extract import ExtractOptions, Plan, RunResult, plan_extract, run_extract
from sitescout._project import CRAWL_LOG
from sitescout.cli import app

from .server import Site, sitemapindex, urlset

RUN_TIMEOUT = 60.0  # seconds for one `extract` subprocess


def html(title: str) -> str:
    return (
        f"<!doctype html><html lang='en'><head><title>{title}</title></head>"
        f"<body><h1>{title}</h1><p>Some words about {title}.</p><a href='/'>home</a></body></html>"
    )


def pages(site: Site, *paths: str) -> None:
    for path in paths:
        site.add(path, html(path.strip("/") or "Home"), Content_Type="text/html")


def dated_urlset(site: Site, entries: list[tuple[str, str | None]]) -> str:
    items = "".join(
        f"<url><loc>{site.url}{path}</loc>"
        + (f"<lastmod>{lastmod}</lastmod>" if lastmod else "")
        + "</url>"
        for path, lastmod in entries
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</urlset>'
    )


def dated_index(site: Site, children: list[tuple[str, str]]) -> str:
    items = "".join(
        f"<sitemap><loc>{site.url}{path}</loc><lastmod>{lastmod}</lastmod></sitemap>"
        for path, lastmod in children
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</sitemapindex>'
    )


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(app, ["extract", *args])
    # A clean exit is a SystemExit (typer.Exit); anything else is a traceback the user would see.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def summary_of(*args: str) -> dict[str, Any]:
    result = invoke(*args, "--json", "--yes")
    assert result.exit_code == 0, result.stderr
    summary: dict[str, Any] = json.loads(result.stdout)
    return summary


def run(
    *args: str, data: bytes = b"", cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "sitescout", "extract", *args],
        input=data,
        capture_output=True,
        timeout=RUN_TIMEOUT,
        check=False,
        cwd=cwd,
    )


def page_hits(site: Site) -> dict[str, int]:
    """Requests for pages (not robots.txt or sitemaps), by path."""
    return {
        path: n
        for path, n in site.hits.items()
        if n and not path.startswith(("/robots.txt", "/sitemap")) and not path.endswith(".xml")
    }


# -- the filters narrow the pool the sampler chooses from ------------------------------------------


def shop(site: Site) -> None:
    """An index of two shards: the pages one (6 pages) and a products one (3 pages)."""
    site.add("/robots.txt", f"User-agent: *\nSitemap: {site.url}/sitemap.xml\n")
    site.add(
        "/sitemap.xml",
        sitemapindex([f"{site.url}/sitemap-pages.xml", f"{site.url}/sitemap-products.xml"]),
    )
    plain = ["/", "/about/", "/blog/", "/blog/first-post/", "/tag/red/", "/tag/blue/"]
    products = ["/products/chair/", "/products/table/", "/products/lamp/"]
    site.add("/sitemap-pages.xml", urlset([site.url + p for p in plain]))
    site.add("/sitemap-products.xml", urlset([site.url + p for p in products]))
    pages(site, *plain, *products)


def test_sitemap_exclude_never_requests_that_shard(site: Site, tmp_path: Path) -> None:
    shop(site)
    summary = summary_of(
        site.url + "/", "--out", str(tmp_path), "--all", "--sitemap-exclude", "products"
    )
    assert site.hits["/sitemap-products.xml"] == 0
    assert site.hits["/sitemap-pages.xml"] == 1
    assert site.total_hits("/products/") == 0
    assert len(summary["extracted"]) == 6
    assert summary["filteredPages"] == 0  # a shard left out drops no page URL: none was read
    assert any("child sitemaps excluded by the sitemap filters" in n for n in summary["notes"])


def test_excluded_pages_are_never_fetched_and_the_count_is_shown(
    site: Site, tmp_path: Path
) -> None:
    shop(site)
    summary = summary_of(
        site.url + "/", "--out", str(tmp_path / "a"), "--all", "--exclude", "/tag/"
    )
    assert site.total_hits("/tag/") == 0
    assert sorted(summary["extracted"]) == sorted(
        ["home", "about", "blog", "blog__first-post", "products__chair", "products__table",
         "products__lamp"]
    )  # fmt: skip
    assert summary["filteredPages"] == 2
    assert "filters dropped 2 page URLs" in summary["notes"]
    # The crawl log carries the walk's note too.
    log = json.loads((tmp_path / "a" / CRAWL_LOG).read_text())
    assert "filters dropped 2 page URLs" in log["runs"][0]["discovery"]["notes"]

    # The text output says it above the selection.
    result = invoke(site.url + "/", "--out", str(tmp_path / "b"), "--exclude", "/tag/", "--yes")
    assert result.exit_code == 0, result.stderr
    assert "the filters (--exclude) dropped 2 page URLs before the selection" in result.stdout
    assert site.total_hits("/tag/") == 0


def test_include_keeps_the_sampler_to_matching_pages(site: Site, tmp_path: Path) -> None:
    shop(site)
    summary = summary_of(site.url + "/", "--out", str(tmp_path), "--include", "/products/")
    assert sorted(summary["extracted"]) == ["products__chair", "products__lamp", "products__table"]
    assert set(page_hits(site)) == {"/products/chair/", "/products/table/", "/products/lamp/"}
    assert summary["filteredPages"] == 6


def test_since_keeps_only_newer_pages_and_skips_old_shards(site: Site, tmp_path: Path) -> None:
    site.add("/robots.txt", f"User-agent: *\nSitemap: {site.url}/sitemap.xml\n")
    site.add(
        "/sitemap.xml",
        dated_index(
            site, [("/sitemap-recent.xml", "2025-05-01"), ("/sitemap-old.xml", "2023-01-01")]
        ),
    )
    recent = [
        ("/", "2025-02-01"),
        ("/news/spring/", "2025-03-01"),
        ("/news/summer/", "2025-06-01"),
        ("/news/winter/", "2024-01-01"),
        ("/news/autumn/", "2023-10-01"),
        ("/news/undated/", None),
    ]
    site.add("/sitemap-recent.xml", dated_urlset(site, recent))
    site.add("/sitemap-old.xml", dated_urlset(site, [("/archive/one/", "2022-01-01")]))
    pages(site, *(path for path, _ in recent), "/archive/one/")

    summary = summary_of(
        site.url + "/", "--out", str(tmp_path / "a"), "--all", "--since", "2025-01-01"
    )
    assert site.hits["/sitemap-old.xml"] == 0  # its index lastmod is older: never fetched
    assert site.total_hits("/archive/") == 0
    assert site.hits["/news/winter/"] == 0 and site.hits["/news/autumn/"] == 0
    assert set(page_hits(site)) == {"/", "/news/spring/", "/news/summer/", "/news/undated/"}
    assert len(summary["extracted"]) == 4
    assert summary["filteredPages"] == 2

    summary = summary_of(
        site.url + "/", "--out", str(tmp_path / "b"), "--all", "--since", "2025-01-01",
        "--since-strict",
    )  # fmt: skip
    assert len(summary["extracted"]) == 3  # no lastmod: dropped too
    assert site.hits["/news/undated/"] == 1  # (the first run's fetch only)
    assert summary["filteredPages"] == 3


def test_filters_that_drop_every_page_say_so(site: Site, tmp_path: Path) -> None:
    shop(site)
    result = invoke(site.url + "/", "--out", str(tmp_path), "--include", "/nothing-here/", "--yes")
    assert result.exit_code == 3, result.output
    assert "the filters (--include) dropped every page URL found (9)" in result.stderr
    assert page_hits(site) == {}


# -- named pages are the user's choice ----------------------------------------------------------


def test_pages_named_with_pages_are_extracted_whatever_the_filters(
    site: Site, tmp_path: Path
) -> None:
    shop(site)
    result = invoke(
        site.url + "/", "--out", str(tmp_path), "--pages", "tag__red,/products/lamp/",
        "--exclude", "/tag/", "--sitemap-exclude", "products", "--yes",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "--exclude and --sitemap-exclude not applied: --pages names the pages" in result.stdout
    assert site.hits["/sitemap-products.xml"] == 1  # read: the named product lives there
    assert page_hits(site) == {"/tag/red/": 1, "/products/lamp/": 1}


def test_single_is_extracted_whatever_the_filters(site: Site, tmp_path: Path) -> None:
    shop(site)
    summary = summary_of(
        site.url + "/tag/blue/", "--out", str(tmp_path), "--single", "--include", "/blog/"
    )
    assert summary["extracted"] == ["tag__blue"]
    assert page_hits(site) == {"/tag/blue/": 1}
    assert "--include not applied: --single names the page to extract" in summary["notes"]


def test_refresh_re_extracts_a_page_the_filters_leave_out(site: Site, tmp_path: Path) -> None:
    shop(site)
    first = summary_of(site.url + "/", "--out", str(tmp_path), "--all")
    assert len(first["extracted"]) == 9 and site.hits["/tag/red/"] == 1
    again = summary_of(
        site.url + "/", "--out", str(tmp_path), "--exclude", "/tag/", "--refresh", "tag__red"
    )
    assert again["extracted"] == ["tag__red"]
    assert site.hits["/tag/red/"] == 2 and site.hits["/tag/blue/"] == 1

    # --refresh-all re-extracts the filtered selection and says which earlier pages it left.
    result = invoke(
        site.url + "/", "--out", str(tmp_path), "--all", "--exclude", "/tag/", "--refresh-all",
        "--yes",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert site.hits["/tag/red/"] == 2 and site.hits["/tag/blue/"] == 1
    assert site.hits["/about/"] == 2
    assert (
        "--refresh-all: 2 pages extracted earlier are not in this filtered selection and not "
        "re-extracted (tag__blue, tag__red)" in result.stdout
    )


# -- a sitemap you already have -------------------------------------------------------------------


def test_a_local_sitemap_file_plans_pages_fetched_from_the_site(site: Site, tmp_path: Path) -> None:
    paths = ["/", "/about/", "/contact/"]
    pages(site, *paths)
    site.add("/sitemap.xml", urlset([site.url + "/unlisted/"]))  # would show if it were read
    (tmp_path / "sitemap.xml").write_text(urlset([site.url + p for p in paths]))
    proc = run(site.url + "/", "--sitemap", "./sitemap.xml", "--out", "proj", "--json", "--yes",
               cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert sorted(summary["extracted"]) == ["about", "contact", "home"]
    assert summary["sourceUrl"] == (tmp_path / "sitemap.xml").resolve().as_uri()
    assert page_hits(site) == {"/": 1, "/about/": 1, "/contact/": 1}
    assert site.hits["/sitemap.xml"] == 0
    assert (tmp_path / "proj" / "pages" / "about.json").is_file()


def test_a_sitemap_on_stdin_with_filters(site: Site, tmp_path: Path) -> None:
    paths = ["/", "/guide/", "/guide/setup/", "/tag/old/"]
    pages(site, *paths)
    data = urlset([site.url + p for p in paths]).encode()
    proc = run(site.url + "/", "--sitemap", "-", "--exclude", "/tag/", "--out", str(tmp_path),
               "--json", "--yes", data=data)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert sorted(summary["extracted"]) == ["guide", "guide__setup", "home"]
    assert summary["filteredPages"] == 1
    assert page_hits(site) == {"/": 1, "/guide/": 1, "/guide/setup/": 1}


def test_map_reads_the_sitemaps_from_a_folder(site: Site, tmp_path: Path) -> None:
    folder = tmp_path / "public"
    folder.mkdir()
    (folder / "robots.txt").write_text(f"User-agent: *\nSitemap: {site.url}/sitemap.xml\n")
    (folder / "sitemap.xml").write_text(sitemapindex([f"{site.url}/sitemap-1.xml"]))
    paths = ["/", "/docs/", "/docs/install/"]
    (folder / "sitemap-1.xml").write_text(urlset([site.url + p for p in paths]))
    pages(site, *paths)
    for path in ("/robots.txt", "/sitemap.xml", "/sitemap-1.xml"):  # served, never asked for
        site.add(path, urlset([site.url + "/from-the-network/"]))
    summary = summary_of(
        site.url + "/", "--out", str(tmp_path / "proj"), "--map", f"{site.url}/={folder}"
    )
    assert sorted(summary["extracted"]) == ["docs", "docs__install", "home"]
    assert site.hits["/robots.txt"] == 0
    assert site.total_hits("/sitemap") == 0
    assert page_hits(site) == {"/": 1, "/docs/": 1, "/docs/install/": 1}


@pytest.mark.parametrize("kind", ["path", "file-url", "stdin"])
def test_a_sitemap_file_as_the_site_is_refused_with_a_hint(
    site: Site, tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset([site.url + "/"]))
    arg = {"path": str(path), "file-url": path.as_uri(), "stdin": "-"}[kind]
    result = invoke(arg, "--out", str(tmp_path / "proj"))
    assert result.exit_code == 2, result.output
    assert "is a sitemap file, not a site" in result.stderr
    assert "give the site's URL and the file with --sitemap" in result.stderr
    assert f"--sitemap {arg}" in result.stderr
    assert not (tmp_path / "proj").exists()
    assert site.total_hits() == 0


@pytest.mark.parametrize(
    ("flag", "pattern"),
    [("--exclude", "(unclosed"), ("--include", "[z-a]"), ("--sitemap-exclude", "a{2,1}")],
)
def test_an_invalid_regex_is_a_usage_error_naming_the_flag(
    site: Site, tmp_path: Path, flag: str, pattern: str
) -> None:
    pages(site, "/")
    result = invoke(site.url + "/", "--out", str(tmp_path / "proj"), flag, pattern)
    assert result.exit_code == 2, result.output
    assert flag in result.stderr and "invalid regex" in result.stderr
    assert site.total_hits() == 0


def test_since_strict_without_since_is_a_usage_error(site: Site, tmp_path: Path) -> None:
    result = invoke(site.url + "/", "--out", str(tmp_path / "proj"), "--since-strict")
    assert result.exit_code == 2
    assert "--since-strict needs --since" in result.stderr
    assert site.total_hits() == 0


def test_a_missing_sitemap_file_is_named(site: Site, tmp_path: Path) -> None:
    result = invoke(site.url + "/", "--sitemap", str(tmp_path / "nope.xml"))
    assert result.exit_code == 2
    assert "no such file" in result.stderr
    assert site.total_hits() == 0


# -- the library -------------------------------------------------------------------------------


async def extract(url: str, options: ExtractOptions) -> tuple[Plan, RunResult]:
    plan = await asyncio.wait_for(plan_extract(url, options), RUN_TIMEOUT)
    result = await asyncio.wait_for(run_extract(plan, options, user_choice="test"), RUN_TIMEOUT)
    return plan, result


def test_options_take_the_walk_s_filters_checked_by_its_rules(tmp_path: Path) -> None:
    options = ExtractOptions(
        since=datetime(2025, 1, 1),  # naive: UTC
        include=["/blog/"],  # type: ignore[arg-type]  # a list is taken, held as a tuple
        sitemap=tmp_path / "sitemap.xml",  # type: ignore[arg-type]  # a path is its file URL
        maps=[("https://example.com/", str(tmp_path))],  # type: ignore[arg-type]
    )
    assert options.since == datetime(2025, 1, 1, tzinfo=UTC)
    assert options.include == ("/blog/",)
    assert options.sitemap == (tmp_path / "sitemap.xml").resolve().as_uri()
    assert options.maps == (("https://example.com/", str(tmp_path)),)
    assert options.filters_given == ("--since", "--include")
    walk = options.walk_options()
    assert walk.include == ("/blog/",) and walk.since == options.since
    assert walk.maps == options.maps and not walk.alternates and walk.filter_locales

    named = ExtractOptions(pages=("about",), exclude=("/about/",))
    assert named.exclude == ("/about/",) and not named.filters_apply
    assert named.walk_options().exclude == ()  # named pages: no filter can hide them

    cases: list[tuple[dict[str, Any], str]] = [
        ({"exclude": ("(",)}, "exclude: invalid regex"),
        ({"since": "2025-01-01"}, "since must be a datetime"),
        ({"include": "/blog/"}, "include must be a sequence"),
        ({"sitemap_filter": "products"}, "sitemap_filter must be callable"),
        ({"maps": "https://example.com/=dir"}, "maps must be a sequence"),
        ({"sitemap": "ftp://example.com/sitemap.xml"}, "--sitemap must be an http"),
    ]
    for bad, message in cases:
        with pytest.raises(UsageError, match=message):
            ExtractOptions(**bad)


async def test_sitemap_filter_leaves_a_shard_unfetched(site: Site, tmp_path: Path) -> None:
    shop(site)
    options = ExtractOptions(out=tmp_path, all=True, sitemap_filter=lambda u: "products" not in u)
    plan, result = await extract(site.url + "/", options)
    assert site.hits["/sitemap-products.xml"] == 0
    assert len(result.successes) == 6
    assert plan.filters == ("sitemap_filter",) and plan.filtered == 0


async def test_library_exclude_and_local_sitemap(site: Site, tmp_path: Path) -> None:
    paths = ["/", "/about/", "/tag/a/", "/tag/b/"]
    pages(site, *paths)
    sitemap = tmp_path / "sitemap.xml"
    sitemap.write_text(urlset([site.url + p for p in paths]))
    options = ExtractOptions(out=tmp_path / "proj", all=True, sitemap=str(sitemap.as_uri()),
                             exclude=("/tag/",))  # fmt: skip
    plan, result = await extract(site.url + "/", options)
    assert sorted(result.successes) == ["about", "home"]
    assert plan.filtered == 2
    assert plan.filter_note == "the filters (--exclude) dropped 2 page URLs before the selection"
    assert page_hits(site) == {"/": 1, "/about/": 1}
