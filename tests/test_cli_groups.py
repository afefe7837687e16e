"""`sitescout groups` over real HTTP on 127.0.0.1, in-process (CliRunner)."""

from __future__ import annotations

import pytest

import sitescout.cli.groups  # registers the `groups` command
from sitescout.cli import app
from sitescout.cli.groups import bar

from .server import Site, urlset
from .test_cli_scope import as_json, invoke, shop


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


# -- sources: llms.txt ---------------------------------------------------------------------------

TEXT = "text/plain; charset=utf-8"
LLMS_TXT = (
    "# Docs\n\n- [Guide](/docs/guide/index.md)\n- [API](/docs/api.md)\n- [CLI](/docs/cli.md)\n"
    "- [Install](/docs/install)\n- [FAQ](/help/faq)\n- [Contact](/help/contact)\n"
    "- [Billing](/help/billing)\n"
)


def shop_with_llms_txt(site: Site, path: str = "/llms.txt") -> None:
    """The shop's sitemaps beside an llms.txt of other pages: the groups show which was read."""
    shop(site)
    site.add(path, LLMS_TXT, Content_Type=TEXT)


def test_groups_source_llms_reads_only_the_llms_txt(site: Site) -> None:
    shop_with_llms_txt(site)
    result = invoke("groups", site.url + "/", "--source", "llms", "--json")
    assert result.exit_code == 0, result.output
    data = as_json(result)
    assert [(g["prefix"], g["count"]) for g in data["groups"]] == [("/docs/*", 4), ("/help/*", 3)]
    assert site.url + "/docs/guide/" in data["groups"][0]["samples"]  # the page, not its .md
    assert data["walk"]["source"] == "llms.txt"
    assert data["walk"]["llms"]["url"] == site.url + "/llms.txt"
    assert data["walk"]["llms"]["links"] == 7 and data["walk"]["llms"]["md_links"] == 3
    assert site.hits["/llms.txt"] == 1
    assert site.hits["/robots.txt"] == 0 and site.total_hits("/sitemap") == 0


def test_groups_source_all_merges_sitemaps_and_llms_txt(site: Site) -> None:
    shop_with_llms_txt(site)
    data = as_json(invoke("groups", site.url + "/", "--source", "all", "--json"))
    counts = {g["prefix"]: g["count"] for g in data["groups"]}
    assert counts == {"/products/*": 12, "/docs/*": 4, "/blog/*": 4, "/help/*": 3, "other": 2}


def test_groups_llms_txt_names_the_file(site: Site) -> None:
    shop_with_llms_txt(site, "/files/pages.txt")
    result = invoke(
        "groups", site.url + "/", "--source", "llms", "--llms-txt", site.url + "/files/pages.txt"
    )
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.stdout.splitlines() if line.strip().startswith("/")]
    assert [(r[0], r[1]) for r in rows] == [("/docs/*", "4"), ("/help/*", "3")]
    assert f"via llms.txt {site.url}/files/pages.txt" in result.stderr
    assert site.hits["/llms.txt"] == 0 and site.hits["/files/pages.txt"] == 1


def test_groups_quiet_leaves_stderr_empty(site: Site) -> None:
    shop(site)
    result = invoke("groups", site.url + "/", "-q")
    assert result.exit_code == 0
    assert "18 URLs in 3 groups" in result.stdout  # the answer still goes to stdout
    assert result.stderr == ""


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("groups", "ftp://example.com/"), id="groups-not-http"),
        pytest.param(("groups", "https://example.com/", "--source", "web"), id="bad-source"),
        pytest.param(
            ("groups", "https://example.com/", "--llms-txt", "file:///etc/passwd"), id="llms-file"
        ),
        pytest.param(("groups", "https://example.com/", "--depth", "0"), id="depth-0"),
        pytest.param(("groups", "https://example.com/", "--max-fetches", "0"), id="budget-0"),
    ],
)
def test_usage_errors_exit_2(args: tuple[str, ...]) -> None:
    assert invoke(*args).exit_code == 2


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


def test_module_registers_the_command() -> None:
    # One `groups` command, and its callback is this module's function (not a copy elsewhere).
    callbacks = [
        c.callback
        for c in app.registered_commands
        if (c.name or (c.callback.__name__ if c.callback else "")) == "groups"
    ]
    assert callbacks == [sitescout.cli.groups.groups]
