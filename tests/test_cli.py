"""The command line, run as a real subprocess against a loopback site."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitescout import Batch, Entry
from sitescout._table import COLUMNS
from sitescout.cli.urls import Format, _Writer

from .server import Site, sitemapindex, urlset


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sitescout", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def make_site(site: Site) -> None:
    site.add("/robots.txt", "Sitemap: /index.xml\n", Content_Type="text/plain")
    site.add("/index.xml", sitemapindex([f"{site.url}/a.xml", f"{site.url}/b.xml"]))
    alt = f'<xhtml:link rel="alternate" hreflang="fr" href="{site.url}/fr/p0"/>'
    site.add(
        "/a.xml",
        urlset(
            [f"{site.url}/p0"], extra=alt + "<lastmod>2024-05-01</lastmod><priority>0.7</priority>"
        ),
    )
    site.add("/b.xml", urlset([f"{site.url}/p{i}" for i in range(1, 5)]))


def test_urls_jsonl_stdout_is_data_only(site: Site) -> None:
    make_site(site)
    proc = run("urls", site.url)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(rows) == 6
    assert set(rows[0]) == {
        "url",
        "lastmod",
        "priority",
        "changefreq",
        "hreflang",
        "alternate_of",
        "sitemap",
        "depth",
    }
    first = next(r for r in rows if r["url"] == f"{site.url}/p0")
    assert first["lastmod"] == "2024-05-01" and first["priority"] == 0.7 and first["depth"] == 2
    alt = next(r for r in rows if r["hreflang"] == "fr")
    assert alt["alternate_of"] == f"{site.url}/p0"
    assert "6 URLs" in proc.stderr and "robots.txt" in proc.stderr


def test_urls_csv_to_file_and_no_alternates(site: Site, tmp_path: object) -> None:
    make_site(site)
    out = f"{tmp_path}/inv.csv"
    proc = run("urls", site.url, "--format", "csv", "--output", out, "--no-alternates")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    with open(out, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 5 and rows[0]["url"].startswith(site.url)


def test_urls_csv_on_stdout_starts_with_its_header(site: Site) -> None:
    make_site(site)
    proc = run("urls", site.url, "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == ",".join(COLUMNS) and len(lines) == 7
    assert {row["url"] for row in csv.DictReader(lines)} >= {f"{site.url}/p{i}" for i in range(5)}


@pytest.mark.parametrize("fmt", [Format.jsonl, Format.csv, Format.txt])
def test_the_writer_writes_the_same_text_to_a_stream_of_text_alone(fmt: Format) -> None:
    """Rows go as the core's bytes under a text stream that has a byte stream under it, and as
    text to one that has none: the same text either way, in order after the CSV header."""
    batch = Batch.from_entries(
        [
            Entry('https://example.com/é?q="1"', lastmod="2024-01-01", sitemap="s é"),
            Entry("https://example.com/b,c", priority=0.5, sitemap="s"),
        ]
    )
    text = io.StringIO()
    raw = io.BytesIO()
    layered = io.TextIOWrapper(raw, encoding="utf-8", newline="")
    for out in (text, layered):
        writer = _Writer(out, fmt)
        writer.write(batch)
        writer.write(batch)
    layered.flush()
    assert raw.getvalue().decode("utf-8") == text.getvalue()
    assert text.getvalue().count("example.com/b,c") == 2


def test_json_summary_on_stderr(site: Site) -> None:
    make_site(site)
    proc = run("urls", site.url, "--json", "--quiet")
    assert proc.returncode == 0
    summary = json.loads(proc.stderr)
    assert summary["urls"] == 5 and summary["alternates"] == 1
    assert summary["documents"] == 3 and summary["partial"] is False


def test_partial_exits_1(site: Site) -> None:
    make_site(site)
    site.add("/b.xml", status=404)
    proc = run("urls", site.url)
    assert proc.returncode == 1
    assert len(proc.stdout.splitlines()) == 2  # what was collected is still written
    assert "HTTP 404" in proc.stderr


def test_nothing_found_exits_3(site: Site) -> None:
    proc = run("urls", site.url)
    assert proc.returncode == 3
    assert proc.stdout == ""


def test_usage_error_exits_2() -> None:
    assert run("urls", "not-a-url").returncode == 2
    assert run("urls", "http://127.0.0.1:9/", "--concurrency", "0").returncode == 2


def test_sitemap_flag_skips_robots(site: Site) -> None:
    make_site(site)
    proc = run("urls", site.url, "--sitemap", f"{site.url}/b.xml")
    assert proc.returncode == 0
    assert len(proc.stdout.splitlines()) == 4
    assert site.hits["/robots.txt"] == 0


def test_user_agent_is_sent(site: Site) -> None:
    make_site(site)
    run("urls", site.url, "--user-agent", "probe/9")
    assert {ua for _, _, ua in site.log} == {"probe/9"}


def test_urls_parquet_file_holds_every_entry(site: Site, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    make_site(site)
    out = tmp_path / "inventory.parquet"
    proc = run("urls", site.url, "--format", "parquet", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    table = pq.read_table(out)
    rows = table.to_pylist()
    jsonl = run("urls", site.url)
    expected = []
    for line in jsonl.stdout.splitlines():
        row = json.loads(line)
        # Parquet types lastmod (a date alone: midnight UTC) and keeps the text beside it.
        raw = row["lastmod"]
        when = None if raw is None else datetime.fromisoformat(raw).replace(tzinfo=UTC)
        expected.append({**row, "lastmod": when, "lastmod_raw": raw, "source": "sitemap"})
        # Columns a sitemap entry leaves empty (the JSON line omits md_url and sources).
        expected[-1].update(title=None, md_url=None, sources=None)

    def key(r: dict[str, object]) -> str:
        return str(r["url"])

    assert sorted(rows, key=key) == sorted(expected, key=key)
    assert table.schema.field("priority").type == "double"
    assert str(table.schema.field("lastmod").type) == "timestamp[us, tz=UTC]"


def test_urls_parquet_needs_an_output_file(site: Site) -> None:
    proc = run("urls", site.url, "--format", "parquet")
    assert proc.returncode == 2
    assert "--output FILE" in proc.stderr
    assert site.hits == {}


def test_urls_without_a_sitemap_streams_the_link_crawl(site: Site) -> None:
    site.add(
        "/", '<html><title>Home</title><a href="/about">About</a></html>', Content_Type="text/html"
    )
    site.add("/about", "<html><title>About us</title><p>hi</p></html>", Content_Type="text/html")
    proc = run("urls", site.url + "/")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [(r["url"], r["source"], r["depth"], r["title"]) for r in rows] == [
        (site.url + "/", "bfs", 0, "Home"),
        (site.url + "/about", "bfs", 1, "About us"),
    ]
    assert "via bfs" in proc.stderr


def test_render_without_a_browser_is_a_usage_error(site: Site) -> None:
    env = {**os.environ, "SITESCOUT_CHROMIUM": "/nonexistent/chromium"}
    proc = subprocess.run(
        [sys.executable, "-m", "sitescout", "urls", site.url + "/", "--render"],
        capture_output=True, text=True, timeout=60, check=False, env=env,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "chromium" in proc.stderr.lower()
    assert site.hits == {}


@settings(deadline=None)  # a correctness check: a busy machine must not fail it
@given(
    url=st.text(max_size=40),
    lastmod=st.none() | st.text(max_size=20),
    priority=st.none() | st.floats(0, 1),
    changefreq=st.none() | st.sampled_from(["daily", 'we"ird\\']),
    alternate=st.none() | st.tuples(st.text(max_size=8), st.text(max_size=30)),
    source=st.sampled_from(["sitemap", "bfs"]),
    title=st.none() | st.text(max_size=20),
)
def test_entry_json_is_valid_json_of_every_field(
    url: str,
    lastmod: str | None,
    priority: float | None,
    changefreq: str | None,
    alternate: tuple[str, str] | None,
    source: str,
    title: str | None,
) -> None:
    from sitescout._core import Batch
    from sitescout._models import Entry

    hreflang, alternate_of = alternate if alternate else (None, None)
    entry = Entry(
        url=url, lastmod=lastmod, priority=priority, changefreq=changefreq, sitemap="s",
        depth=3, hreflang=hreflang, alternate_of=alternate_of, source=source, title=title,
    )  # fmt: skip
    expected = {
        "url": url, "lastmod": lastmod, "priority": priority, "changefreq": changefreq,
        "hreflang": hreflang, "alternate_of": alternate_of, "sitemap": "s", "depth": 3,
    }  # fmt: skip
    if source != "sitemap":
        expected |= {"source": source, "title": title}
    line = Batch.from_entries([entry]).to_jsonl()
    assert line.endswith("\n") and "\n" not in line[:-1]
    assert json.loads(line) == expected
