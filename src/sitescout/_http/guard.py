"""The SSRF guard (§14) and the transports every connection of a walk goes through.

The walk's root decides which addresses it may reach (`address_class`, `address_allowed`). With
an `AddressGuard`, every connection the client opens goes through `_GuardedBackend` (the network
backend of `PinnedTransport`): the host is resolved by the guard, every address of the answer is
checked, and the socket connects to one of those checked addresses, never to a second lookup's
answer. Through a proxy (`RoutedTransport`) the guard still checks each target; it cannot pin the
proxy's connection.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import ipaddress
import socket
import ssl
import time
from collections.abc import Awaitable, Callable, Iterable
from urllib.parse import urlsplit

import httpcore
import httpx

from .config import shared_ssl_context
from .network import AsyncioBackend, PoolTransport

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


def host_port(url: str) -> tuple[str, int]:
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
                addrs = await self._lookup(*host_port(self.root_url))
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
            await self.addresses(*host_port(url))
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


# -- the transports ----------------------------------------------------------------------------


class _GuardedBackend(AsyncioBackend):
    """Connects only to addresses the guard checked; TLS still verifies the host name."""

    def __init__(self, guard: AddressGuard) -> None:
        self._guard = guard

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
                return await super().connect_tcp(ip, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None  # `addresses` never returns an empty list
        raise failure


class PinnedTransport(PoolTransport):
    """httpx's transport over connection pools whose network backend is `_GuardedBackend`;
    `tls` makes the TLS context at the first https request (default: the shared one)."""

    def __init__(
        self,
        guard: AddressGuard,
        limits: httpx.Limits,
        tls: Callable[[], ssl.SSLContext] = shared_ssl_context,
    ) -> None:
        super().__init__(_GuardedBackend(guard), limits, tls)


class RoutedTransport(httpx.AsyncBaseTransport):
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
        tls: Callable[[], ssl.SSLContext],
        limits: httpx.Limits,
    ) -> None:
        self._direct = direct
        self._proxy_for = proxy_for
        self._guard = guard
        self._tls = tls  # called when the first proxy's transport is made, as the direct pools do
        self._limits = limits
        self._proxied: dict[str, httpx.AsyncHTTPTransport] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        proxy = self._proxy_for(str(request.url))
        if proxy is None:
            return await self._direct.handle_async_request(request)
        if self._guard is not None:
            # A name that does not resolve here is left to the proxy, which resolves it.
            with contextlib.suppress(OSError, ValueError):
                await self._guard.addresses(*host_port(str(request.url)))
        transport = self._proxied.get(proxy)
        if transport is None:
            transport = self._proxied[proxy] = httpx.AsyncHTTPTransport(
                proxy=httpx.Proxy(proxy), verify=self._tls(), limits=self._limits, trust_env=False
            )
        return await transport.handle_async_request(request)

    async def aclose(self) -> None:
        await self._direct.aclose()
        for transport in self._proxied.values():
            await transport.aclose()
