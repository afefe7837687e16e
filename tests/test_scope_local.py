"""`sitescout scope` on sitemaps you already have: a path, stdin, `file://`, `--sitemap FILE`,
`--map` folders and `--offline`.

Real files in `tmp_path`; a loopback `Site` wherever a request could happen, and its hit counts
say what reached the network (zero, for `--map` and `--offline`). Every subprocess has a timeout;
no loop here is unbounded.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from sitescout import UsageError, estimate_scope
from sitescout._local import STDIN_URL
from sitescout.cli import app

from .server import Site, sitemapindex, urlset

PAGES = [f"https://example.com/fr/p/{n}" for n in range(5)] + [
    f"https://example.com/de/p/{n}" for n in range(4)
]
MORE = [f"https://example.com/q/{n}" for n in range(3)]
SECRET = [f"https://example.com/secret/{n}" for n in range(7)]


def invoke(*args: str) -> Result:
    # Wide enough that no file URL is folded across lines of the table.
    result = CliRunner().invoke(app, ["scope", *args], env={"COLUMNS": "400"})
    # A clean exit is a SystemExit (typer.Exit); anything else is a traceback the user would see.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result


def as_json(result: Result) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def run(*args: str, data: bytes = b"", timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "sitescout", "scope", *args],
        input=data,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


def local_index(folder: Path) -> Path:
    """An index on disk: a gzipped child in a subfolder, a plain one beside it, and two paths
    that leave the folder (a file is there, with more URLs than the others: reading it shows)."""
    (folder / "site" / "a").mkdir(parents=True)
    (folder / "site" / "a" / "one.xml.gz").write_bytes(gzip.compress(urlset(PAGES).encode()))
    (folder / "site" / "two.xml").write_text(urlset(MORE))
    (folder / "outside.xml").write_text(urlset(SECRET))
    index = folder / "site" / "sitemap_index.xml"
    index.write_text(
        sitemapindex(["a/one.xml.gz", "two.xml", "../outside.xml", "%2e%2e/outside.xml"])
    )
    return index


# -- the top document on disk ---------------------------------------------------------------------


def test_a_local_urlset_is_counted_exactly(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset(PAGES + MORE))
    result = invoke(str(path), "--json")
    assert result.exit_code == 0, result.output
    data = as_json(result)
    assert data["url_estimate_range"] == [12, 12]
    assert data["top_kind"] == "urlset"
    assert data["source"] == "user"
    assert data["source_url"] == path.as_uri()
    assert data["root_url"] == path.as_uri()
    assert data["top_sitemap_urls"] == [path.as_uri()]
    assert data["transport"] == "local"
    assert data["sub_sitemap_count"] == 0
    assert data["languages_detected"] == ["de", "fr"]
    assert data["llms_txt"] is None
    assert data["expected_duration_seconds"] == 5.0


def test_the_table_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset(MORE))
    result = invoke(str(path))
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if line.strip()}
    assert f"user ({path.as_uri()})" in rows["source"]
    assert "3 URLs" in rows["estimate"]
    assert rows["transport"].split() == ["transport", "local"]
    assert result.stderr == ""


def test_a_gzipped_file_is_read_by_its_magic_bytes(tmp_path: Path) -> None:
    path = tmp_path / "export.dat"  # no .gz: the bytes say gzip
    path.write_bytes(gzip.compress(urlset(PAGES).encode()))
    data = as_json(invoke(str(path), "--json"))
    assert data["url_estimate_range"] == [9, 9]
    assert data["transport"] == "local"


def test_a_file_url_is_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml.gz"
    path.write_bytes(gzip.compress(urlset(MORE).encode()))
    data = as_json(invoke(path.as_uri(), "--json"))
    assert data["url_estimate_range"] == [3, 3]
    assert data["source_url"] == path.as_uri()


def test_stdin_is_the_top_document() -> None:
    proc = run("-", "--json", data=gzip.compress(urlset(PAGES + MORE).encode()))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["url_estimate_range"] == [12, 12]
    assert data["source_url"] == STDIN_URL
    assert data["transport"] == "local"
    proc = run("-", data=urlset(MORE).encode())
    assert proc.returncode == 0, proc.stderr
    assert f"user ({STDIN_URL})" in proc.stdout.decode()


def test_a_local_index_gives_its_child_count_and_range(tmp_path: Path) -> None:
    index = local_index(tmp_path)
    result = invoke(str(index), "--json")
    assert result.exit_code == 0, result.output
    data = as_json(result)
    assert data["top_kind"] == "sitemapindex"
    assert data["sub_sitemap_count"] == 2  # the two paths that leave the folder are no children
    assert data["url_estimate_range"] == [2_000, 100_000]
    assert data["sampled_children"] == 0
    assert data["expected_duration_seconds"] == 5.0
    assert "2 child sitemap paths leave the index's folder: not read" in data["notes"]
    assert (
        "all 2 child sitemaps are read from disk; the expected duration does not count them"
        in (data["notes"])
    )


def test_sample_reads_relative_children_in_the_index_folder(tmp_path: Path) -> None:
    index = local_index(tmp_path)
    data = as_json(invoke(str(index), "--json", "--sample", "10"))
    assert data["sampled_children"] == 2
    # Exactly the two children: outside.xml (7 URLs) was never read.
    assert data["url_estimate_range"] == [len(PAGES) + len(MORE)] * 2
    assert data["languages_detected"] == ["de", "fr"]
    assert any(n.startswith("range refined from 2 of 2 child sitemaps") for n in data["notes"])


def test_sample_on_a_gzipped_index_with_a_nested_child(tmp_path: Path) -> None:
    (tmp_path / "maps" / "deep").mkdir(parents=True)
    (tmp_path / "maps" / "deep" / "p.xml.gz").write_bytes(gzip.compress(urlset(PAGES).encode()))
    root = tmp_path / "maps" / "index.xml.gz"
    root.write_bytes(gzip.compress(sitemapindex(["deep/p.xml.gz"]).encode()))
    data = as_json(invoke(str(root), "--json", "--sample", "1"))
    assert data["url_estimate_range"] == [9, 9]
    assert data["sampled_children"] == 1


def test_relative_children_of_stdin_have_no_folder(tmp_path: Path) -> None:
    proc = run("-", "--json", "--sample", "3", data=sitemapindex(["a.xml", "b.xml"]).encode())
    data = json.loads(proc.stdout)
    assert data["sub_sitemap_count"] == 0
    assert (
        "2 child sitemap paths cannot be read: a relative path has no folder on stdin"
        in (data["notes"])
    )


# -- children on the network ------------------------------------------------------------------


def test_an_http_child_of_a_local_index_is_fetched_when_sampled(site: Site, tmp_path: Path) -> None:
    site.add("/remote.xml", urlset(SECRET))
    (tmp_path / "local.xml").write_text(urlset(MORE))
    root = tmp_path / "index.xml"
    root.write_text(sitemapindex(["local.xml", site.url + "/remote.xml"]))
    data = as_json(invoke(str(root), "--json", "--sample", "2"))
    assert site.hits["/remote.xml"] == 1
    assert site.total_hits() == 1  # no robots.txt, no llms.txt: the file is the top document
    assert data["url_estimate_range"] == [len(MORE) + len(SECRET)] * 2
    assert data["transport"] == "local"
    assert any(
        n.startswith("1 of 2 child sitemaps are read from disk; the expected duration counts")
        for n in data["notes"]
    )


def test_the_duration_counts_the_children_fetched_over_the_network(tmp_path: Path) -> None:
    remote = [f"https://example.com/s/{n}.xml" for n in range(80)]
    local = [f"l{n}.xml" for n in range(400)]
    root = tmp_path / "index.xml"
    root.write_text(sitemapindex(local + remote))
    data = as_json(invoke(str(root), "--json"))
    assert data["sub_sitemap_count"] == 480
    assert data["url_estimate_range"] == [480_000, 24_000_000]
    # 80 / 8 × 1.5 s = 15 s; the 400 on disk cost nothing (all 480 would be 90 s).
    assert data["expected_duration_seconds"] == 15.0
    assert data["expected_duration_range"] == [7.5, 22.5]
    offline = as_json(invoke(str(root), "--json", "--offline"))
    assert offline["url_estimate_range"] == [400_000, 20_000_000]
    assert offline["expected_duration_seconds"] == 5.0
    assert (
        "offline: 80 of 480 child sitemaps are http(s) and would not be fetched; the estimate "
        "counts the other 400" in offline["notes"]
    )


def test_offline_samples_only_children_on_disk(site: Site, tmp_path: Path) -> None:
    site.add("/remote.xml", urlset(SECRET))
    (tmp_path / "local.xml").write_text(urlset(MORE))
    root = tmp_path / "index.xml"
    root.write_text(sitemapindex([site.url + "/remote.xml", "local.xml"]))
    result = invoke(str(root), "--json", "--sample", "2", "--offline")
    assert result.exit_code == 0, result.output
    assert site.total_hits() == 0
    data = as_json(result)
    assert data["sampled_children"] == 1
    assert data["url_estimate_range"] == [3, 3]


# -- --sitemap FILE -------------------------------------------------------------------------------


def test_sitemap_file_for_a_site_url(site: Site, tmp_path: Path) -> None:
    site.add("/robots.txt", f"Sitemap: {site.url}/sitemap.xml\n", Content_Type="text/plain")
    site.add("/sitemap.xml", urlset(SECRET))
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset(PAGES))
    result = invoke(site.url + "/", "--sitemap", str(path), "--json")
    assert result.exit_code == 0, result.output
    data = as_json(result)
    assert site.total_hits() == 0  # no discovery, and no llms.txt for a sitemap given
    assert data["root_url"] == site.url + "/"
    assert data["source"] == "user"
    assert data["source_url"] == path.as_uri()
    assert data["url_estimate_range"] == [9, 9]
    assert data["transport"] == "local"


def test_sitemap_from_stdin_for_a_site_url(site: Site) -> None:
    proc = run(site.url + "/", "--sitemap", "-", "--json", data=urlset(MORE).encode())
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["source_url"] == STDIN_URL and data["url_estimate_range"] == [3, 3]
    assert site.total_hits() == 0


def test_sitemap_file_in_the_library(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset(MORE))
    est = estimate_scope("https://example.invalid/", sitemap=path, offline=True)
    assert est.found and est.url_estimate_range == (3, 3)
    assert est.source_url == path.as_uri() and est.transport == "local"
    est = estimate_scope(path)  # a path as the URL: the top document
    assert est.found and est.root_url == path.as_uri()


# -- --map and --offline --------------------------------------------------------------------------


def built_site(site: Site, folder: Path) -> None:
    """A static site's build output; the server holds other content at the same paths, so a
    document read from the network would change the counts."""
    (folder / "s").mkdir(parents=True)
    (folder / "robots.txt").write_text(f"User-agent: *\nSitemap: {site.url}/sitemap.xml\n")
    (folder / "sitemap.xml").write_text(
        sitemapindex([f"{site.url}/s/pages.xml.gz", f"{site.url}/s/more.xml"])
    )
    (folder / "s" / "pages.xml.gz").write_bytes(gzip.compress(urlset(PAGES).encode()))
    (folder / "s" / "more.xml").write_text(urlset(MORE))
    site.add("/robots.txt", f"Sitemap: {site.url}/other.xml\n", Content_Type="text/plain")
    for path in ("/sitemap.xml", "/other.xml", "/s/pages.xml.gz", "/s/more.xml"):
        site.add(path, urlset(SECRET))
    site.add("/llms.txt", "# Site\n\n- [A](/a)\n", Content_Type="text/plain")


def test_map_reads_the_built_site_from_disk(site: Site, tmp_path: Path) -> None:
    built_site(site, tmp_path / "public")
    result = invoke(
        site.url + "/", "--map", f"{site.url}/={tmp_path / 'public'}", "--json", "--sample", "5"
    )
    assert result.exit_code == 0, result.output
    assert site.total_hits() == 0  # robots.txt, the index, its children, llms.txt: all on disk
    data = as_json(result)
    assert data["source"] == "robots.txt"
    assert data["source_url"] == site.url + "/robots.txt"
    assert data["top_sitemap_urls"] == [site.url + "/sitemap.xml"]
    assert data["sub_sitemap_count"] == 2
    assert data["sampled_children"] == 2
    assert data["url_estimate_range"] == [len(PAGES) + len(MORE)] * 2
    assert data["transport"] == "local"
    assert data["llms_txt"] is None  # none in the folder; the server's was not asked


def test_offline_with_a_partial_map_never_requests(site: Site, tmp_path: Path) -> None:
    """Only /maps/ is on disk: robots.txt, the well-known paths and the http child are not."""
    built_site(site, tmp_path / "unused")
    maps = tmp_path / "maps"
    maps.mkdir()
    (maps / "index.xml").write_text(
        sitemapindex([f"{site.url}/maps/a.xml", f"{site.url}/s/more.xml"])
    )
    (maps / "a.xml").write_text(urlset(PAGES))
    result = invoke(
        site.url + "/maps/index.xml",
        "--map",
        f"{site.url}/maps/={maps}",
        "--offline",
        "--sample",
        "5",
        "--json",
    )
    assert result.exit_code == 0, result.output
    assert site.total_hits() == 0
    data = as_json(result)
    assert data["url_estimate_range"] == [9, 9]  # a.xml read; more.xml not fetched
    assert data["sampled_children"] == 1
    assert any(n.startswith("offline: 1 of 2 child sitemaps are http(s)") for n in data["notes"])

    discovered = invoke(site.url + "/", "--map", f"{site.url}/maps/={maps}", "--offline", "--json")
    assert discovered.exit_code == 3, discovered.output
    assert site.total_hits() == 0
    notes = as_json(discovered)["notes"]
    assert "offline: 4 http(s) documents not fetched" in notes  # robots.txt, 3 well-known paths
    assert as_json(discovered)["transport"] == "unknown"


def test_offline_without_a_map_makes_no_request(site: Site) -> None:
    site.add("/robots.txt", f"Sitemap: {site.url}/sitemap.xml\n", Content_Type="text/plain")
    site.add("/sitemap.xml", urlset(PAGES))
    result = invoke(site.url + "/", "--offline", "--json")
    assert result.exit_code == 3, result.output
    assert site.total_hits() == 0
    data = as_json(result)
    assert data["top_kind"] is None and data["url_estimate_range"] == [0, 0]
    assert data["transport"] == "unknown"
    assert len(data["notes"]) == 1 and data["notes"][0].startswith("offline: nothing was read")
    table = invoke(site.url + "/", "--offline")
    assert table.exit_code == 3 and "offline: nothing was read" in table.stdout
    assert site.total_hits() == 0
    # The library says the same, and answers found=False rather than raising.
    est = estimate_scope(site.url + "/", offline=True)
    assert not est.found and site.total_hits() == 0


# -- what cannot be read ---------------------------------------------------------------------------


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke(str(tmp_path / "nothing.xml"))
    assert result.exit_code == 2
    assert result.stderr == f"error: no such file: {tmp_path / 'nothing.xml'}\n"
    result = invoke("https://example.invalid/", "--sitemap", str(tmp_path / "nothing.xml"))
    assert result.exit_code == 2
    assert "no such file" in result.stderr


def test_a_directory_is_a_note_not_a_traceback(tmp_path: Path) -> None:
    result = invoke(str(tmp_path), "--json")
    assert result.exit_code == 3
    data = as_json(result)
    assert data["top_kind"] is None
    assert any("a directory, not a file" in n for n in data["notes"]), data["notes"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_an_unreadable_file_is_a_note(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset(PAGES))
    path.chmod(0)
    result = invoke(str(path), "--json")
    assert result.exit_code == 3
    assert any("permission denied" in n for n in as_json(result)["notes"])


def test_a_file_that_is_not_a_sitemap(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text("<!doctype html><html><body>hello</body></html>")
    result = invoke(str(path), "--json")
    assert result.exit_code == 3
    notes = as_json(result)["notes"]
    assert notes == [f"top sitemap {path.as_uri()} failed: not a sitemap"]


@pytest.mark.parametrize("escape", ["%2e%2e/secret.xml", "../secret.xml"])
def test_map_never_reads_above_its_folder(site: Site, tmp_path: Path, escape: str) -> None:
    public = tmp_path / "public"
    public.mkdir()
    (tmp_path / "secret.xml").write_text(urlset(SECRET))
    result = invoke(f"{site.url}/{escape}", "--map", f"{site.url}/={public}", "--offline", "--json")
    assert result.exit_code == 3, result.output
    assert site.total_hits() == 0
    data = as_json(result)
    assert data["url_estimate_range"] == [0, 0] and data["top_kind"] is None
    assert "secret/" not in result.stdout  # no URL of the file above the folder was counted


def test_map_refuses_a_symlink_out_of_its_folder(site: Site, tmp_path: Path) -> None:
    public = tmp_path / "public"
    public.mkdir()
    (tmp_path / "secret.xml").write_text(urlset(SECRET))
    (public / "sitemap.xml").symlink_to(tmp_path / "secret.xml")
    result = invoke(site.url + "/sitemap.xml", "--map", f"{site.url}/={public}", "--json")
    assert result.exit_code == 3, result.output
    assert site.total_hits() == 0
    data = as_json(result)
    assert data["url_estimate_range"] == [0, 0]
    assert any("leaves its folder" in n for n in data["notes"]), data["notes"]


def test_a_sampled_child_that_leaves_the_map_is_refused(site: Site, tmp_path: Path) -> None:
    public = tmp_path / "public"
    public.mkdir()
    (tmp_path / "secret.xml").write_text(urlset(SECRET))
    (public / "ok.xml").write_text(urlset(MORE))
    (public / "sitemap.xml").write_text(
        sitemapindex([f"{site.url}/ok.xml", f"{site.url}/%2e%2e/secret.xml"])
    )
    result = invoke(
        site.url + "/sitemap.xml", "--map", f"{site.url}/={public}", "--sample", "2", "--json"
    )
    assert result.exit_code == 0, result.output
    assert site.total_hits() == 0
    data = as_json(result)
    assert data["sampled_children"] == 1
    assert data["url_estimate_range"] == [6, 6]  # ok.xml's 3, and the refused one assumed alike
    refused = [n for n in data["notes"] if n.startswith("sampled child")]
    assert len(refused) == 1 and "leaves its folder" in refused[0], data["notes"]


# -- the library's arguments -----------------------------------------------------------------------


def test_the_library_checks_its_arguments(tmp_path: Path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text(urlset(MORE))
    with pytest.raises(UsageError, match="offline"):
        estimate_scope(path, offline="yes")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="maps"):
        estimate_scope(path, maps=(("not a url", str(tmp_path)),))
    with pytest.raises(UsageError, match="maps"):
        estimate_scope(path, maps=(("https://example.com/", str(tmp_path / "none")),))
    with pytest.raises(UsageError, match="maps"):
        estimate_scope(path, maps="https://example.com/=x")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="no sitemap too"):
        estimate_scope(path, sitemap=path)
    with pytest.raises(UsageError, match="llms"):
        estimate_scope(path, llms_txt="https://example.com/llms.txt")
    with pytest.raises(UsageError, match="llms_txt"):
        estimate_scope("https://example.com/", llms_txt=path.as_uri())
    with pytest.raises(UsageError):
        estimate_scope("file://elsewhere/sitemap.xml")
    # A map given as a list of lists, with a path as its folder, is accepted.
    est = estimate_scope(path, maps=[["https://example.com/", tmp_path]])  # type: ignore[list-item]
    assert est.url_estimate_range == (3, 3)
