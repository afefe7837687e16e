"""Benchmark: what llms.txt costs (issue 13).

    .venv/bin/python benchmarks/llms.py                 # defaults below, best of 3
    .venv/bin/python benchmarks/llms.py --urls 200000 --links 20000 --repeat 5
    .venv/bin/python benchmarks/llms.py --smoke     # seconds: does it still work?

Two measurements:

1. Reading one llms.txt at the 5 MiB cap, in-process (no network): the scan of markdown links
   and the judging of each (normalization, the link filters, the `.md` mapping), for a file of
   distinct page links and for a hostile file (one line of a million `[` and unclosed links).
2. A walk over loopback of a site with one urlset of `--urls` URLs and an llms.txt of `--links`
   links (half of them also in the sitemap, half as `.md` copies): `--source sitemap` against
   `--source all`, wall and CPU time, so the cost of merging is visible beside the walk itself.

The site is served from memory by a threaded HTTP server in a separate process on 127.0.0.1.
Each walk must find every URL: the sitemap's, plus with `--source all` the llms.txt links that
are not a sitemap page's `.md` copy; a walk that does not is marked WRONG.

`--smoke` runs both on small inputs (llms.txt files of 64 KiB, a site of 200 URLs and 50 links,
once): seconds, for the test suite (`tests/test_benchmarks.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import sitescout
from sitescout._discover import LlmsReader
from sitescout._http import Fetcher
from sitescout._llms import MAX_LLMS_BYTES

SMOKE_BYTES, SMOKE_URLS, SMOKE_LINKS = 64 * 1024, 200, 50


class _Server(ThreadingHTTPServer):
    """Quiet about a client that closes its keep-alive connection, loud about anything else."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _body_of_links(size: int) -> str:
    lines = []
    total = 0
    i = 0
    while total < size:
        line = f"- [Page {i}](/docs/section-{i % 50}/topic-{i}.md): what page {i} is about\n"
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines)[:size]


def _read_cost(text: str, repeat: int) -> tuple[float, int]:
    best = float("inf")
    kept = 0
    for _ in range(repeat):
        reader = LlmsReader(Fetcher(), "https://example.com/")
        start = time.process_time()
        reader._collect(text, "https://example.com/llms.txt", 1, deeper=True)
        best = min(best, time.process_time() - start)
        kept = len(reader.links)
    return best, kept


def _serve(port_out: Any, routes: dict[str, tuple[bytes, str]]) -> None:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            body, kind = routes.get(self.path, (b"not found", "text/html"))
            self.send_response(200 if self.path in routes else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = _Server(("127.0.0.1", 0), Handler)
    port_out.send(server.server_address[1])
    server.serve_forever()


def _free_site(urls: int, links: int) -> tuple[multiprocessing.Process, str]:
    origin_placeholder = "http://ORIGIN"
    locs = "".join(f"<url><loc>{origin_placeholder}/docs/p{i}</loc></url>" for i in range(urls))
    sitemap = (
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"{locs}</urlset>"
    )
    # Half the links are sitemap pages (as .md copies), half are only in llms.txt.
    llms = "".join(
        f"- [P{i}](/docs/p{i}.md)\n" if i % 2 == 0 else f"- [Q{i}](/docs/q{i})\n"
        for i in range(links)
    )
    parent, child = multiprocessing.Pipe()
    routes_template = {"/sitemap.xml": sitemap, "/llms.txt": llms}
    proc = multiprocessing.Process(
        target=_serve_with_origin, args=(child, routes_template), daemon=True
    )
    proc.start()
    port = parent.recv()
    return proc, f"http://127.0.0.1:{port}"


def _serve_with_origin(port_out: Any, template: dict[str, str]) -> None:
    # The origin is known only once the server has its port: bind first, then fill it in.
    routes: dict[str, tuple[bytes, str]] = {}

    class _Pipe:
        def send(self, port: int) -> None:
            origin = f"http://127.0.0.1:{port}"
            routes["/sitemap.xml"] = (
                template["/sitemap.xml"].replace("http://ORIGIN", origin).encode(),
                "application/xml",
            )
            routes["/llms.txt"] = (template["/llms.txt"].encode(), "text/plain")
            port_out.send(port)

    _serve(_Pipe(), routes)


def _expected(urls: int, links: int, source: str) -> int:
    """URLs a walk finds: the sitemap's; with llms.txt, its links that are not a `.md` copy of a
    sitemap page (`/docs/p{i}.md` for an even i below `urls`)."""
    if source == "sitemap":
        return urls
    return urls + sum(1 for i in range(links) if i % 2 or i >= urls)


def _walk_cost(origin: str, source: str, repeat: int) -> tuple[float, float, int]:
    best_wall = best_cpu = float("inf")
    count = 0
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()

        async def run() -> int:
            n = 0
            async for batch in sitescout.walk(origin + "/", source=source):
                n += len(batch)
            return n

        count = asyncio.run(run())
        best_wall = min(best_wall, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best_wall, best_cpu, count


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=100_000)
    parser.add_argument("--links", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--bytes",
        type=int,
        default=MAX_LLMS_BYTES,
        help=f"size of the llms.txt files read in process (the cap: {MAX_LLMS_BYTES:,})",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"a tiny run to check that the benchmark works (--bytes {SMOKE_BYTES} --urls "
        f"{SMOKE_URLS} --links {SMOKE_LINKS} --repeat 1)",
    )
    args = parser.parse_args()
    if args.smoke:
        args.bytes, args.urls, args.links, args.repeat = (
            SMOKE_BYTES,
            SMOKE_URLS,
            SMOKE_LINKS,
            1,
        )
    if args.repeat < 1 or args.urls < 1 or args.links < 1 or not 0 < args.bytes <= MAX_LLMS_BYTES:
        parser.error(f"--repeat, --urls, --links at least 1, --bytes 1..{MAX_LLMS_BYTES}")

    text = _body_of_links(args.bytes)
    seconds, kept = _read_cost(text, args.repeat)
    print(
        f"llms.txt of {len(text) / 2**20:.2f} MiB, distinct links: {kept:,} page links kept "
        f"in {seconds:.2f} s CPU"
    )
    hostile = ("[" * 1_000_000 + "[a](/x" * 500_000)[: args.bytes]
    seconds, kept = _read_cost(hostile, args.repeat)
    print(f"hostile llms.txt of {len(hostile) / 2**20:.2f} MiB: {seconds:.2f} s CPU, {kept} links")

    proc, origin = _free_site(args.urls, args.links)
    try:
        for source in ("sitemap", "all"):
            wall, cpu, count = _walk_cost(origin, source, args.repeat)
            want = _expected(args.urls, args.links, source)
            verdict = "" if count == want else f"; WRONG: {want:,} expected"
            print(
                f"walk --source {source:7s}: {count:,} URLs in {wall:.2f} s wall, "
                f"{cpu:.2f} s CPU (best of {args.repeat}){verdict}"
            )
    finally:
        proc.terminate()
        proc.join()


if __name__ == "__main__":
    main()
