"""The fetch layer against hostile servers, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import gzip
import math
import os
import threading
import time
import zlib
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import sitescout
from sitescout import Entry, WalkReport
from sitescout._errors import UsageError
from sitescout._http import FetchConfig, Fetcher, Response
from sitescout._http.decode import Decoder
from sitescout._http.urls import redirect_target

from .scaling import assert_linear
from .server import Reply, RequestHandler, Site, sitemapindex, urlset

FUZZ_EXAMPLES = int(os.environ.get("SITESCOUT_FUZZ_EXAMPLES", "200"))


async def collect(url: str, limit: float = 20.0, **kwargs: Any) -> tuple[list[Entry], WalkReport]:
    walk = sitescout.walk(url, **{"retries": 0, "timeout": 5.0, **kwargs})
    entries: list[Entry] = []
    async with asyncio.timeout(limit):
        async for batch in walk:
            entries.extend(batch)
    return entries, walk.report


def pages(site: Site, n: int) -> list[str]:
    return [f"{site.url}/p{i}" for i in range(n)]


# -- a gzip stream cut at a flush point ---------------------------------------------------------


def gzip_cut(text: str) -> bytes:
    """The first half of `text` gzipped and sync-flushed, with no end marker after it."""
    data = text.encode()
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    return z.compress(data[: len(data) // 2]) + z.flush(zlib.Z_SYNC_FLUSH)


@pytest.mark.parametrize("labelled", [True, False], ids=["content-encoding", "magic-bytes"])
async def test_gzip_cut_before_its_end_is_an_error_and_keeps_entries(
    site: Site, labelled: bool
) -> None:
    body = gzip_cut(urlset(pages(site, 200)))
    headers: dict[str, Any] = {"Content-Encoding": "gzip"} if labelled else {}
    site.add("/sitemap.xml.gz", body, **headers)
    entries, report = await collect(site.url + "/sitemap.xml.gz")
    assert 0 < len(entries) < 200
    assert [e.url for e in entries] == pages(site, len(entries))
    assert [d.error_class for d in report.errors] == ["NetworkError"]
    assert "compressed body ended before its end marker" in (report.errors[0].error or "")
    assert report.partial


async def test_gzip_ending_cleanly_is_no_error(site: Site) -> None:
    site.add("/sitemap.xml.gz", gzip.compress(urlset(pages(site, 50)).encode()))
    entries, report = await collect(site.url + "/sitemap.xml.gz")
    assert len(entries) == 50 and not report.errors and not report.partial


async def test_gzip_members_concatenated_are_one_document(site: Site) -> None:
    text = urlset(pages(site, 30)).encode()
    body = b"".join(gzip.compress(text[i : i + 100]) for i in range(0, len(text), 100))
    site.add("/sitemap.xml", body, Content_Encoding="gzip")
    entries, report = await collect(site.url + "/sitemap.xml")
    assert len(entries) == 30 and not report.errors


@pytest.mark.scaling
def test_decoder_work_is_linear_in_many_tiny_gzip_members() -> None:
    member = gzip.compress(b"<a/>")

    def decode(body: bytes) -> None:
        decoder = Decoder("gzip", 1 << 30)
        out = list(decoder.decode(body))
        assert decoder.ended()
        assert sum(map(len, out)) == 4 * (len(body) // len(member))

    assert_linear(lambda n: member * n, decode, 30_000)


@settings(max_examples=FUZZ_EXAMPLES, deadline=None)
@given(st.binary(max_size=2000), st.integers(min_value=1, max_value=5000))
def test_decoder_never_raises_anything_but_zlib_errors_on_garbage(data: bytes, cap: int) -> None:
    decoder = Decoder("gzip", cap)
    try:
        total = sum(map(len, decoder.decode(data)))
        total += sum(map(len, decoder.flush()))
    except zlib.error:
        return
    assert total <= cap


@settings(max_examples=FUZZ_EXAMPLES, deadline=None)
@given(
    st.binary(max_size=4000),
    st.floats(min_value=0.0, max_value=1.0),
    st.lists(st.integers(min_value=1, max_value=700), min_size=1, max_size=20),
)
def test_a_gzip_body_cut_anywhere_is_seen_as_cut(
    data: bytes, where: float, sizes: list[int]
) -> None:
    assume(not data.startswith(b"\x1f\x8b"))  # a gzip inside the gzip would be unpacked too
    body = gzip.compress(data)
    cut = int(len(body) * where)
    decoder = Decoder("gzip", 1 << 20)
    out: list[bytes] = []
    pos, i = 0, 0
    while pos < cut:  # bounded: every step moves on by at least one byte
        step = sizes[i % len(sizes)]
        out += list(decoder.decode(body[pos : min(cut, pos + step)]))
        pos, i = pos + step, i + 1
    out += list(decoder.flush())
    assert data.startswith(b"".join(out))
    assert decoder.ended() is (cut in (0, len(body)))


# -- Retry-After within the time limit ----------------------------------------------------------


@pytest.mark.parametrize(
    "wait", ["999999", "Fri, 31 Dec 9999 23:59:59 GMT"], ids=["seconds", "year-9999"]
)
async def test_retry_after_beyond_the_time_left_ends_the_fetch_at_once(
    site: Site, wait: str
) -> None:
    site.add("/s.xml", status=503, Retry_After=wait)
    started = time.monotonic()
    _, report = await collect(site.url + "/s.xml", limit=8.0, retries=2, timeout=2.0, deadline=2.0)
    assert time.monotonic() - started < 1.5
    assert site.hits["/s.xml"] == 1
    assert [d.error_class for d in report.errors] == ["HTTPError"]
    assert "HTTP 503" in (report.errors[0].error or "")
    assert "the server asked to wait" in (report.errors[0].error or "")


async def test_retries_and_backoff_share_one_time_limit(site: Site) -> None:
    site.add("/s.xml", status=503)
    started = time.monotonic()
    _, report = await collect(site.url + "/s.xml", limit=8.0, retries=5, backoff=0.4, timeout=1.0)
    elapsed = time.monotonic() - started
    assert elapsed < 1.6, elapsed
    assert [d.error_class for d in report.errors] == ["HTTPError"]


async def test_retry_after_that_fits_is_still_honoured(site: Site) -> None:
    ok = Reply(200, urlset(pages(site, 2)).encode())
    replies = iter([Reply(429, b"", {"Retry-After": "1"}), ok])
    site.handle("/s.xml", lambda _h: next(replies, ok))
    started = time.monotonic()
    entries, report = await collect(site.url + "/s.xml", retries=2, timeout=5.0)
    assert time.monotonic() - started >= 0.9
    assert len(entries) == 2 and not report.errors


# -- malformed Location headers -----------------------------------------------------------------


@pytest.mark.parametrize(
    "location",
    [
        "http://127.0.0.1:99999/x.xml",
        "http://[::1/x.xml",
        "http://[zz::1]/x.xml",
        "ftp://127.0.0.1/x.xml",
        "javascript:alert(1)",
        "http://:80/x.xml",
        "http://127.0.0.1:8\x00/x.xml",
        "http://exa\tmple.com/x.xml",
    ],
)
async def test_malformed_location_is_a_network_error(site: Site, location: str) -> None:
    def redirect(h: RequestHandler) -> None:
        # Written by hand: the server's own header writer would refuse some of these.
        raw = f"HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n"
        h.wfile.write(raw.encode("latin-1"))
        h.close_connection = True

    site.handle("/index.xml", lambda _h: Reply(200, sitemapindex([f"{site.url}/r.xml"]).encode()))
    site.handle("/r.xml", redirect)
    _, report = await collect(site.url + "/index.xml")
    assert [d.error_class for d in report.errors] == ["NetworkError"], report.errors
    message = report.errors[0].error or ""
    # A NUL makes the whole header line illegal: the response itself is refused.
    assert "redirect to an unusable URL" in message or "illegal header" in message, message


@pytest.mark.scaling
def test_location_checks_are_linear_in_the_header_length() -> None:
    def location(n: int) -> str:
        # Dot segments and a long query: the URL resolution and the checks of every hop.
        return "/" + "a/../" * n + "x.xml?" + "q=1&" * n

    def check(value: str) -> None:
        redirect_target("http://127.0.0.1:8000/dir/s.xml", value)

    # The larger one stays under httpx's URL length limit.
    assert_linear(location, check, 1500)


# -- smaller items ------------------------------------------------------------------------------


async def test_read_timeout_is_labelled_read(site: Site, release: threading.Event) -> None:
    def slow(_h: RequestHandler) -> Reply:
        release.wait(3)
        return Reply(200, urlset([]).encode())

    site.handle("/slow.xml", slow)
    config = FetchConfig(timeout=0.5, retries=0)
    async with Fetcher(config) as fetcher:
        resp = await fetcher.fetch(site.url + "/slow.xml", _ignore, time_limit=5.0)
    assert resp.error is not None
    assert str(resp.error).startswith("read timeout"), str(resp.error)


@pytest.mark.parametrize(("encoding", "package"), [("br", "brotli"), ("zstd", "zstd")])
async def test_undecodable_encoding_names_the_codec(
    site: Site, encoding: str, package: str
) -> None:
    if encoding == "br":
        try:
            import brotli  # noqa: F401
        except ImportError:
            pass
        else:
            pytest.skip("brotli is installed")
    site.add("/s.xml", b"\x8b\x01\x80garbage", Content_Encoding=encoding)
    _, report = await collect(site.url + "/s.xml")
    assert [d.error_class for d in report.errors] == ["NetworkError"]
    message = report.errors[0].error or ""
    assert encoding in message and package in message
    assert "not XML" not in message


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("timeout", 0),
        ("timeout", -1.0),
        ("timeout", math.inf),
        ("timeout", math.nan),
        ("connect_timeout", 0),
        ("connect_timeout", math.inf),
        ("retries", -1),
        ("max_redirects", -1),
        ("backoff", -0.1),
        ("backoff", math.nan),
        ("retry_after_cap", -1),
        ("max_document_bytes", 0),
        ("per_host", 0),
        ("user_agent", ""),
        ("user_agent", "bot\r\nX-Injected: 1"),
        ("user_agent", "bot\n"),
    ],
)
def test_fetch_config_refuses_unusable_values(field: str, value: object) -> None:
    with pytest.raises(UsageError, match=field):
        FetchConfig(**{field: value})  # type: ignore[arg-type]


@pytest.mark.parametrize(("field", "value"), [("per_host", 0), ("retries", -1)])
def test_walk_refuses_unusable_fetch_options(field: str, value: int) -> None:
    with pytest.raises(UsageError, match=field):
        options: dict[str, Any] = {field: value}
        sitescout.walk("http://127.0.0.1:9/", **options)


def test_fetch_config_defaults_and_zero_retries_are_fine() -> None:
    assert FetchConfig(retries=0, max_redirects=0, backoff=0, retry_after_cap=0).retries == 0


def _ignore(_resp: Response) -> None:
    return None


def test_raw_deflate_starting_with_a_stored_block_decodes() -> None:
    # A stored block's header byte is 0x00: it is data, not padding to strip.
    z = zlib.compressobj(0, zlib.DEFLATED, -15)
    raw = z.compress(b"<urlset/>") + z.flush(zlib.Z_SYNC_FLUSH) + z.flush()
    assert raw[0] == 0
    decoder = Decoder("deflate", 1 << 20)
    assert b"".join([*decoder.decode(raw), *decoder.flush()]) == b"<urlset/>"
    assert decoder.ended()


def test_zero_padding_after_a_gzip_member_is_ignored() -> None:
    body = gzip.compress(b"<urlset/>") + b"\x00" * 40_000
    decoder = Decoder("gzip", 1 << 20)
    assert b"".join(decoder.decode(body)) == b"<urlset/>"
    assert decoder.ended()
