"""What a newcomer meets first, over real HTTP on 127.0.0.1: a bare host on the command line,
tables on a narrow pipe, a sitemap named like a page, exit codes that agree with the summary,
and Ctrl-C after the work is done.

No test here fetches anything but loopback: the bare hosts that reach a command are
`127.0.0.1:PORT` of a local `Site` (tried as https, which a plain-HTTP server refuses).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

import sitescout.cli.extract
import sitescout.cli.groups
import sitescout.cli.report
import sitescout.cli.urls  # noqa: F401  (registers the commands)
from sitescout._batch import read_sites
from sitescout._urls import assume_https
from sitescout.cli import app

from .server import Site, gz, sitemapindex, urlset

WAIT = 20.0  # seconds any wait on a subprocess may take


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sitescout", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
        env=env,
    )


# -- 1. a bare host means https -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arg", "url"),
    [
        ("example.com", "https://example.com/"),
        ("Example.COM", "https://Example.COM/"),
        ("example.com:8443", "https://example.com:8443/"),
        ("example.com/blog/", "https://example.com/blog/"),
        ("example.com/feed", "https://example.com/feed"),
        ("example.com?page=2", "https://example.com/?page=2"),
        ("docs.example.co.uk:8080/en/", "https://docs.example.co.uk:8080/en/"),
        ("127.0.0.1:8080", "https://127.0.0.1:8080/"),
        ("[::1]:8080/x", "https://[::1]:8080/x"),
        ("localhost", "https://localhost/"),
        ("localhost:3000", "https://localhost:3000/"),
        ("intranet:8080", "https://intranet:8080/"),
        ("bücher.example", "https://bücher.example/"),
        ("example.com.", "https://example.com./"),
    ],
)
def test_a_bare_host_becomes_its_https_url(arg: str, url: str) -> None:
    assert assume_https(arg) == (url, True)


@pytest.mark.parametrize(
    "arg",
    [
        "https://example.com/",  # a scheme: as given
        "HTTP://example.com/",
        "ftp://example.com/",  # a scheme refused later, with today's message
        "file:///etc/passwd",
        "./file",
        "../sites.txt",
        "/tmp/inventory",
        "-",
        "",
        "a b.example",
        "example.com/a path",
        " example.com",
        "intranet",  # one label and no port: a word, not a host
        "sitemap.xml",  # file names, not hosts
        "urls.jsonl",
        "inventory.csv",
        "urls.txt.gz",
        "1.2.3",
        "10.0.0.300",
        "user@example.com",
        "example.com:0",
        "example.com:65536",
        "example.com:http",
        "mailto:someone@example.com",
        "-example.com",
        "example..com",
        "exa_mple.com",
        "x" * 64 + ".com",  # a label longer than DNS allows
    ],
)
def test_what_is_not_a_host_is_left_as_it_is(arg: str) -> None:
    assert assume_https(arg) == (arg, False)


def test_batch_reads_bare_domains_with_the_same_rule() -> None:
    lines = ["127.0.0.1:8080", "example.com/blog/", "intranet", "sitemap.xml"]
    got = [(s.url, s.problem) for s in read_sites(lines)]
    assert got == [
        ("https://127.0.0.1:8080/", None),
        ("https://example.com/blog/", None),
        ("intranet", "not a site URL"),
        ("sitemap.xml", "not a site URL"),
    ]


NO_SCHEME = "note: no scheme given: using https://127.0.0.1:{port}/"


def _port(site: Site) -> str:
    return site.url.rsplit(":", 1)[1]


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["urls"], id="urls"),
        pytest.param(["groups"], id="groups"),
        pytest.param(["report", "-o", "{tmp}/r.html"], id="report"),
        pytest.param(["extract", "--out", "{tmp}/project", "--yes"], id="extract"),
    ],
)
def test_each_command_takes_a_bare_host_and_says_so_once(
    site: Site, tmp_path: Path, command: list[str]
) -> None:
    # https to a plain-HTTP server cannot succeed: the note and a clean failure, no traceback.
    site.add("/sitemap.xml", urlset([site.url + "/a"]))
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    host = f"127.0.0.1:{_port(site)}"
    result = invoke(args[0], host, *args[1:])
    note = NO_SCHEME.format(port=_port(site))
    assert result.stderr.count(note) == 1, result.stderr
    assert result.stderr.index(note) == 0  # before anything the walk says
    assert result.exit_code == 3, result.output
    assert "must be an http(s) URL" not in result.stderr
    assert site.total_hits() == 0  # nothing reached the plain-HTTP server as a request
    quiet = invoke(args[0], host, *args[1:], "-q")
    assert "note:" not in quiet.stderr and quiet.exit_code == 3


def test_urls_json_keeps_stderr_for_the_summary(site: Site) -> None:
    result = invoke("urls", f"127.0.0.1:{_port(site)}", "--json")
    assert result.exit_code == 3
    assert json.loads(result.stderr)["errors"]  # stderr is the JSON summary alone


# `./file`, `sitemap.xml` and `-` name files (stdin) now: tests/test_local_inputs.py.
@pytest.mark.parametrize("arg", ["a b", "ftp://example.com/"])
def test_what_is_not_a_host_is_refused_as_before(arg: str) -> None:
    result = invoke("urls", arg)
    assert result.exit_code == 2
    assert result.stderr == f"error: site URL must be an http(s) URL, got {arg!r}\n"


def test_report_reads_an_existing_file_named_like_a_host(
    site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A loopback name: were the file not read, the walk would only reach this machine.
    name = f"127.0.0.1:{_port(site)}"
    (tmp_path / name).write_text(json.dumps({"url": site.url + "/a"}) + "\n")
    monkeypatch.chdir(tmp_path)
    result = invoke("report", name, "-o", "r.html")
    assert result.exit_code == 0, result.output
    assert "note:" not in result.stderr
    assert "report: 1 URLs in 1 groups" in result.stderr
    assert site.total_hits() == 0


# -- 2. counts are never cut in a table -----------------------------------------------------------


def big_groups(site: Site) -> None:
    pages = [f"{site.url}/products/item-{i}" for i in range(3000)]
    site.add("/sitemap.xml", urlset(pages + [f"{site.url}/blog/post-{i}" for i in range(1200)]))


@pytest.mark.parametrize("columns", ["20", "40", "66", "80"])
def test_groups_on_a_narrow_pipe_shows_whole_counts(site: Site, columns: str) -> None:
    big_groups(site)
    proc = run("groups", site.url + "/sitemap.xml", "-q", env={**os.environ, "COLUMNS": columns})
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if line.strip().startswith("/")]
    # Each row whole on its line: group, count and share, then the bar and the example.
    assert [r[:3] for r in rows] == [["/products/*", "3,000", "71%"], ["/blog/*", "1,200", "29%"]]
    assert "4,200 URLs in 2 groups from 1 document" in " ".join(proc.stdout.split())
    assert "…" not in rows[1][-1] or int(columns) < 70  # the example only gives way when narrow


# -- 3. the URL given is judged by what it returns ------------------------------------------------


def page(links: str = "") -> str:
    return f"<html><head><title>t</title></head><body><p>text</p>{links}</body></html>"


def feeds(site: Site) -> None:
    """No robots.txt, no well-known sitemap: a gzipped text list and an XML urlset by odd names."""
    text = "\n".join(f"{site.url}/a/{i}" for i in range(3)) + "\n"
    site.add("/urls.txt.gz", gz(text), Content_Type="application/x-gzip")
    site.add("/feed", urlset([f"{site.url}/b/{i}" for i in range(3)]))
    site.add("/page", page('<a href="/page/x">x</a>'), Content_Type="text/html")
    site.add("/page/x", page(), Content_Type="text/html")


@pytest.mark.parametrize(("path", "folder"), [("/urls.txt.gz", "a"), ("/feed", "b")])
def test_a_sitemap_named_like_a_page_is_walked_as_one(site: Site, path: str, folder: str) -> None:
    feeds(site)
    result = invoke("urls", site.url + path, "-f", "txt")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [f"{site.url}/{folder}/{i}" for i in range(3)]
    assert f"3 URLs (0 alternates) from 4 documents via user {site.url}{path};" in result.stderr
    assert site.hits[path] == 1  # tried once, after robots.txt and the well-known paths


def test_an_html_start_page_still_starts_the_crawl(site: Site) -> None:
    feeds(site)
    result = invoke("urls", site.url + "/page", "-f", "txt", "--json")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [site.url + "/page", site.url + "/page/x"]
    summary = json.loads(result.stderr)
    assert summary["source"] == "bfs" and summary["errors"] == []
    assert f"site URL {site.url}/page: not a sitemap" in summary["notes"]


def test_a_start_page_robots_txt_calls_a_sitemap_keeps_its_base_path(site: Site) -> None:
    # Already tried as robots.txt's sitemap (it is not one): not fetched again, and the crawl
    # that follows still keeps to the base path.
    site.add("/robots.txt", "Sitemap: /docs/\n", Content_Type="text/plain")
    links = '<a href="/docs/a">a</a><a href="/other">other</a>'
    site.add("/docs/", page(links), Content_Type="text/html")
    site.add("/docs/a", page(), Content_Type="text/html")
    site.add("/other", page(), Content_Type="text/html")
    result = invoke("urls", site.url + "/docs/", "-f", "txt")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [site.url + "/docs/", site.url + "/docs/a"]
    assert site.hits["/docs/"] == 2  # robots.txt's sitemap, then the crawl's start page


def test_a_base_path_with_a_well_known_sitemap_costs_no_extra_request(site: Site) -> None:
    site.add("/sitemap.xml", urlset([f"{site.url}/docs/a", f"{site.url}/blog/b"]))
    result = invoke("urls", site.url + "/docs/", "-f", "txt")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [site.url + "/docs/a"]
    assert site.hits["/docs/"] == 0


# -- 4. the exit code agrees with the summary -----------------------------------------------------


def test_a_damaged_sitemap_counted_as_an_error_exits_1(site: Site) -> None:
    u = site.url
    site.add(
        "/sitemap.xml",
        f"<urlset><url><loc>{u}/a</loc></url><url><loc>oops < broken</loc></url>"
        f"<url><loc>{u}/b</loc></url></urlset>",
    )
    result = invoke("urls", u + "/sitemap.xml", "-f", "txt")
    assert result.exit_code == 1, result.output
    assert {f"{u}/a", f"{u}/b"} <= set(result.stdout.splitlines())  # salvaged, and written
    assert "; 1 errors," in result.stderr
    assert "partial result: some sitemap documents were damaged" in result.stderr


# -- 5. Ctrl-C after the last entry ---------------------------------------------------------------


def test_ctrl_c_while_the_summary_is_written_does_not_undo_a_finished_run(
    site: Site, tmp_path: Path
) -> None:
    """The summary is too big for the stderr pipe, which the test does not read until the
    signal is sent: the run is held inside its summary (the output file is already in place)
    when Ctrl-C arrives, every time."""
    long = "x" * 2000
    children = [f"{site.url}/gone/{i}/{long}.xml" for i in range(150)]  # 150 failures, 4 KB each
    site.add("/sitemap.xml", sitemapindex([site.url + "/ok.xml", *children]))
    site.add("/ok.xml", urlset([site.url + "/a"]))
    out = tmp_path / "out.jsonl"
    args = ["urls", site.url + "/sitemap.xml", "-o", str(out), "--json"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "sitescout", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + WAIT
        while not out.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert out.exists(), "the run did not finish writing its file"
        time.sleep(0.3)  # well inside the summary's write by now
        assert proc.poll() is None  # held by the full pipe
        proc.send_signal(signal.SIGINT)
        time.sleep(0.2)
        _, stderr = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in stderr and "Aborted" not in stderr
    summary = json.loads(stderr)  # whole
    assert summary["partial_reasons"] == ["some sitemap documents failed"]
    assert summary["urls"] == 1 and len(summary["errors"]) == 150
    assert proc.returncode == 1  # the run's own code: documents failed, not an interruption
    assert out.read_text().count("\n") == 1
