"""The fetch layer's pure pieces, without a socket: body decoders, `Retry-After`, and a `Fetcher`
over an in-memory `httpx.MockTransport` for the routing a real server adds nothing to (redirects,
size caps, retries). The same behaviours over real HTTP stay in tests/test_http_hostile.py and
tests/test_walk.py."""

from __future__ import annotations

import gzip
import time
import zlib
from collections.abc import Callable
from email.utils import formatdate

import httpx
import pytest

from sitescout._errors import HTTPError, NetworkError, TooManyRedirects, UsageError
from sitescout._http import AddressGuard, FetchConfig, Fetcher, Response
from sitescout._http.decode import Decoder, _Inflate
from sitescout._http.retry import retry_after

TEXT = b"<urlset>" + b"<url><loc>https://example.com/p</loc></url>" * 200 + b"</urlset>"


def decode_all(decoder: Decoder, body: bytes, step: int) -> bytes:
    out: list[bytes] = []
    for pos in range(0, len(body), step):  # bounded by the body's length
        out += list(decoder.decode(body[pos : pos + step]))
    out += list(decoder.flush())
    return b"".join(out)


# -- _Inflate ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wbits", "compress"),
    [
        pytest.param(31, gzip.compress, id="gzip"),
        pytest.param(15, zlib.compress, id="zlib-deflate"),
        pytest.param(
            15,
            lambda data: (lambda c: c.compress(data) + c.flush())(zlib.compressobj(wbits=-15)),
            id="raw-deflate-fallback",  # "deflate" sent raw, as some servers do
        ),
    ],
)
def test_inflate_decodes_each_zlib_family_and_sees_the_end(
    wbits: int, compress: Callable[[bytes], bytes]
) -> None:
    layer = _Inflate(wbits)
    out = list(layer.decode(compress(TEXT), 1 << 20))
    cut = layer.cut
    assert b"".join(out) == TEXT and not cut and layer.ended


def test_inflate_reads_several_gzip_members_and_zero_padding_after_them() -> None:
    body = gzip.compress(b"one ") + b"\x00" * 10 + gzip.compress(b"two")
    layer = _Inflate(31)
    out = list(layer.decode(body, 1 << 20))
    cut = layer.cut
    assert b"".join(out) == b"one two" and not cut and layer.ended


def test_inflate_stops_at_its_room_and_says_it_was_cut() -> None:
    layer = _Inflate(31)
    out = list(layer.decode(gzip.compress(TEXT), 100))
    cut = layer.cut
    assert sum(map(len, out)) == 100 and cut


def test_inflate_half_a_member_has_not_ended() -> None:
    body = gzip.compress(TEXT)
    layer = _Inflate(31)
    out = list(layer.decode(body[: len(body) // 2], 1 << 20))
    assert TEXT.startswith(b"".join(out)) and not layer.ended


def test_inflate_refuses_garbage_for_gzip() -> None:
    with pytest.raises(zlib.error):
        list(_Inflate(31).decode(b"not gzip at all", 1 << 20))


# -- Decoder -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        pytest.param("", TEXT, id="identity"),
        pytest.param("gzip", gzip.compress(TEXT), id="gzip"),
        pytest.param("x-gzip", gzip.compress(TEXT), id="x-gzip"),
        pytest.param("deflate", zlib.compress(TEXT), id="deflate"),
        pytest.param("", gzip.compress(TEXT), id="gzip-by-magic-bytes"),  # a .xml.gz as-is
        pytest.param("gzip", gzip.compress(gzip.compress(TEXT)), id="gzip-inside-gzip"),
        pytest.param("identity", TEXT, id="named-identity"),
    ],
)
@pytest.mark.parametrize("step", [1, 7, 4096])
def test_decoder_gives_the_document_whatever_the_encoding_and_chunking(
    encoding: str, body: bytes, step: int
) -> None:
    decoder = Decoder(encoding, 1 << 20)
    assert decode_all(decoder, body, step) == TEXT
    assert decoder.ended() and not decoder.truncated and decoder.bytes == len(TEXT)


@pytest.mark.parametrize("encoding", ["", "gzip"])
def test_decoder_cuts_at_the_cap_and_says_so(encoding: str) -> None:
    body = gzip.compress(TEXT) if encoding else TEXT
    decoder = Decoder(encoding, 1000)
    out = decode_all(decoder, body, 512)
    assert out == TEXT[:1000] and decoder.truncated and decoder.bytes == 1000


def test_decoder_keeps_a_one_byte_body_until_flush() -> None:
    decoder = Decoder("", 100)
    assert list(decoder.decode(b"x")) == []  # too short to tell gzip from text yet
    assert list(decoder.flush()) == [b"x"]


def test_decoder_a_cut_gzip_has_not_ended() -> None:
    body = gzip.compress(TEXT)
    decoder = Decoder("gzip", 1 << 20)
    decode_all(decoder, body[:-8], 64)  # the trailer is missing
    assert not decoder.ended()


# -- retry_after ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(None, None, id="absent"),
        pytest.param("", None, id="empty"),
        pytest.param("5", 5.0, id="seconds"),
        pytest.param("1.5", 1.5, id="fraction"),
        pytest.param("0", 0.0, id="zero"),
        pytest.param("-3", 0.0, id="negative-is-now"),
        pytest.param("nan", None, id="nan"),
        pytest.param("inf", None, id="infinite"),
        pytest.param("soon", None, id="garbage"),
        pytest.param("Wed, 21 Oct 2015 07:28:00 GMT", 0.0, id="date-in-the-past"),
    ],
)
def test_retry_after_table(value: str | None, expected: float | None) -> None:
    assert retry_after(value) == expected


def test_retry_after_an_http_date_in_the_future_is_the_seconds_until_then() -> None:
    asked = retry_after(formatdate(time.time() + 120, usegmt=True))
    assert asked is not None and 100 < asked <= 120


# -- a Fetcher over an in-memory transport -----------------------------------------------------


class Collect:
    """A sink that keeps every decoded byte."""

    def __init__(self) -> None:
        self.data = bytearray()

    def feed(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> bool:
        return True


QUICK = FetchConfig(timeout=5.0, retries=2, backoff=0.0, retry_after_cap=0.0)
Route = Callable[[httpx.Request], httpx.Response]


async def fetch(
    route: Route, url: str = "https://example.com/a", config: FetchConfig = QUICK
) -> tuple[Response, bytes, list[str]]:
    """Fetch `url` through `route`; returns the response, the body and the paths requested."""
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path)
        return route(request)

    sink = Collect()
    async with Fetcher(config, transport=httpx.MockTransport(handler)) as fetcher:
        resp = await fetcher.fetch(url, lambda _r: sink)
    return resp, bytes(sink.data), asked


def ok(data: bytes, **headers: str) -> httpx.Response:
    # A stream, not `content=`: httpx reads `content` at once, and the Fetcher reads raw bytes.
    return httpx.Response(200, headers=headers, stream=httpx.ByteStream(data))


def by_path(table: dict[str, httpx.Response]) -> Route:
    return lambda request: table.get(request.url.path, httpx.Response(404))


def redirect(location: str, status: int = 301) -> httpx.Response:
    return httpx.Response(status, headers={"Location": location})


async def test_redirects_are_followed_and_recorded() -> None:
    resp, body, asked = await fetch(
        by_path(
            {
                "/a": redirect("/b"),
                "/b": redirect("https://example.com/c", 302),
                "/c": ok(TEXT, **{"Content-Type": "text/xml"}),
            }
        )
    )
    assert resp.ok and body == TEXT and asked == ["/a", "/b", "/c"]
    assert resp.redirects == ["https://example.com/b", "https://example.com/c"]
    assert resp.final_url == "https://example.com/c" and resp.content_type == "text/xml"


async def test_a_redirect_loop_is_too_many_redirects_at_once() -> None:
    resp, _body, asked = await fetch(by_path({"/a": redirect("/b"), "/b": redirect("/a")}))
    assert isinstance(resp.error, TooManyRedirects) and "loop" in str(resp.error)
    assert asked == ["/a", "/b"]  # not retried: a loop stays a loop


async def test_more_hops_than_allowed_is_too_many_redirects() -> None:
    chain = {f"/{i}": redirect(f"/{i + 1}") for i in range(10)}
    config = FetchConfig(timeout=5.0, max_redirects=3, retries=0)
    resp, _body, asked = await fetch(by_path(chain), "https://example.com/0", config)
    assert isinstance(resp.error, TooManyRedirects) and len(asked) == 4


async def test_a_redirect_to_another_scheme_is_refused() -> None:
    resp, _body, asked = await fetch(by_path({"/a": redirect("ftp://example.com/x")}))
    assert isinstance(resp.error, NetworkError) and "unusable" in str(resp.error)
    assert asked == ["/a"]


async def test_the_size_cap_cuts_a_compressed_body() -> None:
    gz = ok(gzip.compress(TEXT), **{"Content-Encoding": "gzip"})
    config = FetchConfig(timeout=5.0, max_document_bytes=500)
    resp, body, _asked = await fetch(by_path({"/a": gz}), config=config)
    assert resp.truncated and resp.bytes == 500 and body == TEXT[:500]
    assert resp.error is None  # a cut document is kept, not failed (§3)


async def test_5xx_is_retried_then_succeeds() -> None:
    replies = iter([httpx.Response(503), httpx.Response(502), ok(TEXT)])
    resp, body, asked = await fetch(lambda _request: next(replies))
    assert resp.ok and body == TEXT and resp.attempts == 3 and len(asked) == 3


async def test_retries_run_out_with_the_last_error() -> None:
    resp, _body, asked = await fetch(lambda _request: httpx.Response(500))
    assert isinstance(resp.error, HTTPError) and resp.error.status == 500
    assert resp.attempts == 3 and len(asked) == 3


async def test_4xx_is_not_retried() -> None:
    resp, _body, asked = await fetch(lambda _request: httpx.Response(404))
    assert isinstance(resp.error, HTTPError) and resp.error.status == 404 and asked == ["/a"]


async def test_a_retry_after_beyond_the_time_left_stops_at_once() -> None:
    config = FetchConfig(timeout=2.0, retries=3, backoff=0.0)
    started = time.monotonic()
    resp, _body, asked = await fetch(
        lambda _request: httpx.Response(429, headers={"Retry-After": "3600"}), config=config
    )
    assert time.monotonic() - started < 1.0 and asked == ["/a"]
    assert isinstance(resp.error, HTTPError) and "asked to wait" in str(resp.error)


async def test_a_transport_error_is_retried_as_a_network_error() -> None:
    calls = iter([httpx.ConnectError("refused"), None])

    def flaky(request: httpx.Request) -> httpx.Response:
        error = next(calls)
        if error is not None:
            raise error
        return ok(TEXT)

    resp, body, asked = await fetch(flaky)
    assert resp.ok and body == TEXT and len(asked) == 2


def test_a_transport_and_a_guard_together_are_refused() -> None:
    transport = httpx.MockTransport(lambda _request: httpx.Response(200))
    with pytest.raises(UsageError, match="guard"):
        Fetcher(QUICK, guard=AddressGuard("https://example.com/"), transport=transport)


def test_a_fetcher_refuses_a_config_that_is_not_a_fetch_config() -> None:
    with pytest.raises(UsageError, match="FetchConfig"):
        Fetcher({"timeout": 5})  # type: ignore[arg-type]
