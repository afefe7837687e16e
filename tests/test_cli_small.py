"""Small points of the command line and the library faces: `iter_urls` inside an event loop, a
closed stdout pipe, the locale note's wording, and why `extract` has nothing to extract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import sitescout
from sitescout import NothingFoundError, UsageError
from sitescout._project import CRAWL_LOG

from .server import Site, urlset


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sitescout", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def page(title: str, *links: str) -> str:
    anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
    return (
        f"<html><head><title>{title}</title></head><body><p>{title} text</p>{anchors}</body></html>"
    )


def sitemap_site(site: Site, paths: list[str]) -> None:
    for path in paths:
        site.add(path, page(path), Content_Type="text/html")
    site.add("/sitemap.xml", urlset([site.url + path for path in paths]))


# -- iter_urls inside an event loop ---------------------------------------------------------------


async def test_iter_urls_inside_an_event_loop_names_walk() -> None:
    with pytest.raises(UsageError, match=r"iter_urls cannot run inside an event loop: .*walk\("):
        sitescout.iter_urls("http://127.0.0.1:9/")


def test_iter_urls_outside_an_event_loop_is_an_iterator() -> None:
    entries = sitescout.iter_urls("http://127.0.0.1:9/")
    try:
        assert isinstance(entries, sitescout.SyncEntries)
    finally:
        entries.close()


# -- a closed stdout pipe ends the command quietly, exit 0 ----------------------------------------


def closed_stdout(*args: str) -> tuple[int, str]:
    """Run with a stdout pipe whose reader is gone before the first line (`| head` that has
    already exited): (exit code, stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sitescout", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    proc.stdout.close()
    try:
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    return proc.returncode, err


@pytest.mark.parametrize(
    "args",
    [
        ("extract", "{url}/", "--out", "{out}"),
        ("extract", "{url}/", "--out", "{out}", "--json"),
        ("scope", "{url}"),
        ("scope", "{url}", "--json"),
        ("urls", "{url}"),
    ],
)
def test_a_closed_stdout_pipe_exits_0_without_a_word(
    site: Site, tmp_path: Path, args: tuple[str, ...]
) -> None:
    sitemap_site(site, ["/", "/about/"])
    argv = [a.format(url=site.url, out=tmp_path / "project") for a in args]
    code, err = closed_stdout(*argv)
    assert code == 0, err
    for noise in ("Traceback", "Broken", "Exception", "error"):
        assert noise not in err, err


# -- the locale note says whose choice the locale was --------------------------------------------

LOCALIZED = ["/", "/about/", "/fr/", "/fr/a-propos/"]


def test_a_chosen_locale_is_not_called_the_default(site: Site, tmp_path: Path) -> None:
    sitemap_site(site, LOCALIZED)
    proc = run("extract", site.url + "/", "--out", str(tmp_path), "--yes", "--locale", "fr")
    assert proc.returncode == 0, proc.stderr
    note = (
        "multi-locale site: extracting the chosen locale only (fr); 2 URLs in other locales skipped"
    )
    assert proc.stdout.splitlines()[1] == note
    assert "default locale" not in proc.stdout
    notes = json.loads((tmp_path / CRAWL_LOG).read_text())["runs"][0]["discovery"]["notes"]
    assert note in notes


def test_an_inferred_locale_is_still_the_default(site: Site, tmp_path: Path) -> None:
    sitemap_site(site, LOCALIZED)
    proc = run("extract", site.url + "/", "--out", str(tmp_path), "--yes")
    assert proc.returncode == 0, proc.stderr
    assert "extracting the default locale only (un-localized paths)" in proc.stdout


def test_a_chosen_locale_with_no_page_says_so(site: Site, tmp_path: Path) -> None:
    sitemap_site(site, LOCALIZED)
    proc = run("extract", site.url + "/", "--out", str(tmp_path), "--locale", "de")
    assert proc.returncode == 3
    assert proc.stderr == (
        "error: nothing to extract: none of the 4 URLs discovered is a page to extract: "
        "4 in locales other than the chosen one (de)\n"
    )


# -- nothing to extract: what really happened -----------------------------------------------------


def crawl_site(site: Site) -> None:
    links = ["/about/", "/blog/", "/contact/", "/pricing/", "/docs/"]
    site.add("/", page("Home", *links), Content_Type="text/html")
    for link in links:
        site.add(link, page(link), Content_Type="text/html")
    site.add("/private/", page("private"), Content_Type="text/html")  # linked from nowhere


def test_pages_not_among_the_discovered_ones_are_named(site: Site, tmp_path: Path) -> None:
    crawl_site(site)
    proc = run("extract", site.url + "/", "--out", str(tmp_path), "--pages", "/private/", "--crawl")
    assert proc.returncode == 3
    assert "Discovered 6 pages on" in proc.stdout
    assert "no page was discovered" not in proc.stderr
    assert proc.stderr == (
        "error: nothing to extract: the page named with --pages (/private/) is not among the "
        "6 pages discovered\n"
    )
    two = run("extract", site.url + "/", "--out", str(tmp_path), "--pages", "/private/,nope",
              "--crawl")  # fmt: skip
    assert two.returncode == 3
    assert (
        "none of the pages named with --pages (/private/, nope) is among the 6 pages" in two.stderr
    )


def test_no_page_at_all_is_still_no_page_discovered(site: Site, tmp_path: Path) -> None:
    proc = run("extract", site.url + "/", "--out", str(tmp_path), "--crawl")
    assert proc.returncode == 3
    assert proc.stderr.splitlines()[-1] == "error: nothing to extract: no page was discovered"


def test_the_library_says_the_same(site: Site, tmp_path: Path) -> None:
    crawl_site(site)
    with pytest.raises(NothingFoundError, match=r"\(/private/\) is not among the 6 pages"):
        sitescout.extract(site.url + "/", tmp_path, pages=("/private/",), crawl=True)
