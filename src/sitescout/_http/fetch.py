"""The `Fetcher`: the one path by which every document of a walk is read.

One `Fetcher` per run wraps one `httpx.AsyncClient`. It streams each document into a sink as bytes
arrive, decoding `Content-Encoding` and gzip-by-magic-bytes itself (`decode`) so that the
decoded-size cap also stops gzip bombs, and a compressed body cut before its end marker is an
error. It follows redirects by hand, retries connection errors, 429 and 5xx with backoff, jitter
and `Retry-After` inside one time limit per document, and limits documents in flight per host.
The user's headers and credentials go to the start origin only, decided per request.

Local documents: a `file://` URL, or one under a `--map` prefix, is read from disk by `_local`
inside the same `fetch`, under the same time limit, through the same decoder and size cap, so
the walk, discovery and the budgets have one path for every document. `offline` refuses every
other URL without a request.
"""

from __future__ import annotations

import asyncio
import base64
import builtins
import contextlib
import logging
import math
import netrc
import os
import random
import time
import zlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TypeVar
from urllib.parse import urljoin, urlsplit

import httpx

from .._cookies import cookie_header
from .._errors import (
    BlockedAddressError,
    FetchError,
    FetchTimeoutError,
    HTTPError,
    NetworkError,
    TooManyRedirects,
    UsageError,
)
from .._local import LocalFiles, LocalMissing, LocalRefused, open_target, read_chunks
from .._urls import is_http_url
from .config import EnvProxies, FetchConfig, has_control, mask_url, ssl_context_for
from .decode import ACCEPT_ENCODING, Decoder, Sink, undecodable
from .failure import connect_failure, describe, refused
from .guard import AddressGuard, AddressRefused, PinnedTransport, RoutedTransport, host_port
from .pace import RATE_CLOCK

log = logging.getLogger(__package__)  # "sitescout._http": the name its records have always borne


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
    # Why no connection could be made to the URL asked for (`connection refused`, `cannot resolve
    # example.com`, ...): set when the last attempt failed before any HTTP answer came, at the
    # first hop. None when an answer came, or the failure was another (a timeout, a reset).
    unreachable: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300


def _full_origin(url: str) -> str:
    """`scheme://host:port`, the port always written: what credentials are bound to."""
    try:
        host, port = host_port(url)
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return url
    return f"{scheme}://{host.lower()}:{port}"


def _netrc_auth(host: str) -> tuple[str, str] | None:
    """The login and password `.netrc` (or `$NETRC`) holds for `host`, or None."""
    path = os.environ.get("NETRC") or os.path.join(os.path.expanduser("~"), ".netrc")
    if not os.path.isfile(path):
        return None
    try:
        found = netrc.netrc(path).authenticators(host)
    except netrc.NetrcParseError as exc:
        log.warning("cannot read %s (line %s); no credentials from it", path, exc.lineno)
        return None
    except OSError as exc:
        log.warning("cannot read %s: %s", path, exc.strerror or type(exc).__name__)
        return None
    if found is None or not found[0]:
        return None
    return found[0], found[2] or ""


def _retry_after(value: str | None) -> float | None:
    """The wait a `Retry-After` header asks for, in seconds (uncapped), or None."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    return max(seconds, 0.0) if math.isfinite(seconds) else None


class _Retry(Exception):
    def __init__(self, error: FetchError, asked: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.asked = asked  # what the server's Retry-After asked for


def _redirect_target(url: str, location: str) -> str:
    """Where a `Location` header points, or NetworkError when it is not a URL sitescout fetches."""
    location = location.strip()
    problem: str | None = None
    target = url
    if has_control(location):
        problem = "a control character in the Location"  # URL parsers would silently drop it
    else:
        try:
            target = urljoin(url, location)
        except ValueError as exc:
            problem = str(exc)
        else:
            problem = _unusable(target)
    if problem is not None:
        raise NetworkError(f"redirect to an unusable URL: {problem}", url=url)
    return target


async def _check_location(response: httpx.Response) -> None:
    # httpx resolves every Location itself and raises a bare protocol error for a bad one: say
    # what is wrong with it first.
    location = response.headers.get("location")
    if response.has_redirect_location and location:
        _redirect_target(str(response.request.url), location)


def _unusable(url: str) -> str | None:
    """Why `url` cannot be fetched (scheme, host, port, syntax), or None when it can."""
    if has_control(url):
        return "a control character in the URL"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as exc:
        return str(exc)
    if parts.scheme not in ("http", "https"):
        return f"not an http(s) URL: {parts.scheme or 'no'} scheme"
    if not parts.hostname:
        return "no host"
    try:
        httpx.URL(url)
    except httpx.InvalidURL as exc:
        return str(exc)
    return None


SinkFactory = Callable[[Response], Sink | None]
SinkT = TypeVar("SinkT", bound=Sink)


class Fetcher:
    """Async document fetcher; use as `async with Fetcher(config) as f: await f.fetch(...)`.

    `transport` replaces the network (tests pass an `httpx.MockTransport` to run in memory).
    It cannot be combined with `guard`: the guard's pinning lives in the transport it builds,
    so a guard beside an injected transport would look on while checking nothing.

    `origin`: the walk's start URL, the one origin the configured headers and credentials go to
    (default: the guard's root URL, else the first URL fetched).
    """

    def __init__(
        self,
        config: FetchConfig | None = None,
        *,
        guard: AddressGuard | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        accept: str = "application/xml,text/xml;q=0.9,*/*;q=0.8",
        origin: str | None = None,
        local: LocalFiles | None = None,
        offline: bool = False,
    ) -> None:
        if config is not None and not isinstance(config, FetchConfig):
            raise UsageError(f"config must be a FetchConfig, got {config!r}")
        if guard is not None and transport is not None:
            raise UsageError("transport and guard cannot be combined: the guard pins connections")
        self.config = config or FetchConfig()
        self.guard = guard
        self._transport = transport
        self._accept = accept
        self._client: httpx.AsyncClient | None = None
        self._hosts: dict[str, asyncio.Semaphore] = {}
        # By origin: None once a fetch there got an HTTP answer, else why the last could not
        # connect (see `cannot_connect`). One entry per origin fetched, like `_hosts`.
        self._reach: dict[str, str | None] = {}
        self._start: str | None = origin or (guard.root_url if guard is not None else None)
        self._secrets: tuple[str, dict[str, str]] | None = None  # the start origin's headers
        self._env_proxies = EnvProxies.read() if self.config.trust_env else EnvProxies()
        # Files read instead of the network (`file://` URLs, `--map` prefixes); `offline`: no
        # request at all, an http(s) URL that names no file is an error without one.
        self.local = local
        self.offline = offline

    def reads_locally(self, url: str) -> bool:
        """Whether `url` is read from disk, not requested."""
        return self.local is not None and self.local.handles(url)

    async def __aenter__(self) -> Fetcher:
        cfg = self.config
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
        self._client = httpx.AsyncClient(
            headers={
                "User-Agent": cfg.user_agent,
                "Accept-Encoding": ACCEPT_ENCODING,
                "Accept": self._accept,
            },
            timeout=httpx.Timeout(cfg.timeout, connect=cfg.connect_timeout),
            limits=limits,
            transport=self._transport_for(limits),
            verify=ssl_context_for(cfg),
            follow_redirects=False,
            event_hooks={"response": [_check_location]},
            # The environment is read here (`EnvProxies`, `ssl_context_for`, `_netrc_auth`) when
            # `trust_env` asks for it: httpx ignores its proxies beside a custom transport.
            trust_env=False,
        )
        return self

    def _transport_for(self, limits: httpx.Limits) -> httpx.AsyncBaseTransport | None:
        if self._transport is not None:
            return self._transport
        context = ssl_context_for(self.config)
        direct: httpx.AsyncBaseTransport
        if self.guard is not None:
            direct = PinnedTransport(self.guard, limits, context)
        else:
            direct = httpx.AsyncHTTPTransport(verify=context, limits=limits, trust_env=False)
        if self.config.proxy is None and not self._env_proxies:
            return direct
        return RoutedTransport(direct, self.proxy_for, self.guard, context, limits)

    def proxy_for(self, url: str) -> str | None:
        """The proxy a request to `url` goes through, or None (direct)."""
        if self.config.proxy is not None:
            return self.config.proxy
        return self._env_proxies.for_url(url) if self._env_proxies else None

    def _headers_for(self, url: str) -> dict[str, str]:
        """The user's headers and credentials a request to `url` carries: headers and Basic
        auth at the start origin only; cookies where their own rules send them."""
        cfg = self.config
        out: dict[str, str] = {}
        start = self._start
        if start is not None and (cfg.headers or cfg.auth or cfg.trust_env):
            home = _full_origin(start)
            if self._secrets is None or self._secrets[0] != home:
                self._secrets = (home, self._start_headers(start))
            if _full_origin(url) == self._secrets[0]:
                out.update(self._secrets[1])
        if cfg.cookies:
            host = urlsplit(start).hostname if start is not None else None
            cookie = cookie_header(cfg.cookies, url, host)
            if cookie is not None:
                out["Cookie"] = cookie
        return out

    def _start_headers(self, start: str) -> dict[str, str]:
        cfg = self.config
        out = dict(cfg.headers)
        auth = cfg.auth
        if auth is None and cfg.trust_env:
            auth = _netrc_auth(urlsplit(start).hostname or "")
        if auth is not None:
            token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode("ascii")
            out["Authorization"] = f"Basic {token}"
        return out

    async def _pace(self, url: str) -> None:
        """Wait for this request's turn under `rate` (nothing without one)."""
        rate = self.config.rate
        if rate is None:
            return
        wait = RATE_CLOCK.reserve(_full_origin(url), 1.0 / rate)
        if wait > 0:
            await asyncio.sleep(wait)

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
        Attempts, backoff and `Retry-After` waits all fit in `time_limit` (default: the
        configured timeout).
        """
        result = Response(url=url, final_url=url)
        local = self.reads_locally(url)
        if not local and is_http_url(url):
            # A walk rooted on a file has no network class of its own: its first http(s)
            # document is the root the guard judges by, and the origin credentials go to.
            if self._start is None or not is_http_url(self._start):
                self._start = url
            if self.guard is not None and not is_http_url(self.guard.root_url):
                self.guard.root_url = url
        start = time.monotonic()
        async with self._slot(url):
            if not local:
                await self._pace(url)  # the first request's turn, outside its time limit
            await self._attempts(result, sink_factory, time_limit or self.config.timeout)
        result.elapsed = time.monotonic() - start
        self._remember_reach(result)
        return result

    def cannot_connect(self, url: str) -> str | None:
        """Why no connection could be made to `url`'s origin (`connection refused`, ...), when
        the last fetch there could not connect and none before it got an HTTP answer; else None.
        """
        return self._reach.get(_full_origin(url))

    def _remember_reach(self, result: Response) -> None:
        origin = _full_origin(result.url)
        if result.unreachable is None:
            if result.status is not None or result.redirects:  # an HTTP answer came
                self._reach[origin] = None
        elif self._reach.get(origin, result.unreachable) is not None:
            self._reach[origin] = result.unreachable

    async def fetch_into(
        self,
        url: str,
        make_sink: Callable[[Response], SinkT | None],
        *,
        time_limit: float | None = None,
    ) -> tuple[Response, SinkT | None]:
        """`fetch`, for callers that read their sink afterwards: the response and the sink of
        the last attempt that had a body (each retry starts a new one), or None."""
        made: list[SinkT] = []

        def factory(resp: Response) -> SinkT | None:
            sink = make_sink(resp)
            if sink is not None:
                made.append(sink)
            return sink

        resp = await self.fetch(url, factory, time_limit=time_limit)
        return resp, made[-1] if made else None

    async def _attempts(
        self, result: Response, sink_factory: SinkFactory, time_limit: float
    ) -> None:
        cfg = self.config
        loop = asyncio.get_running_loop()
        deadline = loop.time() + time_limit
        for attempt in range(cfg.retries + 1):
            result.attempts = attempt + 1
            try:
                async with asyncio.timeout_at(deadline):
                    await self._once(result, sink_factory)
                return
            except _Retry as retry:
                result.error = retry.error
                if attempt == cfg.retries:
                    return
                left = deadline - loop.time()
                if retry.asked is not None and retry.asked > left:
                    result.error = _waited_too_long(retry.error, retry.asked, left)
                    log.info("not retrying %s: %s", result.url, result.error)
                    return
                if retry.asked is not None:
                    delay = min(retry.asked, cfg.retry_after_cap)
                else:
                    delay = cfg.backoff * (2**attempt) * (0.5 + random.random())
                if delay >= left:
                    log.info("no time left to retry %s: %s", result.url, retry.error)
                    return
                log.info("retrying %s in %.2fs: %s", result.url, delay, retry.error)
                await asyncio.sleep(delay)
            except builtins.TimeoutError:
                result.error = FetchTimeoutError(
                    f"no complete response within {time_limit:g} s", url=result.final_url
                )
                log.warning("timeout fetching %s after %d bytes", result.final_url, result.bytes)
                return
            except FetchError as exc:
                result.error = exc
                return

    async def _once(self, result: Response, sink_factory: SinkFactory) -> None:
        assert self._client is not None, "use Fetcher as an async context manager"
        if (self.local is not None or self.offline) and await self._local(result, sink_factory):
            return
        url = result.url
        seen: set[str] = set()
        result.redirects = []
        result.unreachable = None  # this attempt's, not an earlier one's
        for hop in range(self.config.max_redirects + 1):
            problem = _unusable(url)
            if problem is not None:
                raise NetworkError(f"unusable URL: {problem}", url=url)
            seen.add(url)
            result.final_url = url
            proxy = self.proxy_for(url)
            if hop or result.attempts > 1:
                await self._pace(url)
            try:
                request = self._client.build_request("GET", url, headers=self._headers_for(url))
                response = await self._client.send(request, stream=True)
            except AddressRefused as exc:
                raise BlockedAddressError(
                    f"address not allowed (SSRF guard: {exc})", url=url
                ) from exc
            except (httpx.ProxyError, httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if proxy is not None:
                    why = f"through proxy {mask_url(proxy)}: {connect_failure(exc, '')}"
                    if hop == 0:
                        result.unreachable = why
                    raise NetworkError(why, url=url) from exc
                if isinstance(exc, httpx.ProxyError):
                    raise _Retry(NetworkError(describe(exc), url=url)) from exc
                host = urlsplit(url).hostname or ""
                why = connect_failure(exc, host)
                if hop == 0:
                    result.unreachable = why
                error = NetworkError(f"{type(exc).__name__}: {why}", url=url)
                if refused(exc):
                    raise error from exc  # nothing listens there: asking again will not help
                raise _Retry(error) from exc
            except (httpx.TransportError, ValueError) as exc:
                raise _Retry(NetworkError(describe(exc), url=url)) from exc
            try:
                if response.status_code == 407 and proxy is not None:
                    why = f"through proxy {mask_url(proxy)}: HTTP 407 Proxy Authentication Required"
                    if hop == 0:
                        result.unreachable = why
                    raise NetworkError(why, url=url)
                location = response.headers.get("location")
                if response.is_redirect and location:
                    url = _redirect_target(url, location)
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
            asked = _retry_after(response.headers.get("retry-after"))
            raise _Retry(HTTPError(f"HTTP {status}", url=result.final_url, status=status), asked)
        if status >= 400:
            raise HTTPError(f"HTTP {status}", url=result.final_url, status=status)
        result.error = None
        encoding = response.headers.get("content-encoding", "")
        why = undecodable(encoding)
        if why is not None:
            raise NetworkError(why, url=result.final_url)
        sink = sink_factory(result)
        if sink is None:
            return
        try:
            await self._decode_into(response.aiter_raw(), result, sink, encoding)
        except httpx.TransportError as exc:
            # Bytes already parsed stay parsed; no retry, which would only repeat them.
            msg = f"{describe(exc)} after {result.bytes} bytes"
            raise NetworkError(msg, url=result.final_url) from exc

    async def _decode_into(
        self, raw: AsyncIterator[bytes], result: Response, sink: Sink, encoding: str
    ) -> None:
        """Decode `raw` into `sink` under the size cap: the one path every body takes, from the
        network or from disk."""
        decoder = Decoder(encoding, self.config.max_document_bytes)
        whole = True  # the body was read to its end, so its compressed layers must have ended
        try:
            async for piece in raw:
                for chunk in decoder.decode(piece):
                    sink.feed(chunk)
                result.bytes = decoder.bytes
                if decoder.truncated or not await sink.drain():
                    whole = False
                    break
            for chunk in decoder.flush():
                sink.feed(chunk)
        except zlib.error as exc:
            raise NetworkError(f"corrupt compressed body: {exc}", url=result.final_url) from exc
        finally:
            result.bytes = decoder.bytes
            result.truncated = decoder.truncated
        if whole and not decoder.ended():
            msg = f"compressed body ended before its end marker, after {decoder.bytes} bytes"
            raise NetworkError(msg, url=result.final_url)

    async def _local(self, result: Response, sink_factory: SinkFactory) -> bool:
        """Serve `result.url` from disk when it names a file (`file://`, a `--map` prefix);
        whether it did. Offline, an http(s) URL that names no file is refused unrequested."""
        url = result.url
        try:
            target = self.local.target(url) if self.local is not None else None
        except LocalRefused as exc:
            raise NetworkError(f"refused: {exc}", url=url) from None
        if target is None:
            if self.offline:
                raise NetworkError("not fetched (offline)", url=url)
            return False
        result.final_url = url
        result.redirects = []
        result.unreachable = None
        try:
            fd = open_target(target)
        except LocalMissing as exc:
            result.status = 404  # a missing file answers like a missing page
            raise HTTPError(f"HTTP 404: {exc}", url=url, status=404) from None
        except LocalRefused as exc:
            raise NetworkError(str(exc), url=url) from None
        result.status = 200
        result.error = None
        try:
            sink = sink_factory(result)
            if sink is None:
                return True
            async with contextlib.aclosing(read_chunks(fd, target.path)) as chunks:
                await self._decode_into(chunks, result, sink, "")
        except LocalRefused as exc:
            raise NetworkError(f"{exc} after {result.bytes} bytes", url=url) from None
        finally:
            os.close(fd)
        return True


def _waited_too_long(error: FetchError, asked: float, left: float) -> FetchError:
    message = (
        f"{error.args[0]}; the server asked to wait {asked:.0f} s, more than the {left:.1f} s left"
    )
    if isinstance(error, HTTPError):
        return HTTPError(message, url=error.url, status=error.status)
    return NetworkError(message, url=error.url)
