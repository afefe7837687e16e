"""Benchmark: what `sitescout report` adds to a walk, and how big the page gets (issue 13).

Run from the project root:

    .venv/bin/python benchmarks/report.py                    # 1,000,000 URLs, 3 rounds
    .venv/bin/python benchmarks/report.py --urls 100000 --shards 4 --rounds 1   # a quick look
    .venv/bin/python benchmarks/report.py --cli              # also time the three commands
    .venv/bin/python benchmarks/report.py --smoke            # seconds: does it still work?

It serves the flat 1M-URL site of `walk.py` (generated once into `benchmarks/.work/`, shared with
that script) from memory on 127.0.0.1, in a process of its own, and measures, in this one:

1. walk: `async for batch in sitescout.walk(origin)` doing nothing with the batches;
2. walk + report: the same walk feeding every native batch to `ReportBuilder.add_batch`, as
   `sitescout report` does, with the time spent inside `add_batch` summed (perf_counter and
   process_time around each call).

The two alternate (walk, walk + report, walk, ...) and the best of `--rounds` is kept. The
overhead is the aggregation's own time against the plain walk's wall time (the target is
<= 10 %); the difference of the two walls is printed too but is noisier on a shared machine.
Then the page is rendered from the walk + report round, and its size is printed (target < 2 MB).

3. synthetic: 1,000,000 entries of a messier site (deep paths, a few junk, sign-in and
   hreflang URLs, unique slugs per page so that the depth-2 table fills up) aggregated in
   process with no walk at all, for the per-URL cost and the page size in the worst case.

With `--cli`, `sitescout urls ORIGIN -o /dev/null -q`, `sitescout report ORIGIN -o FILE -q` and
`sitescout groups ORIGIN -q` are also timed as whole processes (wall, best of `--rounds`); a
command that fails, or a report that is not written, stops the benchmark.

Every walk must yield the site's distinct URLs (its pages and their hreflang-only alternates, as
`_site.py` counts them); a walk that does not is marked WRONG.

`--smoke` runs the same on a 400-URL site of the same generator (2 urlsets, the whole mix still
in it) for one round, generated into a temporary directory instead of `.work/`: seconds, for the
test suite (`tests/test_benchmarks.py`).
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

from _site import check_smoke_mix, ensure_flat_index, work_dir

import sitescout
from sitescout._core import Batch
from sitescout._models import Alternate, Entry
from sitescout._report import ReportBuilder
from sitescout._report_html import render_report

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
SMOKE_URLS, SMOKE_SHARDS = 400, 2
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
    async for batch in sitescout.walk(origin + "/").batches():
        urls += len(batch)
        if builder is not None:
            w, c = time.perf_counter(), time.process_time()
            builder.add_batch(batch)
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
        alternates: tuple[Alternate, ...] = ()
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


def _command(argv: list[str]) -> float:
    """Wall seconds of one command; it must succeed."""
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-10:])
        raise SystemExit(f"`{' '.join(argv)}` failed (exit {done.returncode}):\n{tail}")
    return wall


def cli_round(origin: str, out: Path) -> tuple[float, float, float]:
    exe = str(VENV_BIN / "sitescout")
    urls_wall = _command([exe, "urls", origin + "/", "-o", "/dev/null", "-q"])
    out.unlink(missing_ok=True)
    report_wall = _command([exe, "report", origin + "/", "-o", str(out), "-q"])
    if not out.is_file() or not out.stat().st_size:
        raise SystemExit(f"`sitescout report` wrote no page to {out}")
    groups_wall = _command([exe, "groups", origin + "/", "-q"])
    return urls_wall, report_wall, groups_wall


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--shards", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cli", action="store_true")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"a tiny run to check that the benchmark works (--urls {SMOKE_URLS} --shards "
        f"{SMOKE_SHARDS} --rounds 1, the site in a temporary directory)",
    )
    args = parser.parse_args()
    if args.smoke:
        args.urls, args.shards, args.rounds = SMOKE_URLS, SMOKE_SHARDS, 1
        print(check_smoke_mix(args.urls, "to walk"), file=sys.stderr)
    if args.rounds < 1 or args.shards < 1 or args.urls < args.shards:
        parser.error("--rounds and --shards must be at least 1, --urls at least --shards")
    with work_dir(args.smoke) as root:
        run(args, root)


def run(args: argparse.Namespace, root: Path) -> None:
    per_shard = args.urls // args.shards
    directory = root / f"flat-{args.shards}x{per_shard}"
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
        if not origin.startswith("http://127.0.0.1:"):
            raise SystemExit("the site server did not start")
        for _ in range(args.rounds):
            plain.append(asyncio.run(_walk(origin, None)))
            builder = ReportBuilder(site=origin)
            fed.append((asyncio.run(_walk(origin, builder)), builder))
        cli: list[tuple[float, float, float]] = []
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
    page = render_report(builder.data(), title=f"{stats.page_urls:,}-URL site")
    render = time.perf_counter() - start
    if not walk.urls:
        raise SystemExit(f"the walk of {origin}/ yielded no URL")
    wrong = [r.urls for r in plain + [r for r, _ in fed] if r.urls != stats.distinct_urls]
    verdict = (
        f"WRONG: {wrong[0]:,} entries in a walk, {stats.distinct_urls:,} expected"
        if wrong
        else "each walk yielded them all"
    )
    smoke = "; smoke run: a tiny site, the figures only show that it works" if args.smoke else ""
    print(
        f"\nwalk of {walk.urls:,} entries (best of {args.rounds}, in process): "
        f"{stats.page_urls:,} pages + {stats.alternate_only_urls:,} hreflang-only alternates, "
        f"{verdict}{smoke}"
    )
    print(f"  walk only            wall {walk.wall:7.2f} s   cpu {walk.cpu:7.2f} s")
    print(f"  walk + report        wall {best.wall:7.2f} s   cpu {best.cpu:7.2f} s")
    print(
        f"  inside add_batch     wall {agg:7.3f} s   cpu {agg_cpu:7.3f} s   "
        f"= {agg / walk.wall:.1%} of the plain walk's wall time "
        f"({agg / walk.urls * 1e9:.0f} ns per entry)"
    )
    print(f"  aggregation cpu      {agg_cpu / walk.cpu:.1%} of the plain walk's cpu time")
    print(f"  wall difference      {(best.wall - walk.wall) / walk.wall:+.1%}")
    print(f"  render               {render:.3f} s, page {len(page.encode()):,} bytes")
    if cli:
        urls_wall = min(u for u, _, _ in cli)
        report_wall = min(r for _, r, _ in cli)
        groups_wall = min(g for _, _, g in cli)
        print(
            f"\nCLI (best of {args.rounds}): urls -o /dev/null {urls_wall:.2f} s, "
            f"report -o FILE {report_wall:.2f} s ({report_wall / urls_wall:.2f}x), "
            f"groups {groups_wall:.2f} s ({groups_wall / urls_wall:.2f}x)"
        )
    batches = [Batch.from_entries(entries) for entries in synthetic(args.urls)]
    best_cpu = float("inf")
    synth = ReportBuilder(site="https://www.example.com/")
    for _ in range(args.rounds):
        synth = ReportBuilder(site="https://www.example.com/")
        start_cpu = time.process_time()
        for batch in batches:
            synth.add_batch(batch)
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
    page = render_report(synth.data(), title="synthetic")
    print(
        f"\nsynthetic {args.urls:,} entries: aggregation cpu {best_cpu:.2f} s "
        f"({best_cpu / args.urls * 1e9:.0f} ns per entry), {synth.junk_count:,} junk, "
        f"{synth.auth_count:,} sign-in, {len(synth.groups)} groups; "
        f"page {len(page.encode()):,} bytes"
    )


if __name__ == "__main__":
    main()
