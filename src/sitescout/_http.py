"""The only network I/O of sitescout (§3, §14).

One `Fetcher` per run wraps one `httpx.AsyncClient`. It streams each document into a sink as bytes
arrive, decoding `Content-Encoding` and gzip-by-magic-bytes itself so that the decoded-size cap
(default 50 MiB) also stops gzip bombs, follows redirects by hand so every hop passes the SSRF
guard, retries connection errors, 429 and 5xx with backoff, jitter and `Retry-After`, bounds every
document by a total time, and limits documents in flight per host.
"""

from __future__ import annotations

import asyncio
import builtins
import ipaddress
import logging
import random
import socket
import time
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Protocol
from urllib.parse import urljoin, urlsplit

import httpx

from . import __about__
from ._errors import (
    BlockedAddressError,
    FetchError,
    HTTPError,
    NetworkError,
    TimeoutError,
    TooManyRedirects,
)

log = logging.getLogger(__name__)

try:  # optional: only advertised when it can be decoded
    import brotli as _brotli
except ImportError:  # pragma: no cover - depends on the environment
    _brotli = None

DEFAULT_USER_AGENT = f"sitescout/{__about__.__version__} (+https://pypi.org/project/sitescout/)"
MiB = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"
_STEP = 256 * 1024  # decompression output per step: bounds memory while a bomb is cut


@dataclass(frozen=True, slots=True)
class FetchConfig:
    user_agent: str = DEFAULT_USER_AGENT
    connect_timeout: float = 8.0
    timeout: float = 30.0  # total per document: a trickling server cannot hang a walk
    max_redirects: int = 5
    retries: int = 2
    backoff: float = 0.5
    retry_after_cap: float = 30.0
    max_document_bytes: int = 50 * MiB  # decoded; beyond it a document is cut (§3)
    per_host: int = 8


class Sink(Protocol):
    """Receives decoded bytes as they arrive.

    `drain` runs after each network read: the walker awaits there to hand entries downstream
    (backpressure), and returning False stops reading the body early (a sniff has seen enough).
    """

    def feed(self, data: bytes) -> None: ...

    async def drain(self) -> bool: ...


@dataclass(slots=True)
class Response:
    """What one fetch did; `error` is set instead of raising."""

    url: str
    final_url: str
    status: int | None = None
    content_type: str = ""
    bytes: int = 0
    truncated: bool = False
    elapsed: float = 0.0
    attempts: int = 0
    redirects: list[str] = field(default_factory=list)
    error: FetchError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300


# -- SSRF guard --------------------------------------------------------------------------------

Resolver = Callable[[str, int], Awaitable[list[str]]]
_METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}


def address_class(ip: str) -> str:
    """The network class an address belongs to: public, loopback, private, link-local, other."""
    addr = ipaddress.ip_address(ip)
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    if addr in _METADATA or addr.is_link_local:
        return "link-local"
    if addr.is_loopback:
        return "loopback"
    if addr.is_private and not addr.is_global:
        return "private" if not (addr.is_reserved or addr.is_unspecified) else "other"
    if addr.is_multicast or addr.is_reserved or addr.is_unspecified:
        return "other"
    return "public" if addr.is_global else "other"


def address_allowed(ip: str, root_class: str) -> bool:
    """§14: a public walk stays public; a walk rooted in another class stays inside that class.

    Metadata and other special addresses are never allowed, whatever the root.
    """
    cls = address_class(ip)
    if cls == "other":
        return False
    if root_class == "public":
        return cls == "public"
    return cls == root_class


async def _system_resolver(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class AddressGuard:
    """Decides per URL whether the walk may connect to it (the root decides the class).

    The check resolves the host before httpx does; a DNS answer that changes between the two
    (rebinding) is not caught here — that needs a pinned-address transport, left for later.
    """

    def __init__(self, root_url: str, resolver: Resolver | None = None) -> None:
        self.root_url = root_url
        self._resolve = resolver or _system_resolver
        self._root_class: str | None = None
        self._cache: dict[str, bool] = {}

    async def root_class(self) -> str:
        if self._root_class is None:
            try:
                addrs = await self._addresses(self.root_url)
            except OSError:
                # Unresolvable root: judge by the strictest class, and ask again next time. The
                # fetch itself then fails and is recorded instead of raising out of the walk.
                return "public"
            classes = {address_class(a) for a in addrs}
            self._root_class = classes.pop() if len(classes) == 1 else "public"
        return self._root_class

    async def allowed(self, url: str) -> bool:
        host = urlsplit(url).hostname or ""
        if host in self._cache:
            return self._cache[host]
        root = await self.root_class()
        try:
            addrs = await self._addresses(url)
        except OSError:
            return True  # unresolvable: the fetch itself will fail and be recorded
        ok = bool(addrs) and all(address_allowed(a, root) for a in addrs)
        self._cache[host] = ok
        return ok

    async def _addresses(self, url: str) -> list[str]:
        parts = urlsplit(url)
        host = parts.hostname or ""
        try:
            ipaddress.ip_address(host)
            return [host]
        except ValueError:
            pass
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return await self._resolve(host, port)


# -- decoding ----------------------------------------------------------------------------------


class _Inflate:
    """zlib-family decoder with bounded output per call (gzip members, zlib or raw deflate)."""

    def __init__(self, wbits: int) -> None:
        self._wbits = wbits
        self._d = zlib.decompressobj(wbits)
        self._raw_fallback = wbits == 15

    def decode(self, data: bytes, room: int) -> tuple[list[bytes], bool]:
        """Decode `data`, producing at most `room` bytes; True when output was cut short."""
        out: list[bytes] = []
        while data and room > 0:
            try:
                chunk = self._d.decompress(data, min(room, _STEP))
            except zlib.error:
                if not self._raw_fallback:
                    raise
                # "deflate" is zlib-wrapped by the RFC, raw in practice on some servers.
                self._raw_fallback = False
                self._d = zlib.decompressobj(-15)
                continue
            self._raw_fallback = False
            out.append(chunk)
            room -= len(chunk)
            if self._d.eof:
                data = self._d.unused_data.lstrip(b"\x00")
                self._d = zlib.decompressobj(self._wbits)
            else:
                data = self._d.unconsumed_tail
        return out, bool(data)


class _Decoder:
    """Content-Encoding, then gzip by magic bytes (even on `.xml` URLs), under one size cap."""

    def __init__(self, content_encoding: str, cap: int) -> None:
        self.cap = cap
        self.bytes = 0
        self.truncated = False
        self._layers: list[_Inflate | _Brotli] = []
        for enc in reversed([e.strip().lower() for e in content_encoding.split(",")]):
            if enc in ("gzip", "x-gzip"):
                self._layers.append(_Inflate(31))
            elif enc == "deflate":
                self._layers.append(_Inflate(15))
            elif enc == "br" and _brotli is not None:
                self._layers.append(_Brotli())
        self._sniffed = False
        self._head = b""

    def decode(self, data: bytes) -> list[bytes]:
        chunks = [data]
        for layer in self._layers:
            chunks = self._through(layer, chunks)
        if not self._sniffed:
            self._head += b"".join(chunks)
            if len(self._head) < 2:
                return []
            chunks, self._head, self._sniffed = [self._head], b"", True
            if chunks[0].startswith(_GZIP_MAGIC):
                self._layers.append(_Inflate(31))
                chunks = self._through(self._layers[-1], chunks)
        return self._limit(chunks)

    def flush(self) -> list[bytes]:
        head, self._head = self._head, b""
        self._sniffed = True
        return self._limit([head]) if head else []

    def _through(self, layer: _Inflate | _Brotli, chunks: list[bytes]) -> list[bytes]:
        out: list[bytes] = []
        room = self.cap - self.bytes + 1  # one byte more than allowed reveals the cut
        for chunk in chunks:
            decoded, cut = layer.decode(chunk, room)
            out.extend(decoded)
            room -= sum(len(d) for d in decoded)
            if cut or room <= 0:
                break
        return out

    def _limit(self, chunks: list[bytes]) -> list[bytes]:
        out: list[bytes] = []
        for chunk in chunks:
            room = self.cap - self.bytes
            if len(chunk) > room:
                chunk = chunk[:room]
                self.truncated = True
            if chunk:
                out.append(chunk)
                self.bytes += len(chunk)
            if self.truncated:
                break
        return out


class _Brotli:
    def __init__(self) -> None:
        assert _brotli is not None
        self._d = _brotli.Decompressor()

    def decode(self, data: bytes, room: int) -> tuple[list[bytes], bool]:
        out = self._d.process(data)
        return [out[:room]], len(out) > room


# -- the fetcher -------------------------------------------------------------------------------


def _retry_after(value: str | None, cap: float) -> float | None:
    if not value:
        return None
    try:
        return min(max(float(value), 0.0), cap)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return min(max(when - time.time(), 0.0), cap)


class _Retry(Exception):
    def __init__(self, error: FetchError, delay: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.delay = delay


SinkFactory = Callable[[Response], Sink | None]


class Fetcher:
    """Async document fetcher; use as `async with Fetcher(config) as f: await f.fetch(...)`."""

    def __init__(
        self,
        config: FetchConfig | None = None,
        *,
        guard: AddressGuard | None = None,
        accept: str = "application/xml,text/xml;q=0.9,*/*;q=0.8",
    ) -> None:
        self.config = config or FetchConfig()
        self.guard = guard
        self._accept = accept
        self._client: httpx.AsyncClient | None = None
        self._hosts: dict[str, asyncio.Semaphore] = {}

    async def __aenter__(self) -> Fetcher:
        cfg = self.config
        encodings = "gzip, deflate, br" if _brotli is not None else "gzip, deflate"
        self._client = httpx.AsyncClient(
            headers={
                "User-Agent": cfg.user_agent,
                "Accept-Encoding": encodings,
                "Accept": self._accept,
            },
            timeout=httpx.Timeout(cfg.timeout, connect=cfg.connect_timeout),
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
            follow_redirects=False,
            trust_env=False,  # never route a walk through an environment proxy
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def _slot(self, url: str) -> asyncio.Semaphore:
        host = urlsplit(url).netloc.lower()
        sem = self._hosts.get(host)
        if sem is None:
            sem = self._hosts[host] = asyncio.Semaphore(self.config.per_host)
        return sem

    async def fetch(
        self, url: str, sink_factory: SinkFactory, *, time_limit: float | None = None
    ) -> Response:
        """Fetch `url`, streaming decoded bytes into the sink the factory returns.

        The factory sees the response (final URL, status, content type) before any byte and may
        return None to skip the body. Never raises for network trouble: see `Response.error`.
        """
        result = Response(url=url, final_url=url)
        start = time.monotonic()
        async with self._slot(url):
            await self._attempts(result, sink_factory, time_limit or self.config.timeout)
        result.elapsed = time.monotonic() - start
        return result

    async def _attempts(
        self, result: Response, sink_factory: SinkFactory, time_limit: float
    ) -> None:
        cfg = self.config
        for attempt in range(cfg.retries + 1):
            result.attempts = attempt + 1
            try:
                async with asyncio.timeout(time_limit):
                    await self._once(result, sink_factory)
                return
            except _Retry as retry:
                result.error = retry.error
                if attempt == cfg.retries:
                    return
                delay = retry.delay
                if delay is None:
                    delay = cfg.backoff * (2**attempt) * (0.5 + random.random())
                log.info("retrying %s in %.2fs: %s", result.url, delay, retry.error)
                await asyncio.sleep(delay)
            except builtins.TimeoutError:
                result.error = TimeoutError(
                    f"no complete response within {time_limit:g} s", url=result.final_url
                )
                log.warning("timeout fetching %s after %d bytes", result.final_url, result.bytes)
                return
            except FetchError as exc:
                result.error = exc
                return

    async def _once(self, result: Response, sink_factory: SinkFactory) -> None:
        assert self._client is not None, "use Fetcher as an async context manager"
        url = result.url
        seen: set[str] = set()
        result.redirects = []
        for _hop in range(self.config.max_redirects + 1):
            if self.guard is not None and not await self.guard.allowed(url):
                raise BlockedAddressError(
                    "address not allowed (SSRF guard: public walks stay on public addresses)",
                    url=url,
                )
            seen.add(url)
            result.final_url = url
            try:
                request = self._client.build_request("GET", url)
                response = await self._client.send(request, stream=True)
            except httpx.TimeoutException as exc:
                raise _Retry(NetworkError(f"connect timeout: {exc!r}", url=url)) from exc
            except (httpx.TransportError, ValueError) as exc:
                raise _Retry(NetworkError(_describe(exc), url=url)) from exc
            try:
                location = response.headers.get("location")
                if response.is_redirect and location:
                    url = urljoin(url, location.strip())
                    result.redirects.append(url)
                    if url in seen:
                        raise TooManyRedirects("redirect loop", url=url)
                    continue
                await self._body(response, result, sink_factory)
                return
            finally:
                await response.aclose()
        raise TooManyRedirects(f"more than {self.config.max_redirects} redirects", url=url)

    async def _body(
        self, response: httpx.Response, result: Response, sink_factory: SinkFactory
    ) -> None:
        status = response.status_code
        result.status = status
        result.content_type = response.headers.get("content-type", "")
        if status == 429 or status >= 500:
            delay = _retry_after(response.headers.get("retry-after"), self.config.retry_after_cap)
            raise _Retry(HTTPError(f"HTTP {status}", url=result.final_url, status=status), delay)
        if status >= 400:
            raise HTTPError(f"HTTP {status}", url=result.final_url, status=status)
        result.error = None
        sink = sink_factory(result)
        if sink is None:
            return
        encoding = response.headers.get("content-encoding", "")
        decoder = _Decoder(encoding, self.config.max_document_bytes)
        try:
            async for raw in response.aiter_raw():
                for chunk in decoder.decode(raw):
                    sink.feed(chunk)
                result.bytes = decoder.bytes
                if decoder.truncated or not await sink.drain():
                    break
            for chunk in decoder.flush():
                sink.feed(chunk)
        except zlib.error as exc:
            raise NetworkError(f"corrupt compressed body: {exc}", url=result.final_url) from exc
        except httpx.TransportError as exc:
            # Bytes already parsed stay parsed; no retry, which would only repeat them.
            msg = f"{_describe(exc)} after {decoder.bytes} bytes"
            raise NetworkError(msg, url=result.final_url) from exc
        finally:
            result.bytes = decoder.bytes
            result.truncated = decoder.truncated


def _describe(exc: BaseException) -> str:
    name = type(exc).__name__
    text = str(exc)
    return f"{name}: {text}" if text else name
