"""`sitescout scope` over real HTTP on 127.0.0.1, in-process (CliRunner)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from typer.testing import CliRunner, Result

import sitescout.cli.scope  # registers the `scope` command
from sitescout._demo.server import serve
from sitescout.cli import app
from sitescout.cli.scope import format_seconds

from .server import Site, sitemapindex, urlset


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    result = CliRunner().invoke(app, list(args), env=env)
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
        pytest.param(("scope", "./example"), id="not-a-site"),
        pytest.param(("scope", "https://example.com/", "--sample", "-1"), id="negative-sample"),
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


# -- formatting helpers --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(5.0, "5 s"), (99.6, "1 min 40 s"), (149.3, "2 min 29 s"), (7300, "2 h 01 min")],
)
def test_format_seconds(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text


def test_module_registers_the_command() -> None:
    by_name = {
        c.name or (c.callback.__name__ if c.callback else ""): c for c in app.registered_commands
    }
    assert "scope" in by_name
    assert by_name["scope"].callback is sitescout.cli.scope.scope
