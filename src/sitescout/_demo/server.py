"""Serve the sample site on 127.0.0.1 (an ephemeral port, or the one asked for) in a background
thread."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

from .site import build


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    files: ClassVar[dict[str, tuple[str, bytes]]] = {}

    def setup(self) -> None:
        super().setup()
        # Without it keep-alive clients wait on delayed ACKs (~40 ms a request).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        found = self.files.get(path)
        status, (ctype, body) = (200, found) if found else (404, ("text/html", b"<h1>404</h1>"))
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that hangs up mid-answer (Ctrl-C on a walk) is not our error


@contextmanager
def serve(port: int = 0) -> Iterator[str]:
    """Yield the base URL (no trailing slash) while the sample site is being served.

    `port` 0 (the default) takes a free port. A port already in use raises `OSError` (errno
    `EADDRINUSE`) before anything is served.
    """
    handler = type("Handler", (_Handler,), {"files": build()})
    server = _Server(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
