"""Sitemaps you already have: a path on disk, stdin, `file://` URLs and `--map` folders.

Real files in `tmp_path`; a loopback `Site` only where http is involved, and its hit counts say
what reached the network. Every subprocess has a timeout; no loop here is unbounded.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

import sitescout
from sitescout._errors import UsageError
from sitescout._http import Fetcher, Response
from sitescout._local import LocalFiles, LocalRefused, confine, local_child
from sitescout._walk import WalkOptions
from sitescout.cli import app

from .server import Site, sitemapindex, urlset

PAGES = [f"https://example.com/p/{n}" for n in range(5)]
MORE = [f"https://example.com/q/{n}" for n in range(3)]
SECRET = ["https://example.com/secret"]


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(app, list(args))
    # A clean exit is a SystemExit (typer.Exit); anything else is a traceback the user would see.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result


def run(
    *args: str, data: bytes | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "sitescout", *args],
        input=data if data is not None else b"",
        capture_output=True,
        timeout=timeout,
        check=False,
    )


def urls_of(stdout: str) -> list[str]:
    return [json.loads(line)["url"] for line in stdout.splitlines() if line.strip()]


# -- the path rule, pure -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("sitemap.xml", "sitemap.xml"),
        ("a/b/sitemap.xml.gz", "a/b/sitemap.xml.gz"),
        ("./a//b.xml", "a/b.xml"),
        ("", "index.html"),
        ("docs/", "docs/index.html"),
        ("a%20b.xml", "a b.xml"),
        ("robots.txt?x=1#f", "robots.txt"),
        ("..", None),
        ("../secret.xml", None),
        ("a/../../secret.xml", None),
        ("a/../b.xml", None),  # `..` is refused outright, even when it would stay inside
        ("%2e%2e/secret.xml", None),
        ("%2E%2E/secret.xml", None),
        ("a/%2e%2e/%2e%2e/x", None),
        ("/etc/passwd", None),
        ("%2fetc/passwd", None),
        ("a\\..\\b", None),
        ("a%5c..%5cb", None),
        ("a%00.xml", None),
    ],
)
def test_confine_keeps_a_mapped_path_inside_its_folder(relative: str, expected: str | None) -> None:
    if expected is None:
        with pytest.raises(LocalRefused):
            confine(relative)
    else:
        assert confine(relative) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("sub/a.xml", "file:///d/sub/a.xml"),
        ("b.xml.gz", "file:///d/b.xml.gz"),
        ("../x.xml", None),
        ("%2e%2e/x.xml", None),
        ("/etc/passwd", None),
        ("ftp://h/x.xml", None),
        ("javascript:alert(1)", None),
        ("", None),
    ],
)
def test_local_child_resolves_beside_its_index_only(raw: str, expected: str | None) -> None:
    assert local_child("file:///d/index.xml", raw) == expected


# -- plain, gzipped, an index, stdin, file:// ---------------------------------------------------


def test_a_plain_local_urlset(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset(PAGES))
    result = invoke("urls", str(path))
    assert result.exit_code == 0, result.stderr
    assert urls_of(result.stdout) == PAGES


def test_a_gzipped_local_urlset_is_read_by_its_magic_bytes(tmp_path: Path) -> None:
    path = tmp_path / "urls.dat"  # no .gz: the bytes say gzip
    path.write_bytes(gzip.compress(urlset(PAGES).encode()))
    result = invoke("urls", str(path), "-f", "txt")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split() == PAGES


def test_a_gzipped_local_index_reads_its_relative_children(tmp_path: Path) -> None:
    (tmp_path / "site" / "a").mkdir(parents=True)
    (tmp_path / "site" / "a" / "b").mkdir()
    (tmp_path / "site" / "a" / "one.xml.gz").write_bytes(gzip.compress(urlset(PAGES).encode()))
    (tmp_path / "site" / "a" / "b" / "two.xml").write_text(urlset(MORE))
    (tmp_path / "outside.xml").write_text(urlset(SECRET))  # beside the folder: never read
    index = sitemapindex(["a/one.xml.gz", "a/b/two.xml", "../outside.xml", "%2e%2e/outside.xml"])
    root = tmp_path / "site" / "sitemap_index.xml.gz"
    root.write_bytes(gzip.compress(index.encode()))
    result = invoke("urls", str(root), "--json")
    assert result.exit_code == 0, result.stderr
    assert sorted(urls_of(result.stdout)) == sorted(PAGES + MORE)
    summary = json.loads(result.stderr)
    assert summary["documents"] == 3
    assert summary["malformed"] == 2  # the two escapes
    reasons = {m["reason"] for m in summary["malformed_examples"]}
    assert reasons == {"a path that leaves the folder of its index"}


def test_stdin_is_read_as_one_document(tmp_path: Path) -> None:
    proc = run("urls", "-", "-f", "txt", data=gzip.compress(urlset(PAGES).encode()))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().split() == PAGES


def test_stdin_left_open_is_cut_by_the_deadline() -> None:
    """Reading a pipe yields to the event loop: `--deadline` ends a walk whose stdin never ends."""
    command = [sys.executable, "-m", "sitescout", "urls", "-", "-f", "txt", "--deadline", "1"]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    with subprocess.Popen(command, **pipes) as proc:  # type: ignore[call-overload]
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        try:
            proc.stdin.write(urlset(PAGES).encode()[:-20])  # most of it, then nothing more
            proc.stdin.flush()
            proc.wait(timeout=30)  # stdin still open: only the deadline can end it
        finally:
            proc.kill()
            proc.stdin.close()
        out, err = proc.stdout.read(), proc.stderr.read()
    assert proc.returncode == 1, err
    assert b"deadline" in err.lower()
    assert out.decode().split() == PAGES[:4]  # the last <loc> never ended


def test_a_file_url_and_a_path_in_the_library(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset(PAGES))
    assert [e.url for e in sitescout.iter_urls(path.as_uri())] == PAGES
    assert [e.url for e in sitescout.iter_urls(path)] == PAGES
    result = invoke("urls", path.as_uri(), "-f", "txt")
    assert result.exit_code == 0 and result.stdout.split() == PAGES


def test_groups_and_report_walk_a_local_sitemap(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset(PAGES + MORE))
    result = invoke("groups", str(path), "--json")
    assert result.exit_code == 0, result.stderr
    assert {g["prefix"]: g["count"] for g in json.loads(result.stdout)["groups"]} == {
        "/p/*": 5,
        "/q/*": 3,
    }
    out = tmp_path / "r.html"
    result = invoke("report", str(path), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert "8 URLs" in result.stderr and out.exists()


def test_report_reads_an_inventory_suffix_as_an_inventory(tmp_path: Path) -> None:
    inventory = tmp_path / "inv.jsonl"
    inventory.write_text("".join(json.dumps({"url": u}) + "\n" for u in PAGES))
    result = invoke("report", str(inventory), "-o", str(tmp_path / "r.html"))
    assert result.exit_code == 0, result.stderr
    assert "via user" not in result.stderr  # read, not walked


# -- a local root with http children ------------------------------------------------------------


def test_an_http_child_of_a_local_index_is_fetched(site: Site, tmp_path: Path) -> None:
    site.add("/remote.xml", urlset(MORE))
    root = tmp_path / "index.xml"
    root.write_text(sitemapindex([site.url + "/remote.xml"]))
    result = invoke("urls", str(root), "-f", "txt")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split() == MORE
    assert site.hits["/remote.xml"] == 1


def test_offline_skips_http_children_and_says_so(site: Site, tmp_path: Path) -> None:
    site.add("/remote.xml", urlset(MORE))
    (tmp_path / "local.xml").write_text(urlset(PAGES))
    root = tmp_path / "index.xml"
    root.write_text(sitemapindex(["local.xml", site.url + "/remote.xml"]))
    result = invoke("urls", str(root), "-f", "txt", "--offline", "--json")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split() == PAGES
    assert site.total_hits() == 0
    assert "offline: 1 http(s) sitemap document not fetched" in json.loads(result.stderr)["notes"]


# -- --map ------------------------------------------------------------------------------------


def built_site(site: Site, folder: Path) -> None:
    """A static site's build output in `folder`; the server holds other content at the same
    paths, so a document read from the network would show."""
    folder.mkdir()
    (folder / "robots.txt").write_text(f"User-agent: *\nSitemap: {site.url}/sitemap.xml\n")
    (folder / "sitemap.xml").write_text(
        sitemapindex([f"{site.url}/s/pages.xml.gz", f"{site.url}/s/gone.xml"])
    )
    (folder / "s").mkdir()
    (folder / "s" / "pages.xml.gz").write_bytes(gzip.compress(urlset(PAGES).encode()))
    for path in ("/robots.txt", "/sitemap.xml", "/s/pages.xml.gz", "/s/gone.xml"):
        site.add(path, urlset(SECRET))


def test_map_reads_the_built_site_from_disk(site: Site, tmp_path: Path) -> None:
    built_site(site, tmp_path / "public")
    result = invoke("urls", site.url + "/", "--map", f"{site.url}/={tmp_path / 'public'}", "--json")
    assert site.total_hits() == 0  # nothing mapped reached the server
    assert urls_of(result.stdout) == PAGES  # page URLs keep their https form
    summary = json.loads(result.stderr)
    assert summary["source"] == "robots.txt"
    gone = [e for e in summary["errors"] if e["url"].endswith("/s/gone.xml")]
    assert len(gone) == 1 and gone[0]["status"] == 404, summary["errors"]
    assert result.exit_code == 1


@pytest.mark.parametrize("escape", ["../secret.xml", "%2e%2e/secret.xml", "link.xml"])
def test_map_refuses_paths_that_leave_the_folder(site: Site, tmp_path: Path, escape: str) -> None:
    public = tmp_path / "public"
    public.mkdir()
    (tmp_path / "secret.xml").write_text(urlset(SECRET))
    (public / "link.xml").symlink_to(tmp_path / "secret.xml")
    (public / "sitemap.xml").write_text(sitemapindex([f"{site.url}/{escape}"]))
    result = invoke(
        "urls",
        f"{site.url}/sitemap.xml",
        "--map",
        f"{site.url}/={public}",
        "--json",
    )
    assert site.total_hits() == 0
    assert "secret" not in result.stdout
    summary = json.loads(result.stderr)
    failed = [e for e in summary["errors"] if escape.split("/")[-1] in e["url"]]
    assert len(failed) == 1, summary["errors"]
    assert "leaves its folder" in failed[0]["error"]
    assert result.exit_code == 3


def test_fetcher_refuses_an_escape_without_touching_the_disk(tmp_path: Path) -> None:
    (tmp_path / "secret.xml").write_text(urlset(SECRET))
    (tmp_path / "public").mkdir()
    local = LocalFiles((("https://example.com/", str(tmp_path / "public")),))

    async def fetch(url: str) -> Response:
        async with Fetcher(local=local, offline=True) as fetcher:
            return await fetcher.fetch(url, lambda resp: None)

    for url in ("https://example.com/%2e%2e/secret.xml", "https://example.com/a/..%2fsecret.xml"):
        resp = asyncio.run(fetch(url))
        assert resp.error is not None and "leaves its folder" in str(resp.error), url
    missing = asyncio.run(fetch("https://example.com/nothing.xml"))
    assert missing.status == 404 and missing.error is not None
    other = asyncio.run(fetch("https://other.example/sitemap.xml"))
    assert other.error is not None and "offline" in str(other.error)


# -- hostile files -------------------------------------------------------------------------------


def test_a_directory_given_as_the_file(tmp_path: Path) -> None:
    result = invoke("urls", str(tmp_path))
    assert result.exit_code == 3
    assert "a directory, not a file" in result.stderr


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("urls", str(tmp_path / "nothing.xml"))
    assert result.exit_code == 2
    assert "no such file" in result.stderr


def test_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.xml"
    os.mkfifo(fifo)
    proc = run("urls", str(fifo), timeout=30)
    assert proc.returncode == 3, proc.stderr
    assert b"not a regular file" in proc.stderr


def test_a_file_above_the_cap_is_cut(tmp_path: Path) -> None:
    path = tmp_path / "big.xml.gz"
    many = [f"https://example.com/{n:06d}" for n in range(5000)]
    path.write_bytes(gzip.compress(urlset(many).encode()))
    walk = sitescout.iter_urls(path, max_document_bytes=20_000)
    got = [e.url for e in walk]
    assert 0 < len(got) < len(many)
    assert got == many[: len(got)]
    assert any("20000-byte document limit" in w for w in walk.report.warnings)


def test_a_cut_gzip_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "cut.xml.gz"
    path.write_bytes(gzip.compress(urlset(PAGES).encode())[:-12])
    result = invoke("urls", str(path), "--json")
    assert result.exit_code in (1, 3)
    assert "end marker" in result.stderr


def test_a_file_that_is_not_a_sitemap(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text("<!doctype html><html><body>hello</body></html>")
    result = invoke("urls", str(path))
    assert result.exit_code == 3
    assert "not a sitemap" in result.stderr.lower()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_an_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset(PAGES))
    path.chmod(0)
    result = invoke("urls", str(path))
    assert result.exit_code == 3
    assert "permission denied" in result.stderr


# -- options ---------------------------------------------------------------------------------


def test_options_are_checked_in_the_constructor(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="maps"):
        WalkOptions(maps=(("not a url", str(tmp_path)),))
    with pytest.raises(UsageError, match="maps"):
        WalkOptions(maps=(("https://example.com/", str(tmp_path / "none")),))
    with pytest.raises(UsageError, match="maps"):
        WalkOptions(maps="https://example.com/=x")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="offline"):
        WalkOptions(offline="yes")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="offline"):
        WalkOptions(offline=True, crawl=True)
    assert WalkOptions(maps=[("https://example.com/", tmp_path)]).maps == (  # type: ignore[list-item]
        ("https://example.com/", str(tmp_path)),
    )
    # A bare origin covers that host only, not `https://example.com.evil/`.
    assert WalkOptions(maps=(("https://example.com", str(tmp_path)),)).maps == (
        ("https://example.com/", str(tmp_path)),
    )
    with pytest.raises(UsageError, match="URL-PREFIX=DIR"):
        raise_map_error()


def raise_map_error() -> None:
    from sitescout.cli._flags import parse_maps

    parse_maps(["https://example.com/"])


@pytest.mark.parametrize("arg", ["./nothing", "sitemap.xml", "out/urls.txt.gz"])
def test_a_path_that_names_no_file_says_so(
    tmp_path: Path, arg: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("urls", arg)
    assert result.exit_code == 2
    assert result.stderr == f"error: no such file: {arg}\n"


def test_report_walks_a_sitemap_file_and_reads_an_inventory_by_its_start(tmp_path: Path) -> None:
    sitemap = tmp_path / "exported"  # no suffix either way: the first bytes tell
    sitemap.write_text(urlset(PAGES))
    inventory = tmp_path / "saved"
    inventory.write_text(json.dumps({"url": PAGES[0]}) + "\n")
    walked = invoke("report", str(sitemap), "-o", str(tmp_path / "a.html"))
    assert walked.exit_code == 0 and "via user file://" in walked.stderr
    read = invoke("report", str(inventory), "-o", str(tmp_path / "b.html"))
    assert read.exit_code == 0 and "via user" not in read.stderr
    assert "report: 1 URLs" in read.stderr


def test_a_symlinked_child_of_a_local_index_stays_in_its_folder(tmp_path: Path) -> None:
    (tmp_path / "secret.xml").write_text(urlset(SECRET))
    site = tmp_path / "site"
    site.mkdir()
    (site / "ok.xml").write_text(urlset(PAGES))
    (site / "link.xml").symlink_to(tmp_path / "secret.xml")
    (site / "index.xml").write_text(sitemapindex(["ok.xml", "link.xml"]))
    result = invoke("urls", str(site / "index.xml"), "--json")
    assert urls_of(result.stdout) == PAGES
    errors = json.loads(result.stderr)["errors"]
    assert [e["url"] for e in errors] == [(site / "link.xml").as_uri()]
    assert "leaves its folder" in errors[0]["error"]
    assert result.exit_code == 1


# -- --sitemap FILE: the site given by URL, its sitemap from disk ------------------------------


def test_sitemap_option_reads_a_file_for_a_site_given_by_url(site: Site, tmp_path: Path) -> None:
    site.add("/remote.xml", urlset(MORE))
    (tmp_path / "maps" / "parts").mkdir(parents=True)
    (tmp_path / "maps" / "parts" / "one.xml").write_text(urlset(PAGES))
    (tmp_path / "secret.xml").write_text(urlset(SECRET))
    index = sitemapindex(["parts/one.xml", site.url + "/remote.xml", "../secret.xml"])
    root = tmp_path / "maps" / "index.xml.gz"
    root.write_bytes(gzip.compress(index.encode()))
    result = invoke("urls", site.url + "/", "--sitemap", str(root), "-f", "txt", "--json")
    assert result.exit_code == 0, result.stderr
    assert sorted(result.stdout.split()) == sorted(PAGES + MORE)
    summary = json.loads(result.stderr)
    assert summary["source"] == "user" and summary["source_url"] == root.as_uri()
    assert [m["raw"] for m in summary["malformed_examples"]] == ["../secret.xml"]
    # No discovery: the only request is the http child the index names.
    assert dict(site.hits) == {"/remote.xml": 1}

    result = invoke("urls", site.url + "/", "--sitemap", str(root), "-f", "txt", "--offline")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split() == PAGES
    assert site.hits["/remote.xml"] == 1  # --offline: not fetched again


def test_sitemap_option_takes_stdin_and_file_urls(site: Site, tmp_path: Path) -> None:
    proc = run("urls", site.url + "/", "--sitemap", "-", "-f", "txt", data=urlset(PAGES).encode())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().split() == PAGES
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset(MORE))
    result = invoke("urls", site.url + "/", "--sitemap", path.as_uri(), "-f", "txt")
    assert result.exit_code == 0 and result.stdout.split() == MORE
    assert site.total_hits() == 0


def test_sitemap_option_names_a_missing_file(site: Site, tmp_path: Path) -> None:
    result = invoke("urls", site.url + "/", "--sitemap", str(tmp_path / "nope.xml"))
    assert result.exit_code == 2
    assert "no such file" in result.stderr
    assert site.total_hits() == 0


def test_sitemap_option_as_a_path_in_the_library(site: Site, tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset(PAGES))
    options = WalkOptions(sitemap=path)  # type: ignore[arg-type]  # a path is taken at run time
    assert options.sitemap == path.as_uri()
    assert [e.url for e in sitescout.iter_urls(site.url + "/", options)] == PAGES
    with pytest.raises(UsageError, match="sitemap must be an http"):
        WalkOptions(sitemap="ftp://example.com/sitemap.xml")
