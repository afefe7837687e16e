"""Benchmark: what `sitescout report` adds to a walk, and how big the page gets (issue 13).

Run from the project root:

    .venv/bin/python benchmarks/report.py                    # 1,000,000 URLs, 3 rounds
    .venv/bin/python benchmarks/report.py --urls 100000 --shards 4 --rounds 1   # a quick look
    .venv/bin/python benchmarks/report.py --cli              # also time the two commands

It serves the flat 1M-URL site of `walk.py` (generated once into `benchmarks/.work/`, shared with
that script) from memory on 127.0.0.1 and measures, in one process:

1. walk: `async for batch in sitescout.walk(origin)` doing nothing with the batches;
2. walk + report: the same walk feeding every batch to `ReportBuilder.add_entries`, with the
   time spent inside `add_entries` summed (perf_counter and process_time around each call).

The two alternate (walk, walk + report, walk, ...) and the best of `--rounds` is kept. The
overhead is the aggregation's own time against the plain walk's wall time (the target is
<= 10 %); the difference of the two walls is printed too but is noisier on a shared machine.
Then the page is rendered from the walk + report round, and its size is printed (target < 2 MB).

3. synthetic: 1,000,000 entries of a messier site (deep paths, a few junk, sign-in and
   hreflang URLs, unique slugs per page so that the depth-2 table fills up) aggregated in
   process with no walk at all, for the per-URL cost and the page size in the worst case.

With `--cli`, `sitescout urls ORIGIN -o /dev/null -q` and `sitescout report ORIGIN -o FILE -q`
are also timed as whole processes (wall, best of `--rounds`).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _site import ensure_flat_index

import sitescout
from sitescout._models import Alternate, Entry
from sitescout._report import ReportBuilder, render_report

_SERVE = """
import sys, time
from pathlib import Path
from _site import SiteServer
with SiteServer(Path(sys.argv[1])) as server:
    print(server.origin, flush=True)
    while True:
        time.sleep(3600)
"""
BENCH_DIR = Path(__file__).resolve().parent
WORK_DIR = BENCH_DIR / ".work"
VENV_BIN = BENCH_DIR.parent / ".venv" / "bin"


@dataclass
class Round:
    wall: float
    cpu: float
    urls: int
    agg_wall: float = 0.0
    agg_cpu: float = 0.0


async def _walk(origin: str, builder: ReportBuilder | None) -> Round:
    wall0, cpu0 = time.perf_counter(), time.process_time()
    agg_wall = agg_cpu = 0.0
    urls = 0
    async for batch in sitescout.walk(origin + "/"):
        urls += len(batch)
        if builder is not None:
            w, c = time.perf_counter(), time.process_time()
            builder.add_entries(batch)
            agg_wall += time.perf_counter() - w
            agg_cpu += time.process_time() - c
    return Round(time.perf_counter() - wall0, time.process_time() - cpu0, urls, agg_wall, agg_cpu)


def synthetic(n: int) -> list[list[Entry]]:
    """Entries of a messier site than the generated one, in batches of 1,000."""
    sections = ("blog", "docs", "products", "help", "news", "fr", "de", "about", "careers")
    batches: list[list[Entry]] = []
    batch: list[Entry] = []
    for i in range(n):
        section = sections[i % len(sections)]
        if i % 500 == 3:
            path = f"/test-{i}/" if i % 1000 == 3 else f"/{section}/sample-page-{i}/"
        elif i % 700 == 5:
            path = f"/account/orders/{i}"
        else:
            path = f"/{section}/{2015 + i % 10}/post-about-thing-{i}/"
        alternates = ()
        if i % 20 == 7:
            alternates = (
                Alternate("en", f"https://www.example.com{path}"),
                Alternate("de", f"https://www.example.com/de{path}"),
            )
        batch.append(
            Entry(
                f"https://www.example.com{path}",
                lastmod=f"{2015 + i % 10}-{i % 12 + 1:02d}-{i % 28 + 1:02d}T10:00:00+00:00",
                sitemap=f"https://www.example.com/sitemaps/s{i // 50_000}.xml",
                alternates=alternates,
                depth=2,
            )
        )
        if len(batch) == 1000:
            batches.append(batch)
            batch = []
    if batch:
        batches.append(batch)
    return batches


def cli_round(origin: str, out: Path) -> tuple[float, float]:
    exe = str(VENV_BIN / "sitescout")
    start = time.perf_counter()
    subprocess.run([exe, "urls", origin + "/", "-o", "/dev/null", "-q"], check=False)
    urls_wall = time.perf_counter() - start
    start = time.perf_counter()
    subprocess.run([exe, "report", origin + "/", "-o", str(out), "-q"], check=False)
    return urls_wall, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--shards", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cli", action="store_true")
    args = parser.parse_args()
    per_shard = args.urls // args.shards
    directory = WORK_DIR / f"flat-{args.shards}x{per_shard}"
    start = time.perf_counter()
    stats, generated = ensure_flat_index(directory, args.shards, per_shard)
    print(
        f"site {directory.name}: {'generated' if generated else 'cached'} "
        f"({time.perf_counter() - start:.1f} s), {stats.page_urls:,} page URLs",
        file=sys.stderr,
    )
    plain: list[Round] = []
    fed: list[tuple[Round, ReportBuilder]] = []
    # The server runs in a process of its own: in this one it would share the GIL with the walk.
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVE, str(directory)],
        cwd=BENCH_DIR,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        origin = server.stdout.readline().strip()
        for _ in range(args.rounds):
            plain.append(asyncio.run(_walk(origin, None)))
            builder = ReportBuilder(site=origin)
            fed.append((asyncio.run(_walk(origin, builder)), builder))
        cli: list[tuple[float, float]] = []
        if args.cli:
            with tempfile.TemporaryDirectory() as tmp:
                for _ in range(args.rounds):
                    cli.append(cli_round(origin, Path(tmp) / "r.html"))
    finally:
        server.terminate()
        server.wait(timeout=10)
    walk = min(plain, key=lambda r: r.wall)
    best, builder = min(fed, key=lambda rb: rb[0].wall)
    agg = min(r.agg_wall for r, _ in fed)
    agg_cpu = min(r.agg_cpu for r, _ in fed)
    start = time.perf_counter()
    page = render_report(builder, title=f"{stats.page_urls:,}-URL site")
    render = time.perf_counter() - start
    print(f"\nwalk of {walk.urls:,} entries (best of {args.rounds}, in process)")
    print(f"  walk only            wall {walk.wall:7.2f} s   cpu {walk.cpu:7.2f} s")
    print(f"  walk + report        wall {best.wall:7.2f} s   cpu {best.cpu:7.2f} s")
    print(
        f"  inside add_entries   wall {agg:7.3f} s   cpu {agg_cpu:7.3f} s   "
        f"= {agg / walk.wall:.1%} of the plain walk's wall time "
        f"({agg / walk.urls * 1e9:.0f} ns per entry)"
    )
    print(f"  aggregation cpu      {agg_cpu / walk.cpu:.1%} of the plain walk's cpu time")
    print(f"  wall difference      {(best.wall - walk.wall) / walk.wall:+.1%}")
    print(f"  render               {render:.3f} s, page {len(page.encode()):,} bytes")
    if cli:
        urls_wall = min(u for u, _ in cli)
        report_wall = min(r for _, r in cli)
        print(
            f"\nCLI (best of {args.rounds}): urls -o /dev/null {urls_wall:.2f} s, "
            f"report -o FILE {report_wall:.2f} s ({report_wall / urls_wall - 1:+.1%})"
        )
    batches = synthetic(args.urls)
    best_cpu = float("inf")
    synth = ReportBuilder(site="https://www.example.com/")
    for _ in range(args.rounds):
        synth = ReportBuilder(site="https://www.example.com/")
        start_cpu = time.process_time()
        for batch in batches:
            synth.add_entries(batch)
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
    page = render_report(synth, title="synthetic")
    print(
        f"\nsynthetic {args.urls:,} entries: aggregation cpu {best_cpu:.2f} s "
        f"({best_cpu / args.urls * 1e9:.0f} ns per entry), {synth.junk_count:,} junk, "
        f"{synth.auth_count:,} sign-in, {len(synth.groups)} groups; "
        f"page {len(page.encode()):,} bytes"
    )


if __name__ == "__main__":
    main()
