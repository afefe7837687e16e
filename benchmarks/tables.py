"""Benchmark: `sitescout.to_arrow` / `to_pandas` against a walk alone and the list-of-dicts route.

Run from the project root:

    .venv/bin/python benchmarks/tables.py                       # 1,000,000 URLs, 3 rounds
    .venv/bin/python benchmarks/tables.py --urls 100000 --shards 4 --rounds 1   # a quick look
    .venv/bin/python benchmarks/tables.py --smoke                # seconds: does it still work?

It serves the flat site of `walk.py` (generated once into `benchmarks/.work/`, shared with that
script) from memory on 127.0.0.1, in a process of its own, and runs each variant in a fresh
process so that its peak RSS is its own:

0. baseline: sitescout, pyarrow and pandas imported, one Arrow array made, nothing walked;
1. walk: `async for batch in sitescout.walk(origin)` doing nothing with the batches;
2. to_arrow: `sitescout.to_arrow(origin)`;
3. to_pandas: `sitescout.to_pandas(origin)`;
4. dicts: what a script does without them: `pd.DataFrame([{...} for e in iter_urls(origin)])`
   with `lastmod` converted by `pd.to_datetime(..., utc=True, errors="coerce", format="ISO8601")`.

The variants alternate round by round; the best wall time and the lowest peak RSS of `--rounds`
are kept. Every variant but the baseline must give one row per distinct URL of the site (its
pages and their hreflang-only alternates, as `_site.py` counts them); one that does not is marked
WRONG.

`--smoke` runs the same on a 400-URL site of the same generator (2 urlsets, the whole mix still
in it) for one round, generated into a temporary directory instead of `.work/`: seconds, for the
test suite (`tests/test_benchmarks.py`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from _site import check_smoke_mix, ensure_flat_index, work_dir

_SERVE = """
import sys, time
from pathlib import Path
from _site import SiteServer
with SiteServer(Path(sys.argv[1])) as server:
    print(server.origin, flush=True)
    while True:
        time.sleep(3600)
"""

_CHILD = """
import asyncio, json, resource, sys, time
import sitescout

variant, origin = sys.argv[1], sys.argv[2] + "/"


async def walk_only() -> int:
    rows = 0
    async for batch in sitescout.walk(origin):
        rows += len(batch)
    return rows


def dicts() -> int:
    import pandas as pd

    frame = pd.DataFrame(
        [
            {
                "url": e.url, "lastmod": e.lastmod, "priority": e.priority,
                "changefreq": e.changefreq, "hreflang": e.hreflang,
                "alternate_of": e.alternate_of, "sitemap": e.sitemap, "depth": e.depth,
                "source": e.source, "title": e.title,
            }
            for e in sitescout.iter_urls(origin)
        ]
    )
    frame["lastmod"] = pd.to_datetime(
        frame["lastmod"], utc=True, errors="coerce", format="ISO8601"
    )
    return len(frame)


# Imports and pyarrow's first array (it sets up its memory pool) are fixed costs, paid before the
# clock starts; the `baseline` variant shows what they weigh.
if variant != "walk":
    import pandas
    import pyarrow

    pyarrow.array(["warm-up"])
wall0, cpu0 = time.perf_counter(), time.process_time()
if variant == "baseline":
    rows = 0
elif variant == "walk":
    rows = asyncio.run(walk_only())
elif variant == "to_arrow":
    rows = sitescout.to_arrow(origin).num_rows
elif variant == "to_pandas":
    rows = len(sitescout.to_pandas(origin))
else:
    rows = dicts()
wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"rows": rows, "wall": wall, "cpu": cpu, "rss_mib": peak}))
"""

BENCH_DIR = Path(__file__).resolve().parent
SMOKE_URLS, SMOKE_SHARDS = 400, 2
VARIANTS = ("baseline", "walk", "to_arrow", "to_pandas", "dicts")


def child(variant: str, origin: str, timeout: float) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, variant, origin],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{variant} failed:\n{proc.stderr}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--shards", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per child run")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"a tiny run to check that the benchmark works (--urls {SMOKE_URLS} --shards "
        f"{SMOKE_SHARDS} --rounds 1, the site in a temporary directory)",
    )
    args = parser.parse_args()
    if args.smoke:
        args.urls, args.shards, args.rounds = SMOKE_URLS, SMOKE_SHARDS, 1
        args.timeout = min(args.timeout, 60.0)
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
    runs: dict[str, list[dict[str, float]]] = {v: [] for v in VARIANTS}
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
        for round_no in range(args.rounds):
            for variant in VARIANTS:
                runs[variant].append(child(variant, origin, args.timeout))
                print(f"round {round_no + 1} {variant}: {runs[variant][-1]}", file=sys.stderr)
    finally:
        server.terminate()
        server.wait(timeout=10)
    base = min(r["wall"] for r in runs["walk"])  # the ratios: wall time over the bare walk's
    smoke = "; smoke run: a tiny site, the figures only show that it works" if args.smoke else ""
    print(
        f"\n{stats.page_urls:,} page URLs + {stats.alternate_only_urls:,} hreflang-only "
        f"alternates = {stats.distinct_urls:,} rows expected, best of {args.rounds} (each variant "
        f"its own process){smoke}"
    )
    header = ("variant", "rows", "wall s", "cpu s", "peak RSS MiB", "÷ walk")
    print("  {:<10} {:>10} {:>8} {:>8} {:>13} {:>7}".format(*header))
    for variant in VARIANTS:
        best = min(runs[variant], key=lambda r: r["wall"])
        rss = min(r["rss_mib"] for r in runs[variant])
        rows = {int(r["rows"]) for r in runs[variant]}
        want = 0 if variant == "baseline" else stats.distinct_urls
        wrong = "" if rows == {want} else f"  WRONG: {want:,} rows expected"
        print(
            f"  {variant:<10} {int(best['rows']):>10,} {best['wall']:>8.2f} {best['cpu']:>8.2f} "
            f"{rss:>13.0f} {best['wall'] / max(base, 1e-9):>6.2f}x{wrong}"
        )


if __name__ == "__main__":
    main()
