"""Benchmark: pages per second of the link crawl (§10) over a 200-page site on loopback (issue 7).

    .venv/bin/python benchmarks/crawl.py                  # plain crawl, best of 3
    .venv/bin/python benchmarks/crawl.py --concurrency 8 --repeat 5
    .venv/bin/python benchmarks/crawl.py --render         # the same through headless Chromium
    .venv/bin/python benchmarks/crawl.py --smoke          # 20 pages, one run: does it still work?

The site (generated, deterministic): a home page and 200 pages (`--pages`), each about 12 KiB of
HTML with a header of 20 navigation links, ten links into the rest of the site, a footer and some
prose, so every page is reachable within depth 2 and the crawl's page limit (200, the most a crawl
allows; `--pages` when fewer) is what ends it. It is served from memory by a threaded HTTP/1.1
keep-alive server in a separate process (so the server does not share the crawler's GIL), on
127.0.0.1 at a free port; it stops when the script ends. The crawler is driven directly,
`Crawler(url, CrawlOptions(concurrency=..., render=..., max_pages=...))` (the walk builds its
`CrawlOptions` the same way), reading robots.txt itself (a 404 here).

`--smoke` runs the same crawl of a 20-page site of the same pages once (`--pages 20 --repeat 1`,
never `--render`): seconds, for the test suite (`tests/test_benchmarks.py`).

Pages per second = pages crawled (events) / wall time of the whole crawl, robots.txt and start-up
included; with `--render` the Chromium launch is included too (but not Chromium's own CPU). The
crawler's CPU time per page is printed as well: on a busy machine it is the steadier figure.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import socket
import statistics
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from sitescout import UsageError
from sitescout._crawl import MAX_PAGES, CrawledPage, Crawler, CrawlOptions

PAGES = MAX_PAGES  # the site: what one crawl may visit at most (§10)
SMOKE_PAGES = 20
WORDS = "site page guide news product team price help docs blog story data form about".split()


class _Server(ThreadingHTTPServer):
    """Quiet about a client that closes its keep-alive connection, loud about anything else."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _page(i: int, pages: int) -> bytes:
    nav = "".join(f'<li><a href="/p{j % pages}">Section {j}</a></li>' for j in range(20))
    links = "".join(f'<a href="/p{(i * 10 + k) % pages}/">related {k}</a> ' for k in range(1, 11))
    prose = " ".join(WORDS[(i + n) % len(WORDS)] for n in range(1200))
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Page {i}</title>'
        f'<link rel="canonical" href="/p{i}/"><meta name="description" content="page {i}">'
        f"</head><body><header><nav><ul>{nav}</ul></nav></header><main><h1>Page {i}</h1>"
        f"<h2>Intro</h2><p>{prose}</p><p>{links}</p></main>"
        f'<footer><a href="/">home</a> <a href="mailto:x@example.com">mail</a></footer>'
        f"</body></html>"
    ).encode()


def _serve(ready: Any, port_out: Any, count: int) -> None:
    pages = {f"/p{i}/": _page(i, count) for i in range(count)}
    pages["/"] = _page(count, count)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()  # no Nagle: headers and body are two writes
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            path = self.path if self.path.endswith("/") else self.path + "/"
            body = pages.get(self.path if self.path == "/" else path)
            status = 200 if body is not None else 404
            body = body or b"not found"
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = _Server(("127.0.0.1", 0), Handler)
    port_out.value = server.server_address[1]
    ready.set()
    server.serve_forever()


async def _crawl_once(url: str, options: CrawlOptions) -> tuple[int, float, float, int]:
    cpu, start = time.process_time(), time.perf_counter()
    crawler = Crawler(url, options)
    pages = failures = 0
    async for event in crawler:
        if isinstance(event, CrawledPage):
            pages += 1
            failures += not event.ok
    return pages, time.perf_counter() - start, time.process_time() - cpu, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pages", type=int, default=PAGES, help=f"pages of the site ({PAGES})")
    parser.add_argument("--render", action="store_true")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"a tiny run to check that the benchmark works (--pages {SMOKE_PAGES} --repeat 1)",
    )
    args = parser.parse_args()
    if args.smoke:
        if args.render:
            parser.error("--smoke does not render (it needs no browser)")
        args.pages, args.repeat = min(args.pages, SMOKE_PAGES), 1
    if args.repeat < 1 or args.pages < 1:
        parser.error("--repeat and --pages must be at least 1")
    # The crawl's own limit ends it, as on a real site larger than the limit.
    options = CrawlOptions(
        concurrency=args.concurrency, render=args.render, max_pages=min(args.pages, MAX_PAGES)
    )

    ctx = multiprocessing.get_context("spawn")
    ready, port = ctx.Event(), ctx.Value("i", 0)
    server = ctx.Process(target=_serve, args=(ready, port, args.pages), daemon=True)
    server.start()
    try:
        if not ready.wait(30):
            raise SystemExit("the benchmark server did not start")
        url = f"http://127.0.0.1:{port.value}/"
        rates: list[float] = []
        cpu_rates: list[float] = []
        for run in range(args.repeat):
            try:
                pages, elapsed, cpu, failures = asyncio.run(_crawl_once(url, options))
            except UsageError as exc:  # e.g. --render without a Chromium
                raise SystemExit(f"crawl.py: {exc}") from None
            if not pages:
                raise SystemExit(f"run {run + 1}: the crawl visited no page")
            rates.append(pages / elapsed)
            cpu_rates.append(pages / max(cpu, 1e-9))
            print(
                f"run {run + 1}: {pages} pages ({failures} failed) in {elapsed:.2f} s "
                f"= {pages / elapsed:.0f} pages/s; crawler CPU {cpu:.2f} s "
                f"= {1000 * cpu / pages:.1f} ms/page"
            )
        mode = "rendered" if args.render else "plain"
        print(
            f"{mode} crawl of a {args.pages}-page site, concurrency {args.concurrency}: "
            f"best {max(rates):.0f} pages/s, median {statistics.median(rates):.0f} pages/s "
            f"over {args.repeat} runs; CPU-bound ceiling {max(cpu_rates):.0f} pages per CPU second"
        )
    finally:
        server.terminate()
        server.join(5)


if __name__ == "__main__":
    main()
