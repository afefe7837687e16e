"""Locale folders over real HTTP on 127.0.0.1: `/maps/en-gb/part-1.xml` is an `en-gb` shard
whatever the file is called, once a sibling folder at the same position holds another locale.

Every walk is bounded in time (`asyncio.timeout`) and what reached the server is counted there
(`site.hits`), not taken from the walker's own report.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from typer.testing import CliRunner

import sitescout
import sitescout.cli.scope  # registers the `scope` command
from sitescout import FetchConfig
from sitescout._budget import order_children
from sitescout._models import Entry
from sitescout._scope import estimate_scope_async
from sitescout._walk import Walk
from sitescout.cli import app

from .server import Site, gz, sitemapindex, urlset

WALK_TIMEOUT = 20.0  # seconds; no walk here should come near it
FAST = FetchConfig(timeout=5.0, retries=1, backoff=0.01, retry_after_cap=0.1)

LOCALES = ("en-gb", "es-mx", "ko")
SHARDS = [f"/maps/{locale}/part-1.xml" for locale in LOCALES]
EN_GB, ES_MX, KO = SHARDS
PAGES_PER_SHARD = 3


async def collect(walk: Walk) -> list[Entry]:
    entries: list[Entry] = []
    async with asyncio.timeout(WALK_TIMEOUT):
        async for batch in walk:
            entries.extend(batch)
    return entries


def hit_paths(site: Site) -> set[str]:
    return {path for path, n in site.hits.items() if n and path != "/robots.txt"}


def folder_site(site: Site, children: list[str]) -> None:
    """robots.txt -> /sitemap_index.xml -> `children`. A shard in a locale folder `/maps/xx/`
    lists pages under `/xx/`; any other child lists pages under `/other{n}/` (gzipped when its
    name says so)."""
    site.add("/robots.txt", "Sitemap: /sitemap_index.xml\n", Content_Type="text/plain")
    site.add("/sitemap_index.xml", sitemapindex([site.url + child for child in children]))
    for n, child in enumerate(children):
        folder = child.split("/")[2] if child in SHARDS else f"other{n}"
        body = urlset([f"{site.url}/{folder}/p{i}" for i in range(PAGES_PER_SHARD)])
        site.add(child, gz(body) if child.endswith(".gz") else body)


def urls_cli(*args: str) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
    """`sitescout urls … --json` in-process: exit code, entry lines, the summary."""
    result = CliRunner().invoke(app, ["urls", *args, "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return result.exit_code, lines, json.loads(result.stderr)


# --- --locale and the base URL's locale skip the other folders' shards ---------------------------


@pytest.mark.parametrize(
    ("base", "options"),
    [
        pytest.param("/", {"locale": "en-gb", "filter_locales": True}, id="locale"),
        pytest.param("/", {"locale": "EN_gb", "filter_locales": True}, id="locale-any-case"),
        pytest.param("/en-gb/", {"filter_locales": True}, id="base-url-locale"),
    ],
)
async def test_only_the_preferred_locale_folder_is_fetched(
    site: Site, base: str, options: dict[str, Any]
) -> None:
    folder_site(site, SHARDS)
    walk = sitescout.walk(site.url + base, **options)
    entries = await collect(walk)
    assert hit_paths(site) == {"/sitemap_index.xml", EN_GB}
    assert site.hits[EN_GB] == 1
    assert site.hits[ES_MX] == site.hits[KO] == 0
    assert walk.report.skipped_sitemaps == [site.url + ES_MX, site.url + KO]
    assert [e.url for e in entries] == [f"{site.url}/en-gb/p{i}" for i in range(PAGES_PER_SHARD)]


def test_urls_locale_flag_fetches_only_that_folder(site: Site) -> None:
    folder_site(site, SHARDS)
    code, lines, summary = urls_cli(f"{site.url}/", "--locale", "en-gb")
    assert code == 0
    assert hit_paths(site) == {"/sitemap_index.xml", EN_GB}
    assert summary["skipped_sitemaps"] == 2
    assert {line["url"] for line in lines} == {
        f"{site.url}/en-gb/p{i}" for i in range(PAGES_PER_SHARD)
    }


@pytest.mark.parametrize("word", ["/it/part.xml", "/sm/leaf-1.xml.gz"])
async def test_a_lone_two_letter_folder_is_not_a_locale(site: Site, word: str) -> None:
    # `/it/` and `/sm/` sit at another position than the locale folders, and alone at theirs:
    # no evidence, so no locale; the shard is kept like any unlocalized one.
    folder_site(site, [*SHARDS, word])
    walk = sitescout.walk(f"{site.url}/", locale="en-gb", filter_locales=True)
    await collect(walk)
    assert hit_paths(site) == {"/sitemap_index.xml", EN_GB, word}
    assert walk.report.skipped_sitemaps == [site.url + ES_MX, site.url + KO]


# --- scope lists the languages --------------------------------------------------------------------


async def test_scope_reports_the_folder_languages(site: Site) -> None:
    folder_site(site, SHARDS)
    est = await estimate_scope_async(site.url + "/", config=FAST)
    assert est.languages_detected == LOCALES
    assert est.sub_sitemap_count == 3
    assert site.total_hits("/maps/") == 0  # read from the index alone


def test_scope_cli_reports_the_folder_languages(site: Site) -> None:
    folder_site(site, SHARDS)
    result = CliRunner().invoke(app, ["scope", f"{site.url}/", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["languages_detected"] == list(LOCALES)


@pytest.mark.parametrize("word", ["/it/part.xml", "/sm/leaf-1.xml.gz"])
async def test_scope_does_not_count_a_lone_two_letter_folder(site: Site, word: str) -> None:
    folder_site(site, [EN_GB, KO, word])
    est = await estimate_scope_async(site.url + "/", config=FAST)
    assert est.languages_detected == ("en-gb", "ko")


# --- budget ordering sees folder locales ---------------------------------------------------------


def test_order_children_ranks_the_preferred_locale_folder_first() -> None:
    children = [f"https://x.com{path}" for path in ["/maps/pages.xml", *SHARDS]]
    ordered = order_children(children, "en-gb")
    assert ordered[0] == "https://x.com" + EN_GB
    assert ordered[1] == "https://x.com/maps/pages.xml"  # content before the other locales


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({}, id="no-filter"),
        # Filtering first leaves a single locale folder, which alone is no evidence: the
        # ordering must still know it is the preferred locale's shard.
        pytest.param({"filter_locales": True}, id="filtered"),
    ],
)
async def test_a_fetch_budget_goes_to_the_preferred_locale_folder_first(
    site: Site, options: dict[str, Any]
) -> None:
    folder_site(site, ["/maps/pages.xml", ES_MX, EN_GB, KO])
    walk = sitescout.walk(f"{site.url}/", locale="en-gb", max_fetches=2, **options)
    await collect(walk)
    assert hit_paths(site) == {"/sitemap_index.xml", EN_GB}
    assert walk.report.budgets_hit == ["max_fetches"]
