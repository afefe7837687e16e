"""Benchmark: `sitescout.batch` on a Dask LocalCluster against the same work done in one process,
for many small sites and for one huge site, plus a projection to larger clusters.

Run from the project root (the project venv has Dask and pyarrow):

    .venv/bin/python benchmarks/batch.py                                  # 200 x 5,000 + 1M URLs
    .venv/bin/python benchmarks/batch.py --sites 20 --urls 1000 --skip-huge   # a quick look
    .venv/bin/python benchmarks/batch.py --repeat 3 --json batch.json
    .venv/bin/python benchmarks/batch.py --smoke           # about 30 s: does it still work?

1. Many sites (`--sites` x `--urls`, 10 ms of `--latency` slept before every response): each
   site on a loopback address of its own (127.0.1.1, 127.0.1.2, ...: `batch` keeps one lane
   per host name, so sites on one address would run one after another), robots.txt -> a
   sitemap index -> 2..5 gzipped urlsets with the mix of `_site.py` (every lastmod form,
   hreflang, `&amp;` queries, whitespace around `<loc>`s) and page URLs on the site's own
   origin, on a port-less CDN host or on a mixed-case host (see `_farm.py`). Measured, each in
   a fresh interpreter:
   - sequential: the sites one after another in one process, each `sitescout.walk(url)`
     streamed into its own Parquet file by the CLI's writer (`_table.ParquetWriter`, fed the
     way `sitescout urls --format parquet` feeds it);
   - `batch` (default cluster): `sitescout.batch(sites, out)` with no client: it starts and
     closes its own LocalCluster, so start-up and shut-down are inside the wall time;
   - `batch` (started cluster): the same LocalCluster shape started (and its workers warmed
     with the imports a task needs) before the clock starts: the steady-state cost.
2. One huge site (`--huge` URLs in `--leaves` gzipped urlsets under one index, no latency):
   `sitescout urls URL --format parquet -o FILE` as a child process against `batch` with
   `fanout` below the leaf count, so the leaves fan out over the workers (and, for reference,
   `batch` at its default fanout of 50, under which a 40-leaf index is one task).
3. A projection to 10,000 sites and to one 10M-URL site on 1, 8 and 64 workers, from the
   per-site and per-URL costs measured above; its assumptions are printed next to it.

Every output is checked URL by URL against the generator's exact sets (no URL missing, none
doubled, the `site` column as documented); a run that is not correct gets no ratio. Requests
are the farm's count per site for that run. Driver figures: wall by `time.perf_counter` around
the call, CPU by `time.process_time` (every thread of the driver, Dask's scheduler included:
a LocalCluster's scheduler lives in the driver process), peak RSS = its VmHWM. Worker
figures: the driver's descendants that are Dask worker processes, sampled every 0.1 s with
psutil (no RPC to the workers): peak RSS = their VmHWM (the kernel's high-water mark, so no
peak falls between samples), CPU = user + system. The `sitescout urls` child's wall, CPU and
peak RSS come from `os.wait4` in `walk.py`'s launcher. The task stream (`get_task_stream`)
of the started-cluster runs gives the serial parts: time before the first task, after the
last, and the fan-out's finishing task.

Before each run the script waits (up to `--wait-quiet` s) for other work on the machine to
stop, and each table says how much CPU other work took during that run anyway (`/proc/stat`
less the run's own processes and the farm's): a shared 2-core machine is noisy.

All traffic stays on 127.0.0.0/8: the farm only listens there, sitescout's client ignores
proxy variables, page URLs on other hosts are never fetched by a sitemap walk, and the Dask
cluster listens on 127.0.0.1.

`--smoke` runs all of it at the smallest size that still has everything in it: 4 sites x 100
URLs (one of each page-host style, the whole mix of `_site.py`), a huge site of 300 URLs in 3
urlsets (more than `fanout=2`: each walked by a leaf task of its own), LocalClusters of 1 worker
(`batch(workers=1)` for its own), one round, a short idle measurement and no wait for a quiet
machine, sites and outputs in a temporary directory instead of `.work/`. On the huge site it
runs `sitescout urls` and `batch(fanout=2)` on the started cluster only: `batch()` with its own
cluster runs on the many sites, and the run at fanout 50 is the same call as the fanned-out one.
It takes about half a minute on an idle machine, most of it Dask starting and stopping clusters,
for the test suite (`tests/test_benchmarks.py`); its figures only show that every variant ran
and was right.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
VENV_BIN = ROOT / ".venv" / "bin"
PYTHON = str(VENV_BIN / "python") if (VENV_BIN / "python").exists() else sys.executable
MIB = 1024 * 1024

TARGET_SPEEDUP = 1.7
SAMPLE_S = 0.1
IDLE_S = 2.0  # seconds a started cluster idles while its background CPU is measured
QUIET_WINDOW_S = 2.0  # seconds over which `wait_quiet` measures the machine's load
SMOKE = {"sites": 4, "urls": 100, "huge": 300, "leaves": 3, "fanout": 2, "workers": 1}
SMOKE_IDLE_S = SMOKE_QUIET_WINDOW_S = 0.2
SCAN_EVERY = 5  # samples between two looks for new worker processes (a walk of /proc)


# --- child programs (fresh interpreters: `batch.py --child NAME SPEC`) ----------------------


class Sampler(threading.Thread):
    """Samples this process and its Dask worker processes (RSS, VmHWM, CPU) every SAMPLE_S."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        import psutil

        self.psutil = psutil
        self.me = psutil.Process()
        self.procs: dict[int, Any] = {self.me.pid: self.me}
        self.kind: dict[int, str] = {self.me.pid: "driver"}
        self.gone: set[int] = set()
        self.peak_rss: dict[int, int] = {}
        self.hwm: dict[int, int] = {}
        self.cpu: dict[int, float] = {}
        self.marks: dict[str, dict[int, tuple[int, float]]] = {}
        self._halt = threading.Event()
        self._lock = threading.Lock()

    @staticmethod
    def vm_hwm(pid: int) -> int:
        try:
            with open(f"/proc/{pid}/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0

    def sample(self, scan: bool = True) -> None:
        """Read every known process; look for new ones first when `scan` (a walk of /proc)."""
        psutil = self.psutil
        children: list[Any] = []
        if scan:
            with contextlib.suppress(psutil.Error):
                children = self.me.children(recursive=True)
        with self._lock:
            for proc in children:
                if proc.pid in self.procs:
                    continue
                try:
                    cmd = " ".join(proc.cmdline())
                except psutil.Error:
                    continue
                worker = "spawn_main" in cmd or "distributed" in cmd
                self.procs[proc.pid], self.kind[proc.pid] = proc, "worker" if worker else "other"
            for pid, proc in self.procs.items():
                if pid in self.gone:
                    continue
                try:
                    rss = proc.memory_info().rss
                    times = proc.cpu_times()
                except psutil.Error:
                    self.gone.add(pid)
                    continue
                self.peak_rss[pid] = max(self.peak_rss.get(pid, 0), rss)
                self.hwm[pid] = max(self.hwm.get(pid, 0), self.vm_hwm(pid))
                self.cpu[pid] = times.user + times.system

    def mark(self, name: str) -> None:
        """Remember every known process's RSS and CPU now."""
        self.sample()
        with self._lock:
            self.marks[name] = {}
            for pid, proc in self.procs.items():
                try:
                    rss = proc.memory_info().rss
                except self.psutil.Error:
                    rss = 0
                self.marks[name][pid] = (rss, self.cpu.get(pid, 0.0))

    def run(self) -> None:
        ticks = 0
        while not self._halt.wait(SAMPLE_S):
            ticks += 1
            self.sample(scan=ticks % SCAN_EVERY == 0)

    def stop(self) -> dict[str, Any]:
        self._halt.set()
        self.join(timeout=5)
        with self._lock:
            out: dict[str, Any] = {"workers": [], "driver": {}}
            for pid, kind in self.kind.items():
                row = {
                    "pid": pid,
                    "peak_rss": max(self.peak_rss.get(pid, 0), self.hwm.get(pid, 0)),
                    "hwm": self.hwm.get(pid, 0),
                    "cpu": self.cpu.get(pid, 0.0),
                    "marks": {m: v.get(pid) for m, v in self.marks.items()},
                }
                if kind == "driver":
                    row["hwm"] = self.vm_hwm(pid)
                    row["peak_rss"] = max(row["peak_rss"], row["hwm"])
                    out["driver"] = row
                elif kind == "worker":
                    out["workers"].append(row)
            return out


def system_busy() -> float:
    """CPU seconds every process on the machine has used (all CPUs), from /proc/stat."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def wait_quiet(max_wait: float, threshold: float = 0.25, window: float = QUIET_WINDOW_S) -> float:
    """Wait up to `max_wait` s for the machine to go quiet (less than `threshold` cores busy
    over `window` s while none of this benchmark's work runs); the cores busy at the end."""
    deadline = time.monotonic() + max_wait
    while True:
        busy = system_busy()
        time.sleep(window)
        used = (system_busy() - busy) / window
        if used < threshold or time.monotonic() >= deadline:
            return used
        print(f"   waiting for a quiet machine: {used:.2f} cores busy", file=sys.stderr)


def _warm_worker() -> int:
    """Imports a task needs, done before the clock starts (a started cluster's steady state)."""
    import pyarrow.parquet  # noqa: F401

    import sitescout._batch  # noqa: F401

    return os.getpid()


def _batch_function() -> Any:
    import sitescout

    found = getattr(sitescout, "batch", None)
    if found is None:  # not exported yet: the module's own
        from sitescout._batch import batch as found
    return found


def child_seq(spec: dict[str, Any]) -> dict[str, Any]:
    """The sites one after another in one process: walk -> the CLI's Parquet writer."""
    import asyncio

    import sitescout
    from sitescout._table import ParquetWriter

    out = Path(spec["out"])
    out.mkdir(parents=True, exist_ok=True)
    sampler = Sampler()
    sampler.start()
    sampler.mark("before")

    async def one(url: str, path: Path) -> dict[str, Any]:
        start = time.perf_counter()
        walk = sitescout.walk(url)
        writer = ParquetWriter(path)
        try:
            async for batch in walk.batches():
                writer.write(batch)
        finally:
            writer.close()
        report = walk.report
        return {
            "seconds": time.perf_counter() - start,
            "urls": report.urls,
            "alternates": report.alternates,
            "partial": report.partial,
            "rows": writer.rows,
        }

    async def main() -> list[dict[str, Any]]:
        return [await one(s["url"], out / f"{s['key']}.parquet") for s in spec["sites"]]

    busy = system_busy()
    start, cpu = time.perf_counter(), time.process_time()
    sites = asyncio.run(main())
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    busy = system_busy() - busy
    sampler.mark("after")
    samples = sampler.stop()
    return {"wall": wall, "driver_cpu": cpu, "busy": busy, "sites": sites, "samples": samples}


def child_batch(spec: dict[str, Any]) -> dict[str, Any]:
    """`sitescout.batch` with its own cluster (spec["cluster"] is None) or a started one."""
    batch = _batch_function()
    import distributed

    sampler = Sampler()
    sampler.start()
    client = cluster = None
    startup = 0.0
    shape = spec.get("cluster")
    if shape is not None:
        start = time.perf_counter()
        cluster = distributed.LocalCluster(
            n_workers=shape["workers"],
            threads_per_worker=shape["threads"],
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        )
        client = distributed.Client(cluster)
        client.wait_for_workers(shape["workers"])
        client.run(_warm_worker)
        startup = time.perf_counter() - start
        # What driver and workers burn doing nothing (heartbeats, monitors): a rate, not a
        # cost per site.
        sampler.mark("idle0")
        time.sleep(spec.get("idle_s", IDLE_S))
        sampler.mark("idle1")
    else:
        # What `batch` itself imports before its cluster exists, so both variants start alike.
        import pyarrow.parquet  # noqa: F401

        import sitescout._batch  # noqa: F401
    sampler.mark("before")
    kwargs: dict[str, Any] = {"fanout": spec["fanout"]} if spec.get("fanout") else {}
    if client is None and spec.get("workers"):
        kwargs["workers"] = spec["workers"]  # its own cluster, of this many workers
    stream_cm: Any = (
        distributed.get_task_stream(client) if client is not None else contextlib.nullcontext()
    )
    with stream_cm as stream:
        call, busy = time.time(), system_busy()
        start, cpu = time.perf_counter(), time.process_time()
        results = batch([s["url"] for s in spec["sites"]], spec["out"], client=client, **kwargs)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        returned, busy = time.time(), system_busy() - busy
    sampler.mark("after")
    tasks = []
    if stream is not None:
        for t in stream.data:
            for ss in t.get("startstops", ()):
                if ss.get("action") == "compute":
                    kind = str(t["key"]).split("-", 1)[0]
                    tasks.append((kind, ss["start"], ss["stop"], t.get("worker")))
    nthreads: dict[str, int] = {}
    if client is not None:
        nthreads = dict(client.nthreads())
        client.close()
        cluster.close()  # type: ignore[union-attr]
    samples = sampler.stop()
    rows = []
    for r in results:
        row = {}
        for name in (
            "site",
            "url",
            "status",
            "documents",
            "urls",
            "alternates",
            "errors",
            "malformed",
            "partial",
            "seconds",
            "error_class",
            "error_message",
            "parts",
            "leaves",
        ):
            row[name] = getattr(r, name, None)
        for name in ("started_at", "finished_at"):
            value = getattr(r, name, None)
            row[name] = value.timestamp() if value is not None else None
        rows.append(row)
    return {
        "wall": wall,
        "driver_cpu": cpu,
        "busy": busy,
        "idle_s": spec.get("idle_s", IDLE_S),
        "startup": startup,
        "call": call,
        "returned": returned,
        "tasks": tasks,
        "nthreads": nthreads,
        "results": rows,
        "samples": samples,
    }


CHILDREN = {"seq": child_seq, "batch": child_batch}


def child_main(name: str, spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    result = CHILDREN[name](spec)
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


# --- measuring ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Measure:
    """One tool's runs on one workload (a list: `--repeat` rounds)."""

    key: str
    label: str
    walls: list[float] = field(default_factory=list)
    data: list[dict[str, Any]] = field(default_factory=list)
    failure: str | None = None
    wrong: str | None = None
    notes: list[str] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.failure is None and bool(self.walls)

    @property
    def correct(self) -> bool:
        return self.ok and self.wrong is None

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    def median(self, fn: Any) -> float:
        values = [fn(d) for d in self.data]
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else float("nan")

    @property
    def last(self) -> dict[str, Any]:
        return self.data[-1]


def _child_argv(name: str, spec_path: str) -> list[str]:
    return [PYTHON, str(Path(__file__).resolve()), "--child", name, spec_path]


def run_child(launcher: Any, name: str, spec: dict[str, Any], timeout: float) -> tuple[Any, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(spec, f)
        path = f.name
    try:
        run = launcher.run(_child_argv(name, path), timeout=timeout)
    finally:
        os.unlink(path)
    return run, run.result() if run.ok else None


def _failure(run: Any) -> str:
    if run.timed_out:
        return "timed out"
    tail = (run.stderr.strip().splitlines() or ["?"])[-1]
    return f"exit {run.returncode}: {tail[:200]}"


# --- verification ------------------------------------------------------------------------------


def expected_urls(site: Any) -> set[str]:
    """The exact URLs a walk of a farm site reports (hosts lower-cased, queries unescaped)."""
    from _site import is_hreflang_page, page_path, page_url

    origin = site.page_origin.lower()
    urls = {page_url(origin, i) for i in range(site.pages)}
    urls.update(f"{origin}/fr{page_path(i)}" for i in range(site.pages) if is_hreflang_page(i))
    return urls


def check_urls(found: list[str], want: set[str]) -> str | None:
    """None when `found` is exactly `want`, each once; what differs otherwise."""
    got = set(found)
    problems = []
    if len(found) != len(got):
        problems.append(f"{len(found) - len(got):,} doubled")
    if got - want:
        problems.append(f"{len(got - want):,} unexpected (e.g. {sorted(got - want)[0]})")
    if want - got:
        problems.append(f"{len(want - got):,} missing (e.g. {sorted(want - got)[0]})")
    return "; ".join(problems) or None


def verify_batch_output(
    out: Path, sites: list[Any], expect: dict[str, set[str]], results: list[dict[str, Any]]
) -> list[str]:
    """The dataset read as documented, per site against the exact sets; the counts of the
    returned SiteResults against the rows; sites.parquet's row count."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    problems: list[str] = []
    table = ds.dataset(out / "urls", format="parquet", partitioning="hive").to_table(
        columns=["url", "alternate_of", "site"]
    )
    by_site: dict[str, list[str]] = {}
    alternates: Counter[str] = Counter()
    for url, alt, key in zip(
        table.column("url").to_pylist(),
        table.column("alternate_of").is_valid().to_pylist(),
        table.column("site").to_pylist(),
        strict=True,
    ):
        by_site.setdefault(str(key), []).append(url)
        alternates[str(key)] += alt
    returned = {r["site"]: r for r in results}
    for site in sites:
        got = by_site.pop(site.key, [])
        problem = check_urls(got, expect[site.key])
        if problem:
            problems.append(f"{site.key}: {problem}")
        r = returned.get(site.key)
        alts = alternates[site.key]
        if r is None:
            problems.append(f"{site.key}: no SiteResult")
        elif (r["urls"], r["alternates"]) != (len(got) - alts, alts):
            problems.append(
                f"{site.key}: SiteResult says {r['urls']:,} pages + {r['alternates']:,} "
                f"alternates, the partition holds {len(got) - alts:,} + {alts:,}"
            )
        if not (out / "urls" / f"site={site.key.replace(':', '%3A')}" / "_SITE.json").exists():
            problems.append(f"{site.key}: no _SITE.json in site={site.key.replace(':', '%3A')}")
    for key, urls in by_site.items():
        problems.append(f"rows under an unknown site key {key!r}: {len(urls):,}")
    meta = pq.read_table(out / "sites.parquet")
    if meta.num_rows != len(sites):
        problems.append(f"sites.parquet has {meta.num_rows} rows, {len(sites)} expected")
    return problems


def verify_seq_output(out: Path, sites: list[Any], expect: dict[str, set[str]]) -> list[str]:
    import pyarrow.parquet as pq

    problems = []
    for site in sites:
        urls = pq.read_table(out / f"{site.key}.parquet", columns=["url"]).column("url")
        problem = check_urls(urls.to_pylist(), expect[site.key])
        if problem:
            problems.append(f"{site.key}: {problem}")
    return problems


# --- the workloads ------------------------------------------------------------------------------


@dataclass(slots=True)
class Workload:
    title: str
    sites: list[Any]
    measures: dict[str, Measure]
    rows: int  # URLs a correct run reports, all sites
    documents: int
    gz_bytes: int
    notes: list[str] = field(default_factory=list)


def _requests(farm: Any) -> tuple[int, Counter[str]]:
    stats = farm.stats()
    total = 0
    paths: Counter[str] = Counter()
    for s in stats.values():
        for path, n in s["requests"].items():
            total += n
            kind = (
                "robots.txt"
                if path == "/robots.txt"
                else "index"
                if path == "/sitemap_index.xml"
                else "urlset"
                if path.startswith("/sitemaps/")
                else path
            )
            paths[kind] += n
    return total, paths


def own_args(args: Options, **kwargs: int) -> str:
    """The arguments of a `batch()` call with its own cluster, as labels show them."""
    if args.own_workers:
        kwargs["workers"] = args.own_workers
    return ", ".join(f"{k}={v}" for k, v in kwargs.items())


def run_many(launcher: Any, args: Options, out_root: Path) -> Workload:
    from _farm import Farm

    start = time.perf_counter()
    farm_cm = Farm(sites=args.sites, urls=args.urls, latency=args.latency, python=PYTHON)
    with farm_cm as farm:
        sites = farm.sites
        print(
            f"== farm: {len(sites)} sites x {args.urls:,} URLs on 127.0.1.x, "
            f"{args.latency * 1000:g} ms latency, built in {time.perf_counter() - start:.1f} s",
            file=sys.stderr,
        )
        expect = {s.key: expected_urls(s) for s in sites}
        shape = {"workers": args.workers, "threads": args.threads}
        tools = [
            ("seq", "sequential, 1 process (walk -> ParquetWriter)", "seq", None),
            ("default", f"`batch({own_args(args)})`, its own LocalCluster", "batch", None),
            (
                "started",
                f"`batch()`, started LocalCluster {args.workers}x{args.threads}",
                "batch",
                shape,
            ),
        ]
        tools += [
            (
                f"started-{t}",
                f"`batch()`, started LocalCluster {args.workers}x{t}",
                "batch",
                {"workers": args.workers, "threads": t},
            )
            for t in args.also_threads
            if t != args.threads
        ]
        measures = {key: Measure(key, label) for key, label, _n, _s in tools}
        spec_sites = [{"url": s.url, "key": s.key} for s in sites]
        for round_ in range(args.repeat):
            order = tools[round_ % len(tools) :] + tools[: round_ % len(tools)]
            for key, _label, name, cluster in order:
                m = measures[key]
                if m.failure is not None:
                    continue
                out = out_root / f"many-{key}-{round_}"
                shutil.rmtree(out, ignore_errors=True)
                spec = {
                    "sites": spec_sites,
                    "out": str(out),
                    "cluster": cluster,
                    "idle_s": args.idle_s,
                    "workers": args.own_workers,
                }
                farm.reset()
                quiet = wait_quiet(args.wait_quiet, window=args.quiet_window)
                farm_cpu = farm.cpu_seconds()
                print(f"== many sites: {m.label} (round {round_ + 1})", file=sys.stderr)
                run, result = run_child(launcher, name, spec, args.timeout)
                reqs, paths = _requests(farm)
                if result is None:
                    m.failure = _failure(run)
                    print(run.stderr[-3000:], file=sys.stderr)
                    continue
                result["farm_cpu"] = farm.cpu_seconds() - farm_cpu
                result["request_kinds"] = dict(paths)
                result["quiet"] = quiet
                m.walls.append(result["wall"])
                m.data.append(result)
                m.requests.append(reqs)
                problems = (
                    verify_seq_output(out, sites, expect)
                    if name == "seq"
                    else verify_batch_output(out, sites, expect, result["results"])
                )
                if name == "batch":
                    statuses = Counter(r["status"] for r in result["results"])
                    if set(statuses) != {"complete"}:
                        problems.append(f"statuses {dict(statuses)}")
                if problems:
                    m.wrong = f"{len(problems)} problems, first: {problems[0]}"
                    print("\n".join(problems[:20]), file=sys.stderr)
                print(
                    f"   {result['wall']:.2f} s, {reqs} requests, "
                    f"{'OK' if not problems else 'WRONG'}",
                    file=sys.stderr,
                )
                shutil.rmtree(out, ignore_errors=True)
    return Workload(
        title=f"{len(sites)} sites x {args.urls:,} URLs, {args.latency * 1000:g} ms latency",
        sites=sites,
        measures=measures,
        rows=sum(s.rows for s in sites),
        documents=sum(s.documents for s in sites),
        gz_bytes=sum(s.gz_bytes for s in sites),
    )


def run_huge(launcher: Any, args: Options, out_root: Path, root: Path) -> Workload:
    from _farm import Farm
    from _site import ensure_flat_index, iter_alternate_only_urls, iter_page_urls

    per_leaf = args.huge // args.leaves
    directory = root / f"flat-{args.leaves}x{per_leaf}"
    start = time.perf_counter()
    stats, generated = ensure_flat_index(directory, args.leaves, per_leaf)
    print(
        f"== huge site {directory.name}: {'generated' if generated else 'cached'} "
        f"({time.perf_counter() - start:.1f} s)",
        file=sys.stderr,
    )
    with Farm(huge_dir=directory, python=PYTHON) as farm:
        site = farm.sites[0]
        origin = site.url.rstrip("/")
        want = set(iter_page_urls(stats, origin))
        want.update(iter_alternate_only_urls(stats, origin))
        expect = {site.key: want}
        shape = {"workers": args.workers, "threads": args.threads}
        fanout = max(1, min(args.fanout, args.leaves - 1))
        tools = [
            ("cli", "`sitescout urls --format parquet`", "cli", None, None),
            (
                "started",
                f"`batch(fanout={fanout})`, started LocalCluster {args.workers}x{args.threads}",
                "batch",
                shape,
                fanout,
            ),
            (
                "default",
                f"`batch({own_args(args, fanout=fanout)})`, its own LocalCluster",
                "batch",
                None,
                fanout,
            ),
            (
                "nofan",
                f"`batch()` at fanout 50 (one task), started {args.workers}x{args.threads}",
                "batch",
                shape,
                50,
            ),
        ]
        if args.smoke:
            # Its own cluster is the many sites' `default` run again, fanned out like `started`,
            # and `nofan` is `started` at another fanout: no code path of their own here, and a
            # cluster started and closed (the slowest part of a smoke run) each.
            tools = [t for t in tools if t[0] not in ("default", "nofan")]
        measures = {key: Measure(key, label) for key, label, *_ in tools}
        for round_ in range(args.repeat):
            order = tools[round_ % len(tools) :] + tools[: round_ % len(tools)]
            for key, _label, name, cluster, fan in order:
                m = measures[key]
                if m.failure is not None:
                    continue
                out = out_root / f"huge-{key}-{round_}"
                shutil.rmtree(out, ignore_errors=True)
                out.mkdir(parents=True)
                farm.reset()
                quiet = wait_quiet(args.wait_quiet, window=args.quiet_window)
                farm_cpu = farm.cpu_seconds()
                print(f"== huge site: {m.label} (round {round_ + 1})", file=sys.stderr)
                if name == "cli":
                    target = out / "urls.parquet"
                    argv = [
                        str(VENV_BIN / "sitescout"),
                        "urls",
                        site.url,
                        "--format",
                        "parquet",
                        "-o",
                        str(target),
                        "--quiet",
                    ]
                    busy = system_busy()
                    run = launcher.run(argv, timeout=args.timeout)
                    busy = system_busy() - busy
                    if not run.ok:
                        m.failure = _failure(run)
                        continue
                    result = {
                        "wall": run.wall,
                        "cpu": run.cpu,
                        "rss": run.rss_kib * 1024,
                        "busy": busy,
                    }
                    import pyarrow.parquet as pq

                    table = pq.read_table(target, columns=["url", "alternate_of"])
                    urls = table.column("url").to_pylist()
                    alts = sum(table.column("alternate_of").is_valid().to_pylist())
                    result["split"] = [len(urls) - alts, alts]
                    problem = check_urls(urls, want)
                    problems = [problem] if problem else []
                    del urls, table
                else:
                    spec = {
                        "sites": [{"url": site.url, "key": site.key}],
                        "out": str(out),
                        "cluster": cluster,
                        "fanout": fan,
                        "idle_s": args.idle_s,
                        "workers": args.own_workers,
                    }
                    run, result = run_child(launcher, name, spec, args.timeout)
                    if result is None:
                        m.failure = _failure(run)
                        print(run.stderr[-3000:], file=sys.stderr)
                        continue
                    problems = verify_batch_output(out, [site], expect, result["results"])
                    r0 = result["results"][0]
                    result["split"] = [r0["urls"], r0["alternates"]]
                    statuses = Counter(r["status"] for r in result["results"])
                    if set(statuses) != {"complete"}:
                        problems.append(f"statuses {dict(statuses)}")
                reqs, paths = _requests(farm)
                result["farm_cpu"] = farm.cpu_seconds() - farm_cpu
                result["request_kinds"] = dict(paths)
                result["quiet"] = quiet
                m.walls.append(result["wall"])
                m.data.append(result)
                m.requests.append(reqs)
                if problems:
                    m.wrong = f"{len(problems)} problems, first: {problems[0]}"
                    print("\n".join(problems[:20]), file=sys.stderr)
                print(
                    f"   {result['wall']:.2f} s, {reqs} requests, "
                    f"{'OK' if not problems else 'WRONG'}",
                    file=sys.stderr,
                )
                shutil.rmtree(out, ignore_errors=True)
    return Workload(
        title=f"one site, {stats.page_urls:,} URLs in {stats.shards} gzipped urlsets, no latency",
        sites=[site],
        measures=measures,
        rows=stats.distinct_urls,
        documents=stats.documents + 1,
        gz_bytes=site.gz_bytes,
    )


# --- figures from a run ------------------------------------------------------------------------


def worker_figures(d: dict[str, Any]) -> dict[str, Any]:
    """Peak RSS per worker, worker CPU spent in the call, idle RSS before it."""
    workers = d["samples"]["workers"]
    peaks = [w["peak_rss"] for w in workers]
    cpu = 0.0
    idle = []
    for w in workers:
        before = (w["marks"].get("before") or (0, 0.0))[1]
        after = (w["marks"].get("after") or (0, w["cpu"]))[1]
        cpu += max(after, w["cpu"]) - before
        if w["marks"].get("before"):
            idle.append(w["marks"]["before"][0])
    return {"peaks": peaks, "cpu": cpu, "idle": idle, "n": len(workers)}


def idle_rates(d: dict[str, Any]) -> tuple[float, float]:
    """CPU per second the driver and the workers (summed) burn while the cluster idles."""
    samples = d["samples"]
    rates = []
    for rows in ([samples["driver"]], samples["workers"]):
        total = 0.0
        for row in rows:
            a, b = row["marks"].get("idle0"), row["marks"].get("idle1")
            if a and b:
                total += (b[1] - a[1]) / d.get("idle_s", IDLE_S)
        rates.append(total)
    return rates[0], rates[1]


def own_cpu(d: dict[str, Any]) -> float:
    """CPU this run's processes used during the measured window (the farm's included)."""
    if "results" in d:
        own = d["driver_cpu"] + worker_figures(d)["cpu"]
    else:
        own = d.get("driver_cpu", d.get("cpu", 0.0))
    return own + d.get("farm_cpu", 0.0)


def others_cpu(d: dict[str, Any]) -> float:
    """CPU other work on the machine took during the window: the noise in this run."""
    return max(0.0, d.get("busy", 0.0) - own_cpu(d))


def task_figures(d: dict[str, Any]) -> dict[str, Any]:
    """From the task stream: per kind count / compute seconds / span, and the serial edges."""
    tasks = d.get("tasks") or []
    if not tasks:
        return {}
    kinds: dict[str, dict[str, float]] = {}
    for kind, start, stop, _worker in tasks:
        k = kinds.setdefault(kind, {"n": 0, "busy": 0.0, "first": start, "last": stop})
        k["n"] += 1
        k["busy"] += stop - start
        k["first"], k["last"] = min(k["first"], start), max(k["last"], stop)
    first = min(t[1] for t in tasks)
    last = max(t[2] for t in tasks)
    return {
        "kinds": kinds,
        "head": first - d["call"],  # the call until the first task computes
        "tail": d["returned"] - last,  # the last task's end until the call returns
        "span": last - first,
    }


def mib(n: float) -> str:
    return f"{n / MIB:.0f}"


def _ratio(base: Measure | None, m: Measure) -> str:
    if base is None or not (base.correct and m.correct) or base is m:
        return ""
    return f"{base.wall / m.wall:.2f}×"


# --- report ------------------------------------------------------------------------------------


def print_many(w: Workload, args: Options) -> None:
    n = len(w.sites)
    print(
        f"\n#### {w.title}: {w.rows:,} URLs with hreflang alternates, {w.documents:,} documents "
        f"({w.gz_bytes / MIB:.1f} MiB of gzipped urlsets)\n"
    )
    print(
        "| tool | wall s | URLs/s | speed-up vs sequential | driver CPU s | worker CPU s "
        "| driver peak RSS MiB | worker peak RSS MiB (each) | requests | mean site task s "
        "| others' CPU s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    seq = w.measures.get("seq")
    for m in w.measures.values():
        if not m.ok:
            print(f"| {m.label} | failed: {m.failure} | | | | | | | | | |")
            continue
        d = m.last
        label = m.label if m.wrong is None else f"{m.label} **WRONG**: {m.wrong}"
        drv = d["samples"]["driver"]
        if "results" in d:
            wf = worker_figures(d)
            wcpu = f"{m.median(lambda x: worker_figures(x)['cpu']):.2f}"
            wpeak = " / ".join(mib(p) for p in wf["peaks"])
            task_s = statistics.mean(r["seconds"] for r in d["results"])
        else:
            wcpu, wpeak = "", "(none)"
            task_s = statistics.mean(s["seconds"] for s in d["sites"])
        print(
            f"| {label} | {m.wall:.2f} | {w.rows / m.wall:,.0f} | {_ratio(seq, m)} "
            f"| {m.median(lambda x: x['driver_cpu']):.2f} | {wcpu} | {mib(drv['peak_rss'])} "
            f"| {wpeak} | {m.requests[-1]:,} | {task_s:.3f} "
            f"| {m.median(others_cpu):.2f} |"
        )
    for m in w.measures.values():
        if not m.ok or "results" not in m.last:
            continue
        d = m.last
        wf = worker_figures(d)
        tf = task_figures(d)
        bits = [f"{wf['n']} worker processes"]
        if d.get("nthreads"):
            bits.append(f"threads per worker {sorted(set(d['nthreads'].values()))}")
        if d.get("startup"):
            bits.append(f"cluster start + warm-up {d['startup']:.2f} s (outside the wall time)")
            drv_idle, wrk_idle = idle_rates(d)
            bits.append(
                f"idle CPU: driver {drv_idle:.3f}, workers {wrk_idle:.3f} CPU-s per s; net of it, "
                f"driver {(d['driver_cpu'] - drv_idle * d['wall']) / n * 1000:.1f} and workers "
                f"{(wf['cpu'] - wrk_idle * d['wall']) / n * 1000:.1f} ms CPU per site"
            )
        if wf["idle"]:
            bits.append(f"idle worker RSS {' / '.join(mib(x) for x in wf['idle'])} MiB")
        if tf:
            bits.append(
                f"first task {tf['head'] * 1000:.0f} ms after the call, return "
                f"{tf['tail'] * 1000:.0f} ms after the last task"
            )
        bits.append(f"driver CPU per site {d['driver_cpu'] / n * 1000:.1f} ms")
        bits.append(f"worker CPU per site {wf['cpu'] / n * 1000:.1f} ms")
        print(f"- {m.label}: " + "; ".join(bits) + ".")
    if seq is not None and seq.ok:
        d = seq.last
        print(
            f"- sequential: {d['driver_cpu'] / n * 1000:.1f} ms CPU and "
            f"{d['wall'] / n * 1000:.1f} ms wall per site; the farm used "
            f"{d.get('farm_cpu', 0):.2f} s CPU serving it."
        )
    kinds = {k: m.last.get("request_kinds") for k, m in w.measures.items() if m.ok}
    print(f"- requests by kind: {json.dumps(kinds)} (minimum: {w.documents:,} documents).")
    print_rounds(w)
    for m in w.measures.values():
        if m.wrong:
            print(f"- {m.label}: WRONG, {m.wrong}")
    print(
        "- every run checked URL by URL against the generator's sets"
        + (" (all correct)" if all(m.correct for m in w.measures.values()) else "")
        + "."
    )


def print_rounds(w: Workload) -> None:
    """Every round's wall time and the CPU other work took during it (medians hide spread)."""
    if max(len(m.walls) for m in w.measures.values()) < 2:
        return
    parts = []
    for m in w.measures.values():
        if m.ok:
            rounds = ", ".join(
                f"{wall:.2f} ({others_cpu(d):.1f})" for wall, d in zip(m.walls, m.data, strict=True)
            )
            parts.append(f"{m.key}: {rounds}")
    print("- wall s per round (others' CPU s): " + "; ".join(parts) + ".")


def print_huge(w: Workload) -> None:
    print(
        f"\n#### {w.title}: {w.rows:,} URLs with hreflang alternates "
        f"({w.gz_bytes / MIB:.1f} MiB of gzipped urlsets)\n"
    )
    print(
        "| tool | wall s | URLs/s | speed-up vs `sitescout urls` | CPU s (driver + workers) "
        "| driver peak RSS MiB | worker peak RSS MiB (each) | requests | others' CPU s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    cli = w.measures.get("cli")
    for m in w.measures.values():
        if not m.ok:
            print(f"| {m.label} | failed: {m.failure} | | | | | | | |")
            continue
        d = m.last
        label = m.label if m.wrong is None else f"{m.label} **WRONG**: {m.wrong}"
        if m.key == "cli":
            cpu = f"{m.median(lambda x: x['cpu']):.2f}"
            drv, wpeak = mib(d["rss"]), "(one process)"
        else:
            wf = worker_figures(d)
            cpu = f"{m.median(lambda x: x['driver_cpu'] + worker_figures(x)['cpu']):.2f}"
            drv = mib(d["samples"]["driver"]["peak_rss"])
            wpeak = " / ".join(mib(p) for p in wf["peaks"])
        print(
            f"| {label} | {m.wall:.2f} | {w.rows / m.wall:,.0f} | {_ratio(cli, m)} | {cpu} "
            f"| {drv} | {wpeak} | {m.requests[-1]:,} | {m.median(others_cpu):.2f} |"
        )
    for m in w.measures.values():
        if not m.ok or m.key == "cli":
            continue
        d = m.last
        tf = task_figures(d)
        r = d["results"][0]
        bits = [f"{r['leaves']} leaves, {r['parts']} parts, {r['documents']} documents"]
        span = (r["finished_at"] or 0) - (r["started_at"] or 0)
        bits.append(f"SiteResult.seconds {r['seconds']:.2f} (finished_at - started_at {span:.2f})")
        wf = worker_figures(d)
        if wf["idle"]:
            bits.append(f"idle worker RSS {' / '.join(mib(x) for x in wf['idle'])} MiB")
        if tf:
            for kind, k in tf["kinds"].items():
                bits.append(
                    f"{int(k['n'])} `{kind}` task(s): {k['busy']:.2f} s busy, "
                    f"{k['last'] - k['first']:.2f} s from first start to last end"
                )
            bits.append(
                f"first task {tf['head'] * 1000:.0f} ms after the call, return "
                f"{tf['tail'] * 1000:.0f} ms after the last task"
            )
        print(f"- {m.label}: " + "; ".join(bits) + ".")
    kinds = {k: m.last.get("request_kinds") for k, m in w.measures.items() if m.ok}
    print(f"- requests by kind: {json.dumps(kinds)} (minimum: {w.documents} documents).")
    splits = {k: m.last.get("split") for k, m in w.measures.items() if m.ok}
    print(
        f"- pages + alternates reported: {json.dumps(splits)} (a URL listed both as a page and "
        "as another page's hreflang alternate counts as whichever the walk met first)."
    )
    print_rounds(w)
    for m in w.measures.values():
        if m.wrong:
            print(f"- {m.label}: WRONG, {m.wrong}")


# --- projection ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Costs:
    site_cpu: float  # worker CPU per site (s)
    driver_site: float  # driver CPU per site (s): serial
    seq_site_cpu: float  # one-process CPU per site
    setup: float  # cluster start (s)
    site_bytes: float  # gzipped bytes per site
    site_docs: float
    url_cpu: float | None  # worker CPU per URL of a fanned-out site
    url_cli: float | None  # one process (`sitescout urls`) CPU per URL
    head: float | None  # root task + time before it: serial
    finish_url: float | None  # finishing task seconds per URL: serial
    driver_leaf: float | None  # driver CPU per leaf task: serial
    bytes_url: float | None  # gzipped bytes per URL
    leaf_docs: float | None  # requests per leaf task


def derive_costs(many: Workload, huge: Workload | None) -> Costs | None:
    started, seq = many.measures.get("started"), many.measures.get("seq")
    if started is None or not started.ok or seq is None or not seq.ok:
        return None
    n = len(many.sites)
    # Net of what driver and workers burn idle (a rate while the batch lasts, not per site).
    site_cpu = started.median(lambda d: worker_figures(d)["cpu"] - idle_rates(d)[1] * d["wall"])
    site_cpu /= n
    driver_site = started.median(lambda d: d["driver_cpu"] - idle_rates(d)[0] * d["wall"]) / n
    setup = started.median(lambda d: d["startup"])
    seq_cpu = seq.median(lambda d: d["driver_cpu"]) / n
    url_cpu = url_cli = head = finish_url = driver_leaf = bytes_url = leaf_docs = None
    if huge is not None:
        h, cli = huge.measures.get("started"), huge.measures.get("cli")
        rows = huge.rows
        if h is not None and h.ok:
            d = h.last
            tf = task_figures(d)
            kinds = tf.get("kinds", {})
            fin = kinds.get("finish", {}).get("busy", 0.0)
            root = kinds.get("site", {}).get("busy", 0.0)
            drv_idle, wrk_idle = idle_rates(d)
            url_cpu = (worker_figures(d)["cpu"] - wrk_idle * d["wall"] - fin - root) / rows
            head = tf.get("head", 0.0) + root
            finish_url = fin / rows
            leaves = max(1, d["results"][0]["leaves"])
            driver_leaf = (d["driver_cpu"] - drv_idle * d["wall"]) / (leaves + 2)
            bytes_url = huge.gz_bytes / rows
            kinds_req = d.get("request_kinds", {})
            leaf_docs = sum(kinds_req.values()) / leaves - 2 / leaves
        if cli is not None and cli.ok:
            url_cli = cli.median(lambda d: d["cpu"]) / rows
    return Costs(
        site_cpu=site_cpu,
        driver_site=driver_site,
        seq_site_cpu=seq_cpu,
        setup=setup,
        site_bytes=many.gz_bytes / n,
        site_docs=many.documents / n,
        url_cpu=url_cpu,
        url_cli=url_cli,
        head=head,
        finish_url=finish_url,
        driver_leaf=driver_leaf,
        bytes_url=bytes_url,
        leaf_docs=leaf_docs,
    )


RTT_SITE = 7  # dependent round trips of one site (see the assumptions printed)
RTT_LEAF = 1  # a leaf document on a warm connection (+ its own connection: 2 more)
BANDWIDTH = 12.5e6  # bytes/s per connection (100 Mbit/s)
PER_URLSET = 50_000  # the protocol's maximum URLs per urlset
LEAF_LANE = 8  # min(concurrency 8, per_host 8): leaf tasks of one host at once


def project_sites(c: Costs, sites: int, workers: int, threads: int, latency: float) -> float:
    """Amdahl: the driver's per-site CPU is serial and added, not overlapped (an upper bound);
    each worker is one core whose `threads` walks overlap their network waits."""
    wait = RTT_SITE * latency + c.site_bytes / BANDWIDTH
    per_worker = max(c.site_cpu, (c.site_cpu + wait) / threads)
    return c.setup + sites * c.driver_site + sites * per_worker / workers


def project_seq_sites(c: Costs, sites: int, latency: float) -> float:
    wait = RTT_SITE * latency + c.site_bytes / BANDWIDTH
    return sites * (c.seq_site_cpu + wait)


def project_huge(c: Costs, urls: int, workers: int, threads: int, latency: float) -> float:
    assert c.url_cpu is not None and c.head is not None and c.finish_url is not None
    assert c.driver_leaf is not None and c.bytes_url is not None
    leaves = -(-urls // PER_URLSET)
    per_leaf = urls / leaves
    leaf_cpu = per_leaf * c.url_cpu
    leaf_wait = (RTT_LEAF + 2) * latency + per_leaf * c.bytes_url / BANDWIDTH
    cores = min(workers, LEAF_LANE)
    slots = min(workers * threads, LEAF_LANE)
    leaf_phase = leaves * max(leaf_cpu / cores, (leaf_cpu + leaf_wait) / slots)
    head = c.head + 2 * RTT_SITE * latency
    return c.setup + head + leaf_phase + urls * c.finish_url + leaves * c.driver_leaf


def project_cli(c: Costs, urls: int, latency: float) -> float:
    assert c.url_cli is not None and c.bytes_url is not None
    leaves = -(-urls // PER_URLSET)
    wait = leaves * (RTT_LEAF * latency + urls / leaves * c.bytes_url / BANDWIDTH) / LEAF_LANE
    return urls * c.url_cli + max(0.0, wait - urls * c.url_cli) + RTT_SITE * latency


def _dur(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.1f} s"


def print_projection(c: Costs | None, args: Options, measured: Workload) -> None:
    if c is None:
        print("\n#### Projection: needs the sequential and started-cluster runs to be correct")
        return
    threads = args.threads
    print(
        f"\n#### Projection (from the costs measured above; workers of 1 core x {threads} "
        "threads)\n"
    )
    print("| workload | latency | 1 process, no Dask | 1 worker | 8 workers | 64 workers |")
    print("|---|---:|---:|---:|---:|---:|")
    sites = 10_000
    for latency in (0.010, 0.050):
        cells = [_dur(project_sites(c, sites, w, threads, latency)) for w in (1, 8, 64)]
        seq = _dur(project_seq_sites(c, sites, latency))
        print(
            f"| {sites:,} sites x {args.urls:,} URLs | {latency * 1000:.0f} ms | {seq} | "
            + " | ".join(cells)
            + " |"
        )
    huge_ok = c.url_cpu is not None and c.url_cli is not None
    if huge_ok:
        for latency in (0.010, 0.050):
            cells = [_dur(project_huge(c, 10_000_000, w, threads, latency)) for w in (1, 8, 64)]
            cli = _dur(project_cli(c, 10_000_000, latency))
            print(
                f"| one site, 10M URLs (200 urlsets of 50k) | {latency * 1000:.0f} ms | {cli} | "
                + " | ".join(cells)
                + " |"
            )
    # The model replayed on the configuration that was measured: how far it is off.
    started = measured.measures["started"]
    d = started.last
    taken = others_cpu(d) + d["driver_cpu"] + d.get("farm_cpu", 0.0)
    free = (os.cpu_count() or 1) - taken / d["wall"]
    model = project_sites_loopback(c, len(measured.sites), args, free)
    limit = c.site_cpu / max(c.driver_site, 1e-9)
    print(
        f"\nMeasured costs: worker CPU per site {c.site_cpu * 1000:.1f} ms ({args.urls:,} URLs: "
        f"{c.site_cpu / (measured.rows / len(measured.sites)) * 1e6:.2f} µs per URL), one process "
        f"{c.seq_site_cpu * 1000:.1f} ms; driver CPU per site {c.driver_site * 1000:.1f} ms "
        f"(serial: the driver alone caps a batch of small sites at {1 / c.driver_site:,.0f} "
        f"sites/s, i.e. {limit:.0f} busy workers); cluster start {c.setup:.1f} s; "
        f"{c.site_bytes / 1024:.0f} KiB and {c.site_docs:.1f} documents per site."
    )
    if huge_ok:
        assert c.url_cpu is not None and c.url_cli is not None and c.finish_url is not None
        assert c.head is not None and c.driver_leaf is not None and c.bytes_url is not None
        print(
            f"Fanned-out site: worker CPU {c.url_cpu * 1e6:.2f} µs per URL in leaf tasks "
            f"(`sitescout urls`: {c.url_cli * 1e6:.2f}); serial: root task + head "
            f"{c.head:.2f} s, finishing task {c.finish_url * 1e6:.2f} µs per URL "
            f"({c.finish_url * 10_000_000:.1f} s at 10M), driver {c.driver_leaf * 1000:.1f} ms "
            f"CPU per leaf; {c.bytes_url:.0f} gzipped bytes per URL."
        )
    print(
        f"Check of the model on the measured run ({len(measured.sites)} sites, "
        f"{args.workers} workers x {threads} threads, {args.latency * 1000:g} ms, 3 round trips "
        f"on loopback, {free:.2f} of the {os.cpu_count()} cores left to the workers by the "
        f"driver, the farm and other work): {model:.2f} s predicted vs {started.wall:.2f} s "
        "measured."
    )
    print("\nAssumptions:")
    assumptions = [
        "every site on a host of its own (`batch` runs one task per host at a time: sites "
        "sharing a host queue behind each other, whatever the cluster size);",
        f"a worker = 1 core running {threads} walks at once (`batch`'s LocalCluster default); "
        "CPU per site and per URL as measured here, on this machine's cores;",
        f"a site = {RTT_SITE} dependent round trips (TCP + TLS 1.3 handshakes, robots.txt, "
        "the index, then the urlsets in parallel on new connections: +2 handshakes +1) plus "
        f"its gzipped bytes at {BANDWIDTH * 8 / 1e6:.0f} Mbit/s per connection; latency = one "
        "round trip; servers answer at once beyond that;",
        "the driver's CPU per site (client + scheduler, measured in this process) is serial "
        "and added to the parallel part (Amdahl), not overlapped: an upper bound; "
        "`1 process, no Dask` = the sequential loop: CPU + wait per site, nothing overlapped;",
        f"10M URLs = {10_000_000 // PER_URLSET} urlsets of {PER_URLSET:,} (the protocol's "
        f"maximum); at most {LEAF_LANE} leaf tasks of one host at once (min(concurrency, "
        "per_host) = 8), so more than 8 workers do not speed up one site; a leaf = 1 round "
        "trip + 2 for its connection + its bytes;",
        "the finishing task (de-duplication and rewrite of parts) scales linearly with URLs "
        "from the 1M measurement; its hash passes go from 1 to 5 at 10M (2M hashes a pass), so "
        "that term is a lower bound; `1 process` for 10M = `sitescout urls` CPU per URL, "
        "its downloads (8 at once) overlapping its parse;",
        "cluster start-up measured here for 2 local workers (a real 64-worker cluster takes "
        "longer to start, and is usually started once for many batches).",
    ]
    for a in assumptions:
        print(f"- {a}")


def project_sites_loopback(c: Costs, sites: int, args: Options, cores: float) -> float:
    """The model at the measured shape: 3 round trips of `latency` on loopback, and the
    `cores` that were free for the workers (the machine's, less what the driver, the farm and
    other work on the machine took during the run)."""
    wait = 3 * args.latency
    per_worker = max(c.site_cpu, (c.site_cpu + wait) / args.threads)
    return sites * c.driver_site + sites * per_worker / max(0.1, min(args.workers, cores))


# --- main --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Options:
    sites: int
    urls: int
    latency: float
    huge: int
    leaves: int
    skip_huge: bool
    fanout: int
    workers: int
    threads: int
    also_threads: list[int]
    repeat: int
    wait_quiet: float
    timeout: float
    json: str | None
    keep: bool
    smoke: bool
    idle_s: float = IDLE_S
    quiet_window: float = QUIET_WINDOW_S
    own_workers: int | None = None  # `workers=` of `batch()` with its own cluster (None: its own)


def parse_args(argv: list[str]) -> Options:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=200, help="sites in the farm (200)")
    parser.add_argument("--urls", type=int, default=5_000, help="page URLs per site (5,000)")
    parser.add_argument(
        "--latency", type=float, default=0.010, help="seconds slept before every response"
    )
    parser.add_argument("--huge", type=int, default=1_000_000, help="URLs of the huge site")
    parser.add_argument("--leaves", type=int, default=40, help="urlsets of the huge site")
    parser.add_argument("--skip-huge", action="store_true", help="only the many-sites part")
    parser.add_argument(
        "--fanout", type=int, default=10, help="`fanout=` for the huge site (below --leaves)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="workers of the started cluster (default: what `batch` starts: one per CPU)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="threads per worker of the started cluster (default: `batch`'s own default)",
    )
    parser.add_argument(
        "--also-threads",
        default="",
        help="comma-separated threads per worker to measure too on the many sites (e.g. 1,8)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="rounds; tables show medians")
    parser.add_argument(
        "--wait-quiet",
        type=float,
        default=60,
        metavar="S",
        help="before each run, wait up to S seconds for other work on the machine to stop",
    )
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    parser.add_argument("--json", metavar="FILE", help="also write every figure to FILE")
    parser.add_argument("--keep", action="store_true", help="keep the outputs in .work/")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run to check that the benchmark works: "
        + ", ".join(f"--{k} {v}" for k, v in SMOKE.items())
        + ", --repeat 1, no wait for quiet, everything in a temporary directory",
    )
    ns = parser.parse_args(argv)
    if ns.smoke:
        if ns.keep:
            parser.error("--smoke keeps nothing (it works in a temporary directory)")
        vars(ns).update(SMOKE)
        ns.skip_huge, ns.also_threads, ns.repeat, ns.wait_quiet = False, "", 1, 0.0
        ns.timeout = min(ns.timeout, 120.0)
    if ns.sites < 1 or ns.sites > 254 * 200 or ns.urls < 10:
        parser.error("--sites must be 1..50,800 and --urls at least 10")
    if ns.huge % ns.leaves:
        parser.error("--huge must be a multiple of --leaves")
    if ns.repeat < 1:
        parser.error("--repeat must be at least 1")
    if not ns.workers:
        ns.workers = max(1, os.cpu_count() or 1)
    if not ns.threads:
        ns.threads = _default_threads()
    try:
        ns.also_threads = [int(t) for t in ns.also_threads.split(",") if t.strip()]
    except ValueError:
        parser.error("--also-threads: not a list of numbers")
    if ns.smoke:
        return Options(
            **vars(ns),
            idle_s=SMOKE_IDLE_S,
            quiet_window=SMOKE_QUIET_WINDOW_S,
            own_workers=ns.workers,
        )
    return Options(**vars(ns))


def _default_threads() -> int:
    with contextlib.suppress(ImportError, AttributeError):
        from sitescout import _batch

        return int(_batch.THREADS_PER_WORKER)
    return 4


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        return child_main(argv[1], argv[2])
    args = parse_args(argv)
    sys.path.insert(0, str(BENCH_DIR))
    from _site import check_smoke_mix, work_dir
    from walk import Launcher

    if args.smoke:
        print(check_smoke_mix(args.urls, "of the farm"), file=sys.stderr)
        print(check_smoke_mix(args.huge, "huge"), file=sys.stderr)
    load = [os.getloadavg()[0]]
    huge = None
    # The launcher starts first, while this process is still small (see walk.Launcher).
    with Launcher() as launcher, work_dir(args.smoke) as root:
        out_root = root / "batch-out"
        try:
            many = run_many(launcher, args, out_root)
            if not args.skip_huge:
                huge = run_huge(launcher, args, out_root, root)
        finally:
            if not args.keep:
                shutil.rmtree(out_root, ignore_errors=True)
    load.append(os.getloadavg()[0])
    report(many, huge, args, load)
    return 0


def report(many: Workload, huge: Workload | None, args: Options, load: list[float]) -> None:
    print(
        f"\n### sitescout batch benchmark: {args.sites} sites x {args.urls:,} URLs"
        + ("" if huge is None else f", one site of {args.huge:,} URLs")
        + (f", median of {args.repeat}" if args.repeat > 1 else "")
        + (" (smoke run: tiny sites, the figures only show that it works)" if args.smoke else "")
        + "\n"
    )
    print(
        f"Python {platform.python_version()}, sitescout {_version('sitescout')}, dask "
        f"{_version('distributed')}, pyarrow {_version('pyarrow')}, {os.cpu_count()} CPUs "
        f"({platform.machine()}), 1-min load {' -> '.join(f'{x:.2f}' for x in load)}. "
        "The farm (`_farm.py`) serves every site from one asyncio process on the same 2 cores. "
        "Wall = `time.perf_counter` around the call (`sitescout urls`: the whole process); "
        "URLs/s counts hreflang alternates; peak RSS = VmHWM / ru_maxrss; a worker's peak "
        "includes its ~idle footprint (Dask + imports), given below. Others' CPU = what the "
        "rest of the machine used during the measured window (/proc/stat less this run's "
        "processes and the farm): the noise in that run."
    )
    print_many(many, args)
    if huge is not None:
        print_huge(huge)
    print_targets(many, huge)
    print_projection(derive_costs(many, huge), args, many)
    command = " ".join([".venv/bin/python", "benchmarks/batch.py", *sys.argv[1:]])
    print(f"\nCommand: `{command}`")
    if args.json:
        data = {
            "command": command,
            "cpus": os.cpu_count(),
            "load": load,
            "many": {k: m.data for k, m in many.measures.items()},
            "huge": {k: m.data for k, m in huge.measures.items()} if huge else None,
        }
        Path(args.json).write_text(json.dumps(data, indent=1) + "\n")


def print_targets(many: Workload, huge: Workload | None) -> None:
    rows: list[tuple[str, str, bool | None]] = []
    seq = many.measures.get("seq")
    for key in ("default", "started"):
        m = many.measures.get(key)
        if m is None or seq is None or not (m.correct and seq.correct):
            rows.append((f"{key}: speed-up ≥ {TARGET_SPEEDUP}×", "not measured / wrong", None))
            continue
        r = seq.wall / m.wall
        rows.append(
            (f"many sites, {m.label}: ≥ {TARGET_SPEEDUP}× sequential", f"{r:.2f}×", r >= 1.7)
        )
    if huge is not None:
        cli, h = huge.measures.get("cli"), huge.measures.get("started")
        if cli is not None and h is not None and cli.correct and h.correct:
            r = cli.wall / h.wall
            rows.append((f"huge site, {h.label} vs `sitescout urls`", f"{r:.2f}×", None))
            wf = worker_figures(h.last)
            idle = max(wf["idle"]) if wf["idle"] else 0
            one = huge.measures.get("nofan")
            single = ""
            if one is not None and one.ok:
                single = f"; one-task batch {max(worker_figures(one.last)['peaks']) / MIB:.0f}"
            rows.append(
                (
                    "huge site: peak RSS of a worker (idle -> peak) vs `sitescout urls`",
                    f"{idle / MIB:.0f} -> {max(wf['peaks']) / MIB:.0f} MiB vs "
                    f"{cli.last['rss'] / MIB:.0f} MiB{single}",
                    None,
                )
            )
    print("\n#### Targets\n")
    print("| target | measured | verdict |\n|---|---:|---|")
    for name, value, met in rows:
        verdict = "n/a" if met is None else ("met" if met else "**NOT met**")
        print(f"| {name} | {value} | {verdict} |")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
