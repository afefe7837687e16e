"""sitescout's robots.txt reading against protego's, over the 4,231 real robots.txt files that
protego's sdist ships (`tests/test_data/`, fetched from popular sites).

`make test` downloads the sdist once into `.venv/corpus/` (see the Makefile). The tarball is read
as it is, nothing is unpacked. Without it the test is skipped, or fails when CI=1.

Per file: the Sitemap URLs (protego's values resolved and normalized the way sitescout does), the
Crawl-delay for sitescout's user agent token and a few allow/deny answers must agree; every known
difference is listed below with its reason, and any other one fails the test.
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest
from protego import Protego

from sitescout._http import DEFAULT_USER_AGENT
from sitescout._robots import Robots, parse_robots
from sitescout._urls import normalize_url, resolve_url

CORPUS = Path(__file__).resolve().parents[1] / ".venv" / "corpus" / "protego-0.7.0.tar.gz"
DATA = "/tests/test_data/"
TOKEN = DEFAULT_USER_AGENT.split("/", 1)[0]
PATHS = ("/", "/search?q=x", "/admin/", "/wp-admin/admin-ajax.php", "/cgi-bin/x", "/private/a")

# File name -> why sitescout reads it differently from protego.
BOM = "starts with a UTF-8 BOM: protego reads its first line as an unknown directive"
KNOWN = {
    "www.aao.org": BOM,  # its first Sitemap line
    "www.business.gov.au": BOM,  # its first Sitemap line
    "www.cathaypacific.com": BOM,  # its first Sitemap line
    "www.frontiersin.org": BOM,  # its `User-agent: *` group
    "www.iherb.com": BOM,  # its `User-agent: *` group
    "www.jimmyjohns.com": BOM,  # `User-agent: *` and the next agent's `Disallow: /`
    "www.kau.edu.sa": BOM,  # its `User-agent: *` group
    "www.travelzoo.com": BOM,  # its first Sitemap line
}

pytestmark = pytest.mark.corpus


def _files() -> list[tuple[str, str]]:
    if not CORPUS.is_file():
        why = f"robots.txt corpus missing: {CORPUS} (`make test` downloads it)"
        if os.environ.get("CI") == "1":
            pytest.fail(why)
        pytest.skip(why)
    out: list[tuple[str, str]] = []
    with tarfile.open(CORPUS) as tar:
        for member in tar:
            if not member.isfile() or DATA not in member.name:
                continue
            data = tar.extractfile(member)
            assert data is not None
            # Decoded as the robots.txt fetch decodes it.
            out.append((member.name.rsplit("/", 1)[1], data.read().decode("utf-8", "replace")))
    return out


def _protego_sitemaps(rules: Protego, robots_url: str) -> list[str]:
    out: list[str] = []
    for value in rules.sitemaps:
        url = resolve_url(value, robots_url)
        if url is not None and normalize_url(url) not in out:
            out.append(normalize_url(url))
    return out


def _differences(name: str, ours: Robots, theirs: Protego) -> str:
    robots_url = f"https://{name}/robots.txt"
    delay = theirs.crawl_delay(TOKEN)
    found = []
    if ours.sitemaps != _protego_sitemaps(theirs, robots_url):
        found.append("sitemaps")
    if ours.crawl_delay != (float(delay) if delay is not None else None):
        found.append("crawl-delay")
    for path in PATHS:
        url = f"https://{name}{path}"
        if ours.allowed(url) != theirs.can_fetch(url, TOKEN):
            found.append(f"allowed {path}")
    return ", ".join(found)


def test_every_corpus_file_reads_like_protego() -> None:
    files = _files()
    assert len(files) == 4_231
    differences: dict[str, str] = {}
    for name, text in files:
        ours = parse_robots(text, f"https://{name}/robots.txt", DEFAULT_USER_AGENT)
        found = _differences(name, ours, Protego.parse(text))
        if found:
            differences[name] = found
            if KNOWN.get(name) == BOM:  # the reason holds: without the BOM protego agrees
                assert _differences(name, ours, Protego.parse(text.lstrip("\ufeff"))) == ""
    unlisted = {name: what for name, what in differences.items() if name not in KNOWN}
    assert unlisted == {}
    assert sorted(differences) == sorted(KNOWN), "a known difference is gone: update KNOWN"
