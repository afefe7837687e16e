"""`-q` and `-v` as a user sees them: real subprocesses against a loopback site, lines counted.

`-q` prints nothing but errors (data on stdout and `--json` output still come out); `-v` logs
one line per sitemap document, sitescout's own, and not the HTTP library's internals, which
`-vv` adds.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sitescout._ledger import log_document
from sitescout._models import DocumentRecord

from .server import Site, sitemapindex, urlset


def run(
    *args: str, cwd: Path | None = None, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sitescout", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


def page(title: str) -> str:
    return f"<html><head><title>{title}</title></head><body><p>{title} text</p></body></html>"


PATHS = {"/a.xml": ["/"], "/b.xml": ["/about/", "/blog/", "/blog/post-1/", "/contact/"]}


def four_documents(site: Site) -> None:
    """robots.txt names an index of two sitemaps: 1 + 4 pages, each page servable."""
    u = site.url
    site.add("/robots.txt", "Sitemap: /index.xml\n", Content_Type="text/plain")
    site.add("/index.xml", sitemapindex([u + path for path in PATHS]))
    for sitemap, pages in PATHS.items():
        site.add(sitemap, urlset([u + p for p in pages]))
        for p in pages:
            site.add(p, page(p), Content_Type="text/html")


DOCUMENT_LINE = re.compile(
    r"^sitemap (?P<url>\S+): HTTP (?P<status>\d{3}), (?P<kind>[a-z-]+),"
    r"(?: (?P<entries>[\d,]+) entr(?:y|ies),)?(?: [\d,]+ child sitemaps,)?"
    r" (?P<bytes>[\d,]+) bytes, (?P<seconds>\d+\.\d\d) s$"
)


# -- -v: one line per document, sitescout's own -----------------------------------------------


def test_verbose_logs_one_line_per_sitemap_document(site: Site) -> None:
    four_documents(site)
    proc = run("urls", site.url, "-v")
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 5  # stdout is still the data, only the data
    lines = proc.stderr.splitlines()
    assert len(lines) == 3 + 1, proc.stderr  # the index and its two sitemaps, the summary
    by_url = {m["url"]: m for m in map(DOCUMENT_LINE.match, lines[:3]) if m is not None}
    assert len(by_url) == 3, proc.stderr
    index = by_url[f"{site.url}/index.xml"]
    assert index["status"] == "200" and index["kind"] == "sitemapindex"
    b = by_url[f"{site.url}/b.xml"]
    assert (b["status"], b["kind"], b["entries"]) == ("200", "urlset", "4")
    assert int(b["bytes"]) == len(urlset([site.url + p for p in PATHS["/b.xml"]]))
    assert by_url[f"{site.url}/a.xml"]["entries"] == "1"
    assert lines[3].startswith("5 URLs (0 alternates) from 3 documents")
    for noise in ("httpx", "httpcore", "asyncio", "DEBUG", "HTTP Request"):
        assert noise not in proc.stderr


def test_verbose_names_a_failed_document(site: Site) -> None:
    four_documents(site)
    site.add("/b.xml", status=404)
    proc = run("urls", site.url, "--verbose")
    assert proc.returncode == 1, proc.stderr
    assert f"sitemap {site.url}/b.xml: HTTP 404, " in proc.stderr
    assert "httpcore" not in proc.stderr


def test_double_verbose_adds_the_http_library_debug_log(site: Site) -> None:
    four_documents(site)
    once = run("urls", site.url, "-v")
    twice = run("urls", site.url, "-vv")
    assert twice.returncode == 0, twice.stderr
    assert "DEBUG httpcore" in twice.stderr and "httpcore" not in once.stderr
    assert len(twice.stderr.splitlines()) > 3 * len(once.stderr.splitlines())
    # The document lines are there too, with the logger that wrote them.
    assert f"INFO sitescout._ledger: sitemap {site.url}/b.xml: HTTP 200, urlset" in twice.stderr


def test_verbose_extract_logs_the_walk_without_http_internals(site: Site, tmp_path: Path) -> None:
    four_documents(site)
    proc = run("extract", site.url + "/", "--out", str(tmp_path), "--yes", "-v")
    assert proc.returncode == 0, proc.stderr
    assert f"sitemap {site.url}/b.xml: HTTP 200, urlset" in proc.stderr
    assert "httpcore" not in proc.stderr and "httpx" not in proc.stderr


def test_quiet_and_verbose_together_are_a_usage_error(site: Site) -> None:
    proc = run("urls", site.url, "-q", "-v")
    assert proc.returncode == 2
    assert proc.stderr == "error: --quiet and --verbose cannot be used together\n"
    assert site.log == []  # refused before any request


# -- -q on urls: the data, and errors only ------------------------------------------------------


def test_quiet_urls_prints_the_data_and_nothing_else(site: Site) -> None:
    four_documents(site)
    loud = run("urls", site.url)
    proc = run("urls", site.url, "-q")
    assert proc.returncode == 0, proc.stderr
    assert loud.stderr != "" and proc.stderr == ""
    assert sorted(proc.stdout.splitlines()) == sorted(loud.stdout.splitlines())
    assert len(proc.stdout.splitlines()) == 5


def test_quiet_urls_hides_budget_warnings_but_keeps_the_exit_code(site: Site) -> None:
    four_documents(site)
    loud = run("urls", site.url, "--max-fetches", "2")
    proc = run("urls", site.url, "--max-fetches", "2", "-q")
    assert loud.returncode == proc.returncode == 1
    assert "warning:" in loud.stderr
    assert proc.stderr == ""


def test_quiet_urls_keeps_the_errors(site: Site) -> None:
    four_documents(site)
    site.add("/b.xml", status=404)
    proc = run("urls", site.url, "-q")
    assert proc.returncode == 1
    assert len(proc.stdout.splitlines()) == 1  # what was collected is still written
    assert proc.stderr.splitlines() == [f"error: {site.url}/b.xml: HTTP 404 ({site.url}/b.xml)"]


def test_quiet_urls_ends_a_failed_run_with_one_error_line(site: Site) -> None:
    proc = run("urls", site.url + "/missing.xml", "-q")
    assert proc.returncode == 3
    lines = proc.stderr.splitlines()
    assert lines[0].startswith(f"error: {site.url}/missing.xml: HTTP 404")
    assert lines[-1] == f"error: no URLs found (via user {site.url}/missing.xml)"
    assert len(lines) == 2


def test_quiet_json_summary_still_comes_out(site: Site) -> None:
    four_documents(site)
    proc = run("urls", site.url, "--max-fetches", "2", "-q", "--json")
    assert proc.returncode == 1
    summary = json.loads(proc.stderr)  # nothing else on stderr
    assert summary["budgets_hit"] == ["max_fetches"]


# -- -q on the other commands -------------------------------------------------------------------


def test_quiet_extract_prints_nothing_and_still_extracts(site: Site, tmp_path: Path) -> None:
    four_documents(site)
    loud = run("extract", site.url + "/", "--out", str(tmp_path / "loud"))
    proc = run("extract", site.url + "/", "--out", str(tmp_path / "quiet"), "-q")
    assert loud.returncode == proc.returncode == 0, proc.stderr
    assert len(loud.stdout.splitlines()) > 5 and "  ok   home" in loud.stderr
    assert (proc.stdout, proc.stderr) == ("", "")
    assert len(list((tmp_path / "quiet" / "pages").glob("*.json"))) == 5


def test_quiet_extract_keeps_page_failures_as_errors(site: Site, tmp_path: Path) -> None:
    four_documents(site)
    site.add("/contact/", status=500)
    proc = run("extract", site.url + "/", "--out", str(tmp_path), "-q")
    assert proc.returncode == 1
    assert proc.stdout == ""
    url = f"{site.url}/contact/"
    assert proc.stderr.splitlines() == [f"error: {url}: HTTPError: HTTP 500 ({url})"]


def test_quiet_extract_says_why_there_is_nothing_to_extract(site: Site, tmp_path: Path) -> None:
    four_documents(site)
    proc = run("extract", site.url + "/", "--out", str(tmp_path), "--pages", "/nope/", "-q")
    assert proc.returncode == 3
    assert proc.stdout == ""
    assert proc.stderr == (
        "error: nothing to extract: the page named with --pages (/nope/) is not among the "
        "5 pages discovered\n"
    )


def test_quiet_extract_json_is_the_only_output(site: Site, tmp_path: Path) -> None:
    four_documents(site)
    proc = run("extract", site.url + "/", "--out", str(tmp_path), "-q", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert len(json.loads(proc.stdout)["extracted"]) == 5


def test_quiet_scope_prints_its_answer_and_nothing_else(site: Site) -> None:
    four_documents(site)
    plain = run("scope", site.url)
    proc = run("scope", site.url, "-q")
    assert plain.returncode == proc.returncode == 0
    assert "estimate" in proc.stdout and proc.stdout == plain.stdout  # the answer is the table
    assert proc.stderr == ""
    as_json = run("scope", site.url, "-q", "--json")
    assert json.loads(as_json.stdout)["sub_sitemap_count"] == 2 and as_json.stderr == ""


def test_quiet_demo_prints_nothing(tmp_path: Path) -> None:
    proc = run("demo", "-q", "--out", str(tmp_path / "demo"))
    assert proc.returncode == 0, proc.stderr
    assert (proc.stdout, proc.stderr) == ("", "")
    assert len(list((tmp_path / "demo" / "pages").glob("*.json"))) == 5


@pytest.mark.parametrize(("flag", "long"), [("-q", "--quiet"), ("-v", "--verbose")])
def test_every_command_takes_quiet_and_verbose(flag: str, long: str) -> None:
    """The flags exist on every command that walks (`demo` takes `-q` only)."""
    commands = ["urls", "scope", "extract", "batch", "groups", "report"]
    if flag == "-q":
        commands.append("demo")
    for command in commands:
        proc = subprocess.run(
            [sys.executable, "-m", "sitescout", command, "--help"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={**os.environ, "COLUMNS": "200"},
        )
        assert proc.returncode == 0, proc.stderr
        line = next((line for line in proc.stdout.splitlines() if long in line), "")
        assert re.search(rf"\s{flag}\s", line), (command, line)


def test_quiet_batch_prints_only_the_failed_sites(tmp_path: Path) -> None:
    good, bad = Site().start(), Site().start()
    try:
        good.add("/sitemap.xml", urlset([good.url + "/a", good.url + "/b"]))
        sites = tmp_path / "sites.txt"
        sites.write_text(f"{good.url}/\n{bad.url}/\n")
        proc = run("batch", str(sites), "--out", str(tmp_path / "out"), "--workers", "1", "-q")
    finally:
        good.stop()
        bad.stop()
    assert proc.returncode == 1  # one site failed
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [f"error: {bad.url}/: HTTPError: HTTP 404 ({bad.url}/)"]


def test_the_document_line_of_a_document_that_never_answered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    record = DocumentRecord(url="https://x.com/s.xml", depth=2, duration=1.234, error="timed out")
    caplog.set_level(logging.INFO, logger="sitescout")
    log_document("sitemap", record)
    line = "sitemap https://x.com/s.xml: no response, 0 bytes, 1.23 s; timed out"
    assert caplog.messages == [line]
    assert caplog.records[0].levelno == logging.INFO
