"""Gzip bombs cost a walk time, not memory: a compressed read that inflates to megabytes is
parsed as it is decoded, never held whole, so sixteen bombs under one index stay within an
absolute bound of peak memory (the whole `sitescout urls` process, start-up included).

The process is started from a small launcher: Linux carries the forking process's memory
high-water mark into a child's `ru_maxrss`, and this test process is large."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from collections.abc import Iterator

import pytest

from .server import Site, sitemapindex

pytestmark = pytest.mark.slow

LAUNCHER = """
import json, os, subprocess, sys
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_pid, status, usage = os.wait4(proc.pid, 0)
print(json.dumps({"rss_kib": usage.ru_maxrss, "code": os.waitstatus_to_exitcode(status)}))
"""
DECODED_MIB = 64  # each bomb inflates past the 50 MiB document cap
# (bombs, --concurrency, peak MiB): sixteen at the default concurrency, and 64 read at once.
CASES = [(16, None, 150), (64, 64, 300)]


def _bomb(origin: str) -> bytes:
    """A urlset with one page, then 64 MiB of spaces, gzipped to about 64 kB (made in pieces,
    so that this process never holds the 64 MiB either)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = (
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{origin}/page</loc></url>"
    )
    parts = [z.compress(head.encode())]
    block = b" " * (1 << 20)
    parts.extend(z.compress(block) for _ in range(DECODED_MIB))
    parts.append(z.flush())
    return b"".join(parts)


@pytest.fixture
def site() -> Iterator[Site]:
    site = Site().start()
    yield site
    site.stop()


@pytest.mark.parametrize(("count", "concurrency", "peak_mib"), CASES)
def test_gzip_bombs_under_one_index_stay_small(
    site: Site, count: int, concurrency: int | None, peak_mib: int
) -> None:
    bomb = _bomb(site.url)
    assert len(bomb) < 1 << 17
    for i in range(count):
        site.add(f"/bomb-{i}.xml.gz", bomb, Content_Type="application/octet-stream")
    site.add("/sitemap.xml", sitemapindex([f"{site.url}/bomb-{i}.xml.gz" for i in range(count)]))
    site.add("/robots.txt", f"Sitemap: {site.url}/sitemap.xml\n", Content_Type="text/plain")
    command = [sys.executable, "-m", "sitescout", "urls", site.url, "-o", os.devnull, "-q"]
    if concurrency is not None:
        command += ["--concurrency", str(concurrency)]
    ran = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *command], capture_output=True, text=True, timeout=300
    )
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert result["code"] == 1  # every bomb is cut at the cap: a partial result
    assert site.total_hits("/bomb-") == count  # each was read (to the cap), none skipped
    peak = result["rss_kib"] / 1024
    print(f"peak RSS {peak:.1f} MiB with {count} gzip bombs")  # shown with -s
    assert peak <= peak_mib, f"peak RSS {peak:.0f} MiB with {count} gzip bombs"
