"""A small forward proxy on 127.0.0.1 for tests: absolute-form HTTP requests and CONNECT tunnels.

Threaded and bounded: every socket has a timeout, a tunnel relays for at most `TUNNEL_SECONDS`,
and only targets on 127.0.0.0/8 are reached (anything else gets 403): no test traffic leaves
loopback. `auth=(user, password)` makes it answer 407 to a request without those credentials.
`requests` records (method, target, Proxy-Authorization) of everything that reached it.
"""

from __future__ import annotations

import base64
import http.client
import ipaddress
import selectors
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

TUNNEL_SECONDS = 20.0
_HOP_BY_HOP = {"proxy-authorization", "proxy-connection", "connection", "keep-alive", "te"}


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _admit(self) -> bool:
        proxy = self.server.proxy
        given = self.headers.get("Proxy-Authorization", "")
        with proxy.lock:
            proxy.requests.append((self.command, self.path, given))
        if proxy.auth is None:
            return True
        token = base64.b64encode(f"{proxy.auth[0]}:{proxy.auth[1]}".encode()).decode()
        if given == f"Basic {token}":
            return True
        self._reply(407, b"proxy credentials needed", {"Proxy-Authenticate": 'Basic realm="t"'})
        return False

    def _reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if not self._admit():
            return
        target = urlsplit(self.path)
        if target.scheme != "http" or not _loopback(target.hostname or ""):
            self._reply(403, b"this test proxy only reaches loopback over http")
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        conn = http.client.HTTPConnection(target.hostname or "", target.port or 80, timeout=10)
        try:
            path = target.path + (f"?{target.query}" if target.query else "")
            conn.request("GET", path or "/", headers=headers)
            upstream = conn.getresponse()
            body = upstream.read()
            skip = {"transfer-encoding", "connection", "content-length", "keep-alive"}
            kept = {k: v for k, v in upstream.getheaders() if k.lower() not in skip}
            self._reply(upstream.status, body, kept)
        except OSError:
            self._reply(502, b"upstream failed")
        finally:
            conn.close()

    def do_CONNECT(self) -> None:
        if not self._admit():
            return
        host, _, port = self.path.rpartition(":")
        if not _loopback(host.strip("[]")) or not port.isdigit():
            self._reply(403, b"this test proxy only reaches loopback")
            return
        try:
            upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
        except OSError:
            self._reply(502, b"cannot connect")
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        self._relay(self.connection, upstream)

    def _relay(self, client: socket.socket, upstream: socket.socket) -> None:
        pairs = {client: upstream, upstream: client}
        end = time.monotonic() + TUNNEL_SECONDS
        with upstream, selectors.DefaultSelector() as sel:
            for sock in pairs:
                sel.register(sock, selectors.EVENT_READ)
            while time.monotonic() < end:
                for key, _ in sel.select(timeout=0.5):
                    ready = key.fileobj
                    if not isinstance(ready, socket.socket):
                        return
                    try:
                        data = ready.recv(65536)
                    except OSError:
                        return
                    if not data:
                        return
                    pairs[ready].sendall(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    proxy: ForwardProxy

    def handle_error(self, request: Any, client_address: Any) -> None:
        return


class ForwardProxy:
    def __init__(self, auth: tuple[str, str] | None = None) -> None:
        self.auth = auth
        self.requests: list[tuple[str, str, str]] = []
        self.lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.proxy = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, userinfo: str = "") -> str:
        return f"http://{userinfo + '@' if userinfo else ''}127.0.0.1:{self.port}"

    def start(self) -> ForwardProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
