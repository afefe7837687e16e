"""`sitescout scope` and `sitescout groups` over real HTTP on 127.0.0.1, in-process (CliRunner)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from typer.testing import CliRunner, Result

import sitescout.cli.scope  # registers the `scope` and `groups` commands
from sitescout._demo.server import serve
from sitescout.cli import app
from sitescout.cli.scope import bar, format_seconds

from .server import Site, sitemapindex, urlset


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def as_json(result: Result) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def shop(site: Site) -> None:
    """robots.txt → an index of two shards: 12 products, 4 posts, a home page and an about page."""
    site.add("/robots.txt", "Sitemap: /sitemap_index.xml\n", Content_Type="text/plain")
    site.add("/sitemap_index.xml", sitemapindex([f"{site.url}/a.xml", f"{site.url}/b.xml"]))
    site.add("/a.xml", urlset([f"{site.url}/products/{i}" for i in range(12)]))
    site.add(
        "/b.xml",
        urlset([f"{site.url}/blog/{i}" for i in range(4)] + [f"{site.url}/", f"{site.url}/about"]),
    )


# -- scope ---------------------------------------------------------------------------------------


def test_scope_table(site: Site) -> None:
    shop(site)
    result = invoke("scope", site.url + "/")
    assert result.exit_code == 0
    out = result.stdout
    for label in ("source", "estimate", "sub-sitemaps", "languages", "expected duration"):
        assert label in out
    assert "2,000 – 100,000 URLs" in out
    assert "robots.txt" in out and "fetch" in out
    assert result.stderr == ""
    assert site.total_hits() == 4  # robots.txt, the sitemap, the two llms.txt candidates
    assert "llms.txt" in out and "none" in out


def test_scope_json(site: Site) -> None:
    shop(site)
    result = invoke("scope", site.url + "/", "--json")
    assert result.exit_code == 0
    data = as_json(result)
    assert data["url_estimate_range"] == [2000, 100000]
    assert data["sub_sitemap_count"] == 2
    assert data["transport"] == "fetch"
    assert data["top_sitemap_urls"] == [f"{site.url}/sitemap_index.xml"]
    assert data["expected_duration_seconds"] == 5.0
    assert set(data) >= {
        "root_url",
        "source",
        "languages_detected",
        "notes",
        "expected_duration_range",
    }


def test_scope_sample_refines(site: Site) -> None:
    shop(site)
    data = as_json(invoke("scope", site.url + "/", "--json", "--sample", "2"))
    assert data["url_estimate_range"] == [18, 18]
    assert data["sampled_children"] == 2
    assert any(n.startswith("range refined from 2 of 2") for n in data["notes"])


def test_scope_nothing_found_exits_3(site: Site) -> None:
    result = invoke("scope", site.url + "/", "--json")
    assert result.exit_code == 3
    data = as_json(result)
    assert data["url_estimate_range"] == [0, 0]
    assert "no sitemap found (robots.txt and well-known paths)" in data["notes"]


def test_scope_blocked_sitemap_table_says_browser(site: Site) -> None:
    site.add("/robots.txt", "Sitemap: /sitemap.xml\n", Content_Type="text/plain")
    site.add("/sitemap.xml", "no", status=403, Content_Type="text/plain")
    result = invoke("scope", site.url + "/")
    assert result.exit_code == 3
    assert "browser" in result.stdout and "HTTP 403" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("scope", "example.com"), id="no-scheme"),
        pytest.param(("scope", "https://example.com/", "--sample", "-1"), id="negative-sample"),
        pytest.param(("groups", "ftp://example.com/"), id="groups-not-http"),
        pytest.param(("groups", "https://example.com/", "--depth", "0"), id="depth-0"),
        pytest.param(("groups", "https://example.com/", "--max-fetches", "0"), id="budget-0"),
    ],
)
def test_usage_errors_exit_2(args: tuple[str, ...]) -> None:
    assert invoke(*args).exit_code == 2


def test_scope_on_the_demo_site_is_quick() -> None:
    with serve() as base:
        start = time.perf_counter()
        result = invoke("scope", base + "/")
        elapsed = time.perf_counter() - start
    assert result.exit_code == 0
    assert "3,000 – 150,000 URLs" in result.stdout
    assert elapsed < 5  # generous: it takes a few hundredths of a second


# -- groups --------------------------------------------------------------------------------------


def test_groups_table_sorted_by_count_with_bars(site: Site) -> None:
    shop(site)
    result = invoke("groups", site.url + "/")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    rows = [line.split() for line in lines if line.strip().startswith(("/", "other"))]
    assert [r[0] for r in rows] == ["/products/*", "/blog/*", "other"]
    assert [r[1] for r in rows] == ["12", "4", "2"]
    assert "█" * 20 in next(x for x in lines if "/products/*" in x)
    assert "18 URLs in 3 groups from 3 documents" in result.stdout
    assert "18 URLs (0 alternates) from 3 documents" in result.stderr  # the walk summary


def test_groups_json(site: Site) -> None:
    shop(site)
    result = invoke("groups", site.url + "/", "--json")
    assert result.exit_code == 0
    data = as_json(result)
    assert data["total"] == 18 and data["depth"] == 1
    assert [(g["prefix"], g["count"]) for g in data["groups"]] == [
        ("/products/*", 12),
        ("/blog/*", 4),
        ("other", 2),
    ]
    assert len(data["groups"][0]["samples"]) == 10
    assert data["walk"]["partial"] is False and data["walk"]["budgets_hit"] == []
    assert result.stderr == ""


def test_groups_depth_2(site: Site) -> None:
    site.add("/sitemap.xml", urlset([f"{site.url}/docs/{s}/{i}" for s in "ab" for i in range(3)]))
    data = as_json(invoke("groups", site.url + "/sitemap.xml", "--json", "--depth", "2"))
    assert [(g["prefix"], g["count"]) for g in data["groups"]] == [
        ("/docs/a/*", 3),
        ("/docs/b/*", 3),
    ]


def test_groups_budget_bound_exits_1_and_says_so(site: Site) -> None:
    shop(site)
    result = invoke("groups", site.url + "/", "--max-fetches", "2")
    assert result.exit_code == 1
    assert "budgets hit: max_fetches" in result.stdout
    assert "Sitemap fetch limit (2 documents) reached" in result.stderr
    data = as_json(invoke("groups", site.url + "/", "--max-fetches", "2", "--json"))
    assert data["walk"]["budgets_hit"] == ["max_fetches"]
    assert data["walk"]["partial"] is True
    assert data["total"] == 12


def test_groups_nothing_found_exits_3(site: Site) -> None:
    result = invoke("groups", site.url + "/", "--json")
    assert result.exit_code == 3
    assert as_json(result)["groups"] == []


# -- formatting helpers --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "largest", "expected"),
    [
        pytest.param(10, 10, "█" * 20, id="full"),
        pytest.param(5, 10, "█" * 10, id="half"),
        pytest.param(1, 1000, "▏", id="tiny-still-shows"),
        pytest.param(0, 10, "", id="zero"),
        pytest.param(3, 16, "███▊", id="eighths"),
    ],
)
def test_bar(count: int, largest: int, expected: str) -> None:
    assert bar(count, largest) == expected


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(5.0, "5 s"), (99.6, "1 min 40 s"), (149.3, "2 min 29 s"), (7300, "2 h 01 min")],
)
def test_format_seconds(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text


def test_module_registers_both_commands() -> None:
    names = {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}
    assert {"scope", "groups"} <= names
    assert sitescout.cli.scope.scope is not None
