"""What the program prints from a site (URLs, paths, warnings) comes out as written: rich reads
neither markup (`[b]…[/b]`) nor emoji codes (`:fire:`) in it. Both are plain text in URLs
(`/wiki/Tag:fire:`, `/docs/[v2]/`), and a URL printed otherwise is a wrong URL.

The commands run in-process (CliRunner) against a site on 127.0.0.1.
"""

from __future__ import annotations

import pytest
from typer.testing import Result

from sitescout._models import WalkReport
from sitescout.cli._output import print_summary

from .server import Site, sitemapindex, urlset
from .test_cli_scope import invoke as invoke_wide

# Each is a path segment a real site could have; each is read by rich unless told not to.
ODD = ("Tag:fire:", "[b]v2[/b]", ":thumbs_up:[red]x")


def invoke(*args: str) -> Result:
    """The command, on a terminal wide enough that no table folds a URL across lines."""
    return invoke_wide(*args, env={"COLUMNS": "400"})


@pytest.mark.parametrize("odd", ODD)
def test_a_failed_documents_url_is_printed_as_written(site: Site, odd: str) -> None:
    missing = f"{site.url}/wiki/{odd}/missing.xml"
    site.add("/index.xml", sitemapindex([missing, f"{site.url}/a.xml"]))
    site.add("/a.xml", urlset([f"{site.url}/a"]))
    result = invoke("urls", site.url + "/index.xml", "-f", "txt")
    assert result.exit_code == 1, result.stderr
    assert f"error: {missing}: HTTP 404" in result.stderr


@pytest.mark.parametrize("odd", ODD)
def test_a_groups_example_is_printed_as_written(site: Site, odd: str) -> None:
    site.add("/sitemap.xml", urlset([f"{site.url}/{odd}/{i}" for i in range(3)]))
    result = invoke("groups", site.url + "/sitemap.xml")
    assert result.exit_code == 0, result.stderr
    assert f"/{odd}/0" in result.stdout


@pytest.mark.parametrize("odd", ODD)
def test_a_scope_url_is_printed_as_written(site: Site, odd: str) -> None:
    sitemap = f"{site.url}/{odd}/sitemap.xml"
    site.add(f"/{odd}/sitemap.xml", urlset([f"{site.url}/a"]))
    result = invoke("scope", sitemap)
    assert result.exit_code == 0, result.stderr
    assert f"user ({sitemap})" in result.stdout


@pytest.mark.parametrize("odd", ODD)
def test_a_warning_is_printed_as_written(odd: str, capsys: pytest.CaptureFixture[str]) -> None:
    report = WalkReport()
    report.warn(f"https://example.com/{odd}/s.xml: cut at the 10-byte document limit")
    print_summary(report, as_json=False, quiet=False)
    err = capsys.readouterr().err
    assert f"warning: https://example.com/{odd}/s.xml: cut at the 10-byte" in err
