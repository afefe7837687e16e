"""httpcore's network on asyncio itself, and the transport that hands its pool to httpx.

httpcore reaches the network through anyio by default: every read and write enters a cancel
scope and asks which event loop runs, and the pool, each time a request starts or ends, asks
every idle connection whether its server closed it (`is_readable`) by building the socket's
attribute table and polling the socket. On a walk of a few hundred documents that was most of
httpcore's time. `AsyncioBackend` does the same work with a plain asyncio `Protocol`: the event
loop reads each socket as bytes arrive, so whether an idle connection has anything to say (bytes
or its end) is known without a system call, and a read of bytes already here does not wait.

What a read may hold is bounded: past `_PAUSE_ABOVE` buffered bytes the socket is not read until
the reader catches up, so a fast server does not fill memory ahead of a slow parser (the rest
waits in the kernel, as it did under anyio).

`PoolTransport` is httpx's transport over an httpcore pool of such connections (httpx has no
public way to give its own transport a network backend: this is the custom-transport route its
documentation describes), with httpcore's errors raised as httpx's.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import ipaddress
import socket
import ssl
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import Any

import httpcore
import httpx

# Bytes received and not yet read above which the socket is not read: one read of httpcore's
# (64 KiB) and a little more.
_PAUSE_ABOVE = 96 * 1024


class _Connection(asyncio.Protocol):
    """What the event loop delivers on one socket, kept for `_Stream` to read."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.paused = False  # reading paused: the reader is behind
        self.ended = False  # the server sent its end, or the connection is gone
        self.lost: Exception | None = None  # why the connection was lost, when not cleanly
        self.writable = True  # False while the transport's write buffer is over its mark
        self.waiter: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.buffered += len(data)
        if self.buffered > _PAUSE_ABOVE and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.ended = True
        self._wake()
        return False  # the transport closes itself; nothing more is sent on a finished answer

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self.lost = exc
        self.writable = True
        self._wake()

    def pause_writing(self) -> None:
        self.writable = False

    def resume_writing(self) -> None:
        self.writable = True
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def take(self, max_bytes: int) -> bytes:
        chunk = self.chunks.popleft()
        if len(chunk) > max_bytes:
            self.chunks.appendleft(chunk[max_bytes:])
            chunk = chunk[:max_bytes]
        self.buffered -= len(chunk)
        if self.paused and self.buffered <= _PAUSE_ABOVE // 2 and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return chunk

    async def wait(self, seconds: float | None) -> None:
        """Until `_wake` (bytes, the end, room to write); TimeoutError after `seconds`."""
        assert self.waiter is None, "one wait at a time: HTTP/1.1 reads or writes, not both"
        waiter = self.waiter = asyncio.get_running_loop().create_future()
        try:
            async with asyncio.timeout(seconds):
                await waiter
        finally:
            self.waiter = None


class _Stream(httpcore.AsyncNetworkStream):
    def __init__(self, connection: _Connection) -> None:
        self._connection = connection
        self._tls = False

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109 - httpcore's interface
        connection = self._connection
        while not connection.chunks and not connection.ended:
            try:
                await connection.wait(timeout)
            except builtins.TimeoutError as exc:
                raise httpcore.ReadTimeout(f"no data in {timeout:g} s") from exc
        if connection.chunks:
            return connection.take(max_bytes)
        if connection.lost is not None:
            raise httpcore.ReadError(str(connection.lost)) from connection.lost
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109 - httpcore's interface
        connection = self._connection
        if not buffer:
            return
        if connection.ended or connection.transport is None or connection.transport.is_closing():
            why = connection.lost or "the connection is closed"
            raise httpcore.WriteError(str(why))
        connection.transport.write(buffer)
        while not connection.writable and not connection.ended:
            try:
                await connection.wait(timeout)
            except builtins.TimeoutError as exc:
                raise httpcore.WriteTimeout(f"could not send in {timeout:g} s") from exc
        if connection.lost is not None:
            raise httpcore.WriteError(str(connection.lost)) from connection.lost

    async def aclose(self) -> None:
        transport = self._connection.transport
        if transport is None:
            return
        if self._tls:
            # No close_notify exchange (as httpcore's own backends): a server that never answers
            # it would hold the socket for the loop's TLS shutdown timeout.
            transport.abort()
        else:
            transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
    ) -> httpcore.AsyncNetworkStream:
        connection = self._connection
        assert connection.transport is not None
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport = await loop.start_tls(
                    connection.transport, connection, ssl_context, server_hostname=server_hostname
                )
        except builtins.TimeoutError as exc:
            await self.aclose()
            raise httpcore.ConnectTimeout(f"TLS handshake took over {timeout:g} s") from exc
        except OSError as exc:  # ssl.SSLError is one
            await self.aclose()
            raise httpcore.ConnectError(str(exc)) from exc
        if transport is None:  # the connection closed during the handshake
            raise httpcore.ConnectError("the connection closed during the TLS handshake")
        assert isinstance(transport, asyncio.Transport)
        connection.transport = transport
        self._tls = True
        return self

    def get_extra_info(self, info: str) -> Any:
        connection = self._connection
        if info == "is_readable":
            # The loop reads the socket as bytes arrive: an idle connection that holds bytes, or
            # its end, would answer the next request with them.
            return bool(connection.chunks) or connection.ended
        transport = connection.transport
        if transport is None:
            return None
        if info == "ssl_object":
            return transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return transport.get_extra_info("sockname")
        if info == "server_addr":
            return transport.get_extra_info("peername")
        if info == "socket":
            return transport.get_extra_info("socket")
        return None


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend on asyncio's own transports.

    A host name is resolved first and each of its addresses tried in turn, so a failure keeps
    its reason (`connection refused` has its errno), as with one address."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address else None
        try:
            async with asyncio.timeout(timeout):
                if _is_address(host):
                    addresses = [host]
                else:
                    found = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
                    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
                failure: OSError | None = None
                for address in addresses:
                    try:
                        transport, connection = await loop.create_connection(
                            _Connection, address, port, local_addr=local
                        )
                        break
                    except OSError as exc:
                        failure = exc
                else:
                    raise failure or OSError(f"no address for {host}")
        except builtins.TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"connecting to {host} took over {timeout:g} s") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        sock = transport.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return _Stream(connection)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("a walk never connects to a local socket")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


# httpcore's errors as httpx's, most specific first, as httpx's own transport maps them.
_HTTPX_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for core, mapped in _HTTPX_ERRORS:
            if isinstance(exc, core):
                raise mapped(str(exc)) from exc
        raise


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, stream: AsyncIterable[bytes]) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors():
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            with _as_httpx_errors():
                await close()


class PoolTransport(httpx.AsyncBaseTransport):
    """httpx's transport over httpcore connection pools on `backend`: one for `http://`, one
    for `https://` made at the first such request with the TLS context `tls` returns (loading
    a CA bundle costs about 30 ms, which a walk of files or of a plain-HTTP site never needs)."""

    def __init__(
        self,
        backend: httpcore.AsyncNetworkBackend,
        limits: httpx.Limits,
        tls: Callable[[], ssl.SSLContext],
    ) -> None:
        self._backend = backend
        self._limits = limits
        self._tls = tls
        self._plain: httpcore.AsyncConnectionPool | None = None
        self._secure: httpcore.AsyncConnectionPool | None = None

    def _pool(self, scheme: bytes) -> httpcore.AsyncConnectionPool:
        if scheme == b"http":
            if self._plain is None:
                # No TLS context: httpcore reads it only for an https origin, never sent here.
                self._plain = self._new_pool(None)
            return self._plain
        if self._secure is None:
            self._secure = self._new_pool(self._tls())
        return self._secure

    def _new_pool(self, context: ssl.SSLContext | None) -> httpcore.AsyncConnectionPool:
        limits = self._limits
        return httpcore.AsyncConnectionPool(
            ssl_context=context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=self._backend,
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        pool = self._pool(request.url.raw_scheme)
        with _as_httpx_errors():
            response = await pool.handle_async_request(core_request)
        assert isinstance(response.stream, AsyncIterable)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        for pool in (self._plain, self._secure):
            if pool is not None:
                await pool.aclose()
