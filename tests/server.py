"""A real HTTP server on 127.0.0.1 for tests: routes, counters, and misbehaviours on demand.

Each test builds a `Site`, registers routes (static bodies or handler functions that may sleep,
trickle, reset the connection), and reads `site.hits` afterwards to count what reached the server.
"""

from __future__ import annotations

import gzip
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[["RequestHandler"], Reply | None]


class RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        site = self.server.site
        path = self.path
        with site.lock:
            site.hits[path] += 1
            site.log.append((time.monotonic(), path, self.headers.get("User-Agent", "")))
        route = site.routes.get(path) or site.routes.get(path.split("?", 1)[0])
        if route is None:
            self.send_reply(
                Reply(404, b"<html><body>not found</body></html>", {"Content-Type": "text/html"})
            )
            return
        reply = route(self) if callable(route) else route
        if reply is not None:
            self.send_reply(reply)

    def send_reply(self, reply: Reply) -> None:
        self.send_response(reply.status)
        headers = {"Content-Type": "application/xml", **reply.headers}
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)

    def reset(self) -> None:
        """Close the connection with a TCP RST (SO_LINGER 0)."""
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog is 5: a walk opening more connections at once than the
    # server thread accepts would see the rest retried a second later, as a real server's
    # backlog (128 and up) would not.
    request_queue_size = 128
    site: Site

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # clients that hang up early (timeouts, cut walks) are what several tests do


class InFlight:
    """A route handler that answers after `wait` seconds (with what `reply` makes of the
    request), counting requests in flight: `most` is the most it was answering at once."""

    def __init__(self, wait: float, reply: Callable[[RequestHandler], Reply]) -> None:
        self.wait = wait
        self.reply = reply
        self.now = 0
        self.most = 0
        self._lock = threading.Lock()

    def __call__(self, handler: RequestHandler) -> Reply:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            time.sleep(self.wait)
        finally:
            with self._lock:
                self.now -= 1
        return self.reply(handler)


class Site:
    def __init__(self) -> None:
        self.routes: dict[str, Reply | Handler] = {}
        self.hits: Counter[str] = Counter()
        self.log: list[tuple[float, str, str]] = []
        self.lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), RequestHandler)
        self._server.site = self
        # A short poll: `stop()` waits for the loop's next poll, and tests stop hundreds of sites.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> Site:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add(self, path: str, body: bytes | str = b"", status: int = 200, **headers: str) -> None:
        data = body.encode() if isinstance(body, str) else body
        self.routes[path] = Reply(
            status, data, {k.replace("_", "-"): v for k, v in headers.items()}
        )

    def handle(self, path: str, handler: Handler) -> None:
        self.routes[path] = handler

    def total_hits(self, prefix: str = "") -> int:
        return sum(n for p, n in self.hits.items() if p.startswith(prefix))


def urlset(urls: list[str], extra: str = "") -> str:
    items = "".join(f"<url><loc>{u}</loc>{extra}</url>" for u in urls)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        'xmlns:xhtml="http://www.w3.org/1999/xhtml">'
        f"{items}</urlset>"
    )


def sitemapindex(urls: list[str]) -> str:
    items = "".join(f"<sitemap><loc>{u}</loc></sitemap>" for u in urls)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</sitemapindex>'
    )


def gz(text: str | bytes) -> bytes:
    return gzip.compress(text.encode() if isinstance(text, str) else text)
