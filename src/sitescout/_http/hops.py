"""One attempt at a URL over the network: each hop's request, redirects followed by hand.

The client follows no redirect itself, so that every hop is seen here: its URL checked before
it is requested (`urls.unusable`), its headers and credentials chosen for its own origin
(`Credentials`), its turn taken under `--rate`, its connection made through the SSRF guard's
transport. A connection that fails is told apart (refused by the guard, by the proxy, by the
host, or worth another attempt: `retry.Retry`), and the answer that ends the redirects has its
body read (`body.read_body`).
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

import httpx

from .._errors import BlockedAddressError, NetworkError, TooManyRedirects
from .body import read_body
from .config import FetchConfig, mask_url
from .credentials import Credentials
from .failure import connect_failure, describe, refused
from .guard import AddressRefused
from .pace import take_turn
from .response import Conditional, Response, SinkFactory
from .retry import Retry
from .urls import full_origin, redirect_target, unusable


class Hops:
    """The request loop of one attempt, over the fetcher's client.

    `route` names the proxy a URL's request goes through (None: direct). The config is passed
    per attempt, not kept: a crawl swaps in another after the fetcher has been entered.
    """

    def __init__(
        self,
        client: httpx.AsyncClient,
        credentials: Credentials,
        route: Callable[[str], str | None],
    ) -> None:
        self.client = client
        self.credentials = credentials
        self.route = route

    async def follow(
        self,
        result: Response,
        sink_factory: SinkFactory,
        config: FetchConfig,
        conditional: Conditional | None = None,
    ) -> None:
        """Request `result.url`, follow its redirects, read the body of the answer that ends
        them into the sink. Raises `Retry` when another attempt may help, FetchError when not.
        `conditional`: the stored copy's validators, sent to the URL they belong to."""
        url = result.url
        seen: set[str] = set()
        result.redirects = []
        result.unreachable = None  # this attempt's, not an earlier one's
        for hop in range(config.max_redirects + 1):
            problem = unusable(url)
            if problem is not None:
                raise NetworkError(f"unusable URL: {problem}", url=url)
            seen.add(url)
            result.final_url = url
            proxy = self.route(url)
            if hop or result.attempts > 1:
                await take_turn(full_origin(url), config.rate)
            try:
                headers = self.credentials.headers_for(url, config)
                asked = conditional.headers_for(url) if conditional is not None else {}
                headers.update(asked)
                request = self.client.build_request("GET", url, headers=headers)
                response = await self.client.send(request, stream=True)
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
                    raise Retry(NetworkError(describe(exc), url=url)) from exc
                host = urlsplit(url).hostname or ""
                why = connect_failure(exc, host)
                if hop == 0:
                    result.unreachable = why
                error = NetworkError(f"{type(exc).__name__}: {why}", url=url)
                if refused(exc):
                    raise error from exc  # nothing listens there: asking again will not help
                raise Retry(error) from exc
            except (httpx.TransportError, ValueError) as exc:
                raise Retry(NetworkError(describe(exc), url=url)) from exc
            try:
                if response.status_code == 407 and proxy is not None:
                    why = f"through proxy {mask_url(proxy)}: HTTP 407 Proxy Authentication Required"
                    if hop == 0:
                        result.unreachable = why
                    raise NetworkError(why, url=url)
                location = response.headers.get("location")
                if response.is_redirect and location:
                    url = redirect_target(url, location)
                    result.redirects.append(url)
                    if url in seen:
                        raise TooManyRedirects("redirect loop", url=url)
                    continue
                cap = config.max_document_bytes
                await read_body(response, result, sink_factory, cap, conditional=bool(asked))
                return
            finally:
                await response.aclose()
        raise TooManyRedirects(f"more than {config.max_redirects} redirects", url=url)
