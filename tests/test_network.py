"""httpcore's connections on asyncio's own sockets (`_http.network`), against real servers on
127.0.0.1 that misbehave on purpose: closing or talking on an idle connection, sending faster
than the reader reads, refusing the connection."""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from sitescout._http.config import shared_ssl_context
from sitescout._http.failure import connect_failure, refused
from sitescout._http.guard import RoutedTransport
from sitescout._http.network import _PAUSE_ABOVE, AsyncioBackend, PoolTransport

# One read of asyncio's socket transport takes at most this much.
_LOOP_READ = 256 * 1024

Serve = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]


async def _request(reader: asyncio.StreamReader) -> bool:
    """Read one request's head; False at the connection's end."""
    try:
        await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return False
    return True


def _answer(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


class _Server:
    """An asyncio server on 127.0.0.1 that counts its connections."""

    def __init__(self, serve: Serve) -> None:
        self.serve = serve
        self.connections = 0
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        try:
            await self.serve(reader, writer, self.connections)
        finally:
            writer.close()

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def _plain(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
    """Answer every request of the connection with `plain`."""
    while await _request(reader):
        writer.write(_answer(b"plain"))
        await writer.drain()


_LIMITS = httpx.Limits(max_connections=None, max_keepalive_connections=8)


def _transport(
    tls: Callable[[], ssl.SSLContext] = shared_ssl_context,
) -> PoolTransport:
    return PoolTransport(AsyncioBackend(), _LIMITS, tls)


def _counted_tls() -> tuple[list[int], Callable[[], ssl.SSLContext]]:
    """A TLS context maker that notes each call, and its notes."""
    made: list[int] = []

    def tls() -> ssl.SSLContext:
        made.append(1)
        return shared_ssl_context()

    return made, tls


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=_transport(), timeout=5.0) as made:
        yield made


async def test_an_idle_connection_the_server_closed_is_not_reused(
    client: httpx.AsyncClient,
) -> None:
    async def once_then_close(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int
    ) -> None:
        if await _request(reader):
            writer.write(_answer(b"conn%d" % n))  # keep-alive by default, yet closed
            await writer.drain()

    server = _Server(once_then_close)
    async with asyncio.timeout(10), server as url:
        first = await client.get(url + "/a")
        await asyncio.sleep(0.1)  # the server's end reaches the idle connection
        second = await client.get(url + "/b")
    assert (first.content, second.content) == (b"conn1", b"conn2")
    assert server.connections == 2


async def test_bytes_on_an_idle_connection_keep_it_from_being_reused(
    client: httpx.AsyncClient,
) -> None:
    stray = _answer(b"stray")

    async def answer_then_talk(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int
    ) -> None:
        while await _request(reader):
            writer.write(_answer(b"conn%d" % n))
            await writer.drain()
            await asyncio.sleep(0.02)
            writer.write(stray)  # an answer to nothing asked, on the idle connection
            await writer.drain()

    server = _Server(answer_then_talk)
    async with asyncio.timeout(10), server as url:
        first = await client.get(url + "/a")
        await asyncio.sleep(0.1)
        second = await client.get(url + "/b")
    assert (first.content, second.content) == (b"conn1", b"conn2")


async def test_a_fast_server_is_read_no_further_ahead_than_the_reader(
    client: httpx.AsyncClient,
) -> None:
    body = bytes(8 << 20)

    async def flood(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        if await _request(reader):
            writer.write(_answer(body))
            await writer.drain()

    held: list[int] = []
    got = 0
    async with (
        asyncio.timeout(30),
        _Server(flood) as url,
        client.stream("GET", url + "/big") as response,
    ):
        connection = response.extensions["network_stream"]._connection
        async for piece in response.aiter_raw():
            got += len(piece)
            held.append(connection.buffered)
            await asyncio.sleep(0.002)  # a parser slower than loopback
    assert got == len(body)
    assert max(held) <= _PAUSE_ABOVE + _LOOP_READ
    assert max(held) > _PAUSE_ABOVE // 2  # it did read ahead, up to the mark


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # closed: nothing listens there now


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_a_refused_connection_says_so(client: httpx.AsyncClient, host: str) -> None:
    port = _free_port()
    with pytest.raises(httpx.ConnectError) as caught:
        async with asyncio.timeout(10):
            await client.get(f"http://{host}:{port}/")
    assert refused(caught.value)
    assert connect_failure(caught.value, host) == "connection refused"


async def test_a_silent_server_is_a_read_timeout() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await _request(reader)
        await asyncio.sleep(5)

    async with (
        httpx.AsyncClient(transport=_transport(), timeout=0.2) as client,
        asyncio.timeout(10),
        _Server(silent) as url,
    ):
        start = asyncio.get_running_loop().time()
        with pytest.raises(httpx.ReadTimeout):
            await client.get(url + "/")
        assert asyncio.get_running_loop().time() - start < 2.0


async def test_the_tls_context_is_made_at_the_first_https_request() -> None:
    """Loading a CA bundle costs about 30 ms, which a walk of plain-HTTP pages never needs."""
    made, tls = _counted_tls()
    async with (
        httpx.AsyncClient(transport=_transport(tls), timeout=5.0) as client,
        asyncio.timeout(10),
        _Server(_plain) as url,
    ):
        for _ in range(3):
            assert (await client.get(url + "/")).content == b"plain"
        assert made == []
        with pytest.raises(httpx.ConnectError):
            await client.get(f"https://127.0.0.1:{_free_port()}/")
        with pytest.raises(httpx.ConnectError):
            await client.get(f"https://127.0.0.1:{_free_port()}/")
    assert made == [1]  # once, for the pool of https connections


async def test_a_proxy_route_makes_the_tls_context_only_for_a_proxied_request() -> None:
    """With a proxy configured (or in the environment), requests that go direct still make no
    TLS context; the first one through a proxy does."""
    made, tls = _counted_tls()
    proxy = f"http://127.0.0.1:{_free_port()}"  # nothing listens: the proxied request fails

    def route(url: str) -> str | None:
        return proxy if "/via-proxy" in url else None

    transport = RoutedTransport(_transport(tls), route, None, tls, _LIMITS)
    async with (
        httpx.AsyncClient(transport=transport, timeout=5.0) as client,
        asyncio.timeout(10),
        _Server(_plain) as url,
    ):
        for _ in range(3):
            assert (await client.get(url + "/")).content == b"plain"
        assert made == []
        with pytest.raises(httpx.ConnectError):
            await client.get(url + "/via-proxy")
    assert made == [1]
