"""The only network I/O of sitescout (§3, §14).

One `Fetcher` per run wraps one `httpx.AsyncClient`. It streams each document into a sink as bytes
arrive, decoding `Content-Encoding` and gzip-by-magic-bytes itself so that the decoded-size cap
(default 50 MiB) also stops gzip bombs, and a compressed body cut before its end marker is an
error. It follows redirects by hand, retries connection errors, 429 and 5xx with backoff, jitter
and `Retry-After` inside one time limit per document, and limits documents in flight per host.

With an `AddressGuard`, every connection the client opens goes through `_GuardedBackend`: the host
is resolved by the guard, every address of the answer is checked, and the socket connects to one
of those checked addresses, never to a second lookup's answer.

Local documents: a `file://` URL, or one under a `--map` prefix, is read from disk by `_local`
inside the same `fetch`, under the same time limit, through the same decoder and size cap, so
the walk, discovery and the budgets have one path for every document. `offline` refuses every
other URL without a request.

Fetch control (`FetchConfig`): the user's headers and Basic auth go to the start origin only and
cookies where their domain and path send them (`_cookies`), decided per request, so a redirect to
another origin carries none of them. `--proxy` and, with `trust_env`, the environment's proxies
route requests through `_RoutedTransport` (the guard still checks each target; it cannot pin the
proxy's connection). `rate` spaces request starts per host through `RATE_CLOCK`.
"""

from __future__ import annotations

import asyncio
import base64
import builtins
import contextlib
import errno
import functools
import importlib.util
import ipaddress
import logging
import math
import netrc
import os
import random
import socket
import ssl
import threading
import time
import zlib
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
)
from dataclasses import dataclass, field, fields, replace
from email.utils import parsedate_to_datetime
from typing import Protocol, TypeVar
from urllib.parse import urljoin, urlsplit

import httpcore
import httpx

from . import __about__
from ._cookies import Cookie, cookie_header, parse_cookie
from ._errors import (
    BlockedAddressError,
    FetchError,
    FetchTimeoutError,
    HTTPError,
    NetworkError,
    TooManyRedirects,
    UsageError,
)
from ._local import LocalFiles, LocalMissing, LocalRefused, open_target, read_chunks
from ._urls import is_http_url

log = logging.getLogger(__name__)

try:  # optional: only advertised when it can be decoded
    import brotli as _brotli
except ImportError:  # pragma: no cover - depends on the environment
    _brotli = None

DEFAULT_USER_AGENT = f"sitescout/{__about__.__version__} (+https://pypi.org/project/sitescout/)"
MiB = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"
_STEP = 256 * 1024  # decompression output per step: bounds memory while a bomb is cut


# Headers a user may not set: sitescout owns them (`--user-agent` sets the User-Agent; cookies
# and proxy credentials have options of their own), or they describe the message itself.
_OWN_HEADERS = frozenset(
    (
        "user-agent",
        "cookie",
        "proxy-authorization",
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "accept-encoding",
        "te",
        "upgrade",
    )
)
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
PROXY_SCHEMES = ("http", "https", "socks5", "socks5h")


@dataclass(frozen=True, slots=True, repr=False)
class FetchConfig:
    """How every request of a walk is made.

    `headers`, `auth` (Basic: user, password) and `cookies` are secrets: the headers and the
    credentials go only to the walk's start origin (scheme, host and port), cookies only where
    their own domain and path send them (one without a domain: the start host), never across a
    redirect to another origin; `repr` masks them, and the proxy's password. `proxy`: every
    request through it (`http://`, `https://`, `socks5://` with `httpx[socks]`). `trust_env`:
    `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY`/`NO_PROXY`, `SSL_CERT_FILE`/`SSL_CERT_DIR` and
    `.netrc` (for the start origin) as curl reads them. `rate`: at most this many request
    starts per second per host (fractions allowed).
    """

    user_agent: str = DEFAULT_USER_AGENT
    connect_timeout: float = 8.0
    timeout: float = 30.0  # total per document: a trickling server cannot hang a walk
    max_redirects: int = 5
    retries: int = 2
    backoff: float = 0.5
    retry_after_cap: float = 30.0
    max_document_bytes: int = 50 * MiB  # decoded; beyond it a document is cut (§3)
    per_host: int = 8
    headers: tuple[tuple[str, str], ...] = ()
    cookies: tuple[Cookie, ...] = ()
    auth: tuple[str, str] | None = None
    proxy: str | None = None
    trust_env: bool = False
    ca_bundle: str | None = None
    insecure: bool = False
    rate: float | None = None

    def __post_init__(self) -> None:
        for name in ("connect_timeout", "timeout"):
            _check_number(name, getattr(self, name), low=0.0, low_allowed=False)
        for name in ("backoff", "retry_after_cap"):
            _check_number(name, getattr(self, name), low=0.0, low_allowed=True)
        for name, least in (
            ("retries", 0),
            ("max_redirects", 0),
            ("max_document_bytes", 1),
            ("per_host", 1),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise UsageError(
                    f"{name} must be a whole number of at least {least}, got {value!r}"
                )
        agent = self.user_agent
        if not isinstance(agent, str) or not agent.strip() or "\r" in agent or "\n" in agent:
            raise UsageError(f"user_agent must be one non-empty line, got {agent!r}")
        object.__setattr__(self, "headers", _checked_headers(self.headers))
        object.__setattr__(self, "cookies", _checked_cookies(self.cookies))
        if self.auth is not None:
            auth = tuple(self.auth) if isinstance(self.auth, list | tuple) else None
            if auth is None or len(auth) != 2 or not all(isinstance(a, str) for a in auth):
                raise UsageError("auth must be a (user, password) pair of strings")
            if ":" in auth[0] or any(_has_control(a) for a in auth):
                raise UsageError("auth: the user may not hold ':' nor either a control character")
            object.__setattr__(self, "auth", auth)
            if any(name.lower() == "authorization" for name, _ in self.headers):
                raise UsageError("auth and an Authorization header cannot be combined")
        if self.proxy is not None:
            problem = proxy_problem(self.proxy)
            if problem is not None:
                raise UsageError(f"proxy {mask_url(str(self.proxy))}: {problem}")
        for name in ("trust_env", "insecure"):
            if not isinstance(getattr(self, name), bool):
                raise UsageError(f"{name} must be True or False, got {getattr(self, name)!r}")
        bundle = self.ca_bundle
        if bundle is not None and (not isinstance(bundle, str) or not os.path.isfile(bundle)):
            raise UsageError(f"ca_bundle: no such file: {self.ca_bundle!r}")
        if self.rate is not None:
            rate = self.rate
            ok = isinstance(rate, int | float) and not isinstance(rate, bool)
            if not ok or not math.isfinite(rate) or rate <= 0:
                raise UsageError(
                    f"rate must be a finite number of requests per second, more than zero; "
                    f"got {rate!r}"
                )

    def __repr__(self) -> str:
        shown: list[str] = []
        for spec in fields(self):
            value = getattr(self, spec.name)
            if spec.name == "headers":
                value = tuple((name, "***") for name, _ in value)
            elif spec.name == "auth" and value is not None:
                value = (value[0], "***")
            elif spec.name == "proxy" and value is not None:
                value = mask_url(value)
            shown.append(f"{spec.name}={value!r}")  # cookies mask their own values
        return f"FetchConfig({', '.join(shown)})"


def render_problem(config: FetchConfig) -> str | None:
    """Why `--render` cannot run with `config`, or None: the browser's own requests would not
    go through the proxy (they are sent over the guard's direct, pinned connections)."""
    if config.proxy is not None or (config.trust_env and EnvProxies.read()):
        return (
            "--render cannot be combined with a proxy yet: the browser's requests would bypass it"
        )
    return None


def _checked_cookies(cookies: object) -> tuple[Cookie, ...]:
    """`cookies` (`Cookie`s, or `name=value` strings for the start host) as `Cookie`s."""
    wrong = "cookies must be a sequence of Cookie objects or 'name=value' strings"
    if isinstance(cookies, str | bytes) or not isinstance(cookies, Iterable):
        raise UsageError(wrong)
    out: list[Cookie] = []
    for cookie in cookies:
        if isinstance(cookie, str):
            try:
                cookie = parse_cookie(cookie)
            except ValueError as exc:
                raise UsageError(f"cookies: {exc}") from None
        if not isinstance(cookie, Cookie):
            raise UsageError(wrong)
        out.append(cookie)
    return tuple(out)


def _checked_headers(headers: object) -> tuple[tuple[str, str], ...]:
    """`headers` (a mapping or (name, value) pairs) as pairs; UsageError naming what is wrong."""
    if isinstance(headers, Mapping):
        pairs = list(headers.items())
    elif isinstance(headers, str | bytes) or not isinstance(headers, Iterable):
        raise UsageError("headers must be a mapping or a sequence of (name, value) pairs")
    else:
        pairs = list(headers)
    out: list[tuple[str, str]] = []
    for pair in pairs:
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise UsageError("headers must be a mapping or a sequence of (name, value) pairs")
        name, value = pair
        if not isinstance(name, str) or not name or not set(name) <= _TOKEN:
            raise UsageError(f"headers: not a header name: {name!r}")
        if name.lower() in _OWN_HEADERS:
            hint = " (use user_agent / --user-agent)" if name.lower() == "user-agent" else ""
            hint = " (use cookies / --cookie)" if name.lower() == "cookie" else hint
            raise UsageError(f"headers: sitescout sets {name} itself{hint}")
        if not isinstance(value, str) or _has_control(value.replace("\t", " ")):
            raise UsageError(f"headers: the value of {name} must be one line of text")
        out.append((name, value.strip()))
    return tuple(out)


def mask_url(url: str) -> str:
    """`url` with the password of its user info replaced by `****`."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<an unparseable URL>"
    if password is None:
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=f"{user}:****@{host}").geturl()


def proxy_problem(proxy: object) -> str | None:
    """What is wrong with a proxy URL, or None when it can be used."""
    if not isinstance(proxy, str):
        return "must be a URL"
    try:
        parts = urlsplit(proxy)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as exc:
        return str(exc)
    if parts.scheme not in PROXY_SCHEMES:
        return f"unknown proxy scheme {parts.scheme or 'none'!r} (use http, https or socks5)"
    if not parts.hostname:
        return "no host"
    if parts.scheme.startswith("socks") and importlib.util.find_spec("socksio") is None:
        return "a socks5 proxy needs the socksio package: pip install 'httpx[socks]'"
    return None


def _check_number(name: str, value: object, *, low: float, low_allowed: bool) -> None:
    ok = (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and (value >= low if low_allowed else value > low)
    )
    if not ok:
        bound = "zero or more" if low_allowed else "more than zero"
        raise UsageError(f"{name} must be a finite number of seconds, {bound}; got {value!r}")


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
    # Why no connection could be made to the URL asked for (`connection refused`, `cannot resolve
    # example.com`, ...): set when the last attempt failed before any HTTP answer came, at the
    # first hop. None when an answer came, or the failure was another (a timeout, a reset).
    unreachable: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.status is not None and 200 <= self.status < 300


# -- SSRF guard --------------------------------------------------------------------------------

Resolver = Callable[[str, int], Awaitable[list[str]]]
_Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_Address = ipaddress.IPv4Address | ipaddress.IPv6Address

DNS_TTL = 300.0  # how long one checked DNS answer serves new connections to its host


def _networks(*cidrs: str) -> tuple[_Network, ...]:
    return tuple(ipaddress.ip_network(c) for c in cidrs)


_LOOPBACK = _networks("127.0.0.0/8", "::1/128")
_PRIVATE = _networks("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")
_LINK_LOCAL = _networks("169.254.0.0/16", "fe80::/10")
# The IANA special-purpose registries (plus multicast and the reserved ranges): no site lives
# there, and several of them reach something on the walker's own network.
_SPECIAL = _networks(
    "0.0.0.0/8",
    "192.0.0.0/24",
    "192.0.2.0/24",
    "198.18.0.0/15",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "224.0.0.0/4",
    "240.0.0.0/4",  # with 255.255.255.255
    "::/96",  # unspecified and the deprecated IPv4-compatible form
    "100::/64",
    "2001::/23",  # Teredo and the IETF protocol assignments
    "2001:db8::/32",
    "3fff::/20",
    "64:ff9b:1::/48",
    "fec0::/10",
    "ff00::/8",
)
_GLOBAL_V6 = ipaddress.ip_network("2000::/3")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SIX_TO_FOUR = ipaddress.ip_network("2002::/16")
_METADATA = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "192.0.0.192", "100.100.100.200")
)


def _within(addr: _Address, networks: tuple[_Network, ...]) -> bool:
    return any(addr.version == net.version and addr in net for net in networks)


def _parse(ip: str) -> _Address:
    addr = ipaddress.ip_address(ip.split("%", 1)[0])  # an IPv6 zone does not change the class
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped  # a dual-stack socket connects to the IPv4 address itself
    return addr


def address_class(ip: str) -> str:
    """The network class an address belongs to: public, loopback, private, link-local, other.

    "other" is never allowed: special-purpose ranges, and IPv6 forms that a gateway translates
    to an IPv4 address that is not public (NAT64, 6to4).
    """
    addr = _parse(ip)
    if isinstance(addr, ipaddress.IPv6Address):
        relayed: ipaddress.IPv4Address | None = None
        if addr in _NAT64:
            relayed = ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
        elif addr in _SIX_TO_FOUR:
            relayed = addr.sixtofour
        if relayed is not None:
            return "public" if address_class(str(relayed)) == "public" else "other"
    if _within(addr, _LOOPBACK):
        return "loopback"
    if _within(addr, _SPECIAL):
        return "other"
    if _within(addr, _PRIVATE):
        return "private"
    if _within(addr, _LINK_LOCAL):
        return "link-local"
    if isinstance(addr, ipaddress.IPv6Address) and addr not in _GLOBAL_V6:
        return "other"  # not yet allocated by IANA
    return "public"


def address_allowed(ip: str, root_class: str) -> bool:
    """§14: a public walk stays public; a walk rooted in another class stays inside that class.

    Metadata and other special addresses are never allowed, whatever the root.
    """
    if _parse(ip) in _METADATA:
        return False
    cls = address_class(ip)
    return cls != "other" and cls == root_class


async def _system_resolver(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def _host_port(url: str) -> tuple[str, int]:
    """The host and port a URL connects to; ValueError for a port out of range."""
    parts = urlsplit(url)
    return parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


class AddressRefused(Exception):
    """A host resolves to an address the guard does not allow."""

    def __init__(self, host: str, refused: list[str]) -> None:
        super().__init__(f"{host} resolves to {', '.join(refused) or 'no address'}")
        self.host = host


class AddressGuard:
    """Decides which addresses the walk may connect to (the root decides the class).

    `addresses` resolves a host once, checks every address of the answer, and returns them: the
    `Fetcher` connects only to those (its network backend asks here for each new connection), so
    a DNS answer that changes between the check and the connect (rebinding) cannot redirect it.
    One answer serves for `ttl` seconds. A name that does not resolve is refused.
    """

    def __init__(
        self, root_url: str, resolver: Resolver | None = None, *, ttl: float = DNS_TTL
    ) -> None:
        self.root_url = root_url
        self._resolve = resolver or _system_resolver
        self._ttl = ttl
        self._root_class: str | None = None
        self._answers: dict[str, tuple[float, list[str]]] = {}
        self._lookups: dict[str, asyncio.Lock] = {}

    async def root_class(self) -> str:
        if self._root_class is None:
            try:
                addrs = await self._lookup(*_host_port(self.root_url))
            except (OSError, ValueError):
                # Unresolvable root: judge by the strictest class, and ask again next time. Its
                # fetches then fail and are recorded instead of raising out of the walk.
                return "public"
            classes = {address_class(a) for a in addrs}
            self._root_class = classes.pop() if len(classes) == 1 else "public"
        return self._root_class

    async def addresses(self, host: str, port: int) -> list[str]:
        """The checked addresses of `host`, to connect to and nothing else.

        Raises `AddressRefused` when any address of the answer is not allowed (a mixed answer
        is refused whole), `OSError` when the name does not resolve.
        """
        addrs = await self._lookup(host, port)
        root = await self.root_class()
        refused = [a for a in addrs if not address_allowed(a, root)]
        if refused or not addrs:
            raise AddressRefused(host, refused)
        return addrs

    async def allowed(self, url: str) -> bool:
        """Whether `url`'s host may be reached: for clients that connect by themselves."""
        try:
            await self.addresses(*_host_port(url))
        except (AddressRefused, OSError, ValueError):
            return False
        return True

    async def _lookup(self, host: str, port: int) -> list[str]:
        try:
            ipaddress.ip_address(host)
            return [host]
        except ValueError:
            pass
        if not host:
            raise OSError("no host name")
        lock = self._lookups.setdefault(host, asyncio.Lock())
        async with lock:  # concurrent first connections share one query
            now = time.monotonic()
            cached = self._answers.get(host)
            if cached is not None and now < cached[0]:
                return cached[1]
            addrs = list(await self._resolve(host, port))
            self._answers[host] = (now + self._ttl, addrs)
            return addrs


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """Connects only to addresses the guard checked; TLS still verifies the host name."""

    def __init__(self, guard: AddressGuard) -> None:
        self._guard = guard
        self._network = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                addrs = await self._guard.addresses(host, port)
        except builtins.TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"resolving {host} took over {timeout:g} s") from exc
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        failure: httpcore.ConnectError | httpcore.ConnectTimeout | None = None
        for ip in addrs:
            try:
                return await self._network.connect_tcp(
                    ip, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None  # `addresses` never returns an empty list
        raise failure

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


class _PinnedStream(httpx.AsyncByteStream):
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


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """One TLS context per process: loading the CA bundle costs ~35 ms of CPU, which every
    walk (every site of a batch) paid again. A context is safe to share between clients."""
    return httpx.create_ssl_context(trust_env=False)


class PinnedTransport(httpx.AsyncBaseTransport):
    """httpx's transport over a connection pool whose network backend is `_GuardedBackend`.

    httpx 0.28 has no public way to hand its own transport a network backend, so this is the
    custom-transport route its documentation describes: an httpcore pool wrapped by hand.
    """

    def __init__(
        self, guard: AddressGuard, limits: httpx.Limits, ssl_context: ssl.SSLContext | None = None
    ) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context or shared_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_GuardedBackend(guard),
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
        with _as_httpx_errors():
            response = await self._pool.handle_async_request(core_request)
        assert isinstance(response.stream, AsyncIterable)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_PinnedStream(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


# -- TLS, proxies, credentials, rate --------------------------------------------------------


@functools.cache
def _ca_context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=cafile, capath=capath)


def ssl_context_for(config: FetchConfig) -> ssl.SSLContext:
    """The TLS context `config` asks for: `insecure` verifies nothing, `ca_bundle` trusts that
    file only, `trust_env` reads `SSL_CERT_FILE`/`SSL_CERT_DIR`; else the shared default.
    UsageError when the CA file cannot be loaded."""
    if config.insecure:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    cafile, capath = config.ca_bundle, None
    if cafile is None and config.trust_env:
        env_file, env_dir = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
        cafile = env_file if env_file and os.path.isfile(env_file) else None
        capath = env_dir if env_dir and os.path.isdir(env_dir) else None
    if cafile is None and capath is None:
        return shared_ssl_context()
    try:
        return _ca_context(cafile, capath)
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(f"cannot load the CA certificates of {cafile or capath}: {exc}") from None


@dataclass(frozen=True, slots=True)
class EnvProxies:
    """The proxy settings of the environment, as curl reads them: `http_proxy`/`HTTP_PROXY`,
    `https_proxy`/`HTTPS_PROXY`, `all_proxy`/`ALL_PROXY` (lower case first) and `no_proxy`/
    `NO_PROXY` (host names, domain suffixes, IP addresses or networks, `*` for all)."""

    http: str | None = None
    https: str | None = None
    any: str | None = None
    no_proxy: tuple[str, ...] = ()

    @classmethod
    def read(cls, environ: Mapping[str, str] | None = None) -> EnvProxies:
        env = os.environ if environ is None else environ
        found: dict[str, str | None] = {}
        for key in ("http", "https", "all"):
            name, value = next(
                ((n, env[n]) for n in (f"{key}_proxy", f"{key.upper()}_PROXY") if env.get(n)),
                ("", ""),
            )
            if not value:
                found[key] = None
                continue
            url = value.strip() if "://" in value else f"http://{value.strip()}"
            problem = proxy_problem(url)
            if problem is not None:
                raise UsageError(f"{name}={mask_url(url)}: {problem}")
            found[key] = url
        raw = env.get("no_proxy") or env.get("NO_PROXY") or ""
        skip = tuple(p.strip().lower().lstrip(".") for p in raw.split(",") if p.strip())
        return cls(found["http"], found["https"], found["all"], skip)

    def __bool__(self) -> bool:
        return bool(self.http or self.https or self.any)

    def for_url(self, url: str) -> str | None:
        parts = urlsplit(url)
        proxy = (self.https if parts.scheme == "https" else self.http) or self.any
        if proxy is None or self._bypassed(parts.hostname or "", parts.port):
            return None
        return proxy

    def _bypassed(self, host: str, port: int | None) -> bool:
        host = host.lower()
        for entry in self.no_proxy:
            if entry == "*":
                return True
            name, _, entry_port = entry.rpartition(":") if _has_port(entry) else (entry, "", "")
            if entry_port and str(port) != entry_port:
                continue
            try:
                if ipaddress.ip_address(host) in ipaddress.ip_network(name.strip("[]"), False):
                    return True
                continue
            except ValueError:
                pass
            if host == name or host.endswith("." + name):
                return True
        return False


def _has_port(entry: str) -> bool:
    head, sep, tail = entry.rpartition(":")
    return bool(sep) and tail.isdigit() and (head.endswith("]") or ":" not in head)


class _RoutedTransport(httpx.AsyncBaseTransport):
    """Each request direct, or through the proxy `proxy_for` names for its URL.

    Through a proxy the connection is the proxy's, so the guard cannot pin it: the target is
    still checked here, a literal address and a name that resolves locally alike (a name that
    does not resolve here is left to the proxy, which resolves it).
    """

    def __init__(
        self,
        direct: httpx.AsyncBaseTransport,
        proxy_for: Callable[[str], str | None],
        guard: AddressGuard | None,
        ssl_context: ssl.SSLContext,
        limits: httpx.Limits,
    ) -> None:
        self._direct = direct
        self._proxy_for = proxy_for
        self._guard = guard
        self._ssl = ssl_context
        self._limits = limits
        self._proxied: dict[str, httpx.AsyncHTTPTransport] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        proxy = self._proxy_for(str(request.url))
        if proxy is None:
            return await self._direct.handle_async_request(request)
        if self._guard is not None:
            # A name that does not resolve here is left to the proxy, which resolves it.
            with contextlib.suppress(OSError, ValueError):
                await self._guard.addresses(*_host_port(str(request.url)))
        transport = self._proxied.get(proxy)
        if transport is None:
            transport = self._proxied[proxy] = httpx.AsyncHTTPTransport(
                proxy=httpx.Proxy(proxy), verify=self._ssl, limits=self._limits, trust_env=False
            )
        return await transport.handle_async_request(request)

    async def aclose(self) -> None:
        await self._direct.aclose()
        for transport in self._proxied.values():
            await transport.aclose()


class _RateClock:
    """`--rate`: request starts to one host (host and port) at least 1/rate seconds apart.

    Process-wide, so that the fetchers of one run (a walk's, then extract's pages) share it and
    a new one never starts with a burst. Each request reserves its start under a lock held for
    no await; the caller sleeps until then. Entries older than a minute are dropped.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}

    def reserve(self, key: str, interval: float) -> float:
        """Seconds to wait before this request may start."""
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next.get(key, now))
            self._next[key] = start + interval
            if len(self._next) > 4096:
                stale = [k for k, t in self._next.items() if t < now - 60]
                for k in stale:
                    del self._next[k]
            return start - now


RATE_CLOCK = _RateClock()


def _full_origin(url: str) -> str:
    """`scheme://host:port`, the port always written: what credentials are bound to."""
    try:
        host, port = _host_port(url)
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


# -- decoding ----------------------------------------------------------------------------------

_FEED = 2 * 1024  # compressed input per step: a member's end copies at most this much


class _Inflate:
    """zlib-family decoder with bounded output per call (gzip members, zlib or raw deflate)."""

    def __init__(self, wbits: int) -> None:
        self._wbits = wbits
        self._d = zlib.decompressobj(wbits)
        self._raw_fallback = wbits == 15
        self._inside = False  # a member has begun and its end marker is not seen yet
        self._members = 0  # members ended so far: zero bytes may pad what follows them

    @property
    def ended(self) -> bool:
        return not self._inside

    def decode(self, data: bytes, room: int) -> tuple[list[bytes], bool]:
        """Decode `data`, producing at most `room` bytes; True when output was cut short."""
        out: list[bytes] = []
        pos = 0
        pending = b""
        while room > 0:
            if not pending:
                if pos >= len(data):
                    break
                # Fed in slices: zlib copies the input left after each member's end, which on
                # a body of many tiny members would otherwise cost the whole rest each time.
                pending = data[pos : pos + _FEED]
                pos += len(pending)
            if self._members and not self._inside:
                pending = pending.lstrip(b"\x00")  # padding after a member
                if not pending:
                    continue
            try:
                chunk = self._d.decompress(pending, min(room, _STEP))
            except zlib.error:
                if not self._raw_fallback:
                    raise
                # "deflate" is zlib-wrapped by the RFC, raw in practice on some servers.
                self._raw_fallback = False
                self._d = zlib.decompressobj(-15)
                continue
            self._raw_fallback = False
            self._inside = True
            out.append(chunk)
            room -= len(chunk)
            if self._d.eof:
                pending = self._d.unused_data
                self._d = zlib.decompressobj(self._wbits)
                self._inside = False
                self._members += 1
            else:
                pending = self._d.unconsumed_tail
        return out, bool(pending) or pos < len(data)


class _Brotli:
    def __init__(self) -> None:
        assert _brotli is not None
        self._d = _brotli.Decompressor()

    @property
    def ended(self) -> bool:
        return bool(self._d.is_finished())

    def decode(self, data: bytes, room: int) -> tuple[list[bytes], bool]:
        out = self._d.process(data)
        return [out[:room]], len(out) > room


def _undecodable(content_encoding: str) -> str | None:
    """Why a body in this `Content-Encoding` cannot be read, or None when it can."""
    for enc in (e.strip().lower() for e in content_encoding.split(",")):
        if enc == "br" and _brotli is None:
            return "the body is br-compressed; install the 'brotli' package to read it"
        if enc == "zstd":
            return (
                "the body is zstd-compressed, which sitescout cannot decode (it never asks for it)"
            )
    return None


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

    def ended(self) -> bool:
        """Whether every compressed layer reached its end marker (a cut stream has not)."""
        return all(layer.ended for layer in self._layers)

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


# -- the fetcher -------------------------------------------------------------------------------


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
    if _has_control(location):
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


def _has_control(text: str) -> bool:
    return any(ord(c) < 0x20 or c == "\x7f" for c in text)


async def _check_location(response: httpx.Response) -> None:
    # httpx resolves every Location itself and raises a bare protocol error for a bad one: say
    # what is wrong with it first.
    location = response.headers.get("location")
    if response.has_redirect_location and location:
        _redirect_target(str(response.request.url), location)


def _unusable(url: str) -> str | None:
    """Why `url` cannot be fetched (scheme, host, port, syntax), or None when it can."""
    if _has_control(url):
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
        encodings = "gzip, deflate, br" if _brotli is not None else "gzip, deflate"
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
        self._client = httpx.AsyncClient(
            headers={
                "User-Agent": cfg.user_agent,
                "Accept-Encoding": encodings,
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
        return _RoutedTransport(direct, self.proxy_for, self.guard, context, limits)

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
                    raise _Retry(NetworkError(_describe(exc), url=url)) from exc
                host = urlsplit(url).hostname or ""
                why = connect_failure(exc, host)
                if hop == 0:
                    result.unreachable = why
                error = NetworkError(f"{type(exc).__name__}: {why}", url=url)
                if _refused(exc):
                    raise error from exc  # nothing listens there: asking again will not help
                raise _Retry(error) from exc
            except (httpx.TransportError, ValueError) as exc:
                raise _Retry(NetworkError(_describe(exc), url=url)) from exc
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
        why = _undecodable(encoding)
        if why is not None:
            raise NetworkError(why, url=result.final_url)
        sink = sink_factory(result)
        if sink is None:
            return
        try:
            await self._decode_into(response.aiter_raw(), result, sink, encoding)
        except httpx.TransportError as exc:
            # Bytes already parsed stay parsed; no retry, which would only repeat them.
            msg = f"{_describe(exc)} after {result.bytes} bytes"
            raise NetworkError(msg, url=result.final_url) from exc

    async def _decode_into(
        self, raw: AsyncIterator[bytes], result: Response, sink: Sink, encoding: str
    ) -> None:
        """Decode `raw` into `sink` under the size cap: the one path every body takes, from the
        network or from disk."""
        decoder = _Decoder(encoding, self.config.max_document_bytes)
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


# What an `OSError` of a connection attempt says, in plain words.
_CONNECT_ERRNOS = {
    errno.ECONNREFUSED: "connection refused",
    errno.ENETUNREACH: "network unreachable",
    errno.EHOSTUNREACH: "host unreachable",
    errno.ETIMEDOUT: "connection timed out",
}
_MAX_CAUSES = 32  # exceptions looked at behind one error: chains and groups are short


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, then what caused it, breadth first, exception groups opened; at most `_MAX_CAUSES`."""
    todo = [exc]
    seen: set[int] = set()
    while todo and len(seen) < _MAX_CAUSES:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)


def connect_failure(exc: BaseException, host: str = "") -> str:
    """Why a connection could not be made, in a few plain words: `connection refused`,
    `cannot resolve example.com`, `network unreachable`, `host unreachable`, `connection timed
    out`, `TLS handshake failed (...)`; the error's own text when none of them is behind it."""
    for cause in _causes(exc):
        if isinstance(cause, socket.gaierror):
            return f"cannot resolve {host}" if host else "cannot resolve the host name"
        if isinstance(cause, ssl.SSLError):
            detail = (
                getattr(cause, "verify_message", None) or getattr(cause, "reason", None) or cause
            )
            return f"TLS handshake failed ({detail})"
        if isinstance(cause, OSError) and cause.errno in _CONNECT_ERRNOS:
            return _CONNECT_ERRNOS[cause.errno]
        if isinstance(cause, httpx.ConnectTimeout | httpcore.ConnectTimeout):
            return "connection timed out"
    return str(exc) or type(exc).__name__


def _refused(exc: BaseException) -> bool:
    """Whether the host answered the connection with a refusal: nothing listens on the port."""
    return any(
        isinstance(cause, OSError) and cause.errno == errno.ECONNREFUSED for cause in _causes(exc)
    )


_TIMEOUT_KINDS: tuple[tuple[type[httpx.TimeoutException], str], ...] = (
    (httpx.ConnectTimeout, "connect"),
    (httpx.ReadTimeout, "read"),
    (httpx.WriteTimeout, "write"),
    (httpx.PoolTimeout, "pool"),
)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, httpx.TimeoutException):
        kind = next((k for cls, k in _TIMEOUT_KINDS if isinstance(exc, cls)), "network")
        return f"{kind} timeout: {exc}" if str(exc) else f"{kind} timeout"
    name = type(exc).__name__
    text = str(exc)
    return f"{name}: {text}" if text else name


# -- Crawl-delay -----------------------------------------------------------------------------------

# A robots.txt asking for more is obeyed up to this (an hour per page would never finish).
MAX_CRAWL_DELAY = 60.0


class Pacer:
    """robots.txt `Crawl-delay`: one request at a time, `delay` seconds from the end of one to the
    start of the next.

    End to start, not start to start: it is the reading that can never be faster than the other
    (a slow answer does not eat into the pause the site asked for), Yandex documents the directive
    that way, and the batch suite checks the gap from the server's side as end to start. A delay
    of None or 0 paces nothing; one above `MAX_CRAWL_DELAY` is capped (`capped` says so).
    """

    def __init__(self, delay: float | None) -> None:
        asked = delay if delay is not None and delay > 0 else 0.0
        self.delay = min(asked, MAX_CRAWL_DELAY)
        self.capped = asked > MAX_CRAWL_DELAY
        self._lock = asyncio.Lock()
        self._next = 0.0

    def __bool__(self) -> bool:
        return self.delay > 0

    def config(self, config: FetchConfig) -> FetchConfig:
        """`config` with retries inside one fetch spaced at least as far apart as requests
        (backoff is jittered by 0.5-1.5x, hence twice the delay)."""
        if not self.delay or config.backoff >= 2 * self.delay:
            return config
        return replace(config, backoff=2 * self.delay)

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold while making one request: waits for the previous one's end plus the delay."""
        if not self.delay:
            yield
            return
        async with self._lock:
            wait = self._next - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            try:
                yield
            finally:
                self._next = time.monotonic() + self.delay
