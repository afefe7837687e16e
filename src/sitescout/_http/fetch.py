"""The `Fetcher`: the one path by which every document of a walk is read.

One `Fetcher` per run wraps one `httpx.AsyncClient` (`client`). It limits documents in flight
per host, takes each first request's turn under `--rate`, and runs the attempts of one document
(`retry`) inside one time limit; each attempt is read from disk (`body.read_local`) or over the
network (`hops`), redirects followed by hand and the user's headers and credentials sent to the
start origin only (`credentials`). It remembers, per origin, why none could be connected to.

Local documents: a `file://` URL, or one under a `--map` prefix, is read from disk inside the
same `fetch`, under the same time limit, through the same decoder and size cap, so the walk,
discovery and the budgets have one path for every document. `offline` refuses every other URL
without a request.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import urlsplit

import httpx

from .._errors import UsageError
from .._local import LocalFiles
from .._urls import is_http_url
from .body import read_local
from .client import build_client, proxy_for
from .config import EnvProxies, FetchConfig
from .credentials import Credentials
from .decode import Sink
from .guard import AddressGuard
from .hops import Hops
from .pace import take_turn
from .response import Conditional, Response, SinkFactory
from .retry import retrying
from .urls import full_origin

SinkT = TypeVar("SinkT", bound=Sink)


class Fetcher:
    """Async document fetcher; use as `async with Fetcher(config) as f: await f.fetch(...)`.

    `transport` replaces the network (tests pass an `httpx.MockTransport` to run in memory).
    It cannot be combined with `guard`: the guard's pinning lives in the transport it builds,
    so a guard beside an injected transport would look on while checking nothing.

    `origin`: the walk's start URL, the one origin the configured headers and credentials go to
    (default: the guard's root URL, else the first URL fetched).

    `config` may be replaced after entering (a crawl paces its retries by `Crawl-delay`): every
    request reads the one in force; the client's timeouts, TLS and transport keep the first.
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
        self._hops: Hops | None = None  # the request loop over `_client`, while entered
        self._hosts: dict[str, asyncio.Semaphore] = {}
        # By origin: None once a fetch there got an HTTP answer, else why the last could not
        # connect (see `cannot_connect`). One entry per origin fetched, like `_hosts`.
        self._reach: dict[str, str | None] = {}
        self._credentials = Credentials(origin or (guard.root_url if guard is not None else None))
        self._env_proxies = EnvProxies.read() if self.config.trust_env else EnvProxies()
        # Files read instead of the network (`file://` URLs, `--map` prefixes); `offline`: no
        # request at all, an http(s) URL that names no file is an error without one.
        self.local = local
        self.offline = offline

    def reads_locally(self, url: str) -> bool:
        """Whether `url` is read from disk, not requested."""
        return self.local is not None and self.local.handles(url)

    async def __aenter__(self) -> Fetcher:
        self._client = build_client(
            self.config,
            accept=self._accept,
            transport=self._transport,
            guard=self.guard,
            env_proxies=self._env_proxies,
            route=self.proxy_for,
        )
        self._hops = Hops(self._client, self._credentials, self.proxy_for)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._hops = None
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def proxy_for(self, url: str) -> str | None:
        """The proxy a request to `url` goes through, or None (direct)."""
        return proxy_for(url, self.config, self._env_proxies)

    def _slot(self, url: str) -> asyncio.Semaphore:
        host = urlsplit(url).netloc.lower()
        sem = self._hosts.get(host)
        if sem is None:
            sem = self._hosts[host] = asyncio.Semaphore(self.config.host_limit)
        return sem

    async def fetch(
        self,
        url: str,
        sink_factory: SinkFactory,
        *,
        time_limit: float | None = None,
        conditional: Conditional | None = None,
    ) -> Response:
        """Fetch `url`, streaming decoded bytes into the sink the factory returns.

        The factory sees the response (final URL, status, content type) before any byte and may
        return None to skip the body. Never raises for network trouble: see `Response.error`.
        Attempts, backoff and `Retry-After` waits all fit in `time_limit` (default: the
        configured timeout). `conditional`: the validators of a stored copy; a 304 to them
        sets `Response.not_modified` and reads no body.
        """
        result = Response(url=url, final_url=url)
        local = self.reads_locally(url)
        if not local and is_http_url(url):
            # A walk rooted on a file has no network class of its own: its first http(s)
            # document is the root the guard judges by, and the origin credentials go to.
            self._credentials.adopt(url)
            if self.guard is not None and not is_http_url(self.guard.root_url):
                self.guard.root_url = url
        start = time.monotonic()
        async with self._slot(url):
            if not local:
                # The first request's turn, outside its time limit.
                await take_turn(full_origin(url), self.config.rate)
            await retrying(
                result,
                lambda: self._once(result, sink_factory, conditional),
                self.config,
                time_limit or self.config.timeout,
            )
        result.elapsed = time.monotonic() - start
        self._remember_reach(result)
        return result

    def cannot_connect(self, url: str) -> str | None:
        """Why no connection could be made to `url`'s origin (`connection refused`, ...), when
        the last fetch there could not connect and none before it got an HTTP answer; else None.
        """
        return self._reach.get(full_origin(url))

    def _remember_reach(self, result: Response) -> None:
        origin = full_origin(result.url)
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
        conditional: Conditional | None = None,
    ) -> tuple[Response, SinkT | None]:
        """`fetch`, for callers that read their sink afterwards: the response and the sink of
        the last attempt that had a body (each retry starts a new one), or None."""
        made: list[SinkT] = []

        def factory(resp: Response) -> SinkT | None:
            sink = make_sink(resp)
            if sink is not None:
                made.append(sink)
            return sink

        resp = await self.fetch(url, factory, time_limit=time_limit, conditional=conditional)
        return resp, made[-1] if made else None

    async def _once(
        self, result: Response, sink_factory: SinkFactory, conditional: Conditional | None
    ) -> None:
        """One attempt: from disk when the URL names a file, else over the network."""
        assert self._hops is not None, "use Fetcher as an async context manager"
        config = self.config  # the one in force for this attempt
        cap = config.max_document_bytes
        if (self.local is not None or self.offline) and await read_local(
            self.local, self.offline, result, sink_factory, cap
        ):
            return
        result.not_modified = False
        await self._hops.follow(result, sink_factory, config, conditional)
