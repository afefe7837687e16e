"""Benchmark: walk a 1,000,000-URL sitemap site on loopback (issue 2, SPEC §3, §5, §14).

Run from the project root (any Python 3.11 with lxml works; the venv is the natural one):

    .venv/bin/python benchmarks/walk.py                         # 1M URLs = index -> 20 x 50,000
    .venv/bin/python benchmarks/walk.py --urls 20000 --shards 4 # a quick smoke run
    .venv/bin/python benchmarks/walk.py --repeat 3 --api        # best of 3, plus the library API
    .venv/bin/python benchmarks/walk.py --page-origin https://www.example.com  # port-less pages

`--sitescout PATH` measures another build; `--wait-for-cli S` polls up to S seconds for
`sitescout urls --help` to work (otherwise the sitescout rows are skipped with a note).

Two sites are generated once into `benchmarks/.work/` (reused while their manifest matches):
the main one (`--urls` page URLs as a sitemap index -> `--shards` gzipped urlsets, every URL with
`<lastmod>` and `<priority>`, 5 % with hreflang alternates, 1 % with whitespace inside `<loc>`,
see `_site.py`) and one a quarter of its size. Each is served from memory by a threaded
keep-alive HTTP server on 127.0.0.1 (a free port) that stops when the script ends.

Every tool runs as its own child process, so the wall time includes interpreter start-up and the
peak RSS is the whole process's (`ru_maxrss` from `os.wait4` on that child). Children are started
by a small launcher process spawned first: Linux carries the forking process's memory high-water
mark into a child's `ru_maxrss`, so spawning from this script (which holds 1M-URL sets to verify
output) would inflate them. A bare interpreter's ~10 MiB is therefore the floor of every peak.

1. `sitescout urls http://127.0.0.1:PORT/ --output /dev/null` (stdout is discarded if the CLI has
   no `--output`), then once more into a temp file to check what it found against the generator:
   distinct page URLs and hreflang-only URLs, missing and unexpected ones.
2. The parse floor: `lxml.etree.fromstring` over the already-decompressed shards, timed around
   the parse calls only (reading, gunzip and counting `<loc>` happen outside the timer).
3. A naive walker: urllib.request + xml.etree.ElementTree, sequential, the whole list in memory.
4. sitescout on the quarter-size site, for the RSS growth per URL between the two sizes.
5. With `--api`: `async for batch in sitescout.walk(url)` in a child (skipped if not importable).

Throughput is page URLs (`<loc>` entries) per second of wall time for every tool, so tools that
also emit hreflang alternates are not credited for them. With `--repeat N` the best wall time and
the highest peak RSS of the N runs are reported. The table ends with the issue's targets:
sitescout >= 0.5x the lxml floor, >= 2x the naive walker, peak RSS <= 200 MiB at 1M URLs, and
RSS growth <= 64 bytes per URL.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from _site import (
    PLACEHOLDER_ORIGIN,
    SiteServer,
    SiteStats,
    ensure_flat_index,
    iter_alternate_only_urls,
    iter_page_urls,
)

BENCH_DIR = Path(__file__).resolve().parent
WORK_DIR = BENCH_DIR / ".work"
VENV_BIN = BENCH_DIR.parent / ".venv" / "bin"
PYTHON = str(VENV_BIN / "python") if (VENV_BIN / "python").exists() else sys.executable
MIB = 1024 * 1024

TARGET_FLOOR_RATIO = 0.5
TARGET_NAIVE_RATIO = 2.0
TARGET_PEAK_RSS_MIB = 200.0
TARGET_GROWTH_BYTES = 64.0


# --- child programs ----------------------------------------------------------------------------
# Each runs in a fresh interpreter from its own source (see `_child_argv`), so a baseline's RSS
# holds only what it imports itself, not this script or the server.


def _child_floor(site_dir: str, placeholder: str, origin: str) -> None:
    import gzip
    import json
    import pathlib
    import time

    from lxml import etree

    shards = sorted(pathlib.Path(site_dir, "sitemaps").iterdir())
    datas = []
    for path in shards:
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        # Same bytes the server sends (it rewrites the placeholder into its own origin).
        datas.append(data.replace(placeholder.encode(), origin.encode()))
    loc_tag = "{http://www.sitemaps.org/schemas/sitemap/0.9}loc"
    parse_s = extract_s = 0.0
    locs = 0
    for data in datas:
        start = time.perf_counter()
        root = etree.fromstring(data)
        parse_s += time.perf_counter() - start
        # Reported apart from the floor: the least Python work that turns a tree into URLs.
        start = time.perf_counter()
        urls = [(el.text or "").strip() for el in root.iter(loc_tag)]
        extract_s += time.perf_counter() - start
        locs += len(urls)
        del root, urls
    result = {"urls": locs, "parse_s": parse_s, "extract_s": extract_s, "documents": len(datas)}
    print(json.dumps(result))


def _child_naive(site_url: str, output: str = "/dev/null") -> None:
    """Also the naive baseline of `peers.py`, which passes a file to count the URLs in."""
    import gzip
    import json
    import urllib.request
    import xml.etree.ElementTree as ET

    ns = "{http://www.sitemaps.org/schemas/sitemap/0.9}"

    def fetch(url: str) -> bytes:
        with urllib.request.urlopen(url, timeout=30) as response:
            data: bytes = response.read()
        return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data

    robots = fetch(site_url.rstrip("/") + "/robots.txt").decode()
    queue = [
        line.split(":", 1)[1].strip()
        for line in robots.splitlines()
        if line.lower().startswith("sitemap:")
    ]
    seen: set[str] = set()
    locs: list[str] = []
    documents = 0
    while queue and documents < 10_000:  # bounded: a hostile index cannot keep it going
        url = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        documents += 1
        root = ET.fromstring(fetch(url))
        found = [el.text.strip() for el in root.iter(ns + "loc") if el.text]
        (queue if root.tag == ns + "sitemapindex" else locs).extend(found)
    with open(output, "w") as out:
        out.write("\n".join(locs))
    print(json.dumps({"urls": len(locs), "documents": documents}))


def _child_api(site_url: str) -> None:
    import asyncio
    import json

    import sitescout

    async def main() -> tuple[int, int]:
        total = alternates = 0
        async for batch in sitescout.walk(site_url):
            total += len(batch)
            alternates += sum(1 for e in batch if getattr(e, "alternate_of", None) is not None)
        return total, alternates

    total, alternates = asyncio.run(main())
    print(json.dumps({"urls": total, "alternates": alternates}))


def _child_argv(func: Callable[..., None], *args: str) -> list[str]:
    source = textwrap.dedent(inspect.getsource(func))
    return [PYTHON, "-c", f"import sys\n{source}\n{func.__name__}(*sys.argv[1:])\n", *args]


# --- running children --------------------------------------------------------------------------


@dataclass(slots=True)
class Run:
    wall: float
    rss_kib: int
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False
    over_memory: bool = False  # killed for passing the run's RSS cap
    cpu: float = 0.0  # user + system seconds of the child (and of what it waited for)

    def result(self) -> dict[str, Any]:
        """The JSON line a child program prints last."""
        lines = self.stdout.strip().splitlines()
        return dict(json.loads(lines[-1])) if lines else {}


def _child_launcher() -> None:
    import contextlib
    import json
    import os
    import subprocess
    import sys
    import threading
    import time

    def kill(pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, 9)  # the child leads its own session: its helpers go too

    def watch_rss(pid: int, cap_kib: int, done: threading.Event, over: list[bool]) -> None:
        """Kill the child once its resident set passes the cap (polled every 50 ms)."""
        while not done.wait(0.05):
            try:
                with open(f"/proc/{pid}/statm") as statm:
                    rss_kib = int(statm.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
            except (OSError, ValueError, IndexError):
                return
            if rss_kib > cap_kib:
                over.append(True)
                kill(pid)
                return

    for line in sys.stdin:
        job = json.loads(line)
        over: list[bool] = []
        with open(job["stdout"], "wb") as out, open(job["stderr"], "wb") as err:
            start = time.perf_counter()
            proc = subprocess.Popen(
                job["argv"],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
            timer = threading.Timer(job["timeout"], kill, (proc.pid,))
            timer.start()
            done = threading.Event()
            if job.get("max_rss_kib"):
                args = (proc.pid, job["max_rss_kib"], done, over)
                threading.Thread(target=watch_rss, args=args, daemon=True).start()
            try:
                # wait4, not proc.wait(): it returns this child's rusage (ru_maxrss in KiB).
                _, status, usage = os.wait4(proc.pid, 0)
            finally:
                timer.cancel()
                done.set()
            wall = time.perf_counter() - start
            proc.returncode = os.waitstatus_to_exitcode(status)
        reply = {
            "wall": wall,
            "rss_kib": usage.ru_maxrss,
            "returncode": proc.returncode,
            "timed_out": wall >= job["timeout"],
            "over_memory": bool(over),
            "cpu": usage.ru_utime + usage.ru_stime,
        }
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


class Launcher:
    """Starts every measured child from a small process that was itself started first.

    Linux keeps the pre-exec memory high-water mark in a child's ru_maxrss, and a fork copies
    the parent's: a child spawned by this script after it held a 1M-URL verification set would
    report that set's size as its own peak. The launcher stays at a bare interpreter's RSS (about
    10 MiB, the floor of every reported peak), so each child's peak is its own.
    """

    def __init__(self) -> None:
        self._proc = subprocess.Popen(
            _child_argv(_child_launcher), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def run(
        self,
        argv: list[str],
        *,
        timeout: float,
        stdout_path: str | None = None,
        max_rss_mib: float | None = None,
    ) -> Run:
        """Run one child: wall time by perf_counter around it, peak RSS from its own rusage.

        The child (and anything it starts) is killed after `timeout` seconds, or as soon as its
        RSS passes `max_rss_mib` when given.
        """
        assert self._proc.stdin is not None and self._proc.stdout is not None
        with tempfile.TemporaryDirectory() as tmp:
            out, err = str(Path(tmp) / "out"), str(Path(tmp) / "err")
            job = {
                "argv": argv,
                "stdout": stdout_path or out,
                "stderr": err,
                "timeout": timeout,
                "max_rss_kib": round(max_rss_mib * 1024) if max_rss_mib else 0,
            }
            self._proc.stdin.write(json.dumps(job) + "\n")
            self._proc.stdin.flush()
            reply = json.loads(self._proc.stdout.readline() or "{}")
            if not reply:
                raise RuntimeError("the launcher process died")
            return Run(
                wall=reply["wall"],
                rss_kib=reply["rss_kib"],
                returncode=reply["returncode"],
                stdout="" if stdout_path else Path(out).read_text(errors="replace"),
                stderr=Path(err).read_text(errors="replace"),
                timed_out=reply["timed_out"],
                over_memory=reply.get("over_memory", False),
                cpu=reply.get("cpu", 0.0),
            )

    def __enter__(self) -> Launcher:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=10)


@dataclass(slots=True)
class Measure:
    """The best-of-N summary of one tool on one site."""

    tool: str
    found: int | None
    expected: int
    wall: float  # best of the runs (for the floor: parse seconds only)
    rss_mib: float  # highest of the runs
    page_urls: int  # the numerator of URLs/s
    requests: int | None = None

    @property
    def rate(self) -> float:
        return self.page_urls / self.wall if self.wall > 0 else 0.0


def measure(
    tool: str, stats: SiteStats, runs: list[Run], *, expected: int, requests: int | None = None
) -> Measure | None:
    failed = [r for r in runs if r.returncode != 0 or r.timed_out]
    if failed:
        r = failed[0]
        why = "timed out" if r.timed_out else f"exit {r.returncode}"
        print(f"!! {tool}: {why}\n{textwrap.indent(r.stderr[-3000:], '   ')}", file=sys.stderr)
        return None
    found = runs[0].result().get("urls")
    return Measure(
        tool=tool,
        found=found if isinstance(found, int) else None,
        expected=expected,
        wall=min(r.wall for r in runs),
        rss_mib=max(r.rss_kib for r in runs) / 1024,
        page_urls=stats.page_urls,
        requests=requests,
    )


def repeat_child(
    launcher: Launcher,
    argv: list[str],
    n: int,
    *,
    timeout: float,
    server: SiteServer | None = None,
    label: str,
) -> tuple[list[Run], int | None]:
    """Run `argv` n times; also return the HTTP requests one run made (from the server)."""
    runs: list[Run] = []
    requests: int | None = None
    for k in range(n):
        if server is not None:
            server.reset_counts()
        run = launcher.run(argv, timeout=timeout)
        runs.append(run)
        if server is not None:
            requests = sum(server.request_counts().values())
        print(
            f"   {label} run {k + 1}/{n}: {run.wall:.2f} s, {run.rss_kib / 1024:.1f} MiB, "
            f"exit {run.returncode}",
            file=sys.stderr,
        )
        if run.returncode != 0 or run.timed_out:
            break
    return runs, requests


# --- sitescout CLI -----------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True, slots=True)
class Cli:
    """The `sitescout urls` command, adapted to the flags its `--help` shows."""

    exe: str
    help_text: str

    @classmethod
    def probe(cls, exe: str) -> Cli | None:
        """None while `sitescout urls --help` does not work yet."""
        if not Path(exe).exists():
            return None
        try:
            done = subprocess.run([exe, "urls", "--help"], capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode != 0:
            return None
        return cls(exe, _ANSI.sub("", done.stdout.decode(errors="replace")))

    def argv(self, site_url: str, output: str) -> tuple[list[str], bool]:
        """The command line, and whether it writes `output` itself (else it writes stdout)."""
        argv = [self.exe, "urls", site_url]
        if "--quiet" in self.help_text:
            argv.append("--quiet")
        if "--format" in self.help_text:
            argv += ["--format", "jsonl"]
        if "--output" in self.help_text:
            return [*argv, "--output", output], True
        return argv, False


def wait_for_cli(exe: str, poll_s: float, max_wait_s: float) -> Cli | None:
    deadline = time.monotonic() + max_wait_s
    while True:
        cli = Cli.probe(exe)
        if cli is not None or time.monotonic() >= deadline:
            return cli
        print(f"   {exe} urls --help not working yet; retrying in {poll_s:.0f} s", file=sys.stderr)
        time.sleep(min(poll_s, max(0.0, deadline - time.monotonic())))


def _output_urls(path: Path) -> Iterator[tuple[str, bool]]:
    """(url, is_alternate) per output line; JSON lines, or plain URLs if it is not JSON."""
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            line = line.strip()
            if not line.startswith("{"):
                if line:
                    yield line, False
                continue
            obj = json.loads(line)
            alt = any(obj.get(key) for key in ("alternate_of", "is_alternate", "alternate"))
            yield str(obj.get("url", obj.get("loc", ""))), bool(alt)


def verify_cli(
    launcher: Launcher, cli: Cli, stats: SiteStats, server: SiteServer, timeout: float
) -> Verification:
    """Run the CLI once into a file and compare its URLs with the generator's exact sets."""
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "urls.jsonl")
        argv, writes_itself = cli.argv(server.origin + "/", out)
        run = launcher.run(argv, timeout=timeout, stdout_path=None if writes_itself else out)
        if run.returncode != 0 or run.timed_out or not Path(out).exists():
            why = f"verification run failed (exit {run.returncode}): {run.stderr[-500:]}"
            return Verification(None, [why])
        pages = set(iter_page_urls(stats, server.origin))
        alternates = set(iter_alternate_only_urls(stats, server.origin))
        lines = marked = 0
        seen: set[str] = set()
        for url, is_alt in _output_urls(Path(out)):
            lines += 1
            marked += is_alt
            seen.add(url)
    extra = seen - pages - alternates
    notes = [
        f"verify sitescout urls ({stats.page_urls:,}-URL site): {lines:,} lines, "
        f"{len(seen):,} distinct URLs "
        f"({marked:,} marked alternate); page URLs {len(seen & pages):,}/{len(pages):,}, "
        f"hreflang-only {len(seen & alternates):,}/{len(alternates):,}, "
        f"unexpected {len(extra):,}, duplicate lines {lines - len(seen):,}"
    ]
    notes += [f"  missing page URL e.g. {u}" for u in sorted(pages - seen)[:3]]
    notes += [f"  missing hreflang-only URL e.g. {u}" for u in sorted(alternates - seen)[:3]]
    notes += [f"  unexpected URL e.g. {u}" for u in sorted(extra)[:3]]
    return Verification(len(seen), notes)


@dataclass(frozen=True, slots=True)
class Verification:
    distinct: int | None
    notes: list[str]


def api_available() -> bool:
    probe = (
        "import sitescout, sys; sys.exit(0 if callable(getattr(sitescout, 'walk', None)) else 1)"
    )
    done = subprocess.run([PYTHON, "-c", probe], capture_output=True, timeout=60)
    return done.returncode == 0


# --- report ------------------------------------------------------------------------------------


def _fmt_found(m: Measure) -> str:
    found = "?" if m.found is None else f"{m.found:,}"
    return f"{found} / {m.expected:,}"


def print_table(rows: list[Measure], main: Measure | None) -> None:
    print(
        "| tool | URLs found / expected | wall s | URLs/s | peak RSS MiB | HTTP requests "
        "| sitescout ÷ tool |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for m in rows:
        baseline = not m.tool.startswith("sitescout")
        ratio = f"{main.rate / m.rate:.2f}×" if main and m.rate and baseline else ""
        reqs = "" if m.requests is None else str(m.requests)
        print(
            f"| {m.tool} | {_fmt_found(m)} | {m.wall:.2f} | {m.rate:,.0f} | {m.rss_mib:.1f} "
            f"| {reqs} | {ratio} |"
        )


def print_targets(
    main: Measure | None,
    small: Measure | None,
    floor: Measure | None,
    naive: Measure | None,
    small_urls: int,
) -> None:
    def line(name: str, value: str, ok: bool | None) -> None:
        verdict = "n/a" if ok is None else ("MET" if ok else "NOT MET")
        print(f"| {name} | {value} | {verdict} |")

    print("\n| target (issue 2) | measured | verdict |\n|---|---:|---|")
    if main is None:
        line("sitescout measured at all", "CLI not available or failed", None)
        return
    for name, base, goal in (
        ("lxml floor", floor, TARGET_FLOOR_RATIO),
        ("naive walker", naive, TARGET_NAIVE_RATIO),
    ):
        if base is None or not base.rate:
            line(f"throughput ≥ {goal}× {name}", "baseline missing", None)
        else:
            ratio = main.rate / base.rate
            line(f"throughput ≥ {goal}× {name}", f"{ratio:.2f}×", ratio >= goal)
    line(
        f"peak RSS ≤ {TARGET_PEAK_RSS_MIB:.0f} MiB at {main.page_urls:,} URLs",
        f"{main.rss_mib:.1f} MiB",
        main.rss_mib <= TARGET_PEAK_RSS_MIB,
    )
    if small is None:
        line("RSS growth", "small-site run missing", None)
        return
    growth = (main.rss_mib - small.rss_mib) * MIB / (main.page_urls - small_urls)
    line(
        f"RSS growth {small_urls:,}→{main.page_urls:,} ≤ {TARGET_GROWTH_BYTES:.0f} B/URL",
        f"{growth:.1f} B/URL",
        growth <= TARGET_GROWTH_BYTES,
    )


# --- main --------------------------------------------------------------------------------------


def prepare(urls: int, shards: int, page_origin: str | None) -> SiteStats:
    if shards < 1 or urls % shards:
        raise SystemExit(f"--urls ({urls}) must be a positive multiple of --shards ({shards})")
    directory = site_dir(shards, urls // shards, page_origin)
    start = time.perf_counter()
    stats, generated = ensure_flat_index(directory, shards, urls // shards, page_origin=page_origin)
    verb = "generated" if generated else "cached"
    print(
        f"== site {directory.name}: {verb} ({time.perf_counter() - start:.1f} s), "
        f"{stats.page_urls:,} page URLs, {stats.distinct_urls:,} with hreflang-only "
        f"alternates, {stats.documents} documents",
        file=sys.stderr,
    )
    return stats


def site_dir(shards: int, per_shard: int, page_origin: str | None) -> Path:
    pages = "" if page_origin is None else "-pages-" + re.sub(r"[^A-Za-z0-9.]+", "_", page_origin)
    return WORK_DIR / f"flat-{shards}x{per_shard}{pages}"


def served_dir(stats: SiteStats) -> Path:
    return site_dir(stats.shards, stats.per_shard, stats.page_origin)


def run_floor(
    launcher: Launcher, stats: SiteStats, args: Options, notes: list[str]
) -> Measure | None:
    print("== lxml parse floor", file=sys.stderr)
    # The floor reads files, not HTTP, but its bytes must match what the server sends, so the
    # origin is a stand-in of the same shape as the server's.
    argv = _child_argv(
        _child_floor, str(served_dir(stats)), PLACEHOLDER_ORIGIN, "http://127.0.0.1:40000"
    )
    runs, _ = repeat_child(launcher, argv, args.repeat, timeout=args.timeout, label="floor")
    m = measure(
        "lxml.etree.fromstring floor (parse time only)", stats, runs, expected=stats.page_urls
    )
    if m is not None:
        m.wall = min(r.result()["parse_s"] for r in runs)
        extract = min(r.result()["parse_s"] + r.result()["extract_s"] for r in runs)
        notes.append(
            f"lxml floor plus `[loc.text.strip() for loc in root.iter(...)]`: {extract:.2f} s, "
            f"{m.page_urls / extract:,.0f} URLs/s (parse + the least per-URL Python work)"
        )
    return m


def run_naive(
    launcher: Launcher, stats: SiteStats, server: SiteServer, args: Options
) -> Measure | None:
    argv = _child_argv(_child_naive, server.origin + "/")
    runs, reqs = repeat_child(
        launcher, argv, args.repeat, timeout=args.timeout, server=server, label="naive"
    )
    return measure(
        "naive urllib + ElementTree", stats, runs, expected=stats.page_urls, requests=reqs
    )


def run_cli(
    launcher: Launcher, cli: Cli, stats: SiteStats, server: SiteServer, args: Options
) -> Measure | None:
    argv, _ = cli.argv(server.origin + "/", os.devnull)
    runs, reqs = repeat_child(
        launcher,
        argv,
        args.repeat,
        timeout=args.timeout,
        server=server,
        label=f"sitescout urls {stats.page_urls:,}",
    )
    return measure(
        f"sitescout urls ({stats.page_urls:,} URLs)",
        stats,
        runs,
        expected=stats.distinct_urls,
        requests=reqs,
    )


def run_api(
    launcher: Launcher, stats: SiteStats, server: SiteServer, args: Options, notes: list[str]
) -> Measure | None:
    if not api_available():
        notes.append("API: `sitescout.walk` is not importable yet; skipped")
        return None
    argv = _child_argv(_child_api, server.origin + "/")
    runs, reqs = repeat_child(
        launcher, argv, args.repeat, timeout=args.timeout, server=server, label="api"
    )
    m = measure("sitescout.walk() API", stats, runs, expected=stats.distinct_urls, requests=reqs)
    if m is not None:
        got = runs[0].result()
        notes.append(
            f"API: {got.get('urls'):,} entries yielded, {got.get('alternates'):,} alternates"
        )
    return m


@dataclass(frozen=True, slots=True)
class Options:
    urls: int
    shards: int
    repeat: int
    api: bool
    timeout: float
    wait_for_cli: float
    sitescout: str
    page_origin: str | None


def parse_args() -> Options:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1_000_000, help="page URLs in the main site")
    parser.add_argument("--shards", type=int, default=20, help="urlsets in the main site")
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement (best wall)")
    parser.add_argument("--api", action="store_true", help="also measure sitescout.walk()")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per child run")
    parser.add_argument(
        "--wait-for-cli",
        type=float,
        default=0,
        metavar="S",
        help="poll up to S seconds for `sitescout urls` to start working",
    )
    parser.add_argument(
        "--sitescout",
        default=str(VENV_BIN / "sitescout"),
        help="the sitescout executable to measure (default: the project venv's)",
    )
    parser.add_argument(
        "--page-origin",
        metavar="URL",
        help="put page URLs on this origin (e.g. https://www.example.com) instead of the "
        "loopback server's http://127.0.0.1:PORT, whose port some URL fast paths do not take",
    )
    ns = parser.parse_args()
    if ns.repeat < 1:
        parser.error("--repeat must be at least 1")
    return Options(**vars(ns))


@dataclass(slots=True)
class Results:
    stats: SiteStats
    small: SiteStats
    floor: Measure | None = None
    naive: Measure | None = None
    cli_main: Measure | None = None
    cli_small: Measure | None = None
    api: Measure | None = None
    notes: list[str] = field(default_factory=list)
    load: list[float] = field(default_factory=list)  # 1-min load average: start, after timing


def run_all(launcher: Launcher, args: Options) -> Results:
    res = Results(
        prepare(args.urls, args.shards, args.page_origin),
        prepare(args.urls // 4, max(1, args.shards // 4), args.page_origin),
    )
    res.load.append(os.getloadavg()[0])
    res.floor = run_floor(launcher, res.stats, args, res.notes)
    cli = wait_for_cli(args.sitescout, 60, args.wait_for_cli)
    if cli is None:
        res.notes.append(f"sitescout CLI: `{args.sitescout} urls --help` fails; skipped")
    with SiteServer(served_dir(res.stats)) as big, SiteServer(served_dir(res.small)) as small:
        for stats, server in ((res.stats, big), (res.small, small)):
            print(f"== serving {served_dir(stats).name} at {server.origin}/", file=sys.stderr)
        res.naive = run_naive(launcher, res.stats, big, args)
        if cli is not None:
            res.cli_main = run_cli(launcher, cli, res.stats, big, args)
            res.cli_small = run_cli(launcher, cli, res.small, small, args)
        if args.api:
            res.api = run_api(launcher, res.stats, big, args, res.notes)
        res.load.append(os.getloadavg()[0])
        # Verification last: it makes this process build big sets, which must not overlap
        # (or precede, through allocator and page-cache churn) any timed run.
        for measured, stats, server in (
            (res.cli_main, res.stats, big),
            (res.cli_small, res.small, small),
        ):
            if cli is not None and measured is not None:
                verified = verify_cli(launcher, cli, stats, server, args.timeout)
                res.notes += verified.notes
                measured.found = verified.distinct
    return res


def report(res: Results, repeat: int) -> None:
    stats = res.stats
    pages = f"page URLs on {stats.page_origin}" if stats.page_origin else "same-origin page URLs"
    print(
        f"\n### sitescout walk benchmark: {stats.page_urls:,} URLs, index -> {stats.shards} "
        f"gzipped urlsets, {pages}, best of {repeat}\n"
    )
    print(
        f"Python {platform.python_version()}, lxml {metadata.version('lxml')}, sitescout "
        f"{_version('sitescout')}, {os.cpu_count()} CPUs, {platform.machine()}, 1-min load "
        f"{' -> '.join(f'{x:.2f}' for x in res.load)} (other work on the machine skews times)\n"
    )
    rows = [res.cli_main, res.api, res.cli_small, res.floor, res.naive]
    print_table([m for m in rows if m is not None], res.cli_main)
    print_targets(res.cli_main, res.cli_small, res.floor, res.naive, res.small.page_urls)
    print(
        "\nURLs/s = page URLs (<loc>) / wall s on every row; the floor's wall is parse time only."
    )
    print(
        f"sitescout's expected count includes the {stats.alternate_only_urls:,} hreflang-only "
        "alternates; the other rows count <loc> only."
    )
    for note in res.notes:
        print(f"- {note}")


def main() -> int:
    args = parse_args()
    # The launcher starts first, while this process is still small (see Launcher).
    with Launcher() as launcher:
        results = run_all(launcher, args)
    sys.stderr.flush()
    report(results, args.repeat)
    return 0


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    sys.exit(main())
