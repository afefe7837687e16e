"""`sitescout urls` budget flags, base-path scoping and locale selection over real HTTP (issue 3).

Spec §5, §7 and §13 (exit 1 on a partial result). The CLI runs in-process through typer's
`CliRunner`; the summary is read from `--json` on stderr (stdout carries data only). One test
runs the installed `sitescout` script in a subprocess, as a user redirecting stderr would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sitescout.cli import app

from .server import Reply, RequestHandler, Site, sitemapindex, urlset
from .test_walk_budgets import docs_site_26, hit_paths, pages, robots, sitemap_hits

SITESCOUT = Path(sys.executable).with_name("sitescout")


def run_cli(*args: str) -> tuple[int, list[str], dict[str, Any]]:
    """Exit code, stdout lines (JSON lines of entries) and the --json summary."""
    result = CliRunner().invoke(app, ["urls", *args, "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    summary = json.loads(result.stderr)
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return result.exit_code, lines, summary


FETCH_WARNING_20 = "Sitemap fetch limit (20 documents) reached; discovery results are partial."
PREFIX_WARNING_0_OF_190 = (
    'Sitemap path prefix "/en-us/docs" matched 0 of 190 examined same-site URLs '
    "(less than 1%); consider a broader base URL."
)


def test_26_shards_unmatched_base_path_exits_1_after_20_fetches(site: Site) -> None:
    docs_site_26(site)
    code, lines, summary = run_cli(f"{site.url}/en-us/docs/", "--max-fetches", "20")
    assert code == 1
    assert lines == []
    assert sitemap_hits(site) == 20
    assert summary["documents"] == 20
    assert summary["warnings"].count(FETCH_WARNING_20) == 1
    assert summary["warnings"].count(PREFIX_WARNING_0_OF_190) == 1
    assert summary["budgets_hit"] == ["max_fetches"]
    assert summary["partial"] is True


def test_warnings_on_plain_stderr_keep_their_exact_wording(site: Site) -> None:
    # stderr redirected to a file (no terminal, no COLUMNS): each warning stays on one line.
    docs_site_26(site)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.run(
        [str(SITESCOUT), "urls", f"{site.url}/en-us/docs/", "--max-fetches", "20"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    stderr_lines = proc.stderr.splitlines()
    assert stderr_lines.count(f"warning: {FETCH_WARNING_20}") == 1
    assert stderr_lines.count(f"warning: {PREFIX_WARNING_0_OF_190}") == 1


def three_shard_site(site: Site) -> None:
    robots(site, "/sitemap.xml")
    site.add("/sitemap.xml", sitemapindex([f"{site.url}/{n}.xml" for n in "abc"]))
    for n in "abc":
        site.add(f"/{n}.xml", urlset(pages(site, f"/{n}/", 30)))


@pytest.mark.parametrize(
    ("flag", "value", "budget", "warning", "urls", "fetches"),
    [
        pytest.param(
            "--max-fetches",
            "2",
            "max_fetches",
            "Sitemap fetch limit (2 documents) reached; discovery results are partial.",
            30,
            2,
            id="fetches",
        ),
        pytest.param(
            "--max-depth",
            "1",
            "max_depth",
            "Sitemap depth limit (1 level) reached; dropped 3 child sitemaps; "
            "discovery results are partial.",
            0,
            1,
            id="depth",
        ),
        pytest.param(
            "--max-bytes",
            "100",
            "max_bytes",
            "Sitemap body byte limit (100 bytes) reached; discovery results are partial.",
            0,
            1,
            id="bytes",
        ),
        pytest.param(
            "--max-urls",
            "10",
            "max_urls",
            "Sitemap URL limit (10 URLs) reached; discovery results are partial.",
            10,
            2,
            id="urls",
        ),
    ],
)
def test_budget_flags_bind_warn_once_and_exit_1(
    site: Site, flag: str, value: str, budget: str, warning: str, urls: int, fetches: int
) -> None:
    three_shard_site(site)
    code, lines, summary = run_cli(f"{site.url}/", flag, value, "--concurrency", "1")
    assert code == 1
    assert len(lines) == urls
    assert sitemap_hits(site) == fetches
    assert summary["budgets_hit"] == [budget]
    assert summary["warnings"].count(warning) == 1
    assert summary["partial"] is True


def test_no_budget_flags_walk_everything_and_exit_0(site: Site) -> None:
    three_shard_site(site)
    code, lines, summary = run_cli(f"{site.url}/")
    assert code == 0
    assert len(lines) == 90
    assert sitemap_hits(site) == 4
    assert summary["budgets_hit"] == []
    assert summary["partial"] is False


def localized_site(site: Site) -> None:
    children = [
        "/dotnet_en-us_1.xml",
        "/dotnet_fr-fr_1.xml",
        "/previous-versions_en-us_8.xml",
        "/sitemap-de.xml",
        "/ja-jp/sitemap.xml",
        "/sitemap-pages.xml",
        "/sitemap.xml?lang=fr",
    ]
    robots(site, "/sitemap_index.xml")
    site.add("/sitemap_index.xml", sitemapindex([site.url + c for c in children]))
    for n, child in enumerate(children):
        # Each shard: two pages under the base path, one outside it.
        site.add(child, urlset([*pages(site, f"/en-us/docs/c{n}/", 2), f"{site.url}/blog/c{n}"]))


def test_base_url_locale_filters_shards_and_scopes_output(site: Site) -> None:
    localized_site(site)
    code, lines, summary = run_cli(f"{site.url}/en-us/docs/")
    assert code == 0
    assert hit_paths(site) == {
        "/sitemap_index.xml",
        "/dotnet_en-us_1.xml",
        "/previous-versions_en-us_8.xml",
        "/sitemap-pages.xml",
        "/sitemap.xml?lang=fr",
    }
    assert summary["skipped_sitemaps"] == 3
    assert len(lines) == 8
    assert all(line["url"].startswith(f"{site.url}/en-us/docs/") for line in lines)
    assert not [w for w in summary["warnings"] if w.startswith("Sitemap path prefix")]


def test_locale_flag_picks_the_shards_of_that_locale(site: Site) -> None:
    localized_site(site)
    code, lines, summary = run_cli(f"{site.url}/", "--locale", "fr-fr")
    assert code == 0
    assert hit_paths(site) == {
        "/sitemap_index.xml",
        "/dotnet_fr-fr_1.xml",
        "/sitemap-pages.xml",
        "/sitemap.xml?lang=fr",
    }
    assert summary["skipped_sitemaps"] == 4
    assert len(lines) == 9  # no base path: every page of the three shards


def test_deadline_flag_ends_a_slow_walk_with_exit_1(site: Site, release: threading.Event) -> None:
    def slow(h: RequestHandler) -> Reply | None:
        if release.wait(0.4):
            h.reset()
            return None
        path = h.path.strip("/").removesuffix(".xml")
        return Reply(200, urlset(pages(site, f"/{path}/", 5)).encode())

    site.add("/sitemap.xml", sitemapindex([f"{site.url}/s{i}.xml" for i in range(20)]))
    for i in range(20):
        site.handle(f"/s{i}.xml", slow)
    start = time.perf_counter()
    code, lines, summary = run_cli(
        f"{site.url}/sitemap.xml", "--deadline", "1", "--concurrency", "1"
    )
    assert time.perf_counter() - start < 10
    assert code == 1
    assert len(lines) >= 5  # the shards that arrived in time are kept
    assert "deadline" in summary["budgets_hit"]
    assert (
        summary["warnings"].count(
            "Sitemap walk deadline (1 s) reached; discovery results are partial."
        )
        == 1
    )
    assert summary["partial"] is True


def four_urlsets(site: Site, per: int = 15) -> None:
    site.add("/robots.txt", "Sitemap: /index.xml\n", Content_Type="text/plain")
    site.add("/index.xml", sitemapindex([f"{site.url}/s{i}.xml" for i in range(4)]))
    for i in range(4):
        site.add(f"/s{i}.xml", urlset([f"{site.url}/p{i}-{j}" for j in range(per)]))


def test_max_urls_invents_no_errors(site: Site) -> None:
    # The four urlsets are fetched at once; the first fills the budget and the others stop
    # reading. They answered 200: they are documents left unread, not failures.
    four_urlsets(site)
    code, lines, summary = run_cli(site.url, "--max-urls", "5")
    assert code == 1
    assert len(lines) == 5
    assert summary["errors"] == []
    assert summary["budgets_hit"] == ["max_urls"]
    assert summary["partial_reasons"] == ["a walk budget was reached"]
    assert not any("not a sitemap" in note for note in summary["notes"])


@pytest.mark.parametrize("concurrency", ["1", "8"])
def test_max_bytes_binds_on_bytes_read_and_says_by_how_much(site: Site, concurrency: str) -> None:
    four_urlsets(site)
    code, lines, summary = run_cli(site.url, "--max-bytes", "500", "--concurrency", concurrency)
    assert code == 1
    assert summary["budgets_hit"] == ["max_bytes"]
    assert summary["errors"] == []
    assert summary["partial_reasons"] == ["a walk budget was reached"]
    byte_warning = "Sitemap body byte limit (500 bytes) reached; discovery results are partial."
    assert byte_warning in summary["warnings"]
    over = [w for w in summary["warnings"] if "over the byte limit" in w]
    assert len(over) == 1
    assert f"{summary['bytes'] - 500:,} over" in over[0]
    assert len(lines) < 60
