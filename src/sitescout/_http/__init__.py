"""The only network I/O of sitescout (§3, §14).

One `Fetcher` per run wraps one `httpx.AsyncClient` and reads every document of a walk: over
HTTP, or from disk for a `file://` URL or a `--map` prefix. Each room has one job, and imports
only rooms listed above it:

    config.py       `FetchConfig`: what the user asks of the network, checked; the TLS context
                    and the environment's proxies that follow from it
    decode.py       bodies decoded as they stream (`Content-Encoding`, gzip by magic bytes) under
                    the decoded-size cap, into a `Sink`
    failure.py      a failed connection or transfer in plain words
    network.py      httpcore's connections on asyncio's own sockets, and the transport that
                    hands their pool to httpx
    guard.py        the SSRF guard (`AddressGuard`, address classes) and the transports every
                    connection goes through: pinned to checked addresses, or routed to a proxy
    pace.py         `--rate` per host (`RATE_CLOCK`, `take_turn`) and robots.txt `Crawl-delay`
                    (`Pacer`)
    urls.py         whether a URL can be requested, where a redirect points, the full origin
                    credentials and pacing are bound to (pure)
    response.py     `Response`, the record of one fetch every room below fills in
    credentials.py  which headers, Basic auth (`.netrc` too) and cookies a request carries
    client.py       the `httpx.AsyncClient`, its transport, and each request's proxy
    retry.py        which failures are asked again, the backoff and `Retry-After` waits, the loop
    body.py         a body into its sink through the decoder, from the network or from disk
    hops.py         one attempt over the network: each hop requested, redirects followed by hand
    fetch.py        the `Fetcher`: per-host slots, reachability, attempts read locally or by hops

Imports run one way: config, network <- guard <- urls <- credentials, client; decode <- response
<- retry <- body <- hops <- fetch. decode, failure and network import no other room. This face
hands on the names the rest of sitescout imports.
"""

from .body import decode_into
from .config import (
    DEFAULT_USER_AGENT,
    EnvProxies,
    FetchConfig,
    mask_url,
    proxy_problem,
    render_problem,
    ssl_context_for,
)
from .decode import Sink
from .failure import connect_failure
from .fetch import Fetcher
from .guard import (
    AddressGuard,
    AddressRefused,
    PinnedTransport,
    Resolver,
    address_allowed,
    address_class,
)
from .pace import MAX_CRAWL_DELAY, Pacer
from .response import Conditional, Response

__all__ = [
    "DEFAULT_USER_AGENT",
    "MAX_CRAWL_DELAY",
    "AddressGuard",
    "AddressRefused",
    "Conditional",
    "EnvProxies",
    "FetchConfig",
    "Fetcher",
    "Pacer",
    "PinnedTransport",
    "Resolver",
    "Response",
    "Sink",
    "address_allowed",
    "address_class",
    "connect_failure",
    "decode_into",
    "mask_url",
    "proxy_problem",
    "render_problem",
    "ssl_context_for",
]
