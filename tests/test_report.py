"""`sitescout report`: aggregation, inventories (hostile ones too) and the page in a real browser.

Walks talk HTTP to `tests/server.py` on 127.0.0.1; the browser tests open the written file from
disk in the system Chromium with every non-file request aborted.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

import sitescout.cli.report  # noqa: F401  (registers the `report` command)
from sitescout._core import Batch
from sitescout._groups import MIN_GROUP_SIZE, OTHER, ROOT, group_key
from sitescout._junk import junk_filter
from sitescout._models import Alternate, Entry
from sitescout._report import (
    LIST_LIMIT,
    MAX_GROUPS,
    MAX_LOCALES,
    MAX_MONTHS,
    MAX_SITEMAPS,
    MAX_SUBGROUPS,
    ReportBuilder,
    ReportData,
)
from sitescout._report_html import render_report
from sitescout._rules import AUTH_PREFIXES, AUTH_WORDS, JUNK_ROWS, spellings
from sitescout._urls import classify, normalize_url
from sitescout.cli import app
from sitescout.cli.report import read_inventory

from .scaling import assert_linear
from .server import Site, sitemapindex, urlset
from .test_crawl import need_browser

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

CELL = re.compile(r'<g class="cell" data-group="([^"]*)" data-count="(\d+)"')


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(app, list(args))
    # A clean exit is a SystemExit (typer.Exit); anything else is a traceback the user would see.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result


def rows_of(urls: list[str], **extra: Any) -> dict[str, list[Any]]:
    n = len(urls)
    cols: dict[str, list[Any]] = {
        "urls": urls,
        "lastmods": [None] * n,
        "sitemaps": [None] * n,
        "hreflangs": [None] * n,
        "alternate_ofs": [None] * n,
    }
    cols.update(extra)
    return cols


def cells(page: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in CELL.finditer(page)}


# -- aggregation --------------------------------------------------------------------------------


TRICKY = [
    "https://ex.com/",
    "https://ex.com",
    "https://ex.com/?q=1",
    "https://ex.com/#top",
    "https://ex.com/a",
    "https://ex.com/a/",
    "https://ex.com/a/b",
    "https://ex.com//a//b/c",
    "https://ex.com/a?x=/y/z",
    "https://ex.com/a#/y/z",
    "HTTPS://EX.COM/A/B",
    "https://ex.com:8080/a/b",
    "https://ex.com:bad/a/b",
    "https://[::1/a/b",
    "http:/ex.com/a/b",
    "http:ex.com/a/b",
    "ftp://ex.com/a/b",
    "mailto:someone@ex.com",
    "/relative/path",
    "",
    " https://ex.com/a/b ",
    "https://ex.com/a\tb/c",
    "https://ex.com/%2Fa/b",
    "https://ex.com/ä/ö",
    "https://user@ex.com/a/b",
    "https://ex.com?x/a/b",
]


def test_group_counts_match_group_key_on_tricky_and_random_urls() -> None:
    rng = random.Random(13)
    alphabet = ["/", "//", "a", "b", "?", "#", "%2F", " ", ":", "@", ".", "x1", "\t"]
    randoms = [
        rng.choice(["https://ex.com", "http://h:1", "https://", "x://y"])
        + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        for _ in range(2000)
    ]
    for batch in (TRICKY, randoms, [u for u in randoms if "\t" not in u and " " not in u]):
        builder = ReportBuilder()
        builder.add_rows(**rows_of(batch))
        expected1 = Counter(group_key(u, 1) for u in batch)
        got1 = Counter(dict(builder.groups))
        assert got1 == Counter({k: n for k, n in expected1.items() if k is not None})
        assert builder.group_other == expected1[None]
        assert_subgroups(builder, batch)


def assert_subgroups(builder: ReportBuilder, urls: list[str]) -> None:
    expected: dict[str | None, Counter[str | None]] = {}
    for url in urls:
        expected.setdefault(group_key(url, 1), Counter())[group_key(url, 2)] += 1
    for k1 in builder.groups:
        if k1 != ROOT:
            assert Counter(dict(builder.subgroups[k1].children)) == expected[k1]


def test_walk_batches_group_like_group_key_whatever_their_origins() -> None:
    rng = random.Random(5)
    origins = ["https://ex.com", "https://ex.com:8443", "https://ex.com.evil.org", "http://ex.com"]
    tails = ["", "/", "?q=1", "/a", "/a/", "/a/b", "/a/b/c?x=/y", "/A/%2Fb", "/a#/z", "/ä/ö"]
    for _ in range(10):
        urls = [normalize_url(rng.choice(origins) + rng.choice(tails)) for _ in range(500)]
        builder = ReportBuilder(site="https://ex.com/")
        builder.add_entries([Entry(u) for u in urls])
        expected1 = Counter(group_key(u, 1) for u in urls)
        assert Counter(dict(builder.groups)) == expected1
        assert_subgroups(builder, urls)


def per_url(builder: ReportBuilder, urls: list[str]) -> None:
    """One batch of URLs counted a URL at a time by the rules themselves: `group_key` of each,
    the junk filter on the whole batch, `classify` of each. The reference the core's candidates
    (`report_urls`) are held to."""
    for url in urls:
        k1 = group_key(url, 1)
        if k1 is None or k1 == ROOT:
            builder._count(k1, None, 1)
        else:
            builder._count(k1, group_key(url, 2) or k1, 1)
    builder._find_junk(urls)
    builder._find_auth(urls)


def per_row(builder: ReportBuilder, entries: list[Entry]) -> None:
    """One batch of entries counted a row at a time, as the report did before the core counted
    batches: the reference `add_batch` is held to."""
    builder.declared_alternates = True
    alternates = [e for e in entries if e.alternate_of is not None]
    per_url(builder, [e.url for e in entries])
    builder.urls += len(entries) - len(alternates)
    builder.alternates += len(alternates)
    builder._add_lastmods([e.lastmod for e in entries])
    builder._add_sitemaps([e.sitemap for e in entries])
    for e in alternates:
        builder._alternate_row(e.hreflang, e.alternate_of)
    for e in entries:
        if e.alternates and e.alternate_of is None:
            group = group_key(e.url, 1) or OTHER
            bump(builder.group_hreflang, group, MAX_GROUPS)
            for raw in {a.hreflang for a in e.alternates}:
                locale = raw.strip().lower() or "(none)"
                bump(builder.locale_pages, locale, MAX_LOCALES)
                builder._group_locale(group, locale)


def bump(counter: Counter[str], key: str, cap: int) -> None:
    counter[key if key in counter or len(counter) < cap else OTHER] += 1


@pytest.mark.parametrize("seed", [7, 8, 9])
def test_a_native_batch_aggregates_as_its_entries_do(seed: int) -> None:
    """`sitescout report` feeds the walk's native batches (`add_batch`: the core counts lastmods,
    sitemaps and hreflang values per batch); the report is the one the rules give row by row
    (`per_row`): pages, alternates, declared hreflang links (one hreflang twice on a page, pages
    in no group), lastmods and several sitemaps in one batch."""
    rng = random.Random(seed)
    paths = ["", "/", "/blog/a", "/blog/b/", "/docs/api/x", "/test/", "/login", "/a/-2", "/ä/ö"]
    lastmods = [None, "", "2024-01-05", "2023-12", "not a date", "2024-01-05T10:00:00+02:00"]
    sitemaps = ["https://ex.com/a.xml", "https://ex.com/b.xml", "https://ex.com/ü.xml"]
    hreflangs = ["de", "FR ", "x-default", "", "DE", "İ"]
    batches = []
    for _ in range(20):
        entries = []
        for _ in range(rng.randrange(60)):
            origin = "ftp://ex.com" if rng.random() < 0.05 else "https://ex.com"
            url = origin + rng.choice(paths) + rng.choice(["", "?p=1"])
            sitemap = rng.choice(sitemaps)
            if rng.random() < 0.3:
                links = tuple(
                    Alternate(
                        hreflang=h, url=f"https://ex.com/{h.strip().lower()}{rng.choice(paths)}"
                    )
                    for h in rng.choices(hreflangs, k=rng.randrange(1, 5))
                )
                entries.append(Entry(url, rng.choice(lastmods), alternates=links, sitemap=sitemap))
                entries += [
                    Entry(a.url, sitemap=sitemap, hreflang=a.hreflang, alternate_of=url)
                    for a in links
                ]
            else:
                entries.append(Entry(url, rng.choice(lastmods), sitemap=sitemap))
        batches.append(Batch.from_entries(entries))
    by_entries, by_batch = (
        ReportBuilder(site="https://ex.com/"),
        ReportBuilder(site="https://ex.com/"),
    )
    for batch in batches:
        per_row(by_entries, batch.entries())
        by_batch.add_batch(batch)
    assert by_batch.urls + by_batch.alternates == sum(len(b) for b in batches)
    assert by_batch.alternates > 0 and by_batch.locale_pages and len(by_batch.sitemaps) == 3
    assert by_batch.no_lastmod > 0 and by_batch.bad_lastmod > 0 and OTHER in by_batch.group_hreflang
    assert ReportData.of(by_batch) == ReportData.of(by_entries)
    for name in ("locale_pages", "locale_rows", "group_hreflang", "group_locales", "months"):
        assert getattr(by_batch, name) == getattr(by_entries, name), name


def test_a_full_depth_2_table_counts_like_one_url_at_a_time() -> None:
    """Once MAX_SUBGROUPS groups are held, held groups still grow and new ones go to their
    parent's `other`: as counting every URL one at a time."""
    rng = random.Random(21)
    origins = ["https://ex.com", "https://ex.com:8443", "http://other.org"]
    tails = ["", "/", "?q=1", "/a", "/a/", "/a/b", "/a/b/c?x=/y", "/A/%2Fb", "/a#/z", "/ä/ö"]
    doubled = ["//a/b", "/a//b", "//s1/sub3"]
    fill = [f"https://ex.com/s{i % 50}/sub{i // 50}" for i in range(MAX_SUBGROUPS + 5)]
    later = [
        [
            normalize_url(rng.choice(origins) + rng.choice(tails + doubled))
            if rng.random() < 0.2
            else f"https://ex.com/s{rng.randrange(3)}/sub{rng.randrange(600)}"
            for _ in range(400)
        ]
        for _ in range(30)
    ]
    fast = ReportBuilder(site="https://ex.com/")
    slow = ReportBuilder(site="https://ex.com/")
    for start in range(0, len(fill), 1000):
        fast.add_entries([Entry(u) for u in fill[start : start + 1000]])
        per_url(slow, fill[start : start + 1000])
    for batch in later:
        fast.add_entries([Entry(u) for u in batch])
        per_url(slow, batch)
    assert any(s.other for s in fast.subgroups.values())
    assert fast.groups == slow.groups and fast.group_other == slow.group_other
    assert {k: (dict(s.children), s.other) for k, s in fast.subgroups.items()} == {
        k: (dict(s.children), s.other) for k, s in slow.subgroups.items()
    }
    assert sum(fast.groups.values()) + fast.group_other == fast.urls


def test_groups_table_merges_small_groups_into_other_like_sitescout_groups() -> None:
    urls = [f"https://ex.com/big/{i}" for i in range(10)]
    urls += ["https://ex.com/tiny/1", "https://ex.com/tiny/2", "mailto:x@ex.com"]
    builder = ReportBuilder()
    builder.add_rows(**rows_of(urls))
    assert builder.group_table() == [("/big/*", 10), (OTHER, 3)]
    assert MIN_GROUP_SIZE == 3


def test_every_table_is_capped_and_counts_still_add_up() -> None:
    n = max(MAX_GROUPS, MAX_SITEMAPS) + 500
    urls = [f"https://ex.com/g{i}/s{i}" for i in range(n)]
    extra = [f"https://ex.com/g0/sub{i}" for i in range(MAX_SUBGROUPS + 10)]
    months = [f"{1000 + i // 12:04d}-{i % 12 + 1:02d}-01" for i in range(MAX_MONTHS + 300)]
    builder = ReportBuilder()
    for start in range(0, n, 1000):
        chunk = urls[start : start + 1000]
        builder.add_rows(
            **rows_of(
                chunk,
                sitemaps=[f"https://ex.com/sm{i}.xml" for i in range(start, start + len(chunk))],
            )
        )
    builder.add_rows(**rows_of(extra))
    all_months = [f"https://ex.com/m/{i}" for i in range(len(months))]
    builder.add_rows(**rows_of(all_months, lastmods=months))
    assert len(builder.groups) == MAX_GROUPS
    assert sum(builder.groups.values()) + builder.group_other == builder.urls
    assert builder.urls == n + len(extra) + len(months)
    kept_children = sum(len(s.children) for s in builder.subgroups.values())
    assert kept_children == MAX_SUBGROUPS
    g0 = builder.subgroups["/g0/*"]
    assert sum(g0.children.values()) + g0.other == builder.groups["/g0/*"]
    assert len(builder.months) == MAX_MONTHS
    assert sum(builder.months.values()) + builder.month_other == len(months)
    locales = [f"x-{i}" for i in range(MAX_LOCALES + 100)]
    alternates = [f"https://ex.com/l{i}/page" for i in range(len(locales))]
    builder.add_rows(**rows_of(alternates, hreflangs=locales, alternate_ofs=alternates))
    assert len(builder.locale_rows) == MAX_LOCALES + 1  # and `other`
    assert sum(builder.locale_rows.values()) == builder.alternates == len(locales)
    assert len(builder.group_hreflang) <= MAX_GROUPS + 1
    assert sum(builder.group_hreflang.values()) == len(locales)
    assert len(builder.sitemaps) == MAX_SITEMAPS
    assert sum(builder.sitemaps.values()) + builder.sitemap_other == builder.urls + len(locales)


def test_lastmod_months_missing_and_unparseable() -> None:
    lastmods = ["2024-05-01", "2024-05-30T10:00:00Z", "2024-06", "2024-13-01", "soon", None, ""]
    urls = [f"https://ex.com/p/{i}" for i in range(len(lastmods))]
    builder = ReportBuilder()
    builder.add_rows(**rows_of(urls, lastmods=lastmods))
    assert builder.months == Counter({"2024-05": 2, "2024-06": 1})
    assert builder.no_lastmod == 2
    assert builder.bad_lastmod == 2


def test_junk_and_sign_in_lists_keep_50_with_exact_counts() -> None:
    junk = [f"https://ex.com/test-{i}/" for i in range(120)]
    auth = [f"https://ex.com/account/{i}" for i in range(80)]
    plain = [f"https://ex.com/docs/{i}" for i in range(500)]
    urls = junk + auth + plain
    builder = ReportBuilder(site="https://ex.com/")
    for start in range(0, len(urls), 1000):
        builder.add_rows(**rows_of(urls[start : start + 1000]))
    assert builder.junk_count == len(junk_filter(urls).junk) == 120
    assert len(builder.junk) == LIST_LIMIT
    assert builder.auth_count == 80 and len(builder.auth) == LIST_LIMIT
    assert builder.auth_groups == Counter({"/account/*": 80})


def rule_words() -> list[str]:
    """Path segments from the rules' tables: each junk row's example and near miss, each sign-in
    spelling (with a prefix, a plural, and as part of a longer word), some in upper case."""
    junk = {
        segment
        for row in JUNK_ROWS
        for path in (*row.example, *row.near_miss)
        for segment in path.split("/")
        if segment
    }
    auth = {
        f"{prefix}{word}{tail}"
        for word in spellings(AUTH_WORDS)
        for prefix, tail in (
            ("", ""),
            (AUTH_PREFIXES[0], ""),
            (AUTH_PREFIXES[-1], "s"),
            ("", "ing"),
        )
    }
    words = sorted(junk | auth)
    return words + [word.upper() for word in words[::4]]


def test_junk_found_per_batch_equals_the_junk_filter_on_that_batch() -> None:
    rng = random.Random(7)
    words = [*rule_words(), "about", "page-2", "2024", "docs", "v2", "guide-3", "guide"]
    for _ in range(20):
        batch = [
            "https://ex.com/"
            + "/".join(rng.choice(words) for _ in range(rng.randint(1, 3)))
            + rng.choice(["", "/", "?x=1"])
            for _ in range(rng.randint(1, 300))
        ]
        builder = ReportBuilder()
        builder.add_rows(**rows_of(batch))
        expected = junk_filter(batch).junk
        assert builder.junk_count == len(expected)
        site = "https://ex.com/"
        auth = [u for u in batch if classify(u, site).reason == "requires-auth"]
        builder = ReportBuilder(site=site)
        builder.add_entries([Entry(normalize_url(u)) for u in batch])
        assert (
            builder.auth_count
            == len([u for u in batch if classify(normalize_url(u), site).reason == "requires-auth"])
            == len(auth)
        )
        builder = ReportBuilder()
        builder.add_rows(**rows_of(batch))
        assert Counter(builder.junk_patterns) == Counter(p for _, p in expected)
        assert builder.junk == expected[:LIST_LIMIT]  # the first 50, in input order, however many


def test_page_size_is_bounded_by_the_caps_not_the_urls() -> None:
    # Saturate every table with long values: the worst page the caps allow.
    builder = ReportBuilder(site="https://ex.com/")
    pad = "x" * 400
    for start in range(0, MAX_GROUPS * 3, 1000):
        urls = [f"https://ex.com/test-{i}{pad}/account/{i}" for i in range(start, start + 1000)]
        urls += [f"https://ex.com/g{i}/{i}" for i in range(start, start + 1000)]
        builder.add_rows(
            **rows_of(
                urls,
                lastmods=[f"{1900 + i // 12 % 200:04d}-{i % 12 + 1:02d}" for i in range(2000)],
                sitemaps=[f"https://ex.com/{pad}/{start + i}.xml" for i in range(2000)],
                hreflangs=[f"l{i}" if i % 2 else None for i in range(2000)],
                alternate_ofs=[f"https://ex.com/g{i}/" if i % 2 else None for i in range(2000)],
            )
        )
    page = render_report(builder.data(), title=pad)
    assert len(page.encode()) < 2 * 1024 * 1024
    assert builder.junk_count > LIST_LIMIT and builder.auth_count > LIST_LIMIT


# -- the command over a loopback site -------------------------------------------------------------


def hostile_site(site: Site) -> None:
    """Two urlsets under an index (one missing), hreflang, lastmods, junk, sign-in and bad locs."""
    u = site.url
    site.add("/robots.txt", "Sitemap: /index.xml\n", Content_Type="text/plain")
    site.add("/index.xml", sitemapindex([f"{u}/docs.xml", f"{u}/blog.xml", f"{u}/gone.xml"]))
    alt = '<xhtml:link rel="alternate" hreflang="de" href="{u}/de/docs/{i}"/>'
    docs = "".join(
        f"<url><loc>{u}/docs/guide/{i}</loc><lastmod>2024-0{i % 3 + 1}-02</lastmod>"
        + alt.format(u=u, i=i)
        + "</url>"
        for i in range(12)
    )
    site.add(
        "/docs.xml",
        urlset([]).replace("</urlset>", docs + "</urlset>"),
    )
    blog = [f"{u}/blog/post-{i}" for i in range(20)] + [
        f"{u}/test/",
        f"{u}/sample-page/",
        f"{u}/account/settings",
        f"{u}/login",
        f"{u}/",
    ]
    site.add(
        "/blog.xml",
        urlset(blog).replace("</urlset>", "<url><loc>javascript:alert(1)</loc></url></urlset>"),
    )


def test_report_of_a_walk_over_loopback(site: Site, tmp_path: Path) -> None:
    hostile_site(site)
    out = tmp_path / "report.html"
    result = invoke("report", site.url + "/", "-o", str(out))
    assert result.exit_code == 1, result.output  # gone.xml failed: a partial result
    page = out.read_text()
    assert cells(page) == {"/blog/*": 20, "/docs/*": 12, "/de/*": 12, OTHER: 5}
    assert site.hits["/docs.xml"] == 1 and site.hits["/gone.xml"] >= 1
    assert "gone.xml" in page and "HTTPError" in page
    assert "/test/" in page and "/sample-page/" in page  # junk
    assert "/account/settings" in page and f"{site.url}/login" in page  # sign-in
    assert "javascript:alert(1)" in page  # malformed, listed escaped as text
    assert "<td>de</td><td>12</td>" in page  # 12 pages declare a German alternate
    assert "2024-01" in page and "report:" in result.stderr


def test_report_from_saved_inventories_matches_the_walk(site: Site, tmp_path: Path) -> None:
    hostile_site(site)
    walked = tmp_path / "walk.html"
    invoke("report", site.url + "/", "-o", str(walked), "-q")
    expected = cells(walked.read_text())
    for fmt in ("jsonl", "csv", "parquet"):
        inventory = tmp_path / f"inv.{fmt}"
        saved = invoke("urls", site.url + "/", "--format", fmt, "-o", str(inventory), "-q")
        assert saved.exit_code == 1 and inventory.stat().st_size > 0
        out = tmp_path / f"from-{fmt}.html"
        result = invoke("report", str(inventory), "-o", str(out))
        assert result.exit_code == 0, result.output
        page = out.read_text()
        assert cells(page) == expected, fmt
        assert "not recorded in an inventory" in page


def test_budgets_hit_and_partial_are_in_the_summary(site: Site, tmp_path: Path) -> None:
    hostile_site(site)
    out = tmp_path / "r.html"
    result = invoke("report", site.url + "/", "-o", str(out), "--max-urls", "5", "-q")
    assert result.exit_code == 1
    page = out.read_text()
    budgets = re.search(r"<th>budgets hit</th><td>([^<]*)</td>", page)
    partial = re.search(r"<th>partial</th><td>([^<]*)</td>", page)
    assert budgets is not None and budgets.group(1) not in ("", "none")
    assert partial is not None and partial.group(1) != "no"
    assert sum(cells(page).values()) == 5


def test_report_to_stdout(site: Site) -> None:
    hostile_site(site)
    result = invoke("report", site.url + "/", "-o", "-", "-q")
    assert result.stdout.startswith("<!DOCTYPE html>") and cells(result.stdout)


# -- sources, --json and -q ----------------------------------------------------------------------

LLMS_TXT = (
    "# Docs\n\n- [Guide](/docs/guide/index.md)\n- [API](/docs/api.md)\n- [CLI](/docs/cli.md)\n"
    "- [FAQ](/help/faq)\n- [Contact](/help/contact)\n- [Billing](/help/billing)\n"
)


def sitemap_and_llms_txt(site: Site, llms_path: str = "/llms.txt") -> None:
    """A sitemap of blog posts beside an llms.txt of docs and help pages."""
    site.add("/robots.txt", "Sitemap: /sitemap.xml\n", Content_Type="text/plain")
    site.add("/sitemap.xml", urlset([f"{site.url}/blog/post-{i}" for i in range(5)]))
    site.add(llms_path, LLMS_TXT, Content_Type="text/plain; charset=utf-8")


def test_report_source_llms_reads_the_llms_txt_and_json_is_the_summary(
    site: Site, tmp_path: Path
) -> None:
    sitemap_and_llms_txt(site)
    out = tmp_path / "r.html"
    result = invoke("report", site.url + "/", "--source", "llms", "-o", str(out), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stderr)  # the whole of stderr is one JSON document
    assert summary["source"] == "llms.txt" and summary["source_url"] == site.url + "/llms.txt"
    assert summary["urls"] == 6 and summary["partial"] is False
    assert summary["llms"]["links"] == 6 and summary["llms"]["md_links"] == 3
    assert result.stdout == ""
    assert cells(out.read_text()) == {"/docs/*": 3, "/help/*": 3}
    assert site.hits["/llms.txt"] == 1
    assert site.hits["/robots.txt"] == 0 and site.hits["/sitemap.xml"] == 0


def test_report_llms_txt_names_the_file(site: Site, tmp_path: Path) -> None:
    sitemap_and_llms_txt(site, "/files/pages.txt")
    out = tmp_path / "r.html"
    llms_txt = site.url + "/files/pages.txt"
    result = invoke(
        "report", site.url + "/", "--source", "all", "--llms-txt", llms_txt, "-o", str(out)
    )
    assert result.exit_code == 0, result.output
    assert cells(out.read_text()) == {"/blog/*": 5, "/docs/*": 3, "/help/*": 3}
    assert site.hits["/llms.txt"] == 0 and site.hits["/files/pages.txt"] == 1
    assert "report: 11 URLs in 3 groups" in result.stderr


def test_report_json_on_stderr_while_stdout_carries_the_page(site: Site) -> None:
    sitemap_and_llms_txt(site)
    result = invoke("report", site.url + "/", "-o", "-", "--json")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("<!DOCTYPE html>") and cells(result.stdout) == {"/blog/*": 5}
    summary = json.loads(result.stderr)
    assert summary["source"] == "robots.txt" and summary["urls"] == 5
    assert summary["documents"] == 1 and summary["errors"] == []


def test_report_json_of_an_inventory_says_what_was_read(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "inv.jsonl", [*GOOD, '{"url": 5}', "{cut"])
    out = tmp_path / "r.html"
    result = invoke("report", str(path), "-o", str(out), "--json")
    assert result.exit_code == 1  # rows were skipped
    summary = json.loads(result.stderr)
    assert summary["inventory"] == str(path) and summary["format"] == "JSON lines"
    assert summary["rows"] == 5 and summary["skipped"] == 2
    assert set(summary["skipped_reasons"]) == {"no url", "not valid JSON (a cut or damaged line)"}
    assert cells(out.read_text()) == {"/docs/*": 5}


def test_report_of_an_inventory_refuses_a_state_directory(tmp_path: Path) -> None:
    """Nothing walks, so a state given with an inventory would be silently left as it was."""
    path = write_jsonl(tmp_path / "inv.jsonl", GOOD)
    out = tmp_path / "r.html"
    result = invoke("report", str(path), "-o", str(out), "--state", str(tmp_path / "state"))
    assert result.exit_code == 2
    assert "--state keeps a walk's documents" in result.stderr
    assert not out.exists() and not (tmp_path / "state").exists()


def test_report_quiet_leaves_stderr_empty(site: Site, tmp_path: Path) -> None:
    sitemap_and_llms_txt(site)
    result = invoke("report", site.url + "/", "-o", str(tmp_path / "r.html"), "-q")
    assert result.exit_code == 0 and result.stderr == ""
    path = write_jsonl(tmp_path / "inv.jsonl", [*GOOD, '{"url": 5}'])
    result = invoke("report", str(path), "-o", str(tmp_path / "i.html"), "-q")
    assert result.exit_code == 1 and result.stderr == ""  # the exit code says rows were skipped


# -- hostile inventory files ----------------------------------------------------------------------


def write_jsonl(path: Path, lines: list[str | bytes]) -> Path:
    with path.open("wb") as f:
        for line in lines:
            f.write(line if isinstance(line, bytes) else line.encode())
            f.write(b"\n")
    return path


GOOD = [json.dumps({"url": f"https://ex.com/docs/{i}", "lastmod": "2024-01-01"}) for i in range(5)]


def test_hostile_jsonl_rows_are_skipped_and_counted(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "inv.jsonl",
        [
            *GOOD,
            '{"url": "https://ex.com/cut',  # truncated
            '{"url": 5}',
            '{"url": "https://ex.com/x", "lastmod": 2024}',
            '["https://ex.com/list"]',
            "[" * 100_000,  # nesting past the recursion limit
            b"\xff\xfe\x00garbage",
            json.dumps({"url": "https://ex.com/" + "a" * (2 << 20)}),  # a 2 MiB line
            "",
            json.dumps({"url": "https://ex.com/docs/last", "unknown": {"x": [1]}}),
        ],
    )
    out = tmp_path / "r.html"
    result = invoke("report", str(path), "-o", str(out))
    assert result.exit_code == 1
    assert "7 rows of" in result.stderr
    assert "line longer than 1 MiB" in result.stderr
    assert cells(out.read_text()) == {"/docs/*": 6}


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.jsonl", b"", "holds no inventory rows"),
        ("junk.jsonl", b"\x00\x01\x02 not json\n{broken\n", "holds no inventory rows (2 "),
        ("missing.jsonl", None, "no such inventory file"),
        ("bad.parquet", b"PAR1 this is not parquet PAR1", "cannot read"),
        ("nourl.csv", b"lastmod,sitemap\n2024-01-01,x\n", "no url column"),
        ("binary.csv", b"url\nhttps://ex.com/\xff\xfe\n", "not UTF-8"),
        ("huge.csv", b"url\n" + b"x" * 300_000 + b"\n", "as CSV at line"),
    ],
)
def test_files_that_are_not_inventories_exit_2_with_one_line(
    tmp_path: Path, name: str, content: bytes | None, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    out = tmp_path / "r.html"
    result = invoke("report", str(path), "-o", str(out))
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not out.exists() and not list(tmp_path.glob(".r.html.*"))


def test_parquet_without_url_column_exits_2_and_missing_columns_are_noted(tmp_path: Path) -> None:
    no_url = tmp_path / "no-url.parquet"
    pq.write_table(pa.table({"lastmod": ["2024-01-01"]}), no_url)
    result = invoke("report", str(no_url), "-o", str(tmp_path / "a.html"))
    assert result.exit_code == 2 and "no text url column" in result.stderr
    numbers = tmp_path / "numbers.parquet"
    pq.write_table(pa.table({"url": [1, 2]}), numbers)
    assert invoke("report", str(numbers), "-o", str(tmp_path / "b.html")).exit_code == 2
    slim = tmp_path / "slim.parquet"
    urls = [f"https://ex.com/docs/{i}" for i in range(4)] + [None]
    pq.write_table(
        pa.table(
            {
                "url": urls,
                "hreflang": [1, 2, 3, 4, 5],
                "lastmod": pa.array([1_700_000_000_000_000] * 5, pa.timestamp("us")),
            }
        ),
        slim,
    )
    out = tmp_path / "c.html"
    result = invoke("report", str(slim), "-o", str(out))
    assert result.exit_code == 1  # the null URL row is skipped
    assert "sitemap" in result.stderr and "hreflang (int64, not text)" in result.stderr
    page = out.read_text()
    assert cells(page) == {"/docs/*": 4} and "2023-11" in page


@pytest.mark.scaling
def test_aggregating_hostile_rows_scales_linearly() -> None:
    # Every URL a junk copy, sign-in and numbered candidate: the slowest path of each rule.
    def make(n: int) -> list[str]:
        return [f"https://ex.com/account/test{i % 7}/item{i}-2/x{i}-3?q=/{i}" for i in range(n)]

    def aggregate(urls: list[str]) -> ReportBuilder:
        builder = ReportBuilder(site="https://ex.com/")
        for start in range(0, len(urls), 1000):
            builder.add_entries([Entry(u) for u in urls[start : start + 1000]])
            builder.add_rows(**rows_of(urls[start : start + 1000]))
        return builder

    assert aggregate(make(50)).junk_count == 100
    assert_linear(make, aggregate, 1_000)


@pytest.mark.scaling
def test_reading_an_inventory_scales_linearly(tmp_path: Path) -> None:
    def make(n: int) -> Path:
        path = tmp_path / f"inv-{n}.jsonl"
        lines: list[str | bytes] = []
        for i in range(n):
            lines.append(
                json.dumps({"url": f"https://ex.com/s{i % 50}/p{i}", "lastmod": "2024-02-01"})
            )
            if i % 100 == 0:
                lines.append('{"url": "https://ex.com/cut')
        return write_jsonl(path, lines)

    assert_linear(make, lambda path: read_inventory(path, ReportBuilder()), 4_000)


# -- in a real browser ---------------------------------------------------------------------------


class Opened:
    def __init__(self) -> None:
        self.console: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.blocked: list[str] = []
        self.page: Any = None


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    need_browser()
    from playwright.async_api import async_playwright

    from sitescout._render import CHROMIUM_ARGS, chromium_path

    async with async_playwright() as p:
        b = await p.chromium.launch(
            executable_path=chromium_path(), headless=True, args=list(CHROMIUM_ARGS)
        )
        try:
            yield b
        finally:
            await b.close()


async def open_offline(browser: Any, path: Path, screenshot: Path) -> Opened:
    opened = Opened()
    context = await browser.new_context(viewport={"width": 1100, "height": 900})

    async def route(r: Any) -> None:
        if r.request.url.startswith("file://"):
            await r.continue_()
        else:
            opened.blocked.append(r.request.url)
            await r.abort()

    await context.route("**/*", route)
    page = await context.new_page()
    page.on("console", lambda m: opened.console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: opened.errors.append(str(e)))

    async def dialog(d: Any) -> None:
        opened.dialogs.append(d.message)
        await d.dismiss()

    page.on("dialog", dialog)
    await page.goto(path.as_uri(), wait_until="load", timeout=15_000)
    await page.wait_for_timeout(300)  # anything deferred would have run by now
    await page.screenshot(path=str(screenshot), full_page=True)
    opened.page = page
    return opened


@pytest.mark.browser
async def test_the_report_opens_offline_with_one_cell_per_group(
    site: Site, tmp_path: Path, browser: Any
) -> None:
    hostile_site(site)
    out = tmp_path / "report.html"
    # The command runs its own event loop: off this test's loop, in a thread.
    await asyncio.to_thread(invoke, "report", site.url + "/", "-o", str(out), "-q")
    expected = {"/blog/*": 20, "/docs/*": 12, "/de/*": 12, OTHER: 5}
    shot = tmp_path / "report.png"
    opened = await open_offline(browser, out, shot)
    assert opened.blocked == [] and opened.console == [] and opened.errors == []
    page = opened.page
    found = await page.eval_on_selector_all(
        "g.cell",
        "cs => cs.map(c => [c.dataset.group, +c.dataset.count,"
        " c.querySelector('title').textContent])",
    )
    assert {g: n for g, n, _ in found} == expected
    assert len(found) == len(expected)
    for group, count, title in found:
        assert f"{count:,} URLs" in title and title.startswith(group)
        box = await page.locator(f'g.cell[data-group="{group}"] > rect.area').bounding_box()
        assert box is not None and box["width"] > 0 and box["height"] > 0
    # The largest cell covers the most area: area follows the counts.
    areas = {}
    for group in expected:
        box = await page.locator(f'g.cell[data-group="{group}"] > rect.area').bounding_box()
        areas[group] = box["width"] * box["height"]
    assert max(areas, key=lambda g: areas[g]) == "/blog/*"
    await page.click('g.cell[data-group="/blog/*"]')
    assert (await page.get_attribute("#treemap-svg", "viewBox")) != "0 0 1000 560"
    await page.keyboard.press("Escape")
    assert (await page.get_attribute("#treemap-svg", "viewBox")) == "0 0 1000 560"
    assert shot.stat().st_size > 10_000
    assert opened.console == [] and opened.errors == []


XSS = [
    '"><img src=x onerror=alert(1)>',
    "<script>alert(2)</script>",
    "</title><script>alert(3)</script>",
    "javascript:alert(4)",
    "<svg onload=alert(5)>",
    "';alert(6);'",
]


@pytest.mark.browser
async def test_hostile_strings_never_execute(tmp_path: Path, browser: Any) -> None:
    lines: list[str | bytes] = []
    for i, payload in enumerate(XSS):
        for j in range(4):  # a group of its own (at least 3 URLs) and a sub-group
            lines.append(
                json.dumps(
                    {
                        "url": f"https://ex.com/{payload}/{payload}{j}",
                        "lastmod": f"2024-0{i % 9 + 1}{payload}",
                        "sitemap": f"https://ex.com/{payload}.xml",
                        "hreflang": payload if j == 3 else None,
                        "alternate_of": f"https://ex.com/{payload}/" if j == 3 else None,
                    }
                )
            )
        lines.append(json.dumps({"url": f"https://ex.com/test/{payload}"}))
        lines.append(json.dumps({"url": f"https://ex.com/account/{payload}"}))
    inventory = write_jsonl(tmp_path / "evil.jsonl", lines)
    out = tmp_path / "evil.html"
    assert invoke("report", str(inventory), "-o", str(out)).exit_code == 0
    opened = await open_offline(browser, out, tmp_path / "evil.png")
    assert opened.dialogs == [] and opened.errors == [] and opened.console == []
    assert opened.blocked == []
    page = opened.page
    assert await page.locator("img").count() == 0
    assert await page.locator("script").count() == 1  # the report's own
    assert await page.locator("svg [onload], [onerror]").count() == 0
    groups = await page.eval_on_selector_all("g.cell", "cs => cs.map(c => c.dataset.group)")
    # Shown as text, byte for byte: escaped, not dropped.
    assert '/"><img src=x onerror=alert(1)>/*' in groups and "/<svg onload=alert(5)>/*" in groups
    text = await page.text_content("body")
    assert text is not None and "https://ex.com/test/<script>alert(2)</script>" in text
