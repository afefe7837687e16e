"""llms.txt as a page source over real HTTP on 127.0.0.1: discovery, acceptance, links, `.md`
mapping, aggregate files, the omitted list, `--source llms|auto|all`, base-path scoping and its
warning, budgets, the size cap, hostile bodies, the CLI (`urls`, `scope`, `extract`), and an
llms.txt the caller names: read as given on another site (127.0.0.2), or a warning when unread.

Every walk is bounded in time; what reached the server is counted there (`site.hits`).
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

import sitescout
from sitescout._models import Entry
from sitescout._project import CRAWL_LOG, schema
from sitescout._walk import Walk
from sitescout.cli import app

from .server import Reply, RequestHandler, Site, urlset

WALK_TIMEOUT = 20.0
TEXT = "text/plain; charset=utf-8"


async def collect(walk: Walk, seconds: float = WALK_TIMEOUT) -> list[Entry]:
    entries: list[Entry] = []
    async with asyncio.timeout(seconds):
        async for batch in walk:
            entries.extend(batch)
    return entries


def llms(site: Site, path: str, body: str, content_type: str = TEXT) -> None:
    site.add(path, body, Content_Type=content_type)


def docs_llms(site: Site) -> None:
    """An llms.txt with every kind of link, and one aggregate file that names a deeper one."""
    llms(
        site,
        "/llms.txt",
        "# Example docs\n\n> Docs for models.\n\n## Docs\n"
        "- [Guide](/docs/guide/index.md): start here\n"
        f"- [API reference]({site.url}/docs/api.md)\n"
        "- [Changelog](/changelog)\n"
        "- [Logo](/static/logo.png)\n"
        "- [Elsewhere](https://example.org/page)\n"
        "- [Relative](guide.md)\n"
        "- [Guide again](/docs/guide/)\n"
        "## Optional\n- [Full text](/llms-full.txt)\n",
    )
    llms(
        site,
        "/llms-full.txt",
        "# Full\n[Tutorial](/docs/tutorial.mdx) [API](/docs/api)\n"
        "[Deeper](/docs/llms-more.txt) [Deeper again](/docs/llms-more.txt)\n",
    )
    llms(site, "/docs/llms-more.txt", "[Never](/never-read)\n")


def urls_of(entries: list[Entry], site: Site) -> list[str]:
    return [e.url.removeprefix(site.url) for e in entries]


# --- the rules of one file -----------------------------------------------------------------------


async def test_llms_source_maps_md_reads_aggregates_and_records_omitted(site: Site) -> None:
    docs_llms(site)
    walk = sitescout.walk(site.url + "/", source="llms")
    entries = await collect(walk)
    report = walk.report

    assert urls_of(entries, site) == ["/docs/guide/", "/docs/api", "/changelog", "/docs/tutorial"]
    by_url = {e.url.removeprefix(site.url): e for e in entries}
    assert by_url["/docs/guide/"].md_url == site.url + "/docs/guide/index.md"
    assert by_url["/docs/api"].md_url == site.url + "/docs/api.md"
    assert by_url["/docs/tutorial"].md_url == site.url + "/docs/tutorial.mdx"
    assert by_url["/changelog"].md_url is None
    assert by_url["/docs/guide/"].title == "Guide"
    assert by_url["/docs/tutorial"].sitemap == site.url + "/llms-full.txt"
    assert {e.source for e in entries} == {"llms.txt"}
    assert all(e.sources == () for e in entries)  # one source: nothing to merge

    assert report.source == "llms.txt"
    assert report.source_url == site.url + "/llms.txt"
    assert report.llms is not None
    assert report.llms.aggregates == [site.url + "/llms-full.txt"]
    assert report.llms.omitted == [site.url + "/docs/llms-more.txt"]
    assert report.llms.dropped == {
        "asset-extension": 1,
        "other-host": 1,
        "not absolute or root-relative": 1,
    }
    assert report.llms.links == 4 and report.llms.md_links == 3
    assert site.hits["/docs/llms-more.txt"] == 0  # omitted, not followed
    assert site.hits["/llms-full.txt"] == 1
    assert site.hits["/robots.txt"] == 0  # llms only: no sitemap discovery
    assert not report.partial


async def test_candidates_are_tried_in_order_and_the_first_usable_wins(site: Site) -> None:
    llms(site, "/llms.txt", "[Root](/root-page)\n")
    llms(site, "/docs/llms.txt", "[Docs](/docs/page)\n")
    walk = sitescout.walk(site.url + "/en/manual/", source="llms")
    entries = await collect(walk)

    assert urls_of(entries, site) == []  # /root-page is outside the base path
    assert [p for _t, p, _ua in site.log] == ["/en/manual/llms.txt", "/llms.txt"]
    assert walk.report.source_url == site.url + "/llms.txt"
    assert walk.report.llms is not None
    # The reason is the answer alone: the URL it is about is beside it.
    assert walk.report.llms.rejected == [(site.url + "/en/manual/llms.txt", "HTTP 404")]


async def test_a_root_url_tries_two_candidates_then_gives_up(site: Site) -> None:
    walk = sitescout.walk(site.url + "/", source="llms")
    entries = await collect(walk)
    assert entries == []
    assert [p for _t, p, _ua in site.log] == ["/llms.txt", "/docs/llms.txt"]
    assert walk.report.source == "none"
    assert "no usable llms.txt found" in walk.report.notes
    assert walk.report.errors == []  # a missing llms.txt is an answer, not a failure
    assert f"llms.txt {site.url}/llms.txt: HTTP 404" in walk.report.notes
    # The only source gave nothing: a warning (which the CLI prints) says where it looked.
    assert walk.report.warnings == [
        f"no llms.txt at {site.url}/llms.txt (HTTP 404), {site.url}/docs/llms.txt (HTTP 404)"
    ]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"source": "rss"}, "source must be one of auto, sitemap, llms, all; got 'rss'"),
        ({"llms_txt": "file:///etc/passwd"}, "llms_txt must be an http(s) URL"),
    ],
)
async def test_bad_source_options_are_refused_before_any_request(
    site: Site, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(sitescout.UsageError, match=re.escape(message)):
        sitescout.walk(site.url + "/", **options)
    assert site.total_hits() == 0


async def test_explicit_llms_txt_is_the_only_candidate(site: Site) -> None:
    llms(site, "/llms.txt", "[Root](/root-page)\n")
    llms(site, "/meta/ai.txt", "[Named](/named)\n")
    walk = sitescout.walk(site.url + "/", source="llms", llms_txt=site.url + "/meta/ai.txt")
    entries = await collect(walk)
    assert urls_of(entries, site) == ["/named"]
    assert site.hits["/llms.txt"] == 0


@pytest.mark.parametrize(
    ("body", "content_type", "why"),
    [
        ("<!DOCTYPE html><html><body>Not found</body></html>", "text/html", "an HTML page"),
        ("<html><body>[Page](/p)</body></html>", TEXT, "an HTML page"),
        ("", TEXT, "empty"),
        ("\n  \n", TEXT, "empty"),
        ('{"links": ["[A](/a)"]}', "application/json", "not a text file"),
    ],
)
async def test_unusable_answers_are_rejected_and_the_next_candidate_tried(
    site: Site, body: str, content_type: str, why: str
) -> None:
    llms(site, "/llms.txt", body, content_type)
    llms(site, "/docs/llms.txt", "[Docs page](/docs/page)\n")
    walk = sitescout.walk(site.url + "/", source="llms")
    entries = await collect(walk)
    assert urls_of(entries, site) == ["/docs/page"]
    assert walk.report.llms is not None
    [(url, reason)] = walk.report.llms.rejected
    assert url == site.url + "/llms.txt"
    assert reason.startswith(why)


async def test_a_redirect_to_another_host_is_refused(site: Site) -> None:
    other = site.url.replace("127.0.0.1", "localhost")
    site.routes["/llms.txt"] = Reply(302, b"", {"Location": other + "/moved-llms.txt"})
    llms(site, "/moved-llms.txt", "[Page](/page)\n")
    walk = sitescout.walk(site.url + "/", source="llms")
    entries = await collect(walk)
    assert entries == []
    assert walk.report.llms is not None
    assert (site.url + "/llms.txt", f"redirected to another site ({other}/moved-llms.txt)") in (
        walk.report.llms.rejected
    )


async def test_a_same_site_redirect_is_followed(site: Site) -> None:
    site.routes["/llms.txt"] = Reply(301, b"", {"Location": "/static/llms.txt"})
    llms(site, "/static/llms.txt", "[Page](/page)\n")
    walk = sitescout.walk(site.url + "/", source="llms")
    entries = await collect(walk)
    assert urls_of(entries, site) == ["/page"]


async def test_a_file_over_the_cap_is_cut_and_the_cut_recorded(site: Site) -> None:
    line = "- [Page](/p/{:07d}): a description long enough to keep the link count low\n"
    count = 5 * 1024 * 1024 // len(line.format(0)) + 1000  # past the 5 MiB cap
    llms(site, "/llms.txt", "".join(line.format(i) for i in range(count)))
    walk = sitescout.walk(site.url + "/", source="llms")
    entries = await collect(walk, 60)
    report = walk.report
    assert report.llms is not None
    assert report.llms.cut == [site.url + "/llms.txt"]
    assert f"{site.url}/llms.txt: cut at the llms.txt size limit" in report.warnings
    assert report.partial
    # Everything before the cut is kept (the last, cut line may be lost); nothing after it.
    assert count - 1000 - 1 <= len(entries) < count - 1000 + 1
    assert entries[0].url == site.url + "/p/0000000"


async def test_aggregates_beyond_the_limit_are_omitted(site: Site) -> None:
    names = [f"/part-{i}.txt" for i in range(25)]
    llms(site, "/llms.txt", "".join(f"[Part {i}]({n})\n" for i, n in enumerate(names)))
    for i, name in enumerate(names):
        llms(site, name, f"[Doc {i}](/doc-{i})\n")
    walk = sitescout.walk(site.url + "/", source="llms")
    entries = await collect(walk)
    assert len(entries) == 20
    assert walk.report.llms is not None
    assert walk.report.llms.omitted == [site.url + n for n in names[20:]]
    assert sum(site.hits[n] for n in names) == 20


async def test_hostile_body_over_http_is_read_in_bounded_time(site: Site) -> None:
    body = "[" * 1_000_000 + "[ok](/ok)" + "[a](/x" + " " * 1_000_000 + ")"
    llms(site, "/llms.txt", body)
    walk = sitescout.walk(site.url + "/", source="llms")
    start = time.perf_counter()
    entries = await collect(walk)
    assert time.perf_counter() - start < 10
    assert urls_of(entries, site) == ["/ok", "/x"]


# --- where llms.txt fits among the sources --------------------------------------------------------


async def test_auto_uses_llms_txt_when_there_is_no_sitemap_before_crawling(site: Site) -> None:
    docs_llms(site)
    site.add("/", "<html><a href='/crawled'>x</a></html>", Content_Type="text/html")
    walk = sitescout.walk(site.url + "/")
    entries = await collect(walk)
    assert urls_of(entries, site)[:2] == ["/docs/guide/", "/docs/api"]
    assert walk.report.source == "llms.txt"
    assert site.hits["/"] == 0  # no link crawl
    assert site.hits["/sitemap.xml"] == 1  # the well-known paths were tried first


async def test_auto_ignores_llms_txt_when_there_is_a_sitemap(site: Site) -> None:
    docs_llms(site)
    site.add("/sitemap.xml", urlset([site.url + "/a", site.url + "/b"]))
    walk = sitescout.walk(site.url + "/")
    entries = await collect(walk)
    assert urls_of(entries, site) == ["/a", "/b"]
    assert site.hits["/llms.txt"] == 0
    assert walk.report.llms is None


async def test_auto_crawls_when_neither_exists(site: Site) -> None:
    site.add("/", "<html><a href='/crawled'>x</a></html>", Content_Type="text/html")
    site.add("/crawled", "<html>hi</html>", Content_Type="text/html")
    walk = sitescout.walk(site.url + "/")
    entries = await collect(walk)
    assert walk.report.source == "bfs"
    assert "/crawled" in urls_of(entries, site)
    assert site.hits["/llms.txt"] == 1


async def test_sitemap_source_never_reads_llms_txt(site: Site) -> None:
    docs_llms(site)
    site.add("/", "<html><a href='/crawled'>x</a></html>", Content_Type="text/html")
    walk = sitescout.walk(site.url + "/", source="sitemap")
    await collect(walk)
    assert site.hits["/llms.txt"] == 0
    assert walk.report.source == "bfs"


async def test_all_merges_and_says_which_sources_listed_each_url(site: Site) -> None:
    docs_llms(site)
    listed = ["/", "/docs/api", "/docs/guide/index.md", "/only-in-sitemap"]
    site.add("/sitemap.xml", urlset([site.url + p for p in listed]))
    walk = sitescout.walk(site.url + "/", source="all")
    entries = await collect(walk)
    got = {e.url.removeprefix(site.url): (e.source, e.sources, e.md_url) for e in entries}
    assert got == {
        "/": ("sitemap", ("sitemap",), None),
        "/docs/api": ("sitemap", ("sitemap", "llms.txt"), site.url + "/docs/api.md"),
        # The sitemap listed the markdown copy: it stands for the page llms.txt names.
        "/docs/guide/index.md": (
            "sitemap",
            ("sitemap", "llms.txt"),
            site.url + "/docs/guide/index.md",
        ),
        "/only-in-sitemap": ("sitemap", ("sitemap",), None),
        "/changelog": ("llms.txt", ("llms.txt",), None),
        "/docs/tutorial": ("llms.txt", ("llms.txt",), site.url + "/docs/tutorial.mdx"),
    }
    # Sitemap entries stream first; llms.txt-only ones follow, once each.
    assert urls_of(entries, site)[-2:] == ["/changelog", "/docs/tutorial"]
    assert walk.report.source == "sitemap.xml"
    assert f"also llms.txt {site.url}/llms.txt" in walk.report.notes
    assert site.hits["/llms.txt"] == 1


async def test_all_marks_the_rows_of_the_sitemap_under_the_base_path(site: Site) -> None:
    # The site's sitemap has nothing under /docs/, so the one under /docs/ is tried; it is a
    # sitemap like the others: its rows say llms.txt lists them too.
    llms(site, "/llms.txt", "[A](/docs/a) [C](/docs/c) [Blog](/blog/x)\n")
    site.add("/sitemap.xml", urlset([site.url + "/blog/x", site.url + "/blog/y"]))
    site.add("/docs/sitemap.xml", urlset([site.url + "/docs/a", site.url + "/docs/b"]))
    walk = sitescout.walk(site.url + "/docs/", source="all")
    entries = await collect(walk)
    got = [(e.url.removeprefix(site.url), e.source, e.sources) for e in entries]
    assert got == [
        ("/docs/a", "sitemap", ("sitemap", "llms.txt")),
        ("/docs/b", "sitemap", ("sitemap",)),
        ("/docs/c", "llms.txt", ("llms.txt",)),
    ]
    assert site.hits["/docs/sitemap.xml"] == 1


async def test_all_without_a_sitemap_uses_llms_txt_alone_and_does_not_crawl(site: Site) -> None:
    llms(site, "/llms.txt", "[A](/a) [B](/b.md)\n")
    walk = sitescout.walk(site.url + "/", source="all")
    entries = await collect(walk)
    assert [(e.url.removeprefix(site.url), e.sources) for e in entries] == [
        ("/a", ("llms.txt",)),
        ("/b", ("llms.txt",)),
    ]
    assert walk.report.source == "llms.txt"
    assert site.hits["/"] == 0


async def test_all_with_crawl_names_the_crawl_as_a_source(site: Site) -> None:
    llms(site, "/llms.txt", "[A](/a) [Only here](/c)\n")
    site.add("/", "<html><a href='/a'>a</a> <a href='/b'>b</a></html>", Content_Type="text/html")
    for path in ("/a", "/b"):
        site.add(path, "<html><body><p>Some text.</p></body></html>", Content_Type="text/html")
    walk = sitescout.walk(site.url + "/", source="all", crawl=True)
    entries = await collect(walk)
    assert {(e.url.removeprefix(site.url), e.sources) for e in entries} == {
        ("/", ("bfs",)),
        ("/a", ("bfs", "llms.txt")),
        ("/b", ("bfs",)),
        ("/c", ("llms.txt",)),
    }


# --- base path, warning, budgets -----------------------------------------------------------------


async def test_base_path_scopes_llms_links_and_the_narrow_prefix_warning_names_llms(
    site: Site,
) -> None:
    llms(site, "/llms.txt", "".join(f"- [Page {i}](/guides/p{i})\n" for i in range(412)))
    walk = sitescout.walk(site.url + "/docs/v2/", source="llms")
    entries = await collect(walk)
    assert entries == []
    assert walk.report.warnings == [
        'llms.txt path prefix "/docs/v2" matched 0 of 412 examined same-site URLs '
        "(less than 1%); consider a broader base URL."
    ]
    assert site.hits["/docs/v2/sitemap.xml"] == 0  # llms only: no sitemap probe


async def test_base_path_keeps_links_under_it_without_a_warning(site: Site) -> None:
    links = [f"/docs/v2/p{i}" for i in range(3)] + [f"/blog/p{i}" for i in range(97)]
    llms(site, "/llms.txt", "".join(f"[x]({p})\n" for p in links))
    walk = sitescout.walk(site.url + "/docs/v2/", source="llms")
    entries = await collect(walk)
    assert urls_of(entries, site) == links[:3]
    assert walk.report.warnings == []
    assert walk.report.llms is not None and walk.report.llms.in_scope == 3


async def test_max_fetches_counts_llms_fetches(site: Site) -> None:
    llms(site, "/docs/llms.txt", "[A](/a)\n")
    walk = sitescout.walk(site.url + "/", source="llms", max_fetches=1)
    entries = await collect(walk)
    assert entries == []
    assert [p for _t, p, _ua in site.log] == ["/llms.txt"]
    assert walk.report.budgets_hit == ["max_fetches"]
    assert walk.report.partial


async def test_max_fetches_shared_by_sitemaps_and_llms_in_all(site: Site) -> None:
    docs_llms(site)  # llms.txt + one aggregate = 2 fetches
    site.add("/sitemap.xml", urlset([site.url + "/a"]))
    walk = sitescout.walk(site.url + "/", source="all", max_fetches=2)
    await collect(walk)
    assert site.hits["/llms.txt"] == 1 and site.hits["/llms-full.txt"] == 1
    assert site.hits["/sitemap.xml"] == 0
    assert "max_fetches" in walk.report.budgets_hit


async def test_max_bytes_counts_llms_bytes(site: Site) -> None:
    docs_llms(site)
    walk = sitescout.walk(site.url + "/", source="llms", max_bytes=10)
    entries = await collect(walk)
    assert len(entries) == 3  # the first file is kept whole; the aggregate is not fetched
    assert site.hits["/llms-full.txt"] == 0
    assert walk.report.budgets_hit == ["max_bytes"]


async def test_deadline_bounds_a_slow_llms_txt(site: Site, release: threading.Event) -> None:
    def slow(h: RequestHandler) -> Reply | None:
        if release.wait(5):
            h.reset()
            return None
        return Reply(200, b"[A](/a)", {"Content-Type": TEXT})

    site.handle("/llms.txt", slow)
    walk = sitescout.walk(site.url + "/", source="llms", deadline=1, retries=0)
    start = time.perf_counter()
    entries = await collect(walk)
    assert time.perf_counter() - start < 4
    assert entries == []
    assert "deadline" in walk.report.budgets_hit


# --- command line ---------------------------------------------------------------------------------


def run_urls(*args: str) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
    result = CliRunner().invoke(app, ["urls", *args, "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return result.exit_code, lines, json.loads(result.stderr)


def test_cli_urls_source_llms_lines_and_summary(site: Site) -> None:
    docs_llms(site)
    code, lines, summary = run_urls(site.url + "/", "--source", "llms")
    assert code == 0
    assert lines[0] == {
        "url": site.url + "/docs/guide/",
        "lastmod": None,
        "priority": None,
        "changefreq": None,
        "hreflang": None,
        "alternate_of": None,
        "sitemap": site.url + "/llms.txt",
        "depth": 1,
        "source": "llms.txt",
        "title": "Guide",
        "md_url": site.url + "/docs/guide/index.md",
    }
    assert "md_url" not in lines[2]  # /changelog has no markdown copy
    assert summary["source"] == "llms.txt"
    assert summary["llms"]["links"] == 4
    assert summary["llms"]["omitted"] == [site.url + "/docs/llms-more.txt"]


def test_cli_urls_source_all_adds_sources_and_plain_walks_keep_their_shape(site: Site) -> None:
    docs_llms(site)
    site.add("/sitemap.xml", urlset([site.url + "/docs/api", site.url + "/x"]))
    _code, merged, _summary = run_urls(site.url + "/", "--source", "all")
    assert [(line["url"].removeprefix(site.url), line["sources"]) for line in merged] == [
        ("/docs/api", ["sitemap", "llms.txt"]),
        ("/x", ["sitemap"]),
        ("/docs/guide/", ["llms.txt"]),
        ("/changelog", ["llms.txt"]),
        ("/docs/tutorial", ["llms.txt"]),
    ]
    assert merged[0]["md_url"] == site.url + "/docs/api.md"
    _code, plain, summary = run_urls(site.url + "/")
    assert list(plain[0]) == [
        "url",
        "lastmod",
        "priority",
        "changefreq",
        "hreflang",
        "alternate_of",
        "sitemap",
        "depth",
    ]
    assert "llms" not in summary


def test_cli_csv_and_parquet_carry_md_url_and_sources(site: Site, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    docs_llms(site)
    site.add("/sitemap.xml", urlset([site.url + "/docs/api", site.url + "/x"]))
    out = tmp_path / "inventory.parquet"
    args = ["urls", site.url + "/", "--source", "all"]
    assert CliRunner().invoke(app, [*args, "--format", "parquet", "-o", str(out)]).exit_code == 0
    rows = {r["url"].removeprefix(site.url): r for r in pq.read_table(out).to_pylist()}
    assert rows["/docs/api"]["sources"] == ["sitemap", "llms.txt"]
    assert rows["/docs/api"]["md_url"] == site.url + "/docs/api.md"
    assert rows["/x"]["sources"] == ["sitemap"] and rows["/x"]["md_url"] is None
    result = CliRunner().invoke(app, [*args, "--format", "csv"])
    assert result.exit_code == 0
    table = list(csv.DictReader(io.StringIO(result.stdout)))
    by_url = {r["url"].removeprefix(site.url): r for r in table}
    assert by_url["/docs/api"]["sources"] == "sitemap;llms.txt"
    assert by_url["/docs/api"]["md_url"] == site.url + "/docs/api.md"
    assert by_url["/changelog"]["sources"] == "llms.txt"


def test_cli_urls_llms_txt_flag_and_bad_source(site: Site) -> None:
    llms(site, "/ai/index.txt", "[A](/a)\n")
    code, lines, _summary = run_urls(
        site.url + "/", "--source", "llms", "--llms-txt", site.url + "/ai/index.txt"
    )
    assert code == 0 and [line["url"] for line in lines] == [site.url + "/a"]
    result = CliRunner().invoke(app, ["urls", site.url + "/", "--source", "rss"])
    assert result.exit_code == 2
    result = CliRunner().invoke(app, ["urls", site.url + "/", "--llms-txt", "ftp://x/llms.txt"])
    assert result.exit_code == 2
    assert "llms_txt must be an http(s) URL" in result.stderr


def test_cli_urls_source_llms_without_one_exits_3(site: Site) -> None:
    code, lines, summary = run_urls(site.url + "/", "--source", "llms")
    assert code == 3 and lines == []
    assert summary["llms"]["url"] is None


def test_cli_scope_reports_llms_txt(site: Site) -> None:
    docs_llms(site)
    site.add("/sitemap.xml", urlset([site.url + "/a"]))
    result = CliRunner().invoke(app, ["scope", site.url + "/", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["llms_txt"] == site.url + "/llms.txt"
    assert data["llms_links"] == 3  # the file's own page links; its aggregate is not read
    assert data["source"] == "sitemap.xml"
    assert site.hits["/llms-full.txt"] == 0
    table = CliRunner().invoke(app, ["scope", site.url + "/"], env={"COLUMNS": "200"})
    assert f"llms.txt            {site.url}/llms.txt (3 page links)" in table.stdout


def test_cli_scope_without_sitemap_counts_llms_links(site: Site) -> None:
    llms(site, "/llms.txt", "[A](/a) [B](/b) [C](/c)\n")
    result = CliRunner().invoke(app, ["scope", site.url + "/", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["source"] == "llms.txt"
    assert data["url_estimate_range"] == [3, 3]


def test_cli_scope_without_either_says_none(site: Site) -> None:
    result = CliRunner().invoke(app, ["scope", site.url + "/"], env={"COLUMNS": "200"})
    assert result.exit_code == 3
    assert "llms.txt            none" in result.stdout


def _page(title: str) -> str:
    return f"<html><head><title>{title}</title></head><body><h1>{title}</h1></body></html>"


def test_cli_extract_uses_llms_txt_and_logs_it(site: Site, tmp_path: Path) -> None:
    llms(site, "/llms.txt", "[Home](/index.md) [About](/about.md) [Pricing](/pricing)\n")
    for path, title in (("/", "Home"), ("/about", "About"), ("/pricing", "Pricing")):
        site.add(path, _page(title), Content_Type="text/html")
    proc = subprocess.run(
        [sys.executable, "-m", "sitescout", "extract", site.url + "/", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Discovered 3 pages on" in proc.stdout and "(llms.txt)" in proc.stdout
    log = json.loads((tmp_path / CRAWL_LOG).read_text())
    jsonschema.validate(log, schema("crawl-log"))
    discovery = log["runs"][0]["discovery"]
    assert discovery["source"] == "llms.txt"
    assert discovery["sourceUrl"] == site.url + "/llms.txt"
    assert discovery["llmsTxt"]["links"] == 3
    assert discovery["llmsTxt"]["md_links"] == 2
    assert site.hits["/about"] == 1 and site.hits["/about.md"] == 0


# --- explicit means explicit ----------------------------------------------------------------------


class OtherHost(Site):
    """A `Site` on 127.0.0.2: another site for the walk, still on loopback."""

    HOST = "127.0.0.2"

    def __init__(self) -> None:
        super().__init__()
        self._server.server_close()
        self._server = type(self._server)((self.HOST, 0), RequestHandler)
        self._server.site = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.HOST}:{self._server.server_address[1]}"


@pytest.fixture
def other() -> Iterator[Site]:
    s = OtherHost().start()
    try:
        yield s
    finally:
        s.stop()


async def test_an_explicit_llms_txt_on_another_site_is_read_as_given(
    site: Site, other: Site
) -> None:
    llms(
        other,
        "/ai/llms.txt",
        "[Guide](/guide)\n"  # the file's own site: resolved against it
        f"[Walked site]({site.url}/walked)\n"  # the walk's site counts too
        "[Third](http://127.0.0.3:9/x)\n"  # a third site does not
        "[Full](/llms-full.txt)\n"  # an aggregate of the file's own site
        f"[Not an aggregate here]({site.url}/llms-full.txt)\n",
    )
    llms(other, "/llms-full.txt", "[Deep](/deep.md)\n")
    named = other.url + "/ai/llms.txt"
    walk = sitescout.walk(site.url + "/", source="llms", llms_txt=named)
    entries = await collect(walk)
    report = walk.report

    assert [e.url for e in entries] == [
        other.url + "/guide",
        site.url + "/walked",
        other.url + "/deep",
    ]
    assert entries[2].md_url == other.url + "/deep.md"
    assert report.source == "llms.txt" and report.source_url == named
    assert report.llms is not None
    assert report.llms.rejected == []
    assert report.llms.aggregates == [other.url + "/llms-full.txt"]
    assert report.llms.dropped == {"other-host": 2}
    assert not any("redirected" in note for note in report.notes)
    assert f"llms.txt {named}: 3 page links, 1 aggregate files read" in report.notes
    assert report.warnings == []
    assert other.hits["/ai/llms.txt"] == 1 and other.hits["/llms-full.txt"] == 1
    assert site.total_hits() == 0  # nothing looked for on the walked site


async def test_an_explicit_llms_txt_may_redirect_to_the_walked_site_only(
    site: Site, other: Site
) -> None:
    third = site.url.replace("127.0.0.1", "localhost")  # a site of its own, on loopback
    llms(site, "/moved.txt", "[Page](/page)\n")
    other.routes["/ai/llms.txt"] = Reply(302, b"", {"Location": site.url + "/moved.txt"})
    other.routes["/ai/away.txt"] = Reply(302, b"", {"Location": third + "/moved.txt"})
    walk = sitescout.walk(site.url + "/", source="llms", llms_txt=other.url + "/ai/llms.txt")
    assert [e.url for e in await collect(walk)] == [site.url + "/page"]

    walk = sitescout.walk(site.url + "/", source="llms", llms_txt=other.url + "/ai/away.txt")
    assert await collect(walk) == []
    assert walk.report.llms is not None
    why = f"redirected to another site ({third}/moved.txt)"
    assert walk.report.llms.rejected == [(other.url + "/ai/away.txt", why)]
    assert walk.report.warnings == [f"no llms.txt at {other.url}/ai/away.txt ({why})"]


async def test_an_explicit_llms_txt_left_unread_is_a_warning(site: Site) -> None:
    site.add("/sitemap.xml", urlset([site.url + "/a"]))
    llms(site, "/ai.txt", "[B](/b)\n")
    walk = sitescout.walk(site.url + "/", source="auto", llms_txt=site.url + "/ai.txt")
    entries = await collect(walk)
    assert [e.url for e in entries] == [site.url + "/a"]
    expected = (
        "source auto reads it only when the site has no sitemap, and this walk used "
        "sitemap.xml (source all merges both)"
    )
    assert walk.report.warnings == [f"llms.txt {site.url}/ai.txt was not read: {expected}"]
    assert site.hits["/ai.txt"] == 0


def test_an_explicit_llms_txt_with_source_sitemap_is_refused() -> None:
    with pytest.raises(sitescout.UsageError, match="source 'sitemap' never reads"):
        sitescout.walk("http://127.0.0.1:9/", source="sitemap", llms_txt="http://127.0.0.1:9/a.txt")


async def test_an_llms_txt_without_a_page_of_the_site_says_so(site: Site) -> None:
    llms(site, "/llms.txt", "[Elsewhere](https://example.org/a) [Logo](/logo.png)\n")
    walk = sitescout.walk(site.url + "/", source="llms")
    assert await collect(walk) == []
    assert walk.report.warnings == [
        f"llms.txt {site.url}/llms.txt lists no page of the site "
        "(links dropped: 1 other-host, 1 asset-extension)"
    ]


def test_cli_source_llms_that_finds_none_says_where_it_looked(site: Site) -> None:
    result = CliRunner().invoke(app, ["urls", site.url + "/", "--source", "llms"])
    assert result.exit_code == 3
    assert result.stdout == ""
    assert result.stderr.splitlines()[0] == (
        f"warning: no llms.txt at {site.url}/llms.txt (HTTP 404), "
        f"{site.url}/docs/llms.txt (HTTP 404)"
    )
