"""A start URL nothing answers: the walk says so plainly, at once, and tries nothing else.

A closed port on 127.0.0.1 (a socket bound, its port read, the socket closed) refuses every
connection. The walk's first request (robots.txt, the sitemap given, or the llms.txt candidate)
cannot connect, so no well-known path, no llms.txt and no link crawl follows; the report holds one
error and one warning, `cannot connect to http://127.0.0.1:PORT/: connection refused`, and the CLI
exits 3. A server that accepts the connection and then says nothing is not that: a timeout.
"""

from __future__ import annotations

import asyncio
import errno
import itertools
import json
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpcore
import httpx
import pytest

import sitescout
from sitescout._http import FetchConfig, Fetcher, connect_failure
from sitescout._models import Entry
from sitescout._walk import Walk

from .server import Reply, RequestHandler, Site, urlset

# Each of these walks used to take 10 s or more (five documents, each retried twice).
QUICK = 5.0


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def nowhere() -> str:
    """A site URL on 127.0.0.1 that refuses every connection."""
    return f"http://127.0.0.1:{closed_port()}"


def cannot_connect(base: str) -> str:
    return f"cannot connect to {base}/: connection refused"


async def collect(walk: Walk, seconds: float = 20.0) -> list[Entry]:
    entries: list[Entry] = []
    async with asyncio.timeout(seconds):
        async for batch in walk:
            entries.extend(batch)
    return entries


def run(*args: str, cwd: Path | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "sitescout", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )
    return proc, time.monotonic() - start


# --- the walk -------------------------------------------------------------------------------------


async def test_a_closed_port_stops_discovery_at_robots_txt(nowhere: str) -> None:
    walk = sitescout.walk(nowhere + "/")
    start = time.monotonic()
    entries = await collect(walk)
    assert time.monotonic() - start < QUICK
    report = walk.report
    assert entries == []
    assert report.warnings == [cannot_connect(nowhere)]
    [error] = report.errors
    assert (error.url, error.error_class) == (nowhere + "/robots.txt", "NetworkError")
    assert error.error is not None and "connection refused" in error.error
    assert report.documents == []  # no well-known path was tried
    assert report.llms is None  # no llms.txt ...
    assert report.crawl is None  # ... and no link crawl
    assert report.source == "none" and report.found_nothing


@pytest.mark.parametrize(
    ("options", "first"),
    [
        ({"source": "llms"}, "/llms.txt"),  # the first candidate; the second is not tried
        ({"crawl": True}, "/robots.txt"),
        ({"sitemap": "{base}/sitemap.xml"}, "/sitemap.xml"),
        ({"source": "all"}, "/robots.txt"),  # llms.txt first, then robots.txt, then nothing
    ],
    ids=["source-llms", "crawl", "sitemap-given", "source-all"],
)
async def test_every_source_stops_at_a_closed_port(
    nowhere: str, options: dict[str, Any], first: str
) -> None:
    options = {k: v.format(base=nowhere) if isinstance(v, str) else v for k, v in options.items()}
    walk = sitescout.walk(nowhere + "/", **options)
    start = time.monotonic()
    assert await collect(walk) == []
    assert time.monotonic() - start < QUICK
    report = walk.report
    assert report.warnings == [cannot_connect(nowhere)]
    assert [e.url for e in report.errors] == [nowhere + first]
    assert report.crawl is None
    assert report.found_nothing
    if options.get("source") in ("llms", "all"):
        assert report.llms is not None
        assert [url for url, _why in report.llms.rejected] == [nowhere + "/llms.txt"]


async def test_a_server_that_accepts_and_says_nothing_is_not_unreachable(
    site: Site, release: threading.Event
) -> None:
    """A timeout once connected is no proof that the next path hangs too: discovery goes on."""

    def silent(handler: RequestHandler) -> Reply | None:
        release.wait(5)
        return None

    site.handle("/robots.txt", silent)
    site.add("/sitemap.xml", urlset([site.url + "/a"]))
    walk = sitescout.walk(site.url + "/", timeout=0.5, retries=0)
    entries = await collect(walk)
    assert [e.url for e in entries] == [site.url + "/a"]
    assert not any("cannot connect" in w for w in walk.report.warnings)


# --- the fetcher ----------------------------------------------------------------------------------


async def test_a_refused_connection_is_said_plainly_and_not_retried(nowhere: str) -> None:
    async with Fetcher(FetchConfig(retries=2)) as fetcher:
        start = time.monotonic()
        resp = await fetcher.fetch(nowhere + "/robots.txt", lambda _r: None)
        assert time.monotonic() - start < 1.0  # no backoff (0.5 s, then 1 s) was waited
        assert resp.attempts == 1
        assert resp.unreachable == "connection refused"
        assert str(resp.error) == f"ConnectError: connection refused ({nowhere}/robots.txt)"
        assert fetcher.cannot_connect(nowhere + "/sitemap.xml") == "connection refused"


async def test_an_origin_that_answered_once_is_not_unreachable(site: Site) -> None:
    site.add("/a", "x")
    async with Fetcher(FetchConfig(retries=0)) as fetcher:
        assert fetcher.cannot_connect(site.url + "/a") is None  # nothing known yet
        resp = await fetcher.fetch(site.url + "/a", lambda _r: None)
        assert resp.ok and resp.unreachable is None
        site.stop()  # the port now refuses
        resp = await fetcher.fetch(site.url + "/b", lambda _r: None)
        assert resp.unreachable == "connection refused"
        assert fetcher.cannot_connect(site.url + "/") is None  # it answered before


def _chain(*errors: BaseException) -> BaseException:
    """`errors[0]` raised from `errors[1]` raised from ... (as httpx, httpcore and anyio do)."""
    for outer, inner in itertools.pairwise(errors):
        outer.__cause__ = inner
    return errors[0]


def _bad_certificate() -> ssl.SSLCertVerificationError:
    error = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] verify failed")
    error.verify_message = "self-signed certificate"  # what the ssl module sets
    return error


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            _chain(
                httpx.ConnectError("All connection attempts failed"),
                httpcore.ConnectError("All connection attempts failed"),
                OSError("All connection attempts failed"),
                ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"),
            ),
            "connection refused",
        ),
        (
            _chain(
                httpx.ConnectError("cannot resolve example.com"),
                socket.gaierror(socket.EAI_NONAME, "Name or service not known"),
            ),
            "cannot resolve example.com",
        ),
        (
            _chain(
                httpx.ConnectError("All connection attempts failed"),
                ExceptionGroup(
                    "multiple connection attempts failed",
                    [
                        OSError(errno.ENETUNREACH, "Network is unreachable"),
                        OSError(errno.EHOSTUNREACH, "No route to host"),
                    ],
                ),
            ),
            "network unreachable",
        ),
        (httpx.ConnectTimeout("timed out"), "connection timed out"),
        (
            _chain(httpx.ConnectError("[SSL: CERTIFICATE_VERIFY_FAILED]"), _bad_certificate()),
            "TLS handshake failed (self-signed certificate)",
        ),
        (httpx.ConnectError("something else"), "something else"),
    ],
    ids=["refused", "dns", "unreachable-group", "connect-timeout", "tls", "other"],
)
def test_connect_failures_are_named(error: BaseException, expected: str) -> None:
    assert connect_failure(error, "example.com") == expected


# --- the command line -----------------------------------------------------------------------------


def test_cli_urls_on_a_closed_port_says_so_and_exits_3(nowhere: str) -> None:
    proc, elapsed = run("urls", nowhere + "/")
    assert proc.returncode == 3, proc.stderr
    assert elapsed < 10  # was 12.7 s; Python's own start-up is most of what is left
    lines = proc.stderr.splitlines()
    assert lines[0] == f"warning: {cannot_connect(nowhere)}"
    assert "via none" in lines[1] and "1 errors" in lines[1]
    assert "bfs" not in proc.stderr and "link crawl" not in proc.stderr
    assert proc.stdout == ""


def test_cli_urls_json_summary_of_a_closed_port(nowhere: str) -> None:
    proc, _elapsed = run("urls", nowhere + "/", "--json")
    assert proc.returncode == 3, proc.stderr
    summary = json.loads(proc.stderr)
    assert summary["source"] == "none"
    assert summary["documents"] == 0
    assert [e["url"] for e in summary["errors"]] == [nowhere + "/robots.txt"]
    assert summary["warnings"] == [cannot_connect(nowhere)]
    assert not any(note.startswith("link crawl") for note in summary["notes"])


def test_cli_extract_on_a_closed_port_says_so(nowhere: str, tmp_path: Path) -> None:
    proc, _elapsed = run("extract", nowhere + "/", "--out", str(tmp_path / "project"))
    assert proc.returncode == 3, proc.stderr
    assert f"warning: {cannot_connect(nowhere)}" in proc.stderr.splitlines()
    assert "(link crawl)" not in proc.stdout
