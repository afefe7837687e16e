"""The fetcher's one `httpx.AsyncClient`, and the transport every connection takes.

The transport is chosen once, when the client is built: the caller's own (tests run in memory),
`guard.PinnedTransport` when an SSRF guard pins connections to checked addresses, else
`network.PoolTransport` (both httpcore's pool on asyncio's own sockets); wrapped in
`guard.RoutedTransport` when any request may go through a proxy (`--proxy`, or the environment's
with `trust_env`), which asks `proxy_for` per request.
Redirects are not followed by the client: the hop loop (`hops`) follows them by hand.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable

import httpx

from .config import EnvProxies, FetchConfig, own_ssl_context, shared_ssl_context
from .decode import ACCEPT_ENCODING
from .guard import AddressGuard, PinnedTransport, RoutedTransport
from .network import AsyncioBackend, PoolTransport
from .urls import redirect_target


def proxy_for(url: str, config: FetchConfig, env_proxies: EnvProxies) -> str | None:
    """The proxy a request to `url` goes through, or None (direct): `--proxy` for every
    request, else the environment's for that URL (its `no_proxy` included)."""
    if config.proxy is not None:
        return config.proxy
    return env_proxies.for_url(url) if env_proxies else None


def build_client(
    config: FetchConfig,
    *,
    accept: str,
    transport: httpx.AsyncBaseTransport | None,
    guard: AddressGuard | None,
    env_proxies: EnvProxies,
    route: Callable[[str], str | None],
) -> httpx.AsyncClient:
    """The client of one fetcher. `route` names each request's proxy (None: direct); it is
    asked only when `--proxy` or the environment names one."""
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
    return httpx.AsyncClient(
        headers={
            "User-Agent": config.user_agent,
            "Accept-Encoding": ACCEPT_ENCODING,
            "Accept": accept,
        },
        timeout=httpx.Timeout(config.timeout, connect=config.connect_timeout),
        limits=limits,
        transport=(
            transport
            if transport is not None
            else _transport_for(config, limits, guard, env_proxies, route)
        ),
        # No `verify`: the transport (always given) carries the TLS context.
        follow_redirects=False,
        event_hooks={"response": [check_location]},
        # The environment is read here (`EnvProxies`, `own_ssl_context`, `netrc_auth`) when
        # `trust_env` asks for it: httpx ignores its proxies beside a custom transport.
        trust_env=False,
    )


def _transport_for(
    config: FetchConfig,
    limits: httpx.Limits,
    guard: AddressGuard | None,
    env_proxies: EnvProxies,
    route: Callable[[str], str | None],
) -> httpx.AsyncBaseTransport:
    # Read now, so that a CA file that cannot be loaded fails before any request; the shared
    # default is made at the first https request.
    own = own_ssl_context(config)

    def tls() -> ssl.SSLContext:
        return own or shared_ssl_context()

    direct: httpx.AsyncBaseTransport
    if guard is not None:
        direct = PinnedTransport(guard, limits, tls)
    else:
        direct = PoolTransport(AsyncioBackend(), limits, tls)
    if config.proxy is None and not env_proxies:
        return direct
    return RoutedTransport(direct, route, guard, tls, limits)


async def check_location(response: httpx.Response) -> None:
    # httpx resolves every Location itself and raises a bare protocol error for a bad one: say
    # what is wrong with it first.
    location = response.headers.get("location")
    if response.has_redirect_location and location:
        redirect_target(str(response.request.url), location)
