"""Serve the sample site on 127.0.0.1 (an ephemeral port) in a background thread."""

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


@contextmanager
def serve() -> Iterator[str]:
    """Yield the base URL (no trailing slash) while the sample site is being served."""
    handler = type("Handler", (_Handler,), {"files": build()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
