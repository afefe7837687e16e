"""Many real HTTP sites for the batch tests, each on its own loopback address 127.0.0.N.

On Linux all of 127.0.0.0/8 is loopback, so `127.0.0.2`, `127.0.0.3`, ... are distinct hosts to
the walker (distinct per-host limits, distinct partition keys). Each site is a small HTTP/1.1
server on an ephemeral port; one accept thread serves every listening socket of the farm and each
connection gets its own (daemon) thread, as in `tests/server.py`.

Every site counts the documents in flight at its host (from the start of a request to the end of
its reply) and keeps the maximum, and logs each request with monotonic start and end times, so
tests can check the per-host concurrency limit and Crawl-delay spacing from the server's side.

Site kinds (`KINDS`), built deterministically from the site's address:

    plain        robots.txt -> one urlset of K pages (K 5..300): hreflang alternates, `&amp;`
                 queries, whitespace around <loc>, mixed lastmod formats; some served gzipped
    fanout       robots.txt -> a sitemap index of 20 leaf urlsets (some gzipped, each answered
                 after ~20 ms) with URLs repeated across leaves
    fanout-delay the same, and robots.txt also asks for a Crawl-delay (never fanned out)
    crawl-delay  no sitemap; robots.txt `Crawl-delay: 0.2`; six HTML pages linked from /
    hanging      every request waits until the farm stops (no answer)
    error500     every request answers 500
    garbage      robots.txt lists a sitemap whose body is random bytes; the well-known index
                 path answers HTML; no page answers: the site has no URLs
    cycle        index A lists index B, which lists A and an urlset
    nosite       robots.txt 404, no sitemap; / links to four HTML pages (the link crawl)

Every wait in a handler is bounded and ends at once when the farm stops.
"""

from __future__ import annotations

import contextlib
import os
import random
import selectors
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .server import Reply, gz, sitemapindex, urlset

KINDS = (
    "plain",
    "fanout",
    "fanout-delay",
    "crawl-delay",
    "hanging",
    "error500",
    "garbage",
    "cycle",
    "nosite",
)
FIRST_HOST, LAST_HOST = 2, 70  # 127.0.0.2 .. 127.0.0.70
HANG_LIMIT = 120.0  # a hanging request never outlives this, even if the farm is never stopped
FANOUT_LEAVES = 20
LEAF_DELAY = 0.02
CRAWL_DELAY = 0.2

XML = "application/xml"
HTML = "text/html; charset=utf-8"
TEXT = "text/plain"

Route = Reply | Callable[["FarmHandler"], Reply | None]
Hook = Callable[["FarmHandler"], None]


@dataclass
class Request:
    path: str
    start: float
    peer: tuple[str, int]
    end: float | None = None
    status: int | None = None


class FarmHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30  # an idle keep-alive connection never keeps its thread longer than this
    server: _FarmServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.site.farm._opened(self.connection)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.site.farm._closed(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        return

    @property
    def site(self) -> FarmSite:
        return self.server.site

    def do_GET(self) -> None:
        site = self.site
        record = self._record = site._begin(self.path, self.client_address)
        try:
            for hook in list(site.hooks):
                hook(self)
            reply = site._route(self)
            if reply is not None:
                record.status = reply.status
                self.send_reply(reply)
            else:
                self.close_connection = True
        finally:
            site._end(record)

    def send_reply(self, reply: Reply) -> None:
        self.send_response(reply.status)
        headers = {"Content-Type": XML, **reply.headers}
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        # Counted as done just before the first bytes go out (`end_headers` sends the status
        # line and headers): a client that waits for an answer before its next request can then
        # never look concurrent. Counted after, the client could read the reply (a 404's status
        # is enough: it reads no body) and send the next request before this thread ran again;
        # clean CI runs on a loaded machine counted 2 in flight at a sequential host.
        self.site._end(self._record)
        self.end_headers()
        self.wfile.write(reply.body)

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, less if the farm stops; whether the farm stopped."""
        return self.site.farm.stopping.wait(seconds)


class _FarmServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128
    site: FarmSite

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # clients time out and hang up on purpose (the hanging site)


class FarmSite:
    """One site on one loopback address; `routes` maps a path (query included or not) to a
    reply or a handler function; `fallback` answers every other path (404 by default)."""

    def __init__(self, farm: Farm, kind: str, host: str) -> None:
        self.farm = farm
        self.kind = kind
        self.host = host
        self.routes: dict[str, Route] = {}
        self.fallback: Route = Reply(
            404, b"<html><body>not found</body></html>", {"Content-Type": HTML}
        )
        self.hooks: list[Hook] = []  # called at the start of every request (after counting it)
        self.expected_urls: set[str] | None = None
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.log: list[Request] = []
        self.hits: Counter[str] = Counter()
        self._server = _FarmServer((host, 0), FarmHandler, bind_and_activate=True)
        self._server.site = self
        self.port: int = self._server.server_address[1]

    def __repr__(self) -> str:
        return f"FarmSite({self.kind!r}, {self.url!r})"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def key(self) -> str:
        """The batch's partition key for this site: host and (non-default) port."""
        return f"{self.host}:{self.port}"

    def add(self, path: str, body: bytes | str, status: int = 200, content_type: str = XML) -> None:
        data = body.encode() if isinstance(body, str) else body
        self.routes[path] = Reply(status, data, {"Content-Type": content_type})

    def add_slow(self, path: str, body: bytes | str, delay: float, content_type: str = XML) -> None:
        data = body.encode() if isinstance(body, str) else body

        def slow(handler: FarmHandler) -> Reply | None:
            if handler.wait(delay):
                return None
            return Reply(200, data, {"Content-Type": content_type})

        self.routes[path] = slow

    def requests(self, predicate: Callable[[str], bool] | None = None) -> list[Request]:
        with self.lock:
            log = list(self.log)
        return [r for r in log if predicate is None or predicate(r.path)]

    def total_hits(self) -> int:
        with self.lock:
            return sum(self.hits.values())

    def reset_counters(self) -> None:
        with self.lock:
            self.log.clear()
            self.hits.clear()
            self.max_in_flight = self.in_flight

    def _begin(self, path: str, peer: tuple[str, int]) -> Request:
        record = Request(path, time.monotonic(), peer)
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.hits[path] += 1
            self.log.append(record)
        return record

    def _end(self, record: Request) -> None:
        with self.lock:
            if record.end is None:  # once: before the body is sent, or when the handler ends
                self.in_flight -= 1
                record.end = time.monotonic()

    def _route(self, handler: FarmHandler) -> Reply | None:
        path = handler.path
        route = self.routes.get(path) or self.routes.get(path.split("?", 1)[0]) or self.fallback
        return route(handler) if callable(route) else route


# -- the site kinds ------------------------------------------------------------------------------


def _robots(*lines: str) -> str:
    return "User-agent: *\n" + "".join(line + "\n" for line in lines)


LASTMODS = (
    "2024-01-02",
    "2024-01-02T03:04:05Z",
    "2024-01-02T03:04:05+02:00",
    "2024-01-02T03:04:05.123-05:00",
    "2024-01",
    "2024",
)


def build_plain(site: FarmSite, rng: random.Random) -> None:
    base = site.url
    k = rng.randint(5, 300)
    items: list[str] = []
    expected: set[str] = set()
    for i in range(k):
        query = f"?id={i}&sort=asc" if i % 7 == 3 else ""
        url = f"{base}/p/item-{i}{query}"
        expected.add(url)
        loc = url.replace("&", "&amp;")
        if i % 5 == 1:
            loc = f"\n    {loc}\n  "
        extra = ""
        if i % 4 == 0:
            extra += f"<lastmod>{LASTMODS[(i // 4) % len(LASTMODS)]}</lastmod>"
        if i % 6 == 2:
            alternate = f"{base}/de/p/item-{i}"
            expected.add(alternate)
            extra += (
                f'<xhtml:link rel="alternate" hreflang="en" href="{url.replace("&", "&amp;")}"/>'
                f'<xhtml:link rel="alternate" hreflang="de" href="{alternate}"/>'
            )
        if i % 9 == 0:
            extra += "<priority>0.5</priority><changefreq>weekly</changefreq>"
        items.append(f"<url><loc>{loc}</loc>{extra}</url>")
    doc = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:xhtml="http://www.w3.org/1999/xhtml">\n' + "\n".join(items) + "\n</urlset>\n"
    )
    if rng.random() < 0.25:
        site.add("/robots.txt", _robots("Allow: /", f"Sitemap: {base}/sitemap.xml.gz"), 200, TEXT)
        site.add("/sitemap.xml.gz", gz(doc), content_type="application/x-gzip")
    else:
        site.add("/robots.txt", _robots("Allow: /", f"Sitemap: {base}/sitemap.xml"), 200, TEXT)
        site.add("/sitemap.xml", doc)
    site.expected_urls = expected


def fanout_leaf_urls(base: str, leaf: int) -> list[str]:
    """Leaf `leaf`'s URLs: 15 of its own, one shared by every fourth leaf, and the previous
    leaf's first URL (so every leaf but the first repeats a URL of another)."""
    urls = [f"{base}/f/{leaf}/{i}" for i in range(15)]
    urls.append(f"{base}/f/shared-{leaf % 4}")
    if leaf:
        urls.append(f"{base}/f/{leaf - 1}/0")
    return urls


def build_fanout(site: FarmSite, rng: random.Random, *robots_lines: str) -> None:
    base = site.url
    leaves = []
    expected: set[str] = set()
    for leaf in range(FANOUT_LEAVES):
        urls = fanout_leaf_urls(base, leaf)
        expected.update(urls)
        body = urlset(urls, extra="<lastmod>2024-05-06</lastmod>")
        if leaf % 3 == 0:
            path = f"/leaf-{leaf}.xml.gz"
            site.add_slow(path, gz(body), LEAF_DELAY, content_type="application/x-gzip")
        else:
            path = f"/leaf-{leaf}.xml"
            site.add_slow(path, body, LEAF_DELAY)
        leaves.append(base + path)
    robots = _robots(*robots_lines, f"Sitemap: {base}/sitemap_index.xml")
    site.add("/robots.txt", robots, 200, TEXT)
    site.add("/sitemap_index.xml", sitemapindex(leaves))
    site.expected_urls = expected


def build_fanout_delay(site: FarmSite, rng: random.Random) -> None:
    build_fanout(site, rng, f"Crawl-delay: {CRAWL_DELAY:g}")


def _page(title: str, links: Iterable[str]) -> str:
    anchors = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    return (
        f"<!doctype html><html><head><title>{title}</title></head>"
        f"<body><h1>{title}</h1><ul>{anchors}</ul></body></html>"
    )


def build_crawl_delay(site: FarmSite, rng: random.Random) -> None:
    names = ["a", "b", "c", "d", "e"]
    site.add("/robots.txt", _robots(f"Crawl-delay: {CRAWL_DELAY:g}"), 200, TEXT)
    site.add("/", _page("Home", [f"/cd/{n}" for n in names[:3]]), content_type=HTML)
    graph = {"a": ["b", "d"], "b": ["c", "a"], "c": ["e"], "d": ["a"], "e": ["a", "b"]}
    for name, links in graph.items():
        site.add(
            f"/cd/{name}", _page(f"Page {name}", ["/", *(f"/cd/{n}" for n in links)]), 200, HTML
        )
    site.expected_urls = {f"{site.url}/"} | {f"{site.url}/cd/{n}" for n in names}


def build_hanging(site: FarmSite, rng: random.Random) -> None:
    def hang(handler: FarmHandler) -> Reply | None:
        handler.wait(HANG_LIMIT)
        return None

    site.fallback = hang


def build_error500(site: FarmSite, rng: random.Random) -> None:
    site.fallback = Reply(500, b"internal error", {"Content-Type": TEXT})


def build_garbage(site: FarmSite, rng: random.Random) -> None:
    site.add("/robots.txt", _robots(f"Sitemap: {site.url}/sitemap.xml"), 200, TEXT)
    site.add("/sitemap.xml", rng.randbytes(4096))
    site.add("/sitemap_index.xml", "<html><body><p>not a sitemap</p></body></html>", 200, HTML)
    site.expected_urls = set()


def build_cycle(site: FarmSite, rng: random.Random) -> None:
    base = site.url
    urls = [f"{base}/c/{i}" for i in range(8)]
    site.add("/robots.txt", _robots(f"Sitemap: {base}/a.xml"), 200, TEXT)
    site.add("/a.xml", sitemapindex([f"{base}/b.xml"]))
    site.add("/b.xml", sitemapindex([f"{base}/a.xml", f"{base}/c.xml"]))
    site.add("/c.xml", urlset(urls))
    site.expected_urls = set(urls)


def build_nosite(site: FarmSite, rng: random.Random) -> None:
    pages = [f"/n/{i}" for i in range(1, 5)]
    site.add("/", _page("Welcome", pages), content_type=HTML)
    for path in pages:
        site.add(path, _page(f"Page {path}", ["/", *pages]), content_type=HTML)
    site.expected_urls = {f"{site.url}/"} | {site.url + p for p in pages}


BUILDERS: dict[str, Callable[[FarmSite, random.Random], None]] = {
    "plain": build_plain,
    "fanout": build_fanout,
    "fanout-delay": build_fanout_delay,
    "crawl-delay": build_crawl_delay,
    "hanging": build_hanging,
    "error500": build_error500,
    "garbage": build_garbage,
    "cycle": build_cycle,
    "nosite": build_nosite,
}


# -- the farm ------------------------------------------------------------------------------------


class Farm:
    """`Farm(["plain", "fanout", ...]).start()` ... `.stop()`, or `with Farm(kinds) as farm:`.

    Site i listens on 127.0.0.(first_host + i). `seed` makes the URL sets reproducible (the
    ports are not: they are ephemeral)."""

    def __init__(
        self, kinds: Iterable[str], *, first_host: int = FIRST_HOST, seed: int = 0
    ) -> None:
        kinds = list(kinds)
        if first_host < FIRST_HOST or first_host + len(kinds) - 1 > LAST_HOST:
            raise ValueError(f"{len(kinds)} sites do not fit in 127.0.0.{FIRST_HOST}-{LAST_HOST}")
        unknown = set(kinds) - set(BUILDERS)
        if unknown:
            raise ValueError(f"unknown site kinds: {sorted(unknown)}")
        self.stopping = threading.Event()  # releases every waiting handler at once
        self._closing = threading.Event()
        self._connections: set[socket.socket] = set()
        self._conn_lock = threading.Lock()
        self.sites: list[FarmSite] = []
        try:
            for i, kind in enumerate(kinds):
                site = FarmSite(self, kind, f"127.0.0.{first_host + i}")
                self.sites.append(site)
                BUILDERS[kind](site, random.Random(f"{seed}:{kind}:{i}"))
        except BaseException:
            for site in self.sites:
                site._server.server_close()
            raise
        self._thread = threading.Thread(target=self._serve, name="sitefarm", daemon=True)

    def start(self) -> Farm:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._closing.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        for site in self.sites:
            site._server.server_close()
        with self._conn_lock:
            connections = list(self._connections)
        for conn in connections:  # idle keep-alive connections: end their threads now
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> Farm:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve(self) -> None:
        with selectors.DefaultSelector() as selector:
            for site in self.sites:
                selector.register(site._server, selectors.EVENT_READ, site._server)
            while not self._closing.is_set():
                for key, _ in selector.select(timeout=0.05):
                    server: _FarmServer = key.data
                    server._handle_request_noblock()

    def _opened(self, conn: socket.socket) -> None:
        with self._conn_lock:
            self._connections.add(conn)

    def _closed(self, conn: socket.socket) -> None:
        with self._conn_lock:
            self._connections.discard(conn)

    # -- queries --

    def of_kind(self, kind: str) -> list[FarmSite]:
        return [s for s in self.sites if s.kind == kind]

    def one(self, kind: str) -> FarmSite:
        (site,) = self.of_kind(kind)
        return site

    def by_key(self) -> dict[str, FarmSite]:
        return {s.key: s for s in self.sites}

    def total_hits(self) -> int:
        return sum(s.total_hits() for s in self.sites)

    def reset_counters(self) -> None:
        for site in self.sites:
            site.reset_counters()


# -- helpers for the tests -----------------------------------------------------------------------


def _hex_address(address: tuple[str, int]) -> str:
    host, port = address[0], address[1]
    return f"{int.from_bytes(socket.inet_aton(host), 'little'):08X}:{port:04X}"


def _socket_inode(peer: tuple[str, int], server: tuple[str, int]) -> str | None:
    """The inode of the open TCP socket from `peer` to `server` (Linux /proc/net/tcp).

    Both ends are matched and sockets without an owner (inode 0: TIME_WAIT and the like) are
    skipped: an earlier, closed connection from the same ephemeral port to another server can
    still be listed, and matching it would name no process."""
    local, remote = _hex_address(peer), _hex_address(server)
    try:
        with open("/proc/net/tcp") as f:
            lines = f.readlines()[1:]
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) > 9 and fields[1] == local and fields[2] == remote and fields[9] != "0":
            return fields[9]
    return None


def owner_pid(handler: BaseHTTPRequestHandler, pids: Iterable[int]) -> int | None:
    """Which of `pids` holds the client socket of the connection `handler` is serving.

    Used to kill the very worker process that is fetching a document: the server sees the
    worker's (address, port); the kernel knows which process has that socket open."""
    server: tuple[str, int] = handler.connection.getsockname()
    inode = _socket_inode(handler.client_address, server)
    if inode is None:
        return None
    target = f"socket:[{inode}]"
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                        return pid
    return None


@dataclass
class Gate:
    """Holds matching requests of a site until opened (or until the farm stops / `limit`)."""

    site: FarmSite
    prefix: str
    limit: float = 60.0
    opened: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.site.hooks.append(self._hold)

    def _hold(self, handler: FarmHandler) -> None:
        if not handler.path.startswith(self.prefix):
            return
        deadline = time.monotonic() + self.limit
        while not self.opened.is_set() and not self.site.farm.stopping.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self.opened.wait(min(left, 0.05))

    def open(self) -> None:
        self.opened.set()

    def close(self) -> None:
        self.opened.clear()
